//! Values with units, parsed and formatted in one place: durations and byte sizes (configuration
//! files and flags), milliseconds and counts the way the seed writes them (screens and reports).

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer, de};

/// The longest duration any flag or file takes: 365 days. Past it a run's deadline or a fault's
/// schedule would overflow the clock (and no run of latlab's is meant to last longer); a field
/// with a shorter limit of its own says so where it is checked.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// The largest size any flag or file takes: 1 TiB. A field with a smaller limit of its own (a
/// record's payload, an object's size) says so where it is checked.
pub const MAX_BYTES: u64 = 1 << 40;

/// Parses a duration such as `500ms`, `30s`, `5m`, `1h30m` or `24h`, at most [`MAX_DURATION`].
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(text.trim()).map_err(|e| {
        format!("'{text}' is not a duration ({e}); write e.g. 500ms, 30s, 5m or 24h")
    })?;
    if d > MAX_DURATION {
        return Err(format!(
            "'{text}' is longer than the longest duration latlab takes, 8760h (365 days)"
        ));
    }
    Ok(d)
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

/// Whole seconds read from a report or a recording, as `format_duration` writes them; a figure no
/// duration can hold (negative, not a number, past the clock's range) as `?`.
pub fn format_secs(secs: f64) -> String {
    Duration::try_from_secs_f64(secs.round()).map_or_else(|_| "?".into(), format_duration)
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
/// B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024); at most
/// [`MAX_BYTES`].
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
        "tb" | "t" => 1e12,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(bad()),
    };
    let bytes = value * mult;
    if !bytes.is_finite() || bytes < 0.0 {
        return Err(bad());
    }
    if bytes.round() > MAX_BYTES as f64 {
        return Err(format!(
            "'{text}' is larger than the largest size latlab takes, 1 TiB"
        ));
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
                let v = u64::try_from(v).map_err(|_| E::custom("a size cannot be negative"))?;
                self.visit_u64(v)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Bytes, E> {
                if v > MAX_BYTES {
                    return Err(E::custom(format!(
                        "{v} bytes is larger than the largest size latlab takes, 1 TiB"
                    )));
                }
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
    let whole = |x: f64| {
        if x.is_finite() && x.abs() < 1e18 {
            let s = thousands(x.abs().trunc() as u64);
            if x < 0.0 { format!("-{s}") } else { s }
        } else {
            format!("{x:.0}")
        }
    };
    if r.fract() == 0.0 {
        whole(r)
    } else {
        let tenths = (r.abs() * 10.0).round();
        let sign = if r < 0.0 { "-" } else { "" };
        format!(
            "{sign}{}.{}",
            whole((tenths / 10.0).trunc()),
            tenths as u64 % 10
        )
    }
}

/// `1 record`, `5,000 records`: a count with its noun in the number it takes.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
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

    /// The fuzz target's seeds (`fuzz/seeds/durations_sizes/`: 12 bytes of numbers, then the
    /// text) are the values that once reached a panic: each is refused in one line.
    #[test]
    fn durations_and_sizes_past_the_maxima_are_refused() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fuzz/seeds/durations_sizes"
        );
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            let text = std::str::from_utf8(&bytes[12..]).unwrap();
            for e in [
                parse_duration(text).unwrap_err(),
                parse_bytes(text).unwrap_err(),
            ] {
                assert!(!e.contains('\n'), "{e}");
                assert!(e.contains(text), "{e}");
            }
            seen += 1;
        }
        assert!(seen >= 8, "{seen} seeds");
        assert_eq!(
            parse_duration("300000000000y").unwrap_err(),
            "'300000000000y' is longer than the longest duration latlab takes, 8760h (365 days)"
        );
        assert_eq!(parse_duration("8760h"), Ok(MAX_DURATION));
        assert_eq!(parse_bytes("1TiB"), Ok(MAX_BYTES));
        assert_eq!(
            parse_bytes("2TiB").unwrap_err(),
            "'2TiB' is larger than the largest size latlab takes, 1 TiB"
        );
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

/// A TOML error as `line L, column C: message`, for errors that name the file before it; serde's
/// words for a value of the wrong type (`invalid type: string "fast", expected f64`) said in a
/// user's (`"fast" is not a number`).
pub fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let said = one_line(e.message());
    let message = plain_type_error(&said);
    // A value of the wrong type: the message names no field, so the key it belongs to is named.
    let typed = message != said;
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let start = before.rfind('\n').map_or(0, |i| i + 1);
            let column = before.len() - start + 1;
            // The key the value belongs to, when the error points at a value: `rate: ...`.
            let key = typed
                .then(|| before[start..].split_once('='))
                .flatten()
                .map(|(k, _)| k.trim())
                .filter(|k| {
                    !k.is_empty()
                        && k.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
                });
            match key {
                Some(key) => format!("line {line}, column {column}: {key}: {message}"),
                None => format!("line {line}, column {column}: {message}"),
            }
        }
        None => message,
    }
}

