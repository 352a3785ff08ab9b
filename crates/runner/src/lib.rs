//! storlab-runner: runs jobs on engines. It splits each job into workers with disjoint regions,
//! runs stonewall groups one after the other, and gives every worker its own thread, except on
//! engines with a shared (virtual) timeline, where one thread drives all workers of a job.
//!
//! The runner never asks whether an engine is real or simulated: it only reads capabilities.
#![forbid(unsafe_code)]

mod axmap;
mod cmdprio;
#[cfg(test)]
mod compressibility;
mod distribution;
pub mod fio_buffers;
pub mod fio_log;
pub mod fio_rand;
mod fio_sequence;
pub mod fio_verify;
pub mod flow;
mod latency_target;
mod lfsr;
pub mod offsets;
pub mod overlap;
pub mod pattern;
mod random_map;
pub mod state;
mod steady;
pub mod sweep;
pub mod verify;
mod verify_state;
pub mod warning;
pub mod worker;

pub use offsets::Region;

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;
use storlab_engine::{Capabilities, EngineError, EngineReport, EngineSetup, IoEngine};
use storlab_job::{share_of_bytes, ExitWhat, JobSet, JobSpec};
use storlab_stats::WorkerStats;
use verify_state::SavedVerifyState;
use worker::{Timing, Worker};

/// Interval of the per-second IOPS/bandwidth series.
pub const DEFAULT_INTERVAL_NS: u64 = 1_000_000_000;
/// Buffer alignment: enough for O_DIRECT on 4Kn devices, and a NAND page.
pub const BUFFER_ALIGN_BYTES: usize = 4096;

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Engine(#[from] EngineError),
    #[error("I/O error at offset {offset_bytes} (length {len_bytes}): {source}")]
    Io {
        offset_bytes: u64,
        len_bytes: u32,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "short I/O at offset {offset_bytes}: {done_bytes} of {wanted_bytes} bytes (end of target?)"
    )]
    ShortIo {
        offset_bytes: u64,
        done_bytes: u32,
        wanted_bytes: u32,
        /// A write (fio retries the rest, which a full file system fails with ENOSPC) or a
        /// read (the rest reads nothing past the end: fio's "full resid", EIO).
        write: bool,
    },
    /// Data read back differs from what was written (boxed: the details are large and rare).
    #[error("{0}")]
    VerifyMismatch(Box<verify::Mismatch>),
    /// fio's header or checksum check of a block failed (boxed as `VerifyMismatch`).
    #[error("{0}")]
    FioVerify(Box<verify::FioMismatch>),
    #[error("job '{job}': {reason}")]
    Plan { job: String, reason: String },
    #[error("engine protocol violation: {0}")]
    Protocol(String),
    #[error("worker thread panicked: {0}")]
    Panic(String),
    /// Another client of a multi-client run failed (the message names it); this one stops.
    #[error("{0}")]
    Peer(String),
    /// A job's own failure ([`JobOutcome::failure`]), named with the job and its target, as
    /// the front end reports a run in which it failed.
    #[error("job '{job}' on {target}: {source}")]
    Job {
        job: String,
        target: String,
        #[source]
        source: Box<RunError>,
    },
}

/// Opens the engines a job runs on. The CLI implements it (real targets, the simulator, ...).
pub trait EngineProvider {
    /// Engines for `job`: one per worker, or a single engine whose capabilities say
    /// `shared_timeline` (then every worker of the job runs on it).
    fn open(&mut self, job: &JobSpec) -> Result<Vec<Box<dyn IoEngine + Send>>, RunError>;
    /// Engines come back after the job, so a provider can keep state (a simulated drive
    /// remembers what was written) for the next job.
    fn release(&mut self, _job: &JobSpec, _engines: Vec<Box<dyn IoEngine + Send>>) {}
    /// Every job of a stonewall group is open and set up; its workers start when this
    /// returns. A multi-client run waits here for every client (fio's stonewall across
    /// clients, IOR's `-g`); an error (a client that failed) stops the run before the group.
    fn group_ready(&mut self) -> Result<(), RunError> {
        Ok(())
    }
    /// A stonewall group ended with these outcomes, before they are handed on; a multi-client
    /// run gathers the clients' figures here. An error stops the run after the group.
    fn group_ended(&mut self, _outcomes: &[JobOutcome]) -> Result<(), RunError> {
        Ok(())
    }
}

/// What one job produced.
#[derive(Debug)]
pub struct JobOutcome {
    pub job: JobSpec,
    /// One entry per worker, in worker order.
    pub workers: Vec<WorkerStats>,
    pub regions: Vec<Region>,
    pub target_size_bytes: u64,
    pub engine_name: String,
    /// What the job's engine can do (every engine of a job is of one kind): the checks after
    /// a run read these flags, never the engine's kind.
    pub capabilities: Capabilities,
    pub engine_reports: Vec<EngineReport>,
    /// Bytes read back and compared (verify runs).
    pub verified_bytes: u64,
    /// Ctrl-C (or another stop request) cut the job short.
    pub interrupted: bool,
    /// fio's per-I/O log files the job asked for (`write_bw_log`...), for the front end to
    /// write, in worker order.
    pub fio_logs: Vec<fio_log::FioLogFile>,
    /// The first error that ended a worker of the job, in worker order: a verify failure
    /// (`VerifyMismatch`, `FioVerify`) or a failed I/O ([`RunError::job_errno`]). As fio, the
    /// figures up to it are kept and reported with the error of the worker that saw it, the
    /// other jobs still run, and the run fails once they have.
    pub failure: Option<RunError>,
    /// One entry per worker, in worker order: the errno that ended that worker (fio's job
    /// `error`), 0 for one that ended normally. fio marks only the clone that failed; the
    /// others report their own figures, error 0.
    pub errno_by_worker: Vec<i32>,
}

