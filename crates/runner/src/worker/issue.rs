//! One worker's fill of its queue: the next I/O chosen (replay, backlog, generator), held
//! back where something says so (think time, sync, overlap, flow, rate), then prepared and
//! queued on the engine.

use super::pacing::Gate;
use super::replay::ReplayStep;
use super::{InFlight, Worker};
use crate::offsets::{PlannedIo, Region};
use crate::RunError;
use storlab_engine::{IoDirection, IoEngine, IoRequest};
use storlab_job::JobSpec;

/// fio's `invalidate` at every pass over the region (buffered jobs only).
pub(super) struct Passes {
    /// Bytes in one pass over the region (fio's `io_size`, by default the region's size), when
    /// the region's cached pages are dropped each time a pass completes (fio's `invalidate`
    /// for every loop and every wrap of a time-based job).
    invalidate_pass_bytes: Option<u64>,
    /// Issued bytes at which the next pass starts.
    next_pass_at_bytes: u64,
}

impl Passes {
    pub(super) fn new(job: &JobSpec, region: Region) -> Passes {
        let pass_bytes = crate::offsets::clone_io_size_bytes(job, region)
            .unwrap_or_else(|| crate::offsets::pass_bytes(job, region))
            .max(1);
        Passes {
            invalidate_pass_bytes: (job.invalidate && !job.direct && job.replay.is_none())
                .then_some(pass_bytes),
            next_pass_at_bytes: pass_bytes,
        }
    }
}

/// The I/O a fill goes on with, or why it stops.
enum Next {
    /// `io`, a read of fio's `verify_backlog` when `backlog_read`.
    Io { io: PlannedIo, backlog_read: bool },
    /// Nothing goes until then (`None`: until an I/O completes).
    Wait(Option<u64>),
    /// The generator can place no further I/O.
    End,
}

impl Worker {
    /// Queue as many I/Os as the free slots, limits and rate allow, at most `limit`, noting
    /// each slot in `queued_slots`. Returns how many were queued and, when a wait held one
    /// back, when it may go.
    pub(super) fn fill(
        &mut self,
        engine: &mut dyn IoEngine,
        now_ns: u64,
        queued_slots: &mut Vec<u32>,
        limit: usize,
    ) -> Result<(usize, Option<u64>), RunError> {
        let mut queued = 0;
        // An engine that cannot queue a sync (a simulated stack under a fio job's io_uring)
        // drains before each, as fio's synchronous engines.
        if self.sync.fio_queues_syncs && !engine.queues_flushes() {
            self.sync.fio_queues_syncs = false;
        }
        while queued < limit
            && !self.queue.free_slots.is_empty()
            && self.queue.outstanding() < self.queue.depth_limit
            && !self.finished_issuing()
        {
            // A loop whose next one has begun ends first (its I/O finished, its end sync,
            // `last_was_sync` cleared): fio's `do_io` returns before anything of the next
            // loop, a sync every N writes included, is chosen.
            if self.sync.loop_end_due && !self.end_loop(engine)? {
                return Ok((queued, None));
            }
            if let Some(wait) = self.held_before_choosing(engine, now_ns, queued)? {
                return Ok((queued, wait));
            }
            if let Some(kind) = self
                .sync
                .fio_queues_syncs
                .then(|| self.sync_due())
                .flatten()
            {
                queued_slots.push(self.queue_sync(engine, kind, now_ns)?);
                queued += 1;
                continue;
            }
            let (io, backlog_read) = match self.next_io(engine, now_ns)? {
                Next::Io { io, backlog_read } => (io, backlog_read),
                Next::Wait(wait) => return Ok((queued, wait)),
                // fio ends the job where it cannot place an I/O.
                Next::End => break,
            };
            if self.sync.loop_end_due {
                // The loop ends above, once its I/O has finished; the next loop's first I/O
                // stays pending and goes after any sync then due.
                continue;
            }
            if !backlog_read && self.trimmed_to_bytes_left(&io) {
                continue;
            }
            if self.verifying.only {
                self.play_without_io(&io);
                continue;
            }
            if let Some(wait) = self.held_for_others(&io, now_ns, queued) {
                return Ok((queued, wait));
            }
            match self.pace(&io, now_ns) {
                Gate::Go => {}
                Gate::Wait(wait) => return Ok((queued, wait)),
                Gate::Redrawn => continue,
            }
            if !self.claim_on_board(&io) {
                // Another job claimed an overlapping range since the look above.
                return Ok((queued, None));
            }
            let slot = self.issue(engine, &io, backlog_read, now_ns)?;
            queued_slots.push(slot);
            queued += 1;
            if io.direction == IoDirection::Read
                && (self.data.fio_buffers.as_ref()).is_some_and(|b| b.reads_feed_next_write())
            {
                // The next write carries what this read brings in (fio_buffers.rs).
                break;
            }
            if self.verifying.backlog.is_some() && !engine.capabilities().queued {
                // fio's sync engine has done this I/O before it chooses the next, so a write
                // is in its log when the backlog looks (storlab logs writes as they complete).
                break;
            }
            if io.direction == IoDirection::Trim
                && self.generator.draws_as_fio()
                && engine.capabilities().moves_data
                && !engine.capabilities().shared_timeline
            {
                // fio's queueing engines trim as they queue (libaio's and io_uring's `queue`
                // run `do_io_u_trim` and return FIO_Q_COMPLETED): the trim is done, or has
                // failed, before the next I/O is chosen. (A simulated drive queues its UNMAPs.)
                break;
            }
            if self.think.spec.think_ns > 0 && self.think.spec.count_issued {
                self.think.count_io(now_ns);
            }
        }
        Ok((queued, None))
    }

