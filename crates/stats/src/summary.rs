//! Serializable summaries of `DirectionStats`: the numbers a report stores (rates, latency
//! moments and percentiles, per-interval rate spread, coarse latency distribution).

use serde::{Deserialize, Serialize};

use crate::direction::DirectionStats;
use crate::histogram::{LatencyHistogram, LATENCY_DISTRIBUTION_EDGES_NS};
use crate::series::IntervalSeries;

const NS_PER_S: f64 = 1e9;

/// Percentiles fio prints by default (`percentile_list`), so results line up with fio's.
pub const FIO_DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// Moments and percentiles of one latency histogram.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Samples summarised.
    pub count: u64,
    /// Exact minimum.
    pub min_ns: u64,
    /// Exact maximum.
    pub max_ns: u64,
    /// Exact mean.
    pub mean_ns: f64,
    /// Sample standard deviation.
    pub stddev_ns: f64,
    /// (percentile in 0..=100, value in ns) at [`FIO_DEFAULT_PERCENTILES`].
    pub percentiles: Vec<(f64, u64)>,
}

impl LatencySummary {
    /// Summarises `histogram` at the given percentiles.
    pub fn from_histogram(histogram: &LatencyHistogram, percentiles: &[f64]) -> Self {
        Self {
            count: histogram.count(),
            min_ns: histogram.min_ns(),
            max_ns: histogram.max_ns(),
            mean_ns: histogram.mean_ns(),
            stddev_ns: histogram.stddev_ns(),
            percentiles: percentiles
                .iter()
                .map(|&percentile| (percentile, histogram.percentile_ns(percentile)))
                .collect(),
        }
    }

    /// The stored value at `percentile`, if it was one of the summarised percentiles.
    pub fn percentile_ns(&self, percentile: f64) -> Option<u64> {
        self.percentiles
            .iter()
            .find(|(stored, _)| (stored - percentile).abs() < 1e-9)
            .map(|&(_, value_ns)| value_ns)
    }
}

/// Count of I/Os whose latency fell below `upper_ns` (and at or above the previous bin's bound).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencyBinCount {
    /// Exclusive upper bound; `None` for the last, open-ended bin.
    pub upper_ns: Option<u64>,
    /// I/Os in the bin.
    pub count: u64,
}

/// Spread of IOPS and bandwidth across the full intervals of a run (fio's `bw_*`/`iops_*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalRateSummary {
    /// Width of each interval.
    pub interval_ns: u64,
    /// Full intervals used; a partial last interval is left out so it cannot drag min down.
    pub samples: u64,
    /// Lowest per-interval IOPS.
    pub iops_min: f64,
    /// Highest per-interval IOPS.
    pub iops_max: f64,
    /// Mean per-interval IOPS.
    pub iops_mean: f64,
    /// Sample standard deviation of per-interval IOPS.
    pub iops_stddev: f64,
    /// Lowest per-interval bandwidth.
    pub bw_min_bytes_per_s: f64,
    /// Highest per-interval bandwidth.
    pub bw_max_bytes_per_s: f64,
    /// Mean per-interval bandwidth.
    pub bw_mean_bytes_per_s: f64,
    /// Sample standard deviation of per-interval bandwidth.
    pub bw_stddev_bytes_per_s: f64,
}

impl IntervalRateSummary {
    /// Summarises the intervals of `series` that end within `runtime_ns`.
    pub fn from_series(series: &IntervalSeries, runtime_ns: u64) -> Self {
        let interval_ns = series.interval_ns();
        let full_intervals = usize::try_from(runtime_ns / interval_ns).unwrap_or(usize::MAX);
        let interval_s = interval_ns as f64 / NS_PER_S;
        // Intervals with no completion inside the window are real zero-rate samples.
        let rates: Vec<(f64, f64)> = (0..full_intervals)
            .map(|index| series.bins().get(index).copied().unwrap_or_default())
            .map(|bin| (bin.ios as f64 / interval_s, bin.bytes as f64 / interval_s))
            .collect();
        let (iops_min, iops_max, iops_mean, iops_stddev) =
            spread(rates.iter().map(|&(iops, _)| iops));
        let (bw_min, bw_max, bw_mean, bw_stddev) = spread(rates.iter().map(|&(_, bw)| bw));
        Self {
            interval_ns,
            samples: rates.len() as u64,
            iops_min,
            iops_max,
            iops_mean,
            iops_stddev,
            bw_min_bytes_per_s: bw_min,
            bw_max_bytes_per_s: bw_max,
            bw_mean_bytes_per_s: bw_mean,
            bw_stddev_bytes_per_s: bw_stddev,
        }
    }
}

