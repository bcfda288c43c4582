//! One queue: its attributes, its messages and the rules they follow. A message is visible,
//! delayed, or in flight (received, its visibility timeout running); it leaves when it is
//! deleted, purged, or older than the queue's retention. A FIFO queue also keeps each message
//! group's order, holds a group back while one of its messages is in flight, deduplicates sends
//! within the interval, and counts its calls per API action.
//!
//! Short polling samples the queue's servers (`SqsLimits::short_poll_servers`): each message is
//! stored on one, and a short poll asks a subset, those missed by the previous short poll first,
//! so a message a poll missed is found by the next (the guide: "if you have fewer than 1,000
//! messages in your queue, a subsequent request will return your messages").

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::error::SqsError;
use super::limits::SqsLimits;
use latlab_core::shaping::{CallRate, RateWindow};

/// A queue's attributes as set by CreateQueue and SetQueueAttributes.
#[derive(Clone, Debug, PartialEq)]
pub struct Attributes {
    pub visibility_timeout: Duration,
    pub retention: Duration,
    pub delay: Duration,
    pub max_message_bytes: u64,
    pub receive_wait: Duration,
    pub content_based_dedup: bool,
    /// `messageGroup` or `queue` (FIFO).
    pub dedup_scope_group: bool,
    /// `perMessageGroupId` or `perQueue` (FIFO).
    pub throughput_per_group: bool,
}

impl Attributes {
    pub fn defaults(l: &SqsLimits) -> Attributes {
        Attributes {
            visibility_timeout: l.default_visibility,
            retention: l.default_retention,
            delay: Duration::ZERO,
            max_message_bytes: l.max_message_bytes,
            receive_wait: Duration::ZERO,
            content_based_dedup: false,
            dedup_scope_group: false,
            throughput_per_group: false,
        }
    }

    /// High throughput mode: both settings the guide names.
    pub fn high_throughput(&self) -> bool {
        self.dedup_scope_group && self.throughput_per_group
    }
}

#[derive(Clone, Debug)]
pub struct Message {
    pub id: String,
    pub body: String,
    pub md5_body: String,
    pub message_attributes: Option<serde_json::Value>,
    pub md5_attributes: Option<String>,
    pub sent_micros: i64,
    pub first_receive_micros: Option<i64>,
    pub receive_count: u32,
    /// Received at least once and its visibility timeout not yet run out.
    pub in_flight: bool,
    /// When it is (or becomes) visible: after its delay, or when its visibility timeout ends.
    pub visible_at: Instant,
    pub expires_at: Instant,
    /// The receipt handle's generation: each receive makes a new one, and only the latest one
    /// deletes or changes the message.
    pub generation: u64,
    pub group: Option<String>,
    pub dedup_id: Option<String>,
    pub sequence_number: Option<String>,
    /// The server short polling may or may not ask.
    pub server: u32,
}

/// A received message as the answer carries it.
pub struct Received {
    pub message: Message,
    pub receipt: String,
}

/// What the queue counts, for the stats document and the lab's figures of what only the service
/// sees.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QueueCounts {
    pub sent: u64,
    pub deduplicated: u64,
    pub received: u64,
    pub redelivered: u64,
    pub empty_receives: u64,
    pub deleted: u64,
    pub visibility_expired: u64,
    pub throttled: u64,
    pub over_limit: u64,
    pub expired: u64,
    pub purged: u64,
}

pub struct State {
    pub attributes: Attributes,
    pub tags: BTreeMap<String, String>,
    /// By queue order (the send sequence).
    messages: BTreeMap<u64, Message>,
    next_seq: u64,
    /// Message id -> its key in `messages`.
    by_id: HashMap<String, u64>,
    /// FIFO: deduplication id (with its group when scoped by group) -> when sent, its message id
    /// and sequence number.
    dedup: HashMap<String, (Instant, String, Option<String>)>,
    /// Servers the last short poll did not ask.
    missed: Vec<u32>,
    pub last_purge: Option<Instant>,
    dedup_interval: Duration,
    /// FIFO: calls admitted per API action (send, receive, delete).
    rates: [CallRate; 3],
    pub counts: QueueCounts,
}

/// A FIFO queue's API actions, each with its own calls-per-second quota.
#[derive(Clone, Copy, Debug)]
pub enum Action {
    Send = 0,
    Receive = 1,
    Delete = 2,
}

pub struct Queue {
    pub name: String,
    pub fifo: bool,
    pub created_secs: i64,
    pub state: Mutex<State>,
    /// Woken on every change a long poll may be waiting for.
    pub changed: tokio::sync::Notify,
    pub deleted: std::sync::atomic::AtomicBool,
}

