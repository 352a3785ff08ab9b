//! What one worker keeps to verify its data (see `verify.rs`): the record of its writes, the
//! checks of its reads as they complete, fio's `verify_backlog`, `verify_only` and the verify
//! state file.

use super::{InFlight, Worker, CHECKED_GENERATIONS};
use crate::fio_verify::FioFormat;
use crate::offsets::{PlannedIo, Region};
use crate::verify::{self, WriteRecord};
use crate::verify_seeds::{
    fio_checks_write_numbers, fio_logs_writes_in_a_list, Found, SeedMismatch, SeedOrder,
};
use crate::verify_state::{VerifyCut, VerifyStateRecorder};
use crate::RunError;
use std::sync::Arc;
use storlab_engine::{IoDirection, IoEngine};
use storlab_job::JobSpec;

/// fio's `verify_backlog` (io_u.c, `fill_io_u`): whenever the count of logged, not yet checked
/// pieces (fio's `io_hist_len`) reaches a multiple of `every` and the last I/O was not a read,
/// the next `batch` I/Os read back logged pieces from the log's head (the oldest of fio's list,
/// the lowest offset of its tree); the rest waits for the read-back after the writes.
pub(super) struct Backlog {
    every: u64,
    batch: u64,
    /// Writes issued and not yet read back, as fio's log keeps them (iolog.c `log_io_piece`
    /// at issue), each with its generation: a piece whose write is still in flight is not read
    /// (verify.c `get_next_verify`, `IP_F_IN_FLIGHT`), so a check never races its write.
    logged: crate::fio_history::FioHistory<u32>,
    /// The pieces handed out and not yet checked: (offset, the piece's write generation).
    handed_out: std::collections::VecDeque<(u64, u32)>,
    /// Reads left in the current batch.
    batch_left: u64,
    pub(super) last_was_read: bool,
}

impl Backlog {
    /// Whether the next I/O is a backlog read (`next_read` would give one): fio asks before
    /// it chooses a direction, so a due sync waits for the batch (io_u.c `get_io_u`).
    pub(super) fn read_due(&self, writes_in_flight: &[u32]) -> bool {
        let hist_len = self.logged.len() as u64;
        hist_len > 0
            && (self.batch_left > 0 || (hist_len.is_multiple_of(self.every) && !self.last_was_read))
            && self.head_written(writes_in_flight)
    }

    /// Whether the log's head piece has been written (its write is not in flight).
    fn head_written(&self, writes_in_flight: &[u32]) -> bool {
        self.logged
            .peek_next()
            .is_some_and(|(_, _, generation)| !writes_in_flight.contains(&generation))
    }

    /// The next read of a batch, if one is due.
    /// A batch begun while the head's write is in flight stays due (io_u.c,
    /// `check_get_verify` sets `verify_batch` before it asks for the piece).
    pub(super) fn next_read(&mut self, writes_in_flight: &[u32]) -> Option<PlannedIo> {
        let hist_len = self.logged.len() as u64;
        if hist_len == 0 {
            return None;
        }
        if self.batch_left == 0 {
            if !hist_len.is_multiple_of(self.every) || self.last_was_read {
                return None;
            }
            self.batch_left = self.batch;
        }
        if !self.head_written(writes_in_flight) {
            return None;
        }
        self.batch_left -= 1;
        let (offset_bytes, len_bytes, generation) = self.logged.pop_next()?;
        self.handed_out.push_back((offset_bytes, generation));
        Some(PlannedIo {
            direction: IoDirection::Read,
            offset_bytes,
            len_bytes: len_bytes as u32,
        })
    }

    /// The write generation of the piece handed out at `offset_bytes` (the first such), out
    /// of the pieces handed out: taken at each backlog read's completion.
    fn take_handed_out(&mut self, offset_bytes: u64) -> Option<u32> {
        let at = self
            .handed_out
            .iter()
            .position(|(o, _)| *o == offset_bytes)?;
        self.handed_out.remove(at).map(|(_, generation)| generation)
    }

    /// The first piece left in the log that a later write overwrote, as fio's verify pass
    /// reads them: where it fails (see [`overwritten_piece`]).
    fn first_overwritten(&self, job: &JobSpec, record: &WriteRecord) -> Option<SeedMismatch> {
        let mut pieces = Vec::with_capacity(self.logged.len());
        self.logged
            .each(|offset, len, generation| pieces.push((offset, len, generation)));
        pieces
            .into_iter()
            .find_map(|(offset, len, own)| overwritten_piece(job, record, offset, len, own))
    }
}

