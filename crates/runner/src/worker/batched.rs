//! fio 3.33's issue/reap loop for a job that sets `iodepth_batch_submit`,
//! `iodepth_batch_complete_min`/`_max` or `iodepth_low` away from their defaults (backend.c
//! `do_io` and `wait_for_completions`, io_u.c `io_u_queued_complete` and `io_u_quiesce`,
//! ioengines.c `td_io_queue`, `td_io_commit` and `td_io_getevents`), for one worker on an
//! engine of its own, as one fio thread. fio's defaults keep the runner's own loop
//! (`drive::drive`), which does the same with less bookkeeping.

use super::drive::Issue;
use super::{Window, Worker};
use crate::live::LivePublisher;
use crate::RunError;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use storlab_engine::{IoCompletion, IoEngine};
use storlab_job::IoBatch;

/// Completions on their way from the engine to the worker.
struct Reaper<'a, 'l> {
    /// Returned by the engine beyond what one reap may take (`iodepth_batch_complete_max`):
    /// fio leaves those in the kernel's ring for its next `getevents`.
    ready: VecDeque<IoCompletion>,
    scratch: Vec<IoCompletion>,
    window: Window,
    /// The live view's publisher, shown each batch's newest time before it counts.
    live: Option<&'a mut LivePublisher<'l>>,
    /// fio's engines poll when `iodepth_batch_complete_min` is 0: they look without waiting,
    /// again and again, until the minimum is there (io_uring.c, libaio.c `actual_min`). Not
    /// on a virtual clock, which only a waiting reap moves on.
    polls: bool,
}

impl Reaper<'_, '_> {
    fn measuring(&self, engine: &dyn IoEngine) -> bool {
        engine.now_ns() >= self.window.measure_start_ns
    }
}

/// Run `w` on `engine` as fio's `do_io` runs a thread with `batch`, until it has finished, the
/// deadline passes, `ended` is set or `stop` is set (then returns true). Each turn queues one
/// I/O (committing every `batch.submit`), then reaps when the queue is full or, with fio's
/// polling (`iodepth_batch_complete_min=0` and `_max=0`), after every I/O.
pub(super) fn drive(
    engine: &mut dyn IoEngine,
    w: &mut Worker,
    issue: &mut Issue,
    window: Window,
    stop: &AtomicBool,
    ended: &AtomicBool,
    live: Option<&mut LivePublisher<'_>>,
) -> Result<bool, RunError> {
    let Some(batch) = w.queue.io_batch else {
        return Err(RunError::Protocol(
            "batched issue loop started for a job without batching".into(),
        ));
    };
    let mut reaper = Reaper {
        ready: VecDeque::with_capacity(w.queue.in_flight.len()),
        scratch: Vec::with_capacity(w.queue.in_flight.len()),
        window,
        live,
        polls: batch.complete_min == 0 && !engine.capabilities().shared_timeline,
    };
    let mut interrupted = false;
    loop {
        let now_ns = engine.now_ns();
        if stop.load(Ordering::Relaxed) {
            interrupted = true;
        }
        let past_deadline =
            window.deadline_ns.is_some_and(|d| now_ns >= d) || ended.load(Ordering::Relaxed);
        if past_deadline || interrupted {
            drain_at_end(engine, w, issue, batch, &mut reaper)?;
            break;
        }
        let measuring = now_ns >= window.measure_start_ns;
        let (queued, wait) = w.fill(engine, now_ns, &mut issue.queued_slots, 1)?;
        if queued == 0 {
            if w.finished_issuing() {
                drain_at_end(engine, w, issue, batch, &mut reaper)?;
                w.leave_flow();
                break;
            }
            // Nothing could go: the job waits (rate, think time, a sync that needs its queue
            // empty, an overlapping I/O). fio empties its queue first (`io_u_quiesce`).
            quiesce(engine, w, issue, batch, &mut reaper)?;
            if let Some(t) = wait {
                super::drive::wait_a_while(engine, window.deadline_ns.map_or(t, |d| t.min(d)));
            }
            continue;
        }
        if w.queue.fio_null_busy {
            requeue_after_busy(engine, w, issue, &mut reaper)?;
        }
        // td_io_queue: the engine is committed once `iodepth_batch_submit` I/Os are queued.
        w.queue.batch_queued += 1;
        if w.queue.batch_queued >= batch.submit {
            commit(engine, w, issue, measuring)?;
        }
        // do_io: fio's queue is full when no I/O unit is free, queued or in flight.
        let full = w.queue.free_slots.is_empty();
        if full || batch.polls() {
            wait_for_completions(engine, w, issue, batch, full, &mut reaper)?;
        }
    }
    Ok(interrupted)
}

