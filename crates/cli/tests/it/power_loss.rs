//! `storlab run --faults power_loss@...` on a simulated drive, as a user runs it: a verify job
//! whose drive loses power between its writes and its verify finds the writes the drive's
//! volatile write cache lost (they read back as before: never written, zeros); the same job
//! with a cache flush after every write (`--sync=1`) or at the end of its writes
//! (`--end_fsync=1`) loses nothing and verifies; over USB the capture holds the bridge's NOT
//! READY and UNIT ATTENTION sense data, as tshark decodes it.

use crate::common::{run_in, stderr, stdout, tshark_fields};

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
    crate::common::engine_detail(doc, key).unwrap_or_else(|| panic!("{key} recorded"))
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
fn with_the_writes_flushed_a_power_loss_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // `sync=1`: each write goes with its own flush (two commands); `end_fsync=1`: one flush
    // after the last write. The loss catches the verify's first read either way. (fio's
    // `fsync=1` would not do: it flushes before the next write, so the last write is still
    // cached when the verify starts, and a loss then takes it, as on a real drive.)
    for (flushes, first_read) in [("--sync=1", 2 * WRITES + 1), ("--end_fsync=1", WRITES + 2)] {
        let faults = format!("--faults=power_loss@cmd={first_read}");
        let args = [&JOB[..], &[flushes, "--output-format=json", &faults]].concat();
        let out = run_in(dir.path(), &args);
        assert!(out.status.success(), "{flushes}: {}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(detail(&doc, "sim.faults.power_losses"), 1, "{flushes}");
        assert_eq!(detail(&doc, "sim.faults.lost_writes"), 0, "{flushes}");
        assert_eq!(detail(&doc, "verified_bytes"), 1 << 20, "{flushes}");
    }
}

#[test]
fn the_capture_shows_not_ready_then_one_unit_attention() {
    let dir = tempfile::tempdir().unwrap();
    for stack in ["usb3-bot-ssd", "usb3-uas-ssd"] {
        let pcap = dir.path().join(format!("{stack}.pcap"));
        let target = format!("--target=sim:{stack}");
        let pcap_arg = format!("--pcap={}", pcap.display());
        // 16 writes, the end flush, then the verify's first read meets the loss.
        let args = [
            "run",
            "--no-db",
            &target,
            "--name=p",
            "--rw=randwrite",
            "--bs=4k",
            "--size=64k",
            "--iodepth=1",
            "--verify=crc32c",
            "--end_fsync=1",
            "--faults=power_loss@cmd=18",
            &pcap_arg,
        ];
        let out = run_in(dir.path(), &args);
        assert!(out.status.success(), "{stack}: {}", stderr(&out));
        let fields = ["scsi.sns.key", "scsi.sns.asc", "scsi.sns.ascq"];
        let Some(senses) = tshark_fields(&pcap, "scsi.sns.key", &fields) else {
            return;
        };
        let not_ready = senses.iter().filter(|l| *l == "0x02\t0x04\t0x01").count();
        let unit_attention = senses.iter().filter(|l| *l == "0x06\t0x29\t0x00").count();
        // The SSD is ready 500 ms after power returns; the host asks again every 6 ms.
        assert!((70..=90).contains(&not_ready), "{stack}: {senses:?}");
        assert_eq!(unit_attention, 1, "{stack}: {senses:?}");
        assert_eq!(
            senses.len(),
            not_ready + unit_attention,
            "{stack}: {senses:?}"
        );
    }
}
