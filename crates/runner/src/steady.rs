//! fio's `steadystate` criteria (fio's steadystate.c): over a window of per-interval samples,
//! either the largest deviation from the mean (`iops`, `bw`) or the least-squares slope
//! (`iops_slope`, `bw_slope`), each against a limit in the samples' unit or in percent of the
//! mean. A worker that meets its criterion stops, as fio ends the job; the lab applies the same
//! test to a finished job's series to say whether its result had settled.

use storlab_job::{SteadyStateSpec, MICROS_PER_UNIT};

/// Whether `samples` (per-second rates of one window, oldest first) meet `spec`.
pub fn criterion_met(samples: &[f64], spec: &SteadyStateSpec) -> bool {
    let n = samples.len();
    if n < 2 {
        return false;
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    if mean <= 0.0 {
        return false;
    }
    let measured = if spec.slope {
        slope(samples).abs()
    } else {
        samples.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max)
    };
    let limit = spec.limit_micros as f64 / MICROS_PER_UNIT as f64;
    if spec.percent {
        measured * 100.0 / mean <= limit
    } else {
        measured <= limit
    }
}

/// The least-squares slope of `samples` (oldest first) per sample, in their unit; 0 for fewer
/// than two.
pub fn slope(samples: &[f64]) -> f64 {
    let n = samples.len();
    if n < 2 {
        return 0.0;
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    let x_mean = (n - 1) as f64 / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &y) in samples.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxy += dx * (y - mean);
        sxx += dx * dx;
    }
    sxy / sxx
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(slope: bool, limit_micros: u64, percent: bool) -> SteadyStateSpec {
        SteadyStateSpec {
            bandwidth: false,
            slope,
            limit_micros,
            percent,
            duration_ns: 0,
            ramp_ns: 0,
        }
    }

    #[test]
    fn deviation_and_slope_against_their_limits() {
        let flat = [1000.0, 1010.0, 990.0, 1000.0];
        let rising = [900.0, 1000.0, 1100.0, 1200.0];
        // Largest deviation 10 of a mean of 1000: 1%.
        assert!(criterion_met(&flat, &spec(false, 1_000_000, true)));
        assert!(!criterion_met(&flat, &spec(false, 900_000, true)));
        assert!(criterion_met(&flat, &spec(false, 10_000_000, false)));
        // A slope of 100 per sample on a mean of 1050: 9.5%.
        assert!(!criterion_met(&rising, &spec(true, 5_000_000, true)));
        assert!(criterion_met(&rising, &spec(true, 10_000_000, true)));
        assert!(criterion_met(&rising, &spec(true, 100_000_000, false)));
    }
}
