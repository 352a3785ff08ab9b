//! The first Ctrl-C (SIGINT) or SIGTERM ends every wait and loop of a run within a second: a
//! file layout of a huge `size=`, a `thinktime` (and its `thinktime_spin`), an iolog's `wait`.
//! A layout that cannot fit its file system is refused before it writes a byte, and a FIFO in
//! place of an input file (`verify_state_load`'s state, a `--profiles` file) is refused at once
//! instead of blocking the open.

use crate::common::{stderr, storlab};
use nix::sys::signal::Signal;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a run may take to end after its first signal.
const ANSWER_WITHIN: Duration = Duration::from_secs(1);

/// `storlab run --no-db ARGS` in `dir`, started.
fn start(dir: &Path, args: &[&str]) -> Child {
    storlab()
        .current_dir(dir)
        .args(["run", "--no-db"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The child's output once it exits, or `None` (it is killed) when it runs past `limit`.
fn exit_within(mut child: Child, limit: Duration) -> Option<Output> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Sends `signal` once `ready` holds (or after 20 s), then checks the run ends within
/// [`ANSWER_WITHIN`], failed (exit 1) and saying it was interrupted.
fn ends_on_first_signal(case: &str, child: Child, signal: Signal, ready: impl Fn() -> bool) {
    let started = Instant::now();
    while !ready() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    // Well inside the wait: the run has printed nothing that could still be in flight.
    std::thread::sleep(Duration::from_millis(300));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, signal).unwrap();
    let signalled = Instant::now();
    let out = exit_within(child, Duration::from_secs(30))
        .unwrap_or_else(|| panic!("{case}: still running 30 s after {signal}"));
    let took = signalled.elapsed();
    assert!(
        took < ANSWER_WITHIN,
        "{case}: ended {took:?} after {signal}; reproduce: run it and press Ctrl-C once"
    );
    assert_eq!(out.status.code(), Some(1), "{case}: {}", stderr(&out));
    assert!(
        stderr(&out).contains("interrupted"),
        "{case}: {}",
        stderr(&out)
    );
}

/// Bytes free on the file system of `dir` to an unprivileged writer.
fn free_bytes(dir: &Path) -> u64 {
    let stats = nix::sys::statvfs::statvfs(dir).unwrap();
    stats.blocks_available() * stats.fragment_size()
}

#[test]
fn a_huge_layout_stops_on_the_first_sigint_and_its_file_goes() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    // Far more than a second of writing, yet room for it: the free-space check lets it start.
    let size_bytes = (8u64 << 30).min(free_bytes(dir.path()) / 2);
    let size = format!("--size={size_bytes}");
    let child = start(dir.path(), &["--ioengine=psync", "--filename=big", &size]);
    let data = dir.path().join("big");
    ends_on_first_signal("layout", child, Signal::SIGINT, || {
        std::fs::metadata(&data).is_ok_and(|m| m.len() > 0)
    });
    assert!(!data.exists(), "the partly laid-out file stayed");
}

#[test]
fn a_layout_that_cannot_fit_is_refused_before_writing() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let size = format!("--size={}", free_bytes(dir.path()) + (1 << 30));
    let started = Instant::now();
    let child = start(dir.path(), &["--ioengine=psync", "--filename=big", &size]);
    let out = exit_within(child, Duration::from_secs(20)).expect("refused at once");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("big") && err.contains("free"), "{err}");
    assert!(!dir.path().join("big").exists(), "a file was left");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "it wrote first"
    );
}

#[test]
fn thinktime_and_its_spin_end_on_the_first_signal() {
    for (case, think, signal) in [
        ("thinktime", vec!["--thinktime=60s"], Signal::SIGTERM),
        (
            "thinktime_spin",
            vec!["--thinktime=60s", "--thinktime_spin=50s"],
            Signal::SIGINT,
        ),
    ] {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let mut args = vec!["--ioengine=psync", "--filename=data", "--size=1m"];
        args.extend(think);
        let child = start(dir.path(), &args);
        // The first I/O comes right after the layout; the stall follows it.
        let data = dir.path().join("data");
        ends_on_first_signal(case, child, signal, || {
            std::fs::metadata(&data).is_ok_and(|m| m.len() == 1 << 20)
        });
    }
}

#[test]
fn an_iolog_wait_ends_on_the_first_sigint() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    // Version 2: `wait` holds the replay until 60 s after the job started.
    std::fs::write(
        dir.path().join("trace.log"),
        "fio version 2 iolog\ndata add\ndata open\ndata read 0 4096\ndata wait 60000000 0\n\
         data read 4096 4096\ndata close\n",
    )
    .unwrap();
    let child = start(
        dir.path(),
        &[
            "--ioengine=psync",
            "--filename=data",
            "--size=1m",
            "--read_iolog=trace.log",
        ],
    );
    let data = dir.path().join("data");
    ends_on_first_signal("iolog wait", child, Signal::SIGINT, || {
        std::fs::metadata(&data).is_ok_and(|m| m.len() == 1 << 20)
    });
}

#[test]
fn a_fifo_as_an_input_file_is_refused_at_once() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mode = nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR;
    nix::unistd::mkfifo(&dir.path().join("local-job-0-verify.state"), mode).unwrap();
    let profiles = dir.path().join("profiles");
    std::fs::create_dir_all(profiles.join("stacks")).unwrap();
    nix::unistd::mkfifo(&profiles.join("stacks/mine.toml"), mode).unwrap();
    let profiles = format!("--profiles={}", profiles.display());
    for (case, args) in [
        (
            "verify_state_load",
            vec![
                "--ioengine=psync",
                "--filename=data",
                "--size=64k",
                "--rw=write",
                "--verify=crc32c",
                "--verify_state_load=1",
                // The load is what this case reads; saving is the written-path guard's
                // (written_paths.rs), which refuses a FIFO before the load would look.
                "--verify_state_save=0",
            ],
        ),
        (
            "--profiles",
            vec![&profiles, "--target=sim:usb3-uas-ssd", "--size=64k"],
        ),
    ] {
        let child = start(dir.path(), &args);
        let out = exit_within(child, Duration::from_secs(20))
            .unwrap_or_else(|| panic!("{case}: blocked on the FIFO"));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{case}: {err}");
        assert_eq!(err.lines().count(), 1, "{case}: {err}");
        assert!(err.contains("FIFO, not a regular file"), "{case}: {err}");
    }
}
