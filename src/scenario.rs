//! What an experiment is: a TOML file with a section per lab (`[kinesis]`, `[s3]`, `[redis]`,
//! each parsed by its lab in `labs/*/config.rs`), the latency profile and limits for the embedded
//! emulator, and (for the seed scenarios) the seed's own figures to print beside ours.
//!
//! Built-in scenarios are compiled in: each lab's in its folder (`labs/X/scenarios/*.toml`), and
//! those of every lab at once (the tour, the soak) in `scenarios/*.toml`. A bad file gets an
//! error naming the file, the line and the field.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

use crate::labs::{Lab, LabKind};
use latlab_core::units::{Dur, toml_error};

/// The scenarios of every lab, tour and soak last.
const LAST: &[(&str, &str)] = &[
    ("tour", include_str!("../scenarios/tour.toml")),
    ("soak", include_str!("../scenarios/soak.toml")),
];

macro_rules! lab_scenarios {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        /// The built-in scenarios: (name, file text), each lab's (`Facts::scenarios`, in its
        /// folder) in the registry's order, then the tour and the soak.
        pub fn builtin() -> &'static [(&'static str, &'static str)] {
            static ALL: std::sync::OnceLock<Vec<(&'static str, &'static str)>> =
                std::sync::OnceLock::new();
            ALL.get_or_init(|| {
                let mut all: Vec<(&'static str, &'static str)> = Vec::new();
                $(all.extend_from_slice(<crate::labs::$module::$ty as Lab>::FACTS.scenarios);)*
                all.extend_from_slice(LAST);
                all
            })
        }
    };
}
crate::labs::for_each_lab!(lab_scenarios);

macro_rules! scenario {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        /// The seed's own figures, one part per lab (`[seed.kinesis]`), from the registry.
        #[derive(Clone, Debug, PartialEq, Default, Deserialize, Serialize)]
        #[serde(deny_unknown_fields)]
        pub struct Seed {
            $(
                #[serde(default, skip_serializing_if = "crate::labs::left_out")]
                pub $module: Option<<crate::labs::$module::$ty as Lab>::Seed>,
            )*
        }

        #[derive(Clone, Debug, PartialEq)]
        pub struct Scenario {
            pub name: String,
            pub description: String,
            /// Headless run length; the TUI runs until quit.
            pub duration: Duration,
            /// The latency profile of the embedded emulator (a real endpoint adds its own latency).
            pub latency_profile: String,
            /// `--limit`-style overrides for the embedded emulator.
            pub emulator_limits: Vec<String>,
            /// Each lab's part (`scenario.kinesis`, ...): those the file has a section for.
            $(pub $module: Option<<crate::labs::$module::$ty as Lab>::Scenario>,)*
            /// Faults to inject while it runs (`[[faults]]`).
            pub faults: Vec<latlab_core::faults::FaultSpec>,
            /// What a host running it runs of a lab that splits into a producer and consumers
            /// (`role = "consumers"` or `"producer"`); the flags override it.
            pub role: Option<crate::labs::Role>,
            pub seed: Option<Seed>,
            /// Where it came from: `built-in` or the file's path.
            pub origin: String,
            /// Its text, as it was read (a recording keeps it).
            pub source: String,
        }

        // ---- the file form ----

        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            name: String,
            description: String,
            duration: Dur,
            #[serde(default = "default_profile")]
            latency_profile: String,
            #[serde(default)]
            emulator: EmulatorSection,
            $($module: Option<<crate::labs::$module::$ty as Lab>::File>,)*
            #[serde(default)]
            faults: Vec<toml::Table>,
            role: Option<crate::labs::Role>,
            seed: Option<Seed>,
        }

        impl File {
            /// The scenario the file describes: each lab checks its section, then the seed's
            /// figures against it; then the faults are read.
            fn into_scenario(
                self,
                text: &str,
                origin: &str,
                emulator_limits: Vec<String>,
            ) -> anyhow::Result<Scenario> {
                $(let $module = self
                    .$module
                    .map(|f| <crate::labs::$module::$ty as crate::labs::Setup>::parse(f, text))
                    .transpose()?;)*
                if true $(&& $module.is_none())* {
                    return Err(no_lab());
                }
                $(if let (Some(seed), Some(s)) = (
                    self.seed.as_ref().and_then(|s| s.$module.as_ref()),
                    $module.as_ref(),
                ) {
                    <crate::labs::$module::$ty as crate::labs::Setup>::check_seed(seed, s)?;
                })*
                let faults = self
                    .faults
                    .iter()
                    .enumerate()
                    .map(|(i, t)| parse_fault(i, t))
                    .collect::<anyhow::Result<Vec<_>>>()?;
                Ok(Scenario {
                    name: self.name,
                    description: self.description,
                    duration: self.duration.0,
                    latency_profile: self.latency_profile,
                    emulator_limits,
                    $($module,)*
                    faults,
                    role: self.role,
                    seed: self.seed,
                    origin: origin.to_string(),
                    source: text.to_string(),
                })
            }
        }

        impl Scenario {
            /// Every lab's part of the run's model (`Lab::model`), in screen order.
            pub fn lab_model(&self) -> Vec<latlab_core::provenance::Param> {
                let mut out = Vec::new();
                $(if let Some(s) = &self.$module {
                    out.extend(<crate::labs::$module::$ty as crate::labs::Setup>::model(s));
                })*
                out
            }

            /// Every lab takes what `profile` says of the links it shapes itself.
            pub fn shaped_by(&mut self, p: &latlab_emulator::profile::LatencyProfile) {
                $(if let Some(s) = self.$module.as_mut() { <crate::labs::$module::$ty as crate::labs::Setup>::shaped_by(s, p); })*
            }

            /// Readies every lab for a headless run of the scenario's duration.
            pub fn for_duration(&mut self) {
                $(if let Some(s) = self.$module.as_mut() {
                    <crate::labs::$module::$ty as crate::labs::Setup>::for_duration(s, self.duration);
                })*
            }
        }
    };
}
crate::labs::for_each_lab!(scenario);

