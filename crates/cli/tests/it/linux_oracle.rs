//! The Linux kernel as an oracle (issue 35): Debian's Linux 6.1 booted under QEMU (TCG) with
//! QEMU's BOT and UAS devices on xHCI (SuperSpeed) and EHCI (High-Speed) runs `storlab probe`,
//! sg3-utils and a few jobs with usbmon recording; the test then compares probe's fields with
//! sysfs and sg3-utils' raw bytes, checks that probe sent only read-only commands, and compares
//! what the real uas and usb-storage drivers put on the wire (command sizes, commands in
//! flight, tags, IU order, status URB lengths, URB framing and flags) with the simulated
//! `linux-uas` and `linux-usb-storage` stacks running the same jobs.
//!
//! It skips, with a message, only where QEMU or the kernel is missing; under `CI=true` it fails
//! instead (`.ci/run` installs qemu-system-x86, linux-image-amd64, busybox-static, sg3-utils).

mod guest;
mod probe_check;
mod wire;

use crate::common;
use std::path::Path;

/// The jobs every disk runs (name, storlab job flags): psync and libaio, O_DIRECT, reads and
/// writes of 4 KiB, 64 KiB and 1 MiB, one and several in flight.
const JOBS: [(&str, &str); 6] = [
    (
        "psync-4k-read",
        "--rw=read --bs=4k --size=256k --direct=1 --ioengine=psync",
    ),
    (
        "psync-64k-write",
        "--rw=write --bs=64k --size=2m --direct=1 --ioengine=psync",
    ),
    (
        "psync-1m-read",
        "--rw=read --bs=1m --size=4m --direct=1 --ioengine=psync",
    ),
    // Every other 4 KiB block: no two reads are adjacent, so the block layer merges none
    // (random reads would merge where two happen to be adjacent, differently in every run).
    (
        "libaio-4k-read-holes-qd32",
        "--rw=read:4k --bs=4k --size=4m --direct=1 --ioengine=libaio --iodepth=32",
    ),
    (
        "libaio-1m-write-qd4",
        "--rw=write --bs=1m --size=8m --direct=1 --ioengine=libaio --iodepth=4",
    ),
    // uas passes discards on as UNMAP; usb-storage has discard off (EOPNOTSUPP, no command).
    (
        "psync-64k-trim",
        "--rw=trim --bs=64k --size=1m --ioengine=psync",
    ),
];

