//! The DynamoDB lab: one writer on a table whose partition keys can be skewed towards one hot key,
//! a reader (strong or eventual), every partition's use against its limits (the heat strip), and
//! the table's changes captured three ways (a DynamoDB Streams poller, Lambda on the stream, a
//! fan-out consumer on the Kinesis data stream the table streams to), every one a real AWS SDK
//! client over HTTP. Press a key to skew the keys and one partition throttles while the table's
//! capacity is mostly idle.
//!
//! `config.rs` is its part of a scenario file; `client.rs` its clients and the interceptor that
//! reads each throttle's reasons; `table.rs` what a run creates and deletes; `state.rs` what the
//! probes write (the ledger: received + lost + unread = written); `writer.rs` the writer and the
//! reader; `cdc.rs` the change consumers.

mod calibrate;
mod cdc;
mod cleanup;
pub mod client;
pub mod config;
mod cost;
mod doctor;
mod keys;
mod lab;
mod metrics;
mod plan;
mod probes;
mod report;
mod sample;
pub mod snapshot;
pub mod state;
pub mod table;
mod view;
pub mod writer;

pub use snapshot::DynamoSnapshot;

/// What the DynamoDB lab's keys ask of it while it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Skew the keys towards the hot key, or spread them again.
    Skew,
    RateUp,
    RateDown,
    /// Provisioned <-> on-demand.
    Mode,
    CapacityUp,
    CapacityDown,
    AddReader,
    RemoveReader,
    /// Strong <-> eventual reads.
    Consistency,
}

impl crate::labs::LabCommand for Command {
    fn what(self) -> &'static str {
        match self {
            Command::Skew => "skewing the DynamoDB keys",
            Command::RateUp => "raising the DynamoDB writer's rate",
            Command::RateDown => "lowering the DynamoDB writer's rate",
            Command::Mode => "switching the DynamoDB table's billing mode",
            Command::CapacityUp => "raising the DynamoDB table's provisioned capacity",
            Command::CapacityDown => "lowering the DynamoDB table's provisioned capacity",
            Command::AddReader => "adding a DynamoDB Streams reader",
            Command::RemoveReader => "removing a DynamoDB Streams reader",
            Command::Consistency => "switching the DynamoDB reads' consistency",
        }
    }
}

/// The lab, once started.
pub struct DynamoLab {
    probes: probes::Probes,
}

/// Its last seconds: each series' (the writer's, the reads', each change consumer's) by name.
pub type History = Vec<(String, Vec<crate::metrics::Point>)>;

const SCENARIOS: &[(&str, &str)] = &[
    (
        "dynamodb-demo",
        include_str!("scenarios/dynamodb-demo.toml"),
    ),
    ("dynamodb-cdc", include_str!("scenarios/dynamodb-cdc.toml")),
    (
        "dynamodb-on-demand",
        include_str!("scenarios/dynamodb-on-demand.toml"),
    ),
];

impl crate::labs::Lab for DynamoLab {
    const FACTS: crate::labs::Facts = crate::labs::Facts {
        service: Some(latlab_core::services::Service::Dynamodb),
        measures_from_start: true,
        stopping: "the writer has stopped; change consumers are draining",
        overview_weight: 3,
        colours: view::COLOURS,
        compared: ("DynamoDB: writes, reads and change capture", "series"),
        schema: Some(include_str!("schema.json")),
        quantities: &["write", "read", "write_to_receive"],
        prices: cost::PRICES,
        ..crate::labs::Facts::new(
            crate::labs::LabKind::Dynamodb,
            "DynamoDB",
            "dynamodb-demo",
            SCENARIOS,
        )
    };

    type File = config::DynamoFile;
    type Seed = crate::labs::NoSeed;
    type Json = DynamoSnapshot;
    type Scenario = config::DynamoScenario;
    type Command = Command;
    type Snapshot = DynamoSnapshot;
    type History = History;
    type Target = crate::labs::target::Nothing;
}
