//! fio's `disk_util` for a run: the block devices under the run's targets and what their kernel
//! counters (`/sys/block/DEV/stat`, Documentation/block/stat.rst) moved while it ran.
//!
//! As in fio, the counters are the device's: any other I/O to the same device during the run
//! is counted too. A file's device is the one holding its filesystem (a partition counts as its
//! whole disk, as fio reports it); simulated targets and filesystems with no block device
//! (tmpfs, overlayfs) have none. A device-mapper or md device also gets fio's aggregate of the
//! devices beneath it (`/sys/block/DEV/slaves/*/stat`, diskutil.c), and each of those devices
//! is listed after it with its own counters, as fio lists them.

use std::path::{Path, PathBuf};
use std::time::Instant;
use storlab_job::{JobSet, Target};
use storlab_report::{DiskUtil, SlavesAggregate};

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
    /// The devices beneath it (dm, md): each one's `stat` file and its counters at the start.
    slaves: Vec<(PathBuf, Vec<u64>)>,
}

/// The `stat` files of the devices in `disk_dir/slaves/` (sysfs links there for a dm or md
/// device), sorted by name; empty for a plain disk.
fn slave_stat_paths(disk_dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(disk_dir.join("slaves")) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| Some(entry.ok()?.path().join("stat")))
        .collect();
    paths.sort();
    paths
}

/// Samples `disk_dir`'s counters as device `name`, then its slaves' as devices of their own
/// (each once, by name), as fio's diskutil.c lists them: `disk_util_add` puts the device on
/// the list, then `find_add_disk_slaves` adds each slave after it, and their slaves in turn.
/// A slave that is a partition counts as its whole disk (fio's `__init_per_file_disk_util`).
fn add_device(devices: &mut Vec<Device>, name: String, disk_dir: &Path) {
    if devices.iter().any(|d| d.name == name) {
        return;
    }
    let stat_path = disk_dir.join("stat");
    let Some(start) = read_stat(&stat_path) else {
        return;
    };
    let slave_paths = slave_stat_paths(disk_dir);
    let slaves = slave_paths
        .iter()
        .filter_map(|path| Some((path.clone(), read_stat(path)?)))
        .collect();
    devices.push(Device {
        name,
        stat_path,
        start,
        slaves,
    });
    for slave_stat in slave_paths {
        let Some(slave_dir) = slave_stat
            .parent()
            .and_then(|link| std::fs::canonicalize(link).ok())
        else {
            continue;
        };
        let whole_disk = match slave_dir.parent() {
            Some(parent) if parent.join("queue").is_dir() => parent.to_path_buf(),
            _ => slave_dir,
        };
        let Some(slave_name) = whole_disk.file_name() else {
            continue;
        };
        add_device(
            devices,
            slave_name.to_string_lossy().into_owned(),
            &whole_disk,
        );
    }
}

/// Each counter's change between `start` and `now` (the counters only grow; a reset reads 0).
fn deltas(start: &[u64], now: &[u64]) -> Vec<u64> {
    start
        .iter()
        .zip(now)
        .map(|(start, now)| now.saturating_sub(*start))
        .collect()
}

/// fio's busy share: 100 × `io_ticks` over the elapsed ms, at most 100 (diskutil.c).
fn util_percent(io_ticks_ms: u64, elapsed_ms: f64) -> f64 {
    if elapsed_ms > 0.0 {
        (PERCENT * io_ticks_ms as f64 / elapsed_ms).min(PERCENT)
    } else {
        0.0
    }
}

