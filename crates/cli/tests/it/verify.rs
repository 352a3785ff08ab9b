//! `storlab run --verify` through the binary on files it creates in a temporary directory: jobs
//! fio verifies without complaint pass, and every byte written is compared.

use std::path::Path;
use std::process::{Command, Output};

fn run_in(dir: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_storlab"));
    command
        .current_dir(dir)
        .args(["run", "--no-db", "--output-format=json", "--target=data"])
        .args(args)
        .output()
        .expect("storlab runs")
}

/// Every job of a successful run: (verified bytes, bytes written).
fn verified_and_written(dir: &Path, args: &[&str]) -> Vec<(u64, u64)> {
    let out = run_in(dir, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|job| {
            let verified = job["engine_details"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d[0] == "verified_bytes")
                .and_then(|d| d[1].as_str()?.parse().ok())
                .expect("verified_bytes recorded");
            (verified, job["write"]["bytes"].as_u64().unwrap_or(0))
        })
        .collect()
}

/// A sequential write mixing 512 B and larger blocks (fio passes it) reads back intact: all of
/// it but the few bytes at the end of the region that a block too large to fit skipped (the
/// sequential cursor goes round instead, so the run's last bytes rewrite its first).
#[test]
fn sequential_writes_of_mixed_sizes_verify() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data"), vec![0u8; 1 << 20]).unwrap();
    for sizes in ["--bssplit=512/50:4k/50", "--bsrange=512-64k"] {
        let jobs = verified_and_written(
            dir.path(),
            &["--rw=write", "--size=1m", sizes, "--verify=crc32c"],
        );
        let [(verified, written)] = jobs[..] else {
            panic!("one job: {jobs:?}")
        };
        assert_eq!(written, 1 << 20, "{sizes}");
        assert!(
            verified <= written && verified > written - (64 << 10),
            "{sizes}: verified {verified} of {written}"
        );
    }
}

/// Two workers writing the same bytes (no `offset_increment`) sequentially: each checks what it
/// wrote, and what the other wrote over it in step is not a mismatch (fio passes it every run).
/// Random writes there fail in fio every run (a block's header names the other clone), so
/// storlab refuses them in one line rather than pass.
#[test]
fn overlapping_workers_verify() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data"), vec![0u8; 4 << 20]).unwrap();
    let flags = ["--size=4m", "--numjobs=2", "--verify=crc32c"];
    let jobs = verified_and_written(dir.path(), &[&["--rw=write"][..], &flags].concat());
    assert!(
        jobs.iter().all(|(verified, _)| *verified == 8 << 20),
        "{jobs:?}"
    );
    let random = run_in(dir.path(), &[&["--rw=randwrite"][..], &flags].concat());
    let stderr = String::from_utf8_lossy(&random.stderr);
    assert_eq!(random.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--numjobs=2: with verify, clones"),
        "{stderr}"
    );
}
