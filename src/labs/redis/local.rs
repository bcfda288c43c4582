//! Redis for the lab: a real `redis-server` primary and replica on ephemeral 127.0.0.1 ports (no
//! persistence, temporary directories), the replica reaching the primary through an in-process link
//! shaper that adds latency and caps bandwidth. The servers are stopped when this is dropped, and
//! die with latlab if it is killed (they are told to, by the kernel, when their parent goes).

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

use latlab_core::shaping::Dist;

/// A link profile for the replica's connection to the primary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkProfile {
    pub name: String,
    /// One-way delay added to every chunk, each direction.
    pub latency_ms: f64,
    /// Bandwidth cap each direction in bytes/s (0 = none).
    pub bandwidth: f64,
    /// The one-way delay's spread, sampled per chunk, when a latency profile gives the link's
    /// delay ([`LinkProfile::with_delay`]); `latency_ms` is then its median. None: fixed.
    #[serde(skip)]
    pub delay: Option<Dist>,
}

/// The built-in link profiles, by name.
pub const LINKS: &[&str] = &["loopback", "same-az", "cross-az", "t3-micro"];

/// The names a latency profile's links go by for the Redis lab's own servers (`[links]`,
/// written by `latlab calibrate`): the replica's link to the primary, and latlab's clients'.
pub const REPLICATION_LINK: &str = "redis-replication";
pub const CLIENT_LINK: &str = "redis-client";

impl LinkProfile {
    pub fn resolve(name: &str) -> anyhow::Result<LinkProfile> {
        let (latency_ms, bandwidth) = match name {
            // Nothing added.
            "loopback" => (0.0, 0.0),
            // Same availability zone: half of a measured 0.25 ms round trip, 10 Gbps.
            "same-az" => (0.125, 1.25e9),
            // Across zones in a region: half of a measured 0.9 ms round trip, 5 Gbps.
            "cross-az" => (0.45, 6.25e8),
            // A cache.t3.micro replica link: cross-AZ and its documented 5 Gbps burst (see
            // `provenance`: chosen after the seed's 50 MB row).
            "t3-micro" => (0.5, 6.25e8),
            other => return LinkProfile::custom(other),
        };
        Ok(LinkProfile {
            name: name.into(),
            latency_ms,
            bandwidth,
            delay: None,
        })
    }

    /// The link with a latency profile's one-way delay (`links.NAME` of profile `profile`) in
    /// place of its own; its bandwidth stays.
    pub fn with_delay(self, delay: Dist, profile: &str) -> LinkProfile {
        LinkProfile {
            name: format!("{} delayed as profile {profile}", self.name),
            latency_ms: delay.median_ms(),
            delay: Some(delay),
            ..self
        }
    }

    /// One chunk's one-way delay.
    pub fn sample(&self) -> Duration {
        match &self.delay {
            Some(d) => d.sample(),
            None => Dist::fixed_ms(self.latency_ms).sample(),
        }
    }
}

impl LinkProfile {
    /// Where the profile's figures come from.
    pub fn provenance(&self) -> latlab_core::provenance::Provenance {
        use latlab_core::provenance::{Provenance, Source};
        match self.name.as_str() {
            "loopback" => Provenance::new(Source::Nothing, "nothing added"),
            "same-az" => Provenance::new(
                Source::Measurement,
                "two hosts in one zone: 0.125 ms one way, half of the 0.25-0.26 ms round trip \
                 published EC2 pings measure in one zone (orensol.com, 2009, us-east-1: 0.259 \
                 and 0.263 ms averages; xkyle.com, best of 50 pings: ~0.250 ms); 10 Gbps assumed",
            ),
            "cross-az" => Provenance::new(
                Source::Measurement,
                "across zones of a region: 0.45 ms one way, half of the ~0.9 ms round trip \
                 published EC2 pings measure (orensol.com, 2009, us-east-1: 0.94-1.13 ms \
                 averages; Lukas Liesis, 2022, eu-west-1: 0.82-0.83 ms; AWS itself says only \
                 'single-digit millisecond'); 5 Gbps assumed",
            ),
            "t3-micro" => Provenance::seed(
                "cache.t3.micro's documented network performance is 'up to 5 Gigabit' (625 MB/s), \
                 with 0.5 ms one way across zones assumed; the burst rather than a lower baseline \
                 was chosen after the seed's 50 MB value reached the replica in ~100 ms",
                &["redis/average_lag/50 MB value/new_clients"],
            ),
            _ => Provenance::new(Source::User, "given as a latency and bandwidth by the user"),
        }
    }

