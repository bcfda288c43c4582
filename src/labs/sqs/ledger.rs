//! One consumer's accounting of its queue by the producer's `seq`. Every message the producer had
//! acknowledged on the consumer's queue is in exactly one of four states, and they always add up:
//!
//! `received + lost + in flight + unread = sent`
//!
//! - **received**: the consumer got it and finished with it (processed and deleted);
//! - **in flight**: the consumer got it and has not finished (processing, or not yet deleted);
//! - **lost**: never received, and older than the queue's retention period when counted: the
//!   queue no longer holds it, so it can never be received;
//! - **unread**: never received yet, and still in the queue (visible, delayed, or behind a FIFO
//!   group's earlier message).
//!
//! A message received again after its first receive (its visibility timeout ran out, so the
//! queue delivered it once more) is a **redelivery**, counted apart and never a second receipt.
//! A message whose body does not carry this run's id is **foreign** (another run's, or another
//! application's), also counted apart.
//!
//! Unlike a Kinesis shard, a standard queue keeps no order, so the ledger keeps a bit per seq
//! rather than a position: three bitmaps (sent, received, finished) over a window of the most
//! recent `capacity` seqs. A seq that leaves the window keeps its state in running totals; a
//! receive of a seq already out of the window is counted `late` (it stays where it was counted).

use std::collections::VecDeque;

/// Seqs tracked at once: 4 Mi (512 KiB per bitmap), over an hour at 1,000 messages a second.
pub const DEFAULT_CAPACITY: u64 = 1 << 22;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counts {
    pub sent: u64,
    pub received: u64,
    pub in_flight: u64,
    pub lost: u64,
    pub unread: u64,
    pub redelivered: u64,
    pub foreign: u64,
    /// Receives of a seq that had already left the window (counted where it was).
    pub late: u64,
}

impl Counts {
    /// The identity every snapshot keeps.
    pub fn adds_up(&self) -> bool {
        self.received + self.lost + self.in_flight + self.unread == self.sent
    }
}

const SENT: u8 = 1;
const RECEIVED: u8 = 2;
const DONE: u8 = 4;

pub struct Ledger {
    capacity: u64,
    /// The lowest seq the window holds.
    base: u64,
    /// One byte per seq from `base` (bits SENT, RECEIVED, DONE).
    states: VecDeque<u8>,
    /// The second each sent seq was acknowledged, as (second, first seq acknowledged then),
    /// one entry per second that had any: what tells lost from unread.
    marks: VecDeque<(u64, u64)>,
    /// Running totals of every sent seq, in the window or gone from it.
    sent: u64,
    done: u64,
    in_flight: u64,
    /// Unreceived seqs that left the window, by the second they were acknowledged.
    gone_unreceived: VecDeque<(u64, u64)>,
    redelivered: u64,
    foreign: u64,
    late: u64,
}

impl Default for Ledger {
    fn default() -> Self {
        Ledger::new(DEFAULT_CAPACITY)
    }
}

impl Ledger {
    pub fn new(capacity: u64) -> Ledger {
        Ledger {
            capacity: capacity.max(1),
            base: 0,
            states: VecDeque::new(),
            marks: VecDeque::new(),
            sent: 0,
            done: 0,
            in_flight: 0,
            gone_unreceived: VecDeque::new(),
            redelivered: 0,
            foreign: 0,
            late: 0,
        }
    }

    /// The state byte of `seq`, the window grown (and its oldest seqs moved out) to hold it;
    /// None when `seq` is older than the window.
    fn slot(&mut self, seq: u64) -> Option<&mut u8> {
        if seq < self.base {
            return None;
        }
        let i = seq - self.base;
        if i >= self.states.len() as u64 {
            // A seq far ahead moves the window past everything it held.
            let keep_from = (seq + 1).saturating_sub(self.capacity);
            while self.base < keep_from {
                if self.states.is_empty() {
                    self.base = keep_from;
                    break;
                }
                self.evict_one();
            }
            let len = (seq - self.base + 1) as usize;
            self.states.resize(len, 0);
        }
        let i = (seq - self.base) as usize;
        self.states.get_mut(i)
    }

    /// Moves the window's oldest seq into the totals.
    fn evict_one(&mut self) {
        let s = self.states.pop_front().unwrap_or(0);
        let seq = self.base;
        self.base += 1;
        if s & SENT != 0 && s & RECEIVED == 0 {
            let second = self.second_of(seq);
            match self.gone_unreceived.back_mut() {
                Some((sec, n)) if *sec == second => *n += 1,
                _ => self.gone_unreceived.push_back((second, 1)),
            }
        }
        while self.marks.len() > 1 && self.marks[1].1 <= self.base {
            self.marks.pop_front();
        }
    }

    /// The second a sent seq was acknowledged (the mark at or before it).
    fn second_of(&self, seq: u64) -> u64 {
        self.marks
            .iter()
            .rev()
            .find(|(_, first)| *first <= seq)
            .map_or(0, |(sec, _)| *sec)
    }

