//! Durations and sizes (`latlab::units::parse_duration`, `parse_bytes`): any text parses or is
//! refused; a duration prints back to itself, a size to within its printed precision.
#![no_main]

use std::time::Duration;

use arbitrary::Arbitrary;
use latlab::units::{format_bytes, format_duration, parse_bytes, parse_duration};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    text: String,
    millis: u32,
    bytes: u64,
}

fuzz_target!(|input: Input| {
    let _ = parse_duration(&input.text);
    let _ = parse_bytes(&input.text);
    let d = Duration::from_millis(input.millis as u64 % 86_400_000);
    assert_eq!(parse_duration(&format_duration(d)), Ok(d));
    let bytes = input.bytes % (1 << 40);
    let shown = format_bytes(bytes);
    let back = parse_bytes(&shown).expect("a printed size parses");
    assert!(
        (back as f64 - bytes as f64).abs() <= bytes as f64 * 0.05,
        "{bytes} -> {shown} -> {back}"
    );
});
