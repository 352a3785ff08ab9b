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
mod fio_history;
pub mod fio_log;
pub mod fio_rand;
mod fio_sequence;
pub mod fio_verify;
mod fio_zones;
pub mod flow;
mod group;
mod group_ends;
mod job_run;
mod latency_target;
mod lfsr;
pub mod live;
pub mod offsets;
pub mod overlap;
pub mod pattern;
mod random_map;
pub mod state;
pub mod steady;
pub mod sweep;
pub mod verify;
mod verify_data_seeds;
mod verify_seeds;
mod verify_state;
pub mod warning;
pub mod worker;

pub use live::LiveCounters;

pub use group::place_buffers;
pub use offsets::Region;

use group::{run_group, GroupRun};
use group_ends::GroupEnds;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use storlab_engine::{Capabilities, EngineError, EngineReport, IoEngine};
use storlab_job::{share_of_bytes, JobSet, JobSpec};
use storlab_stats::WorkerStats;
use verify_state::SavedVerifyState;

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
    /// A fio job at the point where fio 3.33 itself would loop forever or read memory it
    /// never set (the reason says which): storlab stops it there rather than run on otherwise.
    #[error("job '{job}': {reason}")]
    FioNotFollowed { job: String, reason: String },
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

/// Settings of a run that are not part of any job.
pub struct RunOptions<'a> {
    pub interval_ns: u64,
    /// Set from a signal handler to stop early; finished results are kept.
    pub stop: &'a AtomicBool,
    /// Where to publish live progress, if anyone watches.
    pub live: Option<&'a LiveCounters>,
}

/// Where fio's subjob `clone` of `job` starts on a target of `target_size_bytes`
/// (filesetup.c, `get_start_offset`): `offset` plus `clone` increments, rounded up to
/// `offset_align` (else the smallest block) when either is a share of the target, as given
/// otherwise.
fn fio_region_start(job: &JobSpec, target_size_bytes: u64, clone: u64) -> Option<u64> {
    // fio's null engine has no file: its size is the job's `size` when the start is taken
    // (`offset=25% size=64k` starts at 16 KiB, measured against fio 3.33).
    let file_bytes = match job.size_bytes {
        Some(size) if job.fio_engine_sizes_no_file() => size,
        _ => target_size_bytes,
    };
    fio_start_in_file(job, file_bytes, clone)
}

/// Where fio's subjob `clone` of `job` starts its loops after the first, when that moves:
/// fio takes the start again at each loop (libfio.c `clear_io_state`, `get_start_offset`),
/// and its null engine's file has grown to the first region's end (`region_end_bytes`,
/// filesetup.c `setup_files`), so a share of it lies further on (`offset=25% size=512k`:
/// the first loop from 128 KiB, the next from 160 KiB, up to the file's end at 640 KiB).
pub(crate) fn fio_later_loops_start(
    job: &JobSpec,
    region_end_bytes: u64,
    clone: u64,
) -> Option<u64> {
    let shares = &job.target_shares;
    let moves = job.fio_engine_sizes_no_file()
        && (shares.offset_ppm.is_some() || shares.offset_increment_ppm.is_some());
    moves.then(|| fio_start_in_file(job, region_end_bytes, clone))?
}

/// filesetup.c `get_start_offset` for subjob `clone` of `job` in a file of `file_bytes`.
fn fio_start_in_file(job: &JobSpec, file_bytes: u64, clone: u64) -> Option<u64> {
    let shares = &job.target_shares;
    let share = |ppm| share_of_bytes(file_bytes, ppm);
    let increment = shares
        .offset_increment_ppm
        .map_or(job.offset_increment_bytes, share);
    let offset = shares
        .offset_ppm
        .map_or(job.offset_bytes, share)
        .checked_add(clone.checked_mul(increment)?)?;
    if shares.offset_ppm.is_none() && shares.offset_increment_ppm.is_none() {
        return Some(offset);
    }
    let align = job
        .offset_align_bytes
        .unwrap_or_else(|| job.fio_smallest_block_bytes())
        .max(1);
    offset.checked_next_multiple_of(align)
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
        .map(|i| match job.fio_random {
            Some(_) => fio_region_start(job, target_size_bytes, first_clone + i),
            None => offset.checked_add((first_clone + i).checked_mul(increment)?),
        })
        .map(|start| {
            let start = start.ok_or_else(|| plan_error("worker offsets overflow".into()))?;
            // A preset's region starts on its alignment.
            let start_align = if job.fio_random.is_some() { 1 } else { align };
            let start = start.div_ceil(start_align) * start_align;
            let rest = target_size_bytes.saturating_sub(start);
            let len = match (shares.size_ppm, job.size_bytes) {
                // As fio does, a share of the target stops at its end: `offset=50% size=100%`
                // is the second half.
                (Some(ppm), _) => share(ppm).min(rest),
                // fio's clones under `filesize` each run to the file's end from their start
                // (filesetup.c, `setup_files`).
                (None, Some(_))
                    if job.filesize_bytes.is_some()
                        && (job.numjobs > 1 || shares.offset_ppm.is_some()) =>
                {
                    job.filesize_bytes
                        .map_or(rest, |filesize| filesize.saturating_sub(start))
                }
                (None, Some(size)) => size,
                (None, None) => rest,
            };
            // fio's region is `size` as given (filesetup.c: `io_size` is not rounded to a
            // block; its last I/O may run past it, up to the file's end), in whole sectors
            // here, the unit every target is addressed in; a preset's is whole alignments.
            // A share is rounded to the smallest block, as fio's `size_percent`.
            let len_align = if job.fio_random.is_some() && shares.size_ppm.is_none() {
                storlab_job::validate::SECTOR_BYTES.min(align)
            } else {
                align
            };
            let len = len / len_align * len_align;
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
            // As without zones, the span is in whole sectors, not blocks: fio's `size` is then
            // the file less its offset (filesetup.c, `setup_files`), and a last I/O may fit
            // past the last whole block's worth.
            // fio's null engine has no target beyond its file, which ends at the region's end
            // (filesetup.c, `setup_files`: `real_file_size` is `io_size + file_offset`).
            let len = if job.strided_zones.is_some() && !job.fio_engine_sizes_no_file() {
                rest / len_align * len_align
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
    let buffer_states = if set.jobs.iter().any(|job| job.fio_buffers.is_some()) {
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
            unlink_after(&outcome.job);
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

/// fio's `unlink`: once the job is done, each file it names that is a regular file (or a link
/// to one: fio's `stat` follows it, `unlink` removes the link) is deleted; a device, a pipe or a
/// directory never is. On the null engine too, though it never opened them
/// ([`JobSpec::unlinked_files`]). fio ignores a failed `unlink`, and so does storlab: the results
/// stand (a name a clone before already deleted is the common case).
fn unlink_after(job: &JobSpec) {
    for name in job.unlinked_files() {
        if std::fs::metadata(&name).is_ok_and(|m| m.is_file()) {
            let _ignored_as_fio_does = std::fs::remove_file(&name);
        }
    }
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
