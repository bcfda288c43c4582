//! Request bodies as the SDKs send them: plain, or `aws-chunked` (signed or unsigned chunks with a
//! checksum trailer); the checksums S3 answers and checks (CRC32, CRC32C, CRC64NVME, SHA-1,
//! SHA-256); and the bandwidth shaper every body passes through.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use parking_lot::Mutex;
use sha1::Digest as _;

use super::error::S3Error;
use latlab_core::shaping::{Bucket, pacing_bucket};

/// A running checksum of one of S3's algorithms.
pub enum Checksum {
    Crc32(crc32fast::Hasher),
    Crc32c(u32),
    Crc64(crc64fast_nvme::Digest),
    Sha1(sha1::Sha1),
    Sha256(sha2::Sha256),
}

/// (header name, algorithm name as S3 writes it).
pub const ALGORITHMS: &[(&str, &str)] = &[
    ("x-amz-checksum-crc32", "CRC32"),
    ("x-amz-checksum-crc32c", "CRC32C"),
    ("x-amz-checksum-crc64nvme", "CRC64NVME"),
    ("x-amz-checksum-sha1", "SHA1"),
    ("x-amz-checksum-sha256", "SHA256"),
];

impl Checksum {
    pub fn for_header(header: &str) -> Option<Checksum> {
        Some(match header {
            "x-amz-checksum-crc32" => Checksum::Crc32(crc32fast::Hasher::new()),
            "x-amz-checksum-crc32c" => Checksum::Crc32c(0),
            "x-amz-checksum-crc64nvme" => Checksum::Crc64(crc64fast_nvme::Digest::new()),
            "x-amz-checksum-sha1" => Checksum::Sha1(sha1::Sha1::new()),
            "x-amz-checksum-sha256" => Checksum::Sha256(sha2::Sha256::new()),
            _ => return None,
        })
    }

    pub fn update(&mut self, data: &[u8]) {
        match self {
            Checksum::Crc32(h) => h.update(data),
            Checksum::Crc32c(c) => *c = crc32c::crc32c_append(*c, data),
            Checksum::Crc64(d) => d.write(data),
            Checksum::Sha1(h) => h.update(data),
            Checksum::Sha256(h) => sha2::Digest::update(h, data),
        }
    }

    /// The base64 of the big-endian digest, as the headers carry it.
    pub fn finish(self) -> String {
        let bytes: Vec<u8> = match self {
            Checksum::Crc32(h) => h.finalize().to_be_bytes().to_vec(),
            Checksum::Crc32c(c) => c.to_be_bytes().to_vec(),
            Checksum::Crc64(d) => d.sum64().to_be_bytes().to_vec(),
            Checksum::Sha1(h) => h.finalize().to_vec(),
            Checksum::Sha256(h) => sha2::Digest::finalize(h).to_vec(),
        };
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }
}

/// The algorithm name for a checksum header.
pub fn algorithm_name(header: &str) -> &'static str {
    ALGORITHMS
        .iter()
        .find(|(h, _)| *h == header)
        .map_or("checksum", |(_, n)| n)
}

#[derive(Debug, PartialEq)]
enum State {
    /// Reading a chunk header line (`<hex size>[;chunk-signature=...]\r\n`).
    Header,
    /// Reading `remaining` bytes of chunk data.
    Data,
    /// Expecting the `\r\n` after a chunk's data.
    DataEnd,
    /// Reading trailer lines until an empty one.
    Trailer,
    Done,
}

/// Decodes an `aws-chunked` body fed in pieces of any size.
pub struct Chunked {
    state: State,
    line: Vec<u8>,
    remaining: u64,
    pub trailers: Vec<(String, String)>,
}

const MAX_LINE: usize = 4096;

impl Default for Chunked {
    fn default() -> Self {
        Chunked {
            state: State::Header,
            line: Vec::new(),
            remaining: 0,
            trailers: Vec::new(),
        }
    }
}

impl Chunked {
    fn bad(what: &str) -> S3Error {
        S3Error::new(
            400,
            "IncompleteBody",
            format!("the aws-chunked body is malformed: {what}"),
        )
    }

    /// Feeds a piece of the encoded body; returns the decoded data in it.
    pub fn feed(&mut self, mut input: Bytes) -> Result<Vec<Bytes>, S3Error> {
        let mut out = Vec::new();
        while !input.is_empty() {
            match self.state {
                State::Data => {
                    let n = (self.remaining as usize).min(input.len());
                    out.push(input.split_to(n));
                    self.remaining -= n as u64;
                    if self.remaining == 0 {
                        self.state = State::DataEnd;
                    }
                }
                State::Done => return Err(Chunked::bad("data after the final chunk")),
                _ => {
                    let Some(nl) = input.iter().position(|b| *b == b'\n') else {
                        self.line.extend_from_slice(&input);
                        if self.line.len() > MAX_LINE {
                            return Err(Chunked::bad("a line longer than 4 KiB"));
                        }
                        return Ok(out);
                    };
                    self.line.extend_from_slice(&input.split_to(nl + 1));
                    let line = std::mem::take(&mut self.line);
                    let text = std::str::from_utf8(&line)
                        .map_err(|_| Chunked::bad("a header that is not text"))?;
                    let text = text.trim_end_matches(['\r', '\n']);
                    self.line_done(text)?;
                }
            }
        }
        Ok(out)
    }

