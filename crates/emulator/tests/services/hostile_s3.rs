//! Property tests of the S3 emulator's parsers and of the SubscribeToShard event-stream encoder,
//! the parsers tests/cli/hostile_input.rs does not reach, with a fixed number of cases so CI runs them
//! in seconds:
//!
//! - the XML request bodies (CompleteMultipartUpload, DeleteObjects, CreateBucketConfiguration):
//!   any bytes are answered or refused with MalformedXML, never crash the handler, and a document
//!   written as the SDK writes it reads back to the parts and keys it was built from;
//! - `Range` headers: whatever the text, an accepted range lies inside the object, and `bytes=a-b`,
//!   `bytes=a-`, `bytes=-n` resolve as S3 resolves them, unsatisfiable ones refused with 416;
//! - multipart part numbers (1..=10000 taken, anything else InvalidArgument) and upload ids (one
//!   never issued is NoSuchUpload);
//! - CreateSession's session-mode header and the session tokens of directory buckets;
//! - SubscribeToShard events: encoded by the emulator, decoded with `aws_smithy_eventstream` (CRCs
//!   checked), they carry the records encoded, and no prefix or corruption of a frame decodes.
//!
//! What can only be reached through HTTP is sent as raw requests to an emulator started once, in
//! process, on 127.0.0.1. A handler that panics drops its connection without an answer, which the
//! client here reports as a failure.

use crate::common;

use std::cell::RefCell;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
use aws_smithy_types::event_stream::Message;
use base64::Engine;
use bytes::{Bytes, BytesMut};
use latlab_emulator::kinesis::store::{Record, parse_sequence_number};
use latlab_emulator::kinesis::subscribe::event;
use latlab_emulator::limits::Limits;
use latlab_emulator::s3::ops::object::parse_range;
use latlab_emulator::s3::xml;
use latlab_emulator::{Emulator, EmulatorConfig};
use proptest::prelude::*;
use proptest::sample::Index;

use common::proptest_config as config;

// ---------------------------------------------------------------------------------------------
// The emulator, and a raw HTTP/1.1 client for it.

struct Shared {
    _runtime: tokio::runtime::Runtime,
    emulator: Emulator,
}

/// One emulator for every property: the zero profile, request rates no test reaches, parts of
/// any size, sessions that outlast a long run.
fn emulator() -> &'static Emulator {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    &SHARED
        .get_or_init(|| {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a runtime");
            let mut limits = Limits::default();
            // The largest rates a user may set: a rate window once reserved a slot per
            // allowed call, and u32::MAX asked for 64 GiB (fuzz/s3_part_number's finding).
            limits.s3.standard_writes_per_sec = u32::MAX;
            limits.s3.standard_reads_per_sec = u32::MAX;
            limits.s3.express_writes_per_sec = u32::MAX;
            limits.s3.express_reads_per_sec = u32::MAX;
            limits.s3.min_part_bytes = 1;
            limits.s3.session_duration = Duration::from_secs(7 * 24 * 3600);
            let emulator = runtime
                .block_on(Emulator::start(EmulatorConfig {
                    limits,
                    ..EmulatorConfig::default()
                }))
                .expect("the emulator starts");
            Shared {
                _runtime: runtime,
                emulator,
            }
        })
        .emulator
}

#[derive(Debug)]
struct Reply {
    status: u16,
    /// Names in lower case.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The `<Code>` of an S3 error answer.
    fn code(&self) -> Option<String> {
        element(&self.text(), "Code")
    }
}

/// A keep-alive connection to the emulator, opened again when the server closes it.
struct Http {
    addr: SocketAddr,
    conn: Option<BufReader<TcpStream>>,
}

impl Http {
    fn connect(&self) -> BufReader<TcpStream> {
        let s = TcpStream::connect(self.addr).expect("connect to the emulator");
        // Against a hang only: every answer here comes in milliseconds.
        s.set_read_timeout(Some(Duration::from_secs(120))).ok();
        s.set_nodelay(true).ok();
        BufReader::new(s)
    }

    fn send(
        &mut self,
        method: &str,
        target: &str,
        headers: &[(&str, &[u8])],
        body: &[u8],
    ) -> Reply {
        let mut raw = format!(
            "{method} {target} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {}\r\n",
            body.len()
        )
        .into_bytes();
        for (name, value) in headers {
            raw.extend_from_slice(name.as_bytes());
            raw.extend_from_slice(b": ");
            raw.extend_from_slice(value);
            raw.extend_from_slice(b"\r\n");
        }
        raw.extend_from_slice(b"\r\n");
        raw.extend_from_slice(body);
        // A reused connection the server has closed meanwhile is retried once on a new one; a
        // new connection closed without an answer is a handler that died.
        loop {
            let fresh = self.conn.is_none();
            let mut conn = match self.conn.take() {
                Some(c) => c,
                None => self.connect(),
            };
            let answer = conn
                .get_mut()
                .write_all(&raw)
                .and_then(|_| read_reply(&mut conn));
            match answer {
                Ok(Some(reply)) => {
                    let close = reply
                        .header("connection")
                        .is_some_and(|v| v.eq_ignore_ascii_case("close"));
                    if !close {
                        self.conn = Some(conn);
                    }
                    return reply;
                }
                Ok(None) | Err(_) if !fresh => continue,
                other => panic!(
                    "{method} {target}: the emulator closed the connection without an answer: {other:?}"
                ),
            }
        }
    }
}

