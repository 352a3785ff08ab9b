//! Buffered reads measure the device, and say so when they did not: cold-cache random 4 KiB
//! psync reads against fio on the same file (fio's `fadvise_hint` turns readahead off for random
//! jobs; without it storlab measured the page cache that readahead had filled), and the measured
//! page-cache warning on a warm file. The files live under the build's temporary directory, on
//! the disk that holds the build; a filesystem with no block device behind it (tmpfs, overlay)
//! skips, as do a missing fio and a user who cannot drop the caches (root is needed).
//!
//! Its own test binary, not a module of `tests/it/`: it drops the machine's whole page cache and
//! times the disk against fio, so no other test of the binary may run beside it (cargo runs test
//! binaries one after another); its two tests take turns through `PAGE_CACHE`.

#[path = "it/common.rs"]
mod common;
use common::storlab;

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use storlab_engine::device_stats::DeviceReadCounter;

/// The cold-cache comparison's file: larger than what either tool reads in one run at a disk's
/// random 4 KiB rate, so no run re-reads pages an earlier read of the same run cached.
const COLD_FILE_BYTES: usize = 512 << 20;
/// The warm test's file: small enough to stay cached.
const WARM_FILE_BYTES: usize = 32 << 20;
/// Each tool runs this often, alternating, and the medians are compared: the disk is shared
/// with whatever else the machine does.
const RUNS_PER_TOOL: usize = 3;
/// Seconds per run.
const RUNTIME_S: u32 = 3;
/// storlab's IOPS over fio's must fall in this range. It tells a device measurement from a
/// page-cache one (readahead-filled pages read tens of times faster than the disk) and stays
/// clear of the disk's noise on a loaded 2-core machine (0.845 was seen there with six builds
/// sharing the disk); speed parity with fio is `bench/vs-fio.sh`'s to show, not a test's.
const RATIO_MIN: f64 = 0.5;
const RATIO_MAX: f64 = 2.0;
/// What the kernel takes, written to `/proc/sys/vm/drop_caches`, to drop clean page-cache
/// pages, dentries and inodes (Documentation/admin-guide/sysctl/vm.rst).
const DROP_PAGE_CACHE_AND_SLAB: &[u8] = b"3";

/// A directory for the test's files on the disk that holds the build, or `None` (with a
/// message) when no block device stands behind it, so that nothing here can be measured.
fn disk_dir(test: &str) -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a temporary directory");
    let probe = dir.path().join("probe");
    std::fs::write(&probe, b"probe").unwrap();
    if DeviceReadCounter::for_file(&File::open(&probe).unwrap()).is_none() {
        eprintln!(
            "skipping {test}: no block-device statistics behind {} (tmpfs, overlay or no /sys)",
            dir.path().display()
        );
        return None;
    }
    Some(dir)
}

/// A file of `len_bytes` of incompressible bytes, on the disk (synced): a sparse or zeroed file
/// could be read without the device.
fn data_file(path: &Path, len_bytes: usize) {
    const CHUNK_BYTES: usize = 1 << 20;
    let mut file = File::create(path).unwrap();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut chunk = vec![0u8; CHUNK_BYTES];
    for _ in 0..len_bytes / CHUNK_BYTES {
        for word in chunk.chunks_mut(8) {
            // xorshift64: enough to defeat compression and deduplication.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            word.copy_from_slice(&state.to_le_bytes());
        }
        file.write_all(&chunk).unwrap();
    }
    file.sync_all().unwrap();
}

/// Writes back dirty pages and drops the page cache, or `false` when not allowed (not root).
fn drop_caches() -> bool {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
    std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/sys/vm/drop_caches")
        .and_then(|mut f| f.write_all(DROP_PAGE_CACHE_AND_SLAB))
        .is_ok()
}

