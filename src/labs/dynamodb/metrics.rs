//! The DynamoDB lab's series as recordings, comparisons and the Prometheus export name them: the
//! writer's PutItem latency (`write`), the reads' by consistency (`read`), and each change
//! consumer's write -> receive (`write_to_receive`); and its counts as metric families.

use super::snapshot::DynamoSnapshot;
use crate::labs::series::{FrameSeries, Histogrammed, SeriesId, Watched};
use crate::metrics::exposition::{Family, Type, Value};

/// A series by its subject: `writer`, `strong`, `eventual` or a change consumer's name.
pub(super) fn series_id(subject: &str) -> SeriesId {
    let quantity = match subject {
        "writer" => "write",
        "strong" | "eventual" => "read",
        _ => "write_to_receive",
    };
    SeriesId::new(crate::labs::LabKind::Dynamodb, &[subject], quantity)
}

impl crate::labs::Measured for super::DynamoLab {
    fn frame_series<'a>(
        snap: &'a DynamoSnapshot,
        history: &'a super::History,
    ) -> Option<FrameSeries<'a>> {
        if history.len() != 3 + snap.cdc.len() {
            return None;
        }
        Some(FrameSeries::of(
            history
                .iter()
                .map(|(name, points)| (series_id(name), name.clone(), points.as_slice()))
                .collect(),
        ))
    }

    fn history_of_frames(
        snap: &DynamoSnapshot,
        points: &dyn Fn(&str) -> Vec<crate::metrics::Point>,
        _gauge: &dyn Fn() -> Vec<f64>,
    ) -> super::History {
        ["writer", "strong", "eventual"]
            .iter()
            .map(|n| n.to_string())
            .chain(snap.cdc.iter().map(|c| c.name.clone()))
            .map(|n| {
                let p = points(&n);
                (n, p)
            })
            .collect()
    }

    fn summaries(snap: &DynamoSnapshot) -> Vec<(SeriesId, &crate::metrics::Summary)> {
        let mut out = vec![(series_id("writer"), &snap.writer.latency)];
        for r in &snap.readers {
            out.push((series_id(&r.consistency), &r.latency));
        }
        for c in &snap.cdc {
            out.push((series_id(&c.name), &c.latency));
        }
        out
    }

    fn watched(s: &DynamoSnapshot) -> Vec<Watched> {
        let mut w = vec![Watched {
            name: "DynamoDB writer".into(),
            status: Some(s.writer.status.clone()),
            error: s.writer.last_error.clone(),
            throttles: s.writer.throttled_attempts(),
        }];
        for c in &s.cdc {
            w.push(Watched {
                name: format!("DynamoDB {}", c.name),
                status: Some(c.status.clone()),
                error: c.last_error.clone(),
                throttles: c.sdk.counters.throttles,
            });
        }
        w
    }

    fn sdk_clients(
        s: &DynamoSnapshot,
    ) -> Vec<(
        Vec<(&'static str, String)>,
        &crate::metrics::sdk::SdkSnapshot,
    )> {
        let mut out = vec![(
            vec![("client", "dynamodb-writer".to_string())],
            &s.writer.sdk,
        )];
        for c in &s.cdc {
            out.push((vec![("client", format!("dynamodb-{}", c.name))], &c.sdk));
        }
        out
    }

    fn runs(s: &DynamoSnapshot) -> bool {
        s.unavailable.is_none()
    }

    fn metric_families(s: &DynamoSnapshot, series: &[Histogrammed]) -> Vec<Family> {
        let mut hists = Vec::new();
        for (q, help) in [
            (
                "write",
                "DynamoDB: PutItem call -> answer, the SDK's retries included",
            ),
            ("read", "DynamoDB: GetItem call -> answer, by consistency"),
            (
                "write_to_receive",
                "DynamoDB: a write's start -> a change consumer has the change",
            ),
        ] {
            let mut f = Family::new(
                format!("latlab_dynamodb_{q}_seconds"),
                Type::Histogram,
                format!("{help}, in seconds, since the start or the last reset."),
            );
            for h in series.iter().filter(|h| h.id.quantity == q) {
                if let [subject] = h.id.subject.as_slice() {
                    f.push(
                        vec![("series", subject.clone())],
                        Value::histogram(&h.histogram),
                    );
                }
            }
            hists.push(f);
        }
        let mut throttled = Family::new(
            "latlab_dynamodb_throttled_attempts",
            Type::Counter,
            "DynamoDB: the writer's throttled attempts by the reason DynamoDB gave.",
        );
        for (reason, n) in &s.writer.throttled {
            throttled.push(vec![("reason", reason.clone())], Value::Count(*n));
        }
        let mut partition = Family::new(
            "latlab_dynamodb_partition_write_units",
            Type::Gauge,
            "DynamoDB: write units a partition (latlab's model) took in the last whole second.",
        );
        for p in &s.partitions {
            partition.push(
                vec![("partition", p.index.to_string())],
                Value::Number(p.write_units),
            );
        }
        let mut changes = Family::new(
            "latlab_dynamodb_changes",
            Type::Gauge,
            "DynamoDB: acknowledged writes by a change consumer's state (received, unread, lost); the states add up to written.",
        );
        for c in &s.cdc {
            let k = c.counts;
            for (state, n) in [
                ("written", k.written),
                ("received", k.received),
                ("unread", k.unread),
                ("lost", k.lost),
            ] {
                changes.push(
                    vec![("consumer", c.name.clone()), ("state", state.to_string())],
                    Value::Count(n),
                );
            }
        }
        hists.extend([throttled, partition, changes]);
        hists
    }
}
