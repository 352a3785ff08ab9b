//! Shared resources as servers: a link direction, a controller, a bridge CPU, a drive unit.
//!
//! Each server is busy until some time; work reserved on it starts when both the work and the
//! server are ready. Busy time accumulates, so utilisation and the bottleneck fall out of the
//! model instead of being computed by special cases.

/// One stream of data passing a stage: it starts leaving the stage at `start_ns`, the last byte
/// leaves at `end_ns`, and the first piece takes `first_piece_ns` to pass (the next stage can
/// start only after it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flow {
    pub start_ns: u64,
    pub end_ns: u64,
    pub first_piece_ns: u64,
}

impl Flow {
    /// A flow that is entirely available at `at_ns` (data already in memory).
    pub fn ready_at(at_ns: u64) -> Flow {
        Flow {
            start_ns: at_ns,
            end_ns: at_ns,
            first_piece_ns: 0,
        }
    }
}

/// A resource that serves one piece of work at a time, in the order work is reserved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Server {
    pub busy_until_ns: u64,
    /// Time spent working (not waiting for upstream data).
    pub busy_ns: u64,
    /// Pieces of work served (transfers, commands).
    pub operations: u64,
    /// Payload bytes carried.
    pub bytes: u64,
}

impl Server {
    /// Reserve `duration_ns` of work that can start at `earliest_ns`; returns when it ends.
    #[inline]
    pub fn reserve(&mut self, earliest_ns: u64, duration_ns: u64, bytes: u64) -> u64 {
        let start = earliest_ns.max(self.busy_until_ns);
        let end = start + duration_ns;
        self.busy_until_ns = end;
        self.busy_ns += duration_ns;
        self.operations += 1;
        self.bytes += bytes;
        end
    }

    /// Pass a data stream through this stage, pipelined with the stage before it: the stage
    /// starts once the upstream's first piece is through and the stage is free, and it cannot
    /// finish before the upstream's last byte plus one of its own pieces.
    ///
    /// start = max(up.start + up.first_piece, busy_until)
    /// end   = max(start + duration, up.end + first_piece)
    #[inline]
    pub fn pass(
        &mut self,
        upstream: Flow,
        duration_ns: u64,
        first_piece_ns: u64,
        bytes: u64,
    ) -> Flow {
        let start = (upstream.start_ns + upstream.first_piece_ns).max(self.busy_until_ns);
        let end = (start + duration_ns).max(upstream.end_ns + first_piece_ns);
        self.busy_until_ns = end;
        self.busy_ns += duration_ns;
        self.operations += 1;
        self.bytes += bytes;
        Flow {
            start_ns: start,
            end_ns: end,
            first_piece_ns,
        }
    }
}

/// Picoseconds per byte for a rate in bytes per second (integer arithmetic keeps runs
/// bit-identical across machines).
pub fn ps_per_byte(bytes_per_second: f64) -> u64 {
    assert!(bytes_per_second > 0.0, "rates are validated positive");
    (1e12 / bytes_per_second).round() as u64
}

/// Nanoseconds for `bytes` at `ps_per_byte`, rounded up.
#[inline]
pub fn bytes_ns(bytes: u64, ps_per_byte: u64) -> u64 {
    (bytes * ps_per_byte).div_ceil(1000)
}

/// Bookings a calendar keeps at most (a bound on in-flight reservations per resource), plus
/// [`BOOKINGS_PER_COMMAND`] for each command the simulator may have outstanding beyond it.
pub const CALENDAR_BOUND: usize = 4096;
/// Live bookings one outstanding command may hold on one resource (its command, data and
/// status phases, with room to spare).
pub const BOOKINGS_PER_COMMAND: usize = 8;

/// Bookings that ended before the last prune time are dropped in batches of this many (until
/// then they are skipped by index), so pruning does not shift the list on every booking.
const PRUNE_BATCH: usize = 16;

/// A shared resource (link direction, controller, bridge CPU) that books work into the
/// earliest free gap at or after the time the work is ready. Work reserved ahead of time (a
/// data phase due to start later) does not block shorter work that fits before it, so the
/// resource is work-conserving even though stages are booked when a command reaches them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Calendar {
    /// Booked intervals [start, end), sorted, disjoint; those from `first_live` on all end
    /// after the last prune time, those before it are over and ignored.
    /// A plain vector: calendars stay short (about 10 bookings under 4 KiB QD32 load, never
    /// more than a few dozen), where shifting a few entries beats a ring buffer's index
    /// arithmetic on every access.
    booked: Vec<(u64, u64)>,
    first_live: usize,
    /// Bookings allowed beyond [`CALENDAR_BOUND`] (see [`Calendar::for_commands`]).
    extra_bound: usize,
    /// Time spent working (not waiting for upstream data).
    pub busy_ns: u64,
    pub operations: u64,
    pub bytes: u64,
}

