//! The labs a run has, behind one shape: the supervisor walks them (start the live loops, reset,
//! stop, clean up) instead of naming each lab in turn.

use crate::labs::kinesis::KinesisLab;
use crate::labs::redis::RedisLab;
use crate::labs::s3::S3Lab;

/// One running lab, boxed: each is made once and lives as long as the run.
pub(super) enum Running {
    Kinesis(Box<KinesisLab>),
    S3(Box<S3Lab>),
    Redis(std::sync::Arc<RedisLab>),
}

impl Running {
    /// Starts the lab's live loop: S3's PUT and GET, Redis's tries. Kinesis's producer and
    /// consumers start with the lab.
    pub(super) fn start_live(&self) {
        match self {
            Running::Kinesis(_) => {}
            Running::S3(s) => s.start_live(),
            Running::Redis(r) => r.start_live(),
        }
    }

    /// Histograms and counts start over. (Kinesis's are in the run's shared state, reset with
    /// it.)
    pub(super) fn reset(&self) {
        match self {
            Running::Kinesis(_) => {}
            Running::S3(s) => s.shared.reset(),
            Running::Redis(r) => r.shared.reset(),
        }
    }

    /// Stops the lab's probes (Kinesis: the producer, then the consumers' drain).
    pub(super) async fn stop(&self) {
        match self {
            Running::Kinesis(k) => k.stop().await,
            Running::S3(s) => s.stop().await,
            Running::Redis(r) => r.stop().await,
        }
    }

    /// Removes what the lab created; returns what could not be removed.
    pub(super) async fn cleanup(&self) -> Vec<String> {
        match self {
            Running::Kinesis(k) => k.cleanup().await,
            Running::S3(s) => s.cleanup().await,
            Running::Redis(r) => r.cleanup().await,
        }
    }
}
