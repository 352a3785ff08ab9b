//! `storlab run --preset NAME` and `--state` / `--trim-between-steps`: runs a sweep point by
//! point on one target, puts the target in the requested state first, records the state and
//! the honesty warnings with every result, prints the preset's table, and on Ctrl-C keeps the
//! points already measured.

use crate::exit::{bad_input, run_failed, Failure};
use crate::output::print_or_write;
use crate::render::{job_table, render_report};
use crate::run_plan::{SweepRequest, TargetRun};
use crate::run_session::{arm_interrupt_handler, session, target_of, Finished, STOP};
use crate::run_sink::CliSink;
use crate::say::say;
use crate::sweep_table::{render, TablePoint};
use std::sync::atomic::Ordering;
use storlab_job::preset::Preset;
use storlab_job::steps::DeviceState;
use storlab_job::Target;
use storlab_lab::classify;
use storlab_lab::run::{FcTestPlan, FcTestRun, SweepPlan};
use storlab_lab::sweep::{fctest_directory, job_points, overrides_of, preset_points};
use storlab_report::RunReport;

/// The sweep `sweep` on `part`'s target: its points, checked, run in turn on one session, the
/// run saved, and (unless the run is part of a what-if comparison) its outputs written.
pub(crate) fn run(part: &TargetRun<'_>, sweep: &SweepRequest) -> Result<Finished, Failure> {
    let state = sweep
        .state
        .as_deref()
        .map(DeviceState::parse)
        .transpose()
        .map_err(bad_input)?;
    let (preset, points) = match sweep_points(part, sweep)? {
        SweepPoints::Points { preset, points } => (preset, points),
        SweepPoints::FcTest {
            preset,
            overrides,
            dir,
        } => return run_fctest_on_directory(part, sweep, &preset, &overrides, &dir),
    };
    let state = state.unwrap_or_else(|| preset.as_ref().map_or(DeviceState::AsFound, |p| p.state));
    // A sweep point's job writes its target (a device state does) and may write logs: the same
    // checks as a job set's, before the first point.
    let point_jobs = storlab_job::JobSet {
        jobs: points.iter().map(|point| point.job.clone()).collect(),
    };
    let prepares_target = state != DeviceState::AsFound || sweep.trim_between_steps;
    crate::run_paths::check_sweep_paths(part, &point_jobs, prepares_target)?;
    for point in &points {
        for warning in &point.job.warnings {
            say!("storlab: warning: job '{}': {warning}", point.job.name);
        }
    }
    arm_interrupt_handler();
    // Presets default to O_DIRECT; where the filesystem refuses it, measure buffered and let
    // the honesty check flag reads the page cache may have served.
    let session = session(part.plan, preset.is_some());
    let preset_name = preset.as_ref().map(|p| p.name.clone());
    let recorder = crate::db_support::recorder_for_run(
        &part.plan.db,
        part.no_db,
        preset_name,
        session.started_unix_ms,
    )?;
    let mut sink = CliSink::new(recorder);
    let plan = SweepPlan {
        preset,
        points,
        state,
        trim_between_steps: sweep.trim_between_steps,
    };
    let run = storlab_lab::run::run_sweep(&plan, &session, &mut sink);
    let result = run.error.map_or(Ok(()), Err);
    // Points missing from the database fail the run (exit 1) once the results are out.
    let saved = crate::db_support::finish_run(
        &mut sink.recorder,
        result.is_err(),
        STOP.load(Ordering::Relaxed),
        &run.report.warnings,
    );
    let ended = SweepEnd {
        report: run.report,
        run_id: sink.run_id().map(|id| id.to_string()),
        result,
        saved,
        complete: run.complete,
    };
    for warning in &ended.report.warnings {
        say!("storlab: warning: {warning}");
    }
    let mut provider = run.provider;
    // One target's part of a what-if comparison: the comparison writes the outputs.
    if part.compared() {
        drop(provider);
        return ended.compared_part();
    }
    let rendered = render_report(part.plan.outputs.format, &ended.report, None, |report| {
        sweep_table(&plan, state, &run.coords, report)
    });
    write_sweep_outputs(part, &ended, &rendered, &mut provider)?;
    drop(provider);
    ended.own_run()
}

/// Where a sweep's points come from: a preset's (FC-Test on real files when its target is a
/// directory) or the job set's, one point a job.
enum SweepPoints {
    Points {
        preset: Option<Preset>,
        points: Vec<storlab_job::preset::SweepPoint>,
    },
    FcTest {
        preset: Preset,
        overrides: Vec<(String, Option<String>)>,
        dir: std::path::PathBuf,
    },
}

