//! Many hosts and the export: hosts merged, hosts in network namespaces, Prometheus scraping them,
//! and the metrics, in one test binary.

#[path = "../common/mod.rs"]
mod common;
mod fleet;
mod fleet_netns;
mod metrics;
mod prometheus_deploy;