impl Calendar {
    /// A calendar for a resource that up to `commands` outstanding commands book work on: a
    /// UAS host may keep 65535 in flight, each with its own bookings ahead of time.
    pub fn for_commands(commands: usize) -> Calendar {
        Calendar {
            extra_bound: commands.saturating_mul(BOOKINGS_PER_COMMAND),
            ..Calendar::default()
        }
    }

    /// Book the earliest interval starting at or after `earliest_ns` whose length is
    /// `need(start)`; returns (start, end). `now_ns` lets bookings in the past be forgotten.
    // Inlined into each caller with the slow path kept out of line: the fast path is a few
    // compares, and a call that carried the slow path's register saves cost ~30 instructions
    // per booking (callgrind, 4 KiB QD32 reads).
    #[inline(always)]
    fn book(&mut self, now_ns: u64, earliest_ns: u64, need: impl Fn(u64) -> u64) -> (u64, u64) {
        // Fast path: work ready after every booking goes at the end, without pruning first
        // (the prune scan was an eighth of the instructions spent here). Only the last booking
        // decides it: if it is over, all are (start afresh, as the prune would); if it is
        // live, the finished bookings before it end before the work is ready, so they cannot
        // change where this or later work goes, and they wait for the slow path's prune
        // (at most `PRUNE_BATCH` of them pile up here).
        if let Some(&(_, last_end)) = self.booked.last() {
            if last_end <= now_ns {
                self.booked.clear();
                self.first_live = 0;
            } else if last_end > earliest_ns || self.booked.len() - self.first_live > PRUNE_BATCH {
                return self.book_slow(now_ns, earliest_ns, need);
            }
        }
        let end = earliest_ns + need(earliest_ns);
        if end > earliest_ns {
            match self.booked.last_mut() {
                // Back-to-back work extends the last booking instead of adding one.
                Some(last) if last.1 == earliest_ns => last.1 = end,
                _ => self.booked.push((earliest_ns, end)),
            }
        }
        (earliest_ns, end)
    }

    /// [`Calendar::book`] when the work may go before a booking: drop finished bookings, then
    /// take the first gap that holds the work.
    #[inline(never)]
    fn book_slow(
        &mut self,
        now_ns: u64,
        earliest_ns: u64,
        need: impl Fn(u64) -> u64,
    ) -> (u64, u64) {
        let len = self.booked.len();
        let mut live = self.first_live;
        while live < len && self.booked[live].1 <= now_ns {
            live += 1;
        }
        if live == len {
            self.booked.clear();
            live = 0;
        } else if live >= PRUNE_BATCH {
            self.booked.drain(..live);
            live = 0;
        }
        self.first_live = live;
        // After the prune the list is empty or its last booking is live.
        if self
            .booked
            .last()
            .is_none_or(|&(_, end)| end <= earliest_ns)
        {
            let end = earliest_ns + need(earliest_ns);
            if end > earliest_ns {
                match self.booked.last_mut() {
                    Some(last) if last.1 == earliest_ns => last.1 = end,
                    _ => self.booked.push((earliest_ns, end)),
                }
                assert!(
                    self.booked.len() - live <= CALENDAR_BOUND + self.extra_bound,
                    "calendar bound exceeded"
                );
            }
            return (earliest_ns, end);
        }
        // Bookings are sorted and disjoint: the first gap after `start` long enough for the
        // work takes it. Bookings over before the work is ready cannot hold it (their start is
        // before `start`) and leave `start` as it is. A linear scan: the list is short (see
        // `booked`), so it beats a binary search.
        let mut start = earliest_ns;
        let mut end = start + need(start);
        let mut index = self.booked.len();
        for (i, &(a, b)) in self.booked.iter().enumerate().skip(live) {
            if end <= a {
                index = i;
                break;
            }
            if b > start {
                start = b;
                end = start + need(start);
            }
        }
        if end > start {
            self.insert_coalesced(index, start, end);
        }
        assert!(
            self.booked.len() - self.first_live <= CALENDAR_BOUND + self.extra_bound,
            "calendar bound exceeded"
        );
        (start, end)
    }

    /// When work of `duration_ns` ready at `earliest_ns` would start if it were reserved now
    /// (the first gap that holds it, as [`Calendar::reserve`] books it); books nothing. Lets a
    /// resource of several units (a controller's cores) pick the unit that starts work first.
    #[inline]
    pub fn start_for(&self, earliest_ns: u64, duration_ns: u64) -> u64 {
        let mut start = earliest_ns;
        for &(a, b) in &self.booked[self.first_live..] {
            if start + duration_ns <= a {
                break;
            }
            start = start.max(b);
        }
        start
    }

