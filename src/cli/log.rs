//! The run's log: a file (the terminal belongs to the screen), at the levels `LATLAB_LOG` names.

use std::path::PathBuf;

use anyhow::Context;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Where the live lab logs without `--log`.
pub(super) fn default_log_path() -> PathBuf {
    std::env::temp_dir().join("latlab.log")
}

/// Logs go to a file: the terminal belongs to the screen.
pub(super) fn init_log(path: Option<&std::path::Path>) -> anyhow::Result<PathBuf> {
    let path = path.map(PathBuf::from).unwrap_or_else(default_log_path);
    let file = crate::snapshot::process::open_log(&path)
        .with_context(|| format!("cannot open log file {}", path.display()))?;
    let (filter, unreadable) = log_filter(std::env::var("LATLAB_LOG").ok().as_deref());
    let _ = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .finish()
        .with(filter)
        .try_init();
    if let Some(why) = unreadable {
        tracing::warn!("{why}");
    }
    Ok(path)
}

/// What the log records: `LATLAB_LOG` as levels by target (`info`, `latlab=debug,hyper=warn`), or
/// `info` when it is unset; a value that is not such a list is named in the log, at `info`.
fn log_filter(text: Option<&str>) -> (Targets, Option<String>) {
    let info = Targets::new().with_default(LevelFilter::INFO);
    match text.map(str::trim).filter(|t| !t.is_empty()) {
        None => (info, None),
        Some(text) => match text.parse::<Targets>() {
            Ok(filter) => (filter, None),
            Err(e) => (
                info,
                Some(format!(
                    "LATLAB_LOG='{text}' is not a log filter ({e}); write levels by target, e.g. \
                     info or latlab=debug,hyper=warn; logging at info"
                )),
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::log_filter;

    #[test]
    fn latlab_log_is_levels_by_target() {
        let (filter, why) = log_filter(Some("latlab=debug,hyper=warn"));
        assert!(why.is_none());
        assert_eq!(filter.to_string(), "latlab=debug,hyper=warn");
        for unset in [None, Some(""), Some("  ")] {
            let (filter, why) = log_filter(unset);
            assert!(why.is_none());
            assert_eq!(filter.to_string(), "info");
        }
    }

    #[test]
    fn an_unreadable_latlab_log_is_named_and_logging_goes_on_at_info() {
        let (filter, why) = log_filter(Some("latlab=loud"));
        assert_eq!(filter.to_string(), "info");
        let why = why.unwrap();
        assert!(
            why.starts_with("LATLAB_LOG='latlab=loud' is not a log filter ("),
            "{why}"
        );
        assert!(
            why.ends_with(
                "write levels by target, e.g. info or latlab=debug,hyper=warn; logging at info"
            ),
            "{why}"
        );
    }
}
