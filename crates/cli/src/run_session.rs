//! What every `storlab run` path shares, below the commands: the job set it reads (a job file,
//! job flags or the built-in quick set), the `--target` it names, the session it opens (the
//! provider's options, Ctrl-C's stop flag and handler, the progress counters), and the result it
//! hands a what-if comparison.

use crate::args::RunArgs;
use crate::exit::{bad_input, Failure};
use crate::say::say;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use storlab_job::keys::SIM_TARGET_PREFIX;
use storlab_job::{JobSet, Target};
use storlab_lab::provider::ProviderOptions;
use storlab_lab::run::Session;
use storlab_report::RunReport;

/// The built-in quick set, a real fio job file parsed like any other.
const DEFAULT_JOB_FILE: &str = include_str!("default.fio");
const DEFAULT_JOB_FILE_NAME: &str = "<built-in quick set>";

/// Set by the first Ctrl-C: the runner stops issuing and the finished jobs are reported.
pub(crate) static STOP: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicUsize = AtomicUsize::new(0);
/// Exit code after a second Ctrl-C (128 + SIGINT), as shells expect.
const EXIT_SECOND_INTERRUPT: i32 = 130;

/// One target's finished run, handed back to a what-if comparison: its results, when it was
/// saved its id in the results database, and what cut it short, if anything did (a failed
/// job, a failed run or an interruption after some results were in).
pub(crate) struct Finished {
    pub report: RunReport,
    pub run_id: Option<storlab_db::RunId>,
    pub failure: Option<Failure>,
}

impl Finished {
    /// A run that ended as planned.
    pub(crate) fn complete(report: RunReport, run_id: Option<storlab_db::RunId>) -> Finished {
        Finished {
            report,
            run_id,
            failure: None,
        }
    }

    /// One target's part of a what-if comparison that `failure` cut short: its results, with
    /// the failure beside them, for the comparison to write with the other targets'; only the
    /// failure when nothing finished.
    pub(crate) fn compared_part(
        report: RunReport,
        run_id: Option<storlab_db::RunId>,
        failure: Failure,
    ) -> Result<Finished, Failure> {
        if report.jobs.is_empty() {
            return Err(failure);
        }
        Ok(Finished {
            report,
            run_id,
            failure: Some(failure),
        })
    }
}

/// The session of a run: its provider's options from the flags (`direct_fallback` for the
/// built-in quick set and presets), its start time, Ctrl-C and the progress counters.
pub(crate) fn session(args: &RunArgs, direct_fallback: bool) -> Session<'static> {
    Session {
        options: ProviderOptions {
            destructive: args.destructive.clone(),
            profiles: args.profiles.clone(),
            direct_fallback,
            pcap: args.pcap.is_some(),
            sim_timing_only: false,
            sim_faults: args.faults.as_deref().cloned(),
        },
        started_unix_ms: crate::db_support::now_unix_ms(),
        stop: &STOP,
        live: Some(&crate::progress::LIVE),
        peers: None,
    }
}

/// The options of the run's job set as written (fio-shaped JSON echoes them): the job file
/// after the flags beside it, the flags alone, or the built-in quick set. `None` for a file that
/// cannot be read again (its jobs were read; the JSON then lists their resolved settings) and
/// for a preset.
pub(crate) fn written_options(args: &RunArgs) -> Option<storlab_job::written::WrittenOptions> {
    use storlab_job::written;
    if args.preset.is_some() {
        // A preset's points are not written options of a job set.
        return None;
    }
    let mut written = match &args.job_file {
        Some(path) => {
            let text = std::fs::read_to_string(path).ok()?;
            written::of_fio_text(&text, &args.job_flags)
        }
        None if !args.job_flags.is_empty() => written::of_flags(&args.job_flags),
        None => written::of_fio_text(DEFAULT_JOB_FILE, &[]),
    };
    if !args.sections.is_empty() {
        let keep: Vec<bool> = written
            .names
            .iter()
            .map(|name| args.sections.contains(name))
            .collect();
        let mut index = 0..;
        written.jobs.retain(|_| keep[index.next().unwrap_or(0)]);
        written.names.retain(|name| args.sections.contains(name));
    }
    Some(written)
}

/// The jobs of `set` whose sections `--section` names (fio's `--section`: the file's
/// `[global]` still applies); every name must be a section of the job file.
fn select_sections(args: &RunArgs, set: &mut JobSet) -> Result<(), Failure> {
    if args.sections.is_empty() {
        return Ok(());
    }
    let Some(path) = &args.job_file else {
        return Err(bad_input(
            "--section: selects sections of a job file; give one",
        ));
    };
    let text =
        std::fs::read_to_string(path).map_err(|e| bad_input(format!("{}: {e}", path.display())))?;
    let names = storlab_job::written::of_fio_text(&text, &[]).names;
    if let Some(missing) = args.sections.iter().find(|s| !names.contains(s)) {
        return Err(bad_input(format!(
            "--section {missing}: {} has no such section (it has {})",
            path.display(),
            names.join(", ")
        )));
    }
    let mut index = 0..;
    set.jobs.retain(|_| {
        let name = &names[index.next().unwrap_or(0)];
        args.sections.contains(name)
    });
    Ok(())
}

