//! Whether a job's result had settled: fio's steady-state slope test (`steadystate=bw_slope`,
//! `storlab_runner::steady`) applied after the run to the job's per-interval throughput, so a
//! figure that still moves with the run's length (an SSD whose write rate climbs for seconds)
//! comes with a warning instead of passing for the drive's rate.

use storlab_job::SteadyStateSpec;
use storlab_report::SeriesPoint;

/// The largest change of throughput across the run, in percent of its mean, the fitted
/// least-squares line may show for the result to count as settled. Scaled to the run (fio's
/// slope limit is per sample: this divided by the samples' span), so a short run is held to a
/// steeper slope than a long one and a slow drift over a long run is still seen; per-second
/// noise of a few percent stays well inside it, a figure that doubles within the run does not.
pub const SETTLED_DRIFT_PERCENT: u64 = 20;

/// An interval shorter than this share of a whole one (the run's last, cut by its end) is left
/// out: its rate, scaled up from a fraction of a second, says little.
const PARTIAL_INTERVAL_MIN_PERCENT: f64 = 50.0;

/// Millionths in one unit of fio's `SteadyStateSpec::limit_micros`.
const MICROS: f64 = 1e6;

/// The warning for a job whose per-interval throughput (`series`) fails fio's slope test with
/// a limit of [`SETTLED_DRIFT_PERCENT`] across the run; `None` when it passes, or when fewer
/// than two whole intervals ran (nothing to fit a line to).
pub fn unsettled_warning(series: &[SeriesPoint]) -> Option<String> {
    let samples = whole_interval_rates(series);
    let n = samples.len();
    if n < 2 {
        return None;
    }
    let span = (n - 1) as f64;
    let spec = SteadyStateSpec {
        bandwidth: true,
        slope: true,
        limit_micros: (SETTLED_DRIFT_PERCENT as f64 / span * MICROS) as u64,
        percent: true,
        duration_ns: 0,
        ramp_ns: 0,
    };
    if storlab_runner::steady::criterion_met(&samples, &spec) {
        return None;
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    let drift_percent = storlab_runner::steady::slope(&samples) * span * 100.0 / mean.max(1.0);
    let mb = |bytes_per_s: f64| bytes_per_s / 1e6;
    Some(format!(
        "not settled: throughput went from {:.1} MB/s in the first interval to {:.1} MB/s in the \
         last of {n} (the fitted line moves {drift_percent:+.0}% of the mean across the run; \
         fio's steadystate=bw_slope test, limit {SETTLED_DRIFT_PERCENT}%): the figure depends on \
         the run's length, so run longer or with steadystate",
        mb(samples[0]),
        mb(samples[n - 1]),
    ))
}

/// Bytes per second (read, write and trim) of every interval at least
/// [`PARTIAL_INTERVAL_MIN_PERCENT`] of a whole one long.
fn whole_interval_rates(series: &[SeriesPoint]) -> Vec<f64> {
    let whole_s = series.first().map_or(0.0, |p| p.t_s);
    let mut previous_end_s = 0.0;
    series
        .iter()
        .filter_map(|p| {
            let length_s = p.t_s - previous_end_s;
            previous_end_s = p.t_s;
            (length_s * 100.0 >= whole_s * PARTIAL_INTERVAL_MIN_PERCENT)
                .then_some(p.read_bw_bytes_per_s + p.write_bw_bytes_per_s + p.trim_bw_bytes_per_s)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(mbs: &[f64], last_s: f64) -> Vec<SeriesPoint> {
        mbs.iter()
            .enumerate()
            .map(|(i, &rate)| SeriesPoint {
                t_s: if i + 1 == mbs.len() {
                    last_s
                } else {
                    (i + 1) as f64
                },
                read_iops: 0.0,
                read_bw_bytes_per_s: 0.0,
                write_iops: 0.0,
                write_bw_bytes_per_s: rate * 1e6,
                trim_iops: 0.0,
                trim_bw_bytes_per_s: 0.0,
            })
            .collect()
    }

    #[test]
    fn a_rising_rate_is_unsettled_a_noisy_flat_one_is_not() {
        // Two seconds, the second several times the first: the run's length decides the figure.
        let warning = unsettled_warning(&series(&[5.0, 31.0], 2.0)).expect("unsettled");
        assert!(warning.starts_with("not settled"), "{warning}");
        assert!(warning.contains("5.0 MB/s") && warning.contains("31.0 MB/s"));
        // Ten seconds of a flat rate with ±4% noise settle.
        let noisy = [
            100.0, 104.0, 96.0, 103.0, 97.0, 101.0, 99.0, 104.0, 96.0, 100.0,
        ];
        assert_eq!(unsettled_warning(&series(&noisy, 10.0)), None);
        // A slow climb of 3% a second over 10 s (27% across the run) is seen.
        let climb: Vec<f64> = (0..10).map(|i| 100.0 * (1.0 + 0.03 * i as f64)).collect();
        assert!(unsettled_warning(&series(&climb, 10.0)).is_some());
    }

    #[test]
    fn too_short_runs_and_partial_last_intervals_are_not_judged() {
        assert_eq!(unsettled_warning(&series(&[5.0], 1.0)), None);
        // A last interval of 0.2 s is left out: one whole interval remains.
        assert_eq!(unsettled_warning(&series(&[5.0, 500.0], 1.2)), None);
        // Of 0.6 s it counts.
        assert!(unsettled_warning(&series(&[5.0, 500.0], 1.6)).is_some());
    }
}
