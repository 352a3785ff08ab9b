//! The result model: what one storlab run produced, with everything needed to reproduce it.
//! Filled by the runner/CLI from plain data and merged `WorkerStats`; serialized by `json.rs`.

use serde::{Deserialize, Serialize};
use storlab_stats::{
    DepthCounts, DirectionStats, DirectionSummary, LatencySummary, WorkerStats,
    FIO_DEFAULT_PERCENTILES, MAX_INTERVALS,
};

/// Version of the native JSON schema; bump on any incompatible change (see docs/json-output.md).
pub const SCHEMA_VERSION: u32 = 1;

const NS_PER_S: f64 = 1e9;
const PERCENT: f64 = 100.0;

/// A whole run: one or more jobs on one host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// The program that produced the report.
    pub tool: ToolInfo,
    /// Wall-clock start of the run, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    /// The machine the run happened on.
    pub host: HostInfo,
    /// One entry per job, in run order.
    pub jobs: Vec<JobReport>,
    /// Run-level warnings (methodology problems, suspicious results).
    pub warnings: Vec<String>,
    /// What the block devices under the run's targets did while it ran (fio's `disk_util`);
    /// empty for simulated targets and targets with no block device (tmpfs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disk_util: Vec<DiskUtil>,
    /// What putting the targets in their device state took (`--state`, a preset's state,
    /// preconditioning, `--trim-between-steps`), apart from the jobs measured after it; empty
    /// when nothing was prepared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preparation: Vec<StatePreparation>,
}

/// One block device's counters over a run, as fio's `disk_util` entries give them: the
/// differences of `/sys/block/DEV/stat` between the run's start and end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskUtil {
    /// Kernel name of the device (`sda`, `nvme0n1`, `loop3`).
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    /// Milliseconds reads spent in the device's queue, summed over reads.
    pub read_ticks_ms: u64,
    pub write_ticks_ms: u64,
    /// Weighted milliseconds of I/O in flight (`time_in_queue`).
    pub in_queue_ms: u64,
    /// Share of the run the device was busy (`io_ticks` over the wall time), percent, at most 100.
    pub util_percent: f64,
    /// The devices beneath a device-mapper or md device (`slaves/`), aggregated as fio's
    /// diskutil.c does; absent for a device without any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slaves: Option<SlavesAggregate>,
}

/// What the devices beneath a dm or md device did over a run, as fio's `aggr_*` keys give it
/// (diskutil.c, `aggregate_slaves_stats`): each counter is the slaves' sum divided by their
/// number (a mean, in whole units as fio's integer division gives it); `util_percent` is the
/// busiest slave's, since the stack is as busy as its busiest part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlavesAggregate {
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks_ms: u64,
    pub write_ticks_ms: u64,
    pub in_queue_ms: u64,
    pub util_percent: f64,
}

impl RunReport {
    /// An empty report at the current schema version.
    pub fn new(tool: ToolInfo, started_unix_ms: u64, host: HostInfo) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            tool,
            started_unix_ms,
            host,
            jobs: Vec::new(),
            warnings: Vec::new(),
            disk_util: Vec::new(),
            preparation: Vec::new(),
        }
    }
}

pub use storlab_stats::StatePreparation;

/// Name and version of the producing program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// Program name, `storlab`.
    pub name: String,
    /// Program version (semver).
    pub version: String,
}

