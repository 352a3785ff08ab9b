//! `--state` and preset points keep to the region asked for (issue 16, item 2): on loop devices
//! this test sets up itself (root and losetup needed), every byte outside `--offset`/`--size`
//! keeps the pattern written before the run; on a simulated drive, `--size=1%` fills 1%.

use crate::common;
use common::{stderr, storlab};

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

const MIB: u64 = 1 << 20;
/// Size of each loop device: the 64 MiB.
const DEVICE_BYTES: u64 = 64 * MIB;
/// Offsets and sizes are rounded to storlab's default alignment.
const ALIGN_BYTES: u64 = 4096;
/// Parts per million in a whole (`N%` shares are kept as ppm).
const PPM_WHOLE: u64 = 1_000_000;

/// The byte written at `offset` before a run: the offset's 8-byte word mixed, never zero, so
/// neither a discard (zeros) nor storlab's random data can leave it in place by chance.
fn pattern_byte(offset: u64) -> u8 {
    let word = (offset / 8).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xA5A5_5A5A_0F0F_F0F0;
    (word >> ((offset % 8) * 8)) as u8 | 1
}

/// Whether this machine can set up loop devices; prints why not (and fails under CI, which
/// must run these tests).
fn loop_devices_available() -> bool {
    let root = nix::unistd::geteuid().is_root();
    let losetup = Command::new("losetup")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
        && Path::new("/dev/loop-control").exists();
    if !(root && losetup) {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run the loop-device tests (root, losetup)"
        );
        eprintln!("skipped: loop-device tests need root and losetup");
    }
    root && losetup
}

/// A loop device over a file of `DEVICE_BYTES` holding the pattern, in its own temp dir;
/// detached when dropped, also when the test fails.
struct PatternedLoop {
    device: String,
    backing: PathBuf,
    _dir: tempfile::TempDir,
}

impl PatternedLoop {
    fn attach() -> PatternedLoop {
        let dir = tempfile::tempdir().unwrap();
        let backing = dir.path().join("backing.img");
        let mut file = File::create(&backing).unwrap();
        let chunk_bytes = MIB;
        let mut chunk = vec![0u8; chunk_bytes as usize];
        for start in (0..DEVICE_BYTES).step_by(chunk_bytes as usize) {
            for (i, byte) in chunk.iter_mut().enumerate() {
                *byte = pattern_byte(start + i as u64);
            }
            file.write_all(&chunk).unwrap();
        }
        file.sync_all().unwrap();
        drop(file);
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&backing)
            .output()
            .unwrap();
        assert!(out.status.success(), "losetup: {}", stderr(&out));
        PatternedLoop {
            device: String::from_utf8(out.stdout).unwrap().trim().to_string(),
            backing,
            _dir: dir,
        }
    }

    /// Detach the device (the kernel writes back what it held) and return the backing file's
    /// bytes.
    fn detach_and_read(mut self) -> Vec<u8> {
        self.detach();
        let mut bytes = Vec::with_capacity(DEVICE_BYTES as usize);
        File::open(&self.backing)
            .unwrap()
            .read_to_end(&mut bytes)
            .unwrap();
        assert_eq!(bytes.len() as u64, DEVICE_BYTES);
        bytes
    }

    fn detach(&mut self) {
        if !self.device.is_empty() {
            let _ = Command::new("losetup").args(["-d", &self.device]).status();
            self.device.clear();
        }
    }
}

impl Drop for PatternedLoop {
    fn drop(&mut self) {
        self.detach();
    }
}

/// The first byte in `bytes` outside `[start, end)` that lost its pattern, if any.
fn first_changed_outside(bytes: &[u8], start: u64, end: u64) -> Option<u64> {
    (0..start)
        .chain(end..DEVICE_BYTES)
        .find(|&offset| bytes[offset as usize] != pattern_byte(offset))
}

/// Bytes in `[start, end)` that no longer hold the pattern.
fn changed_inside(bytes: &[u8], start: u64, end: u64) -> u64 {
    (start..end)
        .filter(|&offset| bytes[offset as usize] != pattern_byte(offset))
        .count() as u64
}

/// Run `storlab run ARGS --target DEVICE --no-db` on a fresh patterned loop device and return
/// what the device holds afterwards.
fn run_on_patterned_device(args: &[&str]) -> Vec<u8> {
    let device = PatternedLoop::attach();
    let out = storlab()
        .arg("run")
        .args(args)
        .args(["--target", device.device.as_str(), "--no-db"])
        .output()
        .expect("storlab runs");
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    device.detach_and_read()
}

