//! Where every model parameter comes from, and which compared figures it was derived from.
//!
//! A model parameter derived from a seed figure can never be evidence of reproducing that figure:
//! each parameter carries its source and the seed cells (if any) it was derived from, and every
//! compared cell of a report is labelled `calibrated` when some parameter in effect names it,
//! `predicted` otherwise (or `measured`, when latlab measured a real service and nothing was
//! modelled).
//!
//! Cells are named `experiment/series/subject/stat`, for example
//! `kinesis-round1/arrival_to_receive/Lambda EFO/p99`, `s3/upload/1 x 1 GB/express` or
//! `redis/average_lag/50 MB value/new_clients`; a parameter may name a whole group with `*` for
//! any one part.

use serde::{Deserialize, Serialize};

/// What kind of source a value has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// An AWS document states it.
    AwsDoc,
    /// An independent public measurement.
    Measurement,
    /// Derived from the seed experiments' own figures: the cells it names are `calibrated`.
    Seed,
    /// A modelling choice with no published source; the note says what was assumed.
    Assumption,
    /// Set in a user's profile file that gave no source.
    User,
    /// Nothing is modelled (the `zero` profile).
    Nothing,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::AwsDoc => "aws-doc",
            Source::Measurement => "measurement",
            Source::Seed => "seed",
            Source::Assumption => "assumption",
            Source::User => "user",
            Source::Nothing => "none",
        }
    }
}

/// A parameter's source, in a line, and the seed cells it was derived from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub source: Source,
    pub note: String,
    /// Seed cells the value was derived from (patterns, `*` for any one part).
    #[serde(default)]
    pub seed_cells: Vec<String>,
}

impl Provenance {
    pub fn new(source: Source, note: &str) -> Provenance {
        Provenance {
            source,
            note: note.into(),
            seed_cells: Vec::new(),
        }
    }

    /// Derived from these seed cells.
    pub fn seed(note: &str, cells: &[&str]) -> Provenance {
        Provenance {
            source: Source::Seed,
            note: note.into(),
            seed_cells: cells.iter().map(|c| c.to_string()).collect(),
        }
    }
}

/// A model parameter in effect for a run: its name, its value in words, and its provenance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    pub value: String,
    pub provenance: Provenance,
}

impl Param {
    pub fn new(name: &str, value: String, provenance: Provenance) -> Param {
        Param {
            name: name.into(),
            value,
            provenance,
        }
    }
}

/// Whether a cell pattern (parts separated by `/`, `*` matching any one part) names `cell`.
pub fn matches(pattern: &str, cell: &str) -> bool {
    let (mut p, mut c) = (pattern.split('/'), cell.split('/'));
    loop {
        match (p.next(), c.next()) {
            (None, None) => return true,
            (Some(a), Some(b)) if a == "*" || a == b => {}
            _ => return false,
        }
    }
}

/// The parameters (of those given) that were derived from `cell`.
pub fn calibrating<'a>(params: &'a [Param], cell: &str) -> Vec<&'a Param> {
    params
        .iter()
        .filter(|p| p.provenance.seed_cells.iter().any(|pat| matches(pat, cell)))
        .collect()
}

/// How a compared cell is to be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Label {
    /// A model parameter was derived from this very figure: agreement is by construction.
    Calibrated,
    /// Nothing in the model was derived from it: agreement is evidence.
    Predicted,
    /// latlab measured a real service here; nothing was modelled.
    Measured,
}

impl Label {
    pub fn name(self) -> &'static str {
        match self {
            Label::Calibrated => "calibrated",
            Label::Predicted => "predicted",
            Label::Measured => "measured",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_part_by_part() {
        assert!(matches(
            "kinesis-round1/arrival_to_receive/Lambda EFO/p99",
            "kinesis-round1/arrival_to_receive/Lambda EFO/p99"
        ));
        assert!(matches("s3/*/1 x 1 GB/*", "s3/upload/1 x 1 GB/express"));
        assert!(!matches("s3/*/1 x 1 GB/*", "s3/upload/100 x 10 MB/express"));
        assert!(!matches("s3/upload", "s3/upload/1 x 1 GB/express"));
        let params = vec![Param::new(
            "x",
            "1".into(),
            Provenance::seed("from the 1 GB set", &["s3/*/1 x 1 GB/*"]),
        )];
        assert_eq!(calibrating(&params, "s3/download/1 x 1 GB/ratio").len(), 1);
        assert!(calibrating(&params, "s3/download/100 x 10 MB/ratio").is_empty());
    }
}
