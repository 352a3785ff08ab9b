//! Data verification: the record of what each worker wrote, the read-back of exactly those
//! bytes, and the hand-over between the workers of one job.
//!
//! # Why a record as well as fio's per-block header
//!
//! fio writes a header (offset, sequence number, seed, checksum) into every block and checks it
//! on read; with a fio `verify=` kind storlab writes and checks the same blocks
//! (`fio_verify.rs`, ADR 0018). That needs no memory, but a block stays self-consistent when the
//! drive drops a write and keeps the older one, so fio only notices a lost write where it checks
//! sequence numbers (fixed block size, not time-based). storlab also remembers, per granule, which
//! write generation last covered it, and compares every byte against that write (`verify=1`
//! writes storlab's own data without fio's header, as the job's data pattern asks):
//!
//! - A **granule** is the largest size dividing every offset and length the job can issue: the
//!   greatest common divisor of the alignment, every block size (`bs`, `bsrange`, `bssplit`, both
//!   directions) and `io_size`. Every I/O then covers whole granules, so a 512 B write among
//!   64 KiB ones is recorded exactly, and every written byte is checked.
//! - The record maps each granule to a 32-bit generation (0: never written), in pages of
//!   [`PAGE_GRANULES`] granules allocated on first write (`verify/generations.rs`): a page
//!   keeps its written granules as a sorted list (8 bytes each) up to 64 of them, then as an
//!   array of 4 bytes per granule; plus one 8-byte pointer per page of the region. 100 random
//!   4 KiB writes over 1 GiB take about 100 small lists (10 KiB), a fully written 1 GiB region
//!   of 4 KiB granules 1 MiB, a fully written 1 TiB region 1 GiB (+ 2 MiB of pointers). fio's in-memory log of every write
//!   (`verify_backlog` exists because of it) costs more per write.
//! - The expected content of a granule is a function of the worker's seed, the granule's offset
//!   and its generation (`pattern::fill_verifiable`), or under fio's headers (`FioFormat::fill`)
//!   of the write's data seed (fio's `verify_state` draw, kept by `verify_data_seeds.rs` as a
//!   state of the stream every 64 writes) and where the write began and ended (its run of
//!   granules, or as kept when a later write or read-back cut the run: `record.rs`), so the
//!   read-back recomputes it, and reads back only the written extents.
//!
//! # Several workers on the same bytes
//!
//! fio lets `numjobs` workers share a region; each verifies the blocks it wrote against their
//! headers, so a block another worker overwrote passes when its header is self-consistent, except
//! where fio also compares sequence numbers (fixed block size, not time-based: fio 3.33 reports
//! "bad header numberio" for `rw=randwrite numjobs=2`, and passes `rw=write numjobs=2`). storlab
//! follows the rule without the exception: each worker reads back what it wrote once every worker
//! of the job has finished writing, and a granule that holds another worker's last write to it,
//! intact, is not a mismatch. Writes of one worker to the same granule in flight at once
//! (`norandommap` with `iodepth` > 1, fio's HOWTO warns about it) may land in either order; the
//! record keeps every generation that may have landed there.

mod generations;
mod record;

pub use record::WriteRecord;

use crate::fio_verify::{Failure, FioFormat};
use crate::RunError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use storlab_engine::{IoCompletion, IoDirection, IoEngine, IoRequest};
use storlab_job::{JobSpec, Target};

/// Granules per page of a [`WriteRecord`]: 1024 four-byte generations fill one 4 KiB page.
pub const PAGE_GRANULES: usize = 1024;
/// Unit in which a granule may hold parts of different writes (one sector: the drive's and the
/// page cache's smallest unit of a write), when several writes to it raced.
const TEAR_BYTES: usize = 512;
/// Bytes shown in hex from the first difference of a mismatch.
const SHOWN_BYTES: usize = 8;

/// The largest size that divides every offset and length `job` can issue (see the module docs).
pub fn granule_bytes(job: &JobSpec) -> u64 {
    job.verify_granule_bytes()
}

