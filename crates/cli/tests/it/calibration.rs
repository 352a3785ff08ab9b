//! The calibration gate of issue #7: runs `storlab validate validation/calibration.toml` (every
//! figure of `../shared/reference/calibration.toml` mapped to its simulated scenario) and fails
//! when a figure is more than 10% off (the target) without a `known_gap` reason in the
//! file, or more than 15% off (its working tolerance) without one. Each reason is printed under
//! `storlab validate`'s table, so the tool itself says what it misses and why. A figure with a
//! reason that comes within 10% also fails, so the reasons only go.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

/// The target.
const TARGET_PERCENT: f64 = 10.0;

/// Entries of the calibration file that give a `known_gap` reason, by id.
fn known_gaps(mapping: &str) -> BTreeMap<String, String> {
    let file: toml::Table = toml::from_str(mapping).expect("the calibration file is TOML");
    file["entry"]
        .as_array()
        .expect("[[entry]] tables")
        .iter()
        .filter_map(|entry| {
            let id = entry["id"].as_str()?.to_string();
            let reason = entry.get("known_gap")?.as_str()?.to_string();
            Some((id, reason))
        })
        .collect()
}

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn every_calibration_figure_is_within_10_percent_or_gives_its_known_gap() {
    let root = workspace_root();
    let mapping = std::fs::read_to_string(root.join("validation/calibration.toml")).unwrap();
    let gaps = known_gaps(&mapping);
    let output = Command::new(env!("CARGO_BIN_EXE_storlab"))
        .current_dir(&root)
        .args([
            "validate",
            "validation/calibration.toml",
            "--output-format",
            "json",
        ])
        .output()
        .expect("run storlab validate");
    assert!(
        output.status.success(),
        "storlab validate failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON output");
    let mut problems = Vec::new();
    let mut seen = 0;
    for entry in json["entries"].as_array().expect("entries") {
        let id = entry["id"].as_str().expect("id");
        let error = entry["error_percent"].as_f64().expect("error_percent");
        eprintln!(
            "{id:<70} published {:>8} simulated {:>9.3} error {error:+6.1}%",
            entry["published"], entry["simulated"]
        );
        match gaps.get(id) {
            Some(_) if error.abs() <= TARGET_PERCENT => {
                seen += 1;
                problems.push(format!("{id}: now {error:+.1}%: remove its known_gap"));
            }
            Some(_) => seen += 1,
            None if error.abs() > TARGET_PERCENT => problems.push(format!(
                "{id}: {error:+.1}% is beyond ±{TARGET_PERCENT}% and the file gives no known_gap"
            )),
            None => {}
        }
    }
    assert_eq!(seen, gaps.len(), "a known_gap entry was not measured");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The table `storlab validate` prints names every known gap with its reason.
#[test]
fn the_validate_table_explains_every_known_gap() {
    let root = workspace_root();
    let mapping = std::fs::read_to_string(root.join("validation/calibration.toml")).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_storlab"))
        .current_dir(&root)
        .args(["validate", "validation/calibration.toml"])
        .output()
        .expect("run storlab validate");
    assert!(output.status.success());
    let table = String::from_utf8(output.stdout).unwrap();
    let (_, notes) = table
        .split_once("known gaps (the reference file's reasons):")
        .expect("a known-gaps section");
    for (id, reason) in known_gaps(&mapping) {
        assert!(
            notes
                .lines()
                .any(|l| l.contains(&id) && l.ends_with(&reason)),
            "{id} is not explained:\n{notes}"
        );
    }
}

#[test]
fn the_calibration_file_maps_every_published_figure() {
    // Every figure of the shared reference appears as an entry (or is named in the file's
    // comments as a property checked elsewhere).
    let root = workspace_root();
    let reference = std::fs::read_to_string(root.join("../shared/reference/calibration.toml"));
    let Ok(reference) = reference else {
        if std::env::var_os("CI").is_some() {
            panic!("../shared/reference/calibration.toml is missing");
        }
        eprintln!("skipped: ../shared/reference/calibration.toml is not beside the checkout");
        return;
    };
    let mapping = std::fs::read_to_string(root.join("validation/calibration.toml")).unwrap();
    let reference: toml::Table = toml::from_str(&reference).unwrap();
    let mut missing = Vec::new();
    fn walk(prefix: &str, value: &toml::Value, out: &mut Vec<String>) {
        match value {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&p, v, out);
                }
            }
            _ => out.push(prefix.to_string()),
        }
    }
    let mut figures = Vec::new();
    walk("", &toml::Value::Table(reference), &mut figures);
    for figure in figures {
        if !mapping.contains(&format!("\"{figure}\"")) && !mapping.contains(&figure) {
            missing.push(figure);
        }
    }
    assert!(missing.is_empty(), "figures with no scenario: {missing:?}");
}
