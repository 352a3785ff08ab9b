//! The verdict on a real target's path under a run (docs/probe.md, "The verdict"): a run on a
//! temporary file whose path a recorded sysfs tree describes (`STORLAB_PROBE_SYS_ROOT` and
//! `STORLAB_PROBE_DEVICE`), one per kind of path — USB 2.0 BOT, USB 3 UAS, SATA — names the
//! ceiling that binds in its JSON, table and HTML report, and the what-if command it prints
//! runs the same job on a shipped simulated stack (run here, exit 0).

use crate::common::storlab;
use std::path::{Path, PathBuf};
use std::process::Output;

fn fixture(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../engine/tests/fixtures/probe")
        .join(case)
        .join("sys")
}

/// A rate-limited sequential read of a fresh 8 MiB file, its path described by `case`'s tree.
fn run_on(case: &str, device: &str, dir: &Path, extra: &[&str]) -> Output {
    let target = dir.join("data.bin");
    storlab()
        .current_dir(dir)
        .env("STORLAB_PROBE_SYS_ROOT", fixture(case))
        .env("STORLAB_PROBE_DEVICE", device)
        .args(["run", "--target"])
        .arg(&target)
        .args([
            "--size=8m",
            "--rw=read",
            "--bs=128k",
            "--iodepth=2",
            "--rate=20m",
            "--no-db",
        ])
        .args(extra)
        .output()
        .expect("storlab runs")
}

fn verdict_of(case: &str, device: &str, dir: &Path) -> serde_json::Value {
    let out = run_on(case, device, dir, &["--output-format", "json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{case}: {stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    report["jobs"][0]["path_verdict"].clone()
}

/// Runs the verdict's what-if command as a user would paste it (its words need no quoting
/// here), in `dir`.
fn run_what_if(command: &str, dir: &Path) {
    let words: Vec<&str> = command.split(' ').collect();
    assert_eq!(words[0], "storlab", "{command}");
    let out = storlab()
        .current_dir(dir)
        .args(&words[1..])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "what-if `{command}` failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn check(case: &str, device: &str, binding: &str, stack: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let verdict = verdict_of(case, device, dir.path());
    assert_eq!(verdict["binding"], binding, "{case}: {verdict:#}");
    assert_eq!(
        verdict["ceilings"][0]["kind"], binding,
        "{case}: {verdict:#}"
    );
    let share = verdict["ceilings"][0]["share"].as_f64().unwrap();
    assert!(share > 0.0 && share < 1.0, "{case}: share {share}");
    assert_eq!(verdict["what_if"]["stack"], stack, "{case}: {verdict:#}");
    let command = verdict["what_if"]["command"].as_str().unwrap();
    assert!(
        command.ends_with(&format!("--target sim:{stack}")) && !command.contains("data.bin"),
        "{command}"
    );
    run_what_if(command, dir.path());
    verdict
}

#[test]
fn usb2_bot_binds_at_bots_one_command_at_a_time() {
    let verdict = check("usb-bot-hdd", "sdb", "bot", "usb2-linux-bot-hdd");
    // 128 KiB reads split at the queue's 120 KiB: 240 packets + CBW + CSW in 13-packet microframes
    let limit = verdict["ceilings"][0]["limit_mbs"].as_f64().unwrap();
    assert!((limit - 52.808).abs() < 0.01, "{limit}");
    let kinds: Vec<&str> = verdict["ceilings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["bot", "usb-link", "pcie"]);
    let lines = verdict["lines"].to_string();
    assert!(lines.contains("queue depth 2 gains nothing"), "{lines}");
}

#[test]
fn usb3_uas_binds_at_the_5_gbps_link() {
    let verdict = check("uas-asm1051e", "sdb", "usb-link", "usb3-linux-uas-ssd");
    let limit = verdict["ceilings"][0]["limit_mbs"].as_f64().unwrap();
    assert!((limit - 484.848).abs() < 0.01, "{limit}");
}

#[test]
fn sata_binds_at_the_drives_rated_speed() {
    let verdict = check("sata-ahci", "sda", "drive-rated", "sata-ahci-860evo");
    assert_eq!(verdict["ceilings"][0]["limit_mbs"], 550.0);
    assert_eq!(verdict["ceilings"][1]["kind"], "sata-link");
}

#[test]
fn the_table_and_the_report_give_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.html");
    let out = run_on(
        "usb-bot-hdd",
        "sdb",
        dir.path(),
        &["--report", report.to_str().unwrap()],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("[job] verdict: ")
            && text.contains("52.8 MB/s ceiling of BOT's one command at a time"),
        "{text}"
    );
    assert!(
        text.contains("--target sim:usb2-linux-bot-hdd") && !text.contains("report.html --"),
        "{text}"
    );
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("<h2>Verdict on the path</h2>"), "{html}");
    assert!(html.contains("(binds)"), "{html}");
}

#[test]
fn a_path_without_a_ceiling_has_no_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let verdict = verdict_of("virtio", "vda", dir.path());
    assert!(verdict.is_null(), "{verdict:#}");
}
