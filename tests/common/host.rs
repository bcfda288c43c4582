//! A sharing host for the `--share` tests: `latlab run ARGS`, with the share's address and token
//! read from its standard error, killed if a test fails before it ends.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A host: `latlab run ARGS --share ...`, and the share's address and token from its stderr.
pub struct Host {
    pub child: Child,
    pub addr: String,
    pub token: String,
    pub stderr: std::sync::mpsc::Receiver<String>,
}

impl Host {
    pub fn start(args: &[&str]) -> Host {
        let child = super::latlab()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("latlab runs");
        let (tx, rx) = std::sync::mpsc::channel();
        let mut host = Host {
            child,
            addr: String::new(),
            token: String::new(),
            stderr: rx,
        };
        let err = host.child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let line = host
                .stderr
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .expect("latlab says where it shares the run");
            if let Some(url) = line.strip_prefix("share: ") {
                let rest = url.strip_prefix("http://").expect("an http URL");
                let (addr, query) = rest.split_once("/?token=").expect("the token in the URL");
                host.addr = addr.to_string();
                host.token = query.to_string();
                return host;
            }
        }
    }

    /// Its report (stdout) and the rest of its stderr, once it has ended.
    pub fn finish(&mut self) -> (Value, String) {
        let mut out = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let status = self.child.wait().unwrap();
        let err: Vec<String> = self.stderr.try_iter().collect();
        assert!(status.success(), "the host failed: {err:?}");
        (
            serde_json::from_str(&out).expect("a JSON report"),
            err.join("\n"),
        )
    }
}

/// A test that fails leaves no host running.
impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
