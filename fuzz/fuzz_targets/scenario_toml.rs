//! Scenario files (`latlab::scenario::Scenario::parse`): any text parses or names what is wrong.
#![no_main]

use latlab::scenario::Scenario;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Err(e) = Scenario::parse(text, "fuzz") {
        assert!(!format!("{e:#}").is_empty());
    }
});
