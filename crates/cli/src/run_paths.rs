//! What `storlab run` checks before its first I/O about the paths it will write: every output
//! (`--output`, `--report`, `--pcap`) and every file a job writes besides its target (fio's
//! logs, `write_iolog`, `verify_state_save`; `storlab_job::JobSet::written_paths`) goes through
//! the one guarded check (`storlab_engine::output_file::check_outputs`), and no job may write,
//! trim or delete the results database, its journals or the job file as its target, whichever
//! key led there (`--target`, `filename`, `directory` + `filename_format`, a `read_iolog`
//! trace's file names, `replay_redirect`). Each refusal is one line, exit 2.

use crate::exit::{bad_input, Failure};
use crate::output::{check_output_paths, database_files};
use crate::run_plan::{RunPlan, TargetRun};
use crate::run_session::target_of;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use storlab_job::{JobSet, Target};

/// The files no output and no job may write over, each with what it is: the results database
/// and its journals (even with --no-db: the database is worth keeping), the job file and the
/// `--profiles` files.
fn never_written(plan: &RunPlan) -> Vec<(&'static str, PathBuf)> {
    let mut files = plan
        .db
        .path()
        .ok()
        .map(|db| database_files(&db))
        .unwrap_or_default();
    let job_files = plan.jobs.file.iter().chain(&plan.jobs.more_files);
    files.extend(job_files.map(|job_file| ("the job file", job_file.clone())));
    if let Some(profiles) = &plan.profiles {
        files.extend(
            profile_files(profiles)
                .into_iter()
                .map(|f| ("a --profiles file", f)),
        );
    }
    files
}

/// Every profile file (`*.toml`) under the `--profiles` directory `dir`, the run's inputs as
/// much as the job file is (a few dozen files: read whole, once, before the run).
fn profile_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => dirs.push(path),
                Ok(_) if path.extension() == Some(OsStr::new("toml")) => found.push(path),
                _ => {}
            }
        }
    }
    found
}

/// The `--target` paths among `targets` (not simulated stacks).
fn target_paths<'t>(targets: impl IntoIterator<Item = &'t OsStr>) -> Vec<PathBuf> {
    targets
        .into_iter()
        .filter_map(|text| match target_of(text) {
            Ok(Target::Path(path)) => Some(path),
            _ => None,
        })
        .collect()
}

/// Refuses, before any work, an output path (`--output`, `--report`, `--pcap`) that is not a
/// regular file or nothing, that names the results database, the job file or the `--target`,
/// or that another of these outputs names too.
pub(crate) fn check_run_outputs(plan: &RunPlan) -> Result<(), Failure> {
    let targets = target_paths(plan.targets.iter().map(|t| t.as_os_str()));
    check_outputs_with(plan, &targets, &[], &[])
}

/// Refuses, before any job runs, what the jobs of `set` would write where they must not: a file
/// they write besides their target that the guarded check refuses (among the outputs, with the
/// jobs' targets protected too), and a target that is the results database, one of its
/// journals or the job file when the job changes it (or would create it). Files written per
/// run are refused in a what-if comparison, where every target's run would replace them.
pub(crate) fn check_job_paths(part: &TargetRun<'_>, set: &JobSet) -> Result<(), Failure> {
    check_sweep_paths(part, set, false)
}

/// [`check_job_paths`] for a sweep's points, whose targets a device state or a trim between
/// steps changes (`prepares_target`) whatever the points' jobs do.
pub(crate) fn check_sweep_paths(
    part: &TargetRun<'_>,
    set: &JobSet,
    prepares_target: bool,
) -> Result<(), Failure> {
    let named_by_target = target_paths(part.target);
    check_job_targets(part.plan, &named_by_target, set, prepares_target)?;
    let written = set.written_paths();
    if let (Some((key, _)), true) = (written.first(), part.compared()) {
        return Err(bad_input(format!(
            "{key}: with several --target, each target's run would replace the files the \
             others wrote; run one target at a time"
        )));
    }
    let written: Vec<(&str, &Path)> = written.iter().map(|(k, p)| (*k, p.as_path())).collect();
    // The jobs' targets, and the traces they replay: an input is read before the run and an
    // output replaces it after, so `--output trace.log` would lose the trace.
    let targets = set.jobs.iter().filter_map(|j| j.target_path());
    let traces = set
        .jobs
        .iter()
        .filter_map(|j| Some(j.replay.as_ref()?.trace.path.as_path()));
    let protected: Vec<(&str, &Path)> = targets
        .map(|t| ("a job's target", t))
        .chain(traces.map(|t| ("a job's read_iolog trace", t)))
        .collect();
    check_outputs_with(part.plan, &named_by_target, &written, &protected)
}

