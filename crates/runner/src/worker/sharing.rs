//! What one worker shares with others while it issues: fio's `serialize_overlap` (its own
//! in-flight I/O, and with `io_submit_mode=offload` the group's overlap board) and `flow`.

use super::Worker;
use crate::flow::FlowMember;
use crate::offsets::PlannedIo;
use crate::overlap::OverlapBoard;
use std::sync::Arc;

/// One worker's part in the I/O of others.
pub(super) struct Sharing {
    /// fio's `serialize_overlap`: no I/O goes while one overlapping it is in flight.
    serialize_overlap: bool,
    /// With `io_submit_mode=offload`, the in-flight I/O of every such job of the group.
    pub(super) overlap_board: Option<Arc<OverlapBoard>>,
    /// fio's `flow`: this worker's part of the flow its job names.
    flow: Option<FlowMember>,
}

impl Sharing {
    pub(super) fn new(serialize_overlap: bool) -> Sharing {
        Sharing {
            serialize_overlap,
            overlap_board: None,
            flow: None,
        }
    }
}

impl Worker {
    /// Makes this worker a member of a flow (fio's `flow`): it issues only while its share of
    /// the flow's I/Os is within its share of the flow's weight.
    pub fn join_flow(&mut self, member: FlowMember) {
        self.sharing.flow = Some(member);
    }

    /// Checks this worker's I/O against the in-flight I/O of other offload jobs too (fio's
    /// `serialize_overlap` with `io_submit_mode=offload`).
    pub fn share_overlap_board(&mut self, board: Arc<OverlapBoard>) {
        self.sharing.overlap_board = Some(board);
    }

    /// This worker's key on the overlap board: unique within the group.
    pub(super) fn overlap_key(&self) -> u64 {
        (self.job_index as u64) << 32 | u64::from(self.worker_index)
    }

    /// Whether an I/O of this worker in flight overlaps `io` (fio's `in_flight_overlap`).
    fn overlaps_own_in_flight(&self, io: &PlannedIo) -> bool {
        let (start, end) = (io.offset_bytes, io.offset_bytes + u64::from(io.len_bytes));
        self.queue.in_flight.iter().any(|f| {
            f.direction.is_some()
                && start < f.offset_bytes + u64::from(f.len_bytes)
                && f.offset_bytes < end
        })
    }

    /// What holds `io` back for others at `now_ns` (`queued`: I/Os queued in this fill): an
    /// overlapping I/O in flight, or the flow ahead of its share. `None`: nothing does;
    /// `Some(wait)`: stop filling until `wait` (`None`: until an I/O completes).
    pub(super) fn held_for_others(
        &mut self,
        io: &PlannedIo,
        now_ns: u64,
        queued: usize,
    ) -> Option<Option<u64>> {
        if self.sharing.serialize_overlap {
            let end = io.offset_bytes + u64::from(io.len_bytes);
            let shared = self
                .sharing
                .overlap_board
                .as_ref()
                .is_some_and(|b| b.overlaps(io.offset_bytes, end));
            if shared || self.overlaps_own_in_flight(io) {
                // fio's FIO_Q_BUSY: wait for a completion (or another job's) and try again,
                // with the unit taken for it (seed 6363: the next write then carries the
                // buffer of the unit freed meanwhile).
                if self.queue.overlap_held_slot.is_none() {
                    self.queue.overlap_held_slot = self.queue.free_slots.last().copied();
                }
                if io.direction == storlab_engine::IoDirection::Write
                    && !self.queue.overlap_retry_drawn
                {
                    // Seed 2020: the held write's header seed was drawn, and is drawn again
                    // at each retry (seed 4343: one retry per completion, not per look).
                    self.queue.overlap_retry_drawn = true;
                    if let Some(order) = self.verifying.seed_order.as_mut() {
                        order.requeued_write();
                    }
                    let reseeds = self.generator.fio_reseeds();
                    self.verifying.draw_data_seed_aside(reseeds);
                    self.data.unchecked_seeds.draw_aside(reseeds);
                }
                return Some(None);
            }
            self.queue.overlap_retry_drawn = false;
        }
        if let Some(flow) = self.sharing.flow.as_ref().filter(|f| f.ahead()) {
            // fio's flow_threshold_exceeded: with flow_sleep, the queue drains and the worker
            // sleeps; without, it looks again at once.
            if flow.sleep_ns == 0 || queued > 0 || self.queue.outstanding() > 0 {
                return Some(None);
            }
            return Some(Some(now_ns + flow.sleep_ns));
        }
        None
    }

    /// Claims `io`'s range on the overlap board, if the worker shares one: false when another
    /// job claimed an overlapping range since the look before.
    pub(super) fn claim_on_board(&self, io: &PlannedIo) -> bool {
        match &self.sharing.overlap_board {
            Some(board) => {
                let end = io.offset_bytes + u64::from(io.len_bytes);
                board.try_claim(self.overlap_key(), io.offset_bytes, end)
            }
            None => true,
        }
    }

    /// Counts an issued I/O in the worker's flow.
    pub(super) fn count_in_flow(&mut self) {
        if let Some(flow) = self.sharing.flow.as_mut() {
            flow.count_io();
        }
    }

    /// Leaves the worker's flow once it issues no more (fio's `flow_exit_job`).
    pub(super) fn leave_flow(&mut self) {
        if let Some(flow) = self.sharing.flow.as_mut() {
            flow.leave();
        }
    }

    /// Takes what this worker still had on the overlap board off it, once it stopped.
    pub(super) fn leave_overlap_board(&self) {
        if let Some(board) = &self.sharing.overlap_board {
            board.release_all(self.overlap_key());
        }
    }
}