impl ToolInfo {
    /// This build of storlab.
    pub fn storlab() -> Self {
        Self {
            name: "storlab".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// The host a run happened on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// Logical CPUs available to the process.
    pub cpus: u32,
}

impl HostInfo {
    /// Reads the host name and kernel release from `/proc` (empty when unavailable, e.g. not
    /// Linux) and the CPU count from the scheduler affinity.
    pub fn detect() -> Self {
        let read_proc = |path: &str| {
            std::fs::read_to_string(path)
                .map(|text| text.trim().to_owned())
                .unwrap_or_default()
        };
        Self {
            hostname: read_proc("/proc/sys/kernel/hostname"),
            kernel: read_proc("/proc/sys/kernel/osrelease"),
            cpus: std::thread::available_parallelism()
                .map(|count| u32::try_from(count.get()).unwrap_or(u32::MAX))
                .unwrap_or(1),
        }
    }
}

/// What a job ran against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetInfo {
    /// Human-readable target: a path, a device, or a simulated stack name.
    pub description: String,
    /// `file`, `block`, `sim` or `none`.
    pub kind: String,
    /// Size of the region the job used.
    pub size_bytes: u64,
    /// What `storlab probe` found for a real file or block device target (its JSON, schema in
    /// docs/probe.md: mount, driver chain, USB link and bridge, PCIe link, queue limits,
    /// diagnosis); absent for simulated targets and for reports written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<serde_json::Value>,
}

/// Result of one job (all its workers merged): what ran ([`JobSetup`]), its figures, and what
/// was noted beside them ([`JobNotes`]).
///
/// The two groups are flattened: the JSON has one flat object per job, each group's keys where
/// they always were (setup first, notes after the figures), so reports written before the split
/// and after it are the same bytes and read back alike.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobReport {
    /// What ran, where and how.
    #[serde(flatten)]
    pub setup: JobSetup,
    /// Reads, if any were issued.
    pub read: Option<DirectionSummary>,
    /// Writes, if any were issued.
    pub write: Option<DirectionSummary>,
    /// Trims, if any were issued.
    pub trim: Option<DirectionSummary>,
    /// The directions summed as one, as fio's `mixed` direction, for a job that set fio's
    /// `unified_rw_reporting` to `mixed` or `both` (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mixed: Option<DirectionSummary>,
    /// How long the syncs took (fio's `sync` latency: `fsync`, `fdatasync`, `end_fsync`...),
    /// if any ran in the measured window (absent in runs without syncs and in runs saved
    /// before they were measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<LatencySummary>,
    /// The `fsync`s among the syncs (fio's `sync` `total_ios`, which leaves `fdatasync` out).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fsyncs: u64,
    /// The `fdatasync`s among the syncs, counted as fio 3.33 counts them (into the reads'
    /// `short_ios` of its reports: `WorkerStats::fdatasyncs`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fdatasyncs: u64,
    /// Rates per interval over the measured window.
    pub series: Vec<SeriesPoint>,
    /// CPU the workers used.
    pub cpu: CpuReport,
    /// Measured window (after ramp).
    pub elapsed_ns: u64,
    /// Warnings, engine facts and the simulator's report.
    #[serde(flatten)]
    pub notes: JobNotes,
    /// Queue depth at each I/O's queueing and I/Os per submit and per reap, counted as fio
    /// counts them (absent in runs saved before they were kept).
    #[serde(default, skip_serializing_if = "DepthCounts::is_empty")]
    pub depth: DepthCounts,
    /// A multi-client run's clients (MPI ranks), each with its own figures; the job's
    /// figures above are then their aggregate (docs/distributed.md). Absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankRow>,
    /// errno of the first failed I/O the job went on past (`continue_on_error`; the count is
    /// each direction's `errors`). Absent when none failed.
    #[serde(default, skip_serializing_if = "is_no_errno")]
    pub first_error: i32,
    /// errno that ended the job (fio's job `error`): EILSEQ (84) when verify read back other
    /// data than was written; the figures cover what ran until then. Absent for a job that
    /// ended normally.
    #[serde(default, skip_serializing_if = "is_no_errno")]
    pub error: i32,
    /// The queue depth fio's `latency_target` search settled on (fio's `latency_depth`).
    /// Absent when the job did not search.
    #[serde(default, skip_serializing_if = "is_no_depth")]
    pub latency_depth: u32,
    /// Where the write rate fell and stayed lower (the `write-cliff` preset names them;
    /// `cliff.rs`). Absent for jobs nobody asked it of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_cliffs: Option<crate::cliff::WriteCliffs>,
    /// The verdict on a probed real target's path (docs/probe.md, "The verdict"): the measured
    /// rate against each ceiling of the path, the one that binds, and the what-if command on
    /// the closest simulated stack. Absent for simulated targets, paths with no ceiling, and
    /// reports written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_verdict: Option<serde_json::Value>,
}

fn is_no_depth(depth: &u32) -> bool {
    *depth == 0
}

fn is_no_errno(errno: &i32) -> bool {
    *errno == 0
}

