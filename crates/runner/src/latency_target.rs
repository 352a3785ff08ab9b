//! fio 3.33's queue-depth search for a latency target (io_u.c: `lat_target_init`,
//! `lat_target_check`, `lat_target_success`, `__lat_target_failed`, `lat_new_cycle`), on the
//! engine's clock: wall time on files and devices, simulated time on a simulated stack, so a
//! simulated search is deterministic.
//!
//! The depth starts at 1 and doubles after each window whose I/Os met the target (at least
//! `latency_percentile` of them at or under `latency_target`), until a window fails; then it
//! bisects between the last depth that met the target and the first that did not. With
//! `latency_percentile=100` one late I/O fails the window at once. When a success leaves the
//! depth where it was, the search has settled: the statistics are reset, one more window runs
//! at that depth, and the job ends after it (unless `latency_run` keeps it adjusting).

use storlab_job::LatencyTargetSpec;

/// What the worker must do after the search took a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SearchStep {
    /// Go on at `depth()`.
    Continue,
    /// The depth went down: let every I/O in flight finish first (fio's `io_u_quiesce`), then
    /// start a new window.
    Quiesce,
    /// The search settled: let the I/O in flight finish, reset the statistics and run the final
    /// window at this depth.
    QuiesceAndReset,
    /// The last window at the settled depth met the target: the job is done.
    Done,
    /// An I/O missed a target of 100% at depth 1: fio fails the job (ETIMEDOUT, `lat_fatal`).
    Fatal,
}

/// One worker's search (fio's `latency_qd`, `latency_qd_low`, `latency_qd_high`...).
#[derive(Clone, Debug)]
pub(crate) struct QueueDepthSearch {
    spec: LatencyTargetSpec,
    /// The job's `iodepth`: the deepest the search may go.
    max_depth: u32,
    depth: u32,
    depth_low: u32,
    depth_high: u32,
    stable_count: u32,
    /// When the current window started, on the engine's clock.
    window_start_ns: u64,
    /// Completed I/Os when the window started (fio's `latency_ios`).
    window_start_ios: u64,
    /// I/Os over the target in the window (fio's `latency_failed`).
    failed_ios: u64,
    /// Completed I/Os so far (fio's `ddir_rw_sum(io_blocks)`).
    completed_ios: u64,
    /// The final window at the settled depth is running (fio's `latency_end_run`).
    end_run: bool,
}

/// fio 3.33 compares the window against `utime_since_now`, whole µs.
const NS_PER_US: u64 = 1_000;

impl QueueDepthSearch {
    /// fio's `lat_target_init` at the job's start.
    pub(crate) fn new(spec: LatencyTargetSpec, max_depth: u32, now_ns: u64) -> Self {
        QueueDepthSearch {
            spec,
            max_depth: max_depth.max(1),
            depth: 1,
            depth_low: 1,
            depth_high: max_depth.max(1),
            stable_count: 0,
            window_start_ns: now_ns,
            window_start_ios: 0,
            failed_ios: 0,
            completed_ios: 0,
            end_run: false,
        }
    }

    /// How many I/Os may be in flight now (fio's `queue_full`: `cur_depth >= latency_qd`).
    pub(crate) fn depth(&self) -> u32 {
        self.depth
    }

    /// `latency_target`, ns.
    pub(crate) fn target_ns(&self) -> u64 {
        self.spec.target_ns
    }

    /// A read, write or trim completed `latency_ns` after it was queued (fio's
    /// `account_io_completion`, total latency against `latency_target`).
    pub(crate) fn on_completion(&mut self, latency_ns: u64) -> SearchStep {
        self.completed_ios += 1;
        if latency_ns <= self.spec.target_ns {
            return SearchStep::Continue;
        }
        // fio's `lat_target_failed`: at 100% one late I/O fails the window now.
        if self.spec.percentile == storlab_job::latency_numa::LATENCY_PERCENTILE_DEFAULT {
            return self.failed();
        }
        self.failed_ios += 1;
        SearchStep::Continue
    }

    /// fio's `lat_new_cycle`: a new window starts now (after a step, or once the I/O in flight
    /// at a step down finished).
    pub(crate) fn new_window(&mut self, now_ns: u64) {
        self.window_start_ns = now_ns;
        self.window_start_ios = self.completed_ios;
        self.failed_ios = 0;
    }

    /// fio's `lat_target_check`, after each I/O once the job has moved data: judge the window
    /// once it has lasted `latency_window`.
    pub(crate) fn check(&mut self, now_ns: u64) -> SearchStep {
        let window_us = now_ns.saturating_sub(self.window_start_ns) / NS_PER_US;
        if window_us < self.spec.window_us {
            return SearchStep::Continue;
        }
        let ios = self.completed_ios - self.window_start_ios;
        // As fio's double division: a window without I/O is 0/0, NaN, which no percentile
        // meets.
        let success_percent = if ios == 0 {
            f64::NAN
        } else {
            (ios - self.failed_ios) as f64 / ios as f64 * 100.0
        };
        if success_percent >= self.spec.percentile {
            self.succeeded(now_ns)
        } else {
            // fio's lat_target_check ignores the "give up" answer of a failure at depth 1.
            match self.failed() {
                SearchStep::Fatal => SearchStep::Continue,
                step => step,
            }
        }
    }

