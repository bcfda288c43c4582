//! The checks on this machine: the terminal, its colours and the log file (the Redis lab checks
//! redis-server or the pair given itself: `labs/redis/doctor.rs`).

use std::path::Path;

use super::{Check, Part};

/// The terminal: `None` when standard output is not one, else its size (or why it is unknown).
pub(super) fn terminal(size: Option<Result<(u16, u16), String>>) -> Check {
    let (min_w, min_h) = crate::lab_kit::view::MIN_SIZE;
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
    use crate::theme::Depth;
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
    match crate::snapshot::process::open_log(path) {
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
