//! What a lab's calibration probe is written against (`labs/X/calibrate.rs`, `latlab
//! calibrate`): the target's clients and the run's id ([`Probe`]), what it found ([`Calibration`]:
//! each parameter with its samples and statistic), the statistics (`fit`), round trips timed
//! without the client's wake-up in them ([`hot`]) and the profile file written from it all
//! (`file`). Every parameter a probe writes says `measurement`, with the target, the date, the
//! samples and the statistic; where the client cannot separate two parameters (a round trip's
//! two legs, a PUT's first byte from its upload) the note says how they were split.
//!
//! What a probe creates is named for the run and tagged `latlab:run-id`, and deleted by the
//! probe at its end, after an error and after Ctrl-C alike (`latlab cleanup` finds it if the
//! process is killed).

pub mod file;
pub mod fit;
pub mod status;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::aws::{Clients, RetrySettings};
use fit::Shape;

/// What a calibration is given.
#[derive(Clone)]
pub struct Probe {
    pub clients: Clients,
    /// The run's id: in every name and `latlab:run-id` tag.
    pub run_id: String,
    /// Samples of each figure (at least 20).
    pub samples: usize,
    /// Whether the target is latlab's embedded emulator (a probe may create there what it only
    /// uses elsewhere, such as the S3 lab's buckets).
    pub embedded: bool,
    /// The embedded emulator's latency profile (None on another target): its `[links]` shape
    /// the links of servers latlab runs itself (the Redis lab's pair), as in a run.
    pub profile: Option<Arc<latlab_emulator::profile::LatencyProfile>>,
    pub cancel: CancellationToken,
    /// Progress lines go here (stderr, as they happen).
    pub say: Arc<dyn Fn(String) + Send + Sync>,
}

impl Probe {
    /// One attempt a call, no retries: a retried call's time is not one round trip. A failure
    /// is counted and its sample dropped.
    pub fn retry() -> RetrySettings {
        RetrySettings {
            max_attempts: 1,
            ..RetrySettings::default()
        }
    }

    pub fn say(&self, line: impl Into<String>) {
        (self.say)(line.into())
    }

    /// Waits `d` unless cancelled, to well under a millisecond (a probe's delay is a figure);
    /// false once cancelled. A zero wait does not wait for the timer's next tick.
    pub async fn pause(&self, d: Duration) -> bool {
        if d.is_zero() {
            return !self.cancel.is_cancelled();
        }
        tokio::select! {
            _ = self.cancel.cancelled() => false,
            _ = latlab_core::shaping::sleep_until(Instant::now() + d) => true,
        }
    }

    pub fn cancelled(&self) -> anyhow::Result<()> {
        if self.cancel.is_cancelled() {
            anyhow::bail!("interrupted");
        }
        Ok(())
    }
}

/// One measured parameter, as the profile file writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// The parameter's name (`kinesis.request`, `s3.standard.get_first_byte_per_mib_ms`).
    pub name: String,
    pub value: Value,
    /// How many samples it rests on.
    pub samples: usize,
    /// The statistic and the method, in words; the split when there was one.
    pub how: String,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A delay.
    Delay(Shape),
    /// A number in the parameter's unit (ms/MiB, MB/s).
    Number(f64),
}

impl Value {
    /// The figure a comparison reads: a delay's median, or the number.
    pub fn median(self) -> f64 {
        match self {
            Value::Delay(s) => s.median,
            Value::Number(n) => n,
        }
    }
}

/// What a calibration found: its parameters, the lines it printed about its method (the clock
/// bound), and what it could not measure, with why.
#[derive(Debug, Default)]
pub struct Calibration {
    pub params: Vec<Measured>,
    pub notes: Vec<String>,
    pub left: Vec<String>,
}

impl Calibration {
    pub fn delay(&mut self, name: &str, shape: Shape, samples: usize, how: String) {
        self.params.push(Measured {
            name: name.into(),
            value: Value::Delay(shape),
            samples,
            how,
        });
    }

    pub fn number(&mut self, name: &str, v: f64, samples: usize, how: String) {
        self.params.push(Measured {
            name: name.into(),
            value: Value::Number(v),
            samples,
            how,
        });
    }

    /// A delay measured as round trips of one call (`what` names it): their quantiles, or, with
    /// none answered, a line saying the parameter was not measured.
    pub fn round_trip(&mut self, name: &str, samples: &[f64], what: &str) {
        match Shape::of(samples) {
            Some(s) => self.delay(
                name,
                s,
                samples.len(),
                format!("quantiles of {} {what} round trips", samples.len()),
            ),
            None => self.left.push(format!("{name}: no {what} answered")),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Measured> {
        self.params.iter().find(|p| p.name == name)
    }
}

/// Awaits `f` without letting the thread sleep: it yields to the runtime (which polls the
/// network between) until `f` is done. A thread parked while its call is out takes a while to
/// wake when the answer comes: about 0.9 ms more a call on this project's machine with the
/// emulator's delays of a few ms (calibrating fixed delays, 2026-12-06), the client's time, not
/// the service's. Calibrating keeps one core busy while a call is out.
pub async fn hot<T, F: std::future::Future<Output = T>>(f: F) -> T {
    tokio::pin!(f);
    loop {
        tokio::select! {
            biased;
            out = &mut f => return out,
            _ = tokio::task::yield_now() => {}
        }
    }
}

/// Times one call, awaited [`hot`]: its result and how long it took, in ms.
pub async fn timed<T, F: std::future::Future<Output = T>>(f: F) -> (T, f64) {
    let t = Instant::now();
    let out = hot(f).await;
    (out, t.elapsed().as_secs_f64() * 1000.0)
}

/// Round trips of a call `n` times at most `per_sec` a second (`f64::INFINITY`: back to back);
/// failures are counted apart. Back to back is the steadier figure where the service allows it:
/// a client idle for tens of milliseconds between calls took about 0.7 ms longer a call on this
/// project's machine (the CPU's and the runtime's wake-up, not the service), which is why only
/// calls with a documented rate limit are paced.
pub async fn round_trips<T, E, F, Fut>(
    probe: &Probe,
    n: usize,
    per_sec: f64,
    mut call: F,
) -> (Vec<f64>, usize)
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let gap = if per_sec.is_finite() {
        Duration::from_secs_f64(1.0 / per_sec)
    } else {
        Duration::ZERO
    };
    let mut ok = Vec::with_capacity(n);
    let mut failed = 0;
    for i in 0..n {
        if probe.cancel.is_cancelled() {
            break;
        }
        let next = Instant::now() + gap;
        let (r, ms) = timed(call(i)).await;
        match r {
            Ok(_) => ok.push(ms),
            Err(_) => failed += 1,
        }
        let wait = next.saturating_duration_since(Instant::now());
        if !wait.is_zero() && !probe.pause(wait).await {
            break;
        }
    }
    (ok, failed)
}

/// Today's date, as the file records it (UTC, YYYY-MM-DD).
pub fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// One line of a calibration's plan: what a lab's probe creates or calls, at list price, and the
/// price keys it used.
pub struct PlanLine {
    pub what: String,
    pub usd: f64,
    pub keys: Vec<String>,
}

/// The longest a calibration's resources live, for pricing what is charged by the hour: a
/// probe takes about a minute; the margin covers a slow target.
pub const PRICED_FOR_HOURS: f64 = 10.0 / 60.0;