/// Compare `found` (read from `offset_bytes`, whole granules) against what `own` recorded, using
/// `expected` as scratch. A granule passes if it holds the last write of `own` to it, or any
/// write that may have landed there last: an earlier racing one of `own`, or the last of another
/// worker (`peers`) to the same bytes. Returns the bytes checked.
#[allow(clippy::too_many_arguments)]
pub fn check_read(
    job: &JobSpec,
    own: &WriteRecord,
    peers: &[Arc<WriteRecord>],
    offset_bytes: u64,
    found: &[u8],
    expected: &mut [u8],
    only_stable_below: Option<u32>,
) -> Result<u64, RunError> {
    let granule = own.granule_bytes() as usize;
    let mut checked = 0;
    let mut last_write = None;
    if let Some(format) = own
        .format
        .as_deref()
        .filter(|f| f.only && f.spans_granules())
    {
        // fio's headers span granules: the read-back reads each write whole from its start,
        // and its headers are checked there as fio does (each granule then passes alone).
        if let Err(failure) = format.check_read_block(found, offset_bytes) {
            let at = failure.offset_bytes;
            let from = (at - offset_bytes) as usize;
            let have = &found[from..from + failure.len_bytes as usize];
            let expected = format.expected_from_header(have, at);
            return Err(fio_failure(job, format, failure, at, have, &expected));
        }
    }
    for (i, have) in found.chunks(granule).enumerate() {
        let at = offset_bytes + (i * granule) as u64;
        let generation = own.generation_at(at);
        if generation == 0 {
            continue;
        }
        if let Some(limit) = only_stable_below {
            // A read during the write phase: check only granules whose last write completed
            // before the read was issued and no later write was issued since.
            if generation >= limit || own.is_ambiguous(at) {
                continue;
            }
        }
        if let Some(format) = own.format.as_deref() {
            if format.kind == storlab_job::VerifyKind::Null {
                // fio's `verify=null`: read back, check nothing.
                continue;
            }
            if format.only {
                // Data a previous run wrote: its headers and checksums are all there is.
                if let Err(failure) = format.check_granule(have, at) {
                    let expected = format.expected_from_header(have, at);
                    return Err(fio_failure(job, format, failure, at, have, &expected));
                }
                checked += have.len() as u64;
                continue;
            }
        }
        let want = &mut expected[..have.len()];
        own.fill_expected_near(want, at, generation, &mut last_write);
        if want != have {
            if let Some(format) = own.format.as_deref() {
                // Name what fio would: a bad header or checksum comes before a stale block.
                if let Err(failure) = format.check_granule(have, at) {
                    return Err(fio_failure(job, format, failure, at, have, want));
                }
            }
            check_landed_writes(job, own, peers, at, have).map_err(|error| {
                match (own.format.as_deref(), &error) {
                    (Some(format), RunError::VerifyMismatch(_)) if format.dump => {
                        dump_granule(job, at, have, want);
                        error
                    }
                    _ => error,
                }
            })?;
        }
        checked += have.len() as u64;
    }
    Ok(checked)
}

/// A check of fio's verify blocks failed (see `RunError::FioVerify`).
#[derive(Debug, thiserror::Error)]
#[error(
    "verify failed: job '{job}' on {target}: {reason} at offset {offset_bytes}, length \
     {len_bytes}{dumped}"
)]
pub struct FioMismatch {
    pub job: String,
    pub target: String,
    pub reason: String,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// Where `verify_dump` put the block, as a sentence's end (empty without it).
    pub dumped: String,
}

/// The error for `failure` in the granule at `at` (`have` read, `want` expected), after
/// dumping the block as fio's `verify_dump` does.
pub(crate) fn fio_failure(
    job: &JobSpec,
    format: &FioFormat,
    failure: Failure,
    at: u64,
    have: &[u8],
    want: &[u8],
) -> RunError {
    let mut dumped = String::new();
    if format.dump {
        // fio dumps the failed interval; its bytes within the granule.
        let start = (failure.offset_bytes - at) as usize;
        let end = start + failure.len_bytes as usize;
        dumped = if failure.bad_header {
            dump_file(job, failure.offset_bytes, "hdr_fail", &have[start..end])
        } else {
            let received = dump_file(job, failure.offset_bytes, "received", &have[start..end]);
            let expected = dump_file(job, failure.offset_bytes, "expected", &want[start..end]);
            format!("{received}{expected}")
        };
    }
    RunError::FioVerify(Box::new(FioMismatch {
        job: job.name.clone(),
        target: target_name(&job.target),
        reason: failure.reason,
        offset_bytes: failure.offset_bytes,
        len_bytes: failure.len_bytes,
        dumped,
    }))
}

