//! A table as the emulator keeps it: its key schema, its items in key order, and its capacity:
//! the table's own (provisioned units with up to `burst` of unused capacity kept, or an on-demand
//! table's account quota) and each partition's, which a hot partition key exhausts while the
//! table has capacity to spare. Which limit refused a call is its throttling reason, as DynamoDB
//! names it (`TableWriteKeyRangeThroughputExceeded`, ...).

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::Value;

use super::item::{Item, KeyType, KeyValue};
use super::limits::DynamoLimits;

/// How a table pays for its throughput.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Billing {
    Provisioned { read: u64, write: u64 },
    OnDemand,
}

/// Reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    Read,
    Write,
}

impl Use {
    fn word(self) -> &'static str {
        match self {
            Use::Read => "Read",
            Use::Write => "Write",
        }
    }
}

/// A call refused for throughput: its reason (`TableWriteKeyRangeThroughputExceeded`) and the
/// exception that carries it.
#[derive(Clone, Debug, PartialEq)]
pub struct Throttle {
    pub reason: String,
    /// The index refused, when it was an index (else the table).
    pub index_arn: Option<String>,
    pub exception: &'static str,
    pub message: &'static str,
}

/// Capacity that refills at `rate` a second up to `cap`.
#[derive(Clone, Debug)]
pub struct Bucket {
    tokens: f64,
    rate: f64,
    cap: f64,
    at: Instant,
}

impl Bucket {
    fn new(rate: f64, cap: f64, now: Instant) -> Bucket {
        Bucket {
            tokens: rate.min(cap),
            rate,
            cap,
            at: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let secs = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + secs * self.rate).min(self.cap);
        self.at = now;
    }

    fn has(&mut self, units: f64, now: Instant) -> bool {
        self.refill(now);
        self.tokens + 1e-9 >= units
    }

    fn take(&mut self, units: f64) {
        self.tokens -= units;
    }
}

/// Units used in the current and the last whole second.
#[derive(Clone, Debug, Default)]
pub struct Meter {
    second: u64,
    now: f64,
    last: f64,
}

impl Meter {
    fn add(&mut self, second: u64, units: f64) {
        self.roll(second);
        self.now += units;
    }

    fn roll(&mut self, second: u64) {
        if second != self.second {
            self.last = if second == self.second + 1 {
                self.now
            } else {
                0.0
            };
            self.now = 0.0;
            self.second = second;
        }
    }

    /// The units of the last whole second before `second`.
    pub fn last(&mut self, second: u64) -> f64 {
        self.roll(second);
        self.last
    }
}

/// One partition: its budget (in write units: a read unit costs a third of one) and what it used.
#[derive(Clone, Debug)]
pub struct Partition {
    budget: Bucket,
    pub read: Meter,
    pub write: Meter,
    pub throttled: u64,
}

/// A global secondary index: a write to the table that carries its partition key attribute
/// writes to it too, and takes its write capacity.
#[derive(Clone, Debug)]
pub struct Index {
    pub arn: String,
    pub hash: String,
    write: Option<Bucket>,
}

impl Index {
    pub fn new(
        arn: String,
        hash: String,
        write_units: Option<u64>,
        l: &DynamoLimits,
        now: Instant,
    ) -> Index {
        let burst = l.burst.as_secs_f64().max(1.0);
        Index {
            arn,
            hash,
            write: write_units.map(|w| Bucket::new(w as f64, w as f64 * burst, now)),
        }
    }
}

/// The key schema: the partition key and the optional sort key, each with its type.
#[derive(Clone, Debug)]
pub struct KeySchema {
    pub hash: (String, KeyType),
    pub range: Option<(String, KeyType)>,
}

/// An item's key within its table.
pub type Key = (KeyValue, Option<KeyValue>);

