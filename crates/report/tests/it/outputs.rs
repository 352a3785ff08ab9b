//! Snapshot and structure tests of every output format, on one fixed synthetic report.

use crate::common;

use std::collections::BTreeSet;

use serde_json::Value;
use storlab_report::{from_json, render_table, to_csv, to_fio_json, to_json, ReportError};

#[test]
fn table_snapshot() {
    insta::assert_snapshot!(render_table(&common::fixed_report()));
}

#[test]
fn native_json_snapshot() {
    insta::assert_snapshot!(to_json(&common::fixed_report()));
}

#[test]
fn fio_json_snapshot() {
    insta::assert_snapshot!(to_fio_json(&common::fixed_report()));
}

#[test]
fn csv_snapshot() {
    insta::assert_snapshot!(to_csv(&common::fixed_report()));
}

#[test]
fn native_json_round_trips() {
    let report = common::fixed_report();
    let parsed = from_json(&to_json(&report)).expect("own output parses");
    assert_eq!(parsed, report);
}

#[test]
fn newer_schema_is_refused_with_the_key_named() {
    let mut value: Value = serde_json::from_str(&to_json(&common::fixed_report())).unwrap();
    value["schema_version"] = Value::from(99);
    let error = from_json(&value.to_string()).unwrap_err();
    assert!(matches!(
        error,
        ReportError::UnsupportedSchema { found: 99, .. }
    ));
    assert!(error.to_string().contains("schema_version"));
}

/// Every key path of a JSON value; array elements are all folded into `[]`.
fn key_paths(value: &Value, prefix: &str, paths: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let path = format!("{prefix}.{key}");
                paths.insert(path.clone());
                key_paths(child, &path, paths);
            }
        }
        Value::Array(items) => {
            for item in items {
                key_paths(item, &format!("{prefix}[]"), paths);
            }
        }
        _ => {}
    }
}

/// The native schema's key paths. Changing this list is a schema change: bump
/// `SCHEMA_VERSION` if it is incompatible, and update docs/json-output.md either way.
const NATIVE_SCHEMA_KEY_PATHS: &str = include_str!("../fixtures/native-schema-key-paths.txt");

#[test]
fn native_json_keys_stay_as_documented() {
    let value: Value = serde_json::from_str(&to_json(&common::fixed_report())).unwrap();
    let mut paths = BTreeSet::new();
    key_paths(&value, "", &mut paths);
    // Free-form objects (the job spec, simulator details) are not part of the schema.
    let paths: BTreeSet<String> = paths
        .into_iter()
        .filter(|path| !path.starts_with(".jobs[].job.") && !path.starts_with(".jobs[].sim."))
        .collect();
    let expected: BTreeSet<String> = NATIVE_SCHEMA_KEY_PATHS
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect();
    let added: Vec<_> = paths.difference(&expected).collect();
    let removed: Vec<_> = expected.difference(&paths).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "schema changed; added {added:?}, removed {removed:?}"
    );
}

#[test]
fn native_schema_doc_mentions_every_key() {
    let doc = include_str!("../../../../docs/json-output.md");
    for path in NATIVE_SCHEMA_KEY_PATHS
        .lines()
        .filter(|l| !l.trim().is_empty())
    {
        let key = path.rsplit('.').next().unwrap().trim_end_matches("[]");
        assert!(
            doc.contains(&format!("`{key}`")),
            "docs/json-output.md does not document `{key}` ({path})"
        );
    }
}

#[test]
fn csv_has_one_row_per_job_direction_and_consistent_width() {
    let report = common::fixed_report();
    let csv = to_csv(&report);
    let mut lines = csv.lines();
    let header_fields = lines.next().unwrap().split(',').count();
    let rows: Vec<&str> = lines.collect();
    let expected_rows: usize = report.jobs.iter().map(|job| job.directions().count()).sum();
    assert_eq!(rows.len(), expected_rows);
    for row in rows {
        assert_eq!(count_csv_fields(row), header_fields, "{row}");
    }
}

fn count_csv_fields(row: &str) -> usize {
    let mut in_quotes = false;
    1 + row
        .chars()
        .filter(|&c| {
            if c == '"' {
                in_quotes = !in_quotes;
            }
            c == ',' && !in_quotes
        })
        .count()
}

/// A real target's probed path (`target.path`) shows in the HTML report: its diagnosis lines,
/// and the facts behind them, escaped; a report without one has no such section.
#[test]
fn html_report_shows_each_probed_target_once() {
    let plain = common::fixed_report();
    let labeled = |report| storlab_report::html::LabeledRun {
        label: "r1".into(),
        report,
    };
    let without = storlab_report::html::to_html("t", &[labeled(&plain)]);
    assert!(!without.contains("Targets as probed"));

    let mut probed = common::fixed_report();
    for job in &mut probed.jobs {
        job.setup.target.path = Some(serde_json::json!({
            "path": "/dev/sdz",
            "diagnosis": ["BOT (usb-storage): one command at a time", "largest transfer <120> KiB"],
        }));
    }
    let html = storlab_report::html::to_html("t", &[labeled(&probed)]);
    assert_eq!(html.matches("Targets as probed").count(), 1);
    assert!(html
        .contains("BOT (usb-storage): one command at a time<br>largest transfer &lt;120&gt; KiB"));
    assert!(html.contains("&quot;/dev/sdz&quot;") || html.contains("\"/dev/sdz\""));
}
