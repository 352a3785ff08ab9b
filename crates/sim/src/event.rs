//! The closed set of simulator events and the queue that orders them by (time, sequence).
//!
//! Ties in time break by insertion order, so a run is a pure function of stack, requests and
//! seed. The queue has a fixed bound; exceeding it is a simulator bug and panics.

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
    /// The drive can start another queued read (its head or unit is free).
    DriveWake,
    /// A buffering driver's timer for its gathered writes fired (`driver_buffer.rs`; at most
    /// one is pending).
    DriverFlush,
}

/// Bits of a packed queue entry below the sequence number: the event kind and its command.
const KIND_BITS: u32 = 4;
const CMD_BITS: u32 = 17;
const PAYLOAD_BITS: u32 = KIND_BITS + CMD_BITS;
/// Sequence numbers fit the 64 − 21 bits left beside the payload (8 × 10^12 events).
const SEQ_MAX: u64 = (1 << (64 - PAYLOAD_BITS)) - 1;

impl Event {
    fn pack(self) -> u64 {
        let (kind, cmd) = match self {
            Event::HostIssue { cmd } => (0, cmd),
            Event::CommandAtDevice { cmd } => (1, cmd),
            Event::BridgeReady { cmd } => (2, cmd),
            Event::DriveCommand { cmd } => (3, cmd),
            Event::DataReady { cmd } => (4, cmd),
            Event::DataDone { cmd } => (5, cmd),
            Event::Complete { cmd } => (6, cmd),
            Event::DriveWake => (7, 0),
            Event::DriverFlush => (8, 0),
        };
        debug_assert!(u64::from(cmd) < 1 << CMD_BITS);
        (kind << CMD_BITS) | u64::from(cmd)
    }

    /// The command this event belongs to (None for the drive's and the driver's timers).
    pub fn command(self) -> Option<CmdId> {
        match self {
            Event::HostIssue { cmd }
            | Event::CommandAtDevice { cmd }
            | Event::BridgeReady { cmd }
            | Event::DriveCommand { cmd }
            | Event::DataReady { cmd }
            | Event::DataDone { cmd }
            | Event::Complete { cmd } => Some(cmd),
            Event::DriveWake | Event::DriverFlush => None,
        }
    }

    fn unpack(bits: u64) -> Event {
        let cmd = (bits & ((1 << CMD_BITS) - 1)) as CmdId;
        match bits >> CMD_BITS {
            0 => Event::HostIssue { cmd },
            1 => Event::CommandAtDevice { cmd },
            2 => Event::BridgeReady { cmd },
            3 => Event::DriveCommand { cmd },
            4 => Event::DataReady { cmd },
            5 => Event::DataDone { cmd },
            6 => Event::Complete { cmd },
            7 => Event::DriveWake,
            _ => Event::DriverFlush,
        }
    }
}

/// Queues up to this long take a new entry by moving it from the earliest end (an insertion
/// sort step); longer ones by binary search and one block move.
const LINEAR_INSERT_MAX: usize = 64;
/// A new entry walks at most this many entries from the earliest end; one that would go
/// further goes in by binary search.
const LINEAR_WALK_MAX: usize = 8;

/// Events waiting to happen. Each entry is one `u128`: time in the high 64 bits, then the
/// sequence number, then the event, so ordering entries orders by (time, sequence) and
/// comparisons are single integer compares.
///
/// A sorted vector, latest first, rather than a binary heap: the queue holds about one event
/// per command in flight (tens), and a new event almost always lands among the few earliest
/// (the next step of a command, while most others wait on the media), so the insertion walks
/// a few entries from the end and a pop is `Vec::pop`. The heap's sift-down on every pop was
/// a fifth of the simulator's CPU time on 4 KiB reads at QD32 (`perf record`, usb3-uas-ssd);
/// this queue takes about 5% less CPU time there (docs/simulator.md, Speed).
#[derive(Debug)]
pub struct EventQueue {
    sorted: Vec<u128>,
    next_seq: u64,
    bound: usize,
}

impl EventQueue {
    /// A queue that never holds more than `bound` events.
    pub fn with_bound(bound: usize) -> EventQueue {
        EventQueue {
            sorted: Vec::with_capacity(bound.min(1 << 16)),
            next_seq: 0,
            bound,
        }
    }

    #[inline]
    pub fn push(&mut self, at_ns: u64, event: Event) {
        assert!(
            self.sorted.len() < self.bound,
            "event queue bound {} exceeded: a layer schedules without limit",
            self.bound
        );
        assert!(self.next_seq <= SEQ_MAX, "event sequence numbers exhausted");
        let low = (self.next_seq << PAYLOAD_BITS) | event.pack();
        let entry = (u128::from(at_ns) << 64) | u128::from(low);
        self.next_seq += 1;
        let len = self.sorted.len();
        // An event far behind the earliest few (a drive's media time, tens of microseconds
        // while other commands move in nanoseconds) would walk most of the queue: it goes in
        // by binary search and one block move instead.
        if len > LINEAR_INSERT_MAX
            || (len > LINEAR_WALK_MAX && self.sorted[len - LINEAR_WALK_MAX] < entry)
        {
            let at = self.sorted.partition_point(|e| *e > entry);
            self.sorted.insert(at, entry);
            return;
        }
        self.sorted.push(entry);
        let sorted = self.sorted.as_mut_slice();
        let mut at = sorted.len() - 1;
        while at > 0 && sorted[at - 1] < entry {
            sorted[at] = sorted[at - 1];
            at -= 1;
        }
        sorted[at] = entry;
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        self.sorted.last().map(|e| (e >> 64) as u64)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        self.sorted.pop().map(|e| {
            let low = e as u64;
            (
                (e >> 64) as u64,
                Event::unpack(low & ((1 << PAYLOAD_BITS) - 1)),
            )
        })
    }

    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// Take out every pending event of the commands `aborted` names (a drive that aborts its
    /// queued commands after an NCQ error or a reset never finishes them); the others keep
    /// their order. Returns how many went.
    #[cold]
    pub fn remove_commands(&mut self, aborted: impl Fn(CmdId) -> bool) -> usize {
        let before = self.sorted.len();
        self.sorted.retain(|e| {
            let event = Event::unpack(*e as u64 & ((1 << PAYLOAD_BITS) - 1));
            !event.command().is_some_and(&aborted)
        });
        before - self.sorted.len()
    }