/// The job set: a job file, job flags, or the built-in quick set when neither is given, each job
/// on the `--target` if one was given (read and validated on it: a simulated drive or an existing
/// file needs no `size`, a temporary file does).
pub(crate) fn load_jobs(args: &RunArgs) -> Result<(JobSet, bool), Failure> {
    let target = args.target().map(target_of).transpose()?;
    match (&args.job_file, args.job_flags.is_empty()) {
        // Job flags beside a job file are global options for it, as on fio's command line.
        (Some(path), _) => {
            let mut set =
                storlab_job::parse_fio_file_with_flags(path, target.as_ref(), &args.job_flags)
                    .map_err(bad_input)?;
            select_sections(args, &mut set)?;
            Ok((set, false))
        }
        (None, false) => Ok((
            storlab_job::parse_flags(&args.job_flags, target.as_ref()).map_err(bad_input)?,
            false,
        )),
        (None, true) => {
            let target = match target {
                Some(target) => target,
                None => Target::TempFileIn(
                    std::env::current_dir()
                        .map_err(|e| bad_input(format!("current directory: {e}")))?,
                ),
            };
            let mut set =
                storlab_job::parse_fio_str(DEFAULT_JOB_FILE, DEFAULT_JOB_FILE_NAME, Some(&target))
                    .map_err(bad_input)?;
            // The quick set is storlab's own, written in fio's language: it keeps storlab's
            // generator (ADR 0021).
            set.jobs.iter_mut().for_each(|job| job.fio_random = None);
            Ok((set, true))
        }
    }
}

/// `--target` as a job target: `sim:STACK` is a simulated stack, anything else a file or a block
/// device. A path is any bytes the OS allows (not only UTF-8); the prefix is found on the bytes.
pub(crate) fn target_of(text: &OsStr) -> Result<Target, Failure> {
    match text
        .as_encoded_bytes()
        .strip_prefix(SIM_TARGET_PREFIX.as_bytes())
    {
        _ if text.is_empty() => Err(bad_input(
            "--target: empty; give a file, a block device, or sim:STACK",
        )),
        Some([]) => Err(bad_input(
            "--target sim:: name a stack (see `storlab stacks`)",
        )),
        Some(stack) => match std::str::from_utf8(stack) {
            Ok(stack) => Ok(Target::Sim(stack.to_string())),
            Err(_) => Err(bad_input(format!(
                "--target {}: not a stack name (stack names are text; see `storlab stacks`)",
                Path::new(text).display()
            ))),
        },
        None => Ok(Target::Path(PathBuf::from(text))),
    }
}

/// Ctrl-C's handler, installed by `main` before anything but the standard streams is open
/// (see [`start_interrupt_thread`]); until a run arms it here, a Ctrl-C aborts at once, as
/// without a handler.
pub(crate) fn arm_interrupt_handler() {
    ARMED.store(true, Ordering::SeqCst);
}

/// Whether a run is under way: Ctrl-C then stops it after the I/O in flight.
static ARMED: AtomicBool = AtomicBool::new(false);

/// Start Ctrl-C's handler thread (the `ctrlc` crate's), then give the calling thread its own
/// descriptor table: the handler thread keeps the one it shares, which holds only the standard
/// streams and the handler's pipe, and every file `run` opens later is in this thread's table
/// alone. A lone job that runs on this thread then does its I/O with the kernel's one-thread
/// descriptor path, as fio's job processes do (`storlab_engine::descriptors`). Called once,
/// first thing in `main`, for `run` only.
pub(crate) fn start_interrupt_thread() {
    let installed = ctrlc::set_handler(|| {
        if ARMED.load(Ordering::SeqCst) && SIGNALS.fetch_add(1, Ordering::SeqCst) == 0 {
            STOP.store(true, Ordering::SeqCst);
            storlab_engine::layout::stop_layouts();
            say!("storlab: stopping after the I/O in flight (Ctrl-C again to abort now)");
        } else {
            storlab_engine::target::cleanup_temp_files();
            storlab_lab::fctest::cleanup_work_dirs();
            std::process::exit(EXIT_SECOND_INTERRUPT);
        }
    });
    if let Err(error) = installed {
        say!("storlab: warning: Ctrl-C handler not installed ({error}); an interrupted run may leave its temporary file");
        return;
    }
    // Without a table of its own the run is only slower (the kernel's shared-table path).
    let _ = storlab_engine::descriptors::use_private_descriptor_table();
}
