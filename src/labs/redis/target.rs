//! Where the Redis lab measures, as the user names it: latlab's own redis-server primary and
//! replica unless both of a pair of one's own are named (`--redis-primary`, `--redis-replica`,
//! their variables and config file keys), its password in the URLs or in the environment
//! variable the config file's `redis_password_env` names.

use crate::labs::target::{FileKeys, Form, Key, LabTarget, Own, redact};

/// A Redis URL, as the checks say it must be written.
const URL: Form = Form::Url {
    schemes: &["redis", "rediss"],
    form: "redis://[:PASSWORD@]HOST:PORT",
};

/// The config file's key naming the variable that holds the password.
const PASSWORD_ENV: &str = "redis_password_env";

/// The Redis lab's options.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedisTarget {
    /// Redis lab on your Redis: the primary (redis:// or rediss://[:PASSWORD@]HOST:PORT)
    #[arg(long, value_name = "URL", env = "LATLAB_REDIS_PRIMARY")]
    pub redis_primary: Option<String>,
    /// Redis lab on your Redis: its replica
    #[arg(long, value_name = "URL", env = "LATLAB_REDIS_REPLICA")]
    pub redis_replica: Option<String>,
    /// The config file's `redis_password_env` names a variable that is not set: what a run says
    /// when it checks its options (`config show` shows the URLs without it).
    #[arg(skip)]
    #[serde(skip)]
    pub password_unset: Option<String>,
}

impl LabTarget for RedisTarget {
    const KEYS: &'static [Key] = &[
        Key::flag(
            "redis_primary",
            URL,
            "none: latlab's own redis-server pair",
            "The Redis lab on your Redis: the primary",
            "\"rediss://primary.example.internal:6379\"",
        )
        .password_from(PASSWORD_ENV),
        Key::flag(
            "redis_replica",
            URL,
            "none: latlab's own redis-server pair",
            "The Redis lab on your Redis: its replica",
            "\"rediss://replica.example.internal:6379\"",
        )
        .password_from(PASSWORD_ENV),
        Key::flag(
            PASSWORD_ENV,
            Form::EnvName,
            "none: the password, if any, is in the URLs",
            "The environment variable holding the Redis password (never written here)",
            "\"LATLAB_REDIS_PASSWORD\"",
        )
        .file_only(),
    ];

    const KEEPS: Option<&'static str> = Some("a Redis (--redis-primary URL)");

    fn check(&self, _external: bool) -> anyhow::Result<()> {
        if let Some(why) = &self.password_unset {
            anyhow::bail!("{why}");
        }
        match (&self.redis_primary, &self.redis_replica) {
            (Some(_), None) => anyhow::bail!(
                "--redis-primary needs --redis-replica too (flag, LATLAB_REDIS_REPLICA or the config file's redis_replica): the Redis lab measures a primary and its replica"
            ),
            (None, Some(_)) => anyhow::bail!(
                "--redis-replica needs --redis-primary too (flag, LATLAB_REDIS_PRIMARY or the config file's redis_primary): the Redis lab measures a primary and its replica"
            ),
            _ => Ok(()),
        }
    }

    /// The password from the variable the file's `redis_password_env` names, put into each URL
    /// that has none; a variable that is not set is an error naming the file and line, when the
    /// options are checked for a run (`config show` shows the file as it is).
    fn after_config(&mut self, file: &dyn FileKeys) -> anyhow::Result<()> {
        if self.redis_primary.is_none() && self.redis_replica.is_none() {
            return Ok(());
        }
        let Some((var, from, line)) = file.text(PASSWORD_ENV) else {
            return Ok(());
        };
        let password = match std::env::var(&var) {
            Ok(p) if !p.is_empty() => p,
            _ => {
                self.password_unset = Some(format!(
                    "{from}: redis_password_env names the environment variable {var}, which is not set (set it to the Redis password, or remove the key; line {line})"
                ));
                return Ok(());
            }
        };
        for url in [&mut self.redis_primary, &mut self.redis_replica]
            .into_iter()
            .flatten()
        {
            *url = with_password(url, &password);
        }
        Ok(())
    }

    /// A run of the Redis lab alone measures this pair: the one named, or latlab's own.
    fn own(&self) -> Option<Own> {
        Some(match &self.redis_primary {
            Some(p) => Own {
                label: format!("Redis {}", redact(p)),
                latlab_runs_it: false,
            },
            None => Own {
                label: "redis-server primary and replica on 127.0.0.1 (real servers, shaped replication link)".into(),
                latlab_runs_it: true,
            },
        })
    }
}

/// A redis:// URL with the password put in, when it has none.
pub fn with_password(url: &str, password: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) if !rest.contains('@') => {
            format!("{scheme}://:{}@{rest}", percent_encode(password))
        }
        _ => url.to_string(),
    }
}

/// Percent-encodes what a URL's userinfo cannot hold as it is.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_go_into_urls_without_one() {
        assert_eq!(
            with_password("redis://10.0.0.1:6379", "p@ss word"),
            "redis://:p%40ss%20word@10.0.0.1:6379"
        );
        assert_eq!(
            with_password("redis://:x@10.0.0.1:6379", "y"),
            "redis://:x@10.0.0.1:6379"
        );
    }
}
