//! `latlab calibrate`'s probe of DynamoDB: its profile parameters, from an on-demand table of its own (tagged, deleted at the end): round
//! trips of PutItem (a write), GetItem (a read, eventually consistent) and DescribeTable (the
//! other calls). The change streams' delays are not probed: the file keeps its base's.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ScalarAttributeType, TableStatus, Tag,
};

use crate::lab_kit::calibrate::{Calibration, PlanLine, Probe, round_trips};

impl crate::labs::Calibrated for super::DynamoLab {
    const CALIBRATES: bool = true;

    fn calibration_plan(
        samples: usize,
        run: &str,
        _embedded: bool,
        _target: &<super::DynamoLab as crate::labs::Lab>::Target,
        prices: &crate::lab_kit::cost::Prices,
    ) -> Vec<PlanLine> {
        let price = |k: &str| prices.value(k).unwrap_or(0.0);
        vec![PlanLine {
            what: format!(
                "DynamoDB table latlab-calibrate-{run} (on-demand); {samples} writes and {samples} reads of one unit each"
            ),
            usd: samples as f64 / 1e6
                * (price("dynamodb.write_request_units_per_million")
                    + price("dynamodb.read_request_units_per_million")),
            keys: vec![
                "dynamodb.write_request_units_per_million".into(),
                "dynamodb.read_request_units_per_million".into(),
            ],
        }]
    }

    fn calibrate(
        probe: &Probe,
        _target: &<super::DynamoLab as crate::labs::Lab>::Target,
        cal: &mut Calibration,
    ) -> impl std::future::Future<Output = anyhow::Result<()>> + Send {
        run(probe, cal)
    }
}

async fn run(p: &Probe, cal: &mut Calibration) -> anyhow::Result<()> {
    let client = super::client::dynamodb(
        &p.clients,
        &Probe::retry(),
        "latlab-calibrate",
        std::sync::Arc::new(crate::metrics::SdkStats::default()),
    );
    let name = format!("latlab-calibrate-{}", p.run_id);
    let mut req = client
        .create_table()
        .table_name(&name)
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("pk")
                .attribute_type(ScalarAttributeType::S)
                .build()?,
        )
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("pk")
                .key_type(KeyType::Hash)
                .build()?,
        )
        .billing_mode(BillingMode::PayPerRequest);
    for (k, v) in crate::lab_kit::plan::tags(&p.run_id, &crate::lab_kit::plan::now_rfc3339()) {
        req = req.tags(Tag::builder().key(k).value(v).build()?);
    }
    req.send()
        .await
        .map_err(|e| anyhow::anyhow!("CreateTable {name}: {}", crate::aws::error_line(&e)))?;
    p.say(format!("created table {name} (on-demand)"));
    let r = measure(p, &client, &name, cal).await;
    match client.delete_table().table_name(&name).send().await {
        Ok(_) => p.say(format!("deleted table {name}")),
        Err(e) => p.say(format!(
            "could not delete table {name}: {} (`latlab cleanup --run {}` finds it by its tag)",
            crate::aws::error_line(&e),
            p.run_id
        )),
    }
    r
}

async fn measure(
    p: &Probe,
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    cal: &mut Calibration,
) -> anyhow::Result<()> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    loop {
        p.cancelled()?;
        let d = client.describe_table().table_name(table).send().await;
        if let Ok(d) = d
            && d.table().and_then(|t| t.table_status()) == Some(&TableStatus::Active)
        {
            break;
        }
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "table {table} was not ACTIVE within 300 s"
        );
        p.pause(std::time::Duration::from_millis(200)).await;
    }
    let n = p.samples;
    let (write, _) = round_trips(p, n, f64::INFINITY, |i| {
        client
            .put_item()
            .table_name(table)
            .item("pk", AttributeValue::S(format!("k{}", i % 16)))
            .item("v", AttributeValue::S("calibrate".into()))
            .send()
    })
    .await;
    p.cancelled()?;
    let (read, _) = round_trips(p, n, f64::INFINITY, |i| {
        client
            .get_item()
            .table_name(table)
            .key("pk", AttributeValue::S(format!("k{}", i % 16)))
            .send()
    })
    .await;
    p.cancelled()?;
    let (other, _) = round_trips(p, n, f64::INFINITY, |_| {
        client.describe_table().table_name(table).send()
    })
    .await;
    cal.round_trip("dynamodb.write", &write, "PutItem");
    cal.round_trip("dynamodb.read", &read, "GetItem");
    cal.round_trip("dynamodb.other", &other, "DescribeTable");
    cal.left.push(
        "dynamodb.stream_visibility and dynamodb.kinesis_push: not probed (they keep the base profile's)".into(),
    );
    Ok(())
}
