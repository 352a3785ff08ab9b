//! When a worker may issue: fio's rate ceilings (`rate`, `rate_iops`, `rate_process`) and its
//! `thinktime` stalls. Each holds the queue back and says until when.

use super::drive::START_DELAY_POLL_NS;
use super::{Worker, NS_PER_S};
use crate::offsets::PlannedIo;
use storlab_engine::{IoDirection, IoEngine};
use storlab_job::{JobSpec, ThinkSpec};

/// Stream numbers of the `rate_process=poisson` draws, clear of the offset streams (one per
/// worker, from 0).
const POISSON_STREAM_BASE: u64 = 1 << 32;

/// fio's rate ceilings of one worker, per direction (read, write).
pub(super) struct Rate {
    /// Minimum ns between two I/Os of each direction (rate limiting).
    interval_ns: [Option<u64>; 2],
    /// Bandwidth ceiling of each direction, bytes per second: an I/O of B bytes then takes
    /// B / rate of the direction's time.
    bytes_per_s: [Option<u64>; 2],
    /// When the next I/O of each direction may go.
    pub(super) next_ns: [u64; 2],
    /// fio's `rate_process=poisson`: the draws of the exponential spacing of rated I/Os.
    poisson: Option<rand_chacha::ChaCha8Rng>,
    /// Reads and writes both (`rwmixread` strictly between 0 and 100).
    mixed: bool,
}

/// What the gates before an I/O decided.
pub(super) enum Gate {
    /// The I/O goes now.
    Go,
    /// Nothing goes until then (`None`: until an I/O completes).
    Wait(Option<u64>),
    /// The I/O of the other direction was drawn instead: choose again.
    Redrawn,
}

impl Rate {
    /// The ceilings `job` sets for its worker `worker_index`.
    pub(super) fn new(job: &JobSpec, worker_index: u32) -> Rate {
        let per_second = |r: Option<u64>| r.filter(|r| *r > 0).map(|r| NS_PER_S / r.min(NS_PER_S));
        Rate {
            interval_ns: [
                per_second(job.rate_iops.read),
                per_second(job.rate_iops.write),
            ],
            bytes_per_s: [job.rate_bytes.read, job.rate_bytes.write],
            next_ns: [0; 2],
            poisson: job.rate_poisson.then(|| {
                use rand_core::SeedableRng;
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(job.seed);
                // Its own stream, so the offsets stay those of the linear job.
                rng.set_stream(u64::from(worker_index) + POISSON_STREAM_BASE);
                rng
            }),
            mixed: (1..100).contains(&job.read_percent) && job.replay.is_none(),
        }
    }

    fn index(direction: IoDirection) -> usize {
        usize::from(direction == IoDirection::Write)
    }

    /// The stricter of the I/O and byte ceilings of direction `rate` for an I/O of
    /// `len_bytes`: the mean spacing from the previous I/O (`None`: not rated).
    fn mean_spacing_ns(&self, rate: usize, len_bytes: u32) -> Option<u64> {
        let bytes_interval = self.bytes_per_s[rate].map(|per_s| {
            let ns = u128::from(len_bytes) * u128::from(NS_PER_S) / u128::from(per_s.max(1));
            u64::try_from(ns).unwrap_or(u64::MAX).max(1)
        });
        match (self.interval_ns[rate], bytes_interval) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// The spacing before a rated I/O whose rate's mean spacing is `mean_ns`: that mean for
    /// fio's linear process, an exponential draw of that mean for `rate_process=poisson`.
    pub(super) fn spacing_ns(&mut self, mean_ns: u64) -> u64 {
        match self.poisson.as_mut() {
            Some(rng) => {
                use rand_core::RngCore;
                // 53 random bits: a uniform in [0, 1) with a double's precision.
                let uniform = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                (-(1.0 - uniform).ln() * mean_ns as f64) as u64
            }
            None => mean_ns,
        }
    }
}

impl Worker {
    /// fio's rate ceilings for `io` at `now_ns`: it goes (its direction's next slot then
    /// moves on), waits, or, in a mixed job whose other direction is due, gives way to an I/O
    /// of that direction.
    pub(super) fn pace(&mut self, io: &PlannedIo, now_ns: u64) -> Gate {
        let rate = Rate::index(io.direction);
        let Some(interval) = self.rate.mean_spacing_ns(rate, io.len_bytes) else {
            return Gate::Go;
        };
        let next_ns = self.rate.next_ns;
        if next_ns[rate] > now_ns {
            // As fio's rate_ddir: in a mixed job the other direction goes while this one is
            // ahead of its rate, unless it is ahead of its own; then wait for whichever comes
            // due first.
            let other = 1 - rate;
            if !self.rate.mixed {
                return Gate::Wait(Some(next_ns[rate]));
            }
            if next_ns[other] <= now_ns {
                let direction = [IoDirection::Read, IoDirection::Write][other];
                self.pending = self.generator.next(Some(direction));
                self.progress.generator_done = self.pending.is_none();
                return Gate::Redrawn;
            }
            return Gate::Wait(Some(next_ns[rate].min(next_ns[other])));
        }
        // fio's `rate_process=poisson` (io_u.c, `usec_for_io`): the spacing is drawn from the
        // exponential distribution of the rate's mean, so I/Os arrive as a Poisson process of
        // the same rate.
        // fio's next slot is the time its rate gives the I/O issued so far, counted from the
        // first (io_u.c, `usec_for_io`): a worker held back (by a flow, a stall, a slow
        // device) catches up at once instead of losing the time, as fio's t0011 checks.
        let interval = self.rate.spacing_ns(interval);
        let first = next_ns[rate] == 0;
        self.rate.next_ns[rate] = if first { now_ns } else { next_ns[rate] } + interval;
        Gate::Go
    }
}

/// fio's `thinktime` family: where one worker is between its stalls.
pub(super) struct Think {
    pub(super) spec: ThinkSpec,
    /// I/Os counted towards `thinktime_blocks` (completed, or issued with
    /// `thinktime_blocks_type=issue`), and their number at the last stall.
    counted_ios: u64,
    counted_at_last_stall: u64,
    /// When the last stall ended (start of the I/O time `thinktime_iotime` measures).
    pub(super) last_stall_end_ns: u64,
    /// A stall is due: no new I/O until the worker's queue has drained and the stall is over.
    due: bool,
    /// The stall in progress ends here.
    until_ns: Option<u64>,
    /// The `thinktime_spin` part of the stall in progress burns CPU until here.
    spin_until_ns: Option<u64>,
}

impl Think {
    pub(super) fn new(spec: ThinkSpec) -> Think {
        Think {
            spec,
            counted_ios: 0,
            counted_at_last_stall: 0,
            last_stall_end_ns: 0,
            due: false,
            until_ns: None,
            spin_until_ns: None,
        }
    }

