//! Defaults of one's own: a TOML file of global options, read from `--config FILE` (or
//! `LATLAB_CONFIG`), else `$XDG_CONFIG_HOME/latlab/config.toml` (`~/.config/latlab/config.toml`).
//!
//! Precedence, per option: a flag, then its environment variable (both read by clap, which says
//! which one gave a value), then this file, then the built-in default. The file's keys are the
//! options' long names with `_` for `-` (`latency_profile` for `--latency-profile`); `keys.rs`
//! lists them, and an unknown key or a bad value is an error naming the file, the line and the
//! key. Paths in the file are relative to the file's directory, and `~` is the home directory.

mod keys;
mod show;

pub use keys::{Key, Kind, keys};
pub use show::{example_file, render_show};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::ArgMatches;
use clap::parser::ValueSource;

/// The environment variable naming a config file (as `--config` does).
pub const CONFIG_ENV: &str = "LATLAB_CONFIG";
/// The environment variable holding scenario directories, separated as PATH is.
pub const SCENARIO_DIRS_ENV: &str = "LATLAB_SCENARIO_DIRS";

/// One value the file gave, with the line it is on.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub value: Value,
    pub line: usize,
}

/// A value as the file gave it, checked and with paths made absolute.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Text(String),
    Path(PathBuf),
    Paths(Vec<PathBuf>),
    Bool(bool),
    Number(u32),
}

impl Value {
    pub fn display(&self) -> String {
        match self {
            Value::Text(s) => s.clone(),
            Value::Path(p) => p.display().to_string(),
            Value::Paths(ps) => ps
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => n.to_string(),
        }
    }
}

/// Where the config file is looked for, and whether it must exist.
#[derive(Clone, Debug, PartialEq)]
pub struct Location {
    pub path: PathBuf,
    /// Named by `--config` or `LATLAB_CONFIG`: a missing file is an error.
    pub named: bool,
}

/// The config file's values (none when there is no file).
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The file read, or looked for.
    pub location: Option<Location>,
    /// Whether the file existed and was read.
    pub read: bool,
    entries: BTreeMap<&'static str, Entry>,
}