/// fio's check of a backlog piece's header where it checks write numbers
/// (`verify_seeds::fio_checks_write_numbers`; the header's seed is taken as the one wanted,
/// `TD_F_VER_BACKLOG`): a piece of fio's list that a later write overwrote before it is read
/// carries the later write's number, and fio fails there (`--rw=randwrite:4 --verify=crc32c
/// --verify_backlog=16`: "bad header numberio 236, wanted 231", error 84). `own`: the piece's
/// write generation; `record` holds each granule's last.
fn overwritten_piece(
    job: &JobSpec,
    record: &WriteRecord,
    offset_bytes: u64,
    len_bytes: u64,
    own: u32,
) -> Option<SeedMismatch> {
    if !fio_checks_write_numbers(job) {
        return None;
    }
    let granule = record.granule_bytes().max(1);
    let end = offset_bytes + len_bytes;
    let mut at = offset_bytes;
    while at < end {
        let found = record.generation_at(at);
        if found != own && found != 0 {
            // Generations are write numbers from 1; fio's `numberio` counts from 0 in 16 bits.
            let number = |generation: u32| generation.wrapping_sub(1) as u16;
            return Some(SeedMismatch {
                header_seed: 0,
                wanted_seed: 0,
                offset_bytes,
                len_bytes,
                found: if at == offset_bytes {
                    Found::OtherNumber {
                        header: number(found),
                        wanted: number(own),
                    }
                } else {
                    Found::OtherData
                },
            });
        }
        at += granule;
    }
    None
}

/// fio's failure at `mismatch`, in its words.
fn fio_mismatch(job: &JobSpec, mismatch: &SeedMismatch) -> RunError {
    RunError::FioVerify(Box::new(verify::FioMismatch {
        job: job.name.clone(),
        target: verify::target_name(&job.target),
        reason: mismatch.reason(),
        offset_bytes: mismatch.offset_bytes,
        len_bytes: mismatch.len_bytes,
        dumped: String::new(),
    }))
}

/// Verification state: what this worker wrote (see `verify.rs`).
pub(super) struct VerifyState {
    pub(super) record: WriteRecord,
    /// Generations of this worker's writes in flight.
    writes_in_flight: Vec<u32>,
    expected: Vec<u8>,
    pub(super) checked_bytes: u64,
    /// Check reads during the write phase. Off when other workers write the same bytes: their
    /// writes may land under this worker's reads at any time.
    pub(super) in_phase_checks: bool,
}

/// Everything one worker keeps for verification.
pub(super) struct Verifying {
    /// fio's `verify` with its read-back (`do_verify=1`).
    pub(super) state: Option<VerifyState>,
    /// The job, for verify messages (verify runs only).
    job: Option<Box<JobSpec>>,
    /// fio's `verify_only`: writes are recorded, not issued, and reads skipped.
    pub(super) only: bool,
    /// A job that only reads, with fio's verify set: each read is checked against fio's
    /// headers and checksums as it completes (fio 3.33, backend.c `do_io`).
    read_check: Option<Box<FioFormat>>,
    /// fio's `verify_backlog` (verify runs that set it).
    pub(super) backlog: Option<Backlog>,
    /// fio's verify state file (`verify_state_save`): the clone's thread index (from 0) and
    /// its last completed writes; `None` when the job writes none.
    pub(super) state_file: Option<(u32, VerifyStateRecorder)>,
    /// fio's `verify_state_load`: where this clone's verify pass stops.
    pub(super) cut: Option<VerifyCut>,
    /// fio's check of the headers' seeds in a mixed job (`verify_seeds.rs`), once the clone's
    /// fio thread is known.
    pub(super) seed_order: Option<SeedOrder>,
    /// The block that check fails at, judged when the writes are done.
    seed_failure: Option<SeedMismatch>,
    /// fio's verify pass after a loop that another follows: the loop's written pieces still
    /// to read back, and the next loop's first I/O, held until they are done.
    loop_reads: std::collections::VecDeque<(u64, u32)>,
    pub(super) held_first_io: Option<PlannedIo>,
    /// Whether a loop was read back already: fio's `experimental_verify` reads back only the
    /// first (`VerifySpec::first_loop_only`).
    first_loop_read_back: bool,
}

