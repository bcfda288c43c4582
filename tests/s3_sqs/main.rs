//! The S3, SQS and DynamoDB labs end to end, and SQS on an account, in one test binary.

#[path = "../common/mod.rs"]
mod common;
mod dynamodb_lab;
mod s3_lab;
mod sqs_account;
mod sqs_lab;
