//! The command line: `latlab <command>`, parsed with clap's derive API.

/// `print!` for latlab's commands: standard output through [`write_out`].
macro_rules! out {
    ($($t:tt)*) => {
        $crate::cli::write_out(format_args!($($t)*))
    };
}

mod account;
mod calibrate;
mod compare;
mod config;
mod doctor;
mod emulate;
mod headless;
mod install;
mod listing;
pub use listing::ProfileCommand;
mod log;
mod panic;
mod replay;
mod scenarios;
mod target;
pub use replay::ReplayArgs;
pub use scenarios::{ScenarioName, scenarios_listing};
pub use target::{EmulatorArgs, OutputArgs, RoleArgs, ShareArgs, TargetArgs};

use headless::{run_headless, shutdown_signal};
pub use listing::{profile_listing, profile_markdown, profiles_listing};
use log::{default_log_path, init_log};

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use anyhow::Context;

use crate::report::{Format, Report};
use crate::run::{Run, TargetOptions};
use crate::scenario::Scenario;
use crate::theme::Theme;
use latlab_emulator::limits::Limits;
use latlab_emulator::profile::{BUILTIN_PROFILES, LatencyProfile};
use latlab_emulator::{Emulator, EmulatorConfig};
use std::io::Write as _;

#[derive(Parser, Debug)]
#[command(
    name = "latlab",
    version = env!("LATLAB_LONG_VERSION"),
    about = "A terminal lab for cloud latency",
    long_about = "A terminal lab for cloud latency. With no command it opens the live lab on the `demo` \
                  scenario against the embedded emulator. `latlab doctor` checks what each lab needs; \
                  `latlab config show` shows the defaults in effect and where each came from."
)]
pub struct Cli {
    /// Read defaults from this config file instead of $XDG_CONFIG_HOME/latlab/config.toml
    /// (`latlab config show` shows what it sets)
    #[arg(long, global = true, value_name = "FILE", env = crate::config::CONFIG_ENV)]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Open the live lab (the default): panes per consumer type, keys that change the experiment
    Tui(TuiArgs),
    /// Run a scenario headless and write the screen as an SVG image
    Screenshot(ScreenshotArgs),
    /// List the colour themes, or with --items the themable items
    Themes(ThemesArgs),
    /// Run a scenario headless and print its tables (the seed's beside ours for seed scenarios)
    Run(RunArgs),
    /// What a run would create, use, call and cost, before it runs (it creates nothing; its only
    /// calls are reads)
    Plan(account::PlanArgs),
    /// A least-privilege IAM policy (JSON) for a scenario's calls
    IamPolicy(account::IamPolicyArgs),
    /// List what latlab runs left on an endpoint, AWS or a Redis (by latlab's tags and
    /// prefixes), and delete it with --yes
    Cleanup(account::CleanupArgs),
    /// List the scenarios: built in, and in the scenario directories; `new` starts one's own
    Scenarios(scenarios::ScenariosArgs),
    /// List the faults latlab can inject, with the settings each takes
    Faults,
    /// Run the local cloud on its own: its services for any SDK, boto3 or the aws CLI
    #[command(about = format!(
        "Run the local cloud on its own: {} for any SDK, boto3 or the aws CLI",
        latlab_core::services::Service::emulated_list()
    ))]
    Emulate(EmulateArgs),
    /// Latency profiles: `list` them, `show NAME|FILE` with every parameter's source, `diff A B`
    #[command(subcommand)]
    Profile(ProfileCommand),
    /// Measure a target (the embedded emulator, --endpoint-url, --aws) and write a latency profile
    /// of it that the emulator plays back offline (--latency-profile FILE)
    Calibrate(calibrate::CalibrateArgs),
    /// Print a recorded run's report (or a report JSON file) in any format
    Report(ReportArgs),
    /// Play a recording back: the TUI on what it recorded, or with --headless its tables
    Replay(ReplayArgs),
    /// Open the TUI on another terminal's shared run (`--share`): the URL it printed
    Attach(AttachArgs),
    /// Runs side by side: figures, ratios, and whether each difference is larger than the noise
    Compare(compare::CompareArgs),
    /// Merge recordings of one scenario (e.g. from several hosts) into one recording
    Merge(compare::MergeArgs),
    /// The config file's defaults: `show` each option's value and its source, `example` a file to
    /// start from
    #[command(subcommand)]
    Config(config::ConfigCommand),
    /// The list prices cost figures use: the built-in files, or every price of one (a region or
    /// a price file) with whether AWS's own text states it and where it comes from
    Prices(account::PricesArgs),
    /// Write a shell completion script to standard output
    Completions(install::CompletionsArgs),
    /// Write the man page (roff) to standard output
    Man,
    /// Check what each lab needs (redis-server, credentials, the endpoint's operations, the
    /// terminal, a log file), a line per check with its fix; exit status 1 when a lab cannot run
    Doctor(doctor::DoctorArgs),
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A recording's directory (`--record DIR`) or a report JSON file (`--format json`)
    #[arg(value_name = "DIR|FILE")]
    pub path: PathBuf,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report here instead of standard output
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Price the configuration with this price file instead of the built-in file of the run's
    /// region (prices/REGION.toml; us-east-1's when latlab has none for the region)
    #[arg(long, value_name = "FILE", env = "LATLAB_PRICES")]
    pub prices: Option<PathBuf>,
}

