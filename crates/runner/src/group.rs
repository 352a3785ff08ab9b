//! One stonewall group: each job's engines opened and set up, its workers made as fio's
//! threads, then the group's jobs run together (a lone job on the calling thread) and their
//! outcomes collected.

use crate::flow;
use crate::group_ends::GroupEnds;
use crate::job_run::{run_prepared, FinishedJob, PreparedJob};
use crate::overlap;
use crate::pattern;
use crate::verify_state::SavedVerifyState;
use crate::worker::Worker;
use crate::{
    check_replay_fits, fio_rand, plan_regions, EngineProvider, JobOutcome, Region, RunError,
    RunOptions, BUFFER_ALIGN_BYTES,
};
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::time::Instant;
use storlab_engine::{EngineSetup, IoEngine};
use storlab_job::{JobSpec, Target};

/// What every job of one stonewall group shares while it runs.
pub(crate) struct GroupRun<'a, 'o> {
    pub(crate) options: &'a RunOptions<'o>,
    /// When the run started (fio's genesis), which `startdelay` counts from.
    pub(crate) run_start: Instant,
    pub(crate) ends: &'a GroupEnds<'a>,
    /// Every thread's initial fio buffer stream, when a job asks for dedupe buffers.
    pub(crate) buffer_states: &'a [fio_rand::FioRand],
}

/// Runs one stonewall group; its first job's first clone is fio's thread `first_thread_number`.
pub(crate) fn run_group(
    group: &[JobSpec],
    first_thread_number: u32,
    provider: &mut dyn EngineProvider,
    run: &GroupRun<'_, '_>,
    saved_verify_states: &mut HashMap<u32, SavedVerifyState>,
) -> Result<Vec<JobOutcome>, RunError> {
    let mut prepared = Vec::with_capacity(group.len());
    let mut clones = Clones {
        next_thread_number: first_thread_number,
        // The group's jobs run together; a flow never spans groups (its members from an
        // earlier group left it when they ended, as in fio).
        flows: flow::Flows::default(),
        // The in-flight I/O of the group's offload jobs that serialize overlaps.
        overlap_board: std::sync::Arc::new(overlap::OverlapBoard::default()),
        saved_verify_states,
    };
    for (job_index, job) in group.iter().enumerate() {
        prepared.push(prepare_job(job_index, job, provider, run, &mut clones)?);
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
    collect_outcomes(provider, finished)
}

/// What the clones of a group's jobs share as they are made: fio's thread numbers go on from
/// job to job, and the group's flows, overlap board and loaded verify states.
struct Clones<'s> {
    next_thread_number: u32,
    flows: flow::Flows,
    overlap_board: std::sync::Arc<overlap::OverlapBoard>,
    saved_verify_states: &'s mut HashMap<u32, SavedVerifyState>,
}

/// Job `job_index` of the group ready to run: its engines opened and set up, its workers
/// made as fio's threads.
fn prepare_job(
    job_index: usize,
    job: &JobSpec,
    provider: &mut dyn EngineProvider,
    run: &GroupRun<'_, '_>,
    clones: &mut Clones<'_>,
) -> Result<PreparedJob, RunError> {
    check_may_create(job)?;
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
    let regions = worker_regions(job, target_size_bytes)?;
    let mut workers: Vec<Worker> = regions
        .iter()
        .enumerate()
        .map(|(i, region)| {
            let slot_base = if shared { i as u32 * job.iodepth } else { 0 };
            let interval_ns = run.options.interval_ns;
            Worker::new(job_index, job, i as u32, *region, slot_base, interval_ns)
        })
        .collect();
    clones.make_fio_threads(&mut workers, job, target_size_bytes, run);
    // fio's null engine keeps no data (`FIO_FAKEIO`): its clones each read back their own
    // log as if alone (seed 2626), where on a file their writes race.
    if job.verify && regions_overlap(&regions) && !job.fio_engine_sizes_no_file() {
        workers.iter_mut().for_each(Worker::shares_its_region);
    }
    set_up_engines(&mut engines, job, shared, &regions)?;
    for (index, worker) in workers.iter_mut().enumerate() {
        let engine = &engines[if shared { 0 } else { index }];
        worker.set_up_fio_units(engine.as_ref(), job.max_block_bytes());
    }
    Ok(PreparedJob {
        index_in_group: job_index,
        job: job.clone(),
        engines,
        workers,
        regions,
        target_size_bytes,
    })
}

/// fio's `allow_file_create=0`: a job's file must exist already.
fn check_may_create(job: &JobSpec) -> Result<(), RunError> {
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
    Ok(())
}