/// The points of `sweep` on `part`'s target.
fn sweep_points(part: &TargetRun<'_>, sweep: &SweepRequest) -> Result<SweepPoints, Failure> {
    // The output paths were checked by cmd_run::run before it came here.
    let cwd = std::env::current_dir().map_err(|e| bad_input(format!("current directory: {e}")))?;
    let Some(name) = &sweep.preset else {
        let (set, _) = part.load_jobs()?;
        return Ok(SweepPoints::Points {
            preset: None,
            points: job_points(set),
        });
    };
    if part.plan.jobs.file.is_some() {
        return Err(bad_input(
            "--preset cannot be combined with a job file; use one or the other",
        ));
    }
    let preset = storlab_job::preset::load(name).map_err(bad_input)?;
    let target = match part.target {
        Some(text) => target_of(text)?,
        None => Target::TempFileIn(cwd),
    };
    let overrides = overrides_of(&part.plan.jobs.flags)?;
    if let Some(dir) = fctest_directory(&preset, &target) {
        if part.plan.repeat > 1 {
            return Err(bad_input(
                "--repeat: FC-Test on a directory runs its file sets once; drop --repeat",
            ));
        }
        return Ok(SweepPoints::FcTest {
            preset,
            overrides,
            dir,
        });
    }
    let points = storlab_job::repeat_points(
        preset_points(&preset, &overrides, &target)?,
        part.plan.repeat,
    );
    Ok(SweepPoints::Points {
        preset: Some(preset),
        points,
    })
}

/// A sweep that ran (whole or in part): its results, its saved run, and how it ended.
struct SweepEnd {
    report: RunReport,
    run_id: Option<String>,
    /// The error that stopped the sweep, if one did.
    result: Result<(), storlab_runner::RunError>,
    /// Whether every point reached the results database.
    saved: Result<(), Failure>,
    /// Points finished.
    complete: usize,
}

impl SweepEnd {
    /// One target's part of a what-if comparison: its results and what cut it short.
    fn compared_part(self) -> Result<Finished, Failure> {
        let SweepEnd {
            report,
            run_id,
            result,
            saved,
            complete,
        } = self;
        if let (Err(_), Err(unsaved)) = (&result, &saved) {
            say!("storlab: warning: {unsaved}");
        }
        if let Err(error) = result {
            return Finished::compared_part(report, run_id, classify(error));
        }
        saved?;
        match finished_unless_stopped(report.clone(), run_id.clone(), complete) {
            Err(stopped) => Finished::compared_part(report, run_id, stopped),
            finished => finished,
        }
    }

    /// A sweep run on its own, its outputs written: the failure that stopped it, else the
    /// points the database missed, else an interruption.
    fn own_run(self) -> Result<Finished, Failure> {
        if let (Err(_), Err(unsaved)) = (&self.result, &self.saved) {
            say!("storlab: warning: {unsaved}");
        }
        self.result.map_err(classify)?;
        self.saved?;
        finished_unless_stopped(self.report, self.run_id, self.complete)
    }
}

/// Each measured point's coordinates beside its job's report, as the preset's table reads them.
fn table_points<'a>(
    coords: &'a [Vec<(String, String)>],
    report: &'a RunReport,
) -> Vec<TablePoint<'a>> {
    coords
        .iter()
        .zip(&report.jobs)
        .map(|(coords, report)| TablePoint { coords, report })
        .collect()
}

/// A sweep's table: the preset's (with the device state it started from) above the jobs'.
fn sweep_table(
    plan: &SweepPlan,
    state: DeviceState,
    coords: &[Vec<(String, String)>],
    report: &RunReport,
) -> String {
    let mut text = String::new();
    if let Some(preset) = &plan.preset {
        let table_points = table_points(coords, report);
        let title = format!(
            "{} — {} (device state before the first point: {})",
            preset.name,
            preset.description,
            state.label()
        );
        text.push_str(&render(&title, &preset.table, &table_points));
        for job in report.jobs.iter() {
            if let Some(found) = &job.write_cliffs {
                text.push_str(&storlab_report::cliff_lines(&job.setup.name, found));
            }
        }
        text.push('\n');
    }
    text.push_str(&job_table(report));
    text
}

