//! A shared run: the stream, the page in a real browser, and hostile peers, in one test binary.

#[path = "../common/mod.rs"]
mod common;
mod hostile_peers;
mod share;
mod share_page;
