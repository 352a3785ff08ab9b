//! Every path that prints a result carries the run's warnings (issue 23): each warning kind is
//! checked through the binary in the table, JSON, fio-JSON, CSV, the HTML report and `validate`.
//! The merging driver's warning once appeared only on the preset and `--state` paths, so a plain
//! `storlab run` printed its inflated 4 KiB figure with nothing said.

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

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
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