/// `verify_dump` of a block that holds another write than the last (headers intact).
fn dump_granule(job: &JobSpec, at: u64, have: &[u8], want: &[u8]) {
    dump_file(job, at, "received", have);
    dump_file(job, at, "expected", want);
}

/// Write `bytes` to fio's dump file name, `BASENAME.OFFSET.KIND`, in the current directory
/// (fio 3.33, verify.c `dump_buf`); says where, or why not, for the error message.
fn dump_file(job: &JobSpec, offset_bytes: u64, kind: &str, bytes: &[u8]) -> String {
    let base = match &job.target {
        Target::Path(path) => path
            .file_name()
            .map_or_else(|| "target".into(), |n| n.to_string_lossy().into_owned()),
        Target::Sim(stack) => format!("sim-{stack}"),
        Target::TempFileIn(_) | Target::None => job.name.clone(),
    };
    // One file name in the current directory: a stack's name (`lucidport/...`) or a job's may
    // hold `/`, which would name a directory that does not exist.
    let base = base.replace('/', "_");
    let name = format!("{base}.{offset_bytes}.{kind}");
    match storlab_engine::output_file::write_whole(
        "verify_dump",
        std::path::Path::new(&name),
        bytes,
    ) {
        Ok(()) => format!("; {kind} data dumped as {name}"),
        Err(error) => format!("; dumping {name} failed: {error}"),
    }
}

/// Where verify found different data, and what it expected (see `RunError::VerifyMismatch`).
#[derive(Debug, thiserror::Error)]
#[error(
    "verify failed: job '{job}' on {target}: the {len_bytes} bytes at offset {offset_bytes}, \
     last written by worker {worker} in its write generation {generation}, read back \
     different; from offset {first_difference_bytes}: expected {expected_hex}, found \
     {found_hex}"
)]
pub struct Mismatch {
    pub job: String,
    pub target: String,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// The worker that wrote what these bytes should hold (of those that may have written
    /// them last, the one whose data is closest to what was read).
    pub worker: u32,
    /// That worker's count of writes (from 1, modulo 2^32 - 1) at that write.
    pub generation: u32,
    pub first_difference_bytes: u64,
    pub expected_hex: String,
    pub found_hex: String,
}

/// A write that may be what a granule holds: who wrote it, in which generation, and its data.
struct Candidate {
    worker: u32,
    generation: u32,
    data: Vec<u8>,
}

/// `have` (the granule at `at`) differs from `own`'s last write to it. It still passes if each
/// sector holds what some write that may have landed last put there: an earlier racing write
/// of `own`, or the last write of another worker to these bytes. Otherwise the mismatch is
/// reported against the closest such write. Rare path: it runs only after a difference.
fn check_landed_writes(
    job: &JobSpec,
    own: &WriteRecord,
    peers: &[Arc<WriteRecord>],
    at: u64,
    have: &[u8],
) -> Result<(), RunError> {
    let mut candidates = Vec::new();
    let mut add = |record: &WriteRecord| {
        for generation in record.candidates_at(at) {
            let mut data = vec![0u8; have.len()];
            // Every worker of a job has the same granule size (it depends on the job alone).
            record.fill_expected(&mut data, at, generation);
            candidates.push(Candidate {
                worker: record.worker_index,
                generation,
                data,
            });
        }
    };
    add(own);
    peers
        .iter()
        .filter(|p| p.worker_index != own.worker_index)
        .for_each(|p| add(p));
    let tear = TEAR_BYTES.min(have.len());
    let all_sectors_landed = have.chunks(tear).enumerate().all(|(s, sector)| {
        candidates
            .iter()
            .any(|c| &c.data[s * tear..s * tear + sector.len()] == sector)
    });
    if all_sectors_landed {
        return Ok(());
    }
    let differing = |c: &Candidate| c.data.iter().zip(have).filter(|(a, b)| a != b).count();
    let closest = candidates
        .iter()
        .min_by_key(|c| differing(c))
        .expect("own last write is a candidate");
    Err(mismatch(job, closest, at, have))
}

