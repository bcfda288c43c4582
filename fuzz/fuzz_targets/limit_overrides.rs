//! `--limit KEY=VALUE` overrides (`latlab_emulator::limits::Limits::load`): any list of values
//! loads or names what is wrong.
#![no_main]

use latlab_emulator::limits::Limits;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|overrides: Vec<String>| {
    let _ = Limits::load(None, &overrides);
});
