//! What the fuzz targets share: an emulator started once in process on 127.0.0.1, a raw HTTP/1.1
//! client for what is only reachable through requests, XML written as the SDK writes it, and S3's
//! range rules written out.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::OnceLock;
use std::time::Duration;

use latlab_emulator::limits::Limits;
use latlab_emulator::{Emulator, EmulatorConfig};

struct Shared {
    _runtime: tokio::runtime::Runtime,
    emulator: Emulator,
}

/// The emulator every HTTP target talks to: the zero profile, request rates no fuzzer reaches,
/// parts of any size, sessions that outlast a run.
pub fn emulator() -> &'static Emulator {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    &SHARED
        .get_or_init(|| {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a runtime");
            let mut limits = Limits::default();
            limits.s3.standard_writes_per_sec = u32::MAX / 2;
            limits.s3.standard_reads_per_sec = u32::MAX / 2;
            limits.s3.express_writes_per_sec = u32::MAX / 2;
            limits.s3.express_reads_per_sec = u32::MAX / 2;
            limits.s3.min_part_bytes = 1;
            limits.s3.session_duration = Duration::from_secs(30 * 24 * 3600);
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
pub struct Reply {
    pub status: u16,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The `<Code>` of an S3 error answer.
    pub fn code(&self) -> Option<String> {
        element(&self.text(), "Code")
    }
}

static CONN: std::sync::Mutex<Option<BufReader<TcpStream>>> = std::sync::Mutex::new(None);

/// One request on a kept-alive connection to [`emulator`]. A handler that panics drops the
/// connection without an answer: that panics here, so the fuzzer reports it.
pub fn http(method: &str, target: &str, headers: &[(&str, &[u8])], body: &[u8]) -> Reply {
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
    let mut slot = CONN.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let fresh = slot.is_none();
        let mut conn = match slot.take() {
            Some(c) => c,
            None => {
                let s = TcpStream::connect(emulator().addr()).expect("connect to the emulator");
                s.set_read_timeout(Some(Duration::from_secs(120))).ok();
                s.set_nodelay(true).ok();
                BufReader::new(s)
            }
        };
        let answer = conn
            .get_mut()
            .write_all(&raw)
            .and_then(|_| read_reply(&mut conn));
        match answer {
            Ok(Some(reply)) => {
                if !reply
                    .header("connection")
                    .is_some_and(|v| v.eq_ignore_ascii_case("close"))
                {
                    *slot = Some(conn);
                }
                return reply;
            }
            // A kept-alive connection the server closed meanwhile: once more on a new one.
            Ok(None) | Err(_) if !fresh => continue,
            other => panic!(
                "{method} {target}: the emulator closed the connection without an answer: {other:?}"
            ),
        }
    }
}

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

/// Percent-encoding of everything but RFC 3986's unreserved characters.
pub fn pct(s: &str) -> String {
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
pub fn ensure_bucket(name: &str) {
    let r = http("PUT", &format!("/{name}"), &[], b"");
    assert!(
        r.status == 200 || r.code().as_deref() == Some("BucketAlreadyOwnedByYou"),
        "create {name}: {} {}",
        r.status,
        r.text()
    );
}

/// Bytes a header value may hold on the wire (visible ASCII, space, tab, obs-text): others are
/// HTTP's to refuse, not the emulator's.
pub fn header_value(bytes: &[u8]) -> Vec<u8> {
    bytes
        .iter()
        .copied()
        .filter(|b| *b == b'\t' || (*b >= 0x20 && *b != 0x7f))
        .collect()
}

/// Text escaped as aws-sdk-s3's XML writer escapes it.
pub fn sdk_escape(s: &str) -> String {
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

/// XML character data decoded: named entities and character references.
pub fn xml_unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let Some(end) = rest.find(';') else { break };
        let entity = &rest[1..end];
        let c = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            e if e.starts_with("#x") => u32::from_str_radix(&e[2..], 16)
                .ok()
                .and_then(char::from_u32),
            e if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        };
        match c {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The decoded text of the first `<tag>` in an answer.
pub fn element(xml: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let len = xml[start..].find(&format!("</{tag}>"))?;
    Some(xml_unescape(&xml[start..start + len]))
}

/// What S3 answers for `Range: bytes=...` on an object of `size` bytes: the half-open range, or
/// None for unsatisfiable (416). `first`/`last` absent for `bytes=-n` and `bytes=a-`.
pub fn s3_range(first: Option<u128>, last: Option<u128>, size: u64) -> Option<(u64, u64)> {
    let size = size as u128;
    let (start, end) = match (first, last) {
        (None, Some(n)) => {
            if n == 0 || size == 0 {
                return None;
            }
            (size - n.min(size), size)
        }
        (Some(a), None) => (a, size),
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