/// fio's aggregate of a device's slaves from each slave's counter changes (diskutil.c,
/// `aggregate_slaves_stats`, and stat.c's integer division by the slave count); `None` without
/// slaves.
fn aggregate_slaves(slave_deltas: &[Vec<u64>], elapsed_ms: f64) -> Option<SlavesAggregate> {
    let count = slave_deltas.len() as u64;
    if count == 0 {
        return None;
    }
    let mean = |field: usize| slave_deltas.iter().map(|d| d[field]).sum::<u64>() / count;
    let busiest = slave_deltas
        .iter()
        .map(|d| util_percent(d[FIELD_IO_TICKS_MS], elapsed_ms))
        .fold(0.0, f64::max);
    Some(SlavesAggregate {
        read_ios: mean(FIELD_READ_IOS),
        write_ios: mean(FIELD_WRITE_IOS),
        read_merges: mean(FIELD_READ_MERGES),
        write_merges: mean(FIELD_WRITE_MERGES),
        read_ticks_ms: mean(FIELD_READ_TICKS_MS),
        write_ticks_ms: mean(FIELD_WRITE_TICKS_MS),
        in_queue_ms: mean(FIELD_TIME_IN_QUEUE_MS),
        util_percent: busiest,
    })
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
            if let Some(disk_dir) = stat_path.parent() {
                add_device(&mut devices, name, disk_dir);
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
                // A slave that vanished during the run (dm table reload) drops out, as fio
                // only aggregates the slaves it can read.
                let slave_deltas: Vec<Vec<u64>> = device
                    .slaves
                    .iter()
                    .filter_map(|(path, start)| Some(deltas(start, &read_stat(path)?)))
                    .collect();
                Some(DiskUtil {
                    name: device.name.clone(),
                    read_ios: delta(FIELD_READ_IOS),
                    write_ios: delta(FIELD_WRITE_IOS),
                    read_merges: delta(FIELD_READ_MERGES),
                    write_merges: delta(FIELD_WRITE_MERGES),
                    read_ticks_ms: delta(FIELD_READ_TICKS_MS),
                    write_ticks_ms: delta(FIELD_WRITE_TICKS_MS),
                    in_queue_ms: delta(FIELD_TIME_IN_QUEUE_MS),
                    util_percent: util_percent(delta(FIELD_IO_TICKS_MS), elapsed_ms),
                    slaves: aggregate_slaves(&slave_deltas, elapsed_ms),
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

    /// A `stat` line with the given counters in the fields fio reads (the rest 0).
    fn stat_line(
        ios: [u64; 2],
        merges: [u64; 2],
        ticks_ms: [u64; 2],
        busy_queue: [u64; 2],
    ) -> String {
        let mut fields = [0u64; STAT_FIELDS_NEEDED];
        fields[FIELD_READ_IOS] = ios[0];
        fields[FIELD_WRITE_IOS] = ios[1];
        fields[FIELD_READ_MERGES] = merges[0];
        fields[FIELD_WRITE_MERGES] = merges[1];
        fields[FIELD_READ_TICKS_MS] = ticks_ms[0];
        fields[FIELD_WRITE_TICKS_MS] = ticks_ms[1];
        fields[FIELD_IO_TICKS_MS] = busy_queue[0];
        fields[FIELD_TIME_IN_QUEUE_MS] = busy_queue[1];
        let text: Vec<String> = fields.iter().map(u64::to_string).collect();
        format!("{}\n", text.join(" "))
    }

    /// fio lists a dm device, then each device beneath it with its own counters, each once:
    /// a fixture tree of `dm-1` over `dm-0` and `loop7`, `dm-0` over `loop7` too, and
    /// `loop7`'s partition slave of another dm device counting as `loop7`.
    #[test]
    fn the_devices_beneath_a_dm_device_are_listed_after_it() {
        let root = tempfile::tempdir().unwrap();
        let stat = stat_line([1, 2], [0, 0], [3, 4], [5, 6]);
        for disk in ["dm-1", "dm-0", "loop7", "dm-2"] {
            std::fs::create_dir_all(root.path().join(disk).join("slaves")).unwrap();
            std::fs::write(root.path().join(disk).join("stat"), &stat).unwrap();
        }
        std::fs::create_dir_all(root.path().join("loop7/queue")).unwrap();
        std::fs::create_dir_all(root.path().join("loop7/loop7p1")).unwrap();
        std::fs::write(root.path().join("loop7/loop7p1/stat"), &stat).unwrap();
        let link = |disk: &str, slave: &str, to: &str| {
            std::os::unix::fs::symlink(
                root.path().join(to),
                root.path().join(disk).join("slaves").join(slave),
            )
            .unwrap();
        };
        link("dm-1", "dm-0", "dm-0");
        link("dm-1", "loop7", "loop7");
        link("dm-0", "loop7", "loop7");
        link("dm-2", "loop7p1", "loop7/loop7p1");
        let mut devices = Vec::new();
        add_device(&mut devices, "dm-1".into(), &root.path().join("dm-1"));
        let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["dm-1", "dm-0", "loop7"]);
        assert_eq!(devices[0].slaves.len(), 2);
        assert!(devices[2].slaves.is_empty());
        let mut devices = Vec::new();
        add_device(&mut devices, "dm-2".into(), &root.path().join("dm-2"));
        let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["dm-2", "loop7"]);
    }

    /// A dm device's fixture sysfs directory (`dm-0/stat`, `dm-0/slaves/{sda,sdb}/stat`): its
    /// slaves are found, and their changes are aggregated as fio's diskutil.c does.
    #[test]
    fn a_dm_devices_slaves_are_aggregated_as_fio_does() {
        let root = tempfile::tempdir().unwrap();
        let disk = root.path().join("dm-0");
        for slave in ["sdb", "sda"] {
            std::fs::create_dir_all(disk.join("slaves").join(slave)).unwrap();
        }
        std::fs::write(disk.join("stat"), stat_line([1, 2], [0, 0], [3, 4], [5, 6])).unwrap();
        let paths = slave_stat_paths(&disk);
        assert_eq!(
            paths,
            vec![disk.join("slaves/sda/stat"), disk.join("slaves/sdb/stat")]
        );
        let start = stat_line([100, 200], [1, 2], [10, 20], [50, 60]);
        let end_a = stat_line([110, 230], [2, 5], [15, 40], [450, 90]);
        let end_b = stat_line([105, 200], [1, 2], [12, 20], [150, 61]);
        let parse = |text: &str| -> Vec<u64> {
            text.split_whitespace()
                .map(|f| f.parse().unwrap())
                .collect()
        };
        for (path, end) in paths.iter().zip([&end_a, &end_b]) {
            std::fs::write(path, &start).unwrap();
            assert_eq!(read_stat(path), Some(parse(&start)));
            std::fs::write(path, end).unwrap();
        }
        let slave_deltas: Vec<Vec<u64>> = paths
            .iter()
            .map(|path| deltas(&parse(&start), &read_stat(path).unwrap()))
            .collect();
        let aggregate = aggregate_slaves(&slave_deltas, 1000.0).unwrap();
        // Sums over the two slaves (10+5, 30+0, 1+0, 3+0, 5+2, 20+0, 30+1), halved with fio's
        // integer division.
        let halves: [u64; 7] = [7, 15, 0, 1, 3, 10, 15];
        assert_eq!(
            [
                aggregate.read_ios,
                aggregate.write_ios,
                aggregate.read_merges,
                aggregate.write_merges,
                aggregate.read_ticks_ms,
                aggregate.write_ticks_ms,
                aggregate.in_queue_ms
            ],
            halves
        );
        // The busiest slave: 400 ms busy of 1000 (the other 100 ms).
        assert_eq!(aggregate.util_percent, 40.0);
        assert_eq!(aggregate_slaves(&[], 1000.0), None);
        assert!(slave_stat_paths(root.path()).is_empty());
    }
}
