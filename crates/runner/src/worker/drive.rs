//! The drive loop of the workers on one engine: each fill submitted, each reap's completions
//! handed to their workers, until every worker has finished, the deadline passes or a stop.

use super::{batched, Window, Worker};
use crate::live::LivePublisher;
use crate::RunError;
use std::sync::atomic::{AtomicBool, Ordering};
use storlab_engine::{IoCompletion, IoEngine};
use storlab_stats::ResourceUsage;

#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub ramp_ns: u64,
    pub runtime_ns: Option<u64>,
    /// fio's `startdelay` still to wait before the first I/O: no part of the ramp or runtime.
    pub start_delay_ns: u64,
}

/// Longest single wait on a wall clock (a start delay, a `thinktime`, a rate limit, an iolog's
/// `wait`, a `thinktime_spin`), so Ctrl-C, SIGTERM or another job's `exitall` is seen soon.
pub(super) const START_DELAY_POLL_NS: u64 = 100_000_000;

/// Wait on the engine's clock until `until_ns`, or for [`START_DELAY_POLL_NS`] at most on a
/// wall clock: the caller's loop looks at its stop flags after each wait and waits again. A
/// virtual clock moves in one step, which nothing outside can interrupt anyway.
pub(crate) fn wait_a_while(engine: &mut dyn IoEngine, until_ns: u64) {
    if engine.capabilities().shared_timeline {
        engine.wait_until_ns(until_ns);
    } else {
        let now_ns = engine.now_ns();
        engine.wait_until_ns(until_ns.min(now_ns.saturating_add(START_DELAY_POLL_NS)));
    }
}

/// What the drive loop needs to queue requests and hand them to the engine.
pub(super) struct Issue {
    pub(super) synchronous: bool,
    /// The worker of each engine slot (slots are handed out contiguously per worker).
    slot_owner: Vec<u32>,
    /// Slots queued since the last submit.
    pub(super) queued_slots: Vec<u32>,
    /// Per worker: I/Os queued in one fill (each entry of the filled range is overwritten).
    queued_by_worker: Vec<u64>,
    /// Per worker: completions of one reap; all 0 between reaps (each count is put back to 0
    /// as it is used, so no pass clears the whole vector: at depth 1 that clearing was a
    /// `memset` call per I/O, 3% of a null-engine I/O's cost in `perf record`).
    reaped_by_worker: Vec<u64>,
}

impl Issue {
    /// The drive's bookkeeping for `workers`, on an engine that does each I/O inside submit
    /// when `synchronous`.
    fn new(workers: &[Worker], synchronous: bool) -> Issue {
        let total_slots: usize = workers.iter().map(|w| w.queue.in_flight.len()).sum();
        // Map an engine slot to its worker without searching: slots are handed out contiguously.
        let slots_end = workers.iter().map(|w| w.queue.slots().end).max();
        let mut slot_owner = vec![0u32; slots_end.unwrap_or(0) as usize];
        for (i, w) in workers.iter().enumerate() {
            for slot in w.queue.slots() {
                slot_owner[slot as usize] = i as u32;
            }
        }
        Issue {
            synchronous,
            slot_owner,
            queued_slots: Vec::with_capacity(total_slots),
            queued_by_worker: vec![0u64; workers.len()],
            reaped_by_worker: vec![0u64; workers.len()],
        }
    }

