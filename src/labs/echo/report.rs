//! What the echo lab reports and records: its report section and CSV rows, and its one series
//! for recordings and Prometheus (its part of the JSON report is its snapshot).

use super::{EchoLab, EchoSnapshot, History};
use crate::lab_kit::section::{CsvRows, Cx, section_heading};
use crate::labs::series::{FrameSeries, SeriesId, Watched};
use latlab_core::units::thousands;

/// The key its one series, the round trip, is known by in frames, CSV and labels.
const KEY: &str = "tcp";

/// Its one series: the round trip.
pub(super) fn series_id() -> SeriesId {
    SeriesId::new(crate::labs::LabKind::Echo, &[KEY], "round_trip")
}

impl crate::labs::Reported for EchoLab {
    fn write(s: &EchoSnapshot, _cx: &Cx<'_, crate::labs::NoSeed>, out: &mut String, md: bool) {
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
        rows.summary("echo", KEY, "round_trip", &s.rtt);
        rows.add("echo", KEY, "errors", s.errors as f64);
    }
}

impl crate::labs::Measured for EchoLab {
    fn frame_series<'a>(_s: &'a EchoSnapshot, h: &'a History) -> Option<FrameSeries<'a>> {
        let series = (series_id(), KEY.to_string(), h.as_slice());
        Some(FrameSeries::of(vec![series]))
    }

    fn history_of_frames(
        _s: &EchoSnapshot,
        points: &dyn Fn(&str) -> Vec<crate::metrics::Point>,
        _gauge: &dyn Fn() -> Vec<f64>,
    ) -> History {
        points(KEY)
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
}
