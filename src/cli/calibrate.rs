//! `latlab calibrate` (a profile measured on a target) and `latlab profile diff A B`.

use super::*;
use crate::calibrate;
use crate::lab_kit::calibrate::{self as kit, Probe};
use crate::labs::LabKind;

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// The services to probe, by their labs' names, separated by commas (e.g. kinesis,sqs)
    /// [default: every lab with a probe]
    #[arg(long, value_name = "LIST")]
    pub services: Option<String>,
    /// Samples of each figure (20 to 2,000): more take longer and narrow the tails
    #[arg(long, value_name = "N", default_value_t = 60)]
    pub samples: usize,
    /// Write the profile here (a .toml file `--latency-profile FILE` reads)
    #[arg(long, short, value_name = "FILE")]
    pub output: PathBuf,
    /// The profile's name [default: calibrated-DATE]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Price the plan with this price file instead of the built-in file of the region
    #[arg(long, value_name = "FILE", env = "LATLAB_PRICES")]
    pub prices: Option<PathBuf>,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub spend: account::SpendArgs,
}

pub(super) fn calibrate(args: CalibrateArgs) -> anyhow::Result<ExitCode> {
    let external = args.target.endpoint_url.is_some() || args.target.aws;
    // Named services must each be probed here; the default, every service with a probe, leaves
    // out (and says so) those this target lacks (Redis without a pair named on another target).
    let services = match &args.services {
        Some(list) => {
            let named = calibrate::parse_list(list)?;
            if let Some((kind, why)) =
                calibrate::unready(&named, !external, &args.target.labs).first()
            {
                anyhow::bail!("--services {}: {why}", kind.key());
            }
            named
        }
        None => {
            let all: Vec<LabKind> = calibrate::calibrated()
                .into_iter()
                .map(|(k, _)| k)
                .collect();
            let unready = calibrate::unready(&all, !external, &args.target.labs);
            for (kind, why) in &unready {
                eprintln!("not calibrating {}: {why}", kind.key());
            }
            all.into_iter()
                .filter(|k| !unready.iter().any(|(u, _)| u == k))
                .collect()
        }
    };
    if !(20..=2000).contains(&args.samples) {
        anyhow::bail!(
            "--samples must be between 20 and 2000, got {}",
            args.samples
        );
    }
    if external {
        args.target.check()?;
    }
    if args.output.extension().and_then(|e| e.to_str()) != Some("toml") {
        anyhow::bail!(
            "--output {} must be a .toml file (the form --latency-profile FILE reads)",
            args.output.display()
        );
    }
    let date = kit::today();
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| format!("calibrated-{date}"));
    let prices = load_prices(args.prices.as_deref())?;
    let run_id = crate::run::plan::new_run_id();
    runtime()?.block_on(async move {
        // The embedded emulator, shaped as the flags say, when no other target is named.
        let (target, emulator) = if external {
            (
                crate::aws::Target::Aws {
                    endpoint_url: args.target.endpoint_url.clone(),
                    region: args.target.region.clone(),
                },
                None,
            )
        } else {
            let config = args.target.emulator.config("127.0.0.1:0".parse()?)?;
            let profile = std::sync::Arc::new(config.profile.clone());
            let e = latlab_emulator::Emulator::start(config).await?;
            (
                crate::aws::Target::Emulator {
                    url: e.endpoint_url(),
                },
                Some((e, profile)),
            )
        };
        let (emulator, profile) = emulator.unzip();
        let clients = crate::aws::Clients::connect(&target, std::time::Instant::now()).await?;
        let where_ = match &emulator {
            Some(e) => format!(
                "the embedded emulator (latency profile {})",
                e.profile_name()
            ),
            None => clients.endpoint(),
        };
        let chosen = crate::prices::Prices::choose(prices.as_ref(), &clients.region());
        if let Some(chosen) = &chosen {
            let lines = calibrate::plan(
                &services,
                args.samples,
                &run_id,
                emulator.is_some(),
                &args.target.labs,
                &chosen.prices,
            );
            eprint!("{}", plan_text(&lines, &where_, &chosen.prices));
            let total: f64 = lines.iter().map(|l| l.usd).sum();
            if let Some(cap) = args.spend.max_cost
                && total > cap
            {
                anyhow::bail!(
                    "the calibration's list price, {}, is over --max-cost {}: nothing was created (fewer --samples or --services cost less)",
                    crate::lab_kit::cost::usd(total),
                    crate::lab_kit::cost::usd(cap)
                );
            }
            if args.target.aws && !args.spend.yes {
                let terminal = std::io::IsTerminal::is_terminal(&std::io::stdin())
                    && std::io::IsTerminal::is_terminal(&std::io::stderr());
                if !terminal {
                    anyhow::bail!(
                        "calibrate creates billed resources on your AWS account (the plan above); there is no terminal to ask on, so it does not start: pass --yes to go on"
                    );
                }
                eprint!("create them and calibrate? [y/N] ");
                let mut answer = String::new();
                std::io::stdin().read_line(&mut answer)?;
                if !matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
                    anyhow::bail!("not calibrated: nothing was created");
                }
            }
        }
        let cancel = tokio_util::sync::CancellationToken::new();
        let probe = Probe {
            clients,
            run_id: run_id.clone(),
            samples: args.samples,
            embedded: emulator.is_some(),
            profile,
            cancel: cancel.clone(),
            say: std::sync::Arc::new(|l| eprintln!("{l}")),
        };
        // Ctrl-C (or SIGTERM) stops the probes; each service's probe then deletes what it made.
        let watcher = {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                headless::shutdown_signal().await;
                eprintln!("interrupted: deleting what calibrate created ...");
                cancel.cancel();
            })
        };
        let result = calibrate::calibrate(&probe, &services, &args.target.labs).await;
        watcher.abort();
        if cancel.is_cancelled() {
            anyhow::bail!("interrupted: no profile written; what calibrate created was deleted (run {run_id})");
        }
        let cal = result?;
        for n in &cal.notes {
            eprintln!("{n}");
        }
        let text = kit::file::profile_toml(&cal, &name, &where_, &date, &run_id);
        // What it wrote must read back as the profile it means.
        latlab_emulator::profile::LatencyProfile::from_toml(&text)
            .map_err(|e| anyhow::anyhow!("the profile written does not read back: {e:#}"))?;
        std::fs::write(&args.output, &text)
            .with_context(|| format!("cannot write {}", args.output.display()))?;
        out!("{}", calibration_table(&cal));
        for l in &cal.left {
            out!("not measured: {l}\n");
        }
        out!(
            "wrote {} ({} parameters measured); play it back with --latency-profile {}\n",
            args.output.display(),
            cal.params.len(),
            args.output.display()
        );
        Ok(ExitCode::SUCCESS)
    })
}

