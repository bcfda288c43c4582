//! The SQS lab's configuration, priced: the requests its producer and consumers make at their
//! measured rates, standard and FIFO queues each at their price per million requests, every
//! request counted in 64 KB chunks of its payload (SQS's billing: "each 64 KB chunk of a payload
//! is billed as 1 request"). Empty receives are requests too, and they are what short polling
//! pays for.

use crate::lab_kit::cost::prices::{Price, Section};
use crate::lab_kit::cost::{LabCost, Prices, UnitCosts, item, usd, usd_or_dash};
use crate::labs::LabKind;
use crate::labs::sqs::snapshot::{ConsumerFigures, SqsSnapshot};

/// The price keys, per million requests.
pub const STANDARD: &str = "sqs.standard_requests_per_million";
pub const FIFO: &str = "sqs.fifo_requests_per_million";
/// Its section of a price file, `[sqs]`: requests past the monthly free tier, for the first
/// 100 billion a month. The Price List products: SQS's offer is AWSQueueService; its request
/// products are `API Request`s of group SQS-APIRequest-Tier1, told apart by queueType; their
/// usage types are `Requests-RBP` and `Requests-FIFO-RBP` in us-east-1's file and
/// `REGION-Requests-Tier1` and `REGION-Requests-FIFO-Tier1` elsewhere (an excerpt of the
/// us-east-1 file published 2025-08-28, and infracost's filter on queueType, sqs_queue.go). The
/// first tier is taken: the monthly free tier is a product of its own (`Global-Requests`), not a
/// band of these. Added after the built-in files' first form, so a file may lack it: the lab's
/// cost then says the price is missing.
pub const PRICES: &[Section] = &[Section {
    table: "sqs",
    offer: "AWSQueueService",
    prices: &[
        Price {
            key: "standard_requests_per_million",
            unit: "per million requests",
            usage: &["Requests-RBP", "Requests-Tier1"],
            attrs: &[("group", "SQS-APIRequest-Tier1"), ("queueType", "Standard")],
            scale: 1e6,
        },
        Price {
            key: "fifo_requests_per_million",
            unit: "per million requests",
            usage: &["Requests-FIFO-RBP", "Requests-FIFO-Tier1"],
            attrs: &[
                ("group", "SQS-APIRequest-Tier1"),
                ("queueType", "FIFO (first-in, first-out)"),
            ],
            scale: 1e6,
        },
    ],
    sizes: &[],
    named: None,
    optional: true,
}];

/// A billed request's payload chunk.
pub const CHUNK: u64 = 64 * 1024;

/// Billed requests for one call carrying `bytes`.
pub fn chunks(bytes: u64) -> u64 {
    bytes.div_ceil(CHUNK).max(1)
}

/// Requests a consumer makes per second: its receives (each billed in chunks of what it
/// returned) and its deletes.
fn consumer_requests(c: &ConsumerFigures, payload: u64, seconds: f64) -> f64 {
    let ops = &c.sdk.counters.operations;
    let calls = |op: &str| ops.get(op).map_or(0, |o| o.calls) as f64;
    let receives = calls("ReceiveMessage");
    let per_receive = if receives > 0.0 {
        c.messages as f64 / receives
    } else {
        0.0
    };
    let receive_chunks = chunks((per_receive * payload as f64) as u64) as f64;
    (receives * receive_chunks + calls("DeleteMessageBatch") + calls("DeleteMessage"))
        / seconds.max(1.0)
}

