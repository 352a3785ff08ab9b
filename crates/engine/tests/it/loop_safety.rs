//! Block-device handling on loop devices this test sets up itself (root and losetup needed):
//! an ext4 device is refused for writing unless named with --destructive, a blank one is
//! accepted, and the engines do I/O, O_DIRECT and BLKDISCARD on it.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use storlab_engine::engines::io_uring::{IoUringEngine, IoUringOptions};
use storlab_engine::engines::psync::PsyncEngine;
use storlab_engine::target::{open_target, TargetKind};
use storlab_engine::{EngineError, IoDirection};
use storlab_job::Target;

const BACKING_BYTES: u64 = 64 << 20;

/// These tests run one at a time. An exclusive (O_EXCL) claim ends when the last reference to
/// the open file goes; a child another test thread forks holds copies of every descriptor
/// until it execs (O_CLOEXEC only closes them then), so a device closed a moment ago can still
/// be claimed, and a new exclusive open of it is refused as busy.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A loop device over a sparse file in a temp dir; detached on drop, even when a test panics.
struct LoopDevice {
    path: PathBuf,
    _backing_dir: tempfile::TempDir,
}

impl LoopDevice {
    /// `None` (with the skip message printed) when this machine cannot make loop devices.
    fn attach() -> Option<LoopDevice> {
        Self::attach_with(&[])
    }

    /// As `attach`, with extra `losetup` flags (`--partscan`).
    fn attach_with(flags: &[&str]) -> Option<LoopDevice> {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        if !tool_available(root, "loop device tests need root") {
            return None;
        }
        let losetup = Command::new("losetup").arg("--version").output();
        if !tool_available(
            losetup.is_ok_and(|o| o.status.success()) && Path::new("/dev/loop-control").exists(),
            "losetup or /dev/loop-control not available",
        ) {
            return None;
        }
        let backing_dir = tempfile::tempdir().unwrap();
        let backing = backing_dir.path().join("backing.img");
        std::fs::File::create(&backing)
            .unwrap()
            .set_len(BACKING_BYTES)
            .unwrap();
        let output = Command::new("losetup")
            .args(["--find", "--show"])
            .args(flags)
            .arg(&backing)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "losetup --find --show failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let path = PathBuf::from(String::from_utf8(output.stdout).unwrap().trim());
        Some(LoopDevice {
            path,
            _backing_dir: backing_dir,
        })
    }

    fn mkfs_ext4(&self) -> bool {
        let mkfs = Command::new("mkfs.ext4")
            .arg("-q")
            .arg("-F")
            .arg(&self.path)
            .output();
        match mkfs {
            Ok(output) if output.status.success() => true,
            Ok(output) => panic!(
                "mkfs.ext4 failed: {}",
                String::from_utf8_lossy(&output.stderr)
            ),
            Err(_) => tool_available(false, "mkfs.ext4 not available"),
        }
    }

    fn target(&self) -> Target {
        Target::Path(self.path.clone())
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.path).status();
    }
}

#[test]
fn ext4_device_is_refused_for_writes_unless_named_destructive() {
    let _serial = serial();
    let Some(device) = LoopDevice::attach() else {
        return;
    };
    if !device.mkfs_ext4() {
        return;
    }
    let err = open_target(&device.target(), 0, false, true, None).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, EngineError::Refused { .. }), "{text}");
    assert!(text.contains("ext4"), "{text}");
    assert!(
        text.contains(&format!("--destructive {}", device.path.display())),
        "{text}"
    );

    // Reading never destroys anything.
    let reader = open_target(&device.target(), 0, false, false, None).unwrap();
    assert_eq!(reader.kind, TargetKind::BlockDevice);
    // As fio opens every target that is not a regular file: reads leave the device node's
    // access time alone (no `touch_atime` per read).
    use std::os::fd::AsRawFd;
    // SAFETY: F_GETFL on an open descriptor takes no pointer.
    let flags = unsafe { libc::fcntl(reader.file.as_raw_fd(), libc::F_GETFL) };
    assert_ne!(flags & libc::O_NOATIME, 0, "flags {flags:#o}");

    // Naming another device does not unlock this one...
    let other = Path::new("/dev/loop-control");
    assert!(open_target(&device.target(), 0, false, true, Some(other)).is_err());
    // ...naming this one does, also through a symlink (compared after canonicalising).
    let link_dir = tempfile::tempdir().unwrap();
    let link = link_dir.path().join("by-id-style-link");
    std::os::unix::fs::symlink(&device.path, &link).unwrap();
    let writer = open_target(&device.target(), 0, false, true, Some(&link)).unwrap();
    assert_eq!(writer.size_bytes, BACKING_BYTES);
}

