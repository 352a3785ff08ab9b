//! Integration tests of the `storlab` binary, as one test binary: one link instead of one per
//! file, and the helpers in `common` compiled once (docs/decisions/0015).
//!
//! Layout:
//! - One module per subject, each a file beside this one: `tests/it/NAME.rs`, listed below.
//!   A new test file goes here too: put it in `tests/it/`, add `mod NAME;` below (in order), and
//!   write `use crate::common;` instead of `mod common;` to use the shared helpers.
//! - Snapshots are in `tests/it/snapshots/`, named `it__NAME__SNAPSHOT.snap` (insta names them
//!   after the module path).
//! - Data files stay in `tests/data/`, found through `CARGO_MANIFEST_DIR`.
//! - Tests of all modules run in one process, two at a time on CI: a test that changes
//!   something process- or machine-wide (the current directory, environment variables, the page
//!   cache) must not, or it goes in a binary of its own.
//! - The one such binary is `tests/page_cache.rs`: it drops the whole page cache and times the
//!   disk against fio, so it runs alone, as before. `tidy::integration_tests_are_one_binary_per_crate`
//!   refuses any other file beside `tests/it/`.

mod common;

mod calibration;
mod cli;
mod cmdprio;
mod continue_on_error;
mod damaged_db;
mod db;
mod dedupe;
mod defaults;
mod dm_disk_util;
mod failed_jobs;
mod fault_depth;
mod file_keys;
mod fill_device;
mod fio_cli;
mod fio_diff;
mod fio_job_files;
mod fio_job_vars;
mod fio_json;
mod fio_logs;
mod fio_normal;
mod fio_oracle;
mod fio_oracle_clones;
mod fio_oracle_data;
mod fio_oracle_files;
mod fio_oracle_keys;
mod fio_oracle_loops;
mod fio_oracle_replay;
mod fio_oracle_trims;
mod fio_report_keys;
mod fio_runtests;
mod fio_status;
mod fio_testsuite;
mod fio_verify;
mod generate;
mod guard;
mod hostile_inputs;
mod io_batch;
mod job_file_reads;
mod job_report_interval;
mod job_scheduling;
mod latency_numa;
mod linux_oracle;
mod live_view;
#[cfg(feature = "mpi")]
mod mpi;
mod path_verdict;
mod pcap_order;
mod power_loss;
mod presets;
mod probe;
mod recovered_faults;
mod repeat;
mod report;
mod safe_output;
mod signals;
mod sim_target;
mod state_chains;
mod state_region;
mod sync;
mod tidy;
mod usb_reset;
mod validate;
mod verify;
mod warnings;
mod whatif;
mod write_cliff;
mod written_paths;
