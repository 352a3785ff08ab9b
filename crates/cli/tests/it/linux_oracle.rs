//! The Linux kernel as an oracle (issue 35): Debian's Linux 6.1 booted under QEMU (TCG) with
//! QEMU's BOT and UAS devices on xHCI (SuperSpeed) and EHCI (High-Speed) runs `storlab probe`,
//! sg3-utils and a few jobs with usbmon recording; the test then compares probe's fields with
//! sysfs and sg3-utils' raw bytes, checks that probe sent only read-only commands, and compares
//! what the real uas and usb-storage drivers put on the wire (command sizes, commands in
//! flight, tags, IU order, status URB lengths, URB framing and flags) with the simulated
//! `linux-uas` and `linux-usb-storage` stacks running the same jobs (`jobs.rs`: fixed ones and
//! some generated from a seed). It also decodes the guest's own enumeration and sd's scan
//! against tshark (`enumeration.rs`) and runs the simulated stack probe's diagnosis names
//! (ADR 0035).
//!
//! It skips, with a message, only where QEMU or the kernel is missing; under `CI=true` it fails
//! instead (`.ci/run` installs qemu-system-x86, linux-image-amd64, busybox-static, sg3-utils).

mod enumeration;
mod guest;
mod jobs;
mod probe_check;
mod wire;

use crate::common;
use std::path::Path;

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
    let seed = jobs::seed();
    let jobs = jobs::all(seed);
    eprintln!(
        "linux_oracle: {} jobs per disk, generated ones from seed {seed} (STORLAB_ORACLE_SEED)",
        jobs.len()
    );
    let initramfs = guest::build_initramfs(work.path(), &kernel, &jobs);
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
    let mut differences = enumeration::check(&run.results);
    let mut compared = 0;
    for disk in DISK_STACKS {
        let dir = run.results.join(disk.results_dir);
        assert!(
            dir.is_dir(),
            "linux_oracle: the guest has no {} disk; console:\n{}",
            disk.results_dir,
            run.console
        );
        differences.extend(probe_check::compare(&dir, disk.results_dir));
        differences.extend(probe_check::closest_stack(
            &dir,
            disk.results_dir,
            work.path(),
        ));
        differences.extend(probe_check::verdict(&dir, disk.results_dir));
        differences.extend(compare_jobs(&dir, &disk, &jobs, work.path(), &mut compared));
    }
    eprintln!(
        "linux_oracle: {compared} quantities compared over {} disks x {} jobs, {} differences",
        DISK_STACKS.len(),
        jobs.len(),
        differences.len()
    );
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
/// `compared` counts the quantities compared (the job's outcome and each of
/// [`wire::differences`]'s).
fn compare_jobs(
    dir: &Path,
    disk: &DiskStack,
    jobs: &[jobs::Job],
    work: &Path,
    compared: &mut usize,
) -> Vec<String> {
    let mut differences = Vec::new();
    let queue_depth = guest_queue_depth(dir);
    for (job, flags) in jobs {
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
        // than the driver allows (the guest's sysfs device/queue_depth): there the simulated
        // driver must reach that limit and Linux never pass it; elsewhere Linux (whose guest
        // CPU is slow next to QEMU's device) may have fewer than the simulation.
        let binding_depth = jobs::binds_queue(flags, queue_depth, guest::DEVICE_BURST_IOS)
            .then_some(queue_depth as usize);
        eprintln!(
            "linux_oracle: {}/{job}: Linux {}",
            disk.results_dir,
            wire::summary(&kernel)
        );
        *compared += 1 + wire::compared_quantities(binding_depth);
        for line in wire::differences(&kernel, &simulated, binding_depth) {
            differences.push(format!("{}/{job}: {line} ({reproduce})", disk.results_dir));
        }
    }
    differences
}

/// The SCSI device's queue depth the guest's sysfs gave (init.sh's `sysfs` file).
fn guest_queue_depth(dir: &Path) -> u32 {
    std::fs::read_to_string(dir.join("sysfs"))
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("queue_depth "))
        .and_then(|depth| depth.trim().parse().ok())
        .expect("init.sh records device/queue_depth")
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
