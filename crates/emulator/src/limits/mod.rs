//! The service limits the emulator enforces, every service's together. Each service's own are in
//! its folder (`kinesis/limits.rs`, ...): their documented defaults, their keys and checks. A TOML
//! file (`--limits FILE`) or `--limit key=value` flags shorten them for demos and tests. Both go
//! through one parser, so a key is spelt the same way in either place and an unknown key is an
//! error that names it and lists the valid ones.

use anyhow::Context;
use serde::Deserialize;

use crate::service::{ServiceLimits, for_each_service};
use latlab_core::provenance::{Param, Provenance, Source};
use latlab_core::units::{one_line, toml_error};

pub use latlab_core::shaping::RateWindow;

/// Copies the keys a file's table set onto a service's limits: `plain` keys as they are, `wrapped`
/// ones out of their unit's parser (`Dur`, `Bytes`).
macro_rules! apply {
    ($dst:expr, $src:expr; plain: $($p:ident),*; wrapped: $($w:ident),*) => {
        $( if let Some(v) = $src.$p { $dst.$p = v; } )*
        $( if let Some(v) = $src.$w { $dst.$w = v.0; } )*
    };
}
pub(crate) use apply;

macro_rules! limits {
    ($($field:ident: $module:ident::$ty:ident),+ $(,)?) => {
        /// Every limit the emulator knows, as written in a limits file: one table per service.
        #[derive(Clone, Debug, PartialEq, Default)]
        pub struct Limits {
            $(pub $field: <crate::$module::$ty as crate::service::Service>::Limits,)+
        }

        #[derive(Deserialize, Default)]
        #[serde(deny_unknown_fields)]
        struct Spec {
            $($field: Option<<<crate::$module::$ty as crate::service::Service>::Limits as ServiceLimits>::Spec>,)+
        }

        impl Limits {
            fn from_table(table: toml::Table) -> anyhow::Result<Limits> {
                let spec: Spec = toml::Value::Table(table)
                    .try_into()
                    .map_err(|e: toml::de::Error| anyhow::anyhow!("{}", one_line(&e.to_string())))?;
                let mut limits = Limits::default();
                $(if let Some(s) = spec.$field {
                    limits.$field = ServiceLimits::from_spec(s)?;
                })+
                Ok(limits)
            }

            /// Every service's limits as `key = value` lines (`latlab emulate --print-limits`),
            /// each under its service's name.
            pub fn sections(&self) -> Vec<(&'static str, Vec<(&'static str, String)>)> {
                vec![$((
                    <crate::$module::$ty as crate::service::Service>::NAME,
                    self.$field.describe(),
                ),)+]
            }

            /// Each used service's modelled limits (those of the services named in `used`).
            fn modelled(&self, used: &[&str]) -> Vec<Param> {
                let mut params = Vec::new();
                $(if used.contains(&<crate::$module::$ty as crate::service::Service>::NAME) {
                    params.extend(self.$field.modelled());
                })+
                params
            }
        }
    };
}
for_each_service!(limits);

impl Limits {
    /// Reads a limits file and then applies `key=value` overrides (keys as in the file, e.g.
    /// `kinesis.subscription_duration=30s`).
    pub fn load(file: Option<&std::path::Path>, overrides: &[String]) -> anyhow::Result<Limits> {
        let mut table = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read limits file {}", path.display()))?;
                text.parse::<toml::Table>().map_err(|e| {
                    anyhow::anyhow!("limits file {}: {}", path.display(), toml_error(&text, &e))
                })?
            }
            None => toml::Table::new(),
        };
        for o in overrides {
            let (key, value) = o.split_once('=').with_context(|| {
                let (section, lines) = &Limits::default().sections()[0];
                let (key, value) = &lines[0];
                format!("--limit '{o}' must be KEY=VALUE, e.g. {section}.{key}={value}")
            })?;
            // A key without its service's name is the first service's, as it always was
            // (`iterator_expiry=20s`).
            let first = Limits::default().sections()[0].0;
            let (section, key) = key.trim().split_once('.').unwrap_or((first, key.trim()));
            // A value is TOML when it parses as one (numbers, quoted strings); otherwise text.
            let value = format!("v = {value}")
                .parse::<toml::Table>()
                .ok()
                .and_then(|mut t| t.remove("v"))
                .unwrap_or_else(|| toml::Value::String(value.trim().to_string()));
            table
                .entry(section.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .with_context(|| format!("--limit {o}: '{section}' is not a section"))?
                .insert(key.to_string(), value);
        }
        let origin = match file {
            Some(p) => format!("limits file {}", p.display()),
            None => "--limit".to_string(),
        };
        Self::from_table(table).with_context(|| origin)
    }

    /// Parses the text of a limits file.
    pub fn from_toml(text: &str) -> anyhow::Result<Limits> {
        let table = text
            .parse::<toml::Table>()
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Self::from_table(table)
    }
}

impl Limits {
    /// One limit as `--print-limits` writes it, by its key as `--limit` names it
    /// (`kinesis.get_records_calls_per_sec`).
    pub fn get(&self, key: &str) -> Option<String> {
        let (section, name) = key.split_once('.')?;
        self.sections()
            .into_iter()
            .find(|(s, _)| *s == section)?
            .1
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }
}

impl Limits {
    /// The limits' part of a run's model, each with its provenance: each service's modelled
    /// limits (for the services the run uses, by name: `kinesis`), and every limit set away from
    /// its documented value.
    pub fn model_params(&self, used: &[&str]) -> Vec<Param> {
        let mut params = self.modelled(used);
        let documented = Limits::default();
        let modelled: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
        for ((section, given), (_, default)) in
            self.sections().into_iter().zip(documented.sections())
        {
            for ((key, value), (_, d)) in given.into_iter().zip(default) {
                let modelled_too = [
                    format!("emulator.{key}"),
                    format!("emulator.{section}.{key}"),
                ]
                .iter()
                .any(|name| modelled.contains(name));
                if value == d || modelled_too {
                    continue;
                }
                params.push(Param::new(
                    &format!("emulator.{section}.{key}"),
                    value,
                    Provenance::new(
                        Source::User,
                        &format!("set in the scenario or on the command line; the documented value is {d}"),
                    ),
                ));
            }
        }
        params
    }
}
