//! `latlab doctor`: the checks themselves are in `crate::doctor`.

use super::*;

#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// The log file to check [default: latlab.log in the temporary directory, as the live lab's]
    #[arg(long, value_name = "FILE", env = "LATLAB_LOG_FILE")]
    pub log: Option<PathBuf>,
    #[command(flatten)]
    pub target: TargetArgs,
}

pub(super) fn doctor(args: DoctorArgs, config: &crate::config::Config) -> anyhow::Result<ExitCode> {
    args.target.check()?;
    if !args.target.emulator.faults.is_empty() {
        anyhow::bail!("--fault does not apply to doctor: it probes the endpoint as it is");
    }
    let log = args.log.unwrap_or_else(default_log_path);
    runtime()?.block_on(crate::doctor::run(
        args.target.options(),
        log,
        config_check(config),
    ))
}

/// The config file's line: read (a file that does not parse stops latlab before doctor runs,
/// naming its line and key), or none there.
fn config_check(config: &crate::config::Config) -> crate::doctor::Check {
    use crate::doctor::Check;
    match &config.location {
        Some(l) if config.read => Check::ok(
            "config",
            format!(
                "{} read, {} set (`latlab config show` lists them)",
                l.path.display(),
                match config.len() {
                    1 => "1 key".to_string(),
                    n => format!("{n} keys"),
                }
            ),
        ),
        Some(l) => Check::ok(
            "config",
            format!(
                "none at {}: built-in defaults (`latlab config example` writes one to start from)",
                l.path.display()
            ),
        ),
        None => Check::ok(
            "config",
            "none (neither XDG_CONFIG_HOME nor HOME is set): built-in defaults",
        ),
    }
}
