//! Host OS block layer: splits requests at the driver's maximum transfer size, queues them
//! until the driver has a free command, and (optionally) merges adjacent queued requests.

use crate::command::{Part, MAX_MERGED_PARTS};
use crate::op::Op;
use std::collections::VecDeque;

/// One piece of a host request after splitting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRequest {
    pub op: Op,
    pub offset_bytes: u64,
    pub len: u32,
    pub slot: u32,
    pub slot_offset: u32,
}

/// What the driver takes from the queue to build one command (its parts are written straight
/// into the command's part list, so the 32-entry array is neither zeroed nor copied).
#[derive(Clone, Copy, Debug)]
pub struct CommandPlan {
    pub op: Op,
    pub offset_bytes: u64,
    pub len: u32,
    pub part_count: u8,
}

/// The block layer's queue.
#[derive(Debug)]
pub struct BlockLayer {
    pending: VecDeque<BlockRequest>,
    bound: usize,
    pub max_transfer_bytes: u32,
    pub max_trim_bytes: u64,
    pub merge_adjacent: bool,
}

impl BlockLayer {
    pub fn new(max_transfer_bytes: u32, max_trim_bytes: u64, merge_adjacent: bool) -> BlockLayer {
        BlockLayer {
            pending: VecDeque::new(),
            bound: 0,
            max_transfer_bytes,
            max_trim_bytes,
            merge_adjacent,
        }
    }

    /// Size the queue for `slots` requests of at most `slot_bytes` (trims up to 4 GiB).
    pub fn set_bound(&mut self, slots: u32, slot_bytes: usize) {
        let rw_pieces = slot_bytes.div_ceil(self.max_transfer_bytes as usize).max(1);
        let trim_pieces = (u64::from(u32::MAX).div_ceil(self.max_trim_bytes)) as usize;
        self.bound = slots as usize * rw_pieces.max(trim_pieces);
        self.pending.reserve(slots as usize * rw_pieces);
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Split a request into pieces of at most the transfer (or trim) limit; returns how many.
    /// A flush has no data: it is one piece.
    pub fn split(&mut self, op: Op, offset_bytes: u64, len: u32, slot: u32) -> u32 {
        let limit = match op {
            Op::Trim => self.max_trim_bytes.min(u64::from(u32::MAX)) as u32,
            Op::Flush => return self.queue_flush(slot),
            Op::Read | Op::Write => self.max_transfer_bytes,
        };
        let mut done = 0u32;
        let mut pieces = 0;
        while done < len {
            let n = limit.min(len - done);
            self.pending.push_back(BlockRequest {
                op,
                offset_bytes: offset_bytes + u64::from(done),
                len: n,
                slot,
                slot_offset: if op == Op::Trim { 0 } else { done },
            });
            done += n;
            pieces += 1;
        }
        assert!(
            self.pending.len() <= self.bound,
            "block layer queue bound {} exceeded",
            self.bound
        );
        pieces
    }

    /// A flush is one request without data.
    #[cold]
    #[inline(never)]
    fn queue_flush(&mut self, slot: u32) -> u32 {
        self.pending.push_back(BlockRequest {
            op: Op::Flush,
            offset_bytes: 0,
            len: 0,
            slot,
            slot_offset: 0,
        });
        1
    }

    /// Whether a request waits for a command.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The command [`take`](Self::take) would build next, without taking it.
    pub fn peek(&self) -> Option<CommandPlan> {
        let head = self.pending.front()?;
        let mut plan = CommandPlan {
            op: head.op,
            offset_bytes: head.offset_bytes,
            len: head.len,
            part_count: 1,
        };
        if self.merge_adjacent && matches!(head.op, Op::Read | Op::Write) {
            for next in self.pending.iter().skip(1) {
                if !self.continues(&plan, next) {
                    break;
                }
                plan.part_count += 1;
                plan.len += next.len;
            }
        }
        Some(plan)
    }

    /// Whether `next` continues `plan` in its direction and fits one more merged command.
    fn continues(&self, plan: &CommandPlan, next: &BlockRequest) -> bool {
        next.op == plan.op
            && next.offset_bytes == plan.offset_bytes + u64::from(plan.len)
            && plan.len + next.len <= self.max_transfer_bytes
            && usize::from(plan.part_count) < MAX_MERGED_PARTS
    }

    /// Take the next command: the head request, plus (when merging) the queued requests that
    /// continue it in the same direction, up to the transfer limit. Its pieces go to
    /// `parts[..part_count]`.
    pub fn take(&mut self, parts: &mut [Part; MAX_MERGED_PARTS]) -> Option<CommandPlan> {
        let head = self.pending.pop_front()?;
        let mut plan = CommandPlan {
            op: head.op,
            offset_bytes: head.offset_bytes,
            len: head.len,
            part_count: 1,
        };
        parts[0] = Part {
            slot: head.slot,
            slot_offset: head.slot_offset,
            len: head.len,
        };
        if self.merge_adjacent && matches!(head.op, Op::Read | Op::Write) {
            while let Some(next) = self.pending.front() {
                if !self.continues(&plan, next) {
                    break;
                }
                parts[usize::from(plan.part_count)] = Part {
                    slot: next.slot,
                    slot_offset: next.slot_offset,
                    len: next.len,
                };
                plan.part_count += 1;
                plan.len += next.len;
                self.pending.pop_front();
            }
        }
        Some(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_the_transfer_limit() {
        let mut layer = BlockLayer::new(65536, 1 << 20, false);
        layer.set_bound(4, 1 << 20);
        assert_eq!(layer.split(Op::Read, 0, 200_000, 0), 4);
        let mut parts = [Part::default(); MAX_MERGED_PARTS];
        let lens: Vec<u32> = std::iter::from_fn(|| layer.take(&mut parts))
            .map(|p| p.len)
            .collect();
        assert_eq!(lens, vec![65536, 65536, 65536, 3392]);
    }

    #[test]
    fn merges_only_adjacent_requests_of_one_direction() {
        let mut layer = BlockLayer::new(1 << 20, 1 << 20, true);
        layer.set_bound(8, 4096);
        layer.split(Op::Read, 0, 4096, 0);
        layer.split(Op::Read, 4096, 4096, 1);
        layer.split(Op::Write, 8192, 4096, 2);
        layer.split(Op::Read, 65536, 4096, 3);
        let mut parts = [Part::default(); MAX_MERGED_PARTS];
        let first = layer.take(&mut parts).unwrap();
        assert_eq!((parts[0].slot, parts[1].slot), (0, 1));
        let plans: Vec<_> = std::iter::once(first)
            .chain(std::iter::from_fn(|| layer.take(&mut parts)))
            .collect();
        assert_eq!(plans.len(), 3);
        assert_eq!((plans[0].len, plans[0].part_count), (8192, 2));
        assert_eq!(plans[1].op, Op::Write);
        assert_eq!(plans[2].offset_bytes, 65536);
    }
}