/// fio's `td_io_commit`: the I/Os queued since the last one are counted at the depth the queue
/// has now (`io_u_mark_depth(td, io_u_queued)`), and the engine submits what it holds.
fn commit(
    engine: &mut dyn IoEngine,
    w: &mut Worker,
    issue: &mut Issue,
    measuring: bool,
) -> Result<(), RunError> {
    if w.queue.outstanding() == 0 || w.queue.batch_queued == 0 {
        return Ok(());
    }
    if measuring {
        let depth = w.queue.outstanding() as u64;
        for _ in 0..w.queue.batch_queued {
            w.stats.depth.mark_depth(depth);
        }
    }
    w.queue.batch_queued = 0;
    submit_queued(engine, w, issue, measuring)
}

/// The engine's own commit: what it holds goes to the device in one submit, counted as one
/// submission of that many I/Os (fio's engines call `io_u_mark_submit` there).
fn submit_queued(
    engine: &mut dyn IoEngine,
    w: &mut Worker,
    issue: &mut Issue,
    measuring: bool,
) -> Result<(), RunError> {
    if issue.queued_slots.is_empty() {
        return Ok(());
    }
    engine.submit().map_err(RunError::Engine)?;
    let submitted_ns = engine.now_ns();
    for &slot in &issue.queued_slots {
        w.queue.in_flight[(slot - w.queue.slot_base) as usize].submitted_ns = submitted_ns;
    }
    if measuring {
        w.stats.depth.mark_submit(issue.queued_slots.len() as u64);
    }
    issue.queued_slots.clear();
    Ok(())
}

/// fio's `wait_for_completions`: reap at least `iodepth_batch_complete_min` (at least one when
/// the queue is full or the minimum is 0), and, when it was full, go on reaping until no more
/// than `iodepth_low` I/Os are left.
fn wait_for_completions(
    engine: &mut dyn IoEngine,
    w: &mut Worker,
    issue: &mut Issue,
    batch: IoBatch,
    full: bool,
    reaper: &mut Reaper<'_, '_>,
) -> Result<(), RunError> {
    let mut min_events = batch.complete_min.min(w.queue.outstanding() as u32);
    if (full && min_events == 0) || batch.complete_min == 0 {
        min_events = 1;
    }
    loop {
        queued_complete(engine, w, issue, batch, min_events, reaper)?;
        if !(full && w.queue.outstanding() as u32 > batch.depth_low) {
            return Ok(());
        }
    }
}

/// fio's null engine above depth 1 refuses a request while the batch it committed last is
/// unreaped (engines/null.c, `null_queue`: FIO_Q_BUSY). fio has taken the request's I/O unit
/// and logged it; it puts the request back, reaps that whole batch (backend.c
/// `io_queue_event`, then `wait_for_completions` with the queue counted full; `null_getevents`
/// hands over every event at once), and queues the request again, logging it a second time
/// (the worker's log does: `IoLog::times_logged`). `w` has just queued one request, not yet
/// committed: everything else in flight is that batch. The units it frees go on the freelist
/// above the one the request took, where the next sync finds them.
fn requeue_after_busy(
    engine: &mut dyn IoEngine,
    w: &mut Worker,
    issue: &Issue,
    reaper: &mut Reaper<'_, '_>,
) -> Result<(), RunError> {
    let committed = w.queue.outstanding() - issue.queued_slots.len();
    if committed == 0 {
        return Ok(());
    }
    reaper.scratch.clear();
    engine
        .reap(committed, &mut reaper.scratch)
        .map_err(RunError::Engine)?;
    reaper.ready.extend(reaper.scratch.drain(..));
    complete_ready(engine, w, reaper, reaper.ready.len())?;
    // do_io's `handle_thinktime` comes after that reap and before the request is queued again:
    // a stall its completions made due is taken with the request still held back (fio's
    // `io_u_quiesce` finds nothing in flight), not after it. Counted at issue
    // (`thinktime_blocks_type=issue`), fio's count has given the refused request back
    // (ioengines.c `td_io_queue` lowers `io_issues` on FIO_Q_BUSY): no stall is new there.
    if w.think.spec.count_issued {
        return Ok(());
    }
    // Nothing is in flight (`busy` is false), so a stall only ever says until when.
    loop {
        let now_ns = engine.now_ns();
        let Some(Some(until_ns)) = w.think.stall(engine, now_ns, || false) else {
            return Ok(());
        };
        super::drive::wait_a_while(engine, until_ns);
    }
}

