//! Refuses to write to (or trim) a block device that holds something: any signature libblkid
//! knows (filesystems, swap, RAID and volume-manager members, LUKS, bcache, partition tables,
//! including those kept at the end of the device), partitions, a mount or a holder, unless the
//! user named exactly that device with `--destructive`. Every check runs on the descriptor the
//! I/O will use (`target` opens it once), never on the path a second time: a path can be
//! pointed elsewhere between a check and an open. See docs/decisions/0009-device-guard-libblkid.md.

use crate::EngineError;
use libblkid_rs_sys as blkid;
use std::ffi::CStr;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

const MOUNTINFO_PATH: &str = "/proc/self/mountinfo";
const SYSFS_DEV_BLOCK: &str = "/sys/dev/block";

/// A block device's number as (major, minor).
pub type DeviceNumber = (u32, u32);

/// The (major, minor) of a `st_rdev`.
pub fn device_number(rdev: u64) -> DeviceNumber {
    (libc::major(rdev), libc::minor(rdev))
}

/// Return `Ok` when writing through `file` (opened from `path`) cannot destroy anything we can
/// see, or when `destructive` names the very device `file` is open on (compared by device
/// number, so `/dev/disk/by-id/...` links work and a path that now points elsewhere does not).
/// Otherwise a `Refused` error listing every finding and how to override.
pub fn check_writable(
    file: &File,
    path: &Path,
    destructive: Option<&Path>,
) -> Result<(), EngineError> {
    let metadata = file.metadata().map_err(|source| EngineError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    if let Some(allowed) = destructive {
        if metadata.file_type().is_block_device() && names_device(allowed, metadata.rdev()) {
            return Ok(());
        }
    }
    let findings = findings(file, path)?;
    if findings.is_empty() {
        Ok(())
    } else {
        Err(EngineError::Refused {
            path: path.to_path_buf(),
            reason: findings.join("; "),
        })
    }
}

/// Every reason not to write through `file` (empty: it looks blank and unused): its signatures,
/// and for a block device its partitions, mounts and holders, found by the device number of
/// the open descriptor. `path` only names it in the findings.
pub fn findings(file: &File, path: &Path) -> Result<Vec<String>, EngineError> {
    let open_error = |source: io::Error| EngineError::Open {
        path: path.to_path_buf(),
        source,
    };
    let metadata = file.metadata().map_err(open_error)?;
    let mut findings = signature_findings(file).map_err(open_error)?;
    if !metadata.file_type().is_block_device() {
        return Ok(findings);
    }
    let device = device_number(metadata.rdev());

    let partitions = partitions_of(&sysfs_dir(device));
    if !partitions.is_empty() {
        let names: Vec<&str> = partitions.iter().map(|p| p.name.as_str()).collect();
        findings.push(format!("it has partitions ({})", names.join(", ")));
    }

    let mountinfo = fs::read_to_string(MOUNTINFO_PATH).unwrap_or_default();
    let mounted = mounts(&mountinfo);
    let ours = std::iter::once((device, path.display().to_string()))
        .chain(partitions.iter().map(|p| (p.device, p.name.clone())));
    let mut holders = Vec::new();
    for (dev, name) in ours {
        for (mounted_dev, mount_point) in &mounted {
            if *mounted_dev == dev {
                findings.push(format!(
                    "{name} ({}:{}) is mounted on {mount_point}",
                    dev.0, dev.1
                ));
            }
        }
        for holder in list_dir(&sysfs_dir(dev).join("holders")) {
            holders.push(format!("{name} is held by {holder}"));
        }
    }
    if !holders.is_empty() {
        findings.push(format!(
            "it is in use by another block device ({})",
            holders.join(", ")
        ));
    }
    Ok(findings)
}

/// Every signature libblkid finds through `file` (a block device or an image file), as
/// `wipefs` lists them: each superblock its probers recognise, checksum-damaged ones included
/// (a damaged filesystem still holds data), and the partition table, each with the byte offset
/// of its magic.
pub fn signature_findings(file: &File) -> io::Result<Vec<String>> {
    let mut probe = Probe::on(file)?;
    let mut findings = Vec::new();
    while probe.next()? {
        if let Some(table) = probe.value(c"PTTYPE") {
            let offset = probe.value(c"PTMAGIC_OFFSET").unwrap_or_default();
            findings.push(format!("partition table {table} (magic at byte {offset})"));
        } else if let Some(kind) = probe.value(c"TYPE") {
            let offset = probe.value(c"SBMAGIC_OFFSET").unwrap_or_default();
            let what = match probe.value(c"USAGE").as_deref() {
                Some("filesystem") => "filesystem",
                Some("raid") => "RAID/volume-manager member",
                Some("crypto") => "encrypted volume",
                _ => "signature",
            };
            findings.push(format!("{what} {kind} (magic at byte {offset})"));
        }
    }
    Ok(findings)
}

/// A libblkid probe on one open descriptor (libblkid only reads through it, never closes it).
struct Probe(blkid::blkid_probe);

impl Probe {
    fn on(file: &File) -> io::Result<Probe> {
        // SAFETY: no arguments; a null result is handled below.
        let raw = unsafe { blkid::blkid_new_probe() };
        if raw.is_null() {
            return Err(libblkid_error("blkid_new_probe"));
        }
        let probe = Probe(raw);
        // Offset 0 and size 0: the whole file or device.
        // SAFETY: `probe.0` is a live probe; the fd stays open for the probe's lifetime
        // (`file` outlives `probe` in every caller: the probe never leaves this module).
        let rc = unsafe { blkid::blkid_probe_set_device(probe.0, file.as_raw_fd(), 0, 0) };
        check(rc, "blkid_probe_set_device")?;
        // wipefs's settings: every superblock with its type, usage and magic offset, including
        // ones whose checksum fails; partition tables with their magic offset, and GPT even
        // without a protective MBR.
        let superblock_flags = blkid::BLKID_SUBLKS_TYPE
            | blkid::BLKID_SUBLKS_USAGE
            | blkid::BLKID_SUBLKS_MAGIC
            | blkid::BLKID_SUBLKS_BADCSUM;
        let partition_flags = blkid::BLKID_PARTS_MAGIC | blkid::BLKID_PARTS_FORCE_GPT;
        // SAFETY: `probe.0` is a live probe; the flags are libblkid's own constants.
        unsafe {
            check(
                blkid::blkid_probe_enable_superblocks(probe.0, 1),
                "blkid_probe_enable_superblocks",
            )?;
            check(
                blkid::blkid_probe_set_superblocks_flags(probe.0, superblock_flags as libc::c_int),
                "blkid_probe_set_superblocks_flags",
            )?;
            check(
                blkid::blkid_probe_enable_partitions(probe.0, 1),
                "blkid_probe_enable_partitions",
            )?;
            check(
                blkid::blkid_probe_set_partitions_flags(probe.0, partition_flags as libc::c_int),
                "blkid_probe_set_partitions_flags",
            )?;
        }
        Ok(probe)
    }

    /// Advance to the next signature: `false` when there is none left.
    fn next(&mut self) -> io::Result<bool> {
        // SAFETY: `self.0` is a live probe with a device set.
        match unsafe { blkid::blkid_do_probe(self.0) } {
            0 => Ok(true),
            1 => Ok(false),
            _ => Err(libblkid_error("blkid_do_probe")),
        }
    }

    /// A value of the current signature (`TYPE`, `USAGE`, `SBMAGIC_OFFSET`, ...).
    fn value(&self, name: &CStr) -> Option<String> {
        let mut data: *const libc::c_char = std::ptr::null();
        // SAFETY: `self.0` is a live probe, `name` is NUL-terminated, and libblkid stores a
        // pointer to a NUL-terminated string it owns in `data` (valid until the next probe
        // step; copied out before then). The length output is optional (null).
        let rc = unsafe {
            blkid::blkid_probe_lookup_value(self.0, name.as_ptr(), &mut data, std::ptr::null_mut())
        };
        if rc != 0 || data.is_null() {
            return None;
        }
        // SAFETY: non-null, NUL-terminated, owned by the probe and alive during this call.
        let value = unsafe { CStr::from_ptr(data) };
        Some(value.to_string_lossy().into_owned())
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        // SAFETY: `self.0` came from blkid_new_probe and is freed exactly once.
        unsafe { blkid::blkid_free_probe(self.0) }
    }
}

fn check(rc: libc::c_int, what: &str) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(libblkid_error(what))
    }
}

