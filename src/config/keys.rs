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
    /// A word (a region).
    Word,
    /// One of a lab's keys, of its form (`crate::labs::target::Form`).
    Lab(crate::labs::target::Form),
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
    /// What it sets, and a value to show it with (`config example`).
    pub about: &'static str,
    pub example: &'static str,
    /// A lab's key used on an endpoint or AWS only.
    pub external_only: bool,
    /// The key naming the environment variable that holds this URL's password.
    pub password_from: Option<&'static str>,
}

const fn key(
    name: &'static str,
    env: Option<&'static str>,
    kind: Kind,
    builtin: &'static str,
    (about, example): (&'static str, &'static str),
) -> Key {
    Key {
        name,
        arg: name,
        env,
        kind,
        builtin,
        about,
        example,
        external_only: false,
        password_from: None,
    }
}

/// latlab's own keys before the labs': where to measure.
const BEFORE_LABS: &[Key] = &[
    key(
        "theme",
        Some("LATLAB_THEME"),
        Kind::Theme,
        "dark (mono when NO_COLOR is set)",
        (
            "Colour theme: dark, light, mono, or a theme file",
            "\"light\"",
        ),
    ),
    key(
        "fps",
        Some("LATLAB_FPS"),
        Kind::Fps,
        "5",
        (
            "Frames per second of the live lab when nothing happens (1 to 60)",
            "10",
        ),
    ),
    key(
        "log",
        Some("LATLAB_LOG_FILE"),
        Kind::Path,
        "latlab.log in the temporary directory",
        ("The live lab's log file", "\"~/.cache/latlab/latlab.log\""),
    ),
    key(
        "latency_profile",
        Some("LATLAB_LATENCY_PROFILE"),
        Kind::Profile,
        "the scenario's",
        (
            "The embedded emulator's latency profile: zero, same-region, seed-tokyo, or a file (instead of the scenario's; not used with endpoint_url or aws)",
            "\"same-region\"",
        ),
    ),
    key(
        "endpoint_url",
        Some("LATLAB_ENDPOINT_URL"),
        Kind::Endpoint,
        "none: the embedded emulator",
        (
            "Measure this endpoint (LocalStack, `latlab emulate`) instead of the embedded emulator",
            "\"http://127.0.0.1:4566\"",
        ),
    ),
    key(
        "aws",
        Some("LATLAB_AWS"),
        Kind::Bool,
        "false",
        (
            "Measure real AWS (its endpoints, the SDK's credentials)",
            "true",
        ),
    ),
    key(
        "region",
        Some("AWS_REGION"),
        Kind::Word,
        "the SDK's (the AWS profile's region)",
        ("The region for endpoint_url or aws", "\"eu-west-1\""),
    ),
];

/// latlab's own keys after the labs'.
const AFTER_LABS: &[Key] = &[
    key(
        "prices",
        Some("LATLAB_PRICES"),
        Kind::Prices,
        "prices/REGION.toml, built in",
        (
            "A price file instead of the built-in one of the region",
            "\"~/latlab-prices.toml\"",
        ),
    ),
    key(
        "share",
        None,
        Kind::Listen,
        "none: the run is not shared",
        (
            "Share every live run at this address (HOST:PORT, or a PORT on 127.0.0.1; port 0 takes a free one), as --share does",
            "\"127.0.0.1:0\"",
        ),
    ),
    key(
        "share_viewers",
        None,
        Kind::Viewers,
        "16",
        ("A share's viewers at once (1 to 1000)", "4"),
    ),
    key(
        "share_control",
        None,
        Kind::Bool,
        "false",
        (
            "Let a share's viewers send the keys that change the experiment",
            "true",
        ),
    ),
    key(
        "max_cost",
        Some("LATLAB_MAX_COST"),
        Kind::Cost,
        "none: no cap (a run on AWS asks before it creates anything billed)",
        (
            "Stop every run before its list-price cost would pass this many US dollars, as --max-cost does",
            "0.5",
        ),
    ),
    Key {
        name: "scenario_dirs",
        arg: "",
        env: Some(super::SCENARIO_DIRS_ENV),
        kind: Kind::Dirs,
        builtin: "none (and ./scenarios/ when it exists)",
        about: "Where `latlab run NAME` and `latlab scenarios` look for NAME.toml",
        example: "[\"~/latlab-scenarios\"]",
        external_only: false,
        password_from: None,
    },
];

/// Every key, in the order `config show` lists them: latlab's own where to measure, each lab's
/// (declared in its folder, `labs/X/target.rs`), then the rest of latlab's own.
pub fn keys() -> &'static [Key] {
    static KEYS: std::sync::OnceLock<Vec<Key>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let labs = crate::labs::target::LabTargets::keys()
            .iter()
            .map(|(k, env)| Key {
                name: k.name,
                arg: if k.flag { k.name } else { "" },
                env: *env,
                kind: Kind::Lab(k.form),
                builtin: k.builtin,
                about: k.about,
                example: k.example,
                external_only: k.external_only,
                password_from: k.password_from,
            });
        BEFORE_LABS
            .iter()
            .copied()
            .chain(labs)
            .chain(AFTER_LABS.iter().copied())
            .collect()
    })
}

impl Key {
    /// Checks a value from the file; paths are made absolute against `dir`, the file's directory.
    pub fn check(&self, value: &toml::Value, dir: &Path) -> anyhow::Result<Value> {
        let path = |s: &str| dir.join(expand_home(Path::new(s)));
        let text = || -> anyhow::Result<&str> {
            match value.as_str() {
                Some(s) if !s.trim().is_empty() => Ok(s),
                Some(_) => bail!(
                    "is empty; give it a value in quotes, e.g. {} = {}",
                    self.name,
                    self.example
                ),
                None => bail!("must be a string in quotes, not {value}"),
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
                latlab_core::listen::parse_addr("share", s)?;
                Value::Text(s.to_string())
            }
            Kind::Bool => match value.as_bool() {
                Some(b) => Value::Bool(b),
                None => bail!("must be true or false, not {value}"),
            },
            Kind::Theme => {
                let names: Vec<&str> = crate::theme::BUILTIN.iter().map(|(n, _)| *n).collect();
                let v = named_or_file(text()?, &names, "theme", &path)?;
                crate::theme::Theme::resolve(&v)?;
                Value::Text(v)
            }
            Kind::Profile => {
                let names = latlab_emulator::profile::BUILTIN_PROFILES;
                let v = named_or_file(text()?, names, "latency profile", &path)?;
                latlab_emulator::profile::LatencyProfile::resolve(&v)?;
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
            Kind::Lab(form) => {
                let s = text()?;
                form.check(s).map_err(|e| anyhow::anyhow!("{e}"))?;
                Value::Text(s.to_string())
            }
            Kind::Path => Value::Path(path(text()?)),
            Kind::Prices => {
                let p = path(text()?);
                crate::lab_kit::cost::Prices::load(&p)?;
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