/// fio's ETIMEDOUT: `latency_target` missed at queue depth 1.
const ERRNO_ETIMEDOUT: i32 = 110;

impl RunError {
    /// Verify read back other data than was written (fio's EILSEQ), as opposed to a failure
    /// to do the I/O or to run at all.
    pub fn is_verify_failure(&self) -> bool {
        matches!(self, RunError::VerifyMismatch(_) | RunError::FioVerify(_))
    }

    /// The errno fio reports for a job this error ended (its JSON `error`), when the error
    /// ends only that job: a verify failure (EILSEQ), a failed or short I/O, a failed sync.
    /// `None` for an error that stops the whole run (a plan the target cannot hold, an engine
    /// broken or misused, a panic, another client's failure).
    pub fn job_errno(&self) -> Option<i32> {
        use storlab_job::{ERRNO_EILSEQ, ERRNO_EIO, ERRNO_ENOSPC};
        let errno_of = |error: &std::io::Error| match error.kind() {
            std::io::ErrorKind::TimedOut => ERRNO_ETIMEDOUT,
            _ => error.raw_os_error().unwrap_or(ERRNO_EIO),
        };
        match self {
            RunError::VerifyMismatch(_) | RunError::FioVerify(_) => Some(ERRNO_EILSEQ),
            RunError::Io { source, .. } => Some(errno_of(source)),
            RunError::Engine(EngineError::Io(source)) => Some(errno_of(source)),
            RunError::ShortIo { write: true, .. } => Some(ERRNO_ENOSPC),
            RunError::ShortIo { write: false, .. } => Some(ERRNO_EIO),
            RunError::Job { source, .. } => source.job_errno(),
            _ => None,
        }
    }
}

/// Completed I/Os and bytes so far, added once per reaped batch with relaxed atomics (no locks
/// on the I/O path), for live progress displays in another thread.
#[derive(Debug, Default)]
pub struct LiveCounters {
    pub ios: AtomicU64,
    pub bytes: AtomicU64,
}

impl LiveCounters {
    pub const fn new() -> Self {
        LiveCounters {
            ios: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        }
    }
}

/// Settings of a run that are not part of any job.
pub struct RunOptions<'a> {
    pub interval_ns: u64,
    /// Set from a signal handler to stop early; finished results are kept.
    pub stop: &'a AtomicBool,
    /// Where to publish live progress, if anyone watches.
    pub live: Option<&'a LiveCounters>,
}

/// The regions of `job`'s workers on a target of `target_size_bytes` (fio `offset`,
/// `offset_increment`, `size` semantics), or why they do not fit.
pub fn plan_regions(job: &JobSpec, target_size_bytes: u64) -> Result<Vec<Region>, RunError> {
    let plan_error = |reason: String| RunError::Plan {
        job: job.name.clone(),
        reason,
    };
    let align = job.align_bytes.max(1);
    let shares = &job.target_shares;
    let share = |ppm| share_of_bytes(target_size_bytes, ppm);
    let offset = shares.offset_ppm.map_or(job.offset_bytes, share);
    // Rounded down, so `offset_increment=25% size=25%` puts four workers side by side.
    let increment = shares
        .offset_increment_ppm
        .map_or(job.offset_increment_bytes, |ppm| share(ppm) / align * align);
    // A multi-client run's clients continue the clone numbering (`clone_index_base`).
    let first_clone = u64::from(job.clone_index_base);
    (0..u64::from(job.numjobs))
        .map(|i| offset.checked_add((first_clone + i).checked_mul(increment)?))
        .map(|start| {
            let start = start.ok_or_else(|| plan_error("worker offsets overflow".into()))?;
            let start = start.div_ceil(align) * align;
            let rest = target_size_bytes.saturating_sub(start);
            let len = match (shares.size_ppm, job.size_bytes) {
                // As fio does, a share of the target stops at its end: `offset=50% size=100%`
                // is the second half.
                (Some(ppm), _) => share(ppm).min(rest),
                (None, Some(size)) => size,
                (None, None) => rest,
            };
            let len = len / align * align;
            let end = start.saturating_add(len);
            if start >= target_size_bytes {
                return Err(plan_error(format!(
                    "offset {start} is at or beyond the end of the target ({target_size_bytes} bytes)"
                )));
            }
            if len == 0 || end > target_size_bytes {
                return Err(plan_error(format!(
                    "target too small: the job needs bytes {start}..{end} but the target has {target_size_bytes}"
                )));
            }
            if len < job.block_size_read.min_bytes().max(job.block_size_write.min_bytes()) {
                return Err(plan_error(format!(
                    "region of {len} bytes is smaller than one block"
                )));
            }
            if let storlab_job::RandomDistribution::ZonedAbs { zones } = &job.random_distribution {
                // fio fails the job when its zones pass the file's end (io_u.c, "zoned_abs
                // sizes exceed file size"); storlab says so before it starts.
                let zones_bytes: u64 = zones.iter().map(|z| z.size).sum();
                if zones_bytes > len {
                    return Err(plan_error(format!(
                        "random_distribution=zoned_abs: the zones cover {zones_bytes} bytes, more than the worker's region of {len} bytes"
                    )));
                }
            }
            // fio's strided zones spread the job's `size` over the whole target from the
            // worker's offset on, wrapping at its end (io_u.c, `setup_strided_zone_mode`).
            let len = if job.strided_zones.is_some() {
                rest / align * align
            } else {
                len
            };
            Ok(Region {
                start_bytes: start,
                len_bytes: len,
            })
        })
        .collect()
}