#[test]
fn blank_device_is_accepted_and_engines_move_data_on_it() {
    let _serial = serial();
    let Some(device) = LoopDevice::attach() else {
        return;
    };
    let target = open_target(&device.target(), 0, false, true, None).unwrap();
    assert_eq!(target.kind, TargetKind::BlockDevice);
    assert_eq!(target.size_bytes, BACKING_BYTES);
    assert!(target.logical_block_bytes.is_power_of_two() && target.logical_block_bytes >= 512);
    write_then_read_back(
        &mut PsyncEngine::new(&target).unwrap(),
        4,
        BACKING_BYTES,
        200,
        1,
    );

    // The writer holds the device exclusively: a second opening by path is refused as busy,
    // a reopening of its descriptor (another O_DIRECT setting) is not.
    let busy = open_target(&device.target(), BACKING_BYTES, true, true, None).unwrap_err();
    assert!(busy.to_string().contains("is in use"), "{busy}");
    let direct = target.reopen_device(true).unwrap();
    assert_eq!(direct.device, target.device);
    let mut engine = IoUringEngine::new(&direct, IoUringOptions::default()).unwrap();
    write_then_read_back(&mut engine, 32, BACKING_BYTES, 400, 2);

    // fio's `sync=1` on the claimed device: a reopening of the checked descriptor with O_SYNC
    // (never by path, which is busy), whose writes an engine accepts as synchronous.
    let synced = direct
        .reopen_synchronous(storlab_engine::FlushKind::All)
        .unwrap();
    assert_eq!(synced.device, target.device);
    assert!(storlab_engine::target::writes_synchronously(
        &synced.file,
        storlab_engine::FlushKind::All
    )
    .unwrap());
    let mut engine = IoUringEngine::new(&synced, IoUringOptions::default()).unwrap();
    storlab_engine::IoEngine::set_sync_writes(&mut engine, Some(storlab_engine::FlushKind::All))
        .unwrap();
    write_then_read_back(&mut engine, 8, BACKING_BYTES, 64, 3);
    drop((engine, synced));

    // BLKDISCARD on the loop device punches a hole in its backing file: zeros come back.
    let mut engine = PsyncEngine::new(&direct).unwrap();
    setup(&mut engine, 1, BLOCK_BYTES);
    let written = Io {
        direction: IoDirection::Write,
        offset_bytes: 0,
        len_bytes: BLOCK_BYTES,
    };
    let ios = [
        written,
        Io {
            direction: IoDirection::Trim,
            len_bytes: 1 << 20,
            ..written
        },
        Io {
            direction: IoDirection::Read,
            ..written
        },
    ];
    drive(&mut engine, 1, &ios, 3, |io, completion, buf| {
        assert_eq!(completion.result, Ok(io.len_bytes), "{io:?}");
        if io.direction == IoDirection::Read {
            assert!(buf[..BLOCK_BYTES as usize].iter().all(|&b| b == 0));
        }
    });
}

#[test]
fn device_smaller_than_the_job_is_an_error_naming_both_sizes() {
    let _serial = serial();
    let Some(device) = LoopDevice::attach() else {
        return;
    };
    let needed = 2 * BACKING_BYTES;
    let err = open_target(&device.target(), needed, false, false, None).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, EngineError::TargetTooSmall { .. }), "{text}");
    assert!(
        text.contains(&BACKING_BYTES.to_string()) && text.contains(&needed.to_string()),
        "{text}"
    );
}

/// Unmounts on drop, so a failing assertion never leaves a mount behind.
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn mounted_device_is_refused_naming_the_mount_point() {
    let _serial = serial();
    let Some(device) = LoopDevice::attach() else {
        return;
    };
    if !device.mkfs_ext4() {
        return;
    }
    let mount_dir = tempfile::tempdir().unwrap();
    let mounted = Command::new("mount")
        .arg(&device.path)
        .arg(mount_dir.path())
        .status();
    if !tool_available(
        mounted.is_ok_and(|s| s.success()),
        "cannot mount a loop device here",
    ) {
        return;
    }
    let _mount = Mount(mount_dir.path().to_path_buf());
    let text = open_target(&device.target(), 0, false, true, None)
        .unwrap_err()
        .to_string();
    assert!(text.contains("is mounted on"), "{text}");
    assert!(
        text.contains(&*mount_dir.path().to_string_lossy()),
        "{text}"
    );
}