/// The lab's charges per hour, and the price keys they use.
pub fn cost(s: &SqsSnapshot, p: &Prices) -> (LabCost, Vec<String>) {
    let lab = LabKind::Sqs.name();
    let (Some(standard), Some(fifo)) = (p.value(STANDARD), p.value(FIFO)) else {
        return (
            LabCost {
                lab,
                items: Vec::new(),
                notes: Vec::new(),
                missing: Some(format!(
                    "no SQS request prices ({STANDARD}, {FIFO}) in the price file ({})",
                    p.origin
                )),
            },
            Vec::new(),
        );
    };
    let seconds = s.seconds.max(1.0);
    let queues = s.consumers.iter().filter(|c| !c.stopped).count().max(1) as f64;
    let fifo_queues = s
        .consumers
        .iter()
        .filter(|c| !c.stopped && c.kind.fifo())
        .count() as f64;
    // The producer's calls, its messages spread evenly over the queues it feeds.
    let ops = &s.producer.sdk.counters.operations;
    let sends: f64 = ["SendMessage", "SendMessageBatch"]
        .iter()
        .map(|op| ops.get(*op).map_or(0, |o| o.calls) as f64)
        .sum();
    let per_send = if s.producer.calls > 0 {
        s.producer.acknowledged as f64 / s.producer.calls as f64
    } else {
        1.0
    };
    let send_chunks = chunks((per_send * s.payload_bytes as f64) as u64) as f64;
    let send_rate = sends * send_chunks / seconds;
    let mut std_rate = send_rate * (queues - fifo_queues) / queues;
    let mut fifo_rate = send_rate * fifo_queues / queues;
    for c in s.consumers.iter().filter(|c| !c.stopped) {
        let r = consumer_requests(c, s.payload_bytes, seconds);
        if c.kind.fifo() {
            fifo_rate += r;
        } else {
            std_rate += r;
        }
    }
    let mut items = Vec::new();
    let mut keys = Vec::new();
    for (key, price, rate, what) in [
        (STANDARD, standard, std_rate, "SQS standard queue requests"),
        (FIFO, fifo, fifo_rate, "SQS FIFO queue requests"),
    ] {
        if rate <= 0.0 {
            continue;
        }
        items.push(item(
            p,
            key,
            what,
            format!(
                "{:.1} requests/s (64 KB chunks) × 3,600 × {} per million",
                rate,
                usd(price)
            ),
            rate * 3600.0 / 1e6 * price,
        ));
        keys.push(key.to_string());
    }
    (
        LabCost {
            lab,
            items,
            notes: vec![
                "request rates measured since the start, sends, receives (empty ones too) and \
                 deletes; the free tier's first million requests a month is not subtracted"
                    .into(),
            ],
            missing: None,
        },
        keys,
    )
}

/// A consumer's requests per message it received, and their price per million messages.
pub fn per_million_messages(
    c: &ConsumerFigures,
    s: &SqsSnapshot,
    p: &Prices,
) -> Option<(f64, f64)> {
    let price = p.value(if c.kind.fifo() { FIFO } else { STANDARD })?;
    let received = c.counts.received + c.counts.in_flight;
    if received == 0 {
        return None;
    }
    let queues = s.consumers.iter().filter(|c| !c.stopped).count().max(1) as f64;
    let ops = &s.producer.sdk.counters.operations;
    let sends: f64 = ["SendMessage", "SendMessageBatch"]
        .iter()
        .map(|op| ops.get(*op).map_or(0, |o| o.calls) as f64)
        .sum::<f64>()
        / queues;
    let per_send = if s.producer.calls > 0 {
        s.producer.acknowledged as f64 / s.producer.calls as f64
    } else {
        1.0
    };
    let send_requests = sends * chunks((per_send * s.payload_bytes as f64) as u64) as f64;
    let requests = send_requests + consumer_requests(c, s.payload_bytes, 1.0);
    let per_message = requests / received as f64;
    Some((per_message, per_message * price))
}

/// How the trade-off table's figures are made, said under it.
const HOW: &str = "requests per message: the producer's sends to the consumer's queue and the \
consumer's receives (empty ones too) and deletes, over the messages it received, each request in \
64 KB chunks; $/M messages: those requests at the queue type's price per million requests";

/// A consumer's row: its name, its kind, requests per message and $ per million messages.
type UnitRow<'a> = (
    String,
    String,
    Option<f64>,
    Option<f64>,
    &'a ConsumerFigures,
);

impl crate::labs::Priced for super::SqsLab {
    /// A lab that could not create its queues is not priced.
    fn cost(
        snap: &SqsSnapshot,
        _complete: bool,
        prices: &Prices,
    ) -> Option<(LabCost, Vec<String>)> {
        snap.unavailable.is_none().then(|| cost(snap, prices))
    }

