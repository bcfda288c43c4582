//! The checks on this machine: redis-server (or the Redis pair given), the terminal, its colours
//! and the log file.

use std::path::Path;
use std::time::Duration;

use super::{Check, Part};
use crate::labs::LabKind;
use crate::run::TargetOptions;

/// How long a Redis server or `redis-server --version` may take to answer.
const REDIS_TIMEOUT: Duration = Duration::from_secs(3);

const INSTALL_REDIS: &str =
    "sudo apt-get install -y redis-server, or give --redis-primary and --redis-replica";

/// redis-server on PATH and its version, or, with `--redis-primary` and `--redis-replica`, that
/// both answer and the replica replicates.
pub(super) async fn redis(target: &TargetOptions) -> Vec<Check> {
    match (&target.redis_primary, &target.redis_replica) {
        (Some(primary), Some(replica)) => given_redis(primary, replica).await,
        _ => vec![redis_server().await],
    }
}

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
                        crate::units::one_line(text.trim())
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
            .map_err(|e| format!("cannot connect: {}", crate::units::one_line(&e.to_string())))?;
        let failed = |e: redis::RedisError| crate::units::one_line(&e.to_string());
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

/// The terminal: `None` when standard output is not one, else its size (or why it is unknown).
pub(super) fn terminal(size: Option<Result<(u16, u16), String>>) -> Check {
    let (min_w, min_h) = crate::tui::ui::MIN_SIZE;
    match size {
        None => Check::warn(
            "terminal",
            "standard output is not a terminal: the live lab needs one; headless runs work",
            "open the live lab in a terminal; scripts use `latlab run SCENARIO`",
            &[Part::Live],
        ),
        Some(Err(e)) => Check::warn(
            "terminal",
            format!("its size is unknown ({e})"),
            format!("a terminal of at least {min_w}x{min_h}"),
            &[Part::Live],
        ),
        Some(Ok((w, h))) if w < min_w || h < min_h => Check::warn(
            "terminal",
            format!(
                "{w}x{h}, smaller than the {min_w}x{min_h} the live lab needs (it shows only a note until enlarged)"
            ),
            format!("enlarge the window to at least {min_w}x{min_h}"),
            &[Part::Live],
        ),
        Some(Ok((w, h))) => Check::ok(
            "terminal",
            format!("{w}x{h} (the live lab needs at least {min_w}x{min_h})"),
        ),
    }
}

/// The environment that says what colours a terminal shows.
#[derive(Clone, Debug, Default)]
pub struct TermEnv {
    pub no_color: Option<String>,
    pub colorterm: Option<String>,
    pub term: Option<String>,
}

impl TermEnv {
    pub fn from_env() -> TermEnv {
        let var = |k: &str| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned());
        TermEnv {
            no_color: var("NO_COLOR"),
            colorterm: var("COLORTERM"),
            term: var("TERM"),
        }
    }

    /// NO_COLOR with any non-empty value, as the TUI reads it.
    pub fn no_color(&self) -> bool {
        self.no_color.as_deref().is_some_and(|v| !v.is_empty())
    }
}

/// The colours the terminal shows and what the live lab does with them (`Theme::for_terminal`:
/// mono under NO_COLOR, else its theme fitted to the terminal's depth).
pub fn colours(env: &TermEnv) -> Check {
    if env.no_color() {
        return Check::ok(
            "colours",
            "NO_COLOR is set: the live lab uses the mono theme",
        );
    }
    let term = env.term.as_deref().unwrap_or("");
    let colorterm = env.colorterm.as_deref().unwrap_or("");
    if term == "dumb" {
        return Check::warn(
            "colours",
            "TERM=dumb: the terminal may not move the cursor or show colour, and the live lab draws with both",
            "a terminal emulator (TERM=xterm-256color or the like); scripts use `latlab run`",
            &[Part::Live],
        );
    }
    use crate::tui::theme::Depth;
    match Depth::from_env(env.colorterm.as_deref(), env.term.as_deref()) {
        Depth::TrueColor => Check::ok(
            "colours",
            format!(
                "24-bit (COLORTERM={colorterm}): the live lab shows its theme's colours as designed"
            ),
        ),
        Depth::Palette256 => Check::ok(
            "colours",
            format!(
                "256 colours (TERM={term}, COLORTERM unset): the live lab draws its theme's colours with the nearest of the palette"
            ),
        ),
        Depth::Basic => Check::warn(
            "colours",
            if term.is_empty() {
                "unknown (TERM unset): the live lab draws its theme with the 16 basic colours"
                    .to_string()
            } else {
                format!(
                    "basic colours (TERM={term}, COLORTERM unset): the live lab draws its theme with the 16 basic colours"
                )
            },
            "set COLORTERM=truecolor (or TERM=xterm-256color) if the terminal shows more; --theme mono for none",
            &[Part::Live],
        ),
    }
}

