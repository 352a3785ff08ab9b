//! The issue/reap loop: keeps each worker's queue full, records every completion, and stops on
//! size, count, deadline, error or interruption. Several workers can share one engine (virtual
//! time); each owns a contiguous range of the engine's buffer slots.

use crate::fio_log::{FioLogFile, FioLogRecorder, LoggedIo};
use crate::fio_verify::FioFormat;
use crate::offsets::{OffsetGenerator, PlannedIo, Region};
use crate::pattern;
use crate::verify::{self, WriteRecord};
use crate::RunError;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use storlab_engine::output_file::{OutputError, OutputFile};
use storlab_engine::{FlushKind, IoCompletion, IoDirection, IoEngine, IoRequest};
use storlab_job::{
    ContinueOnError, DataPattern, JobSpec, SteadyStateSpec, SyncSpec, Target, ThinkSpec,
    ERRNO_EDQUOT, ERRNO_ENOSPC,
};
use storlab_stats::{ResourceUsage, WorkerStats};

mod batched;

const NS_PER_S: u64 = 1_000_000_000;

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
}

/// fio's `verify_backlog` (io_u.c, `fill_io_u`): whenever the count of written, not yet checked
/// blocks reaches a multiple of `every` and the last I/O was not a read, the next `batch` I/Os
/// read back logged blocks, oldest first; the rest waits for the read-back after the writes.
struct Backlog {
    every: u64,
    batch: u64,
    /// Writes completed and not yet read back, in completion order (fio logs them at issue;
    /// storlab at completion, so a check never races its write).
    logged: std::collections::VecDeque<(u64, u32)>,
    /// Reads left in the current batch.
    batch_left: u64,
    last_was_read: bool,
}

impl Backlog {
    /// The next read of a batch, if one is due.
    fn next_read(&mut self) -> Option<PlannedIo> {
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
        self.batch_left -= 1;
        let (offset_bytes, len_bytes) = self.logged.pop_front()?;
        Some(PlannedIo {
            direction: IoDirection::Read,
            offset_bytes,
            len_bytes,
        })
    }
}

/// Verification state: what this worker wrote (see `verify.rs`).
struct VerifyState {
    record: WriteRecord,
    /// Generations of this worker's writes in flight.
    writes_in_flight: Vec<u32>,
    expected: Vec<u8>,
    checked_bytes: u64,
    /// Check reads during the write phase. Off when other workers write the same bytes: their
    /// writes may land under this worker's reads at any time.
    in_phase_checks: bool,
}

/// Stream numbers of the `rate_process=poisson` draws, clear of the offset streams (one per
/// worker, from 0).
const POISSON_STREAM_BASE: u64 = 1 << 32;

/// Reads during the write phase are checked only while generations have not wrapped.
const CHECKED_GENERATIONS: u64 = u32::MAX as u64;

/// First line of an I/O log in fio's format version 2 (fio iolog.c, `iolog_ver2`): then one
/// line per file action (`FILE add`, `FILE open`, `FILE close`) or I/O (`FILE read OFFSET LEN`).
const IOLOG_V2_HEADER: &str = "fio version 2 iolog";
/// Log lines kept in memory before they are written out.
const IOLOG_BUFFER_BYTES: usize = 64 * 1024;

/// fio's `write_iolog`: every I/O this worker issues, in issue order. Written through the one
/// guarded open (`storlab_engine::output_file`): into a temporary beside the name, renamed over
/// it when the worker ends, so a device, FIFO, link or another file's name is never written.
struct IoLog {
    path: PathBuf,
    /// The target as the log names it.
    file_label: String,
    file: Option<OutputFile>,
    pending: Vec<u8>,
}

impl IoLog {
    fn error(&self, error: OutputError, job: &str) -> RunError {
        RunError::Plan {
            job: job.to_string(),
            reason: error.to_string(),
        }
    }

    fn open(&mut self, job: &str) -> Result<(), RunError> {
        let file = OutputFile::create("write_iolog", &self.path).map_err(|e| self.error(e, job))?;
        self.file = Some(file);
        let label = self.file_label.clone();
        writeln!(self.pending, "{IOLOG_V2_HEADER}\n{label} add\n{label} open")
            .expect("writing to memory");
        Ok(())
    }

    fn record(&mut self, direction: IoDirection, offset_bytes: u64, len_bytes: u32) {
        let action = match direction {
            IoDirection::Read => "read",
            IoDirection::Write => "write",
            IoDirection::Trim => "trim",
        };
        writeln!(
            self.pending,
            "{} {action} {offset_bytes} {len_bytes}",
            self.file_label
        )
        .expect("writing to memory");
    }

    /// A sync as fio logs it: `FILE sync OFFSET 0` (`datasync` for fdatasync), where fio's offset
    /// is whatever its request last carried; with one request in flight, the last I/O's.
    fn record_sync(&mut self, kind: FlushKind, last_offset_bytes: u64) {
        let action = match kind {
            FlushKind::All => "sync",
            FlushKind::Data => "datasync",
        };
        writeln!(
            self.pending,
            "{} {action} {last_offset_bytes} 0",
            self.file_label
        )
        .expect("writing to memory");
    }

    fn flush(&mut self, job: &str) -> Result<(), RunError> {
        if let Some(file) = self.file.as_mut() {
            let written = file.write_all(&self.pending);
            self.pending.clear();
            written.map_err(|e| self.error(e, job))?;
        }
        Ok(())
    }

    /// fio logs its verify reads too (backend.c, `do_verify`, after reopening the file): the
    /// read-back's `extents` appended to the closed log, between an `open` and a `close`.
    fn append_read_back(
        &mut self,
        extents: impl Iterator<Item = (u64, u64)>,
        job: &str,
    ) -> Result<(), RunError> {
        // The writes' log was committed when they ended; the read-back is appended through
        // the guarded append (a temporary and a rename, as every file storlab writes).
        self.close(job)?;
        let label = self.file_label.clone();
        writeln!(self.pending, "{label} open").expect("writing to memory");
        for (offset_bytes, len_bytes) in extents {
            self.record(IoDirection::Read, offset_bytes, len_bytes as u32);
        }
        writeln!(self.pending, "{label} close").expect("writing to memory");
        let appended =
            storlab_engine::output_file::append_whole("write_iolog", &self.path, &self.pending);
        self.pending.clear();
        appended.map_err(|e| self.error(e, job))
    }

    fn close(&mut self, job: &str) -> Result<(), RunError> {
        if self.file.is_none() {
            return Ok(());
        }
        let label = self.file_label.clone();
        writeln!(self.pending, "{label} close").expect("writing to memory");
        self.flush(job)?;
        match self.file.take() {
            Some(file) => file.commit().map_err(|e| self.error(e, job)),
            None => Ok(()),
        }
    }
}

impl Drop for IoLog {
    /// A worker that failed part-way keeps the log of what it issued, as fio's log written as
    /// it goes does; an error here has no one left to report to, the path was checked at open.
    fn drop(&mut self) {
        let _ = self.close("");
    }
}

/// fio's `read_iolog`: where this worker is in the trace it replays.
struct Replay {
    spec: storlab_job::ReplaySpec,
    /// The next line to do.
    next: usize,
    /// When the last I/O went (the recorded gaps are kept from one I/O to the next, as fio's
    /// `iolog_delay` keeps them from its last issue), and when the worker started (version 2's
    /// `wait` counts from there).
    last_issue_ns: u64,
    start_ns: u64,
}

impl Replay {
    fn done(&self) -> bool {
        self.next >= self.spec.trace.entries.len()
    }
}

/// What the replay does next.
enum ReplayStep {
    Io(PlannedIo),
    /// Nothing until then (a recorded gap or `wait`), or, with `None`, until the queue drains
    /// (a sync).
    Wait(Option<u64>),
}

/// One worker of one job.
pub struct Worker {
    pub job_index: usize,
    pub worker_index: u32,
    pub region: Region,
    generator: OffsetGenerator,
    pending: Option<PlannedIo>,
    pattern: DataPattern,
    /// fio's `buffer_pattern`: the buffers hold it from setup on and writes are not stamped.
    /// Kept when the job also reads, whose data lands in the same slots: each write then
    /// refills its slot.
    fixed_pattern: Option<Vec<u8>>,
    refill_pattern: bool,
    /// fio's dedupe buffers: every write refilled from fio's buffer streams.
    fio_buffers: Option<Box<crate::fio_buffers::FioBuffers>>,
    slot_base: u32,
    free_slots: Vec<u32>,
    in_flight: Vec<InFlight>,
    limit_ios: Option<u64>,
    limit_bytes: Option<u64>,
    issued_ios: u64,
    issued_bytes: u64,
    write_counter: u64,
    /// Minimum ns between two I/Os of each direction (rate limiting), and when the next may go.
    rate_interval_ns: [Option<u64>; 2],
    /// Bandwidth ceiling of each direction, bytes per second: an I/O of B bytes then takes
    /// B / rate of the direction's time.
    rate_bytes_per_s: [Option<u64>; 2],
    rate_next_ns: [u64; 2],
    /// fio's `rate_process=poisson`: the draws of the exponential spacing of rated I/Os.
    poisson: Option<rand_chacha::ChaCha8Rng>,
    /// Reads and writes both (`rwmixread` strictly between 0 and 100).
    mixed: bool,
    verify: Option<VerifyState>,
    /// The job, for verify messages (verify runs only).
    verify_job: Option<Box<JobSpec>>,
    /// fio's verify format of a job that writes it without reading back (`do_verify=0`).
    unchecked_format: Option<Arc<FioFormat>>,
    /// fio's `verify_only`: writes are recorded, not issued, and reads skipped.
    verify_only: bool,
    /// fio's `serialize_overlap`: no I/O goes while one overlapping it is in flight.
    serialize_overlap: bool,
    /// With `io_submit_mode=offload`, the in-flight I/O of every such job of the group.
    overlap_board: Option<Arc<crate::overlap::OverlapBoard>>,
    /// fio's `flow`: this worker's part of the flow its job names.
    flow: Option<crate::flow::FlowMember>,
    /// A job that only reads, with fio's verify set: each read is checked against fio's
    /// headers and checksums as it completes (fio 3.33, backend.c `do_io`).
    read_check: Option<Box<FioFormat>>,
    /// This worker's data seed (verify blocks are generated from it).
    worker_seed: u64,
    /// fio's `verify_backlog` (verify runs that set it).
    backlog: Option<Backlog>,
    job_name: String,
    /// Bytes in one pass over the region (fio's `io_size`, by default the region's size), when
    /// the region's cached pages are dropped each time a pass completes (fio's `invalidate`
    /// for every loop and every wrap of a time-based job): buffered jobs only.
    invalidate_pass_bytes: Option<u64>,
    /// Issued bytes at which the next pass starts.
    next_pass_at_bytes: u64,
    iolog: Option<IoLog>,
    /// The generator can place no further I/O (a fio job ends there).
    generator_done: bool,
    /// fio's `read_iolog`: the trace replaces the generator.
    replay: Option<Replay>,
    /// fio's `fsync`, `fdatasync`, `end_fsync`, `fsync_on_close`.
    sync: SyncSpec,
    /// A sync was the last thing done: none is due again until another I/O goes (fio's
    /// `last_was_sync`).
    last_was_sync: bool,
    /// Offset of the last I/O issued, for the sync lines of the I/O log.
    last_offset_bytes: u64,
    /// fio's `thinktime` family.
    think: ThinkSpec,
    /// I/Os counted towards `thinktime_blocks` (completed, or issued with
    /// `thinktime_blocks_type=issue`), and their number at the last stall.
    think_counted_ios: u64,
    think_counted_at_last_stall: u64,
    /// When the last stall ended (start of the I/O time `thinktime_iotime` measures).
    think_last_stall_end_ns: u64,
    /// A stall is due: no new I/O until the worker's queue has drained and the stall is over.
    think_due: bool,
    /// The stall in progress ends here.
    think_until_ns: Option<u64>,
    /// The `thinktime_spin` part of the stall in progress burns CPU until here.
    think_spin_until_ns: Option<u64>,
    /// fio's `rate_min` per direction, bytes per second, and the last interval checked.
    rate_min_bytes_per_s: [Option<u64>; 2],
    /// fio's `rate_iops_min` per direction, I/Os per second.
    rate_min_ios_per_s: [Option<u64>; 2],
    rate_min_checked_interval: u64,
    /// fio's `steadystate`, and whether it was reached (the worker then stops issuing).
    steadystate: Option<SteadyStateSpec>,
    pub steady_reached: bool,
    /// The last interval whose window was judged.
    steady_checked_interval: u64,
    pub stats: WorkerStats,
    /// fio's per-I/O logs, when the job asks for any.
    fio_log: Option<FioLogRecorder>,
    /// fio's cmdprio family, for the engines that carry a priority per request (io_uring,
    /// libaio; the simulator records it): which requests get one.
    cmdprio: Option<crate::cmdprio::CmdPrioDraw>,
    /// The job's `prio`/`prioclass` as an ioprio value (fio's `td->ioprio`; 0: unset).
    default_ioprio: u16,
    /// Bytes of one of the job's loops, when each loop starts fio's streams over (a fio job
    /// with `randrepeat`, not time-based): cmdprio's stream restarts with them.
    cmdprio_loop_bytes: Option<u64>,
    /// fio's verify state file (`verify_state_save`): the clone's thread index (from 0) and
    /// its last completed writes; `None` when the job writes none.
    verify_state: Option<(u32, crate::verify_state::VerifyStateRecorder)>,
    /// fio's `verify_state_load`: where this clone's verify pass stops.
    verify_cut: Option<crate::verify_state::VerifyCut>,
    /// fio's `continue_on_error`: the failed I/Os the worker counts and goes on past.
    continue_on_error: ContinueOnError,
    /// fio's `fill_device`: a write failing with ENOSPC or EDQUOT ends the worker as a success.
    fill_device: bool,
    /// The file system (or quota) is full: the worker issues nothing more and ends without
    /// error once its I/Os in flight are back, as fio's `fill_device` job.
    filled: bool,
    /// The first error seen; the worker stops issuing once set.
    pub error: Option<RunError>,
    /// Syncs that start from here on the engine's clock are measured (after the ramp).
    sync_measure_start_ns: u64,
    /// fio's `latency_target`: the queue-depth search, when the job sets a target.
    qd_search: Option<Box<crate::latency_target::QueueDepthSearch>>,
    /// How many I/Os may be in flight: the job's depth, the search's, or 0 while the I/O in
    /// flight drains after the search stepped down (fio's `queue_full`, `io_u_quiesce`).
    depth_limit: usize,
    /// The search stepped down (`Some(false)`) or settled (`Some(true)`: the statistics reset
    /// once drained): no new I/O until the queue has drained.
    latency_quiesce: Option<bool>,
    /// The search's final window met the target: the job issues no more (fio's `td->done`).
    latency_search_done: bool,
    /// The settled search reset the statistics here (fio's `reset_all_stats`): what is
    /// reported counts from then on.
    stats_reset_ns: Option<u64>,
    /// Series interval of the statistics, to start them again after a reset.
    interval_ns: u64,
    /// fio's `iodepth_batch*` and `iodepth_low` when not fio's defaults (`batched.rs`).
    io_batch: Option<storlab_job::IoBatch>,
    /// I/Os queued since fio's last `td_io_commit` (fio's `io_u_queued`, `batched.rs`).
    batch_queued: u32,
    /// fio's thread number of this clone (1-based, counted over the run): which CPU of
    /// `cpus_allowed_policy=split` it runs on.
    pub fio_thread_number: u32,
}