/// A scenario file without any lab's section: the error names every section it could have.
fn no_lab() -> anyhow::Error {
    let sections: Vec<String> = LabKind::ALL
        .iter()
        .map(|l| format!("[{}]", l.key()))
        .collect();
    let (last, rest) = sections.split_last().expect("the registry has a lab");
    anyhow::anyhow!(
        "the scenario has no {} or {last} section: nothing to run",
        rest.join(", ")
    )
}

fn default_profile() -> String {
    "seed-tokyo".into()
}

/// `[emulator] limits` as `--limit` overrides: a key of the emulator's limits file
/// (`sqs.max_in_flight = 5`, or `sqs = { max_in_flight = 5 }`) as it is, and a key alone as a
/// Kinesis limit, as scenarios have written them (`reshard_duration = "2s"`).
fn limit_overrides(limits: &toml::Table) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in limits {
        match v {
            toml::Value::Table(t) => {
                for (k2, v2) in t {
                    out.push(format!("{k}.{k2}={v2}"));
                }
            }
            v if k.contains('.') => out.push(format!("{k}={v}")),
            v => out.push(format!("kinesis.{k}={v}")),
        }
    }
    out
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct EmulatorSection {
    #[serde(default)]
    limits: toml::Table,
}

impl Scenario {
    /// A built-in scenario by name, or a scenario file by path.
    pub fn resolve(name_or_path: &str) -> anyhow::Result<Scenario> {
        Scenario::resolve_in(name_or_path, &[])
    }