/// A replayed trace must stay inside the target: nothing grows it past its end (fio would
/// extend a file with the trace's writes and fail its reads there). Refused with the trace's
/// first line that passes the end.
pub fn check_replay_fits(job: &JobSpec, target_size_bytes: u64) -> Result<(), RunError> {
    let Some(replay) = &job.replay else {
        return Ok(());
    };
    let beyond = replay
        .trace
        .entries
        .iter()
        .find(|e| e.offset_bytes + u64::from(e.len_bytes) > target_size_bytes);
    match beyond {
        Some(entry) => Err(RunError::Plan {
            job: job.name.clone(),
            reason: format!(
                "read_iolog={}:{}: {} bytes at offset {} end beyond the target ({target_size_bytes} bytes); storlab does not grow a file to replay a trace",
                replay.trace.path.display(),
                entry.line,
                entry.len_bytes,
                entry.offset_bytes
            ),
        }),
        None => Ok(()),
    }
}

/// fio refuses a `cpus_allowed` naming a CPU the machine does not have (options.c,
/// `set_cpus_allowed`: "CPU N too large"); so does storlab, before any job starts.
fn check_cpus_exist(set: &JobSet) -> Result<(), RunError> {
    let Some(first) = set.jobs.iter().find(|job| job.cpus_allowed.is_some()) else {
        return Ok(());
    };
    let configured =
        storlab_engine::cpu_affinity::configured_cpus().map_err(|error| RunError::Plan {
            job: first.name.clone(),
            reason: format!("cpus_allowed: counting this machine's CPUs: {error}"),
        })?;
    for job in &set.jobs {
        // The first CPU of the list the machine lacks, as fio names it.
        let missing = job
            .cpus_allowed
            .as_ref()
            .and_then(|affinity| affinity.cpus.iter().copied().find(|&cpu| cpu >= configured));
        if let Some(cpu) = missing {
            return Err(RunError::Plan {
                job: job.name.clone(),
                reason: format!(
                    "cpus_allowed: CPU {cpu} too large: this machine has CPUs 0-{} \
                     (fio refuses it too)",
                    configured - 1
                ),
            });
        }
    }
    Ok(())
}

/// Run every job of `set`, stonewall group by group, calling `on_job_done` as each finishes so
/// the caller can save it at once. Stops after the group in which `stop` was set.
pub fn run_jobs(
    set: &JobSet,
    provider: &mut dyn EngineProvider,
    options: &RunOptions<'_>,
    on_job_done: &mut dyn FnMut(&JobOutcome),
) -> Result<Vec<JobOutcome>, RunError> {
    check_cpus_exist(set)?;
    let mut saved_verify_states = load_verify_states(set)?;
    let mut outcomes = Vec::with_capacity(set.jobs.len());
    let mut group_start = 0;
    // fio's genesis: `startdelay` counts from here (backend.c, `utime_since_genesis`).
    let run_start = Instant::now();
    // Set by a job with `exitall` and `exit_what=all` (or `exitall_on_error`): no later group
    // starts (fio's `fio_terminate_threads(TERMINATE_ALL)` marks jobs not yet started too).
    let run_ended = AtomicBool::new(false);
    let buffer_states = if set.jobs.iter().any(|job| job.dedupe.is_some()) {
        fio_buffers::initial_buffer_states(set)
    } else {
        Vec::new()
    };
    while group_start < set.jobs.len() && !run_ended.load(Ordering::Relaxed) {
        let group_end = (group_start + 1..set.jobs.len())
            .find(|&i| set.jobs[i].stonewall)
            .unwrap_or(set.jobs.len());
        let group = &set.jobs[group_start..group_end];
        let ends = GroupEnds::new(group, &run_ended);
        let results = run_group(
            group,
            set.first_thread_number(group_start),
            provider,
            &GroupRun {
                options,
                run_start,
                ends: &ends,
                buffer_states: &buffer_states,
            },
            &mut saved_verify_states,
        )?;
        provider.group_ended(&results)?;
        let interrupted = results.iter().any(|o| o.interrupted);
        for outcome in &results {
            unlink_after(&outcome.job)?;
        }
        for outcome in results {
            on_job_done(&outcome);
            outcomes.push(outcome);
        }
        if interrupted {
            break;
        }
        group_start = group_end;
    }
    Ok(outcomes)
}

/// The outcomes of a run whose caller measures device states or sweep points, where a failed
/// I/O ends the sweep as before: the first job an I/O error ended, as the run's error (a verify
/// failure stays in its outcome).
pub(crate) fn io_failure_ends_the_run(
    mut outcomes: Vec<JobOutcome>,
) -> Result<Vec<JobOutcome>, RunError> {
    let failed = outcomes
        .iter_mut()
        .find_map(|outcome| match &outcome.failure {
            Some(failure) if !failure.is_verify_failure() => outcome.failure.take(),
            _ => None,
        });
    match failed {
        Some(failure) => Err(failure),
        None => Ok(outcomes),
    }
}

/// fio's `verify_state_load`: the saved state of every clone that loads one, by thread index
/// (from 0), read before any job starts so that a missing or bad file stops the run before its
/// first I/O. fio fails such a job without running it (backend.c `fio_verify_load_state`).
fn load_verify_states(set: &JobSet) -> Result<HashMap<u32, SavedVerifyState>, RunError> {
    let mut states = HashMap::new();
    for (job_index, job) in set.jobs.iter().enumerate() {
        if !job.verify_state_load {
            continue;
        }
        let first_thread_index = set.first_thread_number(job_index).saturating_sub(1);
        for clone in 0..job.numjobs {
            let thread_index = first_thread_index.saturating_add(clone);
            let path = verify_state::file_name(&job.name, thread_index);
            let saved = SavedVerifyState::load(&path).map_err(|what| RunError::Plan {
                job: job.name.clone(),
                reason: format!("verify_state_load: {what}"),
            })?;
            states.insert(thread_index, saved);
        }
    }
    Ok(states)
}