fn mismatch(job: &JobSpec, closest: &Candidate, at: u64, have: &[u8]) -> RunError {
    let want = &closest.data;
    let first = want.iter().zip(have).position(|(a, b)| a != b).unwrap_or(0);
    let shown = first..(first + SHOWN_BYTES).min(want.len());
    let hex = |bytes: &[u8]| {
        bytes
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    RunError::VerifyMismatch(Box::new(Mismatch {
        job: job.name.clone(),
        worker: closest.worker,
        target: target_name(&job.target),
        offset_bytes: at,
        len_bytes: want.len() as u64,
        generation: closest.generation,
        first_difference_bytes: at + first as u64,
        expected_hex: hex(&want[shown.clone()]),
        found_hex: hex(&have[shown]),
    }))
}

pub(crate) fn target_name(target: &Target) -> String {
    match target {
        Target::Path(path) => path.display().to_string(),
        Target::TempFileIn(dir) => format!("a temporary file in {}", dir.display()),
        Target::Sim(stack) => format!("sim:{stack}"),
        Target::None => "no target".into(),
    }
}

/// Where the threads of one verifying job meet between writing and reading back, so no worker
/// reads while another still writes, and each sees every worker's record.
pub struct VerifyBoard {
    threads: usize,
    state: Mutex<BoardState>,
    all_arrived: Condvar,
}

struct BoardState {
    arrived: usize,
    /// Some thread failed or was interrupted: nobody reads back.
    abandoned: bool,
    records: Vec<Arc<WriteRecord>>,
}

impl VerifyBoard {
    pub fn new(threads: usize) -> Self {
        VerifyBoard {
            threads,
            state: Mutex::new(BoardState {
                arrived: 0,
                abandoned: false,
                records: Vec::new(),
            }),
            all_arrived: Condvar::new(),
        }
    }

    /// A thread's place on the board; if the thread unwinds before arriving, its drop arrives
    /// for it (abandoning the read-back) so the others never wait forever.
    pub fn place(&self) -> Arrival<'_> {
        Arrival {
            board: self,
            arrived: false,
        }
    }

    fn arrive(&self, records: Vec<WriteRecord>, failed: bool) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.arrived += 1;
        state.abandoned |= failed;
        state.records.extend(records.into_iter().map(Arc::new));
        if state.arrived >= self.threads {
            self.all_arrived.notify_all();
        }
    }
}

/// See [`VerifyBoard::place`].
pub struct Arrival<'a> {
    board: &'a VerifyBoard,
    arrived: bool,
}

impl Arrival<'_> {
    /// Hand over this thread's records and wait for every thread of the job. Returns every
    /// worker's record, or `None` when some thread failed or was interrupted.
    pub fn arrive_and_wait(
        mut self,
        records: Vec<WriteRecord>,
        failed: bool,
    ) -> Option<Vec<Arc<WriteRecord>>> {
        self.arrived = true;
        let board = self.board;
        board.arrive(records, failed);
        let mut state = board.state.lock().unwrap_or_else(|e| e.into_inner());
        while state.arrived < board.threads {
            state = board
                .all_arrived
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
        (!state.abandoned).then(|| state.records.clone())
    }
}

impl Drop for Arrival<'_> {
    fn drop(&mut self) {
        if !self.arrived {
            self.board.arrive(Vec::new(), true);
        }
    }
}

/// What a read-back did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ReadBack {
    /// Bytes compared with what was written.
    pub checked_bytes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    pub interrupted: bool,
}

/// Where the read-back counts its reads: the live progress counters, and the job's read
/// statistics, as fio counts verify reads in them (its own test suite relies on it), after the
/// job's I/O.
pub struct ReadBackCounters<'a> {
    pub live: Option<&'a crate::LiveCounters>,
    pub read: &'a mut storlab_stats::DirectionStats,
    /// The worker's measured time so far: read-back completions are placed after it.
    pub elapsed_ns: &'a mut u64,
    /// The worker's first error passed by `continue_on_error` (0: none yet).
    pub first_error_errno: &'a mut i32,
    /// The worker's queue depths: fio marks each verify read at the depth it queues it at.
    pub depth: &'a mut storlab_stats::DepthCounts,
}

