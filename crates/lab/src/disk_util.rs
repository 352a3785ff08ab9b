//! fio's `disk_util` for a run: the block devices under the run's targets and what their kernel
//! counters (`/sys/block/DEV/stat`, Documentation/block/stat.rst) moved while it ran.
//!
//! As in fio, the counters are the device's: any other I/O to the same device during the run
//! is counted too. A file's device is the one holding its filesystem (a partition counts as its
//! whole disk, as fio reports it); simulated targets and filesystems with no block device
//! (tmpfs, overlayfs) have none.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Instant;
use storlab_job::{JobSet, Target};
use storlab_report::DiskUtil;

/// Where the kernel lists block devices by `MAJOR:MINOR`.
const SYS_DEV_BLOCK: &str = "/sys/dev/block";
/// Fields of a block device's `stat` file, in order (Documentation/block/stat.rst).
const FIELD_READ_IOS: usize = 0;
const FIELD_READ_MERGES: usize = 1;
const FIELD_READ_TICKS_MS: usize = 3;
const FIELD_WRITE_IOS: usize = 4;
const FIELD_WRITE_MERGES: usize = 5;
const FIELD_WRITE_TICKS_MS: usize = 7;
const FIELD_IO_TICKS_MS: usize = 9;
const FIELD_TIME_IN_QUEUE_MS: usize = 10;
/// Fields the counters above need.
const STAT_FIELDS_NEEDED: usize = FIELD_TIME_IN_QUEUE_MS + 1;
const PERCENT: f64 = 100.0;

/// Counters of one device at the start of the run.
struct Device {
    name: String,
    stat_path: PathBuf,
    start: Vec<u64>,
}

/// The devices under a job set, sampled when it starts.
pub struct DiskUtilWindow {
    devices: Vec<Device>,
    started: Instant,
}

impl DiskUtilWindow {
    /// Samples the counters of every block device under `set`'s targets (each once).
    pub fn start(set: &JobSet) -> Self {
        let mut devices: Vec<Device> = Vec::new();
        for job in &set.jobs {
            let path = match &job.target {
                Target::Path(path) | Target::TempFileIn(path) => path,
                Target::Sim(_) | Target::None => continue,
            };
            let Some((name, stat_path)) = device_of(path) else {
                continue;
            };
            if devices.iter().any(|d| d.stat_path == stat_path) {
                continue;
            }
            if let Some(start) = read_stat(&stat_path) {
                devices.push(Device {
                    name,
                    stat_path,
                    start,
                });
            }
        }
        DiskUtilWindow {
            devices,
            started: Instant::now(),
        }
    }

    /// What each device did since [`DiskUtilWindow::start`], in fio's `disk_util` terms.
    pub fn finish(&self) -> Vec<DiskUtil> {
        let elapsed_ms = self.started.elapsed().as_secs_f64() * 1e3;
        self.devices
            .iter()
            .filter_map(|device| {
                let now = read_stat(&device.stat_path)?;
                let delta = |field: usize| now[field].saturating_sub(device.start[field]);
                // fio: util = 100 * io_ticks / elapsed ms, capped at 100 (diskutil.c).
                let util_percent = if elapsed_ms > 0.0 {
                    (PERCENT * delta(FIELD_IO_TICKS_MS) as f64 / elapsed_ms).min(PERCENT)
                } else {
                    0.0
                };
                Some(DiskUtil {
                    name: device.name.clone(),
                    read_ios: delta(FIELD_READ_IOS),
                    write_ios: delta(FIELD_WRITE_IOS),
                    read_merges: delta(FIELD_READ_MERGES),
                    write_merges: delta(FIELD_WRITE_MERGES),
                    read_ticks_ms: delta(FIELD_READ_TICKS_MS),
                    write_ticks_ms: delta(FIELD_WRITE_TICKS_MS),
                    in_queue_ms: delta(FIELD_TIME_IN_QUEUE_MS),
                    util_percent,
                })
            })
            .collect()
    }
}

/// The whole block device under `path` (the device itself, or the one holding its filesystem;
/// for a file not created yet, its directory's): its kernel name and `stat` file.
fn device_of(path: &Path) -> Option<(String, PathBuf)> {
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
    let (major, minor) = split_dev(device);
    let mut dir = std::fs::canonicalize(format!("{SYS_DEV_BLOCK}/{major}:{minor}")).ok()?;
    if dir.join("partition").exists() {
        // sysfs nests a partition under its disk.
        dir = dir.parent()?.to_path_buf();
    }
    let name = dir.file_name()?.to_string_lossy().into_owned();
    Some((name, dir.join("stat")))
}

/// Linux's `dev_t` as (major, minor), as glibc's `gnu_dev_major`/`gnu_dev_minor` split it:
/// the major's low 12 bits at bit 8 and high bits at bit 32, the minor's low 8 bits at bit 0
/// and the rest at bit 12.
fn split_dev(device: u64) -> (u64, u64) {
    let major = ((device >> 32) & 0xffff_f000) | ((device >> 8) & 0x0000_0fff);
    let minor = ((device >> 12) & 0xffff_ff00) | (device & 0x0000_00ff);
    (major, minor)
}

fn read_stat(path: &Path) -> Option<Vec<u64>> {
    let text = std::fs::read_to_string(path).ok()?;
    let fields: Vec<u64> = text
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    (fields.len() >= STAT_FIELDS_NEEDED).then_some(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_t_splits_like_glibc() {
        // makedev(8, 1) and makedev(4097, 65537), as glibc encodes them.
        assert_eq!(split_dev(0x801), (8, 1));
        let (major, minor): (u64, u64) = (4097, 65537);
        let encoded = ((major & 0xfff) << 8)
            | ((major & !0xfff) << 32)
            | (minor & 0xff)
            | ((minor & !0xff) << 12);
        assert_eq!(split_dev(encoded), (major, minor));
    }

    #[test]
    fn simulated_targets_have_no_disk() {
        let mut set = JobSet { jobs: Vec::new() };
        set.jobs.push(storlab_job::JobSpec::new(
            "s",
            storlab_job::EngineKind::Sim,
            Target::Sim("usb3-uas-ssd".into()),
        ));
        assert!(DiskUtilWindow::start(&set).finish().is_empty());
    }
}