/// Each worker's region of a target of `target_size_bytes`. A replay's offsets are the
/// trace's, anywhere in the target.
fn worker_regions(job: &JobSpec, target_size_bytes: u64) -> Result<Vec<Region>, RunError> {
    match &job.replay {
        Some(_) => Ok(vec![
            Region {
                start_bytes: 0,
                len_bytes: target_size_bytes,
            };
            job.numjobs as usize
        ]),
        None => plan_regions(job, target_size_bytes),
    }
}

impl Clones<'_> {
    /// Makes `workers` (`job`'s clones, on a target of `target_size_bytes`) fio's threads:
    /// their thread numbers, streams, buffers, logs, saved verify states, flows and overlap
    /// board.
    fn make_fio_threads(
        &mut self,
        workers: &mut [Worker],
        job: &JobSpec,
        target_size_bytes: u64,
        run: &GroupRun<'_, '_>,
    ) {
        let job_first_thread = self.next_thread_number;
        let clones = workers.len() as u32;
        for (clone, worker) in workers.iter_mut().enumerate() {
            let thread_number = self.next_thread_number;
            worker.job_first_thread = job_first_thread;
            worker.log_as_fio_thread(job, thread_number);
            if let Some(saved) = self
                .saved_verify_states
                .remove(&thread_number.saturating_sub(1))
            {
                worker.stop_verify_as_saved(saved);
            }
            // fio (init.c, `add_job`) makes a job's clones last subjob first: thread N + 1
            // runs subjob `numjobs - 1` (the last region), thread N + numjobs - 1 subjob 1;
            // the thread number seeds the streams.
            let clone = clone as u32;
            let seeded_as = match clone {
                0 => job_first_thread,
                _ => job_first_thread.saturating_add(clones - clone),
            };
            let clone_job;
            let fio_random = match &job.fio_random {
                Some(fio) if clone > 0 => Some(fio.for_clone()),
                other => *other,
            };
            let fio_file_name = fio_file_name(job, clone);
            let seeded_job = if fio_random != job.fio_random || fio_file_name != job.fio_file_name {
                clone_job = JobSpec {
                    fio_random,
                    fio_file_name,
                    ..job.clone()
                };
                &clone_job
            } else {
                job
            };
            worker.draw_as_fio_thread(seeded_job, seeded_as, target_size_bytes);
            worker.fill_as_fio_thread(seeded_job, seeded_as, run.buffer_states);
            self.next_thread_number = thread_number.saturating_add(1);
            // Every clone is a member of its own (fio's flow is per thread).
            if let Some(spec) = job.flow {
                let virtual_clock = matches!(job.target, Target::Sim(_));
                worker.join_flow(self.flows.join(spec, virtual_clock));
            }
            if job.serialize_overlap && job.submit_offload {
                worker.share_overlap_board(std::sync::Arc::clone(&self.overlap_board));
            }
        }
    }
}

/// Sets `job`'s engines up (one `shared` by all workers, or one per worker of `regions`):
/// their slots, synchronous writes, buffers and access advice.
fn set_up_engines(
    engines: &mut [Box<dyn IoEngine + Send>],
    job: &JobSpec,
    shared: bool,
    regions: &[Region],
) -> Result<(), RunError> {
    let slots_per_engine = if shared {
        job.iodepth * job.numjobs
    } else {
        job.iodepth
    };
    for engine in engines.iter_mut() {
        engine.setup(&EngineSetup {
            slots: slots_per_engine,
            slot_bytes: job.max_block_bytes() as usize,
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
        for (engine, region) in engines.iter_mut().zip(regions) {
            engine.advise(job.access_advice(), region.start_bytes, region.len_bytes)?;
        }
    }
    Ok(())
}

/// The outcomes of the group's `finished` jobs, their engines handed back to `provider`; the
/// first error, if any job had one.
fn collect_outcomes(
    provider: &mut dyn EngineProvider,
    finished: Vec<Result<FinishedJob, RunError>>,
) -> Result<Vec<JobOutcome>, RunError> {
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

pub(crate) fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// The name fio gives the file of `job`'s subjob `subjob` where storlab's target does not say
/// it: a temporary file (or a `null` job's none) is fio's `NAME.SUBJOB.0`, under the
/// `directory` (init.c, `make_filename`; filesetup.c, `add_file`).
fn fio_file_name(job: &JobSpec, subjob: u32) -> Option<String> {
    let default_name = || format!("{}.{subjob}.0", job.name);
    match &job.target {
        Target::TempFileIn(dir) if dir.as_os_str() == "." => Some(default_name()),
        Target::TempFileIn(dir) => Some(dir.join(default_name()).display().to_string()),
        Target::None => job.fio_file_name.clone().or_else(|| Some(default_name())),
        Target::Path(_) | Target::Sim(_) => job.fio_file_name.clone(),
    }
}