/// A sweep's outputs, in their order: the `--report` HTML, the rendered results (stdout or
/// `--output`), the `--pcap` capture.
fn write_sweep_outputs(
    part: &TargetRun<'_>,
    ended: &SweepEnd,
    rendered: &str,
    provider: &mut storlab_lab::provider::Provider,
) -> Result<(), Failure> {
    let outputs = &part.plan.outputs;
    if let Some(path) = &outputs.report {
        let label = ended.run_id.clone().unwrap_or_else(|| "this run".into());
        crate::cmd_report::write_report(path, "--report", &[(label, ended.report.clone())])?;
    }
    print_or_write(outputs.output.as_deref(), rendered, "--output")?;
    if let Some(pcap_path) = &outputs.pcap {
        crate::output::write_file(pcap_path, &provider.take_pcap()?, "--pcap")?;
    }
    Ok(())
}

/// The finished sweep, or the failure of one Ctrl-C stopped.
fn finished_unless_stopped(
    report: RunReport,
    run_id: Option<String>,
    complete: usize,
) -> Result<Finished, Failure> {
    if STOP.load(Ordering::Relaxed) {
        return Err(run_failed(format!(
            "interrupted: {complete} sweep points finished and are reported above"
        )));
    }
    Ok(Finished::complete(report, run_id))
}

/// FC-Test with real files in `dir`: every phase of every set, saved and printed as it ends,
/// then the preset's table (rows = file sets, columns = operations).
fn run_fctest_on_directory(
    part: &TargetRun<'_>,
    sweep: &SweepRequest,
    preset: &Preset,
    overrides: &[(String, Option<String>)],
    dir: &std::path::Path,
) -> Result<Finished, Failure> {
    let outputs = &part.plan.outputs;
    let block_options = sweep.state.is_some() || sweep.trim_between_steps || outputs.pcap.is_some();
    let plan = FcTestPlan::new(preset, overrides, block_options)?;
    let second = sweep
        .second_dir
        .clone()
        .unwrap_or_else(|| dir.to_path_buf());
    arm_interrupt_handler();
    let session = session(part.plan, false);
    let recorder = crate::db_support::recorder_for_run(
        &part.plan.db,
        part.no_db,
        Some(preset.name.clone()),
        session.started_unix_ms,
    )?;
    let total = plan.phases();
    let mut sink = CliSink::new(recorder);
    let FcTestRun {
        report,
        coords,
        error,
    } = storlab_lab::run::run_fctest(preset, &plan, dir, &second, &session, &mut sink);
    let result = error.map_or(Ok(()), Err);
    // Points missing from the database fail the run (exit 1) once the results are out.
    let saved = crate::db_support::finish_run(
        &mut sink.recorder,
        result.is_err(),
        STOP.load(Ordering::Relaxed),
        &report.warnings,
    );
    let run_id = sink.run_id().map(|id| id.to_string());
    let done = report.jobs.len();
    if part.compared() {
        // One target's part of a what-if comparison: the comparison writes the outputs.
        if let (Err(_), Err(unsaved)) = (&result, &saved) {
            say!("storlab: warning: {unsaved}");
        }
        if let Err(error) = result {
            return Finished::compared_part(report, run_id, error);
        }
        saved?;
        return match fctest_finished_unless_stopped(report.clone(), run_id.clone(), done, total) {
            Err(stopped) => Finished::compared_part(report, run_id, stopped),
            finished => finished,
        };
    }
    let rendered = render_report(outputs.format, &report, None, |report| {
        let points = table_points(&coords, report);
        let title = format!(
            "{} — {} (real files in {})",
            preset.name,
            preset.description,
            dir.display()
        );
        format!("{}\n", render(&title, &preset.table, &points))
    });
    print_or_write(outputs.output.as_deref(), &rendered, "--output")?;
    if let Some(path) = &outputs.report {
        crate::cmd_report::write_report(path, "--report", &[("this run".into(), report.clone())])?;
    }
    if let (Err(_), Err(unsaved)) = (&result, &saved) {
        say!("storlab: warning: {unsaved}");
    }
    result?;
    saved?;
    fctest_finished_unless_stopped(report, run_id, done, total)
}

/// The finished FC-Test run, or the failure of one Ctrl-C stopped.
fn fctest_finished_unless_stopped(
    report: RunReport,
    run_id: Option<String>,
    done: usize,
    total: usize,
) -> Result<Finished, Failure> {
    if STOP.load(Ordering::Relaxed) {
        return Err(run_failed(format!(
            "interrupted: {done} of {total} phases finished and are reported above"
        )));
    }
    Ok(Finished::complete(report, run_id))
}