impl IntervalRateSummary {
    /// fio's sum of rate statistics over directions (stat.c `sum_stat` with `pure_sum`, which
    /// `unified_rw_reporting` applies to the bandwidth and IOPS samples): the minimums, maximums,
    /// means and sample counts add up, and so do the squared deviations, the deviation being
    /// that sum over all the samples less one. Parts without samples are left out, as fio.
    pub fn pure_sum(parts: &[IntervalRateSummary]) -> Self {
        let mut sum = IntervalRateSummary::default();
        let mut squares = (0.0, 0.0);
        for part in parts.iter().filter(|part| part.samples > 0) {
            let deviations = (part.samples - 1) as f64;
            sum.interval_ns = part.interval_ns;
            sum.samples += part.samples;
            sum.iops_min += part.iops_min;
            sum.iops_max += part.iops_max;
            sum.iops_mean += part.iops_mean;
            sum.bw_min_bytes_per_s += part.bw_min_bytes_per_s;
            sum.bw_max_bytes_per_s += part.bw_max_bytes_per_s;
            sum.bw_mean_bytes_per_s += part.bw_mean_bytes_per_s;
            squares.0 += part.iops_stddev.powi(2) * deviations;
            squares.1 += part.bw_stddev_bytes_per_s.powi(2) * deviations;
        }
        if sum.samples > 1 {
            let deviations = (sum.samples - 1) as f64;
            sum.iops_stddev = (squares.0 / deviations).sqrt();
            sum.bw_stddev_bytes_per_s = (squares.1 / deviations).sqrt();
        }
        sum
    }
}

/// (min, max, mean, sample stddev) of `values`; all zero when empty.
fn spread(values: impl Iterator<Item = f64> + Clone) -> (f64, f64, f64, f64) {
    let count = values.clone().count();
    if count == 0 {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let min = values.clone().fold(f64::INFINITY, f64::min);
    let max = values.clone().fold(f64::NEG_INFINITY, f64::max);
    let mean = values.clone().sum::<f64>() / count as f64;
    let stddev = if count < 2 {
        0.0
    } else {
        (values.map(|value| (value - mean).powi(2)).sum::<f64>() / (count - 1) as f64).sqrt()
    };
    (min, max, mean, stddev)
}

/// What a report keeps about one direction of a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectionSummary {
    /// Completed I/Os.
    pub ios: u64,
    /// Bytes moved by completed I/Os.
    pub bytes: u64,
    /// Failed I/Os.
    pub errors: u64,
    /// Completed reads of bad blocks passed by `continue_on_error=verify` (in `ios` too).
    #[serde(default, skip_serializing_if = "crate::summary::is_zero_count")]
    pub verify_errors: u64,
    /// `ios` per second of `runtime_ns`.
    pub iops: f64,
    /// `bytes` per second of `runtime_ns`.
    pub bw_bytes_per_s: f64,
    /// Measured window the rates are computed over.
    pub runtime_ns: u64,
    /// Submission latency.
    pub slat: LatencySummary,
    /// Completion latency.
    pub clat: LatencySummary,
    /// Total latency.
    pub lat: LatencySummary,
    /// Completion latency counts per bin of [`LATENCY_DISTRIBUTION_EDGES_NS`] (+ open bin).
    pub clat_distribution: Vec<LatencyBinCount>,
    /// Spread of the per-interval rates.
    pub per_interval: IntervalRateSummary,
    /// Completion latencies in fio's histogram buckets, (bucket value in ns, count), for fio's
    /// json+ `bins` (absent in runs saved before they were kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clat_fio_bins: Vec<(u64, u64)>,
    /// Completion latency per I/O priority, the priorities with samples in fio's order, when
    /// the job's I/Os carried several (fio's cmdprio family); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_priority: Vec<PrioritySummary>,
}