    /// Queue what `workers[which]` may issue at `now_ns` and submit it in one call. Returns the
    /// earliest time a rate or think-time wait held an I/O back, and when the submit returned
    /// (`None` when nothing was queued).
    pub(super) fn fill_and_submit(
        &mut self,
        engine: &mut dyn IoEngine,
        workers: &mut [Worker],
        which: std::ops::Range<usize>,
        now_ns: u64,
        measuring: bool,
    ) -> Result<(Option<u64>, Option<u64>), RunError> {
        let synchronous = self.synchronous;
        let mut earliest_rate_ns: Option<u64> = None;
        self.queued_slots.clear();
        let queued_by_worker = &mut self.queued_by_worker[which.clone()];
        for (w, queued_here) in workers[which.clone()]
            .iter_mut()
            .zip(queued_by_worker.iter_mut())
        {
            let in_flight_before = w.queue.outstanding() as u64;
            let (queued, wait) = w.fill(engine, now_ns, &mut self.queued_slots, usize::MAX)?;
            *queued_here = queued as u64;
            if w.finished_issuing() {
                w.leave_flow();
            }
            if measuring {
                // As fio's io_u_mark_depth: each I/O at the depth it raised the queue to. A
                // synchronous engine does each I/O inside submit, one after another: only
                // one is ever in flight, as fio counts it.
                for depth in in_flight_before + 1..=in_flight_before + queued as u64 {
                    w.stats
                        .depth
                        .mark_depth(if synchronous { 1 } else { depth });
                }
            }
            if let Some(t) = wait {
                earliest_rate_ns = Some(earliest_rate_ns.map_or(t, |e: u64| e.min(t)));
            }
        }
        if self.queued_slots.is_empty() {
            return Ok((earliest_rate_ns, None));
        }
        let before_ns = if synchronous {
            Some(engine.now_ns())
        } else {
            None
        };
        engine.submit().map_err(RunError::Engine)?;
        // Synchronous engines do the I/O inside submit, so it belongs to completion latency.
        let submitted_ns = before_ns.unwrap_or_else(|| engine.now_ns());
        for &slot in &self.queued_slots {
            let w = &mut workers[self.slot_owner[slot as usize] as usize];
            w.queue.in_flight[(slot - w.queue.slot_base) as usize].submitted_ns = submitted_ns;
        }
        if measuring {
            for (w, &queued) in workers[which].iter_mut().zip(queued_by_worker.iter()) {
                if synchronous {
                    // fio counts an engine without a commit step (psync, sync) as one
                    // submit and one completion of one I/O each.
                    for _ in 0..queued {
                        w.stats.depth.mark_submit(1);
                        w.stats.depth.mark_complete(1);
                    }
                } else if queued > 0 {
                    w.stats.depth.mark_submit(queued);
                }
            }
        }
        Ok((earliest_rate_ns, Some(submitted_ns)))
    }

    /// As fio's io_u_mark_complete: each worker's `completions` returned by one reap.
    fn mark_reaped(&mut self, workers: &mut [Worker], completions: &[IoCompletion]) {
        let reaped_by_worker = &mut self.reaped_by_worker;
        for c in completions {
            if let Some(&owner) = self.slot_owner.get(c.slot as usize) {
                reaped_by_worker[owner as usize] += 1;
            }
        }
        for (w, reaped) in workers.iter_mut().zip(reaped_by_worker.iter_mut()) {
            if *reaped > 0 {
                w.stats.depth.mark_complete(*reaped);
                *reaped = 0;
            }
        }
    }

    /// Hands each of `completions` to its worker; with `refill`, each worker's queue is filled
    /// and submitted again right after its completion, unless past the deadline (a rate or
    /// think-time wait is left to the caller's loop, which asks again). `reaped_at_ns`: the
    /// clock after the reap, if known. Returns the clock after the last submit, if known.
    fn hand_over(
        &mut self,
        engine: &mut dyn IoEngine,
        workers: &mut [Worker],
        completions: &[IoCompletion],
        bounds: Bounds<'_>,
        refill: bool,
        reaped_at_ns: Option<u64>,
    ) -> Result<Option<u64>, RunError> {
        // When each request goes over as its slot frees, the clock read after one submit is
        // "now" for the next refill (the completion handled in between takes tens of ns).
        let mut refill_ns = reaped_at_ns;
        for c in completions {
            let Some(i) = self.slot_owner.get(c.slot as usize).copied() else {
                return Err(RunError::Protocol(format!(
                    "engine completed unknown slot {}",
                    c.slot
                )));
            };
            let i = i as usize;
            workers[i].complete(engine, *c, bounds.window);
            if refill {
                let now_ns = refill_ns.unwrap_or_else(|| engine.now_ns());
                if bounds.past_deadline(now_ns) {
                    continue;
                }
                let measuring = now_ns >= bounds.window.measure_start_ns;
                let (_, submitted_ns) =
                    self.fill_and_submit(engine, workers, i..i + 1, now_ns, measuring)?;
                if submitted_ns.is_some() {
                    refill_ns = submitted_ns;
                }
            }
        }
        Ok(refill_ns)
    }
}

/// Wait out `delay_ns` on the engine's clock (fio's `startdelay`) in short steps. Returns
/// false when `stop` or `ended` was set meanwhile: the job does not start (fio lets a job that
/// another job's `exitall` ended before its start never start).
fn wait_start_delay(
    engine: &mut dyn IoEngine,
    delay_ns: u64,
    stop: &AtomicBool,
    ended: &AtomicBool,
) -> bool {
    let start_at_ns = engine.now_ns().saturating_add(delay_ns);
    if engine.capabilities().shared_timeline {
        // Simulated time passes in one step, however long: nothing can interrupt it.
        engine.wait_until_ns(start_at_ns);
        return !(stop.load(Ordering::Relaxed) || ended.load(Ordering::Relaxed));
    }
    loop {
        if stop.load(Ordering::Relaxed) || ended.load(Ordering::Relaxed) {
            return false;
        }
        let now_ns = engine.now_ns();
        if now_ns >= start_at_ns {
            return true;
        }
        engine.wait_until_ns(start_at_ns.min(now_ns.saturating_add(START_DELAY_POLL_NS)));
    }
}

