//! The DynamoDB lab's part of a scenario file (`[dynamodb]`): the table (its billing mode and
//! capacity), the writer (its rate, item size, keys and how skewed they are), the reader (its rate
//! and consistency), one optional change while it runs (`[dynamodb.then]`: the hot key, a spike),
//! and the change-data-capture consumers (`[[dynamodb.cdc]]`).

use std::time::Duration;

use anyhow::bail;
use serde::Deserialize;

use latlab_core::units::{Bytes, Dur};

/// The tables' base name unless a scenario gives its own (what `latlab cleanup` looks for).
pub const DEFAULT_PREFIX: &str = "latlab";

/// How a table pays for its throughput.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum Billing {
    /// Provisioned read and write capacity units a second.
    Provisioned { read: u64, write: u64 },
    /// On-demand (PAY_PER_REQUEST).
    OnDemand,
}

impl Billing {
    pub fn describe(self) -> String {
        match self {
            Billing::Provisioned { read, write } => format!(
                "provisioned {} RCU, {} WCU",
                latlab_core::units::thousands(read),
                latlab_core::units::thousands(write)
            ),
            Billing::OnDemand => "on-demand".into(),
        }
    }
}

/// How a change-data-capture consumer reads the table's changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CdcKind {
    /// GetRecords on every shard of the table's DynamoDB stream, every `interval_ms`.
    StreamsPoller { interval_ms: u64 },
    /// Lambda's event source mapping on the DynamoDB stream: each shard polled four times a second,
    /// batches of up to `batch_size` handed to the function.
    Lambda { batch_size: u32 },
    /// An enhanced fan-out consumer (SubscribeToShard) on the Kinesis data stream the table's
    /// changes are streamed to (Kinesis Data Streams for DynamoDB).
    FanOut,
}

/// Lambda polls a DynamoDB stream's shards "at a base rate of 4 times per second" (AWS Lambda
/// developer guide, "Using AWS Lambda with Amazon DynamoDB", polling and batching streams).
pub const LAMBDA_POLL: Duration = Duration::from_millis(250);