#[cfg(test)]
mod toml_error_tests {
    /// `5000 rec/s`, `asks 1 records/s`, `1 tries failed`: figures with separators, nouns in
    /// the number their count takes.
    #[test]
    fn rates_and_counts_read_as_written() {
        assert_eq!(super::fmt_rate(5000.0), "5,000");
        assert_eq!(super::fmt_rate(12345.6), "12,345.6");
        assert_eq!(super::fmt_rate(0.5), "0.5");
        assert_eq!(super::fmt_rate(4.96), "5.0");
        assert_eq!(super::plural(1, "try", "tries"), "1 try");
        assert_eq!(super::plural(1200, "try", "tries"), "1,200 tries");
    }

    #[test]
    fn type_errors_are_said_in_a_users_words() {
        let cases = [
            ("rate = \"fast\"", "\"fast\" is not a number"),
            ("shards = 1.5", "1.5 is not a whole number of 0 or more"),
            (
                "shards = 99999999999999999999",
                "99999999999999999999 is not a whole number of 0 or more",
            ),
            ("shards = -1", "-1 is not a whole number of 0 or more"),
        ];
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct T {
            rate: Option<f64>,
            shards: Option<u32>,
        }
        for (text, said) in cases {
            let e = toml::from_str::<T>(text).unwrap_err();
            let msg = super::toml_error(text, &e);
            assert!(msg.ends_with(said), "{text}: {msg}");
            assert!(!msg.contains("f64") && !msg.contains("u32") && !msg.contains("i128"));
        }
    }

    #[test]
    fn a_key_is_found_by_its_path() {
        let text = "a = 1\n[k]\ns = 2\n[k.p]\nrate = 3\n[[k.c]]\nn = 1\n[[k.c]]\nn = 2\n";
        assert_eq!(super::key_line(text, "a"), Some(1));
        assert_eq!(super::key_line(text, "k.s"), Some(3));
        assert_eq!(super::key_line(text, "k.p.rate"), Some(5));
        assert_eq!(super::key_line(text, "k.c[1].n"), Some(9));
        assert_eq!(super::key_line(text, "k.c[1]"), Some(8), "its [[k.c]] line");
        assert_eq!(super::key_line(text, "k.missing"), None);
    }

    #[test]
    fn toml_errors_name_line_and_column() {
        let text = "a = 1\nb = \n";
        let e = text.parse::<toml::Table>().unwrap_err();
        let msg = super::toml_error(text, &e);
        assert!(msg.starts_with("line 2, column "), "{msg}");
        assert!(!msg.contains('\n'));
    }
}

/// serde's `invalid type: FOUND, expected WANTED` and `invalid value: ...` in a user's words:
/// what was found, and what would be valid, with no Rust type names (`f64`, `u32`, `as i128`).
pub fn plain_type_error(message: &str) -> String {
    let rest = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "));
    let Some((found, wanted)) = rest.and_then(|r| r.split_once(", expected ")) else {
        return message.to_string();
    };
    let found = found.replace(" as i128", "");
    let found = match found.split_once(' ') {
        // `string "fast"`, `integer `-1``, `floating point `1.5``: the value as written.
        Some((_, v)) if found.starts_with("string ") => v.to_string(),
        Some(_) => found
            .rsplit_once('`')
            .and_then(|(a, _)| a.rsplit_once('`'))
            .map_or(found.clone(), |(_, v)| v.to_string()),
        None => found.clone(),
    };
    let wanted = match wanted.trim() {
        "f64" | "f32" => "a number".to_string(),
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number of 0 or more".to_string(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".to_string(),
        "a boolean" | "bool" => "true or false".to_string(),
        "a string" | "a borrowed string" => "text in quotes".to_string(),
        other => other.to_string(),
    };
    format!("{found} is not {wanted}")
}

/// The line (from 1) of a key in a TOML file's text, by its dotted path (`kinesis.producer.rate`,
/// `kinesis.consumers[1].count`); None when the file does not hold it (or does not parse).
pub fn key_line(text: &str, path: &str) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let root = DeTable::parse(text).ok()?;
    let mut table: &DeTable = root.get_ref();
    let parts: Vec<&str> = path.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let (name, index) = match part.split_once('[') {
            Some((n, rest)) => (n, Some(rest.trim_end_matches(']').parse::<usize>().ok()?)),
            None => (*part, None),
        };
        let (key, value) = table.iter().find(|(k, _)| k.get_ref().as_ref() == name)?;
        let mut at = key.span().start;
        let mut value = value.get_ref();
        if let Some(ix) = index {
            let DeValue::Array(items) = value else {
                return None;
            };
            let item = items.get(ix)?;
            at = item.span().start;
            value = item.get_ref();
        }
        if i + 1 == parts.len() {
            return Some(line_of(text, at));
        }
        let DeValue::Table(t) = value else {
            return None;
        };
        table = t;
    }
    None
}

/// The line (from 1) of a byte offset in a file's text, for errors that name the line.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}
