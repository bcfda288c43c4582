//! S3's XML request bodies (CompleteMultipartUpload, DeleteObjects, CreateBucketConfiguration),
//! read with `latlab_emulator::s3::xml` as the operations read them: any text is read or refused
//! with MalformedXML; a document written as the SDK writes it reads back to its parts and keys.
//! Keys keep whitespace at their ends and line breaks (written as character references, as the
//! SDK writes them).
#![no_main]

use arbitrary::Arbitrary;
use latlab_emulator::s3::xml;
use latlab_fuzz::sdk_escape;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    text: String,
    parts: Vec<(u16, String)>,
    keys: Vec<String>,
    quiet: bool,
    pretty: bool,
}

const TAGS: &[&str] = &[
    "Part",
    "PartNumber",
    "ETag",
    "Object",
    "Key",
    "Quiet",
    "Type",
    "CreateBucketConfiguration",
];

/// Text a reader must give back as it is: not empty, no whitespace at the ends, no control
/// characters or line breaks.
fn plain(s: &str) -> bool {
    !s.is_empty()
        && s.trim() == s
        && !s
            .chars()
            .any(|c| c.is_control() || c == '\u{2028}' || c == '\u{2029}')
}

fuzz_target!(|input: Input| {
    for tag in TAGS {
        match xml::all(&input.text, tag) {
            Ok(inner) => assert!(inner.iter().all(|p| input.text.contains(p))),
            Err(e) => assert_eq!(e.code, "MalformedXML"),
        }
        let _ = xml::text(&input.text, tag);
    }

    let g = if input.pretty { "\n  " } else { "" };
    let parts: Vec<(u32, String)> = input
        .parts
        .into_iter()
        .filter(|(_, etag)| plain(etag))
        .map(|(n, etag)| (n as u32 % 10_000 + 1, etag))
        .collect();
    let mut doc =
        String::from("<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
    for (n, etag) in &parts {
        doc.push_str(&format!(
            "{g}<Part>{g}<ETag>{}</ETag>{g}<PartNumber>{n}</PartNumber>{g}</Part>",
            sdk_escape(etag)
        ));
    }
    doc.push_str(&format!("{g}</CompleteMultipartUpload>"));
    let read: Vec<(u32, String)> = xml::all(&doc, "Part")
        .expect("a well-formed document")
        .iter()
        .map(|p| {
            let n = xml::text(p, "PartNumber")
                .unwrap()
                .unwrap()
                .parse()
                .unwrap();
            (n, xml::text(p, "ETag").unwrap().unwrap())
        })
        .collect();
    assert_eq!(read, parts);

    // Keys may hold anything XML can carry: every character but the control characters other
    // than tab, line feed and carriage return.
    let keys: Vec<String> = input
        .keys
        .into_iter()
        .filter(|k| {
            !k.is_empty()
                && !k
                    .chars()
                    .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
        })
        .collect();
    let mut doc = String::from("<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
    for k in &keys {
        doc.push_str(&format!(
            "{g}<Object>{g}<Key>{}</Key>{g}</Object>",
            sdk_escape(k)
        ));
    }
    doc.push_str(&format!("{g}<Quiet>{}</Quiet>{g}</Delete>", input.quiet));
    let read: Vec<String> = xml::all(&doc, "Object")
        .expect("a well-formed document")
        .iter()
        .map(|o| xml::text(o, "Key").unwrap().unwrap())
        .collect();
    assert_eq!(read, keys);
    assert_eq!(
        xml::text(&doc, "Quiet").unwrap().as_deref() == Some("true"),
        input.quiet
    );
});
