//! `DirectionStats` and `WorkerStats`: what one worker accumulates per direction during a run,
//! recorded on the hot path without allocation or locks, merged across workers afterwards.

use crate::cpu::CpuTime;
use crate::histogram::LatencyHistogram;
use crate::series::IntervalSeries;

/// Everything measured for one direction (read, write or trim) of one worker. Serializable so
/// a multi-client run can gather its clients' statistics and merge them exactly.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct DirectionStats {
    /// Completed I/Os.
    pub ios: u64,
    /// Bytes transferred by completed I/Os.
    pub bytes: u64,
    /// Submission latency: from creating the I/O to the engine accepting it.
    pub slat: LatencyHistogram,
    /// Completion latency: from submission to completion.
    pub clat: LatencyHistogram,
    /// Total latency, `slat + clat`.
    pub lat: LatencyHistogram,
    /// Completions per interval since the measurement started.
    pub series: IntervalSeries,
    /// I/Os that completed with an error (not counted in `ios`/`bytes`/latencies).
    pub errors: u64,
    /// Reads that completed but read back a bad block, passed by `continue_on_error=verify`:
    /// counted in `ios` (fio counts the read) and in fio's `total_err` beside `errors`.
    #[serde(default, skip_serializing_if = "crate::summary::is_zero_count")]
    pub verify_errors: u64,
    /// Latencies per I/O priority, for a job whose I/Os carry several (fio's cmdprio family:
    /// fio's `clat_prio` array); empty otherwise. In fio's order: the job's own priority
    /// first, then each cmdprio gives as its rule lists them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_priority: Vec<PriorityLatency>,
}

/// The latencies of the I/Os of one direction that carried one I/O priority.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PriorityLatency {
    /// The priority (linux/ioprio.h value: `class << 13 | level`).
    pub ioprio: u16,
    /// Completion latency.
    pub clat: LatencyHistogram,
}

impl PriorityLatency {
    /// No sample yet for `ioprio`.
    pub fn new(ioprio: u16) -> Self {
        PriorityLatency {
            ioprio,
            clat: LatencyHistogram::new(),
        }
    }
}

impl DirectionStats {
    /// Empty statistics with series intervals of `interval_ns` (0 = 1 s).
    pub fn new(interval_ns: u64) -> Self {
        Self {
            ios: 0,
            bytes: 0,
            slat: LatencyHistogram::new(),
            clat: LatencyHistogram::new(),
            lat: LatencyHistogram::new(),
            series: IntervalSeries::new(interval_ns),
            errors: 0,
            verify_errors: 0,
            by_priority: Vec::new(),
        }
    }

    /// Like [`DirectionStats::new`], with the series' room reserved for a run of
    /// `expected_duration_ns`, so that recording never allocates during such a run.
    pub fn with_expected_duration(interval_ns: u64, expected_duration_ns: u64) -> Self {
        Self {
            series: IntervalSeries::with_expected_duration(interval_ns, expected_duration_ns),
            ..Self::new(interval_ns)
        }
    }

    /// Records one successful I/O of `bytes` completing `t_ns` after the measurement start.
    #[inline]
    pub fn record(&mut self, t_ns: u64, bytes: u64, slat_ns: u64, clat_ns: u64) {
        self.slat.record(slat_ns);
        self.record_without_slat(t_ns, bytes, slat_ns, clat_ns);
    }

    /// [`DirectionStats::record`] for an I/O that has no submission latency of its own (an
    /// engine that did it inside its submit call): its completion and total latencies are
    /// recorded, the time before submission (`before_submit_ns`) counted in the total only.
    #[inline]
    pub fn record_without_slat(
        &mut self,
        t_ns: u64,
        bytes: u64,
        before_submit_ns: u64,
        clat_ns: u64,
    ) {
        self.ios += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        self.clat.record(clat_ns);
        self.lat.record(before_submit_ns.saturating_add(clat_ns));
        self.series.record(t_ns, bytes);
    }