/// What bounds one drive: its measurement window and what stops it from outside.
#[derive(Clone, Copy)]
struct Bounds<'a> {
    window: Window,
    /// Ctrl-C, SIGTERM: the run is interrupted.
    stop: &'a AtomicBool,
    /// Another job's `exitall`: an end like the deadline's.
    ended: &'a AtomicBool,
}

impl Bounds<'_> {
    /// Whether the workers may issue no more at `now_ns`: past the deadline, or ended.
    fn past_deadline(&self, now_ns: u64) -> bool {
        self.window.deadline_ns.is_some_and(|d| now_ns >= d) || self.ended.load(Ordering::Relaxed)
    }
}

/// Run `workers` on `engine` until each has finished, the deadline passes, `ended` is set
/// (another job's `exitall`: an end like the deadline's), or `stop` is set. Returns whether
/// the run was interrupted by `stop`.
pub fn drive(
    engine: &mut dyn IoEngine,
    workers: &mut [Worker],
    timing: Timing,
    stop: &AtomicBool,
    ended: &AtomicBool,
    live: Option<&crate::LiveCounters>,
) -> Result<bool, RunError> {
    if timing.start_delay_ns > 0 && !wait_start_delay(engine, timing.start_delay_ns, stop, ended) {
        return Ok(stop.load(Ordering::Relaxed));
    }
    let synchronous = !engine.capabilities().queued;
    let mut issue = Issue::new(workers, synchronous);
    for w in workers.iter_mut() {
        w.open_logs(synchronous)?;
    }
    let usage_start = ResourceUsage::thread_now();
    let start_ns = engine.now_ns();
    let window = Window {
        measure_start_ns: start_ns + timing.ramp_ns,
        deadline_ns: timing.runtime_ns.map(|r| start_ns + timing.ramp_ns + r),
    };
    for w in workers.iter_mut() {
        w.start(start_ns, window);
    }
    let bounds = Bounds {
        window,
        stop,
        ended,
    };
    // The live view's periods, published only while a display watches.
    let simulated = engine.capabilities().shared_timeline;
    let mut publisher = live.and_then(|live| {
        live.publisher(
            workers,
            window.measure_start_ns,
            window.deadline_ns,
            simulated,
        )
    });
    if let Some(publisher) = publisher.as_mut() {
        publisher.with_snapshots(engine.name(), engine.capabilities(), window, usage_start);
    }
    // fio's default (`iodepth_batch_submit=1`) where a device serves requests meanwhile: each
    // completion's slot is refilled and handed over before the next completion is handled.
    let submit_each = !synchronous && engine.submits_each_request();
    // fio's `iodepth_batch*` and `iodepth_low` other than their defaults: fio's own loop, for
    // a worker with an engine of its own (one worker of a simulated drive's shared timeline).
    let batched = !synchronous && workers.len() == 1 && workers[0].queue.io_batch.is_some();
    debug_assert!(
        batched || !workers.iter().any(|w| w.queue.fio_null_busy),
        "fio's busy null engine runs in fio's own loop"
    );
    let interrupted = if batched {
        batched::drive(
            engine,
            &mut workers[0],
            &mut issue,
            window,
            stop,
            ended,
            publisher.as_mut(),
        )?
    } else {
        issue_and_reap(
            engine,
            workers,
            &mut issue,
            bounds,
            submit_each,
            publisher.as_mut(),
        )?
    };
    if !interrupted {
        for w in workers.iter_mut() {
            w.flush_at_end(engine)?;
        }
    }
    let end_ns = engine.now_ns();
    if let Some(publisher) = publisher {
        publisher.finish(end_ns, workers);
    }
    let usage = ResourceUsage::thread_now() - usage_start;
    for w in workers.iter_mut() {
        w.stop_issuing()?;
    }
    charge_time(workers, window, end_ns, usage);
    Ok(interrupted)
}

