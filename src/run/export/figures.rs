//! The run's live figures as metric families, read at scrape time from the lab's snapshot and
//! its series' whole histograms: every number here is one the snapshot (or a histogram) holds,
//! and a figure the lab has not measured yet (a Redis median before the first try, how far
//! behind a consumer reads before its first answer) is left out rather than written as 0.
//!
//! Counts start over when the lab is reset (the TUI's reset key); Prometheus reads that as a
//! counter reset.

use crate::labs::LabKind;
use crate::labs::series::Histogrammed;
use crate::metrics::exposition::{Family, Type, Value};
use crate::metrics::sdk::SdkSnapshot;
use crate::run::Run;
use crate::snapshot::Snapshot;

/// The lab's figures now, family by family.
pub fn families(run: &Run) -> Vec<Family> {
    let snap = run.snapshot(false);
    let series = run.series();
    let mut out = run_families(&snap);
    out.extend(labs(&snap, series));
    out.extend(sdk(&snap));
    out.extend(faults(&snap));
    out
}

fn s(v: &str) -> String {
    v.to_string()
}

fn run_families(snap: &Snapshot) -> Vec<Family> {
    let mut info = Family::new(
        "latlab_run_info",
        Type::Gauge,
        "The run: its scenario and the backend that produced every figure (always 1).",
    );
    info.push(
        vec![
            ("scenario", snap.scenario.clone()),
            ("backend_kind", snap.backend.kind.clone()),
            ("backend", snap.backend.label.clone()),
        ],
        Value::Count(1),
    );
    let mut elapsed = Family::new(
        "latlab_run_elapsed_seconds",
        Type::Gauge,
        "Seconds since the lab started.",
    );
    elapsed.push(vec![], Value::Number(snap.elapsed_secs));
    let mut running = Family::new(
        "latlab_lab_running",
        Type::Gauge,
        "1 for each lab of the scenario that runs, 0 for one that could not start (the Redis lab without redis-server, say).",
    );
    for (lab, runs) in lab_running(snap) {
        running.push(vec![("lab", s(lab.key()))], Value::Count(u64::from(runs)));
    }
    vec![info, elapsed, running]
}

macro_rules! labs {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        /// Each lab of the run and whether it runs (one that could not start does not).
        fn lab_running(snap: &Snapshot) -> Vec<(LabKind, bool)> {
            let mut out = Vec::new();
            $(if let Some(s) = &snap.$module {
                out.push((LabKind::$kind, <crate::labs::$module::$ty as crate::labs::Measured>::runs(s)));
            })*
            out
        }

        /// Each lab's own families (`labs/X/metrics.rs`), from its snapshot and its series.
        fn labs(snap: &Snapshot, mut series: Vec<Histogrammed>) -> Vec<Family> {
            let mut out = Vec::new();
            $(if let Some(s) = &snap.$module {
                let (mine, rest): (Vec<Histogrammed>, Vec<Histogrammed>) =
                    std::mem::take(&mut series)
                        .into_iter()
                        .partition(|h| h.id.lab == LabKind::$kind);
                series = rest;
                out.extend(<crate::labs::$module::$ty as crate::labs::Measured>::metric_families(s, &mine));
            })*
            // What is left is a series of a lab the snapshot does not have: not exported.
            drop(series);
            out
        }

        /// Each lab's SDK clients, labelled.
        fn labs_sdk<'a>(
            snap: &'a Snapshot,
            clients: &mut Vec<(Vec<(&'static str, String)>, &'a SdkSnapshot)>,
        ) {
            $(if let Some(s) = &snap.$module {
                clients.extend(<crate::labs::$module::$ty as crate::labs::Measured>::sdk_clients(s));
            })*
        }
    };
}
crate::labs::for_each_lab!(labs);

/// The SDK's counts of each client each lab has (the Kinesis producer and consumers, the S3 lab's).
fn sdk(snap: &Snapshot) -> Vec<Family> {
    let mut clients: Vec<(Vec<(&'static str, String)>, &SdkSnapshot)> = Vec::new();
    labs_sdk(snap, &mut clients);
    let mut calls = Family::new(
        "latlab_sdk_calls",
        Type::Counter,
        "AWS SDK: operations started.",
    );
    let mut attempts = Family::new(
        "latlab_sdk_attempts",
        Type::Counter,
        "AWS SDK: HTTP attempts, the first of each call and every retry.",
    );
    let mut retries = Family::new(
        "latlab_sdk_retries",
        Type::Counter,
        "AWS SDK: attempts beyond the first of a call.",
    );
    let mut throttles = Family::new(
        "latlab_sdk_throttles",
        Type::Counter,
        "AWS SDK: attempts answered with a throttling error (ProvisionedThroughputExceededException, SlowDown, ...).",
    );
    let mut held = Family::new(
        "latlab_sdk_client_waits",
        Type::Counter,
        "AWS SDK: first attempts its client-side rate limiter held back before sending (adaptive retry mode).",
    );
    let mut escaped = Family::new(
        "latlab_sdk_escaped_errors",
        Type::Counter,
        "AWS SDK: calls that failed after the SDK's retries, by error code.",
    );
    for (labels, sdk) in clients {
        let c = &sdk.counters;
        calls.push(labels.clone(), Value::Count(c.calls));
        attempts.push(labels.clone(), Value::Count(c.attempts));
        retries.push(labels.clone(), Value::Count(c.retries));
        throttles.push(labels.clone(), Value::Count(c.throttles));
        held.push(labels.clone(), Value::Count(c.client_waits));
        for (code, n) in &c.escaped {
            let mut l = labels.clone();
            l.push(("code", code.clone()));
            escaped.push(l, Value::Count(*n));
        }
    }
    vec![calls, attempts, retries, throttles, held, escaped]
}

fn faults(snap: &Snapshot) -> Vec<Family> {
    let mut fired = Family::new(
        "latlab_faults_injected",
        Type::Counter,
        "Faults that fired (set with --fault or the scenario's [[faults]], or from the TUI's fault menu), by kind.",
    );
    let mut recovered = Family::new(
        "latlab_faults_recovered",
        Type::Counter,
        "Faults after which the target answered correctly again, by kind.",
    );
    for (kind, counts) in &snap.faults.counts {
        let labels = vec![("fault", s(kind.name()))];
        fired.push(labels.clone(), Value::Count(counts.fired));
        recovered.push(labels, Value::Count(counts.recovered));
    }
    vec![fired, recovered]
}
