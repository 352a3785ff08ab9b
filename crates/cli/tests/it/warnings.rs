//! Every path that prints a result carries the run's warnings (issue 23): each warning kind is
//! checked through the binary in the table, JSON, fio-JSON, CSV, the HTML report and `validate`.
//! The merging driver's warning once appeared only on the preset and `--state` paths, so a plain
//! `storlab run` printed its inflated 4 KiB figure with nothing said.

use crate::common::stdout;
use std::path::Path;
use std::process::{Command, Output};

/// What the honesty check says when the drive saw larger transfers than the job issued.
const MERGED_WARNING: &str = "device-side transfers larger than requested";
/// The job reader's warning for a read share on a job that does not mix directions.
const JOB_WARNING: &str = "rwmixread/rwmixwrite has no effect";
/// A Turbo BOT driver that merges queued requests that continue each other.
const MERGING_STACK: &str = "sim:usb3-turbo-ssd";
/// A UAS stack: every request reaches the drive at the size the job issued.
const HONEST_STACK: &str = "sim:usb3-uas-ssd";
/// The output formats of `storlab run`.
const FORMATS: [&str; 4] = ["table", "json", "fio-json", "csv"];

fn storlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_storlab"))
        .args(args)
        .output()
        .expect("storlab runs")
}

/// Queued 4 KiB sequential reads for a tenth of a simulated second on `target`, plus `extra`.
fn run_4k_queued(target: &str, format: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "--no-db",
        "--target",
        target,
        "--rw=read",
        "--bs=4k",
        "--iodepth=8",
        "--size=64m",
        "--runtime=100ms",
        "--time_based",
        "--output-format",
        format,
    ];
    args.extend_from_slice(extra);
    let out = storlab(&args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The warnings a machine format carries for its (only) job, read as data, not as text.
fn job_warnings(format: &str, text: &str) -> Vec<String> {
    let strings = |value: &serde_json::Value| -> Vec<String> {
        value
            .as_array()
            .unwrap_or_else(|| panic!("{format}: warnings are not an array: {value}"))
            .iter()
            .map(|w| w.as_str().expect("a warning is a string").to_string())
            .collect()
    };
    match format {
        "json" => {
            let json: serde_json::Value = serde_json::from_str(text).expect("JSON");
            strings(&json["jobs"][0]["warnings"])
        }
        "fio-json" => {
            let json: serde_json::Value = serde_json::from_str(text).expect("JSON");
            strings(&json["jobs"][0]["storlab_warnings"])
        }
        "csv" => {
            let mut lines = text.lines();
            let header: Vec<&str> = lines.next().expect("header").split(',').collect();
            assert_eq!(header.last(), Some(&"warnings"), "{text}");
            let row = lines.next().expect("a row");
            // The warnings column is the last; it is quoted when it holds a comma.
            let last = match row.rfind(",\"") {
                Some(start) if row.ends_with('"') => {
                    row[start + 2..row.len() - 1].replace("\"\"", "\"")
                }
                _ => row.rsplit(',').next().unwrap_or_default().to_string(),
            };
            last.split(" | ")
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect()
        }
        "table" => text
            .lines()
            .skip_while(|line| *line != "warnings:")
            .skip(1)
            .map(|line| line.trim().to_string())
            .collect(),
        other => panic!("unknown format {other}"),
    }
}

#[test]
fn the_merging_drivers_warning_is_in_every_output_format_of_a_plain_run() {
    for format in FORMATS {
        let out = run_4k_queued(MERGING_STACK, format, &[]);
        let warnings = job_warnings(format, &stdout(&out));
        assert!(
            warnings.iter().any(|w| w.contains(MERGED_WARNING)),
            "{format}: {warnings:?}"
        );
        if format != "table" {
            // Machine formats may never be read by a person: stderr says it too.
            assert!(
                String::from_utf8_lossy(&out.stderr).contains(MERGED_WARNING),
                "{format}: stderr {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn a_stack_that_does_not_merge_is_not_flagged() {
    for format in FORMATS {
        let out = run_4k_queued(HONEST_STACK, format, &[]);
        let warnings = job_warnings(format, &stdout(&out));
        assert!(
            !warnings.iter().any(|w| w.contains(MERGED_WARNING)),
            "{format}: {warnings:?}"
        );
    }
}

#[test]
fn the_merging_drivers_warning_is_in_the_html_report() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.html");
    run_4k_queued(
        MERGING_STACK,
        "table",
        &["--report", report.to_str().unwrap()],
    );
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains(MERGED_WARNING), "{html}");
}

#[test]
fn a_jobs_own_warning_is_in_every_output_format() {
    for format in FORMATS {
        let out = run_4k_queued(HONEST_STACK, format, &["--rwmixread=70"]);
        let warnings = job_warnings(format, &stdout(&out));
        assert!(
            warnings.iter().any(|w| w.contains(JOB_WARNING)),
            "{format}: {warnings:?}"
        );
    }
}

/// A reference file with one entry: queued 4 KiB reads on HardWare.fr 2013's AMD port with the
/// Turbo driver that merged them (the scenario the review's inflated figure came from).
fn merging_reference(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("merging.toml");
    std::fs::write(
        &path,
        r#"
[[entry]]
id = "merging.turbo.4k"
source = "HardWare.fr 2013, AMD Turbo/XFast, IOMeter 4 KiB QD8 (a figure for the test only)"
stack = "hwfr2013/amd-win7-turbo"
job = { rw = "read", bs = "4k", iodepth = 8 }
keys = { size = "64m", runtime = "100ms" }
metric = "mbps"
published = 70
"#,
    )
    .unwrap();
    path
}

#[test]
fn validate_carries_the_scenarios_warnings_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let reference = merging_reference(dir.path());
    let reference = reference.to_str().unwrap();
    for format in ["table", "json", "csv"] {
        let out = storlab(&["validate", reference, "--output-format", format]);
        assert!(
            out.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = stdout(&out);
        let carried = match format {
            "json" => {
                let json: serde_json::Value = serde_json::from_str(&text).unwrap();
                json["entries"][0]["warnings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|w| w.as_str().unwrap().contains(MERGED_WARNING))
            }
            "csv" => {
                let header = text.lines().next().unwrap();
                header.ends_with(",warnings") && text.contains(MERGED_WARNING)
            }
            _ => text
                .lines()
                .skip_while(|line| *line != "warnings:")
                .any(|line| line.contains("[merging.turbo.4k]") && line.contains(MERGED_WARNING)),
        };
        assert!(carried, "{format}:\n{text}");
    }
}

/// One kind of warning the simulator raises, and a small run that raises it.
struct SimKind {
    /// The kind's name (`SimWarning::kind`), for messages.
    kind: &'static str,
    /// What every output must contain.
    needle: &'static str,
    target: &'static str,
    /// The run's job flags.
    flags: &'static [&'static str],
    /// The same job as a validate entry: its `job`, and its `state` if any.
    validate_job: &'static str,
    validate_state: Option<&'static str>,
}

/// Queued 4 KiB random reads on a UAS stack: no layer reaches saturation at one command.
const LATENCY_BOUND: SimKind = SimKind {
    kind: "latency-bound",
    needle: "no layer is saturated",
    target: HONEST_STACK,
    flags: &["--rw=randread", "--bs=4k", "--iodepth=1"],
    validate_job: r#"{ rw = "randread", bs = "4k", iodepth = 1 }"#,
    validate_state: None,
};

/// The Turbo driver merging small sequential reads while the job's own largest block (1 MiB)
/// stays above anything the drive saw: no larger-transfers warning, so the simulator's says it.
const MERGED_REQUESTS: SimKind = SimKind {
    kind: "merged-requests",
    needle: "the host driver merged",
    target: MERGING_STACK,
    flags: &["--rw=read", "--bsrange=4k-1m", "--iodepth=8"],
    validate_job: r#"{ rw = "read", bsrange = "4k-1m", iodepth = 8 }"#,
    validate_state: None,
};

/// Windows 8's UAS driver on the ASM1042 (a controller it does not load on): it runs its BOT driver.
const TRANSPORT_FALLBACK: SimKind = SimKind {
    kind: "transport-fallback",
    needle: "did not run the transport its host profile names",
    target: "sim:hwfr2013/asm1042-win8-bot",
    flags: &["--rw=read", "--bs=64k", "--iodepth=8"],
    validate_job: r#"{ rw = "read", bs = "64k", iodepth = 8 }"#,
    validate_state: None,
};

/// 2 KiB random writes: each covers half of the SSD's 4 KiB logical page.
const READ_MODIFY_WRITE: SimKind = SimKind {
    kind: "read-modify-write",
    needle: "read the page before programming it",
    target: HONEST_STACK,
    flags: &["--rw=randwrite", "--bs=2k", "--iodepth=8"],
    validate_job: r#"{ rw = "randwrite", bs = "2k", iodepth = 8 }"#,
    validate_state: None,
};

/// A fresh state on a BOT-only bridge: its TRIM step's UNMAPs never reach the drive.
const TRIMS_NOT_TRANSLATED: SimKind = SimKind {
    kind: "trims-not-translated",
    needle: "were not translated to TRIM",
    target: "sim:usb3-bot-ssd",
    flags: &["--rw=read", "--bs=64k", "--iodepth=1", "--state=fresh"],
    validate_job: r#"{ rw = "read", bs = "64k", iodepth = 1 }"#,
    validate_state: Some("fresh"),
};

/// `kind`'s warning in the table, JSON, fio-JSON and CSV of `storlab run`, in its HTML report,
/// and in `storlab validate`'s table, JSON and CSV for the same job.
fn assert_in_every_output(kind: &SimKind) {
    let dir = tempfile::tempdir().unwrap();
    for format in FORMATS {
        let report = dir.path().join(format!("{format}.html"));
        let mut extra = kind.flags.to_vec();
        extra.extend(["--report", report.to_str().unwrap()]);
        let out = run_sim(kind.target, format, &extra);
        let warnings = job_warnings(format, &stdout(&out));
        assert!(
            warnings.iter().any(|w| w.contains(kind.needle)),
            "{}: {format}: {warnings:?}",
            kind.kind
        );
        let html = std::fs::read_to_string(&report).unwrap();
        assert!(html.contains(kind.needle), "{}: HTML {html}", kind.kind);
    }
    let reference = dir.path().join("reference.toml");
    let state = kind
        .validate_state
        .map_or_else(String::new, |state| format!("state = \"{state}\"\n"));
    std::fs::write(
        &reference,
        format!(
            r#"
[[entry]]
id = "kind.{kind}"
source = "a figure for the test only"
stack = "{stack}"
job = {job}
keys = {{ size = "64m", runtime = "100ms" }}
{state}metric = "mbps"
published = 100
"#,
            kind = kind.kind,
            stack = kind.target.trim_start_matches("sim:"),
            job = kind.validate_job,
        ),
    )
    .unwrap();
    for format in ["table", "json", "csv"] {
        let out = storlab(&[
            "validate",
            reference.to_str().unwrap(),
            "--output-format",
            format,
        ]);
        assert!(
            out.status.success(),
            "{}: validate {format}: {}",
            kind.kind,
            String::from_utf8_lossy(&out.stderr)
        );
        let text = stdout(&out);
        let carried = match format {
            "json" => {
                let json: serde_json::Value = serde_json::from_str(&text).unwrap();
                json["entries"][0]["warnings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|w| w.as_str().unwrap().contains(kind.needle))
            }
            "csv" => text
                .lines()
                .nth(1)
                .is_some_and(|row| row.contains(kind.needle)),
            _ => text
                .lines()
                .skip_while(|line| *line != "warnings:")
                .any(|line| {
                    line.contains(&format!("[kind.{}]", kind.kind)) && line.contains(kind.needle)
                }),
        };
        assert!(carried, "{}: validate {format}:\n{text}", kind.kind);
    }
}

/// A run on `target` for a tenth of a simulated second over 64 MiB with `flags`.
fn run_sim(target: &str, format: &str, flags: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "--no-db",
        "--target",
        target,
        "--size=64m",
        "--runtime=100ms",
        "--time_based",
        "--output-format",
        format,
    ];
    args.extend_from_slice(flags);
    let out = storlab(&args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn the_latency_bound_warning_is_in_every_output() {
    assert_in_every_output(&LATENCY_BOUND);
}

#[test]
fn the_simulators_merge_warning_is_in_every_output() {
    assert_in_every_output(&MERGED_REQUESTS);
    // The drive saw nothing above the job's 1 MiB: the larger-transfers rule stays silent.
    let out = run_sim(MERGING_STACK, "json", MERGED_REQUESTS.flags);
    let warnings = job_warnings("json", &stdout(&out));
    assert!(
        !warnings.iter().any(|w| w.contains(MERGED_WARNING)),
        "{warnings:?}"
    );
}

#[test]
fn the_merge_is_said_once_when_transfers_were_larger_than_requested() {
    let out = run_4k_queued(MERGING_STACK, "json", &[]);
    let warnings = job_warnings("json", &stdout(&out));
    assert!(
        warnings.iter().any(|w| w.contains(MERGED_WARNING)),
        "{warnings:?}"
    );
    assert!(
        !warnings.iter().any(|w| w.contains(MERGED_REQUESTS.needle)),
        "{warnings:?}"
    );
}

#[test]
fn the_transport_fallback_is_in_every_output() {
    assert_in_every_output(&TRANSPORT_FALLBACK);
    // The same controller under Windows 8 with the drivers that do load: no fallback.
    let out = run_sim(
        "sim:hwfr2013/asm1042-win8-mcci-uas",
        "json",
        TRANSPORT_FALLBACK.flags,
    );
    let warnings = job_warnings("json", &stdout(&out));
    assert!(
        !warnings
            .iter()
            .any(|w| w.contains(TRANSPORT_FALLBACK.needle)),
        "{warnings:?}"
    );
}

#[test]
fn the_read_modify_write_warning_is_in_every_output() {
    assert_in_every_output(&READ_MODIFY_WRITE);
    // Whole 4 KiB pages need no read first.
    let out = run_sim(
        HONEST_STACK,
        "json",
        &["--rw=randwrite", "--bs=4k", "--iodepth=8"],
    );
    let warnings = job_warnings("json", &stdout(&out));
    assert!(
        !warnings
            .iter()
            .any(|w| w.contains(READ_MODIFY_WRITE.needle)),
        "{warnings:?}"
    );
}

#[test]
fn a_trim_the_bridge_dropped_is_in_every_output() {
    assert_in_every_output(&TRIMS_NOT_TRANSLATED);
    // A UAS bridge that translates UNMAP: the fresh state is real.
    let out = run_sim(HONEST_STACK, "json", TRIMS_NOT_TRANSLATED.flags);
    let warnings = job_warnings("json", &stdout(&out));
    assert!(
        !warnings
            .iter()
            .any(|w| w.contains(TRIMS_NOT_TRANSLATED.needle)),
        "{warnings:?}"
    );
}

/// A run saved in a results database: `show` and `compare` print its warnings.
#[test]
fn show_and_compare_print_the_saved_runs_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let storlab_db = |args: &[&str]| -> Output {
        let out = Command::new(env!("CARGO_BIN_EXE_storlab"))
            .env("STORLAB_DB", &db)
            .args(args)
            .output()
            .expect("storlab runs");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    storlab_db(&[
        "run",
        "--target",
        MERGING_STACK,
        "--rw=read",
        "--bs=4k",
        "--iodepth=8",
        "--size=64m",
        "--runtime=100ms",
        "--time_based",
    ]);
    let shown = stdout(&storlab_db(&["show", "r1"]));
    assert!(shown.contains(MERGED_WARNING), "{shown}");
    let compared = stdout(&storlab_db(&["compare", "r1", "r1"]));
    let warnings: Vec<&str> = compared
        .lines()
        .skip_while(|line| *line != "warnings:")
        .collect();
    assert!(
        warnings
            .iter()
            .any(|line| line.contains("[r1 job]") && line.contains(MERGED_WARNING)),
        "{compared}"
    );
}
