//! Every preset end to end through the binary, on a simulated stack and on a real temporary
//! file (small size and runtime overrides keep each under a few seconds), plus bad preset and
//! state arguments (one line, exit 2) and the state recorded in every result.

use std::path::Path;
use std::process::{Command, Output};

/// Runs storlab in `dir`, with its results database inside `dir` (never the user's own).
fn storlab(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_storlab"))
        .current_dir(dir)
        .env("STORLAB_DB", dir.join("results.sqlite"))
        .args(args)
        .output()
        .expect("storlab runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn presets() -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let out = storlab(dir.path(), &["presets"]);
    assert!(out.status.success());
    let listing = text(&out.stdout);
    let names: Vec<String> = listing
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert!(names.len() >= 14, "{listing}");
    names
}

/// Overrides that keep every preset short; `size` also caps FC-Test's file sets.
const QUICK: [&str; 2] = ["--size=16m", "--runtime=20ms"];

fn run_preset(dir: &Path, name: &str, target: &str) -> serde_json::Value {
    let mut args = vec![
        "run",
        "--preset",
        name,
        "--target",
        target,
        "--output-format=json",
    ];
    args.extend(QUICK);
    let out = storlab(dir, &args);
    assert!(
        out.status.success(),
        "{name} on {target}: {}",
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

#[test]
fn every_preset_runs_on_a_simulated_stack_and_records_state_and_pattern() {
    let dir = tempfile::tempdir().unwrap();
    for name in presets() {
        let report = run_preset(dir.path(), &name, "sim:usb3-uas-ssd");
        let jobs = report["jobs"].as_array().unwrap();
        assert!(!jobs.is_empty(), "{name}");
        for job in jobs {
            assert!(job["device_state"].as_str().is_some_and(|s| !s.is_empty()));
            assert!(job["data_pattern"].as_str().is_some_and(|s| !s.is_empty()));
        }
        if name == "snia-pts-iops" {
            assert!(jobs[0]["device_state"]
                .as_str()
                .unwrap()
                .starts_with("preconditioned"));
        }
    }
}

#[test]
fn every_preset_runs_on_a_real_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("target-file");
    let file = file.to_str().unwrap();
    for name in presets() {
        // A sweep of 99 points at QD up to 256 is the slowest; its layout is checked on sim.
        let report = run_preset(dir.path(), &name, file);
        assert!(!report["jobs"].as_array().unwrap().is_empty(), "{name}");
    }
}

#[test]
fn tables_follow_the_source_layout() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run",
        "--preset",
        "iometer-workstation",
        "--target",
        "sim:usb3-uas-ssd",
    ];
    args.extend(QUICK);
    let out = storlab(dir.path(), &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let header = table.lines().nth(1).unwrap();
    for column in ["iodepth=1 IOPS", "iodepth=16 IOPS", "rating"] {
        assert!(header.contains(column), "{header}");
    }
    assert!(table.lines().any(|l| l.starts_with("zone-32g")), "{table}");

    let mut args = vec![
        "run",
        "--preset",
        "iometer-database",
        "--target",
        "sim:usb3-uas-ssd",
    ];
    args.extend(QUICK);
    let out = storlab(dir.path(), &args);
    let table = text(&out.stdout);
    let rows: Vec<&str> = table.lines().skip(3).take(11).collect();
    assert!(
        rows[0].starts_with('0') && rows[10].starts_with("100"),
        "{table}"
    );
    assert!(table.lines().nth(1).unwrap().contains("iodepth=256 IOPS"));
}

#[test]
fn fresh_state_and_trims_between_steps_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run",
        "--preset",
        "cdm",
        "--target",
        "sim:usb3-uas-ssd",
        "--state",
        "fragmented:1m",
        "--output-format=json",
    ];
    args.extend(QUICK);
    let out = storlab(dir.path(), &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["jobs"][0]["device_state"], "fragmented:1MiB");
    assert!(report["jobs"][2]["device_state"]
        .as_str()
        .unwrap()
        .starts_with("after previous step"));
    args.push("--trim-between-steps");
    let out = storlab(dir.path(), &args);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for job in report["jobs"].as_array().unwrap() {
        assert_eq!(job["device_state"], "fresh (trimmed before this step)");
    }
}

#[test]
fn bad_preset_and_state_arguments_are_one_line_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for (args, expect) in [
        (
            vec!["run", "--preset", "cmd", "--target", "sim:usb3-uas-ssd"],
            "unknown preset 'cmd'",
        ),
        (
            vec![
                "run",
                "--preset",
                "cdm",
                "--state",
                "clean",
                "--target",
                "sim:usb3-uas-ssd",
            ],
            "--state clean",
        ),
        (
            vec![
                "run",
                "--preset",
                "cdm",
                "--state",
                "fragmented:x",
                "--target",
                "sim:usb3-uas-ssd",
            ],
            "--state fragmented:x",
        ),
        (
            vec![
                "run",
                "--preset",
                "atto",
                "--bs=4k",
                "--target",
                "sim:usb3-uas-ssd",
            ],
            "sweeps bs",
        ),
    ] {
        let out = storlab(dir.path(), &args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let stderr = text(&out.stderr);
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expect), "{stderr}");
    }
}

#[test]
fn a_preset_run_is_saved_point_by_point_under_its_preset_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = storlab(
        dir.path(),
        &[
            "run",
            "--preset",
            "cdm",
            "--target",
            "sim:usb3-uas-ssd",
            "--size=64m",
            "--runtime=100ms",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let history = storlab(dir.path(), &["history", "--preset", "cdm"]);
    assert!(history.status.success(), "{}", text(&history.stderr));
    let listing = text(&history.stdout);
    assert!(listing.contains("cdm"), "{listing}");
    let shown = storlab(dir.path(), &["export", "last", "--format", "json"]);
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert!(
        doc["jobs"].as_array().unwrap().len() >= 4,
        "every CDM point saved"
    );
}

#[test]
fn fctest_on_a_directory_moves_real_files_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("fc");
    let second = dir.path().join("other");
    std::fs::create_dir(&target).unwrap();
    std::fs::create_dir(&second).unwrap();
    let out = storlab(
        dir.path(),
        &[
            "run",
            "--preset",
            "fctest",
            "--target",
            target.to_str().unwrap(),
            "--second-dir",
            second.to_str().unwrap(),
            "--size=2m",
            "--output-format=json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 5 * 4, "five file sets x four phases");
    for job in jobs {
        let phase = job["rw"].as_str().unwrap();
        let moved = match phase {
            "read" => &job["read"],
            _ => &job["write"],
        };
        let bytes = moved["bytes"].as_u64().unwrap();
        assert!(
            bytes > 0 && bytes <= 2 << 20,
            "{} moved {bytes} bytes",
            job["name"]
        );
        assert_eq!(job["target"]["kind"], "directory");
    }
    for d in [&target, &second] {
        assert_eq!(
            std::fs::read_dir(d).unwrap().count(),
            0,
            "{} left files",
            d.display()
        );
    }
}
