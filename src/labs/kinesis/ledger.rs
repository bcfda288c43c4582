//! Record accounting by sequence number: which `seq`s the producer had acknowledged, which each
//! consumer received (once or more), and where each consumer is in each shard. Every consumer's
//! acknowledged records are split three ways, and the split always adds up:
//!
//! `received + lost + unread = acknowledged`
//!
//! - **received**: the consumer got the record (its first copy; further copies are duplicates);
//! - **lost**: the consumer's position in the record's shard moved past the record without
//!   delivering it (trimmed before it was read, or skipped);
//! - **unread**: the record is still ahead of the consumer's position: it is behind, or (at the end
//!   of a run) the drain ended before it got there.
//!
//! A consumer's position in a shard is the highest Kinesis sequence number it has been handed
//! there; Kinesis sequence numbers grow within a shard, and a consumer reads a shard in order.
//! To tell lost from unread the ledger keeps, per shard, the acknowledged records that some running
//! consumer has not yet passed (with their sequence numbers), and drops them once every running
//! consumer has. A consumer is accountable for the records acknowledged while it read: from when
//! it held its starting position until it stopped.
//!
//! The ledger keeps a window of the most recent `capacity` seqs as bitmaps (one bit per seq for the
//! producer and for each consumer). A copy that arrives after its seq left the window is counted as
//! `late` (it stays in `unread`), since the window can no longer tell a first copy from another.
//!
//! One file, though long: the bitmaps, the per-shard positions and the three-way split are one
//! invariant, kept and tested together.

use std::collections::VecDeque;

/// Seqs tracked at once: 4 Mi seqs (512 KiB per bitmap), about 70 minutes at 1,000 records/s.
pub const DEFAULT_CAPACITY: u64 = 1 << 22;

/// Records held per shard for telling lost from unread (32 bytes each). A consumer further behind
/// than this on one shard still has every record counted; those beyond it are counted unread
/// rather than checked for loss when it passes them (and counted in `unchecked`).
pub const TAIL_CAPACITY: usize = 1 << 19;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConsumerId(pub usize);

/// A Kinesis sequence number as an unsigned integer (they are decimal strings of up to 128
/// digits; the service's are 56 digits, latlab's emulator's 31), comparable within a shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SeqNo([u64; 4]);

impl SeqNo {
    /// Parses a sequence number; None when it is not a decimal number below 2^256.
    pub fn parse(text: &str) -> Option<SeqNo> {
        if text.is_empty() || text.len() > 78 || !text.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // Little-endian limbs while parsing; stored most significant first so `Ord` compares
        // numerically.
        let mut limbs = [0u64; 4];
        for digit in text.bytes().map(|b| u64::from(b - b'0')) {
            let mut carry = u128::from(digit);
            for limb in limbs.iter_mut() {
                let v = u128::from(*limb) * 10 + carry;
                *limb = v as u64;
                carry = v >> 64;
            }
            if carry != 0 {
                return None;
            }
        }
        limbs.reverse();
        Some(SeqNo(limbs))
    }
}

/// What [`Ledger::receive`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Receipt {
    pub duplicate: bool,
    pub first_anywhere: bool,
}

/// A consumer's counts. `received + lost + unread = acknowledged` always holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeqCounts {
    /// Records the producer had acknowledged while the consumer read (since the last reset).
    pub acknowledged: u64,
    /// Of them, received at least once.
    pub received: u64,
    /// Of them, passed over without being received.
    pub lost: u64,
    /// Of them, still ahead of the consumer's position.
    pub unread: u64,
    /// Copies received beyond the first.
    pub duplicates: u64,
    /// Copies received after their seq left the ledger's window (counted in neither received
    /// nor duplicates; the record stays in `unread`).
    pub late: u64,
    /// Records of this run received whose put the producer has not (or never) seen acknowledged:
    /// a put that failed on the client after the service stored it, or whose answer is still on
    /// its way.
    pub unacknowledged: u64,
    /// Unread records that were not checked for loss: the consumer was more than
    /// [`TAIL_CAPACITY`] records behind in a shard.
    pub unchecked: u64,
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
    counts: SeqCounts,
    /// Seqs below `from` were allocated before the consumer held its position; seqs at or above
    /// `until` after it stopped. It is accountable for the acknowledged seqs between.
    from: u64,
    until: Option<u64>,
    /// Per shard: the highest sequence number handed to the consumer there.
    position: Vec<Option<SeqNo>>,
    started: bool,
}

