//! The keys a config file may hold: each a global option's long name, the environment variable
//! that also sets it, what a value must be, and the built-in default.

use std::path::Path;

use anyhow::bail;

use super::{Value, expand_home};

/// What a key's value must be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A colour theme: a built-in name or a theme file.
    Theme,
    /// Frames per second, 1 to 60.
    Fps,
    /// A file path.
    Path,
    /// A latency profile: a built-in name or a profile file.
    Profile,
    /// An http(s):// endpoint URL.
    Endpoint,
    Bool,
    /// A word (a region, a bucket name).
    Word,
    /// A redis:// or rediss:// URL.
    Redis,
    /// The name of an environment variable.
    EnvName,
    /// A list of directories.
    Dirs,
    /// A price file.
    Prices,
    /// An address to listen on: HOST:PORT, or a PORT on 127.0.0.1.
    Listen,
    /// A share's viewers at once, 1 to 1000.
    Viewers,
    /// A cost cap: a positive number of US dollars.
    Cost,
}

/// One key of the config file.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    /// The key in the file.
    pub name: &'static str,
    /// The clap id of the option it gives a default for (empty for keys with no flag).
    pub arg: &'static str,
    /// The environment variable that beats the file (and that clap reads for the flag).
    pub env: Option<&'static str>,
    pub kind: Kind,
    /// The value when nothing sets it, as `config show` says it.
    pub builtin: &'static str,
}

const fn key(
    name: &'static str,
    env: Option<&'static str>,
    kind: Kind,
    builtin: &'static str,
) -> Key {
    Key {
        name,
        arg: name,
        env,
        kind,
        builtin,
    }
}

/// Every key, in the order `config show` lists them.
pub const KEYS: &[Key] = &[
    key(
        "theme",
        Some("LATLAB_THEME"),
        Kind::Theme,
        "dark (mono when NO_COLOR is set)",
    ),
    key("fps", Some("LATLAB_FPS"), Kind::Fps, "5"),
    key(
        "log",
        Some("LATLAB_LOG_FILE"),
        Kind::Path,
        "latlab.log in the temporary directory",
    ),
    key(
        "latency_profile",
        Some("LATLAB_LATENCY_PROFILE"),
        Kind::Profile,
        "the scenario's",
    ),
    key(
        "endpoint_url",
        Some("LATLAB_ENDPOINT_URL"),
        Kind::Endpoint,
        "none: the embedded emulator",
    ),
    key("aws", Some("LATLAB_AWS"), Kind::Bool, "false"),
    key(
        "region",
        Some("AWS_REGION"),
        Kind::Word,
        "the SDK's (the AWS profile's region)",
    ),
    key(
        "stream",
        Some("LATLAB_STREAM"),
        Kind::Word,
        "none: each run makes its own",
    ),
    key("s3_bucket", Some("LATLAB_S3_BUCKET"), Kind::Word, "none"),
    key(
        "s3_express_bucket",
        Some("LATLAB_S3_EXPRESS_BUCKET"),
        Kind::Word,
        "none",
    ),
    key(
        "redis_primary",
        Some("LATLAB_REDIS_PRIMARY"),
        Kind::Redis,
        "none: latlab's own redis-server pair",
    ),
    key(
        "redis_replica",
        Some("LATLAB_REDIS_REPLICA"),
        Kind::Redis,
        "none: latlab's own redis-server pair",
    ),
    Key {
        name: "redis_password_env",
        arg: "",
        env: None,
        kind: Kind::EnvName,
        builtin: "none: the password, if any, is in the URLs",
    },
    key(
        "prices",
        Some("LATLAB_PRICES"),
        Kind::Prices,
        "prices/REGION.toml, built in",
    ),
    key("share", None, Kind::Listen, "none: the run is not shared"),
    key("share_viewers", None, Kind::Viewers, "16"),
    key("share_control", None, Kind::Bool, "false"),
    key(
        "max_cost",
        Some("LATLAB_MAX_COST"),
        Kind::Cost,
        "none: no cap (a run on AWS asks before it creates anything billed)",
    ),
    Key {
        name: "scenario_dirs",
        arg: "",
        env: Some(super::SCENARIO_DIRS_ENV),
        kind: Kind::Dirs,
        builtin: "none (and ./scenarios/ when it exists)",
    },
];

