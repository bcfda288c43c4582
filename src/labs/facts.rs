//! What a lab is, in one record ([`Facts`]): the facts the rest of latlab asks of a lab by kind,
//! each lab's `Lab::FACTS` in its `mod.rs`, read through `LabKind::facts`.

use super::LabKind;
use latlab_core::services::Service;

/// What a lab is, in one record (its [`Lab::FACTS`]): everything the rest of latlab asks of it by
/// kind. [`Facts::new`] gives the defaults of a lab that measures no service latlab knows, runs
/// on one host, stops when its probes finish, takes an even share of the overview, keeps its
/// schema in the published file, and has one-part subjects, no gauge, no colours of its own and
/// no price.
#[derive(Clone, Copy, Debug)]
pub struct Facts {
    /// Its kind in the registry.
    pub kind: LabKind,
    /// As screens name it: "Kinesis".
    pub name: &'static str,
    /// A built-in scenario that runs it alone.
    pub demo: &'static str,
    /// Its built-in scenarios, (name, file text), kept in its folder (`labs/X/scenarios/`):
    /// `latlab scenarios` lists them in the registry's order, then the tour and the soak.
    pub scenarios: &'static [(&'static str, &'static str)],
    /// The service it measures, when it is one latlab knows (its faults, the emulator's part);
    /// None for a lab of something else.
    pub service: Option<Service>,
    /// Whether it splits into a producer and consumers that may run on different hosts, one
    /// host producing and others reading what it produced (`--no-producer`, `--producer-only`,
    /// the scenario's `role`): such a lab reads [`crate::labs::RunContext::role`] as it starts.
    /// A run with a role refuses a scenario with any lab that does not.
    pub roles: bool,
    /// Whether its figures count from the moment it starts (a producer's period): such a lab
    /// starts after the others, so their set-up does not eat into what it measures.
    pub measures_from_start: bool,
    /// What it waits for while it stops, for the screen's stopping line: "the producer has
    /// stopped; consumers are draining".
    pub stopping: &'static str,
    /// Its share of its column on the overview (the others' weights beside it).
    pub overview_weight: u16,
    /// Whether it leads the overview: on a wide screen it takes the left and the other labs
    /// stack on the right (the lab whose panes are tallest).
    pub overview_lead: bool,
    /// Its own theme items (its series' colours).
    pub colours: &'static [crate::lab_kit::view::Colour],
    /// The title of its table in `latlab compare`, and the name of its subject column.
    pub compared: (&'static str, &'static str),
    /// Its part of the report's JSON schema, when it keeps it in its folder; None: its part is
    /// in the published `schemas/run-report.schema.json`.
    pub schema: Option<&'static str>,
    /// How many parts the subject of one of its series has: a consumer (1); a storage class
    /// and an operation (2).
    pub subject_parts: usize,
    /// The quantities its series measure: `arrival_to_receive`, `total`, `lag`.
    pub quantities: &'static [&'static str],
    /// The key a recording's frame writes its gauge series under (`read_rate`: Kinesis's
    /// GetRecords calls a second per shard); None: it has no gauge series.
    pub gauge: Option<&'static str>,
    /// Its sections of a price file (`[kinesis]`, `[s3.standard]`): every key a price must
    /// have, its unit, and which Price List product `latlab prices fetch` reads it from.
    pub prices: &'static [crate::lab_kit::cost::Section],
}

impl Facts {
    /// A lab's facts with every default (see [`Facts`]).
    pub const fn new(
        kind: LabKind,
        name: &'static str,
        demo: &'static str,
        scenarios: &'static [(&'static str, &'static str)],
    ) -> Facts {
        Facts {
            kind,
            name,
            demo,
            scenarios,
            service: None,
            roles: false,
            measures_from_start: false,
            stopping: "its probes finish",
            overview_weight: 3,
            overview_lead: false,
            colours: &[],
            compared: (name, "series"),
            schema: None,
            subject_parts: 1,
            quantities: &[],
            gauge: None,
            prices: &[],
        }
    }
}
