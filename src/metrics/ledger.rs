//! Record accounting by sequence number: which `seq`s the producer had acknowledged, and which each
//! consumer received, once or more. Lost and duplicate counts are computed from it, never guessed.
//!
//! The ledger keeps a window of the most recent `capacity` seqs as bitmaps (one bit per seq for the
//! producer and for each consumer). A seq that leaves the window is settled: acknowledged but not
//! received counts as lost then. A copy that arrives after its seq left the window is counted as
//! `late`, separately, since the window can no longer tell a late first copy from a duplicate.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Seqs tracked at once: 4 Mi seqs (512 KiB per bitmap), about 70 minutes at 1,000 records/s.
pub const DEFAULT_CAPACITY: u64 = 1 << 22;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConsumerId(pub usize);

/// What [`Ledger::receive`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Receipt {
    pub duplicate: bool,
    pub first_anywhere: bool,
}

/// A consumer's counts. `lost` includes seqs still in the window that were acknowledged at least
/// the grace period ago and never received (as of the snapshot).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeqCounts {
    pub received: u64,
    pub duplicates: u64,
    pub lost: u64,
    pub late: u64,
}

struct Bits {
    words: Vec<u64>,
}

impl Bits {
    fn new(capacity: u64) -> Bits {
        Bits {
            words: vec![0; (capacity / 64) as usize],
        }
    }
    fn index(&self, seq: u64) -> (usize, u64) {
        let pos = seq % (self.words.len() as u64 * 64);
        ((pos / 64) as usize, 1u64 << (pos % 64))
    }
    fn get(&self, seq: u64) -> bool {
        let (w, b) = self.index(seq);
        self.words[w] & b != 0
    }
    fn set(&mut self, seq: u64) -> bool {
        let (w, b) = self.index(seq);
        let was = self.words[w] & b != 0;
        self.words[w] |= b;
        was
    }
    fn clear(&mut self, seq: u64) {
        let (w, b) = self.index(seq);
        self.words[w] &= !b;
    }
}

struct Consumer {
    received: Bits,
    /// The highest seq received.
    high: Option<u64>,
    counts: SeqCounts,
    /// Seqs below `from` were sent before the consumer started reading: received ones count, but
    /// missing ones are not lost. Seqs at or above `until` were sent after it stopped.
    from: u64,
    until: Option<u64>,
}

pub struct Ledger {
    capacity: u64,
    /// The lowest seq in the window; every seq below it is settled.
    base: u64,
    /// One past the highest seq seen (acknowledged or received).
    top: u64,
    acked: Bits,
    /// Seqs received by any consumer (a record's send -> arrival is measured once, at its first).
    seen: Bits,
    acked_count: u64,
    consumers: Vec<Consumer>,
    /// (when, the next seq at that time): lets a snapshot find the seqs acknowledged long enough
    /// ago to be expected everywhere. One entry per 100 ms at most.
    checkpoints: VecDeque<(Instant, u64)>,
    /// Counting starts here (after a reset, earlier seqs are ignored).
    counting_from: u64,
    next_seq: u64,
}

impl Default for Ledger {
    fn default() -> Self {
        Self::new(DEFAULT_CAPACITY)
    }
}

impl Ledger {
    pub fn new(capacity: u64) -> Ledger {
        let capacity = capacity.max(64).next_multiple_of(64);
        Ledger {
            capacity,
            base: 0,
            top: 0,
            acked: Bits::new(capacity),
            seen: Bits::new(capacity),
            acked_count: 0,
            consumers: Vec::new(),
            checkpoints: VecDeque::new(),
            counting_from: 0,
            next_seq: 0,
        }
    }

    /// The next seq the producer will send; consumers started now expect seqs from it on.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Hands out the next seq to send.
    pub fn allocate(&mut self) -> u64 {
        let s = self.next_seq;
        self.next_seq += 1;
        s
    }

    pub fn add_consumer(&mut self) -> ConsumerId {
        self.consumers.push(Consumer {
            received: Bits::new(self.capacity),
            high: None,
            counts: SeqCounts::default(),
            from: self.next_seq,
            until: None,
        });
        ConsumerId(self.consumers.len() - 1)
    }

    /// The consumer reads from now on: seqs sent before are not expected of it.
    pub fn start_consumer(&mut self, id: ConsumerId) {
        self.consumers[id.0].from = self.next_seq;
    }

