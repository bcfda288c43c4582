//! The SQS lab's figures as metric families for the Prometheus export: each consumer's send ->
//! receive histogram, its counts (by state, so that they add up to what was sent), receives,
//! empty receives and redeliveries.

use super::snapshot::SqsSnapshot;
use crate::labs::series::Histogrammed;
use crate::metrics::exposition::{Family, Type, Value};

/// The lab's families now.
pub fn families(s: &SqsSnapshot, series: &[Histogrammed]) -> Vec<Family> {
    let mut hist = Family::new(
        "latlab_sqs_send_to_receive_seconds",
        Type::Histogram,
        "SQS: a message's first receive after its send (Lambda: the invocation that carried it), since the start or the last reset.",
    );
    for h in series {
        if let [consumer] = h.id.subject.as_slice() {
            hist.push(
                vec![("consumer", consumer.clone())],
                Value::histogram(&h.histogram),
            );
        }
    }
    let mut messages = Family::new(
        "latlab_sqs_messages",
        Type::Gauge,
        "SQS: messages sent to a consumer's queue by state (received, in_flight, unread, lost); the states add up to sent.",
    );
    let mut receives = Family::new(
        "latlab_sqs_receives",
        Type::Counter,
        "SQS: ReceiveMessage calls that answered.",
    );
    let mut empty = Family::new(
        "latlab_sqs_empty_receives",
        Type::Counter,
        "SQS: ReceiveMessage answers with no message.",
    );
    let mut redelivered = Family::new(
        "latlab_sqs_redeliveries",
        Type::Counter,
        "SQS: messages received again after their first receive.",
    );
    for c in &s.consumers {
        let labels = |extra: Option<(&'static str, &str)>| {
            let mut l = vec![("consumer", c.name.clone()), ("kind", c.kind.name().into())];
            if let Some((k, v)) = extra {
                l.push((k, v.to_string()));
            }
            l
        };
        let k = c.counts;
        for (state, n) in [
            ("sent", k.sent),
            ("received", k.received),
            ("in_flight", k.in_flight),
            ("unread", k.unread),
            ("lost", k.lost),
        ] {
            messages.push(labels(Some(("state", state))), Value::Count(n));
        }
        receives.push(labels(None), Value::Count(c.receive_calls));
        empty.push(labels(None), Value::Count(c.empty_receives));
        redelivered.push(labels(None), Value::Count(k.redelivered));
    }
    vec![hist, messages, receives, empty, redelivered]
}