    /// Records the completion latency of an I/O that carried `ioprio` (besides [`record`]), in
    /// a job that tracks its priorities (`by_priority` listed them up front; a priority not
    /// listed is added at the end, as fio's `alloc_or_get_clat_prio_index` adds it).
    ///
    /// [`record`]: DirectionStats::record
    #[inline]
    pub fn record_priority(&mut self, ioprio: u16, clat_ns: u64) {
        match self.by_priority.iter_mut().find(|p| p.ioprio == ioprio) {
            Some(entry) => entry.clat.record(clat_ns),
            None => {
                let mut entry = PriorityLatency::new(ioprio);
                entry.clat.record(clat_ns);
                self.by_priority.push(entry);
            }
        }
    }

    /// Counts one failed I/O.
    #[inline]
    pub fn record_error(&mut self) {
        self.errors += 1;
    }

    /// Adds `other` as if its I/Os had been recorded here.
    pub fn merge(&mut self, other: &DirectionStats) {
        self.ios += other.ios;
        self.bytes = self.bytes.saturating_add(other.bytes);
        self.slat.merge(&other.slat);
        self.clat.merge(&other.clat);
        self.lat.merge(&other.lat);
        self.series.merge(&other.series);
        self.errors += other.errors;
        self.verify_errors += other.verify_errors;
        // fio's `sum_clat_prio_stats_src_multi_prio`: each priority adds into the entry of the
        // same priority, or a new one at the end.
        for theirs in &other.by_priority {
            match self
                .by_priority
                .iter_mut()
                .find(|p| p.ioprio == theirs.ioprio)
            {
                Some(ours) => ours.clat.merge(&theirs.clat),
                None => self.by_priority.push(theirs.clone()),
            }
        }
    }

    /// True when nothing, not even an error, was recorded.
    pub fn is_empty(&self) -> bool {
        self.ios == 0 && self.errors == 0
    }
}

/// Everything one worker measured; several workers merge into one job result.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct WorkerStats {
    /// Reads.
    pub read: DirectionStats,
    /// Writes.
    pub write: DirectionStats,
    /// Trims (discards).
    pub trim: DirectionStats,
    /// How long each sync (`fsync`/`fdatasync`, a drive's cache flush) took, as fio's `sync`
    /// latency: from the call to its return, with none of the worker's I/O outstanding.
    pub sync: LatencyHistogram,
    /// The `fsync`s among them: what fio 3.33 counts as its `sync` block's `total_ios`
    /// (ioengines.c, `td_io_queue`, counts `total_io_u[DDIR_SYNC]`; an `fdatasync`'s
    /// DDIR_DATASYNC falls past that array, so it is timed but never counted).
    #[serde(default)]
    pub fsyncs: u64,
    /// The `fdatasync`s among them, counted where fio 3.33 counts them: its `total_io_u`
    /// array has room for read, write, trim and sync, so DDIR_DATASYNC's count lands in the
    /// next field, `short_io_u[0]`, and fio reports it as the reads' `short_ios` (stat.h).
    #[serde(default)]
    pub fdatasyncs: u64,
    /// CPU time the worker spent during the measured window.
    pub cpu: CpuTime,
    /// Length of the measured window (after ramp).
    pub elapsed_ns: u64,
    /// Context switches during the measured window.
    pub context_switches: u64,
    /// Minor page faults during the measured window.
    pub minor_faults: u64,
    /// Major page faults during the measured window.
    pub major_faults: u64,
    /// Queue depths at queue time and batch sizes per submit and per reap (fio's
    /// `iodepth_level`, `iodepth_submit`, `iodepth_complete`).
    pub depth: crate::DepthCounts,
    /// errno of the first I/O error a job went on past (fio's `first_error` with
    /// `continue_on_error`); 0 when none. The count is each direction's `errors`.
    #[serde(default)]
    pub first_error_errno: i32,
    /// The queue depth fio's `latency_target` search settled on (fio's `latency_depth`); 0
    /// when the job did not search.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub latency_depth: u32,
}

fn is_zero(value: &u32) -> bool {
    *value == 0
}

