//! Where a lab measures, as the user names it: each lab declares its options once, in
//! `labs/X/target.rs`, as one struct whose fields are its flags (clap: `--stream`, with their
//! environment variables) and its config file's keys (serde: `stream = "..."`), and a table of
//! what `config show` and `config example` say of each ([`Key`]). The CLI flattens every lab's
//! struct into its target flags ([`LabTargets`], from the registry); the config file, `config
//! show` (with passwords redacted), the plan, cleanup and the doctor read them from there.

use std::collections::BTreeMap;

pub use super::lab::LabTarget;

/// What a value of one of a lab's keys must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// One word: a stream's or a bucket's name.
    Word,
    /// A URL of one of `schemes` (`redis`, `rediss`), which may carry a password (shown as
    /// `***`); `form` is how one is written, for the error.
    Url {
        schemes: &'static [&'static str],
        form: &'static str,
    },
    /// The name of an environment variable.
    EnvName,
}

impl Form {
    /// Checks a value; the error says what the value must be (the value itself with any
    /// password hidden).
    pub fn check(self, s: &str) -> Result<(), String> {
        match self {
            Form::Word if s.contains(char::is_whitespace) => {
                Err(format!("must be one word, not \"{s}\""))
            }
            Form::Word => Ok(()),
            Form::Url { schemes, form } => {
                if schemes.iter().any(|sc| {
                    s.strip_prefix(sc)
                        .is_some_and(|rest| rest.starts_with("://"))
                }) {
                    Ok(())
                } else {
                    let names: Vec<String> = schemes.iter().map(|s| format!("{s}://")).collect();
                    Err(format!(
                        "must be a {} URL ({form}), not \"{}\"",
                        names.join(" or "),
                        redact(s)
                    ))
                }
            }
            Form::EnvName => {
                if !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    || s.starts_with(|c: char| c.is_ascii_digit())
                {
                    Err(format!(
                        "must name an environment variable (letters, digits and _), not \"{s}\""
                    ))
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Whether a value of this form is shown with its password hidden.
    pub fn secret(self) -> bool {
        matches!(self, Form::Url { .. })
    }
}

/// One of a lab's config file keys.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    /// The key in the file: its field's name, which is its flag's long name with `_`.
    pub name: &'static str,
    /// Whether it is a field of the lab's struct (a flag); false: a key of the file only, which
    /// [`LabTarget::after_config`] reads.
    pub flag: bool,
    pub form: Form,
    /// Used on an endpoint or AWS only (the embedded emulator starts empty): the file's value is
    /// not applied to a run on the embedded emulator, and `config show` says so.
    pub external_only: bool,
    /// The key without a flag naming the environment variable that holds this URL's password.
    pub password_from: Option<&'static str>,
    /// The value when nothing sets it, as `config show` says it.
    pub builtin: &'static str,
    /// What it sets, for `config example`.
    pub about: &'static str,
    /// A value to show it with, as the file writes it.
    pub example: &'static str,
}

impl Key {
    /// A key of its struct's field (its flag).
    pub const fn flag(
        name: &'static str,
        form: Form,
        builtin: &'static str,
        about: &'static str,
        example: &'static str,
    ) -> Key {
        Key {
            name,
            flag: true,
            form,
            external_only: false,
            password_from: None,
            builtin,
            about,
            example,
        }
    }

    /// Used on an endpoint or AWS only.
    pub const fn external_only(mut self) -> Key {
        self.external_only = true;
        self
    }

    /// A key of the file only, without a flag.
    pub const fn file_only(mut self) -> Key {
        self.flag = false;
        self
    }

    /// Its password may come from the variable `key` names.
    pub const fn password_from(mut self, key: &'static str) -> Key {
        self.password_from = Some(key);
        self
    }
}

/// What a lab's [`LabTarget::after_config`] may read of the config file: its keys without a
/// flag, each with the line that sets it.
pub trait FileKeys {
    /// The file's value of `key`, with the file's name for messages (`config file PATH`) and
    /// the line.
    fn text(&self, key: &str) -> Option<(String, String, usize)>;
}

/// A lab that names nothing to measure: it creates what it measures on the run's endpoint. It
/// has no flags, so no argument group (several labs flatten it into the same command).
#[derive(clap::Args, Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[group(skip)]
#[serde(deny_unknown_fields)]
pub struct Nothing {}

impl LabTarget for Nothing {}

/// The options as a map of key to value (only the fields set), for `config show` and for
/// putting in the config file's values.
pub fn values<T: LabTarget>(t: &T) -> BTreeMap<String, String> {
    match serde_json::to_value(t) {
        Ok(serde_json::Value::Object(m)) => m
            .into_iter()
            .filter_map(|(k, v)| v.as_str().map(|s| (k, s.to_string())))
            .collect(),
        _ => BTreeMap::new(),
    }
}

/// `t` with `file`'s values put into the fields no flag or variable set.
pub fn with_file_values<T: LabTarget>(
    t: &T,
    file: &dyn Fn(&Key) -> Option<String>,
    external: bool,
) -> anyhow::Result<T> {
    let mut map = match serde_json::to_value(t)? {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    for key in T::KEYS
        .iter()
        .filter(|k| k.flag && (external || !k.external_only))
    {
        let set = map.get(key.name).is_some_and(|v| !v.is_null());
        if !set && let Some(v) = file(key) {
            map.insert(key.name.to_string(), serde_json::Value::String(v));
        }
    }
    Ok(serde_json::from_value(serde_json::Value::Object(map))?)
}

/// A URL with its password shown as `***`: `rediss://:***@host:6379`. Anything that is not a
/// URL with a password is returned as it is.
pub fn redact(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((auth, host)) => {
                let user = auth.split(':').next().unwrap_or("");
                if auth.contains(':') {
                    format!("{scheme}://{user}:***@{host}")
                } else {
                    format!("{scheme}://***@{host}")
                }
            }
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

macro_rules! lab_targets {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        /// Every lab's options (from the registry): flattened into the CLI's target flags, and
        /// read by the config file, `config show`, the plan, cleanup and the doctor.
        #[derive(clap::Args, Clone, Debug, Default, PartialEq)]
        pub struct LabTargets {
            $(
                #[command(flatten)]
                pub $module: <super::$module::$ty as super::Lab>::Target,
            )*
        }

        impl LabTargets {
            /// Every lab's keys of the config file, in the registry's order, each with its
            /// environment variable (its flag's, as clap reads it).
            pub fn keys() -> &'static [(Key, Option<&'static str>)] {
                static KEYS: std::sync::OnceLock<Vec<(Key, Option<&'static str>)>> =
                    std::sync::OnceLock::new();
                KEYS.get_or_init(|| {
                    let mut out = Vec::new();
                    $(out.extend(keys_of::<<super::$module::$ty as super::Lab>::Target>());)*
                    out
                })
            }

            /// Every lab's options as key = value, those set.
            pub fn values(&self) -> BTreeMap<String, String> {
                let mut out = BTreeMap::new();
                $(out.extend(values(&self.$module));)*
                out
            }

            /// The file's values put into the options no flag or variable set, then each lab's
            /// keys without a flag applied.
            pub fn apply_file(
                &mut self,
                file: &dyn Fn(&Key) -> Option<String>,
                keys: &dyn FileKeys,
                external: bool,
            ) -> anyhow::Result<()> {
                $(
                    self.$module = with_file_values(&self.$module, file, external)?;
                    self.$module.after_config(keys)?;
                )*
                Ok(())
            }

            /// Every lab's check of its options as given.
            pub fn check(&self, external: bool) -> anyhow::Result<()> {
                $(self.$module.check(external)?;)*
                Ok(())
            }

            /// What the run measures when it has no lab of the emulator's services: the first
            /// lab's own target that says so (see [`LabTarget::own`]).
            pub fn own(&self) -> Option<(super::LabKind, Own)> {
                $(if let Some(own) = self.$module.own() {
                    return Some((super::LabKind::$kind, own));
                })*
                None
            }

            /// What each lab's options name that keeps what runs leave, outside any endpoint
            /// (`a Redis (--redis-primary URL)`), and whether these options name one.
            pub fn kept(&self) -> (Vec<&'static str>, bool) {
                let mut names = Vec::new();
                let mut named = false;
                $(
                    names.extend(<<super::$module::$ty as super::Lab>::Target as LabTarget>::KEEPS);
                    named |= self.$module.own().is_some_and(|o| !o.latlab_runs_it);
                )*
                (names, named)
            }
        }
    };
}
super::for_each_lab!(lab_targets);

/// A lab's own target, outside the run's endpoint: the Redis lab's primary and replica.
#[derive(Clone, Debug, PartialEq)]
pub struct Own {
    /// As the header names it.
    pub label: String,
    /// Whether latlab runs it (its own redis-server pair): the run's model applies.
    pub latlab_runs_it: bool,
}

/// A lab's keys, each with its flag's environment variable (as the struct's clap attributes
/// declare it; read once, for [`LabTargets::keys`]).
fn keys_of<T: LabTarget>() -> Vec<(Key, Option<&'static str>)> {
    let cmd = T::augment_args(clap::Command::new("latlab"));
    T::KEYS
        .iter()
        .map(|k| {
            let env = k
                .flag
                .then(|| {
                    cmd.get_arguments()
                        .find(|a| a.get_id().as_str() == k.name)
                        .and_then(|a| a.get_env())
                        .and_then(|e| e.to_str())
                        .map(|e| -> &'static str { Box::leak(e.to_string().into_boxed_str()) })
                })
                .flatten();
            (*k, env)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key a lab declares with a flag is a field of its struct (its flag), and every flag
    /// of its struct is a key: the two cannot drift apart.
    #[test]
    fn each_labs_keys_are_its_flags() {
        let keys = LabTargets::keys();
        let cmd = <LabTargets as clap::Args>::augment_args(clap::Command::new("latlab"));
        let flags: Vec<String> = cmd
            .get_arguments()
            .map(|a| a.get_id().as_str().to_string())
            .collect();
        let declared: Vec<String> = keys
            .iter()
            .filter(|(k, _)| k.flag)
            .map(|(k, _)| k.name.to_string())
            .collect();
        assert_eq!(flags, declared);
        for (k, env) in keys {
            if k.flag {
                assert!(env.is_some(), "{} has no environment variable", k.name);
            }
            if let Some(from) = k.password_from {
                assert!(
                    keys.iter().any(|(o, _)| o.name == from && !o.flag),
                    "{from}"
                );
            }
        }
    }

    #[test]
    fn a_value_of_the_wrong_form_says_what_it_must_be() {
        let url = Form::Url {
            schemes: &["redis", "rediss"],
            form: "redis://[:PASSWORD@]HOST:PORT",
        };
        assert_eq!(
            url.check("http://:pw@x:1").unwrap_err(),
            "must be a redis:// or rediss:// URL (redis://[:PASSWORD@]HOST:PORT), not \"http://:***@x:1\""
        );
        assert!(url.check("rediss://x:1").is_ok());
        assert!(Form::Word.check("a b").is_err());
        assert!(Form::EnvName.check("1X").is_err());
    }
}
