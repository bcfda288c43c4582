//! Where a command measures (`TargetArgs`: the embedded emulator, an endpoint, real AWS, a Redis
//! pair), how the embedded emulator is shaped (`EmulatorArgs`), and what a run keeps and serves
//! besides its screen or tables (`OutputArgs`).

use super::*;

/// Where to measure: the embedded emulator (default), any endpoint, or real AWS.
#[derive(Args, Debug, Clone, Default)]
pub struct TargetArgs {
    /// Measure this endpoint (LocalStack, `latlab emulate`, any Kinesis-compatible URL) instead of
    /// the embedded emulator; the SDK's credential chain and region apply
    #[arg(long, value_name = "URL", env = "LATLAB_ENDPOINT_URL")]
    pub endpoint_url: Option<String>,
    /// Measure real AWS (the SDK's default endpoints, credentials and region)
    #[arg(long, conflicts_with = "endpoint_url", env = "LATLAB_AWS")]
    pub aws: bool,
    /// Region for --endpoint-url or --aws (default: the SDK's AWS_REGION, else the AWS profile's)
    #[arg(long, value_name = "REGION")]
    pub region: Option<String>,
    /// Each lab's own: the Kinesis lab's stream, the S3 lab's buckets, the Redis lab's pair
    /// (declared in each lab's folder, `labs/X/target.rs`).
    #[command(flatten)]
    pub labs: crate::labs::target::LabTargets,
    #[command(flatten)]
    pub emulator: EmulatorArgs,
}

impl TargetArgs {
    pub fn options(&self) -> TargetOptions {
        TargetOptions {
            endpoint_url: self.endpoint_url.clone(),
            aws: self.aws,
            region: self.region.clone(),
            latency_profile: self.emulator.latency_profile.clone(),
            limits_file: self.emulator.limits.clone(),
            limit_overrides: self.emulator.limit_overrides.clone(),
            lacking: self.emulator.lacking.clone(),
            faults: self.emulator.faults.clone(),
            labs: self.labs.clone(),
            run_id: None,
            role: None,
        }
    }

    pub(super) fn check(&self) -> anyhow::Result<()> {
        let external = self.endpoint_url.is_some() || self.aws;
        if external
            && (self.emulator.latency_profile.is_some()
                || self.emulator.limits.is_some()
                || !self.emulator.limit_overrides.is_empty()
                || !self.emulator.lacking.is_empty())
        {
            anyhow::bail!(
                "--latency-profile, --limits, --limit and --lacking shape the embedded emulator; they do not apply with --endpoint-url or --aws"
            );
        }
        if let Some(url) = &self.endpoint_url {
            crate::aws::check_endpoint_url(url)?;
        }
        self.labs.check(external)?;
        Ok(())
    }
}

#[derive(Args, Debug, Clone, Default)]
pub struct EmulatorArgs {
    /// Latency profile: a built-in name (zero, same-region, seed-tokyo) or a .toml file
    /// (default: zero for `emulate`, the scenario's for the labs)
    #[arg(long, value_name = "NAME|FILE", env = "LATLAB_LATENCY_PROFILE")]
    pub latency_profile: Option<String>,
    /// A TOML file of limits to override (see docs/emulator.md)
    #[arg(long, value_name = "FILE")]
    pub limits: Option<PathBuf>,
    /// Override one limit, e.g. --limit kinesis.subscription_duration=30s (repeatable)
    #[arg(long = "limit", value_name = "KEY=VALUE")]
    pub limit_overrides: Vec<String>,
    /// Answer this operation of an emulated service as an endpoint that lacks it does: HTTP 500,
    /// an HTML page (repeatable; e.g. SubscribeToShard, CreateSession, ReceiveMessage)
    #[arg(long, value_name = "OPERATION")]
    pub lacking: Vec<String>,
    /// Inject a fault: KIND:key=value,... e.g. kinesis.reset-after:operation=PutRecord,every=10s
    /// or s3.slow-down:rate=1% (repeatable; `latlab faults` lists the kinds and keys)
    #[arg(long = "fault", value_name = "KIND:KEY=VALUE,...", value_parser = parse_fault)]
    pub faults: Vec<latlab_core::faults::FaultSpec>,
}

fn parse_fault(text: &str) -> Result<latlab_core::faults::FaultSpec, String> {
    latlab_core::faults::FaultSpec::parse(text)
}

