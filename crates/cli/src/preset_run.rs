//! `storlab run --preset NAME` and `--state` / `--trim-between-steps`: runs a sweep point by
//! point on one target, puts the target in the requested state first, records the state and
//! the honesty warnings with every result, prints the preset's table, and on Ctrl-C keeps the
//! points already measured.

use crate::args::RunArgs;
use crate::exit::{bad_input, run_failed, Failure};
use crate::output::print_or_write;
use crate::render::{job_table, render_report};
use crate::run_session::{arm_interrupt_handler, load_jobs, session, target_of, Finished, STOP};
use crate::run_sink::CliSink;
use crate::say::say;
use crate::sweep_table::{render, TablePoint};
use std::sync::atomic::Ordering;
use storlab_job::preset::Preset;
use storlab_job::steps::DeviceState;
use storlab_job::Target;
use storlab_lab::classify;
use storlab_lab::run::{FcTestPlan, FcTestRun, SweepPlan, SweepRun};
use storlab_lab::sweep::{fctest_directory, job_points, overrides_of, preset_points};
use storlab_report::RunReport;

/// Whether this run needs the sweep path (a preset, a state, or trims between steps).
pub fn wanted(args: &RunArgs) -> bool {
    args.preset.is_some() || args.state.is_some() || args.trim_between_steps
}

