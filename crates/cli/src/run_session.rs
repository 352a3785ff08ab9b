//! What every `storlab run` path shares, below the commands: the `--target` it names, the
//! session it opens (the provider's options, Ctrl-C's stop flag and handler, the progress
//! counters), and the result it hands a what-if comparison. The jobs it reads are the plan's
//! (`run_plan.rs`).

use crate::exit::{bad_input, Failure};
use crate::run_plan::RunPlan;
use crate::say::say;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use storlab_job::keys::SIM_TARGET_PREFIX;
use storlab_job::Target;
use storlab_lab::provider::ProviderOptions;
use storlab_lab::run::Session;

/// Set by the first Ctrl-C: the runner stops issuing and the finished jobs are reported.
pub(crate) static STOP: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicUsize = AtomicUsize::new(0);
/// Exit code after a second Ctrl-C (128 + SIGINT), as shells expect.
const EXIT_SECOND_INTERRUPT: i32 = 130;

/// One target's finished run, as the lab hands it to a what-if comparison.
pub(crate) use storlab_lab::what_if::Finished;

/// The session of a run: its provider's options from the flags (`direct_fallback` for the
/// built-in quick set and presets), its start time, Ctrl-C and the progress counters.
pub(crate) fn session(plan: &RunPlan, direct_fallback: bool) -> Session<'static> {
    Session {
        options: ProviderOptions {
            destructive: plan.destructive.clone(),
            profiles: plan.profiles.clone(),
            direct_fallback,
            pcap: plan.outputs.pcap.is_some(),
            sim_timing_only: false,
            sim_faults: plan.faults.as_deref().cloned(),
            what_if_args: what_if_args(std::env::args_os().skip(1)),
        },
        started_unix_ms: crate::db_support::now_unix_ms(),
        stop: &STOP,
        live: Some(&crate::progress::LIVE),
        peers: None,
    }
}

/// The flags, each with its value, that a what-if command leaves out: the targets (it names
/// its own) and what this run writes besides them (a pasted what-if must not overwrite them).
const NOT_IN_WHAT_IF: [&str; 5] = [
    "--target",
    "--destructive",
    "--output",
    "--report",
    "--pcap",
];

/// This run's arguments (`run --rw=read ...`) without [`NOT_IN_WHAT_IF`]: a real target's path
/// verdict appends `--target sim:STACK` to them for its what-if command. `None` when an
/// argument is not text (the command could not be printed as typed).
fn what_if_args(args: impl Iterator<Item = std::ffi::OsString>) -> Option<Vec<String>> {
    let mut kept = Vec::new();
    let mut value_follows = false;
    for arg in args {
        let arg = arg.into_string().ok()?;
        if std::mem::take(&mut value_follows) {
            continue;
        }
        let flag = arg.split('=').next().unwrap_or_default();
        if NOT_IN_WHAT_IF.contains(&flag) {
            value_follows = !arg.contains('=');
            continue;
        }
        kept.push(arg);
    }
    Some(kept)
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

#[cfg(test)]
mod tests {
    use super::what_if_args;

    #[test]
    fn a_what_if_keeps_the_job_and_drops_targets_and_outputs() {
        let args = [
            "run",
            "--target",
            "/dev/sdb",
            "--rw=read",
            "--output=r.json",
            "--report",
            "r.html",
            "--target=/mnt/f",
            "--size",
            "1g",
        ];
        assert_eq!(
            what_if_args(args.iter().map(Into::into)).unwrap(),
            ["run", "--rw=read", "--size", "1g"]
        );
    }
}