/// Where measurement begins and ends on the engine's clock.
#[derive(Clone, Copy, Debug)]
struct Window {
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
        // fio's backend.c: "in trimwrite mode, each byte is trimmed and then written, so allow
        // total_bytes or number of ios to be twice as big".
        let trimwrite_factor = if job.trim == storlab_job::TrimMode::TrimWrite {
            2
        } else {
            1
        };
        // fio's HOWTO on `number_ios`: it "does not extend the amount of I/O", so the bytes
        // bound stays and whichever comes first ends the job. A replay ends with its trace.
        let limit_bytes = if time_based || job.replay.is_some() {
            None
        } else {
            // fio: `io_size` bytes (default: the region's size), `loops` times over.
            Some(
                loop_bytes(job, region)
                    .saturating_mul(u64::from(job.loops.max(1)))
                    .saturating_mul(trimwrite_factor),
            )
        };
        let per_second = |r: Option<u64>| r.filter(|r| *r > 0).map(|r| NS_PER_S / r.min(NS_PER_S));
        let seed = job.seed ^ u64::from(worker_index).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let fio_format = job
            .verify_spec
            .as_ref()
            .map(|spec| Arc::new(FioFormat::new(spec, job)));
        let verify = job.verify.then(|| VerifyState {
            record: WriteRecord::new(
                worker_index,
                seed,
                job.data_pattern,
                verify::granule_bytes(job),
                region,
            )
            .with_format(fio_format.clone()),
            writes_in_flight: Vec::with_capacity(depth),
            expected: vec![0; job.max_block_bytes() as usize],
            checked_bytes: 0,
            in_phase_checks: true,
        });
        let mut worker = Worker {
            job_index,
            worker_index,
            region,
            generator: OffsetGenerator::new(job, region, worker_index),
            pending: None,
            generator_done: false,
            pattern: job.data_pattern,
            fixed_pattern: job.buffer_pattern.clone(),
            refill_pattern: job.read_percent > 0,
            fio_buffers: None,
            slot_base,
            free_slots: (0..depth as u32).rev().collect(),
            in_flight: vec![InFlight::default(); depth],
            // fio 3.33 bounds the job at `number_ios` × `loops` I/Os, counted over the whole job
            // (backend.c, `exceeds_number_ios`), each loop still ending with its bytes:
            // `loops=3 number_ios=5` over 8 blocks reads blocks 0..=7 then 0..=6.
            // A time-based job ignores `number_ios` in fio 3.33 (`fio --time_based --runtime=1
            // --number_ios=12` issues I/O for the whole second): its runtime alone ends it.
            limit_ios: job.number_ios.filter(|_| !time_based).map(|count| {
                count
                    .saturating_mul(u64::from(job.loops.max(1)))
                    .saturating_mul(trimwrite_factor)
            }),
            limit_bytes,
            issued_ios: 0,
            issued_bytes: 0,
            write_counter: 0,
            rate_interval_ns: [
                per_second(job.rate_iops.read),
                per_second(job.rate_iops.write),
            ],
            rate_bytes_per_s: [job.rate_bytes.read, job.rate_bytes.write],
            rate_next_ns: [0; 2],
            poisson: job.rate_poisson.then(|| {
                use rand_core::SeedableRng;
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(job.seed);
                // Its own stream, so the offsets stay those of the linear job.
                rng.set_stream(u64::from(worker_index) + POISSON_STREAM_BASE);
                rng
            }),
            mixed: (1..100).contains(&job.read_percent) && job.replay.is_none(),
            verify,
            verify_job: (job.verify || job.verify_spec.is_some()).then(|| Box::new(job.clone())),
            // `do_verify=0`: the blocks carry fio's headers, nothing reads them back.
            unchecked_format: fio_format.filter(|_| !job.verify),
            verify_only: job.verify_spec.as_ref().is_some_and(|v| v.only),
            serialize_overlap: job.serialize_overlap,
            overlap_board: None,
            flow: None,
            read_check: job
                .verify_spec
                .as_ref()
                .filter(|v| job.read_percent == 100 && !job.verify && !v.only)
                .map(|v| Box::new(FioFormat::for_reads(v, job))),
            worker_seed: seed,
            backlog: job
                .verify_spec
                .as_ref()
                .filter(|_| job.verify)
                .and_then(|v| {
                    let every = v.backlog?;
                    Some(Backlog {
                        every,
                        batch: v.backlog_batch.unwrap_or(every),
                        logged: std::collections::VecDeque::new(),
                        batch_left: 0,
                        last_was_read: false,
                    })
                }),
            job_name: job.name.clone(),
            invalidate_pass_bytes: (job.invalidate && !job.direct && job.replay.is_none()).then(
                || {
                    job.io_size_bytes
                        .unwrap_or_else(|| crate::offsets::pass_bytes(job, region))
                        .max(1)
                },
            ),
            next_pass_at_bytes: job
                .io_size_bytes
                .unwrap_or_else(|| crate::offsets::pass_bytes(job, region))
                .max(1),
            iolog: job.write_iolog_file(worker_index).map(|path| IoLog {
                path,
                file_label: match &job.target {
                    Target::Path(path) => path.display().to_string(),
                    Target::Sim(stack) => format!("sim:{stack}"),
                    Target::TempFileIn(_) | Target::None => job.name.clone(),
                },
                file: None,
                pending: Vec::with_capacity(IOLOG_BUFFER_BYTES),
            }),
            replay: job.replay.clone().map(|spec| Replay {
                spec,
                next: 0,
                last_issue_ns: 0,
                start_ns: 0,
            }),
            sync: job.sync,
            last_was_sync: false,
            last_offset_bytes: 0,
            think: job.think,
            think_counted_ios: 0,
            think_counted_at_last_stall: 0,
            think_last_stall_end_ns: 0,
            think_due: false,
            think_until_ns: None,
            think_spin_until_ns: None,
            rate_min_bytes_per_s: [job.rate_min.read, job.rate_min.write],
            rate_min_ios_per_s: [job.rate_iops_min.read, job.rate_iops_min.write],
            rate_min_checked_interval: 0,
            steadystate: job.steadystate,
            steady_reached: false,
            steady_checked_interval: 0,
            // Reserve the per-interval series for the planned run so recording never allocates;
            // size-bounded runs of unknown length grow it (rarely: once per new interval).
            stats: WorkerStats::with_expected_duration(
                interval_ns,
                job.runtime_ns.unwrap_or(0) + job.ramp_time_ns,
            ),
            fio_log: None,
            cmdprio: job
                .uses_cmdprio()
                .then(|| crate::cmdprio::CmdPrioDraw::new(&job.engine_tuning.cmdprio, job.seed)),
            default_ioprio: job.io_priority.map_or(0, |p| p.value()),
            cmdprio_loop_bytes: (job.fio_random.as_ref().is_some_and(|f| f.randrepeat)
                && !time_based)
                .then(|| crate::offsets::pass_bytes(job, region).max(1)),
            verify_state: None,
            verify_cut: None,
            continue_on_error: job.continue_on_error.clone(),
            fill_device: job.fill_device,
            filled: false,
            error: None,
            sync_measure_start_ns: 0,
            qd_search: job.latency_target.filter(|t| t.searches()).map(|target| {
                Box::new(crate::latency_target::QueueDepthSearch::new(
                    target,
                    job.iodepth,
                    0,
                ))
            }),
            // fio's lat_target_init: a search starts at depth 1.
            depth_limit: match job.latency_target.filter(|t| t.searches()) {
                Some(_) => 1,
                None => depth,
            },
            latency_quiesce: None,
            latency_search_done: false,
            stats_reset_ns: None,
            interval_ns,
            io_batch: job.io_batch,
            batch_queued: 0,
            fio_thread_number: worker_index + 1,
        };
        // fio keeps latencies per priority (its `clat_prio` arrays) for the directions cmdprio
        // gives priorities to, listed up front in fio's order.
        if let Some(cmdprio) = &worker.cmdprio {
            for (direction, stats) in [
                (IoDirection::Read, &mut worker.stats.read),
                (IoDirection::Write, &mut worker.stats.write),
            ] {
                stats.by_priority = cmdprio
                    .priorities(direction, worker.default_ioprio)
                    .into_iter()
                    .map(storlab_stats::PriorityLatency::new)
                    .collect();
            }
        }
        worker
    }

    /// Draws offsets, sizes and directions as fio's thread `thread_number` does, for a job from
    /// a fio job file or fio-style flags, on a target of `file_size_bytes`.
    pub fn draw_as_fio_thread(&mut self, job: &JobSpec, thread_number: u32, file_size_bytes: u64) {
        self.fio_thread_number = thread_number;
        self.generator
            .use_fio_streams(job, file_size_bytes, thread_number);
        if let Some(cmdprio) = self.cmdprio.as_mut() {
            // fio seeds `prio_state` for every job (init.c, `td_fill_rand_seeds_internal`);
            // storlab's own jobs (no fio streams) seed theirs from the job's seed alike.
            let seeds = match &job.fio_random {
                Some(fio) if fio.randrepeat || fio.randseed_given => {
                    crate::fio_rand::job_seeds(fio.randseed, thread_number, fio.randrepeat)
                }
                Some(_) => crate::fio_sequence::entropy_seeds(),
                None => crate::fio_rand::job_seeds(job.seed, thread_number, true),
            };
            cmdprio.reseed(seeds[crate::fio_rand::seed_index::PRIO_CMDS]);
        }
    }

    /// fio's dedupe buffers (`dedupe_percentage`): this worker's writes carry fio thread
    /// `thread_number`'s buffers; `all_threads` holds every thread's initial buffer stream
    /// (`dedupe_global` copies them). A verify job writes verify data instead, as in fio.
    pub fn fill_as_fio_thread(
        &mut self,
        job: &JobSpec,
        thread_number: u32,
        all_threads: &[crate::fio_rand::FioRand],
    ) {
        let Some(dedupe) = job.dedupe else {
            return;
        };
        if job.verify || job.verify_spec.is_some() || job.read_percent >= 100 {
            return;
        }
        let mut buffers =
            crate::fio_buffers::FioBuffers::new(job, dedupe, thread_number, all_threads);
        buffers.fill_at_setup(job.iodepth, job.max_block_bytes());
        self.fio_buffers = Some(Box::new(buffers));
    }

    /// Records the logs `job` asks for (`write_bw_log`...), as fio's job clone numbered
    /// `thread_number` (the `N` of `PREFIX_bw.N.log`).
    pub fn log_as_fio_thread(&mut self, job: &JobSpec, thread_number: u32) {
        self.fio_log = FioLogRecorder::new(&job.fio_logs, thread_number);
        // fio saves the verify state of a writing job with verify (backend.c, at the thread's
        // end), `thread_number - 1` naming the file.
        if job.saves_verify_state() {
            self.verify_state = Some((
                thread_number.saturating_sub(1),
                crate::verify_state::VerifyStateRecorder::new(job.iodepth),
            ));
        }
    }

    /// fio's `verify_state_load`: this clone's verify pass stops where fio's would with the
    /// state a previous run saved.
    pub(crate) fn stop_verify_as_saved(&mut self, saved: crate::verify_state::SavedVerifyState) {
        self.verify_cut = Some(crate::verify_state::VerifyCut::new(saved));
    }

    /// The write about to be numbered `write_counter` goes into the read-back's record.
    fn note_logged_write(&mut self, offset_bytes: u64) {
        if let Some(cut) = self.verify_cut.as_mut() {
            cut.note_logged_write(self.write_counter, offset_bytes);
        }
    }

    /// Makes this worker a member of a flow (fio's `flow`): it issues only while its share of
    /// the flow's I/Os is within its share of the flow's weight.
    pub fn join_flow(&mut self, member: crate::flow::FlowMember) {
        self.flow = Some(member);
    }

    /// Checks this worker's I/O against the in-flight I/O of other offload jobs too (fio's
    /// `serialize_overlap` with `io_submit_mode=offload`).
    pub fn share_overlap_board(&mut self, board: Arc<crate::overlap::OverlapBoard>) {
        self.overlap_board = Some(board);
    }

    /// This worker's key on the overlap board: unique within the group.
    fn overlap_key(&self) -> u64 {
        (self.job_index as u64) << 32 | u64::from(self.worker_index)
    }

    /// Whether an I/O of this worker in flight overlaps `io` (fio's `in_flight_overlap`).
    fn overlaps_own_in_flight(&self, io: &PlannedIo) -> bool {
        let (start, end) = (io.offset_bytes, io.offset_bytes + u64::from(io.len_bytes));
        self.in_flight.iter().any(|f| {
            f.direction.is_some()
                && start < f.offset_bytes + u64::from(f.len_bytes)
                && f.offset_bytes < end
        })
    }

    /// Leaves the worker's flow once it issues no more (fio's `flow_exit_job`).
    fn leave_flow(&mut self) {
        if let Some(flow) = self.flow.as_mut() {
            flow.leave();
        }
    }

    /// Takes what this worker still had on the overlap board off it, once it stopped.
    fn leave_overlap_board(&self) {
        if let Some(board) = &self.overlap_board {
            board.release_all(self.overlap_key());
        }
    }

    /// Writes fio's verify state file of this clone of `job` into the current directory, if
    /// the job saves one (fio's `verify_state_save`, on by default in fio's job files).
    pub fn save_verify_state(&self, job: &JobSpec) -> Result<(), RunError> {
        let Some((thread_index, recorder)) = &self.verify_state else {
            return Ok(());
        };
        let path = crate::verify_state::file_name(&job.name, *thread_index);
        let random_state = self.generator.fio_random_state(job.verify);
        let bytes = recorder.file_bytes(&job.name, *thread_index, self.write_counter, random_state);
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

    /// What this worker wrote, for the read-back (verify runs; taken once).
    pub fn take_write_record(&mut self) -> Option<WriteRecord> {
        let state = self.verify.as_mut()?;
        let empty = WriteRecord::new(
            self.worker_index,
            0,
            self.pattern,
            1,
            Region {
                start_bytes: 0,
                len_bytes: 0,
            },
        );
        let mut record = std::mem::replace(&mut state.record, empty);
        if let Some(first) = self
            .verify_cut
            .as_ref()
            .and_then(crate::verify_state::VerifyCut::first_unchecked_write)
        {
            // Generations are write numbers from 1 (the record's 0 is "never written").
            record.forget_generations_from(u32::try_from(first + 1).unwrap_or(u32::MAX));
        }
        Some(record)
    }

    /// Logs the read-back of `own` in `write_iolog`, as fio logs its verify reads, before
    /// they are issued (cut into reads of at most `slot_bytes`, as the read-back cuts them).
    pub fn log_read_back(&mut self, own: &WriteRecord, slot_bytes: u64) -> Result<(), RunError> {
        match self.iolog.as_mut() {
            Some(log) => log.append_read_back(own.extents(slot_bytes), &self.job_name),
            None => Ok(()),
        }
    }

    /// The engine slots this worker uses, for its read-back.
    pub fn read_back_slots(&self, slot_bytes: u64) -> verify::ReadBackSlots {
        verify::ReadBackSlots {
            slot_base: self.slot_base,
            depth: self.in_flight.len() as u32,
            slot_bytes,
        }
    }

    /// Other workers write into this worker's region: reads during the write phase are not
    /// checked (the read-back after every worker has finished still checks every granule).
    pub fn shares_its_region(&mut self) {
        if let Some(v) = self.verify.as_mut() {
            v.in_phase_checks = false;
        }
    }

    /// Add bytes the read-back compared.
    pub fn add_verified_bytes(&mut self, bytes: u64) {
        if let Some(v) = self.verify.as_mut() {
            v.checked_bytes += bytes;
        }
    }

    /// Bytes compared against expected content so far.
    pub fn verified_bytes(&self) -> u64 {
        self.verify.as_ref().map_or(0, |v| v.checked_bytes)
    }

    fn outstanding(&self) -> usize {
        self.in_flight.len() - self.free_slots.len()
    }

    fn finished_issuing(&self) -> bool {
        self.error.is_some()
            || self.filled
            || self.generator_done
            || self.latency_search_done
            || self.steady_reached
            || self.limit_ios.is_some_and(|n| self.issued_ios >= n)
            || self.limit_bytes.is_some_and(|n| self.issued_bytes >= n)
            || (self.pending.is_none() && self.replay.as_ref().is_some_and(Replay::done))
    }

    /// fio's replay (iolog.c, `read_iolog_get`): the trace's syncs and waits up to its next I/O,
    /// then that I/O once its recorded gap since the last one has passed.
    fn next_replayed(
        &mut self,
        engine: &mut dyn IoEngine,
        now_ns: u64,
    ) -> Result<ReplayStep, RunError> {
        // Nothing completes while the replay looks ahead.
        let outstanding = self.outstanding();
        loop {
            let replay = self.replay.as_mut().expect("called on replays");
            let Some(entry) = replay.spec.trace.entries.get(replay.next).copied() else {
                return Ok(ReplayStep::Wait(None));
            };
            let direction = match entry.action {
                storlab_job::TraceAction::Read => IoDirection::Read,
                storlab_job::TraceAction::Write => IoDirection::Write,
                storlab_job::TraceAction::Trim => IoDirection::Trim,
                storlab_job::TraceAction::Sync { data_only } => {
                    if outstanding > 0 {
                        return Ok(ReplayStep::Wait(None));
                    }
                    replay.next += 1;
                    let kind = if data_only {
                        FlushKind::Data
                    } else {
                        FlushKind::All
                    };
                    self.flush(engine, kind)?;
                    continue;
                }
                storlab_job::TraceAction::WaitUntil { since_start_us } => {
                    let due_ns = replay.start_ns + since_start_us.saturating_mul(1000);
                    if !replay.spec.no_stall && now_ns < due_ns {
                        return Ok(ReplayStep::Wait(Some(due_ns)));
                    }
                    replay.next += 1;
                    continue;
                }
            };
            let due_ns = replay.last_issue_ns + replay.spec.delay_ns(&entry);
            if now_ns < due_ns {
                return Ok(ReplayStep::Wait(Some(due_ns)));
            }
            replay.next += 1;
            replay.last_issue_ns = now_ns;
            return Ok(ReplayStep::Io(PlannedIo {
                direction,
                offset_bytes: entry.offset_bytes,
                len_bytes: entry.len_bytes,
            }));
        }
    }

    fn rate_index(direction: IoDirection) -> usize {
        usize::from(direction == IoDirection::Write)
    }

    /// Queue as many I/Os as the free slots, limits and rate allow. Returns how many were queued
    /// and, when the rate held one back, when it may go.
    fn fill(
        &mut self,
        engine: &mut dyn IoEngine,
        now_ns: u64,
        queued_slots: &mut Vec<u32>,
        limit: usize,
    ) -> Result<(usize, Option<u64>), RunError> {
        let mut queued = 0;
        while queued < limit
            && !self.free_slots.is_empty()
            && self.outstanding() < self.depth_limit
            && !self.finished_issuing()
        {
            if self.think.think_ns > 0 {
                if let Some(wait) = self.think_stall(engine, now_ns, queued > 0) {
                    return Ok((queued, wait));
                }
            }
            if let Some(kind) = self.sync_due() {
                // As fio's synchronous engines: the sync waits for the worker's I/O to finish.
                if self.outstanding() > 0 {
                    return Ok((queued, None));
                }
                self.flush(engine, kind)?;
            }
            if self.replay.is_some() && self.pending.is_none() {
                match self.next_replayed(engine, now_ns)? {
                    ReplayStep::Io(io) => self.pending = Some(io),
                    ReplayStep::Wait(until) => return Ok((queued, until)),
                }
            }
            let mut backlog_read = false;
            if self.pending.is_none() {
                if let Some(read) = self.backlog.as_mut().and_then(Backlog::next_read) {
                    self.pending = Some(read);
                    backlog_read = true;
                }
            }
            let io = match self.pending {
                Some(io) => io,
                None => {
                    let Some(io) = self.generator.next(None) else {
                        // fio ends the job where it cannot place an I/O.
                        self.generator_done = true;
                        break;
                    };
                    self.pending = Some(io);
                    io
                }
            };
            if let Some(remaining) = self
                .limit_bytes
                .map(|n| n - self.issued_bytes)
                .filter(|_| !backlog_read && !self.generator.draws_as_fio())
            {
                if u64::from(io.len_bytes) > remaining && remaining > 0 {
                    // The last I/O of a size-bounded run is trimmed to the bytes left, as fio does.
                    self.pending = Some(PlannedIo {
                        len_bytes: remaining as u32,
                        ..io
                    });
                    continue;
                }
            }
            if self.verify_only {
                // fio's `verify_only`: the workload is played without I/O, its writes logged
                // for the read-back; its reads are not issued.
                self.pending = None;
                if io.direction == IoDirection::Write && self.verify.is_some() {
                    self.note_logged_write(io.offset_bytes);
                }
                if let (IoDirection::Write, Some(v)) = (io.direction, self.verify.as_mut()) {
                    let generation = (self.write_counter % CHECKED_GENERATIONS) as u32 + 1;
                    v.record
                        .record(io.offset_bytes, u64::from(io.len_bytes), generation, &[]);
                    self.write_counter += 1;
                    // fio's dry run completes the played writes too.
                    if let Some((_, state)) = self.verify_state.as_mut() {
                        state.write_completed(io.offset_bytes);
                    }
                }
                self.issued_ios += 1;
                self.issued_bytes += u64::from(io.len_bytes);
                continue;
            }
            if self.serialize_overlap {
                let end = io.offset_bytes + u64::from(io.len_bytes);
                let shared = self
                    .overlap_board
                    .as_ref()
                    .is_some_and(|b| b.overlaps(io.offset_bytes, end));
                if shared || self.overlaps_own_in_flight(&io) {
                    // fio's FIO_Q_BUSY: wait for a completion (or another job's) and try again.
                    return Ok((queued, None));
                }
            }
            if let Some(flow) = self.flow.as_ref().filter(|f| f.ahead()) {
                // fio's flow_threshold_exceeded: with flow_sleep, the queue drains and the
                // worker sleeps; without, it looks again at once.
                if flow.sleep_ns == 0 || queued > 0 || self.outstanding() > 0 {
                    return Ok((queued, None));
                }
                return Ok((queued, Some(now_ns + flow.sleep_ns)));
            }
            let rate = Self::rate_index(io.direction);
            // The stricter of the I/O and byte ceilings spaces this I/O from the previous one.
            let bytes_interval = self.rate_bytes_per_s[rate].map(|per_s| {
                let ns = u128::from(io.len_bytes) * u128::from(NS_PER_S) / u128::from(per_s.max(1));
                u64::try_from(ns).unwrap_or(u64::MAX).max(1)
            });
            let interval = match (self.rate_interval_ns[rate], bytes_interval) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            if let Some(interval) = interval {
                if self.rate_next_ns[rate] > now_ns {
                    // As fio's rate_ddir: in a mixed job the other direction goes while this
                    // one is ahead of its rate, unless it is ahead of its own; then wait for
                    // whichever comes due first.
                    let other = 1 - rate;
                    if !self.mixed {
                        return Ok((queued, Some(self.rate_next_ns[rate])));
                    }
                    if self.rate_next_ns[other] <= now_ns {
                        let direction = [IoDirection::Read, IoDirection::Write][other];
                        self.pending = self.generator.next(Some(direction));
                        self.generator_done = self.pending.is_none();
                        continue;
                    }
                    let due = self.rate_next_ns[rate].min(self.rate_next_ns[other]);
                    return Ok((queued, Some(due)));
                }
                // fio's `rate_process=poisson` (io_u.c, `usec_for_io`): the spacing is drawn from
                // the exponential distribution of the rate's mean, so I/Os arrive as a Poisson
                // process of the same rate.
                let interval = self.rated_spacing_ns(interval);
                self.rate_next_ns[rate] =
                    self.rate_next_ns[rate].max(now_ns - interval.min(now_ns)) + interval;
            }
            if let Some(board) = &self.overlap_board {
                let end = io.offset_bytes + u64::from(io.len_bytes);
                if !board.try_claim(self.overlap_key(), io.offset_bytes, end) {
                    // Another job claimed an overlapping range since the look above.
                    return Ok((queued, None));
                }
            }
            self.pending = None;
            if let Some(flow) = self.flow.as_mut() {
                flow.count_io();
            }
            if let Some(pass_bytes) = self.invalidate_pass_bytes {
                if self.issued_bytes >= self.next_pass_at_bytes {
                    // A pass over the region completed: as fio does at every loop, drop what it
                    // left in the page cache so the next pass measures the device again.
                    engine
                        .invalidate(self.region.start_bytes, self.region.len_bytes)
                        .map_err(RunError::Engine)?;
                    let passes_done = self.issued_bytes / pass_bytes;
                    self.next_pass_at_bytes = (passes_done + 1).saturating_mul(pass_bytes);
                }
            }
            if let Some(log) = self.iolog.as_mut() {
                log.record(io.direction, io.offset_bytes, io.len_bytes);
                if log.pending.len() >= IOLOG_BUFFER_BYTES {
                    log.flush(&self.job_name)?;
                }
            }
            let relative_slot = self.free_slots.pop().expect("checked non-empty");
            let slot = self.slot_base + relative_slot;
            let mut generation = 0;
            match io.direction {
                IoDirection::Write
                    if self.verify.is_none()
                        && self.fixed_pattern.is_none()
                        && self.fio_buffers.is_none()
                        && self.unchecked_format.is_none() =>
                {
                    if engine.capabilities().shared_timeline {
                        // Only the stamp changes: the rest of the slot holds what setup
                        // filled, and the simulator's store relies on that (ADR 0016).
                        let head_bytes = (io.len_bytes as usize).min(pattern::STAMP_BYTES);
                        let head = engine.buffer_head_mut(slot, head_bytes);
                        pattern::stamp(head, self.pattern, io.offset_bytes, self.write_counter);
                    } else {
                        // Real storage gets fio's default: every sector scrambled, so a 4 KiB
                        // block never repeats (and a read into the slot leaves no zeros).
                        let buf = &mut engine.buffer_mut(slot)[..io.len_bytes as usize];
                        pattern::stamp(buf, self.pattern, io.offset_bytes, self.write_counter);
                        let counter = self.write_counter;
                        pattern::scramble_sectors(buf, self.pattern, io.offset_bytes, counter);
                    }
                    self.write_counter += 1;
                }
                IoDirection::Write => {
                    if self.verify.is_some() {
                        self.note_logged_write(io.offset_bytes);
                    }
                    let buf = &mut engine.buffer_mut(slot)[..io.len_bytes as usize];
                    if let Some(v) = self.verify.as_mut() {
                        // 1..=u32::MAX; 0 means "never written" in the record.
                        generation = (self.write_counter % CHECKED_GENERATIONS) as u32 + 1;
                        let record = &mut v.record;
                        record.fill_expected(buf, io.offset_bytes, generation);
                        record.record(
                            io.offset_bytes,
                            u64::from(io.len_bytes),
                            generation,
                            &v.writes_in_flight,
                        );
                        v.writes_in_flight.push(generation);
                    } else if let Some(format) = &self.unchecked_format {
                        let generation = (self.write_counter % CHECKED_GENERATIONS) as u32 + 1;
                        let thread = self.worker_index.saturating_add(1) as u16;
                        format.fill(buf, io.offset_bytes, self.worker_seed, thread, generation);
                    } else if let Some(buffers) = self.fio_buffers.as_mut() {
                        buffers.fill(buf);
                    } else if let Some(bytes) = &self.fixed_pattern {
                        if self.refill_pattern {
                            pattern::fill_repeated(buf, bytes);
                        }
                    } else {
                        pattern::stamp(buf, self.pattern, io.offset_bytes, self.write_counter);
                    }
                    self.write_counter += 1;
                }
                IoDirection::Read => {
                    if let Some(v) = self.verify.as_ref() {
                        if (v.in_phase_checks || backlog_read)
                            && self.write_counter < CHECKED_GENERATIONS
                        {
                            let next = self.write_counter as u32 + 1;
                            generation = v.writes_in_flight.iter().fold(next, |m, g| m.min(*g));
                        }
                    }
                }
                IoDirection::Trim => {}
            }
            // fio's engines draw the command priority as they prepare the request.
            let own_ioprio = match self.cmdprio.as_mut() {
                Some(cmdprio) => {
                    if let Some(loop_bytes) = self.cmdprio_loop_bytes {
                        // fio's own sequence counts its loops; otherwise a loop is the
                        // region's bytes.
                        let pass = self
                            .generator
                            .fio_reseeds()
                            .map_or(self.issued_bytes / loop_bytes, u64::from);
                        cmdprio.enter_pass(pass);
                    }
                    cmdprio.next(io.direction, u64::from(io.len_bytes))
                }
                None => None,
            };
            engine
                .queue(IoRequest {
                    slot,
                    direction: io.direction,
                    offset_bytes: io.offset_bytes,
                    len_bytes: io.len_bytes,
                    ioprio: own_ioprio,
                })
                .map_err(RunError::Engine)?;
            self.in_flight[relative_slot as usize] = InFlight {
                direction: Some(io.direction),
                offset_bytes: io.offset_bytes,
                len_bytes: io.len_bytes,
                queued_ns: now_ns,
                submitted_ns: now_ns,
                generation,
                backlog: backlog_read,
                ioprio: own_ioprio.unwrap_or(self.default_ioprio),
            };
            queued_slots.push(slot);
            if let Some(backlog) = self.backlog.as_mut() {
                backlog.last_was_read = io.direction == IoDirection::Read;
            }
            // As fio, a backlog's reads come on top of the job's bytes (backend.c, `do_io`,
            // adds `size` to the bytes to issue when verify_backlog is set).
            if !backlog_read {
                self.issued_ios += 1;
                self.issued_bytes += u64::from(io.len_bytes);
            }
            self.last_offset_bytes = io.offset_bytes;
            // fio clears it when an I/O completes; a synchronous engine completes each I/O
            // before the next is chosen, so clearing it at issue is the same there, and with a
            // deeper queue it keeps every N-th write's sync.
            self.last_was_sync = false;
            queued += 1;
            if self.think.think_ns > 0 && self.think.count_issued {
                self.think_counted_ios += 1;
                self.check_think(now_ns);
            }
        }
        Ok((queued, None))
    }

    /// fio's `steadystate`: when a measurement interval has ended, judge the window of whole
    /// intervals before it (after `ss_ramp`) and stop once it meets the criterion.
    fn check_steady(&mut self, t_ns: u64) {
        let Some(spec) = self.steadystate else {
            return;
        };
        let interval_ns = self.stats.read.series.interval_ns();
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
        let (read, write) = (
            self.stats.read.series.bins(),
            self.stats.write.series.bins(),
        );
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
    fn check_rate_min(&mut self, t_ns: u64) {
        let interval_ns = self.stats.read.series.interval_ns();
        let current = t_ns / interval_ns;
        if current <= self.rate_min_checked_interval.max(1) {
            self.rate_min_checked_interval = self.rate_min_checked_interval.max(current);
            return;
        }
        self.rate_min_checked_interval = current;
        let judged = (current - 1) as usize;
        let minimums = self
            .rate_min_bytes_per_s
            .into_iter()
            .zip(self.rate_min_ios_per_s);
        for (direction, (minimum_bytes, minimum_ios)) in ["read", "write"].into_iter().zip(minimums)
        {
            let series = if direction == "read" {
                &self.stats.read.series
            } else {
                &self.stats.write.series
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
            self.error.get_or_insert(RunError::Plan {
                job: self.job_name.clone(),
                reason,
            });
        }
    }

    /// The spacing before a rated I/O whose rate's mean spacing is `mean_ns`: that mean for
    /// fio's linear process, an exponential draw of that mean for `rate_process=poisson`.
    fn rated_spacing_ns(&mut self, mean_ns: u64) -> u64 {
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

    /// The sync fio's `fsync=N` / `fdatasync=N` asks for before the next I/O: after every N
    /// writes issued, unless a sync was the last thing done (fio's `get_rw_ddir`).
    fn sync_due(&self) -> Option<FlushKind> {
        let writes = self.write_counter;
        if self.last_was_sync || writes == 0 {
            return None;
        }
        let every = |n: u32| n > 0 && writes.is_multiple_of(u64::from(n));
        if every(self.sync.fsync_every_writes) {
            Some(FlushKind::All)
        } else if every(self.sync.fdatasync_every_writes) {
            Some(FlushKind::Data)
        } else {
            None
        }
    }

    /// One sync, with none of this worker's I/O outstanding; logged as fio logs it, and timed
    /// and counted as fio's `sync` block does (see `flush_uncounted` for the end's).
    fn flush(&mut self, engine: &mut dyn IoEngine, kind: FlushKind) -> Result<(), RunError> {
        self.flush_measured(engine, kind, true)
    }

    /// `flush`, timed and counted in the `sync` statistics when `measured`.
    fn flush_measured(
        &mut self,
        engine: &mut dyn IoEngine,
        kind: FlushKind,
        measured: bool,
    ) -> Result<(), RunError> {
        if let Some(log) = self.iolog.as_mut() {
            log.record_sync(kind, self.last_offset_bytes);
        }
        let start_ns = engine.now_ns();
        engine.flush(kind).map_err(RunError::Engine)?;
        if measured && start_ns >= self.sync_measure_start_ns {
            self.stats.sync.record(engine.now_ns() - start_ns);
            if kind == FlushKind::All {
                self.stats.fsyncs += 1;
            }
        }
        self.last_was_sync = true;
        Ok(())
    }

    /// fio's `end_fsync` and `fsync_on_close`: one `fsync` once a job that wrote is done,
    /// unless its last act was a sync already (fio then issues none: one sync for both keys).
    /// fio neither times nor counts it: both keys sync in the TD_FSYNCING state (backend.c,
    /// `do_io`), which `td_io_queue` (ioengines.c) leaves out of `total_io_u` (and
    /// `fsync_on_close` adds a plain `fsync(2)` at close, filesetup.c, no I/O unit at all).
    fn flush_at_end(&mut self, engine: &mut dyn IoEngine) -> Result<(), RunError> {
        let wanted = self.sync.end_fsync || self.sync.fsync_on_close;
        if wanted && self.error.is_none() && self.write_counter > 0 && !self.last_was_sync {
            self.flush_measured(engine, FlushKind::All, false)?;
        }
        Ok(())
    }

    /// Marks a `thinktime` stall as due when `thinktime_blocks` I/Os were counted since the last
    /// one, or `thinktime_iotime` of I/O passed (fio's `handle_thinktime`: with
    /// `thinktime_iotime` and no `thinktime_blocks`, time alone decides).
    fn check_think(&mut self, now_ns: u64) {
        if self.think_due || self.think_until_ns.is_some() {
            return;
        }
        let think = self.think;
        let by_time = think.every_io_ns > 0
            && now_ns.saturating_sub(self.think_last_stall_end_ns) >= think.every_io_ns;
        let by_count = (think.every_io_ns == 0 || think.every_ios.is_some())
            && self.think_counted_ios
                >= self.think_counted_at_last_stall + u64::from(think.every_ios.unwrap_or(1));
        if by_time || by_count {
            self.think_due = true;
            self.think_counted_at_last_stall = self.think_counted_ios;
        }
    }

    /// Where the worker is in a `thinktime` stall: `None` to go on issuing, or `Some(wait)` to
    /// stop filling for now (`wait` is when the stall ends, or `None` while the queue drains, as
    /// fio's `io_u_quiesce`). The `thinktime_spin` part burns CPU on an engine of its own (a
    /// real one); on a shared virtual timeline every part of the stall is time passing.
    fn think_stall(
        &mut self,
        engine: &mut dyn IoEngine,
        now_ns: u64,
        queued_now: bool,
    ) -> Option<Option<u64>> {
        if let Some(until_ns) = self.think_until_ns {
            let mut now_ns = now_ns;
            if let Some(spin_until_ns) = self.think_spin_until_ns {
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
                self.think_spin_until_ns = None;
            }
            if now_ns < until_ns {
                return Some(Some(until_ns));
            }
            self.think_until_ns = None;
            self.think_last_stall_end_ns = now_ns;
            return None;
        }
        if !self.think_due {
            return None;
        }
        if queued_now || self.outstanding() > 0 {
            return Some(None);
        }
        self.think_due = false;
        let start_ns = engine.now_ns();
        self.think_until_ns = Some(start_ns + self.think.think_ns);
        if self.think.spin_ns > 0 && !engine.capabilities().shared_timeline {
            self.think_spin_until_ns = Some(start_ns + self.think.spin_ns);
        }
        self.think_stall(engine, start_ns, queued_now)
    }

    /// fio's latency-target search after one completed I/O (io_u.c): the I/O's total latency
    /// against the target, then, past the ramp and unless the queue is draining, the window's
    /// verdict; each step sets the depth, drains the queue or ends the job.
    fn search_step(&mut self, io: &InFlight, done_ns: u64, window: Window) {
        use crate::latency_target::SearchStep;
        let Some(search) = self.qd_search.as_deref_mut() else {
            return;
        };
        let latency_ns = done_ns.saturating_sub(io.queued_ns);
        let mut step = search.on_completion(latency_ns);
        if step == SearchStep::Continue
            && self.latency_quiesce.is_none()
            && done_ns >= window.measure_start_ns
        {
            step = search.check(done_ns);
        }
        let depth = search.depth() as usize;
        match step {
            SearchStep::Continue => self.depth_limit = depth,
            SearchStep::Quiesce => {
                self.latency_quiesce.get_or_insert(false);
            }
            SearchStep::QuiesceAndReset => self.latency_quiesce = Some(true),
            SearchStep::Done => self.latency_search_done = true,
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
        if let Some(reset) = self.latency_quiesce {
            // The I/O this completion freed is already off the queue: drained at 0.
            self.depth_limit = 0;
            if self.in_flight.len() == self.free_slots.len() {
                self.latency_quiesce = None;
                self.depth_limit = depth;
                search.new_window(done_ns);
                if reset {
                    self.stats = WorkerStats::with_expected_duration(self.interval_ns, 0);
                    self.stats_reset_ns = Some(done_ns);
                }
            }
        }
        self.stats.latency_depth = search.depth();
    }

    fn complete(&mut self, engine: &dyn IoEngine, completion: IoCompletion, window: Window) {
        let relative = (completion.slot - self.slot_base) as usize;
        let io = self.in_flight[relative];
        // No longer in flight (`serialize_overlap` looks at the entries with a direction).
        self.in_flight[relative].direction = None;
        self.free_slots.push(relative as u32);
        if let (Some(board), Some(_)) = (&self.overlap_board, io.direction) {
            board.release(self.overlap_key(), io.offset_bytes);
        }
        let Some(direction) = io.direction else {
            self.error.get_or_insert(RunError::Protocol(format!(
                "engine completed slot {} that had no request",
                completion.slot
            )));
            return;
        };
        if self.think.think_ns > 0 && !self.think.count_issued {
            self.think_counted_ios += 1;
            self.check_think(completion.done_ns);
        }
        let stats = match direction {
            IoDirection::Read => &mut self.stats.read,
            IoDirection::Write => &mut self.stats.write,
            IoDirection::Trim => &mut self.stats.trim,
        };
        match completion.result {
            Ok(n) if n == io.len_bytes => {}
            Ok(_)
                if direction == IoDirection::Write
                    && (self.fill_device || self.continue_on_error.passes(false, ERRNO_ENOSPC)) =>
            {
                // A regular file's write comes back short only when the file system cannot
                // hold more; fio retries the rest, which fails with ENOSPC and ends its
                // fill_device job, or is passed where ignore_error lists ENOSPC. Neither counts
                // the short write's bytes.
                if self.continue_on_error.passes(false, ERRNO_ENOSPC) {
                    stats.errors += 1;
                    if self.stats.first_error_errno == 0 {
                        self.stats.first_error_errno = ERRNO_ENOSPC;
                    }
                } else {
                    self.filled = true;
                }
                return;
            }
            Ok(n) => {
                stats.errors += 1;
                self.error.get_or_insert(RunError::ShortIo {
                    offset_bytes: io.offset_bytes,
                    done_bytes: n,
                    wanted_bytes: io.len_bytes,
                    write: direction == IoDirection::Write,
                });
                return;
            }
            Err(errno) => {
                stats.errors += 1;
                if self
                    .continue_on_error
                    .passes(direction == IoDirection::Read, errno)
                {
                    // As fio's io_completed: a passed error counts (total_err, first_error)
                    // and nothing else; the I/O is in no I/O, byte or latency figure.
                    if self.stats.first_error_errno == 0 {
                        self.stats.first_error_errno = errno;
                    }
                    return;
                }
                if self.fill_device
                    && direction == IoDirection::Write
                    && (errno == ERRNO_ENOSPC || errno == ERRNO_EDQUOT)
                {
                    // fio's break_on_this_error and do_io: the job expected this error.
                    stats.errors -= 1;
                    self.filled = true;
                    return;
                }
                self.error.get_or_insert(RunError::Io {
                    offset_bytes: io.offset_bytes,
                    len_bytes: io.len_bytes,
                    source: std::io::Error::from_raw_os_error(errno),
                });
                return;
            }
        }
        if let (IoDirection::Write, Some((_, state))) = (direction, self.verify_state.as_mut()) {
            state.write_completed(io.offset_bytes);
        }
        if self.qd_search.is_some() {
            self.search_step(&io, completion.done_ns, window);
        }
        let stats = match direction {
            IoDirection::Read => &mut self.stats.read,
            IoDirection::Write => &mut self.stats.write,
            IoDirection::Trim => &mut self.stats.trim,
        };
        // After a settled latency search reset the statistics, they count from there.
        let measure_start_ns = match self.stats_reset_ns {
            Some(reset_ns) => reset_ns.max(window.measure_start_ns),
            None => window.measure_start_ns,
        };
        let counted = io.queued_ns >= measure_start_ns
            && window.deadline_ns.is_none_or(|d| completion.done_ns <= d);
        if counted {
            let slat_ns = io.submitted_ns.saturating_sub(io.queued_ns);
            let clat_ns = completion.done_ns.saturating_sub(io.submitted_ns);
            let t_ns = completion.done_ns - measure_start_ns;
            stats.record(t_ns, u64::from(io.len_bytes), slat_ns, clat_ns);
            if !stats.by_priority.is_empty() {
                stats.record_priority(io.ioprio, clat_ns);
            }
            self.stats.elapsed_ns = self.stats.elapsed_ns.max(t_ns);
            if let Some(log) = self.fio_log.as_mut() {
                log.record(LoggedIo {
                    direction,
                    submitted_ns: io.submitted_ns.saturating_sub(measure_start_ns),
                    completed_ns: t_ns,
                    block_bytes: u64::from(io.len_bytes),
                    offset_bytes: io.offset_bytes,
                    slat_ns,
                    clat_ns,
                    ioprio: io.ioprio,
                });
            }
            if self.steadystate.is_some() {
                self.check_steady(t_ns);
            }
            if self.rate_min_bytes_per_s != [None; 2] || self.rate_min_ios_per_s != [None; 2] {
                self.check_rate_min(t_ns);
            }
        }
        if let (IoDirection::Read, Some(format)) = (direction, self.read_check.as_deref()) {
            let found = &engine.buffer(completion.slot)[..io.len_bytes as usize];
            if let Err(failure) = format.check_read_block(found, io.offset_bytes) {
                let job = self.verify_job.as_deref().expect("set with a read check");
                let expected = format.expected_from_header(found, io.offset_bytes);
                self.error.get_or_insert(verify::fio_failure(
                    job,
                    format,
                    failure,
                    io.offset_bytes,
                    found,
                    &expected,
                ));
            }
        }
        if let Some(v) = self.verify.as_mut() {
            match direction {
                IoDirection::Write => {
                    if let Some(i) = v.writes_in_flight.iter().position(|g| *g == io.generation) {
                        v.writes_in_flight.swap_remove(i);
                    }
                    if let Some(backlog) = self.backlog.as_mut() {
                        backlog.logged.push_back((io.offset_bytes, io.len_bytes));
                    }
                }
                IoDirection::Read if io.generation > 0 => {
                    let job = self.verify_job.as_deref().expect("set with verify");
                    let found = &engine.buffer(completion.slot)[..io.len_bytes as usize];
                    match verify::check_read(
                        job,
                        &v.record,
                        &[],
                        io.offset_bytes,
                        found,
                        &mut v.expected,
                        Some(io.generation),
                    ) {
                        Ok(bytes) => {
                            v.checked_bytes += bytes;
                            // Checked whole, and no other worker writes here: the read-back
                            // after the writes need not read it again (fio drops the piece
                            // from its log).
                            if io.backlog && bytes == u64::from(io.len_bytes) && v.in_phase_checks {
                                v.record.forget(io.offset_bytes, u64::from(io.len_bytes));
                            }
                        }
                        Err(error) => {
                            self.error.get_or_insert(error);
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// Timing of one drive loop, on the engine's clock.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub ramp_ns: u64,
    pub runtime_ns: Option<u64>,
    /// fio's `startdelay` still to wait before the first I/O: no part of the ramp or runtime.
    pub start_delay_ns: u64,
}

/// Longest single wait on a wall clock (a start delay, a `thinktime`, a rate limit, an iolog's
/// `wait`, a `thinktime_spin`), so Ctrl-C, SIGTERM or another job's `exitall` is seen soon.
const START_DELAY_POLL_NS: u64 = 100_000_000;

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
struct Issue {
    synchronous: bool,
    /// The worker of each engine slot (slots are handed out contiguously per worker).
    slot_owner: Vec<u32>,
    /// Slots queued since the last submit.
    queued_slots: Vec<u32>,
    /// Per worker: I/Os queued in one fill (each entry of the filled range is overwritten).
    queued_by_worker: Vec<u64>,
    /// Per worker: completions of one reap; all 0 between reaps (each count is put back to 0
    /// as it is used, so no pass clears the whole vector: at depth 1 that clearing was a
    /// `memset` call per I/O, 3% of a null-engine I/O's cost in `perf record`).
    reaped_by_worker: Vec<u64>,
}

impl Issue {
    /// Queue what `workers[which]` may issue at `now_ns` and submit it in one call. Returns the
    /// earliest time a rate or think-time wait held an I/O back, and when the submit returned
    /// (`None` when nothing was queued).
    fn fill_and_submit(
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
            let in_flight_before = w.outstanding() as u64;
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
            w.in_flight[(slot - w.slot_base) as usize].submitted_ns = submitted_ns;
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
}

/// Bytes one loop of `job` moves over `region` (fio: `io_size`, default the region's size).
fn loop_bytes(job: &JobSpec, region: Region) -> u64 {
    job.io_size_bytes
        .or(job.strided_zones.and(job.size_bytes))
        .unwrap_or_else(|| crate::offsets::pass_bytes(job, region))
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
    let total_slots: usize = workers.iter().map(|w| w.in_flight.len()).sum();
    let mut completions: Vec<IoCompletion> = Vec::with_capacity(total_slots);
    let queued_slots: Vec<u32> = Vec::with_capacity(total_slots);
    // Map an engine slot to its worker without searching: slots are handed out contiguously.
    let mut slot_owner = vec![
        0u32;
        workers
            .iter()
            .map(|w| w.slot_base as usize + w.in_flight.len())
            .max()
            .unwrap_or(0)
    ];
    for (i, w) in workers.iter().enumerate() {
        for s in 0..w.in_flight.len() {
            slot_owner[w.slot_base as usize + s] = i as u32;
        }
    }
    for w in workers.iter_mut() {
        if let Some(log) = w.iolog.as_mut() {
            log.open(&w.job_name)?;
        }
        if let Some(log) = w.fio_log.as_mut() {
            log.log_submission = !synchronous;
        }
    }
    let usage_start = ResourceUsage::thread_now();
    let start_ns = engine.now_ns();
    let window = Window {
        measure_start_ns: start_ns + timing.ramp_ns,
        deadline_ns: timing.runtime_ns.map(|r| start_ns + timing.ramp_ns + r),
    };
    for w in workers.iter_mut() {
        w.sync_measure_start_ns = window.measure_start_ns;
        w.rate_next_ns = [start_ns; 2];
        w.think_last_stall_end_ns = start_ns;
        if let Some(search) = w.qd_search.as_deref_mut() {
            // fio's lat_target_init in do_io: the first window starts with the job.
            search.new_window(start_ns);
        }
        if let Some(replay) = w.replay.as_mut() {
            replay.start_ns = start_ns;
            replay.last_issue_ns = start_ns;
        }
    }
    let mut interrupted = false;
    // Right after a reap, the newest completion time is "now" to within the runner's own few
    // tens of ns: reusing it saves a clock read per loop, most of the cost of a QD1 null run.
    let mut reaped_at_ns: Option<u64> = None;
    let mut issue = Issue {
        synchronous,
        slot_owner,
        queued_slots,
        queued_by_worker: vec![0u64; workers.len()],
        reaped_by_worker: vec![0u64; workers.len()],
    };
    // fio's default (`iodepth_batch_submit=1`) where a device serves requests meanwhile: each
    // completion's slot is refilled and handed over before the next completion is handled.
    let submit_each = !synchronous && engine.submits_each_request();
    // fio's `iodepth_batch*` and `iodepth_low` other than their defaults: fio's own loop, for
    // a worker with an engine of its own (one worker of a simulated drive's shared timeline).
    let batched = !synchronous && workers.len() == 1 && workers[0].io_batch.is_some();
    if batched {
        interrupted = batched::drive(
            engine,
            &mut workers[0],
            &mut issue,
            window,
            stop,
            ended,
            live,
        )?;
    }
    loop {
        if batched {
            // Done by `batched::drive` above; what follows the loop is common to both.
            break;
        }
        let now_ns = reaped_at_ns.take().unwrap_or_else(|| engine.now_ns());
        let past_deadline =
            window.deadline_ns.is_some_and(|d| now_ns >= d) || ended.load(Ordering::Relaxed);
        if stop.load(Ordering::Relaxed) {
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
        let outstanding: usize = workers.iter().map(Worker::outstanding).sum();
        if outstanding == 0 {
            let more =
                !past_deadline && !interrupted && workers.iter().any(|w| !w.finished_issuing());
            match earliest_rate_ns {
                Some(t) if more => {
                    wait_a_while(engine, window.deadline_ns.map_or(t, |d| t.min(d)));
                    continue;
                }
                _ if more => continue,
                _ => break,
            }
        }
        completions.clear();
        engine.reap(1, &mut completions).map_err(RunError::Engine)?;
        reaped_at_ns = completions.iter().map(|c| c.done_ns).max();
        if let Some(live) = live {
            let bytes: u64 = completions
                .iter()
                .map(|c| u64::from(c.result.unwrap_or(0)))
                .sum();
            live.ios
                .fetch_add(completions.len() as u64, Ordering::Relaxed);
            live.bytes.fetch_add(bytes, Ordering::Relaxed);
        }
        if !synchronous && reaped_at_ns.is_some_and(|t| t >= window.measure_start_ns) {
            // As fio's io_u_mark_complete: each worker's completions returned by this reap.
            let reaped_by_worker = &mut issue.reaped_by_worker;
            for c in &completions {
                if let Some(&owner) = issue.slot_owner.get(c.slot as usize) {
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
        // When each request goes over as its slot frees, the clock read after one submit is
        // "now" for the next refill (the completion handled in between takes tens of ns).
        let mut refill_ns = reaped_at_ns;
        for c in completions.iter() {
            let owner = issue.slot_owner.get(c.slot as usize).copied();
            let Some(i) = owner else {
                return Err(RunError::Protocol(format!(
                    "engine completed unknown slot {}",
                    c.slot
                )));
            };
            let i = i as usize;
            workers[i].complete(engine, *c, window);
            if submit_each && !interrupted {
                let now_ns = refill_ns.unwrap_or_else(|| engine.now_ns());
                if window.deadline_ns.is_some_and(|d| now_ns >= d) || ended.load(Ordering::Relaxed)
                {
                    continue;
                }
                let measuring = now_ns >= window.measure_start_ns;
                // A rate or think-time wait is left to the top of the loop, which asks again.
                let (_, submitted_ns) =
                    issue.fill_and_submit(engine, workers, i..i + 1, now_ns, measuring)?;
                if submitted_ns.is_some() {
                    refill_ns = submitted_ns;
                }
            }
        }
        reaped_at_ns = refill_ns;
    }
    if !interrupted {
        for w in workers.iter_mut() {
            w.flush_at_end(engine)?;
        }
    }
    let end_ns = engine.now_ns();
    let usage = ResourceUsage::thread_now() - usage_start;
    for w in workers.iter_mut() {
        w.leave_flow();
        w.leave_overlap_board();
        if let Some(log) = w.iolog.as_mut() {
            log.close(&w.job_name)?;
        }
    }
    let measured_ns = window
        .deadline_ns
        .map_or(end_ns, |d| end_ns.min(d))
        .saturating_sub(window.measure_start_ns);
    for (i, w) in workers.iter_mut().enumerate() {
        w.stats.elapsed_ns = match w.stats_reset_ns {
            // A settled latency search restarted the statistics (and fio's runtime) there.
            Some(reset_ns) => window
                .deadline_ns
                .map_or(end_ns, |d| end_ns.min(d))
                .saturating_sub(reset_ns.max(window.measure_start_ns))
                .max(w.stats.elapsed_ns),
            None => measured_ns.max(w.stats.elapsed_ns),
        };
        // One thread drove them all: its CPU time, context switches and page faults (fio's
        // `ctx`, `minf`, `majf`) are charged to the first worker only.
        if i == 0 {
            w.stats.cpu = usage.cpu;
            w.stats.context_switches = usage.context_switches;
            w.stats.minor_faults = usage.minor_faults;
            w.stats.major_faults = usage.major_faults;
        }
    }
    Ok(interrupted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_engine::observed::{EngineObserver, Observed};
    use storlab_engine::registry::{open_engine, EngineOptions};
    use storlab_engine::EngineSetup;
    use storlab_job::EngineKind;

    /// Counts the ranges the runner asks to invalidate, standing in for the page cache.
    #[derive(Default)]
    struct CountingInvalidations {
        invalidated: Vec<(u64, u64)>,
    }

    impl EngineObserver for CountingInvalidations {
        fn on_invalidate(&mut self, offset_bytes: u64, len_bytes: u64) -> bool {
            self.invalidated.push((offset_bytes, len_bytes));
            false
        }
    }

    /// The ranges a `loops=3` read job over 64 KiB asks to drop, buffered or direct.
    fn invalidations(direct: bool) -> Vec<(u64, u64)> {
        let mut job = JobSpec::new("passes", EngineKind::Null, Target::None);
        job.random_percent = 0;
        job.loops = 3;
        job.direct = direct;
        let region = Region {
            start_bytes: 1 << 20,
            len_bytes: 64 << 10,
        };
        let mut engine = Observed::new(
            open_engine(EngineKind::Null, None, &EngineOptions::default()).unwrap(),
            CountingInvalidations::default(),
        );
        let worker = drive_one(&mut engine, &job, region, 1, NS_PER_S);
        assert_eq!(worker.stats.read.ios, 3 * 16);
        engine.observer.invalidated
    }

    /// Regression (issue 24): a buffered job dropped the page cache once, before it started,
    /// and measured the cache on every later pass; fio drops it at every loop.
    #[test]
    fn each_completed_pass_drops_the_regions_cached_pages_as_fio_does() {
        let region = (1 << 20, 64 << 10);
        assert_eq!(invalidations(false), [region, region]);
        assert!(
            invalidations(true).is_empty(),
            "O_DIRECT has no cache to drop"
        );
    }

    /// A device that holds every request handed to it and, each time it is looked at, has
    /// finished the oldest `burst` of them: several completions per reap, as a fast device or
    /// a busy host gives. It notes each reap's count and each submit's (held, handed over).
    struct BurstDevice {
        submit_each: bool,
        burst: usize,
        buffers: Vec<Vec<u8>>,
        queued: Vec<IoRequest>,
        held: std::collections::VecDeque<IoRequest>,
        events: Vec<DeviceEvent>,
        clock_ns: u64,
        /// Where a full file system's space ends: a write past it fails with ENOSPC, one
        /// across it comes back short, as a file system's `write` does. `u64::MAX`: no end.
        space_end_bytes: u64,
    }

    impl BurstDevice {
        /// A device that completes `burst` requests per reap (handing each over on submit
        /// when `submit_each`), whose space ends at `space_end_bytes`.
        fn new(submit_each: bool, burst: usize, space_end_bytes: u64) -> Self {
            BurstDevice {
                submit_each,
                burst,
                buffers: Vec::new(),
                queued: Vec::new(),
                held: Default::default(),
                events: Vec::new(),
                clock_ns: 0,
                space_end_bytes,
            }
        }
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum DeviceEvent {
        Reaped(usize),
        Submitted { held: usize, handed: usize },
    }

    /// Virtual time a reap takes on the burst device (any positive step: the job ends on
    /// its I/O count).
    const BURST_REAP_STEP_NS: u64 = 1000;

    impl storlab_engine::IoEngine for BurstDevice {
        fn name(&self) -> &'static str {
            "burst"
        }
        fn capabilities(&self) -> storlab_engine::Capabilities {
            storlab_engine::Capabilities {
                queued: true,
                moves_data: false,
                trim: false,
                shared_timeline: false,
                page_cache: false,
            }
        }
        fn target_size_bytes(&self) -> u64 {
            1 << 30
        }
        fn setup(&mut self, setup: &EngineSetup) -> Result<(), storlab_engine::EngineError> {
            self.buffers = vec![vec![0; setup.slot_bytes]; setup.slots as usize];
            Ok(())
        }
        fn buffer(&self, slot: u32) -> &[u8] {
            &self.buffers[slot as usize]
        }
        fn buffer_mut(&mut self, slot: u32) -> &mut [u8] {
            &mut self.buffers[slot as usize]
        }
        fn queue(&mut self, request: IoRequest) -> Result<(), storlab_engine::EngineError> {
            self.queued.push(request);
            Ok(())
        }
        fn submit(&mut self) -> Result<usize, storlab_engine::EngineError> {
            let handed = self.queued.len();
            self.events.push(DeviceEvent::Submitted {
                held: self.held.len(),
                handed,
            });
            self.held.extend(self.queued.drain(..));
            Ok(handed)
        }
        fn submits_each_request(&self) -> bool {
            self.submit_each
        }
        fn reap(
            &mut self,
            min: usize,
            out: &mut Vec<IoCompletion>,
        ) -> Result<usize, storlab_engine::EngineError> {
            self.clock_ns += BURST_REAP_STEP_NS;
            let n = self.burst.max(min).min(self.held.len());
            for request in self.held.drain(..n) {
                let end_bytes = request.offset_bytes + u64::from(request.len_bytes);
                let result = match request.direction {
                    IoDirection::Write if request.offset_bytes >= self.space_end_bytes => {
                        Err(ERRNO_ENOSPC)
                    }
                    IoDirection::Write if end_bytes > self.space_end_bytes => {
                        Ok((self.space_end_bytes - request.offset_bytes) as u32)
                    }
                    _ => Ok(request.len_bytes),
                };
                out.push(IoCompletion {
                    slot: request.slot,
                    result,
                    done_ns: self.clock_ns,
                });
            }
            self.events.push(DeviceEvent::Reaped(n));
            Ok(n)
        }
        fn now_ns(&self) -> u64 {
            self.clock_ns
        }
        fn wait_until_ns(&mut self, deadline_ns: u64) {
            self.clock_ns = self.clock_ns.max(deadline_ns);
        }
    }

    /// 3200 sequential 4 KiB reads at QD32 on a device that completes 8 at a time; what it saw.
    fn burst_run(submit_each: bool) -> (Worker, Vec<DeviceEvent>) {
        const QD: u32 = 32;
        const IOS: u64 = 3200;
        let mut job = JobSpec::new("burst", EngineKind::Null, Target::None);
        job.random_percent = 0;
        job.iodepth = QD;
        let region = Region {
            start_bytes: 0,
            len_bytes: IOS * 4096,
        };
        let mut engine = BurstDevice::new(submit_each, 8, u64::MAX);
        let worker = drive_one(&mut engine, &job, region, QD, NS_PER_S);
        assert_eq!(worker.stats.read.ios, IOS);
        (worker, engine.events)
    }

    /// A 1 MiB sequential write at QD4 in 4 KiB blocks on a device whose space ends half a
    /// block after `WHOLE_WRITES` blocks, with `shape` applied to the job.
    fn write_until_full(shape: impl Fn(&mut JobSpec)) -> Worker {
        const QD: u32 = 4;
        let mut job = JobSpec::new("fill", EngineKind::Null, Target::None);
        job.random_percent = 0;
        job.read_percent = 0;
        job.iodepth = QD;
        shape(&mut job);
        let mut engine = BurstDevice::new(true, 1, WHOLE_WRITES * 4096 + 2048);
        let region = Region {
            start_bytes: 0,
            len_bytes: FILL_REGION_BYTES,
        };
        drive_one(&mut engine, &job, region, QD, NS_PER_S)
    }

    const WHOLE_WRITES: u64 = 25;
    const FILL_REGION_BYTES: u64 = 1 << 20;

    #[test]
    fn a_fill_ends_without_error_at_the_first_write_the_space_cannot_hold() {
        let worker = write_until_full(|job| job.fill_device = true);
        assert!(worker.error.is_none(), "{:?}", worker.error);
        assert!(worker.filled);
        // The short write and the ENOSPC ones after it count in no figure, as fio's.
        assert_eq!(worker.stats.write.ios, WHOLE_WRITES);
        assert_eq!(worker.stats.write.bytes, WHOLE_WRITES * 4096);
        assert_eq!(worker.stats.write.errors, 0);
        // Without fill_device the short write is the job's error, as before.
        let plain = write_until_full(|_| {});
        assert!(matches!(plain.error, Some(RunError::ShortIo { .. })));
    }

    #[test]
    fn enospc_passed_by_ignore_error_is_counted_and_the_writes_go_on() {
        let worker = write_until_full(|job| {
            job.continue_on_error.write = true;
            job.continue_on_error.ignored_write = Some(vec![ERRNO_ENOSPC]);
        });
        assert!(worker.error.is_none(), "{:?}", worker.error);
        let all_writes = FILL_REGION_BYTES / 4096;
        assert_eq!(worker.stats.write.ios, WHOLE_WRITES);
        // The short write counts as the ENOSPC fio's retry of its rest gets.
        assert_eq!(worker.stats.write.errors, all_writes - WHOLE_WRITES);
        assert_eq!(worker.stats.first_error_errno, ERRNO_ENOSPC);
    }

    /// Issue 20: with io_uring and libaio at QD32, storlab handled every completion of a reap
    /// before submitting their refills together, so the device went short of requests for the
    /// length of that batch; fio (`iodepth_batch_submit=1`) hands each refill over at once.
    /// An engine that asks for it now gets each freed slot back before the next completion is
    /// handled: a burst of 8 completions is followed by 8 submits of one request each.
    #[test]
    fn each_freed_slot_goes_back_to_the_device_before_the_next_completion_is_handled() {
        let (worker, events) = burst_run(true);
        assert_eq!(
            events[0],
            DeviceEvent::Submitted {
                held: 0,
                handed: 32
            }
        );
        let mut held_after_reap = 32;
        let mut submits_since_reap = 0;
        for (i, event) in events.iter().enumerate().skip(1) {
            match *event {
                DeviceEvent::Reaped(n) => {
                    assert!(submits_since_reap == 0 || held_after_reap + submits_since_reap == 32);
                    assert!(n <= 8);
                    held_after_reap = 32 - n;
                    submits_since_reap = 0;
                }
                DeviceEvent::Submitted { held, handed } => {
                    assert_eq!(handed, 1, "one request per submit, as fio: event {i}");
                    assert_eq!(held, held_after_reap + submits_since_reap);
                    submits_since_reap += 1;
                }
            }
        }
        // As fio's JSON shows it: after the first fill, each submit passed one I/O
        // (`iodepth_submit` 1-4) and each I/O was queued with 32 in flight (`iodepth_level`).
        let depth = &worker.stats.depth;
        assert_eq!(depth.submit[4], 1, "the first fill: {depth:?}");
        assert_eq!(depth.submit[1], 3200 - 32, "{depth:?}");
        assert_eq!(depth.level[5], 3200 - 31, "{depth:?}");

        // Engines that complete inside submit or on a virtual clock keep the batch.
        let (_, events) = burst_run(false);
        assert!(events[1..].iter().all(|e| matches!(
            e,
            DeviceEvent::Reaped(8)
                | DeviceEvent::Submitted {
                    held: 24,
                    handed: 8
                }
        )));
    }

    /// 3200 sequential 4 KiB reads at `batch`'s settings on a burst device that finishes
    /// `burst` requests (or the reap's minimum) each time it is looked at.
    fn batched_burst_run(
        iodepth: u32,
        batch: storlab_job::IoBatch,
        burst: usize,
    ) -> (Worker, Vec<DeviceEvent>) {
        const IOS: u64 = 3200;
        let mut job = JobSpec::new("batched", EngineKind::Null, Target::None);
        job.random_percent = 0;
        job.iodepth = iodepth;
        job.io_batch = Some(batch);
        let region = Region {
            start_bytes: 0,
            len_bytes: IOS * 4096,
        };
        let mut engine = BurstDevice::new(true, burst, u64::MAX);
        let worker = drive_one(&mut engine, &job, region, iodepth, NS_PER_S);
        assert_eq!(worker.stats.read.ios, IOS);
        (worker, engine.events)
    }

    /// fio's `iodepth=32 iodepth_batch=8 iodepth_low=16` (backend.c `do_io`,
    /// `wait_for_completions`): the queue fills in submits of 8; once full, completions are
    /// reaped one at a time until 16 are in flight, and the 16 free slots go back in two
    /// submits of 8. Each submit's I/Os count at the depth the queue has when they go
    /// (`td_io_commit`): 8, 16, 24, 32 for the first fill, then 24 and 32 in turn.
    #[test]
    fn batched_submits_refill_from_the_low_water_mark_as_fio() {
        let batch = storlab_job::IoBatch::fio(32, Some(8), None, None, Some(16));
        let (worker, events) = batched_burst_run(32, batch, 1);
        let submits: Vec<(usize, usize)> = events
            .iter()
            .filter_map(|e| match *e {
                DeviceEvent::Submitted { held, handed } => Some((held, handed)),
                DeviceEvent::Reaped(_) => None,
            })
            .collect();
        assert_eq!(submits.len(), 3200 / 8);
        assert_eq!(submits[..4], [(0, 8), (8, 8), (16, 8), (24, 8)]);
        for (i, pair) in submits[4..].chunks(2).enumerate() {
            assert_eq!(pair, [(16, 8), (24, 8)], "refill {i}");
        }
        // One completion per reap, until the job's end waits for the last 16 at once.
        let (last, reaps) = events.split_last().unwrap();
        assert_eq!(*last, DeviceEvent::Reaped(16));
        assert!(reaps
            .iter()
            .all(|e| !matches!(e, DeviceEvent::Reaped(n) if *n != 1)));
        let depth = &worker.stats.depth;
        assert_eq!(depth.submit[2], 400, "{depth:?}");
        assert_eq!(
            depth.level[3..6],
            [8, 8 + 8 + 198 * 8, 8 + 198 * 8],
            "{depth:?}"
        );
        assert_eq!(depth.complete[1..4], [3200 - 16, 0, 1], "{depth:?}");
    }

    /// fio's `iodepth_batch_complete_max`: a reap takes no more than the maximum, even when
    /// the device has finished more (they wait for the next reap, as in the kernel's ring);
    /// and fio's polling (`iodepth_batch_complete_min=0` and `_max=0`) waits for a completion
    /// after every I/O, so only one is ever in flight. (The job's end waits for what is left
    /// in one reap, as fio's `do_io` ends.)
    #[test]
    fn reaps_take_at_most_the_batch_maximum_and_polling_keeps_one_in_flight() {
        let batch = storlab_job::IoBatch::fio(32, None, Some(2), Some(3), None);
        let (worker, events) = batched_burst_run(32, batch, 8);
        assert!(events.contains(&DeviceEvent::Reaped(8)));
        let depth = &worker.stats.depth;
        let above_four: u64 = depth.complete[2..].iter().sum();
        assert_eq!(above_four, 1, "only the end took more than 4: {depth:?}");
        // At most 3 per reap: 3200 I/Os, less the end's, take more than a third as many reaps.
        assert!(depth.complete[1] >= (3200 - 32) / 3, "{depth:?}");

        let polling = storlab_job::IoBatch::fio(8, None, Some(0), Some(0), None);
        assert!(polling.polls());
        let (worker, events) = batched_burst_run(8, polling, 8);
        assert_eq!(
            worker.stats.depth.level[0], 3200,
            "{:?}",
            worker.stats.depth
        );
        assert!(events.iter().all(|e| matches!(
            e,
            DeviceEvent::Reaped(1) | DeviceEvent::Submitted { held: 0, handed: 1 }
        )));
    }

    /// Drive one worker of `job` over `region` on a null engine with `job.iodepth` slots of
    /// 4 KiB, intervals of `interval_ns`, until the job's own end; returns the worker and the
    /// engine (for its report).
    fn drive_on_null(
        job: &JobSpec,
        region: Region,
        interval_ns: u64,
    ) -> (Worker, Box<dyn storlab_engine::IoEngine>) {
        let mut engine = open_engine(EngineKind::Null, None, &EngineOptions::default()).unwrap();
        let worker = drive_one(engine.as_mut(), job, region, job.iodepth, interval_ns);
        (worker, engine)
    }

    /// Set `engine` up with `slots` slots of 4 KiB and drive one worker of `job` over `region`
    /// (intervals of `interval_ns`) until the job's own end.
    fn drive_one(
        engine: &mut dyn storlab_engine::IoEngine,
        job: &JobSpec,
        region: Region,
        slots: u32,
        interval_ns: u64,
    ) -> Worker {
        engine
            .setup(&EngineSetup {
                slots,
                slot_bytes: 4096,
                buffer_align_bytes: 4096,
            })
            .unwrap();
        let mut workers = vec![Worker::new(0, job, 0, region, 0, interval_ns)];
        let timing = Timing {
            ramp_ns: 0,
            runtime_ns: job.runtime_ns,
            start_delay_ns: 0,
        };
        drive(
            engine,
            &mut workers,
            timing,
            &AtomicBool::new(false),
            &AtomicBool::new(false),
            None,
        )
        .unwrap();
        workers.remove(0)
    }

    /// A sequential write job of `ios` 4 KiB I/Os on the null engine; what the engine reports
    /// and how long the run took.
    fn null_write_run(ios: u64, shape: impl Fn(&mut JobSpec)) -> (u64, u64) {
        let mut job = JobSpec::new("sync", EngineKind::Null, Target::None);
        job.read_percent = 0;
        job.random_percent = 0;
        shape(&mut job);
        let region = Region {
            start_bytes: 0,
            len_bytes: ios * 4096,
        };
        let started = std::time::Instant::now();
        let (worker, engine) = drive_on_null(&job, region, NS_PER_S);
        let elapsed_ns = started.elapsed().as_nanos() as u64;
        assert_eq!(worker.stats.write.ios, ios);
        let flushes = engine.report().detail("flushes").unwrap().parse().unwrap();
        (flushes, elapsed_ns)
    }

    /// fio's `fsync=N`: a sync after every N writes, before the next I/O (none after the last
    /// write), and `end_fsync` one more at the end unless a sync was the last thing done.
    #[test]
    fn fsync_every_n_writes_and_at_the_end_as_fio() {
        let flushes = |fsync: u32, fdatasync: u32, end: bool, iodepth: u32| {
            null_write_run(16, |job| {
                job.sync.fsync_every_writes = fsync;
                job.sync.fdatasync_every_writes = fdatasync;
                job.sync.end_fsync = end;
                job.iodepth = iodepth;
            })
            .0
        };
        assert_eq!(flushes(0, 0, false, 1), 0);
        assert_eq!(flushes(3, 0, false, 1), 5);
        assert_eq!(flushes(3, 0, true, 1), 6);
        assert_eq!(
            flushes(4, 0, true, 1),
            4,
            "the 16th write was synced already"
        );
        assert_eq!(flushes(0, 2, false, 1), 7);
        assert_eq!(flushes(0, 0, true, 1), 1);
        // A deeper queue drains before each sync; the count is the same.
        assert_eq!(flushes(3, 0, true, 8), 6);
    }

    /// fio's `thinktime`: a stall after every `thinktime_blocks` I/Os, the queue drained first.
    #[test]
    fn thinktime_stalls_after_every_thinktime_blocks() {
        const THINK_NS: u64 = 3_000_000;
        let (_, plain_ns) = null_write_run(16, |_| {});
        let (_, think_ns) = null_write_run(16, |job| {
            job.think.think_ns = THINK_NS;
            job.think.every_ios = Some(4);
        });
        // Stalls after the 4th, 8th and 12th I/O (none after the last).
        assert!(think_ns >= 3 * THINK_NS, "{think_ns} ns");
        assert!(
            think_ns < 4 * THINK_NS + plain_ns + 50_000_000,
            "{think_ns} ns"
        );
        // Spinning is part of the stall, not added to it.
        let (_, spin_ns) = null_write_run(16, |job| {
            job.think.think_ns = THINK_NS;
            job.think.spin_ns = THINK_NS;
            job.think.every_ios = Some(8);
        });
        assert!(spin_ns >= THINK_NS, "{spin_ns} ns");
        assert!(
            spin_ns < 2 * THINK_NS + plain_ns + 50_000_000,
            "{spin_ns} ns"
        );
    }

    /// `rate_process=poisson`: the spacing of rated I/Os is exponential with the rate's mean
    /// (standard deviation equal to the mean); linear keeps it constant.
    #[test]
    fn rate_process_poisson_spaces_rated_ios_exponentially() {
        const MEAN_NS: u64 = 1_000_000;
        const DRAWS: usize = 20_000;
        let spacing = |poisson: bool| {
            let mut job = JobSpec::new("rated", EngineKind::Null, Target::None);
            job.rate_poisson = poisson;
            let region = Region {
                start_bytes: 0,
                len_bytes: 1 << 20,
            };
            let mut worker = Worker::new(0, &job, 0, region, 0, NS_PER_S);
            let gaps: Vec<f64> = (0..DRAWS)
                .map(|_| worker.rated_spacing_ns(MEAN_NS) as f64)
                .collect();
            let mean = gaps.iter().sum::<f64>() / DRAWS as f64;
            let variance = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / DRAWS as f64;
            (mean, variance.sqrt())
        };
        assert_eq!(spacing(false), (MEAN_NS as f64, 0.0));
        let (mean, deviation) = spacing(true);
        assert!((mean / MEAN_NS as f64 - 1.0).abs() < 0.03, "{mean}");
        assert!((deviation / mean - 1.0).abs() < 0.05, "{deviation}");
    }
    /// fio's `rate_min`: a job held to 100 IOPS of 4 KiB (400 KiB/s) fails a 1 MiB/s minimum
    /// and passes a 100 KiB/s one.
    #[test]
    fn rate_min_fails_a_job_below_it() {
        const INTERVAL_NS: u64 = 100_000_000;
        let run = |minimum_bytes_per_s: u64| {
            let mut job = JobSpec::new("slow", EngineKind::Null, Target::None);
            job.random_percent = 0;
            job.rate_iops.read = Some(100);
            job.time_based = true;
            job.runtime_ns = Some(5 * INTERVAL_NS);
            job.rate_min.read = Some(minimum_bytes_per_s);
            job.rate_min.write = Some(minimum_bytes_per_s);
            let region = Region {
                start_bytes: 0,
                len_bytes: 1 << 20,
            };
            let (mut worker, _) = drive_on_null(&job, region, INTERVAL_NS);
            worker.error.take().map(|e| e.to_string())
        };
        let error = run(1 << 20).expect("below the minimum");
        assert!(error.contains("rate_min: read moved"), "{error}");
        assert_eq!(
            run(100 << 10),
            None,
            "writes were never asked for: not judged"
        );
    }

    /// fio's `rate_iops_min`: a job held to 100 IOPS fails a 150 IOPS minimum and passes a 50
    /// IOPS one.
    #[test]
    fn rate_iops_min_fails_a_job_below_it() {
        const INTERVAL_NS: u64 = 100_000_000;
        let run = |minimum_ios_per_s: u64| {
            let mut job = JobSpec::new("slow", EngineKind::Null, Target::None);
            job.random_percent = 0;
            job.rate_iops.read = Some(100);
            job.time_based = true;
            job.runtime_ns = Some(5 * INTERVAL_NS);
            job.rate_iops_min.read = Some(minimum_ios_per_s);
            let region = Region {
                start_bytes: 0,
                len_bytes: 1 << 20,
            };
            let (mut worker, _) = drive_on_null(&job, region, INTERVAL_NS);
            worker.error.take().map(|e| e.to_string())
        };
        let error = run(150).expect("below the minimum");
        assert!(
            error.contains("rate_iops_min: read did 100 I/Os per second"),
            "{error}"
        );
        assert_eq!(run(50), None);
    }

    /// fio's `steadystate`: a rated job is steady at once and stops long before its runtime.
    #[test]
    fn a_steady_job_stops_before_its_runtime() {
        const INTERVAL_NS: u64 = 100_000_000;
        let mut job = JobSpec::new("steady", EngineKind::Null, Target::None);
        job.random_percent = 0;
        job.rate_iops.read = Some(2000);
        job.time_based = true;
        job.runtime_ns = Some(20 * NS_PER_S);
        job.steadystate = Some(SteadyStateSpec {
            bandwidth: false,
            slope: false,
            limit_micros: 20_000_000,
            percent: true,
            duration_ns: 5 * INTERVAL_NS,
            ramp_ns: INTERVAL_NS,
        });
        let region = Region {
            start_bytes: 0,
            len_bytes: 1 << 20,
        };
        let (worker, _) = drive_on_null(&job, region, INTERVAL_NS);
        let workers = [worker];
        assert!(workers[0].steady_reached);
        // Ramp, then a window of five intervals: well under the 20 s runtime.
        assert!(
            workers[0].stats.elapsed_ns < 5 * NS_PER_S,
            "{}",
            workers[0].stats.elapsed_ns
        );
        // The window after the ramp is five intervals (0.5 s) at 2000 IOPS: about 1000 I/Os,
        // fewer when the machine is loaded (996 was seen); half of that says the job measured.
        assert!(
            workers[0].stats.read.ios >= 2000 / 4,
            "{}",
            workers[0].stats.read.ios
        );
    }
}
