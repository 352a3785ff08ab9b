//! The binary under `mpirun` (built with `--features mpi`; docs/distributed.md), over loopback
//! on this machine with 2 and 3 ranks: a psync job on per-rank files (the aggregate is the sum
//! of the ranks' own rows, its latency bins their exact merge), a failing rank (the run stops
//! with exit 1, names the rank and keeps the finished job, in the output and the database),
//! `validate` (the same bytes as one process), a simulated preset (the same figures) and a
//! what-if sweep of a preset over simulated stacks, a stack per rank (the same table). Under
//! CI (`CI` set) a missing `mpirun` fails these tests; elsewhere they say so and pass.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `mpirun` with what a container or CI runner needs: root may run it, and more ranks than
/// cores may share this 2-core machine.
fn mpirun(ranks: u32) -> Option<Command> {
    let found = Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "mpirun is missing: .ci/run installs openmpi-bin, and CI runs these tests"
        );
        eprintln!("skipped: mpirun is not installed (apt-get install openmpi-bin)");
        return None;
    }
    let mut command = Command::new("mpirun");
    command
        .args(["--allow-run-as-root", "--oversubscribe", "-np"])
        .arg(ranks.to_string())
        .arg(env!("CARGO_BIN_EXE_storlab"));
    // The database the other tests use, so nothing lands in the user's home.
    let db = common::storlab();
    for (key, value) in db.get_envs() {
        if let Some(value) = value {
            command.env(key, value);
        }
    }
    Some(command)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", stderr(out));
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn f64_of(value: &serde_json::Value) -> f64 {
    value.as_f64().expect("a number")
}