/// One HTTP/1.1 answer; `None` when the connection ends before its status line.
fn read_reply(conn: &mut BufReader<TcpStream>) -> std::io::Result<Option<Reply>> {
    let mut line = String::new();
    if conn.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let status: u16 = line
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP status line: {line:?}"));
    let mut headers = Vec::new();
    loop {
        line.clear();
        conn.read_line(&mut line)?;
        let l = line.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            break;
        }
        let (name, value) = l.split_once(':').expect("a header line");
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let find = |n: &str| headers.iter().find(|(h, _)| h == n).map(|(_, v)| v.clone());
    let mut body = Vec::new();
    if find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            line.clear();
            conn.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                .expect("a chunk size");
            let mut chunk = vec![0; size + 2];
            conn.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(n) = find("content-length") {
        body.resize(n.parse().expect("a content-length"), 0);
        conn.read_exact(&mut body)?;
    }
    Ok(Some(Reply {
        status,
        headers,
        body,
    }))
}

/// A request on this thread's connection to the shared emulator.
fn http(method: &str, target: &str, headers: &[(&str, &[u8])], body: &[u8]) -> Reply {
    thread_local! {
        static HTTP: RefCell<Option<Http>> = const { RefCell::new(None) };
    }
    HTTP.with(|h| {
        h.borrow_mut()
            .get_or_insert_with(|| Http {
                addr: emulator().addr(),
                conn: None,
            })
            .send(method, target, headers, body)
    })
}