    /// The consumer stopped: it is held only to the seqs up to the highest it received (records
    /// still in flight to it when it stopped are not lost, it just no longer reads).
    pub fn stop_consumer(&mut self, id: ConsumerId) {
        let c = &mut self.consumers[id.0];
        let reached = c.high.map_or(c.from, |h| h + 1);
        c.until = Some(reached.min(self.next_seq));
    }

    fn slide_to(&mut self, seq: u64) {
        if seq < self.base + self.capacity {
            return;
        }
        let new_base = seq + 1 - self.capacity;
        let end = new_base.min(self.top);
        for s in self.base..end {
            self.settle(s);
        }
        self.base = new_base;
    }

    fn settle(&mut self, seq: u64) {
        let acked = self.acked.get(seq);
        self.acked.clear(seq);
        self.seen.clear(seq);
        for c in &mut self.consumers {
            if acked
                && seq >= self.counting_from
                && seq >= c.from
                && c.until.is_none_or(|u| seq < u)
                && !c.received.get(seq)
            {
                c.counts.lost += 1;
            }
            c.received.clear(seq);
        }
    }

    /// The producer's put of `seq` was acknowledged (stored by the service).
    pub fn ack(&mut self, seq: u64, now: Instant) {
        if seq < self.base {
            return;
        }
        self.slide_to(seq);
        self.top = self.top.max(seq + 1);
        if !self.acked.set(seq) && seq >= self.counting_from {
            self.acked_count += 1;
        }
        if self
            .checkpoints
            .back()
            .is_none_or(|(t, _)| now.duration_since(*t) >= Duration::from_millis(100))
        {
            self.checkpoints.push_back((now, self.next_seq));
            while self.checkpoints.len() > 4096 {
                self.checkpoints.pop_front();
            }
        }
    }

    /// A consumer received `seq`. Returns whether it had already received it (a duplicate), and
    /// whether this is the first copy any consumer received.
    pub fn receive(&mut self, id: ConsumerId, seq: u64) -> Receipt {
        if seq < self.base {
            if seq >= self.counting_from {
                self.consumers[id.0].counts.late += 1;
            }
            return Receipt {
                duplicate: false,
                first_anywhere: false,
            };
        }
        self.slide_to(seq);
        self.top = self.top.max(seq + 1);
        let counting = seq >= self.counting_from;
        let c = &mut self.consumers[id.0];
        c.high = Some(c.high.map_or(seq, |h| h.max(seq)));
        let dup = c.received.set(seq);
        if counting {
            if dup {
                c.counts.duplicates += 1;
            } else {
                c.counts.received += 1;
            }
        }
        Receipt {
            duplicate: dup,
            first_anywhere: !self.seen.set(seq),
        }
    }

    /// Records acknowledged by the producer (since the last reset).
    pub fn acked_count(&self) -> u64 {
        self.acked_count
    }

    /// Forgets every count; seqs sent before now are ignored from here on.
    pub fn reset(&mut self) {
        self.counting_from = self.next_seq;
        self.acked_count = 0;
        for c in &mut self.consumers {
            c.counts = SeqCounts::default();
        }
    }

    /// The counts of a consumer. Seqs acknowledged at least `grace` before `now` and not received
    /// count as lost; `grace = Duration::ZERO` settles everything (the end of a run).
    pub fn counts(&self, id: ConsumerId, now: Instant, grace: Duration) -> SeqCounts {
        let c = &self.consumers[id.0];
        let settled_below = if grace.is_zero() {
            self.top
        } else {
            self.checkpoints
                .iter()
                .rev()
                .find(|(t, _)| now.saturating_duration_since(*t) >= grace)
                .map_or(self.base, |(_, s)| *s)
        };
        let lo = self.base.max(self.counting_from).max(c.from);
        let hi = settled_below.min(self.top).min(c.until.unwrap_or(u64::MAX));
        let missing = missing_between(&self.acked, &c.received, lo, hi);
        SeqCounts {
            lost: c.counts.lost + missing,
            ..c.counts
        }
    }
}