impl Verifying {
    /// What worker `worker_index` of `job` (data seed `seed`) keeps to verify `region`, its
    /// blocks in fio's verify format `fio_format` when the job sets one.
    pub(super) fn new(
        job: &JobSpec,
        worker_index: u32,
        seed: u64,
        region: Region,
        fio_format: Option<Arc<FioFormat>>,
    ) -> Verifying {
        let granule_bytes = verify::granule_bytes(job);
        // fio's sequential I/O that starts before the region's end runs past it (io_u.c, the
        // size is checked against the file, not the region): the record reaches one largest
        // block further, so such a write is read back whole.
        let recorded = Region {
            start_bytes: region.start_bytes,
            len_bytes: region.len_bytes
                + job.max_block_bytes().next_multiple_of(granule_bytes.max(1)),
        };
        let state = job.verify.then(|| VerifyState {
            record: WriteRecord::new(
                worker_index,
                seed,
                job.data_pattern,
                granule_bytes,
                recorded,
            )
            .with_format(fio_format)
            .in_write_order(fio_logs_writes_in_a_list(job)),
            writes_in_flight: Vec::with_capacity(job.iodepth as usize),
            expected: vec![0; job.max_block_bytes() as usize],
            checked_bytes: 0,
            in_phase_checks: true,
        });
        let spec = job.verify_spec.as_ref();
        Verifying {
            state,
            job: (job.verify || spec.is_some()).then(|| Box::new(job.clone())),
            only: spec.is_some_and(|v| v.only),
            read_check: spec
                .filter(|v| job.read_percent == 100 && !job.verify && !v.only)
                .map(|v| Box::new(FioFormat::for_reads(v, job))),
            backlog: spec.filter(|_| job.verify).and_then(|v| {
                let every = v.backlog?;
                Some(Backlog {
                    every,
                    batch: v.backlog_batch.unwrap_or(every),
                    handed_out: std::collections::VecDeque::new(),
                    logged: crate::fio_history::FioHistory::new(fio_logs_writes_in_a_list(job)),
                    batch_left: 0,
                    // fio's `last_ddir` starts at 0, DDIR_READ: no batch before a write completes.
                    last_was_read: true,
                })
            }),
            state_file: None,
            cut: None,
            seed_order: None,
            seed_failure: None,
            loop_reads: std::collections::VecDeque::new(),
            held_first_io: None,
            first_loop_read_back: false,
        }
    }

    /// Whether a completed I/O's data is checked: a reading job's against fio's headers, or
    /// a verify run's.
    pub(super) fn checks_completions(&self) -> bool {
        self.read_check.is_some() || self.state.is_some()
    }

    /// Whether the loops' read-back is fio's `experimental_verify` pass.
    fn experimental_pass(&self) -> bool {
        (self.job.as_ref())
            .and_then(|job| job.verify_spec.as_ref())
            .is_some_and(|verify| verify.first_loop_only)
    }

    /// Whether fio's `experimental_verify` has read back its first loop, so that no other
    /// loop of `job` is read back.
    fn past_first_loop(&self, job: &JobSpec) -> bool {
        self.first_loop_read_back
            && job
                .verify_spec
                .as_ref()
                .is_some_and(|verify| verify.first_loop_only)
    }

    /// Whether the job reads back what it wrote once its I/O is done (a verify run).
    pub(super) fn reads_back_at_end(&self) -> bool {
        self.state.is_some()
    }

    /// The write about to be numbered `write_counter` goes into the read-back's record.
    fn note_logged_write(&mut self, write_counter: u64, offset_bytes: u64) {
        if let Some(cut) = self.cut.as_mut() {
            cut.note_logged_write(write_counter, offset_bytes);
        }
    }

