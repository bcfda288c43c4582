//! The producer's payload: a small JSON document carrying the record's `seq`, its send time and the
//! run's id, padded to the configured size. Consumers read only its head, whatever its size.
//!
//! The record's partition key is one of [`KEYS`] keys, chosen by its `seq`, so that every key
//! carries a run of records whose order the consumers can check (a key per record, as before,
//! would leave nothing to order). 256 keys spread over the hash key space as a producer with
//! many keys does: over 4 shards, no shard takes more than 70 of them.

/// Partition keys the producer writes with.
pub const KEYS: u64 = 256;

/// The partition key of record `seq`.
pub fn partition_key(seq: u64) -> String {
    format!("key-{}", key_of(seq))
}

/// Which of the [`KEYS`] keys record `seq` was written with.
pub fn key_of(seq: u64) -> u64 {
    seq % KEYS
}

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

/// `(seq, sent_us, run)` of a payload any latlab run wrote; None for anything else.
pub fn decode_any(data: &[u8]) -> Option<(u64, i64, &str)> {
    let head = std::str::from_utf8(&data[..data.len().min(160)]).ok()?;
    let rest = head.strip_prefix("{\"seq\":")?;
    let (seq, rest) = rest.split_once(",\"sent_us\":")?;
    let (sent, rest) = rest.split_once(",\"run\":\"")?;
    let (run, _) = rest.split_once('"')?;
    Some((seq.parse().ok()?, sent.parse().ok()?, run))
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
            assert_eq!(decode_any(&p), Some((42, 1_796_008_728_123_456, "r1")));
            assert!(
                serde_json::from_slice::<serde_json::Value>(&p).is_ok(),
                "valid JSON"
            );
        }
        assert_eq!(decode(b"hello", "r1"), None);
    }

    #[test]
    fn records_cycle_through_the_keys() {
        assert_eq!(partition_key(3), "key-3");
        assert_eq!(partition_key(KEYS + 3), "key-3");
        assert_eq!(key_of(KEYS - 1), KEYS - 1);
    }
}
