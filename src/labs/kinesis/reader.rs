//! Iterator-following GetRecords for one shard: what a poller and Lambda's standard iterator share.
//! It starts at the scenario's position, follows NextShardIterator, and after an expired iterator
//! (or any lost one) resumes after the last record it returned, so nothing is skipped or repeated.
//! A closed shard read to its end answers no NextShardIterator: the reader then says which
//! children the shard has (its ChildShards, or ListShards for an endpoint that does not send them).

use aws_sdk_kinesis::Client;
use aws_sdk_kinesis::operation::get_records::GetRecordsOutput;
use aws_sdk_kinesis::types::ShardIteratorType;

use super::lineage::Child;
use super::state::ConsumerState;
use crate::aws::error_code;
use crate::labs::kinesis::config::StartPosition;

pub struct ShardReader {
    client: Client,
    stream: String,
    pub shard: String,
    start: StartPosition,
    iterator: Option<String>,
    last_sequence: Option<String>,
    /// When a LATEST reader first asked for its position: until it has read a record, it comes
    /// back there (AT_TIMESTAMP), never to a later LATEST that would skip what arrived between.
    first_positioned: Option<std::time::SystemTime>,
    /// Answers in a row that say the endpoint lacks an operation: (operation, what it answered).
    lacking: Option<(&'static str, String, u32)>,
    /// The shard is closed and read to its end: the children its last answer named.
    ended: Option<Vec<Child>>,
}

/// Answers in a row, saying the endpoint lacks an operation, before the reader believes them.
const LACKING_STRIKES: u32 = 2;

/// A failed call: its error code and the message shown on screen.
pub struct Failure {
    pub code: String,
    pub line: String,
}

impl ShardReader {
    /// Calls from now on go through `client` (the position is kept).
    pub fn set_client(&mut self, client: Client) {
        self.client = client;
    }

    pub fn new(client: Client, stream: &str, shard: &str, start: StartPosition) -> ShardReader {
        ShardReader {
            client,
            stream: stream.to_string(),
            shard: shard.to_string(),
            start,
            iterator: None,
            last_sequence: None,
            first_positioned: None,
            lacking: None,
            ended: None,
        }
    }

    /// Counts an answer that says the endpoint lacks `op` (or, with None, one that does not).
    fn strike(&mut self, op: &'static str, unsupported: Option<String>) {
        self.lacking = match (unsupported, self.lacking.take()) {
            (Some(what), Some((o, _, n))) if o == op => Some((op, what, n + 1)),
            (Some(what), _) => Some((op, what, 1)),
            (None, _) => None,
        };
    }

    /// The operation the endpoint lacks, and what it answered, once it has said so
    /// [`LACKING_STRIKES`] times in a row.
    pub fn lacking(&self) -> Option<(&'static str, &str)> {
        self.lacking
            .as_ref()
            .filter(|(_, _, n)| *n >= LACKING_STRIKES)
            .map(|(op, what, _)| (*op, what.as_str()))
    }

    /// Once the shard was read to its end: its children (from the last answer, or else from
    /// ListShards). None while it is not, or while ListShards cannot say (the next read asks
    /// again).
    pub async fn children(&mut self) -> Option<Vec<Child>> {
        let named = self.ended.take()?;
        if !named.is_empty() {
            return Some(named);
        }
        match super::setup::children_of(&self.client, &self.stream, &self.shard).await {
            Ok(found) if !found.is_empty() => Some(found),
            _ => None,
        }
    }

    pub fn has_iterator(&self) -> bool {
        self.iterator.is_some()
    }

    /// Gets an iterator when the reader has none. The first time it has one, the shard counts
    /// as ready (`ready` is used then); a failure is counted as escaped and shown in the
    /// consumer's status, and the next call tries again.
    pub async fn ensure_iterator(
        &mut self,
        c: &ConsumerState,
        ready: &mut Option<super::Readiness>,
    ) {
        if self.has_iterator() {
            return;
        }
        match self.position().await {
            Ok(()) => {
                if let Some(r) = ready.take() {
                    r.shard_ready();
                }
            }
            Err(f) => {
                c.escaped(&f.code, format!("GetShardIterator: {}", f.line));
            }
        }
    }

    /// Gets an iterator: at the start position the first time, after the last record since.
    pub async fn position(&mut self) -> Result<(), Failure> {
        let req = self
            .client
            .get_shard_iterator()
            .stream_name(&self.stream)
            .shard_id(&self.shard);
        let asked = std::time::SystemTime::now();
        let req = match (&self.last_sequence, self.start, self.first_positioned) {
            (Some(seq), _, _) => req
                .shard_iterator_type(ShardIteratorType::AfterSequenceNumber)
                .starting_sequence_number(seq),
            (None, StartPosition::Latest, Some(at)) => req
                .shard_iterator_type(ShardIteratorType::AtTimestamp)
                .timestamp(aws_smithy_types::DateTime::from(at)),
            (None, StartPosition::Latest, None) => {
                req.shard_iterator_type(ShardIteratorType::Latest)
            }
            (None, StartPosition::TrimHorizon, _) => {
                req.shard_iterator_type(ShardIteratorType::TrimHorizon)
            }
        };
        match req.send().await {
            Ok(out) => {
                self.lacking = None;
                self.first_positioned.get_or_insert(asked);
                self.iterator = out.shard_iterator;
                Ok(())
            }
            Err(e) => {
                self.strike("GetShardIterator", crate::aws::unsupported(&e));
                Err(Failure {
                    code: error_code(&e),
                    line: crate::aws::error_line(&e),
                })
            }
        }
    }

    /// One GetRecords call with the current iterator (which must exist).
    pub async fn read(&mut self, limit: u32) -> Result<GetRecordsOutput, Failure> {
        let Some(it) = self.iterator.clone() else {
            return Err(Failure {
                code: "NoIterator".into(),
                line: "no shard iterator".into(),
            });
        };
        match self
            .client
            .get_records()
            .shard_iterator(it)
            .limit(limit as i32)
            .send()
            .await
        {
            Ok(out) => {
                self.lacking = None;
                if let Some(last) = out.records().last() {
                    self.last_sequence = Some(last.sequence_number().to_string());
                }
                // A closed shard read to its end answers no next iterator, and its children.
                self.iterator = out.next_shard_iterator().map(str::to_string);
                if self.iterator.is_none() {
                    self.ended = Some(
                        out.child_shards()
                            .iter()
                            .map(|c| Child {
                                id: c.shard_id().to_string(),
                                parents: c.parent_shards().to_vec(),
                            })
                            .collect(),
                    );
                }
                Ok(out)
            }
            Err(e) => {
                self.strike("GetRecords", crate::aws::unsupported(&e));
                let code = error_code(&e);
                if code == "ExpiredIteratorException" || code == "InvalidArgumentException" {
                    self.iterator = None;
                }
                Err(Failure {
                    code,
                    line: crate::aws::error_line(&e),
                })
            }
        }
    }
}
