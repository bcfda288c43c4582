//! `latlab calibrate`'s probe of S3: its profile parameters, per storage class, from objects of four sizes written under
//! `latlab/calibrate-RUN/` in the class's bucket (the embedded emulator's are made for the run;
//! on another target the user names them, as for the S3 lab) and deleted at the end:
//!
//! - a GET's first byte: the time until its answer's headers, by size; a line through the
//!   medians gives the first byte of a small object and its growth per MiB asked for;
//! - one connection's download rate: the largest objects' bodies, size over time;
//! - a PUT's first byte: its whole time, by size, less the upload. The client cannot see when
//!   its body finished arriving, so the upload is taken at the download's rate (the file says
//!   so): the line's slope less that transfer is the PUT's growth per MiB;
//! - CreateSession (Express One Zone): its round trips.

use aws_sdk_s3::Client;
use aws_sdk_s3::primitives::ByteStream;

use crate::lab_kit::calibrate::fit::{self, Shape};
use crate::lab_kit::calibrate::{Calibration, PlanLine, Probe, round_trips, timed};

const MIB: f64 = 1024.0 * 1024.0;
/// Object sizes probed: small (its first byte alone), then growing.
const SIZES: [usize; 4] = [1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024];

/// PUTs (and as many GETs) of the `i`th size: the smallest gives the first-byte figures, so it
/// has the samples asked for; each larger size, which only places a median on the growth line,
/// half as many.
fn count(samples: usize, i: usize) -> usize {
    if i == 0 {
        samples
    } else {
        (samples / 2).max(10)
    }
}

/// The buckets a calibration writes in: (class, bucket, whether the probe makes it). The
/// embedded emulator's are made for the run; elsewhere the S3 lab's own, as the user names them.
fn buckets(
    p_run: &str,
    embedded: bool,
    t: &super::target::S3Target,
) -> Vec<(&'static str, String, bool)> {
    if embedded {
        return vec![
            ("standard", format!("latlab-calibrate-{p_run}"), true),
            (
                "express",
                format!("latlab-calibrate-{p_run}--use1-az4--x-s3"),
                true,
            ),
        ];
    }
    let mut out = Vec::new();
    if let Some(b) = &t.s3_bucket {
        out.push(("standard", b.clone(), false));
    }
    if let Some(b) = &t.s3_express_bucket {
        out.push(("express", b.clone(), false));
    }
    out
}

impl crate::labs::Calibrated for super::S3Lab {
    const CALIBRATES: bool = true;

    fn calibration_plan(
        samples: usize,
        run: &str,
        embedded: bool,
        target: &super::target::S3Target,
        prices: &crate::lab_kit::cost::Prices,
    ) -> Vec<PlanLine> {
        let price = |k: &str| prices.value(k).unwrap_or(0.0);
        let requests = (0..SIZES.len()).map(|i| count(samples, i)).sum::<usize>() as f64;
        buckets(run, embedded, target)
            .into_iter()
            .map(|(class, b, _)| {
                let mut keys = vec![format!("s3.{class}.put_per_1000"), format!("s3.{class}.get_per_1000")];
                let mut usd = requests / 1000.0 * (price(&keys[0]) + price(&keys[1]));
                if class == "express" {
                    // Every byte of each size, both ways.
                    let bytes: usize = SIZES.iter().enumerate().map(|(i, s)| count(samples, i) * s).sum();
                    let gb = bytes as f64 / 1e9;
                    keys.push("s3.express.upload_per_gb".into());
                    keys.push("s3.express.retrieval_per_gb".into());
                    usd += gb * (price(&keys[2]) + price(&keys[3]));
                }
                PlanLine {
                    what: format!(
                        "S3 objects under latlab/calibrate-{run}/ in {b} (4 objects of 1 KiB to 4 MiB, deleted at the end); {requests:.0} PUT and {requests:.0} GET requests"
                    ),
                    usd,
                    keys,
                }
            })
            .collect()
    }

