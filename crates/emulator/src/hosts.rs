//! Which names reach the emulator: every request counted by the host it was sent to and by its
//! HTTP version (the stats document's `hosts` and `http_versions`), and the host a request names.

use http::Request;

/// The requests answered by the host they were sent to (`Host`, or HTTP/2's `:authority`,
/// without the port): which names an SDK resolved to reach the emulator. At most
/// [`Hosts::MAX`] names are kept; requests to any other are counted under `(other)`.
/// Beside them, the requests by HTTP version (`HTTP/1.1`, `HTTP/2.0`).
#[derive(Default)]
pub struct Hosts(
    parking_lot::Mutex<std::collections::BTreeMap<String, u64>>,
    parking_lot::Mutex<std::collections::BTreeMap<String, u64>>,
);

impl Hosts {
    pub const MAX: usize = 256;

    pub(crate) fn count(&self, host: Option<String>, version: http::Version) {
        *self.1.lock().entry(format!("{version:?}")).or_default() += 1;
        let host = host.unwrap_or_else(|| "(none)".into());
        let mut map = self.0.lock();
        if let Some(n) = map.get_mut(&host) {
            *n += 1;
        } else if map.len() < Hosts::MAX {
            map.insert(host, 1);
        } else {
            *map.entry("(other)".into()).or_default() += 1;
        }
    }

    /// Every host with its count, in name order.
    pub fn counts(&self) -> Vec<(String, u64)> {
        self.0.lock().iter().map(|(h, n)| (h.clone(), *n)).collect()
    }

    /// Every HTTP version with its count (`HTTP/1.1`, `HTTP/2.0`).
    pub fn versions(&self) -> Vec<(String, u64)> {
        self.1.lock().iter().map(|(h, n)| (h.clone(), *n)).collect()
    }
}

/// The host a request was sent to, without its port, in lower case: HTTP/2's `:authority`,
/// else the `Host` header.
pub(crate) fn host_of<B>(req: &Request<B>) -> Option<String> {
    let host = match req.uri().host() {
        Some(h) => h.to_string(),
        None => {
            let h = req.headers().get("host")?.to_str().ok()?;
            match h.rsplit_once(':') {
                Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name.into(),
                _ => h.to_string(),
            }
        }
    };
    Some(host.trim_end_matches('.').to_ascii_lowercase())
}
