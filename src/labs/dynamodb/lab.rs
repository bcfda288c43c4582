//! The DynamoDB lab running: its table (and Kinesis destination) on the run's endpoint, created
//! and tagged as it starts and deleted at its end; the writer, reader and change consumers; its
//! figures, its last seconds and what its keys do.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::cdc::Capturing;
use super::config::{Billing, CdcKind, DynamoScenario};
use super::probes::{DRAIN, Probes, model_limits, provisioned};
use super::snapshot::{DynamoSnapshot, ReaderFigures, WriterFigures};
use super::state::{CdcState, Heat, Knobs, Ledger, ReaderState, WriterState};
use super::writer::Writing;
use super::{Command, DynamoLab, History};
use crate::labs::series::Histogrammed;
use crate::labs::{LabKind, Live, RunContext};

impl Live for DynamoLab {
    async fn start(
        ctx: &Arc<RunContext>,
        s: &DynamoScenario,
        _target: &crate::labs::target::Nothing,
    ) -> anyhow::Result<Self> {
        let clients = ctx.clients(LabKind::Dynamodb)?.clone();
        let retry = crate::aws::RetrySettings::default();
        let admin = Arc::new(crate::metrics::SdkStats::default());
        let writer = Arc::new(WriterState::default());
        let reader = Arc::new(ReaderState::default());
        let table = super::table::table_name(&s.table_prefix, &ctx.run_id);
        let tables = super::table::Tables {
            ddb: super::client::dynamodb(&clients, &retry, "latlab-dynamodb-admin", admin.clone()),
            kinesis: super::client::kinesis(
                &clients,
                &retry,
                "latlab-dynamodb-kinesis",
                admin.clone(),
            ),
            run: ctx.run_id.clone(),
            made: Mutex::default(),
        };
        let stream = s.cdc.iter().any(|c| c.kind.reads_stream());
        let (_, stream_arn) = tables.create(&table, s.billing, stream).await?;
        let kinesis_arn = if s.cdc.iter().any(|c| c.kind == CdcKind::FanOut) {
            let name = super::table::stream_name(&s.table_prefix, &ctx.run_id);
            Some(tables.destination(&table, &name).await?)
        } else {
            None
        };
        let limits = model_limits(ctx);
        let mut heat = Heat {
            window: limits.on_demand_growth_window.as_secs(),
            write_limit: f64::from(limits.partition_write_units),
            read_limit: f64::from(limits.partition_read_units),
            ..Heat::default()
        };
        heat.grow(latlab_emulator::dynamodb::partitions_for(
            provisioned(s.billing),
            &limits,
        ));
        if s.billing == Billing::OnDemand {
            heat.to_on_demand(None, 0);
        }
        let knobs = Arc::new(Knobs::new(s));
        let clock = ctx.start;
        let ledger = Arc::new(Mutex::new(Ledger::default()));
        let writing = Writing {
            client: super::client::dynamodb(
                &clients,
                &retry,
                "latlab-dynamodb-writer",
                writer.sdk.clone(),
            ),
            table: table.clone(),
            run: ctx.run_id.clone(),
            item_size: s.item_size,
            keys: s.keys,
            hot_share: s.hot_share,
            knobs: knobs.clone(),
            writer,
            reader: reader.clone(),
            ledger: ledger.clone(),
            heat: Arc::new(Mutex::new(heat)),
            clock,
        };
        let n = Arc::new(AtomicU32::new(0));
        let streams_client = {
            let clients = clients.clone();
            let retry = retry.clone();
            move |stats: &Arc<crate::metrics::SdkStats>| {
                let i = n.fetch_add(1, Ordering::Relaxed);
                super::client::streams(
                    &clients,
                    &retry,
                    &format!("latlab-dynamodb-streams-{i}"),
                    stats.clone(),
                )
            }
        };
        let capturing = Capturing {
            streams: streams_client(&admin),
            kinesis: tables.kinesis.clone(),
            stream_arn,
            kinesis_arn,
            run: ctx.run_id.clone(),
            ledger: ledger.clone(),
            clock,
            registered: Arc::default(),
        };
        let mut cdc = Vec::new();
        for spec in &s.cdc {
            let slot = ledger.lock().join();
            let c = Arc::new(CdcState::new(&spec.name, spec.kind, slot, false));
            let cx = Capturing {
                streams: streams_client(&c.sdk),
                kinesis: if spec.kind == CdcKind::FanOut {
                    super::client::kinesis(
                        &clients,
                        &retry,
                        &format!("latlab-dynamodb-{}", spec.name),
                        c.sdk.clone(),
                    )
                } else {
                    capturing.kinesis.clone()
                },
                ..capturing.clone()
            };
            super::cdc::start(&cx, &c);
            cdc.push(c);
        }
        let writer_cancel = CancellationToken::new();
        let reader_cancel = CancellationToken::new();
        let reader_client = super::client::dynamodb(
            &clients,
            &retry,
            "latlab-dynamodb-reader",
            reader.sdk.clone(),
        );
        let tasks = vec![
            tokio::spawn(super::writer::pace(
                writing.clone(),
                writer_cancel.clone(),
                s.write_for,
                s.then.clone(),
            )),
            tokio::spawn(super::writer::read(
                Writing {
                    client: reader_client,
                    ..writing.clone()
                },
                s.reads,
                reader_cancel.clone(),
            )),
        ];
        Ok(DynamoLab {
            probes: Probes {
                table,
                scenario: s.clone(),
                knobs,
                limits,
                writing,
                capturing,
                cdc: Mutex::new(cdc),
                tables,
                streams_client: Box::new(streams_client),
                writer_cancel,
                reader_cancel,
                tasks: Mutex::new(tasks),
                added: AtomicU32::new(0),
                clock,
                started: Instant::now(),
            },
        })
    }