/// The measured parameters, a row each.
fn calibration_table(cal: &kit::Calibration) -> String {
    let mut t = crate::lab_kit::section::table::Table::new(&["parameter", "value", "samples"]);
    for p in &cal.params {
        t.row(vec![
            p.name.clone(),
            match p.value {
                kit::Value::Delay(s) => format!(
                    "min {:.3} ms, median {:.3} ms, p99 {:.3} ms",
                    s.min, s.median, s.p99
                ),
                kit::Value::Number(v) => format!("{v}"),
            },
            p.samples.to_string(),
        ]);
    }
    t.text()
}

/// The plan: a line per resource or set of calls, and the total at list price.
fn plan_text(
    lines: &[kit::PlanLine],
    target: &str,
    prices: &crate::lab_kit::cost::Prices,
) -> String {
    let mut out = format!("calibrate creates on {target}, and deletes at the end:\n");
    for l in lines {
        out.push_str(&format!(
            "  {}  {}\n",
            crate::lab_kit::cost::usd(l.usd),
            l.what
        ));
    }
    let mut unverified: Vec<&str> = lines
        .iter()
        .flat_map(|l| &l.keys)
        .filter(|k| prices.unverified.contains_key(k.as_str()))
        .map(String::as_str)
        .collect();
    unverified.sort();
    unverified.dedup();
    out.push_str(&format!(
        "  total at list price: {}{}\n",
        crate::lab_kit::cost::usd(lines.iter().map(|l| l.usd).sum()),
        if unverified.is_empty() {
            String::new()
        } else {
            format!(" (unverified prices: {})", unverified.join(", "))
        }
    ));
    out
}

/// `latlab profile diff A B`: every parameter of either, its value in each and the ratio of B's
/// median (or number) to A's.
pub(super) fn profile_diff(a: &str, b: &str) -> anyhow::Result<String> {
    let pa = LatencyProfile::resolve(a)?;
    let pb = LatencyProfile::resolve(b)?;
    let va = pa.params();
    let vb = pb.params();
    let mut t = crate::lab_kit::section::table::Table::new(&[
        "parameter",
        &pa.name,
        &pb.name,
        "ratio",
        "sources",
    ]);
    let mut differ = 0;
    for x in &va {
        let y = vb.iter().find(|y| y.name == x.name);
        let (vy, sy) = y.map_or(("-".to_string(), "-"), |y| {
            (y.value.clone(), y.provenance.source.name())
        });
        let ratio = match (figure(&x.value), y.and_then(|y| figure(&y.value))) {
            (Some(p), Some(q)) if p > 0.0 => format!("{:.2}", q / p),
            (Some(p), Some(q)) if p == q => "1.00".into(),
            _ if x.value == vy => "1.00".into(),
            _ => "-".into(),
        };
        if x.value != vy {
            differ += 1;
        }
        t.row(vec![
            x.name.clone(),
            x.value.clone(),
            vy,
            ratio,
            format!("{} -> {sy}", x.provenance.source.name()),
        ]);
    }
    let mut out = t.text();
    let count = |v: &[latlab_core::provenance::Param]| {
        v.iter()
            .filter(|p| p.provenance.source.name() == "assumption")
            .count()
    };
    out.push_str(&format!(
        "{differ} of {} parameters differ; `assumption` parameters: {} in {}, {} in {}\n",
        va.len(),
        count(&va),
        pa.name,
        count(&vb),
        pb.name
    ));
    Ok(out)
}

/// A parameter's figure for a ratio: a delay's median (or fixed value), a rate, a slope.
fn figure(value: &str) -> Option<f64> {
    if value == "unlimited" {
        return None;
    }
    let from = value.find("median ").map_or(0, |i| i + "median ".len());
    value[from..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_figure_is_read_from_a_value_in_words() {
        use super::figure;
        assert_eq!(
            figure("min 1 ms, median 2.5 ms, p99 8 ms (mean 3 ms)"),
            Some(2.5)
        );
        assert_eq!(figure("50 ms"), Some(50.0));
        assert_eq!(figure("88 MB/s"), Some(88.0));
        assert_eq!(figure("0 ms/MiB"), Some(0.0));
        assert_eq!(figure("unlimited"), None);
    }
}