/// fio's `unlink`: the job's regular file goes once the job is done (a device never does).
fn unlink_after(job: &JobSpec) -> Result<(), RunError> {
    let storlab_job::Target::Path(path) = &job.target else {
        return Ok(());
    };
    if !job.unlink || !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    std::fs::remove_file(path).map_err(|error| RunError::Plan {
        job: job.name.clone(),
        reason: format!("unlink=1: cannot delete {}: {error}", path.display()),
    })
}

/// What every job of one stonewall group shares while it runs.
struct GroupRun<'a, 'o> {
    options: &'a RunOptions<'o>,
    /// When the run started (fio's genesis), which `startdelay` counts from.
    run_start: Instant,
    ends: &'a GroupEnds<'a>,
    /// Every thread's initial fio buffer stream, when a job asks for dedupe buffers.
    buffer_states: &'a [fio_rand::FioRand],
}

/// fio's `exitall` family within one stonewall group: a flag per job that ends it as its
/// deadline would (backend.c, `fio_terminate_threads`), and the run-wide flag that keeps later
/// groups from starting.
struct GroupEnds<'a> {
    ended: Vec<AtomicBool>,
    /// Per job: every thread of it has finished (fio's `TD_EXITED`), for `wait_for`.
    finished: Mutex<Vec<bool>>,
    finished_changed: Condvar,
    /// Per job: the job of this group its `wait_for` names (`None`: it waits for none here,
    /// its waitee having run in an earlier stonewall group).
    waitee: Vec<Option<usize>>,
    /// Each job's reporting group within the stonewall group: fio's `groupid` goes up at each
    /// `new_group` (init.c, `add_job`), and `exit_what=group` stops the jobs of the same one.
    reporting_group: Vec<usize>,
    run_ended: &'a AtomicBool,
}

impl<'a> GroupEnds<'a> {
    fn new(group: &[JobSpec], run_ended: &'a AtomicBool) -> Self {
        let mut reporting_group = Vec::with_capacity(group.len());
        let mut current = 0;
        for (i, job) in group.iter().enumerate() {
            if i > 0 && job.new_group {
                current += 1;
            }
            reporting_group.push(current);
        }
        // The job set's checks made the name unique among the jobs before the waiter.
        let waitee = group
            .iter()
            .enumerate()
            .map(|(i, job)| {
                let name = job.wait_for.as_ref()?;
                group[..i].iter().position(|earlier| &earlier.name == name)
            })
            .collect();
        GroupEnds {
            ended: group.iter().map(|_| AtomicBool::new(false)).collect(),
            finished: Mutex::new(vec![false; group.len()]),
            finished_changed: Condvar::new(),
            waitee,
            reporting_group,
            run_ended,
        }
    }

