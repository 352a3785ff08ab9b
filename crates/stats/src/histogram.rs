//! `LatencyHistogram`: an HDR histogram of nanosecond latencies plus exact min/max/mean/stddev.
//!
//! Recording is O(1), never allocates and never panics: the histogram is sized once at
//! construction for 1 ns .. 1 hour at 3 significant digits, and larger values are clamped into
//! the top bucket (their exact maximum is still kept). See `docs/decisions/0002-histograms.md`.

use hdrhistogram::Histogram;

/// Smallest latency the histogram distinguishes from zero.
pub const LOWEST_DISCERNIBLE_NS: u64 = 1;
/// Largest latency with full precision; larger values are clamped into the top bucket.
pub const HIGHEST_TRACKABLE_NS: u64 = 3_600 * 1_000_000_000;
/// Decimal digits of precision kept over the whole range (relative error <= 10^-3).
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// Upper bounds (exclusive) of the coarse latency distribution reported beside the percentiles:
/// 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 in each of ns, µs and ms, then 2 s. These are the
/// same edges fio uses for its `lat (nsec/usec/msec)` lines, so the numbers are comparable; a
/// last open bin (`u64::MAX`) holds everything from 2 s up.
pub const LATENCY_DISTRIBUTION_EDGES_NS: [u64; 31] = {
    const STEPS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    const NS_PER_US: u64 = 1_000;
    const NS_PER_MS: u64 = 1_000_000;
    let mut edges = [0u64; 31];
    let mut i = 0;
    while i < STEPS.len() {
        edges[i] = STEPS[i];
        edges[STEPS.len() + i] = STEPS[i] * NS_PER_US;
        edges[2 * STEPS.len() + i] = STEPS[i] * NS_PER_MS;
        i += 1;
    }
    edges[30] = 2_000 * NS_PER_MS;
    edges
};

/// Latency distribution of one direction: nanosecond values with bounded relative error.
/// Serialized as its recorded buckets and exact accumulators ([`HistogramWire`]), so a copy
/// read back merges exactly as the original would (a multi-client run's gather).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(into = "HistogramWire", from = "HistogramWire")]
pub struct LatencyHistogram {
    histogram: Histogram<u64>,
    /// Exact extremes, kept apart from the histogram because fio reports exact min/max and the
    /// histogram only knows bucket bounds.
    min_ns: u64,
    max_ns: u64,
    /// Welford running mean and sum of squared deviations: exact to f64 precision and free of
    /// the cancellation that `sum(x^2) - sum(x)^2/n` suffers when stddev << mean.
    mean_ns: f64,
    squared_deviation_sum: f64,
}

/// The serialized form of a [`LatencyHistogram`]: every recorded bucket as (a value in the
/// bucket, count), which re-recorded lands in the same bucket, and the exact accumulators,
/// the floating-point ones as their IEEE-754 bits so no text round trip can change them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HistogramWire {
    /// (highest value equivalent to the bucket, samples in it), in increasing value order.
    pub buckets: Vec<(u64, u64)>,
    pub min_ns: u64,
    pub max_ns: u64,
    /// `f64::to_bits` of the running mean.
    pub mean_ns_bits: u64,
    /// `f64::to_bits` of the sum of squared deviations.
    pub squared_deviation_sum_bits: u64,
}

impl From<LatencyHistogram> for HistogramWire {
    fn from(histogram: LatencyHistogram) -> Self {
        Self {
            buckets: histogram
                .histogram
                .iter_recorded()
                .map(|bucket| (bucket.value_iterated_to(), bucket.count_at_value()))
                .collect(),
            min_ns: histogram.min_ns,
            max_ns: histogram.max_ns,
            mean_ns_bits: histogram.mean_ns.to_bits(),
            squared_deviation_sum_bits: histogram.squared_deviation_sum.to_bits(),
        }
    }
}