/// The cases: each state with the region in shares (`--size=10% --offset=50%`, which
/// discarded all 64 MiB) and in bytes (`--size=6m --offset=32m`, which overwrote MiB 0-38).
#[test]
fn states_leave_every_byte_outside_the_region_untouched() {
    if !loop_devices_available() {
        return;
    }
    // 50% and 10% of the device, as `plan_regions` resolves them: the offset rounded up to the
    // alignment, the size down.
    let share_start = (DEVICE_BYTES * 500_000 / PPM_WHOLE).div_ceil(ALIGN_BYTES) * ALIGN_BYTES;
    let share_len = DEVICE_BYTES * 100_000 / PPM_WHOLE / ALIGN_BYTES * ALIGN_BYTES;
    let regions: [(&[&str], u64, u64); 2] = [
        (
            &["--size=10%", "--offset=50%"],
            share_start,
            share_start + share_len,
        ),
        (&["--size=6m", "--offset=32m"], 32 * MIB, 38 * MIB),
    ];
    for (region_args, start, end) in regions {
        for state in ["fresh", "seq-filled", "fragmented:1m"] {
            let mut args = vec![
                "--rw=randread",
                "--bs=4k",
                "--number_ios=64",
                "--state",
                state,
            ];
            args.extend_from_slice(region_args);
            let bytes = run_on_patterned_device(&args);
            assert_eq!(
                first_changed_outside(&bytes, start, end),
                None,
                "{args:?} changed a byte outside {start}..{end}"
            );
            // The state did act on the region: discarded (zeros) or rewritten.
            let changed = changed_inside(&bytes, start, end);
            assert!(
                changed > (end - start) * 9 / 10,
                "{args:?}: only {changed} of {} bytes of the region changed",
                end - start
            );
        }
    }
}

/// Presets with a region: CrystalDiskMark's writes and a state keep to `--offset`/`--size`;
/// FC-Test's block streams start at `--offset` and stay within four times the capped set.
#[test]
fn presets_keep_to_the_region_asked_for() {
    if !loop_devices_available() {
        return;
    }
    let cdm = [
        "--preset",
        "cdm",
        "--size=4m",
        "--offset=16m",
        "--runtime=100ms",
        "--state",
        "seq-filled",
    ];
    let bytes = run_on_patterned_device(&cdm);
    assert_eq!(first_changed_outside(&bytes, 16 * MIB, 20 * MIB), None);
    assert!(changed_inside(&bytes, 16 * MIB, 20 * MIB) > 0);

    // Every set capped at 1 MiB: streams from 40 MiB to at most 40 + 4 MiB.
    let fctest = ["--preset", "fctest", "--size=1m", "--offset=40m"];
    let bytes = run_on_patterned_device(&fctest);
    assert_eq!(first_changed_outside(&bytes, 40 * MIB, 44 * MIB), None);
    assert!(changed_inside(&bytes, 40 * MIB, 44 * MIB) > 0);
}

/// Every shipped preset but FC-Test (whose streams run past `--size` by design, checked above),
/// with a state and a TRIM between its steps, writes and discards only its region.
#[test]
fn every_preset_with_a_state_keeps_to_its_region() {
    if !loop_devices_available() {
        return;
    }
    let presets_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../presets");
    let mut names: Vec<String> = std::fs::read_dir(&presets_dir)
        .unwrap()
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().to_string_lossy().to_string();
            name.strip_suffix(".toml").map(str::to_string)
        })
        .filter(|name| name != "fctest")
        .collect();
    names.sort();
    assert!(names.len() >= 10, "presets found: {names:?}");
    // Presets whose workers run on disjoint ranges give each worker its own `size`
    // (docs/presets.md, fio's offset_increment): their area is that many sizes long.
    let workers_of = |name: &str| match name {
        "hdspeed-multi" => 3,
        "iometer-multithread" => 4,
        _ => 1,
    };
    for name in &names {
        let text = std::fs::read_to_string(presets_dir.join(format!("{name}.toml"))).unwrap();
        assert_eq!(
            text.contains("disjoint_workers = true"),
            workers_of(name) > 1,
            "preset {name}: say how many disjoint workers it runs at most"
        );
    }
    for name in &names {
        // 8 MiB: the largest block any preset uses (ATTO's and IOMeter's 8 MiB) must fit.
        let (start, end) = (16 * MIB, 16 * MIB + workers_of(name) * 8 * MIB);
        let args = [
            "--preset",
            name.as_str(),
            "--size=8m",
            "--offset=16m",
            "--runtime=50ms",
            "--state",
            "seq-filled",
            "--trim-between-steps",
        ];
        let bytes = run_on_patterned_device(&args);
        assert_eq!(
            first_changed_outside(&bytes, start, end),
            None,
            "preset {name} changed a byte outside {start}..{end}"
        );
        assert!(
            changed_inside(&bytes, start, end) > 0,
            "preset {name} left its region as it was"
        );
    }
}

/// On the simulator, `--size=1% --state seq-filled` filled the whole 32 GB drive (13 s and
/// 4.3 GB of memory) instead of 1% of it; the drive's written-byte counter says which.
#[test]
fn a_simulated_fill_covers_the_share_asked_for_only() {
    let out = storlab()
        .args([
            "run",
            "--target",
            "sim:usb3-uas-ssd",
            "--rw=randread",
            "--size=1%",
            "--runtime=100ms",
            "--state",
            "seq-filled",
            "--no-db",
            "--output-format=json",
        ])
        .output()
        .expect("storlab runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let job = &doc["jobs"][0];
    assert_eq!(job["device_state"], "seq-filled");
    // The report's target size is the job's region: 1% of the 32 GB drive.
    let region_bytes = job["target"]["size_bytes"].as_u64().unwrap();
    assert_eq!(region_bytes, 320_000_000);
    // The state preparation's writes: the fill of the region only.
    let written = doc["preparation"][0]["bytes_written"].as_u64().unwrap();
    assert_eq!(written, region_bytes);
}