    /// Block job `index` until the job its `wait_for` names has finished, or `stop` or its own
    /// end (another job's `exitall`) comes first, which its drive then sees.
    fn wait_for_waitee(&self, index: usize, stop: &AtomicBool) {
        let Some(waitee) = self.waitee[index] else {
            return;
        };
        let mut finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        while !finished[waitee]
            && !stop.load(Ordering::Relaxed)
            && !self.ended[index].load(Ordering::Relaxed)
        {
            // Timed, so a stop request (set from a signal handler, which cannot notify) is
            // seen within the poll interval.
            finished = self
                .finished_changed
                .wait_timeout(finished, WAIT_FOR_POLL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Every thread of job `index` has finished (or failed, or panicked).
    fn job_finished(&self, index: usize) {
        let mut finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        finished[index] = true;
        self.finished_changed.notify_all();
    }

    /// Job `index` ended (`failed`: with an error): stop the jobs its `exitall`,
    /// `exit_what` and `exitall_on_error` name, its own other threads included (fio stops
    /// every thread of the group, the caller's clones too).
    fn job_ended(&self, index: usize, job: &JobSpec, failed: bool) {
        let exit = job.exit_all;
        let what = if failed && exit.on_error {
            ExitWhat::All
        } else if exit.on_end {
            exit.what
        } else {
            return;
        };
        for (i, flag) in self.ended.iter().enumerate() {
            if what != ExitWhat::Group || self.reporting_group[i] == self.reporting_group[index] {
                flag.store(true, Ordering::Relaxed);
            }
        }
        if what == ExitWhat::All {
            self.run_ended.store(true, Ordering::Relaxed);
        }
    }
}

/// How often a job waiting for another (`wait_for`) looks at the stop request.
const WAIT_FOR_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Marks a job finished for `wait_for` when dropped: also when its run unwinds from a panic,
/// so no job waits for it forever.
struct FinishOnDrop<'a> {
    ends: &'a GroupEnds<'a>,
    index: usize,
}

impl Drop for FinishOnDrop<'_> {
    fn drop(&mut self) {
        self.ends.job_finished(self.index);
    }
}

/// Everything one job needs on the worker threads.
struct PreparedJob {
    /// The job's place in its stonewall group (`GroupEnds`).
    index_in_group: usize,
    job: JobSpec,
    engines: Vec<Box<dyn IoEngine + Send>>,
    workers: Vec<Worker>,
    regions: Vec<Region>,
    target_size_bytes: u64,
}

/// Runs one stonewall group; its first job's first clone is fio's thread `first_thread_number`.
fn run_group(
    group: &[JobSpec],
    first_thread_number: u32,
    provider: &mut dyn EngineProvider,
    run: &GroupRun<'_, '_>,
    saved_verify_states: &mut HashMap<u32, SavedVerifyState>,
) -> Result<Vec<JobOutcome>, RunError> {
    let options = run.options;
    let mut prepared = Vec::with_capacity(group.len());
    let mut thread_number = first_thread_number;
    // The group's jobs run together; a flow never spans groups (its members from an earlier
    // group left it when they ended, as in fio).
    let mut flows = flow::Flows::default();
    // The in-flight I/O of the group's offload jobs that serialize overlaps.
    let overlap_board = std::sync::Arc::new(overlap::OverlapBoard::default());
    for (job_index, job) in group.iter().enumerate() {
        if let (false, storlab_job::Target::Path(path)) = (job.allow_file_create, &job.target) {
            if !path.exists() {
                return Err(RunError::Plan {
                    job: job.name.clone(),
                    reason: format!(
                        "allow_file_create=0: {} does not exist and the job may not create it",
                        path.display()
                    ),
                });
            }
        }
        let mut engines = provider.open(job)?;
        let shared = engines.len() == 1 && engines[0].capabilities().shared_timeline;
        if !shared && engines.len() != job.numjobs as usize {
            return Err(RunError::Protocol(format!(
                "provider opened {} engines for {} workers",
                engines.len(),
                job.numjobs
            )));
        }
        let target_size_bytes = engines[0].target_size_bytes();
        check_replay_fits(job, target_size_bytes)?;
        // A replay's offsets are the trace's, anywhere in the target.
        let regions = match &job.replay {
            Some(_) => vec![
                Region {
                    start_bytes: 0,
                    len_bytes: target_size_bytes,
                };
                job.numjobs as usize
            ],
            None => plan_regions(job, target_size_bytes)?,
        };
        let slot_bytes = job.max_block_bytes() as usize;
        let mut workers: Vec<Worker> = regions
            .iter()
            .enumerate()
            .map(|(i, region)| {
                let slot_base = if shared { i as u32 * job.iodepth } else { 0 };
                Worker::new(
                    job_index,
                    job,
                    i as u32,
                    *region,
                    slot_base,
                    options.interval_ns,
                )
            })
            .collect();
        let job_first_thread = thread_number;
        let clones = workers.len() as u32;
        for (clone, worker) in workers.iter_mut().enumerate() {
            worker.log_as_fio_thread(job, thread_number);
            if let Some(saved) = saved_verify_states.remove(&thread_number.saturating_sub(1)) {
                worker.stop_verify_as_saved(saved);
            }
            // fio (init.c, `add_job`) makes a job's clones last subjob first: thread N + 1 runs
            // subjob `numjobs - 1` (the last region), thread N + numjobs - 1 subjob 1; the
            // thread number seeds the streams.
            let clone = clone as u32;
            let seeded_as = match clone {
                0 => job_first_thread,
                _ => job_first_thread.saturating_add(clones - clone),
            };
            worker.draw_as_fio_thread(job, seeded_as, target_size_bytes);
            worker.fill_as_fio_thread(job, seeded_as, run.buffer_states);
            thread_number = thread_number.saturating_add(1);
            // Every clone is a member of its own (fio's flow is per thread).
            if let Some(spec) = job.flow {
                worker.join_flow(flows.join(spec));
            }
            if job.serialize_overlap && job.submit_offload {
                worker.share_overlap_board(std::sync::Arc::clone(&overlap_board));
            }
        }
        if job.verify && regions_overlap(&regions) {
            workers.iter_mut().for_each(Worker::shares_its_region);
        }
        let slots_per_engine = if shared {
            job.iodepth * job.numjobs
        } else {
            job.iodepth
        };
        for engine in engines.iter_mut() {
            engine.setup(&EngineSetup {
                slots: slots_per_engine,
                slot_bytes,
                buffer_align_bytes: BUFFER_ALIGN_BYTES,
            })?;
            // fio's `sync=1` / `sync=dsync`: every write synchronous. The simulator models it;
            // a real engine only confirms that the provider opened its target with O_SYNC /
            // O_DSYNC (and refuses if not), since the flag cannot be added to an open descriptor.
            engine.set_sync_writes(match job.sync.open_sync {
                storlab_job::OpenSync::None => None,
                storlab_job::OpenSync::Sync => Some(storlab_engine::FlushKind::All),
                storlab_job::OpenSync::Dsync => Some(storlab_engine::FlushKind::Data),
            })?;
            place_buffers(engine.as_mut(), job, slots_per_engine)?;
            fill_initial_buffers(engine.as_mut(), job, slots_per_engine);
        }
        // fio's `fadvise_hint`: each worker's engine advises the kernel of its region.
        if !shared {
            for (engine, region) in engines.iter_mut().zip(&regions) {
                engine.advise(job.access_advice(), region.start_bytes, region.len_bytes)?;
            }
        }
        prepared.push(PreparedJob {
            index_in_group: job_index,
            job: job.clone(),
            engines,
            workers,
            regions,
            target_size_bytes,
        });
    }

    provider.group_ready()?;
    // A lone job with one engine runs on the calling thread: with no other thread on its
    // descriptor table, the kernel's per-call descriptor lookup takes no file reference and
    // read/write/lseek skip the file position lock, as in fio's one-thread job processes
    // (`storlab_engine::descriptors`). A panic is still that job's error, as from a thread.
    let finished = match prepared.as_slice() {
        [lone] if lone.engines.len() == 1 => prepared
            .into_iter()
            .map(|p| {
                std::panic::catch_unwind(AssertUnwindSafe(|| run_prepared(p, run)))
                    .map_err(|panic| RunError::Panic(panic_text(&panic)))
            })
            .collect(),
        _ => run_on_threads(prepared, run),
    };

    let mut outcomes = Vec::with_capacity(finished.len());
    let mut first_error = None;
    for joined in finished {
        match joined {
            Ok(done) => {
                provider.release(&done.job, done.engines);
                match done.result {
                    Ok(outcome) => outcomes.push(outcome),
                    Err(error) => {
                        first_error.get_or_insert(error);
                    }
                }
            }
            Err(panic) => {
                first_error.get_or_insert(panic);
            }
        }
    }
    match first_error {
        Some(error) => Err(error),
        None => Ok(outcomes),
    }
}

/// Run each prepared job on a thread of its own, all at once; a panic is that job's error.
fn run_on_threads(
    prepared: Vec<PreparedJob>,
    run: &GroupRun<'_, '_>,
) -> Vec<Result<FinishedJob, RunError>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = prepared
            .into_iter()
            .map(|p| scope.spawn(move || run_prepared(p, run)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|panic| RunError::Panic(panic_text(&panic)))
            })
            .collect::<Vec<_>>()
    })
}

