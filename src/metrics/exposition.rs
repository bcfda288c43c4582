//! The exposition: metric families written in the Prometheus text format 0.0.4 or in OpenMetrics
//! 1.0, and latency histograms turned into Prometheus buckets.
//!
//! The two forms differ in three places only: the content type, a counter's family name (the
//! text format names the family as its samples, `foo_total`; OpenMetrics names it `foo` and its
//! samples `foo_total`), and OpenMetrics' closing `# EOF` line.

use hdrhistogram::Histogram;
use std::borrow::Cow;

/// Which text form a scrape gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `text/plain; version=0.0.4`, what every Prometheus reads.
    Prometheus,
    /// `application/openmetrics-text; version=1.0.0`, when the Accept header asks for it.
    OpenMetrics,
}

impl Format {
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }

    /// The form an Accept header asks for: OpenMetrics 1.0 when it names
    /// `application/openmetrics-text` (version 1.0.0 or none) at least as high as it names the
    /// text format (`text/plain`, `text/*`, `*/*`); the text format otherwise, and with no header.
    pub fn negotiate(accept: Option<&str>) -> Format {
        let Some(accept) = accept else {
            return Format::Prometheus;
        };
        let (mut openmetrics, mut text) = (0.0f64, 0.0f64);
        for range in accept.split(',') {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or_default().to_ascii_lowercase();
            let (mut q, mut version) = (1.0f64, None);
            for p in parts {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                match k.trim().to_ascii_lowercase().as_str() {
                    "q" => q = v.trim().parse().unwrap_or(0.0),
                    "version" => version = Some(v.trim().trim_matches('"').to_string()),
                    _ => {}
                }
            }
            if !(0.0..=1.0).contains(&q) {
                continue;
            }
            match media.as_str() {
                "application/openmetrics-text"
                    if version.as_deref().is_none_or(|v| v == "1.0.0") =>
                {
                    openmetrics = openmetrics.max(q)
                }
                "text/plain" if version.as_deref().is_none_or(|v| v == "0.0.4") => {
                    text = text.max(q)
                }
                "text/*" | "*/*" => text = text.max(q),
                _ => {}
            }
        }
        if openmetrics > 0.0 && openmetrics >= text {
            Format::OpenMetrics
        } else {
            Format::Prometheus
        }
    }
}

/// The upper bounds of the latency histograms' buckets, in microseconds and as the `le` label
/// writes them in seconds: a log scale (1, 2.5, 5 a decade) from 0.25 ms to 10 s, then 30 s and
/// 60 s; everything above is in `+Inf` only.
pub const BOUNDS: [(u64, &str); 18] = [
    (250, "0.00025"),
    (500, "0.0005"),
    (1_000, "0.001"),
    (2_500, "0.0025"),
    (5_000, "0.005"),
    (10_000, "0.01"),
    (25_000, "0.025"),
    (50_000, "0.05"),
    (100_000, "0.1"),
    (250_000, "0.25"),
    (500_000, "0.5"),
    (1_000_000, "1.0"),
    (2_500_000, "2.5"),
    (5_000_000, "5.0"),
    (10_000_000, "10.0"),
    (30_000_000, "30.0"),
    (60_000_000, "60.0"),
    (u64::MAX, "+Inf"),
];

/// A histogram as Prometheus reads it: cumulative counts at each of [`BOUNDS`], the count and
/// the sum in seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Buckets {
    pub cumulative: [u64; BOUNDS.len()],
    pub count: u64,
    pub sum_seconds: f64,
}

impl Buckets {
    /// From an HdrHistogram of microseconds. A value counts at a bound when the whole of its
    /// HdrHistogram bucket lies at or under it (so a count never includes a value that may exceed
    /// its bound; a value within the histogram's precision above a bound counts at the next one).
    /// The sum adds each bucket's middle value times its count: the sum to the histogram's
    /// precision (3 significant digits), as its mean is.
    pub fn of(h: &Histogram<u64>) -> Buckets {
        let mut per = [0u64; BOUNDS.len()];
        let mut sum_us = 0.0f64;
        for v in h.iter_recorded() {
            let top = h.highest_equivalent(v.value_iterated_to());
            let n = v.count_at_value();
            per[BOUNDS.partition_point(|(us, _)| *us < top)] += n;
            sum_us += h.median_equivalent(v.value_iterated_to()) as f64 * n as f64;
        }
        let mut cumulative = [0u64; BOUNDS.len()];
        let mut running = 0;
        for (c, n) in cumulative.iter_mut().zip(per) {
            running += n;
            *c = running;
        }
        Buckets {
            cumulative,
            count: h.len(),
            sum_seconds: sum_us / 1e6,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Counter,
    Gauge,
    Histogram,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Count(u64),
    Number(f64),
    Histogram(Box<Buckets>),
}

impl Value {
    /// A latency histogram (microseconds) as Prometheus buckets of seconds.
    pub fn histogram(h: &Histogram<u64>) -> Value {
        Value::Histogram(Box::new(Buckets::of(h)))
    }
}

/// One series of a family: its labels (names in the family's order) and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub labels: Vec<(&'static str, String)>,
    pub value: Value,
}

/// A metric family. `name` is the OpenMetrics family name: a counter's without `_total`.
#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    pub name: Cow<'static, str>,
    pub help: Cow<'static, str>,
    pub kind: Type,
    pub samples: Vec<Sample>,
}

