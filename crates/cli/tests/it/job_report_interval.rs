//! The job's report is the job's (issue 37): after `--state seq-filled`, a 1 s read's simulator
//! report has the read's own elapsed time, bytes and bottleneck, not the fill's, and the fill's
//! figures are the run's `preparation`, in the JSON and the table; a result that still moves
//! with the run's length (the M225's 1 MiB writes) says it has not settled.

use crate::common::{stderr, storlab};

/// `storlab run` on a simulated stack with `flags`, in `format`; the run must succeed.
fn run(stack: &str, flags: &[&str], format: &str) -> String {
    let out = storlab()
        .args(["run", "--target", &format!("sim:{stack}"), "--no-db"])
        .args(flags)
        .arg(format!("--output-format={format}"))
        .output()
        .expect("storlab runs");
    assert!(
        out.status.success(),
        "storlab run --target sim:{stack} {}: {}",
        flags.join(" "),
        stderr(&out)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

const READ_AFTER_FILL: &[&str] = &[
    "--rw=read",
    "--size=64m",
    "--runtime=1",
    "--time_based",
    "--state",
    "seq-filled",
];

#[test]
fn a_read_after_a_fill_reports_the_read_and_the_fill_apart() {
    let doc: serde_json::Value =
        serde_json::from_str(&run("usb3-uas-ssd", READ_AFTER_FILL, "json")).unwrap();
    let job = &doc["jobs"][0];
    let sim = &job["sim"];
    // The job's interval: its own second of reads, no write of the fill.
    let elapsed_ns = sim["elapsed_ns"].as_u64().unwrap();
    let job_elapsed_ns = job["elapsed_ns"].as_u64().unwrap();
    assert!(
        elapsed_ns.abs_diff(job_elapsed_ns) < job_elapsed_ns / 10,
        "the simulator's {elapsed_ns} ns against the job's {job_elapsed_ns} ns"
    );
    assert_eq!(sim["bytes_written"], 0, "{sim}");
    let read_bytes = job["read"]["bytes"].as_u64().unwrap();
    let sim_read_bytes = sim["bytes_read"].as_u64().unwrap();
    assert!(
        sim_read_bytes >= read_bytes && sim_read_bytes < read_bytes + (8 << 20),
        "the drive read {sim_read_bytes} bytes for the job's {read_bytes}"
    );
    // The fill, apart: 64 MiB written (and trimmed first), its commands and simulated time.
    let preparation = doc["preparation"].as_array().expect("a preparation entry");
    assert_eq!(preparation.len(), 1, "{preparation:?}");
    let fill = &preparation[0];
    assert_eq!(fill["target"], "sim:usb3-uas-ssd");
    assert_eq!(fill["purpose"], "seq-filled");
    assert_eq!(fill["bytes_written"], 64 << 20);
    assert_eq!(fill["bytes_trimmed"], 64 << 20);
    assert!(fill["sim_commands"].as_u64().unwrap() >= 512, "{fill}");
    assert!(fill["sim_elapsed_ns"].as_u64().unwrap() > 0, "{fill}");

    let table = run("usb3-uas-ssd", READ_AFTER_FILL, "table");
    let line = table
        .lines()
        .find(|l| l.contains("[sim:usb3-uas-ssd] seq-filled:"))
        .unwrap_or_else(|| panic!("no preparation line in:\n{table}"));
    assert!(line.contains("67.1 MB written"), "{line}");
    assert!(line.contains("s simulated"), "{line}");
}

/// The M225's sequential 1 MiB writes after random 4 KiB writes over half the area (its
/// log-block FTL merges the fragmented blocks first) climb from a few MB/s to the drive's rate:
/// over 2 s the figure is the run's length, not the drive, and the run says so; the same writes
/// on a fresh drive hold still over 10 s and pass.
#[test]
fn a_result_that_moves_with_the_run_length_is_flagged() {
    let unsettled = |flags: &[&str]| -> Vec<String> {
        let mut flags = flags.to_vec();
        flags.extend(["--rw=write", "--bs=1m", "--time_based"]);
        let doc: serde_json::Value =
            serde_json::from_str(&run("hwfr2010/m225-sata-ahci", &flags, "json")).unwrap();
        doc["jobs"][0]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|w| w.as_str())
            .filter(|w| w.starts_with("not settled"))
            .map(String::from)
            .collect()
    };
    let climbing = unsettled(&["--state", "fragmented:512m", "--size=1g", "--runtime=2"]);
    assert_eq!(climbing.len(), 1, "the 2 s run after fragmenting writes");
    assert!(climbing[0].contains("in the last of 2"), "{}", climbing[0]);
    assert_eq!(
        unsettled(&["--runtime=10"]),
        Vec::<String>::new(),
        "the fresh drive's 10 s"
    );
}