impl CdcKind {
    pub fn name(self) -> &'static str {
        match self {
            CdcKind::StreamsPoller { .. } => "streams-poller",
            CdcKind::Lambda { .. } => "lambda",
            CdcKind::FanOut => "fan-out",
        }
    }

    /// Whether it reads the table's DynamoDB stream (and so is one of a shard's readers).
    pub fn reads_stream(self) -> bool {
        !matches!(self, CdcKind::FanOut)
    }

    pub fn describe(self) -> String {
        match self {
            CdcKind::StreamsPoller { interval_ms } => format!(
                "DynamoDB Streams GetRecords every {}",
                latlab_core::units::format_duration(Duration::from_millis(interval_ms))
            ),
            CdcKind::Lambda { batch_size } => {
                format!("Lambda on DynamoDB Streams, 4 polls/s a shard, batch {batch_size}")
            }
            CdcKind::FanOut => "fan-out on the Kinesis destination (SubscribeToShard)".into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct CdcSpec {
    pub name: String,
    pub kind: CdcKind,
}

/// What `[dynamodb.then]` changes once, `after` the lab starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Then {
    pub after: Duration,
    pub skewed: Option<bool>,
    pub rate: Option<u32>,
}

/// The DynamoDB lab as a scenario sets it.
#[derive(Clone, Debug, PartialEq)]
pub struct DynamoScenario {
    pub billing: Billing,
    /// Each item's size in bytes, as DynamoDB counts it (names and values).
    pub item_size: u64,
    /// PutItem calls a second.
    pub rate: u32,
    /// Partition keys the uniform load spreads over.
    pub keys: u32,
    /// The share of writes (and reads) that go to the hot key while the keys are skewed.
    pub hot_share: f64,
    pub skewed: bool,
    /// GetItem calls a second (0: no reader).
    pub reads: u32,
    /// Strongly consistent reads (else eventually consistent).
    pub consistent: bool,
    pub then: Option<Then>,
    pub table_prefix: String,
    pub cdc: Vec<CdcSpec>,
    /// A headless run's writing time (set by `for_duration`): the writer stops after it.
    pub write_for: Option<Duration>,
}

/// The writer's rates the `<`/`>` keys step through, writes a second.
pub const RATE_STEPS: &[u64] = &[10, 20, 50, 100, 200, 300, 400, 600, 800, 1000, 1500, 2000];
/// Provisioned write capacities the `u`/`U` keys step through.
pub const CAPACITY_STEPS: &[u64] = &[100, 500, 1000, 2000, 4000, 8000, 16000];
/// The largest item DynamoDB stores (400 KB).
pub const MAX_ITEM: u64 = 400 * 1024;
/// The smallest item the lab writes: its key, seq and write time.
pub const MIN_ITEM: u64 = 64;

impl Default for DynamoScenario {
    fn default() -> Self {
        DynamoScenario {
            billing: Billing::Provisioned {
                read: 3000,
                write: 4000,
            },
            item_size: 4096,
            rate: 200,
            keys: 100,
            hot_share: 0.9,
            skewed: false,
            reads: 20,
            consistent: false,
            then: None,
            table_prefix: DEFAULT_PREFIX.into(),
            cdc: Vec::new(),
            write_for: None,
        }
    }
}

/// `[dynamodb]` as written.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct DynamoFile {
    mode: Option<String>,
    read_capacity: Option<u64>,
    write_capacity: Option<u64>,
    item_size: Option<Bytes>,
    rate: Option<u32>,
    keys: Option<u32>,
    hot_share: Option<f64>,
    skewed: Option<bool>,
    reads: Option<u32>,
    consistent: Option<bool>,
    then: Option<ThenFile>,
    table_prefix: Option<String>,
    cdc: Option<Vec<CdcFile>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThenFile {
    after: Dur,
    skewed: Option<bool>,
    rate: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CdcFile {
    name: String,
    kind: String,
    interval: Option<Dur>,
    batch_size: Option<u32>,
}

const KINDS: &str = "streams-poller, lambda, fan-out";

fn check_rate(rate: u32, what: &str) -> anyhow::Result<()> {
    if rate == 0 || rate > 20_000 {
        bail!("[dynamodb] {what} = {rate}: must be 1 to 20000 writes a second");
    }
    Ok(())
}

/// Checks `[dynamodb]` and makes the lab's scenario.
pub fn parse(f: DynamoFile) -> anyhow::Result<DynamoScenario> {
    let d = DynamoScenario::default();
    let billing = match f.mode.as_deref().unwrap_or("provisioned") {
        "provisioned" => {
            let (read, write) = (
                f.read_capacity.unwrap_or(3000),
                f.write_capacity.unwrap_or(4000),
            );
            for (what, v) in [("read_capacity", read), ("write_capacity", write)] {
                if v == 0 || v > 40_000 {
                    bail!(
                        "[dynamodb] {what} = {v}: must be 1 to 40000 units a second (DynamoDB's \
                         default per-table quota)"
                    );
                }
            }
            Billing::Provisioned { read, write }
        }
        "on-demand" => {
            if f.read_capacity.is_some() || f.write_capacity.is_some() {
                bail!(
                    "[dynamodb] read_capacity and write_capacity apply to mode = \"provisioned\" only"
                );
            }
            Billing::OnDemand
        }
        other => bail!("[dynamodb] mode = '{other}': must be provisioned or on-demand"),
    };
    let item_size = f.item_size.map_or(d.item_size, |b| b.0);
    if !(MIN_ITEM..=MAX_ITEM).contains(&item_size) {
        bail!(
            "[dynamodb] item_size = {item_size} bytes: must be {MIN_ITEM} B to 400 KB (an item \
             carries its key, seq and write time; DynamoDB's largest item is 400 KB)"
        );
    }
    let rate = f.rate.unwrap_or(d.rate);
    check_rate(rate, "rate")?;
    let keys = f.keys.unwrap_or(d.keys);
    if keys == 0 || keys > 1_000_000 {
        bail!("[dynamodb] keys = {keys}: must be 1 to 1000000 partition keys");
    }
    let hot_share = f.hot_share.unwrap_or(d.hot_share);
    if !(0.0..=1.0).contains(&hot_share) || hot_share.is_nan() {
        bail!("[dynamodb] hot_share = {hot_share}: must be 0 to 1 (the hot key's share of writes)");
    }
    let reads = f.reads.unwrap_or(d.reads);
    if reads > 20_000 {
        bail!("[dynamodb] reads = {reads}: must be 0 to 20000 reads a second");
    }
    let then = match f.then {
        None => None,
        Some(t) => {
            if t.skewed.is_none() && t.rate.is_none() {
                bail!("[dynamodb.then] changes nothing: give skewed, rate or both");
            }
            if let Some(r) = t.rate {
                check_rate(r, "then.rate")?;
            }
            Some(Then {
                after: t.after.0,
                skewed: t.skewed,
                rate: t.rate,
            })
        }
    };
    let table_prefix = f.table_prefix.unwrap_or(d.table_prefix);
    if table_prefix.is_empty()
        || table_prefix.len() > 100
        || !table_prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        bail!(
            "[dynamodb] table_prefix = '{table_prefix}': 1 to 100 of letters, digits, '-', '_' \
             and '.' (DynamoDB's table name rule, with room for the run id)"
        );
    }
    let cdc = f
        .cdc
        .unwrap_or_default()
        .into_iter()
        .map(cdc)
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut names = std::collections::HashSet::new();
    for c in &cdc {
        if !names.insert(c.name.as_str()) {
            bail!(
                "[[dynamodb.cdc]] two consumers are named '{}': names must differ",
                c.name
            );
        }
    }
    Ok(DynamoScenario {
        billing,
        item_size,
        rate,
        keys,
        hot_share,
        skewed: f.skewed.unwrap_or(d.skewed),
        reads,
        consistent: f.consistent.unwrap_or(d.consistent),
        then,
        table_prefix,
        cdc,
        write_for: None,
    })
}

fn cdc(f: CdcFile) -> anyhow::Result<CdcSpec> {
    let name = f.name;
    if name.is_empty()
        || name.len() > 24
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        bail!("[[dynamodb.cdc]] name = '{name}': 1 to 24 of letters, digits, '-' and '_'");
    }
    if ["writer", "strong", "eventual"].contains(&name.as_str()) || name.starts_with("reader-") {
        bail!(
            "[[dynamodb.cdc]] name = '{name}': writer, strong, eventual and reader-N name the \
             lab's own series and the readers its keys add; choose another"
        );
    }
    let unused = |what: &str, given: bool| -> anyhow::Result<()> {
        if given {
            bail!(
                "[[dynamodb.cdc]] '{name}': {what} does not apply to a {} consumer",
                f.kind
            );
        }
        Ok(())
    };
    let kind = match f.kind.as_str() {
        "streams-poller" => {
            unused("batch_size", f.batch_size.is_some())?;
            let i = f.interval.map_or(Duration::from_millis(500), |i| i.0);
            if i < Duration::from_millis(10) || i > Duration::from_secs(60) {
                bail!("[[dynamodb.cdc]] '{name}': interval must be 10ms to 60s");
            }
            CdcKind::StreamsPoller {
                interval_ms: i.as_millis() as u64,
            }
        }
        "lambda" => {
            unused("interval", f.interval.is_some())?;
            let batch_size = f.batch_size.unwrap_or(100);
            if batch_size == 0 || batch_size > 10_000 {
                bail!(
                    "[[dynamodb.cdc]] '{name}': batch_size must be 1 to 10000 (Lambda's range for \
                     DynamoDB streams)"
                );
            }
            CdcKind::Lambda { batch_size }
        }
        "fan-out" => {
            unused("interval", f.interval.is_some())?;
            unused("batch_size", f.batch_size.is_some())?;
            CdcKind::FanOut
        }
        other => bail!("[[dynamodb.cdc]] '{name}': kind = '{other}': must be one of {KINDS}"),
    };
    Ok(CdcSpec { name, kind })
}