impl Consumer {
    fn accountable(&self, seq: u64, counting_from: u64) -> bool {
        seq >= counting_from && seq >= self.from && self.until.is_none_or(|u| seq < u)
    }

    fn passed(&self, shard: usize, kseq: SeqNo) -> bool {
        self.position
            .get(shard)
            .copied()
            .flatten()
            .is_some_and(|p| p >= kseq)
    }
}

/// An acknowledged record some running consumer may not have passed yet.
#[derive(Clone, Copy)]
struct Pending {
    kseq: SeqNo,
    seq: u64,
}

pub struct Ledger {
    capacity: u64,
    /// The lowest seq in the window; the bits of seqs below it are gone.
    base: u64,
    acked: Bits,
    /// Seqs received by any consumer (a record's send -> arrival is measured once, at its first).
    seen: Bits,
    acked_count: u64,
    consumers: Vec<Consumer>,
    /// Per shard, in sequence-number order.
    tails: Vec<VecDeque<Pending>>,
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
            acked: Bits::new(capacity),
            seen: Bits::new(capacity),
            acked_count: 0,
            consumers: Vec::new(),
            tails: Vec::new(),
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
        self.slide_to(s);
        s
    }

    pub fn add_consumer(&mut self) -> ConsumerId {
        self.consumers.push(Consumer {
            received: Bits::new(self.capacity),
            counts: SeqCounts::default(),
            from: self.next_seq,
            until: None,
            position: Vec::new(),
            started: false,
        });
        ConsumerId(self.consumers.len() - 1)
    }

    /// The consumer holds its starting position: it is accountable for seqs allocated from now.
    pub fn start_consumer(&mut self, id: ConsumerId) {
        let c = &mut self.consumers[id.0];
        c.from = self.next_seq;
        c.started = true;
    }

    /// The consumer stopped: seqs allocated from now on are not expected of it. What it had not
    /// read of the earlier ones stays unread.
    pub fn stop_consumer(&mut self, id: ConsumerId) {
        let next = self.next_seq;
        let c = &mut self.consumers[id.0];
        if c.until.is_none() {
            c.until = Some(next);
        }
        self.prune();
    }

    /// Moves the window so that `seq` fits, forgetting the bits of the seqs that leave it.
    fn slide_to(&mut self, seq: u64) {
        if seq < self.base + self.capacity {
            return;
        }
        let new_base = seq + 1 - self.capacity;
        for s in self.base..new_base.min(self.base + self.capacity) {
            self.acked.clear(s);
            self.seen.clear(s);
            for c in &mut self.consumers {
                c.received.clear(s);
            }
        }
        self.base = new_base;
    }

    /// The producer's put of `seq` was acknowledged: stored in `shard` (an index into the
    /// stream's shards) with sequence number `kseq`.
    pub fn ack(&mut self, seq: u64, shard: usize, kseq: Option<SeqNo>) {
        if seq < self.base || seq >= self.next_seq || self.acked.set(seq) {
            return;
        }
        if seq >= self.counting_from {
            self.acked_count += 1;
        }
        let counting_from = self.counting_from;
        let mut pending = false;
        for c in &mut self.consumers {
            if !c.started || !c.accountable(seq, counting_from) {
                continue;
            }
            c.counts.acknowledged += 1;
            if c.received.get(seq) {
                c.counts.received += 1;
                c.counts.unacknowledged = c.counts.unacknowledged.saturating_sub(1);
            } else if kseq.is_some_and(|k| c.passed(shard, k)) {
                c.counts.lost += 1;
            } else {
                pending = true;
            }
        }
        if let (true, Some(kseq)) = (pending, kseq) {
            if self.tails.len() <= shard {
                self.tails.resize_with(shard + 1, VecDeque::new);
            }
            let tail = &mut self.tails[shard];
            // Acknowledgements arrive nearly in sequence-number order: search from the back.
            let at = tail.len() - tail.iter().rev().take_while(|p| p.kseq > kseq).count();
            tail.insert(at, Pending { kseq, seq });
            if tail.len() > TAIL_CAPACITY {
                let dropped = tail.pop_front().expect("not empty");
                for c in &mut self.consumers {
                    if c.started
                        && c.accountable(dropped.seq, counting_from)
                        && !c.received.get(dropped.seq)
                        && !c.passed(shard, dropped.kseq)
                    {
                        c.counts.unchecked += 1;
                    }
                }
            }
        }
    }

    /// A consumer received `seq`. Returns whether it had already received it (a duplicate), and
    /// whether this is the first copy any consumer received.
    pub fn receive(&mut self, id: ConsumerId, seq: u64) -> Receipt {
        let counting_from = self.counting_from;
        if seq < self.base {
            if seq >= counting_from {
                self.consumers[id.0].counts.late += 1;
            }
            return Receipt {
                duplicate: false,
                first_anywhere: false,
            };
        }
        let acked = self.acked.get(seq);
        let c = &mut self.consumers[id.0];
        let dup = c.received.set(seq);
        if seq >= counting_from {
            if dup {
                c.counts.duplicates += 1;
            } else if c.started && c.accountable(seq, counting_from) {
                if acked {
                    c.counts.received += 1;
                } else {
                    c.counts.unacknowledged += 1;
                }
            }
        }
        Receipt {
            duplicate: dup,
            first_anywhere: !self.seen.set(seq),
        }
    }

    /// The consumer has been handed every record of `shard` up to `kseq`: acknowledged records
    /// it passed without receiving are lost. Call after the batch's records were received.
    pub fn advance(&mut self, id: ConsumerId, shard: usize, kseq: SeqNo) {
        let counting_from = self.counting_from;
        let base = self.base;
        let c = &mut self.consumers[id.0];
        if c.position.len() <= shard {
            c.position.resize(shard + 1, None);
        }
        let old = c.position[shard];
        if old.is_some_and(|o| o >= kseq) {
            return;
        }
        c.position[shard] = Some(kseq);
        if let Some(tail) = self.tails.get(shard) {
            let from = old.map_or(0, |o| tail.partition_point(|p| p.kseq <= o));
            for p in tail.range(from..) {
                if p.kseq > kseq {
                    break;
                }
                if p.seq >= base && c.accountable(p.seq, counting_from) && !c.received.get(p.seq) {
                    c.counts.lost += 1;
                }
            }
        }
        self.prune_shard(shard);
    }

    /// Drops the records of `shard` that every running consumer has passed.
    fn prune_shard(&mut self, shard: usize) {
        let Some(tail) = self.tails.get_mut(shard) else {
            return;
        };
        let mut low: Option<SeqNo> = None;
        for c in self
            .consumers
            .iter()
            .filter(|c| c.started && c.until.is_none())
        {
            match c.position.get(shard).copied().flatten() {
                None => return,
                Some(p) => low = Some(low.map_or(p, |l| l.min(p))),
            }
        }
        match low {
            Some(low) => {
                while tail.front().is_some_and(|p| p.kseq <= low) {
                    tail.pop_front();
                }
            }
            // No consumer is running: nothing more can be passed.
            None => tail.clear(),
        }
    }

    fn prune(&mut self) {
        for shard in 0..self.tails.len() {
            self.prune_shard(shard);
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

    /// A consumer's counts, as of now.
    pub fn counts(&self, id: ConsumerId) -> SeqCounts {
        let c = &self.consumers[id.0].counts;
        SeqCounts {
            unread: c.acknowledged - c.received - c.lost,
            ..*c
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sequence numbers in the emulator's form for shard 0.
    fn k(n: u64) -> Option<SeqNo> {
        SeqNo::parse(&format!("4000000000{n:021}"))
    }

    fn started(l: &mut Ledger) -> ConsumerId {
        let id = l.add_consumer();
        l.start_consumer(id);
        id
    }

    /// A consumer handed `seqs` of shard 0, whose sequence numbers are seq + 1.
    fn deliver(l: &mut Ledger, id: ConsumerId, seqs: &[u64]) {
        for s in seqs {
            l.receive(id, *s);
        }
        if let Some(last) = seqs.iter().max() {
            l.advance(id, 0, k(last + 1).unwrap());
        }
    }

    fn counts(
        acknowledged: u64,
        received: u64,
        lost: u64,
        unread: u64,
        duplicates: u64,
    ) -> SeqCounts {
        SeqCounts {
            acknowledged,
            received,
            lost,
            unread,
            duplicates,
            ..SeqCounts::default()
        }
    }

    #[test]
    fn sequence_numbers_compare_as_numbers() {
        let real = "49590338271490256608559692538361571095921575989136588898";
        let a = SeqNo::parse(real).unwrap();
        let b = SeqNo::parse("49590338271490256608559692538361571095921575989136588899").unwrap();
        assert!(a < b);
        assert!(SeqNo::parse("9").unwrap() < SeqNo::parse("10").unwrap());
        assert_eq!(SeqNo::parse("12x"), None);
        assert_eq!(SeqNo::parse(""), None);
        assert_eq!(SeqNo::parse(&"9".repeat(80)), None);
    }

    #[test]
    fn received_lost_and_unread_add_up_to_acknowledged() {
        let mut l = Ledger::new(1024);
        let a = started(&mut l);
        let b = started(&mut l);
        for _ in 0..10 {
            let s = l.allocate();
            l.ack(s, 0, k(s + 1));
        }
        // a reads everything; b skips 3 and 7 (lost: it moved past them) and has not reached 9.
        deliver(&mut l, a, &(0..10).collect::<Vec<_>>());
        deliver(&mut l, b, &[0, 1, 2, 4, 5, 6, 8]);
        assert!(l.receive(a, 4).duplicate, "a second copy is a duplicate");
        assert!(!l.receive(b, 0).first_anywhere);
        assert_eq!(l.counts(a), counts(10, 10, 0, 0, 1));
        assert_eq!(l.counts(b), counts(10, 7, 2, 1, 1));
        // b catches up with 9: nothing is unread any more.
        deliver(&mut l, b, &[9]);
        assert_eq!(l.counts(b), counts(10, 8, 2, 0, 1));
    }

    #[test]
    fn a_consumer_that_stopped_behind_keeps_its_records_unread() {
        // The case found by hand: one poller fell behind a read overrun and the run ended;
        // the records it never reached must show as unread, not vanish.
        let mut l = Ledger::new(1024);
        let fast = started(&mut l);
        let slow = started(&mut l);
        for _ in 0..160 {
            let s = l.allocate();
            l.ack(s, 0, k(s + 1));
        }
        deliver(&mut l, fast, &(0..160).collect::<Vec<_>>());
        deliver(&mut l, slow, &(0..102).collect::<Vec<_>>());
        l.stop_consumer(fast);
        l.stop_consumer(slow);
        assert_eq!(l.counts(slow), counts(160, 102, 0, 58, 0));
        assert_eq!(l.counts(fast), counts(160, 160, 0, 0, 0));
    }

    #[test]
    fn acknowledgements_after_the_record_arrived_count_as_received() {
        // A fan-out push can beat the producer's PutRecord answer.
        let mut l = Ledger::new(1024);
        let a = started(&mut l);
        let s = l.allocate();
        deliver(&mut l, a, &[s]);
        assert_eq!(l.counts(a).unacknowledged, 1);
        assert_eq!(l.counts(a).acknowledged, 0);
        l.ack(s, 0, k(s + 1));
        assert_eq!(l.counts(a), counts(1, 1, 0, 0, 0));
    }

    #[test]
    fn a_record_acknowledged_after_the_consumer_passed_it_is_lost() {
        let mut l = Ledger::new(1024);
        let a = started(&mut l);
        let (s0, s1) = (l.allocate(), l.allocate());
        l.ack(s1, 0, k(2));
        deliver(&mut l, a, &[s1]);
        // s0 was stored before s1 (sequence number 1) but its answer came late; a is past it.
        l.ack(s0, 0, k(1));
        assert_eq!(l.counts(a), counts(2, 1, 1, 0, 0));
    }

    #[test]
    fn shards_are_followed_apart() {
        let mut l = Ledger::new(1024);
        let a = started(&mut l);
        let ks = |shard: u64, n: u64| SeqNo::parse(&format!("4{shard:09}{n:021}"));
        for s in 0..6 {
            let s2 = l.allocate();
            assert_eq!(s, s2);
            l.ack(s, (s % 2) as usize, ks(s % 2, s / 2 + 1));
        }
        // Shard 0 holds seqs 0, 2, 4; shard 1 holds 1, 3, 5. a has read all of shard 1 and the
        // first record of shard 0: shard 0's other two are unread, not lost.
        for s in [1, 3, 5] {
            l.receive(a, s);
        }
        l.advance(a, 1, ks(1, 3).unwrap());
        l.receive(a, 0);
        l.advance(a, 0, ks(0, 1).unwrap());
        assert_eq!(l.counts(a), counts(6, 4, 0, 2, 0));
    }

    #[test]
    fn consumers_are_only_held_to_what_was_sent_while_they_read() {
        let mut l = Ledger::new(1024);
        let early = started(&mut l);
        for _ in 0..5 {
            let s = l.allocate();
            l.ack(s, 0, k(s + 1));
            deliver(&mut l, early, &[s]);
        }
        let late = started(&mut l);
        for _ in 0..5 {
            let s = l.allocate();
            l.ack(s, 0, k(s + 1));
            deliver(&mut l, early, &[s]);
            deliver(&mut l, late, &[s]);
        }
        let s = l.allocate();
        l.ack(s, 0, k(s + 1));
        deliver(&mut l, early, &[s]);
        // Sent before it stopped and not yet read: unread. Sent after: not its business.
        l.stop_consumer(late);
        for _ in 0..5 {
            let s = l.allocate();
            l.ack(s, 0, k(s + 1));
            deliver(&mut l, early, &[s]);
        }
        assert_eq!(l.counts(early), counts(16, 16, 0, 0, 0));
        assert_eq!(l.counts(late), counts(6, 5, 0, 1, 0));
    }

    #[test]
    fn copies_after_the_window_are_late_and_the_tail_stays_bounded() {
        let mut l = Ledger::new(128);
        let reader = started(&mut l);
        let idle = started(&mut l);
        for _ in 0..1000 {
            let s = l.allocate();
            l.ack(s, 0, k(s + 1));
            deliver(&mut l, reader, &[s]);
        }
        assert_eq!(l.counts(reader), counts(1000, 1000, 0, 0, 0));
        // The idle consumer never read: everything is unread, nothing lost.
        assert_eq!(l.counts(idle), counts(1000, 0, 0, 1000, 0));
        l.receive(reader, 0);
        assert_eq!(l.counts(reader).late, 1);
        assert!(l.tails[0].len() <= 1000);
        l.stop_consumer(idle);
        assert!(l.tails[0].is_empty(), "no running consumer is behind");
    }

    #[test]
    fn reset_forgets_counts_and_earlier_seqs() {
        let mut l = Ledger::new(1024);
        let a = started(&mut l);
        for _ in 0..3 {
            let s = l.allocate();
            l.ack(s, 0, k(s + 1));
        }
        deliver(&mut l, a, &[0]);
        l.reset();
        let s = l.allocate();
        l.ack(s, 0, k(s + 1));
        deliver(&mut l, a, &[1, 2, s]);
        assert_eq!(l.counts(a), counts(1, 1, 0, 0, 0));
        assert_eq!(l.acked_count(), 1);
    }
}
