//! latlab as a user runs it from a shell: `latlab run` and `latlab emulate`, set-up, the doctor,
//! the docs' commands, bad input, what an endpoint answers, a second SDK on the wire, and the
//! tree's own rules, in one test binary.

mod architecture;
mod aws_answers;
mod boto3_wire;
mod cli_emulate;
mod cli_run;
#[path = "../common/mod.rs"]
mod common;
mod doc_commands;
mod doctor;
mod hostile_input;
mod setup;
