//! The closed set of simulator events and the queue that orders them by (time, sequence).
//!
//! Ties in time break by insertion order, so a run is a pure function of stack, requests and
//! seed. The queue has a fixed bound; exceeding it is a simulator bug and panics.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Index of a command in the simulator's command table.
pub type CmdId = u32;

/// Something that happens to one command at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// The host driver has built the command; the transport sends it (CBW, Command IU, FIS).
    HostIssue { cmd: CmdId },
    /// The command bytes reached the device side (bridge, or the drive for direct SATA).
    CommandAtDevice { cmd: CmdId },
    /// The bridge firmware has translated the command; it waits for a drive queue slot.
    BridgeReady { cmd: CmdId },
    /// The ATA command reached the drive.
    DriveCommand { cmd: CmdId },
    /// Data can start to move (read: the drive's first data; write: the device asked for it).
    DataReady { cmd: CmdId },
    /// The data phase finished at its far end.
    DataDone { cmd: CmdId },
    /// The host driver finished the command: its status (CSW, Sense IU, D2H FIS) reached
    /// host memory and the interrupt and completion CPU work are done.
    Complete { cmd: CmdId },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Scheduled {
    at_ns: u64,
    seq: u64,
    event: Event,
}

impl Ord for Scheduled {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse so the earliest (time, seq) is on top.
        (other.at_ns, other.seq).cmp(&(self.at_ns, self.seq))
    }
}

impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Events waiting to happen, earliest first.
#[derive(Debug)]
pub struct EventQueue {
    heap: BinaryHeap<Scheduled>,
    next_seq: u64,
    bound: usize,
}

impl EventQueue {
    /// A queue that never holds more than `bound` events.
    pub fn with_bound(bound: usize) -> EventQueue {
        EventQueue {
            heap: BinaryHeap::with_capacity(bound.min(1 << 16)),
            next_seq: 0,
            bound,
        }
    }

    #[inline]
    pub fn push(&mut self, at_ns: u64, event: Event) {
        assert!(
            self.heap.len() < self.bound,
            "event queue bound {} exceeded: a layer schedules without limit",
            self.bound
        );
        self.heap.push(Scheduled {
            at_ns,
            seq: self.next_seq,
            event,
        });
        self.next_seq += 1;
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|s| s.at_ns)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        self.heap.pop().map(|s| (s.at_ns, s.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_ties_in_insertion_order() {
        let mut q = EventQueue::with_bound(8);
        q.push(20, Event::Complete { cmd: 0 });
        q.push(10, Event::HostIssue { cmd: 1 });
        q.push(10, Event::HostIssue { cmd: 2 });
        q.push(5, Event::DataDone { cmd: 3 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (5, Event::DataDone { cmd: 3 }),
                (10, Event::HostIssue { cmd: 1 }),
                (10, Event::HostIssue { cmd: 2 }),
                (20, Event::Complete { cmd: 0 }),
            ]
        );
    }

    #[test]
    #[should_panic(expected = "event queue bound")]
    fn bound_is_asserted() {
        let mut q = EventQueue::with_bound(1);
        q.push(1, Event::Complete { cmd: 0 });
        q.push(2, Event::Complete { cmd: 1 });
    }
}
