//! Our figures beside the seed's: one [`Cell`] per compared figure, each labelled `calibrated`
//! (a model parameter in effect was derived from that very figure, so agreement is by
//! construction), `predicted` (nothing in the model was), or `measured` (latlab measured a real
//! service and nothing was modelled). Only predicted and measured cells are evidence.

use serde::{Deserialize, Serialize};

use crate::metrics::Summary;
use latlab_core::provenance::{Label, Param, calibrating};

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
    pub fn percentiles(&mut self, prefix: &str, ours: &Summary, seed: &Percentiles) {
        // A series with no samples has no percentile to set beside the seed's.
        if ours.count == 0 {
            return;
        }
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

/// A seed's row of percentiles, in milliseconds (its max when it has one).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Percentiles {
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_core::provenance::Provenance;

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
        let seed = Percentiles {
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
