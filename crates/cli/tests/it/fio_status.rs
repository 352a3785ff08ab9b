//! fio's `--status-interval` under `storlab fio` (issue 34 item 8, docs/decisions/0049): while
//! jobs run, a whole report every interval, in the output's format and where the output goes,
//! then the final report; compared with fio 3.33's on a 2.5 s null-engine job: as many reports,
//! each of the same structure as fio's (`fio_normal.rs`'s reduction), JSON as whole documents.

use crate::common;
use crate::fio_normal::{args_in, assert_same_structure, fio, structure, Case};

/// A 2.5 s time-based job at a 1 s status interval: reports at 1 s and 2 s, then the final one
/// (half an interval either side, so a slow start does not move a report across the end).
const JOB: &[&str] = &[
    "--name=t",
    "--ioengine=null",
    "--size=1m",
    "--time_based",
    "--runtime=2500ms",
    "--status-interval=1",
];

/// The null engine is no sync engine, but storlab measures a submission latency for it and
/// prints its `slat` line where fio records none (as psync, `fio_normal.rs`): left out.
const CASE: Case<'static> = Case {
    args: JOB,
    exact_depths: false,
    exact_counts: false,
    sync_engine: true,
    samples: false,
};

/// A human report's text cut into its reports: a new one starts at a job's header once the
/// previous one has its run status (the first keeps the lines fio prints before the jobs).
fn reports(text: &str) -> Vec<String> {
    let mut reports = vec![String::new()];
    for line in text.lines() {
        let current = reports.last_mut().unwrap();
        if line.contains(": (groupid=") && current.contains("Run status group") {
            // The empty line before the header belongs to the new report.
            let trimmed = current.trim_end().len();
            current.truncate(trimmed);
            current.push('\n');
            reports.push("\n".into());
        }
        let current = reports.last_mut().unwrap();
        current.push_str(line);
        current.push('\n');
    }
    reports
}

/// `storlab fio` with `args` in `dir`, exit status checked.
fn storlab_fio(dir: &std::path::Path, args: &[String]) -> std::process::Output {
    let mut all = vec!["fio".to_owned()];
    all.extend(args.iter().cloned());
    let out = common::run_in(dir, &all);
    assert!(out.status.success(), "{}", common::stderr(&out));
    out
}

#[test]
fn status_interval_prints_fios_report_every_interval() {
    let dir = tempfile::tempdir().unwrap();
    let args = args_in(dir.path(), JOB);
    let Some(fio_out) = fio(dir.path(), &args) else {
        return;
    };
    let storlab_out = storlab_fio(dir.path(), &args);
    assert_eq!(
        common::stderr(&storlab_out),
        "",
        "fio prints nothing on stderr"
    );
    let fio_text = String::from_utf8_lossy(&fio_out.stdout).into_owned();
    let storlab_text = common::stdout(&storlab_out);
    let (expected, got) = (reports(&fio_text), reports(&storlab_text));
    assert_eq!(
        expected.len(),
        got.len(),
        "reports (interim and final): fio {args:?}\n---- fio ----\n{fio_text}\n---- storlab ----\n{storlab_text}"
    );
    for (fio_report, storlab_report) in expected.iter().zip(&got) {
        assert_same_structure(
            &structure(fio_report, &CASE),
            &structure(storlab_report, &CASE),
            &args,
            (fio_report, storlab_report),
        );
    }
    // The figures are cumulative since the job's start, as fio's: each report's amount grows.
    let ios: Vec<u64> = got.iter().map(|report| issued_reads(report)).collect();
    assert!(
        ios.windows(2).all(|w| w[0] < w[1]),
        "{ios:?}\n{storlab_text}"
    );
}

/// The reads a report's `issued rwts` line counts.
fn issued_reads(report: &str) -> u64 {
    let line = report
        .lines()
        .find(|line| line.contains("issued rwts: total="))
        .unwrap_or_else(|| panic!("no issued rwts in\n{report}"));
    let total = line.split("total=").nth(1).unwrap_or_default();
    total.split(',').next().unwrap().parse().unwrap()
}

/// Every JSON document of `text`, in order.
fn documents(text: &str) -> Vec<serde_json::Value> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<serde_json::Value>()
        .map(|document| document.unwrap_or_else(|e| panic!("{e}: {text}")))
        .collect()
}

/// The keys of a fio JSON document's first job, nested: its structure without the figures.
fn keys(value: &serde_json::Value) -> Vec<String> {
    let mut keys = Vec::new();
    if let serde_json::Value::Object(map) = value {
        for (key, inner) in map {
            keys.push(key.clone());
            keys.extend(keys_of(inner).into_iter().map(|k| format!("{key}.{k}")));
        }
    }
    keys
}

fn keys_of(value: &serde_json::Value) -> Vec<String> {
    match value {
        // A percentile list's and a histogram's keys are values (fio's bins by latency).
        serde_json::Value::Object(map) if map.keys().all(|k| k.parse::<f64>().is_ok()) => {
            Vec::new()
        }
        serde_json::Value::Object(_) => keys(value),
        _ => Vec::new(),
    }
}

/// With fio's JSON, each report is a whole document, as fio prints them; `--output` takes them
/// all (stdout none), the final one last, and the final one is the report of a run without
/// `--status-interval` (the same keys).
#[test]
fn status_interval_json_prints_whole_documents_into_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = args_in(dir.path(), JOB);
    args.push("--output-format=json".into());
    let Some(fio_out) = fio(dir.path(), &args) else {
        return;
    };
    let fio_documents = documents(&String::from_utf8_lossy(&fio_out.stdout));
    let output = dir.path().join("out.json");
    args.push(format!("--output={}", output.display()));
    let storlab_out = storlab_fio(dir.path(), &args);
    assert_eq!(
        common::stdout(&storlab_out),
        "",
        "the reports go to --output"
    );
    let text = std::fs::read_to_string(&output).unwrap();
    let got = documents(&text);
    assert_eq!(got.len(), fio_documents.len(), "documents: {text}");
    let runtimes: Vec<u64> = got
        .iter()
        .map(|document| document["jobs"][0]["read"]["runtime"].as_u64().unwrap())
        .collect();
    assert!(runtimes.windows(2).all(|w| w[0] < w[1]), "{runtimes:?}");
    let final_keys = keys(&got.last().unwrap()["jobs"][0]);
    for interim in &got[..got.len() - 1] {
        assert_eq!(keys(&interim["jobs"][0]), final_keys, "{text}");
    }
    // The final report is the one a run without --status-interval writes.
    let plain: Vec<String> = args
        .iter()
        .filter(|arg| !arg.starts_with("--status-interval") && !arg.starts_with("--output="))
        .cloned()
        .collect();
    let alone = documents(&common::stdout(&storlab_fio(dir.path(), &plain)));
    assert_eq!(alone.len(), 1);
    assert_eq!(keys(&alone[0]["jobs"][0]), final_keys);
}