impl Key {
    /// Checks a value from the file; paths are made absolute against `dir`, the file's directory.
    pub fn check(&self, value: &toml::Value, dir: &Path) -> anyhow::Result<Value> {
        let path = |s: &str| dir.join(expand_home(Path::new(s)));
        let text = || -> anyhow::Result<&str> {
            match value.as_str() {
                Some(s) if !s.trim().is_empty() => Ok(s),
                _ => bail!("must be a string in quotes, not {value}"),
            }
        };
        Ok(match self.kind {
            Kind::Fps => match value.as_integer() {
                Some(n @ 1..=60) => Value::Number(n as u32),
                _ => bail!("must be a whole number of frames per second from 1 to 60, not {value}"),
            },
            Kind::Viewers => match value.as_integer() {
                Some(n @ 1..=1000) => Value::Number(n as u32),
                _ => bail!("must be a whole number of viewers from 1 to 1000, not {value}"),
            },
            Kind::Cost => {
                let v = value
                    .as_float()
                    .or_else(|| value.as_integer().map(|n| n as f64));
                match v {
                    Some(v) if v.is_finite() && v > 0.0 => Value::Text(v.to_string()),
                    _ => {
                        bail!("must be a positive number of US dollars, e.g. 0.5 or 2, not {value}")
                    }
                }
            }
            Kind::Listen => {
                let s = text()?;
                crate::listen::parse_addr("share", s)?;
                Value::Text(s.to_string())
            }
            Kind::Bool => match value.as_bool() {
                Some(b) => Value::Bool(b),
                None => bail!("must be true or false, not {value}"),
            },
            Kind::Theme => {
                let names: Vec<&str> = crate::tui::theme::BUILTIN.iter().map(|(n, _)| *n).collect();
                let v = named_or_file(text()?, &names, "theme", &path)?;
                crate::tui::theme::Theme::resolve(&v)?;
                Value::Text(v)
            }
            Kind::Profile => {
                let names = crate::emulator::profile::BUILTIN_PROFILES;
                let v = named_or_file(text()?, names, "latency profile", &path)?;
                crate::emulator::profile::LatencyProfile::resolve(&v)?;
                Value::Text(v)
            }
            Kind::Endpoint => {
                let s = text()?;
                crate::aws::check_endpoint_url(s)?;
                Value::Text(s.to_string())
            }
            Kind::Word => {
                let s = text()?;
                if s.contains(char::is_whitespace) {
                    bail!("must be one word, not \"{s}\"");
                }
                Value::Text(s.to_string())
            }
            Kind::Redis => {
                let s = text()?;
                if !(s.starts_with("redis://") || s.starts_with("rediss://")) {
                    bail!(
                        "must be a redis:// or rediss:// URL (redis://[:PASSWORD@]HOST:PORT), not \"{}\"",
                        crate::labs::redis::local::redact(s)
                    );
                }
                Value::Text(s.to_string())
            }
            Kind::EnvName => {
                let s = text()?;
                if !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    || s.starts_with(|c: char| c.is_ascii_digit())
                {
                    bail!("must name an environment variable (letters, digits and _), not \"{s}\"");
                }
                Value::Text(s.to_string())
            }
            Kind::Path => Value::Path(path(text()?)),
            Kind::Prices => {
                let p = path(text()?);
                crate::cost::Prices::load(&p)?;
                Value::Path(p)
            }
            Kind::Dirs => match value.as_array() {
                Some(items) => Value::Paths(
                    items
                        .iter()
                        .map(|i| match i.as_str() {
                            Some(s) if !s.is_empty() => Ok(path(s)),
                            _ => bail!("must be a list of directories in quotes, not {value}"),
                        })
                        .collect::<anyhow::Result<_>>()?,
                ),
                None => bail!(
                    "must be a list of directories, e.g. [\"~/latlab-scenarios\"], not {value}"
                ),
            },
        })
    }
}

/// A built-in name as it is, or a file's path made absolute; anything else is an error listing
/// the names.
fn named_or_file(
    s: &str,
    names: &[&str],
    what: &str,
    path: &dyn Fn(&str) -> std::path::PathBuf,
) -> anyhow::Result<String> {
    if names.contains(&s) {
        return Ok(s.to_string());
    }
    let file = path(s);
    if !s.ends_with(".toml") && !file.exists() {
        bail!(
            "unknown {what} '{s}': valid names are {}, or a {what} file",
            names.join(", ")
        );
    }
    Ok(file.display().to_string())
}
