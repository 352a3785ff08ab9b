//! storlab-report: the result model of a run and its output formats — native JSON
//! (`docs/json-output.md`), fio-shaped JSON, fio's normal and terse reports, CSV and a text
//! table.
//!
//! The crate knows nothing of jobs or engines: the caller passes job details as plain data in
//! a [`JobSetup`] (what ran) and [`JobNotes`] (warnings, engine facts, the simulator's report)
//! together with merged [`storlab_stats::WorkerStats`]:
//!
//! ```text
//! let job_report = JobReport::new(setup, notes, &merged_worker_stats);
//! ```

#![forbid(unsafe_code)]

mod cliff;
mod csv;
mod escape;
mod faults;
mod fio;
mod fio_keys;
mod fio_normal;
mod fio_normal_group;
mod fio_terse;
mod fio_units;
pub mod html;
mod json;
mod model;
mod repeats;
mod repeats_text;
mod table;
mod units;

pub use cliff::{cliff_lines, find_cliffs, write_intervals, Interval, WriteCliff, WriteCliffs};
pub use csv::{csv_field, to_csv};
pub use escape::escape_control;
pub use faults::fault_summary;
pub use fio::{to_fio_json, to_fio_json_plus, to_fio_json_with, FioEcho};
pub use fio_normal::{to_fio_normal, to_fio_normal_preamble};
pub use fio_terse::to_fio_terse;
pub use html::{to_html, LabeledRun};
pub use json::{from_json, to_json, ReportError};
pub use model::{
    CpuReport, DiskUtil, HostInfo, JobNotes, JobReport, JobSetup, RankRow, RunReport, SeriesPoint,
    SlavesAggregate, StatePreparation, TargetInfo, ToolInfo, SCHEMA_VERSION,
};
pub use repeats::{
    repeat_of, summarise_repeats, t_quantile_975, welch_differs, RepeatSummary, Spread,
};
pub use repeats_text::render_repeats;
pub use table::{job_diagnosis, render_table};
pub use units::{format_fixed, format_latency_ns};
