//! The S3 and SQS labs end to end, and SQS on an account, in one test binary.

#[path = "../common/mod.rs"]
mod common;
mod s3_lab;
mod sqs_account;
mod sqs_lab;
