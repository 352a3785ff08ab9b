//! The issue/reap loop: keeps each worker's queue full, records every completion, and stops on
//! size, count, deadline, error or interruption. Several workers can share one engine (virtual
//! time); each owns a contiguous range of the engine's buffer slots.
//!
//! One `Worker` type, split by concern into private files (as smoltcp's `iface/interface/`):
//! `issue` fills the queue, `reap` handles a completion, `drive` runs the loop over the
//! workers of one engine (`batched` is fio's loop for `iodepth_batch*`); the worker's state is
//! grouped by what is read together: `pacing` (rate, think time), `sync`, `sharing` (overlap,
//! flow), `priority` (cmdprio), `data` (what writes carry), `verifying`, `checks` (per
//! interval), `latency` (the latency-target search), `iolog` and `replay`.

use crate::fio_log::{FioLogFile, FioLogRecorder};
use crate::fio_verify::FioFormat;
use crate::offsets::{OffsetGenerator, PlannedIo, Region};
use crate::verify::{self, WriteRecord};
use crate::RunError;
use std::sync::Arc;
use storlab_engine::{IoDirection, IoEngine};
use storlab_job::JobSpec;
use storlab_stats::WorkerStats;

mod batched;
mod checks;
mod data;
mod drive;
mod iolog;
mod issue;
mod latency;
mod pacing;
mod priority;
mod reap;
mod replay;
mod sharing;
mod sync;
#[cfg(test)]
mod tests;
mod verifying;

pub(crate) use drive::charged_snapshot;
pub use drive::{drive, Timing};

use checks::IntervalChecks;
use data::WriteData;
use iolog::IoLog;
use issue::Passes;
use latency::LatencySearch;
use pacing::{Rate, Think};
use priority::Priority;
use reap::Failures;
use replay::Replay;
use sharing::Sharing;
use sync::Syncs;
use verifying::Verifying;

const NS_PER_S: u64 = 1_000_000_000;

/// Reads during the write phase are checked only while generations have not wrapped.
const CHECKED_GENERATIONS: u64 = u32::MAX as u64;

/// A request between `queue` and its completion.
#[derive(Clone, Copy, Debug, Default)]
struct InFlight {
    direction: Option<IoDirection>,
    offset_bytes: u64,
    len_bytes: u32,
    queued_ns: u64,
    submitted_ns: u64,
    /// Verify runs. A write: its generation. A read: granules whose last write has a lower
    /// generation were written and not rewritten when it was issued, so it checks them (0: none).
    generation: u32,
    /// A read of fio's `verify_backlog`: once checked whole, the final read-back skips it.
    backlog: bool,
    /// The I/O priority it carried (fio's `io_u->ioprio`: a cmdprio pick, else the job's).
    ioprio: u16,
    /// A queued sync (`Syncs::fio_queues_syncs`) rather than an I/O: no direction, no bytes.
    flush: Option<storlab_engine::FlushKind>,
}

/// One worker's queue: its engine slots, which are free, and what is in flight in the others.
struct Queue {
    /// The worker's first engine slot; it owns `in_flight.len()` from there.
    slot_base: u32,
    free_slots: Vec<u32>,
    /// Per slot (from `slot_base`): the request it holds, if any.
    in_flight: Vec<InFlight>,
    /// How many I/Os may be in flight: the job's depth, the search's, or 0 while the I/O in
    /// flight drains after the search stepped down (fio's `queue_full`, `io_u_quiesce`).
    depth_limit: usize,
    /// fio's `iodepth_batch*` and `iodepth_low` when not fio's defaults, or fio's defaults
    /// where its loop is followed step by step (`fio_null_busy`) (`batched.rs`).
    io_batch: Option<storlab_job::IoBatch>,
    /// fio's null engine above depth 1 (`JobSpec::fio_logs_busy_requeues`): a request queued
    /// while the batch committed before it is unreaped is refused once, and fio reaps that
    /// batch before queueing it again (`batched.rs`, `requeue_after_busy`).
    fio_null_busy: bool,
    /// I/Os queued since fio's last `td_io_commit` (fio's `io_u_queued`, `batched.rs`).
    batch_queued: u32,
    /// Taken off every offset given to the engine: fio's mmap engine puts each I/O at its
    /// offset less the region's start (`JobSpec::fio_engine_shifts_to_file_start`).
    engine_shift_bytes: u64,
    /// The shift follows fio's `file_offset` from zone to zone (strided zones on mmap).
    engine_shifts_by_zone: bool,
    /// The free slot the pending I/O holds while `serialize_overlap` keeps it back: fio took
    /// its I/O unit before the overlap check, and the unit it requeues on FIO_Q_BUSY goes
    /// again first, with its buffer; units freed meanwhile serve the I/Os after it.
    overlap_held_slot: Option<u32>,
    /// The held write drew its data again since the worker's last completion: fio retries a
    /// held I/O once per completion it reaps (each `wait_for_completions` after FIO_Q_BUSY
    /// reaps one), and each retry of a write draws, however often storlab asks meanwhile.
    overlap_retry_drawn: bool,
}

