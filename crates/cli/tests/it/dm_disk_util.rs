//! fio's `disk_util` for a device-mapper target, against fio itself (issue 24): a loop device
//! over a file this test creates, a `dmsetup create` linear target over it, the same small
//! direct read job through fio and storlab, and their `disk_util` entries compared: the same
//! devices in the same order (the dm device with its `aggr_*` keys, then the loop device
//! beneath it), the same keys in each, and in each tool's own output the `aggr_*` values equal
//! to the one slave's counters (fio's aggregate over one slave, diskutil.c). Counters are live,
//! so values differ run to run and are checked for plausibility only. Both devices are torn down
//! by drop guards whatever happens; no other device is touched. Needs root, losetup, dmsetup, a
//! kernel with device-mapper and fio; skipped with the reason otherwise.

use crate::common;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const BACKING_BYTES: u64 = 32 << 20;
/// dmsetup tables count 512-byte sectors.
const SECTOR_BYTES: u64 = 512;
/// The job reads 4 MiB in 64 KiB direct reads: 64 requests reach the dm device.
const JOB_READS: u64 = 64;

/// Why the test cannot run here, if it cannot.
fn missing_prerequisite() -> Option<String> {
    if !nix::unistd::geteuid().is_root() {
        return Some("needs root".into());
    }
    for tool in ["losetup", "dmsetup", "fio"] {
        if Command::new(tool).arg("--version").output().is_err() {
            return Some(format!("needs {tool}"));
        }
    }
    // `dmsetup version` fails when the kernel has no device-mapper (no /dev/mapper/control).
    let Ok(version) = Command::new("dmsetup").arg("version").output() else {
        return Some("dmsetup version did not run".into());
    };
    if !version.status.success() {
        return Some(format!(
            "the kernel has no device-mapper: {}",
            String::from_utf8_lossy(&version.stderr)
                .lines()
                .next()
                .unwrap_or("dmsetup version failed")
        ));
    }
    None
}

/// A dm linear target named by this test over the whole loop device; removed on drop (before
/// the loop device, which is declared first).
struct DmLinear {
    name: String,
}

impl DmLinear {
    fn create(over: &Path) -> DmLinear {
        let name = format!("storlab-test-dm-{}", std::process::id());
        let table = format!(
            "0 {} linear {} 0",
            BACKING_BYTES / SECTOR_BYTES,
            over.display()
        );
        let out = Command::new("dmsetup")
            .args(["create", &name, "--table", &table])
            .output()
            .unwrap();
        assert!(out.status.success(), "dmsetup: {}", common::stderr(&out));
        DmLinear { name }
    }

    fn path(&self) -> PathBuf {
        Path::new("/dev/mapper").join(&self.name)
    }
}

impl Drop for DmLinear {
    fn drop(&mut self) {
        // udev may still hold the new device for a moment: retry, as `dmsetup remove --retry`.
        let _ = Command::new("dmsetup")
            .args(["remove", "--retry", &self.name])
            .status();
    }
}

/// The kernel name of a block device path (`/dev/mapper/x` → `dm-3`, `/dev/loop2` → `loop2`).
fn kernel_name(device: &Path) -> String {
    let resolved = std::fs::canonicalize(device).unwrap();
    resolved.file_name().unwrap().to_string_lossy().into_owned()
}

/// `disk_util` as (name, sorted keys) per entry, in order.
fn shape(json: &Value) -> Vec<(String, Vec<String>)> {
    json["disk_util"]
        .as_array()
        .unwrap_or_else(|| panic!("no disk_util in {json}"))
        .iter()
        .map(|entry| {
            let mut keys: Vec<String> = entry.as_object().unwrap().keys().cloned().collect();
            keys.sort();
            (entry["name"].as_str().unwrap().to_string(), keys)
        })
        .collect()
}

/// fio's aggregate over one slave is that slave's counters; its `aggr_util` the slave's util.
fn assert_aggregate_is_the_slave(tool: &str, json: &Value) {
    let entries = json["disk_util"].as_array().unwrap();
    let (dm, slave) = (&entries[0], &entries[1]);
    for (aggr, own) in [
        ("aggr_read_ios", "read_ios"),
        ("aggr_write_ios", "write_ios"),
        ("aggr_read_merges", "read_merges"),
        ("aggr_write_merge", "write_merges"),
        ("aggr_read_ticks", "read_ticks"),
        ("aggr_write_ticks", "write_ticks"),
        ("aggr_in_queue", "in_queue"),
    ] {
        assert_eq!(
            dm[aggr], slave[own],
            "{tool}: {aggr} vs the slave's {own}: {json}"
        );
    }
    let (aggr_util, util) = (
        dm["aggr_util"].as_f64().unwrap(),
        slave["util"].as_f64().unwrap(),
    );
    assert!(
        (aggr_util - util).abs() < 1e-6,
        "{tool}: {aggr_util} vs {util}"
    );
    // The job's reads reached both devices (and any other reader's too: at least these).
    for entry in [dm, slave] {
        assert!(
            entry["read_ios"].as_u64().unwrap() >= JOB_READS,
            "{tool}: {entry}"
        );
        let util = entry["util"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&util), "{tool}: {entry}");
    }
}

#[test]
fn a_dm_device_gets_fios_disk_util_entries() {
    if let Some(why) = missing_prerequisite() {
        eprintln!("skipped: {why}");
        return;
    }
    let loop_device = common::LoopDevice::attach(BACKING_BYTES);
    let dm = DmLinear::create(&loop_device.path);
    let target = dm.path().display().to_string();
    let filename = format!("--filename={target}");
    let job = [
        "--name=dm",
        filename.as_str(),
        "--rw=read",
        "--bs=64k",
        "--size=4m",
        "--direct=1",
        "--ioengine=psync",
    ];
    let dir = tempfile::tempdir().unwrap();
    let fio = Command::new("fio")
        .current_dir(dir.path())
        .arg("--output-format=json")
        .args(job)
        .output()
        .unwrap();
    assert!(fio.status.success(), "fio: {}", common::stderr(&fio));
    let fio: Value = serde_json::from_slice(&fio.stdout).unwrap();
    let ours = common::run_fio_json(dir.path(), &job);

    let names = [kernel_name(&dm.path()), kernel_name(&loop_device.path)];
    for (tool, json) in [("fio", &fio), ("storlab", &ours)] {
        let listed: Vec<String> = shape(json).into_iter().map(|(name, _)| name).collect();
        assert_eq!(listed, names, "{tool}");
        assert_aggregate_is_the_slave(tool, json);
    }
    assert_eq!(shape(&ours), shape(&fio));
}
