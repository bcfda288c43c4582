//! Records another run produced, as one consumer received them: when hosts split the lab (one
//! producing with `--producer-only`, others reading with `--no-producer`), a reading host's
//! records are all another run's. Per producing run it keeps which `seq`s the consumer received,
//! so that `latlab merge` can set them beside what that run's producer acknowledged:
//! every acknowledged record received by each host's consumers, or the shortfall shown.

/// Producing runs told apart per consumer; records of any further run are counted in
/// [`ForeignRuns::untracked`].
const RUNS: usize = 8;

/// Seqs tracked per run: 16 Mi (2 MiB of bitmap), over four hours at 1,000 records/s. A record
/// with a higher seq is counted in [`ForeignRun::unchecked`].
const SEQS: u64 = 1 << 24;

/// A run id as the payload carries it: 8 hex digits.
pub fn parse_run(text: &str) -> Option<u32> {
    if text.len() != 8 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(text, 16).ok()
}

/// One producing run's records as one consumer received them.
#[derive(Clone, Debug, Default)]
struct ForeignRun {
    run: u32,
    bits: Vec<u64>,
    received: u64,
    duplicates: u64,
    unchecked: u64,
    /// The smallest arrival - send of its records (the producing host's clock against the
    /// service's; negative when that clock is ahead).
    min_send_to_arrival_us: Option<i64>,
}

/// What a snapshot shows of one producing run's records at one consumer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForeignCount {
    /// The producing run's id.
    pub run: String,
    /// Distinct records (by seq) received at least once.
    pub received: u64,
    /// Copies beyond a record's first.
    pub duplicates: u64,
    /// Records whose seq was past what is tracked (counted, not told apart).
    pub unchecked: u64,
    /// The smallest arrival - send of its records: the producing host's send stamps against
    /// the service's arrival stamps, which bounds how far that host's clock is behind.
    pub min_send_to_arrival_us: Option<i64>,
}

#[derive(Clone, Debug, Default)]
pub struct ForeignRuns {
    runs: Vec<ForeignRun>,
    /// Records of runs beyond the first [`RUNS`].
    pub untracked: u64,
}

impl ForeignRuns {
    /// One record of run `run` with this `seq` reached the consumer; it arrived at the service
    /// `send_to_arrival_us` after its producer stamped it.
    pub fn receive(&mut self, run: u32, seq: u64, send_to_arrival_us: i64) {
        let i = match self.runs.iter().position(|r| r.run == run) {
            Some(i) => i,
            None if self.runs.len() < RUNS => {
                self.runs.push(ForeignRun {
                    run,
                    ..ForeignRun::default()
                });
                self.runs.len() - 1
            }
            None => {
                self.untracked += 1;
                return;
            }
        };
        let r = &mut self.runs[i];
        r.min_send_to_arrival_us = Some(
            r.min_send_to_arrival_us
                .map_or(send_to_arrival_us, |m| m.min(send_to_arrival_us)),
        );
        if seq >= SEQS {
            r.unchecked += 1;
            return;
        }
        let (word, bit) = ((seq / 64) as usize, seq % 64);
        if r.bits.len() <= word {
            r.bits.resize(word + 1, 0);
        }
        if r.bits[word] & (1 << bit) != 0 {
            r.duplicates += 1;
        } else {
            r.bits[word] |= 1 << bit;
            r.received += 1;
        }
    }

    /// Each producing run's counts, in the order the consumer first met them.
    pub fn counts(&self) -> Vec<ForeignCount> {
        self.runs
            .iter()
            .map(|r| ForeignCount {
                run: format!("{:08x}", r.run),
                received: r.received,
                duplicates: r.duplicates,
                unchecked: r.unchecked,
                min_send_to_arrival_us: r.min_send_to_arrival_us,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_runs_records_are_counted_once_with_their_copies_apart() {
        let mut f = ForeignRuns::default();
        for seq in [0, 1, 2, 1, 700, 2] {
            f.receive(0xa1b2c3d4, seq, 40 - seq as i64);
        }
        f.receive(0x00000001, 5, 3);
        f.receive(0xa1b2c3d4, SEQS + 3, 10);
        let counts = f.counts();
        assert_eq!(
            counts[0],
            ForeignCount {
                run: "a1b2c3d4".into(),
                received: 4,
                duplicates: 2,
                unchecked: 1,
                min_send_to_arrival_us: Some(-660),
            }
        );
        assert_eq!(counts[1].run, "00000001");
        assert_eq!(counts[1].received, 1);
        for run in 2..=RUNS as u32 + 1 {
            f.receive(run, 0, 0);
        }
        assert_eq!(f.counts().len(), RUNS);
        assert_eq!(f.untracked, 2);
    }

    #[test]
    fn only_eight_hex_digits_name_a_run() {
        assert_eq!(parse_run("a1b2c3d4"), Some(0xa1b2c3d4));
        assert_eq!(parse_run("a1b2c3d"), None);
        assert_eq!(parse_run("a1b2c3dx"), None);
        assert_eq!(parse_run("+1b2c3d4"), None);
    }
}
