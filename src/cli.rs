//! The command line: `latlab <command>`, parsed with clap's derive API.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::emulator::limits::Limits;
use crate::emulator::profile::{BUILTIN_PROFILES, LatencyProfile};
use crate::emulator::{Emulator, EmulatorConfig};

#[derive(Parser, Debug)]
#[command(name = "latlab", version, about = "A terminal lab for cloud latency", long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the local cloud on its own: Kinesis for any SDK, boto3 or the aws CLI
    Emulate(EmulateArgs),
}

#[derive(Args, Debug, Clone)]
pub struct EmulatorArgs {
    /// Latency profile: a built-in name (zero, same-region, seed-tokyo) or a .toml file
    #[arg(long, value_name = "NAME|FILE", default_value = "zero")]
    pub latency_profile: String,
    /// A TOML file of limits to override (see docs/emulator.md)
    #[arg(long, value_name = "FILE")]
    pub limits: Option<PathBuf>,
    /// Override one limit, e.g. --limit kinesis.subscription_duration=30s (repeatable)
    #[arg(long = "limit", value_name = "KEY=VALUE")]
    pub limit_overrides: Vec<String>,
}

impl EmulatorArgs {
    pub fn config(&self, listen: SocketAddr) -> anyhow::Result<EmulatorConfig> {
        Ok(EmulatorConfig {
            listen,
            limits: Limits::load(self.limits.as_deref(), &self.limit_overrides)?,
            profile: LatencyProfile::resolve(&self.latency_profile)?,
        })
    }
}

#[derive(Args, Debug)]
pub struct EmulateArgs {
    /// Address to listen on; loopback unless you name another
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:4567")]
    pub listen: SocketAddr,
    #[command(flatten)]
    pub emulator: EmulatorArgs,
    /// Print the limits in effect (as a limits file) and exit
    #[arg(long)]
    pub print_limits: bool,
    /// List the built-in latency profiles and exit
    #[arg(long)]
    pub list_profiles: bool,
}

/// Parses the command line, runs the command and turns any error into one line on stderr.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("latlab: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Emulate(args) => emulate(args),
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

fn emulate(args: EmulateArgs) -> anyhow::Result<ExitCode> {
    if args.list_profiles {
        for name in BUILTIN_PROFILES {
            let p = LatencyProfile::resolve(name)?;
            println!("{:<12} {}", p.name, p.description);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let config = args.emulator.config(args.listen)?;
    if args.print_limits {
        println!("[kinesis]");
        for (key, value) in config.limits.kinesis.describe() {
            println!("{key} = {value}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    runtime()?.block_on(async move {
        let emulator = Emulator::start(config).await?;
        println!(
            "latlab emulator listening on {} (latency profile {}); Ctrl-C stops it",
            emulator.endpoint_url(),
            emulator.profile_name()
        );
        println!(
            "stats: {}{}",
            emulator.endpoint_url(),
            crate::emulator::STATS_PATH
        );
        tokio::select! {
            r = emulator.wait() => r?,
            _ = shutdown_signal() => {}
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
