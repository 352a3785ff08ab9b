//! fio's `latency_target` for one worker: the queue-depth search, stepped after each completed
//! I/O, which sets the depth, drains the queue, resets the statistics or ends the job.

use super::{InFlight, Window, Worker};
use crate::latency_target::{QueueDepthSearch, SearchStep};
use crate::RunError;
use storlab_job::JobSpec;
use storlab_stats::WorkerStats;

/// Where one worker's latency-target search is.
pub(super) struct LatencySearch {
    /// The queue-depth search, when the job sets a target.
    pub(super) search: Option<Box<QueueDepthSearch>>,
    /// The search stepped down (`Some(false)`) or settled (`Some(true)`: the statistics reset
    /// once drained): no new I/O until the queue has drained.
    quiesce: Option<bool>,
    /// The search's final window met the target: the job issues no more (fio's `td->done`).
    pub(super) done: bool,
    /// The settled search reset the statistics here (fio's `reset_all_stats`): what is
    /// reported counts from then on.
    pub(super) stats_reset_ns: Option<u64>,
    /// Series interval of the statistics, to start them again after a reset.
    interval_ns: u64,
}

impl LatencySearch {
    /// `job`'s search, its statistics in series of `interval_ns`.
    pub(super) fn new(job: &JobSpec, interval_ns: u64) -> LatencySearch {
        LatencySearch {
            search: job
                .latency_target
                .filter(|t| t.searches())
                .map(|target| Box::new(QueueDepthSearch::new(target, job.iodepth, 0))),
            quiesce: None,
            done: false,
            stats_reset_ns: None,
            interval_ns,
        }
    }

    /// How many I/Os may be in flight at first: fio's lat_target_init starts a search at
    /// depth 1; otherwise the job's `depth`.
    pub(super) fn first_depth(&self, depth: usize) -> usize {
        match self.search {
            Some(_) => 1,
            None => depth,
        }
    }

    /// Where measurement starts for a completion in `window`: after a settled search reset
    /// the statistics, they count from there.
    pub(super) fn measure_start_ns(&self, window: Window) -> u64 {
        match self.stats_reset_ns {
            Some(reset_ns) => reset_ns.max(window.measure_start_ns),
            None => window.measure_start_ns,
        }
    }
}

impl Worker {
    /// fio's latency-target search after one completed I/O (io_u.c): the I/O's total latency
    /// against the target, then, past the ramp and unless the queue is draining, the window's
    /// verdict; each step sets the depth, drains the queue or ends the job.
    pub(super) fn search_step(&mut self, io: &InFlight, done_ns: u64, window: Window) {
        let latency = &mut self.latency;
        let Some(search) = latency.search.as_deref_mut() else {
            return;
        };
        let latency_ns = done_ns.saturating_sub(io.queued_ns);
        let mut step = search.on_completion(latency_ns);
        if step == SearchStep::Continue
            && latency.quiesce.is_none()
            && done_ns >= window.measure_start_ns
        {
            step = search.check(done_ns);
        }
        let depth = search.depth() as usize;
        match step {
            SearchStep::Continue => self.queue.depth_limit = depth,
            SearchStep::Quiesce => {
                latency.quiesce.get_or_insert(false);
            }
            SearchStep::QuiesceAndReset => latency.quiesce = Some(true),
            SearchStep::Done => latency.done = true,
            SearchStep::Fatal => {
                let target_ns = search.target_ns();
                self.error.get_or_insert(RunError::Io {
                    offset_bytes: io.offset_bytes,
                    len_bytes: io.len_bytes,
                    source: std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!(
                            "latency of {latency_ns} nsec exceeds latency_target ({target_ns} \
                             nsec) at queue depth 1 (fio's ETIMEDOUT, max latency exceeded)"
                        ),
                    ),
                });
            }
        }
        if let Some(reset) = latency.quiesce {
            // The I/O this completion freed is already off the queue: drained at 0.
            self.queue.depth_limit = 0;
            if self.queue.outstanding() == 0 {
                latency.quiesce = None;
                self.queue.depth_limit = depth;
                search.new_window(done_ns);
                if reset {
                    self.stats = WorkerStats::with_expected_duration(latency.interval_ns, 0);
                    latency.stats_reset_ns = Some(done_ns);
                }
            }
        }
        self.stats.latency_depth = search.depth();
    }
}
