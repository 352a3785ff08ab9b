//! Running things on a session, written once: a job set (`storlab run` with a job file, flags or
//! the quick set), a sweep (a preset, a device state, steady state) and FC-Test with real files.
//! Each opens its targets through one [`Provider`], hands every finished point to the
//! [`RunSink`], and returns the report of what was measured together with what stopped it (if
//! anything), so the front end writes the results of a run that failed part-way as well.

use crate::error::{bad_input, LabError};
use crate::fctest::{FileSetRun, OPERATIONS};
use crate::outcome::{job_reports, HonestyCheck};
use crate::provider::{Provider, ProviderOptions};
use crate::sink::RunSink;
use crate::sweep::{metric_value_of, point_reports, scaled_fileset, sweep};
use std::cell::RefCell;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use storlab_job::preset::{Metric, Preset, SweepPoint};
use storlab_job::size::parse_size;
use storlab_job::steps::DeviceState;
use storlab_job::{JobSet, JobSpec};
use storlab_report::{HostInfo, JobNotes, JobReport, JobSetup, RunReport, TargetInfo, ToolInfo};
use storlab_runner::sweep::MeasuredPoint;
use storlab_runner::{
    EngineProvider, JobOutcome, LiveCounters, RunError, RunOptions, DEFAULT_INTERVAL_NS,
};

type Engine = Box<dyn storlab_engine::IoEngine + Send>;

/// What every run takes from its caller: how targets open, when it started, the stop flag
/// (Ctrl-C) and the live counters for a progress display.
pub struct Session<'a> {
    pub options: ProviderOptions,
    /// Wall-clock start of the run (ms since the Unix epoch), as the report records it.
    pub started_unix_ms: u64,
    pub stop: &'a AtomicBool,
    pub live: Option<&'a LiveCounters>,
    /// The other clients of a multi-client run (the CLI's MPI ranks), told of every stonewall
    /// group of a job set as it becomes ready and as it ends; `None` for a run on its own.
    pub peers: Option<&'a dyn Peers>,
}

/// The clients a job set runs beside (docs/distributed.md): every client opens its targets,
/// then all start each stonewall group together, and each group's outcomes are exchanged as it
/// ends. Either call returns an error when a client failed, naming it, and the run stops.
pub trait Peers {
    /// This client's group is open and set up: returns once every client's is.
    fn group_ready(&self) -> Result<(), RunError>;
    /// This client's group ended with `outcomes`: returns once every client's did.
    fn group_ended(&self, outcomes: &[JobOutcome]) -> Result<(), RunError>;
}

impl Session<'_> {
    fn run_options(&self) -> RunOptions<'_> {
        RunOptions {
            interval_ns: DEFAULT_INTERVAL_NS,
            stop: self.stop,
            live: self.live,
        }
    }

    fn new_report(&self) -> RunReport {
        RunReport::new(
            ToolInfo::storlab(),
            self.started_unix_ms,
            HostInfo::detect(),
        )
    }
}

/// Lends the provider to the runner through a `RefCell`, so the per-job callback can read the
/// target descriptions it collected the moment a job finishes.
/// A multi-client run's [`Peers`] hear of each stonewall group through it.
struct SharedProvider<'a>(&'a RefCell<Provider>, Option<&'a dyn Peers>);

impl EngineProvider for SharedProvider<'_> {
    fn open(&mut self, job: &JobSpec) -> Result<Vec<Engine>, RunError> {
        self.0.borrow_mut().open(job)
    }

    fn release(&mut self, job: &JobSpec, engines: Vec<Engine>) {
        self.0.borrow_mut().release(job, engines);
    }

    fn group_ready(&mut self) -> Result<(), RunError> {
        self.1.map_or(Ok(()), |peers| peers.group_ready())
    }

    fn group_ended(&mut self, outcomes: &[JobOutcome]) -> Result<(), RunError> {
        self.1.map_or(Ok(()), |peers| peers.group_ended(outcomes))
    }
}