fn fio_installed() -> bool {
    Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The job both tools run, as fio-style flags.
fn random_read_flags(file: &Path, extra: &[&str]) -> Vec<String> {
    let mut flags: Vec<String> = [
        "--rw=randread",
        "--bs=4k",
        "--ioengine=psync",
        "--direct=0",
        "--size=512M",
        "--time_based",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    flags.push(format!("--runtime={RUNTIME_S}"));
    flags.push(format!("--filename={}", file.display()));
    flags.extend(extra.iter().map(|s| s.to_string()));
    flags
}

/// storlab's first job of `flags`, as JSON.
fn storlab_job(flags: &[String]) -> serde_json::Value {
    let out = storlab()
        .arg("run")
        .args(flags)
        .args(["--no-db", "--output-format=json"])
        .output()
        .expect("storlab runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["jobs"][0].clone()
}

fn fio_read_iops(flags: &[String]) -> f64 {
    let out = Command::new("fio")
        .arg("--name=reference")
        .args(flags)
        .arg("--output-format=json")
        .output()
        .expect("fio runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["jobs"][0]["read"]["iops"].as_f64().unwrap()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Before fio's `fadvise_hint`, readahead read the whole cold file and storlab reported about
/// ten times fio's IOPS: the page cache's, not the disk's.
/// The two tests share the machine's page cache: one drops it (all of it) while the other needs
/// its file to stay cached, so they take turns.
static PAGE_CACHE: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn cold_buffered_random_reads_match_fio() {
    let _turn = PAGE_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let test = "cold_buffered_random_reads_match_fio";
    if !fio_installed() {
        eprintln!("skipping {test}: fio is not installed");
        return;
    }
    let Some(dir) = disk_dir(test) else {
        return;
    };
    if !drop_caches() {
        eprintln!("skipping {test}: dropping the page cache needs root");
        return;
    }
    let file = dir.path().join("cold");
    data_file(&file, COLD_FILE_BYTES);
    let flags = random_read_flags(&file, &[]);
    let (mut storlab_iops, mut fio_iops) = (Vec::new(), Vec::new());
    for _ in 0..RUNS_PER_TOOL {
        assert!(drop_caches());
        let job = storlab_job(&flags);
        let warnings = job["warnings"].as_array().unwrap();
        assert!(
            warnings
                .iter()
                .all(|w| !w.as_str().unwrap().contains("page cache")),
            "cold reads are the device's: {warnings:?}"
        );
        storlab_iops.push(job["read"]["iops"].as_f64().unwrap());
        assert!(drop_caches());
        fio_iops.push(fio_read_iops(&flags));
    }
    let ratio = median(storlab_iops.clone()) / median(fio_iops.clone());
    eprintln!("storlab {storlab_iops:?} IOPS, fio {fio_iops:?} IOPS: ratio of medians {ratio:.3}");
    assert!(
        (RATIO_MIN..=RATIO_MAX).contains(&ratio),
        "storlab/fio = {ratio:.3} (storlab {storlab_iops:?}, fio {fio_iops:?})"
    );
}

/// A warm file read buffered, without dropping its pages first, is memory: the device reads
/// next to nothing, and the result says so, measured.
#[test]
fn buffered_reads_of_a_cached_file_are_flagged() {
    let _turn = PAGE_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(dir) = disk_dir("buffered_reads_of_a_cached_file_are_flagged") else {
        return;
    };
    let file = dir.path().join("warm");
    data_file(&file, WARM_FILE_BYTES);
    // Read it once so every page is cached.
    std::fs::read(&file).unwrap();
    let job = storlab_job(&[
        "--rw=randread".to_string(),
        "--bs=4k".to_string(),
        "--direct=0".to_string(),
        "--invalidate=0".to_string(),
        "--number_ios=20000".to_string(),
        format!("--filename={}", file.display()),
    ]);
    let warnings: Vec<&str> = job["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        warnings.iter().any(|w| w
            .starts_with("reads were served from the page cache: the device (")
            && w.ends_with("delivered; use --direct=1 or drop caches")),
        "{warnings:?}"
    );
}
