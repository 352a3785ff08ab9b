//! storlab-job: the job model, its validation, and the readers that build jobs (fio files, flags).
//!
//! Entry points: [`fio::parse_fio_file`] / [`fio::parse_fio_str`] for fio job files,
//! [`flags::parse_flags`] for fio-style command-line flags (each optionally given the target the
//! command line imposes, so a job is validated against the target it runs on),
//! [`validate::validate`] for jobs built in code. Both readers share one key table
//! ([`keys::KEYS`]) and return [`JobError`], whose `Display` is one line naming the file and line
//! (or flag), the key, and what is wrong.
#![forbid(unsafe_code)]

pub mod error;
pub mod fio;
mod fio_vars;
pub mod flags;
pub mod iolog;
pub mod keys;
pub mod latency_numa;
pub mod model;
pub mod paths;
pub mod preset;
pub mod queueing;
pub mod repeat;
pub mod scheduling;
pub mod size;
pub mod steps;
pub mod validate;
pub mod written;

pub use error::{ErrorKind, JobError, Location};
pub use fio::{parse_fio_file, parse_fio_file_with_flags, parse_fio_str, parse_fio_str_with_flags};
pub use flags::parse_flags;
pub use iolog::{IoTrace, ReplaySpec, TraceAction, TraceEntry};
pub use latency_numa::{LatencyTargetSpec, NumaMemPolicy};
pub use model::*;
pub use queueing::{CpuAffinity, IoBatch};
pub use repeat::{repeat_points, repeat_set, Repeat};
pub use scheduling::{ExitAll, ExitWhat, IoPriority, StartDelay};
pub use validate::validate;