    fn calibrate(
        probe: &Probe,
        target: &super::target::S3Target,
        cal: &mut Calibration,
    ) -> impl std::future::Future<Output = anyhow::Result<()>> + Send {
        run(probe, target, cal)
    }
}

async fn run(
    p: &Probe,
    target: &super::target::S3Target,
    cal: &mut Calibration,
) -> anyhow::Result<()> {
    let client = super::client::client(
        &p.clients,
        &Probe::retry(),
        &crate::aws::QuotaPartition::unlimited("latlab-calibrate"),
        std::sync::Arc::new(crate::metrics::SdkStats::default()),
    );
    let buckets = buckets(&p.run_id, p.embedded, target);
    if buckets.is_empty() {
        anyhow::bail!(
            "on another endpoint calibrate writes in the buckets you name: give --s3-bucket NAME (S3 Standard) and/or --s3-express-bucket NAME--AZID--x-s3 (objects go under latlab/, deleted at the end)"
        );
    }
    for (class, bucket, create) in &buckets {
        p.cancelled()?;
        if *create {
            let mut req = client.create_bucket().bucket(bucket);
            if *class == "express" {
                req = req.create_bucket_configuration(
                    aws_sdk_s3::types::CreateBucketConfiguration::builder()
                        .location(
                            aws_sdk_s3::types::LocationInfo::builder()
                                .r#type(aws_sdk_s3::types::LocationType::AvailabilityZone)
                                .name("use1-az4")
                                .build(),
                        )
                        .bucket(
                            aws_sdk_s3::types::BucketInfo::builder()
                                .r#type(aws_sdk_s3::types::BucketType::Directory)
                                .data_redundancy(
                                    aws_sdk_s3::types::DataRedundancy::SingleAvailabilityZone,
                                )
                                .build(),
                        )
                        .build(),
                );
            }
            req.send().await.map_err(|e| {
                anyhow::anyhow!("CreateBucket {bucket}: {}", crate::aws::error_line(&e))
            })?;
        }
        let prefix = format!("latlab/calibrate-{}/", p.run_id);
        let r = class_probe(p, &client, class, bucket, &prefix, cal).await;
        // Every object written, then the bucket if it was made here.
        let mut keys = Vec::new();
        if let Ok(list) = client
            .list_objects_v2()
            .bucket(bucket)
            .prefix(&prefix)
            .send()
            .await
        {
            keys.extend(
                list.contents()
                    .iter()
                    .filter_map(|o| o.key().map(str::to_string)),
            );
        }
        for key in SIZES.iter().map(|s| format!("{prefix}{s}")).chain(keys) {
            let _ = client.delete_object().bucket(bucket).key(key).send().await;
        }
        if *create {
            let _ = client.delete_bucket().bucket(bucket).send().await;
        }
        r?;
    }
    Ok(())
}

