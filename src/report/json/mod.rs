//! The JSON report's public form, `latlab-run-report/2` (`schemas/run-report.schema.json`),
//! written out field by field and converted from the run's snapshot. The snapshot is the TUI's
//! and the reports' internal view and may change freely; renaming one of its fields changes
//! nothing here unless this file changes too, and a test below validates what this file writes
//! against the schema for every lab. A report read back (`RunReport` -> `Report`) renders the same
//! tables as the run that wrote it.
//!
//! The schema's types stand beside their conversions both ways, so that a field added to the
//! schema is added once, beside both of them: the run's own parts here, each lab's part in its
//! folder (`labs/X/json.rs`, its `Lab::Json`), and what they share in `metrics/json.rs`.

use serde::{Deserialize, Serialize};

use super::compare::{Cell, Tally};
use super::{Ending, Report, ScenarioInfo};
use crate::scenario::Seed;
use latlab_core::provenance::Param;

use crate::labs::Lab;

#[derive(Serialize, Deserialize)]
pub struct RunReport {
    pub schema: String,
    pub latlab_version: String,
    pub scenario: ScenarioInfo,
    pub ending: Ending,
    pub snapshot: Snapshot,
    pub seed: Option<Seed>,
    pub cells: Vec<Cell>,
    pub tally: Tally,
    pub problems: Vec<String>,
    /// What the configuration at the end costs at list price (`super::cost::Cost`); absent in
    /// reports from before it existed. Figured from the snapshot, so it is not read back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<super::cost::Cost>,
}

macro_rules! snapshot {
    ($($kind:ident: $module:ident::$ty:ident,)*) => {
        /// The run's snapshot: its header figures, each lab's part (its `Lab::Json`, under the
        /// lab's key, from the registry), the faults and latlab's own process.
        #[derive(Serialize, Deserialize)]
        pub struct Snapshot {
            pub scenario: String,
            pub backend: Backend,
            pub elapsed_secs: f64,
            pub producing_secs: f64,
            pub complete: bool,
            $(
                #[serde(default, skip_serializing_if = "crate::labs::left_out")]
                pub $module: Option<<crate::labs::$module::$ty as Lab>::Json>,
            )*
            /// Absent in reports from before faults existed.
            #[serde(default)]
            pub faults: Faults,
            /// Absent in reports from before it existed.
            #[serde(default)]
            pub process: Process,
        }

        impl From<&crate::snapshot::Snapshot> for Snapshot {
            fn from(s: &crate::snapshot::Snapshot) -> Snapshot {
                let b = &s.backend;
                Snapshot {
                    scenario: s.scenario.clone(),
                    backend: Backend {
                        kind: b.kind.clone(),
                        label: b.label.clone(),
                        latency_profile: b.latency_profile.clone(),
                        endpoint: b.endpoint.clone(),
                        region: b.region.clone(),
                        model: b.model.clone(),
                    },
                    elapsed_secs: s.elapsed_secs,
                    producing_secs: s.producing_secs,
                    complete: s.complete,
                    $($module: s.$module.as_ref().map(crate::labs::to_json::<crate::labs::$module::$ty>),)*
                    faults: Faults::from(&s.faults),
                    process: Process {
                        start: s.process.start.into(),
                        at_10_min: s.process.at_10_min.map(Into::into),
                        last: s.process.last.into(),
                        peak_rss_bytes: s.process.peak_rss_bytes,
                    },
                }
            }
        }

        impl From<Snapshot> for crate::snapshot::Snapshot {
            fn from(s: Snapshot) -> Self {
                let b = s.backend;
                crate::snapshot::Snapshot {
                    scenario: s.scenario,
                    backend: crate::snapshot::Backend {
                        kind: b.kind,
                        label: b.label,
                        latency_profile: b.latency_profile,
                        endpoint: b.endpoint,
                        region: b.region,
                        model: b.model,
                    },
                    elapsed_secs: s.elapsed_secs,
                    producing_secs: s.producing_secs,
                    complete: s.complete,
                    $($module: s.$module.map(crate::labs::from_json::<crate::labs::$module::$ty>),)*
                    faults: s.faults.into_snapshot(),
                    process: crate::snapshot::process::ProcessSnapshot {
                        start: s.process.start.into(),
                        at_10_min: s.process.at_10_min.map(Into::into),
                        last: s.process.last.into(),
                        peak_rss_bytes: s.process.peak_rss_bytes,
                    },
                }
            }
        }
    };
}
crate::labs::for_each_lab!(snapshot);

#[derive(Serialize, Deserialize, Default, Clone, Copy)]
pub struct ProcessSample {
    pub at_secs: f64,
    pub rss_bytes: Option<u64>,
    pub open_fds: Option<u64>,
    pub tasks: u64,
}

#[derive(Serialize, Deserialize, Default)]
pub struct Process {
    pub start: ProcessSample,
    pub at_10_min: Option<ProcessSample>,
    pub last: ProcessSample,
    pub peak_rss_bytes: Option<u64>,
}