impl WorkerStats {
    /// Empty statistics with series intervals of `interval_ns` (0 = 1 s).
    pub fn new(interval_ns: u64) -> Self {
        Self {
            read: DirectionStats::new(interval_ns),
            write: DirectionStats::new(interval_ns),
            trim: DirectionStats::new(interval_ns),
            sync: LatencyHistogram::new(),
            fsyncs: 0,
            fdatasyncs: 0,
            cpu: CpuTime::default(),
            elapsed_ns: 0,
            context_switches: 0,
            minor_faults: 0,
            major_faults: 0,
            depth: crate::DepthCounts::default(),
            first_error_errno: 0,
            latency_depth: 0,
        }
    }

    /// Like [`WorkerStats::new`], with every series reserved for a run of
    /// `expected_duration_ns` (see [`DirectionStats::with_expected_duration`]).
    pub fn with_expected_duration(interval_ns: u64, expected_duration_ns: u64) -> Self {
        Self {
            read: DirectionStats::with_expected_duration(interval_ns, expected_duration_ns),
            write: DirectionStats::with_expected_duration(interval_ns, expected_duration_ns),
            trim: DirectionStats::with_expected_duration(interval_ns, expected_duration_ns),
            ..Self::new(interval_ns)
        }
    }

    /// Combines workers that ran side by side: counts and CPU add up, the window is the
    /// longest worker's (they started together, so the job lasted as long as the slowest).
    pub fn merge(&mut self, other: &WorkerStats) {
        self.read.merge(&other.read);
        self.write.merge(&other.write);
        self.trim.merge(&other.trim);
        self.sync.merge(&other.sync);
        self.fsyncs += other.fsyncs;
        self.fdatasyncs += other.fdatasyncs;
        self.cpu = self.cpu + other.cpu;
        self.elapsed_ns = self.elapsed_ns.max(other.elapsed_ns);
        self.context_switches = self.context_switches.saturating_add(other.context_switches);
        self.minor_faults = self.minor_faults.saturating_add(other.minor_faults);
        self.major_faults = self.major_faults.saturating_add(other.major_faults);
        self.depth.merge(&other.depth);
        // Workers merge in worker order: the job's first error is its first worker's that had
        // one (workers run side by side, so there is no single order of their errors).
        if self.first_error_errno == 0 {
            self.first_error_errno = other.first_error_errno;
        }
        // Each clone searches on its own; the job reports the deepest it settled on.
        self.latency_depth = self.latency_depth.max(other.latency_depth);
    }

    /// Completed I/Os over all directions.
    pub fn total_ios(&self) -> u64 {
        self.read.ios + self.write.ios + self.trim.ios
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_sums_slat_and_clat_into_lat() {
        let mut stats = DirectionStats::new(0);
        stats.record(5, 4096, 100, 900);
        stats.record(7, 4096, 0, 2_000);
        assert_eq!(stats.ios, 2);
        assert_eq!(stats.bytes, 8192);
        assert_eq!(stats.lat.min_ns(), 1_000);
        assert_eq!(stats.lat.max_ns(), 2_000);
        assert_eq!(stats.slat.max_ns(), 100);
        assert_eq!(stats.series.bins()[0].ios, 2);
    }

    #[test]
    fn worker_merge_takes_longest_window_and_sums_cpu() {
        let mut a = WorkerStats::new(0);
        a.elapsed_ns = 10;
        a.cpu = CpuTime {
            user_ns: 1,
            system_ns: 2,
        };
        a.context_switches = 3;
        a.read.record(0, 1, 1, 1);
        let mut b = WorkerStats::new(0);
        b.elapsed_ns = 20;
        b.cpu = CpuTime {
            user_ns: 10,
            system_ns: 20,
        };
        b.context_switches = 4;
        b.write.record(0, 1, 1, 1);
        b.write.record_error();
        a.merge(&b);
        assert_eq!(a.elapsed_ns, 20);
        assert_eq!(a.cpu.user_ns, 11);
        assert_eq!(a.cpu.system_ns, 22);
        assert_eq!(a.context_switches, 7);
        assert_eq!(a.total_ios(), 2);
        assert_eq!(a.write.errors, 1);
        assert!(a.trim.is_empty());
    }
}