impl EmulatorArgs {
    pub fn config(&self, listen: SocketAddr) -> anyhow::Result<EmulatorConfig> {
        Ok(EmulatorConfig {
            listen,
            limits: Limits::load(self.limits.as_deref(), &self.limit_overrides)?,
            profile: LatencyProfile::resolve(self.latency_profile.as_deref().unwrap_or("zero"))?,
            lacking: self.lacking.clone(),
            faults: self.faults.clone(),
            ..EmulatorConfig::default()
        })
    }
}

/// What a live or headless run keeps and serves besides its screen or tables.
#[derive(Args, Debug, Default)]
pub struct OutputArgs {
    /// Keep the run in DIR (new or empty): the scenario, an HdrHistogram interval log per series
    /// (one interval a second), what the screen showed, every key's command and answer (live),
    /// the faults that fired, and the report
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Upload the recording to s3://BUCKET/PREFIX/HOST-RUNID/ when the run ends (Ctrl-C and
    /// SIGTERM too), on the endpoint of --endpoint-url or --aws; recorded in --record DIR, else
    /// in a temporary directory that is removed once uploaded (kept, and named, if the upload
    /// fails)
    #[arg(long, value_name = "S3URL", env = "LATLAB_RECORD_TO")]
    pub record_to: Option<String>,
    /// This host's name in --record-to's folder, the recording and a merge's lines [default:
    /// the system's host name]
    #[arg(long, value_name = "NAME", env = "LATLAB_HOST_NAME")]
    pub host_name: Option<String>,
    /// Serve the live figures for Prometheus at http://ADDR/metrics (HOST:PORT, or a PORT on
    /// 127.0.0.1; port 0 takes a free one, printed on standard error)
    #[arg(long, value_name = "ADDR")]
    pub metrics_addr: Option<String>,
    /// Price the configuration with this price file instead of the built-in file of the run's
    /// region (prices/REGION.toml; us-east-1's when latlab has none for the region)
    #[arg(long, value_name = "FILE", env = "LATLAB_PRICES")]
    pub prices: Option<PathBuf>,
}

impl OutputArgs {
    /// Everything read and bound before the run starts, so that a bad price file, a port in use
    /// or a recording directory that is not empty stops it here in one line: the prices, the
    /// metrics listener, and the recording's directory made ready (with a copy of the prices).
    pub(super) fn open(
        &self,
    ) -> anyhow::Result<(
        Option<std::sync::Arc<crate::lab_kit::cost::Prices>>,
        Option<crate::run::export::MetricsListener>,
    )> {
        let prices = load_prices(self.prices.as_deref())?;
        if let Some(url) = &self.record_to {
            crate::fleet::s3::S3Url::parse(url).context("--record-to")?;
        }
        if let Some(name) = &self.host_name {
            crate::fleet::check_host_name(name)?;
        }
        let metrics = crate::run::export::open(self.metrics_addr.as_deref())?;
        if let Some(dir) = &self.record {
            crate::record::Recorder::prepare(dir)?;
            crate::record::Recorder::keep_prices(dir, self.prices.as_deref())?;
        }
        Ok((prices, metrics))
    }
}

impl OutputArgs {
    /// This host's name: `--host-name`, else the system's.
    pub fn host(&self) -> String {
        crate::fleet::host_name(self.host_name.as_deref())
    }

    /// The `--record-to` bucket's client, made (and its endpoint and credentials checked) before
    /// the run starts.
    pub(super) async fn uploader(
        &self,
        target: &TargetOptions,
    ) -> anyhow::Result<Option<Uploader>> {
        let Some(text) = &self.record_to else {
            return Ok(None);
        };
        let url = crate::fleet::s3::S3Url::parse(text).context("--record-to")?;
        let client = crate::fleet::s3::client(target)
            .await
            .with_context(|| format!("--record-to {url}"))?;
        Ok(Some(Uploader { url, client }))
    }

    /// Where the run records: `--record DIR`, else (with `--record-to`) a new temporary
    /// directory, which is then the run's to remove once uploaded.
    pub(super) fn record_dir(
        &self,
        host: &str,
        run_id: &str,
    ) -> anyhow::Result<Option<(PathBuf, bool)>> {
        match (&self.record, &self.record_to) {
            (Some(dir), _) => Ok(Some((dir.clone(), false))),
            (None, Some(_)) => {
                let dir = std::env::temp_dir().join(format!("latlab-{host}-{run_id}"));
                crate::record::Recorder::prepare(&dir)?;
                crate::record::Recorder::keep_prices(&dir, self.prices.as_deref())?;
                Ok(Some((dir, true)))
            }
            (None, None) => Ok(None),
        }
    }
}