    /// A built-in scenario by name, a scenario file by path, or `NAME.toml` in one of `dirs`
    /// (searched in order; each with where it was named, for messages).
    pub fn resolve_in(
        name_or_path: &str,
        dirs: &[(std::path::PathBuf, String)],
    ) -> anyhow::Result<Scenario> {
        if let Some((_, text)) = builtin().iter().find(|(n, _)| *n == name_or_path) {
            return Scenario::parse(text, "built-in")
                .with_context(|| format!("built-in scenario {name_or_path}"));
        }
        let path = Path::new(name_or_path);
        if path.exists() || name_or_path.ends_with(".toml") {
            return Scenario::load(path);
        }
        for (dir, _) in dirs {
            let file = dir.join(format!("{name_or_path}.toml"));
            if file.is_file() {
                return Scenario::load(&file);
            }
        }
        let searched = if dirs.is_empty() {
            String::new()
        } else {
            format!(
                "; NAME.toml was looked for in {}",
                dirs.iter()
                    .map(|(d, _)| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        bail!(
            "unknown scenario '{name_or_path}': valid names are {} (see `latlab scenarios`), or a path to a .toml file{searched}",
            builtin()
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        )
    }

    pub fn load(path: &Path) -> anyhow::Result<Scenario> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read scenario file {}", path.display()))?;
        Scenario::parse(&text, &path.display().to_string())
            .with_context(|| format!("scenario file {}", path.display()))
    }

    /// Parses and validates a scenario's text; errors name the line and field.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Scenario> {
        Scenario::parse_unlocated(text, origin).map_err(|e| locate(text, e))
    }

    fn parse_unlocated(text: &str, origin: &str) -> anyhow::Result<Scenario> {
        let file: File =
            toml::from_str(text).map_err(|e| anyhow::anyhow!("{}", toml_error(text, &e)))?;
        let duration = file.duration.0;
        if duration.is_zero() {
            bail!("duration must be longer than 0s");
        }
        let emulator_limits = limit_overrides(&file.emulator.limits);
        latlab_emulator::limits::Limits::load(None, &emulator_limits).map_err(|e| {
            let e = format!("{e:#}");
            anyhow::anyhow!(
                "[emulator] limits: {}",
                e.strip_prefix("--limit: ").unwrap_or(&e)
            )
        })?;
        latlab_emulator::profile::LatencyProfile::resolve(&file.latency_profile)
            .context("latency_profile")?;
        file.into_scenario(text, origin, emulator_limits)
    }
}

/// An error about a field of the file, with the line the field is on in front when the message
/// did not say it: the field is the path the message starts with (`kinesis.shards must ...`,
/// `[sqs] rate = 0: ...`, `[[sqs.consumers]] 'fifo': ...`, `latency_profile: ...`), narrowed to a
/// key the message names in backticks (`[emulator] limits: unknown field `bogus``), widened to
/// the nearest key the file holds.
fn locate(text: &str, e: anyhow::Error) -> anyhow::Error {
    let message = format!("{e:#}");
    if message.starts_with("line ") {
        return e;
    }
    let key = |path: &str| latlab_core::units::key_line(text, path);
    let line = if let Some(rest) = message.strip_prefix("[[") {
        // An array of tables' item, by the name it was given.
        let (section, rest) = rest.split_once("]]").unwrap_or((rest, ""));
        let number = rest
            .trim()
            .strip_prefix("number ")
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse::<usize>().ok());
        if let Some(n) = number.filter(|n| *n > 0) {
            return match key(&format!("{section}[{}]", n - 1)) {
                Some(line) => anyhow::anyhow!("line {line}, {message}"),
                None => e,
            };
        }
        rest.trim()
            .strip_prefix('\'')
            .and_then(|r| r.split_once('\''))
            .and_then(|(name, _)| {
                text.lines().position(|l| {
                    let l = l.trim().replace(' ', "");
                    l == format!("name=\"{name}\"") || l == format!("name='{name}'")
                })
            })
            .map(|i| i + 1)
            .or_else(|| key(section))
    } else {
        let (path, rest) = match message.strip_prefix('[') {
            // `[section] key = ...` or `[section] key: ...`.
            Some(rest) => {
                let (section, rest) = rest.split_once(']').unwrap_or((rest, ""));
                let word: String = rest
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let path = if word.is_empty() {
                    section.to_string()
                } else {
                    format!("{section}.{word}")
                };
                (path, rest)
            }
            None => {
                let path: String = message
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || "._[]".contains(*c))
                    .collect();
                (path, message.as_str())
            }
        };
        // A key the message names in backticks, under the path: its own line.
        let named = rest
            .split('`')
            .nth(1)
            .and_then(|k| key(&format!("{path}.{k}")));
        named.or_else(|| {
            let mut path = path.as_str();
            loop {
                if let Some(line) = key(path) {
                    return Some(line);
                }
                path = path.rsplit_once('.')?.0;
            }
        })
    };
    match line {
        Some(line) => anyhow::anyhow!("line {line}, {message}"),
        None => e,
    }
}

