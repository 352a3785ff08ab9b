//! fio's batching keys and CPU placement (issue 20, fio's t0009): `iodepth_batch_submit`,
//! `iodepth_batch_complete_min`/`_max`, `iodepth_low`, `cpus_allowed` and
//! `cpus_allowed_policy`. Each batching job runs on a file the test creates, under storlab and
//! under fio 3.33 when it is installed, and on a simulated drive; the queue depths each I/O was
//! submitted at and the sizes of the submits, as fio's JSON counts them, must be the same. The
//! settings below make those counts independent of the device's speed: completions are reaped
//! one at a time down to the low water mark, so the queue's depth at each submit is fixed.

use crate::common;

use common::{run_fio_json, run_in, stderr};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// A scratch directory holding `job.fio` and the 4 MiB file it reads.
fn scratch(job: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("job.fio"), job).unwrap();
    let data: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(dir.path().join("data"), data).unwrap();
    dir
}

/// A job's `iodepth_level` and `iodepth_submit` maps from a fio-shaped JSON, the buckets
/// that are not zero, in percent rounded to hundredths.
type DepthMaps = (BTreeMap<String, String>, BTreeMap<String, String>);

fn depth_maps(json: &serde_json::Value) -> DepthMaps {
    let job = &json["jobs"][0];
    let nonzero = |map: &serde_json::Value| {
        map.as_object()
            .unwrap()
            .iter()
            .filter(|(_, share)| share.as_f64().unwrap() > 0.0)
            .map(|(bucket, share)| (bucket.clone(), format!("{:.2}", share.as_f64().unwrap())))
            .collect()
    };
    (
        nonzero(&job["iodepth_level"]),
        nonzero(&job["iodepth_submit"]),
    )
}

fn fio_json(dir: &Path) -> Option<serde_json::Value> {
    if Command::new("fio").arg("--version").output().is_err() {
        eprintln!("skipping the fio half: fio is not installed (Debian package fio)");
        return None;
    }
    let out = Command::new("fio")
        .current_dir(dir)
        .args(["--output-format=json", "job.fio"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// The depth maps of `job` run by storlab on a file and on a simulated drive, and by fio.
fn check_depths_as_fio(job: &str, expected: &DepthMaps) {
    let dir = scratch(job);
    let on_file = depth_maps(&run_fio_json(dir.path(), &["job.fio"]));
    assert_eq!(&on_file, expected, "storlab on a file");
    let on_sim = run_fio_json(dir.path(), &["job.fio", "--target", "sim:usb3-uas-ssd"]);
    assert_eq!(
        &depth_maps(&on_sim),
        expected,
        "storlab on a simulated drive"
    );
    if let Some(fio) = fio_json(dir.path()) {
        assert_eq!(&depth_maps(&fio), expected, "fio");
    }
}

fn maps(level: &[(&str, &str)], submit: &[(&str, &str)]) -> DepthMaps {
    let owned = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(bucket, share)| (bucket.to_string(), share.to_string()))
            .collect()
    };
    (owned(level), owned(submit))
}

/// `iodepth=32 iodepth_batch=8 iodepth_low=16` over 1024 reads: the queue fills in four
/// submits of 8 (at depths 8, 16, 24, 32), then refills from 16 to 32 in two submits of 8 (at
/// 24 and 32): 8 I/Os at depth 8-15, half of the rest at 16-31 and half at 32.
#[test]
fn a_batch_refills_from_the_low_water_mark_as_fio() {
    for engine in ["io_uring", "libaio"] {
        let job = format!(
            "[batched]\nioengine={engine}\nfilename=data\nsize=4m\nbs=4k\nrw=randread\n\
             iodepth=32\niodepth_batch=8\niodepth_low=16\n"
        );
        check_depths_as_fio(
            &job,
            &maps(
                &[("8", "0.78"), ("16", "50.00"), ("32", "49.22")],
                &[("8", "100.00")],
            ),
        );
    }
}

/// fio's polling (`iodepth_batch_complete_min=0` with `_max=0`): a completion is waited for
/// after every I/O queued, so every I/O goes at depth 1 whatever `iodepth` says.
#[test]
fn polling_keeps_one_io_in_flight_as_fio() {
    let job = "[polling]\nioengine=io_uring\nfilename=data\nsize=1m\nbs=4k\nrw=randread\n\
               iodepth=16\niodepth_batch_complete_min=0\niodepth_batch_complete_max=0\n";
    check_depths_as_fio(job, &maps(&[("1", "100.00")], &[("4", "100.00")]));
}

/// `cpus_allowed` names CPUs this machine has; one it lacks is refused before anything is
/// created, as fio refuses it ("CPU N too large").
#[test]
fn cpus_allowed_runs_on_cpus_that_exist_and_refuses_others() {
    let dir = tempfile::tempdir().unwrap();
    let job = "[pinned]\nioengine=psync\nfilename=data\nsize=256k\nbs=4k\nrw=write\n\
               numjobs=2\ncpus_allowed=0\ncpus_allowed_policy=split\n";
    std::fs::write(dir.path().join("job.fio"), job).unwrap();
    run_fio_json(dir.path(), &["job.fio"]);

    // CPU 1023, the highest a CPU list may name: no machine this runs on has that many.
    let refused_dir = tempfile::tempdir().unwrap();
    std::fs::write(
        refused_dir.path().join("job.fio"),
        job.replace("cpus_allowed=0", "cpus_allowed=0,1023"),
    )
    .unwrap();
    let out = run_in(refused_dir.path(), &["run", "--no-db", "job.fio"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(message.contains("too large"), "{message}");
    assert_eq!(message.trim().lines().count(), 1, "{message}");
    assert!(!refused_dir.path().join("data").exists());
}
