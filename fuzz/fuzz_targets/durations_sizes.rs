//! Durations and sizes (`latlab_core::units::parse_duration`, `parse_bytes`): any text parses or is
//! refused; what parses is within latlab's stated maxima, so a deadline or a schedule made from
//! it never overflows the clock; a duration prints back to itself, a size to within its printed
//! precision. `fuzz/seeds/durations_sizes/` holds the values that once reached a panic
//! (`--duration 300000000000y`): 12 bytes of numbers, then the text.
#![no_main]

use std::time::Duration;

use arbitrary::Arbitrary;
use latlab_core::units::{
    MAX_BYTES, MAX_DURATION, format_bytes, format_duration, parse_bytes, parse_duration,
};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    millis: u32,
    bytes: u64,
    /// Last, so a seed file's tail is the text as written.
    text: String,
}

/// A run's deadline (`now + duration`) and a schedule's next point (`now + 2 * every`) fit the
/// clock.
fn fits_the_clock(d: Duration) -> bool {
    let now = std::time::Instant::now();
    now.checked_add(d)
        .and_then(|t| t.checked_add(d))
        .is_some()
}

fuzz_target!(|input: Input| {
    if let Ok(d) = parse_duration(&input.text) {
        assert!(d <= MAX_DURATION, "{:?} -> {d:?}", input.text);
        assert!(fits_the_clock(d), "{:?} -> {d:?}", input.text);
    }
    if let Ok(b) = parse_bytes(&input.text) {
        assert!(b <= MAX_BYTES, "{:?} -> {b}", input.text);
    }
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