impl crate::labs::Setup for super::DynamoLab {
    fn parse(file: DynamoFile, _text: &str) -> anyhow::Result<DynamoScenario> {
        parse(file)
    }

    /// No seed measured DynamoDB: a seed section is refused.
    fn check_seed(seed: &crate::labs::NoSeed, _s: &DynamoScenario) -> anyhow::Result<()> {
        bail!(
            "seed.dynamodb (source '{}'): no seed measured DynamoDB, so the DynamoDB lab has no \
             figures to compare; remove [seed.dynamodb]",
            seed.source
        )
    }

    /// The lab's own parameters: Lambda's polling (documented), the poller's interval (latlab's
    /// choice) and the heat strip's partitions (latlab's model).
    fn model(s: &DynamoScenario) -> Vec<latlab_core::provenance::Param> {
        use latlab_core::provenance::{Param, Provenance, Source};
        let mut params = vec![Param::new(
            "dynamodb.heat_partitions",
            "the emulator's partition model".to_string(),
            Provenance::new(
                Source::Assumption,
                "DynamoDB does not publish how keys map to partitions: the heat strip attributes \
                 each call's consumed units (as the service answered them) to a partition by \
                 latlab's model, the one the embedded emulator enforces; against AWS it is an \
                 estimate, and the throttling reasons are the service's own",
            ),
        )];
        if s.cdc
            .iter()
            .any(|c| matches!(c.kind, CdcKind::Lambda { .. }))
        {
            params.push(Param::new(
                "dynamodb.lambda_poll",
                "4/s a shard".to_string(),
                Provenance::new(
                    Source::AwsDoc,
                    "AWS Lambda developer guide: Lambda polls shards in a DynamoDB stream for \
                     records at a base rate of 4 times per second",
                ),
            ));
        }
        params
    }