#[test]
fn partitioned_device_is_refused_naming_table_and_partitions() {
    let _serial = serial();
    let Some(device) = LoopDevice::attach_with(&["--partscan"]) else {
        return;
    };
    let sfdisk = Command::new("sfdisk")
        .arg("-q")
        .arg(&device.path)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let Ok(mut sfdisk) = sfdisk else {
        tool_available(false, "sfdisk not available");
        return;
    };
    use std::io::Write;
    sfdisk
        .stdin
        .take()
        .unwrap()
        .write_all(b"start=2048, size=20480, type=83\n")
        .unwrap();
    let output = sfdisk.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "sfdisk: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The kernel's own rescan after sfdisk does not always run (containers, sandboxes):
    // register the partition explicitly so the device really has one.
    let partx = Command::new("partx").arg("-u").arg(&device.path).status();
    if !tool_available(
        partx.is_ok_and(|s| s.success()),
        "partx -u failed or is missing",
    ) {
        return;
    }
    let text = open_target(&device.target(), 0, false, true, None)
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("partition table dos (magic at byte 510)"),
        "{text}"
    );
    let name = device
        .path
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        text.contains(&format!("it has partitions ({name}p1)")),
        "{text}"
    );
}

/// A symlink that another thread keeps pointing at one device, then another.
struct Flipper {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Flipper {
    fn start(link: PathBuf, targets: [PathBuf; 2]) -> Flipper {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let staging = link.with_extension("next");
            let mut i = 0;
            while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::fs::remove_file(&staging);
                std::os::unix::fs::symlink(&targets[i % 2], &staging).unwrap();
                // rename(2) replaces the link atomically: it always names one of the two.
                std::fs::rename(&staging, &link).unwrap();
                i += 1;
            }
        });
        Flipper {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Flipper {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The guard decides on the descriptor the I/O uses: with a symlink flipping between a blank
/// and an ext4 device, every opening that is allowed is an opening of the blank device (the
/// old guard checked the path and opened it again: 66 of 300 openings were the ext4 device).
#[test]
fn guard_decides_on_the_opened_device_while_the_path_flips() {
    let _serial = serial();
    let Some(blank) = LoopDevice::attach() else {
        return;
    };
    let Some(ext4) = LoopDevice::attach() else {
        return;
    };
    if !ext4.mkfs_ext4() {
        return;
    }
    use std::os::unix::fs::MetadataExt;
    let rdev = |path: &Path| {
        let rdev = std::fs::metadata(path).unwrap().rdev();
        Some((libc::major(rdev), libc::minor(rdev)))
    };
    let blank_device = rdev(&blank.path);
    let link_dir = tempfile::tempdir().unwrap();
    let link = link_dir.path().join("device");
    std::os::unix::fs::symlink(&blank.path, &link).unwrap();
    let flipper = Flipper::start(link.clone(), [blank.path.clone(), ext4.path.clone()]);
    let (mut allowed, mut refused) = (0, 0);
    for _ in 0..300 {
        match open_target(&Target::Path(link.clone()), 0, false, true, None) {
            Ok(target) => {
                allowed += 1;
                assert_eq!(target.device, blank_device, "opened the ext4 device");
                let opened = target.file.metadata().unwrap().rdev();
                assert_eq!(
                    Some((libc::major(opened), libc::minor(opened))),
                    blank_device
                );
            }
            Err(EngineError::Refused { reason, .. }) => {
                refused += 1;
                assert!(reason.contains("ext4"), "{reason}");
            }
            Err(other) => panic!("{other}"),
        }
    }
    drop(flipper);
    eprintln!("{allowed} openings allowed (all of the blank device), {refused} refused");
    assert!(allowed > 0 && refused > 0, "the link did not flip");
}

/// `--destructive` names a device by its number: a path to another device unlocks nothing.
#[test]
fn destructive_naming_another_device_does_not_unlock() {
    let _serial = serial();
    let Some(ext4) = LoopDevice::attach() else {
        return;
    };
    let Some(other) = LoopDevice::attach() else {
        return;
    };
    if !ext4.mkfs_ext4() {
        return;
    }
    let err = open_target(&ext4.target(), 0, false, true, Some(&other.path)).unwrap_err();
    assert!(matches!(err, EngineError::Refused { .. }), "{err}");
    assert!(open_target(&ext4.target(), 0, false, true, Some(&ext4.path)).is_ok());
}

/// LVM2 physical volume (pvcreate refuses files, so on a loop device).
#[test]
fn lvm2_physical_volume_is_refused() {
    let _serial = serial();
    let Some(device) = LoopDevice::attach() else {
        return;
    };
    let pvcreate = Command::new("pvcreate")
        .args(["-q", "-ff", "-y"])
        .arg(&device.path)
        .output();
    let Ok(output) = pvcreate else {
        tool_available(false, "pvcreate not installed (lvm2)");
        return;
    };
    assert!(
        output.status.success(),
        "pvcreate: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = open_target(&device.target(), 0, false, true, None)
        .unwrap_err()
        .to_string();
    // The label sits in sector 1; libblkid reports its "LVM2 001" type magic, 24 bytes in.
    assert!(
        text.contains("RAID/volume-manager member LVM2_member (magic at byte 536)"),
        "{text}"
    );
}