impl ReadBackCounters<'_> {
    /// As the job's own I/O (`drive.rs`): each of `queued` reads at the depth it raised the
    /// queue to from `in_flight_before`, at depth 1 on an engine that reads inside submit.
    fn mark_depths(&mut self, synchronous: bool, in_flight_before: u64, queued: u64) {
        for raised_to in in_flight_before + 1..=in_flight_before + queued {
            self.depth
                .mark_depth(if synchronous { 1 } else { raised_to });
        }
    }

    /// Counts a read of `len_bytes` completed `t_ns` into the measurement after `clat_ns`,
    /// with a submission latency of its own only where its engine queued it (`has_slat`).
    fn count_read(&mut self, has_slat: bool, t_ns: u64, len_bytes: u32, clat_ns: u64) {
        match has_slat {
            true => self.read.record(t_ns, u64::from(len_bytes), 0, clat_ns),
            false => (self.read).record_without_slat(t_ns, u64::from(len_bytes), 0, clat_ns),
        }
        *self.elapsed_ns = (*self.elapsed_ns).max(t_ns);
    }

    /// Counts an error `job`'s `continue_on_error` passes (a read's `errno`, or EILSEQ for a
    /// bad block), as fio's `update_error_count` after `td_non_fatal_error`; false if the
    /// error ends the job.
    fn pass_error(&mut self, job: &JobSpec, errno: i32) -> bool {
        if !job.continue_on_error.passes(true, errno) {
            return false;
        }
        if errno == storlab_job::ERRNO_EILSEQ {
            // The read completed (and counts); its block was bad.
            self.read.verify_errors += 1;
        } else {
            self.read.errors += 1;
        }
        if *self.first_error_errno == 0 {
            *self.first_error_errno = errno;
        }
        true
    }
}

/// Where one worker's read-back runs on the engine.
pub struct ReadBackSlots {
    pub slot_base: u32,
    pub depth: u32,
    pub slot_bytes: u64,
    /// Taken off every offset given to the engine (fio's mmap engine, as the worker's I/O).
    pub engine_shift_bytes: u64,
}

/// Read back every extent `own` wrote, `slots.depth` reads at a time, and check each granule.
pub fn read_back(
    engine: &mut dyn IoEngine,
    job: &JobSpec,
    own: &WriteRecord,
    peers: &[Arc<WriteRecord>],
    slots: &ReadBackSlots,
    stop: &AtomicBool,
    mut stats: ReadBackCounters<'_>,
) -> Result<ReadBack, RunError> {
    let live = stats.live;
    let depth = slots.depth.max(1) as usize;
    // An engine that reads inside submit: one read in flight at a time, and no submission
    // latency (as the job's own I/O, `Worker::open_logs`).
    let synchronous = !engine.capabilities().queued;
    let has_slat = !synchronous && job.has_submission_latency(false);
    let start_ns = engine.now_ns();
    let measured_before_ns = *stats.elapsed_ns;
    // Per slot: when its read in flight was submitted (0: none in flight).
    let mut submitted_ns: Vec<u64> = vec![0; depth];
    let mut extents = own.extents(slots.slot_bytes);
    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    let mut reading: Vec<(u64, u32)> = vec![(0, 0); depth];
    let mut expected = vec![0u8; slots.slot_bytes as usize];
    let mut completions: Vec<IoCompletion> = Vec::with_capacity(depth);
    let mut outcome = ReadBack::default();
    let mut exhausted = false;
    // The first bad block or failed read: the reads still in flight are reaped before it is
    // returned, as the engine may be shared with the job's other clones, whose read-back would
    // otherwise reap them as completions of slots it never used.
    let mut failure: Option<RunError> = None;
    loop {
        if stop.load(Ordering::Relaxed) {
            outcome.interrupted = true;
        }
        let mut queued = 0;
        if !outcome.interrupted && !exhausted && failure.is_none() {
            (queued, exhausted) =
                queue_reads(engine, slots, &mut extents, &mut free, &mut reading)?;
        }
        if queued > 0 {
            let in_flight_before = (depth - free.len() - queued) as u64;
            stats.mark_depths(synchronous, in_flight_before, queued as u64);
            // Synchronous engines read inside submit: their time is completion latency.
            let before_ns = engine.now_ns();
            engine.submit().map_err(RunError::Engine)?;
            for (relative, at) in submitted_ns.iter_mut().enumerate() {
                if *at == 0 && !free.contains(&(relative as u32)) {
                    *at = before_ns;
                }
            }
        }
        if free.len() == depth {
            return failure.map_or(Ok(outcome), Err);
        }
        completions.clear();
        engine.reap(1, &mut completions).map_err(RunError::Engine)?;
        for c in &completions {
            let relative = relative_slot(c.slot, slots.slot_base, depth)?;
            let (offset_bytes, len_bytes) = reading[relative as usize];
            let read_at_ns = submitted_ns[relative as usize];
            submitted_ns[relative as usize] = 0;
            free.push(relative);
            if failure.is_some() {
                continue;
            }
            if let Err(error) = read_whole(c.result, offset_bytes, len_bytes) {
                let passed = matches!(c.result, Err(errno) if stats.pass_error(job, errno));
                if !passed {
                    failure = Some(error);
                }
                continue;
            }
            // Counted before it is checked: fio counts the read of a bad block too, and a job
            // verify stops is reported with its figures.
            outcome.read_bytes += u64::from(len_bytes);
            let t_ns = measured_before_ns + c.done_ns.saturating_sub(start_ns);
            let clat_ns = c.done_ns.saturating_sub(read_at_ns);
            stats.count_read(has_slat, t_ns, len_bytes, clat_ns);
            // An engine that fakes its I/O (`null`) has no data to check: fio's verify.c
            // passes every such read (`FIO_FAKEIO`).
            if !engine.capabilities().moves_data {
                continue;
            }
            let found = &engine.buffer(c.slot)[..len_bytes as usize];
            match check_read(job, own, peers, offset_bytes, found, &mut expected, None) {
                Ok(checked_bytes) => outcome.checked_bytes += checked_bytes,
                // fio's `continue_on_error=verify`: the bad block is counted, the pass goes on.
                Err(error)
                    if error.is_verify_failure()
                        && stats.pass_error(job, storlab_job::ERRNO_EILSEQ) => {}
                Err(error) => failure = Some(error),
            }
        }
        if let Some(live) = live {
            live.count(&completions);
        }
    }
}

