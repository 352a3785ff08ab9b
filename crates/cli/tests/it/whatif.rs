//! What-if in one command: `storlab run` with several `--target`s runs the same jobs or preset
//! on each (simulated and real targets mixed), saves one run per target, and prints them side
//! by side with ratios to the first; JSON gives one report per target, `--report` one
//! comparison; a target that cannot run is refused before the first runs. What a failing or
//! interrupted what-if run keeps is in `failed_jobs.rs`.

use std::path::Path;
use std::process::{Command, Output};

const UAS: &str = "sim:usb3-uas-ssd";
const BOT: &str = "sim:usb3-bot-ssd";

fn storlab(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_storlab"))
        .env("STORLAB_DB", db)
        .args(args)
        .output()
        .expect("storlab runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The saved runs' ids and targets, newest first, from `storlab history`.
fn history(db: &Path) -> Vec<(String, String)> {
    let out = storlab(db, &["history"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .skip(1)
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // run, date, time, status, points, preset, target, command...
            (fields[0].to_string(), fields[6].to_string())
        })
        .collect()
}

#[test]
fn several_targets_run_in_turn_and_print_side_by_side_with_one_report() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let file = dir.path().join("f");
    let report = dir.path().join("r.html");
    let file_text = file.to_str().unwrap();
    let out = storlab(
        &db,
        &[
            "run",
            "--rw=randread",
            "--bs=4k",
            "--iodepth=32",
            "--size=16m",
            "--runtime=300ms",
            "--target",
            UAS,
            "--target",
            BOT,
            "--target",
            file_text,
            "--report",
            report.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // The compare layout: one line per run naming its target, then the table with ratios.
    assert!(stdout.contains(&format!("r1: {UAS}\n")), "{stdout}");
    assert!(stdout.contains(&format!("r2: {BOT}\n")), "{stdout}");
    assert!(stdout.contains(&format!("r3: {file_text}\n")), "{stdout}");
    let header = stdout
        .lines()
        .find(|l| l.starts_with("configuration"))
        .unwrap();
    for column in ["r1 IOPS", "r2 IOPS", "r3 IOPS", "r2/r1 MB/s", "r3/r1 MB/s"] {
        assert!(header.contains(column), "{column} missing: {header}");
    }
    let row = stdout.lines().find(|l| l.starts_with("job")).unwrap();
    let ratios: Vec<f64> = row
        .split_whitespace()
        .filter_map(|cell| cell.strip_prefix('x')?.parse().ok())
        .collect();
    assert_eq!(ratios.len(), 2, "{row}");
    // BOT keeps one command in flight, UAS 32: the simulated BOT bridge is far slower at Q32.
    assert!(
        ratios[0] < 0.5,
        "BOT/UAS at Q32 should be well below 1: {row}"
    );

    // One saved run per target, in the order given.
    let saved = history(&db);
    assert_eq!(
        saved,
        vec![
            ("r3".to_string(), file_text.to_string()),
            ("r2".to_string(), BOT.to_string()),
            ("r1".to_string(), UAS.to_string()),
        ]
    );
    // One report comparing them: every run's label and target.
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("storlab report: r1, r2, r3"), "title");
    for target in [UAS, BOT, file_text] {
        assert!(html.contains(target), "{target} missing from the report");
    }
}

#[test]
fn json_gives_one_report_per_target_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let out = storlab(
        &db,
        &[
            "run",
            "--rw=read",
            "--size=4m",
            "--runtime=100ms",
            "--target",
            BOT,
            "--target",
            UAS,
            "--no-db",
            "--output-format",
            "json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let entries = doc["what_if"].as_array().expect("what_if array");
    assert_eq!(entries.len(), 2);
    for (entry, target) in entries.iter().zip([BOT, UAS]) {
        assert_eq!(entry["target"], target);
        // --no-db: no run id.
        assert!(entry["run"].is_null());
        assert_eq!(entry["report"]["schema_version"], 1);
        assert_eq!(entry["report"]["jobs"][0]["target"]["description"], target);
        assert!(entry["report"]["jobs"][0]["read"]["iops"].as_f64().unwrap() > 0.0);
    }
    assert!(!db.exists(), "--no-db wrote a database");
}

#[test]
fn a_preset_runs_on_every_target() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let out = storlab(
        &db,
        &[
            "run",
            "--preset",
            "cdm",
            "--size=16m",
            "--runtime=100ms",
            "--target",
            UAS,
            "--target",
            BOT,
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let row = stdout
        .lines()
        .find(|l| l.starts_with("cdm/4K QD32,rw=randread"))
        .unwrap_or_else(|| panic!("no Q32 row: {stdout}"));
    assert!(row.contains(" x0."), "BOT at Q32 below UAS: {row}");
    let saved = history(&db);
    assert_eq!(saved.len(), 2, "{saved:?}");
}

#[test]
fn a_bad_target_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let out = storlab(
        &db,
        &[
            "run",
            "--rw=read",
            "--size=4m",
            "--runtime=100ms",
            "--target",
            UAS,
            "--target",
            "sim:no-such-stack",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("storlab: error: --target sim:no-such-stack: unknown stack"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    assert!(!db.exists(), "the first target ran");
}

/// A target that cannot be opened (a file in a directory that does not exist) or cannot take
/// the fault plan (a SATA stack has no USB to hang) is bad input found before the first target
/// runs: one line naming it, exit 2, nothing saved.
#[test]
fn a_target_the_run_could_not_open_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let missing = dir.path().join("no-such-dir").join("f");
    let missing_text = missing.to_str().unwrap();
    let cases: [(&[&str], String); 2] = [
        (
            &["--target", UAS, "--target", missing_text, "--target", BOT],
            format!("--target {missing_text}: "),
        ),
        (
            &[
                "--target",
                UAS,
                "--target",
                "sim:hwfr2013/sata-ahci",
                "--faults",
                "hang@cmd=5",
            ],
            "--target sim:hwfr2013/sata-ahci: ".into(),
        ),
    ];
    for (targets, named) in cases {
        let mut args = vec!["run", "--rw=read", "--size=4m", "--runtime=100ms"];
        args.extend_from_slice(targets);
        let out = storlab(&db, &args);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        let stderr = text(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("storlab: error: {named}")),
            "{stderr}"
        );
        assert!(out.stdout.is_empty());
        assert!(!db.exists(), "the first target ran: {args:?}");
    }
}

/// A block device the device guard refuses to write (it holds a file system) is refused before
/// the first target runs, not after it. Needs root, losetup and mkfs.ext4 (skipped otherwise).
#[test]
fn a_device_the_guard_refuses_is_refused_before_anything_runs() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: attaching a loop device needs root");
        return;
    }
    for tool in ["losetup", "mkfs.ext4"] {
        if Command::new(tool).arg("-V").output().is_err() {
            eprintln!("skipped: {tool} is not installed");
            return;
        }
    }
    let device = crate::common::LoopDevice::attach(16 << 20);
    let mkfs = Command::new("mkfs.ext4")
        .arg("-q")
        .arg(&device.path)
        .output()
        .unwrap();
    assert!(mkfs.status.success(), "{}", text(&mkfs.stderr));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let device_text = device.path.to_str().unwrap();
    let out = storlab(
        &db,
        &[
            "run",
            "--rw=write",
            "--size=1m",
            "--target",
            UAS,
            "--target",
            device_text,
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "storlab: error: --target {device_text}: refusing to write to {device_text}"
        )),
        "{stderr}"
    );
    assert!(!db.exists(), "the first target ran");
}

#[test]
fn pcap_with_several_targets_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let pcap = dir.path().join("c.pcap");
    let out = storlab(
        &db,
        &[
            "run",
            "--rw=read",
            "--size=4m",
            "--target",
            UAS,
            "--target",
            BOT,
            "--pcap",
            pcap.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--pcap"),
        "{}",
        text(&out.stderr)
    );
    assert!(!pcap.exists() && !db.exists());
}

#[test]
fn the_report_of_a_preset_shows_local_times_and_whole_labels() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let report = dir.path().join("r.html");
    let out = Command::new(env!("CARGO_BIN_EXE_storlab"))
        .env("STORLAB_DB", &db)
        // POSIX TZ: India Standard Time, UTC+05:30 (no tz database needed).
        .env("TZ", "IST-5:30")
        .args([
            "run",
            "--preset",
            "cdm",
            "--target",
            UAS,
            "--size=16m",
            "--runtime=100ms",
            "--no-db",
            "--report",
            report.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(!html.contains("unix ms"), "times in Unix milliseconds");
    let started = html
        .split("<td>")
        .map(|cell| cell.split('<').next().unwrap())
        .find(|cell| cell.ends_with(" +05:30"))
        .unwrap_or_else(|| panic!("no local start time with offset +05:30"));
    // YYYY-MM-DD HH:MM:SS +05:30
    let shape: String = started
        .chars()
        .map(|c| if c.is_ascii_digit() { 'D' } else { c })
        .collect();
    assert_eq!(shape, "DDDD-DD-DD DD:DD:DD +DD:DD", "{started}");
    // The longest CrystalDiskMark job names wrap whole, not cut to "cdm/4K QD32,rw=…".
    assert!(html.contains(">rw=randwrite</tspan>"), "labels not wrapped");
    assert!(!html.contains("rw=…"), "a label was cut");
}
