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
                let hist = decode(&mut decoder, &b64).map_err(|e| {
                    format!("interval {} is not a histogram ({e})", intervals.len() + 1)
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

/// An encoded histogram's cookies: HdrHistogram's V2 form, and V2 compressed with zlib.
const V2: u32 = 0x1c84_9313;
const V2_DEFLATE: u32 = 0x1c84_9314;
/// The V2 form's header: cookie, payload length, normalizing offset, significant digits, lowest
/// and highest trackable values, integer-to-double ratio.
const V2_HEADER: usize = 40;
/// The most counts an interval's histogram may hold (latlab's own, 1 µs to an hour at three
/// digits, hold about 23,000): a larger one is refused before it is made.
const MAX_COUNTS: u64 = 1 << 20;
/// The most a histogram's payload may hold once inflated: its counts, at most 9 bytes each.
const MAX_PAYLOAD: usize = (MAX_COUNTS as usize) * 9;

/// Decodes one interval's histogram, its declared sizes checked first: a payload longer than
/// what is there, or than [`MAX_PAYLOAD`], and bounds that would make more than
/// [`MAX_COUNTS`] counts, are errors, so a crafted line costs no more memory than it is long
/// (HdrHistogram's deserializer sizes its buffer by the declared length, up to 4 GiB).
pub fn decode(decoder: &mut Deserializer, bytes: &[u8]) -> Result<Histogram<u64>, String> {
    let be32 = |b: &[u8], at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
    };
    let inner: std::borrow::Cow<[u8]> = match be32(bytes, 0) {
        Some(V2) => bytes.into(),
        Some(V2_DEFLATE) => {
            let declared = be32(bytes, 4).ok_or("a compressed histogram without its length")?;
            let body = bytes
                .get(8..8 + declared as usize)
                .ok_or("a compressed histogram shorter than it says")?;
            let mut out = Vec::new();
            let limit = (V2_HEADER + MAX_PAYLOAD) as u64 + 1;
            std::io::Read::read_to_end(
                &mut std::io::Read::take(flate2::read::ZlibDecoder::new(body), limit),
                &mut out,
            )
            .map_err(|e| format!("a compressed histogram that does not inflate: {e}"))?;
            if out.len() as u64 >= limit {
                return Err(format!("a histogram over {MAX_PAYLOAD} bytes inflated"));
            }
            out.into()
        }
        _ => return Err("not an HdrHistogram V2 histogram".into()),
    };
    if be32(&inner, 0) != Some(V2) || inner.len() < V2_HEADER {
        return Err("not an HdrHistogram V2 histogram".into());
    }
    let payload = be32(&inner, 4).unwrap_or(u32::MAX) as usize;
    if payload > MAX_PAYLOAD || payload > inner.len() - V2_HEADER {
        return Err(format!(
            "its payload says {payload} bytes; {} are there",
            inner.len() - V2_HEADER
        ));
    }
    let digits = be32(&inner, 12).unwrap_or(u32::MAX);
    let u64_at = |at: usize| u64::from_be_bytes(inner[at..at + 8].try_into().unwrap_or([0; 8]));
    let (low, high) = (u64_at(16), u64_at(24));
    if counts(low, high, digits).is_none_or(|n| n > MAX_COUNTS) {
        return Err(format!(
            "its bounds ({low} to {high} at {digits} digits) make over {MAX_COUNTS} counts"
        ));
    }
    decoder
        .deserialize(&mut Cursor::new(inner.as_ref()))
        .map_err(|e| format!("{e:?}"))
}

/// How many counts a histogram of these bounds holds (as HdrHistogram sizes it); None for
/// bounds it refuses.
fn counts(low: u64, high: u64, digits: u32) -> Option<u64> {
    if digits > 5 || low < 1 || high < low.saturating_mul(2) {
        return None;
    }
    let largest = 2 * 10u64.pow(digits);
    let sub_bucket_magnitude = (largest as f64).log2().ceil() as u32;
    let sub_bucket_count = 1u64 << sub_bucket_magnitude;
    let unit = 63 - low.leading_zeros();
    let mut smallest_untrackable = sub_bucket_count.checked_shl(unit)?;
    let mut buckets = 1u64;
    while smallest_untrackable <= high {
        if smallest_untrackable > u64::MAX / 2 {
            buckets += 1;
            break;
        }
        smallest_untrackable <<= 1;
        buckets += 1;
    }
    Some((buckets + 1) * (sub_bucket_count / 2))
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

    /// A line that declares a payload of gigabytes, or bounds of millions of counts, is
    /// refused before anything is sized by it.
    #[test]
    fn a_histogram_that_declares_more_than_it_holds_is_refused() {
        let mut d = Deserializer::new();
        let mut v2 = Vec::new();
        v2.extend(V2.to_be_bytes());
        v2.extend((u32::MAX - 8).to_be_bytes()); // payload: 4 GiB, says the header
        v2.extend(0u32.to_be_bytes());
        v2.extend(3u32.to_be_bytes());
        v2.extend(1u64.to_be_bytes());
        v2.extend(3_600_000_000u64.to_be_bytes());
        v2.extend(1f64.to_be_bytes());
        v2.extend([0u8; 16]);
        let e = decode(&mut d, &v2).unwrap_err();
        assert!(
            e.starts_with("its payload says 4294967287 bytes; 16 are there"),
            "{e}"
        );
        // Bounds that would make 6 million counts.
        let mut wide = v2.clone();
        wide[4..8].copy_from_slice(&16u32.to_be_bytes());
        wide[12..16].copy_from_slice(&5u32.to_be_bytes());
        wide[24..32].copy_from_slice(&u64::MAX.to_be_bytes());
        let e = decode(&mut d, &wide).unwrap_err();
        assert!(e.contains("make over 1048576 counts"), "{e}");
        // A compressed one that inflates past the bound.
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut z, &vec![0u8; MAX_PAYLOAD + 100]).unwrap();
        let z = z.finish().unwrap();
        let mut c = Vec::new();
        c.extend(V2_DEFLATE.to_be_bytes());
        c.extend((z.len() as u32).to_be_bytes());
        c.extend(&z);
        assert!(decode(&mut d, &c).unwrap_err().contains("inflated"));
        // latlab's own histograms read back.
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        h.record(1234).unwrap();
        let mut bytes = Vec::new();
        hdrhistogram::serialization::Serializer::serialize(
            &mut V2DeflateSerializer::new(),
            &h,
            &mut bytes,
        )
        .unwrap();
        assert_eq!(decode(&mut d, &bytes).unwrap().len(), 1);
        assert!(counts(1, 3_600_000_000, 3).unwrap() < 30_000);
    }
}
