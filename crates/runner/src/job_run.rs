//! One job of a group on its own threads: it waits for its `wait_for`, drives its workers on
//! their engines (each at the job's priority and CPUs), verifies what they wrote, and sorts
//! their errors as fio does.

use crate::group::{panic_text, GroupRun};
use crate::group_ends::{FinishOnDrop, JobEnd};
use crate::offsets::Region;
use crate::verify;
use crate::worker::{self, Timing, Worker};
use crate::{JobOutcome, RunError, RunOptions};
use storlab_engine::IoEngine;
use storlab_job::JobSpec;

/// Everything one job needs on the worker threads.
pub(crate) struct PreparedJob {
    /// The job's place in its stonewall group (`GroupEnds`).
    pub(crate) index_in_group: usize,
    pub(crate) job: JobSpec,
    pub(crate) engines: Vec<Box<dyn IoEngine + Send>>,
    pub(crate) workers: Vec<Worker>,
    pub(crate) regions: Vec<Region>,
    pub(crate) target_size_bytes: u64,
}

/// A job that ran (or failed), with the engines to hand back to the provider.
pub(crate) struct FinishedJob {
    pub(crate) job: JobSpec,
    pub(crate) engines: Vec<Box<dyn IoEngine + Send>>,
    pub(crate) result: Result<JobOutcome, RunError>,
}

/// Run one prepared job on its own threads.
pub(crate) fn run_prepared(p: PreparedJob, run: &GroupRun<'_, '_>) -> FinishedJob {
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
    let timing = Timing {
        ramp_ns: job.ramp_time_ns,
        runtime_ns: job.runtime_ns,
        start_delay_ns: start_delay_ns(&job, capabilities.shared_timeline, run),
    };
    let ends = JobEnd {
        group: run.ends,
        index: index_in_group,
    };
    let drive = Drive {
        job: &job,
        timing,
        options,
        ends,
    };
    let results = drive.on_threads(&mut engines, &mut workers);
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

/// What is left of `job`'s `startdelay` now: fio's counts from the run's start on the wall
/// clock. A simulated drive's clock (`shared_timeline`) is its own and starts with the job's
/// group, so there it counts from that.
fn start_delay_ns(job: &JobSpec, shared_timeline: bool, run: &GroupRun<'_, '_>) -> u64 {
    let start_delay_ns = job.start_delay.draw_ns(job.seed);
    if shared_timeline {
        start_delay_ns
    } else {
        let since_run_start_ns =
            u64::try_from(run.run_start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        start_delay_ns.saturating_sub(since_run_start_ns)
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

/// How one job's workers are driven: the same for each of its engine threads.
#[derive(Clone, Copy)]
struct Drive<'a> {
    job: &'a JobSpec,
    timing: Timing,
    options: &'a RunOptions<'a>,
    ends: JobEnd<'a>,
}

impl Drive<'_> {
    /// Drives `workers` on `engines`: all on the calling thread when there is one engine (a
    /// shared timeline), else each worker on a thread of its own with its engine. Returns
    /// each engine thread's result (a panic is its error).
    fn on_threads(
        &self,
        engines: &mut [Box<dyn IoEngine + Send>],
        workers: &mut [Worker],
    ) -> Vec<Result<(bool, u64), RunError>> {
        let threads = if engines.len() == 1 { 1 } else { workers.len() };
        let board = verify::VerifyBoard::new(threads);
        if engines.len() == 1 {
            return vec![self.drive_with_verify(engines[0].as_mut(), workers, &board)];
        }
        std::thread::scope(|scope| {
            let handles: Vec<_> = engines
                .iter_mut()
                .zip(workers.chunks_mut(1))
                .map(|(engine, worker)| {
                    let board = &board;
                    scope.spawn(move || self.drive_with_verify(engine.as_mut(), worker, board))
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
    }

    /// Drive `workers` on `engine` at the job's I/O priority (fio's `prio`, `prioclass`: set on
    /// the thread that issues the I/O, before it opens anything, as fio's backend.c does), then
    /// tell the other jobs of the group this one ended (`exitall`).
    fn drive_with_verify(
        &self,
        engine: &mut dyn IoEngine,
        workers: &mut [Worker],
        board: &verify::VerifyBoard,
    ) -> Result<(bool, u64), RunError> {
        let (job, end) = (self.job, self.ends);
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
                    storlab_engine::cpu_affinity::ThreadCpuAffinity::set(&cpus).map_err(
                        |error| RunError::Plan {
                            job: job.name.clone(),
                            reason: format!(
                                "cpus_allowed: sched_setaffinity to CPUs {cpus:?}: {error}"
                            ),
                        },
                    )?,
                )
            }
            None => None,
        };
        let result = self.drive_and_verify(engine, workers, board);
        drop(affinity);
        drop(priority);
        let failed = result.is_err() || workers.iter().any(|w| w.error.is_some());
        end.group.job_ended(end.index, job, failed);
        result
    }

    /// Drive `workers` on `engine`; for verify jobs, then (once every thread of the job has written)
    /// read back exactly what each worker wrote and check it (`verify.rs`).
    fn drive_and_verify(
        &self,
        engine: &mut dyn IoEngine,
        workers: &mut [Worker],
        board: &verify::VerifyBoard,
    ) -> Result<(bool, u64), RunError> {
        let Drive {
            job,
            timing,
            options,
            ends: end,
        } = *self;
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
                    first_error_errno: &mut w.stats.first_error_errno,
                    depth: &mut w.stats.depth,
                },
            );
            // fio's seed check fails a mixed job's pass that did not write in offset order,
            // whatever the data read back (`verify_seeds.rs`).
            let read_back = read_back.and_then(|done| match w.seed_check_failure(job) {
                Some(failure) => Err(failure),
                None => Ok(done),
            });
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
            w.sync_empty_loop_after_read_back(engine)?;
        }
        Ok((false, workers.iter().map(Worker::verified_bytes).sum()))
    }
}