    /// Counts one I/O towards `thinktime_blocks` at `now_ns`.
    pub(super) fn count_io(&mut self, now_ns: u64) {
        self.counted_ios += 1;
        self.check(now_ns);
    }

    /// Marks a `thinktime` stall as due when `thinktime_blocks` I/Os were counted since the
    /// last one, or `thinktime_iotime` of I/O passed (fio's `handle_thinktime`: with
    /// `thinktime_iotime` and no `thinktime_blocks`, time alone decides).
    fn check(&mut self, now_ns: u64) {
        if self.due || self.until_ns.is_some() {
            return;
        }
        let think = self.spec;
        let by_time = think.every_io_ns > 0
            && now_ns.saturating_sub(self.last_stall_end_ns) >= think.every_io_ns;
        let by_count = (think.every_io_ns == 0 || think.every_ios.is_some())
            && self.counted_ios
                >= self.counted_at_last_stall + u64::from(think.every_ios.unwrap_or(1));
        if by_time || by_count {
            self.due = true;
            self.counted_at_last_stall = self.counted_ios;
        }
    }

    /// Where the worker is in a `thinktime` stall: `None` to go on issuing, or `Some(wait)` to
    /// stop filling for now (`wait` is when the stall ends, or `None` while the queue drains
    /// (`busy`: I/O of the worker queued or in flight), as fio's `io_u_quiesce`). The
    /// `thinktime_spin` part burns CPU on an engine of its own (a real one); on a shared
    /// virtual timeline every part of the stall is time passing.
    pub(super) fn stall(
        &mut self,
        engine: &mut dyn IoEngine,
        now_ns: u64,
        busy: impl Fn() -> bool,
    ) -> Option<Option<u64>> {
        if let Some(until_ns) = self.until_ns {
            return self.go_on_stalling(engine, now_ns, until_ns);
        }
        if !self.due {
            return None;
        }
        if busy() {
            return Some(None);
        }
        self.due = false;
        let start_ns = engine.now_ns();
        self.until_ns = Some(start_ns + self.spec.think_ns);
        if self.spec.spin_ns > 0 && !engine.capabilities().shared_timeline {
            self.spin_until_ns = Some(start_ns + self.spec.spin_ns);
        }
        self.go_on_stalling(engine, start_ns, start_ns + self.spec.think_ns)
    }

    /// The stall in progress, which ends at `until_ns`: spin its spinning part, then wait.
    fn go_on_stalling(
        &mut self,
        engine: &mut dyn IoEngine,
        now_ns: u64,
        until_ns: u64,
    ) -> Option<Option<u64>> {
        let mut now_ns = now_ns;
        if let Some(spin_until_ns) = self.spin_until_ns {
            if now_ns < spin_until_ns {
                // In slices, so the loop sees a stop between them (as any wait).
                let slice_end_ns = spin_until_ns.min(now_ns + START_DELAY_POLL_NS);
                while now_ns < slice_end_ns {
                    std::hint::spin_loop();
                    now_ns = engine.now_ns();
                }
                if now_ns < spin_until_ns {
                    return Some(Some(now_ns));
                }
            }
            self.spin_until_ns = None;
        }
        if now_ns < until_ns {
            return Some(Some(until_ns));
        }
        self.until_ns = None;
        self.last_stall_end_ns = now_ns;
        None
    }
}
