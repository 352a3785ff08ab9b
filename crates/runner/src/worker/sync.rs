//! fio's syncs of one worker: `fsync`/`fdatasync` every N writes, `end_fsync` and
//! `fsync_on_close`, each logged in `write_iolog` as fio logs it.

use super::{InFlight, Worker};
use crate::RunError;
use storlab_engine::{FlushKind, IoEngine};
use storlab_job::{JobSpec, SyncSpec, TrimMode};

/// When one worker syncs, and what its last sync left.
pub(super) struct Syncs {
    /// fio's `fsync`, `fdatasync`, `end_fsync`, `fsync_on_close`.
    spec: SyncSpec,
    /// A sync was the last thing done: none is due again until another I/O goes (fio's
    /// `last_was_sync`).
    pub(super) last_was_sync: bool,
    /// Offset of the last I/O issued, for the sync lines of the I/O log.
    pub(super) last_offset_bytes: u64,
    /// Syncs that start from here on the engine's clock are measured (after the ramp).
    pub(super) measure_start_ns: u64,
    /// The fio sequence's loops ended so far, and whether the last one's end (its sync) is
    /// still to come before the next loop's first I/O.
    pub(super) loops_ended: u32,
    pub(super) loop_end_due: bool,
    /// fio's last, empty loop's sync waits for the job's read-back: fio verifies each loop
    /// after it (backend.c, `do_verify` after `do_io`), and the empty loop comes after that.
    /// Its kind, whether fio counts it, and the offset its I/O unit carries if not the
    /// read-back's last read's.
    pub(super) empty_loop_sync_due: Option<EmptyLoopSync>,
    /// The fio sequence began one more pass that placed nothing (`note_empty_pass`), and the
    /// offset of that pass's failed placement, if any.
    pub(super) empty_pass_began: Option<Option<u64>>,
    /// A fio job with writes (fio's `should_fsync`: `td_write`, whether or not one was drawn).
    fio_writer: bool,
    /// fio's engine for the job completes each I/O as it queues it (FIO_SYNCIO): nothing is
    /// in flight in fio when a placement fails, whatever storlab's queue holds.
    pub(super) fio_engine_synchronous: bool,
    /// A fio job on an engine that queues: a sync takes the I/O unit on top of fio's freelist
    /// (the one freed last) and logs the offset it last carried; the worker's free slots are
    /// that freelist, in the same order.
    fio_unit_freelist: bool,
    /// fio's engine runs a sync as it is queued, beside the I/O in flight
    /// (`JobSpec::fio_engine_syncs_beside_io`): no drain first.
    pub(super) fio_syncs_beside_io: bool,
    /// fio's engine queues its syncs as I/O units (`JobSpec::fio_engine_queues_syncs`): a
    /// due sync takes a free slot, the I/O in flight goes on, and `last_was_sync` is set as
    /// one completes.
    pub(super) fio_queues_syncs: bool,
}

/// The sync of fio's last, empty loop, waiting for the job's read-back.
#[derive(Clone, Copy, Debug)]
pub(super) struct EmptyLoopSync {
    kind: FlushKind,
    /// fio counts it: a sync `fsync=N` asks for is an I/O unit of the `sync` block; an end
    /// sync is not.
    measured: bool,
    /// The offset its I/O unit carries (the empty loop's failed placement), where it is not
    /// the read-back's last read's.
    offset_bytes: Option<u64>,
    /// How many: where fio's engine queues its syncs (io_uring, posixaio), `get_rw_ddir`
    /// chooses the due sync again for each free I/O unit until one completes and sets
    /// `last_was_sync`, as in any loop: one per unit of the queue.
    count: usize,
}

impl Syncs {
    /// The syncs of `job`. A fio trim/write job is a writing one (`td_write`), yet never
    /// syncs every N writes: io_u.c's `set_rw_ddir` replaces the sync `get_rw_ddir` chose by
    /// the pair's trim or write, so only its end syncs come.
    pub(super) fn for_job(job: &JobSpec) -> Syncs {
        let fio = job.fio_random.is_some();
        let trim_write = job.trim == TrimMode::TrimWrite;
        let mut spec = job.sync;
        if fio && trim_write {
            spec.fsync_every_writes = 0;
            spec.fdatasync_every_writes = 0;
        }
        let writer = trim_write || (job.read_percent < 100 && job.trim.is_none());
        let mut syncs = Syncs::new(spec, fio && writer);
        syncs.fio_engine_synchronous = !job.fio_engine_queues();
        syncs.fio_unit_freelist = fio && job.fio_engine_queues();
        syncs.fio_syncs_beside_io = fio && job.fio_engine_syncs_beside_io();
        syncs.fio_queues_syncs = job.fio_engine_queues_syncs();
        syncs
    }