impl Family {
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        kind: Type,
        help: impl Into<Cow<'static, str>>,
    ) -> Family {
        Family {
            name: name.into(),
            help: help.into(),
            kind,
            samples: Vec::new(),
        }
    }

    pub fn push(&mut self, labels: Vec<(&'static str, String)>, value: Value) {
        self.samples.push(Sample { labels, value });
    }
}

/// Writes the families. A family without samples is left out; a sample whose labels repeat an
/// earlier one's in its family, or whose value is not a finite number, is left out too (a
/// scrape with either would be refused whole).
pub fn render(families: &[Family], format: Format) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(16 * 1024);
    for f in families.iter().filter(|f| !f.samples.is_empty()) {
        let sample_name = match f.kind {
            Type::Counter => format!("{}_total", f.name),
            _ => f.name.to_string(),
        };
        let family_name = match format {
            Format::Prometheus => sample_name.as_str(),
            Format::OpenMetrics => &f.name,
        };
        let kind = match f.kind {
            Type::Counter => "counter",
            Type::Gauge => "gauge",
            Type::Histogram => "histogram",
        };
        let _ = writeln!(out, "# HELP {family_name} {}", escape_help(&f.help, format));
        let _ = writeln!(out, "# TYPE {family_name} {kind}");
        let mut seen = std::collections::HashSet::new();
        for s in &f.samples {
            if !seen.insert(&s.labels) {
                continue;
            }
            match &s.value {
                Value::Count(n) => {
                    let _ = writeln!(out, "{sample_name}{} {n}", labels(&s.labels, None));
                }
                Value::Number(x) if x.is_finite() => {
                    let _ = writeln!(out, "{sample_name}{} {x}", labels(&s.labels, None));
                }
                Value::Number(_) => {}
                Value::Histogram(b) => {
                    for ((_, le), n) in BOUNDS.iter().zip(b.cumulative) {
                        let _ = writeln!(
                            out,
                            "{sample_name}_bucket{} {n}",
                            labels(&s.labels, Some(le))
                        );
                    }
                    let l = labels(&s.labels, None);
                    let _ = writeln!(out, "{sample_name}_sum{l} {}", b.sum_seconds);
                    let _ = writeln!(out, "{sample_name}_count{l} {}", b.count);
                }
            }
        }
    }
    if format == Format::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