    /// What holds the queue before an I/O is chosen: a `thinktime` stall, or a due sync
    /// waiting for the worker's I/O to finish (a sync that may go goes here).
    fn held_before_choosing(
        &mut self,
        engine: &mut dyn IoEngine,
        now_ns: u64,
        queued: usize,
    ) -> Result<Option<Option<u64>>, RunError> {
        if self.think.spec.think_ns > 0 {
            let queue = &self.queue;
            let stall = self
                .think
                .stall(engine, now_ns, || queued > 0 || queue.outstanding() > 0);
            if stall.is_some() {
                return Ok(stall);
            }
        }
        // Queued syncs go in `fill` as I/O units.
        let due = (!self.sync.fio_queues_syncs)
            .then(|| self.sync_due())
            .flatten();
        if let Some(kind) = due {
            // As fio's synchronous engines: the sync waits for the worker's I/O to finish.
            if self.queue.outstanding() > 0 && !self.sync.fio_syncs_beside_io {
                return Ok(Some(None));
            }
            self.flush(engine, kind)?;
        }
        Ok(None)
    }

    /// The sync fio's `fsync=N` / `fdatasync=N` asks for before the next I/O. A loop that
    /// issued its bytes ends before a sync is chosen; the next loop's start chooses it
    /// (`end_loop` clears `last_was_sync`).
    fn sync_due(&self) -> Option<storlab_engine::FlushKind> {
        if self.queue.overlap_held_slot.is_some() {
            // A write `serialize_overlap` held back is fio's requeued unit: `get_io_u` takes it
            // again before it would choose a sync (seed 8787).
            return None;
        }
        let backlog_read_due = self.pending.is_none() && self.verifying.backlog_read_due();
        if self.reading_back_a_loop() || self.generator.fio_loop_bytes_done() || backlog_read_due {
            return None;
        }
        self.sync.due(self.progress.write_counter)
    }

    /// The I/O to go next: the one held back before, else the replay's next, a backlog read,
    /// or the generator's next.
    fn next_io(&mut self, engine: &mut dyn IoEngine, now_ns: u64) -> Result<Next, RunError> {
        match self.loop_read_back_step() {
            Some(Some(io)) => {
                return Ok(Next::Io {
                    io,
                    backlog_read: true,
                })
            }
            Some(None) => return Ok(Next::Wait(None)),
            None => {}
        }
        if self.replay.is_some() && self.pending.is_none() {
            match self.next_replayed(engine, now_ns)? {
                ReplayStep::Io(io) => self.pending = Some(io),
                ReplayStep::Wait(until) => return Ok(Next::Wait(until)),
            }
        }
        let mut backlog_read = false;
        // fio's `do_io` tests its loop's bytes before `get_io_u` can hand out a backlog read:
        // a loop whose bytes are done ends there, mid-batch (its pass reads the rest, and the
        // batch's count carries into the next loop).
        if self.pending.is_none() && !self.generator.fio_loop_bytes_done() {
            if let Some(read) = self.verifying.next_backlog_read() {
                self.generator
                    .note_backlog_read(read.offset_bytes, u64::from(read.len_bytes));
                self.pending = Some(read);
                backlog_read = true;
            }
        }
        let io = match self.pending {
            Some(io) => io,
            None => {
                // fio's synchronous engines complete each I/O as it is queued: none of its
                // units is in flight when the next is filled, whatever storlab's batch holds.
                let in_flight = if self.sync.fio_engine_synchronous {
                    0
                } else {
                    self.queue.outstanding()
                };
                self.generator.set_units_in_flight(in_flight);
                let Some(io) = self.generator.next(None) else {
                    if let Some(reason) = self.generator.fio_not_followed() {
                        return Err(RunError::FioNotFollowed {
                            job: self.job_name.clone(),
                            reason,
                        });
                    }
                    self.progress.generator_done = true;
                    let failed_offset = self.generator.fio_end_offset();
                    // Where fio began one more pass that placed nothing, the pass before ends
                    // on the unit its own failed placement left.
                    let offset = self.note_empty_pass(failed_offset).unwrap_or(failed_offset);
                    self.note_failed_placement(offset);
                    return Ok(Next::End);
                };
                // fio's mmap engine copies at the offset less `file_offset`, which strided
                // zones move as the I/O is chosen (engines/mmap.c `fio_mmapio_prep`).
                if self.queue.engine_shifts_by_zone {
                    if let Some(start) = self.generator.fio_file_offset_bytes() {
                        self.queue.engine_shift_bytes = start;
                    }
                }
                if let Some((loops_ended, offset)) = self.generator.fio_loops_ended() {
                    if loops_ended > self.sync.loops_ended {
                        self.sync.loops_ended = loops_ended;
                        self.sync.loop_end_due = true;
                        self.note_failed_placement(offset);
                    }
                }
                self.pending = Some(io);
                io
            }
        };
        Ok(Next::Io { io, backlog_read })
    }