pub(crate) fn run(args: RunArgs) -> Result<Finished, Failure> {
    let state = args
        .state
        .as_deref()
        .map(DeviceState::parse)
        .transpose()
        .map_err(bad_input)?;
    // The output paths were checked by cmd_run::run before it came here.
    let cwd = std::env::current_dir().map_err(|e| bad_input(format!("current directory: {e}")))?;
    let (preset, points) = match &args.preset {
        Some(name) => {
            if args.job_file.is_some() {
                return Err(bad_input(
                    "--preset cannot be combined with a job file; use one or the other",
                ));
            }
            let preset = storlab_job::preset::load(name).map_err(bad_input)?;
            let target = match args.target() {
                Some(text) => target_of(text)?,
                None => Target::TempFileIn(cwd),
            };
            let overrides = overrides_of(&args.job_flags)?;
            if let Some(dir) = fctest_directory(&preset, &target) {
                return run_fctest_on_directory(&args, &preset, &overrides, &dir);
            }
            let points = preset_points(&preset, &overrides, &target)?;
            (Some(preset), points)
        }
        None => {
            let (set, _) = load_jobs(&args)?;
            (None, job_points(set))
        }
    };
    let state = state.unwrap_or_else(|| preset.as_ref().map_or(DeviceState::AsFound, |p| p.state));
    // A sweep point's job writes its target (a device state does) and may write logs: the same
    // checks as a job set's, before the first point.
    let point_jobs = storlab_job::JobSet {
        jobs: points.iter().map(|point| point.job.clone()).collect(),
    };
    let prepares_target = state != DeviceState::AsFound || args.trim_between_steps;
    crate::run_paths::check_sweep_paths(&args, &point_jobs, prepares_target)?;
    for point in &points {
        for warning in &point.job.warnings {
            say!("storlab: warning: job '{}': {warning}", point.job.name);
        }
    }
    arm_interrupt_handler();
    // Presets default to O_DIRECT; where the filesystem refuses it, measure buffered and let
    // the honesty check flag reads the page cache may have served.
    let session = session(&args, preset.is_some());
    let preset_name = preset.as_ref().map(|p| p.name.clone());
    let recorder = crate::db_support::recorder_for_run(
        &args.db,
        args.no_db,
        preset_name,
        session.started_unix_ms,
    )?;
    let mut sink = CliSink::new(recorder);
    let plan = SweepPlan {
        preset,
        points,
        state,
        trim_between_steps: args.trim_between_steps,
    };
    let SweepRun {
        report,
        coords,
        mut provider,
        error,
        complete,
    } = storlab_lab::run::run_sweep(&plan, &session, &mut sink);
    let result = error.map_or(Ok(()), Err);
    // Points missing from the database fail the run (exit 1) once the results are out.
    let saved = crate::db_support::finish_run(
        &mut sink.recorder,
        result.is_err(),
        STOP.load(Ordering::Relaxed),
        &report.warnings,
    );
    let run_id = sink.run_id();
    for warning in &report.warnings {
        say!("storlab: warning: {warning}");
    }
    // One target's part of a what-if comparison: the comparison writes the outputs.
    if args.compared {
        drop(provider);
        if let (Err(_), Err(unsaved)) = (&result, &saved) {
            say!("storlab: warning: {unsaved}");
        }
        if let Err(error) = result {
            return Finished::compared_part(report, run_id, classify(error));
        }
        saved?;
        return match finished_unless_stopped(report.clone(), run_id, complete) {
            Err(stopped) => Finished::compared_part(report, run_id, stopped),
            finished => finished,
        };
    }
    if let Some(path) = &args.report {
        let label = run_id.map_or("this run".into(), |id| id.to_string());
        crate::cmd_report::write_report(path, "--report", &[(label, report.clone())])?;
    }
    let rendered = render_report(args.output_format, &report, None, |report| {
        let mut text = String::new();
        if let Some(preset) = &plan.preset {
            let table_points: Vec<TablePoint<'_>> = coords
                .iter()
                .zip(&report.jobs)
                .map(|(coords, report)| TablePoint { coords, report })
                .collect();
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
    });
    print_or_write(args.output.as_deref(), &rendered, "--output")?;
    if let Some(pcap_path) = &args.pcap {
        crate::output::write_file(pcap_path, &provider.take_pcap()?, "--pcap")?;
    }
    drop(provider);
    if let (Err(_), Err(unsaved)) = (&result, &saved) {
        say!("storlab: warning: {unsaved}");
    }
    result.map_err(classify)?;
    saved?;
    finished_unless_stopped(report, run_id, complete)
}

/// The finished sweep, or the failure of one Ctrl-C stopped.
fn finished_unless_stopped(
    report: RunReport,
    run_id: Option<storlab_db::RunId>,
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
    args: &RunArgs,
    preset: &Preset,
    overrides: &[(String, Option<String>)],
    dir: &std::path::Path,
) -> Result<Finished, Failure> {
    let block_options = args.state.is_some() || args.trim_between_steps || args.pcap.is_some();
    let plan = FcTestPlan::new(preset, overrides, block_options)?;
    let second = args.second_dir.clone().unwrap_or_else(|| dir.to_path_buf());
    arm_interrupt_handler();
    let session = session(args, false);
    let recorder = crate::db_support::recorder_for_run(
        &args.db,
        args.no_db,
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
    let run_id = sink.run_id();
    let done = report.jobs.len();
    if args.compared {
        // One target's part of a what-if comparison: the comparison writes the outputs.
        if let (Err(_), Err(unsaved)) = (&result, &saved) {
            say!("storlab: warning: {unsaved}");
        }
        if let Err(error) = result {
            return Finished::compared_part(report, run_id, error);
        }
        saved?;
        return match fctest_finished_unless_stopped(report.clone(), run_id, done, total) {
            Err(stopped) => Finished::compared_part(report, run_id, stopped),
            finished => finished,
        };
    }
    let rendered = render_report(args.output_format, &report, None, |report| {
        let points: Vec<TablePoint<'_>> = coords
            .iter()
            .zip(&report.jobs)
            .map(|(coords, report)| TablePoint { coords, report })
            .collect();
        let title = format!(
            "{} — {} (real files in {})",
            preset.name,
            preset.description,
            dir.display()
        );
        format!("{}\n", render(&title, &preset.table, &points))
    });
    print_or_write(args.output.as_deref(), &rendered, "--output")?;
    if let Some(path) = &args.report {
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
    run_id: Option<storlab_db::RunId>,
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