/// The log file opens for appending (created if absent, with its directory; never truncated),
/// as the live lab opens it: without it the live lab does not start.
pub(super) fn log(path: &Path) -> Check {
    match crate::run::process::open_log(path) {
        Ok(_) => Check::ok("log", format!("{} is writable", path.display())),
        Err(e) => Check::fail(
            "log",
            format!(
                "cannot open {} for writing ({e}): the live lab does not start without its log",
                path.display()
            ),
            "give the live lab --log FILE somewhere writable (check it with `latlab doctor --log FILE`)",
            &[Part::Live],
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;

    fn env(no_color: Option<&str>, colorterm: Option<&str>, term: Option<&str>) -> TermEnv {
        TermEnv {
            no_color: no_color.map(String::from),
            colorterm: colorterm.map(String::from),
            term: term.map(String::from),
        }
    }

    #[test]
    fn colours_follow_no_color_colorterm_and_term() {
        let c = colours(&env(Some("1"), None, Some("dumb")));
        assert_eq!(c.status, Status::Ok);
        assert!(c.found.contains("mono"), "{}", c.found);
        // An empty NO_COLOR is not set (the TUI reads it the same way).
        let c = colours(&env(Some(""), Some("truecolor"), Some("xterm-256color")));
        assert_eq!(c.status, Status::Ok);
        assert!(c.found.starts_with("24-bit"), "{}", c.found);
        assert_eq!(colours(&env(None, Some("24bit"), None)).status, Status::Ok);
        let c = colours(&env(None, None, Some("xterm-256color")));
        assert_eq!(c.status, Status::Ok);
        assert!(c.found.starts_with("256 colours"), "{}", c.found);
        assert!(c.found.contains("nearest of the palette"), "{}", c.found);
        let c = colours(&env(None, None, Some("xterm")));
        assert_eq!(c.status, Status::Warn);
        assert!(c.found.starts_with("basic colours"), "{}", c.found);
        assert!(c.fix.unwrap().contains("COLORTERM=truecolor"));
        let c = colours(&env(None, Some("truecolor"), Some("dumb")));
        assert_eq!(c.status, Status::Warn);
        assert!(c.found.starts_with("TERM=dumb"), "{}", c.found);
        assert_eq!(c.labs, vec![Part::Live]);
    }

    #[test]
    fn the_terminal_check_knows_the_live_labs_minimum() {
        assert_eq!(terminal(Some(Ok((120, 40)))).status, Status::Ok);
        let small = terminal(Some(Ok((79, 40))));
        assert_eq!(small.status, Status::Warn);
        assert!(small.found.contains("80x24"), "{}", small.found);
        let none = terminal(None);
        assert_eq!(none.status, Status::Warn);
        assert!(none.found.contains("not a terminal"));
    }

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

    #[test]
    fn a_log_that_cannot_be_made_fails_the_live_lab_only() {
        let dir = tempfile::tempdir().unwrap();
        let ok = log(&dir.path().join("latlab.log"));
        assert_eq!(ok.status, Status::Ok);
        // A directory not made yet is made, as the live lab makes it.
        let new = dir.path().join("new-dir").join("latlab.log");
        assert_eq!(log(&new).status, Status::Ok);
        assert!(new.exists());
        // Under a file, no directory can be made (whatever the user's permissions).
        let file = dir.path().join("a-file");
        std::fs::write(&file, "x").unwrap();
        let bad = log(&file.join("latlab.log"));
        assert_eq!(bad.status, Status::Fail);
        assert_eq!(bad.labs, vec![Part::Live]);
    }
}
