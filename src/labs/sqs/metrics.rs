//! The SQS lab's figures as metric families for the Prometheus export: each consumer's send ->
//! receive histogram, its counts (by state, so that they add up to what was sent), receives,
//! empty receives and redeliveries.

use super::snapshot::SqsSnapshot;
use crate::labs::series::{Histogrammed, SeriesId};
use crate::metrics::exposition::{Family, Type, Value};

/// A consumer's series: its send -> receive.
pub(super) fn series_id(consumer: &str) -> SeriesId {
    SeriesId::new(crate::labs::LabKind::Sqs, &[consumer], "send_to_receive")
}

impl crate::labs::Measured for super::SqsLab {
    /// Each consumer's send -> receive, by its name.
    fn frame_series<'a>(
        snap: &'a SqsSnapshot,
        history: &'a super::History,
    ) -> Option<crate::labs::series::FrameSeries<'a>> {
        if history.len() != snap.consumers.len() {
            return None;
        }
        Some(crate::labs::series::FrameSeries::of(
            history
                .iter()
                .map(|(name, points)| (series_id(name), name.clone(), points.as_slice()))
                .collect(),
        ))
    }

    fn history_of_frames(
        snap: &SqsSnapshot,
        points: &dyn Fn(&str) -> Vec<crate::metrics::Point>,
        _gauge: &dyn Fn() -> Vec<f64>,
    ) -> super::History {
        snap.consumers
            .iter()
            .map(|c| (c.name.clone(), points(&c.name)))
            .collect()
    }

    fn summaries(snap: &SqsSnapshot) -> Vec<(SeriesId, &crate::metrics::Summary)> {
        snap.consumers
            .iter()
            .map(|c| (series_id(&c.name), &c.latency))
            .collect()
    }

    /// Each consumer (its status, last error and throttles) and the producer.
    fn watched(s: &SqsSnapshot) -> Vec<crate::labs::series::Watched> {
        let mut w: Vec<crate::labs::series::Watched> = s
            .consumers
            .iter()
            .map(|c| crate::labs::series::Watched {
                name: format!("SQS {}", c.name),
                status: Some(c.status.clone()),
                error: c.last_error.clone(),
                throttles: c.sdk.counters.throttles,
            })
            .collect();
        w.push(crate::labs::series::Watched {
            name: "SQS producer".into(),
            status: Some(s.producer.status.clone()),
            error: s.producer.last_error.clone(),
            throttles: s.producer.sdk.counters.throttles,
        });
        w
    }

    fn sdk_clients(
        snap: &SqsSnapshot,
    ) -> Vec<(
        Vec<(&'static str, String)>,
        &crate::metrics::sdk::SdkSnapshot,
    )> {
        let mut out = vec![(
            vec![("client", "sqs-producer".to_string())],
            &snap.producer.sdk,
        )];
        for c in &snap.consumers {
            out.push((vec![("client", format!("sqs-{}", c.name))], &c.sdk));
        }
        out
    }

    fn runs(snap: &SqsSnapshot) -> bool {
        snap.unavailable.is_none()
    }

    /// The lab's families now.
    fn metric_families(s: &SqsSnapshot, series: &[Histogrammed]) -> Vec<Family> {
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
}