impl From<HistogramWire> for LatencyHistogram {
    fn from(wire: HistogramWire) -> Self {
        let mut histogram = LatencyHistogram::new();
        for (value_ns, count) in wire.buckets {
            histogram.histogram.saturating_record_n(value_ns, count);
        }
        histogram.min_ns = wire.min_ns;
        histogram.max_ns = wire.max_ns;
        histogram.mean_ns = f64::from_bits(wire.mean_ns_bits);
        histogram.squared_deviation_sum = f64::from_bits(wire.squared_deviation_sum_bits);
        histogram
    }
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram covering 1 ns .. 1 hour at 3 significant digits (about 270 KiB).
    pub fn new() -> Self {
        // The bounds are compile-time constants that satisfy hdrhistogram's preconditions
        // (low >= 1, high >= 2 * low, sigfig <= 5), so construction cannot fail.
        let histogram = Histogram::new_with_bounds(
            LOWEST_DISCERNIBLE_NS,
            HIGHEST_TRACKABLE_NS,
            SIGNIFICANT_DIGITS,
        )
        .expect("constant histogram bounds are valid");
        Self {
            histogram,
            min_ns: u64::MAX,
            max_ns: 0,
            mean_ns: 0.0,
            squared_deviation_sum: 0.0,
        }
    }

    /// Records one latency. Values above [`HIGHEST_TRACKABLE_NS`] land in the top bucket (exact
    /// max is still tracked). O(1), no allocation, no panic.
    #[inline]
    pub fn record(&mut self, value_ns: u64) {
        self.histogram.saturating_record(value_ns);
        self.min_ns = self.min_ns.min(value_ns);
        self.max_ns = self.max_ns.max(value_ns);
        let count = self.histogram.len() as f64;
        let value = value_ns as f64;
        let delta = value - self.mean_ns;
        self.mean_ns += delta / count;
        self.squared_deviation_sum += delta * (value - self.mean_ns);
    }

    /// Adds every sample of `other`, as if they had been recorded here.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        let other_count = other.count();
        if other_count == 0 {
            return;
        }
        let self_count = self.count();
        if self.histogram.add(&other.histogram).is_err() {
            // Unreachable while every LatencyHistogram shares the same bounds; kept as a
            // lossless fallback instead of a panic.
            for bucket in other.histogram.iter_recorded() {
                self.histogram
                    .saturating_record_n(bucket.value_iterated_to(), bucket.count_at_value());
            }
        }
        // Chan et al. parallel combination of Welford accumulators.
        let total = (self_count + other_count) as f64;
        let delta = other.mean_ns - self.mean_ns;
        self.mean_ns += delta * other_count as f64 / total;
        self.squared_deviation_sum += other.squared_deviation_sum
            + delta * delta * self_count as f64 * other_count as f64 / total;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    /// Number of recorded samples.
    pub fn count(&self) -> u64 {
        self.histogram.len()
    }