    /// A verify run's write numbered `write_counter` about to go from `buf`: its expected
    /// content goes into `buf` and the record. Returns its generation (`None`: no verify run).
    pub(super) fn record_write(
        &mut self,
        buf: &mut [u8],
        io: &PlannedIo,
        write_counter: u64,
        reseeds: Option<u32>,
    ) -> Option<u32> {
        self.state.as_ref()?;
        self.note_logged_write(write_counter, io.offset_bytes);
        let v = self.state.as_mut()?;
        // 1..=u32::MAX; 0 means "never written" in the record.
        let generation = (write_counter % CHECKED_GENERATIONS) as u32 + 1;
        let record = &mut v.record;
        record.draw_data_seed(generation, reseeds);
        record.fill_expected(buf, io.offset_bytes, generation);
        record.record(
            io.offset_bytes,
            u64::from(io.len_bytes),
            generation,
            &v.writes_in_flight,
        );
        v.writes_in_flight.push(generation);
        if let Some(backlog) = self.backlog.as_mut() {
            backlog
                .logged
                .log(io.offset_bytes, u64::from(io.len_bytes), generation);
        }
        Some(generation)
    }

    /// The write record's data seeds (fio's streams).
    pub(super) fn use_data_seeds(&mut self, data_seeds: crate::verify_data_seeds::DataSeeds) {
        if let Some(v) = self.state.as_mut() {
            v.record.use_data_seeds(data_seeds);
        }
    }

    /// fio's verify pass after a loop starts: its reads (issued as the backlog's, each
    /// drawing a data seed aside) draw from the re-seeded stream.
    fn note_verify_pass(&mut self) {
        if let Some(v) = self.state.as_mut() {
            v.record.restart_data_seeds_for_verify_pass();
        }
    }

    /// A draw of the write record's data seeds for something else than a write's data.
    pub(super) fn draw_data_seed_aside(&mut self, reseeds: Option<u32>) {
        if let Some(v) = self.state.as_mut() {
            v.record.draw_data_seed_aside(reseeds);
        }
    }

    /// The generation a read about to go checks (0: none): granules whose last write has a
    /// lower one were written and not rewritten when it was issued.
    pub(super) fn read_generation(&self, backlog_read: bool, write_counter: u64) -> u32 {
        let Some(v) = self.state.as_ref() else {
            return 0;
        };
        if (v.in_phase_checks || backlog_read) && write_counter < CHECKED_GENERATIONS {
            let next = write_counter as u32 + 1;
            return v.writes_in_flight.iter().fold(next, |m, g| m.min(*g));
        }
        0
    }

    /// fio's `verify_only`: the workload is played without I/O, its writes logged for the
    /// read-back (`write_counter` numbering this one); its reads are not issued. Returns
    /// whether it was a write that counts.
    fn play_without_io(&mut self, io: &PlannedIo, write_counter: u64) -> bool {
        if io.direction != IoDirection::Write || self.state.is_none() {
            return false;
        }
        self.note_logged_write(write_counter, io.offset_bytes);
        let Some(v) = self.state.as_mut() else {
            return false;
        };
        let generation = (write_counter % CHECKED_GENERATIONS) as u32 + 1;
        v.record
            .record(io.offset_bytes, u64::from(io.len_bytes), generation, &[]);
        // fio's dry run completes the played writes too.
        if let Some((_, state)) = self.state_file.as_mut() {
            state.write_completed(io.offset_bytes);
        }
        true
    }

    /// A job that only reads, with fio's verify format: the read of `io` into `found` against
    /// fio's headers and checksums.
    fn check_fio_read(&self, io: &InFlight, found: &[u8]) -> Result<(), RunError> {
        let Some(format) = self.read_check.as_deref() else {
            return Ok(());
        };
        if let Err(failure) = format.check_read_block(found, io.offset_bytes) {
            let job = self.job.as_deref().expect("set with a read check");
            let expected = format.expected_from_header(found, io.offset_bytes);
            return Err(verify::fio_failure(
                job,
                format,
                failure,
                io.offset_bytes,
                found,
                &expected,
            ));
        }
        Ok(())
    }

    /// A verify run's completed write leaves the writes in flight (and joins the backlog).
    fn write_completed(&mut self, io: &InFlight) {
        let Some(v) = self.state.as_mut() else {
            return;
        };
        if let Some(i) = v.writes_in_flight.iter().position(|g| *g == io.generation) {
            v.writes_in_flight.swap_remove(i);
        }
    }

    /// A verify run's write that failed (and was passed): out of the writes in flight, the
    /// record and the backlog's log, so no read checks its block.
    pub(super) fn write_failed(&mut self, io: &InFlight) {
        let Some(v) = self.state.as_mut() else {
            return;
        };
        if let Some(i) = v.writes_in_flight.iter().position(|g| *g == io.generation) {
            v.writes_in_flight.swap_remove(i);
        }
        v.record.forget(io.offset_bytes, u64::from(io.len_bytes));
        if let Some(backlog) = self.backlog.as_mut() {
            backlog.logged.remove(io.offset_bytes);
        }
    }

