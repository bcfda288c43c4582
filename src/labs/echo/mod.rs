//! A fifth lab, built only for the tests (`cargo test`'s build of the library): the round trip
//! of a payload to a TCP echo server it runs on 127.0.0.1, measured as every lab measures, so
//! that a test shows a lab added as a folder and one registry line reaching the screen, a
//! headless report, a comparison and a shared frame with nothing outside its folder changed.
//!
//! Its parts: who it is, what it runs and that it needs nothing of an account (`mod.rs`), what
//! it shows (`view.rs`: `Shown`, `Fixture`), what it reports and records (`report.rs`:
//! `Reported`, `Measured`; its snapshot is its JSON part), and its test (`tests.rs`).

mod report;
#[cfg(test)]
mod tests;
mod view;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::labs::series::Histogrammed;
use crate::labs::{LabKind, RunContext};
use crate::metrics::{Point, Series, Summary};

/// The lab while it runs: the echo server, the client's loop and what it measured.
pub struct EchoLab {
    counts: Arc<Counts>,
    cancel: CancellationToken,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

/// What the client measures and the key changes, shared between them. Every round trip that
/// has ended is counted with its outcome under one lock, so a snapshot or a reset taken while a
/// round is in flight never sees it sent and not yet answered: `sent` is always `rtt`'s count
/// plus `errors`.
struct Counts {
    clock: Instant,
    interval: Duration,
    payload: AtomicU64,
    tally: Mutex<Tally>,
}

#[derive(Default)]
struct Tally {
    rtt: Series,
    sent: u64,
    errors: u64,
}

/// Its section of a scenario file, `[echo]`, and its part of a scenario once checked.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EchoScenario {
    pub payload: u64,
    pub interval: latlab_core::units::Dur,
}

/// What its one key asks: double the payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    PayloadUp,
}

impl crate::labs::LabCommand for Command {
    fn what(self) -> &'static str {
        "a larger echo payload"
    }
}

/// Its figures at one moment, and its part of the JSON report as they are.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EchoSnapshot {
    pub payload: u64,
    pub sent: u64,
    pub errors: u64,
    #[serde(rename = "round_trip", with = "crate::metrics::json::as_report")]
    pub rtt: Summary,
}

impl crate::labs::ReportPart for EchoSnapshot {}

/// Its last seconds of round trips.
pub type History = Vec<Point>;

impl crate::labs::Lab for EchoLab {
    const FACTS: crate::labs::Facts = crate::labs::Facts {
        overview_weight: 1,
        colours: view::COLOURS,
        compared: ("Echo: round trip on 127.0.0.1", "socket"),
        schema: Some(include_str!("schema.json")),
        quantities: &["round_trip"],
        ..crate::labs::Facts::new(
            LabKind::Echo,
            "Echo",
            "echo-demo",
            &[("echo-demo", include_str!("scenarios/echo-demo.toml"))],
        )
    };

    type Scenario = EchoScenario;
    type File = EchoScenario;
    type Seed = crate::labs::NoSeed;
    type Command = Command;
    type Snapshot = EchoSnapshot;
    type History = History;
    type Json = EchoSnapshot;
    type Target = crate::labs::target::Nothing;
}

// It creates nothing, calls no service, leaves nothing behind and costs nothing: every default
// of the account traits says so.
impl crate::labs::Planned for EchoLab {}
impl crate::labs::Cleanup for EchoLab {}
impl crate::labs::Priced for EchoLab {}
impl crate::labs::Doctor for EchoLab {}
impl crate::labs::Calibrated for EchoLab {}

impl crate::labs::Setup for EchoLab {
    fn parse(f: EchoScenario, _text: &str) -> anyhow::Result<EchoScenario> {
        if f.payload == 0 || f.payload > 65_536 || f.interval.0 < Duration::from_millis(1) {
            anyhow::bail!(
                "echo: payload {} B every {:?}; a payload is 1 to 65536 bytes, at most every 1ms",
                f.payload,
                f.interval.0
            );
        }
        Ok(f)
    }
}

