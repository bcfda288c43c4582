//! Limits files (`latlab_emulator::limits::Limits::from_toml`): any text parses or names what
//! is wrong.
#![no_main]

use latlab_emulator::limits::Limits;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = Limits::from_toml(text);
});