/// A job that ran (or failed), with the engines to hand back to the provider.
struct FinishedJob {
    job: JobSpec,
    engines: Vec<Box<dyn IoEngine + Send>>,
    result: Result<JobOutcome, RunError>,
}

/// Run one prepared job on its own threads.
fn run_prepared(p: PreparedJob, run: &GroupRun<'_, '_>) -> FinishedJob {
    let PreparedJob {
        index_in_group,
        job,
        mut engines,
        mut workers,
        regions,
        target_size_bytes,
    } = p;
    let options = run.options;
    let _finish_on_drop = FinishOnDrop {
        ends: run.ends,
        index: index_in_group,
    };
    // fio's `wait_for`: the job starts once the job it names has finished (backend.c,
    // `waitee_running`); its `startdelay` still counts from the run's start.
    run.ends.wait_for_waitee(index_in_group, options.stop);
    let engine_name = engines[0].name().to_string();
    let capabilities = engines[0].capabilities();
    // fio's `startdelay` counts from the run's start on the wall clock. A simulated drive's
    // clock is its own and starts with the job's group, so there it counts from that.
    let start_delay_ns = job.start_delay.draw_ns(job.seed);
    let start_delay_ns = if capabilities.shared_timeline {
        start_delay_ns
    } else {
        let since_run_start_ns =
            u64::try_from(run.run_start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        start_delay_ns.saturating_sub(since_run_start_ns)
    };
    let timing = Timing {
        ramp_ns: job.ramp_time_ns,
        runtime_ns: job.runtime_ns,
        start_delay_ns,
    };
    let ends = JobEnd {
        group: run.ends,
        index: index_in_group,
    };
    let threads = if engines.len() == 1 { 1 } else { workers.len() };
    let board = verify::VerifyBoard::new(threads);
    let results: Vec<Result<(bool, u64), RunError>> = if engines.len() == 1 {
        vec![drive_with_verify(
            engines[0].as_mut(),
            &mut workers,
            &job,
            timing,
            options,
            &board,
            ends,
        )]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = engines
                .iter_mut()
                .zip(workers.chunks_mut(1))
                .map(|(engine, worker)| {
                    let (job, board) = (&job, &board);
                    scope.spawn(move || {
                        drive_with_verify(
                            engine.as_mut(),
                            worker,
                            job,
                            timing,
                            options,
                            board,
                            ends,
                        )
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|panic| Err(RunError::Panic(panic_text(&panic))))
                })
                .collect()
        })
    };
    let sorted = sort_failures(&mut workers, results);
    let (interrupted, verified_bytes) = (sorted.interrupted, sorted.verified_bytes);
    let (mut first_error, failure, errno_by_worker) =
        (sorted.fatal, sorted.failure, sorted.errno_by_worker);
    // fio saves the verify state at each clone's end, whether the job finished or failed.
    for worker in &workers {
        if let Err(error) = worker.save_verify_state(&job) {
            first_error.get_or_insert(error);
        }
    }
    let fio_logs = workers.iter_mut().flat_map(Worker::take_fio_logs).collect();
    let result = match first_error {
        Some(error) => Err(error),
        None => Ok(JobOutcome {
            failure,
            errno_by_worker,
            fio_logs,
            workers: workers.into_iter().map(|w| w.stats).collect(),
            regions,
            target_size_bytes,
            engine_name,
            capabilities,
            engine_reports: engines.iter().map(|e| e.report()).collect(),
            verified_bytes,
            interrupted,
            job: job.clone(),
        }),
    };
    FinishedJob {
        job,
        engines,
        result,
    }
}

/// How a job's workers ended, sorted as fio sorts a job's errors.
struct SortedEnds {
    interrupted: bool,
    verified_bytes: u64,
    /// The first error that ends the whole run (none of the job's figures are kept).
    fatal: Option<RunError>,
    /// The first error that ended only its worker ([`RunError::job_errno`]), in worker order.
    failure: Option<RunError>,
    errno_by_worker: Vec<i32>,
}

/// Sort the errors the workers kept and the engine threads returned (`results`: one per
/// engine thread, which drove all workers or one each). A failed I/O or a verify failure
/// belongs to the worker that saw it and keeps the job's figures, as fio reports the clone
/// with its error and runs the other jobs; an error of an engine thread is charged to the
/// workers it drove. Anything else ends the run, whichever worker came first.
fn sort_failures(
    workers: &mut [Worker],
    results: Vec<Result<(bool, u64), RunError>>,
) -> SortedEnds {
    let mut sorted = SortedEnds {
        interrupted: false,
        verified_bytes: 0,
        fatal: None,
        failure: None,
        errno_by_worker: vec![0; workers.len()],
    };
    for (worker, errno) in workers.iter_mut().zip(&mut sorted.errno_by_worker) {
        if let Some(error) = worker.error.take() {
            match error.job_errno() {
                Some(code) => {
                    *errno = code;
                    sorted.failure.get_or_insert(error);
                }
                None => {
                    sorted.fatal.get_or_insert(error);
                }
            }
        }
    }
    let per_thread = if results.len() == 1 { workers.len() } else { 1 };
    for (thread, result) in results.into_iter().enumerate() {
        match result {
            Ok((stopped, verified)) => {
                sorted.interrupted |= stopped;
                sorted.verified_bytes += verified;
            }
            Err(error) => match error.job_errno() {
                Some(code) => {
                    let driven = thread * per_thread..(thread + 1) * per_thread;
                    for errno in &mut sorted.errno_by_worker[driven] {
                        if *errno == 0 {
                            *errno = code;
                        }
                    }
                    sorted.failure.get_or_insert(error);
                }
                None => {
                    sorted.fatal.get_or_insert(error);
                }
            },
        }
    }
    sorted
}