    /// Insert [start, end) before `index`, merging with touching live neighbours so a
    /// saturated resource keeps one booking rather than a long list to scan.
    fn insert_coalesced(&mut self, index: usize, start: u64, end: u64) {
        let touches_prev = index > self.first_live && self.booked[index - 1].1 == start;
        let touches_next = index < self.booked.len() && self.booked[index].0 == end;
        match (touches_prev, touches_next) {
            (true, true) => {
                self.booked[index - 1].1 = self.booked[index].1;
                self.booked.remove(index);
            }
            (true, false) => self.booked[index - 1].1 = end,
            (false, true) => self.booked[index].0 = start,
            (false, false) => self.booked.insert(index, (start, end)),
        }
    }

    /// Reserve `duration_ns` of work ready at `earliest_ns`; returns when it ends.
    #[inline]
    pub fn reserve(&mut self, now_ns: u64, earliest_ns: u64, duration_ns: u64, bytes: u64) -> u64 {
        let (_, end) = self.book(now_ns, earliest_ns, |_| duration_ns);
        self.busy_ns += duration_ns;
        self.operations += 1;
        self.bytes += bytes;
        end
    }

    /// Pass a data stream through this resource, pipelined with the stage before it (see
    /// [`Server::pass`]); the booking lasts until the stream has fully left this stage.
    #[inline]
    pub fn pass(
        &mut self,
        now_ns: u64,
        upstream: Flow,
        duration_ns: u64,
        first_piece_ns: u64,
        bytes: u64,
    ) -> Flow {
        let ready = upstream.start_ns + upstream.first_piece_ns;
        let tail = upstream.end_ns + first_piece_ns;
        let (start, end) = self.book(now_ns, ready, |s| duration_ns.max(tail.saturating_sub(s)));
        self.busy_ns += duration_ns;
        self.operations += 1;
        self.bytes += bytes;
        Flow {
            start_ns: start,
            end_ns: end,
            first_piece_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_fills_gaps_before_later_bookings() {
        let mut c = Calendar::default();
        assert_eq!(c.reserve(0, 100, 50, 0), 150);
        // Short work ready earlier fits before the booking at 100.
        assert_eq!(c.reserve(0, 10, 20, 0), 30);
        // Work that does not fit the gap goes after.
        assert_eq!(c.reserve(0, 90, 20, 0), 170);
        assert_eq!(c.busy_ns, 90);
        // Touching bookings coalesce: [10,30) [100,170) then [30,100) joins all three.
        assert_eq!(c.reserve(0, 30, 70, 0), 100);
        assert_eq!(c.booked.len(), 1);
        assert_eq!(c.reserve(0, 0, 10, 0), 10);
        assert_eq!(c.reserve(0, 0, 5, 0), 175);
    }

    #[test]
    fn fast_path_keeps_finished_bookings_bounded() {
        // Work booked ahead with gaps, the present trailing behind: every booking takes the
        // fast path, and the finished ones must still be dropped.
        let mut c = Calendar::default();
        for i in 0..1000u64 {
            let now = (i * 10).saturating_sub(100);
            assert_eq!(c.reserve(now, i * 10 + 5, 2, 0), i * 10 + 7);
            assert!(c.booked.len() <= 2 * PRUNE_BATCH + 2, "{}", c.booked.len());
        }
        // Work ready before the live bookings still finds the gaps between them.
        assert_eq!(c.reserve(9_890, 9_990, 3, 0), 9_993);
    }

    #[test]
    fn start_for_is_where_reserve_books() {
        let mut c = Calendar::default();
        c.reserve(0, 100, 50, 0);
        for (earliest, len) in [(0, 20), (90, 20), (0, 100), (150, 5), (200, 1)] {
            let mut probe = c.clone();
            let start = c.start_for(earliest, len);
            assert_eq!(probe.reserve(0, earliest, len, 0), start + len);
        }
    }

    #[test]
    fn pass_pipelines_behind_upstream() {
        let mut c = Calendar::default();
        let up = Flow {
            start_ns: 0,
            end_ns: 100,
            first_piece_ns: 10,
        };
        // A faster stage starts after the first piece and ends one piece after upstream.
        let f = c.pass(0, up, 50, 5, 0);
        assert_eq!((f.start_ns, f.end_ns), (10, 105));
        // A slower stage is limited by its own duration.
        let mut slow = Calendar::default();
        let f = slow.pass(0, up, 200, 5, 0);
        assert_eq!((f.start_ns, f.end_ns), (10, 210));
    }
}
