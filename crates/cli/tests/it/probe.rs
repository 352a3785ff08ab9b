//! `storlab probe` through the binary: this machine's disk, a file on it, a loop device the
//! test sets up (torn down on drop), a recorded sysfs tree, and bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn storlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_storlab"))
        .args(args)
        .output()
        .unwrap()
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn fixture(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../engine/tests/fixtures/probe")
        .join(case)
        .join("sys")
}

/// The first whole disk this machine has (vd*, sd*, nvme*), if any.
fn machine_disk() -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir("/sys/block")
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("vd") || n.starts_with("sd") || n.starts_with("nvme"))
        .collect();
    names.sort();
    names.into_iter().next()
}

#[test]
fn probe_of_this_machines_disk_prints_its_driver_chain_and_diagnosis() {
    let Some(name) = machine_disk() else {
        eprintln!("skipped: no vd*, sd* or nvme* disk in /sys/block");
        return;
    };
    let node = format!("/dev/{name}");
    let out = storlab(&["probe", &node]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.starts_with(&node), "{text}");
    assert!(text.contains("driver chain"), "{text}");
    assert!(text.contains("diagnosis:"), "{text}");
    let doc = json(&storlab(&["probe", &node, "--output-format", "json"]));
    assert_eq!(doc["schema_version"], 1);
    let device = &doc["probes"][0]["device"];
    assert_eq!(device["name"], name.as_str());
    let expected_size: u64 = std::fs::read_to_string(format!("/sys/block/{name}/size"))
        .unwrap()
        .trim()
        .parse::<u64>()
        .unwrap()
        * 512;
    assert_eq!(device["size_bytes"], expected_size);
    // The device was asked: either it answered INQUIRY or the reason is recorded.
    let query = &device["device_query"];
    assert!(
        query["unavailable"].is_string() || query["inquiry"].is_object(),
        "{query}"
    );
}

#[test]
fn probe_of_a_file_names_its_filesystem_mount_and_device() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = dir.path().join("data");
    std::fs::write(&file, b"x").unwrap();
    let doc = json(&storlab(&[
        "probe",
        file.to_str().unwrap(),
        "--output-format",
        "json",
    ]));
    let probe = &doc["probes"][0];
    let mounted = &probe["file"];
    let mount_point = mounted["mount_point"].as_str().unwrap();
    assert!(file.starts_with(mount_point), "{mounted}");
    // The same filesystem and mount point findmnt (util-linux) reports for the file.
    let Ok(found) = Command::new("findmnt")
        .args(["-n", "-o", "FSTYPE,TARGET", "-T"])
        .arg(&file)
        .output()
    else {
        eprintln!("skipped the findmnt comparison: findmnt missing");
        return;
    };
    let found = String::from_utf8_lossy(&found.stdout);
    let mut fields = found.split_whitespace();
    assert_eq!(mounted["fs_type"].as_str(), fields.next(), "{mounted}");
    assert_eq!(Some(mount_point), fields.next(), "{mounted}");
    assert!(
        probe["device"].is_object() || mounted["device_number"].as_str().unwrap().starts_with("0:")
    );
}

/// A loop device over a sparse file; detached on drop, however the test ends.
struct LoopDevice {
    path: String,
    backing: PathBuf,
    _dir: tempfile::TempDir,
}

impl LoopDevice {
    fn attach() -> Option<LoopDevice> {
        if !nix::unistd::geteuid().is_root()
            || Command::new("losetup").arg("--version").output().is_err()
        {
            eprintln!("skipped: needs root and losetup");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let backing = dir.path().join("backing.img");
        std::fs::File::create(&backing)
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&backing)
            .output()
            .unwrap();
        if !out.status.success() {
            eprintln!("skipped: losetup: {}", String::from_utf8_lossy(&out.stderr));
            return None;
        }
        let path = String::from_utf8(out.stdout).unwrap().trim().to_string();
        Some(LoopDevice {
            path,
            backing,
            _dir: dir,
        })
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.path).status();
    }
}

#[test]
fn probe_of_a_loop_device_names_its_backing_file() {
    let Some(device) = LoopDevice::attach() else {
        return;
    };
    let doc = json(&storlab(&[
        "probe",
        &device.path,
        "--output-format",
        "json",
    ]));
    let facts = &doc["probes"][0]["device"];
    assert_eq!(facts["transport"], "loop");
    assert_eq!(facts["size_bytes"], 64u64 << 20);
    let backing = std::fs::canonicalize(&device.backing).unwrap();
    assert_eq!(facts["loop_backing_file"], backing.to_str().unwrap());
    // Nothing to ask a loop device through SG_IO.
    assert!(facts["device_query"].is_null());
    let out = storlab(&["probe", &device.path]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("loop device: I/O goes to {}", backing.display())),
        "{text}"
    );
}

#[test]
fn probe_of_a_recorded_sysfs_tree_reads_it_and_asks_no_device() {
    let root = fixture("usb-bot-hdd");
    let out = storlab(&["probe", "--sys-root", root.to_str().unwrap(), "sdb"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("USB 2.0 High-Speed link: about 35 MB/s is the ceiling"),
        "{text}"
    );
    assert!(text.contains("Genesys Logic GL3310"), "{text}");
    assert!(!text.contains("device query"), "{text}");
    let doc = json(&storlab(&[
        "probe",
        "--sys-root",
        root.to_str().unwrap(),
        "--output-format",
        "json",
    ]));
    let probes = doc["probes"].as_array().unwrap();
    assert_eq!(probes.len(), 1);
    assert_eq!(probes[0]["device"]["usb"]["interface_protocol"], 0x50);
    assert_eq!(
        probes[0]["device"]["host_controller"]["link"]["current_width"],
        1
    );
}

#[test]
fn bad_paths_are_one_line_and_exit_2() {
    for args in [
        vec!["probe", "/nonexistent/storlab-probe"],
        vec!["probe", "/dev/null"],
        vec!["probe", "--sys-root", "/nonexistent", "sda"],
        vec![
            "probe",
            "--sys-root",
            fixture("nvme").to_str().unwrap(),
            "sdz",
        ],
    ] {
        let out = storlab(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn a_simulated_run_names_its_bottleneck_and_next_layer_under_the_table() {
    let out = storlab(&[
        "run",
        "--target",
        "sim:usb3-uas-ssd",
        "--rw=randread",
        "--bs=4k",
        "--iodepth=32",
        "--size=64m",
        "--runtime=1",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find(|l| l.contains("bottleneck:"))
        .unwrap_or_else(|| panic!("no bottleneck line: {text}"));
    assert!(line.contains("% utilisation; next: "), "{line}");
}

#[test]
fn a_real_run_records_the_probed_path_in_its_report_and_under_its_table() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = dir.path().join("target.bin");
    std::fs::File::create(&file)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let target = file.to_str().unwrap();
    let run = [
        "run",
        "--target",
        target,
        "--rw=read",
        "--bs=128k",
        "--size=8m",
        "--runtime=1",
    ];
    let doc = json(&storlab(&[&run[..], &["--output-format", "json"]].concat()));
    let recorded = &doc["jobs"][0]["target"]["path"];
    assert_eq!(recorded["path"], target, "{recorded}");
    assert!(recorded["file"]["fs_type"].is_string(), "{recorded}");
    assert!(recorded["diagnosis"].is_array(), "{recorded}");
    let out = storlab(&run);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("diagnosis:"), "{text}");
    if let Some(node) = recorded["device"]["node"].as_str() {
        // Said once for the target, not once per job.
        assert_eq!(text.matches(&format!("] {node} is ")).count(), 1, "{text}");
    }
}
