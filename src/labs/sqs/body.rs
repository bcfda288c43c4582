//! A message body: the run's id, the producer's seq and the moment the producer handed the message
//! to the SDK, padded to the scenario's payload: `latlab-sqs RUN SEQ SENT_US ...`. Every consumer
//! counts a message by its seq and measures send -> receive from its send time; a body of
//! another run (or of another application sharing the queue) is foreign.

/// What the body's own fields need, padding aside.
pub const MIN_BYTES: u64 = 64;

const TAG: &str = "latlab-sqs";

/// A body of `payload` bytes (at least [`MIN_BYTES`]) for `seq` sent at `sent_us`.
pub fn encode(run: &str, seq: u64, sent_us: i64, payload: u64) -> String {
    let mut s = format!("{TAG} {run} {seq} {sent_us} ");
    let want = payload.max(MIN_BYTES) as usize;
    if s.len() < want {
        s.extend(std::iter::repeat_n('.', want - s.len()));
    }
    s
}

/// The seq and send time of one of `run`'s bodies; None for any other body.
pub fn decode(body: &str, run: &str) -> Option<(u64, i64)> {
    let mut parts = body.splitn(5, ' ');
    if parts.next()? != TAG || parts.next()? != run {
        return None;
    }
    let seq = parts.next()?.parse().ok()?;
    let sent_us = parts.next()?.parse().ok()?;
    Some((seq, sent_us))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_carries_its_seq_and_send_time_at_the_payload_size() {
        let b = encode("0a1b2c3d", 42, 1_700_000_000_123_456, 256);
        assert_eq!(b.len(), 256);
        assert_eq!(decode(&b, "0a1b2c3d"), Some((42, 1_700_000_000_123_456)));
        assert_eq!(decode(&b, "ffffffff"), None, "another run's message");
        assert_eq!(decode("hello", "0a1b2c3d"), None);
        assert_eq!(encode("r", 1, 2, 1).len() as u64, MIN_BYTES);
    }
}
