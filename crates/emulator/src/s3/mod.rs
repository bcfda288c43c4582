//! The S3 emulator: path-style REST as aws-sdk-s3 sends it, for general purpose buckets (S3
//! Standard) and directory buckets (`name--azid--x-s3`, S3 Express One Zone, with CreateSession
//! and session tokens). Each storage class has its own first-byte latency, per-connection bandwidth
//! and request-rate limits from the latency profile; past the rate limits requests answer 503
//! SlowDown. One file per group: `ops.rs` (the operations), `body.rs` (aws-chunked, checksums,
//! bandwidth), `store.rs` (memory and spill files), `xml.rs`, `error.rs`.

pub mod body;
pub mod error;
pub mod limits;
pub mod ops;
pub mod profile;
pub mod store;
pub mod xml;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};
use serde::{Deserialize, Serialize};

use crate::service::{Answer, Cx, Service};
use crate::time::ServiceClock;
use latlab_core::shaping::RateWindow;
use latlab_core::shaping::{Bucket as RateBucket, CallRate};
use limits::S3Limits;
use profile::{S3ClassProfile, S3Profile};
use store::{Storage, Stored};

pub use latlab_core::services::s3::{Class, Op, is_directory_bucket};

/// One object: its parts in order (one for a plain PUT).
pub struct Object {
    pub parts: Vec<Arc<Stored>>,
    pub size: u64,
    pub etag: String,
    /// Full-object checksums (header name, base64), for objects written in one PUT.
    pub checksums: Vec<(String, String)>,
    pub content_type: String,
    pub last_modified_ms: i64,
}

pub struct Part {
    pub stored: Arc<Stored>,
    pub etag: String,
    pub checksums: Vec<(String, String)>,
    pub last_modified_ms: i64,
}

pub struct Upload {
    pub key: String,
    pub parts: BTreeMap<u32, Part>,
    pub content_type: String,
    pub initiated_ms: i64,
}

pub struct BucketState {
    pub name: String,
    pub class: Class,
    pub created_ms: i64,
    pub objects: RwLock<BTreeMap<String, Arc<Object>>>,
    pub uploads: Mutex<HashMap<String, Upload>>,
}

pub struct Session {
    pub bucket: String,
    pub expires: Instant,
    pub expires_ms: i64,
}

/// Requests per operation and storage class, and the ones refused with SlowDown.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct S3Counts {
    pub requests: u64,
    pub slow_downs: u64,
    pub errors: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct S3StatsSnapshot {
    /// (class, operation) -> counts.
    pub operations: Vec<(Class, String, S3Counts)>,
    pub create_sessions: u64,
    pub stored_bytes: u64,
    pub memory_bytes: u64,
}

pub struct S3 {
    pub limits: S3Limits,
    profile: RwLock<Arc<S3Profile>>,
    buckets: RwLock<BTreeMap<String, Arc<BucketState>>>,
    sessions: Mutex<HashMap<String, Session>>,
    pub storage: Arc<Storage>,
    /// Shared pacing: per (class, upload?) the class's aggregate, and the NIC; None = unlimited.
    shared: RwLock<Shared>,
    /// Per (bucket, prefix or "" for directory buckets, is-write) request-rate buckets.
    rates: Mutex<HashMap<(String, String, bool), CallRate>>,
    stats: Mutex<BTreeMap<(Class, &'static str), S3Counts>>,
    create_sessions: Mutex<u64>,
    ids: Mutex<u64>,
    /// The service's clock for its rules (request rates, session expiry); bodies are paced on
    /// real time.
    pub clock: super::time::ServiceClock,
}

/// Pacing budgets every connection of a kind shares.
struct Shared {
    aggregate: HashMap<(Class, bool), Arc<Mutex<RateBucket>>>,
    nic: Option<Arc<Mutex<RateBucket>>>,
}

impl Shared {
    fn of(p: &S3Profile) -> Shared {
        let mut aggregate = HashMap::new();
        for (class, cp) in [
            (Class::Standard, &p.standard),
            (Class::ExpressOneZone, &p.express),
        ] {
            for (upload, rate) in [(true, cp.aggregate_upload), (false, cp.aggregate_download)] {
                if rate > 0.0 {
                    aggregate.insert(
                        (class, upload),
                        Arc::new(Mutex::new(latlab_core::shaping::pacing_bucket(rate))),
                    );
                }
            }
        }
        let nic = (p.nic_bandwidth > 0.0).then(|| {
            Arc::new(Mutex::new(latlab_core::shaping::pacing_bucket(
                p.nic_bandwidth,
            )))
        });
        Shared { aggregate, nic }
    }
}

/// Distinct prefixes tracked for rate limits at most; the least recent are forgotten past it.
const MAX_RATE_KEYS: usize = 10_000;

impl S3 {
    pub fn new(limits: S3Limits, profile: S3Profile) -> S3 {
        S3 {
            storage: Storage::new(limits.memory_bytes, limits.max_total_bytes),
            limits,
            shared: RwLock::new(Shared::of(&profile)),
            profile: RwLock::new(Arc::new(profile)),
            buckets: RwLock::new(BTreeMap::new()),
            sessions: Mutex::new(HashMap::new()),
            rates: Mutex::new(HashMap::new()),
            stats: Mutex::new(BTreeMap::new()),
            create_sessions: Mutex::new(0),
            ids: Mutex::new(0),
            clock: Default::default(),
        }
    }

