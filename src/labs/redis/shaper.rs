//! The replication link's shaper: an in-process TCP proxy between a replica and its primary
//! (or between latlab's clients and a server) that delays every chunk by the link's one-way
//! latency, paces it to the link's bandwidth, and carries nothing while a partition is on.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use super::local::LinkProfile;
use latlab_core::shaping::pacing_bucket;

/// Bytes each way the shaper carried, and its current settings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShaperStats {
    pub link: String,
    pub latency_ms: f64,
    pub bandwidth: f64,
    pub bytes_to_replica: u64,
    pub bytes_to_primary: u64,
}

/// An in-process TCP proxy between the replica and the primary that delays every chunk by the
/// link's one-way latency and paces bytes to its bandwidth, each direction on its own.
pub struct Shaper {
    link: Mutex<LinkProfile>,
    stats: Mutex<ShaperStats>,
    /// Until then the link carries nothing: bytes wait, new connections wait (a partition shorter
    /// than TCP's and Redis's timeouts, as a network partition looks to both ends).
    partitioned_until: Mutex<Option<Instant>>,
}

impl Shaper {
    pub(super) fn new(link: LinkProfile) -> Shaper {
        Shaper {
            stats: Mutex::new(ShaperStats::default()),
            link: Mutex::new(link),
            partitioned_until: Mutex::new(None),
        }
    }

    /// A shaper on an ephemeral port in front of `upstream_port`.
    pub(super) async fn start(
        link: LinkProfile,
        upstream_port: u16,
    ) -> anyhow::Result<(Arc<Shaper>, u16, JoinHandle<()>)> {
        let shaper = Arc::new(Shaper::new(link));
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .context("cannot bind a link shaper")?;
        let port = listener.local_addr()?.port();
        let task = tokio::spawn(
            shaper
                .clone()
                .serve(listener, SocketAddr::from(([127, 0, 0, 1], upstream_port))),
        );
        Ok((shaper, port, task))
    }

    pub fn link(&self) -> LinkProfile {
        self.link.lock().clone()
    }

    /// Changes the link for bytes from now on (connections stay up).
    pub fn set_link(&self, link: LinkProfile) {
        *self.link.lock() = link;
    }

    /// Carries nothing for `d` from now.
    pub fn partition(&self, d: Duration) {
        *self.partitioned_until.lock() = Some(Instant::now() + d);
    }

    /// Waits out a partition, if one is on.
    async fn wait_partition(&self) {
        loop {
            let until = *self.partitioned_until.lock();
            match until {
                Some(t) if t > Instant::now() => latlab_core::shaping::sleep_until(t).await,
                _ => return,
            }
        }
    }

    pub fn stats(&self) -> ShaperStats {
        let link = self.link();
        ShaperStats {
            link: link.name,
            latency_ms: link.latency_ms,
            bandwidth: link.bandwidth,
            ..self.stats.lock().clone()
        }
    }

    async fn serve(self: Arc<Self>, listener: TcpListener, upstream: SocketAddr) {
        loop {
            let Ok((client, _)) = listener.accept().await else {
                continue;
            };
            let this = self.clone();
            tokio::spawn(async move {
                this.wait_partition().await;
                let Ok(server) = TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let (cr, cw) = client.into_split();
                let (sr, sw) = server.into_split();
                let a = tokio::spawn(this.clone().pipe(sr, cw, true));
                let b = tokio::spawn(this.pipe(cr, sw, false));
                let _ = tokio::join!(a, b);
            });
        }
    }

    /// Copies one direction: reads chunks, releases each after the latency, paced by bandwidth.
    async fn pipe(
        self: Arc<Self>,
        mut from: tokio::net::tcp::OwnedReadHalf,
        mut to: tokio::net::tcp::OwnedWriteHalf,
        to_replica: bool,
    ) {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<(Instant, Vec<u8>)>(256);
        let this = self.clone();
        let writer = tokio::spawn(async move {
            while let Some((due, chunk)) = rx.recv().await {
                latlab_core::shaping::sleep_until(due).await;
                this.wait_partition().await;
                if to.write_all(&chunk).await.is_err() {
                    return;
                }
            }
        });
        let mut buf = vec![0u8; 64 * 1024];
        let mut pace: Option<(f64, latlab_core::shaping::Bucket)> = None;
        let mut queue_end = Instant::now();
        loop {
            let n = match from.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let link = self.link();
            // Bandwidth: a chunk leaves when the link has carried the bytes before it.
            let now = Instant::now();
            let mut release = now;
            if link.bandwidth > 0.0 {
                if pace
                    .as_ref()
                    .is_none_or(|(rate, _)| *rate != link.bandwidth)
                {
                    pace = Some((link.bandwidth, pacing_bucket(link.bandwidth)));
                }
                let (_, bucket) = pace.as_mut().expect("set above");
                bucket.take(now, n as u64);
                release = now + bucket.wait_for(now, 0);
            }
            let due = (release + link.sample()).max(queue_end);
            queue_end = due;
            {
                let mut s = self.stats.lock();
                if to_replica {
                    s.bytes_to_replica += n as u64;
                } else {
                    s.bytes_to_primary += n as u64;
                }
            }
            if tx.send((due, buf[..n].to_vec())).await.is_err() {
                break;
            }
            // Back-pressure: never read far ahead of what the link has let through.
            let ahead = queue_end.saturating_duration_since(Instant::now());
            if ahead > Duration::from_millis(5) {
                tokio::time::sleep(ahead - Duration::from_millis(5)).await;
            }
        }
        drop(tx);
        let _ = writer.await;
    }
}