/// The runner's own loop (fio's defaults): fill every worker's queue and submit, reap, hand
/// each completion to its worker (and, with `submit_each`, refill its slot at once), until
/// every worker has finished, the deadline passes or a stop. Returns whether it was stopped.
/// `live`: the live view's publisher, shown each reap's time before its completions count.
fn issue_and_reap(
    engine: &mut dyn IoEngine,
    workers: &mut [Worker],
    issue: &mut Issue,
    bounds: Bounds<'_>,
    submit_each: bool,
    mut live: Option<&mut LivePublisher<'_>>,
) -> Result<bool, RunError> {
    let total_slots: usize = workers.iter().map(|w| w.queue.in_flight.len()).sum();
    let mut completions: Vec<IoCompletion> = Vec::with_capacity(total_slots);
    let mut interrupted = false;
    // Right after a reap, the newest completion time is "now" to within the runner's own few
    // tens of ns: reusing it saves a clock read per loop, most of the cost of a QD1 null run.
    let mut reaped_at_ns: Option<u64> = None;
    let window = bounds.window;
    loop {
        let now_ns = reaped_at_ns.take().unwrap_or_else(|| engine.now_ns());
        let past_deadline = bounds.past_deadline(now_ns);
        if bounds.stop.load(Ordering::Relaxed) {
            interrupted = true;
        }
        let earliest_rate_ns = if !past_deadline && !interrupted {
            let measuring = now_ns >= window.measure_start_ns;
            let all = 0..workers.len();
            issue
                .fill_and_submit(engine, workers, all, now_ns, measuring)?
                .0
        } else {
            None
        };
        let outstanding: usize = workers.iter().map(|w| w.queue.outstanding()).sum();
        if outstanding == 0 {
            let more =
                !past_deadline && !interrupted && workers.iter().any(|w| !w.finished_issuing());
            match earliest_rate_ns {
                Some(t) if more => {
                    wait_a_while(engine, window.deadline_ns.map_or(t, |d| t.min(d)));
                    continue;
                }
                // Held with nothing in flight and no time to wait for (a flow member ahead of
                // its share, fio's busy loop): the thread hands its core over before it looks
                // again, so on a loaded machine the member it waits for runs now rather than at
                // the end of this one's time slice (t0011 under a build: 821 IOPS instead of
                // 1000; fio's jobs are processes in scheduling groups of their own).
                _ if more => {
                    std::thread::yield_now();
                    continue;
                }
                _ => break,
            }
        }
        completions.clear();
        engine.reap(1, &mut completions).map_err(RunError::Engine)?;
        reaped_at_ns = completions.iter().map(|c| c.done_ns).max();
        if let (Some(publisher), Some(at_ns)) = (live.as_deref_mut(), reaped_at_ns) {
            publisher.at(at_ns, workers);
        }
        if !issue.synchronous && reaped_at_ns.is_some_and(|t| t >= window.measure_start_ns) {
            issue.mark_reaped(workers, &completions);
        }
        let refill = submit_each && !interrupted;
        reaped_at_ns =
            issue.hand_over(engine, workers, &completions, bounds, refill, reaped_at_ns)?;
    }
    Ok(interrupted)
}

/// Charges the drive's time to `workers`, the engine's clock at `end_ns`: each worker's
/// elapsed time within `window`, and the driving thread's `usage` to the first.
fn charge_time(workers: &mut [Worker], window: Window, end_ns: u64, usage: ResourceUsage) {
    for (i, w) in workers.iter_mut().enumerate() {
        let reset_ns = w.latency.stats_reset_ns;
        charge_stats(&mut w.stats, reset_ns, i == 0, window, end_ns, usage);
    }
}

/// The workers' statistics as [`charge_time`] would leave them had the drive ended at
/// `now_ns` with the thread's `usage` so far: fio's `--status-interval` snapshot of running
/// jobs (live.rs), taken on the drive's own thread.
pub(crate) fn charged_snapshot(
    workers: &[Worker],
    window: Window,
    now_ns: u64,
    usage: ResourceUsage,
) -> Vec<storlab_stats::WorkerStats> {
    workers
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let mut stats = w.stats.clone();
            let reset_ns = w.latency.stats_reset_ns;
            charge_stats(&mut stats, reset_ns, i == 0, window, now_ns, usage);
            stats
        })
        .collect()
}

/// One worker's share of [`charge_time`]; `first`: the worker the thread's usage goes to.
fn charge_stats(
    stats: &mut storlab_stats::WorkerStats,
    stats_reset_ns: Option<u64>,
    first: bool,
    window: Window,
    end_ns: u64,
    usage: ResourceUsage,
) {
    let end_ns = window.deadline_ns.map_or(end_ns, |d| end_ns.min(d));
    let measured_ns = end_ns.saturating_sub(window.measure_start_ns);
    stats.elapsed_ns = match stats_reset_ns {
        // A settled latency search restarted the statistics (and fio's runtime) there.
        Some(reset_ns) => end_ns
            .saturating_sub(reset_ns.max(window.measure_start_ns))
            .max(stats.elapsed_ns),
        None => measured_ns.max(stats.elapsed_ns),
    };
    // One thread drove them all: its CPU time, context switches and page faults (fio's
    // `ctx`, `minf`, `majf`) are charged to the first worker only.
    if first {
        stats.cpu = usage.cpu;
        stats.context_switches = usage.context_switches;
        stats.minor_faults = usage.minor_faults;
        stats.major_faults = usage.major_faults;
    }
}
