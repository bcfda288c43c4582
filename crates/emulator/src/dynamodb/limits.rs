//! DynamoDB's limits as the emulator enforces them: each default is the figure AWS's documents
//! state (quoted per field); how a table is cut into partitions and how a partition's share is
//! kept are models with no published rule, and say so (`modelled`). Every key can be set in a
//! limits file's `[dynamodb]` table or with `--limit dynamodb.KEY=VALUE`.

use std::time::Duration;

use anyhow::bail;
use serde::Deserialize;

use crate::service::ServiceLimits;
use latlab_core::provenance::{Param, Provenance, Source};
use latlab_core::units::{Bytes, Dur};

#[derive(Clone, Debug, PartialEq)]
pub struct DynamoLimits {
    /// A partition's reads a second (on-demand-table-throttling, AWS knowledge center: "Each
    /// partition on the table can serve up to 3,000 read request units or 1,000 write request
    /// units, or a linear combination of both").
    pub partition_read_units: u32,
    /// A partition's writes a second (the same sentence).
    pub partition_write_units: u32,
    /// Unused provisioned capacity kept for bursts (burst-capacity: "DynamoDB currently retains
    /// up to five minutes (300 seconds) of unused read and write capacity").
    pub burst: Duration,
    /// A new on-demand table's throughput (on-demand-table-throttling: "For new on-demand tables,
    /// you can immediately drive up to 4,000 write request units or 12,000 read request units, or
    /// a linear combination of both").
    pub on_demand_initial_write_units: u32,
    pub on_demand_initial_read_units: u32,
    /// How long an on-demand table's growth takes (on-demand-table-throttling: "If you exceed
    /// double your previous traffic's peak within 30 minutes, then you might experience
    /// throttling"): the window whose peak the next window may double.
    pub on_demand_growth_window: Duration,
    /// The per-table account quota on an on-demand table (on-demand-capacity-mode-max-throughput:
    /// "your on-demand throughput rate is bounded by 40,000 table-level read and write throughput
    /// AWS service quota").
    pub table_quota_read_units: u32,
    pub table_quota_write_units: u32,
    /// Largest item (ServiceQuotas, item size: "The maximum item size in DynamoDB is 400 KB").
    pub max_item_bytes: u64,
    /// BatchWriteItem's requests (BatchWriteItem API reference: "as many as 25 put or delete
    /// requests").
    pub batch_write_max: u32,
    /// BatchGetItem's keys (BatchGetItem API reference: "as many as 100 items").
    pub batch_get_max: u32,
    /// Readers of one stream shard at once (Streams.html: "No more than two processes at most
    /// should be reading from the same streams shard at the same time. Having more than two
    /// readers per shard can result in throttling."): a reader is an iterator's lineage that read
    /// the shard within the last second.
    pub stream_readers_per_shard: u32,
}

