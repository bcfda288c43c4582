//! The local cloud: an HTTP server on 127.0.0.1 that speaks the emulated services' protocols
//! (each service is a folder, listed once in `service.rs`) so that the real AWS SDKs, boto3 and
//! the aws CLI work against it unchanged, enforcing the services' documented limits and adding
//! the delays of a latency profile.
//!
//! `latlab emulate` runs it on its own; every other command embeds it on an ephemeral port.

pub mod dynamodb;
#[cfg(test)]
mod echo_service;
pub mod faults;
mod hosts;
pub mod json_protocol;
pub mod kinesis;
pub mod limits;
pub mod profile;
mod query_protocol;
pub mod s3;
pub mod service;
pub mod sqs;
pub mod sts;
pub mod time;

pub use hosts::Hosts;
pub(crate) use hosts::host_of;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context;
use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::service::service_fn;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use faults::{ConnReset, Injector};
use limits::Limits;
use profile::LatencyProfile;
use service::{Cx, Service, for_each_service};

/// Every response body the emulator sends: whole documents and event streams alike.
pub type Body = BoxBody<Bytes, Infallible>;

/// The largest request body accepted for JSON operations: a 10 MiB PutRecords grows by a third
/// in base64, plus its JSON.
pub(crate) const MAX_JSON_BODY: usize = 16 * 1024 * 1024;

/// Where the stats document is served.
pub const STATS_PATH: &str = "/_latlab/stats";

/// The account every emulated resource belongs to (its ARNs, STS's GetCallerIdentity).
pub const ACCOUNT: &str = "000000000000";

/// How long a client may take to send a request's headers before its connection is closed.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections served at once; more wait in the listen backlog until one closes.
pub const MAX_CONNECTIONS: usize = 4096;

#[derive(Clone, Debug)]
pub struct EmulatorConfig {
    pub listen: SocketAddr,
    pub limits: Limits,
    pub profile: LatencyProfile,
    /// See [`HEADER_TIMEOUT`].
    pub header_timeout: Duration,
    /// See [`MAX_CONNECTIONS`].
    pub max_connections: usize,
    /// Operations (of any service) to answer as an endpoint that lacks them does: HTTP 500 with
    /// an HTML page, no AWS error. For trying latlab against a partial endpoint.
    pub lacking: Vec<String>,
    /// Faults to inject, from the start (more can be added while it runs).
    pub faults: Vec<latlab_core::faults::FaultSpec>,
    /// Where the faults that fire are recorded (a run shares its log with the Redis lab's).
    pub fault_log: Arc<latlab_core::faults::FaultLog>,
    /// Serve HTTPS with this certificate (`--tls-cert/--tls-key`), HTTP/2 by ALPN beside
    /// HTTP/1.1, as AWS's endpoints do; None: plain HTTP/1.1.
    pub tls: Option<latlab_core::http::tls::ServerTls>,
}

impl Default for EmulatorConfig {
    fn default() -> Self {
        EmulatorConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            limits: Limits::default(),
            profile: LatencyProfile::zero(),
            header_timeout: HEADER_TIMEOUT,
            max_connections: MAX_CONNECTIONS,
            lacking: Vec::new(),
            faults: Vec::new(),
            fault_log: Arc::default(),
            tls: None,
        }
    }
}

/// A running emulator. Dropping it stops the server and closes its connections.
pub struct Emulator {
    addr: SocketAddr,
    /// `https` when it serves TLS, else `http`.
    scheme: &'static str,
    hosts: Arc<Hosts>,
    connections: Arc<Connections>,
    services: Arc<Services>,
    injector: Arc<Injector>,
    profile_name: parking_lot::Mutex<String>,
    task: tokio::task::JoinHandle<()>,
}

/// The counts only the emulator sees, by key (`s3.create_sessions`: the CreateSession calls it
/// has answered), kept while the emulator runs.
#[derive(Clone)]
pub struct Counts {
    services: Arc<Services>,
}

impl Counts {
    /// A count by its key (`SERVICE.NAME`); None for a key the emulator does not count.
    pub fn get(&self, key: &str) -> Option<u64> {
        self.services.count(key)
    }
}

