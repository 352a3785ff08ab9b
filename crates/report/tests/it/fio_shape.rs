//! Checks that storlab's fio-shaped JSON carries every key fio 3.x itself writes, against a
//! committed fio 3.33 output and, when fio is installed, against the local fio.

use crate::common;

use std::collections::BTreeSet;
use std::process::Command;

use serde_json::Value;
use storlab_report::to_fio_json;

const FIO_FIXTURE: &str = include_str!("../fixtures/fio-3.33-null-randread.json");

fn key_paths(value: &Value, prefix: &str, paths: &mut BTreeSet<String>) {
    if let Value::Object(map) = value {
        for (key, child) in map {
            let path = format!("{prefix}.{key}");
            paths.insert(path.clone());
            key_paths(child, &path, paths);
        }
    }
}

fn paths_of(value: &Value) -> BTreeSet<String> {
    let mut paths = BTreeSet::new();
    key_paths(value, "", &mut paths);
    paths
}

fn ours() -> Value {
    serde_json::from_str(&to_fio_json(&common::fixed_report())).unwrap()
}

/// Key paths fio writes that storlab leaves out, each with the reason.
const NOT_PRODUCED: &[(&str, &str)] = &[];

fn assert_superset(fio: &Value, ours: &Value, what: &str) {
    let missing: Vec<String> = paths_of(fio)
        .difference(&paths_of(ours))
        .filter(|path| !NOT_PRODUCED.iter().any(|(skipped, _)| path == skipped))
        .cloned()
        .collect();
    assert!(
        missing.is_empty(),
        "{what}: fio has keys we lack: {missing:?}"
    );
}

fn check_against(fio: &Value) {
    let ours = ours();
    for direction in ["read", "write", "trim"] {
        assert_superset(
            &fio["jobs"][0][direction],
            &ours["jobs"][0][direction],
            direction,
        );
    }
    let job_keys = |value: &Value| -> BTreeSet<String> {
        value["jobs"][0]
            .as_object()
            .map(|map| map.keys().cloned().collect())
            .unwrap_or_default()
    };
    let missing_job_keys: Vec<_> = job_keys(fio)
        .difference(&job_keys(&ours))
        .cloned()
        .collect();
    assert!(
        missing_job_keys.is_empty(),
        "job level: {missing_job_keys:?}"
    );
    for map in ["latency_ns", "latency_us", "latency_ms", "iodepth_level"] {
        let keys = |value: &Value| -> Vec<String> {
            value["jobs"][0][map]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        };
        let (mut fio_keys, mut our_keys) = (keys(fio), keys(&ours));
        fio_keys.sort();
        our_keys.sort();
        assert_eq!(fio_keys, our_keys, "{map}");
    }
    for top_level in fio.as_object().unwrap().keys() {
        assert!(ours.get(top_level).is_some(), "top-level key {top_level}");
    }
}

#[test]
fn carries_every_key_of_committed_fio_3_33_output() {
    check_against(&serde_json::from_str(FIO_FIXTURE).unwrap());
}

#[test]
fn percentile_map_matches_fio_key_for_key_and_in_order() {
    let fio: Value = serde_json::from_str(FIO_FIXTURE).unwrap();
    let fio_text = serde_json::to_string(&fio["jobs"][0]["read"]["clat_ns"]["percentile"]).unwrap();
    let ours_text = to_fio_json(&common::fixed_report());
    // serde_json::Value sorts keys, so order is checked on our raw text instead.
    let fio_keys: Vec<String> = fio["jobs"][0]["read"]["clat_ns"]["percentile"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert!(fio_text.contains("\"99.990000\""));
    let mut positions: Vec<(f64, usize)> = fio_keys
        .iter()
        .map(|key| {
            let position = ours_text
                .find(&format!("\"{key}\""))
                .unwrap_or_else(|| panic!("key {key} missing"));
            (key.parse::<f64>().unwrap(), position)
        })
        .collect();
    positions.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert!(
        positions.windows(2).all(|pair| pair[0].1 < pair[1].1),
        "percentile keys not in numeric order"
    );
}

#[test]
fn carries_every_key_of_installed_fio_output() {
    let directory = tempfile::tempdir().unwrap();
    let output = Command::new("fio")
        .current_dir(directory.path())
        .args([
            "--name=t",
            "--ioengine=null",
            "--size=4M",
            "--rw=randread",
            "--output-format=json",
        ])
        .output();
    let output = match output {
        Ok(output) if output.status.success() => output,
        other => {
            let why = format!("fio not runnable: {other:?}");
            if std::env::var_os("CI").is_some() {
                panic!("{why}");
            }
            eprintln!("skipped: {why}");
            return;
        }
    };
    let fio: Value = serde_json::from_slice(&output.stdout).expect("fio printed JSON");
    check_against(&fio);
}
