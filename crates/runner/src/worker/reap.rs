//! One completed I/O of one worker: its slot freed, its result judged (fio's `continue_on_error`
//! and `fill_device`), then counted in the statistics and logs, and its data checked.

use super::{InFlight, Window, Worker};
use crate::fio_log::LoggedIo;
use crate::RunError;
use storlab_engine::{IoCompletion, IoDirection, IoEngine};
use storlab_job::{ContinueOnError, JobSpec, ERRNO_EDQUOT, ERRNO_ENOSPC};
use storlab_stats::{DirectionStats, WorkerStats};

/// Which failed I/Os one worker goes on past, and whether its space ran out.
pub(super) struct Failures {
    /// fio's `continue_on_error`: the failed I/Os the worker counts and goes on past.
    continue_on_error: ContinueOnError,
    /// fio's `fill_device`: a write failing with ENOSPC or EDQUOT ends the worker as a success.
    fill_device: bool,
    /// The file system (or quota) is full: the worker issues nothing more and ends without
    /// error once its I/Os in flight are back, as fio's `fill_device` job.
    pub(super) filled: bool,
}

impl Failures {
    /// Whether a verify failure (fio's EILSEQ) is counted and passed.
    pub(super) fn passes_verify_failures(&self) -> bool {
        self.continue_on_error
            .passes(true, storlab_job::ERRNO_EILSEQ)
    }

    pub(super) fn new(job: &JobSpec) -> Failures {
        Failures {
            continue_on_error: job.continue_on_error.clone(),
            fill_device: job.fill_device,
            filled: false,
        }
    }
}

impl Worker {
    /// Handles one completion from the engine: the measurement `window` says what counts.
    pub(super) fn complete(
        &mut self,
        engine: &dyn IoEngine,
        completion: IoCompletion,
        window: Window,
    ) {
        let relative = (completion.slot - self.queue.slot_base) as usize;
        self.queue.overlap_retry_drawn = false;
        if self.queue.in_flight[relative].flush.is_some() {
            self.complete_sync(completion.slot, completion.result, completion.done_ns);
            return;
        }
        let Some((io, direction)) = self.release_slot(completion.slot) else {
            return;
        };
        self.sync.io_completed();
        if let Some(backlog) = self.verifying.backlog.as_mut() {
            // io_u.c `io_completed`: fio's `last_ddir`, which the backlog asks, is the
            // direction of the I/O completed last.
            backlog.last_was_read = direction == IoDirection::Read;
        }
        if self.think.spec.think_ns > 0 && !self.think.spec.count_issued {
            self.think.count_io(completion.done_ns);
        }
        if !self.judge_result(&io, direction, completion.result) {
            if direction == IoDirection::Write {
                // io_u.c `io_completed`: a failed write leaves fio's verify log
                // (`unlog_io_piece`); nothing checks its block.
                self.verifying.write_failed(&io);
            }
            return;
        }
        if let (IoDirection::Read, Some(buffers)) = (direction, self.data.fio_buffers.as_mut()) {
            if engine.capabilities().moves_data {
                let data = &engine.buffer(completion.slot)[..io.len_bytes as usize];
                buffers.read_into_unit(data, completion.slot - self.queue.slot_base);
            }
        }
        if let (IoDirection::Write, Some((_, state))) =
            (direction, self.verifying.state_file.as_mut())
        {
            state.write_completed(io.offset_bytes);
        }
        if self.latency.search.is_some() {
            self.search_step(&io, completion.done_ns, window);
        }
        self.count_completed(&io, direction, completion.done_ns, window);
        if self.verifying.checks_completions() {
            self.check_completed_data(engine, completion.slot, &io, direction);
        }
    }

    /// Takes the I/O of engine slot `slot` off the queue: what it was, or `None` (and the
    /// worker's error) when the slot held no request.
    fn release_slot(&mut self, slot: u32) -> Option<(InFlight, IoDirection)> {
        let relative = (slot - self.queue.slot_base) as usize;
        let io = self.queue.in_flight[relative];
        // No longer in flight (`serialize_overlap` looks at the entries with a direction).
        self.queue.in_flight[relative].direction = None;
        self.queue.free_slots.push(relative as u32);
        if let (Some(board), Some(_)) = (&self.sharing.overlap_board, io.direction) {
            board.release(self.overlap_key(), io.offset_bytes);
        }
        let Some(direction) = io.direction else {
            self.error.get_or_insert(RunError::Protocol(format!(
                "engine completed slot {slot} that had no request"
            )));
            return None;
        };
        Some((io, direction))
    }