/// The ranks' rows sum to the aggregate; the aggregate's latency bins are the exact sum of the
/// ranks' bins, and its percentiles lie in the bins the merged counts put them in.
fn check_aggregate(job: &serde_json::Value, ranks: usize) {
    let rows = job["ranks"].as_array().expect("per-rank rows");
    assert_eq!(rows.len(), ranks, "{job}");
    let read = &job["read"];
    for key in ["iops", "bw_bytes_per_s"] {
        let sum: f64 = rows.iter().map(|row| f64_of(&row["read"][key])).sum();
        let aggregate = f64_of(&read[key]);
        assert!(
            (aggregate - sum).abs() <= aggregate * 1e-12,
            "{key}: aggregate {aggregate}, ranks' sum {sum}"
        );
    }
    let ios: u64 = rows
        .iter()
        .map(|row| row["read"]["ios"].as_u64().unwrap())
        .sum();
    assert_eq!(read["ios"].as_u64().unwrap(), ios);
    // fio's bins of the merged histogram are the sums of the ranks' bins, bin by bin.
    let mut summed: std::collections::BTreeMap<u64, u64> = Default::default();
    for row in rows {
        for bin in row["read"]["clat_fio_bins"].as_array().unwrap() {
            *summed.entry(bin[0].as_u64().unwrap()).or_default() += bin[1].as_u64().unwrap();
        }
    }
    let merged: std::collections::BTreeMap<u64, u64> = read["clat_fio_bins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|bin| (bin[0].as_u64().unwrap(), bin[1].as_u64().unwrap()))
        .collect();
    assert_eq!(merged, summed);
    // Each merged percentile is where the concatenated samples put it, within the histogram's
    // precision: the fio bin the summed counts reach it in (fio's bins are 1/64 of an octave,
    // storlab's histogram 10^-3, so the percentile lies within one fio bin of that value).
    let total: u64 = summed.values().sum();
    for pair in read["clat"]["percentiles"]
        .as_array()
        .expect("clat percentiles")
    {
        let (p, value) = (f64_of(&pair[0]), &pair[1]);
        let rank_of = ((p / 100.0) * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        let bin_value = summed
            .iter()
            .find(|(_, count)| {
                seen += **count;
                seen >= rank_of
            })
            .map(|(value, _)| *value as f64)
            .unwrap();
        let value = f64_of(value);
        assert!(
            (value - bin_value).abs() <= bin_value / 32.0,
            "p{p}: merged {value} ns, the concatenated bins give {bin_value} ns"
        );
    }
}

#[test]
fn psync_on_per_rank_files_sums_the_ranks_and_merges_their_histograms() {
    for ranks in [2, 3] {
        let Some(mut mpirun) = mpirun(ranks) else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("data.{rank}");
        let out = mpirun
            .current_dir(dir.path())
            .args([
                "run",
                "--name=per-rank",
                "--ioengine=psync",
                "--rw=randread",
            ])
            .args(["--bs=4k", "--size=2m", "--number_ios=3000", "--no-db"])
            .arg(format!("--filename={}", file.display()))
            .arg("--output-format=json")
            .output()
            .unwrap();
        let report = json(&out);
        let jobs = report["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 1, "one aggregate row: {report}");
        check_aggregate(&jobs[0], ranks as usize);
        for rank in 0..ranks {
            assert!(dir.path().join(format!("data.{rank}")).is_file());
        }
        assert!(!dir.path().join("data.{rank}").exists());
    }
}

/// A job file whose second job rank 1 cannot open (its directory is missing).
fn failing_job_file(dir: &Path) -> PathBuf {
    std::fs::create_dir(dir.join("sub0")).unwrap();
    let text = format!(
        "[global]\nioengine=psync\nbs=4k\nsize=1m\nrw=randread\nnumber_ios=500\n\
         [first]\nfilename={dir}/first.{{rank}}\n\
         [second]\nstonewall\nfilename={dir}/sub{{rank}}/second\n",
        dir = dir.display()
    );
    let path = dir.join("two.fio");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_failing_rank_stops_every_rank_names_itself_and_keeps_the_finished_job() {
    let Some(mut mpirun) = mpirun(2) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let job_file = failing_job_file(dir.path());
    let db = dir.path().join("runs.sqlite");
    let out = mpirun
        .env("STORLAB_DB", &db)
        .arg("run")
        .arg(&job_file)
        .arg("--output-format=json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(text.contains("rank 1 (host "), "{text}");
    assert!(text.contains("second"), "{text}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let jobs = report["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{report}");
    assert_eq!(jobs[0]["name"], "first");
    check_aggregate(&jobs[0], 2);
    // One saved run, failed, holding the finished job and every rank's host.
    let connection = rusqlite::Connection::open(&db).unwrap();
    let (status, hostname): (String, String) = connection
        .query_row("SELECT status, hostname FROM runs", [], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .unwrap();
    assert_eq!(status, "failed");
    assert!(hostname.contains("(2 MPI ranks)"), "{hostname}");
    let points: i64 = connection
        .query_row("SELECT COUNT(*) FROM points", [], |row| row.get(0))
        .unwrap();
    assert_eq!(points, 1);
}

fn small_reference() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/validate-small.toml")
}

#[test]
fn validate_under_mpirun_prints_what_one_process_prints() {
    let reference = small_reference();
    let alone = common::storlab()
        .args(["validate", "--output-format=json"])
        .arg(&reference)
        .output()
        .unwrap();
    assert!(alone.status.success(), "{}", stderr(&alone));
    for ranks in [2, 3] {
        let Some(mut mpirun) = mpirun(ranks) else {
            return;
        };
        let spread = mpirun
            .args(["validate", "--output-format=json"])
            .arg(&reference)
            .output()
            .unwrap();
        assert!(spread.status.success(), "{}", stderr(&spread));
        assert_eq!(
            String::from_utf8_lossy(&spread.stdout),
            String::from_utf8_lossy(&alone.stdout),
            "{ranks} ranks"
        );
    }
}

/// The figures of a report, without when and where it ran.
fn figures(report: &serde_json::Value) -> Vec<serde_json::Value> {
    report["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|job| serde_json::json!([job["name"], job["read"], job["write"], job["sim"]]))
        .collect()
}

#[test]
fn a_simulated_preset_under_mpirun_gives_the_single_process_figures() {
    let args = [
        "run",
        "--preset",
        "cdm",
        "--target",
        "sim:usb3-uas-ssd",
        "--size=16m",
        "--runtime=20ms",
        "--no-db",
        "--output-format=json",
    ];
    let alone = json(&common::storlab().args(args).output().unwrap());
    for ranks in [2, 3] {
        let Some(mut mpirun) = mpirun(ranks) else {
            return;
        };
        let spread = json(&mpirun.args(args).output().unwrap());
        assert_eq!(figures(&spread), figures(&alone), "{ranks} ranks");
    }
}

#[test]
fn a_what_if_sweep_over_simulated_stacks_spread_over_ranks_prints_the_single_process_table() {
    let args = [
        "run",
        "--preset",
        "cdm",
        "--target",
        "sim:usb3-uas-ssd",
        "--target",
        "sim:usb3-bot-ssd",
        "--target",
        "sim:usb2-bot-hdd",
        "--size=16m",
        "--runtime=20ms",
        "--no-db",
    ];
    let alone = common::storlab().args(args).output().unwrap();
    assert!(alone.status.success(), "{}", stderr(&alone));
    for ranks in [2, 3] {
        let Some(mut mpirun) = mpirun(ranks) else {
            return;
        };
        let spread = mpirun.args(args).output().unwrap();
        assert!(spread.status.success(), "{}", stderr(&spread));
        assert_eq!(
            String::from_utf8_lossy(&spread.stdout),
            String::from_utf8_lossy(&alone.stdout),
            "{ranks} ranks"
        );
        // Each rank ran its own targets: target i on rank i mod ranks.
        let said = stderr(&spread);
        for (index, target) in ["sim:usb3-uas-ssd", "sim:usb3-bot-ssd", "sim:usb2-bot-hdd"]
            .iter()
            .enumerate()
        {
            let line = format!(
                "target {} of 3: {target} (rank {})",
                index + 1,
                index % ranks as usize
            );
            assert!(said.contains(&line), "{line} in {said}");
        }
    }
}
