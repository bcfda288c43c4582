//! A recording's interval logs read back: per series, its intervals with their absolute time,
//! and what was cut when the run was killed mid-write (a log is read up to its last whole line).

use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};

/// One interval of a series: when it started (milliseconds since the epoch) and its values (µs).
#[derive(Clone, Debug)]
pub struct Interval {
    pub start_ms: i64,
    pub hist: Histogram<u64>,
}

/// One series' log, read.
#[derive(Clone, Debug)]
pub struct SeriesLog {
    /// The series' name (`kinesis.Lambda EFO.arrival_to_receive`), from the log's opening
    /// comment; its tag when the comment is missing.
    pub name: String,
    pub intervals: Vec<Interval>,
}

/// Every series' log in `DIR/hlog`, by file stem (the slug of the series' name), and a line for
/// each log that was cut short.
pub fn read_dir(dir: &Path) -> anyhow::Result<(BTreeMap<String, SeriesLog>, Vec<String>)> {
    let hlog = dir.join("hlog");
    let mut out = BTreeMap::new();
    let mut cuts = Vec::new();
    if !hlog.is_dir() {
        anyhow::bail!(
            "{}: the recording has no hlog directory (its interval logs); it is not a whole recording",
            dir.display()
        );
    }
    let mut files: Vec<_> = std::fs::read_dir(&hlog)
        .with_context(|| format!("cannot read {}", hlog.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "hlog"))
        .collect();
    files.sort();
    for path in files {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let bytes =
            std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let (log, cut) =
            parse(&bytes, &stem).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        if let Some(cut) = cut {
            cuts.push(format!(
                "{} ends in a cut line ({cut} bytes after its last whole interval, not counted); read its {} whole intervals",
                path.strip_prefix(dir).unwrap_or(&path).display(),
                log.intervals.len()
            ));
        }
        out.insert(stem, log);
    }
    Ok((out, cuts))
}

/// Parses one log: its whole lines (a last line without its newline was cut mid-write, and its
/// length is returned), the intervals placed in absolute time by the log's BaseTime (or
/// StartTime), and each histogram decoded.
pub fn parse(bytes: &[u8], stem: &str) -> Result<(SeriesLog, Option<usize>), String> {
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let cut = (whole < bytes.len()).then_some(bytes.len() - whole);
    let text = &bytes[..whole];
    let name = std::str::from_utf8(text)
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("#latlab: "))
                .and_then(|l| l.rsplit_once(", values in microseconds"))
                .map(|(name, _)| name.to_string())
        })
        .unwrap_or_else(|| stem.to_string());
    let (mut base, mut start) = (None, None);
    let mut decoder = Deserializer::new();
    let mut intervals = Vec::new();
    for (n, entry) in IntervalLogIterator::new(text).enumerate() {
        let entry = entry
            .map_err(|e| format!("not an HdrHistogram interval log (entry {}: {e:?})", n + 1))?;
        match entry {
            LogEntry::BaseTime(t) => base = Some(t),
            LogEntry::StartTime(t) => start = Some(t),
            LogEntry::Interval(i) => {
                let b64 = base64::engine::general_purpose::STANDARD
                    .decode(i.encoded_histogram())
                    .map_err(|e| format!("interval {} is not base64 ({e})", intervals.len() + 1))?;
                let hist: Histogram<u64> =
                    decoder.deserialize(&mut Cursor::new(b64)).map_err(|e| {
                        format!(
                            "interval {} is not a histogram ({e:?})",
                            intervals.len() + 1
                        )
                    })?;
                // BaseTime makes timestamps offsets; with only a StartTime, timestamps a year or
                // more below it are offsets too (the HdrHistogram readers' rule); else absolute.
                const YEAR: Duration = Duration::from_secs(365 * 24 * 3600);
                let ts = i.start_timestamp();
                let offset = match (base, start) {
                    (Some(b), _) => b,
                    (None, Some(s)) if ts + YEAR < s => s,
                    _ => Duration::ZERO,
                };
                intervals.push(Interval {
                    start_ms: (offset + ts).as_millis() as i64,
                    hist,
                });
            }
        }
    }
    Ok((SeriesLog { name, intervals }, cut))
}

/// Writes a series' log as latlab's recorder does: V2 compressed histograms, one interval a
/// second tagged with the slug, timestamps from `base_ms` (a whole second).
pub fn write(
    path: &Path,
    name: &str,
    tag: &str,
    base_ms: i64,
    note: &str,
    intervals: &[Interval],
) -> anyhow::Result<()> {
    let mut out = Vec::new();
    let base = std::time::UNIX_EPOCH + Duration::from_millis(base_ms.max(0) as u64);
    let mut serializer = V2DeflateSerializer::new();
    {
        let mut log = IntervalLogWriterBuilder::new()
            .add_comment(&format!("latlab: {name}, values in microseconds"))
            .add_comment(note)
            .with_start_time(base)
            .with_base_time(base)
            .with_max_value_divisor(1000.0)
            .begin_log_with(&mut out, &mut serializer)?;
        let tag = Tag::new(tag)
            .ok_or_else(|| anyhow::anyhow!("'{tag}' cannot be an interval log's tag"))?;
        for i in intervals {
            let at = Duration::from_millis((i.start_ms - base_ms).max(0) as u64);
            log.write_histogram(&i.hist, at, Duration::from_secs(1), Some(tag))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
    }
    std::fs::write(path, out).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(start_ms: i64, values: &[u64]) -> Interval {
        let mut hist = Histogram::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for &v in values {
            hist.record(v).unwrap();
        }
        Interval { start_ms, hist }
    }

    #[test]
    fn a_log_written_reads_back_and_a_cut_line_is_measured_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.hlog");
        let base = 1_700_000_000_000;
        let intervals = vec![
            interval(base, &[100, 200]),
            interval(base + 1000, &[300]),
            interval(base + 2000, &[400, 500, 600]),
        ];
        write(
            &path,
            "redis.offset.lag",
            "redis.offset.lag",
            base,
            "test",
            &intervals,
        )
        .unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let (log, cut) = parse(&bytes, "stem").unwrap();
        assert_eq!(log.name, "redis.offset.lag");
        assert_eq!(cut, None);
        let starts: Vec<i64> = log.intervals.iter().map(|i| i.start_ms).collect();
        assert_eq!(starts, vec![base, base + 1000, base + 2000]);
        let counts: Vec<u64> = log.intervals.iter().map(|i| i.hist.len()).collect();
        assert_eq!(counts, vec![2, 1, 3]);
        // Cut 10 bytes into its last line: two whole intervals, and how much was cut.
        let last_line = bytes[..bytes.len() - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .unwrap()
            + 1;
        let (log, cut) = parse(&bytes[..last_line + 10], "stem").unwrap();
        assert_eq!(log.intervals.len(), 2);
        assert_eq!(cut, Some(10));
        // Not a log at all.
        let err = parse(b"hello\nthis is not,a log\n", "x").unwrap_err();
        assert!(err.contains("not an HdrHistogram interval log"), "{err}");
    }
}
