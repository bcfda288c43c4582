//! The emulator's tests, one binary: each service through the real AWS SDK clients over HTTP
//! (every operation, the errors a client sees, each limit), the server's sockets, and malformed
//! requests of every kind. They need latlab's emulator crate and the SDKs alone, not latlab.

mod common;
mod dynamodb_capacity;
mod dynamodb_emulator;
mod dynamodb_streams;
mod emulator_sockets;
mod faults;
mod hostile_s3;
mod kinesis_emulator;
mod kinesis_fan_out;
mod kinesis_limits;
mod kinesis_reshard;
mod kinesis_reshard_limits;
mod s3_emulator;
mod sqs_emulator;
mod sqs_fifo;
mod tls_hosts;
