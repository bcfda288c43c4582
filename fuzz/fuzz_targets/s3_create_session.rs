//! CreateSession's `x-amz-create-session-mode` header and the `x-amz-s3session-token` of a
//! directory bucket, sent to an in-process emulator: ReadWrite, ReadOnly or no mode get a
//! session, any other mode a 400; a token that was not issued for the bucket is refused with
//! InvalidToken or AccessDenied.
#![no_main]

use arbitrary::Arbitrary;
use latlab_fuzz::{element, ensure_bucket, header_value, http};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    mode: Vec<u8>,
    token: Vec<u8>,
    /// Derive the token from a real one: cut it here, or change this byte of it.
    near: Option<(u8, u8)>,
}

fuzz_target!(|input: Input| {
    let bucket = "fuzz--use1-az4--x-s3";
    ensure_bucket(bucket);
    let mode = header_value(&input.mode);
    let r = http(
        "GET",
        &format!("/{bucket}?session"),
        &[("x-amz-create-session-mode", &mode)],
        b"",
    );
    let valid = ["", "ReadWrite", "ReadOnly"].contains(&String::from_utf8_lossy(&mode).trim());
    assert_eq!(
        r.status,
        if valid { 200 } else { 400 },
        "{:?}: {}",
        String::from_utf8_lossy(&mode),
        r.text()
    );
    let real = element(&session(bucket), "SessionToken").expect("a SessionToken");
    let token = match input.near {
        None => header_value(&input.token),
        Some((at, change)) => {
            let mut t = real.as_bytes().to_vec();
            let i = at as usize % t.len();
            if change % 2 == 0 {
                t.truncate(i);
            } else {
                t[i] = if t[i] == b'~' { b'!' } else { t[i] + 1 };
            }
            t
        }
    };
    if token == real.as_bytes() {
        return;
    }
    let r = http(
        "GET",
        &format!("/{bucket}?list-type=2"),
        &[("x-amz-s3session-token", &token)],
        b"",
    );
    assert!(
        matches!(
            (r.status, r.code().as_deref()),
            (400, Some("InvalidToken")) | (403, Some("AccessDenied"))
        ),
        "{:?}: {} {}",
        String::from_utf8_lossy(&token),
        r.status,
        r.text()
    );
});

fn session(bucket: &str) -> String {
    let r = http("GET", &format!("/{bucket}?session"), &[], b"");
    assert_eq!(r.status, 200, "{}", r.text());
    r.text()
}
