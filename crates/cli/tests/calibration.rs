//! The calibration gate of issue #7: runs `storlab validate validation/calibration.toml` (every
//! figure of `../shared/reference/calibration.toml` mapped to its simulated scenario) and fails
//! when a figure is more than 15% off — except the gaps listed below, each with the reason the
//! model misses it. A listed gap that comes within 15% also fails, so the list only shrinks.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

/// The working tolerance (the target is 10%).
const TOLERANCE_PERCENT: f64 = 15.0;

/// Figures the model does not reproduce yet, and why (docs/validation.md "Known gaps").
const KNOWN_GAPS: &[(&str, &str)] = &[
    // HDD random 4 KiB over 1000 MB. Reads: the Caviar Black's IDE figure equals its NCQ one
    // (1.387 vs 1.400) while its BOT figure is the one-command-at-a-time physics (0.815), yet
    // IDE and BOT both hand the drive one command at a time: no drive mechanism tells them
    // apart, so the IDE reads (Barracuda and HD103SJ too) are left to the host path (an LBA
    // elevator in the port driver was tried: +2…+4%, and it lifts the VelociRaptor past its
    // figure). Writes: the four drives' write-back rates differ by firmware (Barracuda 440 vs
    // HD103SJ 830 writes/s with the same platters, spindle and cache size); one shared
    // write-back rule fits the VelociRaptor and the Barracuda, not the Caviar Black and the
    // HD103SJ.
    (
        "lucidport.rand4k_queued_read.wd_caviar_black_2tb_hdd.sata_ide",
        "IDE figure beats QD1 physics",
    ),
    (
        "lucidport.rand4k_queued_read.barracuda_1tb_hdd.sata_ide",
        "IDE figure beats QD1 physics",
    ),
    (
        "lucidport.rand4k_queued_read.samsung_hd103sj_1tb_hdd.sata_ide",
        "IDE figure beats QD1 physics",
    ),
    (
        "lucidport.rand4k_queued_write.wd_caviar_black_2tb_hdd.uasp",
        "write-cache destage rate too low",
    ),
    (
        "lucidport.rand4k_queued_write.wd_caviar_black_2tb_hdd.sata_ide",
        "write-cache destage rate too low",
    ),
    (
        "lucidport.rand4k_queued_write.wd_caviar_black_2tb_hdd.bot",
        "write-cache destage rate too low",
    ),
    (
        "lucidport.rand4k_queued_write.samsung_hd103sj_1tb_hdd.sata_ide",
        "write-cache destage rate too low",
    ),
    // CPU in IDE mode: the note's whole percentages give the SSD 5/3 of the HDD's CPU, more
    // than their streaming rates differ (1.3x); any CPU cost per command and per KiB gives the
    // rates' ratio, and the BOT column (8 vs 7) asks for less than it.
    (
        "lucidport.cpu_percent.sata_ide.hdd",
        "CPU ratio SSD/HDD in IDE mode above the rates'",
    ),
    // BOT with 1 MiB Turbo transfers reaches ~340 MB/s in the model, with Windows 7's 64 KiB
    // ~185 MB/s; the USB-IF's 250 MB/s is an estimate that falls between (calibration.toml).
    (
        "interface.usb3_bot_ceiling_mbs",
        "BOT with 1 MiB transfers above the estimate",
    ),
];

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn every_calibration_figure_is_within_15_percent_or_a_listed_gap() {
    let root = workspace_root();
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
    let gaps: BTreeMap<&str, &str> = KNOWN_GAPS.iter().copied().collect();
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
            Some(_) if error.abs() <= TOLERANCE_PERCENT => {
                seen += 1;
                problems.push(format!("{id}: now {error:+.1}%: remove it from KNOWN_GAPS"));
            }
            Some(_) => seen += 1,
            None if error.abs() > TOLERANCE_PERCENT => problems.push(format!(
                "{id}: {error:+.1}% is beyond ±{TOLERANCE_PERCENT}%"
            )),
            None => {}
        }
    }
    assert_eq!(
        seen,
        gaps.len(),
        "a KNOWN_GAPS id is not in the calibration file"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
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
