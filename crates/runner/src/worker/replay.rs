//! fio's `read_iolog` for one worker: the trace's I/Os at their recorded gaps, its syncs once
//! the queue is empty and its waits, in place of the offset generator.

use super::Worker;
use crate::offsets::PlannedIo;
use crate::RunError;
use storlab_engine::{FlushKind, IoDirection, IoEngine};
use storlab_job::JobSpec;

/// fio's `read_iolog`: where this worker is in the trace it replays.
pub(super) struct Replay {
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
    /// Where a worker of `job` starts in its trace, if it replays one.
    pub(super) fn for_job(job: &JobSpec) -> Option<Replay> {
        job.replay.clone().map(|spec| Replay {
            spec,
            next: 0,
            last_issue_ns: 0,
            start_ns: 0,
        })
    }

    /// The worker starts at `start_ns`: the trace's times count from there.
    pub(super) fn start(&mut self, start_ns: u64) {
        self.start_ns = start_ns;
        self.last_issue_ns = start_ns;
    }

    pub(super) fn done(&self) -> bool {
        self.next >= self.spec.trace.entries.len()
    }
}

/// What the replay does next.
pub(super) enum ReplayStep {
    Io(PlannedIo),
    /// Nothing until then (a recorded gap or `wait`), or, with `None`, until the queue drains
    /// (a sync).
    Wait(Option<u64>),
}

impl Worker {
    /// fio's replay (iolog.c, `read_iolog_get`): the trace's syncs and waits up to its next I/O,
    /// then that I/O once its recorded gap since the last one has passed.
    pub(super) fn next_replayed(
        &mut self,
        engine: &mut dyn IoEngine,
        now_ns: u64,
    ) -> Result<ReplayStep, RunError> {
        // Nothing completes while the replay looks ahead.
        let outstanding = self.queue.outstanding();
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
}