/// A job set's run.
pub struct JobSetRun {
    /// The finished jobs (in the order they finished) and the targets' warnings.
    pub report: RunReport,
    /// The session's provider: its pcap, and its temporary files until it is dropped.
    pub provider: Provider,
    /// What stopped the run, if it failed.
    pub error: Option<RunError>,
    /// Some job was stopped early or never ran.
    pub interrupted: bool,
    /// Jobs that ran to their end.
    pub complete: usize,
    /// Placed faults of a simulated stack's plan that never fired (`Provider::unfired_faults`),
    /// also in the report's warnings: the run fails (exit 1) once its results are out.
    pub unfired_faults: Vec<String>,
}

/// Run every job of `set` (stonewall groups in order) on a new session.
pub fn run_job_set(set: &JobSet, session: &Session<'_>, sink: &mut dyn RunSink) -> JobSetRun {
    let total = set.jobs.len();
    let shared = RefCell::new(Provider::new(session.options.clone()));
    sink.started(total);
    // The finished jobs' reports, for the output of a run that fails part-way.
    let mut finished: Vec<JobReport> = Vec::new();
    let mut honesty = HonestyCheck::default();
    let mut on_job_done = |outcome: &JobOutcome| {
        let (warnings, interval) = honesty.check(outcome);
        let reports = job_reports(outcome, &shared.borrow(), &warnings, interval.as_ref());
        if !outcome.fio_logs.is_empty() {
            sink.fio_logs(&outcome.fio_logs);
        }
        sink.point_done(&outcome.job.name, &reports, &job_summary(outcome));
        finished.extend(reports);
    };
    let options = session.run_options();
    let disks = crate::disk_util::DiskUtilWindow::start(set);
    let result = storlab_runner::run_jobs(
        set,
        &mut SharedProvider(&shared, session.peers),
        &options,
        &mut on_job_done,
    );
    sink.ended();
    let mut provider = shared.into_inner();
    let mut report = session.new_report();
    report.warnings.append(&mut provider.warnings);
    let unfired_faults = provider.unfired_faults();
    report
        .warnings
        .extend(unfired_faults.iter().map(|f| unfired_fault_warning(f)));
    report.jobs = finished;
    report.disk_util = disks.finish();
    let (error, interrupted, complete) = match result {
        // A job a failed I/O or verify stopped is in the report with its error, the later jobs
        // ran, and the run fails (fio exits 1), naming the first such job and its target.
        Ok(mut outcomes) => (
            outcomes.iter_mut().find_map(|o| {
                let failure = o.failure.take()?;
                Some(named_failure(o, failure, &provider))
            }),
            outcomes.iter().any(|o| o.interrupted) || outcomes.len() < total,
            outcomes.iter().filter(|o| !o.interrupted).count(),
        ),
        Err(error) => (Some(error), false, 0),
    };
    JobSetRun {
        report,
        provider,
        error,
        interrupted,
        complete,
        unfired_faults,
    }
}

/// A job's failure named with the job and its target, as the run's error.
fn named_failure(outcome: &JobOutcome, failure: RunError, provider: &Provider) -> RunError {
    if failure.is_verify_failure() {
        // fio's verify message names them already.
        return failure;
    }
    let target = provider
        .target_descriptions
        .get(&outcome.job.name)
        .map_or_else(
            || "its target".to_string(),
            |(description, _)| description.clone(),
        );
    RunError::Job {
        job: outcome.job.name.clone(),
        target,
        source: Box::new(failure),
    }
}

/// The warning for a placed fault that never fired (`sim:STACK: `SPEC``).
pub fn unfired_fault_warning(fault: &str) -> String {
    format!(
        "placed fault {fault} never fired: the run ended before its place (or no command could \
         take it), so nothing was tested under it"
    )
}

