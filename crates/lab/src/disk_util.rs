//! fio's `disk_util` for a run: the block devices under the run's targets and what their kernel
//! counters (`/sys/block/DEV/stat`, Documentation/block/stat.rst) moved while it ran.
//!
//! As in fio, the counters are the device's: any other I/O to the same device during the run
//! is counted too. A file's device is the one holding its filesystem (a partition counts as its
//! whole disk, as fio reports it); simulated targets and filesystems with no block device
//! (tmpfs, overlayfs) have none.

use std::path::{Path, PathBuf};
use std::time::Instant;
use storlab_job::{JobSet, Target};
use storlab_report::DiskUtil;

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
            let Some((name, stat_path)) = storlab_engine::device_stats::whole_disk_of(path) else {
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