    /// The commands with a pending event `pick` chooses, earliest event first (each once):
    /// what a device-wide fault finds at the device.
    #[cold]
    pub fn commands_with(&self, pick: impl Fn(Event) -> bool) -> Vec<CmdId> {
        self.command_events_with(pick)
            .into_iter()
            .map(|(cmd, _)| cmd)
            .collect()
    }

    /// [`EventQueue::commands_with`] with the time of each command's first such event.
    #[cold]
    pub fn command_events_with(&self, pick: impl Fn(Event) -> bool) -> Vec<(CmdId, u64)> {
        let mut found: Vec<(CmdId, u64)> = Vec::new();
        for e in self.sorted.iter().rev() {
            let event = Event::unpack(*e as u64 & ((1 << PAYLOAD_BITS) - 1));
            if let Some(cmd) = event.command().filter(|_| pick(event)) {
                if !found.iter().any(|&(c, _)| c == cmd) {
                    found.push((cmd, (*e >> 64) as u64));
                }
            }
        }
        found
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
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
    fn pops_in_time_then_insertion_order_across_many_levels() {
        // Against a sorted-set model, with pushes and pops interleaved as the simulator does
        // them and many equal times (ties must come out in insertion order).
        let mut q = EventQueue::with_bound(4096);
        let mut model = std::collections::BTreeSet::new();
        let mut x = 0x2545_F491_4F6C_DD1D_u64;
        for cmd in 0..3000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let at = x % 64;
            q.push(at, Event::Complete { cmd });
            model.insert((at, cmd));
            if x.is_multiple_of(3) {
                let (at, cmd) = model.pop_first().unwrap();
                assert_eq!(q.pop(), Some((at, Event::Complete { cmd })));
            }
        }
        while let Some((at, cmd)) = model.pop_first() {
            assert_eq!(q.pop(), Some((at, Event::Complete { cmd })));
        }
        assert!(q.is_empty());
    }

    #[test]
    fn short_queues_order_near_and_far_events_alike() {
        // A queue held between 1 and 40 entries, as under QD32: new events land both among
        // the earliest few (the walk) and far behind them (the binary search).
        let mut q = EventQueue::with_bound(64);
        let mut model = std::collections::BTreeSet::new();
        let mut x = 0x9E37_79B9_7F4A_7C15_u64;
        let mut now = 0;
        for cmd in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let at = now + if x & 4 == 0 { x % 8 } else { x % 5000 };
            q.push(at, Event::Complete { cmd });
            model.insert((at, cmd));
            let pops = if model.len() < 30 { x % 2 } else { x % 3 };
            for _ in 0..(pops as usize)
                .max(model.len().saturating_sub(40))
                .min(model.len())
            {
                let (at, cmd) = model.pop_first().unwrap();
                assert_eq!(q.pop(), Some((at, Event::Complete { cmd })));
                now = at;
            }
        }
    }

    #[test]
    fn removing_a_command_keeps_the_rest_in_order() {
        let mut q = EventQueue::with_bound(16);
        q.push(5, Event::DataDone { cmd: 2 });
        q.push(3, Event::DriveWake);
        q.push(4, Event::Complete { cmd: 1 });
        q.push(1, Event::DataReady { cmd: 2 });
        q.push(4, Event::HostIssue { cmd: 0 });
        assert_eq!(q.remove_commands(|cmd| cmd == 2), 2);
        assert_eq!(q.pop(), Some((3, Event::DriveWake)));
        assert_eq!(q.pop(), Some((4, Event::Complete { cmd: 1 })));
        assert_eq!(q.pop(), Some((4, Event::HostIssue { cmd: 0 })));
        assert!(q.is_empty());
    }

    #[test]
    fn every_event_kind_survives_packing() {
        let events = [
            Event::HostIssue { cmd: 0 },
            Event::CommandAtDevice { cmd: 65_535 },
            Event::BridgeReady { cmd: 7 },
            Event::DriveCommand { cmd: 1 },
            Event::DataReady { cmd: 2 },
            Event::DataDone { cmd: 3 },
            Event::Complete { cmd: 65_536 },
        ];
        for e in events {
            assert_eq!(Event::unpack(e.pack()), e);
        }
    }

    #[test]
    #[should_panic(expected = "event queue bound")]
    fn bound_is_asserted() {
        let mut q = EventQueue::with_bound(1);
        q.push(1, Event::Complete { cmd: 0 });
        q.push(2, Event::Complete { cmd: 1 });
    }
}