/// A finished job's progress line.
fn job_summary(outcome: &JobOutcome) -> String {
    let mut stats = storlab_stats::WorkerStats::new(DEFAULT_INTERVAL_NS);
    for w in &outcome.workers {
        stats.merge(w);
    }
    let seconds = stats.elapsed_ns as f64 / 1e9;
    if seconds <= 0.0 {
        return "done".into();
    }
    let ios = stats.read.ios + stats.write.ios;
    let bytes = stats.read.bytes + stats.write.bytes;
    format!(
        "done: {:.0} IOPS, {:.1} MB/s{}",
        ios as f64 / seconds,
        bytes as f64 / seconds / 1e6,
        if outcome.failure.is_some() {
            " (failed)"
        } else if outcome.interrupted {
            " (interrupted)"
        } else {
            ""
        }
    )
}

/// What a sweep measures: its points (a preset's, or a job set's as points), the device state
/// to put their area in first, and whether to TRIM it between points.
pub struct SweepPlan {
    pub preset: Option<Preset>,
    pub points: Vec<SweepPoint>,
    pub state: DeviceState,
    pub trim_between_steps: bool,
}

/// A sweep's run.
pub struct SweepRun {
    /// Every measured point's reports, then the targets' warnings and the sweep's notes.
    pub report: RunReport,
    /// The coordinates of each of `report.jobs`, for the preset's table.
    pub coords: Vec<Vec<(String, String)>>,
    pub provider: Provider,
    /// What stopped the sweep, if it failed.
    pub error: Option<RunError>,
    /// Points measured to their end.
    pub complete: usize,
}

/// Put the points' area in the plan's state, then measure every point (or rounds of them until
/// steady state) on a new session.
pub fn run_sweep(plan: &SweepPlan, session: &Session<'_>, sink: &mut dyn RunSink) -> SweepRun {
    let shared = RefCell::new(Provider::new(session.options.clone()));
    // Steady-state presets repeat the matrix in rounds: count every round that may run.
    let rounds = plan
        .preset
        .as_ref()
        .and_then(|p| p.steady_state.as_ref())
        .map_or(1, |s| s.max_rounds);
    sink.started(plan.points.len() * rounds);
    let mut measured: Vec<MeasuredPoint> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut preparations = Vec::new();
    let options = session.run_options();
    let result = sweep(
        &mut SharedProvider(&shared, session.peers),
        &options,
        plan.preset.as_ref(),
        &plan.points,
        plan.state,
        plan.trim_between_steps,
        &mut |m: &MeasuredPoint| {
            let reports = with_cliffs(point_reports(m, &shared.borrow()), plan.preset.as_ref());
            let iops = metric_value_of(m, Metric::Iops);
            let mbps = metric_value_of(m, Metric::Mbps);
            let interrupted = if m.outcome.interrupted {
                " (interrupted)"
            } else {
                ""
            };
            sink.point_done(
                &m.point.job.name,
                &reports,
                &format!(
                    "({}): {iops:.0} IOPS, {mbps:.1} MB/s{interrupted}",
                    m.device_state
                ),
            );
        },
        &mut measured,
        &mut notes,
        &mut preparations,
    );
    sink.ended();
    let mut provider = shared.into_inner();
    let mut report = session.new_report();
    report.warnings.append(&mut provider.warnings);
    report.warnings.extend(notes);
    report.preparation = preparations;
    let mut coords = Vec::new();
    for m in &measured {
        for job_report in with_cliffs(point_reports(m, &provider), plan.preset.as_ref()) {
            coords.push(m.point.coords.clone());
            report.jobs.push(job_report);
        }
    }
    SweepRun {
        report,
        coords,
        provider,
        error: result.err(),
        complete: measured.iter().filter(|m| !m.outcome.interrupted).count(),
    }
}

/// The reports with their write cliffs named, when the preset asks for them (`write-cliff`).
fn with_cliffs(mut reports: Vec<JobReport>, preset: Option<&Preset>) -> Vec<JobReport> {
    if preset.is_some_and(|p| p.table.cliffs) {
        for report in &mut reports {
            let intervals = storlab_report::write_intervals(&report.series);
            report.write_cliffs = Some(storlab_report::find_cliffs(&intervals));
        }
    }
    reports
}

/// FC-Test with real files: the file sets (scaled by `--size`) and the data seed.
pub struct FcTestPlan {
    pub sets: Vec<FileSetRun>,
    pub seed: u64,
}