#[test]
fn linux_oracle() {
    if let Some(missing) = guest::missing_prerequisite() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "linux_oracle: {missing}; CI must run the Linux oracle (.ci/run installs it)"
        );
        eprintln!("linux_oracle: skipped: {missing}");
        return;
    }
    let kernel = guest::installed_kernel().unwrap();
    let work = tempfile::tempdir().unwrap();
    let initramfs = guest::build_initramfs(work.path(), &kernel, &JOBS);
    let run = match guest::boot(work.path(), &kernel, &initramfs) {
        Ok(run) => run,
        Err(why) => panic!("linux_oracle: {why}"),
    };
    eprintln!("linux_oracle: guest ran in {:.1?}", run.elapsed);
    let keep = std::env::var_os("STORLAB_ORACLE_KEEP");
    if let Some(dir) = keep {
        std::process::Command::new("cp")
            .arg("-r")
            .arg(&run.results)
            .arg(dir)
            .status()
            .unwrap();
    }
    let mut differences = Vec::new();
    for disk in DISK_STACKS {
        let dir = run.results.join(disk.results_dir);
        assert!(
            dir.is_dir(),
            "linux_oracle: the guest has no {} disk; console:\n{}",
            disk.results_dir,
            run.console
        );
        differences.extend(probe_check::compare(&dir, disk.results_dir));
        differences.extend(probe_check::verdict(&dir, disk.results_dir));
        differences.extend(compare_jobs(&dir, &disk, work.path()));
    }
    assert!(
        differences.is_empty(),
        "linux_oracle: {} differences between Linux 6.1 and storlab:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

/// A guest disk (its results directory, named driver-speed by init.sh) and the simulated stack
/// of the same driver over the same device: QEMU's usb-uas or usb-storage on xHCI or EHCI.
struct DiskStack {
    results_dir: &'static str,
    stack: &'static str,
}

const DISK_STACKS: [DiskStack; 4] = [
    DiskStack {
        results_dir: "uas-5000",
        stack: "qemu/linux-uas-superspeed",
    },
    DiskStack {
        results_dir: "uas-480",
        stack: "qemu/linux-uas-high-speed",
    },
    DiskStack {
        results_dir: "usb-storage-5000",
        stack: "qemu/linux-usb-storage-superspeed",
    },
    DiskStack {
        results_dir: "usb-storage-480",
        stack: "qemu/linux-usb-storage-high-speed",
    },
];

/// Runs every job on the disk's simulated stack and compares the driver views; returns one
/// line per difference, each with the command that reproduces the simulated side.
fn compare_jobs(dir: &Path, disk: &DiskStack, work: &Path) -> Vec<String> {
    let mut differences = Vec::new();
    for (job, flags) in JOBS {
        let kernel_rc = std::fs::read_to_string(dir.join(format!("{job}.rc"))).unwrap();
        let kernel_err =
            std::fs::read_to_string(dir.join(format!("{job}.err"))).unwrap_or_default();
        let kernel_outcome = outcome(kernel_rc.trim() == "0", &kernel_err);
        let capture_rc = std::fs::read_to_string(dir.join(format!("{job}.capture_rc")));
        if capture_rc.as_deref().map(str::trim).ok() != Some("0") {
            let log = std::fs::read_to_string(dir.join("capture.log")).unwrap_or_default();
            differences.push(format!(
                "{}/{job}: the guest's usbmon capture failed (not a driver difference): {}",
                disk.results_dir,
                log.trim()
            ));
            continue;
        }
        let kernel = wire::view(
            &std::fs::read(dir.join(format!("{job}.pcap"))).unwrap(),
            512,
        );
        let pcap = work.join(format!("sim-{}-{job}.pcap", disk.results_dir));
        let target = format!("sim:{}", disk.stack);
        let mut args: Vec<String> = vec!["run".into(), "--target".into(), target];
        args.extend(flags.split_whitespace().map(str::to_owned));
        args.push("--pcap".into());
        args.push(pcap.display().to_string());
        let out = common::run_in(work, &args);
        let reproduce = format!("storlab {}", args.join(" "));
        let simulated_outcome = outcome(out.status.success(), &common::stderr(&out));
        if kernel_outcome != simulated_outcome {
            differences.push(format!(
                "{}/{job}: job outcome: Linux {kernel_outcome}, simulated {simulated_outcome} ({reproduce})",
                disk.results_dir
            ));
            continue;
        }
        // A job refused before any command (a discard on usb-storage) leaves no capture.
        let simulated = match std::fs::read(&pcap) {
            Ok(bytes) => wire::view(&bytes, 512),
            Err(_) => wire::DriverView::default(),
        };
        // How many commands are in flight depends on timing unless the job keeps more queued
        // than the driver allows: there both must reach the driver's limit; elsewhere Linux
        // (whose guest CPU is slow next to QEMU's device) may have fewer than the simulation.
        let saturated = flags.contains("--iodepth=32");
        for line in wire::differences(&kernel, &simulated, saturated) {
            differences.push(format!("{}/{job}: {line} ({reproduce})", disk.results_dir));
        }
    }
    differences
}

/// A job's outcome as both sides can state it: "ok", or the OS error it failed with (storlab's
/// one error line ends "(os error N)" for a real device and for the simulator alike).
fn outcome(succeeded: bool, stderr: &str) -> String {
    if succeeded {
        return "ok".into();
    }
    let error = stderr
        .lines()
        .find(|line| line.contains("error:"))
        .unwrap_or("no error line");
    match error.rfind("(os error ") {
        Some(at) => error[at..].to_owned(),
        None => error.to_owned(),
    }
}
