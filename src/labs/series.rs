//! A measured series, named one way wherever it appears: a recording's `hlog/` files and their
//! opening comments, `latlab compare`, the Prometheus export and the recorder's own bookkeeping.
//! The name is `LAB.SUBJECT.QUANTITY`: `kinesis.Lambda EFO.arrival_to_receive`,
//! `s3.STANDARD.PUT.total`, `redis.offset.lag`.

use hdrhistogram::Histogram;

use super::LabKind;

/// One series: its lab, its subject (a consumer; a storage class and operation; a method) and
/// the quantity it measures.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SeriesId {
    pub lab: LabKind,
    /// The subject's parts, as many as the lab's series have ([`LabKind::subject_parts`]).
    pub subject: Vec<String>,
    pub quantity: &'static str,
}

impl SeriesId {
    pub fn new(lab: LabKind, subject: &[&str], quantity: &'static str) -> SeriesId {
        SeriesId {
            lab,
            subject: subject.iter().map(|s| s.to_string()).collect(),
            quantity,
        }
    }

    /// The series' name, as recordings write it.
    pub fn name(&self) -> String {
        format!(
            "{}.{}.{}",
            self.lab.key(),
            self.subject.join("."),
            self.quantity
        )
    }

    /// The subject as screens and comparisons show it: `Lambda EFO`, `STANDARD PUT`.
    pub fn subject_label(&self) -> String {
        self.subject.join(" ")
    }

    /// The series a name names, if a lab of latlab's has it: the lab from the first part, the
    /// quantity from the last, the subject between (a one-part subject keeps its dots: a
    /// consumer's name may have some).
    pub fn parse(name: &str) -> Option<SeriesId> {
        let (lab, rest) = name.split_once('.')?;
        let lab = LabKind::ALL.into_iter().find(|l| l.key() == lab)?;
        let (subject, quantity) = rest.rsplit_once('.')?;
        let quantity = lab.quantities().iter().find(|q| **q == quantity)?;
        let parts: Vec<String> = match lab.subject_parts() {
            1 => vec![subject.to_string()],
            n => {
                let parts: Vec<String> = subject.split('.').map(str::to_string).collect();
                if parts.len() != n {
                    return None;
                }
                parts
            }
        };
        if parts.iter().any(String::is_empty) {
            return None;
        }
        Some(SeriesId {
            lab,
            subject: parts,
            quantity,
        })
    }
}

impl std::fmt::Display for SeriesId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// What a recording's frame keeps of a lab's sparklines at one tick (`record::frames`).
pub struct FrameSeries<'a> {
    /// Each latency series: its id, the key the frame writes it under (a consumer's name,
    /// `EXPRESS_ONEZONE PUT`, a Redis method), and its last seconds (the newest under way).
    pub series: Vec<(SeriesId, String, &'a [crate::metrics::Point])>,
    /// Its gauge's last seconds, ending at `upto`, written under the lab's `Facts::gauge` key.
    pub gauge: &'a [f64],
    /// Its last whole second, when it has one.
    pub upto: Option<u64>,
}

impl<'a> FrameSeries<'a> {
    /// Latency series without a gauge, their last whole second the one before the newest point
    /// of the last series that has one.
    pub fn of(series: Vec<(SeriesId, String, &'a [crate::metrics::Point])>) -> FrameSeries<'a> {
        let upto = series
            .iter()
            .filter_map(|(_, _, s)| s.last())
            .next_back()
            .map(|p| p.second.saturating_sub(1));
        FrameSeries {
            series,
            gauge: &[],
            upto,
        }
    }
}

/// What a recording watches of one of a lab's parts second by second (`events.jsonl`): its
/// status, its last error and its throttle count, under the name a reader knows it by (a
/// consumer's name, `producer`, `S3 STANDARD PUT`, `Redis offset`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Watched {
    pub name: String,
    pub status: Option<String>,
    pub error: Option<String>,
    pub throttles: u64,
}

/// A series' whole histogram (microseconds) now, with the labels the Prometheus export gives it.
pub struct Histogrammed {
    pub id: SeriesId,
    /// (label, value) beside the subject's: the consumer's kind, for one.
    pub labels: Vec<(&'static str, String)>,
    pub histogram: Histogram<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_parses_back_to_its_series() {
        for id in [
            SeriesId::new(LabKind::Kinesis, &["Lambda EFO"], "arrival_to_receive"),
            SeriesId::new(LabKind::Kinesis, &["poller.v2"], "arrival_to_receive"),
            SeriesId::new(LabKind::S3, &["EXPRESS_ONEZONE", "PUT"], "total"),
            SeriesId::new(LabKind::Redis, &["offset"], "lag"),
        ] {
            assert_eq!(SeriesId::parse(&id.name()), Some(id.clone()), "{id}");
        }
        assert_eq!(
            SeriesId::new(LabKind::S3, &["STANDARD", "GET"], "total").subject_label(),
            "STANDARD GET"
        );
        for bad in [
            "",
            "kinesis",
            "kinesis.x",
            "sqs.q.lag",
            "s3.STANDARD.total",
            "redis.offset.p99",
            "kinesis..arrival_to_receive",
        ] {
            assert_eq!(SeriesId::parse(bad), None, "{bad}");
        }
    }
}
