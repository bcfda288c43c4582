//! `latlab calibrate`'s probe of SQS: its profile parameters, from a standard queue of its own (tagged, deleted at the end): round trips
//! of SendMessage, ReceiveMessage (a short poll of a queue that holds a message), DeleteMessage
//! and GetQueueAttributes (the other calls).

use aws_sdk_sqs::types::QueueAttributeName;

use crate::lab_kit::calibrate::{Calibration, PlanLine, Probe, round_trips, timed};

impl crate::labs::Calibrated for super::SqsLab {
    const CALIBRATES: bool = true;

    fn calibration_plan(
        samples: usize,
        run: &str,
        _embedded: bool,
        _target: &<super::SqsLab as crate::labs::Lab>::Target,
        prices: &crate::lab_kit::cost::Prices,
    ) -> Vec<PlanLine> {
        let requests = 4.0 * samples as f64;
        vec![PlanLine {
            what: format!("SQS queue latlab-calibrate-{run}; about {requests:.0} requests"),
            usd: requests / 1e6
                * prices
                    .value("sqs.standard_requests_per_million")
                    .unwrap_or(0.0),
            keys: vec!["sqs.standard_requests_per_million".into()],
        }]
    }

    fn calibrate(
        probe: &Probe,
        _target: &<super::SqsLab as crate::labs::Lab>::Target,
        cal: &mut Calibration,
    ) -> impl std::future::Future<Output = anyhow::Result<()>> + Send {
        run(probe, cal)
    }
}

async fn run(p: &Probe, cal: &mut Calibration) -> anyhow::Result<()> {
    let client = super::client::client(
        &p.clients,
        &Probe::retry(),
        "latlab-calibrate",
        std::sync::Arc::new(crate::metrics::SdkStats::default()),
    );
    let name = format!("latlab-calibrate-{}", p.run_id);
    let mut req = client.create_queue().queue_name(&name);
    for (k, v) in crate::lab_kit::plan::tags(&p.run_id, &crate::lab_kit::plan::now_rfc3339()) {
        req = req.tags(k, v);
    }
    let url = req
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("CreateQueue {name}: {}", crate::aws::error_line(&e)))?
        .queue_url
        .ok_or_else(|| anyhow::anyhow!("CreateQueue {name} answered no QueueUrl"))?;
    p.say(format!("created queue {name}"));
    let r = measure(p, &client, &url, cal).await;
    match client.delete_queue().queue_url(&url).send().await {
        Ok(_) => p.say(format!("deleted queue {name}")),
        Err(e) => p.say(format!(
            "could not delete queue {name}: {} (`latlab cleanup --run {}` finds it by its tag)",
            crate::aws::error_line(&e),
            p.run_id
        )),
    }
    r
}

async fn measure(
    p: &Probe,
    client: &aws_sdk_sqs::Client,
    url: &str,
    cal: &mut Calibration,
) -> anyhow::Result<()> {
    let n = p.samples;
    let (send, _) = round_trips(p, n, f64::INFINITY, |i| {
        client
            .send_message()
            .queue_url(url)
            .message_body(format!("calibrate {i}"))
            .send()
    })
    .await;
    p.cancelled()?;
    // Each receive finds a message (the sends left n); each delete removes what it received.
    let mut receive = Vec::new();
    let mut delete = Vec::new();
    for _ in 0..n {
        p.cancelled()?;
        let (r, ms) = timed(
            client
                .receive_message()
                .queue_url(url)
                .max_number_of_messages(1)
                .wait_time_seconds(0)
                .send(),
        )
        .await;
        let Ok(out) = r else { continue };
        let Some(handle) = out
            .messages()
            .first()
            .and_then(|m| m.receipt_handle())
            .map(str::to_string)
        else {
            continue;
        };
        receive.push(ms);
        let (r, ms) = timed(
            client
                .delete_message()
                .queue_url(url)
                .receipt_handle(handle)
                .send(),
        )
        .await;
        if r.is_ok() {
            delete.push(ms);
        }
    }
    let (other, _) = round_trips(p, n, f64::INFINITY, |_| {
        client
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
            .send()
    })
    .await;
    cal.round_trip("sqs.send", &send, "SendMessage");
    cal.round_trip(
        "sqs.receive",
        &receive,
        "ReceiveMessage (a short poll that found a message)",
    );
    cal.round_trip("sqs.delete", &delete, "DeleteMessage");
    cal.round_trip("sqs.other", &other, "GetQueueAttributes");
    Ok(())
}