    /// The generations of the writes in flight (none outside a verify run).
    pub(super) fn writes_in_flight(&self) -> &[u32] {
        self.state.as_ref().map_or(&[], |v| &v.writes_in_flight)
    }

    /// fio's backlog (if any) next read, and whether one is due; see `Backlog`.
    pub(super) fn backlog_read_due(&self) -> bool {
        let in_flight = self.writes_in_flight();
        self.backlog.as_ref().is_some_and(|b| b.read_due(in_flight))
    }

    /// The backlog's next read, if one is due.
    pub(super) fn next_backlog_read(&mut self) -> Option<PlannedIo> {
        let in_flight = self.state.as_ref().map_or(&[][..], |v| &v.writes_in_flight);
        self.backlog.as_mut()?.next_read(in_flight)
    }

    /// A read-back of `io` that could not be checked (no data) leaves the record as a checked
    /// one does.
    fn forget_read_back(&mut self, io: &InFlight) {
        if let Some(v) = self.state.as_mut() {
            v.record.forget(io.offset_bytes, u64::from(io.len_bytes));
        }
    }

    /// A verify run's completed read of `io` into `found`, compared with what was written
    /// when it checks a generation.
    /// `own`: for a backlog read, the generation of the write it reads back.
    fn check_verified_read(
        &mut self,
        io: &InFlight,
        found: &[u8],
        own: Option<u32>,
    ) -> Result<(), RunError> {
        let Some(v) = self.state.as_mut() else {
            return Ok(());
        };
        if io.backlog && !v.in_phase_checks {
            // Another worker writes these bytes too: what is there may be its write, which
            // only the read-back after every worker's writes can tell (fio's clones pass
            // whichever header they find). The piece leaves fio's log all the same.
            v.record.forget(io.offset_bytes, u64::from(io.len_bytes));
            return Ok(());
        }
        let job = self.job.as_deref().expect("set with verify");
        let len_bytes = u64::from(io.len_bytes);
        if let Some(mismatch) =
            own.and_then(|own| overwritten_piece(job, &v.record, io.offset_bytes, len_bytes, own))
        {
            return Err(fio_mismatch(job, &mismatch));
        }
        let bytes = verify::check_read(
            job,
            &v.record,
            &[],
            io.offset_bytes,
            found,
            &mut v.expected,
            Some(io.generation),
        )?;
        v.checked_bytes += bytes;
        // Read in the write phase: the read-back after the writes does not read it again, as
        // fio drops the piece from its log once read, whoever else writes there.
        if io.backlog && bytes == u64::from(io.len_bytes) {
            v.record.forget(io.offset_bytes, u64::from(io.len_bytes));
        } else if io.backlog {
            // Granules a later write holds stay for the read-back; the piece is out of fio's
            // list all the same.
            v.record
                .drop_piece(io.offset_bytes, u64::from(io.len_bytes));
        }
        Ok(())
    }
}

impl Worker {
    /// fio verifies after every loop, not only the last (backend.c, `thread_main`: `do_verify`
    /// after each `do_io`): at the end of a loop that another follows, its written pieces are
    /// read back in fio's order and checked before the next loop's first I/O, and dropped from
    /// the record, so the read-back after the job reads the last loop's alone. Where other
    /// workers write this one's bytes the reads go unchecked (fio's threads race there). With
    /// `verify_backlog` the pass reads what the backlog has not yet, in its log's order (fio's
    /// `do_verify` reads the same log), and the backlog's batch count carries on.
    pub(super) fn queue_loop_read_back(&mut self) {
        let (Some(v), Some(job)) = (self.verifying.state.as_ref(), self.verifying.job.as_ref())
        else {
            return;
        };
        // Where other workers write this one's bytes (`in_phase_checks` off) the pass still
        // reads as fio's does, each read left unchecked (`check_verified_read`).
        if self.verifying.only {
            return;
        }
        if let Some(backlog) = self.verifying.backlog.as_mut() {
            let reads: std::collections::VecDeque<(u64, u32)> = backlog
                .logged
                .drain()
                .into_iter()
                .map(|(offset, len, _)| (offset, len as u32))
                .collect();
            // fio's pass runs, and re-seeds the data stream, with nothing left to read too
            // (the backlog read it all: seed 6161).
            self.verifying.note_verify_pass();
            if !reads.is_empty() {
                self.verifying.loop_reads = reads;
                self.verifying.held_first_io = self.pending.take();
            }
            return;
        }
        if self.verifying.past_first_loop(job) {
            // fio's experimental pass after a later loop reads nothing: its writes are never
            // read back, at this loop's end or the job's.
            if let Some(v) = self.verifying.state.as_mut() {
                v.record.forget_generations_from(1);
            }
            return;
        }
        self.verifying.first_loop_read_back = true;
        let reads: std::collections::VecDeque<(u64, u32)> = v
            .record
            .extents(job.max_block_bytes())
            .map(|(offset, len)| (offset, len as u32))
            .collect();
        self.verifying.note_verify_pass();
        if !reads.is_empty() {
            self.verifying.loop_reads = reads;
            self.verifying.held_first_io = self.pending.take();
        }
    }