#[derive(Args, Debug, Default)]
pub struct TuiArgs {
    /// A built-in scenario, one in the scenario directories (see `latlab scenarios`), or a
    /// scenario file [default: demo]
    #[arg(value_name = "SCENARIO", value_parser = ScenarioName, hide_possible_values = true)]
    pub name: Option<String>,
    /// A scenario file
    #[arg(long, value_name = "FILE", conflicts_with = "name")]
    pub scenario: Option<PathBuf>,
    /// Colour theme: dark, light, mono, or a theme file (NO_COLOR selects mono)
    #[arg(long, value_name = "NAME|FILE", env = "LATLAB_THEME")]
    pub theme: Option<String>,
    /// Frames per second when nothing happens (keys redraw at once)
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=60), env = "LATLAB_FPS")]
    pub fps: u32,
    /// Log file (never the screen) [default: latlab.log in the temporary directory]
    #[arg(long, value_name = "FILE", env = "LATLAB_LOG_FILE")]
    pub log: Option<PathBuf>,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub share: ShareArgs,
    #[command(flatten)]
    pub spend: account::SpendArgs,
    #[command(flatten)]
    pub roles: RoleArgs,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Args, Debug)]
pub struct ScreenshotArgs {
    /// A built-in scenario, one in the scenario directories, or a scenario file [default: demo]
    #[arg(value_name = "SCENARIO", value_parser = ScenarioName, hide_possible_values = true)]
    pub name: Option<String>,
    /// How long the lab runs before the screen is taken
    #[arg(long, value_name = "DURATION", value_parser = latlab_core::units::parse_duration, default_value = "20s")]
    pub after: std::time::Duration,
    /// Screen size in cells
    #[arg(long, value_name = "COLSxROWS", value_parser = crate::tui::screenshot::parse_size, default_value = "120x40")]
    pub size: (u16, u16),
    #[arg(long, value_name = "NAME|FILE", default_value = "dark")]
    pub theme: String,
    /// Where to write the SVG
    #[arg(long, short, value_name = "FILE")]
    pub output: PathBuf,
    /// Keys to press while the lab runs, spread evenly over --after, applied as the TUI applies
    /// them: `s` switches the S3 class half-way, `++` adds two pollers
    #[arg(long, value_name = "KEYS", value_parser = crate::tui::screenshot::parse_press)]
    pub press: Option<crate::tui::screenshot::Keys>,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Args, Debug)]
