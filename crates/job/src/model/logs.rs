//! fio's logs a job writes: their kinds, prefixes and settings.

use super::{is_false, is_zero_u8};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One of fio's per-I/O logs, by the file name's suffix (`PREFIX_bw.1.log`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FioLogKind {
    /// `write_bw_log`: KiB/s (per I/O: bytes * 10^6 / clat ns, as fio).
    Bandwidth,
    /// `write_iops_log`: 1 per I/O, or I/Os per second over a window.
    Iops,
    /// `write_lat_log`: total latency, ns.
    Latency,
    /// `write_lat_log`: completion latency, ns.
    CompletionLatency,
    /// `write_lat_log`: submission latency, ns (queued engines only, as fio).
    SubmissionLatency,
    /// `write_hist_log` with `log_hist_msec`: completion latency histograms in fio's bins.
    CompletionHistogram,
}

impl FioLogKind {
    /// Every kind, in the order their files are named.
    pub const ALL: [FioLogKind; 6] = [
        FioLogKind::Bandwidth,
        FioLogKind::Iops,
        FioLogKind::Latency,
        FioLogKind::CompletionLatency,
        FioLogKind::SubmissionLatency,
        FioLogKind::CompletionHistogram,
    ];

    /// The key that asks for this log.
    pub fn key(self) -> &'static str {
        match self {
            FioLogKind::Bandwidth => "write_bw_log",
            FioLogKind::Iops => "write_iops_log",
            FioLogKind::Latency | FioLogKind::CompletionLatency | FioLogKind::SubmissionLatency => {
                "write_lat_log"
            }
            FioLogKind::CompletionHistogram => "write_hist_log",
        }
    }

    /// The suffix fio appends to the log's prefix (fio iolog.c, `setup_log` callers).
    pub fn suffix(self) -> &'static str {
        match self {
            FioLogKind::Bandwidth => "bw",
            FioLogKind::Iops => "iops",
            FioLogKind::Latency => "lat",
            FioLogKind::CompletionLatency => "clat",
            FioLogKind::SubmissionLatency => "slat",
            FioLogKind::CompletionHistogram => "clat_hist",
        }
    }
}

/// fio's per-I/O logs of one job. Each prefix is the key's value, or the job's name for a bare
/// key; fio's file is `PREFIX_SUFFIX.N.log` with `N` the job's thread number (1-based over the
/// whole job file, each `numjobs` clone its own), or `PREFIX_SUFFIX.log` with `per_job_logs=0`,
/// which every clone appends to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FioLogs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_prefix: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops_prefix: Option<PathBuf>,
    /// `write_lat_log`: the `_lat`, `_clat` and `_slat` logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_prefix: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram_prefix: Option<PathBuf>,
    /// `log_avg_msec`: one averaged entry per window and direction instead of one per I/O (0).
    #[serde(default, skip_serializing_if = "is_zero_ms")]
    pub average_ms: u64,
    /// `log_hist_msec`: one histogram line per window and direction (0: no histogram lines).
    #[serde(default, skip_serializing_if = "is_zero_ms")]
    pub histogram_ms: u64,
    /// `log_hist_coarseness`: each step sums pairs of the histogram's bins (1216 at 0).
    #[serde(default, skip_serializing_if = "is_zero_u8")]
    pub histogram_coarseness: u8,
    /// `log_max_value`: a window's maximum instead of its mean.
    #[serde(default, skip_serializing_if = "is_false")]
    pub max_value: bool,
    /// `log_offset`: each line carries the I/O's offset.
    #[serde(default, skip_serializing_if = "is_false")]
    pub offset: bool,
    /// `log_prio`: the last column is the I/O's priority value in hex instead of 0/1.
    #[serde(default, skip_serializing_if = "is_false")]
    pub priority: bool,
    /// `per_job_logs=0`: one file per prefix, without the thread number, appended to.
    #[serde(default, skip_serializing_if = "is_false")]
    pub shared_file: bool,
    /// The latency logs fio leaves out for a measurement its `disable_lat`, `disable_clat` or
    /// `disable_slat` turned off (init.c sets up no `_lat`, `_clat` or `_slat` log then).
    #[serde(default, skip_serializing_if = "is_false")]
    pub without_total_latency: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub without_completion_latency: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub without_submission_latency: bool,
    /// fio's `disable_bw_measurement`: no per-I/O bandwidth entry (io_u.c; averaged entries,
    /// taken on the clock, stay).
    #[serde(default, skip_serializing_if = "is_false")]
    pub without_per_io_bandwidth: bool,
    /// No per-I/O IOPS entry either: fio's `gtod_reduce` test (completion and submission
    /// latencies and bandwidth all off).
    #[serde(default, skip_serializing_if = "is_false")]
    pub without_per_io_iops: bool,
}

fn is_zero_ms(value: &u64) -> bool {
    *value == 0
}

/// fio's largest `log_hist_coarseness` (options.c: 0 to 6).
pub const FIO_LOG_HIST_COARSENESS_MAX: u8 = 6;

impl FioLogs {
    /// No log is asked for (settings alone write nothing).
    pub fn is_unset(&self) -> bool {
        *self == FioLogs::default()
    }

    /// The prefix `kind`'s log is written under, when it is asked for.
    pub fn prefix(&self, kind: FioLogKind) -> Option<&std::path::Path> {
        match kind {
            FioLogKind::Bandwidth => self.bandwidth_prefix.as_deref(),
            FioLogKind::Iops => self.iops_prefix.as_deref(),
            FioLogKind::Latency if self.without_total_latency => None,
            FioLogKind::CompletionLatency if self.without_completion_latency => None,
            FioLogKind::SubmissionLatency if self.without_submission_latency => None,
            FioLogKind::Latency | FioLogKind::CompletionLatency | FioLogKind::SubmissionLatency => {
                self.latency_prefix.as_deref()
            }
            FioLogKind::CompletionHistogram => self.histogram_prefix.as_deref(),
        }
    }

    /// The file of `kind`'s log for the job clone numbered `thread_number`, if asked for.
    pub fn path(&self, kind: FioLogKind, thread_number: u32) -> Option<PathBuf> {
        let prefix = self.prefix(kind)?;
        let mut name = prefix.as_os_str().to_os_string();
        name.push(format!("_{}", kind.suffix()));
        if !self.shared_file {
            name.push(format!(".{thread_number}"));
        }
        name.push(".log");
        Some(PathBuf::from(name))
    }
}