    /// A lab that could not create its table says why; the run's other labs go on.
    fn unavailable(why: &str) -> Option<DynamoSnapshot> {
        let mut s = DynamoSnapshot::planned(&DynamoScenario::default(), "");
        s.unavailable = Some(why.to_string());
        Some(s)
    }

    fn reset(&self) {
        let p = &self.probes;
        {
            let mut m = p.writing.writer.metrics.lock();
            m.latency.reset();
            m.throttled.clear();
        }
        p.writing.writer.sdk.reset();
        for slot in [&p.writing.reader.strong, &p.writing.reader.eventual] {
            *slot.lock() = Default::default();
        }
        p.writing.reader.sdk.reset();
        for c in p.cdc.lock().iter() {
            c.metrics.lock().latency.reset();
            c.sdk.reset();
        }
    }

    fn snapshot(&self, _complete: bool) -> DynamoSnapshot {
        let p = &self.probes;
        let k = &p.knobs;
        let w = &p.writing.writer;
        let m = w.metrics.lock();
        let writer = WriterFigures {
            produced: m.produced,
            written: m.written,
            failed: m.failed,
            behind: m.behind,
            units: m.units,
            latency: m.latency.summary(),
            throttled: m.throttled.clone(),
            sdk: w.sdk.snapshot(),
            status: w.status.lock().clone(),
            last_error: w.last_error.lock().clone(),
        };
        drop(m);
        let read = |name: &str, slot: &Mutex<super::state::ReadMetrics>| {
            let r = slot.lock();
            ReaderFigures {
                consistency: name.to_string(),
                reads: r.reads,
                failed: r.failed,
                units: r.units,
                latency: r.latency.summary(),
                throttled: r.throttled.clone(),
            }
        };
        let readers = vec![
            read("strong", &p.writing.reader.strong),
            read("eventual", &p.writing.reader.eventual),
        ];
        let (partitions, table_use) = p.partitions();
        DynamoSnapshot {
            table: p.table.clone(),
            billing: k.billing(),
            item_size: p.scenario.item_size,
            rate: k.rate(),
            keys: p.scenario.keys,
            skewed: k.skewed(),
            hot_share: p.scenario.hot_share,
            reads: p.scenario.reads,
            consistent: k.consistent(),
            seconds: p.clock.elapsed().as_secs_f64(),
            writer,
            readers,
            table_use,
            partitions,
            cdc: p.figures(),
            unavailable: None,
        }
    }

    fn history(&self, window: usize) -> History {
        let p = &self.probes;
        let now = p.second();
        let mut h = vec![(
            "writer".to_string(),
            p.writing.writer.metrics.lock().latency.points(now, window),
        )];
        h.push((
            "strong".into(),
            p.writing.reader.strong.lock().latency.points(now, window),
        ));
        h.push((
            "eventual".into(),
            p.writing.reader.eventual.lock().latency.points(now, window),
        ));
        for c in p.cdc.lock().iter() {
            h.push((c.name.clone(), c.metrics.lock().latency.points(now, window)));
        }
        h
    }

    fn histograms(&self) -> Vec<Histogrammed> {
        let p = &self.probes;
        let mut out = vec![
            Histogrammed {
                id: super::metrics::series_id("writer"),
                labels: Vec::new(),
                histogram: p.writing.writer.metrics.lock().latency.histogram().clone(),
            },
            Histogrammed {
                id: super::metrics::series_id("strong"),
                labels: Vec::new(),
                histogram: p.writing.reader.strong.lock().latency.histogram().clone(),
            },
            Histogrammed {
                id: super::metrics::series_id("eventual"),
                labels: Vec::new(),
                histogram: p.writing.reader.eventual.lock().latency.histogram().clone(),
            },
        ];
        for c in p.cdc.lock().iter() {
            out.push(Histogrammed {
                id: super::metrics::series_id(&c.name),
                labels: Vec::new(),
                histogram: c.metrics.lock().latency.histogram().clone(),
            });
        }
        out
    }