    /// Judges a completion's `result`: whether the I/O moved all its bytes and counts. A
    /// failure is the worker's error, counted and passed (`continue_on_error`), or the end of
    /// a `fill_device` job.
    fn judge_result(
        &mut self,
        io: &InFlight,
        direction: IoDirection,
        result: Result<u32, i32>,
    ) -> bool {
        let write = direction == IoDirection::Write;
        let failures = &mut self.failures;
        let error = match result {
            Ok(n) if n == io.len_bytes => return true,
            Ok(_)
                if write
                    && (failures.fill_device
                        || failures.continue_on_error.passes(false, ERRNO_ENOSPC)) =>
            {
                // A regular file's write comes back short only when the file system cannot
                // hold more; fio retries the rest, which fails with ENOSPC and ends its
                // fill_device job, or is passed where ignore_error lists ENOSPC. Neither
                // counts the short write's bytes.
                if failures.continue_on_error.passes(false, ERRNO_ENOSPC) {
                    count_passed_error(&mut self.stats, direction, ERRNO_ENOSPC);
                } else {
                    failures.filled = true;
                }
                return false;
            }
            Ok(n) => RunError::ShortIo {
                offset_bytes: io.offset_bytes,
                done_bytes: n,
                wanted_bytes: io.len_bytes,
                write,
            },
            Err(errno) => {
                let read = direction == IoDirection::Read;
                if failures.continue_on_error.passes(read, errno) {
                    // As fio's io_completed: a passed error counts (total_err, first_error)
                    // and nothing else; the I/O is in no I/O, byte or latency figure.
                    count_passed_error(&mut self.stats, direction, errno);
                    return false;
                }
                if failures.fill_device && write && (errno == ERRNO_ENOSPC || errno == ERRNO_EDQUOT)
                {
                    // fio's break_on_this_error and do_io: the job expected this error.
                    failures.filled = true;
                    return false;
                }
                RunError::Io {
                    offset_bytes: io.offset_bytes,
                    len_bytes: io.len_bytes,
                    source: std::io::Error::from_raw_os_error(errno),
                }
            }
        };
        direction_stats(&mut self.stats, direction).errors += 1;
        self.error.get_or_insert(error);
        false
    }

    /// Counts a completed `io` that moved its bytes, at `done_ns`, in the statistics and fio's
    /// logs when the measurement `window` holds it, and judges the interval it ends.
    fn count_completed(
        &mut self,
        io: &InFlight,
        direction: IoDirection,
        done_ns: u64,
        window: Window,
    ) {
        let measure_start_ns = self.latency.measure_start_ns(window);
        let counted =
            io.queued_ns >= measure_start_ns && window.deadline_ns.is_none_or(|d| done_ns <= d);
        if !counted {
            return;
        }
        let slat_ns = io.submitted_ns.saturating_sub(io.queued_ns);
        let clat_ns = done_ns.saturating_sub(io.submitted_ns);
        let t_ns = done_ns - measure_start_ns;
        let has_slat = self.has_submission_latency(direction);
        let stats = direction_stats(&mut self.stats, direction);
        match has_slat {
            true => stats.record(t_ns, u64::from(io.len_bytes), slat_ns, clat_ns),
            false => stats.record_without_slat(t_ns, u64::from(io.len_bytes), slat_ns, clat_ns),
        }
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
                has_slat,
                clat_ns,
                ioprio: io.ioprio,
            });
        }
        if !self.checks.active {
            return;
        }
        if let Some(reason) = self.checks.judge(&self.stats, t_ns) {
            self.error.get_or_insert(RunError::Plan {
                job: self.job_name.clone(),
                reason,
            });
        }
    }
}

/// An error `continue_on_error` passes: counted in `direction`'s errors, and the worker's
/// first error number if it is the first.
fn count_passed_error(stats: &mut WorkerStats, direction: IoDirection, errno: i32) {
    direction_stats(stats, direction).errors += 1;
    if stats.first_error_errno == 0 {
        stats.first_error_errno = errno;
    }
}

/// The statistics of `direction`.
fn direction_stats(stats: &mut WorkerStats, direction: IoDirection) -> &mut DirectionStats {
    match direction {
        IoDirection::Read => &mut stats.read,
        IoDirection::Write => &mut stats.write,
        IoDirection::Trim => &mut stats.trim,
    }
}