impl From<crate::snapshot::process::ProcessSample> for ProcessSample {
    fn from(s: crate::snapshot::process::ProcessSample) -> Self {
        ProcessSample {
            at_secs: s.at_secs,
            rss_bytes: s.rss_bytes,
            open_fds: s.open_fds,
            tasks: s.tasks,
        }
    }
}

impl From<ProcessSample> for crate::snapshot::process::ProcessSample {
    fn from(s: ProcessSample) -> Self {
        crate::snapshot::process::ProcessSample {
            at_secs: s.at_secs,
            rss_bytes: s.rss_bytes,
            open_fds: s.open_fds,
            tasks: s.tasks,
        }
    }
}

#[derive(Serialize, Deserialize, Default)]
pub struct Faults {
    pub set: Vec<String>,
    pub events: Vec<FaultEvent>,
    pub counts: Vec<FaultCount>,
}

#[derive(Serialize, Deserialize)]
pub struct FaultEvent {
    pub at_secs: f64,
    pub kind: String,
    pub target: String,
    pub recovered_secs: Option<f64>,
    pub failed: Option<String>,
}

#[derive(Serialize, Deserialize)]
pub struct FaultCount {
    pub kind: String,
    pub fired: u64,
    pub recovered: u64,
    pub failed: u64,
}

impl From<&crate::snapshot::FaultsSnapshot> for Faults {
    fn from(f: &crate::snapshot::FaultsSnapshot) -> Faults {
        Faults {
            set: f.set.clone(),
            events: f
                .events
                .iter()
                .map(|e| FaultEvent {
                    at_secs: e.at_secs,
                    kind: e.kind.name().into(),
                    target: e.target.clone(),
                    recovered_secs: e.recovered_secs,
                    failed: e.failed.clone(),
                })
                .collect(),
            counts: f
                .counts
                .iter()
                .map(|(k, c)| FaultCount {
                    kind: k.name().into(),
                    fired: c.fired,
                    recovered: c.recovered,
                    failed: c.failed,
                })
                .collect(),
        }
    }
}

impl Faults {
    /// Back into the snapshot's form; kinds this version does not know are left out.
    fn into_snapshot(self) -> crate::snapshot::FaultsSnapshot {
        use latlab_core::faults::{Kind, KindCounts};
        crate::snapshot::FaultsSnapshot {
            set: self.set,
            events: self
                .events
                .into_iter()
                .filter_map(|e| {
                    Some(crate::snapshot::FaultRow {
                        at_secs: e.at_secs,
                        kind: Kind::parse(&e.kind).ok()?,
                        target: e.target,
                        recovered_secs: e.recovered_secs,
                        failed: e.failed,
                    })
                })
                .collect(),
            counts: self
                .counts
                .into_iter()
                .filter_map(|c| {
                    Some((
                        Kind::parse(&c.kind).ok()?,
                        KindCounts {
                            fired: c.fired,
                            recovered: c.recovered,
                            failed: c.failed,
                        },
                    ))
                })
                .collect(),
        }
    }
}

#[derive(Serialize, Deserialize)]
pub struct Backend {
    pub kind: String,
    pub label: String,
    pub latency_profile: Option<String>,
    pub endpoint: Option<String>,
    pub region: String,
    pub model: Vec<Param>,
}

impl From<&Report> for RunReport {
    fn from(r: &Report) -> RunReport {
        RunReport {
            schema: r.schema.clone(),
            latlab_version: r.latlab_version.clone(),
            scenario: r.scenario.clone(),
            ending: r.ending,
            snapshot: Snapshot::from(&r.snapshot),
            seed: r.seed.clone(),
            cells: r.cells.clone(),
            tally: r.tally.clone(),
            problems: r.problems.clone(),
            cost: super::cost::json(r),
        }
    }
}

