//! The issue/reap loop: keeps each worker's queue full, records every completion, and stops on
//! size, count, deadline, error or interruption. Several workers can share one engine (virtual
//! time); each owns a contiguous range of the engine's buffer slots.

use crate::offsets::{OffsetGenerator, PlannedIo, Region};
use crate::pattern;
use crate::verify::{self, WriteRecord};
use crate::RunError;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use storlab_engine::{IoCompletion, IoDirection, IoEngine, IoRequest};
use storlab_job::{DataPattern, JobSpec, Target};
use storlab_stats::{CpuTime, WorkerStats};

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

/// Reads during the write phase are checked only while generations have not wrapped.
const CHECKED_GENERATIONS: u64 = u32::MAX as u64;

/// First line of an I/O log in fio's format version 2 (fio iolog.c, `iolog_ver2`): then one
/// line per file action (`FILE add`, `FILE open`, `FILE close`) or I/O (`FILE read OFFSET LEN`).
const IOLOG_V2_HEADER: &str = "fio version 2 iolog";
/// Log lines kept in memory before they are written out.
const IOLOG_BUFFER_BYTES: usize = 64 * 1024;

/// fio's `write_iolog`: every I/O this worker issues, in issue order.
struct IoLog {
    path: PathBuf,
    /// The target as the log names it.
    file_label: String,
    file: Option<std::fs::File>,
    pending: Vec<u8>,
}

impl IoLog {
    fn error(&self, what: &str, error: std::io::Error, job: &str) -> RunError {
        RunError::Plan {
            job: job.to_string(),
            reason: format!("write_iolog={}: {what}: {error}", self.path.display()),
        }
    }