/// `{a="x",b="y"}` (with `le` last for a bucket), or nothing without labels.
fn labels(labels: &[(&'static str, String)], le: Option<&str>) -> String {
    let mut parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
        .collect();
    if let Some(le) = le {
        parts.push(format!("le=\"{le}\""));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", parts.join(","))
    }
}

/// A label value: backslash, double quote and newline escaped (both forms).
pub fn escape_label(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A HELP text: backslash and newline escaped, and in OpenMetrics the double quote too.
fn escape_help(v: &str, format: Format) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' if format == Format::OpenMetrics => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(values_us: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for v in values_us {
            h.record(*v).unwrap();
        }
        h
    }

    #[test]
    fn buckets_are_cumulative_counts_at_each_bound() {
        // 0.1 ms, 1 ms (exactly a bound), 3 ms, 7 s, and 2 minutes (above the last bound).
        let b = Buckets::of(&hist(&[100, 1_000, 3_000, 7_000_000, 120_000_000]));
        let at = |le: &str| b.cumulative[BOUNDS.iter().position(|(_, l)| *l == le).unwrap()];
        assert_eq!(at("0.00025"), 1);
        assert_eq!(at("0.001"), 2);
        assert_eq!(at("0.0025"), 2);
        assert_eq!(at("0.005"), 3);
        assert_eq!(at("5.0"), 3);
        assert_eq!(at("10.0"), 4);
        assert_eq!(at("60.0"), 4);
        assert_eq!(at("+Inf"), 5);
        assert_eq!(b.count, 5);
        let want = (100 + 1_000 + 3_000 + 7_000_000 + 120_000_000) as f64 / 1e6;
        assert!((b.sum_seconds - want).abs() / want < 0.001, "{b:?}");
        assert_eq!(Buckets::of(&hist(&[])).cumulative, [0; BOUNDS.len()]);
    }

    #[test]
    fn a_value_within_the_precision_above_a_bound_counts_at_the_next() {
        // 2500 us shares its HdrHistogram bucket with 2501 us (2 us wide there): it may exceed
        // 2.5 ms, so it is not counted under it.
        let b = Buckets::of(&hist(&[2_500]));
        assert_eq!(b.cumulative[3], 0);
        assert_eq!(b.cumulative[4], 1);
    }

    #[test]
    fn the_two_forms_differ_in_counter_names_and_the_closing_line() {
        let mut c = Family::new("latlab_x_errors", Type::Counter, "Errors \"seen\".");
        c.push(vec![("code", "a\"b\\c\nd".into())], Value::Count(3));
        c.push(vec![("code", "a\"b\\c\nd".into())], Value::Count(4));
        let mut g = Family::new("latlab_x_rate", Type::Gauge, "A rate.");
        g.push(vec![], Value::Number(2.5));
        g.push(vec![("x", "nan".into())], Value::Number(f64::NAN));
        let empty = Family::new("latlab_x_none", Type::Gauge, "Nothing.");
        let fams = [c, g, empty];
        assert_eq!(
            render(&fams, Format::Prometheus),
            "# HELP latlab_x_errors_total Errors \"seen\".\n\
             # TYPE latlab_x_errors_total counter\n\
             latlab_x_errors_total{code=\"a\\\"b\\\\c\\nd\"} 3\n\
             # HELP latlab_x_rate A rate.\n\
             # TYPE latlab_x_rate gauge\n\
             latlab_x_rate 2.5\n"
        );
        assert_eq!(
            render(&fams, Format::OpenMetrics),
            "# HELP latlab_x_errors Errors \\\"seen\\\".\n\
             # TYPE latlab_x_errors counter\n\
             latlab_x_errors_total{code=\"a\\\"b\\\\c\\nd\"} 3\n\
             # HELP latlab_x_rate A rate.\n\
             # TYPE latlab_x_rate gauge\n\
             latlab_x_rate 2.5\n\
             # EOF\n"
        );
    }

    #[test]
    fn a_histogram_has_every_bound_then_sum_and_count() {
        let mut h = Family::new("latlab_x_seconds", Type::Histogram, "Latency.");
        h.push(
            vec![("method", "m".into())],
            Value::Histogram(Box::new(Buckets::of(&hist(&[1_000])))),
        );
        let text = render(&[h], Format::Prometheus);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2 + BOUNDS.len() + 2);
        assert_eq!(
            lines[2],
            "latlab_x_seconds_bucket{method=\"m\",le=\"0.00025\"} 0"
        );
        assert_eq!(
            lines[4],
            "latlab_x_seconds_bucket{method=\"m\",le=\"0.001\"} 1"
        );
        assert_eq!(
            lines[1 + BOUNDS.len()],
            "latlab_x_seconds_bucket{method=\"m\",le=\"+Inf\"} 1"
        );
        assert_eq!(
            lines[lines.len() - 2],
            "latlab_x_seconds_sum{method=\"m\"} 0.001"
        );
        assert_eq!(
            lines[lines.len() - 1],
            "latlab_x_seconds_count{method=\"m\"} 1"
        );
    }

    #[test]
    fn the_accept_header_picks_the_form() {
        let om = Some(Format::OpenMetrics);
        let cases = [
            (None, Format::Prometheus),
            (Some("*/*"), Format::Prometheus),
            (Some("text/plain"), Format::Prometheus),
            (Some("application/openmetrics-text"), Format::OpenMetrics),
            // What Prometheus sends.
            (
                Some(
                    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
                ),
                Format::OpenMetrics,
            ),
            (
                Some("application/openmetrics-text;version=0.0.1"),
                Format::Prometheus,
            ),
            (
                Some("text/plain;q=1, application/openmetrics-text;q=0.5"),
                Format::Prometheus,
            ),
            (Some("application/openmetrics-text;q=0"), Format::Prometheus),
            (
                Some("application/openmetrics-text;q=abc"),
                Format::Prometheus,
            ),
            (Some(";;;,,=q"), Format::Prometheus),
        ];
        for (accept, want) in cases {
            assert_eq!(Format::negotiate(accept), want, "{accept:?}");
        }
        assert_eq!(
            Some(Format::negotiate(Some("APPLICATION/OPENMETRICS-TEXT"))),
            om
        );
    }
}