    /// The trade-off table: each consumer's latency beside what a million of its messages cost.
    /// None when the run has no SQS lab: the report then has no such table, as before the lab.
    fn unit_costs(s: Option<&SqsSnapshot>, p: &Prices) -> Option<UnitCosts> {
        s?;
        let rows: Vec<UnitRow> = s
            .map(|s| {
                s.consumers
                    .iter()
                    .filter(|c| !c.stopped)
                    .map(|c| {
                        let priced = per_million_messages(c, s, p);
                        (
                            c.name.clone(),
                            c.kind.name().to_string(),
                            priced.map(|(r, _)| r),
                            priced.map(|(_, usd)| usd),
                            c,
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let per_message = rows
            .iter()
            .map(|(name, _, _, usd_m, c)| crate::lab_kit::cost::PerMessage {
                lab: LabKind::Sqs.name(),
                consumer: name.clone(),
                send_to_receive: c.latency,
                usd_per_million: *usd_m,
            })
            .collect();
        Some(UnitCosts {
            title: "SQS consumers: latency and cost".into(),
            columns: vec!["consumer", "p50", "p99", "requests/message", "$/M messages"],
            labels: 1,
            rows: rows
                .iter()
                .map(|(name, _, per, usd_m, c)| {
                    vec![
                        name.clone(),
                        c.latency.ms(c.latency.p50_us),
                        c.latency.ms(c.latency.p99_us),
                        per.map_or("-".into(), |r| format!("{r:.2}")),
                        usd_or_dash(*usd_m),
                    ]
                })
                .collect(),
            in_run: s.is_some(),
            how: HOW.into(),
            json_key: "sqs_consumers",
            json: rows
                .into_iter()
                .map(|(name, kind, per, usd_m, _)| {
                    vec![
                        ("name", name.into()),
                        ("kind", kind.into()),
                        ("requests_per_message", per.into()),
                        ("usd_per_million_messages", usd_m.into()),
                    ]
                })
                .collect(),
            per_message,
        })
    }
}

#[cfg(test)]
mod tests {
    //! The arithmetic against an example worked by hand from the built-in us-east-1 file (see
    //! `crate::lab_kit::cost::testing`).
    use super::*;
    use crate::lab_kit::cost::testing::{close, us_east_1};
    use crate::tui::fixture;

    #[test]
    fn a_request_is_billed_per_64_kb_chunk() {
        assert_eq!(chunks(0), 1);
        assert_eq!(chunks(65_536), 1);
        assert_eq!(chunks(65_537), 2);
        assert_eq!(chunks(256 * 1024), 4, "the pricing page's 256 KB example");
    }

    #[test]
    fn the_samples_requests_at_the_standard_and_fifo_prices() {
        // The sample: 600 s; 24,000 SendMessage calls of one 256 B message (1 chunk each) over 4
        // queues, one of them FIFO: 40/s, 30/s standard and 10/s FIFO. Receives and deletes per
        // second (each receive under 64 KB):
        //   long-poll  (5,200 + 5,000) / 600 = 17.0       standard
        //   short-poll (3,000 + 5,000) / 600 = 13.3333    standard
        //   fifo       (5,600 + 5,000) / 600 = 17.6667    FIFO
        //   lambda     (6,500 + 5,000) / 600 = 19.1667    standard
        // standard 30 + 17 + 13.3333 + 19.1667 = 79.5/s × 3,600 = 286,200 / 1e6 × 0.40 = 0.11448
        // FIFO     10 + 17.6667 = 27.6667/s × 3,600 = 99,600 / 1e6 × 0.50            = 0.0498
        let view = fixture::lab_moment(LabKind::Sqs);
        let cost = view.snapshot.cost(&us_east_1());
        let s = cost.lab(LabKind::Sqs.name()).unwrap();
        close(s.items[0].hourly, 0.11448);
        close(s.items[1].hourly, 0.0498);
        close(s.hourly(), 0.16428);
        assert!(
            s.items.iter().all(|i| i.unverified),
            "SQS's prices are third parties' figures: marked"
        );
        // Per million messages: the short poller pays for its empty receives.
        let snap = view.snapshot.sqs.as_ref().unwrap();
        let short = &snap.consumers[1];
        let long = &snap.consumers[0];
        let p = us_east_1().prices;
        let (short_per, _) = per_million_messages(short, snap, &p).unwrap();
        let (long_per, _) = per_million_messages(long, snap, &p).unwrap();
        // long: 24,000 / 4 sends + 5,200 receives + 5,000 deletes over 6,000 messages = 2.70
        close(long_per, (6_000.0 + 5_200.0 + 5_000.0) / 6_000.0);
        close(short_per, (6_000.0 + 3_000.0 + 5_000.0) / 6_000.0);
    }
}