impl Queue {
    fn outstanding(&self) -> usize {
        self.in_flight.len() - self.free_slots.len()
    }

    /// Takes a free slot for the next I/O: the one the pending I/O held while an overlap kept
    /// it back, else the last freed (fio's freelist hands out its top unit first).
    fn take_free_slot(&mut self) -> u32 {
        let held = self.overlap_held_slot.take().and_then(|held| {
            let at = self.free_slots.iter().rposition(|&s| s == held)?;
            Some(self.free_slots.remove(at))
        });
        held.unwrap_or_else(|| self.free_slots.pop().expect("checked non-empty"))
    }

    /// The engine slots of the queue.
    fn slots(&self) -> std::ops::Range<u32> {
        self.slot_base..self.slot_base + self.in_flight.len() as u32
    }
}

/// How far one worker has come, and where its job's bounds stop it.
struct Progress {
    limit_ios: Option<u64>,
    limit_bytes: Option<u64>,
    /// A trim/write job: only its writes count towards `limit_bytes`.
    bytes_of_writes_only: bool,
    issued_ios: u64,
    issued_bytes: u64,
    /// Writes issued (or played, with `verify_only`): the next write's number.
    write_counter: u64,
    /// The generator can place no further I/O (a fio job ends there).
    generator_done: bool,
}

impl Progress {
    /// The bounds of `job` over `region`.
    fn new(job: &JobSpec, region: Region) -> Progress {
        let time_based = job.time_based && job.runtime_ns.is_some();
        // fio's backend.c: "in trimwrite mode, each byte is trimmed and then written, so allow
        // total_bytes or number of ios to be twice as big"; the job's bytes count its writes.
        let trim_write = job.trim == storlab_job::TrimMode::TrimWrite;
        let trimwrite_factor = if trim_write { 2 } else { 1 };
        let loops = u64::from(job.loops.max(1));
        Progress {
            // fio 3.33 bounds the job at `number_ios` × `loops` I/Os, counted over the whole
            // job (backend.c, `exceeds_number_ios`), each loop still ending with its bytes:
            // `loops=3 number_ios=5` over 8 blocks reads blocks 0..=7 then 0..=6.
            // A time-based job ignores `number_ios` in fio 3.33 (`fio --time_based --runtime=1
            // --number_ios=12` issues I/O for the whole second): its runtime alone ends it.
            limit_ios: job
                .number_ios
                .filter(|_| !time_based)
                .map(|count| count.saturating_mul(loops).saturating_mul(trimwrite_factor)),
            // fio's HOWTO on `number_ios`: it "does not extend the amount of I/O", so the
            // bytes bound stays and whichever comes first ends the job. A replay ends with
            // its trace. fio: `io_size` bytes (default: the region's size), `loops` times over.
            limit_bytes: (!time_based && job.replay.is_none())
                .then(|| loop_bytes(job, region).saturating_mul(loops)),
            bytes_of_writes_only: trim_write,
            issued_ios: 0,
            issued_bytes: 0,
            write_counter: 0,
            generator_done: false,
        }
    }

    /// The job's bounds are reached.
    fn bounds_reached(&self) -> bool {
        self.limit_ios.is_some_and(|n| self.issued_ios >= n)
            || self.limit_bytes.is_some_and(|n| self.issued_bytes >= n)
    }
}

/// One worker of one job.
pub struct Worker {
    pub job_index: usize,
    pub worker_index: u32,
    pub region: Region,
    job_name: String,
    /// fio's thread number of this clone (1-based, counted over the run): which CPU of
    /// `cpus_allowed_policy=split` it runs on.
    pub fio_thread_number: u32,
    /// fio's thread number of the job's first clone (`JobSet::first_thread_number`): which
    /// job of the set this is, for the live snapshots (live.rs).
    pub job_first_thread: u32,
    generator: OffsetGenerator,
    /// The next I/O, chosen and not yet queued (a rate, a trim to the bytes left or a
    /// replay's gap held it back).
    pending: Option<PlannedIo>,
    queue: Queue,
    progress: Progress,
    data: WriteData,
    rate: Rate,
    think: Think,
    sync: Syncs,
    sharing: Sharing,
    priority: Priority,
    passes: Passes,
    verifying: Verifying,
    checks: IntervalChecks,
    latency: LatencySearch,
    failures: Failures,
    iolog: Option<IoLog>,
    /// fio's `read_iolog`: the trace replaces the generator.
    replay: Option<Replay>,
    /// The first error seen; the worker stops issuing once set.
    pub error: Option<RunError>,
    pub stats: WorkerStats,
    /// fio's per-I/O logs, when the job asks for any.
    fio_log: Option<FioLogRecorder>,
    /// Which directions' I/Os have a submission latency of their own, [read/write, trim]
    /// (`JobSpec::has_submission_latency`; none on an engine that does each I/O in its submit).
    submission_latency: [bool; 2],
}