impl FcTestPlan {
    /// The plan of `preset` on a directory with the job-key `overrides` given: only `size` and
    /// `seed` apply to files. `block_options` names options the caller was given that apply only
    /// to block and simulated targets (refused here, after the overrides).
    pub fn new(
        preset: &Preset,
        overrides: &[(String, Option<String>)],
        block_options: bool,
    ) -> Result<FcTestPlan, LabError> {
        let unsupported: Vec<&str> = overrides
            .iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| *k != "size" && *k != "seed" && *k != "randseed")
            .collect();
        if !unsupported.is_empty() {
            return Err(bad_input(format!(
                "--preset {} on a directory takes only --size (and --seed); not {}",
                preset.name,
                unsupported.join(", ")
            )));
        }
        if block_options {
            return Err(bad_input(format!(
                "--preset {} on a directory works on files: --state, --trim-between-steps and --pcap apply to block and simulated targets",
                preset.name
            )));
        }
        let cap_bytes = overrides
            .iter()
            .find(|(k, _)| k == "size")
            .and_then(|(_, v)| v.as_deref())
            .map(parse_size)
            .transpose()
            .map_err(|e| bad_input(format!("--size: {}", e.0)))?;
        let seed = overrides
            .iter()
            .find(|(k, _)| k == "seed" || k == "randseed")
            .and_then(|(_, v)| v.as_deref()?.parse::<u64>().ok())
            .unwrap_or(storlab_job::DEFAULT_SEED);
        let sets = preset
            .filesets
            .iter()
            .map(|set| {
                let (files, file_bytes) = scaled_fileset(set, cap_bytes);
                FileSetRun {
                    name: set.name.clone(),
                    files,
                    file_bytes,
                    files_per_dir: set.files_per_dir,
                }
            })
            .collect();
        Ok(FcTestPlan { sets, seed })
    }

    /// Phases the run has: four per file set.
    pub fn phases(&self) -> usize {
        self.sets.len() * OPERATIONS.len()
    }
}

/// FC-Test's run.
pub struct FcTestRun {
    pub report: RunReport,
    /// The (file set, operation) coordinates of each of `report.jobs`, for the preset's table.
    pub coords: Vec<Vec<(String, String)>>,
    /// What stopped it, if it failed.
    pub error: Option<LabError>,
}

