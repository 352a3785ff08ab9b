//! The I/O priority each request of one worker carries: fio's cmdprio family, else the job's
//! `prio`/`prioclass`.

use super::Worker;
use crate::cmdprio::CmdPrioDraw;
use crate::offsets::{PlannedIo, Region};
use storlab_engine::IoDirection;
use storlab_job::JobSpec;

/// Which requests of one worker get which priority.
pub(super) struct Priority {
    /// fio's cmdprio family, for the engines that carry a priority per request (io_uring,
    /// libaio; the simulator records it): which requests get one.
    pub(super) cmdprio: Option<CmdPrioDraw>,
    /// The job's `prio`/`prioclass` as an ioprio value (fio's `td->ioprio`; 0: unset).
    pub(super) default_ioprio: u16,
    /// Bytes of one of the job's loops, when each loop starts fio's streams over (a fio job
    /// with `randrepeat` and without `randseed`, not time-based): cmdprio's stream restarts with them.
    loop_bytes: Option<u64>,
}

impl Priority {
    /// The priorities of `job`'s requests over `region`.
    pub(super) fn new(job: &JobSpec, region: Region, time_based: bool) -> Priority {
        Priority {
            cmdprio: job
                .uses_cmdprio()
                .then(|| CmdPrioDraw::new(&job.engine_tuning.cmdprio, job.seed)),
            default_ioprio: job.io_priority.map_or(0, |p| p.value()),
            loop_bytes: (job
                .fio_random
                .as_ref()
                .is_some_and(|f| f.reseeds_each_loop())
                && !time_based)
                .then(|| crate::offsets::pass_bytes(job, region).max(1)),
        }
    }
}

impl Worker {
    /// fio keeps latencies per priority (its `clat_prio` arrays) for the directions cmdprio
    /// gives priorities to, listed up front in fio's order.
    pub(super) fn list_priorities(&mut self) {
        let Some(cmdprio) = &self.priority.cmdprio else {
            return;
        };
        for (direction, stats) in [
            (IoDirection::Read, &mut self.stats.read),
            (IoDirection::Write, &mut self.stats.write),
        ] {
            stats.by_priority = cmdprio
                .priorities(direction, self.priority.default_ioprio)
                .into_iter()
                .map(storlab_stats::PriorityLatency::new)
                .collect();
        }
    }

    /// The priority `io` carries of its own (`None`: the job's). fio's engines draw the
    /// command priority as they prepare the request.
    pub(super) fn draw_ioprio(&mut self, io: &PlannedIo) -> Option<u16> {
        let cmdprio = self.priority.cmdprio.as_mut()?;
        if let Some(loop_bytes) = self.priority.loop_bytes {
            // fio's own sequence counts its loops; otherwise a loop is the region's bytes.
            let pass = self
                .generator
                .fio_reseeds()
                .map_or(self.progress.issued_bytes / loop_bytes, u64::from);
            cmdprio.enter_pass(pass);
        }
        cmdprio.next(io.direction, u64::from(io.len_bytes))
    }
}
