//! `latlab emulate`: the embedded emulator on its own, for any SDK, boto3 or the aws CLI.

use super::*;

pub(super) fn emulate(args: EmulateArgs) -> anyhow::Result<ExitCode> {
    if args.list_profiles {
        out!("{}", profiles_listing(args.verbose)?);
        return Ok(ExitCode::SUCCESS);
    }
    if !args.listen.ip().is_loopback() && !args.print_limits {
        if !args.allow_remote {
            anyhow::bail!(
                "--listen {} is reachable from other hosts, and the emulator has no authentication; \
                 add --allow-remote to listen there anyway, or use a loopback address such as 127.0.0.1:4567",
                args.listen
            );
        }
        eprintln!(
            "warning: listening on {} with no authentication: anyone who can reach it can read and write its streams and buckets",
            args.listen
        );
    }
    let mut config = args.emulator.config(args.listen)?;
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        config.tls = Some(latlab_core::http::tls::server_tls(cert, key)?);
    }
    if args.print_limits {
        for (i, (section, lines)) in config.limits.sections().into_iter().enumerate() {
            out!("{}[{section}]\n", if i == 0 { "" } else { "\n" });
            for (key, value) in lines {
                out!("{key} = {value}\n");
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    runtime()?.block_on(async move {
        let emulator = Emulator::start(config).await?;
        say(format_args!(
            "latlab emulator listening on {} (latency profile {}); Ctrl-C stops it\n",
            emulator.endpoint_url(),
            emulator.profile_name()
        ));
        say(format_args!(
            "stats: {}{}\n",
            emulator.endpoint_url(),
            latlab_emulator::STATS_PATH
        ));
        for f in emulator.faults().describe() {
            say(format_args!("fault: {f}\n"));
        }
        tokio::select! {
            r = emulator.wait() => r?,
            _ = shutdown_signal() => {}
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// The running emulator's banner lines. A server goes on serving when whoever read its banner
/// has gone (`latlab emulate | head -1`, a test that read the port): the lines are then dropped.
fn say(args: std::fmt::Arguments) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_fmt(args).and_then(|_| out.flush());
}
