//! aws-chunked request bodies (`latlab_emulator::s3::body::Chunked`): garbage fed in pieces is
//! refused, never panicked on; a body encoded as the SDK encodes it (chunks, a zero chunk,
//! trailers), fed in pieces of any size, decodes to its data and its trailers.
#![no_main]

use arbitrary::Arbitrary;
use bytes::Bytes;
use latlab_emulator::s3::body::Chunked;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Input {
    Garbage(Vec<Vec<u8>>),
    Encoded {
        data: Vec<u8>,
        chunk: u16,
        cut: u8,
        signed: bool,
        trailers: Vec<(u8, [u8; 8])>,
    },
}

const TRAILERS: &[&str] = &[
    "x-amz-checksum-crc32",
    "x-amz-checksum-crc32c",
    "x-amz-checksum-crc64nvme",
    "x-amz-checksum-sha1",
    "x-amz-checksum-sha256",
];

fuzz_target!(|input: Input| match input {
    Input::Garbage(pieces) => {
        let mut dec = Chunked::default();
        for p in pieces {
            if dec.feed(Bytes::from(p)).is_err() {
                return;
            }
        }
        let _ = dec.finish();
    }
    Input::Encoded {
        data,
        chunk,
        cut,
        signed,
        trailers,
    } => {
        let chunk = (chunk as usize).max(1);
        let ext = if signed {
            ";chunk-signature=0123abcd"
        } else {
            ""
        };
        let mut encoded = Vec::new();
        for piece in data.chunks(chunk) {
            encoded.extend_from_slice(format!("{:x}{ext}\r\n", piece.len()).as_bytes());
            encoded.extend_from_slice(piece);
            encoded.extend_from_slice(b"\r\n");
        }
        encoded.extend_from_slice(format!("0{ext}\r\n").as_bytes());
        let mut want = Vec::new();
        for (i, value) in &trailers {
            let name = TRAILERS[*i as usize % TRAILERS.len()];
            if want.iter().any(|(n, _): &(String, String)| n == name) {
                continue;
            }
            let value: String = value.iter().map(|b| (b'A' + b % 26) as char).collect();
            encoded.extend_from_slice(format!("{name}:{value}\r\n").as_bytes());
            want.push((name.to_string(), value));
        }
        encoded.extend_from_slice(b"\r\n");
        let mut dec = Chunked::default();
        let mut out = Vec::new();
        for piece in encoded.chunks((cut as usize).max(1)) {
            for b in dec
                .feed(Bytes::copy_from_slice(piece))
                .expect("a valid body")
            {
                out.extend_from_slice(&b);
            }
        }
        dec.finish().expect("a whole body");
        assert_eq!(out, data);
        assert_eq!(dec.trailers, want);
    }
});
