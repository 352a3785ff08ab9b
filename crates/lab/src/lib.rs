//! storlab's domain, below any front end: what a run is. A [`provider::Provider`] is a session's
//! targets (each opened once, temporary files, simulated stacks kept between jobs); [`run`] runs a
//! job set, a sweep (presets, device states, steady state) or FC-Test on real files through it and
//! hands each finished point to a [`sink::RunSink`] (progress, the results database); [`validate`]
//! reads, plans and measures a reference file of published figures. Nothing here parses command
//! lines, touches a terminal or a database: the CLI does, through this API (docs/decisions/0010).

#![forbid(unsafe_code)]

pub mod disk_util;
pub mod error;
pub mod fault_places;
pub mod fctest;
pub mod outcome;
pub mod provider;
pub mod run;
pub mod settled;
pub mod sink;
pub mod stacks;
pub mod sweep;
pub mod validate;
pub mod what_if;

pub use error::{bad_input, classify, run_failed, LabError};