/// Seqs in `lo..hi` set in `acked` and not in `received`, a word at a time where aligned.
fn missing_between(acked: &Bits, received: &Bits, lo: u64, hi: u64) -> u64 {
    let mut n = 0u64;
    let mut s = lo;
    while s < hi {
        if s.is_multiple_of(64) && s + 64 <= hi {
            let (w, _) = acked.index(s);
            n += (acked.words[w] & !received.words[w]).count_ones() as u64;
            s += 64;
        } else {
            n += u64::from(acked.get(s) && !received.get(s));
            s += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settled(l: &Ledger, id: ConsumerId) -> SeqCounts {
        l.counts(id, Instant::now(), Duration::ZERO)
    }

    #[test]
    fn received_lost_and_duplicates_are_counted_by_seq() {
        let mut l = Ledger::new(1024);
        let a = l.add_consumer();
        let b = l.add_consumer();
        let now = Instant::now();
        for _ in 0..10 {
            let s = l.allocate();
            l.ack(s, now);
        }
        for s in 0..10 {
            l.receive(a, s);
            if s != 3 && s != 7 {
                l.receive(b, s);
            }
        }
        assert!(l.receive(a, 4).duplicate, "a second copy is a duplicate");
        assert!(
            !l.receive(b, 0).first_anywhere,
            "a copy another consumer had first"
        );
        assert_eq!(
            settled(&l, a),
            SeqCounts {
                received: 10,
                duplicates: 1,
                lost: 0,
                late: 0
            }
        );
        assert_eq!(
            settled(&l, b),
            SeqCounts {
                received: 8,
                duplicates: 1,
                lost: 2,
                late: 0
            }
        );
    }

    #[test]
    fn the_window_settles_old_seqs_and_counts_late_copies() {
        let mut l = Ledger::new(128);
        let a = l.add_consumer();
        let now = Instant::now();
        for _ in 0..1000 {
            let s = l.allocate();
            l.ack(s, now);
            if !s.is_multiple_of(100) {
                l.receive(a, s);
            }
        }
        assert_eq!(
            settled(&l, a),
            SeqCounts {
                received: 990,
                duplicates: 0,
                lost: 10,
                late: 0
            }
        );
        l.receive(a, 0);
        assert_eq!(settled(&l, a).late, 1);
    }

    #[test]
    fn consumers_are_only_held_to_what_was_sent_while_they_read() {
        let mut l = Ledger::new(1024);
        let now = Instant::now();
        let early = l.add_consumer();
        for _ in 0..5 {
            let s = l.allocate();
            l.ack(s, now);
            l.receive(early, s);
        }
        let late = l.add_consumer();
        l.start_consumer(late);
        for _ in 0..5 {
            let s = l.allocate();
            l.ack(s, now);
            l.receive(early, s);
            l.receive(late, s);
        }
        // Sent but not yet received when it stopped: not held against it.
        let s = l.allocate();
        l.ack(s, now);
        l.receive(early, s);
        l.stop_consumer(late);
        for _ in 0..5 {
            let s = l.allocate();
            l.ack(s, now);
            l.receive(early, s);
        }
        assert_eq!(settled(&l, early).lost, 0);
        assert_eq!(
            settled(&l, late),
            SeqCounts {
                received: 5,
                duplicates: 0,
                lost: 0,
                late: 0
            }
        );
    }

    #[test]
    fn unacknowledged_seqs_are_not_lost_and_recent_ones_are_in_flight() {
        let mut l = Ledger::new(1024);
        let a = l.add_consumer();
        let t0 = Instant::now();
        let s0 = l.allocate();
        let _failed = l.allocate(); // its put never succeeded
        l.ack(s0, t0);
        assert_eq!(settled(&l, a).lost, 1);
        // Within the grace period it is in flight, not lost.
        assert_eq!(
            l.counts(a, t0 + Duration::from_millis(50), Duration::from_secs(1))
                .lost,
            0
        );
        assert_eq!(
            l.counts(a, t0 + Duration::from_secs(2), Duration::from_secs(1))
                .lost,
            1
        );
    }

    #[test]
    fn reset_forgets_counts_and_earlier_seqs() {
        let mut l = Ledger::new(1024);
        let a = l.add_consumer();
        let now = Instant::now();
        for _ in 0..3 {
            let s = l.allocate();
            l.ack(s, now);
        }
        l.receive(a, 0);
        l.reset();
        let s = l.allocate();
        l.ack(s, now);
        l.receive(a, s);
        l.receive(a, 1); // sent before the reset: ignored
        assert_eq!(
            settled(&l, a),
            SeqCounts {
                received: 1,
                duplicates: 0,
                lost: 0,
                late: 0
            }
        );
        assert_eq!(l.acked_count(), 1);
    }
}