/// Where measurement begins and ends on the engine's clock.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Window {
    measure_start_ns: u64,
    deadline_ns: Option<u64>,
}

impl Worker {
    /// A worker for `job`, using engine slots `slot_base .. slot_base + job.iodepth`.
    pub fn new(
        job_index: usize,
        job: &JobSpec,
        worker_index: u32,
        region: Region,
        slot_base: u32,
        interval_ns: u64,
    ) -> Self {
        let depth = job.iodepth as usize;
        let time_based = job.time_based && job.runtime_ns.is_some();
        let seed = job.seed ^ u64::from(worker_index).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let fio_format = job
            .verify_spec
            .as_ref()
            .map(|spec| Arc::new(FioFormat::new(spec, job)));
        let latency = LatencySearch::new(job, interval_ns);
        let mut worker = Worker {
            job_index,
            worker_index,
            region,
            job_name: job.name.clone(),
            fio_thread_number: worker_index + 1,
            job_first_thread: 1,
            generator: OffsetGenerator::new(job, region, worker_index),
            pending: None,
            queue: Queue {
                slot_base,
                free_slots: (0..depth as u32).rev().collect(),
                in_flight: vec![InFlight::default(); depth],
                overlap_held_slot: None,
                overlap_retry_drawn: false,
                depth_limit: latency.first_depth(depth),
                io_batch: job.io_batch.or_else(|| {
                    job.fio_logs_busy_requeues()
                        .then(|| storlab_job::IoBatch::fio(job.iodepth, None, None, None, None))
                }),
                fio_null_busy: job.fio_logs_busy_requeues(),
                batch_queued: 0,
                engine_shift_bytes: if job.fio_engine_shifts_to_file_start() {
                    region.start_bytes
                } else {
                    0
                },
                engine_shifts_by_zone: job.fio_engine_shifts_to_file_start()
                    && job.strided_zones.is_some(),
            },
            progress: Progress::new(job, region),
            verifying: Verifying::new(job, worker_index, seed, region, fio_format.clone()),
            data: WriteData::new(job, seed, fio_format),
            rate: Rate::new(job, worker_index),
            think: Think::new(job.think),
            sync: Syncs::for_job(job),
            sharing: Sharing::new(job.serialize_overlap),
            priority: Priority::new(job, region, time_based),
            passes: Passes::new(job, region),
            checks: IntervalChecks::new(job),
            latency,
            failures: Failures::new(job),
            iolog: IoLog::for_job(job, worker_index),
            replay: Replay::for_job(job),
            error: None,
            // Reserve the per-interval series for the planned run so recording never
            // allocates; size-bounded runs of unknown length grow it (rarely: once per new
            // interval).
            stats: WorkerStats::with_expected_duration(
                interval_ns,
                job.runtime_ns.unwrap_or(0) + job.ramp_time_ns,
            ),
            fio_log: None,
            submission_latency: [
                job.has_submission_latency(false),
                job.has_submission_latency(true),
            ],
        };
        worker.list_priorities();
        worker
    }

    /// Draws offsets, sizes and directions as fio's thread `thread_number` does, for a job from
    /// a fio job file or fio-style flags, on a target of `file_size_bytes`.
    pub fn draw_as_fio_thread(&mut self, job: &JobSpec, thread_number: u32, file_size_bytes: u64) {
        self.fio_thread_number = thread_number;
        let clone = u64::from(job.clone_index_base) + u64::from(self.worker_index);
        self.generator
            .use_fio_streams(job, file_size_bytes, thread_number, clone);
        self.verifying.seed_order = crate::verify_seeds::SeedOrder::for_job(job, thread_number);
        if let Some(data_seeds) =
            crate::verify_data_seeds::DataSeeds::of_fio_thread(job, thread_number)
        {
            self.verifying.use_data_seeds(data_seeds.clone());
            self.data.unchecked_seeds = data_seeds;
        }
        if let Some(cmdprio) = self.priority.cmdprio.as_mut() {
            // fio seeds `prio_state` for every job (init.c, `td_fill_rand_seeds_internal`);
            // storlab's own jobs (no fio streams) seed theirs from the job's seed alike.
            let seeds = match &job.fio_random {
                Some(fio) => crate::fio_rand::fio_job_seeds(fio, thread_number),
                None => crate::fio_rand::job_seeds(job.seed, thread_number, true),
            };
            cmdprio.reseed(seeds[crate::fio_rand::seed_index::PRIO_CMDS]);
        }
    }