struct App {
    services: Arc<Services>,
    lacking: Vec<String>,
    injector: Arc<Injector>,
    hosts: Arc<Hosts>,
}

macro_rules! services {
    ($($field:ident: $module:ident::$ty:ident),+ $(,)?) => {
        /// The running services, one of each.
        struct Services {
            $($field: Arc<crate::$module::$ty>,)+
        }

        impl Services {
            fn new(limits: Limits, profile: &LatencyProfile) -> Services {
                Services {
                    $($field: Arc::new(<crate::$module::$ty as Service>::new(
                        limits.$field,
                        profile.$field.clone(),
                    )),)+
                }
            }

            /// Hands every service what it may ask of the others.
            fn connect(services: &Arc<Services>) {
                let peers: std::sync::Weak<dyn crate::service::Peers> = {
                    let weak = Arc::downgrade(services);
                    weak
                };
                $(Service::connect(&*services.$field, peers.clone());)+
            }

            /// Every service's label and operations, in the registry's order.
            fn operations() -> Vec<(&'static str, &'static [&'static str])> {
                vec![$((
                    <crate::$module::$ty as Service>::LABEL,
                    <crate::$module::$ty as Service>::operations(),
                ),)+]
            }

            /// The service whose request this is answers it.
            async fn serve(&self, cx: Cx<'_>, req: Request<Incoming>) -> Response<Body> {
                let claim = crate::service::Claim::of(&req);
                $(if <crate::$module::$ty as Service>::claims(&claim) {
                    return Service::serve(&self.$field, cx, req).await;
                })+
                let target = claim.target.unwrap_or("").to_string();
                unclaimed(&target)
            }

            fn set_profile(&self, profile: &LatencyProfile) {
                $(Service::set_profile(&*self.$field, profile.$field.clone());)+
            }

            fn clocks(&self) -> Vec<&time::ServiceClock> {
                vec![$(Service::clock(&*self.$field),)+]
            }

            fn stats(&self) -> serde_json::Value {
                let mut doc = serde_json::Map::new();
                $(Service::write_stats(&*self.$field, &mut doc);)+
                serde_json::Value::Object(doc)
            }

            fn count(&self, key: &str) -> Option<u64> {
                let (service, name) = key.split_once('.')?;
                $(if service == <crate::$module::$ty as Service>::NAME {
                    return Service::count(&*self.$field, name);
                })+
                None
            }

            /// The fault's own service acts on it.
            fn on_fault(&self, kind: latlab_core::faults::Kind) -> Option<faults::Changed> {
                $(if kind.service().key() == <crate::$module::$ty as Service>::NAME {
                    return Service::on_fault(&*self.$field, kind);
                })+
                None
            }
        }

        impl crate::service::Peers for Services {
            fn deliver(&self, d: &crate::service::Delivery) -> Result<(), String> {
                $(if let Some(r) = Service::accept(&*self.$field, d) {
                    return r;
                })+
                Err(format!("no emulated service owns {}", d.to))
            }

            fn owns(&self, arn: &str) -> bool {
                false $(|| Service::owns(&*self.$field, arn))+
            }
        }

        impl Emulator {
            $(
                /// The running service, for tests and benches that look inside it.
                pub fn $field(&self) -> &Arc<crate::$module::$ty> {
                    &self.services.$field
                }
            )+
        }
    };
}
for_each_service!(services);

/// `--lacking`'s operations, each one a service answers; an error lists the valid ones.
fn check_lacking(lacking: &[String]) -> anyhow::Result<()> {
    let services = Services::operations();
    for op in lacking {
        if services.iter().any(|(_, ops)| ops.contains(&op.as_str())) {
            continue;
        }
        let mut valid = services.iter().map(|(label, ops)| (label, ops.join(", ")));
        let (first, first_ops) = valid.next().expect("a service");
        let mut msg = format!(
            "--lacking {op}: not {} {first} operation the emulator answers; valid: {first_ops}",
            article(first)
        );
        for (label, ops) in valid {
            msg.push_str(&format!("; or {} {label} operation: {ops}", article(label)));
        }
        anyhow::bail!(msg);
    }
    Ok(())
}

/// `a` or `an` before a service's name as it is said (`an S3`, `an SQS`, `a Kinesis`).
fn article(label: &str) -> &'static str {
    let acronym = label
        .chars()
        .skip(1)
        .any(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    let first = label.chars().next().unwrap_or('x').to_ascii_uppercase();
    let vowel_sound = if acronym {
        "AEFHILMNORSX".contains(first)
    } else {
        "AEIOU".contains(first)
    };
    if vowel_sound { "an" } else { "a" }
}

/// The server's connections: a permit each (at most `max`), how many are open, and the most
/// open at once.
struct Connections {
    permits: Arc<Semaphore>,
    open: AtomicUsize,
    peak: AtomicUsize,
}

/// One open connection, counted while it lives.
struct Open(Arc<Connections>);

impl Open {
    fn new(c: &Arc<Connections>) -> Open {
        let now = c.open.fetch_add(1, Ordering::Relaxed) + 1;
        c.peak.fetch_max(now, Ordering::Relaxed);
        Open(c.clone())
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Emulator {
    /// Binds the listen address and starts serving on the current tokio runtime.
    pub async fn start(config: EmulatorConfig) -> anyhow::Result<Emulator> {
        let listener = TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("cannot listen on {}", config.listen))?;
        let addr = listener.local_addr()?;
        check_lacking(&config.lacking)?;
        let services = Arc::new(Services::new(config.limits, &config.profile));
        Services::connect(&services);
        let act = {
            let services = Arc::downgrade(&services);
            Box::new(move |kind| services.upgrade()?.on_fault(kind))
        };
        let injector = Arc::new(Injector::new(config.fault_log.clone(), act));
        for spec in &config.faults {
            injector.add(spec.clone())?;
        }
        let hosts = Arc::new(Hosts::default());
        let app = Arc::new(App {
            services: services.clone(),
            lacking: config.lacking.clone(),
            injector: injector.clone(),
            hosts: hosts.clone(),
        });
        let max = config.max_connections.max(1);
        let connections = Arc::new(Connections {
            permits: Arc::new(Semaphore::new(max)),
            open: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        });
        let scheme = if config.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let task = tokio::spawn(serve(
            listener,
            app,
            connections.clone(),
            config.header_timeout,
            config.tls,
        ));
        Ok(Emulator {
            addr,
            scheme,
            hosts,
            connections,
            services,
            injector,
            profile_name: parking_lot::Mutex::new(config.profile.name),
            task,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint URL to give an SDK: an IP literal, never `localhost` (S3 Express would turn
    /// `localhost` into `bucket.localhost`).
    pub fn endpoint_url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    pub fn profile_name(&self) -> String {
        self.profile_name.lock().clone()
    }

    /// Applies another latency profile to every service from the next request on (requests in
    /// flight finish under the old one).
    pub fn set_profile(&self, profile: &LatencyProfile) {
        self.services.set_profile(profile);
        *self.profile_name.lock() = profile.name.clone();
    }

    /// A handle on the counts only the emulator sees, by key, for the labs measuring it.
    pub fn counts(&self) -> Counts {
        Counts {
            services: self.services.clone(),
        }
    }

    /// The faults set on it, and the log of those that fired.
    pub fn faults(&self) -> &Arc<Injector> {
        &self.injector
    }

    /// Moves the emulated services' clock forward, as if `by` had passed: iterators age,
    /// subscriptions and S3 Express sessions run out, records pass their retention, rate limits
    /// refill. For tests of time-based limits at their documented values.
    pub fn advance_clock(&self, by: std::time::Duration) {
        for clock in self.services.clocks() {
            clock.advance(by);
        }
    }

    /// Stops the services' clock following real time: from then on only
    /// [`Emulator::advance_clock`] moves it. For tests whose margins are shorter than a busy
    /// machine's pauses.
    pub fn freeze_clock(&self) {
        for clock in self.services.clocks() {
            clock.freeze();
        }
    }

    /// The requests it has answered, by the host they were sent to.
    pub fn hosts(&self) -> &Hosts {
        &self.hosts
    }

    /// Connections open now, and the most that were open at once.
    pub fn connections(&self) -> (usize, usize) {
        (
            self.connections.open.load(Ordering::Relaxed),
            self.connections.peak.load(Ordering::Relaxed),
        )
    }

    /// Serves until the server task ends (it runs until the process does).
    pub async fn wait(mut self) -> anyhow::Result<()> {
        (&mut self.task)
            .await
            .context("the emulator's server task failed")
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Accepts connections, at most as many at once as `connections` has permits (the rest wait in
/// the listen backlog), and serves each over HTTP/1.1 (`crate::serve`). A client that has not
/// sent a request's headers within `header_timeout` is disconnected; one that half-closes after
/// its request still gets the answer: every request read whole is answered, an event stream
/// until it ends, then the connection closes (without it, hyper drops the connection at the read
/// side's end while an answer is still delayed by the latency profile).
async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    connections: Arc<Connections>,
    header_timeout: Duration,
    tls: Option<latlab_core::http::tls::ServerTls>,
) {
    let serve = latlab_core::http::Serve {
        half_close: true,
        permits: connections.permits.clone(),
        tls,
        ..latlab_core::http::Serve::new("emulator", 1, header_timeout)
    };
    serve
        .run(listener, |socket, _peer| {
            let open = Open::new(&connections);
            let _ = socket.set_nodelay(true);
            let conn = Arc::new(ConnReset::of(socket));
            let app = app.clone();
            let service = service_fn(move |req| route(app.clone(), conn.clone(), req));
            (service, open)
        })
        .await
}

async fn route(
    app: Arc<App>,
    conn: Arc<ConnReset>,
    req: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    if req.method() == Method::GET && req.uri().path() == STATS_PATH {
        let mut doc = app.services.stats();
        if let Some(map) = doc.as_object_mut() {
            let hosts: serde_json::Map<String, serde_json::Value> = app
                .hosts
                .counts()
                .into_iter()
                .map(|(h, n)| (h, n.into()))
                .collect();
            map.insert("hosts".into(), hosts.into());
            let versions: serde_json::Map<String, serde_json::Value> = app
                .hosts
                .versions()
                .into_iter()
                .map(|(v, n)| (v, n.into()))
                .collect();
            map.insert("http_versions".into(), versions.into());
        }
        let body = serde_json::to_vec_pretty(&doc).unwrap_or_default();
        return Ok(respond(
            StatusCode::OK,
            "application/json",
            Bytes::from(body),
        ));
    }
    app.hosts.count(host_of(&req), req.version());
    let cx = Cx {
        injector: &app.injector,
        conn: &conn,
        lacking: &app.lacking,
    };
    Ok(app.services.serve(cx, req).await)
}

/// What a request whose `x-amz-target` no service claims gets: the JSON protocols' answer to an
/// operation they do not know.
fn unclaimed(target: &str) -> Response<Body> {
    let body = serde_json::json!({
        "__type": "UnknownOperationException",
        "message": format!("{target} is not an operation the emulator answers"),
    });
    respond(
        StatusCode::BAD_REQUEST,
        "application/x-amz-json-1.1",
        Bytes::from(body.to_string()),
    )
}

/// What an endpoint that lacks an operation answers: HTTP 500 with an HTML page, no AWS error.
pub fn lacking_answer() -> Response<Body> {
    respond(
        StatusCode::INTERNAL_SERVER_ERROR,
        "text/html",
        Bytes::from_static(
            b"<html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1></body></html>",
        ),
    )
}

/// A whole answer: its status, content type, a request id and the body.
pub(crate) fn respond(
    status: StatusCode,
    content_type: &'static str,
    body: Bytes,
) -> Response<Body> {
    let mut resp = Response::new(Full::new(body).boxed());
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert("content-type", content_type.parse().expect("valid header"));
    h.insert(
        "x-amzn-requestid",
        request_id().parse().expect("valid header"),
    );
    resp
}

/// A request id in the service's UUID form.
pub(crate) fn request_id() -> String {
    let v: u128 = rand::random();
    let h = format!("{v:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// The region of a SigV4 `Authorization` header (`Credential=AKID/DATE/REGION/SERVICE/aws4_request`).
pub(crate) fn signing_region(headers: &HeaderMap) -> Option<String> {
    let auth = headers.get("authorization")?.to_str().ok()?;
    let cred = auth.split("Credential=").nth(1)?;
    let region = cred.split('/').nth(2)?;
    (!region.is_empty()
        && region
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-'))
    .then(|| region.to_string())
}