    /// The last I/O of a size-bounded run is trimmed to the bytes left, as fio does: true
    /// when `io` was (it is then chosen again, trimmed).
    fn trimmed_to_bytes_left(&mut self, io: &PlannedIo) -> bool {
        if self.generator.draws_as_fio() {
            return false;
        }
        let Some(remaining) = self
            .progress
            .limit_bytes
            .map(|n| n - self.progress.issued_bytes)
        else {
            return false;
        };
        if u64::from(io.len_bytes) > remaining && remaining > 0 {
            self.pending = Some(PlannedIo {
                len_bytes: remaining as u32,
                ..*io
            });
            return true;
        }
        false
    }

    /// Issues `io` (a backlog read when `backlog_read`) at `now_ns`: logged, its slot
    /// prepared, queued on the engine and counted. Returns the engine slot.
    fn issue(
        &mut self,
        engine: &mut dyn IoEngine,
        io: &PlannedIo,
        backlog_read: bool,
        now_ns: u64,
    ) -> Result<u32, RunError> {
        self.pending = None;
        if backlog_read {
            self.fio_unit_taken();
        }
        self.count_in_flow();
        self.invalidate_after_pass(engine)?;
        let refused_once = self.fio_null_refuses_next();
        if let Some(log) = self.iolog.as_mut() {
            log.record_issued(
                io.direction,
                io.offset_bytes,
                io.len_bytes,
                refused_once,
                &self.job_name,
            )?;
        }
        let relative_slot = self.queue.take_free_slot();
        let slot = self.queue.slot_base + relative_slot;
        let generation = self.prepare_slot(engine, slot, io, backlog_read);
        let own_ioprio = self.draw_ioprio(io);
        engine
            .queue(IoRequest {
                slot,
                direction: io.direction,
                offset_bytes: io.offset_bytes - self.queue.engine_shift_bytes,
                len_bytes: io.len_bytes,
                ioprio: own_ioprio,
            })
            .map_err(RunError::Engine)?;
        self.queue.in_flight[relative_slot as usize] = InFlight {
            direction: Some(io.direction),
            offset_bytes: io.offset_bytes,
            len_bytes: io.len_bytes,
            queued_ns: now_ns,
            submitted_ns: now_ns,
            generation,
            backlog: backlog_read,
            ioprio: own_ioprio.unwrap_or(self.priority.default_ioprio),
            flush: None,
        };
        self.count_issued(io, backlog_read);
        Ok(slot)
    }

    /// A pass over the region completed: as fio does at every loop, drop what it left in the
    /// page cache so the next pass measures the device again.
    fn invalidate_after_pass(&mut self, engine: &mut dyn IoEngine) -> Result<(), RunError> {
        let Some(pass_bytes) = self.passes.invalidate_pass_bytes else {
            return Ok(());
        };
        let issued_bytes = self.progress.issued_bytes;
        if issued_bytes >= self.passes.next_pass_at_bytes {
            engine
                .invalidate(self.region.start_bytes, self.region.len_bytes)
                .map_err(RunError::Engine)?;
            let passes_done = issued_bytes / pass_bytes;
            self.passes.next_pass_at_bytes = (passes_done + 1).saturating_mul(pass_bytes);
        }
        Ok(())
    }

    /// Counts the queued `io` towards the job's bounds, the backlog and the syncs.
    fn count_issued(&mut self, io: &PlannedIo, backlog_read: bool) {
        // Every I/O counts towards `number_ios`, verify reads too (backend.c,
        // `exceeds_number_ios` sums `io_blocks`, which fio's verify reads complete into).
        self.progress.issued_ios += 1;
        // As fio, a backlog's reads come on top of the job's bytes (backend.c, `do_io`, adds
        // `size` to the bytes to issue when verify_backlog is set).
        if !backlog_read {
            // fio bounds a trim/write job by its writes' bytes (backend.c,
            // `io_bytes_exceeded`: a trim/write job is a writing one).
            if !(self.progress.bytes_of_writes_only && io.direction == IoDirection::Trim) {
                self.progress.issued_bytes += u64::from(io.len_bytes);
            }
        }
        self.sync.last_offset_bytes = io.offset_bytes;
        self.sync.io_issued();
    }
}
