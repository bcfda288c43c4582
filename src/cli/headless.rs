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
    if args.dry_run {
        let prices = load_prices(args.out.prices.as_deref())?;
        let plan = account::make_plan(
            &scenario,
            &args.target.options(),
            prices.as_ref(),
            scenario.duration,
            &crate::run::plan::new_run_id(),
        )?;
        account::print_plan(&plan, args.plan_format);
        return Ok(if plan.problems().is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    let mut opts = args.target.options();
    opts.role = args.roles.role();
    crate::run::role(&scenario, &opts)?;
    opts.run_id = account::confirm(
        &scenario,
        &opts,
        load_prices(args.out.prices.as_deref())?.as_ref(),
        &args.spend,
        scenario.duration,
    )?;
    // Known before the run starts: it names the recording's folder under --record-to.
    let run_id = opts.run_id.get_or_insert_with(crate::labs::run_id).clone();
    let host_name = args.out.host();
    // A producer stops by itself after the run's length: exactly rate x duration records.
    scenario.for_duration();
    let (prices, metrics) = args.out.open()?;
    let record = args.out.record_dir(&host_name, &run_id)?;
    if let Some(out) = &args.output {
        // Fail before a ten-minute run, not after it.
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(out)
            .with_context(|| format!("cannot write --output {}", out.display()))?;
    }
    let share = args.share.open()?;
    let mut upload_failed = false;
    let report = runtime()?.block_on(async {
        // The bucket's endpoint is reached before the run, so a wrong one stops it here.
        let uploader = args.out.uploader(&opts).await?;
        let metrics = crate::run::export::Metrics::start(metrics)?;
        let theme = crate::theme::Theme::dark();
        let mut host = share
            .map(|l| crate::tui::shared::Host::start(l, &theme, &scenario.description))
            .transpose()?;
        // The screen a viewer is shown: the run's, with its prices and the viewers' messages.
        let mut screen = crate::tui::app::App::new(theme);
        screen.prices = prices.clone();
        let lab = std::sync::Arc::new(Run::start(scenario.clone(), &opts).await?);
        screen.sync_labs(&lab.snapshot(false).labs());
        metrics.attach(&lab);
        let mut recorder = match &record {
            Some((dir, _)) => Some(crate::record::Recorder::create(
                dir,
                &lab,
                &scenario.source,
                &host_name,
            )?),
            None => None,
        };
        let chosen = crate::lab_kit::cost::Prices::choose(prices.as_ref(), &lab.backend().region);
        let mut cap = args.spend.max_cost.map(crate::lab_kit::cost::cap::Cap::new);
        let mut capped: Option<String> = None;
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
                        if let Some(why) = lab.check_cap(cap.as_mut(), chosen.as_ref()) {
                            match &progress {
                                Some(pb) => pb.println(&why),
                                None => eprintln!("{why}"),
                            }
                            capped = Some(why);
                            break true;
                        }
                        screen.cap = cap.clone();
                        if let Some(r) = recorder.as_mut() {
                            r.tick(&lab)?;
                        }
                        if let Some(h) = host.as_mut() {
                            h.tick(&mut screen, &lab);
                        }
                    }
                    v = viewers(&mut host) => {
                        viewer(&mut host, &mut screen, &mut recorder, &progress, &lab, v);
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
                        if let Some(why) = lab.check_cap(cap.as_mut(), chosen.as_ref()) {
                            match &progress {
                                Some(pb) => pb.println(&why),
                                None => eprintln!("{why}"),
                            }
                            capped = Some(why);
                            break true;
                        }
                        screen.cap = cap.clone();
                        if let Some(r) = recorder.as_mut() {
                            r.tick(&lab)?;
                        }
                        if let Some(h) = host.as_mut() {
                            h.tick(&mut screen, &lab);
                        }
                    }
                    v = viewers(&mut host) => {
                        viewer(&mut host, &mut screen, &mut recorder, &progress, &lab, v);
                    }
                }
            }
        };
        // A viewer's key being applied finishes first: the run is then its own again.
        if let Some(h) = host.as_mut() {
            for said in h.settle(&mut screen, recorder.as_mut()).await {
                say(&progress, &said);
            }
        }
        if let Some(pb) = &progress {
            pb.set_message(format!("{} (Ctrl-C again: stop now)", lab.stopping()));
        }
        metrics.stop().await;
        let lab = std::sync::Arc::into_inner(lab).context("the lab was still shared at its end")?;
        // The recording's last second is taken once the consumers have drained.
        let mut last_tick: anyhow::Result<()> = Ok(());
        let mut last = |l: &Run| {
            if let Some(r) = recorder.as_mut() {
                last_tick = r.tick(l);
            }
            if let Some(h) = host.as_mut() {
                h.tick(&mut screen, l);
            }
        };
        // Ctrl-C while it stops cuts the drain short: what was not drained counts as unread.
        let (snap, problems) = lab
            .finish_or_hurry(&mut last, shutdown_signal(), || {
                if let Some(pb) = &progress {
                    pb.set_message(
                        "stopping now: what was not drained counts as unread; cleaning up",
                    );
                }
            })
            .await;
        if let Some(h) = host {
            h.end(if stopped_early {
                "the run ended: stopped early"
            } else {
                "the run ended: completed"
            })
            .await;
        }
        last_tick?;
        if let Some(pb) = progress {
            pb.finish_and_clear();
        }
        let ending = if stopped_early {
            crate::report::Ending::StoppedEarly
        } else {
            crate::report::Ending::Completed
        };
        let mut problems = problems;
        if let Some(why) = &capped {
            problems.insert(0, why.clone());
            if let Some(r) = recorder.as_mut() {
                r.note("cost-cap", why);
            }
        }
        let report = Report::new(&scenario, snap, ending, problems).with_prices(prices);
        if let Some(r) = recorder {
            let dropped = r.dropped;
            let dir = r.finish_logs(&report)?;
            if dropped > 0 || (!args.quiet && uploader.is_none()) {
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
            if let (Some(up), Some((_, temporary))) = (&uploader, &record) {
                upload_failed = !up.upload(&dir, *temporary, &host_name, &run_id).await;
            }
        }
        anyhow::Ok(report)
    });
    // A run that failed before it recorded anything leaves no empty temporary directory.
    if let (Err(_), Some((dir, true))) = (&report, &record)
        && !dir.join("recording.json").exists()
    {
        let _ = std::fs::remove_dir_all(dir);
    }
    let report = report?;
    let text = report.render(args.format);
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write --output {}", path.display()))?,
        None => {
            let mut out = std::io::stdout().lock();
            let _ = std::io::Write::write_all(&mut out, text.as_bytes());
        }
    }
    Ok(if upload_failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// What viewers did next, when the run is shared.
async fn viewers(host: &mut Option<crate::tui::shared::Host>) -> crate::tui::shared::Viewers {
    match host {
        Some(h) => h.next().await,
        None => std::future::pending().await,
    }
}

/// A line on standard error, above the progress bar when there is one.
fn say(progress: &Option<indicatif::ProgressBar>, text: &str) {
    match progress {
        Some(pb) => pb.println(text),
        None => eprintln!("{text}"),
    }
}

/// A viewer's key (applied when it changes the experiment, refused otherwise) or its answer:
/// said on standard error and in the recording, with who sent it.
fn viewer(
    host: &mut Option<crate::tui::shared::Host>,
    screen: &mut crate::tui::app::App,
    recorder: &mut Option<crate::record::Recorder>,
    progress: &Option<indicatif::ProgressBar>,
    lab: &std::sync::Arc<Run>,
    v: crate::tui::shared::Viewers,
) {
    if let Some(h) = host.as_mut() {
        let said = h.heard(v, lab, screen, recorder.as_mut());
        say(progress, &said);
    }
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

pub(super) fn update_progress(pb: &indicatif::ProgressBar, run: &Run) {
    pb.set_position(run.elapsed().as_millis() as u64);
    if let Some(line) = run.snapshot(false).progress() {
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
