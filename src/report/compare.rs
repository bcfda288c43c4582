//! Our figures beside the seed's: one [`Cell`] per compared figure, each labelled `calibrated`
//! (a model parameter in effect was derived from that very figure, so agreement is by
//! construction), `predicted` (nothing in the model was), or `measured` (latlab measured a real
//! service and nothing was modelled). Only predicted and measured cells are evidence.

use serde::{Deserialize, Serialize};

use crate::metrics::Summary;
use crate::provenance::{Label, Param, calibrating};
use crate::run::snapshot::Snapshot;
use crate::scenario::Seed;

/// Agreement is claimed within this fraction of the seed's figure.
pub const WITHIN: f64 = 0.25;

/// One compared figure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// `experiment/series/subject/stat`, e.g. `kinesis-round1/arrival_to_receive/Lambda EFO/p99`.
    pub id: String,
    pub ours: f64,
    /// The seed's figure: a value (low = high) or a range.
    pub seed_low: f64,
    pub seed_high: f64,
    /// Ours over the seed's (over the middle of a range).
    pub ratio: f64,
    pub label: Label,
    /// Within ±25% of the seed's figure (of a range: between 0.75 x its low and 1.25 x its high).
    pub within: bool,
    /// The parameters derived from this figure (why it is calibrated).
    pub calibrated_by: Vec<String>,
}

impl Cell {
    pub fn is_range(&self) -> bool {
        self.seed_low != self.seed_high
    }
}

/// How many cells of each label, and how many of them agree within ±25%.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    pub predicted: usize,
    pub predicted_within: usize,
    pub calibrated: usize,
    pub calibrated_within: usize,
    pub measured: usize,
    pub measured_within: usize,
}

impl Tally {
    pub fn of(cells: &[Cell]) -> Tally {
        let mut t = Tally::default();
        for c in cells {
            let (n, w) = match c.label {
                Label::Predicted => (&mut t.predicted, &mut t.predicted_within),
                Label::Calibrated => (&mut t.calibrated, &mut t.calibrated_within),
                Label::Measured => (&mut t.measured, &mut t.measured_within),
            };
            *n += 1;
            *w += usize::from(c.within);
        }
        t
    }

    /// "14 cells predicted, 9 within ±25%; 10 calibrated (agreement by construction)".
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        if self.measured > 0 {
            parts.push(format!(
                "{} cells measured, {} within ±25% of the seed",
                self.measured, self.measured_within
            ));
        }
        if self.predicted > 0 || self.calibrated > 0 {
            parts.push(format!(
                "{} cells predicted, {} within ±25%",
                self.predicted, self.predicted_within
            ));
        }
        if self.calibrated > 0 {
            parts.push(format!(
                "{} calibrated (the model was fitted to them: agreement by construction)",
                self.calibrated
            ));
        }
        parts.join("; ")
    }
}

/// Builds cells, labelling each from the model in effect.
pub struct Comparer<'a> {
    /// The model's parameters; None when a real service was measured.
    model: Option<&'a [Param]>,
    pub cells: Vec<Cell>,
}