/// One client's own figures for a job of a multi-client run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankRow {
    /// The client's MPI rank.
    pub rank: u32,
    /// The host it ran on.
    pub host: String,
    /// Its measured window.
    pub elapsed_ns: u64,
    /// Its reads, if any were issued.
    pub read: Option<DirectionSummary>,
    /// Its writes, if any were issued.
    pub write: Option<DirectionSummary>,
    /// Its trims, if any were issued.
    pub trim: Option<DirectionSummary>,
}

impl RankRow {
    /// The row of client `rank` on `host` from its merged worker statistics.
    pub fn new(rank: u32, host: String, stats: &WorkerStats) -> Self {
        let summarise = |direction: &DirectionStats| {
            (!direction.is_empty())
                .then(|| DirectionSummary::from_stats(direction, stats.elapsed_ns))
        };
        Self {
            rank,
            host,
            elapsed_ns: stats.elapsed_ns,
            read: summarise(&stats.read),
            write: summarise(&stats.write),
            trim: summarise(&stats.trim),
        }
    }

    /// The directions that ran, as (`"read"|"write"|"trim"`, summary).
    pub fn directions(&self) -> impl Iterator<Item = (&'static str, &DirectionSummary)> {
        [
            ("read", self.read.as_ref()),
            ("write", self.write.as_ref()),
            ("trim", self.trim.as_ref()),
        ]
        .into_iter()
        .filter_map(|(name, summary)| summary.map(|summary| (name, summary)))
    }
}

/// What a job was: its specification and the conditions it ran in, everything needed to run it
/// again. Known before the job starts; the measurement does not change it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSetup {
    /// Job name.
    pub name: String,
    /// The full job specification as JSON, for reproduction.
    pub job: serde_json::Value,
    /// Engine that ran the job (`null`, `psync`, `io_uring`, `sim`).
    pub engine: String,
    /// What the job ran against.
    pub target: TargetInfo,
    /// Device state before the job (`as-found`, `fresh-trimmed`, `seq-filled`, ...).
    pub device_state: String,
    /// Data written (`random`, `zeros`, `compressible:50`, ...).
    pub data_pattern: String,
    /// Offset alignment of every I/O.
    pub align_bytes: u64,
    /// Seed of the offset and data generators.
    pub seed: u64,
    /// Outstanding I/Os per worker.
    pub iodepth: u32,
    /// Workers.
    pub numjobs: u32,
    /// Access pattern (`read`, `randwrite`, `randrw:70`, ...).
    pub rw: String,
    /// Block size, as the user wrote it (`4KiB`, `4k:50,64k:50`, ...).
    pub block_size: String,
}

/// What was noted about a job beside its figures, by the run and by the engine.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JobNotes {
    /// Job-level warnings.
    pub warnings: Vec<String>,
    /// Engine facts worth keeping (queue sizes, flags, kernel features), as key/value pairs.
    pub engine_details: Vec<(String, String)>,
    /// Simulator facts (full stack profile, device-side statistics) for simulated targets.
    pub sim: Option<serde_json::Value>,
}

impl JobReport {
    /// Builds the report of one job from what ran, what was noted and its merged worker
    /// statistics.
    pub fn new(setup: JobSetup, notes: JobNotes, stats: &WorkerStats) -> Self {
        let elapsed_ns = stats.elapsed_ns;
        // fio's default percentiles, which storlab's own outputs read (p50, p99...), and the
        // job's `percentile_list`, which the fio-shaped outputs print.
        let mut percentiles = FIO_DEFAULT_PERCENTILES.to_vec();
        percentiles.extend(crate::fio_keys::percentile_list(&setup.job));
        percentiles.sort_by(f64::total_cmp);
        percentiles.dedup();
        let summarise = |direction: &DirectionStats| {
            (!direction.is_empty())
                .then(|| DirectionSummary::from_stats_at(direction, elapsed_ns, &percentiles))
        };
        let unified = setup.job["fio_report"]["unified_rw_reporting"]
            .as_str()
            .is_some_and(|unified| unified != "none");
        let ran: Vec<&DirectionStats> = [&stats.read, &stats.write, &stats.trim]
            .into_iter()
            .filter(|direction| !direction.is_empty())
            .collect();
        let mixed = (unified && !ran.is_empty())
            .then(|| DirectionSummary::mixed(&ran, elapsed_ns, &percentiles));
        Self {
            read: summarise(&stats.read),
            write: summarise(&stats.write),
            trim: summarise(&stats.trim),
            mixed,
            sync: (stats.sync.count() > 0)
                .then(|| LatencySummary::from_histogram(&stats.sync, &percentiles)),
            setup,
            fsyncs: stats.fsyncs,
            fdatasyncs: stats.fdatasyncs,
            series: SeriesPoint::from_stats(stats),
            cpu: CpuReport::from_stats(stats),
            elapsed_ns,
            notes,
            depth: stats.depth.clone(),
            ranks: Vec::new(),
            first_error: stats.first_error_errno,
            error: 0,
            latency_depth: stats.latency_depth,
            write_cliffs: None,
            path_verdict: None,
        }
    }

