//! What latlab's own process holds while it runs: resident memory, open file descriptors and
//! tokio tasks, sampled every 10 seconds, so a long run (the soak) shows whether any of them grows.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// One sample of the process.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProcessSample {
    pub at_secs: f64,
    /// Resident set size, bytes (None where the platform does not say).
    pub rss_bytes: Option<u64>,
    pub open_fds: Option<u64>,
    /// Tasks alive on the tokio runtime.
    pub tasks: u64,
}

/// The samples a report shows: at the start, at ten minutes (once the run got there), the
/// latest, and the highest resident size seen.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProcessSnapshot {
    pub start: ProcessSample,
    pub at_10_min: Option<ProcessSample>,
    pub last: ProcessSample,
    pub peak_rss_bytes: Option<u64>,
}

impl ProcessSnapshot {
    /// Resident memory's growth from ten minutes to the last sample, in percent.
    pub fn rss_growth_after_10_min(&self) -> Option<f64> {
        let a = self.at_10_min?.rss_bytes? as f64;
        let b = self.last.rss_bytes? as f64;
        (a > 0.0).then(|| (b - a) / a * 100.0)
    }
}

/// When the ten-minute sample is taken.
const SETTLED: Duration = Duration::from_secs(600);

/// How often the process is sampled.
pub const EVERY: Duration = Duration::from_secs(10);

/// Samples the process on its own task until dropped.
pub struct ProcessWatch {
    start: Instant,
    state: Arc<Mutex<ProcessSnapshot>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ProcessWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ProcessWatch {
    /// Starts sampling; times are from `start`.
    pub fn start(start: Instant) -> ProcessWatch {
        let first = sample(start);
        let state = Arc::new(Mutex::new(ProcessSnapshot {
            start: first,
            at_10_min: None,
            last: first,
            peak_rss_bytes: first.rss_bytes,
        }));
        let s = state.clone();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(EVERY);
            tick.tick().await;
            loop {
                tick.tick().await;
                record(&s, sample(start));
            }
        });
        ProcessWatch { start, state, task }
    }

    /// Takes a sample now (the run's end, before its probes stop).
    pub fn sample_now(&self) {
        record(&self.state, sample(self.start));
    }

    pub fn snapshot(&self) -> ProcessSnapshot {
        *self.state.lock()
    }
}

fn record(state: &Mutex<ProcessSnapshot>, s: ProcessSample) {
    let mut st = state.lock();
    if st.at_10_min.is_none() && s.at_secs >= SETTLED.as_secs_f64() {
        st.at_10_min = Some(s);
    }
    st.last = s;
    st.peak_rss_bytes = match (st.peak_rss_bytes, s.rss_bytes) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
}

/// The process now.
pub fn sample(start: Instant) -> ProcessSample {
    ProcessSample {
        at_secs: start.elapsed().as_secs_f64(),
        rss_bytes: rss_bytes(),
        open_fds: open_fds(),
        tasks: tokio::runtime::Handle::try_current()
            .map(|h| h.metrics().num_alive_tasks() as u64)
            .unwrap_or(0),
    }
}

/// `/proc/self/statm`'s resident pages times the page size.
fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf reads a constant of the system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    (page > 0).then(|| pages * page as u64)
}

fn open_fds() -> Option<u64> {
    Some(std::fs::read_dir("/proc/self/fd").ok()?.count() as u64)
}

/// Opens the live lab's log for appending: created if absent (its directory too, so that a
/// configured `~/.cache/latlab/latlab.log` works on a fresh machine), never truncated.
pub fn open_log(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_reads_the_process() {
        let s = sample(Instant::now());
        assert!(s.rss_bytes.unwrap() > 1_000_000, "{s:?}");
        assert!(s.open_fds.unwrap() >= 3, "{s:?}");
    }

    #[test]
    fn growth_is_measured_from_the_ten_minute_sample() {
        let state = Mutex::new(ProcessSnapshot::default());
        let at = |secs: f64, rss: u64| ProcessSample {
            at_secs: secs,
            rss_bytes: Some(rss),
            open_fds: Some(10),
            tasks: 5,
        };
        record(&state, at(10.0, 100));
        record(&state, at(600.0, 200));
        record(&state, at(610.0, 300));
        record(&state, at(3600.0, 210));
        let s = *state.lock();
        assert_eq!(s.at_10_min.unwrap().rss_bytes, Some(200));
        assert_eq!(s.peak_rss_bytes, Some(300));
        assert!((s.rss_growth_after_10_min().unwrap() - 5.0).abs() < 1e-9);
    }
}
