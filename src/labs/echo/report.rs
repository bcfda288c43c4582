//! What the echo lab reports and records: its report section and CSV rows, compare's title,
//! its part of the JSON report, and its one series for recordings and Prometheus.

use serde::{Deserialize, Serialize};

use super::{EchoLab, EchoSeed, EchoSnapshot, History};
use crate::labs::series::{FrameSeries, Histogrammed, SeriesId, Watched};
use crate::metrics::exposition::{Family, Type, Value};
use crate::section::{CsvRows, Cx, section_heading};
use latlab_core::units::thousands;

/// Its one series: the round trip.
pub(super) fn series_id() -> SeriesId {
    SeriesId::new(crate::labs::LabKind::Echo, &["tcp"], "round_trip")
}

impl crate::labs::Report for EchoLab {
    const COMPARED: (&'static str, &'static str) = ("Echo: round trip on 127.0.0.1", "socket");
    const SCHEMA: Option<&'static str> = Some(include_str!("schema.json"));

    fn write(s: &EchoSnapshot, _cx: &Cx<'_, EchoSeed>, out: &mut String, md: bool) {
        section_heading(md)(out, "Echo: round trip to an echo server on 127.0.0.1");
        let r = &s.rtt;
        out.push_str(&format!(
            "{} B payloads: p50 {}, p99 {}, max {} over {} round trips; {} failed\n",
            s.payload,
            r.ms(r.p50_us),
            r.ms(r.p99_us),
            r.ms(r.max_us),
            thousands(r.count),
            thousands(s.errors)
        ));
    }

    fn csv(s: &EchoSnapshot, rows: &mut CsvRows) {
        rows.summary("echo", "tcp", "round_trip", &s.rtt);
        rows.add("echo", "tcp", "errors", s.errors as f64);
    }
}

impl crate::labs::Fleet for EchoLab {}

/// Its part of the JSON report.
#[derive(Serialize, Deserialize)]
pub struct Echo {
    pub payload: u64,
    pub sent: u64,
    pub errors: u64,
    pub round_trip: crate::metrics::json::Summary,
}

impl crate::labs::ReportPart for Echo {}

impl crate::labs::ReportJson<EchoSnapshot> for Echo {
    fn of(s: &EchoSnapshot) -> Echo {
        Echo {
            payload: s.payload,
            sent: s.sent,
            errors: s.errors,
            round_trip: crate::metrics::json::summary(&s.rtt),
        }
    }

    fn into_snapshot(self) -> EchoSnapshot {
        EchoSnapshot {
            payload: self.payload,
            sent: self.sent,
            errors: self.errors,
            rtt: self.round_trip.into_summary(),
        }
    }
}

impl crate::labs::Series for EchoLab {
    /// A socket.
    const SUBJECT_PARTS: usize = 1;
    const QUANTITIES: &'static [&'static str] = &["round_trip"];

    fn frame_series<'a>(_s: &'a EchoSnapshot, h: &'a History) -> Option<FrameSeries<'a>> {
        Some(FrameSeries::of(vec![(
            series_id(),
            "tcp".to_string(),
            h.as_slice(),
        )]))
    }

    fn history_of_frames(
        _s: &EchoSnapshot,
        points: &dyn Fn(&str) -> Vec<crate::metrics::Point>,
        _gauge: &dyn Fn() -> Vec<f64>,
    ) -> History {
        points("tcp")
    }

    fn summaries(s: &EchoSnapshot) -> Vec<(SeriesId, &crate::metrics::Summary)> {
        vec![(series_id(), &s.rtt)]
    }

    fn watched(s: &EchoSnapshot) -> Vec<Watched> {
        vec![Watched {
            name: "Echo".into(),
            status: None,
            error: (s.errors > 0).then(|| format!("{} round trips failed", s.errors)),
            throttles: 0,
        }]
    }

    fn metric_families(s: &EchoSnapshot, series: &[Histogrammed]) -> Vec<Family> {
        let mut rtt = Family::new(
            "latlab_echo_round_trip_seconds",
            Type::Histogram,
            "Echo: a payload's round trip to latlab's own echo server on 127.0.0.1.",
        );
        for h in series {
            rtt.push(Vec::new(), Value::histogram(&h.histogram));
        }
        let mut errors = Family::new(
            "latlab_echo_errors",
            Type::Counter,
            "Echo: round trips that failed.",
        );
        errors.push(Vec::new(), Value::Count(s.errors));
        vec![rtt, errors]
    }
}