    fn open(&mut self, job: &str) -> Result<(), RunError> {
        let file =
            std::fs::File::create(&self.path).map_err(|e| self.error("cannot create", e, job))?;
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

    fn flush(&mut self, job: &str) -> Result<(), RunError> {
        if let Some(file) = self.file.as_mut() {
            let written = file.write_all(&self.pending);
            self.pending.clear();
            written.map_err(|e| self.error("cannot write", e, job))?;
        }
        Ok(())
    }

    fn close(&mut self, job: &str) -> Result<(), RunError> {
        if self.file.is_none() {
            return Ok(());
        }
        let label = self.file_label.clone();
        writeln!(self.pending, "{label} close").expect("writing to memory");
        self.flush(job)?;
        self.file = None;
        Ok(())
    }
}

/// One worker of one job.
pub struct Worker {
    pub job_index: usize,
    pub worker_index: u32,
    pub region: Region,
    generator: OffsetGenerator,
    pending: Option<PlannedIo>,
    pattern: DataPattern,
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
    /// Reads and writes both (`rwmixread` strictly between 0 and 100).
    mixed: bool,
    verify: Option<VerifyState>,
    /// The job, for verify messages (verify runs only).
    verify_job: Option<Box<JobSpec>>,
    job_name: String,
    /// Bytes in one pass over the region (fio's `io_size`, by default the region's size), when
    /// the region's cached pages are dropped each time a pass completes (fio's `invalidate`
    /// for every loop and every wrap of a time-based job): buffered jobs only.
    invalidate_pass_bytes: Option<u64>,
    /// Issued bytes at which the next pass starts.
    next_pass_at_bytes: u64,
    iolog: Option<IoLog>,
    pub stats: WorkerStats,
    /// The first error seen; the worker stops issuing once set.
    pub error: Option<RunError>,
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
        // fio's HOWTO on `number_ios`: it "does not extend the amount of I/O", so the bytes
        // bound stays and whichever comes first ends the job.
        let limit_bytes = if time_based {
            None
        } else {
            // fio: `io_size` bytes (default: the region's size), `loops` times over.
            let per_loop = job.io_size_bytes.unwrap_or(region.len_bytes);
            Some(per_loop.saturating_mul(u64::from(job.loops.max(1))))
        };
        let per_second = |r: Option<u64>| r.filter(|r| *r > 0).map(|r| NS_PER_S / r.min(NS_PER_S));
        let seed = job.seed ^ u64::from(worker_index).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let verify = job.verify.then(|| VerifyState {
            record: WriteRecord::new(
                worker_index,
                seed,
                job.data_pattern,
                verify::granule_bytes(job),
                region,
            ),
            writes_in_flight: Vec::with_capacity(depth),
            expected: vec![0; job.max_block_bytes() as usize],
            checked_bytes: 0,
            in_phase_checks: true,
        });
        Worker {
            job_index,
            worker_index,
            region,
            generator: OffsetGenerator::new(job, region, worker_index),
            pending: None,
            pattern: job.data_pattern,
            slot_base,
            free_slots: (0..depth as u32).rev().collect(),
            in_flight: vec![InFlight::default(); depth],
            limit_ios: job.number_ios,
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
            mixed: (1..100).contains(&job.read_percent),
            verify,
            verify_job: job.verify.then(|| Box::new(job.clone())),
            job_name: job.name.clone(),
            invalidate_pass_bytes: (job.invalidate && !job.direct)
                .then(|| job.io_size_bytes.unwrap_or(region.len_bytes).max(1)),
            next_pass_at_bytes: job.io_size_bytes.unwrap_or(region.len_bytes).max(1),
            iolog: job.write_iolog.as_ref().map(|path| IoLog {
                path: if job.numjobs > 1 {
                    let mut name = path.clone().into_os_string();
                    name.push(format!(".{worker_index}"));
                    PathBuf::from(name)
                } else {
                    path.clone()
                },
                file_label: match &job.target {
                    Target::Path(path) => path.display().to_string(),
                    Target::Sim(stack) => format!("sim:{stack}"),
                    Target::TempFileIn(_) | Target::None => job.name.clone(),
                },
                file: None,
                pending: Vec::with_capacity(IOLOG_BUFFER_BYTES),
            }),
            // Reserve the per-interval series for the planned run so recording never allocates;
            // size-bounded runs of unknown length grow it (rarely: once per new interval).
            stats: WorkerStats::with_expected_duration(
                interval_ns,
                job.runtime_ns.unwrap_or(0) + job.ramp_time_ns,
            ),
            error: None,
        }
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
        Some(std::mem::replace(&mut state.record, empty))
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
            || self.limit_ios.is_some_and(|n| self.issued_ios >= n)
            || self.limit_bytes.is_some_and(|n| self.issued_bytes >= n)
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
    ) -> Result<(usize, Option<u64>), RunError> {
        let mut queued = 0;
        while !self.free_slots.is_empty() && !self.finished_issuing() {
            let io = *self.pending.get_or_insert_with(|| self.generator.next_io());
            if let Some(remaining) = self.limit_bytes.map(|n| n - self.issued_bytes) {
                if u64::from(io.len_bytes) > remaining && remaining > 0 {
                    // The last I/O of a size-bounded run is trimmed to the bytes left, as fio does.
                    self.pending = Some(PlannedIo {
                        len_bytes: remaining as u32,
                        ..io
                    });
                    continue;
                }
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
                        self.pending = Some(self.generator.next_io_in(direction));
                        continue;
                    }
                    let due = self.rate_next_ns[rate].min(self.rate_next_ns[other]);
                    return Ok((queued, Some(due)));
                }
                self.rate_next_ns[rate] =
                    self.rate_next_ns[rate].max(now_ns - interval.min(now_ns)) + interval;
            }
            self.pending = None;
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
                IoDirection::Write => {
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
                    } else {
                        pattern::stamp(buf, self.pattern, io.offset_bytes, self.write_counter);
                    }
                    self.write_counter += 1;
                }
                IoDirection::Read => {
                    if let Some(v) = self.verify.as_ref() {
                        if v.in_phase_checks && self.write_counter < CHECKED_GENERATIONS {
                            let next = self.write_counter as u32 + 1;
                            generation = v.writes_in_flight.iter().fold(next, |m, g| m.min(*g));
                        }
                    }
                }
                IoDirection::Trim => {}
            }
            engine
                .queue(IoRequest {
                    slot,
                    direction: io.direction,
                    offset_bytes: io.offset_bytes,
                    len_bytes: io.len_bytes,
                })
                .map_err(RunError::Engine)?;
            self.in_flight[relative_slot as usize] = InFlight {
                direction: Some(io.direction),
                offset_bytes: io.offset_bytes,
                len_bytes: io.len_bytes,
                queued_ns: now_ns,
                submitted_ns: now_ns,
                generation,
            };
            queued_slots.push(slot);
            self.issued_ios += 1;
            self.issued_bytes += u64::from(io.len_bytes);
            queued += 1;
        }
        Ok((queued, None))
    }

    fn complete(&mut self, engine: &dyn IoEngine, completion: IoCompletion, window: Window) {
        let relative = (completion.slot - self.slot_base) as usize;
        let io = self.in_flight[relative];
        self.free_slots.push(relative as u32);
        let Some(direction) = io.direction else {
            self.error.get_or_insert(RunError::Protocol(format!(
                "engine completed slot {} that had no request",
                completion.slot
            )));
            return;
        };
        let stats = match direction {
            IoDirection::Read => &mut self.stats.read,
            IoDirection::Write => &mut self.stats.write,
            IoDirection::Trim => &mut self.stats.trim,
        };
        match completion.result {
            Ok(n) if n == io.len_bytes => {}
            Ok(n) => {
                stats.errors += 1;
                self.error.get_or_insert(RunError::ShortIo {
                    offset_bytes: io.offset_bytes,
                    done_bytes: n,
                    wanted_bytes: io.len_bytes,
                });
                return;
            }
            Err(errno) => {
                stats.errors += 1;
                self.error.get_or_insert(RunError::Io {
                    offset_bytes: io.offset_bytes,
                    len_bytes: io.len_bytes,
                    source: std::io::Error::from_raw_os_error(errno),
                });
                return;
            }
        }
        let counted = io.queued_ns >= window.measure_start_ns
            && window.deadline_ns.is_none_or(|d| completion.done_ns <= d);
        if counted {
            let slat_ns = io.submitted_ns.saturating_sub(io.queued_ns);
            let clat_ns = completion.done_ns.saturating_sub(io.submitted_ns);
            let t_ns = completion.done_ns - window.measure_start_ns;
            stats.record(t_ns, u64::from(io.len_bytes), slat_ns, clat_ns);
            self.stats.elapsed_ns = self.stats.elapsed_ns.max(t_ns);
        }
        if let Some(v) = self.verify.as_mut() {
            match direction {
                IoDirection::Write => {
                    if let Some(i) = v.writes_in_flight.iter().position(|g| *g == io.generation) {
                        v.writes_in_flight.swap_remove(i);
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
                        Ok(bytes) => v.checked_bytes += bytes,
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
}

/// Run `workers` on `engine` until each has finished, the deadline passes, or `stop` is set.
/// Returns whether the run was interrupted by `stop`.
pub fn drive(
    engine: &mut dyn IoEngine,
    workers: &mut [Worker],
    timing: Timing,
    stop: &AtomicBool,
    live: Option<&crate::LiveCounters>,
) -> Result<bool, RunError> {
    let synchronous = !engine.capabilities().queued;
    let total_slots: usize = workers.iter().map(|w| w.in_flight.len()).sum();
    let mut completions: Vec<IoCompletion> = Vec::with_capacity(total_slots);
    let mut queued_slots: Vec<u32> = Vec::with_capacity(total_slots);
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
    }
    let cpu_start = CpuTime::thread_now();
    let start_ns = engine.now_ns();
    let window = Window {
        measure_start_ns: start_ns + timing.ramp_ns,
        deadline_ns: timing.runtime_ns.map(|r| start_ns + timing.ramp_ns + r),
    };
    for w in workers.iter_mut() {
        w.rate_next_ns = [start_ns; 2];
    }
    let mut interrupted = false;
    // Right after a reap, the newest completion time is "now" to within the runner's own few
    // tens of ns: reusing it saves a clock read per loop, most of the cost of a QD1 null run.
    let mut reaped_at_ns: Option<u64> = None;
    // Per worker: I/Os queued in this pass of the loop, then completions of its reap.
    let mut queued_by_worker = vec![0u64; workers.len()];
    loop {
        let now_ns = reaped_at_ns.take().unwrap_or_else(|| engine.now_ns());
        let past_deadline = window.deadline_ns.is_some_and(|d| now_ns >= d);
        if stop.load(Ordering::Relaxed) {
            interrupted = true;
        }
        let mut earliest_rate_ns: Option<u64> = None;
        queued_slots.clear();
        let measuring = now_ns >= window.measure_start_ns;
        queued_by_worker.iter_mut().for_each(|n| *n = 0);
        if !past_deadline && !interrupted {
            for (w, queued_here) in workers.iter_mut().zip(queued_by_worker.iter_mut()) {
                let in_flight_before = w.outstanding() as u64;
                let (queued, wait) = w.fill(engine, now_ns, &mut queued_slots)?;
                *queued_here = queued as u64;
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
        }
        if !queued_slots.is_empty() {
            let before_ns = if synchronous {
                Some(engine.now_ns())
            } else {
                None
            };
            engine.submit().map_err(RunError::Engine)?;
            // Synchronous engines do the I/O inside submit, so it belongs to completion latency.
            let submitted_ns = before_ns.unwrap_or_else(|| engine.now_ns());
            for &slot in &queued_slots {
                let w = &mut workers[slot_owner[slot as usize] as usize];
                w.in_flight[(slot - w.slot_base) as usize].submitted_ns = submitted_ns;
            }
            if measuring {
                for (w, &queued) in workers.iter_mut().zip(&queued_by_worker) {
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
        }
        let outstanding: usize = workers.iter().map(Worker::outstanding).sum();
        if outstanding == 0 {
            let more =
                !past_deadline && !interrupted && workers.iter().any(|w| !w.finished_issuing());
            match earliest_rate_ns {
                Some(t) if more => {
                    let t = window.deadline_ns.map_or(t, |d| t.min(d));
                    engine.wait_until_ns(t);
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
            queued_by_worker.iter_mut().for_each(|n| *n = 0);
            for c in &completions {
                if let Some(&owner) = slot_owner.get(c.slot as usize) {
                    queued_by_worker[owner as usize] += 1;
                }
            }
            for (w, &reaped) in workers.iter_mut().zip(&queued_by_worker) {
                if reaped > 0 {
                    w.stats.depth.mark_complete(reaped);
                }
            }
        }
        for c in completions.iter() {
            let owner = slot_owner.get(c.slot as usize).copied();
            match owner {
                Some(i) => workers[i as usize].complete(engine, *c, window),
                None => {
                    return Err(RunError::Protocol(format!(
                        "engine completed unknown slot {}",
                        c.slot
                    )))
                }
            }
        }
    }
    let end_ns = engine.now_ns();
    let cpu = CpuTime::thread_now() - cpu_start;
    for w in workers.iter_mut() {
        if let Some(log) = w.iolog.as_mut() {
            log.close(&w.job_name)?;
        }
    }
    let measured_ns = window
        .deadline_ns
        .map_or(end_ns, |d| end_ns.min(d))
        .saturating_sub(window.measure_start_ns);
    for (i, w) in workers.iter_mut().enumerate() {
        w.stats.elapsed_ns = measured_ns.max(w.stats.elapsed_ns);
        // One thread drove them all: its CPU time is charged to the first worker only.
        if i == 0 {
            w.stats.cpu = cpu;
        }
    }
    Ok(interrupted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_engine::registry::{open_engine, EngineOptions};
    use storlab_engine::{Capabilities, EngineError, EngineSetup};
    use storlab_job::EngineKind;

    /// The null engine, counting the ranges it is asked to invalidate.
    struct CountingInvalidations {
        inner: Box<dyn IoEngine + Send>,
        invalidated: Vec<(u64, u64)>,
    }

    impl IoEngine for CountingInvalidations {
        fn name(&self) -> &'static str {
            "counting"
        }
        fn capabilities(&self) -> Capabilities {
            self.inner.capabilities()
        }
        fn target_size_bytes(&self) -> u64 {
            self.inner.target_size_bytes()
        }
        fn setup(&mut self, setup: &EngineSetup) -> Result<(), EngineError> {
            self.inner.setup(setup)
        }
        fn buffer(&self, slot: u32) -> &[u8] {
            self.inner.buffer(slot)
        }
        fn buffer_mut(&mut self, slot: u32) -> &mut [u8] {
            self.inner.buffer_mut(slot)
        }
        fn queue(&mut self, request: IoRequest) -> Result<(), EngineError> {
            self.inner.queue(request)
        }
        fn submit(&mut self) -> Result<usize, EngineError> {
            self.inner.submit()
        }
        fn reap(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> Result<usize, EngineError> {
            self.inner.reap(min, out)
        }
        fn now_ns(&self) -> u64 {
            self.inner.now_ns()
        }
        fn wait_until_ns(&mut self, deadline_ns: u64) {
            self.inner.wait_until_ns(deadline_ns)
        }
        fn invalidate(&mut self, offset_bytes: u64, len_bytes: u64) -> Result<(), EngineError> {
            self.invalidated.push((offset_bytes, len_bytes));
            Ok(())
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
        let mut engine = CountingInvalidations {
            inner: open_engine(EngineKind::Null, None, &EngineOptions::default()).unwrap(),
            invalidated: Vec::new(),
        };
        engine
            .setup(&EngineSetup {
                slots: 1,
                slot_bytes: 4096,
                buffer_align_bytes: 4096,
            })
            .unwrap();
        let mut workers = vec![Worker::new(0, &job, 0, region, 0, NS_PER_S)];
        let timing = Timing {
            ramp_ns: 0,
            runtime_ns: None,
        };
        drive(
            &mut engine,
            &mut workers,
            timing,
            &AtomicBool::new(false),
            None,
        )
        .unwrap();
        assert_eq!(workers[0].stats.read.ios, 3 * 16);
        engine.invalidated
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
}
