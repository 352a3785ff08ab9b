//! The SSD controller's embedded processor: firmware work per command on `controller_cores`
//! cores, each a calendar serving one piece of work at a time.

use crate::drive::ProcessorStats;
use crate::resource::Calendar;

/// The controller's processor: `controller_cores` cores, each a calendar that serves one piece
/// of firmware work at a time. Work goes to the core that can start it first, into the first
/// gap that holds it, so a read arriving while a write's data is still on its way runs before
/// the write's firmware work booked for later.
pub(super) struct Processor {
    pub(super) cores: Vec<Calendar>,
    /// Drive-side completion times of the last `queue_depth` commands (a ring). At most
    /// `queue_depth` commands are at the drive at once, so when one arrives at least one of
    /// those has completed: their earliest completion is a time already past. Writes are not
    /// told the current time; they let the calendars forget finished work up to this time.
    pub(super) recent_done_ns: Vec<u64>,
    pub(super) next_done: usize,
    /// The earliest of `recent_done_ns` when it was last scanned, and the completions noted
    /// since. A time that was past stays past, and calendars only forget bookings that end by
    /// the time given, none of which can move work ready at or after the present (see
    /// `Calendar::book`): so the scan of the whole ring (a twentieth of the instructions of
    /// 4 KiB QD32 writes) is done once per ring's worth of completions, not on every write.
    pub(super) past_ns: u64,
    pub(super) noted_since_scan: usize,
}

impl Processor {
    pub(super) fn new(cores: u32, queue_depth: u32) -> Processor {
        Processor {
            cores: vec![Calendar::default(); cores.max(1) as usize],
            recent_done_ns: vec![0; queue_depth.max(1) as usize],
            next_done: 0,
            past_ns: 0,
            noted_since_scan: 0,
        }
    }

    /// A time no later than the present (see `recent_done_ns` and `past_ns`), for a command
    /// that has just reached the drive.
    pub(super) fn past_ns(&mut self) -> u64 {
        if self.noted_since_scan >= self.recent_done_ns.len() {
            self.past_ns = self.recent_done_ns.iter().copied().min().unwrap_or(0);
            self.noted_since_scan = 0;
        }
        self.past_ns
    }

    pub(super) fn note_done(&mut self, done_ns: u64) {
        self.recent_done_ns[self.next_done] = done_ns;
        self.next_done = (self.next_done + 1) % self.recent_done_ns.len();
        self.noted_since_scan += 1;
    }

    /// Book `cpu_ns` of firmware work ready at `ready_ns` on the core that starts it first;
    /// returns when it ends. `past_ns` is a time already past (finished work is forgotten).
    pub(super) fn run(&mut self, past_ns: u64, ready_ns: u64, cpu_ns: u64) -> u64 {
        if cpu_ns == 0 {
            return ready_ns;
        }
        let mut core = 0;
        if self.cores.len() > 1 {
            let mut best = u64::MAX;
            for (i, c) in self.cores.iter().enumerate() {
                let start = c.start_for(ready_ns, cpu_ns);
                if start < best {
                    (core, best) = (i, start);
                }
            }
        }
        self.cores[core].reserve(past_ns, ready_ns, cpu_ns, 0)
    }

    pub(super) fn stats(&self) -> ProcessorStats {
        ProcessorStats {
            cores: self.cores.len() as u32,
            busy_ns: self.cores.iter().map(|c| c.busy_ns).sum(),
            operations: self.cores.iter().map(|c| c.operations).sum(),
        }
    }
}