impl Queue {
    pub fn new(name: &str, attributes: Attributes, limits: &SqsLimits, now_secs: i64) -> Queue {
        let fifo = name.ends_with(latlab_core::services::sqs::FIFO_SUFFIX);
        let per_sec = if attributes.high_throughput() {
            limits.fifo_high_throughput_calls_per_sec
        } else {
            limits.fifo_calls_per_sec
        };
        Queue {
            name: name.to_string(),
            fifo,
            created_secs: now_secs,
            state: Mutex::new(State {
                attributes,
                tags: BTreeMap::new(),
                messages: BTreeMap::new(),
                next_seq: 0,
                by_id: HashMap::new(),
                dedup: HashMap::new(),
                missed: Vec::new(),
                last_purge: None,
                dedup_interval: limits.dedup_interval,
                rates: rates(per_sec),
                counts: QueueCounts::default(),
            }),
            changed: tokio::sync::Notify::new(),
            deleted: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// A FIFO queue's call of `action`, admitted or refused as its quota says (standard queues
    /// have none the emulator enforces).
    pub fn admit(&self, action: Action, limits: &SqsLimits, now: Instant) -> Result<(), SqsError> {
        if !self.fifo {
            return Ok(());
        }
        let mut s = self.state.lock();
        if s.rates[action as usize].try_admit(now) {
            return Ok(());
        }
        s.counts.throttled += 1;
        let per_sec = if s.attributes.high_throughput() {
            limits.fifo_high_throughput_calls_per_sec
        } else {
            limits.fifo_calls_per_sec
        };
        Err(SqsError::throttled(&format!(
            "Rate exceeded: a FIFO queue allows {per_sec} calls per second per API action{}",
            if s.attributes.high_throughput() {
                " in high throughput mode"
            } else {
                " (batching sends up to 10 messages a call)"
            }
        )))
    }

    /// The quota follows the attributes (high throughput mode on or off).
    pub fn reset_rates(&self, limits: &SqsLimits) {
        let mut s = self.state.lock();
        let per_sec = if s.attributes.high_throughput() {
            limits.fifo_high_throughput_calls_per_sec
        } else {
            limits.fifo_calls_per_sec
        };
        s.rates = rates(per_sec);
    }
}

fn rates(per_sec: u32) -> [CallRate; 3] {
    // How the service counts "300 transactions per second" is not documented: at most that many
    // in any one-second window is assumed (docs/emulator.md).
    std::array::from_fn(|_| CallRate::new(RateWindow::Sliding, per_sec))
}

/// A new message for [`State::send`].
pub struct Outgoing {
    pub body: String,
    pub delay: Option<Duration>,
    pub message_attributes: Option<serde_json::Value>,
    pub md5_attributes: Option<String>,
    pub group: Option<String>,
    pub dedup_id: Option<String>,
}

/// What a send answers: the message id, and a FIFO message's sequence number.
pub struct Sent {
    pub id: String,
    pub md5_body: String,
    pub md5_attributes: Option<String>,
    pub sequence_number: Option<String>,
}

impl State {
    /// Drops messages past their retention and ends visibility timeouts that have run out.
    pub fn settle(&mut self, now: Instant) {
        let expired: Vec<u64> = self
            .messages
            .iter()
            .filter(|(_, m)| m.expires_at <= now)
            .map(|(k, _)| *k)
            .collect();
        for k in expired {
            if let Some(m) = self.messages.remove(&k) {
                self.by_id.remove(&m.id);
                self.counts.expired += 1;
            }
        }
        for m in self.messages.values_mut() {
            if m.in_flight && m.visible_at <= now {
                m.in_flight = false;
                self.counts.visibility_expired += 1;
            }
        }
        let interval = self.dedup_interval;
        self.dedup
            .retain(|_, (at, _, _)| now.saturating_duration_since(*at) < interval);
    }

    pub fn send(
        &mut self,
        fifo: bool,
        msg: Outgoing,
        limits: &SqsLimits,
        now: Instant,
        now_micros: i64,
    ) -> Result<Sent, SqsError> {
        let md5_body = md5_hex(msg.body.as_bytes());
        let dedup_key = if fifo {
            let id = match (&msg.dedup_id, self.attributes.content_based_dedup) {
                (Some(id), _) => id.clone(),
                (None, true) => sha256_hex(msg.body.as_bytes()),
                (None, false) => {
                    return Err(SqsError::invalid_parameter(
                        "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
                    ));
                }
            };
            let key = if self.attributes.dedup_scope_group {
                format!("{}\u{0}{id}", msg.group.as_deref().unwrap_or(""))
            } else {
                id
            };
            if let Some((at, id, seq)) = self.dedup.get(&key)
                && now.saturating_duration_since(*at) < limits.dedup_interval
            {
                self.counts.deduplicated += 1;
                return Ok(Sent {
                    id: id.clone(),
                    md5_body,
                    md5_attributes: msg.md5_attributes,
                    sequence_number: seq.clone(),
                });
            }
            Some(key)
        } else {
            None
        };
        let seq = self.next_seq;
        self.next_seq += 1;
        let id = uuid();
        let sequence_number =
            fifo.then(|| format!("{:020}", 18_000_000_000_000_000_000u128 + u128::from(seq)));
        let delay = msg.delay.unwrap_or(self.attributes.delay);
        let server = (rand::random::<u32>()) % limits.short_poll_servers.max(1);
        let m = Message {
            id: id.clone(),
            body: msg.body,
            md5_body: md5_body.clone(),
            message_attributes: msg.message_attributes,
            md5_attributes: msg.md5_attributes.clone(),
            sent_micros: now_micros,
            first_receive_micros: None,
            receive_count: 0,
            in_flight: false,
            visible_at: now + delay,
            expires_at: now + self.attributes.retention,
            generation: 0,
            group: msg.group,
            dedup_id: msg.dedup_id,
            sequence_number: sequence_number.clone(),
            server,
        };
        if let Some(key) = dedup_key {
            self.dedup
                .insert(key, (now, id.clone(), sequence_number.clone()));
        }
        self.by_id.insert(id.clone(), seq);
        self.messages.insert(seq, m);
        self.counts.sent += 1;
        Ok(Sent {
            id,
            md5_body,
            md5_attributes: msg.md5_attributes,
            sequence_number,
        })
    }

    /// Messages now: visible, in flight, delayed (as GetQueueAttributes counts them).
    pub fn census(&self, now: Instant) -> (u64, u64, u64) {
        let (mut visible, mut in_flight, mut delayed) = (0, 0, 0);
        for m in self.messages.values() {
            if m.in_flight {
                in_flight += 1;
            } else if m.visible_at > now {
                delayed += 1;
            } else {
                visible += 1;
            }
        }
        (visible, in_flight, delayed)
    }

    /// The earliest moment a message not visible now becomes visible (a long poll's next look).
    pub fn next_change(&self, now: Instant) -> Option<Instant> {
        let mut next = self
            .messages
            .values()
            .filter(|m| m.visible_at > now)
            .map(|m| m.visible_at)
            .min();
        if let Some(e) = self.messages.values().map(|m| m.expires_at).min()
            && e > now
        {
            next = Some(next.map_or(e, |n| n.min(e)));
        }
        next
    }

    /// Takes up to `max` messages for a receive. `short`: a short poll, which asks only some of
    /// the servers (standard queues; a FIFO queue's receive is ordered and asks them all).
    #[allow(clippy::too_many_arguments)]
    pub fn receive(
        &mut self,
        queue: &str,
        fifo: bool,
        max: usize,
        visibility: Duration,
        short: bool,
        limits: &SqsLimits,
        now: Instant,
        now_micros: i64,
    ) -> Result<Vec<Received>, SqsError> {
        self.settle(now);
        let (_, in_flight, _) = self.census(now);
        let cap = if fifo {
            limits.max_in_flight_fifo
        } else {
            limits.max_in_flight_standard
        };
        if in_flight >= u64::from(cap) {
            // The guide: a short poll gets OverLimit, a long poll no error (and no message); a
            // FIFO queue returns no error.
            if short && !fifo {
                self.counts.over_limit += 1;
                return Err(SqsError::over_limit(cap));
            }
            return Ok(Vec::new());
        }
        let room = (u64::from(cap) - in_flight) as usize;
        let max = max.min(room);
        let asked = if short && !fifo {
            Some(self.sample_servers(limits))
        } else {
            None
        };
        let mut taken: Vec<u64> = Vec::new();
        if fifo {
            // A group is held back while any of its messages is in flight; within a group the
            // messages go in order, so one not yet visible holds back those after it.
            let mut blocked: std::collections::HashSet<&str> = self
                .messages
                .values()
                .filter(|m| m.in_flight)
                .filter_map(|m| m.group.as_deref())
                .collect();
            for (k, m) in &self.messages {
                if taken.len() >= max {
                    break;
                }
                let group = m.group.as_deref().unwrap_or("");
                if blocked.contains(group) {
                    continue;
                }
                if m.visible_at > now {
                    blocked.insert(group);
                    continue;
                }
                taken.push(*k);
            }
        } else {
            for (k, m) in &self.messages {
                if taken.len() >= max {
                    break;
                }
                if m.in_flight || m.visible_at > now {
                    continue;
                }
                if let Some(asked) = &asked
                    && !asked.contains(&m.server)
                {
                    continue;
                }
                taken.push(*k);
            }
        }
        let mut out = Vec::with_capacity(taken.len());
        for k in taken {
            let m = self.messages.get_mut(&k).expect("taken from the map");
            m.generation += 1;
            m.receive_count += 1;
            if m.receive_count > 1 {
                self.counts.redelivered += 1;
            }
            m.first_receive_micros.get_or_insert(now_micros);
            m.in_flight = !visibility.is_zero();
            m.visible_at = now + visibility;
            out.push(Received {
                receipt: receipt(queue, &m.id, m.generation),
                message: m.clone(),
            });
        }
        self.counts.received += out.len() as u64;
        Ok(out)
    }

    /// The servers a short poll asks: those the last one missed first, then others at random.
    fn sample_servers(&mut self, limits: &SqsLimits) -> Vec<u32> {
        let n = limits.short_poll_servers;
        let k = limits.short_poll_sampled.min(n) as usize;
        let mut asked: Vec<u32> = self.missed.iter().copied().filter(|s| *s < n).collect();
        asked.truncate(k);
        let mut rest: Vec<u32> = (0..n).filter(|s| !asked.contains(s)).collect();
        while asked.len() < k && !rest.is_empty() {
            let i = rand::random::<u32>() as usize % rest.len();
            asked.push(rest.swap_remove(i));
        }
        self.missed = (0..n).filter(|s| !asked.contains(s)).collect();
        asked
    }

    /// Deletes the message a receipt handle names, if it is the latest receipt of it; an older
    /// receipt, or a message already gone, deletes nothing and is no error (the guide: "the
    /// request succeeds, but the message might not be deleted").
    pub fn delete(&mut self, id: &str, generation: u64) -> bool {
        let Some(&k) = self.by_id.get(id) else {
            return false;
        };
        let current = self
            .messages
            .get(&k)
            .is_some_and(|m| m.generation == generation);
        if current {
            self.messages.remove(&k);
            self.by_id.remove(id);
            self.counts.deleted += 1;
        }
        current
    }

    /// Changes a message's visibility timeout from now; it must be in flight under this receipt.
    pub fn change_visibility(
        &mut self,
        id: &str,
        generation: u64,
        timeout: Duration,
        now: Instant,
        handle: &str,
    ) -> Result<(), SqsError> {
        self.settle(now);
        let m = self
            .by_id
            .get(id)
            .and_then(|k| self.messages.get_mut(k))
            .filter(|m| m.generation == generation)
            .ok_or_else(|| {
                SqsError::invalid_parameter(&format!(
                    "Value {handle} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change."
                ))
            })?;
        if !m.in_flight {
            return Err(SqsError::message_not_in_flight());
        }
        m.visible_at = now + timeout;
        m.in_flight = !timeout.is_zero();
        Ok(())
    }

    pub fn purge(&mut self) {
        self.counts.purged += self.messages.len() as u64;
        self.messages.clear();
        self.by_id.clear();
    }
}

/// A receipt handle: the queue, the message and the receipt's generation, in base64.
pub fn receipt(queue: &str, id: &str, generation: u64) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .encode(format!("latlab1\n{queue}\n{id}\n{generation}"))
}

/// A receipt handle's queue, message id and generation; None when it is not one.
pub fn parse_receipt(handle: &str) -> Option<(String, String, u64)> {
    use base64::Engine;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(handle)
        .ok()?;
    let text = String::from_utf8(raw).ok()?;
    let mut parts = text.split('\n');
    if parts.next()? != "latlab1" {
        return None;
    }
    let queue = parts.next()?.to_string();
    let id = parts.next()?.to_string();
    let generation = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((queue, id, generation))
}

pub fn md5_hex(data: &[u8]) -> String {
    use md5::Digest;
    hex::encode(md5::Md5::digest(data))
}

fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(data))
}

/// A message id in the service's UUID form.
pub fn uuid() -> String {
    let v: u128 = rand::random();
    let h = format!("{v:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}
