//! fio's `--status-interval` with fio's formats (docs/decisions/0049): every interval while
//! jobs run, a whole report of the jobs so far, rendered by the final report's code (fio's
//! human report, its JSON documents, its terse lines) and written where the final one goes
//! (stdout, or `--output`, appended to). Each running job's figures are the runner's latest
//! snapshot of its statistics since it started (`storlab_runner::live::LiveSnapshot`, taken on
//! the job's own thread at most a tenth of the interval before the report), a finished job's
//! its last snapshot; jobs that have not started are not in it yet.

use crate::args::OutputFormat;
use crate::progress::LIVE;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};
use storlab_job::JobSet;
use storlab_report::{FioEcho, HostInfo, RunReport, ToolInfo};
use storlab_runner::live::{LiveEvent, LiveSnapshot};

/// Set once an interim report has been written in this process: the final report then follows
/// it (appended to `--output`) without fio's job lines, which went before the first one.
static WRITTEN: AtomicBool = AtomicBool::new(false);

/// The shortest snapshot period: a status interval below 10 ms still snapshots every 1 ms.
const MIN_PERIOD: Duration = Duration::from_millis(1);

/// Whether `--status-interval` asks for fio's reports rather than storlab's status line: the
/// output is one of fio's formats (`storlab fio`, or `storlab run --output-format=fio-*`).
pub fn wanted(format: OutputFormat, status_interval: Option<Duration>) -> bool {
    let fio_format = matches!(
        format,
        OutputFormat::FioNormal
            | OutputFormat::FioJson
            | OutputFormat::FioJsonPlus
            | OutputFormat::Terse
    );
    fio_format && status_interval.is_some_and(|interval| !interval.is_zero())
}

/// Whether `run` gets fio's reports in place of the live view: [`wanted`], on a job set run
/// on one target (a sweep, a preset or a what-if comparison keeps the status line).
pub fn replace_live_view(run: &crate::args::RunArgs, format: OutputFormat) -> bool {
    let sweep = run.preset.is_some() || run.state.is_some() || run.trim_between_steps;
    wanted(format, run.status_interval) && !sweep && run.targets.len() < 2
}

/// Whether an interim report was written (the final report then skips fio's job lines and is
/// appended to `--output`).
pub fn written() -> bool {
    WRITTEN.load(Ordering::Relaxed)
}

/// What the reports are made of and where they go.
pub struct Reporting {
    pub set: JobSet,
    /// The output format and fio's further ones, in the order they are printed.
    pub formats: Vec<OutputFormat>,
    pub echo: Option<FioEcho>,
    /// `--output`, or stdout.
    pub output: Option<PathBuf>,
    pub started_unix_ms: u64,
    pub interval: Duration,
}

/// The thread writing the reports until [`FioStatus::finish`] (or drop).
pub struct FioStatus {
    stop: Sender<()>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FioStatus {
    /// Starts the reports (snapshots are taken by drives that start from now on).
    pub fn start(reporting: Reporting) -> Option<FioStatus> {
        WRITTEN.store(false, Ordering::Relaxed);
        LIVE.take_events();
        LIVE.watch_snapshots(true);
        LIVE.watch((reporting.interval / 10).max(MIN_PERIOD).as_nanos() as u64);
        let (stop, stopped) = channel::<()>();
        let thread = std::thread::Builder::new()
            .name("fio status".into())
            .spawn(move || {
                // A descriptor table of its own, as the live view's (live_view.rs).
                let _ = storlab_engine::descriptors::use_private_descriptor_table();
                let mut reporter = Reporter::new(reporting);
                let mut next = Instant::now() + reporter.reporting.interval;
                loop {
                    let wait = next.saturating_duration_since(Instant::now());
                    match stopped.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => {
                            next += reporter.reporting.interval;
                            reporter.report();
                        }
                        _ => break,
                    }
                }
            })
            .ok()?;
        Some(FioStatus {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the reports (the run ended; its final report follows).
    pub fn finish(&mut self) {
        let _ = self.stop.send(());
        crate::live_view::end_reader(&mut self.thread);
    }
}

impl Drop for FioStatus {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The reporting thread's state: each drive's latest snapshot.
struct Reporter {
    reporting: Reporting,
    snapshots: BTreeMap<u64, LiveSnapshot>,
    disks: storlab_lab::disk_util::DiskUtilWindow,
    host: HostInfo,
}

impl Reporter {
    fn new(reporting: Reporting) -> Reporter {
        Reporter {
            disks: storlab_lab::disk_util::DiskUtilWindow::start(&reporting.set),
            reporting,
            snapshots: BTreeMap::new(),
            host: HostInfo::detect(),
        }
    }

    /// One interim report, written whole; nothing while no job has a snapshot yet.
    fn report(&mut self) {
        for event in LIVE.take_events() {
            if let LiveEvent::Snapshot(snapshot) = event {
                self.snapshots.insert(snapshot.drive, *snapshot);
            }
        }
        let report = self.run_report();
        if report.jobs.is_empty() {
            return;
        }
        let mut text = String::new();
        let first = !WRITTEN.load(Ordering::Relaxed);
        let formats = &self.reporting.formats;
        let echo = self.reporting.echo.as_ref();
        if first && formats.contains(&OutputFormat::FioNormal) {
            text.push_str(&storlab_report::to_fio_normal_preamble(
                &report,
                echo,
                std::process::id(),
            ));
        }
        for &format in formats {
            text.push_str(&crate::render::render_report(
                format,
                &report,
                echo,
                crate::render::job_table,
            ));
        }
        let bytes = text.as_bytes();
        // A failed write is left to the final report's, which fails the run with its message.
        let _ = match &self.reporting.output {
            None => crate::output::print(&text),
            Some(path) if first => crate::output::write_file(path, bytes, "--output"),
            Some(path) => crate::output::append_file(path, bytes, "--output"),
        };
        WRITTEN.store(true, Ordering::Relaxed);
    }

    /// The report of every job with a snapshot, in the job set's order.
    fn run_report(&self) -> RunReport {
        let mut report = RunReport::new(
            ToolInfo::storlab(),
            self.reporting.started_unix_ms,
            self.host.clone(),
        );
        let set = &self.reporting.set;
        for (index, job) in set.jobs.iter().enumerate() {
            let thread_number = set.first_thread_number(index);
            let drives: Vec<&LiveSnapshot> = self
                .snapshots
                .values()
                .filter(|snapshot| snapshot.job_thread_number == thread_number)
                .collect();
            if !drives.is_empty() {
                report
                    .jobs
                    .extend(storlab_lab::outcome::running_job_reports(job, &drives));
            }
        }
        report.disk_util = self.disks.finish();
        report
    }
}
