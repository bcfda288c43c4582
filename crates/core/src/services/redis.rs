//! Redis's vocabulary: the faults the Redis lab injects on its real servers (the emulator serves
//! no Redis).

/// The faults the Redis lab injects (`--fault redis.KIND`, `[[faults]]`, the TUI's menu), in the
/// order they are listed.
pub mod faults {
    use std::time::Duration;

    use crate::services::Service;
    use crate::services::fault_kinds::{Effect, KindInfo, declare};

    declare! { Service::Redis;
        /// The replica's redis-server is killed and started again (a full resync follows).
        REPLICA_RESTART = KindInfo::hits(
            "redis.replica-restart",
            "replica killed and restarted (full resync)",
            Effect::OnServers,
        );
        /// `CLIENT PAUSE` on the primary for the fault's duration.
        CLIENT_PAUSE = KindInfo::lasting(
            "redis.client-pause",
            "CLIENT PAUSE on the primary",
            Effect::OnServers,
            Duration::from_secs(3),
        );
        /// The replication link carries nothing for the fault's duration.
        LINK_PARTITION = KindInfo::lasting(
            "redis.link-partition",
            "replication link partitioned",
            Effect::OnServers,
            Duration::from_secs(3),
        );
        /// `DEBUG SLEEP` on a server for the fault's duration.
        DEBUG_SLEEP = KindInfo::lasting(
            "redis.debug-sleep",
            "DEBUG SLEEP on a server",
            Effect::OnServers,
            Duration::from_secs(2),
        );
    }
}
