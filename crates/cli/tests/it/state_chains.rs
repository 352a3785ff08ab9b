//! The states the reviews used, as `--state` chains and in `validate` (issue 18, item 8), on
//! simulated drives: a fill then a TRIM of everything (a file delete, a quick format) leaves
//! nothing stored, a fill without TRIM (a partition delete) keeps it all, and a virgin drive
//! then random writes is never filled; reads of discarded blocks need no flash, so they run
//! faster than reads of filled ones.

use crate::common;
use common::{stderr, storlab};

use std::process::Output;

const MIB: u64 = 1 << 20;
/// The measured region: small, so the fills are quick.
const REGION_BYTES: u64 = 64 * MIB;

/// `storlab run` of 4 KiB random reads over the region of `stack` in `state`, as JSON: the
/// job's report and the state preparation's figures.
fn run_in_state(stack: &str, state: &str) -> (serde_json::Value, serde_json::Value) {
    let out = storlab()
        .args([
            "run",
            "--target",
            &format!("sim:{stack}"),
            "--rw=randread",
            "--bs=4k",
            "--size=64m",
            "--runtime=100ms",
            "--state",
            state,
            "--no-db",
            "--output-format=json",
        ])
        .output()
        .expect("storlab runs");
    assert!(out.status.success(), "{state}: {}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (doc["jobs"][0].clone(), doc["preparation"][0].clone())
}

#[test]
fn a_fill_then_a_trim_of_everything_leaves_nothing_stored() {
    let (job, preparation) = run_in_state("usb3-uas-ssd", "seq-filled,trim-all");
    assert_eq!(job["device_state"], "seq-filled,trim-all");
    assert_eq!(preparation["purpose"], "seq-filled,trim-all");
    assert_eq!(
        preparation["bytes_written"].as_u64(),
        Some(REGION_BYTES),
        "the fill"
    );
    assert_eq!(
        preparation["bytes_trimmed"].as_u64(),
        Some(2 * REGION_BYTES),
        "the TRIM before the fill and the one after"
    );
    let sim = &job["sim"];
    assert_eq!(sim["bytes_written"], 0, "the job's own figures: it reads");
    let stored = sim["stored_bytes"].as_u64().unwrap();
    assert!(
        stored < MIB,
        "the TRIM discarded the fill: {stored} bytes stored"
    );

    // Without the TRIM (a partition delete) the drive keeps every byte of the fill.
    let (kept, _) = run_in_state("usb3-uas-ssd", "seq-filled");
    assert_eq!(kept["sim"]["stored_bytes"].as_u64(), Some(REGION_BYTES));
}

#[test]
fn a_virgin_drive_then_random_writes_is_not_filled() {
    let (job, preparation) = run_in_state("usb3-uas-ssd", "fresh,randwrite:4m");
    assert_eq!(job["device_state"], "fresh,randwrite:4MiB");
    assert_eq!(
        preparation["bytes_written"].as_u64(),
        Some(4 * MIB),
        "no fill first"
    );
    let sim = &job["sim"];
    let stored = sim["stored_bytes"].as_u64().unwrap();
    assert!(
        stored > 0 && stored <= 4 * MIB,
        "random writes, repeats allowed: {stored} bytes stored"
    );
}

#[test]
fn bad_chains_are_one_line_exit_2() {
    let out: Output = storlab()
        .args([
            "run",
            "--target",
            "sim:usb3-uas-ssd",
            "--rw=randread",
            "--size=64m",
            "--state",
            "fresh,as-found",
            "--no-db",
        ])
        .output()
        .expect("storlab runs");
    assert_eq!(out.status.code(), Some(2));
    let text = stderr(&out);
    assert_eq!(text.trim().lines().count(), 1, "{text}");
    assert!(text.contains("--state fresh,as-found"), "{text}");
    assert!(text.contains("as-found can only come first"), "{text}");
}

/// A `validate` entry in a chain state, divided by the same job in the state without the TRIM:
/// reads of discarded blocks (answered without the flash) run several times faster than reads
/// of the fill.
#[test]
fn validate_runs_an_entry_in_a_chain_state() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chains.toml");
    std::fs::write(
        &file,
        r#"[defaults]
keys = { runtime = "0.2s", size = "64m" }

[[entry]]
id = "trimmed_over_filled.rand4k_read"
source = "test figure: 4 KiB random reads QD1 after a quick format, over after a partition delete"
stack = "sata-ide-ssd"
job = { rw = "randread", bs = "4k", iodepth = 1 }
state = "seq-filled,trim-all"
metric = "ratio"
ratio_of = "iops"
published = 3
[entry.denominator]
state = "seq-filled"
"#,
    )
    .unwrap();
    let out = storlab()
        .args([
            "validate",
            file.to_str().unwrap(),
            "--output-format",
            "json",
        ])
        .output()
        .expect("storlab runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ratio = json["entries"][0]["simulated"].as_f64().unwrap();
    assert!(
        ratio > 2.0,
        "reads after the TRIM need no flash: {ratio}x those of the fill"
    );
}