/// Which of the read-back's `depth` slots from `slot_base` engine slot `slot` is.
fn relative_slot(slot: u32, slot_base: u32, depth: usize) -> Result<u32, RunError> {
    slot.checked_sub(slot_base)
        .filter(|r| (*r as usize) < depth)
        .ok_or_else(|| RunError::Protocol(format!("engine completed unknown slot {slot}")))
}

/// Queues reads of the next `extents` into the `free` slots (from `slots.slot_base`), noting each
/// slot's extent in `reading`. Returns how many were queued and whether the extents ran out.
fn queue_reads(
    engine: &mut dyn IoEngine,
    slots: &ReadBackSlots,
    extents: &mut impl Iterator<Item = (u64, u64)>,
    free: &mut Vec<u32>,
    reading: &mut [(u64, u32)],
) -> Result<(usize, bool), RunError> {
    let mut queued = 0;
    while !free.is_empty() {
        let Some((offset_bytes, len_bytes)) = extents.next() else {
            return Ok((queued, true));
        };
        let relative = free.pop().expect("checked non-empty");
        let len_bytes = len_bytes as u32;
        engine
            .queue(IoRequest {
                slot: slots.slot_base + relative,
                direction: IoDirection::Read,
                offset_bytes: offset_bytes - slots.engine_shift_bytes,
                len_bytes,
                ioprio: None,
            })
            .map_err(RunError::Engine)?;
        reading[relative as usize] = (offset_bytes, len_bytes);
        queued += 1;
    }
    Ok((queued, false))
}

/// A read-back read of `len_bytes` at `offset_bytes` must come back whole: `result` as an
/// error otherwise.
fn read_whole(result: Result<u32, i32>, offset_bytes: u64, len_bytes: u32) -> Result<(), RunError> {
    match result {
        Ok(n) if n == len_bytes => Ok(()),
        Ok(n) => Err(RunError::ShortIo {
            offset_bytes,
            done_bytes: n,
            wanted_bytes: len_bytes,
            write: false,
        }),
        Err(errno) => Err(RunError::Io {
            offset_bytes,
            len_bytes,
            source: std::io::Error::from_raw_os_error(errno),
        }),
    }
}

#[cfg(test)]
mod tests;