impl Default for DynamoLimits {
    fn default() -> Self {
        DynamoLimits {
            partition_read_units: 3000,
            partition_write_units: 1000,
            burst: Duration::from_secs(300),
            on_demand_initial_write_units: 4000,
            on_demand_initial_read_units: 12_000,
            on_demand_growth_window: Duration::from_secs(30 * 60),
            table_quota_read_units: 40_000,
            table_quota_write_units: 40_000,
            max_item_bytes: 400 * 1024,
            batch_write_max: 25,
            batch_get_max: 100,
            stream_readers_per_shard: 2,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DynamoLimitsSpec {
    partition_read_units: Option<u32>,
    partition_write_units: Option<u32>,
    burst: Option<Dur>,
    on_demand_initial_write_units: Option<u32>,
    on_demand_initial_read_units: Option<u32>,
    on_demand_growth_window: Option<Dur>,
    table_quota_read_units: Option<u32>,
    table_quota_write_units: Option<u32>,
    max_item_bytes: Option<Bytes>,
    batch_write_max: Option<u32>,
    batch_get_max: Option<u32>,
    stream_readers_per_shard: Option<u32>,
}

impl ServiceLimits for DynamoLimits {
    type Spec = DynamoLimitsSpec;

    fn from_spec(spec: DynamoLimitsSpec) -> anyhow::Result<DynamoLimits> {
        let mut l = DynamoLimits::default();
        crate::limits::apply!(l, spec;
            plain: partition_read_units, partition_write_units, on_demand_initial_write_units,
                on_demand_initial_read_units, table_quota_read_units, table_quota_write_units,
                batch_write_max, batch_get_max, stream_readers_per_shard;
            wrapped: burst, max_item_bytes, on_demand_growth_window);
        for (key, v) in [
            ("partition_read_units", l.partition_read_units),
            ("partition_write_units", l.partition_write_units),
            (
                "on_demand_initial_write_units",
                l.on_demand_initial_write_units,
            ),
            (
                "on_demand_initial_read_units",
                l.on_demand_initial_read_units,
            ),
            ("table_quota_read_units", l.table_quota_read_units),
            ("table_quota_write_units", l.table_quota_write_units),
            ("batch_write_max", l.batch_write_max),
            ("batch_get_max", l.batch_get_max),
            ("stream_readers_per_shard", l.stream_readers_per_shard),
        ] {
            if v == 0 {
                bail!("dynamodb.{key} must be greater than 0");
            }
        }
        if l.on_demand_growth_window.is_zero() {
            bail!("dynamodb.on_demand_growth_window must be longer than 0s");
        }
        if l.max_item_bytes == 0 {
            bail!("dynamodb.max_item_bytes must be greater than 0");
        }
        Ok(l)
    }

    fn describe(&self) -> Vec<(&'static str, String)> {
        vec![
            (
                "partition_read_units",
                self.partition_read_units.to_string(),
            ),
            (
                "partition_write_units",
                self.partition_write_units.to_string(),
            ),
            ("burst", format!("\"{}s\"", self.burst.as_secs())),
            (
                "on_demand_initial_write_units",
                self.on_demand_initial_write_units.to_string(),
            ),
            (
                "on_demand_initial_read_units",
                self.on_demand_initial_read_units.to_string(),
            ),
            (
                "on_demand_growth_window",
                format!("\"{}s\"", self.on_demand_growth_window.as_secs()),
            ),
            (
                "table_quota_read_units",
                self.table_quota_read_units.to_string(),
            ),
            (
                "table_quota_write_units",
                self.table_quota_write_units.to_string(),
            ),
            ("max_item_bytes", self.max_item_bytes.to_string()),
            ("batch_write_max", self.batch_write_max.to_string()),
            ("batch_get_max", self.batch_get_max.to_string()),
            (
                "stream_readers_per_shard",
                self.stream_readers_per_shard.to_string(),
            ),
        ]
    }

    fn modelled(&self) -> Vec<Param> {
        let assume = |k: &str, v: &str, note: &str| {
            Param::new(k, v.to_string(), Provenance::new(Source::Assumption, note))
        };
        vec![
            assume(
                "dynamodb.partitions",
                "max(reads/3,000 + writes/1,000 rounded up, 1)",
                "how many partitions a table has: AWS's developer guide gave this rule for \
                 provisioned capacity until 2018 and now says only that DynamoDB adds partitions \
                 as a table's throughput or size grows; an on-demand table starts with the \
                 partitions of its initial throughput (4,000 writes: 4)",
            ),
            assume(
                "dynamodb.partition_key_hash",
                "MD5 of the partition key's bytes, equal ranges",
                "DynamoDB hashes the partition key with an internal function it does not publish; \
                 any uniform hash spreads distinct keys as it does",
            ),
            assume(
                "dynamodb.partition_budget",
                "reads/3,000 + writes/1,000 per second per partition, kept for 1 s",
                "the documented per-partition rate as one budget shared by reads and writes (\"a \
                 linear combination of both\"); how much a partition may burst past it is not \
                 published: none is modelled",
            ),
            assume(
                "dynamodb.adaptive_capacity",
                "instant, up to the partition's own limit",
                "adaptive capacity lets a hot partition use the table's unused provisioned \
                 capacity \"instantly\" (bp-partition-key-design), never past the per-partition \
                 limit; splitting a partition for heat, and how fast, is not published and is \
                 not modelled",
            ),
            assume(
                "dynamodb.on_demand_growth",
                "up to double the busiest second of the previous growth window, at once",
                "an on-demand table \"instantly accommodates\" up to double its previous peak and \
                 may throttle past that within 30 minutes (on-demand-capacity-mode); modelled as \
                 partitions for twice the busiest second of the previous window, added as soon as \
                 a window ends; a table switched from provisioned starts from half its \
                 provisioned throughput as its previous peak, as the guide says",
            ),
            assume(
                "dynamodb.stream_shards",
                "one shard per partition; a third reader's GetRecords gets LimitExceededException",
                "DynamoDB Streams does not publish how shards map to partitions nor the error a \
                 third reader of a shard gets; one shard per partition is what its shards' count \
                 follows in practice, and LimitExceededException is the API's error for a rate",
            ),
            assume(
                "dynamodb.throttle_exception",
                "ProvisionedThroughputExceededException; RequestLimitExceeded for account limits; ThrottlingException for on-demand maxima",
                "the API reference lists the three exceptions that carry ThrottlingReasons without \
                 saying which reason each carries; this mapping follows their descriptions",
            ),
        ]
    }
}