/// One `[[faults]]` table: `kind` and the settings `--fault` takes, as TOML values.
fn parse_fault(i: usize, t: &toml::Table) -> anyhow::Result<latlab_core::faults::FaultSpec> {
    let n = i + 1;
    let kind = match t.get("kind") {
        Some(toml::Value::String(k)) => k.clone(),
        _ => bail!(
            "[[faults]] number {n}: kind = \"...\" is missing; valid: {}",
            latlab_core::faults::Kind::all()
                .map(latlab_core::faults::Kind::name)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut pairs = Vec::new();
    for (k, v) in t.iter().filter(|(k, _)| *k != "kind") {
        let text = match v {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(x) => x.to_string(),
            toml::Value::Float(x) => x.to_string(),
            other => {
                bail!("[[faults]] number {n} ({kind}): {k} = {other} is not a string or a number")
            }
        };
        pairs.push((k.clone(), text));
    }
    latlab_core::faults::FaultSpec::from_pairs(&kind, &pairs)
        .map_err(|e| anyhow::anyhow!("[[faults]] number {n} ({kind}): {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_parse_and_bad_ones_name_the_table_and_key() {
        let s = Scenario::parse(
            &format!(
                "{HEAD}[[kinesis.consumers]]\nkind = \"efo\"\n[[faults]]\nkind = \"kinesis.stall\"\nevery = \"10s\"\nfor = \"2s\"\n[[faults]]\nkind = \"s3.slow-down\"\nrate = 0.01\n"
            ),
            "t.toml",
        )
        .unwrap();
        assert_eq!(s.faults.len(), 2);
        assert_eq!(s.faults[0].describe(), "kinesis.stall for 2s every 10s");
        let e = err(&format!(
            "{HEAD}[[kinesis.consumers]]\nkind = \"efo\"\n[[faults]]\nkind = \"kinesis.stall\"\nevery = \"10s\"\nfor = \"2s\"\n[[faults]]\nkind = \"kinesis.stall\"\nevry = \"1s\"\n"
        ));
        assert!(
            e.contains("[[faults]] number 2 (kinesis.stall): unknown key 'evry'; keys: every"),
            "{e}"
        );
        let e = err(&format!(
            "{HEAD}[[kinesis.consumers]]\nkind = \"efo\"\n[[faults]]\nevery = \"1s\"\n"
        ));
        assert!(
            e.contains("kind = \"...\" is missing; valid: kinesis.reset-before"),
            "{e}"
        );
    }

    #[test]
    fn builtins_parse() {
        for (name, _) in builtin() {
            let s = Scenario::resolve(name).unwrap();
            assert_eq!(&s.name, name);
            // A scenario of no lab does not parse.
        }
        let r2 = Scenario::resolve("seed-kinesis-round2").unwrap();
        let names = r2.kinesis.unwrap().consumer_names();
        assert!(names.contains(&"get_records 3".to_string()), "{names:?}");
    }

    fn err(text: &str) -> String {
        format!("{:#}", Scenario::parse(text, "t.toml").unwrap_err())
    }

    const HEAD: &str = "name = \"x\"\ndescription = \"d\"\nduration = \"10s\"\n[kinesis]\nstream = \"s\"\n[kinesis.producer]\nrate = 5\npayload = \"128B\"\n";

    /// Each of these named no line (headless.md promises the file, the line and the field), and
    /// some said what is valid in Rust's words (`expected f64`, `as i128`) or wrongly (`between
    /// 0 and 100000, got 0`).
    #[test]
    fn every_scenario_error_names_its_line_and_field_in_a_users_words() {
        let efo = "[[kinesis.consumers]]\nkind = \"efo\"\n";
        let with = |old: &str, new: &str| format!("{}{efo}", HEAD.replace(old, new));
        let cases = [
            (
                with("stream = \"s\"\n", "stream = \"s\"\nshards = 0\n"),
                "line 6, kinesis.shards must be between 1 and 500, got 0",
            ),
            (
                with("rate = 5", "rate = 0"),
                "line 7, kinesis.producer.rate must be more than 0 and at most 100,000 records per second, got 0",
            ),
            (
                with("payload = \"128B\"", "payload = \"10MB\""),
                "line 8, kinesis.producer.payload must be between 96 B",
            ),
            (
                with("duration = \"10s\"", "duration = \"0s\""),
                "line 3, duration must be longer than 0s",
            ),
            (
                with(
                    "duration = \"10s\"",
                    "duration = \"10s\"\nlatency_profile = \"fast\"",
                ),
                "line 4, latency_profile: unknown latency profile 'fast': valid names are zero",
            ),
            (
                with("rate = 5", "rate = \"fast\""),
                "line 7, column 8: rate: \"fast\" is not a number",
            ),
            (
                with("stream = \"s\"\n", "stream = \"s\"\nshards = 1.5\n"),
                "line 6, column 10: shards: 1.5 is not a whole number of 0 or more",
            ),
            (
                with(
                    "stream = \"s\"\n",
                    "stream = \"s\"\nshards = 99999999999999999999\n",
                ),
                "line 6, column 10: shards: 99999999999999999999 is not a whole number of 0 or more",
            ),
            (
                with(
                    "duration = \"10s\"\n",
                    "duration = \"10s\"\n[emulator]\nlimits = { bogus = 3 }\n",
                ),
                "line 5, [emulator] limits: unknown field `bogus`",
            ),
        ];
        for (text, said) in cases {
            let e = err(&text);
            assert!(e.starts_with(said), "{said}\n{e}");
            for rust in ["f64", "u32", "i128", "between 0 and"] {
                assert!(!e.contains(rust), "{e}");
            }
        }
        // The SQS lab's forms: `[sqs] key = ...` and `[[sqs.consumers]] 'name': ...`.
        let sqs = "name = \"x\"\ndescription = \"d\"\nduration = \"10s\"\n[sqs]\nrate = 0\n[[sqs.consumers]]\nkind = \"long-poll\"\nname = \"a\"\n";
        assert!(
            err(sqs).starts_with("line 5, [sqs] rate = 0"),
            "{}",
            err(sqs)
        );
        let sqs = "name = \"x\"\ndescription = \"d\"\nduration = \"10s\"\n[sqs]\n[[sqs.consumers]]\nkind = \"long-poll\"\nname = \"a\"\n[[sqs.consumers]]\nkind = \"short-poll\"\nname = \"b\"\nwait = \"2s\"\n";
        assert!(
            err(sqs).starts_with("line 10, [[sqs.consumers]] 'b': wait does not apply"),
            "{}",
            err(sqs)
        );
    }

    /// `[emulator] limits` prefixed every key with `kinesis.`, so a scenario could not set an
    /// SQS or S3 limit: a service's key (dotted or as its own table) is that service's; a key
    /// alone is still a Kinesis limit, as scenarios have written them.
    #[test]
    fn emulator_limits_take_any_services_keys() {
        let text = HEAD.replace(
            "duration = \"10s\"\n",
            "duration = \"10s\"\n[emulator]\nlimits = { reshard_duration = \"2s\", \"s3.standard_writes_per_sec\" = 7, sqs = { max_in_flight_standard = 5 } }\n",
        ) + "[[kinesis.consumers]]\nkind = \"efo\"\n";
        let s = Scenario::parse(&text, "t.toml").unwrap();
        let limits = latlab_emulator::limits::Limits::load(None, &s.emulator_limits).unwrap();
        assert_eq!(
            limits.kinesis.reshard_duration,
            std::time::Duration::from_secs(2)
        );
        assert_eq!(limits.s3.standard_writes_per_sec, 7);
        assert_eq!(limits.sqs.max_in_flight_standard, 5);
        // An unknown key of a service is named on its line.
        let bad = HEAD.replace(
            "duration = \"10s\"\n",
            "duration = \"10s\"\n[emulator]\nlimits = { sqs = { max_in_flite = 5 } }\n",
        ) + "[[kinesis.consumers]]\nkind = \"efo\"\n";
        let e = err(&bad);
        assert!(e.starts_with("line 5, [emulator] limits: "), "{e}");
        assert!(e.contains("max_in_flite"), "{e}");
    }

    #[test]
    fn errors_name_the_line_and_field() {
        let e = err(&format!(
            "{HEAD}[[kinesis.consumers]]\nkind = \"efo\"\ninterval = \"200ms\"\n"
        ));
        assert_eq!(
            e,
            "line 9, kinesis.consumers[0]: interval does not apply to kind = \"efo\"; it applies to poller"
        );
        let e = err(&format!("{HEAD}[[kinesis.consumers]]\nkind = \"pollr\"\n"));
        assert!(
            e.starts_with(
                "line 10, column 8: unknown variant `pollr`, expected one of `efo`, `poller`"
            ),
            "{e}"
        );
        let e = err(&format!(
            "{HEAD}[[kinesis.consumers]]\nkind = \"poller\"\nintervall = \"1s\"\n"
        ));
        assert!(
            e.starts_with("line 11, column 1: unknown field `intervall`"),
            "{e}"
        );
        let e = err("name = \"x\"\ndescription = \"d\"\nduration = \"ten\"\n");
        assert!(
            e.contains("line 3") && e.contains("'ten' is not a duration"),
            "{e}"
        );
        let e = err(&HEAD.replace("rate = 5", "rate = -1"));
        assert!(e.contains("kinesis.producer.rate must be"), "{e}");
        let e = err(&HEAD.replace("128B", "10B"));
        assert!(
            e.contains("kinesis.producer.payload must be between 96 B"),
            "{e}"
        );
        let e = err(HEAD);
        assert!(e.contains("kinesis.consumers is empty"), "{e}");
        let e = err(&format!(
            "{HEAD}[[kinesis.consumers]]\nkind = \"efo\"\nname = \"a\"\n[[kinesis.consumers]]\nkind = \"efo\"\nname = \"a\"\n"
        ));
        assert!(e.contains("a consumer named 'a' already exists"), "{e}");
        let e = err(&format!("latency_profile = \"mars\"\n{HEAD}"));
        assert!(
            e.contains("latency_profile: unknown latency profile 'mars'"),
            "{e}"
        );
    }
}
