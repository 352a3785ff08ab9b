//! `storlab run --faults power_loss@...` on a simulated drive, as a user runs it: a verify job
//! whose drive loses power between its writes and its verify finds the writes the drive's
//! volatile write cache lost (they read back as before: never written, zeros); the same job
//! with a cache flush after every write (`--fsync=1`) loses nothing and verifies.

use crate::common::{run_in, stderr, stdout};

/// 256 random 4 KiB writes at queue depth 1, then fio's verify pass over them.
const JOB: [&str; 9] = [
    "run",
    "--no-db",
    "--target=sim:sata-ahci-hdd",
    "--name=j",
    "--rw=randwrite",
    "--bs=4k",
    "--size=1m",
    "--iodepth=1",
    "--verify=crc32c",
];
const WRITES: u64 = 256;

fn detail(doc: &serde_json::Value, key: &str) -> u64 {
    doc["jobs"][0]["engine_details"]
        .as_array()
        .expect("engine details")
        .iter()
        .find(|d| d[0] == key)
        .and_then(|d| d[1].as_str()?.parse().ok())
        .unwrap_or_else(|| panic!("{key} recorded"))
}

#[test]
fn verify_finds_the_writes_a_power_loss_took_from_the_drive_cache() {
    let dir = tempfile::tempdir().unwrap();
    // The loss catches the verify's first read (command WRITES + 1): every write before it was
    // acknowledged, most from the disk's write-back cache.
    let faults = format!("--faults=power_loss@cmd={}", WRITES + 1);
    let out = run_in(dir.path(), &[&JOB[..], &[&faults]].concat());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // fio's message for a block that reads as never written: the header's magic is zero.
    let line = err
        .lines()
        .find(|l| l.contains("verify failed"))
        .unwrap_or_else(|| panic!("no verify failure: {err}"));
    assert!(line.contains("bad magic header 0"), "{line}");
    let offset: u64 = line
        .split("at offset ")
        .nth(1)
        .and_then(|rest| rest.split(',').next()?.trim().parse().ok())
        .unwrap_or_else(|| panic!("offset in `{line}`"));
    assert!(offset < 1 << 20 && offset.is_multiple_of(4096), "{line}");

    // The same job without the loss verifies: the loss, not the job, made the difference.
    let out = run_in(dir.path(), &JOB);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn with_a_flush_after_every_write_a_power_loss_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // Each write is followed by its flush: the verify's first read is command 2 * WRITES + 1.
    let faults = format!("--faults=power_loss@cmd={}", 2 * WRITES + 1);
    let args = [&JOB[..], &["--fsync=1", "--output-format=json", &faults]].concat();
    let out = run_in(dir.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(detail(&doc, "sim.faults.power_losses"), 1);
    assert_eq!(detail(&doc, "sim.faults.lost_writes"), 0);
    assert_eq!(detail(&doc, "verified_bytes"), 1 << 20);
}