    /// fio's write buffers (`FioBufferFill`: dedupe, compressible shares, patterns, zeros,
    /// refills): this worker's writes carry fio thread `thread_number`'s buffers;
    /// `all_threads` holds every thread's initial buffer stream (`dedupe_global` copies them).
    /// A verify job writes verify data instead, as in fio.
    pub fn fill_as_fio_thread(
        &mut self,
        job: &JobSpec,
        thread_number: u32,
        all_threads: &[crate::fio_rand::FioRand],
    ) {
        let Some(fill) = job.fio_buffers else {
            return;
        };
        if job.verify || job.verify_spec.is_some() || job.read_percent >= 100 {
            return;
        }
        let buffers = crate::fio_buffers::FioBuffers::new(job, fill, thread_number, all_threads);
        self.data.fio_buffers = Some(Box::new(buffers));
    }

    /// Sets fio's I/O units up for `engine` (backend.c, `init_io_u`): one per slot of the
    /// worker, each over `max_block_bytes`.
    pub fn set_up_fio_units(&mut self, engine: &dyn IoEngine, max_block_bytes: u64) {
        let Some(buffers) = self.data.fio_buffers.as_mut() else {
            return;
        };
        let units = self.queue.in_flight.len() as u32;
        buffers.set_up(units, max_block_bytes, !engine.capabilities().queued);
    }

    /// Records the logs `job` asks for (`write_bw_log`...), as fio's job clone numbered
    /// `thread_number` (the `N` of `PREFIX_bw.N.log`).
    pub fn log_as_fio_thread(&mut self, job: &JobSpec, thread_number: u32) {
        self.fio_log = FioLogRecorder::new(&job.fio_logs, thread_number);
        // fio saves the verify state of a writing job with verify (backend.c, at the thread's
        // end), `thread_number - 1` naming the file.
        if job.saves_verify_state() {
            self.verifying.state_file = Some((
                thread_number.saturating_sub(1),
                crate::verify_state::VerifyStateRecorder::new(job.iodepth),
            ));
        }
    }

    /// fio's `verify_state_load`: this clone's verify pass stops where fio's would with the
    /// state a previous run saved.
    pub(crate) fn stop_verify_as_saved(&mut self, saved: crate::verify_state::SavedVerifyState) {
        self.verifying.cut = Some(crate::verify_state::VerifyCut::new(saved));
    }

    /// Writes fio's verify state file of this clone of `job` into the current directory, if
    /// the job saves one (fio's `verify_state_save`, on by default in fio's job files).
    pub fn save_verify_state(&self, job: &JobSpec) -> Result<(), RunError> {
        let Some((thread_index, recorder)) = &self.verifying.state_file else {
            return Ok(());
        };
        let path = crate::verify_state::file_name(&job.name, *thread_index);
        let random_state = self.generator.fio_random_state(job.verify);
        let write_counter = self.progress.write_counter;
        let bytes = recorder.file_bytes(&job.name, *thread_index, write_counter, random_state);
        storlab_engine::output_file::write_whole("verify_state_save", &path, &bytes).map_err(
            |error| RunError::Plan {
                job: job.name.clone(),
                reason: format!("{error} (verify_state_save=0 writes none)"),
            },
        )
    }

    /// This worker's fio log files (taken once, after the run).
    pub fn take_fio_logs(&mut self) -> Vec<FioLogFile> {
        let elapsed_ns = self.stats.elapsed_ns;
        self.fio_log
            .take()
            .map(|log| log.finish(elapsed_ns))
            .unwrap_or_default()
    }

    /// Logs the read-back of `own` in `write_iolog`, as fio logs its verify reads, before
    /// they are issued (cut into reads of at most `slot_bytes`, as the read-back cuts them).
    pub fn log_read_back(&mut self, own: &WriteRecord, slot_bytes: u64) -> Result<(), RunError> {
        // The empty loop's sync after it reuses the I/O unit of the read-back's last read,
        // whose offset fio logs.
        if self.sync.empty_loop_sync_due.is_some() {
            if let Some((offset_bytes, _)) = own.extents(slot_bytes).last() {
                self.note_read_back_end(offset_bytes);
            }
        }
        match self.iolog.as_mut() {
            Some(log) => log.append_read_back(
                own.extents(slot_bytes),
                self.queue.fio_null_busy,
                &self.job_name,
            ),
            None => Ok(()),
        }
    }

