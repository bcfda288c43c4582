//! Values with units, parsed and formatted in one place: durations and byte sizes (configuration
//! files and flags), milliseconds and counts the way the seed writes them (screens and reports).

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer, de};

/// Parses a duration such as `500ms`, `30s`, `5m`, `1h30m` or `24h`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text.trim())
        .map_err(|e| format!("'{text}' is not a duration ({e}); write e.g. 500ms, 30s, 5m or 24h"))
}

/// Formats a duration compactly and exactly, so it parses back to itself (limits files printed by
/// `--print-limits` reload as they were): `850ms`, `12.5s`, `5m`, `1h30m`, `1m30s500ms`.
pub fn format_duration(d: Duration) -> String {
    let (secs, nanos) = (d.as_secs(), u64::from(d.subsec_nanos()));
    if secs == 0 {
        return format!("{}ms", decimal(nanos, 1_000_000));
    }
    if secs < 60 {
        return format!("{}s", decimal(secs * 1_000_000_000 + nanos, 1_000_000_000));
    }
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 {
        out.push_str(&format!("{s}s"));
    }
    if nanos > 0 {
        out.push_str(&format!("{}ms", decimal(nanos, 1_000_000)));
    }
    out
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// `n / unit` written exactly: the whole part, then the fraction without trailing zeros.
fn decimal(n: u64, unit: u64) -> String {
    let (whole, frac) = (n / unit, n % unit);
    if frac == 0 {
        return whole.to_string();
    }
    let width = unit.to_string().len() - 1;
    let frac = format!("{frac:0width$}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

/// Parses a byte size: a plain number of bytes, or a number with one of the units
/// B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || format!("'{text}' is not a size; write e.g. 1024, 100KB, 10MB or 1MiB");
    let value: f64 = num.parse().map_err(|_| bad())?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" | "k" => 1e3,
        "mb" | "m" => 1e6,
        "gb" | "g" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(bad()),
    };
    let bytes = value * mult;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes.round() as u64)
}

/// Formats a byte count with the largest decimal unit that keeps it readable: `100 KB`, `10 MB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [(&str, f64); 3] = [("GB", 1e9), ("MB", 1e6), ("KB", 1e3)];
    for (name, size) in UNITS {
        if bytes as f64 >= size {
            return format!("{} {name}", trim_float(bytes as f64 / size));
        }
    }
    format!("{bytes} B")
}

/// A duration in a TOML file or flag, written as text with a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Dur(pub Duration);

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Dur;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration such as \"500ms\", \"30s\" or \"5m\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Dur, E> {
                parse_duration(v).map(Dur).map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

/// A byte size in a TOML file or flag: an integer number of bytes or text with a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub u64);

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Bytes;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as 1048576, \"100KB\" or \"1MiB\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Bytes, E> {
                u64::try_from(v)
                    .map(Bytes)
                    .map_err(|_| E::custom("a size cannot be negative"))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Bytes, E> {
                parse_bytes(v).map(Bytes).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// Milliseconds the way the seed writes them: `68.3 ms`, `1,364.7 ms`.
pub fn ms(us: u64) -> String {
    ms_f(us as f64 / 1000.0)
}

pub fn ms_f(ms: f64) -> String {
    let tenths = (ms * 10.0).round() as u64;
    format!("{}.{} ms", thousands(tenths / 10), tenths % 10)
}

pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// ours / seed, as `x1.03`.
pub fn ratio(ours: f64, seed: f64) -> String {
    if seed <= 0.0 {
        "-".into()
    } else {
        format!("x{:.2}", ours / seed)
    }
}

pub fn clock(secs: f64) -> String {
    let s = secs as u64;
    format!("{}:{:02}:{:02}", s / 3600, (s % 3600) / 60, s % 60)
}

pub fn fmt_rate(r: f64) -> String {
    if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

/// Compact milliseconds for axis labels: `850 ms`, `12.3 s`.
pub fn short_ms(us: u64) -> String {
    if us >= 10_000_000 {
        format!("{:.1} s", us as f64 / 1e6)
    } else {
        format!("{} ms", thousands((us as f64 / 1000.0).round() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_like_the_seed() {
        assert_eq!(ms(68_300), "68.3 ms");
        assert_eq!(ms(1_364_700), "1,364.7 ms");
        assert_eq!(ms(12_041_449), "12,041.4 ms");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(ratio(70.0, 68.3), "x1.02");
        assert_eq!(short_ms(1_234_000), "1,234 ms");
        assert_eq!(short_ms(12_340_000), "12.3 s");
    }

    #[test]
    fn sizes_and_durations_parse_and_print() {
        assert_eq!(parse_bytes("100KB"), Ok(100_000));
        assert_eq!(parse_bytes("1MiB"), Ok(1 << 20));
        assert_eq!(parse_bytes("1.5 MB"), Ok(1_500_000));
        assert!(
            parse_bytes("ten")
                .unwrap_err()
                .contains("'ten' is not a size")
        );
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert!(parse_duration("5 parsecs").is_err());
        assert_eq!(format_bytes(10_000_000), "10 MB");
        assert_eq!(format_bytes(1_000_000_000), "1 GB");
        assert_eq!(format_bytes(100), "100 B");
        assert_eq!(format_duration(Duration::from_millis(850)), "850ms");
        assert_eq!(format_duration(Duration::from_millis(12_500)), "12.5s");
        assert_eq!(format_duration(Duration::from_secs(5400)), "1h30m");
    }
}

/// A parser's multi-line message as one line.
pub fn one_line(text: &str) -> String {
    text.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A TOML error as `line L, column C: message`, for errors that name the file before it.
pub fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let message = one_line(e.message());
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => message,
    }
}

#[cfg(test)]
mod toml_error_tests {
    #[test]
    fn toml_errors_name_line_and_column() {
        let text = "a = 1\nb = \n";
        let e = text.parse::<toml::Table>().unwrap_err();
        let msg = super::toml_error(text, &e);
        assert!(msg.starts_with("line 2, column "), "{msg}");
        assert!(!msg.contains('\n'));
    }
}

/// The line (from 1) of a byte offset in a file's text, for errors that name the line.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}