async fn class_probe(
    p: &Probe,
    client: &Client,
    class: &str,
    bucket: &str,
    prefix: &str,
    cal: &mut Calibration,
) -> anyhow::Result<()> {
    let per_size = count(p.samples, 1);
    let mut put_medians = Vec::new();
    let mut get_medians = Vec::new();
    let mut small_put = Vec::new();
    let mut small_get = Vec::new();
    let mut rates = Vec::new();
    let mut n = 0;
    for (i, &size) in SIZES.iter().enumerate() {
        let key = format!("{prefix}{size}");
        let body = vec![b'x'; size];
        let mut puts = Vec::new();
        let mut gets = Vec::new();
        for _ in 0..count(p.samples, i) {
            n += 1;
            p.cancelled()?;
            let (r, ms) = timed(
                client
                    .put_object()
                    .bucket(bucket)
                    .key(&key)
                    .body(ByteStream::from(body.clone()))
                    .send(),
            )
            .await;
            if r.is_ok() {
                puts.push(ms);
            }
            let (r, first) = timed(client.get_object().bucket(bucket).key(&key).send()).await;
            if let Ok(out) = r {
                let (body, ms) = timed(out.body.collect()).await;
                if let Ok(b) = body
                    && b.into_bytes().len() == size
                {
                    gets.push(first);
                    if size == SIZES[SIZES.len() - 1] && ms > 0.0 {
                        rates.push(size as f64 / 1e6 / (ms / 1000.0));
                    }
                }
            }
        }
        let (sp, sg) = (fit::sorted(puts.clone()), fit::sorted(gets.clone()));
        anyhow::ensure!(
            !sp.is_empty() && !sg.is_empty(),
            "{class}: no PUT or GET of {size} B succeeded in {bucket}"
        );
        put_medians.push((size as f64 / MIB, fit::quantile(&sp, 0.5)));
        get_medians.push((size as f64 / MIB, fit::quantile(&sg, 0.5)));
        if size == SIZES[0] {
            small_put = puts;
            small_get = gets;
        }
    }
    let rates = fit::sorted(rates);
    let rate = fit::quantile(&rates, 0.5);
    let (get_a, get_b) = fit::line(&get_medians).unwrap_or((get_medians[0].1, 0.0));
    let (put_a, put_slope) = fit::line(&put_medians).unwrap_or((put_medians[0].1, 0.0));
    let upload_ms_per_mib = if rate > 0.0 {
        MIB / 1e6 / rate * 1000.0
    } else {
        0.0
    };
    let put_b = (put_slope - upload_ms_per_mib).max(0.0);
    let sizes = format!(
        "1 KiB, 256 KiB, 1 MiB and 4 MiB objects ({} of 1 KiB, {per_size} of each larger)",
        count(p.samples, 0)
    );
    let get_shape = Shape::of(&small_get).unwrap_or(Shape::from_quantiles(0.0, get_a, get_a));
    cal.delay(
        &format!("s3.{class}.get_first_byte"),
        get_shape,
        small_get.len(),
        format!(
            "quantiles of {} GETs of a 1 KiB object, send -> the answer's headers (the line through the medians by size meets 0 B at {get_a:.3} ms)",
            small_get.len()
        ),
    );
    cal.number(
        &format!("s3.{class}.get_first_byte_per_mib_ms"),
        fit::round(get_b.max(0.0)),
        n,
        format!("the slope of a least-squares line through the median GET first bytes of {sizes}"),
    );
    cal.number(
        &format!("s3.{class}.connection_download_mb_s"),
        fit::round(rate),
        rates.len(),
        format!(
            "the median of {} GETs' body rates (4 MiB objects: size / time from the headers to the last byte), one connection each",
            rates.len()
        ),
    );
    cal.number(
        &format!("s3.{class}.connection_upload_mb_s"),
        fit::round(rate),
        rates.len(),
        "taken as the download's rate: a client cannot see when its PUT's body finished arriving, so the upload and the PUT's first byte are split by assuming one connection carries the same rate both ways".into(),
    );
    let put_shape = Shape::of(&small_put).unwrap_or(Shape::from_quantiles(0.0, put_a, put_a));
    cal.delay(
        &format!("s3.{class}.put_first_byte"),
        put_shape,
        small_put.len(),
        format!(
            "quantiles of {} PUTs of a 1 KiB object, send -> answer (its upload is under 0.1 ms at the measured rate)",
            small_put.len()
        ),
    );
    cal.number(
        &format!("s3.{class}.put_first_byte_per_mib_ms"),
        fit::round(put_b),
        n,
        format!(
            "the slope of a least-squares line through the median PUT times of {sizes}, {put_slope:.3} ms/MiB, less the upload at the download's rate ({upload_ms_per_mib:.3} ms/MiB): the split assumes the same rate both ways"
        ),
    );
    if class == "express" {
        let (rtt, failed) = round_trips(p, p.samples, f64::INFINITY, |_| {
            client.create_session().bucket(bucket).send()
        })
        .await;
        match Shape::of(&rtt) {
            Some(s) => cal.delay(
                "s3.create_session",
                s,
                rtt.len(),
                format!("quantiles of {} CreateSession round trips", rtt.len()),
            ),
            None => cal.left.push(format!(
                "s3.create_session: every CreateSession failed ({failed})"
            )),
        }
    }
    Ok(())
}
