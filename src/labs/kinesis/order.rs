//! Per-partition-key order, as one consumer received the records: a record of a key that the
//! stream stored before another record of the same key the consumer already has, arriving after
//! it, is out of order.
//!
//! Where a record was stored is its shard's rank and its sequence number there. A key's records
//! go to one open shard at a time; across a reshard they move from a parent to a child, and a
//! child is always created after its parents, so a shard's rank is the number its shard id ends
//! in (shard ids are handed out in creation order, on the service as on latlab's emulator).
//! Within a shard, sequence numbers grow. So "stored before" is the pair (rank, sequence number)
//! compared in that order. This measures the consumer's order, not the producer's: two puts of
//! one key in flight at once may be stored in either order, and the check follows the stream.

use super::ledger::SeqNo;

/// Where a record was stored: its shard's rank, then its sequence number in that shard.
pub type Stored = (u64, SeqNo);

/// One consumer's check, for `keys` keys (a fixed size).
pub struct KeyOrder {
    last: Vec<Option<Stored>>,
    out_of_order: u64,
}

impl KeyOrder {
    pub fn new(keys: usize) -> KeyOrder {
        KeyOrder {
            last: vec![None; keys],
            out_of_order: 0,
        }
    }

    /// The first copy of a record of `key` stored at `at` reached the consumer; returns whether
    /// it came out of order. A key beyond the check's size is not checked.
    pub fn receive(&mut self, key: usize, at: Stored) -> bool {
        let Some(slot) = self.last.get_mut(key) else {
            return false;
        };
        match slot {
            Some(latest) if at < *latest => {
                self.out_of_order += 1;
                true
            }
            _ => {
                *slot = Some(at);
                false
            }
        }
    }

    /// Records that arrived after a record of their key stored later.
    pub fn out_of_order(&self) -> u64 {
        self.out_of_order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(rank: u64, n: u64) -> Stored {
        (rank, SeqNo::parse(&n.to_string()).unwrap())
    }

    #[test]
    fn a_parent_record_after_a_child_record_of_its_key_is_out_of_order() {
        let mut o = KeyOrder::new(4);
        // Key 1 in the parent (rank 0), then the child (rank 2): in order.
        assert!(!o.receive(1, at(0, 10)));
        assert!(!o.receive(1, at(0, 11)));
        assert!(!o.receive(1, at(2, 1)));
        // Another key, on its own shards: in order.
        assert!(!o.receive(3, at(1, 5)));
        // A parent record of key 1 read after the child had started: out of order.
        assert!(o.receive(1, at(0, 12)));
        assert_eq!(o.out_of_order(), 1);
        // The child's next record is still in order.
        assert!(!o.receive(1, at(2, 2)));
        // Within one shard, a lower sequence number after a higher one is out of order too.
        assert!(o.receive(3, at(1, 4)));
        assert_eq!(o.out_of_order(), 2);
        // A key outside the check is not counted.
        assert!(!o.receive(9, at(0, 1)));
    }
}
