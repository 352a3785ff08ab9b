//! The device guard through the binary, on loop devices this test sets up and tears down
//! itself (root, losetup and the mkfs tools needed; skipped with a message otherwise, failed
//! under CI): signatures the old guard missed (f2fs at the start, an md 0.90 superblock at the
//! end) are refused with exit 2 and one line, and written when `--destructive` names the device.

use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::process::{Command, Output};

use crate::common::LoopDevice;

const BACKING_BYTES: u64 = 64 << 20;

/// Linux md 0.90 superblock (the kernel's include/uapi/linux/raid/md_p.h): magic 0xa92b4efc,
/// native order (little-endian here), in the last 64 KiB-aligned 64 KiB of the device; minor
/// version 90 at byte 8, component size in KiB at byte 32.
const MD_SB_MAGIC: u32 = 0xa92b_4efc;
const MD_RESERVED_BYTES: u64 = 64 << 10;
const MD0_MINOR_VERSION_OFFSET: usize = 8;
const MD0_SIZE_KIB_OFFSET: usize = 32;
const MD0_MINOR_VERSION: u32 = 90;

fn storlab_write(dir: &Path, device: &Path, destructive: bool) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_storlab"));
    command
        .current_dir(dir)
        .env("STORLAB_DB", dir.join("results.sqlite"))
        .args(["run", "--rw=randwrite", "--ioengine=psync", "--no-db"])
        .arg(format!("--filename={}", device.display()))
        .args(["--size=1m", "--number_ios=10"]);
    if destructive {
        command.arg("--destructive").arg(device);
    }
    command.output().expect("storlab runs")
}

fn available(ok: bool, why: &str) -> bool {
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run the guard tests: {why}"
        );
        eprintln!("skipped: {why}");
    }
    ok
}

/// A loop device for these tests (`common::LoopDevice`), or None (skipped with a message, failed
/// under CI) without root or losetup.
fn attach_loop_device() -> Option<LoopDevice> {
    let ok = nix::unistd::geteuid().is_root()
        && Command::new("losetup").arg("--version").output().is_ok();
    if !available(ok, "needs root and losetup") {
        return None;
    }
    Some(LoopDevice::attach(BACKING_BYTES))
}

impl LoopDevice {
    /// Refused without --destructive (exit 2, one line naming the device, `expected` and the
    /// override), written with it.
    fn assert_guarded(&self, expected: &str) {
        let refused = storlab_write(self.dir.path(), &self.path, false);
        let text = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{text}");
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains(expected), "{text}");
        assert!(
            text.contains(&format!("--destructive {}", self.path.display())),
            "{text}"
        );
        let allowed = storlab_write(self.dir.path(), &self.path, true);
        assert!(
            allowed.status.success(),
            "{}",
            String::from_utf8_lossy(&allowed.stderr)
        );
    }
}

#[test]
fn f2fs_device_is_refused_unless_named_destructive() {
    let Some(device) = attach_loop_device() else {
        return;
    };
    let mkfs = Command::new("mkfs.f2fs")
        .args(["-q", "-f"])
        .arg(&device.path)
        .output();
    let Ok(mkfs) = mkfs else {
        available(false, "mkfs.f2fs not installed (f2fs-tools)");
        return;
    };
    assert!(
        mkfs.status.success(),
        "{}",
        String::from_utf8_lossy(&mkfs.stderr)
    );
    device.assert_guarded("filesystem f2fs");
}

#[test]
fn md_0_90_member_is_refused_unless_named_destructive() {
    let Some(device) = attach_loop_device() else {
        return;
    };
    // Byte-exact: mdadm cannot write a superblock without the kernel's md driver.
    let offset = (BACKING_BYTES & !(MD_RESERVED_BYTES - 1)) - MD_RESERVED_BYTES;
    let mut sb = vec![0u8; 4096];
    sb[..4].copy_from_slice(&MD_SB_MAGIC.to_le_bytes());
    sb[MD0_MINOR_VERSION_OFFSET..MD0_MINOR_VERSION_OFFSET + 4]
        .copy_from_slice(&MD0_MINOR_VERSION.to_le_bytes());
    sb[MD0_SIZE_KIB_OFFSET..MD0_SIZE_KIB_OFFSET + 4]
        .copy_from_slice(&((offset >> 10) as u32).to_le_bytes());
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&device.path)
        .unwrap();
    file.write_all_at(&sb, offset).unwrap();
    file.sync_all().unwrap();
    drop(file);
    device.assert_guarded(&format!(
        "RAID/volume-manager member linux_raid_member (magic at byte {offset})"
    ));
}

/// A device opened for writing is held exclusively for the whole run: two jobs that write it at
/// once with different O_DIRECT settings share that claim (the second is a reopening of the
/// checked descriptor) instead of being refused as busy by the kernel.
#[test]
fn two_jobs_write_one_claimed_device_with_different_direct_settings() {
    let Some(device) = attach_loop_device() else {
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_storlab"))
        .current_dir(device.dir.path())
        .args(["run", "--no-db", "--ioengine=psync", "--size=4m"])
        .arg(format!("--filename={}", device.path.display()))
        .args([
            "--name=buffered",
            "--rw=write",
            "--direct=0",
            "--number_ios=50",
        ])
        .args([
            "--name=direct",
            "--rw=randwrite",
            "--direct=1",
            "--number_ios=50",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// fio's example job files name devices this machine may not have (`filename=/dev/sdb`): such
/// a path is refused with one line and exit 2, never created as a regular file in devtmpfs and
/// measured as memory (storlab did that before issue 20's check of fio's examples, as fio
/// does). Needs no root: a missing name under /dev is refused before anything is opened.
#[test]
fn a_missing_device_under_dev_is_refused_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let missing = Path::new("/dev").join(format!("storlab-missing-{}", std::process::id()));
    assert!(!missing.exists(), "{} exists already", missing.display());
    for rw in ["--rw=read", "--rw=write"] {
        let out = Command::new(env!("CARGO_BIN_EXE_storlab"))
            .current_dir(dir.path())
            .args(["run", rw, "--no-db", "--size=1m", "--number_ios=4"])
            .arg(format!("--filename={}", missing.display()))
            .output()
            .expect("storlab runs");
        let created = missing.exists();
        if created {
            // Only a broken guard gets here; leave /dev as it was.
            std::fs::remove_file(&missing).unwrap();
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!created, "{rw} created {}: {stderr}", missing.display());
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("no such device: storlab creates no files under /dev"),
            "{stderr}"
        );
    }
    // A file system mounted below /dev is another device: files in /dev/shm (tmpfs) still run.
    let shm = Path::new("/dev/shm");
    let shm_is_own_mount = std::fs::metadata(shm)
        .and_then(|m| Ok(m.dev() != std::fs::metadata("/dev")?.dev()))
        .unwrap_or(false);
    if shm_is_own_mount {
        let file = shm.join(format!("storlab-guard-test-{}", std::process::id()));
        let out = Command::new(env!("CARGO_BIN_EXE_storlab"))
            .current_dir(dir.path())
            .args([
                "run",
                "--rw=write",
                "--no-db",
                "--size=64k",
                "--number_ios=4",
            ])
            .arg(format!("--filename={}", file.display()))
            .output()
            .expect("storlab runs");
        let _ = std::fs::remove_file(&file);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