/// Percent-encoding of everything but RFC 3986's unreserved characters, for paths and queries.
fn pct(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Creates a bucket unless it exists.
fn ensure_bucket(name: &str) {
    let r = http("PUT", &format!("/{name}"), &[], b"");
    assert!(
        r.status == 200 || r.code().as_deref() == Some("BucketAlreadyOwnedByYou"),
        "create {name}: {} {}",
        r.status,
        r.text()
    );
}

/// A new multipart upload of `key`; its id.
fn create_upload(bucket: &str, key: &str) -> String {
    let r = http("POST", &format!("/{bucket}/{}?uploads", pct(key)), &[], b"");
    assert_eq!(r.status, 200, "{}", r.text());
    element(&r.text(), "UploadId").expect("an UploadId")
}

/// UploadPart: (status, the answer's ETag or error code).
fn upload_part(bucket: &str, key: &str, id: &str, number: &str, data: &[u8]) -> Reply {
    http(
        "PUT",
        &format!(
            "/{bucket}/{}?partNumber={}&uploadId={}",
            pct(key),
            pct(number),
            pct(id)
        ),
        &[],
        data,
    )
}

/// A session token for a directory bucket.
fn session_token(bucket: &str) -> String {
    let r = http("GET", &format!("/{bucket}?session"), &[], b"");
    assert_eq!(r.status, 200, "{}", r.text());
    element(&r.text(), "SessionToken").expect("a SessionToken")
}

// ---------------------------------------------------------------------------------------------
// XML as the SDK writes it and as any parser reads it, independent of the emulator's.

/// Text escaped as aws-sdk-s3's XML writer escapes it: the five named entities, and line breaks
/// (CR, LF, NEL, LS) as numeric references.
fn sdk_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '\'' => out.push_str("&apos;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' | '\n' | '\u{85}' | '\u{2028}' => out.push_str(&format!("&#x{:X};", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// XML character data decoded: named entities and decimal or hex character references.
fn xml_unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest.find(';').expect("an entity ends with ';'");
        let entity = &rest[1..end];
        let c = match entity {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            e if e.starts_with("#x") => {
                char::from_u32(u32::from_str_radix(&e[2..], 16).unwrap()).expect("a character")
            }
            e if e.starts_with('#') => {
                char::from_u32(e[1..].parse().unwrap()).expect("a character")
            }
            e => panic!("unknown entity &{e};"),
        };
        out.push(c);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The decoded text of the first `<tag>` in an answer.
fn element(xml: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let len = xml[start..].find(&format!("</{tag}>"))?;
    Some(xml_unescape(&xml[start..start + len]))
}

/// Whitespace between elements, as a pretty-printing writer puts it.
fn gap(pretty: bool) -> &'static str {
    if pretty { "\n  " } else { "" }
}

fn complete_doc(parts: &[(u32, String)], pretty: bool) -> String {
    let g = gap(pretty);
    let mut doc = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">".to_string();
    for (n, etag) in parts {
        doc.push_str(&format!(
            "{g}<Part>{g}<ETag>{}</ETag>{g}<PartNumber>{n}</PartNumber>{g}</Part>",
            sdk_escape(etag)
        ));
    }
    doc.push_str(&format!("{g}</CompleteMultipartUpload>"));
    doc
}

fn delete_doc(keys: &[String], quiet: bool, pretty: bool) -> String {
    let g = gap(pretty);
    let mut doc = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">".to_string();
    for k in keys {
        doc.push_str(&format!(
            "{g}<Object>{g}<Key>{}</Key>{g}</Object>",
            sdk_escape(k)
        ));
    }
    doc.push_str(&format!("{g}<Quiet>{quiet}</Quiet>{g}</Delete>"));
    doc
}

/// Object keys S3 takes that need no more of a reader than named entities: printable text
/// without whitespace at either end.
fn plain_key() -> impl Strategy<Value = String> {
    "[!-~é€日本🦀]([ -~é€日本🦀]{0,40}[!-~é€日本🦀])?"
}

/// Object keys with what an XML reader must keep as it is: spaces and tabs at the ends, and line
/// breaks, which the SDK writes as character references.
fn spaced_key() -> impl Strategy<Value = String> {
    "[ \t\r\n\u{85}\u{2028}a-z<&>]{1,24}"
}

fn etag() -> impl Strategy<Value = String> {
    prop_oneof!["\"[0-9a-f]{32}(-[0-9]{1,5})?\"", "[!-~]([ -~]{0,38}[!-~])?",]
}

/// Bytes that look like the XML bodies: their tags, entities and punctuation, mixed with anything.
fn near_xml() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            Just("<?xml version=\"1.0\" encoding=\"UTF-8\"?>".to_string()),
            Just("<CompleteMultipartUpload>".to_string()),
            Just("</CompleteMultipartUpload>".to_string()),
            Just("<Part>".to_string()),
            Just("</Part>".to_string()),
            Just("<Part/>".to_string()),
            Just("<Part ".to_string()),
            Just("<PartNumber>".to_string()),
            Just("</PartNumber>".to_string()),
            Just("<ETag>".to_string()),
            Just("</ETag>".to_string()),
            Just("<Delete>".to_string()),
            Just("<Object>".to_string()),
            Just("</Object>".to_string()),
            Just("<Key>".to_string()),
            Just("</Key>".to_string()),
            Just("<Quiet>true</Quiet>".to_string()),
            Just("<CreateBucketConfiguration>".to_string()),
            Just("<Type>".to_string()),
            Just("</Type>".to_string()),
            Just("&amp;".to_string()),
            Just("&lt;".to_string()),
            Just("&#34;".to_string()),
            Just("&#x".to_string()),
            Just("&".to_string()),
            Just("<".to_string()),
            Just(">".to_string()),
            Just("/".to_string()),
            Just("\"".to_string()),
            Just("é€\u{10FFFF}".to_string()),
            "[0-9]{1,12}".prop_map(|s| s),
            any::<String>(),
        ],
        0..32,
    )
    .prop_map(|parts| parts.concat().into_bytes())
}

/// A document with a few bytes cut out, repeated or flipped.
fn damaged(doc: &str, at: Index, len: usize, how: u8) -> Vec<u8> {
    let mut b = doc.as_bytes().to_vec();
    if b.is_empty() {
        return b;
    }
    let i = at.index(b.len());
    let j = (i + len).min(b.len());
    match how % 4 {
        0 => {
            b.drain(i..j);
        }
        1 => b.truncate(i),
        2 => {
            let piece = b[i..j].to_vec();
            b.splice(i..i, piece);
        }
        _ => b[i] ^= 0x20,
    }
    b
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
    "",
];

// ---------------------------------------------------------------------------------------------
// Range headers: S3's rules, written out.

/// What S3 answers for `Range: bytes=...` on an object of `size` bytes, the byte positions as
/// numbers of any size: the half-open range, or None for unsatisfiable (416).
fn s3_range(first: Option<u128>, last: Option<u128>, size: u64) -> Option<(u64, u64)> {
    let size = size as u128;
    let (start, end) = match (first, last) {
        // bytes=-n: the last n bytes; a zero suffix is unsatisfiable.
        (None, Some(n)) => {
            if n == 0 || size == 0 {
                return None;
            }
            (size - n.min(size), size)
        }
        // bytes=a-: from a to the end.
        (Some(a), None) => (a, size),
        // bytes=a-b: b at or past the end means the end.
        (Some(a), Some(b)) => {
            if b < a {
                return None;
            }
            (a, (b + 1).min(size))
        }
        (None, None) => return None,
    };
    (start < size).then_some((start as u64, end as u64))
}

fn size() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..=40, any::<u64>(), Just(u64::MAX)]
}

/// A byte position: near the small sizes, or anywhere below u64::MAX.
fn position() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..=48, any::<u64>().prop_map(|v| v.min(u64::MAX - 1))]
}