/// Drive `workers` on `engine`; for verify jobs, then (once every thread of the job has written)
/// read back exactly what each worker wrote and check it (`verify.rs`).
/// One job's place among the `exitall` flags of its group.
#[derive(Clone, Copy)]
struct JobEnd<'a> {
    group: &'a GroupEnds<'a>,
    index: usize,
}

/// Drive `workers` on `engine` at the job's I/O priority (fio's `prio`, `prioclass`: set on
/// the thread that issues the I/O, before it opens anything, as fio's backend.c does), then
/// tell the other jobs of the group this one ended (`exitall`).
fn drive_with_verify(
    engine: &mut dyn IoEngine,
    workers: &mut [Worker],
    job: &JobSpec,
    timing: Timing,
    options: &RunOptions<'_>,
    board: &verify::VerifyBoard,
    end: JobEnd<'_>,
) -> Result<(bool, u64), RunError> {
    let priority = match job.io_priority {
        Some(priority) => Some(
            storlab_engine::io_priority::ThreadIoPriority::set(priority.value()).map_err(
                |error| RunError::Plan {
                    job: job.name.clone(),
                    reason: format!(
                        "prioclass={} prio={}: ioprio_set: {error}",
                        priority.class, priority.level
                    ),
                },
            )?,
        ),
        None => None,
    };
    // fio's `cpus_allowed` (backend.c `thread_main`): set on the thread that issues the
    // I/O; with `split` each clone on its own CPU. Several clones on one simulated timeline
    // share this thread, which then runs on the whole set.
    let affinity = match &job.cpus_allowed {
        Some(affinity) => {
            let cpus = match workers {
                [only] => affinity.cpus_of_thread(only.fio_thread_number),
                _ => affinity.cpus.clone(),
            };
            Some(
                storlab_engine::cpu_affinity::ThreadCpuAffinity::set(&cpus).map_err(|error| {
                    RunError::Plan {
                        job: job.name.clone(),
                        reason: format!(
                            "cpus_allowed: sched_setaffinity to CPUs {cpus:?}: {error}"
                        ),
                    }
                })?,
            )
        }
        None => None,
    };
    let result = drive_and_verify(engine, workers, job, timing, options, board, end);
    drop(affinity);
    drop(priority);
    let failed = result.is_err() || workers.iter().any(|w| w.error.is_some());
    end.group.job_ended(end.index, job, failed);
    result
}

/// Drive `workers` on `engine`; for verify jobs, then (once every thread of the job has written)
/// read back exactly what each worker wrote and check it (`verify.rs`).
fn drive_and_verify(
    engine: &mut dyn IoEngine,
    workers: &mut [Worker],
    job: &JobSpec,
    timing: Timing,
    options: &RunOptions<'_>,
    board: &verify::VerifyBoard,
    end: JobEnd<'_>,
) -> Result<(bool, u64), RunError> {
    let ended = &end.group.ended[end.index];
    if !job.verify {
        let interrupted =
            worker::drive(engine, workers, timing, options.stop, ended, options.live)?;
        return Ok((interrupted, 0));
    }
    // Taken before driving: should this thread fail or unwind, the place still arrives, so the
    // job's other threads never wait for it.
    let place = board.place();
    let driven = worker::drive(engine, workers, timing, options.stop, ended, options.live);
    let failed = !matches!(driven, Ok(false)) || workers.iter().any(|w| w.error.is_some());
    let records = workers
        .iter_mut()
        .filter_map(Worker::take_write_record)
        .collect();
    let all_records = place.arrive_and_wait(records, failed);
    let interrupted = driven?;
    let in_phase: u64 = workers.iter().map(Worker::verified_bytes).sum();
    let Some(all_records) = all_records else {
        return Ok((interrupted, in_phase));
    };
    let slot_bytes = job.max_block_bytes();
    for w in workers.iter_mut() {
        let Some(own) = all_records
            .iter()
            .find(|r| r.worker_index == w.worker_index)
        else {
            continue;
        };
        w.log_read_back(own, slot_bytes)?;
        let slots = w.read_back_slots(slot_bytes);
        let read_back = verify::read_back(
            engine,
            job,
            own,
            &all_records,
            &slots,
            options.stop,
            verify::ReadBackCounters {
                live: options.live,
                read: &mut w.stats.read,
                elapsed_ns: &mut w.stats.elapsed_ns,
            },
        );
        let done = match read_back {
            Ok(done) => done,
            // The worker that read the bad block carries the failure; the others sharing this
            // engine still check what they wrote, as each fio clone verifies on its own.
            Err(error) if error.is_verify_failure() => {
                w.error = Some(error);
                continue;
            }
            Err(error) => return Err(error),
        };
        w.add_verified_bytes(done.checked_bytes);
        if done.interrupted {
            return Ok((true, workers.iter().map(Worker::verified_bytes).sum()));
        }
    }
    Ok((false, workers.iter().map(Worker::verified_bytes).sum()))
}

