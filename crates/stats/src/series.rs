//! `IntervalSeries`: I/O count and bytes per fixed time interval (1 s by default), the raw
//! material for IOPS/bandwidth-over-time plots and for fio's `bw_min`/`iops_stddev` samples.

/// Default interval width: one second.
pub const DEFAULT_INTERVAL_NS: u64 = 1_000_000_000;

/// Upper bound on the number of intervals kept, so that a garbage timestamp cannot make the
/// series allocate without limit. At the default 1 s interval this is over 12 days; later
/// records are counted in the last interval (and in [`IntervalSeries::clamped_records`]).
pub const MAX_INTERVALS: usize = 1 << 20;

/// What happened in one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IntervalBin {
    /// Completed I/Os whose completion time fell in this interval.
    pub ios: u64,
    /// Bytes those I/Os transferred.
    pub bytes: u64,
}

/// Per-interval I/O and byte counts, indexed by `t_ns / interval_ns`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IntervalSeries {
    interval_ns: u64,
    bins: Vec<IntervalBin>,
    clamped_records: u64,
}

impl IntervalSeries {
    /// An empty series with intervals of `interval_ns` (0 means [`DEFAULT_INTERVAL_NS`]).
    pub fn new(interval_ns: u64) -> Self {
        let interval_ns = if interval_ns == 0 {
            DEFAULT_INTERVAL_NS
        } else {
            interval_ns
        };
        Self {
            interval_ns,
            bins: Vec::new(),
            clamped_records: 0,
        }
    }

    /// Like [`IntervalSeries::new`], with room reserved for `expected_duration_ns` so that
    /// recording never allocates during a run of that length.
    pub fn with_expected_duration(interval_ns: u64, expected_duration_ns: u64) -> Self {
        let mut series = Self::new(interval_ns);
        let expected_intervals = expected_duration_ns / series.interval_ns + 1;
        let reserved = usize::try_from(expected_intervals)
            .unwrap_or(MAX_INTERVALS)
            .min(MAX_INTERVALS);
        series.bins.reserve_exact(reserved);
        series
    }

    /// Counts one I/O of `bytes` completed `t_ns` after the measurement started. Amortised
    /// O(1); allocates only when the run reaches an interval beyond the reserved capacity.
    #[inline]
    pub fn record(&mut self, t_ns: u64, bytes: u64) {
        self.record_many(t_ns, 1, bytes);
    }

    /// Counts `ios` I/Os totalling `bytes` at `t_ns`.
    #[inline]
    pub fn record_many(&mut self, t_ns: u64, ios: u64, bytes: u64) {
        let mut index = usize::try_from(t_ns / self.interval_ns).unwrap_or(usize::MAX);
        if index >= MAX_INTERVALS {
            index = MAX_INTERVALS - 1;
            self.clamped_records += ios;
        }
        if index >= self.bins.len() {
            self.bins.resize(index + 1, IntervalBin::default());
        }
        let bin = &mut self.bins[index];
        bin.ios += ios;
        bin.bytes = bin.bytes.saturating_add(bytes);
    }

    /// One entry per interval from t = 0 up to the last interval that saw an I/O.
    pub fn bins(&self) -> &[IntervalBin] {
        &self.bins
    }

    /// Width of each interval.
    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }

    /// I/Os recorded past [`MAX_INTERVALS`] and folded into the last interval.
    pub fn clamped_records(&self) -> u64 {
        self.clamped_records
    }

    /// Adds `other` interval by interval. When the widths differ, each of `other`'s intervals
    /// is credited to the interval of ours that contains its start time.
    pub fn merge(&mut self, other: &IntervalSeries) {
        self.clamped_records += other.clamped_records;
        if other.interval_ns == self.interval_ns {
            if other.bins.len() > self.bins.len() {
                self.bins.resize(other.bins.len(), IntervalBin::default());
            }
            for (ours, theirs) in self.bins.iter_mut().zip(&other.bins) {
                ours.ios += theirs.ios;
                ours.bytes = ours.bytes.saturating_add(theirs.bytes);
            }
        } else {
            for (index, bin) in other.bins.iter().enumerate() {
                if bin.ios == 0 && bin.bytes == 0 {
                    continue;
                }
                let start_ns = (index as u64).saturating_mul(other.interval_ns);
                self.record_many(start_ns, bin.ios, bin.bytes);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn records_fall_into_their_interval() {
        let mut series = IntervalSeries::new(100 * MS);
        series.record(0, 4096);
        series.record(99 * MS, 4096);
        series.record(100 * MS, 512);
        series.record(350 * MS, 1);
        assert_eq!(
            series.bins(),
            &[
                IntervalBin {
                    ios: 2,
                    bytes: 8192
                },
                IntervalBin { ios: 1, bytes: 512 },
                IntervalBin::default(),
                IntervalBin { ios: 1, bytes: 1 },
            ]
        );
    }

    #[test]
    fn zero_interval_means_default() {
        assert_eq!(IntervalSeries::new(0).interval_ns(), DEFAULT_INTERVAL_NS);
    }

    #[test]
    fn absurd_timestamp_is_clamped_not_allocated() {
        let mut series = IntervalSeries::new(1);
        series.record(u64::MAX, 10);
        assert_eq!(series.bins().len(), MAX_INTERVALS);
        assert_eq!(series.clamped_records(), 1);
        assert_eq!(series.bins()[MAX_INTERVALS - 1].ios, 1);
    }

    #[test]
    fn reserved_series_does_not_reallocate_within_duration() {
        let mut series = IntervalSeries::with_expected_duration(MS, 50 * MS);
        let capacity = series.bins.capacity();
        for t_ms in 0..=50 {
            series.record(t_ms * MS, 1);
        }
        assert_eq!(series.bins.capacity(), capacity);
    }

    #[test]
    fn merge_same_width_adds_elementwise() {
        let mut a = IntervalSeries::new(MS);
        a.record(0, 1);
        let mut b = IntervalSeries::new(MS);
        b.record(0, 2);
        b.record(2 * MS, 3);
        a.merge(&b);
        assert_eq!(
            a.bins(),
            &[
                IntervalBin { ios: 2, bytes: 3 },
                IntervalBin::default(),
                IntervalBin { ios: 1, bytes: 3 },
            ]
        );
    }

    #[test]
    fn merge_different_width_rebins_by_start_time() {
        let mut coarse = IntervalSeries::new(10 * MS);
        let mut fine = IntervalSeries::new(MS);
        for t_ms in 0..25 {
            fine.record(t_ms * MS, 1);
        }
        coarse.merge(&fine);
        let ios: Vec<u64> = coarse.bins().iter().map(|bin| bin.ios).collect();
        assert_eq!(ios, vec![10, 10, 5]);
    }
}