impl Config {
    /// Where to look: `--config FILE` (clap also reads `LATLAB_CONFIG` into it), else the XDG
    /// location. `None` when neither `XDG_CONFIG_HOME` nor `HOME` says where that is.
    pub fn locate(named: Option<&Path>) -> Option<Location> {
        if let Some(path) = named {
            return Some(Location {
                path: path.to_path_buf(),
                named: true,
            });
        }
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| home().map(|h| h.join(".config")))?;
        Some(Location {
            path: base.join("latlab").join("config.toml"),
            named: false,
        })
    }

    /// Reads the file at `location`; a file not named that does not exist is no config.
    pub fn load(location: Option<Location>) -> anyhow::Result<Config> {
        let Some(location) = location else {
            return Ok(Config::default());
        };
        let text = match std::fs::read_to_string(&location.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !location.named => {
                return Ok(Config {
                    location: Some(location),
                    ..Config::default()
                });
            }
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("cannot read config file {}", location.path.display())
                });
            }
        };
        let entries = Config::parse(&text, &location.path)
            .with_context(|| format!("config file {}", location.path.display()))?;
        Ok(Config {
            location: Some(location),
            read: true,
            entries,
        })
    }

    /// Parses a config file's text; `path` is where it is (relative paths in it are relative to
    /// its directory). Errors name the line and the key.
    pub fn parse(text: &str, path: &Path) -> anyhow::Result<BTreeMap<&'static str, Entry>> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            anyhow::anyhow!("{}", latlab_core::units::toml_error(text, &e))
        })?;
        let dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let mut entries = BTreeMap::new();
        for (name, value) in &table {
            let line = key_line(text, name);
            let Some(key) = keys().iter().find(|k| k.name == name) else {
                bail!(
                    "line {line}: unknown key `{name}`; valid keys: {}",
                    keys().iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
                );
            };
            let value = key
                .check(value, &dir)
                .map_err(|e| anyhow::anyhow!("line {line}, key `{name}`: {e:#}"))?;
            entries.insert(key.name, Entry { value, line });
        }
        if let (
            Some(_),
            Some(Entry {
                value: Value::Bool(true),
                line,
            }),
        ) = (entries.get("endpoint_url"), entries.get("aws"))
        {
            bail!(
                "line {line}, key `aws`: aws = true and endpoint_url are two places to measure; keep one"
            );
        }
        Ok(entries)
    }

    /// How many keys the file sets.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key)
    }

    /// Where a value of the file came from, for messages: `config file PATH, line N`.
    pub fn origin(&self, key: &str) -> Option<String> {
        let entry = self.entry(key)?;
        let path = &self.location.as_ref()?.path;
        Some(format!(
            "config file {}, line {}",
            path.display(),
            entry.line
        ))
    }

    /// The file's value for the option `key` (clap id `key.arg`) when neither its flag nor its
    /// environment variable gave one.
    fn wanted(&self, m: &ArgMatches, key: &str) -> Option<&Value> {
        let k = keys().iter().find(|k| k.name == key)?;
        if given(m, k.arg) {
            return None;
        }
        self.entries.get(key).map(|e| &e.value)
    }

    pub fn text(&self, m: &ArgMatches, key: &str) -> Option<String> {
        match self.wanted(m, key)? {
            Value::Text(s) => Some(s.clone()),
            Value::Path(p) => Some(p.display().to_string()),
            _ => None,
        }
    }

    pub fn path(&self, m: &ArgMatches, key: &str) -> Option<PathBuf> {
        match self.wanted(m, key)? {
            Value::Path(p) => Some(p.clone()),
            _ => None,
        }
    }

    pub fn number(&self, m: &ArgMatches, key: &str) -> Option<u32> {
        match self.wanted(m, key)? {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    pub fn flag(&self, m: &ArgMatches, key: &str) -> Option<bool> {
        match self.wanted(m, key)? {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The scenario directories to search, in order, each with where it was named: the
    /// environment's `LATLAB_SCENARIO_DIRS` when set (it beats the file), else the file's
    /// `scenario_dirs`; then `./scenarios/` when it exists (a checkout of latlab, or a project
    /// keeping its scenarios there).
    pub fn scenario_dirs(&self) -> Vec<(PathBuf, String)> {
        let mut dirs = Vec::new();
        if let Some(env) = std::env::var_os(SCENARIO_DIRS_ENV).filter(|v| !v.is_empty()) {
            for d in std::env::split_paths(&env) {
                dirs.push((expand_home(&d), format!("environment {SCENARIO_DIRS_ENV}")));
            }
        } else if let Some(Entry {
            value: Value::Paths(ps),
            ..
        }) = self.entries.get("scenario_dirs")
        {
            let origin = self.origin("scenario_dirs").unwrap_or_default();
            dirs.extend(ps.iter().map(|p| (p.clone(), origin.clone())));
        }
        let local = PathBuf::from("scenarios");
        if local.is_dir() && !dirs.iter().any(|(d, _)| same_dir(d, &local)) {
            dirs.push((local, "the current directory".to_string()));
        }
        dirs
    }
}

/// A lab's keys without a flag, as `LabTarget::after_config` reads them.
impl crate::labs::target::FileKeys for Config {
    fn text(&self, key: &str) -> Option<(String, String, usize)> {
        let Entry {
            value: Value::Text(v),
            line,
        } = self.entries.get(key)?
        else {
            return None;
        };
        let file = self
            .location
            .as_ref()
            .map(|l| format!("config file {}", l.path.display()))
            .unwrap_or_default();
        Some((v.clone(), file, *line))
    }
}

/// Whether the option with clap id `id` was given by its flag or its environment variable.
pub fn given(m: &ArgMatches, id: &str) -> bool {
    matches!(
        m.value_source(id),
        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
    )
}

/// The line a top-level key is written on (1 when it cannot be found).
fn key_line(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            let rest = l
                .strip_prefix(key)
                .or_else(|| l.strip_prefix(&format!("\"{key}\"")));
            rest.is_some_and(|r| r.trim_start().starts_with('='))
        })
        .map_or(1, |i| i + 1)
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// `~/x` is the home directory's `x`.
pub fn expand_home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), home()) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<BTreeMap<&'static str, Entry>, String> {
        Config::parse(text, Path::new("/etc/latlab/config.toml")).map_err(|e| format!("{e:#}"))
    }

    #[test]
    fn values_are_checked_and_paths_made_absolute() {
        let e = parse(
            "theme = \"light\"\nfps = 10\nlog = \"logs/latlab.log\"\naws = false\nscenario_dirs = [\"mine\", \"/srv/s\"]\n",
        )
        .unwrap();
        assert_eq!(e["theme"].value, Value::Text("light".into()));
        assert_eq!(
            e["fps"],
            Entry {
                value: Value::Number(10),
                line: 2
            }
        );
        assert_eq!(
            e["log"].value,
            Value::Path("/etc/latlab/logs/latlab.log".into())
        );
        assert_eq!(
            e["scenario_dirs"].value,
            Value::Paths(vec!["/etc/latlab/mine".into(), "/srv/s".into()])
        );
    }

    /// `region = ""` was said to be "not a string in quotes".
    #[test]
    fn an_empty_value_is_said_to_be_empty() {
        let e = parse("fps = 10\nregion = \"\"\n").unwrap_err();
        assert_eq!(
            e,
            "line 2, key `region`: is empty; give it a value in quotes, e.g. region = \"eu-west-1\""
        );
    }

    #[test]
    fn errors_name_the_line_and_the_key() {
        let e = parse("theme = \"dark\"\n\nthemes = \"light\"\n").unwrap_err();
        assert!(
            e.starts_with("line 3: unknown key `themes`; valid keys: theme, fps, log,"),
            "{e}"
        );
        let e = parse("fps = 0\n").unwrap_err();
        assert_eq!(
            e,
            "line 1, key `fps`: must be a whole number of frames per second from 1 to 60, not 0"
        );
        let e = parse("fps = \"fast\"\n").unwrap_err();
        assert_eq!(
            e,
            "line 1, key `fps`: must be a whole number of frames per second from 1 to 60, not \"fast\""
        );
        let e = parse("a = 1\ntheme = \"neon\"\n").unwrap_err();
        assert!(e.starts_with("line 1: unknown key `a`"), "{e}");
        let e = parse("theme = \"neon\"\n").unwrap_err();
        assert!(
            e.starts_with("line 1, key `theme`: unknown theme 'neon'"),
            "{e}"
        );
        let e = parse("endpoint_url = \"localhost:4566\"\n").unwrap_err();
        assert!(e.contains("line 1, key `endpoint_url`: "), "{e}");
        let e = parse("redis_primary = \"http://x:1\"\n").unwrap_err();
        assert!(
            e.contains("line 1, key `redis_primary`: must be a redis:// or rediss:// URL"),
            "{e}"
        );
        let e = parse("endpoint_url = \"http://127.0.0.1:4566\"\naws = true\n").unwrap_err();
        assert_eq!(
            e,
            "line 2, key `aws`: aws = true and endpoint_url are two places to measure; keep one"
        );
        let e = parse("fps = \n").unwrap_err();
        assert!(e.starts_with("line 1, column"), "{e}");
    }

    #[test]
    fn keys_are_found_on_their_line() {
        assert_eq!(key_line("# fps = 3\n\nfps = 4\n", "fps"), 3);
        assert_eq!(key_line("fpsx = 1\n fps= 4\n", "fps"), 2);
    }
}
