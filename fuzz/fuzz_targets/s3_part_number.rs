//! UploadPart's `partNumber` and `uploadId` query parameters, sent to an in-process emulator:
//! 1..=10000 is taken, anything else is InvalidArgument naming partNumber; an upload id never
//! issued is NoSuchUpload. (The part number is read inside the handler, so only a request reaches
//! it.)
#![no_main]

use arbitrary::Arbitrary;
use latlab_fuzz::{element, ensure_bucket, http, pct};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    number: String,
    upload_id: String,
}

fuzz_target!(|input: Input| {
    let bucket = "fuzz-parts";
    ensure_bucket(bucket);
    let r = http("POST", &format!("/{bucket}/p?uploads"), &[], b"");
    assert_eq!(r.status, 200);
    let id = element(&r.text(), "UploadId").expect("an UploadId");

    let number = &input.number;
    let digits = number.strip_prefix('+').unwrap_or(number);
    let valid = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && digits.trim_start_matches('0').len() <= 5
        && (1..=10_000).contains(&digits.parse::<u64>().unwrap_or(0));
    let r = http(
        "PUT",
        &format!(
            "/{bucket}/p?partNumber={}&uploadId={}",
            pct(number),
            pct(&id)
        ),
        &[],
        b"part",
    );
    if valid {
        assert_eq!(r.status, 200, "{number:?}: {}", r.text());
    } else {
        assert_eq!(r.status, 400, "{number:?}: {}", r.text());
        assert_eq!(r.code().as_deref(), Some("InvalidArgument"));
        assert_eq!(
            element(&r.text(), "ArgumentName").as_deref(),
            Some("partNumber")
        );
    }
    let r = http(
        "DELETE",
        &format!("/{bucket}/p?uploadId={}", pct(&id)),
        &[],
        b"",
    );
    assert_eq!(r.status, 204);

    // An id never issued (the emulator's are `latlab-upload-<n>-<random>`).
    if input.upload_id.starts_with("latlab-upload-") {
        return;
    }
    let r = http(
        "PUT",
        &format!(
            "/{bucket}/p?partNumber=1&uploadId={}",
            pct(&input.upload_id)
        ),
        &[],
        b"x",
    );
    assert_eq!(r.status, 404, "{}", r.text());
    assert_eq!(r.code().as_deref(), Some("NoSuchUpload"));
    assert_eq!(
        element(&r.text(), "UploadId"),
        Some(input.upload_id.clone())
    );
});
