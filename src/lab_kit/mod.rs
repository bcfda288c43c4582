//! The kit a lab is written against, below every lab: what its screen shows as data (`view`:
//! panes, tables, sparklines, its keys), its report's sections and comparisons (`section`), its
//! plan on an account (`plan`: what it would create and call, the IAM it needs, what a run
//! leaves behind), its configuration at list price (`cost`) and its calibration probe's parts
//! (`calibrate`: the probe's context, the statistics and the profile file it writes). A lab
//! builds these from its own figures in its folder (`labs/X/view.rs`, `report.rs`, `plan.rs`,
//! `cost.rs`, `calibrate.rs`); the screen, the report, `latlab plan`, the prices and `latlab
//! calibrate` walk every lab's through the registry.
//!
//! Two parts of the kit stay in `labs/` because they name a lab by its kind (`LabKind`, which
//! the registry generates there): a series' id (`labs/series.rs`) and a doctor check
//! (`labs/check.rs`).

pub mod calibrate;
pub mod cost;
pub mod plan;
pub mod section;
pub mod view;