fn libblkid_error(what: &str) -> io::Error {
    let errno = io::Error::last_os_error();
    io::Error::other(format!(
        "libblkid could not probe it for signatures ({what} failed: {errno})"
    ))
}

fn sysfs_dir(device: DeviceNumber) -> PathBuf {
    PathBuf::from(format!("{SYSFS_DEV_BLOCK}/{}:{}", device.0, device.1))
}

/// Whether `named` (as given to `--destructive`) is the block device with number `rdev`.
fn names_device(named: &Path, rdev: u64) -> bool {
    fs::metadata(named).is_ok_and(|m| m.file_type().is_block_device() && m.rdev() == rdev)
}

/// (major, minor) → mount point for every mount in a `/proc/self/mountinfo` text.
pub fn mounts(mountinfo: &str) -> Vec<(DeviceNumber, String)> {
    mountinfo
        .lines()
        .filter_map(|line| {
            // Fields: mount ID, parent ID, major:minor, root, mount point, ...
            let mut fields = line.split_whitespace();
            let dev = fields.nth(2)?;
            let mount_point = fields.nth(1)?;
            let (major, minor) = dev.split_once(':')?;
            Some((
                (major.parse().ok()?, minor.parse().ok()?),
                mount_point.to_string(),
            ))
        })
        .collect()
}

struct Partition {
    name: String,
    device: DeviceNumber,
}

/// Partitions of the disk whose sysfs directory is `disk_dir`: subdirectories that contain a
/// `partition` file; their `dev` file holds "MAJ:MIN".
fn partitions_of(disk_dir: &Path) -> Vec<Partition> {
    list_dir(disk_dir)
        .into_iter()
        .filter_map(|name| {
            let dir = disk_dir.join(&name);
            if !dir.join("partition").exists() {
                return None;
            }
            let dev = fs::read_to_string(dir.join("dev")).ok()?;
            let (major, minor) = dev.trim().split_once(':')?;
            Some(Partition {
                name,
                device: (major.parse().ok()?, minor.parse().ok()?),
            })
        })
        .collect()
}

fn list_dir(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_parse() {
        let text = "22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
                    30 22 7:3 / /mnt/x rw - ext4 /dev/loop3 rw\n\
                    garbage\n";
        assert_eq!(
            mounts(text),
            vec![((253, 0), "/".to_string()), ((7, 3), "/mnt/x".to_string())]
        );
    }
}