impl From<RunReport> for Report {
    fn from(r: RunReport) -> Report {
        Report {
            schema: r.schema,
            latlab_version: r.latlab_version,
            scenario: r.scenario,
            ending: r.ending,
            snapshot: r.snapshot.into(),
            seed: r.seed,
            cells: r.cells,
            tally: r.tally,
            problems: r.problems,
            prices: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Format;
    use crate::scenario::Scenario;

    /// The published schema, with the part of any lab that keeps its own in its folder.
    fn validator() -> jsonschema::Validator {
        let mut schema: serde_json::Value =
            serde_json::from_str(include_str!("../../../schemas/run-report.schema.json")).unwrap();
        for lab in crate::labs::LabKind::ALL {
            if let Some(part) = lab.schema() {
                let part: serde_json::Value = serde_json::from_str(part).unwrap();
                snapshot_properties(&mut schema).insert(lab.key().to_string(), part);
            }
        }
        jsonschema::validator_for(&schema).unwrap()
    }

    /// Where the schema lists the snapshot's parts.
    pub(super) fn snapshot_properties(
        schema: &mut serde_json::Value,
    ) -> &mut serde_json::Map<String, serde_json::Value> {
        schema["$defs"]["snapshot"]["properties"]
            .as_object_mut()
            .expect("the schema lists the snapshot's properties")
    }

    /// Every lab's part, as this file writes it, follows the schema; and the schema pins it: a
    /// field this file dropped or added would fail.
    #[test]
    fn the_public_form_follows_the_schema_for_every_lab() {
        let validator = validator();
        // Every lab's sample with every optional part filled (a headless run's S3 matrix and
        // Redis conditions among them).
        let view = crate::tui::fixture::full_tour_moment();
        let scenario = Scenario::resolve("tour").unwrap();
        let report = Report::new(&scenario, view.snapshot, Ending::Completed, Vec::new());
        let json: serde_json::Value = serde_json::from_str(&report.render(Format::Json)).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&json)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        // Read back, it is the same report: every format renders the same.
        let back: Report = serde_json::from_value::<RunReport>(json.clone())
            .unwrap()
            .into();
        assert_eq!(back, report);
        for (path, field) in [
            ("/snapshot/kinesis/consumers/0", "counts"),
            ("/snapshot/s3/ops/0", "first_byte"),
            ("/snapshot/s3/matrix/0", "case"),
            ("/snapshot/redis/methods/0", "lag"),
            ("/snapshot/redis/conditions/0", "condition"),
            ("/snapshot/backend", "model"),
            ("/cost", "label"),
            ("/cost/labs/0", "items"),
            ("/cost/kinesis_consumers/0", "usd_per_million_records"),
            ("/cost/s3_classes/0", "usd_per_gb"),
        ] {
            let mut broken = json.clone();
            broken
                .pointer_mut(path)
                .and_then(|v| v.as_object_mut())
                .unwrap_or_else(|| panic!("{path} is in the report"))
                .remove(field);
            assert!(!validator.is_valid(&broken), "{path}/{field} is required");
            let mut extra = json.clone();
            extra
                .pointer_mut(path)
                .and_then(|v| v.as_object_mut())
                .unwrap()
                .insert("surprise".into(), 1.into());
            assert!(!validator.is_valid(&extra), "{path} takes no other field");
        }
    }

    /// A consumer that received nothing (`--lacking SubscribeToShard`) has no latency: `-` in
    /// text, empty fields in CSV, `null` in JSON (which the schema takes, and reads back as the
    /// same report); never 0.0 ms.
    #[test]
    fn a_series_with_no_samples_prints_no_latency_in_any_format() {
        let mut view = crate::tui::fixture::full_tour_moment();
        let kinesis = view.snapshot.kinesis.as_mut().unwrap();
        let name = kinesis.consumers[0].name.clone();
        kinesis.consumers[0].arrival_to_receive = crate::metrics::Summary::default();
        kinesis.consumers[0].send_to_receive = crate::metrics::Summary::default();
        let scenario = Scenario::resolve("tour").unwrap();
        let report = Report::new(&scenario, view.snapshot, Ending::Completed, Vec::new());

        let text = report.render(Format::Text);
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("a row for {name}:\n{text}"));
        let cells: Vec<&str> = row[name.len()..].split_whitespace().collect();
        assert_eq!(cells, ["-", "-", "-", "-", "-", "0"], "{row}");
        assert!(!text.contains(&format!("send -> receive, {name}  0.0 ms")));

        let csv = report.render(Format::Csv);
        for stat in ["p50", "p90", "p99", "p999", "max", "mean"] {
            let metric = format!(",{name},arrival_to_receive_{stat}_ms,");
            let line = csv
                .lines()
                .find(|l| l.contains(&metric))
                .unwrap_or_else(|| panic!("{metric} in\n{csv}"));
            let value = line.split(&metric).nth(1).unwrap();
            assert!(value.starts_with(','), "no value, not 0: {line}");
        }
        assert!(csv.contains(&format!(",{name},arrival_to_receive_count,0,")));

        let json: serde_json::Value = serde_json::from_str(&report.render(Format::Json)).unwrap();
        let a = &json["snapshot"]["kinesis"]["consumers"][0]["arrival_to_receive"];
        assert_eq!(a["count"], 0);
        for stat in [
            "min_us", "p50_us", "p90_us", "p99_us", "p999_us", "max_us", "mean_us",
        ] {
            assert!(a[stat].is_null(), "{stat}: {a}");
        }
        let validator = validator();
        assert!(
            validator.is_valid(&json),
            "null latencies follow the schema"
        );
        // The schema holds a summary of no samples to nulls, and one with samples to figures.
        let mut zero = json.clone();
        zero["snapshot"]["kinesis"]["consumers"][0]["arrival_to_receive"]["p50_us"] = 0.into();
        assert!(!validator.is_valid(&zero), "0 for no samples is refused");
        let mut null = json.clone();
        null["snapshot"]["kinesis"]["consumers"][1]["arrival_to_receive"]["p50_us"] =
            serde_json::Value::Null;
        assert!(!validator.is_valid(&null), "null beside samples is refused");
        let back: Report = serde_json::from_value::<RunReport>(json).unwrap().into();
        assert_eq!(back, report);
    }
}