pub struct ThemesArgs {
    /// List every themable item with its colour in the given (or default) theme
    #[arg(long)]
    pub items: bool,
    /// The theme whose colours --items shows
    #[arg(long, value_name = "NAME|FILE", env = "LATLAB_THEME")]
    pub theme: Option<String>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// A built-in scenario, one in the scenario directories (see `latlab scenarios`), or a
    /// scenario file
    #[arg(value_name = "SCENARIO", required_unless_present = "scenario", value_parser = ScenarioName, hide_possible_values = true)]
    pub name: Option<String>,
    /// A scenario file
    #[arg(long, value_name = "FILE", conflicts_with = "name")]
    pub scenario: Option<PathBuf>,
    /// How long to run (default: the scenario's duration), e.g. 30s, 10m
    #[arg(long, value_name = "DURATION", value_parser = latlab_core::units::parse_duration)]
    pub duration: Option<std::time::Duration>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report here instead of standard output
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// No progress bar on standard error
    #[arg(long, short)]
    pub quiet: bool,
    /// Run the scenario's scaled-down S3 matrix and fewer Redis tries (under a minute each)
    #[arg(long)]
    pub quick: bool,
    /// Print the plan (`latlab plan`: what the run would create, use, call and cost) and stop
    #[arg(long)]
    pub dry_run: bool,
    /// The plan's format with --dry-run
    #[arg(long, value_enum, default_value = "text", requires = "dry_run")]
    pub plan_format: account::PlanFormat,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub share: ShareArgs,
    #[command(flatten)]
    pub spend: account::SpendArgs,
    #[command(flatten)]
    pub roles: RoleArgs,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Args, Debug)]
pub struct AttachArgs {
    /// The URL the sharing host printed: http://HOST:PORT/?token=TOKEN
    #[arg(value_name = "URL")]
    pub url: String,
    /// The share's token, when the URL leaves it out
    #[arg(
        long,
        value_name = "TOKEN",
        env = "LATLAB_SHARE_TOKEN",
        hide_env_values = true
    )]
    pub share_token: Option<String>,
    /// Colour theme: dark, light, mono, or a theme file (NO_COLOR selects mono); this screen's own
    #[arg(long, value_name = "NAME|FILE", env = "LATLAB_THEME")]
    pub theme: Option<String>,
    /// Frames per second when nothing happens
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=60), env = "LATLAB_FPS")]
    pub fps: u32,
}

#[derive(Args, Debug)]
pub struct EmulateArgs {
    /// Address to listen on; loopback unless you name another (with --allow-remote)
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:4567")]
    pub listen: SocketAddr,
    /// Listen on an address other hosts can reach. The emulator has no authentication: anyone who
    /// reaches it can read and write its streams and buckets
    #[arg(long)]
    pub allow_remote: bool,
    /// Serve HTTPS with this certificate chain (PEM, the server's certificate first), HTTP/2 and
    /// HTTP/1.1 by ALPN as AWS's endpoints do; with --tls-key
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, RSA or EC)
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    #[command(flatten)]
    pub emulator: EmulatorArgs,
    /// Print the limits in effect (as a limits file) and exit
    #[arg(long)]
    pub print_limits: bool,
    /// List the built-in latency profiles and exit
    #[arg(long)]
    pub list_profiles: bool,
    /// With --list-profiles: every parameter with its source (as `latlab profile show`)
    #[arg(long, requires = "list_profiles")]
    pub verbose: bool,
}

