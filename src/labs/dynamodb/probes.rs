//! The DynamoDB lab's running probes: what `Live` (`lab.rs`) starts, reads and drives, and the
//! limits its heat strip draws partitions by.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::cdc::Capturing;
use super::config::{Billing, CdcKind, DynamoScenario};
use super::snapshot::{CdcFigures, PartitionFigures, TableUse};
use super::state::{CdcState, Knobs};
use super::writer::Writing;
use crate::labs::RunContext;
use latlab_emulator::dynamodb::DynamoLimits;

/// How long the change consumers may read what is left once the writer stops.
pub(super) const DRAIN: Duration = Duration::from_secs(15);

/// The limits the heat strip draws partitions by: the embedded emulator's (with the run's
/// `--limit`s), or DynamoDB's documented ones against any other endpoint.
pub(super) fn model_limits(ctx: &RunContext) -> DynamoLimits {
    let mut l = DynamoLimits::default();
    if let Some(e) = &ctx.emulated {
        let get = |k: &str| {
            e.limit(&format!("dynamodb.{k}"))
                .and_then(|v| v.parse::<u32>().ok())
        };
        if let Some(v) = get("partition_read_units") {
            l.partition_read_units = v;
        }
        if let Some(v) = get("partition_write_units") {
            l.partition_write_units = v;
        }
        if let Some(v) = get("on_demand_initial_write_units") {
            l.on_demand_initial_write_units = v;
        }
        if let Some(v) = get("on_demand_initial_read_units") {
            l.on_demand_initial_read_units = v;
        }
        if let Some(w) = e
            .limit("dynamodb.on_demand_growth_window")
            .and_then(|v| humantime::parse_duration(v.trim_matches('"')).ok())
        {
            l.on_demand_growth_window = w;
        }
    }
    l
}

pub(super) fn provisioned(b: Billing) -> Option<(u64, u64)> {
    match b {
        Billing::Provisioned { read, write } => Some((read, write)),
        Billing::OnDemand => None,
    }
}

/// Makes a DynamoDB Streams client counting its attempts in the stats given (each reader its own
/// retry quota).
pub type StreamsOf =
    dyn Fn(&Arc<crate::metrics::SdkStats>) -> aws_sdk_dynamodbstreams::Client + Send + Sync;

/// The running probes.
pub struct Probes {
    pub table: String,
    pub(super) scenario: DynamoScenario,
    pub(super) knobs: Arc<Knobs>,
    pub(super) limits: DynamoLimits,
    pub(super) writing: Writing,
    pub(super) capturing: Capturing,
    pub(super) cdc: Mutex<Vec<Arc<CdcState>>>,
    pub(super) tables: super::table::Tables,
    /// Makes a Streams client counting its attempts in the stats given.
    pub(super) streams_client: Box<StreamsOf>,
    pub(super) writer_cancel: CancellationToken,
    pub(super) reader_cancel: CancellationToken,
    pub(super) tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    pub(super) added: AtomicU32,
    pub(super) clock: Instant,
    /// When the writer started.
    pub(super) started: Instant,
}

impl Probes {
    pub(super) fn second(&self) -> u64 {
        self.clock.elapsed().as_secs()
    }

    pub(super) fn figures(&self) -> Vec<CdcFigures> {
        let second = self.second();
        let mut ledger = self.writing.ledger.lock();
        self.cdc
            .lock()
            .iter()
            .map(|c| {
                let m = c.metrics.lock();
                CdcFigures {
                    name: c.name.clone(),
                    how: c.kind,
                    counts: ledger.counts(c.slot, second),
                    latency: m.latency.summary(),
                    calls: m.calls,
                    empty: m.empty,
                    invocations: m.invocations,
                    sdk: c.sdk.snapshot(),
                    status: c.status.lock().clone(),
                    last_error: c.last_error.lock().clone(),
                    added: c.added,
                    stopped: c.removed.load(Ordering::Relaxed),
                }
            })
            .collect()
    }

    pub(super) fn partitions(&self) -> (Vec<PartitionFigures>, TableUse) {
        let second = self.second();
        let heat = self.writing.heat.lock();
        let mut total = TableUse::default();
        let parts = heat
            .partitions
            .iter()
            .enumerate()
            .map(|(i, u)| {
                let (w, r, t) = u.last_second(second);
                total.write_units += w;
                total.read_units += r;
                PartitionFigures {
                    index: i,
                    write_units: w,
                    read_units: r,
                    write_limit: u64::from(self.limits.partition_write_units),
                    read_limit: u64::from(self.limits.partition_read_units),
                    throttled_last_second: t,
                    throttled: u.throttled,
                    write_units_total: u.write_units,
                }
            })
            .collect();
        if let Some((read, write)) = provisioned(self.knobs.billing()) {
            total.read_capacity = Some(read);
            total.write_capacity = Some(write);
        }
        (parts, total)
    }

    /// A Streams poller joins (it reads every shard of the table's stream). Its name.
    pub(super) async fn add_reader(&self) -> anyhow::Result<String> {
        if self.capturing.stream_arn.is_none() {
            anyhow::bail!(
                "this scenario's table has no stream to read (dynamodb-cdc has one): no DynamoDB Streams reader added"
            );
        }
        let n = self.added.fetch_add(1, Ordering::Relaxed) + 1;
        let name = format!("reader-{n}");
        let slot = self.writing.ledger.lock().join();
        let c = Arc::new(CdcState::new(
            &name,
            CdcKind::StreamsPoller { interval_ms: 250 },
            slot,
            true,
        ));
        let cx = Capturing {
            streams: (self.streams_client)(&c.sdk),
            ..self.capturing.clone()
        };
        super::cdc::start(&cx, &c);
        self.cdc.lock().push(c);
        Ok(name)
    }

    /// The last reader a key added that still reads stops (its figures stay).
    pub(super) fn remove_reader(&self) -> Option<String> {
        let c = self
            .cdc
            .lock()
            .iter()
            .rfind(|c| c.added && !c.removed.load(Ordering::Relaxed))?
            .clone();
        c.removed.store(true, Ordering::Relaxed);
        c.cancel.cancel();
        Some(c.name.clone())
    }

    /// Applies a new billing: UpdateTable, then the heat strip's partitions follow.
    pub(super) async fn set_billing(&self, b: Billing) -> anyhow::Result<()> {
        self.tables.set_billing(&self.table, b).await?;
        let before = std::mem::replace(&mut *self.knobs.billing.lock(), b);
        let n = latlab_emulator::dynamodb::partitions_for(provisioned(b), &self.limits);
        let mut heat = self.writing.heat.lock();
        heat.grow(n);
        match b {
            Billing::OnDemand => heat.to_on_demand(provisioned(before), self.second()),
            Billing::Provisioned { .. } => heat.on_demand = false,
        }
        Ok(())
    }
}