    pub(super) fn new(spec: SyncSpec, fio_writer: bool) -> Syncs {
        Syncs {
            spec,
            last_was_sync: false,
            last_offset_bytes: 0,
            measure_start_ns: 0,
            loops_ended: 0,
            loop_end_due: false,
            empty_loop_sync_due: None,
            empty_pass_began: None,
            fio_writer,
            fio_engine_synchronous: false,
            fio_unit_freelist: false,
            fio_syncs_beside_io: false,
            fio_queues_syncs: false,
        }
    }

    /// An I/O (not a sync) was issued. fio clears `last_was_sync` when an I/O completes
    /// (io_u.c, `io_completed`): a synchronous engine completes each before the next is
    /// chosen, so it is clear already; where the engine queues its syncs too (io_uring,
    /// posixaio) they complete among the I/O in an order of the kernel's, and clearing it at
    /// issue keeps every N-th write's sync as fio's runs mostly do.
    pub(super) fn io_issued(&mut self) {
        if !self.clears_at_completion() {
            self.last_was_sync = false;
        }
    }

    /// An I/O (not a sync) completed. Where fio runs a sync as it is queued beside the I/O in
    /// flight (libaio), the sync completes first and the I/O issued before it clear the flag
    /// only as fio reaps them: the writes issued meanwhile ask for no sync of their own.
    pub(super) fn io_completed(&mut self) {
        if self.clears_at_completion() {
            self.last_was_sync = false;
        }
    }

    /// Whether `last_was_sync` follows fio's completions (io_u.c, `io_completed`) rather than
    /// the issues: where syncs run beside the I/O in flight or queue among it.
    fn clears_at_completion(&self) -> bool {
        self.fio_syncs_beside_io || self.fio_queues_syncs
    }

    /// The sync fio's `fsync=N` / `fdatasync=N` asks for before the next I/O, `writes` having
    /// been issued: after every N, unless a sync was the last thing done (fio's `get_rw_ddir`).
    pub(super) fn due(&self, writes: u64) -> Option<FlushKind> {
        if self.last_was_sync || writes == 0 {
            return None;
        }
        let every = |n: u32| n > 0 && writes.is_multiple_of(u64::from(n));
        if every(self.spec.fsync_every_writes) {
            Some(FlushKind::All)
        } else if every(self.spec.fdatasync_every_writes) {
            Some(FlushKind::Data)
        } else {
            None
        }
    }
}

impl Worker {
    /// One sync, with none of this worker's I/O outstanding (or beside it, as fio's libaio);
    /// logged as fio logs it, and timed
    /// and counted as fio's `sync` block does (see `flush_at_end` for the end's).
    pub(super) fn flush(
        &mut self,
        engine: &mut dyn IoEngine,
        kind: FlushKind,
    ) -> Result<(), RunError> {
        self.flush_measured(engine, kind, true)
    }

    /// `flush`, timed and counted in the `sync` statistics when `measured`.
    fn flush_measured(
        &mut self,
        engine: &mut dyn IoEngine,
        kind: FlushKind,
        measured: bool,
    ) -> Result<(), RunError> {
        let offset_bytes = self.sync_offset_bytes();
        self.flush_at(engine, kind, measured, offset_bytes)
    }

    /// `flush_measured` on the I/O unit that carries `offset_bytes`.
    fn flush_at(
        &mut self,
        engine: &mut dyn IoEngine,
        kind: FlushKind,
        measured: bool,
        offset_bytes: u64,
    ) -> Result<(), RunError> {
        if let Some(log) = self.iolog.as_mut() {
            log.record_sync(kind, offset_bytes, false);
        }
        self.fio_unit_taken();
        let start_ns = engine.now_ns();
        engine.flush(kind).map_err(RunError::Engine)?;
        if self.sync_done(kind, start_ns, engine.now_ns(), measured) {
            // fio marks a sync its engine did inside `queue` at the depth it finds, itself
            // included (`td_io_queue`, `io_u_mark_depth` reads `cur_depth`): 1 after a drain,
            // more on libaio, whose sync runs beside the I/O in flight. A sync it queued is
            // marked where it is queued (`drive.rs`).
            let depth = self.queue.outstanding() as u64 + 1;
            self.stats.depth.mark_depth(depth);
        }
        Ok(())
    }

