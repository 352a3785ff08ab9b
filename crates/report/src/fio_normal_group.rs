//! The end of fio's human report: each group's `Run status group N (all jobs):` totals and the
//! `Disk stats (read/write):` counters (docs/decisions/0049), as fio 3.33 prints them after the
//! job blocks of [`crate::fio_normal`].

use std::fmt::Write as _;

use crate::fio::Placement;
use crate::fio_keys::{fio_directions, ReportKeys, Unified};
use crate::fio_units::{fio_runtime_ms, num2str, Unit, SIG_FIGS};
use crate::model::{DiskUtil, JobReport};

const MS_PER_S: u64 = 1_000;
/// fio's direction labels in the group totals, right-aligned as it prints them.
const DIRECTION_LABELS: [&str; 3] = ["   READ", "  WRITE", "   TRIM"];

/// One direction's totals over a group's reported jobs, as fio sums them: the bytes, the
/// shortest and longest runtime, the slowest and fastest job's bandwidth, and the group's
/// bandwidth (all bytes over the longest runtime).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct GroupDirection {
    pub bytes: u64,
    pub min_runtime_ms: u64,
    pub max_runtime_ms: u64,
    pub min_bytes_per_s: u64,
    pub max_bytes_per_s: u64,
    pub aggregate_bytes_per_s: u64,
}

/// A stonewall group's totals per direction (read, write, trim), and how fio prints them: its
/// last job's `significant_figures` and `unit_base` (fio's `rs` takes each job's in turn) and
/// every job's `unified_rw_reporting` (fio ORs them: `mixed` 1, `both` 2).
#[derive(Clone, Debug)]
pub(crate) struct GroupRun {
    pub groupid: usize,
    pub directions: [GroupDirection; 3],
    pub significant_figures: usize,
    pub unit_bits: bool,
    unified: u8,
}

impl Default for GroupRun {
    fn default() -> Self {
        GroupRun {
            groupid: 0,
            directions: Default::default(),
            significant_figures: SIG_FIGS,
            unit_bits: false,
            unified: 0,
        }
    }
}

/// fio's `UNIFIED_MIXED` and `UNIFIED_BOTH` (stat.h).
const UNIFIED_MIXED: u8 = 1;
const UNIFIED_BOTH: u8 = 2;

/// Every group's totals, indexed by group id (every id up to the last has an entry, as in
/// fio, whose groups are numbered without gaps).
pub(crate) fn group_runs(jobs: &[JobReport], placed: &[Placement]) -> Vec<GroupRun> {
    let count = placed
        .iter()
        .map(|place| place.groupid + 1)
        .max()
        .unwrap_or(0);
    let mut groups: Vec<GroupRun> = (0..count)
        .map(|groupid| GroupRun {
            groupid,
            ..GroupRun::default()
        })
        .collect();
    for (job, place) in jobs.iter().zip(placed) {
        let keys = ReportKeys::of(job);
        let group = &mut groups[place.groupid];
        group.significant_figures = keys.significant_figures;
        group.unit_bits = keys.unit_bits;
        group.unified |= match keys.unified {
            Unified::Split => 0,
            Unified::Mixed => UNIFIED_MIXED,
            Unified::Both => UNIFIED_BOTH,
        };
        for (total, summary) in group.directions.iter_mut().zip(fio_directions(job)) {
            let Some(summary) = summary else { continue };
            let runtime_ms = fio_runtime_ms(summary.runtime_ns);
            if runtime_ms == 0 {
                continue;
            }
            let bytes_per_s = summary.bytes * MS_PER_S / runtime_ms;
            let first = total.max_runtime_ms == 0;
            total.min_runtime_ms = match first {
                true => runtime_ms,
                false => total.min_runtime_ms.min(runtime_ms),
            };
            total.max_runtime_ms = total.max_runtime_ms.max(runtime_ms);
            total.min_bytes_per_s = match first {
                true => bytes_per_s,
                false => total.min_bytes_per_s.min(bytes_per_s),
            };
            total.max_bytes_per_s = total.max_bytes_per_s.max(bytes_per_s);
            total.bytes += summary.bytes;
        }
    }
    for direction in groups
        .iter_mut()
        .flat_map(|group| group.directions.iter_mut())
    {
        direction.aggregate_bytes_per_s = (direction.bytes * MS_PER_S)
            .checked_div(direction.max_runtime_ms)
            .unwrap_or(0);
    }
    groups
}

