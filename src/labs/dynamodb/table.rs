//! What a run creates: its table (`PREFIX-RUNID`, tagged with latlab's run tags at creation, its
//! stream on when a consumer reads it), and for a fan-out consumer a Kinesis data stream
//! (`PREFIX-RUNID-cdc`, tagged) the table's changes are streamed to; its billing changed while it
//! runs; all deleted at the end.

use std::time::Duration;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ProvisionedThroughput,
    ScalarAttributeType, StreamSpecification, StreamViewType, TableStatus, Tag,
};
use parking_lot::Mutex;

use super::config::Billing;
use crate::aws::error_line;

/// The table's partition key attribute: a string, `hot` or `k0`, `k1`, ...
pub const KEY: &str = "pk";

/// How long a table, a stream or a destination may take to become ACTIVE.
const ACTIVE_WITHIN: Duration = Duration::from_secs(120);

/// A run's table name.
pub fn table_name(prefix: &str, run: &str) -> String {
    format!("{prefix}-{run}")
}

/// The Kinesis data stream a run's table streams its changes to.
pub fn stream_name(prefix: &str, run: &str) -> String {
    format!("{prefix}-{run}-cdc")
}

/// What the run made, to delete at its end.
#[derive(Default)]
pub struct Made {
    pub table: Option<String>,
    pub kinesis: Option<String>,
    pub consumers: Vec<String>,
}

pub struct Tables {
    pub ddb: aws_sdk_dynamodb::Client,
    pub kinesis: aws_sdk_kinesis::Client,
    pub run: String,
    pub made: Mutex<Made>,
}

fn throughput(read: u64, write: u64) -> anyhow::Result<ProvisionedThroughput> {
    Ok(ProvisionedThroughput::builder()
        .read_capacity_units(read as i64)
        .write_capacity_units(write as i64)
        .build()?)
}

