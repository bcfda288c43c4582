//! The share server (`--share`), in process on 127.0.0.1, sent any request a viewer could send:
//! its method and path, its query (`?token=`, `theme=`), `Authorization`, `Last-Event-ID`,
//! `Origin`, `Content-Type` and a body (`POST /keys`: any bytes, or a key's JSON with any field
//! values). Every request gets an answer's head within seconds, never a dropped connection or a
//! panic; a wrong or missing token is 401, a key from a viewer of a share without control is
//! refused, and a key the host answers is that answer.
#![no_main]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::OnceLock;
use std::time::Duration;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

const TOKEN: &str = "fuzz-token-12345";

#[derive(Arbitrary, Debug)]
struct Request {
    method: u8,
    raw_method: String,
    path: u8,
    raw_path: String,
    query: Vec<(String, String)>,
    /// 0: no token, 1: the share's, 2: another, 3: the share's in the query.
    token: u8,
    other_token: String,
    last_event_id: Option<String>,
    origin: Option<String>,
    content_type: Option<String>,
    body: Body,
}

#[derive(Arbitrary, Debug)]
enum Body {
    None,
    Raw(Vec<u8>),
    Key {
        key: String,
        viewer: Option<i64>,
        tab: Option<String>,
        fault: Option<String>,
    },
}

struct Shared {
    _runtime: tokio::runtime::Runtime,
    /// Kept as long as the process: the share serves every input.
    _share: std::sync::Mutex<latlab::share::Share>,
    addr: std::net::SocketAddr,
}

/// A share with control, one frame published, every key answered at once.
fn share() -> &'static Shared {
    static S: OnceLock<Shared> = OnceLock::new();
    S.get_or_init(|| {
        // A harness has no Rust `main`, which is what ignores SIGPIPE: without this, a write to
        // a connection the share has closed (it may answer 401 before it reads a body) would
        // kill the process without a word. latlab's own binary ignores it.
        // SAFETY: setting a signal's disposition to SIG_IGN before any thread is started.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let (addr, share) = runtime.block_on(async {
            let listener = latlab::share::ShareListener::bind(latlab::share::ShareOptions {
                token: Some(TOKEN.into()),
                control: true,
                ..Default::default()
            })
            .expect("a share binds");
            let addr = listener.addr();
            let theme = latlab::theme::Theme::dark();
            let mut share =
                latlab::share::Share::start(listener, &latlab::tui::shared::theme_css(&theme))
                    .expect("a share starts");
            let mut app = latlab::tui::app::App::new(theme);
            app.sync_labs(&latlab::labs::LabKind::ALL);
            let view = latlab::tui::fixture::sample_tour_moment();
            share.publish(latlab::tui::shared::tick(
                &app,
                &view,
                Default::default(),
                "fuzz",
                TOKEN,
            ));
            let mut keys = share.take_keys().expect("the keys");
            tokio::spawn(async move {
                while let Some(k) = keys.recv().await {
                    let _ = k.reply.send(Ok(format!("key {:?}", k.key)));
                }
            });
            (addr, share)
        });
        Shared {
            _runtime: runtime,
            _share: std::sync::Mutex::new(share),
            addr,
        }
    })
}

/// A header value as it may go on the wire (no line breaks).
fn clean(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '\r' && *c != '\n')
        .take(2000)
        .collect()
}

fn pct(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fuzz_target!(|r: Request| {
    let s = share();
    let method = ["GET", "POST", "HEAD", "PUT", "OPTIONS"]
        .get(r.method as usize)
        .map_or_else(
            || {
                let m: String = r
                    .raw_method
                    .chars()
                    .filter(|c| c.is_ascii_uppercase())
                    .take(10)
                    .collect();
                if m.is_empty() { "GET".into() } else { m }
            },
            |m| m.to_string(),
        );
    let path = ["/", "/events", "/keys", "/favicon.ico"]
        .get(r.path as usize)
        .map_or_else(|| format!("/{}", pct(&r.raw_path)), |p| p.to_string());
    let mut query: Vec<String> = r
        .query
        .iter()
        .take(8)
        .map(|(k, v)| format!("{}={}", pct(k), pct(v)))
        .collect();
    let mut headers: Vec<(String, String)> = Vec::new();
    match r.token % 4 {
        1 => headers.push(("Authorization".into(), format!("Bearer {TOKEN}"))),
        2 => headers.push(("Authorization".into(), clean(&r.other_token))),
        3 => query.push(format!("token={TOKEN}")),
        _ => {}
    }
    if let Some(id) = &r.last_event_id {
        headers.push(("Last-Event-ID".into(), clean(id)));
    }
    if let Some(o) = &r.origin {
        headers.push(("Origin".into(), clean(o)));
    }
    if let Some(ct) = &r.content_type {
        headers.push(("Content-Type".into(), clean(ct)));
    }
    let body: Vec<u8> = match &r.body {
        Body::None => Vec::new(),
        Body::Raw(b) => b.iter().copied().take(8192).collect(),
        Body::Key {
            key,
            viewer,
            tab,
            fault,
        } => serde_json::json!({"key": key, "viewer": viewer, "tab": tab, "fault": fault})
            .to_string()
            .into_bytes(),
    };
    let target = if query.is_empty() {
        path.clone()
    } else {
        format!("{path}?{}", query.join("&"))
    };
    let mut req = format!(
        "{method} {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
        s.addr
    );
    for (k, v) in &headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut sock = TcpStream::connect(s.addr).expect("the share answers connections");
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    // The share may answer and close before it has read the whole request (a refusal needs no
    // body): a write that fails then is its answer's doing, and what it sent may be lost to the
    // connection's reset.
    let wrote = sock
        .write_all(req.as_bytes())
        .and_then(|_| sock.write_all(&body));
    let mut reader = BufReader::new(sock);
    let mut status = String::new();
    match reader.read_line(&mut status) {
        Ok(0) | Err(_) if wrote.is_err() => return,
        Ok(_) => {}
        Err(e) => panic!("no answer to {method} {target}: {e}"),
    }
    let code: u16 = status
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("{method} {target}: not an HTTP answer: {status:?}"));
    assert!((200..600).contains(&code), "{status}");
    let authorized = r.token % 4 == 1 || r.token % 4 == 3;
    if !authorized && (path == "/events" || path == "/keys") && code < 400 {
        panic!("{method} {target} without the token answered {code}");
    }
    // The head ends; an event stream is left there (it goes on as long as the share).
    let mut line = String::new();
    for _ in 0..64 {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
    }
    if path != "/events" || code != 200 {
        let mut rest = Vec::new();
        let _ = reader.take(1 << 20).read_to_end(&mut rest);
    }
});