/// `Run status group 0 (all jobs):` and a line per direction that ran:
/// `   READ: bw=111MiB/s (117MB/s), 111MiB/s-111MiB/s (117MB/s-117MB/s), io=1024KiB (1049kB), run=9-9msec`.
pub(crate) fn group_stats(out: &mut String, group: &GroupRun) {
    let _ = writeln!(out, "\nRun status group {} (all jobs):", group.groupid);
    for (label, total) in DIRECTION_LABELS.iter().zip(&group.directions) {
        if total.max_runtime_ms == 0 {
            continue;
        }
        let label = if group.unified == UNIFIED_MIXED {
            "  MIXED"
        } else {
            label
        };
        group_line(out, group, label, total);
    }
    // fio's `show_mixed_group_stats`: the directions' sums, the slowest and fastest of them.
    if group.unified == UNIFIED_BOTH {
        let ran = group.directions.iter().filter(|d| d.max_runtime_ms > 0);
        let mixed = GroupDirection {
            bytes: ran.clone().map(|d| d.bytes).sum(),
            aggregate_bytes_per_s: ran.clone().map(|d| d.aggregate_bytes_per_s).sum(),
            min_bytes_per_s: ran
                .clone()
                .map(|d| d.min_bytes_per_s)
                .min()
                .unwrap_or(u64::MAX),
            max_bytes_per_s: ran.clone().map(|d| d.max_bytes_per_s).max().unwrap_or(0),
            min_runtime_ms: ran
                .clone()
                .map(|d| d.min_runtime_ms)
                .min()
                .unwrap_or(u64::MAX),
            max_runtime_ms: ran.map(|d| d.max_runtime_ms).max().unwrap_or(0),
        };
        group_line(out, group, "  MIXED", &mixed);
    }
}

/// `   READ: bw=..., io=..., run=...msec` in the group's figures and rate unit.
fn group_line(out: &mut String, group: &GroupRun, label: &str, total: &GroupDirection) {
    let figures = group.significant_figures;
    let both = |value: u64, unit: Unit| {
        (
            num2str(value, figures, true, unit),
            num2str(value, figures, false, unit),
        )
    };
    let rate = Unit::rate(group.unit_bits);
    let (aggregate, aggregate_si) = both(total.aggregate_bytes_per_s, rate);
    let (min, min_si) = both(total.min_bytes_per_s, rate);
    let (max, max_si) = both(total.max_bytes_per_s, rate);
    let (io, io_si) = both(total.bytes, Unit::Byte);
    let _ = writeln!(
        out,
        "{label}: bw={aggregate} ({aggregate_si}), {min}-{max} ({min_si}-{max_si}), \
         io={io} ({io_si}), run={}-{}msec",
        total.min_runtime_ms, total.max_runtime_ms
    );
}

/// `Disk stats (read/write):` and a line per block device under the run's targets (a dm or md
/// device adds its slaves' averages, indented as fio indents it); nothing when the run had no
/// block device (simulated targets, tmpfs).
pub(crate) fn disk_stats(out: &mut String, disks: &[DiskUtil]) {
    if disks.is_empty() {
        return;
    }
    out.push_str("\nDisk stats (read/write):\n");
    for disk in disks {
        let indent = if disk.slaves.is_some() { "    " } else { "  " };
        let _ = write!(
            out,
            "{indent}{}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:3.2}%",
            disk.name,
            disk.read_ios,
            disk.write_ios,
            disk.read_merges,
            disk.write_merges,
            disk.read_ticks_ms,
            disk.write_ticks_ms,
            disk.in_queue_ms,
            disk.util_percent
        );
        if let Some(slaves) = &disk.slaves {
            let _ = write!(
                out,
                ", aggrios={}/{}, aggrmerge={}/{}, aggrticks={}/{}, aggrin_queue={}, \
                 aggrutil={:3.2}%",
                slaves.read_ios,
                slaves.write_ios,
                slaves.read_merges,
                slaves.write_merges,
                slaves.read_ticks_ms,
                slaves.write_ticks_ms,
                slaves.in_queue_ms,
                slaves.util_percent
            );
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio 3.33's group line for two clones of a randrw job (1984 KiB read in 78 ms and
    /// 1944 KiB in 52 ms), from the sums fio makes of them.
    #[test]
    fn a_groups_line_is_fios() {
        let read = GroupDirection {
            bytes: (1984 + 1944) * 1024,
            min_runtime_ms: 52,
            max_runtime_ms: 78,
            min_bytes_per_s: 1984 * 1024 * 1000 / 78,
            max_bytes_per_s: 1944 * 1024 * 1000 / 52,
            aggregate_bytes_per_s: (1984 + 1944) * 1024 * 1000 / 78,
        };
        let group = GroupRun {
            groupid: 0,
            directions: [read, GroupDirection::default(), GroupDirection::default()],
            ..GroupRun::default()
        };
        let mut out = String::new();
        group_stats(&mut out, &group);
        assert_eq!(
            out,
            "\nRun status group 0 (all jobs):\n   READ: bw=49.2MiB/s (51.6MB/s), \
             24.8MiB/s-36.5MiB/s (26.0MB/s-38.3MB/s), io=3928KiB (4022kB), run=52-78msec\n"
        );
    }

    #[test]
    fn disks_print_as_fio_prints_them() {
        let mut out = String::new();
        disk_stats(&mut out, &[]);
        assert_eq!(out, "", "no block device, no block");
        let disk = DiskUtil {
            name: "vda".into(),
            read_ios: 229,
            write_ios: 1409,
            read_merges: 67,
            write_merges: 475,
            read_ticks_ms: 447,
            write_ticks_ms: 2507,
            in_queue_ms: 3002,
            util_percent: 43.3,
            slaves: None,
        };
        disk_stats(&mut out, &[disk]);
        assert_eq!(
            out,
            "\nDisk stats (read/write):\n  vda: ios=229/1409, merge=67/475, ticks=447/2507, \
             in_queue=3002, util=43.30%\n"
        );
    }
}
