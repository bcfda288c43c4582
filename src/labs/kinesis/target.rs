//! Where the Kinesis lab measures, as the user names it: a stream of the run's own unless an
//! existing one is named (`--stream`, `LATLAB_STREAM`, the config file's `stream`).

use crate::labs::target::{Form, Key, LabTarget};

/// The Kinesis lab's options.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KinesisTarget {
    /// Use this existing stream instead of creating one (it is never deleted)
    #[arg(long, value_name = "NAME", env = "LATLAB_STREAM")]
    pub stream: Option<String>,
}

impl LabTarget for KinesisTarget {
    const KEYS: &'static [Key] = &[Key::flag(
        "stream",
        Form::Word,
        "none: each run makes its own",
        "An existing stream for the Kinesis lab on endpoint_url or aws (never deleted; not used with the embedded emulator)",
        "\"my-latlab-stream\"",
    )
    .external_only()];
}