    /// A sync of `kind` started at `start_ns` is done at `done_ns`: timed and counted in fio's
    /// `sync` block when `measured` and after the ramp (returns whether it was), and fio's
    /// `last_was_sync` set.
    fn sync_done(&mut self, kind: FlushKind, start_ns: u64, done_ns: u64, measured: bool) -> bool {
        let counted = measured && start_ns >= self.sync.measure_start_ns;
        if counted {
            self.stats.sync.record(done_ns.saturating_sub(start_ns));
            match kind {
                FlushKind::All => self.stats.fsyncs += 1,
                FlushKind::Data => self.stats.fdatasyncs += 1,
            }
        }
        self.sync.last_was_sync = true;
        counted
    }

    /// A due sync queued on an engine that queues fio's syncs (`Syncs::fio_queues_syncs`):
    /// it takes the I/O unit on top of the freelist (logging the offset that unit carried, as
    /// fio's `log_io_u` does), and the I/O in flight goes on. Returns its engine slot.
    pub(super) fn queue_sync(
        &mut self,
        engine: &mut dyn IoEngine,
        kind: FlushKind,
        now_ns: u64,
    ) -> Result<u32, RunError> {
        let offset_bytes = self.sync_offset_bytes();
        let refused_once = self.fio_null_refuses_next();
        if let Some(log) = self.iolog.as_mut() {
            log.record_sync(kind, offset_bytes, refused_once);
        }
        self.fio_unit_taken();
        let relative_slot = self.queue.free_slots.pop().expect("checked non-empty");
        let slot = self.queue.slot_base + relative_slot;
        engine.queue_flush(slot, kind).map_err(RunError::Engine)?;
        self.queue.in_flight[relative_slot as usize] = InFlight {
            flush: Some(kind),
            offset_bytes,
            queued_ns: now_ns,
            submitted_ns: now_ns,
            ..InFlight::default()
        };
        Ok(slot)
    }

    /// A queued sync in `slot` completed with `result` at `done_ns`: fio's `last_was_sync`
    /// is set, the sync timed and counted as `flush` counts one; a failed sync is the
    /// worker's error, as fio's.
    pub(super) fn complete_sync(&mut self, slot: u32, result: Result<u32, i32>, done_ns: u64) {
        let relative = (slot - self.queue.slot_base) as usize;
        // The unit keeps the offset it logged, as fio's I/O unit does, for the next to log.
        let sync = self.queue.in_flight[relative];
        self.queue.in_flight[relative].flush = None;
        self.queue.free_slots.push(relative as u32);
        if let Err(errno) = result {
            self.error.get_or_insert(RunError::Io {
                offset_bytes: sync.offset_bytes,
                len_bytes: 0,
                source: std::io::Error::from_raw_os_error(errno),
            });
            return;
        }
        if let Some(kind) = sync.flush {
            self.sync_done(kind, sync.queued_ns, done_ns, true);
        }
    }

    /// The end of one fio loop before the next begins (backend.c, `do_io`'s end): with none of
    /// the worker's I/O outstanding, its end sync, and fio's reset of `last_was_sync`. Returns
    /// false while I/O is outstanding.
    pub(super) fn end_loop(&mut self, engine: &mut dyn IoEngine) -> Result<bool, RunError> {
        if self.queue.outstanding() > 0 {
            return Ok(false);
        }
        self.sync.loop_end_due = false;
        // The next loop's first I/O is drawn already: that loop is not an empty one.
        self.flush_at_loop_end(engine, true)?;
        // libfio.c, `clear_io_state` before the next loop: `last_was_sync` is cleared, so a
        // sync `fsync=N` still asks for comes again first (after the loop's verify pass).
        self.sync.last_was_sync = false;
        self.queue_loop_read_back();
        Ok(true)
    }

