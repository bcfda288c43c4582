//! The config file's defaults put into each command's options (where no flag or environment
//! variable gave one), and `latlab config show`.

use super::*;
use crate::config::Config;
use clap::ArgMatches;

// Parsed once per run: the size of a variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum ConfigCommand {
    /// Every option the config file may set, its effective value and where it came from (flag,
    /// environment, config file with its line, or built-in); passwords are shown as ***
    Show(ShowArgs),
    /// Write a config file to start from: every key, commented out, with what it sets
    Example,
}

/// `config show` takes the options the file sets, so a flag's or variable's precedence shows.
#[derive(Args, Debug, Default)]
pub struct ShowArgs {
    /// Colour theme: dark, light, mono, or a theme file
    #[arg(long, value_name = "NAME|FILE", env = "LATLAB_THEME")]
    pub theme: Option<String>,
    /// Frames per second of the live lab
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=60), env = "LATLAB_FPS")]
    pub fps: Option<u32>,
    /// Log file
    #[arg(long, value_name = "FILE", env = "LATLAB_LOG_FILE")]
    pub log: Option<PathBuf>,
    /// Price file
    #[arg(long, value_name = "FILE", env = "LATLAB_PRICES")]
    pub prices: Option<PathBuf>,
    #[command(flatten)]
    pub share: ShareArgs,
    #[command(flatten)]
    pub spend: super::account::SpendArgs,
    #[command(flatten)]
    pub target: TargetArgs,
}

impl super::account::SpendArgs {
    /// The file's cost cap where no flag or variable gave one.
    pub(super) fn apply_config(&mut self, c: &Config, m: &ArgMatches) {
        if self.max_cost.is_none() {
            self.max_cost = c
                .text(m, "max_cost")
                .and_then(|t| super::account::parse_cost(&t).ok());
        }
    }
}

impl TargetArgs {
    /// The file's endpoint, region, latency profile and each lab's keys (the stream, the
    /// buckets, the Redis URLs) where no flag or variable gave them; then what each lab's keys
    /// without a flag do (the Redis password from the variable the file names).
    pub(super) fn apply_config(&mut self, c: &Config, m: &ArgMatches) -> anyhow::Result<()> {
        // The endpoint and --aws are one choice: one given by a flag or variable beats the
        // file's other.
        let target_given =
            crate::config::given(m, "endpoint_url") || crate::config::given(m, "aws");
        if !target_given {
            if let Some(url) = c.text(m, "endpoint_url") {
                self.endpoint_url = Some(url);
            }
            if c.flag(m, "aws") == Some(true) && self.endpoint_url.is_none() {
                self.aws = true;
            }
        }
        // AWS_REGION is the SDK's own (read by it, not by clap): it too beats the file.
        if std::env::var_os("AWS_REGION").is_none_or(|v| v.is_empty()) {
            set(&mut self.region, c.text(m, "region"));
        }
        // Each lab's keys (`labs/X/target.rs`): those of one's own resources on an endpoint or
        // AWS (the stream, the buckets: the embedded emulator starts empty) apply there only,
        // and the latency profile shapes the embedded emulator only, so one file serves runs
        // of both kinds.
        let external = self.endpoint_url.is_some() || self.aws;
        if !external {
            set(
                &mut self.emulator.latency_profile,
                c.text(m, "latency_profile"),
            );
        }
        let file = |k: &crate::labs::target::Key| c.text(m, k.name);
        self.labs.apply_file(&file, c, external)?;
        Ok(())
    }
}

impl ShareArgs {
    /// The file's share, its viewers and its control where no flag gave them (the viewers and
    /// control only for a run that shares); `control`: the command can grant it (a replay
    /// cannot).
    fn apply_config(&mut self, c: &Config, m: &ArgMatches, control: bool) {
        set(&mut self.share, c.text(m, "share"));
        // The file's settings of a share apply to a run that shares (by flag or by the file).
        if self.share.is_none() {
            return;
        }
        set(&mut self.share_viewers, c.number(m, "share_viewers"));
        if control && c.flag(m, "share_control") == Some(true) {
            self.share_control = true;
        }
    }
}

fn set<T>(field: &mut Option<T>, value: Option<T>) {
    if let Some(v) = value {
        *field = Some(v);
    }
}