    /// The profile in a few words: `t3-micro (0.5 ms one way, 625 MB/s)`.
    pub fn describe(&self) -> String {
        format!(
            "{} one way, {}",
            self.delay
                .as_ref()
                .map_or_else(|| format!("{} ms", self.latency_ms), |d| d.describe()),
            if self.bandwidth > 0.0 {
                format!(
                    "{}/s",
                    latlab_core::units::format_bytes(self.bandwidth as u64)
                )
            } else {
                "unlimited".into()
            }
        )
    }

    /// `5ms` (a one-way latency) or `5ms/100MB` (and a bandwidth per second).
    fn custom(text: &str) -> anyhow::Result<LinkProfile> {
        let bad = || {
            anyhow::anyhow!(
                "unknown link profile '{text}': valid names are {}, or a latency and optional bandwidth such as 5ms or 2ms/100MB",
                LINKS.join(", ")
            )
        };
        let (lat, bw) = match text.split_once('/') {
            Some((l, b)) => (l, Some(b)),
            None => (text, None),
        };
        let latency = latlab_core::units::parse_duration(lat).map_err(|_| bad())?;
        let bandwidth = match bw {
            Some(b) => latlab_core::units::parse_bytes(b).map_err(|_| bad())? as f64,
            None => 0.0,
        };
        Ok(LinkProfile {
            name: text.into(),
            latency_ms: latency.as_secs_f64() * 1000.0,
            bandwidth,
            delay: None,
        })
    }
}

/// A child process killed (and reaped) on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free ephemeral port on 127.0.0.1 (the OS picks it; a race with another process is possible
/// but retried by the caller).
fn free_port() -> anyhow::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")
        .context("cannot find a free port on 127.0.0.1")?;
    Ok(l.local_addr()?.port())
}

/// Where `redis-server` is, or a message saying how to get it.
pub fn redis_server_binary() -> anyhow::Result<std::path::PathBuf> {
    let candidates = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("redis-server"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    candidates.into_iter().find(|p| p.is_file()).context(
        "redis-server is not installed: the Redis lab runs a real primary and replica (install it with `sudo apt-get install -y redis-server`, or point latlab at a Redis with --redis-primary and --redis-replica)",
    )
}

/// `DEBUG` is refused by default since Redis 7; latlab's own servers allow it from 127.0.0.1 (the
/// `redis.debug-sleep` fault). Older servers allow it already and do not know the option.
fn debug_command_args(binary: &std::path::Path) -> Vec<&'static str> {
    let version = Command::new(binary)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let major = version
        .split("v=")
        .nth(1)
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse::<u32>().ok())
        .unwrap_or(0);
    if major >= 7 {
        vec!["--enable-debug-command", "local"]
    } else {
        Vec::new()
    }
}