    /// How long the writer wrote for (until now while it writes).
    fn measured_for(&self) -> Option<Duration> {
        let p = &self.probes;
        Some((*p.writing.writer.wrote_for.lock()).unwrap_or_else(|| p.started.elapsed()))
    }

    async fn apply(&self, cmd: Command) -> anyhow::Result<String> {
        let p = &self.probes;
        let k = &p.knobs;
        Ok(match cmd {
            Command::Skew => {
                let on = !k.skewed();
                k.skewed.store(on, Ordering::Relaxed);
                if on {
                    format!(
                        "DynamoDB keys skewed: {:.0}% of writes and reads go to the key '{}'",
                        p.scenario.hot_share * 100.0,
                        super::writer::HOT
                    )
                } else {
                    format!("DynamoDB keys spread evenly over {} keys", p.scenario.keys)
                }
            }
            Command::RateUp | Command::RateDown => {
                let r = crate::labs::step(
                    super::config::RATE_STEPS,
                    u64::from(k.rate()),
                    cmd == Command::RateUp,
                ) as u32;
                k.rate.store(r, Ordering::Relaxed);
                format!(
                    "DynamoDB writer: {} writes/s of {} B",
                    latlab_core::units::thousands(u64::from(r)),
                    p.scenario.item_size
                )
            }
            Command::Mode => {
                let next = match k.billing() {
                    Billing::OnDemand => match p.scenario.billing {
                        Billing::Provisioned { .. } => p.scenario.billing,
                        Billing::OnDemand => Billing::Provisioned {
                            read: 3000,
                            write: 4000,
                        },
                    },
                    Billing::Provisioned { .. } => Billing::OnDemand,
                };
                p.set_billing(next).await?;
                format!("DynamoDB table now {}", next.describe())
            }
            Command::CapacityUp | Command::CapacityDown => {
                let Billing::Provisioned { read, write } = k.billing() else {
                    anyhow::bail!(
                        "the DynamoDB table is on-demand: press M for provisioned capacity first"
                    );
                };
                let w = crate::labs::step(
                    super::config::CAPACITY_STEPS,
                    write,
                    cmd == Command::CapacityUp,
                );
                let next = Billing::Provisioned { read, write: w };
                p.set_billing(next).await?;
                format!("DynamoDB table now {}", next.describe())
            }
            Command::AddReader => {
                let name = p.add_reader().await?;
                let readers = p
                    .cdc
                    .lock()
                    .iter()
                    .filter(|c| c.kind.reads_stream() && !c.removed.load(Ordering::Relaxed))
                    .count();
                format!(
                    "DynamoDB Streams reader {name} joined: {readers} reader(s) of each shard{}",
                    if readers > 2 {
                        " (DynamoDB Streams allows two: watch LimitExceededException)"
                    } else {
                        ""
                    }
                )
            }
            Command::RemoveReader => match p.remove_reader() {
                Some(name) => format!("DynamoDB Streams reader {name} left (its figures stay)"),
                None => anyhow::bail!("no DynamoDB Streams reader joined with y to remove"),
            },
            Command::Consistency => {
                let strong = !k.consistent();
                k.consistent.store(strong, Ordering::Relaxed);
                if strong {
                    "DynamoDB reads now strongly consistent (a unit per 4 KB)".into()
                } else {
                    "DynamoDB reads now eventually consistent (half a unit per 4 KB)".into()
                }
            }
        })
    }

    /// Stops the writer and reader (their calls in flight answered), lets the change consumers
    /// read what is left for up to [`DRAIN`], then stops them.
    async fn stop(&self, hurry: &crate::labs::context::Hurry) {
        let p = &self.probes;
        p.writer_cancel.cancel();
        p.reader_cancel.cancel();
        let tasks: Vec<_> = p.tasks.lock().drain(..).collect();
        for t in tasks {
            let _ = t.await;
        }
        let consumers = !p.cdc.lock().is_empty();
        if consumers {
            crate::labs::context::drain_until(DRAIN, hurry, || {
                p.figures()
                    .iter()
                    .filter(|c| !c.stopped)
                    .all(|c| c.counts.unread == 0)
            })
            .await;
        }
        for c in p.cdc.lock().iter() {
            c.cancel.cancel();
        }
    }

    async fn cleanup(&self) -> Vec<String> {
        let p = &self.probes;
        {
            let registered: Vec<String> = p.capturing.registered.lock().clone();
            p.tables.made.lock().consumers = registered;
        }
        p.tables
            .delete_all(p.capturing.kinesis_arn.as_deref())
            .await
    }
}
