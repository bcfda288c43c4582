//! `latlab config show`: every key's effective value and where it came from.

use clap::ArgMatches;
use clap::parser::ValueSource;

use super::{Config, Kind, keys};

/// The table `config show` prints. `values` holds each key's effective value (after the file
/// was applied), `None` when it has none; passwords in URLs are shown as `***`.
pub fn render_show(config: &Config, m: &ArgMatches, values: &[(&str, Option<String>)]) -> String {
    let mut out = String::new();
    match &config.location {
        Some(l) if config.read => {
            out.push_str(&format!("config file: {} (read)\n", l.path.display()));
        }
        Some(l) => out.push_str(&format!(
            "config file: {} (none there; `latlab config show` lists what one may hold)\n",
            l.path.display()
        )),
        None => out.push_str("config file: none (neither XDG_CONFIG_HOME nor HOME is set)\n"),
    }
    out.push_str("precedence: flag, then environment, then config file, then built-in\n\n");
    let rows: Vec<[String; 3]> = keys()
        .iter()
        .map(|key| {
            let value = values
                .iter()
                .find(|(k, _)| *k == key.name)
                .and_then(|(_, v)| v.clone());
            let source = source(config, m, key);
            let shown = match (&value, key.kind) {
                (Some(v), Kind::Endpoint) => crate::labs::target::redact(v),
                (Some(v), Kind::Lab(form)) if form.secret() => crate::labs::target::redact(v),
                (Some(v), _) => v.clone(),
                (None, _) => key.builtin.to_string(),
            };
            let shown = if value.is_none() && source != "built-in" {
                format!("{shown} (not set)")
            } else {
                shown
            };
            [key.name.to_string(), shown, source]
        })
        .collect();
    let w0 = rows.iter().map(|r| r[0].len()).max().unwrap_or(0);
    let w1 = rows.iter().map(|r| r[1].chars().count()).max().unwrap_or(0);
    out.push_str(&format!("{:w0$}  {:w1$}  from\n", "key", "value"));
    for [k, v, s] in rows {
        out.push_str(&format!("{k:w0$}  {v:w1$}  {s}\n"));
    }
    out
}

/// Where a key's effective value came from.
fn source(config: &Config, m: &ArgMatches, key: &super::Key) -> String {
    let from = if !key.arg.is_empty() && m.value_source(key.arg) == Some(ValueSource::CommandLine) {
        format!("flag --{}", key.arg.replace('_', "-"))
    } else if !key.arg.is_empty() && m.value_source(key.arg) == Some(ValueSource::EnvVariable) {
        format!("environment {}", key.env.unwrap_or("?"))
    } else if let Some(env) = key.env
        && std::env::var_os(env).is_some_and(|v| !v.is_empty())
    {
        // A variable the SDK reads itself (AWS_REGION), or one with no flag.
        format!("environment {env}")
    } else {
        config
            .origin(key.name)
            .unwrap_or_else(|| "built-in".to_string())
    };
    match key.password_from.and_then(|k| config.entry(k)) {
        Some(super::Entry {
            value: super::Value::Text(var),
            ..
        }) if from != "built-in" => {
            if std::env::var_os(var).is_some_and(|v| !v.is_empty()) {
                format!("{from} (password from {var} when the URL has none)")
            } else {
                format!(
                    "{from} (password from {var} when the URL has none; {var} is not set: a run stops until it is)"
                )
            }
        }
        _ => from,
    }
}

/// `latlab config example`: every key, commented out, with what it sets, its environment
/// variable and its built-in default; uncommented, each line is a valid value.
pub fn example_file() -> String {
    let mut out = String::from(
        "# latlab's config file: $XDG_CONFIG_HOME/latlab/config.toml (~/.config/latlab/config.toml),\n\
         # or the file --config or LATLAB_CONFIG names. Every key is optional. A flag beats its\n\
         # environment variable, which beats this file, which beats the built-in default; paths are\n\
         # relative to this file's directory. `latlab config show` prints what is in effect.\n",
    );
    for key in keys() {
        let (what, example) = (key.about, key.example);
        let env = key
            .env
            .map(|e| format!("; environment {e}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "\n# {what} (built-in: {}{env})\n# {} = {example}\n",
            key.builtin, key.name
        ));
    }
    out
}