/// `--record-to`: the bucket and its client.
pub(super) struct Uploader {
    url: crate::fleet::s3::S3Url,
    client: aws_sdk_s3::Client,
}

impl Uploader {
    /// Uploads the recording in `dir` under the host's folder and says where on standard error;
    /// a temporary recording is removed once uploaded. An upload that fails keeps the
    /// recording and says where it is. Returns whether it was uploaded.
    pub(super) async fn upload(
        &self,
        dir: &std::path::Path,
        temporary: bool,
        host: &str,
        run_id: &str,
    ) -> bool {
        let to = self.url.for_run(host, run_id);
        match crate::fleet::s3::upload(&self.client, dir, &to).await {
            Ok(n) => {
                if temporary {
                    let _ = std::fs::remove_dir_all(dir);
                    eprintln!("uploaded the recording to {to} ({n} files)");
                } else {
                    eprintln!(
                        "uploaded the recording to {to} ({n} files); it is kept in {} too",
                        dir.display()
                    );
                }
                true
            }
            Err(e) => {
                eprintln!(
                    "the upload to {to} failed: {e:#}; the recording is kept in {}",
                    dir.display()
                );
                false
            }
        }
    }
}

/// What this host runs of a lab that splits into a producer and consumers.
#[derive(Args, Debug, Clone, Default)]
pub struct RoleArgs {
    /// Run the consumers only, reading what another host's producer (--producer-only) writes to
    /// the shared --stream; its records count as foreign (the scenario key: role = "consumers")
    #[arg(long, conflicts_with = "producer_only")]
    pub no_producer: bool,
    /// Run the producer only, for other hosts' consumers (--no-producer) to read (the scenario
    /// key: role = "producer")
    #[arg(long)]
    pub producer_only: bool,
}

impl RoleArgs {
    pub fn role(&self) -> Option<crate::labs::Role> {
        match (self.no_producer, self.producer_only) {
            (true, _) => Some(crate::labs::Role::Consumers),
            (_, true) => Some(crate::labs::Role::Producer),
            _ => None,
        }
    }
}

/// `--share`: the run, live, for browsers and `latlab attach`.
#[derive(Args, Debug, Clone, Default)]
pub struct ShareArgs {
    /// Share the run live at http://ADDR/ (a browser page, and `latlab attach URL`): HOST:PORT,
    /// or a PORT on 127.0.0.1; with no ADDR, 127.0.0.1 on a free port. The URL, its token
    /// included, is printed on standard error
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:0")]
    pub share: Option<String>,
    /// The token viewers must give (default: 128 random bits); 8 to 256 letters, digits, - _ . ~
    #[arg(
        long,
        value_name = "TOKEN",
        env = "LATLAB_SHARE_TOKEN",
        hide_env_values = true
    )]
    pub share_token: Option<String>,
    /// At most this many viewers at once; past it a viewer is told so (HTTP 503) [default: 16]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub share_viewers: Option<u32>,
    /// Let viewers send the keys that change the experiment (each is said on the status line
    /// and recorded with the viewer's address)
    #[arg(long)]
    pub share_control: bool,
    /// Share on an address other hosts can reach (anyone with the URL sees the run)
    #[arg(long)]
    pub allow_remote: bool,
}

impl ShareArgs {
    /// The share asked for, bound before anything runs, and its URL said on standard error;
    /// None without --share.
    pub fn open(&self) -> anyhow::Result<Option<crate::share::ShareListener>> {
        let Some(addr) = &self.share else {
            for (given, flag) in [
                (self.share_viewers.is_some(), "--share-viewers"),
                (self.share_control, "--share-control"),
                (self.allow_remote, "--allow-remote"),
            ] {
                if given {
                    anyhow::bail!("{flag} is a setting of --share; add --share (or --share ADDR)");
                }
            }
            return Ok(None);
        };
        let listener = crate::share::ShareListener::bind(crate::share::ShareOptions {
            addr: addr.clone(),
            token: self.share_token.clone(),
            viewers: self
                .share_viewers
                .map_or(crate::share::DEFAULT_VIEWERS, |n| n as usize),
            control: self.share_control,
            allow_remote: self.allow_remote,
        })?;
        eprintln!("share: {}", listener.url());
        tracing::info!("sharing the run at http://{}/", listener.addr());
        Ok(Some(listener))
    }
}
