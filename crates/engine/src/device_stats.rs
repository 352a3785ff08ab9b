//! What the block device under a target actually read: the kernel's per-device I/O counters
//! (`/sys/dev/block/MAJ:MIN/stat`), sampled before and after a job, so a buffered read job can be
//! checked against the bytes the device delivered rather than guessed from its latency.
//!
//! The counters are the device's, not the job's: any other reader of the same device adds to
//! them, which can only make the device look busier than the job made it.

use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Unit of the sector counts in a block device's `stat` file: always 512 bytes, whatever the
/// device's own sector size (Linux `Documentation/block/stat.rst`).
const STAT_SECTOR_BYTES: u64 = 512;
/// Field of `stat` holding the sectors read, in today's format (`read I/Os`, `read merges`,
/// `read sectors`, ...; Documentation/block/stat.rst).
const STAT_FIELD_READ_SECTORS: usize = 2;
/// Old kernels gave a partition only four fields (`reads`, `read sectors`, `writes`, `write
/// sectors`; Documentation/ABI/testing/procfs-diskstats before Linux 4.19's common format).
const OLD_PARTITION_STAT_FIELDS: usize = 4;
/// Sectors read in that old four-field format.
const OLD_PARTITION_FIELD_READ_SECTORS: usize = 1;
/// Where the kernel lists block devices by number.
const SYS_DEV_BLOCK: &str = "/sys/dev/block";

/// The read counter of the block device that holds an open file (or is one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceReadCounter {
    /// The device's `stat` file.
    stat_path: PathBuf,
    /// The device's kernel name (`sda1`, `nvme0n1`, `dm-0`), for messages.
    pub device_name: String,
}

impl DeviceReadCounter {
    /// The counter of the device behind `file`: the device itself for a block device, else the
    /// device of the filesystem holding it (`st_dev`). A partition counts its own reads, or
    /// its disk's where the partition has no counters. `None` when no block device stands behind
    /// the file (tmpfs, overlayfs and network filesystems have anonymous device numbers), or
    /// `/sys` is not mounted.
    pub fn for_file(file: &File) -> Option<Self> {
        let meta = file.metadata().ok()?;
        let device = if meta.file_type().is_block_device() {
            meta.rdev()
        } else {
            meta.dev()
        };
        let (major, minor) = (libc::major(device), libc::minor(device));
        let entry = PathBuf::from(format!("{SYS_DEV_BLOCK}/{major}:{minor}"));
        // The entry links into /sys/devices/...: resolved, the parent of a partition is its disk.
        let resolved = std::fs::canonicalize(&entry).ok()?;
        let device_name = resolved.file_name()?.to_string_lossy().into_owned();
        [resolved.join("stat"), resolved.parent()?.join("stat")]
            .into_iter()
            .map(|stat_path| DeviceReadCounter {
                stat_path,
                device_name: device_name.clone(),
            })
            .find(|counter| counter.read_bytes().is_some())
    }

    /// Bytes the device has read since it appeared (a cumulative counter; take differences).
    pub fn read_bytes(&self) -> Option<u64> {
        let text = std::fs::read_to_string(&self.stat_path).ok()?;
        parse_read_sectors(&text).map(|sectors| sectors.saturating_mul(STAT_SECTOR_BYTES))
    }
}

/// The whole block device under `path` (the device itself, or the disk holding its
/// filesystem; for a file not created yet, its directory's): its kernel name and `stat` file,
/// as fio's `disk_util` reports a partition under its disk. `None` without a block device.
pub fn whole_disk_of(path: &Path) -> Option<(String, PathBuf)> {
    let parent = || path.parent().filter(|p| !p.as_os_str().is_empty());
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(_) => std::fs::metadata(parent()?).ok()?,
    };
    let device = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    let (major, minor) = (libc::major(device), libc::minor(device));
    let mut dir = std::fs::canonicalize(format!("{SYS_DEV_BLOCK}/{major}:{minor}")).ok()?;
    if dir.join("partition").exists() {
        // sysfs nests a partition under its disk.
        dir = dir.parent()?.to_path_buf();
    }
    let name = dir.file_name()?.to_string_lossy().into_owned();
    Some((name, dir.join("stat")))
}

/// The sectors read in the text of a `stat` file, in either of its formats.
fn parse_read_sectors(text: &str) -> Option<u64> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    let field = if fields.len() == OLD_PARTITION_STAT_FIELDS {
        OLD_PARTITION_FIELD_READ_SECTORS
    } else {
        STAT_FIELD_READ_SECTORS
    };
    fields.get(field)?.parse().ok()
}

/// A counter sampled when a job starts: what the device has read since.
#[derive(Clone, Debug)]
pub struct DeviceReadWindow {
    counter: DeviceReadCounter,
    start_bytes: u64,
}

impl DeviceReadWindow {
    /// Starts counting the reads of the device behind `file`, if there is one.
    pub fn start(file: &File) -> Option<Self> {
        let counter = DeviceReadCounter::for_file(file)?;
        let start_bytes = counter.read_bytes()?;
        Some(DeviceReadWindow {
            counter,
            start_bytes,
        })
    }

    /// The engine-report details of the window so far: the device's name and the bytes it read
    /// ([`DETAIL_DEVICE`], [`DETAIL_DEVICE_READ_BYTES`]).
    pub fn details(&self) -> Vec<(String, String)> {
        let read = self
            .counter
            .read_bytes()
            .map(|now| now.saturating_sub(self.start_bytes));
        let mut details = vec![(DETAIL_DEVICE.to_string(), self.counter.device_name.clone())];
        if let Some(read) = read {
            details.push((DETAIL_DEVICE_READ_BYTES.to_string(), read.to_string()));
        }
        details
    }
}

/// Engine-report key: the kernel name of the block device behind the target.
pub const DETAIL_DEVICE: &str = "device";
/// Engine-report key: bytes that device read while the engine ran (from setup to the report),
/// by anyone.
pub const DETAIL_DEVICE_READ_BYTES: &str = "device_read_bytes";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sectors_from_both_stat_formats() {
        let disk = "  120918    35121 11044138    55463   380441   330829 16262640  1027560        0   411716  1178540";
        assert_eq!(parse_read_sectors(disk), Some(11_044_138));
        let old_partition = "  1433  114674  8 64";
        assert_eq!(parse_read_sectors(old_partition), Some(114_674));
        assert_eq!(parse_read_sectors(""), None);
    }

    #[test]
    fn a_file_on_a_block_device_counts_that_devices_reads() {
        let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, vec![1u8; 1 << 20]).unwrap();
        let file = File::open(&path).unwrap();
        match DeviceReadCounter::for_file(&file) {
            Some(counter) => {
                assert!(!counter.device_name.is_empty());
                assert!(counter.read_bytes().is_some());
            }
            None => eprintln!(
                "skipped: no block device statistics behind {} (tmpfs, overlay or no /sys)",
                path.display()
            ),
        }
    }
}
