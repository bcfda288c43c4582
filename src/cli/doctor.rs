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

pub(super) fn doctor(args: DoctorArgs) -> anyhow::Result<ExitCode> {
    args.target.check()?;
    if !args.target.emulator.faults.is_empty() {
        anyhow::bail!("--fault does not apply to doctor: it probes the endpoint as it is");
    }
    let log = args.log.unwrap_or_else(default_log_path);
    runtime()?.block_on(crate::doctor::run(args.target.options(), log))
}
