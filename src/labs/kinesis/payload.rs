//! The producer's payload: a small JSON document carrying the record's `seq`, its send time and the
//! run's id, padded to the configured size. Consumers read only its head, whatever its size.

/// A payload of exactly `size` bytes (at least the head's length).
pub fn encode(seq: u64, sent_us: i64, run: &str, size: usize) -> Vec<u8> {
    let head = format!("{{\"seq\":{seq},\"sent_us\":{sent_us},\"run\":\"{run}\",\"pad\":\"");
    let mut out = Vec::with_capacity(size.max(head.len() + 2));
    out.extend_from_slice(head.as_bytes());
    let pad = size.saturating_sub(head.len() + 2);
    out.resize(out.len() + pad, b'x');
    out.extend_from_slice(b"\"}");
    out
}

/// `(seq, sent_us)` of a payload of this run; None for anything else on the stream.
pub fn decode(data: &[u8], run: &str) -> Option<(u64, i64)> {
    // Our head is ASCII, so a cut inside the padding is always valid UTF-8.
    let head = std::str::from_utf8(&data[..data.len().min(160)]).ok()?;
    let rest = head.strip_prefix("{\"seq\":")?;
    let (seq, rest) = rest.split_once(",\"sent_us\":")?;
    let (sent, rest) = rest.split_once(",\"run\":\"")?;
    let (got_run, _) = rest.split_once('"')?;
    if got_run != run {
        return None;
    }
    Some((seq.parse().ok()?, sent.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip_at_every_size() {
        for size in [0usize, 96, 128, 1000, 1 << 20] {
            let p = encode(42, 1_796_008_728_123_456, "r1", size);
            assert!(p.len() >= size);
            if size >= 96 {
                assert_eq!(p.len(), size);
            }
            assert_eq!(decode(&p, "r1"), Some((42, 1_796_008_728_123_456)));
            assert_eq!(decode(&p, "other"), None);
            assert!(
                serde_json::from_slice::<serde_json::Value>(&p).is_ok(),
                "valid JSON"
            );
        }
        assert_eq!(decode(b"hello", "r1"), None);
    }
}