impl<'a> Comparer<'a> {
    pub fn new(model: Option<&'a [Param]>) -> Comparer<'a> {
        Comparer {
            model,
            cells: Vec::new(),
        }
    }

    /// A cell against a seed range `[low, high]` (low = high for one figure).
    pub fn add(&mut self, id: String, ours: f64, low: f64, high: f64) {
        if !(ours.is_finite() && low > 0.0 && high >= low) {
            return;
        }
        let (label, by) = match self.model {
            None => (Label::Measured, Vec::new()),
            Some(params) => {
                let by: Vec<String> = calibrating(params, &id)
                    .iter()
                    .map(|p| p.name.clone())
                    .collect();
                let label = if by.is_empty() {
                    Label::Predicted
                } else {
                    Label::Calibrated
                };
                (label, by)
            }
        };
        self.cells.push(Cell {
            id,
            ours,
            seed_low: low,
            seed_high: high,
            ratio: ours / ((low + high) / 2.0),
            label,
            within: ours >= low * (1.0 - WITHIN) && ours <= high * (1.0 + WITHIN),
            calibrated_by: by,
        });
    }

    /// A row of percentiles (milliseconds): p50, p90, p99 and max where the seed has them. A
    /// percentile between two calibrated ones of the same row is calibrated too: the fitted
    /// shape pins it.
    pub fn percentiles(
        &mut self,
        prefix: &str,
        ours: &Summary,
        seed: &crate::labs::kinesis::config::SeedRow,
    ) {
        let ms = |us: u64| us as f64 / 1000.0;
        let first = self.cells.len();
        self.add(
            format!("{prefix}/p50"),
            ms(ours.p50_us),
            seed.p50_ms,
            seed.p50_ms,
        );
        self.add(
            format!("{prefix}/p90"),
            ms(ours.p90_us),
            seed.p90_ms,
            seed.p90_ms,
        );
        self.add(
            format!("{prefix}/p99"),
            ms(ours.p99_us),
            seed.p99_ms,
            seed.p99_ms,
        );
        if let Some(max) = seed.max_ms {
            self.add(format!("{prefix}/max"), ms(ours.max_us), max, max);
        }
        let row = &mut self.cells[first..];
        let calibrated = |c: &Cell| c.label == Label::Calibrated;
        if row.len() >= 3 && calibrated(&row[0]) && calibrated(&row[2]) && !calibrated(&row[1]) {
            row[1].label = Label::Calibrated;
            let by = row[0].calibrated_by.clone();
            row[1].calibrated_by = by;
        }
    }

    /// A ratio of two cells is calibrated when either of them is.
    pub fn ratio_of(&mut self, id: String, ours: f64, seed: f64, of: [&str; 2]) {
        self.add(id, ours, seed, seed);
        let inputs: Vec<Cell> = self
            .cells
            .iter()
            .filter(|c| of.contains(&c.id.as_str()) && c.label == Label::Calibrated)
            .cloned()
            .collect();
        if let (Some(last), false) = (self.cells.last_mut(), inputs.is_empty())
            && last.label == Label::Predicted
        {
            last.label = Label::Calibrated;
            last.calibrated_by = inputs
                .iter()
                .flat_map(|c| c.calibrated_by.clone())
                .collect();
        }
    }
}

/// Every cell id a seed can be compared on, whatever a run measured.
pub fn seed_cell_ids(seed: &Seed) -> Vec<String> {
    let mut ids = Vec::new();
    if let Some(k) = &seed.kinesis {
        let e = &k.experiment;
        let stats = |ids: &mut Vec<String>, prefix: String, max: bool| {
            for stat in ["p50", "p90", "p99"] {
                ids.push(format!("{prefix}/{stat}"));
            }
            if max {
                ids.push(format!("{prefix}/max"));
            }
        };
        for row in &k.arrival_to_receive {
            stats(
                &mut ids,
                format!("{e}/arrival_to_receive/{}", row.consumer),
                row.max_ms.is_some(),
            );
        }
        if let Some(row) = &k.send_to_arrival {
            stats(
                &mut ids,
                format!("{e}/send_to_arrival/all"),
                row.max_ms.is_some(),
            );
        }
        for c in &k.escaped_throttles {
            ids.push(format!("{e}/escaped_throttles/{}/count", c.consumer));
        }
        if k.read_throttles_per_minute.is_some() {
            ids.push(format!("{e}/read_throttles_per_minute/shard/value"));
        }
        if k.get_records_per_minute.is_some() {
            ids.push(format!("{e}/get_records_per_minute/shard/value"));
        }
    }
    if let Some(s3) = &seed.s3 {
        for (dir, rows) in [("upload", &s3.upload), ("download", &s3.download)] {
            for r in rows {
                for stat in ["express", "standard", "ratio"] {
                    ids.push(format!("{}/{dir}/{}/{stat}", s3.experiment, r.case));
                }
            }
        }
    }
    if let Some(r) = &seed.redis {
        for row in &r.rows {
            ids.push(format!(
                "{}/average_lag/{}/new_clients",
                r.experiment, row.condition
            ));
        }
    }
    ids
}

/// Every compared cell of a run: its figures beside the seed's.
pub fn cells(snapshot: &Snapshot, seed: &Seed) -> Vec<Cell> {
    let model = (snapshot.backend.kind == "emulator").then_some(snapshot.backend.model.as_slice());
    let mut cmp = Comparer::new(model);
    if let (Some(seed), Some(k)) = (&seed.kinesis, &snapshot.kinesis) {
        let exp = &seed.experiment;
        for row in &seed.arrival_to_receive {
            if let Some(c) = k.consumers.iter().find(|c| c.name == row.consumer) {
                cmp.percentiles(
                    &format!("{exp}/arrival_to_receive/{}", c.name),
                    &c.arrival_to_receive,
                    row,
                );
            }
        }
        if let Some(row) = &seed.send_to_arrival {
            cmp.percentiles(
                &format!("{exp}/send_to_arrival/all"),
                &k.send_to_arrival,
                row,
            );
        }
        for e in &seed.escaped_throttles {
            if let Some(c) = k.consumers.iter().find(|c| c.name == e.consumer) {
                let ours = c.sdk.counters.escaped_throttles() as f64;
                cmp.add(
                    format!("{exp}/escaped_throttles/{}/count", c.name),
                    ours,
                    e.count as f64,
                    e.count as f64,
                );
            }
        }
        let minutes = snapshot.elapsed_secs / 60.0;
        let read = k.get_records_totals();
        if let (Some([lo, hi]), true) = (seed.read_throttles_per_minute, minutes > 0.0) {
            cmp.add(
                format!("{exp}/read_throttles_per_minute/shard/value"),
                read.throttles as f64 / minutes / k.shards.max(1) as f64,
                lo,
                hi,
            );
        }
        if let (Some([lo, hi]), true) = (seed.get_records_per_minute, minutes > 0.0) {
            cmp.add(
                format!("{exp}/get_records_per_minute/shard/value"),
                (read.attempts - read.throttles) as f64 / minutes / k.shards.max(1) as f64,
                lo,
                hi,
            );
        }
    }
    if let (Some(seed), Some(rows)) = (
        &seed.s3,
        snapshot.s3.as_ref().and_then(|s| s.matrix.as_ref()),
    ) {
        let exp = &seed.experiment;
        for (dir, seed_rows) in [("upload", &seed.upload), ("download", &seed.download)] {
            // Like with like: a set the seed did not run (a --quick set) has no seed figure.
            for row in rows {
                let label = row.case.label();
                let Some(s) = seed_rows.iter().find(|s| s.case == label) else {
                    continue;
                };
                let (e, st) = if dir == "upload" {
                    (row.upload_express_s, row.upload_standard_s)
                } else {
                    (row.download_express_s, row.download_standard_s)
                };
                let id = |stat: &str| format!("{exp}/{dir}/{label}/{stat}");
                cmp.add(id("express"), e, s.express_s, s.express_s);
                cmp.add(id("standard"), st, s.standard_s, s.standard_s);
                if e > 0.0 {
                    cmp.ratio_of(
                        id("ratio"),
                        st / e,
                        s.standard_s / s.express_s,
                        [&id("express"), &id("standard")],
                    );
                }
            }
        }
    }
    if let (Some(seed), Some(r)) = (&seed.redis, &snapshot.redis) {
        // The Redis lab measures real servers; only its link shaping is modelled.
        let redis_model = r.local.then_some(snapshot.backend.model.as_slice());
        let mut redis = Comparer::new(redis_model);
        for c in &r.conditions {
            let Some(row) = seed.rows.iter().find(|s| s.condition == c.condition.name) else {
                continue;
            };
            let Some(m) = c
                .methods
                .iter()
                .find(|m| m.method == crate::labs::redis::Method::NewClients && m.lag.count > 0)
            else {
                continue;
            };
            redis.add(
                format!(
                    "{}/average_lag/{}/new_clients",
                    seed.experiment, c.condition.name
                ),
                m.lag.mean_us / 1000.0,
                row.average_ms,
                row.average_ms,
            );
        }
        cmp.cells.extend(redis.cells);
    }
    cmp.cells
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provenance::{Provenance, Source, matches};

    /// The seeds of the built-in scenarios.
    fn builtin_seeds() -> Vec<(crate::scenario::Scenario, Seed)> {
        crate::scenario::BUILTIN
            .iter()
            .filter_map(|(name, _)| {
                let s = crate::scenario::Scenario::resolve(name).unwrap();
                s.seed.clone().map(|seed| (s, seed))
            })
            .collect()
    }

    #[test]
    fn every_seed_cell_a_parameter_names_is_one_the_seed_scenarios_compare() {
        let ids: Vec<String> = builtin_seeds()
            .iter()
            .flat_map(|(_, seed)| seed_cell_ids(seed))
            .collect();
        assert!(ids.contains(&"kinesis-round1/arrival_to_receive/Lambda EFO/p99".to_string()));
        assert!(ids.contains(&"s3/download/100 x 10 MB/ratio".to_string()));
        assert!(ids.contains(&"redis/average_lag/50 MB value/new_clients".to_string()));
        for name in crate::emulator::profile::BUILTIN_PROFILES {
            let profile = crate::emulator::profile::LatencyProfile::resolve(name).unwrap();
            for (scenario, _) in builtin_seeds() {
                let limits = crate::emulator::limits::Limits::default();
                for p in crate::run::model_params(&scenario, Some((&profile, &limits))) {
                    assert_eq!(
                        p.provenance.source == Source::Seed,
                        !p.provenance.seed_cells.is_empty(),
                        "{name} {}: a parameter is derived from seed cells exactly when its source is the seed",
                        p.name
                    );
                    for pattern in &p.provenance.seed_cells {
                        assert!(
                            ids.iter().any(|id| matches(pattern, id)),
                            "{name} {}: '{pattern}' names no cell any seed scenario compares",
                            p.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_held_out_cells_are_never_calibrated_by_seed_tokyo() {
        // Kinesis is fitted on round 1 only and S3 on the 1 GB and 100 KB sets: round 2 and the
        // 10 MB set are predictions on every built-in profile.
        for name in crate::emulator::profile::BUILTIN_PROFILES {
            let profile = crate::emulator::profile::LatencyProfile::resolve(name).unwrap();
            for (scenario, seed) in builtin_seeds() {
                let limits = crate::emulator::limits::Limits::default();
                let model = crate::run::model_params(&scenario, Some((&profile, &limits)));
                for id in seed_cell_ids(&seed) {
                    let held_out =
                        id.starts_with("kinesis-round2/") || id.contains("/100 x 10 MB/");
                    if held_out {
                        assert!(
                            calibrating(&model, &id).is_empty(),
                            "{name}: {id} is held out but calibrated by {:?}",
                            calibrating(&model, &id)
                                .iter()
                                .map(|p| &p.name)
                                .collect::<Vec<_>>()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn cells_derived_from_a_parameter_are_calibrated_and_the_rest_predicted() {
        let model = vec![Param::new(
            "kinesis.efo_push",
            "x".into(),
            Provenance::seed(
                "fit",
                &[
                    "r1/arrival_to_receive/Lambda EFO/p50",
                    "r1/arrival_to_receive/Lambda EFO/p99",
                ],
            ),
        )];
        let mut cmp = Comparer::new(Some(&model));
        let seed = crate::labs::kinesis::config::SeedRow {
            consumer: "Lambda EFO".into(),
            p50_ms: 68.3,
            p90_ms: 109.0,
            p99_ms: 119.1,
            max_ms: Some(297.7),
        };
        let ours = Summary {
            count: 10,
            p50_us: 71_000,
            p90_us: 96_500,
            p99_us: 126_800,
            max_us: 174_500,
            ..Summary::default()
        };
        cmp.percentiles("r1/arrival_to_receive/Lambda EFO", &ours, &seed);
        cmp.percentiles("r1/arrival_to_receive/SDK", &ours, &seed);
        let labels: Vec<(&str, Label, bool)> = cmp
            .cells
            .iter()
            .map(|c| (c.id.rsplit('/').next().unwrap(), c.label, c.within))
            .collect();
        assert_eq!(
            labels,
            [
                ("p50", Label::Calibrated, true),
                ("p90", Label::Calibrated, true),
                ("p99", Label::Calibrated, true),
                ("max", Label::Predicted, false),
                ("p50", Label::Predicted, true),
                ("p90", Label::Predicted, true),
                ("p99", Label::Predicted, true),
                ("max", Label::Predicted, false),
            ]
        );
        assert_eq!(cmp.cells[0].calibrated_by, ["kinesis.efo_push"]);
        let t = Tally::of(&cmp.cells);
        assert_eq!(
            t.line(),
            "5 cells predicted, 3 within ±25%; 3 calibrated (the model was fitted to them: agreement by construction)"
        );
        // A range: within when between 0.75 x low and 1.25 x high.
        cmp.add(
            "r1/read_throttles_per_minute/shard/value".into(),
            29.0,
            12.0,
            24.0,
        );
        assert!(cmp.cells.last().unwrap().within);
        cmp.add(
            "r2/read_throttles_per_minute/shard/value".into(),
            31.0,
            12.0,
            24.0,
        );
        assert!(!cmp.cells.last().unwrap().within);
        // Measuring a real service: every cell is measured.
        let mut real = Comparer::new(None);
        real.percentiles("r1/arrival_to_receive/Lambda EFO", &ours, &seed);
        assert!(real.cells.iter().all(|c| c.label == Label::Measured));
    }
}