/// Whether any two worker regions share bytes (`numjobs` > 1 without a large enough
/// `offset_increment`).
fn regions_overlap(regions: &[Region]) -> bool {
    let mut sorted = regions.to_vec();
    sorted.sort_by_key(|r| r.start_bytes);
    sorted
        .windows(2)
        .any(|pair| pair[0].start_bytes + pair[0].len_bytes > pair[1].start_bytes)
}

/// fio's `numa_mem_policy` on the engine's I/O buffers: each slot's pages bound to the policy
/// (and moved where already placed). fio sets it on its job thread before allocating the
/// buffers; `default` changes nothing, as in fio.
pub fn place_buffers(engine: &mut dyn IoEngine, job: &JobSpec, slots: u32) -> Result<(), RunError> {
    use storlab_engine::numa_memory::{bind, PolicyMode};
    use storlab_job::NumaMemPolicy;
    let Some(policy) = &job.numa_mem_policy else {
        return Ok(());
    };
    let mode = match policy {
        NumaMemPolicy::Default => return Ok(()),
        NumaMemPolicy::Prefer(_) => PolicyMode::Preferred,
        NumaMemPolicy::Bind(_) => PolicyMode::Bind,
        NumaMemPolicy::Interleave(_) => PolicyMode::Interleave,
        NumaMemPolicy::Local => PolicyMode::Local,
    };
    for slot in 0..slots {
        bind(engine.buffer(slot), mode, policy.nodes()).map_err(|error| RunError::Plan {
            job: job.name.clone(),
            reason: format!("numa_mem_policy: mbind of the I/O buffers failed: {error}"),
        })?;
    }
    Ok(())
}

/// Fill every slot with the job's data pattern once, before the first write.
fn fill_initial_buffers(engine: &mut dyn IoEngine, job: &JobSpec, slots: u32) {
    for slot in 0..slots {
        let seed = job.seed ^ u64::from(slot).rotate_left(32);
        match &job.buffer_pattern {
            Some(bytes) => pattern::fill_repeated(engine.buffer_mut(slot), bytes),
            None => pattern::fill(engine.buffer_mut(slot), job.data_pattern, seed),
        }
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_job::{EngineKind, Target};

    fn job(offset_bytes: u64, size_bytes: Option<u64>) -> JobSpec {
        let mut job = JobSpec::new("job", EngineKind::Null, Target::None);
        job.offset_bytes = offset_bytes;
        job.size_bytes = size_bytes;
        job
    }

    #[test]
    fn without_a_size_the_region_runs_from_the_offset_to_the_end() {
        let regions = plan_regions(&job(1 << 20, None), 8 << 20).unwrap();
        assert_eq!(
            (regions[0].start_bytes, regions[0].len_bytes),
            (1 << 20, 7 << 20)
        );
    }

    #[test]
    fn an_offset_past_the_end_says_so() {
        let error = plan_regions(&job(16 << 20, None), 8 << 20).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("offset 16777216 is at or beyond the end of the target (8388608 bytes)"),
            "{text}"
        );
    }

    fn spans(job: &JobSpec, target_size_bytes: u64) -> Vec<(u64, u64)> {
        plan_regions(job, target_size_bytes)
            .unwrap()
            .iter()
            .map(|r| (r.start_bytes, r.len_bytes))
            .collect()
    }

    #[test]
    fn shares_of_the_target_resolve_against_its_size() {
        let mut half = job(0, None);
        half.target_shares.offset_ppm = Some(500_000);
        half.target_shares.size_ppm = Some(250_000);
        assert_eq!(spans(&half, 64 << 20), [(32 << 20, 16 << 20)]);
        // The same job on a drive four times larger covers four times the bytes.
        assert_eq!(spans(&half, 256 << 20), [(128 << 20, 64 << 20)]);
    }

    #[test]
    fn a_share_offset_rounds_up_to_the_alignment_and_a_share_size_down() {
        // One third of 10 MiB is not a multiple of 4 KiB.
        let mut third = job(0, None);
        third.target_shares.offset_ppm = Some(333_333);
        third.target_shares.size_ppm = Some(333_333);
        let [(start, len)] = spans(&third, 10 << 20)[..] else {
            panic!("one worker")
        };
        assert_eq!((start % 4096, len % 4096), (0, 0));
        assert!(
            start >= (10 << 20) / 3 && start - (10 << 20) / 3 < 4096,
            "{start}"
        );
        assert!(
            len <= (10 << 20) / 3 && (10 << 20) / 3 - len < 4096,
            "{len}"
        );
    }

    #[test]
    fn a_share_size_stops_at_the_end_of_the_target_as_fio_does() {
        let mut rest = job(0, None);
        rest.target_shares.offset_ppm = Some(750_000);
        rest.target_shares.size_ppm = Some(1_000_000);
        assert_eq!(spans(&rest, 64 << 20), [(48 << 20, 16 << 20)]);
    }

    #[test]
    fn share_increments_put_workers_side_by_side_without_overlap() {
        let mut quarters = job(0, None);
        quarters.numjobs = 4;
        quarters.target_shares.offset_increment_ppm = Some(250_000);
        quarters.target_shares.size_ppm = Some(250_000);
        // 10 MiB + 4 KiB: a quarter is not a whole number of 4 KiB blocks.
        let target = (10 << 20) + 4096;
        let regions = spans(&quarters, target);
        for pair in regions.windows(2) {
            assert!(pair[0].0 + pair[0].1 <= pair[1].0, "{regions:?}");
        }
        let (last_start, last_len) = regions[3];
        assert!(last_start + last_len <= target);
    }

    #[test]
    fn a_size_past_the_end_names_the_range() {
        let error = plan_regions(&job(0, Some(16 << 20)), 8 << 20).unwrap_err();
        assert!(error.to_string().contains("target too small"), "{error}");
    }
}