    /// The directions that ran, as (`"read"|"write"|"trim"`, summary).
    pub fn directions(&self) -> impl Iterator<Item = (&'static str, &DirectionSummary)> {
        [
            ("read", self.read.as_ref()),
            ("write", self.write.as_ref()),
            ("trim", self.trim.as_ref()),
        ]
        .into_iter()
        .filter_map(|(name, summary)| summary.map(|summary| (name, summary)))
    }

    /// Completed I/Os over all directions.
    pub fn total_ios(&self) -> u64 {
        self.directions().map(|(_, summary)| summary.ios).sum()
    }
}

/// Rates in one interval of the measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// End of the interval, seconds since the measurement started.
    pub t_s: f64,
    /// Read I/Os per second in the interval.
    pub read_iops: f64,
    /// Read bytes per second in the interval.
    pub read_bw_bytes_per_s: f64,
    /// Write I/Os per second in the interval.
    pub write_iops: f64,
    /// Write bytes per second in the interval.
    pub write_bw_bytes_per_s: f64,
    /// Trim I/Os per second in the interval.
    pub trim_iops: f64,
    /// Trimmed bytes per second in the interval.
    pub trim_bw_bytes_per_s: f64,
}

impl SeriesPoint {
    /// One point per interval of the merged series. The last interval is usually cut short by
    /// the end of the window; its rates are divided by the part that was measured, so a
    /// half-length last interval does not show half the throughput.
    pub fn from_stats(stats: &WorkerStats) -> Vec<SeriesPoint> {
        let interval_ns = stats.read.series.interval_ns();
        let directions = [&stats.read, &stats.write, &stats.trim];
        // Capped like the series itself, so a corrupt elapsed time cannot explode the report.
        let measured_intervals = stats
            .elapsed_ns
            .div_ceil(interval_ns)
            .min(MAX_INTERVALS as u64);
        let recorded_intervals = directions
            .iter()
            .map(|direction| direction.series.bins().len() as u64)
            .max()
            .unwrap_or(0);
        (0..measured_intervals.max(recorded_intervals))
            .map(|index| {
                let start_ns = index * interval_ns;
                let end_ns = (start_ns + interval_ns).min(stats.elapsed_ns.max(start_ns));
                let duration_ns = if end_ns > start_ns {
                    end_ns - start_ns
                } else {
                    interval_ns
                };
                let end_ns = start_ns + duration_ns;
                let duration_s = duration_ns as f64 / NS_PER_S;
                let rates = |direction: &DirectionStats| {
                    let bin = usize::try_from(index)
                        .ok()
                        .and_then(|index| direction.series.bins().get(index))
                        .copied()
                        .unwrap_or_default();
                    (bin.ios as f64 / duration_s, bin.bytes as f64 / duration_s)
                };
                let (read_iops, read_bw_bytes_per_s) = rates(&stats.read);
                let (write_iops, write_bw_bytes_per_s) = rates(&stats.write);
                let (trim_iops, trim_bw_bytes_per_s) = rates(&stats.trim);
                SeriesPoint {
                    t_s: end_ns as f64 / NS_PER_S,
                    read_iops,
                    read_bw_bytes_per_s,
                    write_iops,
                    write_bw_bytes_per_s,
                    trim_iops,
                    trim_bw_bytes_per_s,
                }
            })
            .collect()
    }
}