    /// During a loop's read-back: its next read, or a wait for its reads to finish before the
    /// next loop's first I/O goes (it is pending again then); `None` outside one.
    pub(super) fn loop_read_back_step(&mut self) -> Option<Option<PlannedIo>> {
        if let Some((offset_bytes, len_bytes)) = self.verifying.loop_reads.pop_front() {
            // fio's experimental pass regenerates writes as reads, and `td_io_queue` counts
            // them as writes (`acct_ddir`): the next loop's `numberio` and its `fsync=N` count
            // follow fio's `io_issues` (seed 5678: `loops=3` wrote its third pass numbered from
            // 512 in fio, from 256 here).
            if self.verifying.experimental_pass() {
                self.progress.write_counter += 1;
            }
            return Some(Some(PlannedIo {
                direction: IoDirection::Read,
                offset_bytes,
                len_bytes,
            }));
        }
        self.verifying.held_first_io?;
        if self.queue.outstanding() > 0 {
            return Some(None);
        }
        self.pending = self.verifying.held_first_io.take();
        // fio's pass empties its log, every piece read, overlapped ones too (a piece another
        // of the pass overwrote in part is checked only where it still holds): the next
        // loop's pass, or the job's, reads that loop's writes alone.
        if let Some(v) = self.verifying.state.as_mut() {
            v.record.forget_generations_from(1);
        }
        None
    }

    /// Whether a loop's read-back is under way (no sync is due inside fio's verify pass).
    /// Once its last read completed the pass is over: fio's next loop starts with
    /// `get_rw_ddir`, whose `fsync=N` check may sync before the held I/O goes.
    pub(super) fn reading_back_a_loop(&self) -> bool {
        self.verifying.held_first_io.is_some()
            && (!self.verifying.loop_reads.is_empty() || self.queue.outstanding() > 0)
    }

    /// fio's `verify_only` for `io`: nothing goes to the engine, the write is recorded.
    pub(super) fn play_without_io(&mut self, io: &PlannedIo) {
        self.pending = None;
        if self
            .verifying
            .play_without_io(io, self.progress.write_counter)
        {
            self.progress.write_counter += 1;
        }
        self.progress.issued_ios += 1;
        self.progress.issued_bytes += u64::from(io.len_bytes);
    }

    /// The checks of a completed `io` whose data is in engine slot `slot`: a read against
    /// fio's headers, a verify run's read against what was written.
    pub(super) fn check_completed_data(
        &mut self,
        engine: &dyn IoEngine,
        slot: u32,
        io: &InFlight,
        direction: IoDirection,
    ) {
        let len = io.len_bytes as usize;
        // An engine that moves no data (`null`) has none to check: as fio's verify.c with
        // `FIO_FAKEIO`, its reads are issued and counted and never checked.
        let moves_data = engine.capabilities().moves_data;
        let checks_reads = direction == IoDirection::Read && moves_data;
        if checks_reads && self.verifying.read_check.is_some() {
            if let Err(error) = self
                .verifying
                .check_fio_read(io, &engine.buffer(slot)[..len])
            {
                // Seed 9797: a reading job's bad block passes continue_on_error as a
                // read-back's does (`--verify=crc32 --continue_on_error=all` over zeros: fio
                // reads on, 256 errors, exit 0).
                self.fail_or_count_verify_error(error);
            }
        }
        if self.verifying.state.is_none() {
            return;
        }
        // Every backlog read's completion takes its piece out of those handed out, whichever
        // way it goes on.
        let own = match (&mut self.verifying.backlog, io.backlog) {
            (Some(backlog), true) => backlog.take_handed_out(io.offset_bytes),
            _ => None,
        };
        let checked = match direction {
            IoDirection::Write => {
                self.verifying.write_completed(io);
                Ok(())
            }
            IoDirection::Read if io.generation > 0 && moves_data => self
                .verifying
                .check_verified_read(io, &engine.buffer(slot)[..len], own),
            // A loop's read-back on an engine without data: nothing to check, but the piece
            // is read back all the same, and fio drops it from its log as after a check.
            IoDirection::Read if io.generation > 0 && io.backlog => {
                self.verifying.forget_read_back(io);
                Ok(())
            }
            _ => Ok(()),
        };
        if let Err(error) = checked {
            self.fail_or_count_verify_error(error);
        }
    }

