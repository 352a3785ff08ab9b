//! One read of the job file per run (issue 36: `run`'s arguments are resolved once into a plan,
//! `crates/cli/src/run_plan.rs`): `strace -f -e trace=openat` sees every file `storlab run`
//! opens, in every thread, and the job file must be opened exactly once, for a plain run, a
//! what-if run over three targets (each target checked, then run), a sweep, a run whose
//! fio-shaped JSON echoes the job file's options, `--showcmd` and `--parse-only` (main's build
//! opened it 2, 6, 1, 13, 3 and 3 times). Skipped with a message where strace is missing; CI
//! installs it (`.ci/run`) and fails the test without it.

use crate::common::stderr;
use std::path::Path;
use std::process::Command;

/// A job file of two jobs, short and on a simulated stack (virtual time: quick).
const JOB_FILE: &str = "[global]\nrw=randread\nbs=4k\nsize=1m\nruntime=1\n[a]\n[b]\n";

/// Whether strace can trace here (installed, and ptrace allowed).
fn strace_present() -> bool {
    let works = Command::new("strace")
        .args(["-qq", "-e", "trace=none", "true"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !works {
        assert!(
            std::env::var_os("CI").is_none(),
            "strace is required in CI but cannot run"
        );
        eprintln!("skipped: strace not installed or not allowed to trace");
    }
    works
}

/// How many times `storlab run job.fio ARGS --no-db` in `dir` opened the job file, in any
/// thread; the run must succeed.
fn job_file_openings(dir: &Path, args: &[&str]) -> usize {
    let trace = dir.join("openat.trace");
    let out = Command::new("strace")
        .current_dir(dir)
        .args(["-f", "-qq", "-e", "trace=openat", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_storlab"))
        .args(["run", "job.fio", "--no-db"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "storlab run job.fio --no-db {}: {}",
        args.join(" "),
        stderr(&out)
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    let openings: Vec<&str> = text
        .lines()
        .filter(|line| line.contains("\"job.fio\""))
        .collect();
    // A failure shows the openings and the command that reproduces them.
    if openings.len() != 1 {
        eprintln!(
            "in {}: strace -f -e trace=openat storlab run job.fio --no-db {}\n{}",
            dir.display(),
            args.join(" "),
            openings.join("\n")
        );
    }
    openings.len()
}

#[test]
fn a_run_reads_its_job_file_once() {
    if !strace_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("job.fio"), JOB_FILE).unwrap();
    let three_targets = [
        "--target",
        "sim:usb3-uas-ssd",
        "--target",
        "sim:usb3-bot-ssd",
        "--target",
        "sim:usb2-uas-ssd",
    ];
    let runs: [&[&str]; 6] = [
        // A plain run: the jobs read, run, and the table written.
        &["--target", "sim:usb3-uas-ssd"],
        // What-if: every target checked before the first runs, then each run in turn.
        &three_targets,
        // fio-shaped JSON echoes the options as written, and --section selects from the file.
        &[
            &three_targets[..],
            &["--output-format=fio-json", "--section", "a"],
        ]
        .concat(),
        // A sweep: the job set's points, each trimmed first.
        &["--target", "sim:usb3-uas-ssd", "--trim-between-steps"],
        // fio's --showcmd: the jobs checked, then written as one command line.
        &["--showcmd"],
        // fio's --parse-only: the jobs read and checked on every target.
        &[&three_targets[..], &["--parse-only"]].concat(),
    ];
    for args in runs {
        assert_eq!(job_file_openings(dir.path(), args), 1, "{args:?}");
    }
}