    fn line_done(&mut self, text: &str) -> Result<(), S3Error> {
        match self.state {
            State::Header => {
                let size = text.split(';').next().unwrap_or("");
                let size = u64::from_str_radix(size.trim(), 16).map_err(|_| {
                    Chunked::bad(&format!("'{size}' is not a hexadecimal chunk size"))
                })?;
                if size == 0 {
                    self.state = State::Trailer;
                } else {
                    self.remaining = size;
                    self.state = State::Data;
                }
            }
            State::DataEnd => {
                if !text.is_empty() {
                    return Err(Chunked::bad("a chunk longer than its declared size"));
                }
                self.state = State::Header;
            }
            State::Trailer => {
                if text.is_empty() {
                    self.state = State::Done;
                } else if let Some((k, v)) = text.split_once(':') {
                    self.trailers
                        .push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
                } else {
                    return Err(Chunked::bad(&format!("the trailer line '{text}'")));
                }
            }
            State::Data | State::Done => unreachable!("lines are only read in line states"),
        }
        Ok(())
    }

    /// The body ended: it must have ended where the encoding says.
    pub fn finish(&self) -> Result<(), S3Error> {
        match self.state {
            State::Done => Ok(()),
            // Some clients end without the final empty line after the trailers.
            State::Trailer if self.line.is_empty() => Ok(()),
            _ => Err(Chunked::bad("the body ended before its final chunk")),
        }
    }
}

/// Paces bytes to a connection's bandwidth and to shared budgets (the class's aggregate for the
/// client, the client's NIC). Buckets hold only a few milliseconds of bytes, so a transfer is
/// paced from its first byte rather than let through in a burst; a large chunk may overdraw a
/// bucket, and then the next bytes wait.
pub struct Shaper {
    conn: Option<Bucket>,
    shared: Vec<Arc<Mutex<Bucket>>>,
}

impl Shaper {
    /// `conn_rate` in bytes/s (0 = unlimited) and the shared buckets the bytes also pass.
    pub fn new(conn_rate: f64, shared: Vec<Arc<Mutex<Bucket>>>) -> Shaper {
        Shaper {
            conn: (conn_rate > 0.0).then(|| pacing_bucket(conn_rate)),
            shared,
        }
    }

    pub async fn pass(&mut self, n: usize) {
        let now = Instant::now();
        let mut wait = Duration::ZERO;
        if let Some(c) = &mut self.conn {
            c.take(now, n as u64);
            wait = wait.max(c.wait_for(now, 0));
        }
        for b in &self.shared {
            let mut b = b.lock();
            b.take(now, n as u64);
            wait = wait.max(b.wait_for(now, 0));
        }
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Decoded = (Vec<u8>, Vec<(String, String)>);

    fn decode(pieces: &[&[u8]]) -> Result<Decoded, S3Error> {
        let mut d = Chunked::default();
        let mut out = Vec::new();
        for p in pieces {
            for b in d.feed(Bytes::copy_from_slice(p))? {
                out.extend_from_slice(&b);
            }
        }
        d.finish()?;
        Ok((out, d.trailers))
    }

    #[test]
    fn chunked_bodies_decode_across_any_split() {
        let body = b"5;chunk-signature=abc\r\nhello\r\n6;chunk-signature=def\r\n world\r\n0;chunk-signature=0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n";
        for split in 1..body.len() {
            let (data, trailers) = decode(&[&body[..split], &body[split..]]).unwrap();
            assert_eq!(data, b"hello world");
            assert_eq!(
                trailers,
                vec![("x-amz-checksum-crc32".to_string(), "DUoRhQ==".to_string())]
            );
        }
        let unsigned = b"b\r\nhello world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n";
        assert_eq!(decode(&[unsigned]).unwrap().0, b"hello world");
        assert!(decode(&[b"zz\r\n"]).is_err());
        assert!(decode(&[b"5\r\nhel"]).is_err(), "a body cut short");
    }

    #[test]
    fn checksums_match_the_sdks() {
        let mut c = Checksum::for_header("x-amz-checksum-crc32").unwrap();
        c.update(b"hello world");
        assert_eq!(c.finish(), "DUoRhQ==");
        let mut c = Checksum::for_header("x-amz-checksum-sha256").unwrap();
        c.update(b"");
        assert_eq!(c.finish(), "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
    }
}