/// The echo server: every byte a client sends, sent back.
async fn serve(listener: tokio::net::TcpListener, cancel: CancellationToken) {
    loop {
        let (mut socket, _) = tokio::select! {
            _ = cancel.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(_) => return,
            },
        };
        // A connection is served until its client closes it, not until the run's cancel: the
        // client finishes a round in flight when the run stops (it looks at the cancel between
        // rounds), and a server that dropped the connection first made that round an error.
        tokio::spawn(async move {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = match socket.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                if socket.write_all(&buf[..n]).await.is_err() {
                    return;
                }
            }
        });
    }
}

/// The client: a payload every interval, timed from its write to its last byte back.
async fn client(c: Arc<Counts>, addr: std::net::SocketAddr, cancel: CancellationToken) {
    let mut tick = tokio::time::interval(c.interval);
    let mut socket = None;
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tick.tick() => {}
        }
        if socket.is_none() {
            socket = tokio::net::TcpStream::connect(addr).await.ok();
        }
        let body = vec![b'e'; c.payload.load(Ordering::Relaxed) as usize];
        let mut back = vec![0u8; body.len()];
        let at = Instant::now();
        let answered = match socket.as_mut() {
            Some(s) => {
                let round = async {
                    s.write_all(&body).await?;
                    s.read_exact(&mut back).await
                };
                round.await.is_ok() && back == body
            }
            None => false,
        };
        let mut t = c.tally.lock();
        t.sent += 1;
        if answered {
            let second = c.clock.elapsed().as_secs();
            t.rtt.record(at.elapsed().as_micros() as u64, second);
        } else {
            t.errors += 1;
            socket = None;
        }
    }
}

impl crate::labs::Live for EchoLab {
    async fn start(
        ctx: &Arc<RunContext>,
        s: &EchoScenario,
        _target: &crate::labs::target::Nothing,
    ) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let cancel = CancellationToken::new();
        let counts = Arc::new(Counts {
            clock: ctx.start,
            interval: s.interval.0,
            payload: AtomicU64::new(s.payload),
            tally: Mutex::default(),
        });
        let tasks = vec![
            tokio::spawn(serve(listener, cancel.clone())),
            tokio::spawn(client(counts.clone(), addr, cancel.clone())),
        ];
        Ok(EchoLab {
            counts,
            cancel,
            tasks: Mutex::new(tasks),
        })
    }

    fn reset(&self) {
        *self.counts.tally.lock() = Tally::default();
    }

    fn snapshot(&self, _complete: bool) -> EchoSnapshot {
        let c = &self.counts;
        let t = c.tally.lock();
        EchoSnapshot {
            payload: c.payload.load(Ordering::Relaxed),
            sent: t.sent,
            errors: t.errors,
            rtt: t.rtt.summary(),
        }
    }

    fn history(&self, window: usize) -> History {
        let now = self.counts.clock.elapsed().as_secs();
        self.counts.tally.lock().rtt.points(now, window)
    }

    fn histograms(&self) -> Vec<Histogrammed> {
        vec![Histogrammed {
            id: report::series_id(),
            labels: Vec::new(),
            histogram: self.counts.tally.lock().rtt.histogram().clone(),
        }]
    }

    async fn apply(&self, cmd: Command) -> anyhow::Result<String> {
        let Command::PayloadUp = cmd;
        let p = &self.counts.payload;
        let next = (p.load(Ordering::Relaxed) * 2).min(65_536);
        p.store(next, Ordering::Relaxed);
        Ok(format!("echo payload {next} B"))
    }

    async fn stop(&self, _hurry: &crate::labs::context::Hurry) {
        self.cancel.cancel();
        let tasks: Vec<_> = self.tasks.lock().drain(..).collect();
        for t in tasks {
            let _ = t.await;
        }
    }
}