/// Parses the command line, reads the config file, runs the command and turns any error into
/// one line on stderr.
pub fn main() -> ExitCode {
    panic::install();
    panic::on_request();
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match run(cli, &matches) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("latlab: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli, matches: &clap::ArgMatches) -> anyhow::Result<ExitCode> {
    let config = crate::config::Config::load(crate::config::Config::locate(cli.config.as_deref()))?;
    // With no command, the live lab: its options are all at their defaults, so the config file's
    // apply (the top-level matches hold none of them).
    let (mut command, sub) = match cli.command {
        Some(c) => {
            // The innermost command's matches (`config show`'s, not `config`'s).
            let mut m = matches.subcommand().map(|(_, m)| m);
            while let Some(inner) = m.and_then(|m| m.subcommand()).map(|(_, m)| m) {
                m = Some(inner);
            }
            (c, m.cloned())
        }
        None => {
            // The live lab's options from their environment variables and defaults.
            let sub = <Cli as clap::CommandFactory>::command()
                .find_subcommand("tui")
                .context("the tui command")?
                .clone()
                .no_binary_name(true)
                .try_get_matches_from(Vec::<String>::new())
                .unwrap_or_else(|e| e.exit());
            let args = <TuiArgs as clap::FromArgMatches>::from_arg_matches(&sub)
                .unwrap_or_else(|e| e.exit());
            (Command::Tui(args), Some(sub))
        }
    };
    if let Some(sub) = &sub {
        config::apply(&mut command, &config, sub)?;
    }
    let dirs = config.scenario_dirs();
    match command {
        Command::Tui(args) => tui(args, &dirs),
        Command::Screenshot(args) => screenshot(args, &dirs),
        Command::Themes(args) => {
            if args.items {
                // The theme's own colours, and what this terminal draws for each.
                let theme = Theme::requested(args.theme.as_deref())?;
                out!("{}", theme.listing(crate::theme::Depth::of_terminal()));
            } else {
                for (name, _) in crate::theme::BUILTIN {
                    out!("{name}\n");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Run(args) => run_headless(args, &dirs),
        Command::Plan(args) => account::plan(args, &dirs),
        Command::IamPolicy(args) => account::iam_policy(args, &dirs),
        Command::Cleanup(args) => account::cleanup(args),
        Command::Scenarios(args) => scenarios::scenarios(args, &dirs),
        Command::Emulate(args) => emulate::emulate(args),
        Command::Attach(args) => {
            let target =
                crate::share::client::Target::parse(&args.url, args.share_token.as_deref())?;
            let theme = Theme::for_terminal(args.theme.as_deref())?;
            if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                anyhow::bail!(
                    "attach draws the shared run in a terminal; for scripts read its stream: GET /events (or /frame) with the token"
                );
            }
            crate::tui::attach::run(crate::tui::attach::AttachOptions {
                target,
                theme,
                fps: args.fps,
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare(args) => compare::run_compare(args),
        Command::Merge(args) => compare::run_merge(args),
        Command::Report(args) => {
            compare::refuse_merged_report(&args.path)?;
            // Priced as the run was: `--prices`, else the recording's copy of the run's.
            let prices = match load_prices(args.prices.as_deref())? {
                Some(p) => Some(p),
                None => crate::record::recorded_prices(&args.path)?,
            };
            let report = crate::record::read_report(&args.path)?.with_prices(prices);
            let text = report.render(args.format);
            match &args.output {
                Some(path) => std::fs::write(path, text)
                    .with_context(|| format!("cannot write --output {}", path.display()))?,
                None => out!("{text}"),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Replay(args) => replay::replay(args),
        Command::Doctor(args) => doctor::doctor(args, &config),
        Command::Faults => {
            out!("{}", listing::faults_listing());
            Ok(ExitCode::SUCCESS)
        }
        Command::Profile(ProfileCommand::List) => {
            out!("{}", profiles_listing(false)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Profile(ProfileCommand::Show { name, markdown }) => {
            let p = LatencyProfile::resolve(&name)?;
            out!(
                "{}",
                if markdown {
                    profile_markdown(&p)
                } else {
                    profile_listing(&p)
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Profile(ProfileCommand::Diff { a, b }) => {
            out!("{}", calibrate::profile_diff(&a, &b)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Calibrate(args) => calibrate::calibrate(args),
        Command::Config(config::ConfigCommand::Example) => {
            out!("{}", crate::config::example_file());
            Ok(ExitCode::SUCCESS)
        }
        Command::Config(config::ConfigCommand::Show(args)) => {
            let sub = sub.context("the matches of `config show`")?;
            out!("{}", config::show(&args, &config, &sub));
            Ok(ExitCode::SUCCESS)
        }
        Command::Prices(args) => account::prices(args),
        Command::Completions(args) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut script = Vec::new();
            clap_complete::generate(args.shell, &mut cmd, "latlab", &mut script);
            out!("{}", String::from_utf8_lossy(&script));
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            let mut out = Vec::new();
            install::man_page(&mut out)?;
            out!("{}", String::from_utf8_lossy(&out));
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Writes to standard output. A reader that has gone (`latlab scenarios | head -3`) ends latlab
/// quietly, as it ends `ls`; another error ends it with one line.
pub(crate) fn write_out(args: std::fmt::Arguments) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|_| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("latlab: error: cannot write to standard output: {e}");
        std::process::exit(1);
    }
}

/// `--prices FILE`, read before anything runs: a bad file stops here in one line.
pub(crate) fn load_prices(
    path: Option<&std::path::Path>,
) -> anyhow::Result<Option<std::sync::Arc<crate::lab_kit::cost::Prices>>> {
    path.map(|p| crate::lab_kit::cost::Prices::load(p).map(std::sync::Arc::new))
        .transpose()
}

fn load_scenario(
    name: Option<&str>,
    file: Option<&std::path::Path>,
    dirs: &[(PathBuf, String)],
) -> anyhow::Result<Scenario> {
    match (name, file) {
        (_, Some(path)) => Scenario::load(path),
        (Some(name), None) => Scenario::resolve_in(name, dirs),
        (None, None) => Scenario::resolve("demo"),
    }
}

fn tui(args: TuiArgs, dirs: &[(PathBuf, String)]) -> anyhow::Result<ExitCode> {
    args.target.check()?;
    let scenario = load_scenario(args.name.as_deref(), args.scenario.as_deref(), dirs)?;
    let theme = Theme::for_terminal(args.theme.as_deref())?;
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        anyhow::bail!(
            "the live lab needs a terminal; for scripts use `latlab run {}`",
            scenario.name
        );
    }
    let mut target = args.target.options();
    target.role = args.roles.role();
    crate::run::role(&scenario, &target)?;
    target.run_id = account::confirm(
        &scenario,
        &target,
        load_prices(args.out.prices.as_deref())?.as_ref(),
        &args.spend,
        scenario.duration,
    )?;
    let run_id = target
        .run_id
        .get_or_insert_with(crate::labs::run_id)
        .clone();
    let host = args.out.host();
    let (prices, metrics) = args.out.open()?;
    let record = args.out.record_dir(&host, &run_id)?;
    let rt = runtime()?;
    let uploader = rt.block_on(args.out.uploader(&target))?;
    let share = args.share.open()?;
    let log = init_log(args.log.as_deref())?;
    let report = crate::tui::run(crate::tui::TuiOptions {
        scenario,
        target,
        theme,
        fps: args.fps,
        record: record.as_ref().map(|(dir, _)| dir.clone()),
        metrics,
        prices,
        share,
        max_cost: args.spend.max_cost,
        host: host.clone(),
    });
    // A run that failed before it recorded anything leaves no empty temporary directory.
    if let (Err(_), Some((dir, true))) = (&report, &record)
        && !dir.join("recording.json").exists()
    {
        let _ = std::fs::remove_dir_all(dir);
    }
    let report = report?;
    let mut out = std::io::stdout().lock();
    let _ = std::io::Write::write_all(&mut out, report.render(Format::Text).as_bytes());
    let _ = writeln!(out, "(log: {})", log.display());
    drop(out);
    if let (Some(up), Some((dir, temporary))) = (&uploader, &record)
        && !rt.block_on(up.upload(dir, *temporary, &host, &run_id))
    {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn screenshot(args: ScreenshotArgs, dirs: &[(PathBuf, String)]) -> anyhow::Result<ExitCode> {
    args.target.check()?;
    let scenario = load_scenario(args.name.as_deref(), None, dirs)?;
    let theme = Theme::resolve(&args.theme)?;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&args.output)
        .with_context(|| format!("cannot write --output {}", args.output.display()))?;
    let opts = args.target.options();
    let svg = runtime()?.block_on(crate::tui::screenshot::capture(
        scenario,
        &opts,
        theme,
        args.after,
        args.size,
        &args.press.unwrap_or_default().0,
    ))?;
    std::fs::write(&args.output, svg)
        .with_context(|| format!("cannot write --output {}", args.output.display()))?;
    eprintln!("wrote {}", args.output.display());
    Ok(ExitCode::SUCCESS)
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}