    fn for_duration(s: &mut DynamoScenario, duration: Duration) {
        s.write_for = Some(duration);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> anyhow::Result<DynamoScenario> {
        let f: DynamoFile = toml::from_str(text)?;
        parse(f)
    }

    #[test]
    fn an_empty_section_is_a_provisioned_table_and_a_uniform_writer() {
        let s = parse_text("").unwrap();
        assert_eq!(
            s.billing,
            Billing::Provisioned {
                read: 3000,
                write: 4000
            }
        );
        assert!(!s.skewed && s.cdc.is_empty() && s.then.is_none());
    }

    #[test]
    fn bad_values_are_named_with_what_is_valid() {
        let e = |t: &str| parse_text(t).unwrap_err().to_string();
        assert!(e("mode = \"burst\"").contains("mode = 'burst': must be provisioned or on-demand"));
        assert!(
            e("mode = \"on-demand\"\nwrite_capacity = 5")
                .contains("apply to mode = \"provisioned\" only")
        );
        assert!(e("item_size = \"500KB\"").contains("DynamoDB's largest item is 400 KB"));
        assert!(e("hot_share = 1.5").contains("must be 0 to 1"));
        assert!(e("write_capacity = 0").contains("must be 1 to 40000"));
        assert!(e("[then]\nafter = \"5s\"").contains("changes nothing"));
        assert!(
            e("[[cdc]]\nname = \"a\"\nkind = \"kcl\"")
                .contains("kind = 'kcl': must be one of streams-poller, lambda, fan-out")
        );
        assert!(
            e("[[cdc]]\nname = \"a\"\nkind = \"fan-out\"\ninterval = \"1s\"")
                .contains("interval does not apply to a fan-out consumer")
        );
        assert!(e("table_prefix = \"a b\"").contains("DynamoDB's table name rule"));
    }
}