/// CPU the job's workers consumed during the measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuReport {
    /// User time as a percentage of the window; summed over workers, so it can exceed 100.
    pub user_percent: f64,
    /// System time as a percentage of the window; summed over workers.
    pub system_percent: f64,
    /// User time, summed over workers.
    pub user_ns: u64,
    /// System time, summed over workers.
    pub system_ns: u64,
    /// (user + system) / completed I/Os: the tool's CPU cost per I/O; 0 without I/Os.
    pub cpu_ns_per_io: f64,
    /// Context switches, summed over workers.
    pub context_switches: u64,
    /// Minor page faults, summed over workers.
    pub minor_faults: u64,
    /// Major page faults, summed over workers.
    pub major_faults: u64,
}

impl CpuReport {
    /// CPU figures of merged worker statistics.
    pub fn from_stats(stats: &WorkerStats) -> Self {
        let percent_of_window = |time_ns: u64| {
            if stats.elapsed_ns == 0 {
                0.0
            } else {
                time_ns as f64 / stats.elapsed_ns as f64 * PERCENT
            }
        };
        let total_ios = stats.total_ios();
        Self {
            user_percent: percent_of_window(stats.cpu.user_ns),
            system_percent: percent_of_window(stats.cpu.system_ns),
            user_ns: stats.cpu.user_ns,
            system_ns: stats.cpu.system_ns,
            cpu_ns_per_io: if total_ios == 0 {
                0.0
            } else {
                stats.cpu.total_ns() as f64 / total_ios as f64
            },
            context_switches: stats.context_switches,
            minor_faults: stats.minor_faults,
            major_faults: stats.major_faults,
        }
    }
}

/// serde's `skip_serializing_if` for counts left out when zero.
fn is_zero(value: &u64) -> bool {
    *value == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_stats::CpuTime;

    const MS: u64 = 1_000_000;

    fn setup() -> JobSetup {
        JobSetup {
            name: "j".into(),
            job: serde_json::json!({}),
            engine: "null".into(),
            target: TargetInfo {
                description: "none".into(),
                kind: "none".into(),
                size_bytes: 0,
                path: None,
            },
            device_state: "as-found".into(),
            data_pattern: "random".into(),
            align_bytes: 4096,
            seed: 1,
            iodepth: 1,
            numjobs: 1,
            rw: "read".into(),
            block_size: "4KiB".into(),
        }
    }

    #[test]
    fn only_directions_that_ran_are_reported() {
        let mut stats = WorkerStats::new(100 * MS);
        stats.elapsed_ns = 250 * MS;
        stats.read.record(0, 4096, 0, 1_000);
        stats.trim.record_error();
        let report = JobReport::new(setup(), JobNotes::default(), &stats);
        assert!(report.read.is_some());
        assert!(report.write.is_none());
        assert_eq!(report.trim.as_ref().map(|t| t.errors), Some(1));
        assert_eq!(report.total_ios(), 1);
    }

    #[test]
    fn series_divides_partial_last_interval_by_its_length() {
        let mut stats = WorkerStats::new(100 * MS);
        stats.elapsed_ns = 250 * MS;
        for t_ms in 0..250 {
            stats.write.record(t_ms * MS, 1_000, 0, 1_000);
        }
        let series = SeriesPoint::from_stats(&stats);
        assert_eq!(series.len(), 3);
        assert!((series[2].t_s - 0.25).abs() < 1e-12);
        for point in &series {
            assert!((point.write_iops - 1_000.0).abs() < 1e-6, "{point:?}");
            assert!((point.write_bw_bytes_per_s - 1e6).abs() < 1e-3);
        }
    }

    #[test]
    fn cpu_percent_and_cost_per_io() {
        let mut stats = WorkerStats::new(0);
        stats.elapsed_ns = 2_000 * MS;
        stats.cpu = CpuTime {
            user_ns: 500 * MS,
            system_ns: 1_500 * MS,
        };
        for _ in 0..1_000 {
            stats.read.record(0, 1, 0, 1);
        }
        let cpu = CpuReport::from_stats(&stats);
        assert!((cpu.user_percent - 25.0).abs() < 1e-9);
        assert!((cpu.system_percent - 75.0).abs() < 1e-9);
        assert!((cpu.cpu_ns_per_io - 2_000_000.0).abs() < 1e-6);
    }
}
