//! Where the S3 lab measures, as the user names it: on another endpoint or AWS, the S3
//! Standard bucket and the S3 Express One Zone directory bucket it writes under `latlab/` in
//! (the embedded emulator makes its own).

use crate::labs::target::{Form, Key, LabTarget};

/// The S3 lab's options.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S3Target {
    /// S3 lab on another endpoint: the S3 Standard bucket (objects go under latlab/)
    #[arg(long, value_name = "NAME", env = "LATLAB_S3_BUCKET")]
    pub s3_bucket: Option<String>,
    /// S3 lab on another endpoint: the S3 Express One Zone directory bucket (NAME--AZID--x-s3)
    #[arg(long, value_name = "NAME", env = "LATLAB_S3_EXPRESS_BUCKET")]
    pub s3_express_bucket: Option<String>,
}

impl LabTarget for S3Target {
    const KEYS: &'static [Key] = &[
        Key::flag(
            "s3_bucket",
            Form::Word,
            "none",
            "The S3 lab's Standard bucket on endpoint_url or aws (objects go under latlab/; not used with the embedded emulator)",
            "\"my-latlab-bucket\"",
        )
        .external_only(),
        Key::flag(
            "s3_express_bucket",
            Form::Word,
            "none",
            "The S3 lab's Express One Zone directory bucket (NAME--AZID--x-s3) on endpoint_url or aws",
            "\"my-latlab--euw1-az1--x-s3\"",
        )
        .external_only(),
    ];
}
