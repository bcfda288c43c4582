//! DynamoDB Streams' operations on the tables' streams (`super::super::streams`).

use serde_json::{Value, json};

use super::super::streams;
use super::{Args, required, s};
use crate::dynamodb::{DynamoError, DynamoResult, Dynamodb};

impl Dynamodb {
    pub(super) fn list_streams(&self, a: &Args) -> Value {
        let only = s(a, "TableName");
        let tables = self.tables.lock();
        let streams: Vec<Value> = tables
            .values()
            .filter(|t| only.is_none_or(|n| n == t.name))
            .filter_map(|t| {
                let st = t.stream.as_ref()?;
                Some(json!({"StreamArn": st.arn, "TableName": t.name, "StreamLabel": st.label}))
            })
            .collect();
        json!({ "Streams": streams })
    }

    pub(super) fn describe_stream(&self, a: &Args) -> DynamoResult<Value> {
        let arn = required(a, "StreamArn")?;
        let tables = self.tables.lock();
        let (t, st) = tables
            .values()
            .find_map(|t| t.stream.as_ref().filter(|s| s.arn == arn).map(|s| (t, s)))
            .ok_or_else(|| stream_not_found(arn))?;
        let schema = t.describe("ACTIVE")["KeySchema"].clone();
        Ok(json!({ "StreamDescription": st.describe(&t.name, schema) }))
    }

    pub(super) fn get_shard_iterator(&self, a: &Args) -> DynamoResult<Value> {
        let arn = required(a, "StreamArn")?;
        let tables = self.tables.lock();
        let st = tables
            .values()
            .find_map(|t| t.stream.as_ref().filter(|s| s.arn == arn))
            .ok_or_else(|| stream_not_found(arn))?;
        streams::shard_iterator(st, a, self.clock.now_micros())
    }

    pub(super) fn get_records(&self, a: &Args) -> DynamoResult<Value> {
        let token = required(a, "ShardIterator")?;
        let limit = a
            .get("Limit")
            .and_then(Value::as_u64)
            .unwrap_or(1000)
            .clamp(1, 1000) as usize;
        let arn = streams::iterator_stream(token)?;
        let mut tables = self.tables.lock();
        let st = tables
            .values_mut()
            .find_map(|t| t.stream.as_mut().filter(|s| s.arn == arn))
            .ok_or_else(|| stream_not_found(&arn))?;
        let readers = self.limits.stream_readers_per_shard as usize;
        let got = streams::get_records(
            st,
            token,
            limit,
            readers,
            self.clock.now(),
            self.clock.now_micros(),
        );
        if let Err(e) = &got
            && e.kind == "LimitExceededException"
        {
            self.throttled
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        got
    }
}

impl Dynamodb {
    /// Kinesis Data Streams for DynamoDB: enable, disable or describe a table's destinations.
    pub(super) fn destination(
        &self,
        op: latlab_core::services::dynamodb::Op,
        a: &Args,
    ) -> DynamoResult<Value> {
        use latlab_core::services::dynamodb::Op;
        let name = required(a, "TableName")?;
        let describe = |t: &crate::dynamodb::table::Table| {
            let list: Vec<Value> = t
                .destinations
                .iter()
                .map(|(arn, on)| {
                    json!({
                        "StreamArn": arn,
                        "DestinationStatus": if *on { "ACTIVE" } else { "DISABLED" },
                        "ApproximateCreationDateTimePrecision": "MILLISECOND",
                    })
                })
                .collect();
            json!({ "TableName": t.name, "KinesisDataStreamDestinations": list })
        };
        if op == Op::DescribeKinesisStreamingDestination {
            return self.with_table(name, |t| Ok(describe(t)));
        }
        let arn = required(a, "StreamArn")?.to_string();
        let enable = op == Op::EnableKinesisStreamingDestination;
        if enable && !self.stream_exists(&arn) {
            return Err(DynamoError::validation(format!(
                "Kinesis stream {arn} does not exist or is not ACTIVE"
            )));
        }
        self.with_table(name, |t| {
            match t.destinations.iter_mut().find(|(a, _)| *a == arn) {
                Some((_, on)) => *on = enable,
                None if enable => t.destinations.push((arn.clone(), true)),
                None => {
                    return Err(DynamoError::validation(format!(
                        "Table {name} has no Kinesis streaming destination {arn}"
                    )));
                }
            }
            Ok(json!({
                "TableName": t.name,
                "StreamArn": arn,
                "DestinationStatus": if enable { "ENABLING" } else { "DISABLING" },
            }))
        })
    }
}

fn stream_not_found(arn: &str) -> DynamoError {
    DynamoError::not_found(format!(
        "Requested resource not found: Stream: {arn} not found"
    ))
}