/// Puts the file's defaults into the command's options.
pub(super) fn apply(command: &mut Command, c: &Config, m: &ArgMatches) -> anyhow::Result<()> {
    match command {
        Command::Tui(a) => {
            a.share.apply_config(c, m, true);
            a.spend.apply_config(c, m);
            set(&mut a.theme, c.text(m, "theme"));
            if let Some(fps) = c.number(m, "fps") {
                a.fps = fps;
            }
            set(&mut a.log, c.path(m, "log"));
            set(&mut a.out.prices, c.path(m, "prices"));
            a.target.apply_config(c, m)?;
        }
        Command::Run(a) => {
            a.share.apply_config(c, m, true);
            a.spend.apply_config(c, m);
            set(&mut a.out.prices, c.path(m, "prices"));
            a.target.apply_config(c, m)?;
        }
        Command::Screenshot(a) => {
            if let Some(theme) = c.text(m, "theme") {
                a.theme = theme;
            }
            a.target.apply_config(c, m)?;
        }
        Command::Replay(a) => {
            a.share.apply_config(c, m, false);
            set(&mut a.theme, c.text(m, "theme"));
            set(&mut a.prices, c.path(m, "prices"));
        }
        Command::Report(a) => set(&mut a.prices, c.path(m, "prices")),
        Command::Attach(a) => {
            set(&mut a.theme, c.text(m, "theme"));
            if let Some(fps) = c.number(m, "fps") {
                a.fps = fps;
            }
        }
        Command::Plan(a) => {
            set(&mut a.prices, c.path(m, "prices"));
            a.target.apply_config(c, m)?;
        }
        Command::Calibrate(a) => {
            a.spend.apply_config(c, m);
            set(&mut a.prices, c.path(m, "prices"));
            a.target.apply_config(c, m)?;
        }
        Command::IamPolicy(a) => a.target.apply_config(c, m)?,
        Command::Cleanup(a) => a.target.apply_config(c, m)?,
        Command::Doctor(a) => {
            set(&mut a.log, c.path(m, "log"));
            a.target.apply_config(c, m)?;
        }
        Command::Themes(a) => set(&mut a.theme, c.text(m, "theme")),
        Command::Emulate(a) => set(
            &mut a.emulator.latency_profile,
            c.text(m, "latency_profile"),
        ),
        Command::Config(ConfigCommand::Example) => {}
        Command::Config(ConfigCommand::Show(a)) => {
            a.share.apply_config(c, m, true);
            a.spend.apply_config(c, m);
            set(&mut a.theme, c.text(m, "theme"));
            set(&mut a.fps, c.number(m, "fps"));
            set(&mut a.log, c.path(m, "log"));
            set(&mut a.prices, c.path(m, "prices"));
            a.target.apply_config(c, m)?;
        }
        Command::Profile(_)
        | Command::Scenarios(_)
        | Command::Faults
        | Command::Compare(_)
        | Command::Merge(_)
        | Command::Prices(_)
        | Command::Completions(_)
        | Command::Man => {}
    }
    Ok(())
}

/// `latlab config show`.
pub(super) fn show(a: &ShowArgs, c: &Config, m: &ArgMatches) -> String {
    let t = &a.target;
    let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    let dirs = c.scenario_dirs();
    // A value the file gives that this command's target does not use, said so.
    let unused = |key: &str, why: &str| {
        c.entry(key)
            .map(|e| format!("{} ({why})", e.value.display()))
    };
    let labs = t.labs.values();
    let mut values: Vec<(&str, Option<String>)> = vec![
        ("theme", a.theme.clone()),
        ("fps", a.fps.map(|f| f.to_string())),
        ("log", path(&a.log)),
        (
            "latency_profile",
            t.emulator
                .latency_profile
                .clone()
                .or_else(|| unused("latency_profile", "not used with an endpoint or aws")),
        ),
        ("endpoint_url", t.endpoint_url.clone()),
        ("aws", t.aws.then(|| "true".to_string())),
        (
            "region",
            t.region
                .clone()
                .or_else(|| std::env::var("AWS_REGION").ok().filter(|r| !r.is_empty())),
        ),
        ("prices", path(&a.prices)),
        ("share", a.share.share.clone()),
        (
            "share_viewers",
            a.share.share_viewers.map(|n| n.to_string()),
        ),
        (
            "share_control",
            a.share.share_control.then(|| "true".to_string()),
        ),
        ("max_cost", a.spend.max_cost.map(|v| v.to_string())),
        (
            "scenario_dirs",
            (!dirs.is_empty()).then(|| {
                dirs.iter()
                    .map(|(d, _)| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }),
        ),
    ];
    // Each lab's keys: its options' values, a file's value its target does not use said so,
    // and a key without a flag as the file gives it.
    for key in crate::config::keys()
        .iter()
        .filter(|k| matches!(k.kind, crate::config::Kind::Lab(_)))
    {
        let value = if key.arg.is_empty() {
            c.entry(key.name).map(|e| e.value.display())
        } else {
            labs.get(key.name).cloned().or_else(|| {
                key.external_only
                    .then(|| unused(key.name, "used with an endpoint or aws only"))
                    .flatten()
            })
        };
        values.push((key.name, value));
    }
    crate::config::render_show(c, m, &values)
}
