//! `latlab cleanup` on a Redis the user names: the keys a run left under `latlab:RUN_ID:` (its
//! marker saying when it ran) are listed and, with --yes, deleted; keys of no run (another
//! application's, or `latlab:` keys that name no run id) are never touched.

use crate::common;

use common::Kill;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn redis_server() -> (Kill, String) {
    common::require_redis_server();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let binary = latlab::labs::redis::local::redis_server_binary().unwrap();
    let child = Kill(
        Command::new(binary)
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "redis-server did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    (child, format!("redis://127.0.0.1:{port}"))
}

fn keys(con: &mut redis::Connection) -> Vec<String> {
    let mut k: Vec<String> = redis::cmd("KEYS").arg("*").query(con).unwrap();
    k.sort();
    k
}

#[test]
fn a_runs_keys_are_found_by_their_prefix_and_deleted_and_no_other_key_is() {
    let (_server, url) = redis_server();
    let mut con = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    for (k, v) in [
        ("latlab:0a1b2c3d:lag:1:new", "x"),
        ("latlab:0a1b2c3d:lag:1:persistent", "x"),
        ("latlab:notarun:x", "someone else's"),
        ("app:session:1", "someone else's"),
    ] {
        let _: () = redis::cmd("SET").arg(k).arg(v).query(&mut con).unwrap();
    }
    let _: () = redis::cmd("HSET")
        .arg("latlab:0a1b2c3d:run")
        .arg("latlab:created")
        .arg("2026-01-01T00:00:00Z")
        .query(&mut con)
        .unwrap();
    let cleanup = |extra: &[&str]| {
        common::latlab_output(
            &[
                &["cleanup", "--redis-primary", &url, "--redis-replica", &url][..],
                extra,
            ]
            .concat(),
        )
    };
    let (ok, text, err) = cleanup(&[]);
    assert!(ok, "{err}");
    assert!(
        text.contains("run 0a1b2c3d (created 2026-01-01T00:00:00Z, "),
        "{text}"
    );
    assert!(
        text.contains(&format!("Redis keys latlab:0a1b2c3d:* on {url}: 3 keys")),
        "{text}"
    );
    assert!(text.contains("nothing deleted: pass --yes"), "{text}");
    assert_eq!(keys(&mut con).len(), 5);
    let (ok, text, err) = cleanup(&["--older-than", "1d", "--yes"]);
    assert!(ok, "{text}{err}");
    assert!(
        text.contains("deleted Redis keys latlab:0a1b2c3d:*"),
        "{text}"
    );
    assert_eq!(keys(&mut con), ["app:session:1", "latlab:notarun:x"]);
    let (ok, text, _) = cleanup(&["--yes"]);
    assert!(ok);
    assert!(text.contains("nothing latlab left to delete"), "{text}");
}