fn spawn(
    binary: &std::path::Path,
    dir: &std::path::Path,
    port: u16,
    replica_of: Option<u16>,
) -> anyhow::Result<Server> {
    let mut cmd = Command::new(binary);
    cmd.arg("--port")
        .arg(port.to_string())
        .args([
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--protected-mode",
            "yes",
        ])
        .arg("--dir")
        .arg(dir)
        .args(debug_command_args(binary))
        .args(["--daemonize", "no", "--logfile", ""])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(p) = replica_of {
        cmd.args(["--replicaof", "127.0.0.1", &p.to_string()]);
    }
    // A process group of its own: a terminal's Ctrl-C (SIGINT to the foreground group) reaches
    // latlab alone, which still needs the servers to delete its keys before it ends.
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    #[cfg(target_os = "linux")]
    unsafe {
        use std::os::unix::process::CommandExt;
        // Die with latlab, however it ends (even SIGKILL): the kernel sends SIGKILL to the server
        // when the thread that started it exits.
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    Ok(Server { child, port })
}

pub use super::shaper::{Shaper, ShaperStats};

/// The running pair.
pub struct LocalRedis {
    primary: Server,
    /// Replaced when a fault restarts it.
    replica: Mutex<Server>,
    replica_port: u16,
    binary: std::path::PathBuf,
    _dir: tempfile::TempDir,
    replica_dir: std::path::PathBuf,
    shaper_port: u16,
    /// The replication link (replica -> primary).
    pub shaper: Arc<Shaper>,
    /// The clients' links, when they have one: (primary port, replica port) of the proxies.
    client_ports: Option<(u16, u16)>,
    /// The clients' shapers (to the primary, to the replica), when they have a link.
    pub client_shapers: Option<(Arc<Shaper>, Arc<Shaper>)>,
    tasks: Vec<JoinHandle<()>>,
}

impl LocalRedis {
    /// Where latlab's clients reach the primary (through the client link, if any).
    pub fn primary_url(&self) -> String {
        format!(
            "redis://127.0.0.1:{}/",
            self.client_ports.map_or(self.primary.port, |p| p.0)
        )
    }

    pub fn replica_url(&self) -> String {
        format!(
            "redis://127.0.0.1:{}/",
            self.client_ports.map_or(self.replica_port, |p| p.1)
        )
    }

    /// The process ids of the servers (tests check they are gone).
    pub fn pids(&self) -> (u32, u32) {
        (self.primary.child.id(), self.replica.lock().child.id())
    }

    /// Kills the replica's redis-server and starts a new one on the same port, a replica of the
    /// primary through the same link; returns the old and new process ids once it answers PING.
    /// With no persistence it starts empty, so a full resync follows.
    pub async fn restart_replica(&self) -> anyhow::Result<(u32, u32)> {
        let old = {
            let mut r = self.replica.lock();
            let pid = r.child.id();
            let _ = r.child.kill();
            let _ = r.child.wait();
            pid
        };
        // The port was just freed by the process that held it; another may take it meanwhile.
        let mut tries = 0;
        let server = loop {
            let server = spawn(
                &self.binary,
                &self.replica_dir,
                self.replica_port,
                Some(self.shaper_port),
            )?;
            match wait_ping(self.replica_port, Duration::from_secs(5)).await {
                Ok(()) => break server,
                Err(e) if tries >= 3 => {
                    return Err(e.context("the restarted replica did not answer"));
                }
                Err(_) => tries += 1,
            }
        };
        let new = server.child.id();
        *self.replica.lock() = server;
        Ok((old, new))
    }

    /// Starts a primary, the shaper in front of it, and a replica of it through the shaper; with a
    /// client link, the clients reach both servers through shapers of their own. Returns when the
    /// replica's link is up.
    pub async fn start(link: LinkProfile, client_link: LinkProfile) -> anyhow::Result<LocalRedis> {
        let binary = redis_server_binary()?;
        let dir = tempfile::Builder::new()
            .prefix("latlab-redis-")
            .tempdir()
            .context("cannot create a directory for Redis")?;
        let primary_port = free_port()?;
        let primary = spawn(&binary, dir.path(), primary_port, None)?;
        wait_ping(primary_port, Duration::from_secs(10))
            .await
            .context("the primary redis-server did not start")?;
        let (shaper, shaper_port, task) = Shaper::start(link, primary_port).await?;
        let mut tasks = vec![task];
        let replica_dir = dir.path().join("replica");
        std::fs::create_dir_all(&replica_dir)?;
        let replica = spawn(&binary, &replica_dir, free_port()?, Some(shaper_port))?;
        let replica_port = replica.port;
        // The replica holds its port before anything else here binds one: a shaper's ephemeral
        // port could otherwise be the one the replica was about to take.
        wait_ping(replica_port, Duration::from_secs(10))
            .await
            .context("the replica redis-server did not start")?;
        let (client_ports, client_shapers) =
            if client_link.latency_ms > 0.0 || client_link.bandwidth > 0.0 {
                let (s1, p, t1) = Shaper::start(client_link.clone(), primary_port).await?;
                let (s2, r, t2) = Shaper::start(client_link, replica_port).await?;
                tasks.extend([t1, t2]);
                (Some((p, r)), Some((s1, s2)))
            } else {
                (None, None)
            };
        let redis = LocalRedis {
            primary,
            replica: Mutex::new(replica),
            replica_port,
            binary,
            _dir: dir,
            replica_dir,
            shaper_port,
            shaper,
            client_ports,
            client_shapers,
            tasks,
        };
        wait_link_up(&redis.replica_url(), Duration::from_secs(20)).await?;
        Ok(redis)
    }
}

impl Drop for LocalRedis {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

async fn wait_ping(port: u16, timeout: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)).await {
            let _ = s.write_all(b"PING\r\n").await;
            let mut buf = [0u8; 16];
            if let Ok(Ok(n)) =
                tokio::time::timeout(Duration::from_millis(500), s.read(&mut buf)).await
                && buf[..n].starts_with(b"+PONG")
            {
                return Ok(());
            }
        }
        if Instant::now() > deadline {
            bail!(
                "no answer on 127.0.0.1:{port} within {}s",
                timeout.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until a replica reports `master_link_status:up`. A replica busy with its first sync may
/// not answer within the client's response timeout, or refuse a connection: both are retried
/// until `timeout`, and the error then names the last thing that went wrong.
pub async fn wait_link_up(replica_url: &str, timeout: Duration) -> anyhow::Result<()> {
    let client = redis::Client::open(replica_url)?;
    let deadline = Instant::now() + timeout;
    let mut con = None;
    loop {
        let last = match con.as_mut() {
            None => match client.get_multiplexed_async_connection().await {
                Ok(c) => {
                    con = Some(c);
                    continue;
                }
                Err(e) => format!("cannot connect to the replica: {e}"),
            },
            Some(c) => match redis::cmd("INFO")
                .arg("replication")
                .query_async::<String>(c)
                .await
            {
                Ok(info) if info.contains("master_link_status:up") => return Ok(()),
                Ok(_) => "its master_link_status is not up".to_string(),
                Err(e) => {
                    con = None;
                    format!("INFO replication: {e}")
                }
            },
        };
        if Instant::now() > deadline {
            bail!(
                "the replica's link to the primary did not come up within {}s ({last})",
                timeout.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub use crate::labs::target::redact;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        assert_eq!(
            redact("redis://:secret@host:6379/0"),
            "redis://:***@host:6379/0"
        );
        assert_eq!(
            redact("rediss://user:pw@h:6380"),
            "rediss://user:***@h:6380"
        );
        assert_eq!(redact("redis://token@h"), "redis://***@h");
        assert_eq!(redact("redis://h:6379"), "redis://h:6379");
    }

    #[test]
    fn link_profiles_resolve() {
        assert_eq!(LinkProfile::resolve("cross-az").unwrap().latency_ms, 0.45);
        let e = LinkProfile::resolve("moon").unwrap_err().to_string();
        assert!(e.contains("loopback, same-az, cross-az, t3-micro"), "{e}");
        let c = LinkProfile::resolve("5ms/100MB").unwrap();
        assert_eq!((c.latency_ms, c.bandwidth), (5.0, 1e8));
    }
}
