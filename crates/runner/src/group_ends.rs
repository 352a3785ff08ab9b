//! fio's `exitall` family and `wait_for` within one stonewall group: which job's end stops
//! which others, and who waits for whom.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use storlab_job::{ExitWhat, JobSpec};

/// fio's `exitall` family within one stonewall group: a flag per job that ends it as its
/// deadline would (backend.c, `fio_terminate_threads`), and the run-wide flag that keeps later
/// groups from starting.
pub(crate) struct GroupEnds<'a> {
    pub(crate) ended: Vec<AtomicBool>,
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
    pub(crate) fn new(group: &[JobSpec], run_ended: &'a AtomicBool) -> Self {
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
    pub(crate) fn wait_for_waitee(&self, index: usize, stop: &AtomicBool) {
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
    pub(crate) fn job_ended(&self, index: usize, job: &JobSpec, failed: bool) {
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
pub(crate) struct FinishOnDrop<'a> {
    pub(crate) ends: &'a GroupEnds<'a>,
    pub(crate) index: usize,
}

impl Drop for FinishOnDrop<'_> {
    fn drop(&mut self) {
        self.ends.job_finished(self.index);
    }
}

/// One job's place among the `exitall` flags of its group.
#[derive(Clone, Copy)]
pub(crate) struct JobEnd<'a> {
    pub(crate) group: &'a GroupEnds<'a>,
    pub(crate) index: usize,
}