    pub fn profile(&self) -> Arc<S3Profile> {
        self.profile.read().clone()
    }

    pub fn set_profile(&self, profile: S3Profile) {
        *self.shared.write() = Shared::of(&profile);
        *self.profile.write() = Arc::new(profile);
    }

    fn class_profile(&self, class: Class) -> S3ClassProfile {
        let p = self.profile();
        match class {
            Class::Standard => p.standard.clone(),
            Class::ExpressOneZone => p.express.clone(),
        }
    }

    /// The pacing of one body: the connection's bandwidth, then the class's aggregate and the NIC.
    fn shaper(&self, class: Class, upload: bool) -> body::Shaper {
        let p = self.class_profile(class);
        let conn = if upload {
            p.connection_upload
        } else {
            p.connection_download
        };
        let shared = self.shared.read();
        let mut buckets = Vec::new();
        if let Some(b) = shared.aggregate.get(&(class, upload)) {
            buckets.push(b.clone());
        }
        if let Some(b) = &shared.nic {
            buckets.push(b.clone());
        }
        body::Shaper::new(conn, buckets)
    }

    fn next_id(&self) -> u64 {
        let mut id = self.ids.lock();
        *id += 1;
        *id
    }

    fn count(&self, class: Class, op: &'static str, f: impl FnOnce(&mut S3Counts)) {
        let mut stats = self.stats.lock();
        f(stats.entry((class, op)).or_default());
    }

    pub fn stats(&self) -> S3StatsSnapshot {
        let operations = self
            .stats
            .lock()
            .iter()
            .map(|((c, op), counts)| (*c, op.to_string(), counts.clone()))
            .collect();
        let create_sessions = *self.create_sessions.lock();
        S3StatsSnapshot {
            operations,
            create_sessions,
            stored_bytes: self.storage.total(),
            memory_bytes: self.storage.memory(),
        }
    }

    /// Admits a request under its storage class's rate limit, or refuses it with SlowDown.
    fn admit(&self, bucket: &BucketState, key: &str, write: bool) -> bool {
        let (scope, per_sec) = match bucket.class {
            // Standard: per prefix (the key up to its last '/').
            Class::Standard => (
                key.rfind('/').map_or("", |i| &key[..i]).to_string(),
                if write {
                    self.limits.standard_writes_per_sec
                } else {
                    self.limits.standard_reads_per_sec
                },
            ),
            Class::ExpressOneZone => (
                String::new(),
                if write {
                    self.limits.express_writes_per_sec
                } else {
                    self.limits.express_reads_per_sec
                },
            ),
        };
        let mut rates = self.rates.lock();
        if rates.len() >= MAX_RATE_KEYS
            && !rates.contains_key(&(bucket.name.clone(), scope.clone(), write))
        {
            rates.clear();
        }
        rates
            .entry((bucket.name.clone(), scope, write))
            .or_insert_with(|| CallRate::new(RateWindow::TokenBucket, per_sec))
            .try_admit(self.clock.now())
    }

    fn session_duration(&self) -> Duration {
        self.limits.session_duration
    }
}

impl Service for S3 {
    const NAME: &'static str = "s3";
    const LABEL: &'static str = "S3";

    type Limits = S3Limits;
    type Profile = S3Profile;

    fn new(limits: S3Limits, profile: S3Profile) -> S3 {
        S3::new(limits, profile)
    }

    /// S3's REST names no operation in a header and posts no form: every request that is
    /// neither a JSON nor a query protocol's is S3's.
    fn claims(request: &crate::service::Claim) -> bool {
        request.target.is_none() && !request.query_protocol
    }

    fn serve<'a>(
        self: &'a Arc<Self>,
        cx: Cx<'a>,
        req: http::Request<hyper::body::Incoming>,
    ) -> Answer<'a> {
        Box::pin(self.handle(req, cx))
    }

    fn operations() -> &'static [&'static str] {
        Op::NAMES
    }

    fn set_profile(&self, profile: S3Profile) {
        S3::set_profile(self, profile)
    }

    fn clock(&self) -> &ServiceClock {
        &self.clock
    }

    fn stats_document(&self) -> serde_json::Value {
        serde_json::to_value(self.stats()).unwrap_or_default()
    }

    /// `create_sessions`: the CreateSession calls answered.
    fn count(&self, key: &str) -> Option<u64> {
        (key == "create_sessions").then(|| self.stats().create_sessions)
    }
}
