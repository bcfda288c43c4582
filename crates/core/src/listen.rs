//! An address a server of latlab's listens on (`--metrics-addr`, `--share`): `HOST:PORT`, or a
//! bare `PORT` on 127.0.0.1, bound before anything starts, with one line naming the flag, what
//! is wrong and what would do when it cannot be.

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};

/// The addresses `text` names, for `flag`.
pub fn parse_addr(flag: &str, text: &str) -> anyhow::Result<Vec<SocketAddr>> {
    parse(flag, text, 9464)
}

fn parse(flag: &str, text: &str, example: u16) -> anyhow::Result<Vec<SocketAddr>> {
    let text = text.trim();
    let valid = format!(
        "give HOST:PORT (e.g. 127.0.0.1:{example}), or a PORT alone for 127.0.0.1:PORT; port 0 takes a free port"
    );
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return match text.parse::<u16>() {
            Ok(port) => Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))]),
            Err(_) => anyhow::bail!("{flag} {text}: a port is 0 to 65535; {valid}"),
        };
    }
    let addrs: Vec<SocketAddr> = match text.to_socket_addrs() {
        Ok(a) => a.collect(),
        Err(e) => anyhow::bail!("{flag} {text}: not an address ({e}); {valid}"),
    };
    if addrs.is_empty() {
        anyhow::bail!("{flag} {text}: the host has no address; {valid}");
    }
    Ok(addrs)
}

/// Binds the first address `text` names that can be listened on, non-blocking (for tokio);
/// `example` is the port the error lines suggest.
pub fn bind(flag: &str, text: &str, example: u16) -> anyhow::Result<(TcpListener, SocketAddr)> {
    let mut first_error = None;
    for addr in parse(flag, text, example)? {
        match TcpListener::bind(addr) {
            Ok(listener) => {
                listener
                    .set_nonblocking(true)
                    .map_err(|e| anyhow::anyhow!("{flag} {addr}: cannot listen there: {e}"))?;
                let addr = listener.local_addr()?;
                return Ok((listener, addr));
            }
            Err(e) => {
                first_error.get_or_insert((addr, e));
            }
        }
    }
    let (addr, e) = first_error.expect("parse gives at least one address");
    Err(bind_error(flag, addr, &e, example))
}

/// One line saying why `addr` cannot be listened on, and what would do.
fn bind_error(flag: &str, addr: SocketAddr, e: &std::io::Error, example: u16) -> anyhow::Error {
    use std::io::ErrorKind;
    let ip = match addr.ip() {
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
        std::net::IpAddr::V4(ip) => ip.to_string(),
    };
    match e.kind() {
        ErrorKind::AddrInUse => {
            let other = if addr.port() == u16::MAX {
                addr.port() - 1
            } else {
                addr.port() + 1
            };
            anyhow::anyhow!(
                "{flag} {addr}: the port is in use; name another (e.g. {flag} {ip}:{other}) or stop what holds it"
            )
        }
        ErrorKind::PermissionDenied => anyhow::anyhow!(
            "{flag} {addr}: not permitted to listen there (ports below 1024 need privileges); name a port from 1024 up, e.g. {flag} {ip}:{example}"
        ),
        ErrorKind::AddrNotAvailable => anyhow::anyhow!(
            "{flag} {addr}: no network interface of this machine has that address; use 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)"
        ),
        _ => anyhow::anyhow!("{flag} {addr}: cannot listen there: {e}"),
    }
}