    /// fio's `__lat_target_failed`: bisect down between the last good depth and this one.
    fn failed(&mut self) -> SearchStep {
        if self.depth == 1 {
            return SearchStep::Fatal;
        }
        self.depth_high = self.depth;
        if self.depth == self.depth_low {
            self.depth_low -= 1;
        }
        self.depth = (self.depth + self.depth_low) / 2;
        self.stable_count = 0;
        SearchStep::Quiesce
    }

    /// fio's `lat_target_success`: double (until a failure set a ceiling), then bisect up.
    fn succeeded(&mut self, now_ns: u64) -> SearchStep {
        let previous = self.depth;
        self.depth_low = self.depth;
        if self.depth + 1 == self.depth_high {
            // fio: stuck one below the ceiling, the final latency would likely be under the
            // target; after three such successes in a row the ceiling goes up by one.
            self.stable_count += 1;
            if self.stable_count >= STABLE_WINDOWS_BEFORE_RAISING_CEILING {
                self.depth_high += 1;
                self.stable_count = 0;
            }
        }
        if self.depth_high != self.max_depth {
            self.depth = (self.depth + self.depth_high) / 2;
        } else {
            self.depth *= 2;
        }
        self.depth = self.depth.min(self.max_depth);
        let mut step = SearchStep::Continue;
        if !self.spec.run && self.depth == previous {
            if self.end_run {
                step = SearchStep::Done;
            } else {
                self.end_run = true;
                step = SearchStep::QuiesceAndReset;
            }
        }
        self.new_window(now_ns);
        step
    }
}

/// fio 3.33's "naive heuristic" (io_u.c, `lat_target_success`): successes in a row one below
/// the ceiling before the ceiling is raised by one.
const STABLE_WINDOWS_BEFORE_RAISING_CEILING: u32 = 3;

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(percentile: f64, run: bool) -> LatencyTargetSpec {
        LatencyTargetSpec {
            target_ns: 1_000_000,
            window_us: 100,
            percentile,
            run,
        }
    }

    const WINDOW_NS: u64 = 100 * NS_PER_US;

    /// Drive the search with a drive whose I/Os meet the target up to `good_depth` and miss it
    /// deeper, one judged window after another; returns the depths it tried.
    fn search(good_depth: u32, max_depth: u32, run: bool, windows: usize) -> Vec<u32> {
        let mut s = QueueDepthSearch::new(spec(99.0, run), max_depth, 0);
        let mut now = 0;
        let mut depths = vec![s.depth()];
        for _ in 0..windows {
            let latency = if s.depth() <= good_depth {
                1_000
            } else {
                2_000_000
            };
            for _ in 0..10 {
                s.on_completion(latency);
            }
            now += WINDOW_NS;
            match s.check(now) {
                SearchStep::Quiesce => s.new_window(now),
                SearchStep::Done => return depths,
                _ => {}
            }
            depths.push(s.depth());
        }
        depths
    }

    #[test]
    fn depth_doubles_then_bisects_to_the_deepest_good_depth_as_fio() {
        // Worked by hand from io_u.c: 1 2 4 8 16 (fail) -> (16+8)/2=12 (fail) -> 10 (fail)
        // -> 9 (ok) -> (9+10)/2=9: settled; final window at 9, then done.
        assert_eq!(
            search(9, 32, false, 100),
            vec![1, 2, 4, 8, 16, 12, 10, 9, 9]
        );
    }

    #[test]
    fn a_good_drive_climbs_to_iodepth_and_stops() {
        assert_eq!(search(u32::MAX, 16, false, 100), vec![1, 2, 4, 8, 16, 16]);
    }

    #[test]
    fn latency_run_keeps_adjusting_and_raises_the_ceiling_after_three_stable_windows() {
        let depths = search(9, 32, true, 20);
        assert_eq!(&depths[..8], &[1, 2, 4, 8, 16, 12, 10, 9]);
        // At 9 below the ceiling 10, three successes raise the ceiling to 11, the next one
        // bisects to 10, which fails again: it oscillates and never ends.
        assert_eq!(depths.len(), 21);
        assert!(
            depths[8..].iter().all(|d| (9..=10).contains(d)),
            "{depths:?}"
        );
        assert!(depths[8..].contains(&10), "{depths:?}");
    }

    #[test]
    fn at_100_percent_one_late_io_steps_down_at_once_and_fails_the_job_at_depth_1() {
        let mut s = QueueDepthSearch::new(spec(100.0, false), 8, 0);
        assert_eq!(s.on_completion(2_000_000), SearchStep::Fatal);
        s.on_completion(1_000);
        assert_eq!(s.check(WINDOW_NS), SearchStep::Continue);
        assert_eq!(s.depth(), 2);
        assert_eq!(s.on_completion(2_000_000), SearchStep::Quiesce);
        assert_eq!(s.depth(), 1);
    }

    #[test]
    fn a_window_is_judged_only_once_it_has_lasted_latency_window() {
        let mut s = QueueDepthSearch::new(spec(99.0, false), 8, 0);
        s.on_completion(1_000);
        assert_eq!(s.check(WINDOW_NS - NS_PER_US), SearchStep::Continue);
        assert_eq!(s.depth(), 1);
        s.check(WINDOW_NS);
        assert_eq!(s.depth(), 2);
        // A window without a completion is fio's 0/0: a failure.
        assert_eq!(s.check(2 * WINDOW_NS), SearchStep::Quiesce);
        assert_eq!(s.depth(), 1);
    }
}