    /// A failed check of a completed read: fio's `continue_on_error=verify` counts a bad block
    /// as an error of the read (EILSEQ) and reads on; anything else ends the job.
    fn fail_or_count_verify_error(&mut self, error: RunError) {
        if error.is_verify_failure() && self.failures.passes_verify_failures() {
            self.stats.read.verify_errors += 1;
            if self.stats.first_error_errno == 0 {
                self.stats.first_error_errno = storlab_job::ERRNO_EILSEQ;
            }
            return;
        }
        self.error.get_or_insert(error);
    }

    /// What this worker wrote, for the read-back (verify runs; taken once).
    pub fn take_write_record(&mut self) -> Option<WriteRecord> {
        self.verifying.seed_failure = self
            .verifying
            .seed_order
            .as_mut()
            .and_then(SeedOrder::finish);
        if self.verifying.seed_failure.is_none() {
            if let (Some(backlog), Some(v), Some(job)) = (
                self.verifying.backlog.as_ref(),
                self.verifying.state.as_ref(),
                self.verifying.job.as_deref(),
            ) {
                if v.in_phase_checks {
                    self.verifying.seed_failure = backlog.first_overwritten(job, &v.record);
                }
            }
        }
        let past_first_loop = self
            .verifying
            .job
            .as_deref()
            .is_some_and(|job| self.verifying.past_first_loop(job));
        let state = self.verifying.state.as_mut()?;
        if past_first_loop {
            state.record.forget_generations_from(1);
        }
        let empty = WriteRecord::new(
            self.worker_index,
            0,
            self.data.pattern,
            1,
            Region {
                start_bytes: 0,
                len_bytes: 0,
            },
        );
        let mut record = std::mem::replace(&mut state.record, empty);
        // fio's verify pass ends at the block its header check fails.
        if let Some(failure) = self.verifying.seed_failure {
            record.end_read_back_at(failure.offset_bytes, failure.len_bytes);
        }
        if let Some(first) = self
            .verifying
            .cut
            .as_ref()
            .and_then(VerifyCut::first_unchecked_write)
        {
            // Generations are write numbers from 1 (the record's 0 is "never written").
            record.forget_generations_from(u32::try_from(first + 1).unwrap_or(u32::MAX));
        }
        Some(record)
    }

    /// fio's failure of this clone's read-back on a header seed its verify pass did not draw
    /// there (`verify_seeds.rs`), once the writes are done; `job` names it.
    pub fn seed_check_failure(&self, job: &JobSpec) -> Option<RunError> {
        let mismatch = self.verifying.seed_failure?;
        if self.failures.passes_verify_failures() {
            // fio counts the block and reads on, failing each later block whose seed is not
            // the one its pass draws there, which storlab's read-back (that checks the data
            // the last write left) does not follow past the first (seed 9797).
            return Some(RunError::FioNotFollowed {
                job: job.name.clone(),
                reason: format!(
                    "fio 3.33's verify pass finds a header seed it did not draw at offset {} \
                     ({}), and continue_on_error makes it read on past that block, failing \
                     each later one its draws miss; storlab stops the job there (without \
                     continue_on_error for verify, both fail at that block)",
                    mismatch.offset_bytes,
                    mismatch.reason()
                ),
            });
        }
        Some(fio_mismatch(job, &mismatch))
    }
}
