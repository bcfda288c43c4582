//! HTTP, written once: the accept loop every server of latlab's runs on (`serve.rs`: the
//! embedded emulator, the Prometheus export, a shared run) and the client every request latlab
//! makes by hand goes through (`client.rs`: `latlab attach`'s stream and keys, `latlab prices
//! fetch`'s downloads), both over hyper; `tls.rs` a server's TLS. It imports nothing of latlab's.

pub mod client;
pub mod serve;
pub mod tls;

pub use serve::Serve;
