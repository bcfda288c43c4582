//! The terminal: screens as a person sees them in tmux, keys, fixed screens, live knobs and the
//! replay, in one test binary.

#[path = "../common/mod.rs"]
mod common;
mod live_knobs;
mod replay;
mod tui_keys;
mod tui_screens;
mod tui_tmux;
