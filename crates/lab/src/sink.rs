//! Where a run's progress goes: the front end implements [`RunSink`] to show progress and to
//! save each finished point (the CLI: a bar or lines on stderr, and the results database). The
//! lab calls it in run order and never writes to a terminal or a database itself.

use storlab_report::JobReport;
use storlab_runner::fio_log::FioLogFile;

/// The observer of one run.
pub trait RunSink {
    /// The run is about to measure up to `points` points (every round a steady-state sweep may
    /// run included).
    fn started(&mut self, points: usize);
    /// One point finished: `reports` are its results (one per job, or per worker without
    /// group reporting), `summary` its one-line rate for people. A sink that saves results
    /// saves them before it announces the point, so every point shown finished is saved.
    fn point_done(&mut self, name: &str, reports: &[JobReport], summary: &str);
    /// A finished job's fio log files (`write_bw_log`...), given before its point is done. The
    /// lab makes their text and never writes files: the sink decides where and how (the CLI
    /// writes them under its safe-output rules). A sink that writes no files drops them.
    fn fio_logs(&mut self, _files: &[FioLogFile]) {}
    /// No more points will come (the run finished, failed or was stopped).
    fn ended(&mut self);
}

/// A sink that keeps nothing: for library callers that only want the returned results.
#[derive(Debug, Default)]
pub struct NoSink;

impl RunSink for NoSink {
    fn started(&mut self, _points: usize) {}
    fn point_done(&mut self, _name: &str, _reports: &[JobReport], _summary: &str) {}
    fn ended(&mut self) {}
}