/// FC-Test with real files in `dir` (copy-across to `second_dir`): every phase of every set,
/// handed to the sink as it ends.
pub fn run_fctest(
    preset: &Preset,
    plan: &FcTestPlan,
    dir: &Path,
    second_dir: &Path,
    session: &Session<'_>,
    sink: &mut dyn RunSink,
) -> FcTestRun {
    sink.started(plan.phases());
    let description = format!(
        "directory {} (copy-across to {})",
        dir.display(),
        second_dir.display()
    );
    let mut coords = Vec::new();
    let mut jobs = Vec::new();
    let seed = plan.seed;
    let sets = &plan.sets;
    let result = crate::fctest::run(dir, second_dir, sets, seed, session.stop, &mut |phase| {
        let set = sets.iter().find(|s| s.name == phase.fileset);
        let setup = JobSetup {
            name: format!("{}/{}/{}", preset.name, phase.fileset, phase.operation),
            job: serde_json::json!({
                "preset": preset.name,
                "fileset": phase.fileset,
                "operation": phase.operation,
                "files": set.map_or(0, |s| s.files),
                "file_bytes": set.map_or(0, |s| s.file_bytes),
                "fsync": "every file and directory before the clock stops",
            }),
            engine: "files".into(),
            target: TargetInfo {
                description: description.clone(),
                kind: "directory".into(),
                size_bytes: phase.bytes,
                path: None,
            },
            device_state: "as-found".into(),
            data_pattern: "random".into(),
            align_bytes: storlab_job::DEFAULT_ALIGN_BYTES,
            seed,
            iodepth: 1,
            numjobs: 1,
            rw: phase.operation.into(),
            block_size: "1 MiB".into(),
        };
        let notes = JobNotes {
            engine_details: vec![("files".into(), phase.files.to_string())],
            ..JobNotes::default()
        };
        let report = JobReport::new(setup, notes, &phase.stats);
        let seconds = phase.stats.elapsed_ns as f64 / 1e9;
        sink.point_done(
            &report.setup.name,
            std::slice::from_ref(&report),
            &format!(
                "{} files, {:.2} s, {:.1} MB/s",
                phase.files,
                seconds,
                phase.bytes as f64 / seconds.max(f64::MIN_POSITIVE) / 1e6
            ),
        );
        coords.push(vec![
            ("fileset".into(), phase.fileset.clone()),
            ("operation".into(), phase.operation.to_string()),
        ]);
        jobs.push(report);
    });
    sink.ended();
    let mut report = session.new_report();
    report.jobs = jobs;
    FcTestRun {
        report,
        coords,
        error: result.err(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_job::Target;

    /// Never set: these runs go to the end.
    static STOP: AtomicBool = AtomicBool::new(false);

    /// What a sink was told, in order.
    #[derive(Default)]
    struct Recording {
        events: Vec<String>,
    }

    impl RunSink for Recording {
        fn started(&mut self, points: usize) {
            self.events.push(format!("started {points}"));
        }
        fn point_done(&mut self, name: &str, reports: &[JobReport], _summary: &str) {
            self.events
                .push(format!("{name}: {} reports", reports.len()));
        }
        fn ended(&mut self) {
            self.events.push("ended".into());
        }
    }

    fn session() -> Session<'static> {
        Session {
            options: ProviderOptions::default(),
            started_unix_ms: 0,
            stop: &STOP,
            live: None,
            peers: None,
        }
    }

    fn jobs(flags: &[&str]) -> JobSet {
        let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        storlab_job::parse_flags(&flags, Some(&Target::Sim("usb3-uas-ssd".into()))).unwrap()
    }

    /// A job set on a simulated stack: the sink hears of every job in order, between
    /// `started` and `ended`, and the report holds each job once.
    #[test]
    fn a_job_set_reports_every_job_to_the_sink() {
        let set = jobs(&[
            "--name=w",
            "--rw=write",
            "--bs=64k",
            "--size=4m",
            "--name=r",
            "--rw=read",
            "--bs=64k",
            "--size=4m",
        ]);
        assert_eq!(set.jobs.len(), 2);
        let mut sink = Recording::default();
        let run = run_job_set(&set, &session(), &mut sink);
        assert!(run.error.is_none(), "{:?}", run.error);
        assert!(!run.interrupted);
        assert_eq!(run.complete, 2);
        assert_eq!(
            sink.events,
            ["started 2", "w: 1 reports", "r: 1 reports", "ended"]
        );
        let names: Vec<&str> = run
            .report
            .jobs
            .iter()
            .map(|j| j.setup.name.as_str())
            .collect();
        assert_eq!(names, ["w", "r"]);
        assert_eq!(
            run.report.jobs[1].setup.target.description,
            "sim:usb3-uas-ssd"
        );
    }

    /// A sweep in a device state: every point is measured in that state's aftermath and
    /// carries its coordinates for the table.
    #[test]
    fn a_sweep_measures_its_points_after_the_state() {
        let set = jobs(&[
            "--name=p",
            "--rw=randwrite",
            "--bs=4k",
            "--size=4m",
            "--number_ios=64",
        ]);
        let plan = SweepPlan {
            preset: None,
            points: crate::sweep::job_points(set),
            state: DeviceState::SeqFilled,
            trim_between_steps: false,
        };
        let mut sink = Recording::default();
        let run = run_sweep(&plan, &session(), &mut sink);
        assert!(run.error.is_none(), "{:?}", run.error);
        assert_eq!(run.complete, 1);
        assert_eq!(sink.events, ["started 1", "p: 1 reports", "ended"]);
        assert_eq!(run.coords.len(), run.report.jobs.len());
        assert_ne!(run.report.jobs[0].setup.device_state, "as-found");
    }
}
