//! Judgements of one worker's figures as each measurement interval ends: fio's `steadystate`
//! (the worker stops once reached) and `rate_min`/`rate_iops_min` (the worker fails below).

use super::NS_PER_S;
use storlab_job::{JobSpec, SteadyStateSpec};
use storlab_stats::WorkerStats;

/// What one worker judges at the end of each interval.
pub(super) struct IntervalChecks {
    /// fio's `steadystate`, and whether it was reached (the worker then stops issuing).
    steadystate: Option<SteadyStateSpec>,
    pub(super) steady_reached: bool,
    /// The last interval whose window was judged.
    steady_checked_interval: u64,
    /// fio's `rate_min` per direction, bytes per second, and the last interval checked.
    rate_min_bytes_per_s: [Option<u64>; 2],
    /// fio's `rate_iops_min` per direction, I/Os per second.
    rate_min_ios_per_s: [Option<u64>; 2],
    rate_min_checked_interval: u64,
    /// The job sets any of them: only then is a completion judged (the per-I/O cost of a job
    /// without is one test).
    pub(super) active: bool,
}

impl IntervalChecks {
    pub(super) fn new(job: &JobSpec) -> IntervalChecks {
        IntervalChecks {
            steadystate: job.steadystate,
            steady_reached: false,
            steady_checked_interval: 0,
            rate_min_bytes_per_s: [job.rate_min.read, job.rate_min.write],
            rate_min_ios_per_s: [job.rate_iops_min.read, job.rate_iops_min.write],
            rate_min_checked_interval: 0,
            active: job.steadystate.is_some()
                || [job.rate_min.read, job.rate_min.write] != [None; 2]
                || [job.rate_iops_min.read, job.rate_iops_min.write] != [None; 2],
        }
    }

    /// Judges `stats` with a counted completion at `t_ns` of the measurement: returns why the
    /// worker fails, if it does.
    pub(super) fn judge(&mut self, stats: &WorkerStats, t_ns: u64) -> Option<String> {
        if self.steadystate.is_some() {
            self.check_steady(stats, t_ns);
        }
        if self.rate_min_bytes_per_s != [None; 2] || self.rate_min_ios_per_s != [None; 2] {
            return self.check_rate_min(stats, t_ns);
        }
        None
    }

    /// fio's `steadystate`: when a measurement interval has ended, judge the window of whole
    /// intervals before it (after `ss_ramp`) and stop once it meets the criterion.
    fn check_steady(&mut self, stats: &WorkerStats, t_ns: u64) {
        let Some(spec) = self.steadystate else {
            return;
        };
        let interval_ns = stats.read.series.interval_ns();
        let current = t_ns / interval_ns;
        if current <= self.steady_checked_interval {
            return;
        }
        self.steady_checked_interval = current;
        let window = (spec.duration_ns / interval_ns).max(2);
        let first_counted = spec.ramp_ns.div_ceil(interval_ns);
        if current < first_counted + window {
            return;
        }
        let per_second = NS_PER_S as f64 / interval_ns as f64;
        let (read, write) = (stats.read.series.bins(), stats.write.series.bins());
        let samples: Vec<f64> = (current - window..current)
            .map(|i| {
                let i = i as usize;
                let (r, w) = (read.get(i).copied(), write.get(i).copied());
                let pick = |bin: Option<storlab_stats::IntervalBin>| {
                    bin.map_or(0, |b| if spec.bandwidth { b.bytes } else { b.ios })
                };
                (pick(r) + pick(w)) as f64 * per_second
            })
            .collect();
        if crate::steady::criterion_met(&samples, &spec) {
            self.steady_reached = true;
        }
    }

    /// fio's `rate_min`: when a measurement interval has ended, each direction with a minimum
    /// must have moved at least that rate over it, or the worker fails (fio: "min rate not
    /// met" ends the job). The first interval is skipped, as fio skips its first rate cycle.
    /// Returns the first direction's failure.
    fn check_rate_min(&mut self, stats: &WorkerStats, t_ns: u64) -> Option<String> {
        let interval_ns = stats.read.series.interval_ns();
        let current = t_ns / interval_ns;
        if current <= self.rate_min_checked_interval.max(1) {
            self.rate_min_checked_interval = self.rate_min_checked_interval.max(current);
            return None;
        }
        self.rate_min_checked_interval = current;
        let judged = (current - 1) as usize;
        let minimums = self
            .rate_min_bytes_per_s
            .into_iter()
            .zip(self.rate_min_ios_per_s);
        let mut failure = None;
        for (direction, (minimum_bytes, minimum_ios)) in ["read", "write"].into_iter().zip(minimums)
        {
            let series = if direction == "read" {
                &stats.read.series
            } else {
                &stats.write.series
            };
            // fio checks only the directions the job has moved data in.
            if series.bins().iter().all(|b| b.bytes == 0) {
                continue;
            }
            let bin = series.bins().get(judged).copied().unwrap_or_default();
            let per_second = |amount: u64| {
                u128::from(amount) * u128::from(NS_PER_S) / u128::from(interval_ns.max(1))
            };
            let (bytes_per_s, ios_per_s) = (per_second(bin.bytes), per_second(bin.ios));
            let reason = match (minimum_bytes, minimum_ios) {
                (Some(minimum), _) if bytes_per_s < u128::from(minimum) => format!(
                    "rate_min: {direction} moved {bytes_per_s} B/s over an interval, below the minimum of {minimum} B/s"
                ),
                (_, Some(minimum)) if ios_per_s < u128::from(minimum) => format!(
                    "rate_iops_min: {direction} did {ios_per_s} I/Os per second over an interval, below the minimum of {minimum}"
                ),
                _ => continue,
            };
            failure.get_or_insert(reason);
        }
        failure
    }
}
