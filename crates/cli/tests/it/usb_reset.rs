//! The binary with the USB device reset and the device-level faults: a hung UAS bridge
//! recovered by `usb_reset_device` shows the reset in the report and the re-enumeration in the
//! pcap (tshark reads the root hub's SetPortFeature(PORT_RESET) and the GET_DESCRIPTORs); a
//! device removed by a disconnect fails the job with EIO, or with `continue_on_error` every
//! I/O from the removal on is a counted error and the job ends normally.

use crate::common::{run_in, stderr, tshark_fields};

/// A 64 KiB sequential read in 4 KiB blocks: 16 reads.
const READS: u64 = 16;
const EIO: i64 = 5;

fn run(dir: &std::path::Path, faults: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "--target",
        "sim:usb3-uas-ssd",
        "--faults",
        faults,
        "--rw=read",
        "--bs=4k",
        "--size=64k",
        "--no-db",
    ];
    args.extend_from_slice(extra);
    run_in(dir, &args)
}

#[test]
fn a_device_reset_is_in_the_report_and_its_re_enumeration_in_the_pcap() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("reset.pcap");
    let out = run(
        dir.path(),
        "hang@cmd=3,timeout=1s,tm_timeout=1s,hang_recovery=device_reset",
        &["--output-format=json", "--pcap", pcap.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let faults = &doc["jobs"][0]["sim"]["faults"];
    assert_eq!(faults["device_resets"], 1, "{faults}");
    assert_eq!(faults["uas_it_nexus_resets"], 1, "{faults}");
    assert_eq!(faults["retried"], 1, "{faults}");
    assert_eq!(faults["uas_bot_fallbacks"], 0, "{faults}");
    let Some(features) = tshark_fields(
        &pcap,
        "usbhub.setup.bRequest == 3",
        &["usbhub.setup.PortFeatureSelector"],
    ) else {
        return;
    };
    assert_eq!(features, ["4"], "one PORT_RESET: {features:?}");
    // Enumeration at time 0 asks for the device descriptor's 18 bytes; the re-enumeration asks
    // for its first 8, then 18.
    let lengths = tshark_fields(
        &pcap,
        "usb.setup.bRequest == 6 && usb.bDescriptorType == 1",
        &["usb.setup.wLength"],
    )
    .unwrap();
    assert_eq!(lengths, ["18", "8", "18"], "{lengths:?}");
}

#[test]
fn a_removed_device_fails_the_job_or_every_later_io_with_continue_on_error() {
    let dir = tempfile::tempdir().unwrap();
    // Off the bus for 1 s: longer than the SuperSpeed port's termination check, removed.
    let faults = "disconnect@cmd=5,disconnect_for=1s";
    let failed = run(dir.path(), faults, &[]);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    assert!(
        stderr(&failed).contains("Input/output error"),
        "{}",
        stderr(&failed)
    );

    let passed = run(
        dir.path(),
        faults,
        &["--continue_on_error=read", "--output-format=fio-json"],
    );
    assert_eq!(passed.status.code(), Some(0), "{}", stderr(&passed));
    let doc: serde_json::Value = serde_json::from_slice(&passed.stdout).unwrap();
    let job = &doc["jobs"][0];
    // Reads 1 to 4 went through; the fifth was in flight at the removal, the rest came after.
    assert_eq!(job["total_err"], READS - 4, "{job}");
    assert_eq!(job["first_error"], EIO);
    assert_eq!(job["read"]["io_bytes"], 4 * 4096);

    // Off for 5 ms: the hub saw a link failure, warm-reset the device and kept it.
    let kept = run(
        dir.path(),
        "disconnect@cmd=5,disconnect_for=5ms,timeout=1s",
        &["--output-format=json"],
    );
    assert!(kept.status.success(), "{}", stderr(&kept));
    let doc: serde_json::Value = serde_json::from_slice(&kept.stdout).unwrap();
    let faults = &doc["jobs"][0]["sim"]["faults"];
    assert_eq!(
        (
            &faults["disconnects"],
            &faults["devices_removed"],
            &faults["device_resets"]
        ),
        (&1.into(), &0.into(), &1.into()),
        "{faults}"
    );
}