    /// A fio placement failed with `offset` on its I/O unit: that unit goes back on top of
    /// fio's freelist with it, where fio's next sync takes it (`fio_io_sync` takes the
    /// freelist's top); I/O still in flight completes after it and goes on top (never on
    /// fio's synchronous engines, whose I/O completes as it is queued).
    pub(super) fn note_failed_placement(&mut self, offset: Option<u64>) {
        let Some(offset_bytes) = offset else {
            return;
        };
        if self.sync.fio_unit_freelist {
            if let Some(&top) = self.queue.free_slots.last() {
                self.queue.in_flight[top as usize].offset_bytes = offset_bytes;
            }
        } else if self.sync.fio_engine_synchronous || self.queue.outstanding() == 0 {
            self.sync.last_offset_bytes = offset_bytes;
        }
    }

    /// The read-back's last read was at `offset_bytes`: its I/O unit, freed last, is the one
    /// the next sync takes.
    pub(super) fn note_read_back_end(&mut self, offset_bytes: u64) {
        match self.queue.free_slots.last() {
            Some(&top) if self.sync.fio_unit_freelist => {
                self.queue.in_flight[top as usize].offset_bytes = offset_bytes;
            }
            _ => self.sync.last_offset_bytes = offset_bytes,
        }
    }

    /// A sync or a read of fio's verify log takes fio's top free I/O unit: before the I/O
    /// drawn already, if one waits (a loop's first, drawn before the loop's end sync and
    /// read-back), as fio takes the unit before it fills that I/O.
    pub(super) fn fio_unit_taken(&mut self) {
        let drawn_ahead = self.pending.is_some() || self.verifying.held_first_io.is_some();
        self.generator.fio_top_unit_taken(drawn_ahead);
    }

    /// The offset fio logs on the next sync: that of the I/O unit the sync takes, the top of
    /// the freelist on an engine that queues (io_u.c `__get_io_u` pops the unit freed last),
    /// else the last I/O's (one unit in use at a time).
    fn sync_offset_bytes(&self) -> u64 {
        match self.queue.free_slots.last() {
            Some(&top) if self.sync.fio_unit_freelist => {
                self.queue.in_flight[top as usize].offset_bytes
            }
            _ => self.sync.last_offset_bytes,
        }
    }

    /// fio's `end_fsync` and `fsync_on_close`: one `fsync` once a job that wrote is done,
    /// unless its last act was a sync already (fio then issues none: one sync for both keys).
    /// fio neither times nor counts it: both keys sync in the TD_FSYNCING state (backend.c,
    /// `do_io`), which `td_io_queue` (ioengines.c) leaves out of `total_io_u` (and
    /// `fsync_on_close` adds a plain `fsync(2)` at close, filesetup.c, no I/O unit at all).
    /// fio's job with writes syncs so even when it drew none (`should_fsync` asks `td_write`),
    /// and a last, empty loop ends with its own (`clear_io_state` cleared `last_was_sync`).
    pub(super) fn flush_at_end(&mut self, engine: &mut dyn IoEngine) -> Result<(), RunError> {
        self.flush_at_loop_end(engine, false)
    }

    /// `flush_at_end` at the end of one loop; `next_loop_drawn`: the next loop has drawn its
    /// first I/O, so it is no empty one whatever the job's bytes say with that I/O counted.
    fn flush_at_loop_end(
        &mut self,
        engine: &mut dyn IoEngine,
        next_loop_drawn: bool,
    ) -> Result<(), RunError> {
        let wanted = self.sync.spec.end_fsync || self.sync.spec.fsync_on_close;
        let writer = self.progress.write_counter > 0 || self.sync.fio_writer;
        if self.error.is_some() || !writer {
            return Ok(());
        }
        if wanted && !self.sync.last_was_sync {
            self.flush_measured(engine, FlushKind::All, false)?;
        }
        if let Some(failed_offset) = self.sync.empty_pass_began.take() {
            return self.sync_empty_pass(engine, wanted, failed_offset);
        }
        if !wanted {
            return Ok(());
        }
        // A job its `number_ios` ended still runs its loops left, empty (backend.c,
        // `keep_running` asks `loops` before `exceeds_number_ios`).
        let ios_done = self
            .progress
            .limit_ios
            .is_some_and(|limit| self.progress.issued_ios >= limit);
        if (self.generator.fio_empty_loop_follows() && !next_loop_drawn)
            || (ios_done && self.generator.fio_loops_follow())
        {
            if self.verifying.reads_back_at_end() {
                self.sync.empty_loop_sync_due = Some(EmptyLoopSync {
                    kind: FlushKind::All,
                    measured: false,
                    offset_bytes: None,
                    count: 1,
                });
            } else {
                self.flush_measured(engine, FlushKind::All, false)?;
            }
        }
        Ok(())
    }