/// The completion latency of the I/Os of one direction that carried one I/O priority.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrioritySummary {
    /// The priority (linux/ioprio.h value: `class << 13 | level`).
    pub ioprio: u16,
    pub clat: LatencySummary,
    /// Its completion latencies in fio's histogram buckets, as `clat_fio_bins`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clat_fio_bins: Vec<(u64, u64)>,
}

impl DirectionSummary {
    /// The errors a job went on past, as fio's `total_err` counts them: failed I/Os and bad
    /// blocks read back.
    pub fn failed(&self) -> u64 {
        self.errors + self.verify_errors
    }

    /// Summarises `d` over a measured window of `runtime_ns` (0 gives zero rates).
    pub fn from_stats(d: &DirectionStats, runtime_ns: u64) -> Self {
        Self::from_stats_at(d, runtime_ns, &FIO_DEFAULT_PERCENTILES)
    }

    /// fio's `mixed` direction (`unified_rw_reporting`): `parts` (the directions) summed as
    /// fio's `sum_thread_stats` sums them, the latencies as if recorded in one direction, the
    /// bandwidth and IOPS samples with [`IntervalRateSummary::pure_sum`].
    pub fn mixed(parts: &[&DirectionStats], runtime_ns: u64, percentiles: &[f64]) -> Self {
        let interval_ns = parts.first().map_or(0, |part| part.series.interval_ns());
        let mut merged = DirectionStats::new(interval_ns);
        for part in parts {
            merged.merge(part);
        }
        let mut summary = Self::from_stats_at(&merged, runtime_ns, percentiles);
        let rates: Vec<IntervalRateSummary> = parts
            .iter()
            .map(|part| IntervalRateSummary::from_series(&part.series, runtime_ns))
            .collect();
        summary.per_interval = IntervalRateSummary::pure_sum(&rates);
        summary
    }

    /// [`DirectionSummary::from_stats`] with the latencies summarised at `percentiles` (fio's
    /// `percentile_list`).
    pub fn from_stats_at(d: &DirectionStats, runtime_ns: u64, percentiles: &[f64]) -> Self {
        let runtime_s = runtime_ns as f64 / NS_PER_S;
        let per_second = |amount: u64| {
            if runtime_ns == 0 {
                0.0
            } else {
                amount as f64 / runtime_s
            }
        };
        let clat_distribution = LATENCY_DISTRIBUTION_EDGES_NS
            .iter()
            .copied()
            .map(Some)
            .chain(std::iter::once(None))
            .zip(d.clat.distribution(&LATENCY_DISTRIBUTION_EDGES_NS))
            .map(|(upper_ns, count)| LatencyBinCount { upper_ns, count })
            .collect();
        Self {
            ios: d.ios,
            bytes: d.bytes,
            errors: d.errors,
            verify_errors: d.verify_errors,
            iops: per_second(d.ios),
            bw_bytes_per_s: per_second(d.bytes),
            runtime_ns,
            slat: LatencySummary::from_histogram(&d.slat, percentiles),
            clat: LatencySummary::from_histogram(&d.clat, percentiles),
            lat: LatencySummary::from_histogram(&d.lat, percentiles),
            clat_distribution,
            per_interval: IntervalRateSummary::from_series(&d.series, runtime_ns),
            clat_fio_bins: d.clat.fio_bins(),
            by_priority: d
                .by_priority
                .iter()
                .filter(|p| p.clat.count() > 0)
                .map(|p| PrioritySummary {
                    ioprio: p.ioprio,
                    clat: LatencySummary::from_histogram(&p.clat, percentiles),
                    clat_fio_bins: p.clat.fio_bins(),
                })
                .collect(),
        }
    }
}