fn digits(n: u64, zeros: usize) -> String {
    format!("{}{n}", "0".repeat(zeros))
}

/// Range header text: near-valid pieces, and anything.
fn range_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just(String::new()),
        "[0-9]{1,22}".prop_map(|s| s),
        position().prop_map(|v| v.to_string()),
        Just(" 1 ".to_string()),
        Just("+1".to_string()),
        Just("-1".to_string()),
        Just("1e3".to_string()),
    ];
    prop_oneof![
        (
            prop_oneof![
                Just("bytes="),
                Just("bytes = "),
                Just("Bytes="),
                Just(" bytes="),
                Just("lines="),
                Just("bytes"),
                Just(""),
            ],
            piece.clone(),
            prop_oneof![Just("-"), Just("--"), Just(","), Just("")],
            piece,
            prop_oneof![Just(""), Just(",0-1"), Just(" "), Just("-")],
        )
            .prop_map(|(p, a, s, b, t)| format!("{p}{a}{s}{b}{t}")),
        any::<String>(),
    ]
}

// ---------------------------------------------------------------------------------------------
// Event-stream frames.

#[derive(Clone, Debug)]
struct Generated {
    counter: u64,
    data: Vec<u8>,
    partition_key: String,
    arrival_micros: i64,
}

fn generated_record() -> impl Strategy<Value = Generated> {
    (
        any::<u64>(),
        prop::collection::vec(any::<u8>(), 0..300),
        prop::collection::vec(any::<char>(), 1..48).prop_map(String::from_iter),
        // 1970 to 2033: microseconds an f64 of seconds holds exactly enough.
        0i64..2_000_000_000_000_000,
    )
        .prop_map(|(counter, data, partition_key, arrival_micros)| Generated {
            counter,
            data,
            partition_key,
            arrival_micros,
        })
}

fn record(g: &Generated) -> Record {
    let now = Instant::now();
    Record {
        counter: g.counter,
        data: Bytes::from(g.data.clone()),
        partition_key: Arc::from(g.partition_key.as_str()),
        arrival_micros: g.arrival_micros,
        arrival: now,
        visible_at: now,
    }
}

/// Kinesis sequence numbers as the emulator documents them: `4`, the shard index in 9 digits,
/// the record's counter in 21.
fn sequence(shard: u32, counter: u64) -> String {
    format!("4{shard:09}{counter:021}")
}

/// Every frame in `bytes`, fed to one decoder `cut` bytes at a time; the decoder's error, if any.
fn decode_all(bytes: &[u8], cut: usize) -> Result<(Vec<Message>, bool), String> {
    let mut decoder = MessageFrameDecoder::new();
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for piece in bytes.chunks(cut.max(1)) {
        buf.extend_from_slice(piece);
        while let DecodedFrame::Complete(m) =
            decoder.decode_frame(&mut buf).map_err(|e| e.to_string())?
        {
            out.push(m);
        }
    }
    Ok((out, buf.is_empty()))
}

fn string_header(m: &Message, name: &str) -> Option<String> {
    m.headers()
        .iter()
        .find(|h| h.name().as_str() == name)
        .and_then(|h| h.value().as_string().ok())
        .map(|s| s.as_str().to_string())
}

