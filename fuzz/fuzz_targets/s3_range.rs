//! `Range` headers (`latlab_emulator::s3::ops::object::parse_range`): any text answers a range
//! inside the object or InvalidRange; `bytes=a-b`, `bytes=a-` and `bytes=-n` resolve as S3
//! resolves them, unsatisfiable ones refused.
#![no_main]

use arbitrary::Arbitrary;
use latlab_emulator::s3::ops::object::parse_range;
use latlab_fuzz::s3_range;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Input {
    Text(String, u64),
    FromTo(u64, u64, u64),
    From(u64, u64),
    Suffix(u64, u64),
}

fuzz_target!(|input: Input| {
    let (header, first, last, size) = match input {
        Input::Text(text, size) => {
            match parse_range(&text, size) {
                Ok((start, end)) => assert!(start < end && end <= size, "{text:?}"),
                Err(e) => assert_eq!((e.status, e.code), (416, "InvalidRange")),
            }
            return;
        }
        Input::FromTo(a, b, size) => (format!("bytes={a}-{b}"), Some(a), Some(b), size),
        Input::From(a, size) => (format!("bytes={a}-"), Some(a), None, size),
        Input::Suffix(n, size) => (format!("bytes=-{n}"), None, Some(n), size),
    };
    let want = s3_range(first.map(u128::from), last.map(u128::from), size);
    assert_eq!(
        parse_range(&header, size).ok(),
        want,
        "{header} on {size} bytes"
    );
});