/// For serde: a zero count is left out.
pub(crate) fn is_zero_count(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn rates_use_runtime() {
        let mut stats = DirectionStats::new(100 * MS);
        for i in 0..1_000u64 {
            stats.record(i * MS / 2, 4096, 1_000, 99_000);
        }
        let summary = DirectionSummary::from_stats(&stats, 500 * MS);
        assert_eq!(summary.ios, 1_000);
        assert!((summary.iops - 2_000.0).abs() < 1e-6);
        assert!((summary.bw_bytes_per_s - 2_000.0 * 4096.0).abs() < 1e-3);
        assert_eq!(summary.lat.min_ns, 100_000);
        assert_eq!(summary.clat.percentile_ns(99.0), Some(99_000));
        assert_eq!(summary.per_interval.samples, 5);
        assert!((summary.per_interval.iops_mean - 2_000.0).abs() < 1e-6);
        assert_eq!(summary.per_interval.iops_stddev, 0.0);
        let in_50_100_us: u64 = summary
            .clat_distribution
            .iter()
            .filter(|bin| bin.upper_ns == Some(100_000))
            .map(|bin| bin.count)
            .sum();
        assert_eq!(in_50_100_us, 1_000);
    }

    /// fio's `pure_sum` of two directions' samples: bounds and means add, squared deviations
    /// add over all samples less one.
    #[test]
    fn mixed_rates_are_fios_pure_sum() {
        let part = |samples, mean, stddev| IntervalRateSummary {
            interval_ns: MS,
            samples,
            iops_min: 1.0,
            iops_max: 3.0,
            iops_mean: mean,
            iops_stddev: stddev,
            bw_min_bytes_per_s: 10.0,
            bw_max_bytes_per_s: 30.0,
            bw_mean_bytes_per_s: 10.0 * mean,
            bw_stddev_bytes_per_s: 10.0 * stddev,
        };
        let sum = IntervalRateSummary::pure_sum(&[
            part(3, 2.0, 1.0),
            part(0, 9.0, 9.0),
            part(5, 4.0, 2.0),
        ]);
        assert_eq!(sum.samples, 8);
        assert_eq!((sum.iops_min, sum.iops_max, sum.iops_mean), (2.0, 6.0, 6.0));
        // (1 * 2 + 4 * 4) / 7
        assert!((sum.iops_stddev - (18.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert!((sum.bw_stddev_bytes_per_s - 10.0 * (18.0f64 / 7.0).sqrt()).abs() < 1e-9);
        let mut read = DirectionStats::new(100 * MS);
        let mut write = DirectionStats::new(100 * MS);
        read.record(MS, 4096, 1_000, 10_000);
        write.record(2 * MS, 8192, 1_000, 30_000);
        let mixed = DirectionSummary::mixed(&[&read, &write], 500 * MS, &[50.0, 100.0]);
        assert_eq!((mixed.ios, mixed.bytes), (2, 12_288));
        assert_eq!(mixed.clat.count, 2);
        assert_eq!(mixed.clat.percentiles.len(), 2);
        assert_eq!(mixed.per_interval.samples, 10);
    }

    #[test]
    fn zero_runtime_gives_zero_rates() {
        let mut stats = DirectionStats::new(0);
        stats.record(0, 1, 1, 1);
        let summary = DirectionSummary::from_stats(&stats, 0);
        assert_eq!(summary.iops, 0.0);
        assert_eq!(summary.per_interval.samples, 0);
    }

    #[test]
    fn partial_last_interval_is_not_a_sample_but_idle_intervals_are() {
        let mut series = IntervalSeries::new(MS);
        series.record(0, 10);
        series.record(2 * MS, 30);
        series.record(3 * MS + 1, 1_000);
        // 3.5 ms run: intervals 0, 1 (idle), 2 are full; interval 3 is partial.
        let rates = IntervalRateSummary::from_series(&series, 3 * MS + MS / 2);
        assert_eq!(rates.samples, 3);
        assert_eq!(rates.iops_min, 0.0);
        assert!((rates.iops_max - 1_000.0).abs() < 1e-9);
        assert!((rates.bw_mean_bytes_per_s - 40.0 / 3.0 * 1_000.0).abs() < 1e-6);
    }
}