    /// Exact smallest recorded value; 0 when empty.
    pub fn min_ns(&self) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.min_ns
        }
    }

    /// Exact largest recorded value; 0 when empty.
    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// Exact arithmetic mean (to f64 precision); 0 when empty.
    pub fn mean_ns(&self) -> f64 {
        self.mean_ns
    }

    /// Sample standard deviation (divides by n - 1, as fio does); 0 with fewer than 2 samples.
    pub fn stddev_ns(&self) -> f64 {
        let count = self.count();
        if count < 2 {
            return 0.0;
        }
        (self.squared_deviation_sum.max(0.0) / (count - 1) as f64).sqrt()
    }

    /// Value at `percentile` (0..=100; out-of-range and NaN are clamped): the smallest bucket
    /// bound such that at least that share of samples is at or below it, clamped to the exact
    /// [min, max]. Relative error at most 10^-3. 0 when empty.
    pub fn percentile_ns(&self, percentile: f64) -> u64 {
        if self.count() == 0 {
            return 0;
        }
        let percentile = if percentile.is_nan() {
            0.0
        } else {
            percentile.clamp(0.0, 100.0)
        };
        if percentile == 0.0 {
            return self.min_ns;
        }
        self.histogram
            .value_at_quantile(percentile / 100.0)
            .clamp(self.min_ns, self.max_ns)
    }

    /// Non-empty buckets in ascending order as (highest value in the bucket in ns, count).
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.histogram
            .iter_recorded()
            .map(|bucket| (bucket.value_iterated_to(), bucket.count_at_value()))
            .collect()
    }

    /// The samples in fio's latency buckets, as fio's json+ `bins`: (bucket value in ns, count)
    /// for every non-empty bucket, ascending. Each of this histogram's buckets (at most 0.1 %
    /// wide, finer than fio's 1.6 %) goes whole to the fio bucket holding its lowest value.
    pub fn fio_bins(&self) -> Vec<(u64, u64)> {
        let mut bins: Vec<(u64, u64)> = Vec::new();
        for bucket in self.histogram.iter_recorded() {
            let lowest_ns = self.histogram.lowest_equivalent(bucket.value_iterated_to());
            let value_ns = crate::fio_bucket_value_ns(crate::fio_bucket_index(lowest_ns));
            match bins.last_mut() {
                Some((last, count)) if *last == value_ns => *count += bucket.count_at_value(),
                _ => bins.push((value_ns, bucket.count_at_value())),
            }
        }
        bins
    }

    /// Counts per bin for ascending exclusive upper `edges_ns`: bin `i` holds samples in
    /// `[edges_ns[i-1], edges_ns[i])` and one extra last bin holds everything `>= last edge`, so
    /// the result has `edges_ns.len() + 1` entries. A bucket is assigned by its lowest value, so
    /// edges that fall on bucket bounds (all edges below 2048 ns and most above) are exact;
    /// otherwise the error is one bucket width (<= 0.1 % of the edge).
    pub fn distribution(&self, edges_ns: &[u64]) -> Vec<u64> {
        let mut counts = vec![0u64; edges_ns.len() + 1];
        for bucket in self.histogram.iter_recorded() {
            let lowest_ns = self.histogram.lowest_equivalent(bucket.value_iterated_to());
            let bin = edges_ns.partition_point(|&edge| edge <= lowest_ns);
            counts[bin] += bucket.count_at_value();
        }
        counts
    }

    /// Bytes of counter memory held by this histogram (one u64 per bucket).
    pub fn memory_bytes(&self) -> usize {
        self.histogram.distinct_values() * std::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A histogram read back from its wire form is the same histogram: merging copies gives
    /// exactly what merging the originals gives (the multi-client gather depends on it).
    #[test]
    fn wire_round_trip_merges_exactly() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        for i in 0..5_000u64 {
            a.record(1_000 + i * 37 % 90_000);
            b.record(50_000 + i * i % 3_000_000);
        }
        let mut merged = a.clone();
        merged.merge(&b);
        let mut from_wire = LatencyHistogram::from(HistogramWire::from(a.clone()));
        from_wire.merge(&LatencyHistogram::from(HistogramWire::from(b.clone())));
        assert_eq!(from_wire.buckets(), merged.buckets());
        assert_eq!(from_wire.count(), merged.count());
        assert_eq!(from_wire.min_ns(), merged.min_ns());
        assert_eq!(from_wire.max_ns(), merged.max_ns());
        assert_eq!(from_wire.mean_ns().to_bits(), merged.mean_ns().to_bits());
        assert_eq!(
            from_wire.stddev_ns().to_bits(),
            merged.stddev_ns().to_bits()
        );
        for percentile in [1.0, 50.0, 90.0, 99.0, 99.9, 99.99] {
            assert_eq!(
                from_wire.percentile_ns(percentile),
                merged.percentile_ns(percentile)
            );
        }
    }

    #[test]
    fn empty_histogram_reports_zeros() {
        let histogram = LatencyHistogram::new();
        assert_eq!(histogram.count(), 0);
        assert_eq!(histogram.min_ns(), 0);
        assert_eq!(histogram.max_ns(), 0);
        assert_eq!(histogram.mean_ns(), 0.0);
        assert_eq!(histogram.stddev_ns(), 0.0);
        assert_eq!(histogram.percentile_ns(99.0), 0);
        assert!(histogram.buckets().is_empty());
    }

    #[test]
    fn exact_statistics_for_small_set() {
        let mut histogram = LatencyHistogram::new();
        for value in [100, 200, 300, 400] {
            histogram.record(value);
        }
        assert_eq!(histogram.count(), 4);
        assert_eq!(histogram.min_ns(), 100);
        assert_eq!(histogram.max_ns(), 400);
        assert!((histogram.mean_ns() - 250.0).abs() < 1e-9);
        // sample stddev of 100..400 step 100 = sqrt(50000/3)
        assert!((histogram.stddev_ns() - (50_000.0f64 / 3.0).sqrt()).abs() < 1e-9);
        assert_eq!(histogram.percentile_ns(50.0), 200);
        assert_eq!(histogram.percentile_ns(100.0), 400);
        assert_eq!(histogram.percentile_ns(0.0), 100);
        assert_eq!(histogram.percentile_ns(f64::NAN), 100);
        assert_eq!(histogram.percentile_ns(250.0), 400);
    }

    #[test]
    fn huge_and_zero_values_do_not_panic() {
        let mut histogram = LatencyHistogram::new();
        histogram.record(0);
        histogram.record(u64::MAX);
        assert_eq!(histogram.count(), 2);
        assert_eq!(histogram.min_ns(), 0);
        assert_eq!(histogram.max_ns(), u64::MAX);
        // The clamped sample sits in the top bucket, within the relative error of its bound.
        let top_ns = histogram.percentile_ns(100.0);
        assert!(
            top_ns >= HIGHEST_TRACKABLE_NS - HIGHEST_TRACKABLE_NS / 1_000,
            "{top_ns}"
        );
    }

    #[test]
    fn distribution_edges_match_fio_layout() {
        assert_eq!(LATENCY_DISTRIBUTION_EDGES_NS[0], 2);
        assert_eq!(LATENCY_DISTRIBUTION_EDGES_NS[9], 1_000);
        assert_eq!(LATENCY_DISTRIBUTION_EDGES_NS[10], 2_000);
        assert_eq!(LATENCY_DISTRIBUTION_EDGES_NS[19], 1_000_000);
        assert_eq!(LATENCY_DISTRIBUTION_EDGES_NS[29], 1_000_000_000);
        assert_eq!(LATENCY_DISTRIBUTION_EDGES_NS[30], 2_000_000_000);
        assert!(LATENCY_DISTRIBUTION_EDGES_NS
            .windows(2)
            .all(|w| w[0] < w[1]));
    }

    #[test]
    fn distribution_bins_values_at_edges() {
        let mut histogram = LatencyHistogram::new();
        for value in [1, 2, 3, 999, 1_000, 1_999, 300_000, 3_000_000_000] {
            histogram.record(value);
        }
        let counts = histogram.distribution(&LATENCY_DISTRIBUTION_EDGES_NS);
        assert_eq!(counts.len(), LATENCY_DISTRIBUTION_EDGES_NS.len() + 1);
        assert_eq!(counts[0], 1, "[0,2)");
        assert_eq!(counts[1], 2, "[2,4)");
        assert_eq!(counts[9], 1, "[750,1000)");
        assert_eq!(counts[10], 2, "[1us,2us)");
        assert_eq!(counts[17], 1, "[250us,500us)");
        assert_eq!(counts[31], 1, ">= 2 s");
        assert_eq!(counts.iter().sum::<u64>(), histogram.count());
    }

    #[test]
    fn memory_cost_is_bounded() {
        let histogram = LatencyHistogram::new();
        // Documented in docs/decisions/0002-histograms.md; catches a silent change of bounds.
        assert!(
            histogram.memory_bytes() <= 300 * 1024,
            "{}",
            histogram.memory_bytes()
        );
    }
}