impl Worker {
    /// Whether fio's null engine refuses the request about to be queued once: above depth 1,
    /// while a batch it committed is unreaped (everything in flight but what was queued since
    /// the last commit).
    pub(super) fn fio_null_refuses_next(&self) -> bool {
        self.queue.fio_null_busy && self.queue.outstanding() > self.queue.batch_queued as usize
    }
}

/// Drain the queue (fio's `io_u_quiesce`): commit what is queued, then reap until nothing is
/// in flight.
fn quiesce(
    engine: &mut dyn IoEngine,
    w: &mut Worker,
    issue: &mut Issue,
    batch: IoBatch,
    reaper: &mut Reaper<'_, '_>,
) -> Result<(), RunError> {
    let measuring = reaper.measuring(engine);
    commit(engine, w, issue, measuring)?;
    submit_queued(engine, w, issue, measuring)?;
    while w.queue.outstanding() > 0 {
        queued_complete(engine, w, issue, batch, 1, reaper)?;
    }
    Ok(())
}

/// The end of fio's `do_io`: one reap waits for everything still in flight (its engine
/// commit submits what is queued, which `td_io_commit` never counts in `iodepth_level`).
fn drain_at_end(
    engine: &mut dyn IoEngine,
    w: &mut Worker,
    issue: &mut Issue,
    batch: IoBatch,
    reaper: &mut Reaper<'_, '_>,
) -> Result<(), RunError> {
    while w.queue.outstanding() > 0 {
        queued_complete(
            engine,
            w,
            issue,
            batch,
            w.queue.outstanding() as u32,
            reaper,
        )?;
    }
    Ok(())
}

/// fio's `io_u_queued_complete` with `td_io_getevents`: at least `min_events` completions
/// (no more than are outstanding; 0: only those already there), at most
/// `iodepth_batch_complete_max` (at least the minimum). The engine commits what it holds
/// first when the reap waits.
fn queued_complete(
    engine: &mut dyn IoEngine,
    w: &mut Worker,
    issue: &mut Issue,
    batch: IoBatch,
    min_events: u32,
    reaper: &mut Reaper<'_, '_>,
) -> Result<(), RunError> {
    let cur_depth = w.queue.outstanding() as u32;
    let min = min_events.min(cur_depth);
    if min > 0 {
        // td_io_getevents calls the engine's commit, not td_io_commit: the I/Os go, and
        // are counted at their depth at the next td_io_commit (fio's `io_u_queued` stays).
        let measuring = reaper.measuring(engine);
        submit_queued(engine, w, issue, measuring)?;
    }
    let max = batch.complete_max.min(cur_depth).max(min) as usize;
    if max == 0 {
        return Ok(());
    }
    let min = min as usize;
    if reaper.ready.len() < max {
        loop {
            let missing = min.saturating_sub(reaper.ready.len());
            reaper.scratch.clear();
            engine
                .reap(if reaper.polls { 0 } else { missing }, &mut reaper.scratch)
                .map_err(RunError::Engine)?;
            reaper.ready.extend(reaper.scratch.drain(..));
            if reaper.ready.len() >= min {
                break;
            }
        }
    }
    // fio's null engine hands over every event it holds, whatever the maximum.
    let taken = if w.queue.fio_null_busy {
        reaper.ready.len()
    } else {
        reaper.ready.len().min(max)
    };
    complete_ready(engine, w, reaper, taken)
}

/// Hand the first `taken` completions of `reaper.ready` to `w`, counted as one reap.
fn complete_ready(
    engine: &mut dyn IoEngine,
    w: &mut Worker,
    reaper: &mut Reaper<'_, '_>,
    taken: usize,
) -> Result<(), RunError> {
    if taken == 0 {
        return Ok(());
    }
    if reaper.measuring(engine) {
        w.stats.depth.mark_complete(taken as u64);
    }
    let slots = w.queue.slot_base..w.queue.slot_base + w.queue.in_flight.len() as u32;
    let newest_ns = reaper.ready.iter().take(taken).map(|c| c.done_ns).max();
    if let (Some(publisher), Some(at_ns)) = (reaper.live.as_deref_mut(), newest_ns) {
        publisher.at(at_ns, std::slice::from_ref(w));
    }
    for completion in reaper.ready.drain(..taken) {
        if !slots.contains(&completion.slot) {
            return Err(RunError::Protocol(format!(
                "engine completed unknown slot {}",
                completion.slot
            )));
        }
        w.complete(engine, completion, reaper.window);
    }
    Ok(())
}
