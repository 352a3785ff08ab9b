//! Helpers the integration tests of the `storlab` binary share: the binary with a results
//! database of the test's own (or one the test names), run in a directory, and its output as
//! text.
// `tests/it` and `tests/page_cache.rs` include this module; page_cache uses only a part of it.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `storlab` binary under test. Runs are saved to a results database: never the real one in
/// the user's home, but one per test binary and process, in the build's own temporary directory.
pub fn storlab() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_storlab"));
    let db_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "storlab-{}-{}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    command.env("STORLAB_DB", db_dir.join("results.sqlite"));
    command
}

/// `storlab ARGS` in `dir`, to its end.
pub fn run_in<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Output {
    storlab()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("storlab runs")
}

/// What the command printed on stderr.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// What the command printed on stdout.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `storlab` binary saving to the results database at `db` (a test that reads it back).
pub fn storlab_with_db(db: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_storlab"));
    command.env("STORLAB_DB", db);
    command
}

/// `storlab ARGS` saving to `db`, which must succeed (its stderr in the failure).
pub fn run_ok_with_db(db: &Path, args: &[&str]) -> Output {
    let out = storlab_with_db(db)
        .args(args)
        .output()
        .expect("storlab runs");
    assert!(
        out.status.success(),
        "storlab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `storlab run --no-db --output-format=fio-json ARGS` in `dir`, which must succeed: its JSON.
pub fn run_fio_json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["run", "--no-db", "--output-format=fio-json"];
    all.extend_from_slice(args);
    let out = run_in(dir, &all);
    assert!(out.status.success(), "storlab {args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// tshark's values of `fields` in the frames of `pcap` that match `filter`, one line per frame.
pub fn tshark_fields(pcap: &Path, filter: &str, fields: &[&str]) -> Option<Vec<String>> {
    let available = std::process::Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !available {
        assert!(
            std::env::var_os("CI").is_none(),
            "tshark is required in CI but was not found"
        );
        eprintln!("skipped: tshark not installed");
        return None;
    }
    let mut cmd = std::process::Command::new("tshark");
    cmd.arg("-r")
        .arg(pcap)
        .args(["-Y", filter, "-T", "fields", "-E", "occurrence=f"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "tshark: {}", stderr(&out));
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect(),
    )
}

/// A loop device over a sparse file in a directory of its own; detached on drop, however the
/// test ends. Needs root and losetup (the caller checks, and skips or fails as it should).
pub struct LoopDevice {
    pub path: PathBuf,
    pub dir: tempfile::TempDir,
}

impl LoopDevice {
    /// Attach a loop device over a new sparse file of `backing_bytes`.
    pub fn attach(backing_bytes: u64) -> LoopDevice {
        let dir = tempfile::tempdir().unwrap();
        let backing = dir.path().join("backing.img");
        std::fs::File::create(&backing)
            .unwrap()
            .set_len(backing_bytes)
            .unwrap();
        let mut device = LoopDevice::over(&backing);
        device.dir = dir;
        device
    }

    /// Attach a loop device over `backing`, a file the caller made where it wants it (on a
    /// small file system of its own, say) and removes.
    pub fn over(backing: &Path) -> LoopDevice {
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(backing)
            .output()
            .unwrap();
        assert!(out.status.success(), "losetup: {}", stderr(&out));
        let path = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
        let dir = tempfile::tempdir().unwrap();
        LoopDevice { path, dir }
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.path).status();
    }
}

/// A job's engine detail `key` (storlab's JSON `engine_details` pairs, the first job's) as a
/// number; None when the job did not record it.
pub fn engine_detail(doc: &serde_json::Value, key: &str) -> Option<u64> {
    doc["jobs"][0]["engine_details"]
        .as_array()
        .expect("engine details")
        .iter()
        .find(|d| d[0] == key)
        .and_then(|d| d[1].as_str()?.parse().ok())
}