pub struct Table {
    pub name: String,
    pub arn: String,
    pub created: f64,
    pub key: KeySchema,
    /// As the request gave them, echoed by DescribeTable.
    pub attribute_definitions: Value,
    pub global_secondary_indexes: Option<Value>,
    /// Its global secondary indexes: ARN, partition key and, when provisioned, write
    /// capacity (with the table's burst).
    pub indexes: Vec<Index>,
    /// Its change stream, while enabled (and after, until its records age out).
    pub stream: Option<super::streams::Stream>,
    /// Kinesis data streams its changes are put into, by ARN, and whether each is enabled.
    pub destinations: Vec<(String, bool)>,
    pub billing: Billing,
    /// An on-demand table's maximum throughput (`OnDemandThroughput`): read and write request
    /// units a second, each a bucket of a second's worth; None: no maximum.
    pub max_read: Option<(u64, Bucket)>,
    pub max_write: Option<(u64, Bucket)>,
    pub tags: BTreeMap<String, String>,
    pub items: BTreeMap<Key, Item>,
    pub bytes: u64,
    pub partitions: Vec<Partition>,
    table_read: Bucket,
    table_write: Bucket,
    /// Units used a second, in write units (a read unit a third of one), and an on-demand
    /// table's growth: the current window's start and busiest second, and the busiest second
    /// before it.
    used: Meter,
    window_start: Instant,
    window_peak: f64,
    previous_peak: f64,
    /// Throttled calls by reason.
    pub throttles: BTreeMap<String, u64>,
}

/// The partitions a table's throughput needs (see `DynamoLimits::modelled`).
fn partitions_for(billing: Billing, l: &DynamoLimits) -> usize {
    match billing {
        Billing::Provisioned { read, write } => super::partitions_for(Some((read, write)), l),
        Billing::OnDemand => super::partitions_for(None, l),
    }
}