/// A job's target that is the results database, one of its journals or the job file, when
/// the job writes, trims or deletes it, would create it, or would grow it by laying it out (a
/// reading job whose size reaches past its end). `named_by_target`: the run's `--target`
/// paths, which the refusal names as such.
fn check_job_targets(
    plan: &RunPlan,
    named_by_target: &[PathBuf],
    set: &JobSet,
    prepares: bool,
) -> Result<(), Failure> {
    let protected = never_written(plan);
    for job in &set.jobs {
        let Some(target) = job.target_path() else {
            check_untargeted_unlink(job, &protected)?;
            continue;
        };
        let missing = std::fs::symlink_metadata(target).is_err();
        let grows = job.grows_target();
        if !prepares && !job.changes_target() && !missing && !grows {
            continue;
        }
        let Some((what, path)) = protected
            .iter()
            .find(|(_, path)| storlab_engine::output_file::same_file(target, path))
        else {
            continue;
        };
        let route = if named_by_target.iter().any(|t| t == target) {
            format!("--target {}", target.display())
        } else {
            format!("job '{}': its target {}", job.name, target.display())
        };
        let change = if missing {
            "creating"
        } else if grows && !job.changes_target() {
            "laying it out to the job's size"
        } else {
            "writing, trimming or deleting (unlink)"
        };
        return Err(bad_input(format!(
            "{route}: is {what} {}; {change} it would destroy it, so nothing was run",
            path.display()
        )));
    }
    Ok(())
}

/// A job with no target by name (the null engine opens no file) whose `unlink=1` still deletes
/// the file it names: refused when that file is one of `protected`.
fn check_untargeted_unlink(
    job: &storlab_job::JobSpec,
    protected: &[(&str, PathBuf)],
) -> Result<(), Failure> {
    for name in job.unlinked_files() {
        if let Some((what, path)) = protected
            .iter()
            .find(|(_, path)| storlab_engine::output_file::same_file(&name, path))
        {
            return Err(bad_input(format!(
                "job '{}': unlink=1 would delete {}, {what} {}, so nothing was run",
                job.name,
                name.display(),
                path.display()
            )));
        }
    }
    Ok(())
}

/// The checks of [`check_run_outputs`] against the `--target` paths `targets`, with
/// `more_outputs` (files the jobs write) and `more_protected` (the jobs' targets and traces,
/// each with what it is).
fn check_outputs_with(
    plan: &RunPlan,
    targets: &[PathBuf],
    more_outputs: &[(&str, &Path)],
    more_protected: &[(&str, &Path)],
) -> Result<(), Failure> {
    let outputs = &plan.outputs;
    let mut outputs: Vec<(&str, &Path)> = [
        ("--output", &outputs.output),
        ("--report", &outputs.report),
        ("--pcap", &outputs.pcap),
    ]
    .into_iter()
    .filter_map(|(option, path)| Some((option, path.as_deref()?)))
    .collect();
    outputs.extend_from_slice(more_outputs);
    if outputs.is_empty() {
        return Ok(());
    }
    let never = never_written(plan);
    let mut protected: Vec<(&str, &Path)> = never
        .iter()
        .map(|(what, path)| (*what, path.as_path()))
        .collect();
    protected.extend(targets.iter().map(|t| ("the --target", t.as_path())));
    protected.extend_from_slice(more_protected);
    check_output_paths(&outputs, &protected)
}