proptest! {
    #![proptest_config(config())]

    // --- XML request bodies ------------------------------------------------------------------

    #[test]
    fn the_xml_scanner_answers_or_refuses_any_text(
        bytes in prop::collection::vec(any::<u8>(), 0..512),
        near in near_xml(),
    ) {
        for input in [&bytes, &near] {
            let text = String::from_utf8_lossy(input);
            for tag in TAGS {
                if let Ok(inner) = xml::all(&text, tag) {
                    for piece in inner {
                        prop_assert!(text.contains(piece));
                    }
                } else {
                    prop_assert_eq!(xml::all(&text, tag).unwrap_err().code, "MalformedXML");
                }
                let _ = xml::text(&text, tag);
            }
        }
    }

    #[test]
    fn complete_multipart_documents_read_back_to_their_parts(
        parts in prop::collection::vec((1u32..=10_000, etag()), 0..24),
        pretty in any::<bool>(),
    ) {
        // Read as CompleteMultipartUpload reads its body.
        let doc = complete_doc(&parts, pretty);
        let mut read = Vec::new();
        for p in xml::all(&doc, "Part").unwrap() {
            let n: u32 = xml::text(p, "PartNumber").unwrap().unwrap().parse().unwrap();
            read.push((n, xml::text(p, "ETag").unwrap().unwrap()));
        }
        prop_assert_eq!(read, parts);
    }

    #[test]
    fn delete_documents_read_back_to_their_keys(
        keys in prop::collection::vec(plain_key(), 0..24),
        quiet in any::<bool>(),
        pretty in any::<bool>(),
    ) {
        // Read as DeleteObjects reads its body.
        let doc = delete_doc(&keys, quiet, pretty);
        let read: Vec<String> = xml::all(&doc, "Object")
            .unwrap()
            .iter()
            .map(|o| xml::text(o, "Key").unwrap().unwrap())
            .collect();
        prop_assert_eq!(read, keys);
        prop_assert_eq!(xml::text(&doc, "Quiet").unwrap().as_deref() == Some("true"), quiet);
    }

    #[test]
    fn xml_bodies_are_answered_or_refused_with_malformed_xml(
        garbage in prop_oneof![prop::collection::vec(any::<u8>(), 0..512), near_xml()],
        parts in prop::collection::vec((1u32..=3, etag()), 1..4),
        keys in prop::collection::vec(plain_key(), 1..4),
        at in any::<Index>(),
        len in 0usize..16,
        how in any::<u8>(),
    ) {
        let bucket = "hostile-xml";
        ensure_bucket(bucket);
        let dir = "hostile-xml--use1-az4--x-s3";
        let bodies = [
            garbage,
            damaged(&complete_doc(&parts, false), at, len, how),
            damaged(&delete_doc(&keys, false, true), at, len, how),
        ];
        for body in &bodies {
            // CompleteMultipartUpload, on an upload with a part so its body is read through.
            let id = create_upload(bucket, "m");
            let r = upload_part(bucket, "m", &id, "1", b"x");
            prop_assert_eq!(r.status, 200);
            let r = http("POST", &format!("/{bucket}/m?uploadId={}", pct(&id)), &[], body);
            prop_assert!(
                r.status == 200
                    || (r.status == 400
                        && matches!(
                            r.code().as_deref(),
                            Some("MalformedXML" | "InvalidPart" | "InvalidPartOrder")
                        )),
                "CompleteMultipartUpload: {} {}", r.status, r.text()
            );
            // DeleteObjects.
            let r = http("POST", &format!("/{bucket}?delete"), &[], body);
            prop_assert!(
                r.status == 200 || (r.status == 400 && r.code().as_deref() == Some("MalformedXML")),
                "DeleteObjects: {} {}", r.status, r.text()
            );
            // CreateBucket of a directory bucket reads its configuration (before it finds the
            // bucket already there).
            let r = http("PUT", &format!("/{dir}"), &[], body);
            prop_assert!(
                r.status == 200
                    || r.code().as_deref() == Some("BucketAlreadyOwnedByYou")
                    || (r.status == 400 && r.code().as_deref() == Some("MalformedXML")),
                "CreateBucket: {} {}", r.status, r.text()
            );
        }
    }

    #[test]
    fn create_bucket_configurations_as_the_sdk_writes_them_are_taken(
        zone in "[a-z]{3,4}[0-9]-az[0-9]{1,2}",
        pretty in any::<bool>(),
    ) {
        let g = gap(pretty);
        let doc = format!(
            "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">{g}<Location>{g}<Name>{zone}</Name>{g}<Type>AvailabilityZone</Type>{g}</Location>{g}<Bucket>{g}<DataRedundancy>SingleAvailabilityZone</DataRedundancy>{g}<Type>Directory</Type>{g}</Bucket>{g}</CreateBucketConfiguration>"
        );
        let r = http("PUT", &format!("/cfg--{zone}--x-s3"), &[], doc.as_bytes());
        prop_assert!(
            r.status == 200 || r.code().as_deref() == Some("BucketAlreadyOwnedByYou"),
            "{} {}", r.status, r.text()
        );
    }

    #[test]
    fn complete_multipart_upload_assembles_the_parts_listed(
        parts in prop::collection::vec((1u32..=10_000, prop::collection::vec(any::<u8>(), 1..64)), 1..6),
        pretty in any::<bool>(),
    ) {
        let bucket = "hostile-multipart";
        ensure_bucket(bucket);
        let mut parts = parts;
        parts.sort_by_key(|(n, _)| *n);
        parts.dedup_by_key(|(n, _)| *n);
        let id = create_upload(bucket, "assembled");
        let mut listed = Vec::new();
        for (n, data) in &parts {
            let r = upload_part(bucket, "assembled", &id, &n.to_string(), data);
            prop_assert_eq!(r.status, 200, "{}", r.text());
            listed.push((*n, r.header("etag").expect("an ETag").to_string()));
        }
        let doc = complete_doc(&listed, pretty);
        let r = http("POST", &format!("/{bucket}/assembled?uploadId={}", pct(&id)), &[], doc.as_bytes());
        prop_assert_eq!(r.status, 200, "{}", r.text());
        let r = http("GET", &format!("/{bucket}/assembled"), &[], b"");
        prop_assert_eq!(r.status, 200);
        let whole: Vec<u8> = parts.iter().flat_map(|(_, d)| d.iter().copied()).collect();
        prop_assert_eq!(r.body, whole);
    }

    #[test]
    fn delete_objects_names_the_keys_its_document_lists(
        keys in prop::collection::vec(plain_key(), 1..16),
        quiet in any::<bool>(),
        pretty in any::<bool>(),
    ) {
        let bucket = "hostile-delete";
        ensure_bucket(bucket);
        let doc = delete_doc(&keys, quiet, pretty);
        let r = http("POST", &format!("/{bucket}?delete"), &[], doc.as_bytes());
        prop_assert_eq!(r.status, 200, "{}", r.text());
        let text = r.text();
        let deleted: Vec<String> = text
            .split("<Deleted>")
            .skip(1)
            .map(|d| element(d, "Key").expect("a Key"))
            .collect();
        prop_assert_eq!(deleted, if quiet { Vec::new() } else { keys });
    }

    // --- Range headers -----------------------------------------------------------------------

    #[test]
    fn range_headers_answer_a_range_inside_the_object_or_416(header in range_text(), size in size()) {
        match parse_range(&header, size) {
            Ok((start, end)) => prop_assert!(start < end && end <= size, "{header:?} on {size}: {start}..{end}"),
            Err(e) => {
                prop_assert_eq!(e.status, 416);
                prop_assert_eq!(e.code, "InvalidRange");
            }
        }
    }

    #[test]
    fn ranges_resolve_as_s3_resolves_them(
        kind in 0u8..3,
        a in position(),
        b in position(),
        zeros in 0usize..3,
        size in size(),
    ) {
        let (header, first, last) = match kind {
            0 => (format!("bytes={}-{}", digits(a, zeros), digits(b, zeros)), Some(a), Some(b)),
            1 => (format!("bytes={}-", digits(a, zeros)), Some(a), None),
            _ => (format!("bytes=-{}", digits(b, zeros)), None, Some(b)),
        };
        let want = s3_range(first.map(u128::from), last.map(u128::from), size);
        let got = parse_range(&header, size).ok();
        prop_assert_eq!(got, want, "{} on {} bytes", header, size);
    }

    #[test]
    fn a_last_byte_of_u64_max_means_the_end_of_the_object(a in position(), size in size()) {
        let header = format!("bytes={a}-{}", u64::MAX);
        let want = s3_range(Some(a.into()), Some(u64::MAX.into()), size);
        prop_assert_eq!(parse_range(&header, size).ok(), want);
    }

    #[test]
    fn ranged_gets_answer_the_bytes_asked_for(
        data in prop::collection::vec(any::<u8>(), 0..200),
        kind in 0u8..3,
        a in 0u64..220,
        b in 0u64..220,
    ) {
        let bucket = "hostile-range";
        ensure_bucket(bucket);
        let key = format!("r{}", data.len());
        let r = http("PUT", &format!("/{bucket}/{key}"), &[], &data);
        prop_assert_eq!(r.status, 200);
        let (header, first, last) = match kind {
            0 => (format!("bytes={a}-{b}"), Some(a), Some(b)),
            1 => (format!("bytes={a}-"), Some(a), None),
            _ => (format!("bytes=-{b}"), None, Some(b)),
        };
        let size = data.len() as u64;
        let r = http("GET", &format!("/{bucket}/{key}"), &[("range", header.as_bytes())], b"");
        match s3_range(first.map(u128::from), last.map(u128::from), size) {
            Some((start, end)) => {
                prop_assert_eq!(r.status, 206, "{}: {}", header, r.text());
                prop_assert_eq!(&r.body[..], &data[start as usize..end as usize]);
                let want = format!("bytes {start}-{}/{size}", end - 1);
                prop_assert_eq!(r.header("content-range"), Some(want.as_str()));
            }
            None => {
                prop_assert_eq!(r.status, 416, "{}: {}", header, r.text());
                prop_assert_eq!(r.code(), Some("InvalidRange".to_string()));
            }
        }
    }

    // --- Part numbers and upload ids ---------------------------------------------------------

    #[test]
    fn part_numbers_1_to_10000_are_taken_and_others_refused(
        number in prop_oneof![
            (1u32..=10_000).prop_map(|n| n.to_string()),
            Just("0".to_string()),
            Just("10001".to_string()),
            Just("-1".to_string()),
            Just("+7".to_string()),
            Just("007".to_string()),
            Just("1.0".to_string()),
            Just(" 1".to_string()),
            Just("0x10".to_string()),
            Just(String::new()),
            Just(u32::MAX.to_string()),
            Just("4294967297".to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            "[0-9]{1,12}".prop_map(|s| s),
            any::<String>(),
        ],
    ) {
        let bucket = "hostile-parts";
        ensure_bucket(bucket);
        let id = create_upload(bucket, "p");
        // An integer from 1 to 10000: decimal digits, leading zeros and a `+` as integer parsers take them.
        let digits = number.strip_prefix('+').unwrap_or(&number);
        let valid = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && digits.trim_start_matches('0').len() <= 5
            && (1..=10_000).contains(&digits.parse::<u64>().unwrap_or(0));
        let r = upload_part(bucket, "p", &id, &number, b"part");
        if valid {
            prop_assert_eq!(r.status, 200, "{:?}: {}", number, r.text());
            let listed = http("GET", &format!("/{bucket}/p?uploadId={}", pct(&id)), &[], b"");
            let n: u32 = digits.parse().unwrap();
            prop_assert_eq!(element(&listed.text(), "PartNumber"), Some(n.to_string()));
        } else {
            prop_assert_eq!(r.status, 400, "{:?}: {}", number, r.text());
            prop_assert_eq!(r.code(), Some("InvalidArgument".to_string()));
            prop_assert_eq!(element(&r.text(), "ArgumentName"), Some("partNumber".to_string()));
        }
        let r = http("DELETE", &format!("/{bucket}/p?uploadId={}", pct(&id)), &[], b"");
        prop_assert_eq!(r.status, 204);
    }

    #[test]
    fn upload_ids_never_issued_are_no_such_upload(
        id in prop_oneof![
            any::<String>(),
            "latlab-upload-[0-9a-f]{1,4}-[0-9a-f]{8}".prop_map(|s| s),
            Just(String::new()),
        ],
    ) {
        let bucket = "hostile-ids";
        ensure_bucket(bucket);
        let q = pct(&id);
        for (method, target, body) in [
            ("PUT", format!("/{bucket}/k?partNumber=1&uploadId={q}"), &b"x"[..]),
            ("GET", format!("/{bucket}/k?uploadId={q}"), &b""[..]),
            ("POST", format!("/{bucket}/k?uploadId={q}"), complete_doc(&[(1, "\"x\"".into())], false).as_bytes()),
            ("DELETE", format!("/{bucket}/k?uploadId={q}"), &b""[..]),
        ] {
            let r = http(method, &target, &[], body);
            prop_assert_eq!(r.status, 404, "{} {}: {}", method, target, r.text());
            prop_assert_eq!(r.code(), Some("NoSuchUpload".to_string()));
            prop_assert_eq!(element(&r.text(), "UploadId"), Some(id.clone()));
        }
    }

    // --- CreateSession -----------------------------------------------------------------------

    #[test]
    fn session_mode_values_are_answered_never_crash(
        mode in prop_oneof![
            Just(b"ReadWrite".to_vec()),
            Just(b"ReadOnly".to_vec()),
            prop::collection::vec(prop_oneof![0x20u8..0x7f, 0x80u8..=0xff, Just(b'\t')], 0..64),
        ],
    ) {
        let bucket = "mode--use1-az4--x-s3";
        ensure_bucket(bucket);
        let r = http("GET", &format!("/{bucket}?session"), &[("x-amz-create-session-mode", &mode)], b"");
        prop_assert!(r.status == 200 || (400..500).contains(&r.status), "{} {}", r.status, r.text());
        if r.status == 200 {
            prop_assert!(element(&r.text(), "SessionToken").is_some());
        } else {
            prop_assert!(r.code().is_some(), "{}", r.text());
        }
    }

    #[test]
    fn session_modes_other_than_read_write_and_read_only_are_refused(mode in "[ -~]{0,24}") {
        // An empty value is taken as no value, the default mode.
        prop_assume!(!["", "ReadWrite", "ReadOnly"].contains(&mode.trim()));
        let bucket = "mode--use1-az4--x-s3";
        ensure_bucket(bucket);
        let r = http("GET", &format!("/{bucket}?session"), &[("x-amz-create-session-mode", mode.as_bytes())], b"");
        prop_assert_eq!(r.status, 400, "{:?}: {}", mode, r.text());
    }

    #[test]
    fn session_tokens_never_issued_are_refused(
        token in prop_oneof![
            prop::collection::vec(prop_oneof![0x21u8..0x7f, 0x80u8..=0xff], 0..80),
            "latlab-session-[0-9a-f]{1,3}-[0-9a-f]{16}".prop_map(String::into_bytes),
        ],
        cut in any::<Index>(),
        add in 0x21u8..0x7f,
    ) {
        let bucket = "tokens--use1-az4--x-s3";
        ensure_bucket(bucket);
        let real = session_token(bucket);
        let target = format!("/{bucket}?list-type=2");
        let r = http("GET", &target, &[("x-amz-s3session-token", real.as_bytes())], b"");
        prop_assert_eq!(r.status, 200, "the token just issued: {}", r.text());
        // Another bucket's token is refused as well.
        let other = session_token("other--use1-az4--x-s3");
        let mut near = real.clone().into_bytes();
        near.truncate(cut.index(real.len()));
        let mut longer = real.clone().into_bytes();
        longer.push(add);
        let mut changed = real.clone().into_bytes();
        let i = cut.index(changed.len());
        changed[i] = if changed[i] == add { add ^ 1 } else { add };
        for t in [token, near, longer, changed, other.into_bytes()] {
            let r = http("GET", &target, &[("x-amz-s3session-token", &t)], b"");
            prop_assert!(
                matches!(
                    (r.status, r.code().as_deref()),
                    (400, Some("InvalidToken")) | (403, Some("AccessDenied"))
                ),
                "{:?}: {} {}", String::from_utf8_lossy(&t), r.status, r.text()
            );
        }
    }

    // --- SubscribeToShard event streams ------------------------------------------------------

    #[test]
    fn subscribe_events_decode_to_the_records_encoded(
        records in prop::collection::vec(generated_record(), 0..8),
        shard in 0u32..1_000_000_000,
        continuation in any::<u64>(),
        behind in prop_oneof![0i64..100_000, 0i64..=i64::MAX],
        cut in 1usize..200,
    ) {
        let stored: Vec<Record> = records.iter().map(record).collect();
        let frame = event(shard, &stored, continuation, behind);
        let (messages, rest) = decode_all(&frame, cut).map_err(TestCaseError::fail)?;
        prop_assert!(rest, "bytes left after the frame");
        prop_assert_eq!(messages.len(), 1);
        let m = &messages[0];
        for (name, want) in [
            (":message-type", "event"),
            (":event-type", "SubscribeToShardEvent"),
            (":content-type", "application/json"),
        ] {
            prop_assert_eq!(string_header(m, name), Some(want.to_string()), "{}", name);
        }
        let doc: serde_json::Value = serde_json::from_slice(m.payload()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let got = doc["Records"].as_array().expect("Records");
        prop_assert_eq!(got.len(), records.len());
        for (g, r) in records.iter().zip(got) {
            let data = base64::engine::general_purpose::STANDARD
                .decode(r["Data"].as_str().expect("Data"))
                .expect("Data in base64");
            prop_assert_eq!(&data, &g.data);
            prop_assert_eq!(r["PartitionKey"].as_str(), Some(g.partition_key.as_str()));
            let seq = r["SequenceNumber"].as_str().expect("SequenceNumber");
            prop_assert_eq!(seq, sequence(shard, g.counter));
            prop_assert_eq!(parse_sequence_number(seq), Some((shard, g.counter)));
            let at = r["ApproximateArrivalTimestamp"].as_f64().expect("a timestamp");
            prop_assert!((at - g.arrival_micros as f64 / 1e6).abs() <= 1e-6, "{} vs {}", at, g.arrival_micros);
        }
        let want = sequence(shard, continuation);
        prop_assert_eq!(doc["ContinuationSequenceNumber"].as_str(), Some(want.as_str()));
        prop_assert_eq!(doc["MillisBehindLatest"].as_i64(), Some(behind));
    }

    #[test]
    fn no_prefix_of_a_frame_decodes_and_frames_follow_each_other(
        first in prop::collection::vec(generated_record(), 0..4),
        second in prop::collection::vec(generated_record(), 0..4),
        shard in 0u32..10_000,
        cut in 1usize..64,
    ) {
        let a = event(shard, &first.iter().map(record).collect::<Vec<_>>(), 1, 0);
        let b = event(shard, &second.iter().map(record).collect::<Vec<_>>(), 2, 5);
        for len in 0..a.len() {
            let mut decoder = MessageFrameDecoder::new();
            let mut prefix = &a[..len];
            let got = decoder.decode_frame(&mut prefix).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(matches!(got, DecodedFrame::Incomplete), "a prefix of {} bytes of {} decoded", len, a.len());
        }
        // Two frames in one stream, in pieces of any size: both, in order, whole.
        let mut both = a.to_vec();
        both.extend_from_slice(&b);
        let (messages, rest) = decode_all(&both, cut).map_err(TestCaseError::fail)?;
        prop_assert!(rest);
        let whole = |f: &Bytes| decode_all(f, f.len()).unwrap().0;
        prop_assert_eq!(messages, [whole(&a), whole(&b)].concat());
    }

    #[test]
    fn a_corrupted_frame_never_decodes(
        records in prop::collection::vec(generated_record(), 0..4),
        at in any::<Index>(),
        flip in 1u8..=255,
    ) {
        let mut frame = event(7, &records.iter().map(record).collect::<Vec<_>>(), 3, 0).to_vec();
        let i = at.index(frame.len());
        frame[i] ^= flip;
        let mut decoder = MessageFrameDecoder::new();
        let mut buf = &frame[..];
        prop_assert!(
            !matches!(decoder.decode_frame(&mut buf), Ok(DecodedFrame::Complete(_))),
            "byte {} of {} changed, and the frame still decoded", i, frame.len()
        );
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn delete_objects_keeps_keys_with_spaces_and_line_breaks(
        keys in prop::collection::vec(spaced_key(), 1..8),
    ) {
        let bucket = "hostile-delete";
        ensure_bucket(bucket);
        let doc = delete_doc(&keys, false, false);
        let r = http("POST", &format!("/{bucket}?delete"), &[], doc.as_bytes());
        prop_assert_eq!(r.status, 200, "{}", r.text());
        let text = r.text();
        let deleted: Vec<String> = text
            .split("<Deleted>")
            .skip(1)
            .map(|d| element(d, "Key").expect("a Key"))
            .collect();
        prop_assert_eq!(deleted, keys);
    }
}