    /// The engine slots this worker uses, for its read-back.
    pub fn read_back_slots(&self, slot_bytes: u64) -> verify::ReadBackSlots {
        verify::ReadBackSlots {
            slot_base: self.queue.slot_base,
            depth: self.queue.in_flight.len() as u32,
            slot_bytes,
            engine_shift_bytes: self.queue.engine_shift_bytes,
        }
    }

    /// Other workers write into this worker's region: reads during the write phase are not
    /// checked (the read-back after every worker has finished still checks every granule).
    pub fn shares_its_region(&mut self) {
        if let Some(v) = self.verifying.state.as_mut() {
            v.in_phase_checks = false;
        }
    }

    /// Add bytes the read-back compared.
    pub fn add_verified_bytes(&mut self, bytes: u64) {
        if let Some(v) = self.verifying.state.as_mut() {
            v.checked_bytes += bytes;
        }
    }

    /// Bytes compared against expected content so far.
    pub fn verified_bytes(&self) -> u64 {
        self.verifying.state.as_ref().map_or(0, |v| v.checked_bytes)
    }

    /// The job's name (what the live view shows).
    pub(crate) fn job_name(&self) -> &str {
        &self.job_name
    }

    /// The I/Os and bytes the worker still has to issue, for the live view's estimate of
    /// the time left: (0, 0) once it issues no more, none when no count or size bounds it.
    pub(crate) fn work_left(&self) -> Option<(u64, u64)> {
        if self.finished_issuing() {
            return Some((0, 0));
        }
        let progress = &self.progress;
        match (progress.limit_bytes, progress.limit_ios) {
            (Some(limit), _) => Some((0, limit.saturating_sub(progress.issued_bytes))),
            (None, Some(limit)) => Some((limit.saturating_sub(progress.issued_ios), 0)),
            (None, None) => None,
        }
    }

    /// The worker issues no more: an error, a full device, the generator's or replay's end,
    /// the latency search's or steady state's verdict, or the job's bounds.
    fn finished_issuing(&self) -> bool {
        self.error.is_some()
            || self.failures.filled
            || self.progress.generator_done
            || self.latency.done
            || self.checks.steady_reached
            || self.progress.bounds_reached()
            || (self.pending.is_none() && self.replay.as_ref().is_some_and(Replay::done))
    }

    /// Opens the worker's logs before its first I/O; `synchronous`: on an engine that does
    /// each I/O inside submit (no I/O then has a submission latency, nor a line in fio's
    /// submission-latency log).
    fn open_logs(&mut self, synchronous: bool) -> Result<(), RunError> {
        if let Some(log) = self.iolog.as_mut() {
            log.open(&self.job_name)?;
        }
        if synchronous {
            self.submission_latency = [false, false];
        }
        Ok(())
    }

    /// Whether an I/O of `direction` has a submission latency of its own.
    fn has_submission_latency(&self, direction: IoDirection) -> bool {
        self.submission_latency[usize::from(direction == IoDirection::Trim)]
    }

    /// The worker starts at `start_ns` on the engine's clock, measuring in `window`.
    fn start(&mut self, start_ns: u64, window: Window) {
        self.sync.measure_start_ns = window.measure_start_ns;
        self.rate.next_ns = [start_ns; 2];
        self.think.last_stall_end_ns = start_ns;
        if let Some(search) = self.latency.search.as_deref_mut() {
            // fio's lat_target_init in do_io: the first window starts with the job.
            search.new_window(start_ns);
        }
        if let Some(replay) = self.replay.as_mut() {
            replay.start(start_ns);
        }
    }

    /// The worker has stopped: it leaves its flow and the overlap board, and its I/O log is
    /// committed.
    fn stop_issuing(&mut self) -> Result<(), RunError> {
        self.leave_flow();
        self.leave_overlap_board();
        if let Some(log) = self.iolog.as_mut() {
            log.close(&self.job_name)?;
        }
        Ok(())
    }
}

/// Bytes one loop of `job` moves over `region` (fio: `io_size`, default the region's size).
fn loop_bytes(job: &JobSpec, region: Region) -> u64 {
    crate::offsets::clone_io_size_bytes(job, region)
        .or(job.strided_zones.and(job.size_bytes))
        .unwrap_or_else(|| crate::offsets::pass_bytes(job, region))
}
