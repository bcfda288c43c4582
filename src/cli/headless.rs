//! `latlab run`: a scenario headless for its duration (or its set experiment), with a progress
//! line, then its report.

use super::*;

pub(super) fn run_headless(args: RunArgs, dirs: &[(PathBuf, String)]) -> anyhow::Result<ExitCode> {
    args.target.check()?;
    let mut scenario = load_scenario(args.name.as_deref(), args.scenario.as_deref(), dirs)?;
    if let Some(d) = args.duration {
        if d.is_zero() {
            anyhow::bail!("--duration must be longer than 0s");
        }
        scenario.duration = d;
    }
    // A producer stops by itself after the run's length: exactly rate x duration records.
    scenario.for_duration();
    let (prices, metrics) = args.out.open()?;
    if let Some(out) = &args.output {
        // Fail before a ten-minute run, not after it.
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(out)
            .with_context(|| format!("cannot write --output {}", out.display()))?;
    }
    let opts = args.target.options();
    let report = runtime()?.block_on(async move {
        let metrics = crate::run::export::Metrics::start(metrics)?;
        let lab = std::sync::Arc::new(Run::start(scenario.clone(), &opts).await?);
        metrics.attach(&lab);
        let mut recorder = match &args.out.record {
            Some(dir) => Some(crate::record::Recorder::create(
                dir,
                &lab,
                &scenario.source,
            )?),
            None => None,
        };
        let mut each_second = tokio::time::interval(std::time::Duration::from_secs(1));
        each_second.tick().await;
        let progress = (!args.quiet).then(|| progress_bar(&scenario));
        // A set experiment (the S3 matrix, the Redis conditions) runs to its end; otherwise the
        // live labs run for the scenario's duration.
        // The duration is the producer's: it started while the lab did, a moment ago.
        let deadline =
            tokio::time::Instant::now() + scenario.duration.saturating_sub(lab.producing_for());
        let mut tick = tokio::time::interval(std::time::Duration::from_millis(250));
        let signal = shutdown_signal();
        tokio::pin!(signal);
        let stopped_early = if lab.has_experiment() {
            let pb = progress.clone();
            let say = move |m: String| {
                if let Some(pb) = &pb {
                    pb.set_message(m);
                }
            };
            if let Some(pb) = &progress {
                pb.set_length(0);
            }
            let work = lab.run_experiment(args.quick, &say);
            tokio::pin!(work);
            loop {
                tokio::select! {
                    r = &mut work => { r?; break false }
                    _ = &mut signal => break true,
                    _ = each_second.tick() => {
                        if let Some(r) = recorder.as_mut() {
                            r.tick(&lab)?;
                        }
                    }
                }
            }
        } else {
            lab.start_live();
            loop {
                tokio::select! {
                    _ = tokio::time::sleep_until(deadline) => break false,
                    _ = &mut signal => break true,
                    _ = tick.tick() => {
                        if let Some(pb) = &progress {
                            update_progress(pb, &lab);
                        }
                    }
                    _ = each_second.tick() => {
                        if let Some(r) = recorder.as_mut() {
                            r.tick(&lab)?;
                        }
                    }
                }
            }
        };
        if let Some(pb) = &progress {
            pb.set_message("stopping: the producer has stopped, consumers are draining");
        }
        metrics.stop().await;
        let lab = std::sync::Arc::into_inner(lab).context("the lab was still shared at its end")?;
        // The recording's last second is taken once the consumers have drained.
        let mut last_tick: anyhow::Result<()> = Ok(());
        let (snap, problems) = lab
            .finish_with(&mut |l| {
                if let Some(r) = recorder.as_mut() {
                    last_tick = r.tick(l);
                }
            })
            .await;
        last_tick?;
        if let Some(pb) = progress {
            pb.finish_and_clear();
        }
        let ending = if stopped_early {
            crate::report::Ending::StoppedEarly
        } else {
            crate::report::Ending::Completed
        };
        let report = Report::new(&scenario, snap, ending, problems).with_prices(prices);
        if let Some(r) = recorder {
            let dropped = r.dropped;
            let dir = r.finish_logs(&report)?;
            if !args.quiet {
                eprintln!(
                    "recorded in {}{}",
                    dir.display(),
                    if dropped > 0 {
                        format!(" ({dropped} one-second intervals could not be written in time)")
                    } else {
                        String::new()
                    }
                );
            }
        }
        anyhow::Ok(report)
    })?;
    let text = report.render(args.format);
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write --output {}", path.display()))?,
        None => {
            let mut out = std::io::stdout().lock();
            let _ = std::io::Write::write_all(&mut out, text.as_bytes());
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn progress_bar(scenario: &Scenario) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::with_draw_target(
        Some(scenario.duration.as_millis() as u64),
        indicatif::ProgressDrawTarget::stderr_with_hz(4),
    );
    pb.set_style(
        indicatif::ProgressStyle::with_template("{prefix} [{elapsed_precise}] {wide_bar} {msg}")
            .expect("a valid template"),
    );
    pb.set_prefix(scenario.name.clone());
    pb
}

pub(super) fn update_progress(pb: &indicatif::ProgressBar, lab: &Run) {
    pb.set_position(lab.elapsed().as_millis() as u64);
    if let Some(line) = lab.snapshot(false).progress() {
        pb.set_message(line);
    }
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