impl Tables {
    /// Creates the table (its stream on with new images when `stream` is true), tagged, and waits
    /// until it is ACTIVE; returns its ARN and its stream's ARN.
    pub async fn create(
        &self,
        name: &str,
        billing: Billing,
        stream: bool,
    ) -> anyhow::Result<(String, Option<String>)> {
        let mut req = self
            .ddb
            .create_table()
            .table_name(name)
            .attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name(KEY)
                    .attribute_type(ScalarAttributeType::S)
                    .build()?,
            )
            .key_schema(
                KeySchemaElement::builder()
                    .attribute_name(KEY)
                    .key_type(KeyType::Hash)
                    .build()?,
            );
        req = match billing {
            Billing::Provisioned { read, write } => req
                .billing_mode(BillingMode::Provisioned)
                .provisioned_throughput(throughput(read, write)?),
            Billing::OnDemand => req.billing_mode(BillingMode::PayPerRequest),
        };
        if stream {
            req = req.stream_specification(
                StreamSpecification::builder()
                    .stream_enabled(true)
                    .stream_view_type(StreamViewType::NewImage)
                    .build()?,
            );
        }
        for (k, v) in crate::lab_kit::plan::tags(&self.run, &crate::lab_kit::plan::now_rfc3339()) {
            req = req.tags(Tag::builder().key(k).value(v).build()?);
        }
        req.send()
            .await
            .map_err(|e| anyhow::anyhow!("creating DynamoDB table {name}: {}", error_line(&e)))?;
        self.made.lock().table = Some(name.to_string());
        let started = std::time::Instant::now();
        loop {
            let d = self
                .ddb
                .describe_table()
                .table_name(name)
                .send()
                .await
                .map_err(|e| {
                    anyhow::anyhow!("describing DynamoDB table {name}: {}", error_line(&e))
                })?;
            let t = d
                .table
                .ok_or_else(|| anyhow::anyhow!("DescribeTable of {name} answered no table"))?;
            if t.table_status == Some(TableStatus::Active) {
                let arn = t.table_arn.unwrap_or_default();
                return Ok((arn, t.latest_stream_arn));
            }
            if started.elapsed() > ACTIVE_WITHIN {
                anyhow::bail!(
                    "DynamoDB table {name} was not ACTIVE within {} s",
                    ACTIVE_WITHIN.as_secs()
                );
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Creates the Kinesis data stream (one shard, tagged), waits until it is ACTIVE, and streams
    /// the table's changes to it; returns the stream's ARN.
    pub async fn destination(&self, table: &str, stream: &str) -> anyhow::Result<String> {
        let k = &self.kinesis;
        let mut tags = std::collections::HashMap::new();
        for (key, v) in crate::lab_kit::plan::tags(&self.run, &crate::lab_kit::plan::now_rfc3339())
        {
            tags.insert(key.to_string(), v);
        }
        k.create_stream()
            .stream_name(stream)
            .shard_count(1)
            .set_tags(Some(tags))
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("creating Kinesis stream {stream}: {}", error_line(&e)))?;
        self.made.lock().kinesis = Some(stream.to_string());
        let started = std::time::Instant::now();
        let arn = loop {
            let d = k
                .describe_stream_summary()
                .stream_name(stream)
                .send()
                .await
                .map_err(|e| {
                    anyhow::anyhow!("describing Kinesis stream {stream}: {}", error_line(&e))
                })?;
            if let Some(s) = d.stream_description_summary
                && s.stream_status == aws_sdk_kinesis::types::StreamStatus::Active
            {
                break s.stream_arn;
            }
            if started.elapsed() > ACTIVE_WITHIN {
                anyhow::bail!("Kinesis stream {stream} was not ACTIVE within 120 s");
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        };
        self.ddb
            .enable_kinesis_streaming_destination()
            .table_name(table)
            .stream_arn(&arn)
            .send()
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "streaming {table}'s changes to Kinesis stream {stream}: {}",
                    error_line(&e)
                )
            })?;
        // The destination is ACTIVE before changes reach the stream.
        loop {
            let d = self
                .ddb
                .describe_kinesis_streaming_destination()
                .table_name(table)
                .send()
                .await
                .map_err(|e| {
                    anyhow::anyhow!(
                        "describing {table}'s Kinesis destination: {}",
                        error_line(&e)
                    )
                })?;
            let active = d.kinesis_data_stream_destinations().iter().any(|x| {
                x.stream_arn() == Some(arn.as_str())
                    && x.destination_status()
                        == Some(&aws_sdk_dynamodb::types::DestinationStatus::Active)
            });
            if active {
                return Ok(arn);
            }
            if started.elapsed() > ACTIVE_WITHIN {
                anyhow::bail!("{table}'s Kinesis destination was not ACTIVE within 120 s");
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }

    /// Changes the table's billing (UpdateTable); the service's refusal as one line.
    pub async fn set_billing(&self, table: &str, billing: Billing) -> anyhow::Result<()> {
        let req = self.ddb.update_table().table_name(table);
        let req = match billing {
            Billing::Provisioned { read, write } => req
                .billing_mode(BillingMode::Provisioned)
                .provisioned_throughput(throughput(read, write)?),
            Billing::OnDemand => req.billing_mode(BillingMode::PayPerRequest),
        };
        req.send()
            .await
            .map_err(|e| anyhow::anyhow!("UpdateTable: {}", error_line(&e)))?;
        Ok(())
    }

    /// Deletes what the run made; what could not be deleted, with the service's reason.
    pub async fn delete_all(&self, stream_arn: Option<&str>) -> Vec<String> {
        let made = std::mem::take(&mut *self.made.lock());
        let mut left = Vec::new();
        if let (Some(arn), Some(table)) = (stream_arn, &made.table) {
            // Best effort: deleting the table ends its destination too.
            let _ = self
                .ddb
                .disable_kinesis_streaming_destination()
                .table_name(table)
                .stream_arn(arn)
                .send()
                .await;
        }
        for c in &made.consumers {
            let _ = self
                .kinesis
                .deregister_stream_consumer()
                .consumer_arn(c)
                .send()
                .await;
        }
        if let Some(table) = &made.table
            && let Err(e) = self.ddb.delete_table().table_name(table).send().await
        {
            left.push(format!("DynamoDB table {table}: {}", error_line(&e)));
        }
        if let Some(stream) = &made.kinesis
            && let Err(e) = self
                .kinesis
                .delete_stream()
                .stream_name(stream)
                .enforce_consumer_deletion(true)
                .send()
                .await
        {
            left.push(format!("Kinesis stream {stream}: {}", error_line(&e)));
        }
        left
    }
}