impl Table {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        arn: String,
        created: f64,
        key: KeySchema,
        attribute_definitions: Value,
        billing: Billing,
        limits: &DynamoLimits,
        now: Instant,
    ) -> Table {
        let mut t = Table {
            name,
            arn,
            created,
            key,
            attribute_definitions,
            global_secondary_indexes: None,
            indexes: Vec::new(),
            stream: None,
            destinations: Vec::new(),
            billing,
            max_read: None,
            max_write: None,
            tags: BTreeMap::new(),
            items: BTreeMap::new(),
            bytes: 0,
            partitions: Vec::new(),
            table_read: Bucket::new(0.0, 0.0, now),
            table_write: Bucket::new(0.0, 0.0, now),
            throttles: BTreeMap::new(),
            used: Meter::default(),
            window_start: now,
            window_peak: 0.0,
            previous_peak: 0.0,
        };
        t.set_billing(billing, limits, now);
        t
    }

    /// Applies a (new) billing mode or capacity: the table's buckets follow it, and partitions
    /// are added when it needs more (they are never merged).
    pub fn set_billing(&mut self, billing: Billing, l: &DynamoLimits, now: Instant) {
        // A table switched to on-demand: its previous peak is half its provisioned throughput.
        if let (Billing::Provisioned { read, write }, Billing::OnDemand) = (self.billing, billing) {
            let units = write as f64
                + read as f64 * l.partition_write_units as f64 / l.partition_read_units as f64;
            self.previous_peak = self.previous_peak.max(units / 2.0);
            self.window_start = now;
        }
        self.billing = billing;
        let burst = l.burst.as_secs_f64().max(1.0);
        (self.table_read, self.table_write) = match billing {
            Billing::Provisioned { read, write } => (
                Bucket::new(read as f64, read as f64 * burst, now),
                Bucket::new(write as f64, write as f64 * burst, now),
            ),
            Billing::OnDemand => (
                Bucket::new(
                    l.table_quota_read_units as f64,
                    l.table_quota_read_units as f64,
                    now,
                ),
                Bucket::new(
                    l.table_quota_write_units as f64,
                    l.table_quota_write_units as f64,
                    now,
                ),
            ),
        };
        let grown = if billing == Billing::OnDemand {
            (2.0 * self.previous_peak / l.partition_write_units as f64).ceil() as usize
        } else {
            0
        };
        let want = partitions_for(billing, l)
            .max(grown)
            .max(self.partitions.len());
        let rate = l.partition_write_units as f64;
        while self.partitions.len() < want {
            self.partitions.push(Partition {
                budget: Bucket::new(rate, rate, now),
                read: Meter::default(),
                write: Meter::default(),
                throttled: 0,
            });
        }
        if let Some(st) = &mut self.stream {
            st.grow(self.partitions.len());
        }
    }

    /// Sets an on-demand table's maximum throughput (`OnDemandThroughput`'s
    /// `MaxReadRequestUnits` and `MaxWriteRequestUnits`; -1 or absent: none), each enforced over a
    /// second. The developer guide ("DynamoDB maximum throughput for on-demand tables"):
    /// "throughput requests that exceed the maximum amount specified will be throttled".
    pub fn set_max(&mut self, read: Option<i64>, write: Option<i64>, now: Instant) {
        let bucket = |v: Option<i64>| {
            v.filter(|v| *v > 0)
                .map(|v| (v as u64, Bucket::new(v as f64, v as f64, now)))
        };
        if let Some(r) = read {
            self.max_read = bucket(Some(r));
        }
        if let Some(w) = write {
            self.max_write = bucket(Some(w));
        }
    }

    /// The partition a partition key's value lives on (see [`super::partition_of`]).
    pub fn partition_of(&self, pk: &KeyValue) -> usize {
        super::partition_of(&pk.bytes(), self.partitions.len())
    }

    /// Takes `units` of `what` for a call on `pk`, or says which limit refuses it.
    pub fn admit(
        &mut self,
        pk: &KeyValue,
        what: Use,
        units: f64,
        l: &DynamoLimits,
        now: Instant,
        second: u64,
    ) -> Result<(), Throttle> {
        if self.billing == Billing::OnDemand {
            self.grow(l, now, second);
        }
        let p = self.partition_of(pk);
        let cost = match what {
            Use::Write => units,
            Use::Read => units * l.partition_write_units as f64 / l.partition_read_units as f64,
        };
        let on_demand = self.billing == Billing::OnDemand;
        let max = match what {
            Use::Read => self.max_read.as_mut(),
            Use::Write => self.max_write.as_mut(),
        }
        .filter(|_| on_demand);
        let over_max = max.is_some_and(|(_, b)| !b.has(units, now));
        let table = match what {
            Use::Read => &mut self.table_read,
            Use::Write => &mut self.table_write,
        };
        // The table's own maximum first (the lowest limit a caller set), then the table's
        // capacity or the account's quota, then the partition's.
        let refused = if over_max {
            // The developer guide names the exceptions a throttle comes in
            // (ProvisionedThroughputExceededException, RequestLimitExceeded, ThrottlingException)
            // but not which carries this reason: ThrottlingException is assumed (docs/emulator.md).
            Some((
                "MaxOnDemandThroughputExceeded",
                "ThrottlingException",
                "Throughput exceeds the maximum OnDemandThroughput configured on table or index",
            ))
        } else if !table.has(units, now) {
            Some(if on_demand {
                (
                    "AccountLimitExceeded",
                    "RequestLimitExceeded",
                    "Throughput exceeds the current throughput limit for your account.",
                )
            } else {
                (
                    "ProvisionedThroughputExceeded",
                    "ProvisionedThroughputExceededException",
                    "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.",
                )
            })
        } else if !self.partitions[p].budget.has(cost, now) {
            Some((
                "KeyRangeThroughputExceeded",
                "ProvisionedThroughputExceededException",
                "Throughput exceeds the current capacity for one or more partitions of your table. Consider spreading the load across more partition key values.",
            ))
        } else {
            None
        };
        if let Some((limit, exception, message)) = refused {
            let reason = format!("Table{}{limit}", what.word());
            *self.throttles.entry(reason.clone()).or_default() += 1;
            self.partitions[p].throttled += 1;
            return Err(Throttle {
                reason,
                index_arn: None,
                exception,
                message,
            });
        }
        table.take(units);
        if on_demand {
            let max = match what {
                Use::Read => self.max_read.as_mut(),
                Use::Write => self.max_write.as_mut(),
            };
            if let Some((_, b)) = max {
                b.take(units);
            }
        }
        self.used.add(second, cost);
        let part = &mut self.partitions[p];
        part.budget.take(cost);
        match what {
            Use::Read => part.read.add(second, units),
            Use::Write => part.write.add(second, units),
        }
        Ok(())
    }

    /// Takes `units` of writes for a change of the item on `pk` from `old` to `new`: from each
    /// index the item is in (it carries the index's partition key), then from the table. An index
    /// short of write capacity throttles the table's write
    /// (`IndexWriteProvisionedThroughputExceeded`), as DynamoDB does.
    #[allow(clippy::too_many_arguments)]
    pub fn admit_write(
        &mut self,
        pk: &KeyValue,
        old: Option<&Item>,
        new: Option<&Item>,
        units: f64,
        l: &DynamoLimits,
        now: Instant,
        second: u64,
    ) -> Result<(), Throttle> {
        let touched: Vec<bool> = self
            .indexes
            .iter()
            .map(|i| {
                old.is_some_and(|o| o.contains_key(&i.hash))
                    || new.is_some_and(|n| n.contains_key(&i.hash))
            })
            .collect();
        let mut short = None;
        for (i, hit) in self.indexes.iter_mut().zip(&touched) {
            if *hit && i.write.as_mut().is_some_and(|b| !b.has(units, now)) {
                short = Some(i.arn.clone());
                break;
            }
        }
        if let Some(arn) = short {
            let reason = "IndexWriteProvisionedThroughputExceeded".to_string();
            *self.throttles.entry(reason.clone()).or_default() += 1;
            return Err(Throttle {
                reason,
                index_arn: Some(arn),
                exception: "ProvisionedThroughputExceededException",
                message: "The level of configured provisioned throughput for one or more global secondary indexes of the table was exceeded. Consider increasing your provisioning level for the under-provisioned global secondary indexes with the UpdateTable API",
            });
        }
        self.admit(pk, Use::Write, units, l, now, second)?;
        for (i, hit) in self.indexes.iter_mut().zip(&touched) {
            if *hit && let Some(b) = i.write.as_mut() {
                b.take(units);
            }
        }
        Ok(())
    }

    /// An on-demand table's growth: the busiest second so far in this window; when a window ends,
    /// partitions for twice the busiest second before it.
    fn grow(&mut self, l: &DynamoLimits, now: Instant, second: u64) {
        self.window_peak = self.window_peak.max(self.used.last(second));
        if now.saturating_duration_since(self.window_start) >= l.on_demand_growth_window {
            self.previous_peak = self.previous_peak.max(self.window_peak);
            self.window_peak = 0.0;
            self.window_start = now;
            self.set_billing(Billing::OnDemand, l, now);
        }
    }

    /// An item's key, from an item or a `Key` map; an error says what is wrong.
    pub fn key_of(&self, m: &Item) -> Result<Key, String> {
        let (hn, ht) = &self.key.hash;
        let hv = m
            .get(hn)
            .ok_or_else(|| format!("One of the required keys was not given a value: {hn}"))?;
        let h = KeyValue::of(hv, *ht).map_err(|e| format!("{hn}: {e}"))?;
        let r = match &self.key.range {
            None => None,
            Some((rn, rt)) => {
                let rv = m.get(rn).ok_or_else(|| {
                    format!("One of the required keys was not given a value: {rn}")
                })?;
                Some(KeyValue::of(rv, *rt).map_err(|e| format!("{rn}: {e}"))?)
            }
        };
        Ok((h, r))
    }

    /// The table's description, as DescribeTable and CreateTable answer it.
    pub fn describe(&self, status: &str) -> Value {
        let mut schema =
            vec![serde_json::json!({"AttributeName": self.key.hash.0, "KeyType": "HASH"})];
        if let Some((r, _)) = &self.key.range {
            schema.push(serde_json::json!({"AttributeName": r, "KeyType": "RANGE"}));
        }
        let (mode, rcu, wcu) = match self.billing {
            Billing::Provisioned { read, write } => ("PROVISIONED", read, write),
            Billing::OnDemand => ("PAY_PER_REQUEST", 0, 0),
        };
        let mut d = serde_json::json!({
            "TableName": self.name,
            "TableArn": self.arn,
            "TableStatus": status,
            "CreationDateTime": self.created,
            "KeySchema": schema,
            "AttributeDefinitions": self.attribute_definitions,
            "ItemCount": self.items.len(),
            "TableSizeBytes": self.bytes,
            "ProvisionedThroughput": {
                "ReadCapacityUnits": rcu,
                "WriteCapacityUnits": wcu,
                "NumberOfDecreasesToday": 0
            },
            "BillingModeSummary": { "BillingMode": mode },
            "TableId": format!("{:032x}", md5_of(&self.arn)),
        });
        if let Some(g) = &self.global_secondary_indexes {
            d["GlobalSecondaryIndexes"] = g.clone();
        }
        if self.max_read.is_some() || self.max_write.is_some() {
            let units = |m: &Option<(u64, Bucket)>| m.as_ref().map_or(-1, |(u, _)| *u as i64);
            d["OnDemandThroughput"] = serde_json::json!({
                "MaxReadRequestUnits": units(&self.max_read),
                "MaxWriteRequestUnits": units(&self.max_write),
            });
        }
        if let Some(st) = &self.stream {
            d["StreamSpecification"] =
                serde_json::json!({"StreamEnabled": st.enabled, "StreamViewType": st.view_name()});
            if st.enabled {
                d["LatestStreamArn"] = serde_json::json!(st.arn);
                d["LatestStreamLabel"] = serde_json::json!(st.label);
            }
        }
        d
    }
}

fn md5_of(s: &str) -> u128 {
    use md5::{Digest, Md5};
    u128::from_be_bytes(Md5::digest(s.as_bytes()).into())
}
