//! Checks the histogram against exact computations on sorted data: percentiles stay within
//! the documented relative error, moments are exact, and merging equals recording the union.

use proptest::prelude::*;
use storlab_stats::{DirectionStats, LatencyHistogram, FIO_DEFAULT_PERCENTILES};

/// Relative error bound for 3 significant digits: a bucket is at most value/1024 wide.
const RELATIVE_ERROR: f64 = 1e-3;

/// splitmix64: a fixed-seed generator so failures reproduce without a rand dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Log-uniform latency between 100 ns and ~100 ms: the shape of real storage latencies,
    /// spanning many histogram buckets.
    fn latency_ns(&mut self) -> u64 {
        let exponent = 2.0 + 6.0 * (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        10f64.powf(exponent) as u64
    }
}

/// Nearest-rank percentile with the same rank rule as the histogram (rank = ceil(q * n)).
fn exact_percentile(sorted: &[u64], percentile: f64) -> u64 {
    let rank = ((percentile / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

fn check_against_exact(values: &[u64]) -> Result<(), TestCaseError> {
    let mut histogram = LatencyHistogram::new();
    for &value in values {
        histogram.record(value);
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    prop_assert_eq!(histogram.count(), values.len() as u64);
    prop_assert_eq!(histogram.min_ns(), sorted[0]);
    prop_assert_eq!(histogram.max_ns(), *sorted.last().unwrap());
    let mean = values.iter().map(|&v| v as f64).sum::<f64>() / values.len() as f64;
    prop_assert!((histogram.mean_ns() - mean).abs() <= mean * 1e-9 + 1e-9);
    if values.len() > 1 {
        let variance = values
            .iter()
            .map(|&v| (v as f64 - mean).powi(2))
            .sum::<f64>()
            / (values.len() - 1) as f64;
        let stddev = variance.sqrt();
        prop_assert!(
            (histogram.stddev_ns() - stddev).abs() <= stddev * 1e-6 + 1e-6,
            "stddev {} vs exact {}",
            histogram.stddev_ns(),
            stddev
        );
    }
    for percentile in FIO_DEFAULT_PERCENTILES.iter().copied().chain([0.0, 100.0]) {
        let exact = exact_percentile(&sorted, percentile);
        let estimated = histogram.percentile_ns(percentile);
        let error = (estimated as f64 - exact as f64).abs();
        prop_assert!(
            error <= exact as f64 * RELATIVE_ERROR,
            "p{percentile}: histogram {estimated} vs exact {exact}"
        );
    }
    Ok(())
}

#[test]
fn percentiles_within_relative_error_on_100k_log_uniform_samples() {
    let mut rng = SplitMix64(0x5EED_0002);
    let values: Vec<u64> = (0..100_000).map(|_| rng.latency_ns()).collect();
    check_against_exact(&values).unwrap();
}

#[test]
fn percentiles_exact_below_2048_ns() {
    // Values below 2 * 1024 sub-buckets have their own bucket: no error at all.
    let mut rng = SplitMix64(7);
    let values: Vec<u64> = (0..10_000).map(|_| rng.next() % 2048).collect();
    let mut histogram = LatencyHistogram::new();
    values.iter().for_each(|&v| histogram.record(v));
    let mut sorted = values.clone();
    sorted.sort_unstable();
    for percentile in FIO_DEFAULT_PERCENTILES {
        assert_eq!(
            histogram.percentile_ns(percentile),
            exact_percentile(&sorted, percentile)
        );
    }
}

fn summarise(histogram: &LatencyHistogram) -> (u64, u64, u64, Vec<(u64, u64)>, Vec<u64>) {
    (
        histogram.count(),
        histogram.min_ns(),
        histogram.max_ns(),
        histogram.buckets(),
        FIO_DEFAULT_PERCENTILES
            .iter()
            .map(|&p| histogram.percentile_ns(p))
            .collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn percentiles_within_relative_error(values in prop::collection::vec(1u64..10_000_000_000, 1..2_000)) {
        check_against_exact(&values)?;
    }

    #[test]
    fn merge_equals_recording_the_union(
        left in prop::collection::vec(0u64..1_000_000_000, 0..500),
        right in prop::collection::vec(0u64..1_000_000_000, 0..500),
    ) {
        let mut merged = LatencyHistogram::new();
        left.iter().for_each(|&v| merged.record(v));
        let mut other = LatencyHistogram::new();
        right.iter().for_each(|&v| other.record(v));
        merged.merge(&other);

        let mut union = LatencyHistogram::new();
        left.iter().chain(&right).for_each(|&v| union.record(v));

        prop_assert_eq!(summarise(&merged), summarise(&union));
        let tolerance = |x: f64| x.abs() * 1e-9 + 1e-6;
        prop_assert!((merged.mean_ns() - union.mean_ns()).abs() <= tolerance(union.mean_ns()));
        prop_assert!((merged.stddev_ns() - union.stddev_ns()).abs() <= tolerance(union.stddev_ns()) * 1e3);
    }

    #[test]
    fn direction_merge_equals_union(
        samples in prop::collection::vec((0u64..5_000_000_000, 1u64..1_048_576, 0u64..10_000, 0u64..10_000_000), 0..300),
        split in 0usize..300,
    ) {
        let split = split.min(samples.len());
        let interval_ns = 100_000_000;
        let mut first = DirectionStats::new(interval_ns);
        let mut second = DirectionStats::new(interval_ns);
        let mut union = DirectionStats::new(interval_ns);
        for (index, &(t_ns, bytes, slat_ns, clat_ns)) in samples.iter().enumerate() {
            let part = if index < split { &mut first } else { &mut second };
            part.record(t_ns, bytes, slat_ns, clat_ns);
            union.record(t_ns, bytes, slat_ns, clat_ns);
        }
        first.merge(&second);
        prop_assert_eq!(first.ios, union.ios);
        prop_assert_eq!(first.bytes, union.bytes);
        prop_assert_eq!(first.series.bins(), union.series.bins());
        prop_assert_eq!(summarise(&first.lat), summarise(&union.lat));
        prop_assert_eq!(summarise(&first.slat), summarise(&union.slat));
        prop_assert_eq!(summarise(&first.clat), summarise(&union.clat));
    }
}
