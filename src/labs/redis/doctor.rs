//! The Redis lab's own doctor checks: redis-server on PATH and its version, or, with
//! --redis-primary and --redis-replica, that both answer and the replica replicates.

use std::time::Duration;

use crate::labs::LabKind;
use crate::labs::check::{Check, DoctorContext, Part};

/// How long a Redis server or `redis-server --version` may take to answer.
const REDIS_TIMEOUT: Duration = Duration::from_secs(3);

const INSTALL_REDIS: &str =
    "sudo apt-get install -y redis-server, or give --redis-primary and --redis-replica";

async fn redis_server() -> Check {
    let Ok(binary) = crate::labs::redis::local::redis_server_binary() else {
        return Check::fail(
            "redis-server",
            "not on PATH; the Redis lab cannot run",
            INSTALL_REDIS,
            &[Part::Lab(LabKind::Redis)],
        );
    };
    let run = tokio::process::Command::new(&binary)
        .arg("--version")
        .kill_on_drop(true)
        .output();
    let why = match tokio::time::timeout(REDIS_TIMEOUT, run).await {
        Ok(Ok(out)) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            return match redis_version(&text) {
                Some(v) => Check::ok("redis-server", format!("{}, version {v}", binary.display())),
                None => Check::ok(
                    "redis-server",
                    format!(
                        "{}, version not stated ({})",
                        binary.display(),
                        latlab_core::units::one_line(text.trim())
                    ),
                ),
            };
        }
        Ok(Ok(out)) => format!("`--version` exited with {}", out.status),
        Ok(Err(e)) => e.to_string(),
        Err(_) => format!(
            "`--version` did not answer within {} s",
            REDIS_TIMEOUT.as_secs()
        ),
    };
    Check::fail(
        "redis-server",
        format!("{} does not run: {why}", binary.display()),
        INSTALL_REDIS,
        &[Part::Lab(LabKind::Redis)],
    )
}

/// The version in `redis-server --version`: `Redis server v=7.0.15 sha=...`.
pub fn redis_version(text: &str) -> Option<&str> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix("v="))
        .filter(|v| !v.is_empty())
}

/// A field of an INFO answer (`role:master`).
fn info_field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(str::trim)
}

async fn given_redis(primary: &str, replica: &str) -> Vec<Check> {
    let endpoints = match crate::labs::redis::Endpoints::open(primary, replica, false) {
        Ok(e) => e,
        Err(e) => {
            return vec![Check::fail(
                "redis primary",
                format!("{e:#}"),
                "write redis://[:PASSWORD@]HOST:PORT or rediss:// for TLS",
                &[Part::Lab(LabKind::Redis)],
            )];
        }
    };
    let fix = "check the URL, that the server runs and that this host may reach it (security group, AUTH)";
    let mut out = Vec::new();
    match ask(&endpoints.primary).await {
        Ok((version, info)) => {
            let role = info_field(&info, "role").unwrap_or("?");
            if role == "master" {
                out.push(Check::ok(
                    "redis primary",
                    format!(
                        "{} answers PING: Redis {version}, a primary",
                        endpoints.primary_label
                    ),
                ));
            } else {
                out.push(Check::fail(
                    "redis primary",
                    format!(
                        "{} answers, but it is not a primary (role:{role})",
                        endpoints.primary_label
                    ),
                    "give the primary's URL to --redis-primary",
                    &[Part::Lab(LabKind::Redis)],
                ));
            }
        }
        Err(why) => out.push(Check::fail(
            "redis primary",
            format!("{}: {why}", endpoints.primary_label),
            fix,
            &[Part::Lab(LabKind::Redis)],
        )),
    }
    match ask(&endpoints.replica).await {
        Ok((version, info)) => {
            let role = info_field(&info, "role").unwrap_or("?");
            let of = format!(
                "{}:{}",
                info_field(&info, "master_host").unwrap_or("?"),
                info_field(&info, "master_port").unwrap_or("?")
            );
            let link = info_field(&info, "master_link_status").unwrap_or("?");
            if role != "slave" {
                out.push(Check::fail(
                    "redis replica",
                    format!(
                        "{} answers, but it is not a replica (role:{role})",
                        endpoints.replica_label
                    ),
                    "give a replica of the primary to --redis-replica",
                    &[Part::Lab(LabKind::Redis)],
                ));
            } else if link != "up" {
                out.push(Check::fail(
                    "redis replica",
                    format!(
                        "{} is a replica of {of}, but its link to it is {link}",
                        endpoints.replica_label
                    ),
                    "wait for the replica to sync, or check the primary",
                    &[Part::Lab(LabKind::Redis)],
                ));
            } else {
                out.push(Check::ok(
                    "redis replica",
                    format!(
                        "{} answers PING: Redis {version}, a replica of {of}, link up",
                        endpoints.replica_label
                    ),
                ));
            }
        }
        Err(why) => out.push(Check::fail(
            "redis replica",
            format!("{}: {why}", endpoints.replica_label),
            fix,
            &[Part::Lab(LabKind::Redis)],
        )),
    }
    out
}

/// PING, then the server's version and its INFO replication; every step within the timeout.
async fn ask(client: &redis::Client) -> Result<(String, String), String> {
    let work = async {
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(REDIS_TIMEOUT))
            .set_response_timeout(Some(REDIS_TIMEOUT));
        let mut c = client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| {
                format!(
                    "cannot connect: {}",
                    latlab_core::units::one_line(&e.to_string())
                )
            })?;
        let failed = |e: redis::RedisError| latlab_core::units::one_line(&e.to_string());
        let _: String = redis::cmd("PING")
            .query_async(&mut c)
            .await
            .map_err(failed)?;
        let server: String = redis::cmd("INFO")
            .arg("server")
            .query_async(&mut c)
            .await
            .map_err(failed)?;
        let replication: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut c)
            .await
            .map_err(failed)?;
        let version = info_field(&server, "redis_version")
            .unwrap_or("(version not stated)")
            .to_string();
        Ok((version, replication))
    };
    match tokio::time::timeout(REDIS_TIMEOUT * 2, work).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "did not answer within {} s",
            (REDIS_TIMEOUT * 2).as_secs()
        )),
    }
}

impl crate::labs::Doctor for super::RedisLab {
    /// redis-server on PATH and its version, or, with `--redis-primary` and `--redis-replica`, that
    /// both answer and the replica replicates.
    async fn doctor(_cx: &DoctorContext<'_>, target: &super::target::RedisTarget) -> Vec<Check> {
        match (&target.redis_primary, &target.redis_replica) {
            (Some(primary), Some(replica)) => given_redis(primary, replica).await,
            _ => vec![redis_server().await],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_info_fields_are_read() {
        assert_eq!(
            redis_version("Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64"),
            Some("7.0.15")
        );
        assert_eq!(redis_version("something else"), None);
        let info =
            "# Replication\r\nrole:slave\r\nmaster_host:10.0.0.1\r\nmaster_link_status:up\r\n";
        assert_eq!(info_field(info, "role"), Some("slave"));
        assert_eq!(info_field(info, "master_link_status"), Some("up"));
        assert_eq!(info_field(info, "master_port"), None);
    }
}