    /// The fio sequence began one more pass and placed nothing in it: the pass before ended
    /// where no I/O could be placed, short of the job's bytes, and the verify pass reopened
    /// the file (or `io_size` asks for more), so fio's `keep_running` went on (backend.c).
    /// Returns the offset of the pass before's failed placement, which its I/O unit carries
    /// into that pass's end (`failed_offset`: the empty pass's own), or None if no pass began.
    /// The empty pass's sync comes at the job's end (`sync_empty_pass`).
    pub(super) fn note_empty_pass(&mut self, failed_offset: Option<u64>) -> Option<Option<u64>> {
        let (passes, pass_before_offset) = self.generator.fio_loops_ended()?;
        if passes <= self.sync.loops_ended {
            return None;
        }
        self.sync.loops_ended = passes;
        self.sync.empty_pass_began = Some(failed_offset);
        Some(pass_before_offset)
    }

    /// The sync of fio's empty pass, after the read-back of the pass before (seed 1111):
    /// `clear_io_state` cleared `last_was_sync`, so the sync `fsync=N` / `fdatasync=N` asks for
    /// after the writes so far comes first (io_u.c, `get_rw_ddir`), on the I/O unit on top
    /// (the read-back's last, else the pass before's failed placement), counted as any; else,
    /// with `end_fsync` or `fsync_on_close`, the pass's end sync, after its own failed
    /// placement (`failed_offset`). Never both: the first leaves `last_was_sync` set for the
    /// second (`should_fsync`).
    fn sync_empty_pass(
        &mut self,
        engine: &mut dyn IoEngine,
        end_wanted: bool,
        failed_offset: Option<u64>,
    ) -> Result<(), RunError> {
        self.sync.last_was_sync = false;
        let due = match self.sync.due(self.progress.write_counter) {
            Some(kind) => EmptyLoopSync {
                kind,
                measured: true,
                offset_bytes: None,
                count: if self.sync.fio_queues_syncs {
                    self.queue.depth_limit.max(1)
                } else {
                    1
                },
            },
            None if end_wanted => EmptyLoopSync {
                kind: FlushKind::All,
                measured: false,
                offset_bytes: failed_offset,
                count: 1,
            },
            None => return Ok(()),
        };
        if self.verifying.reads_back_at_end() {
            self.sync.empty_loop_sync_due = Some(due);
            return Ok(());
        }
        self.flush_empty_loop(engine, due)
    }

    /// The empty loop's `due` syncs, one after another.
    fn flush_empty_loop(
        &mut self,
        engine: &mut dyn IoEngine,
        due: EmptyLoopSync,
    ) -> Result<(), RunError> {
        if due.offset_bytes.is_some() {
            self.note_failed_placement(due.offset_bytes);
        }
        if due.count == 1 || !self.sync.fio_unit_freelist {
            for _ in 0..due.count {
                self.flush_measured(engine, due.kind, due.measured)?;
            }
            return Ok(());
        }
        // Each queued sync takes the next unit down fio's freelist, none back before all went.
        let offsets: Vec<u64> = (self.queue.free_slots.iter().rev())
            .map(|&slot| self.queue.in_flight[slot as usize].offset_bytes)
            .take(due.count)
            .collect();
        for offset_bytes in offsets {
            self.flush_at(engine, due.kind, due.measured, offset_bytes)?;
        }
        Ok(())
    }

    /// After the job's read-back: the sync of fio's last, empty loop, if it waited for it
    /// (`flush_at_end`), logged after the read-back's reads as fio logs it.
    pub fn sync_empty_loop_after_read_back(
        &mut self,
        engine: &mut dyn IoEngine,
    ) -> Result<(), RunError> {
        let Some(due) = self.sync.empty_loop_sync_due.take() else {
            return Ok(());
        };
        self.flush_empty_loop(engine, due)?;
        match self.iolog.as_mut() {
            Some(log) => log.append_after_close(&self.job_name),
            None => Ok(()),
        }
    }
}