    /// The producer's send of `seq` to this consumer's queue was acknowledged at `second`.
    pub fn sent(&mut self, seq: u64, second: u64) {
        let Some(s) = self.slot(seq) else { return };
        if *s & SENT != 0 {
            return;
        }
        *s |= SENT;
        let state = *s;
        self.sent += 1;
        if state & DONE != 0 {
            self.done += 1;
        } else if state & RECEIVED != 0 {
            self.in_flight += 1;
        }
        match self.marks.back() {
            Some((sec, first)) if *sec >= second || *first > seq => {}
            _ => self.marks.push_back((second, seq)),
        }
    }

    /// A receive handed the consumer `seq`; false when it is a redelivery (or late).
    pub fn received(&mut self, seq: u64) -> bool {
        let Some(s) = self.slot(seq) else {
            self.late += 1;
            return false;
        };
        if *s & RECEIVED != 0 {
            self.redelivered += 1;
            return false;
        }
        *s |= RECEIVED;
        if *s & SENT != 0 {
            self.in_flight += 1;
        }
        true
    }

    /// The consumer finished with `seq` (processed it and deleted it).
    pub fn finished(&mut self, seq: u64) {
        let Some(s) = self.slot(seq) else { return };
        if *s & DONE != 0 {
            return;
        }
        let before = *s;
        *s |= DONE | RECEIVED;
        if before & SENT != 0 {
            self.done += 1;
            if before & RECEIVED != 0 {
                self.in_flight -= 1;
            }
        }
    }

    /// Sent seqs never received yet (unread or lost).
    pub fn unreceived(&self) -> u64 {
        self.sent - self.done - self.in_flight
    }

    /// A message that is not this run's.
    pub fn foreign(&mut self) {
        self.foreign += 1;
    }

    /// The counts now: a sent seq never received that was acknowledged more than `retention`
    /// before `now_second` is lost.
    pub fn counts(&self, now_second: u64, retention_secs: u64) -> Counts {
        let unreceived = self.sent - self.done - self.in_flight;
        let mut lost = 0;
        if let Some(cutoff) = now_second.checked_sub(retention_secs) {
            lost += self
                .gone_unreceived
                .iter()
                .filter(|(sec, _)| *sec < cutoff)
                .map(|(_, n)| n)
                .sum::<u64>();
            // The first seq acknowledged at or after the cutoff: unreceived seqs below it are lost.
            let lost_below = self
                .marks
                .iter()
                .find(|(sec, _)| *sec >= cutoff)
                .map_or(u64::MAX, |(_, seq)| *seq);
            let end = lost_below
                .saturating_sub(self.base)
                .min(self.states.len() as u64);
            lost += self
                .states
                .iter()
                .take(end as usize)
                .filter(|s| **s & SENT != 0 && **s & RECEIVED == 0)
                .count() as u64;
        }
        Counts {
            sent: self.sent,
            received: self.done,
            in_flight: self.in_flight,
            lost,
            unread: unreceived - lost,
            redelivered: self.redelivered,
            foreign: self.foreign,
            late: self.late,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_adds_up_to_sent() {
        let mut l = Ledger::new(1024);
        for seq in 0..10 {
            l.sent(seq, seq / 5);
        }
        assert!(l.received(0));
        l.finished(0);
        assert!(l.received(1));
        assert!(!l.received(1), "a second copy is a redelivery");
        l.finished(1);
        assert!(l.received(2));
        let c = l.counts(1, 3600);
        assert_eq!(
            (
                c.sent,
                c.received,
                c.in_flight,
                c.unread,
                c.lost,
                c.redelivered
            ),
            (10, 2, 1, 7, 0, 1)
        );
        assert!(c.adds_up());
    }

    #[test]
    fn past_the_retention_an_unreceived_message_is_lost() {
        let mut l = Ledger::new(1024);
        l.sent(0, 0);
        l.sent(1, 0);
        l.sent(2, 70);
        l.received(1);
        let c = l.counts(80, 60);
        assert_eq!((c.lost, c.unread, c.in_flight), (1, 1, 1));
        assert!(c.adds_up());
    }

    #[test]
    fn seqs_that_leave_the_window_keep_their_state() {
        let mut l = Ledger::new(4);
        for seq in 0..10 {
            l.sent(seq, 0);
            if seq % 2 == 0 {
                l.received(seq);
                l.finished(seq);
            }
        }
        assert!(!l.received(1), "seq 1 left the window: late");
        let c = l.counts(0, 3600);
        assert_eq!((c.sent, c.received, c.unread, c.late), (10, 5, 5, 1));
        assert!(c.adds_up());
    }

    #[test]
    fn a_receive_before_the_send_is_acknowledged_counts_once() {
        // The queue can deliver a message before the producer hears its send's answer.
        let mut l = Ledger::new(16);
        assert!(l.received(3));
        l.sent(3, 0);
        l.finished(3);
        let c = l.counts(0, 60);
        assert_eq!((c.sent, c.received, c.unread), (1, 1, 0));
        assert!(c.adds_up());
    }
}
