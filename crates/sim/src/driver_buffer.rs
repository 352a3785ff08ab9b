//! A class driver's own buffer for consecutive small I/O (the merging "Turbo" BOT driver of
//! HardWare.fr 2013, which "regroups 4 KiB accesses on the fly into larger ones" and
//! "concatenates consecutive accesses"): read-ahead of the stream a read continues, and write
//! coalescing of consecutive writes, each up to the driver's transfer size.
//!
//! The buffer decides; the simulator moves the bytes. It lives in the slot buffer array as one
//! extra slot past the caller's (`slot` = [`DriverBuffer::slot`]), so a command's part can
//! point into it and the usual payload path (`move_payload`, the drive's gathered write data)
//! fills or drains it: read-ahead data is the bytes the drive returned, coalesced writes are
//! the bytes the host wrote.
//!
//! Only a driver with one command outstanding (BOT) uses it (profile validation): the buffer's
//! read region is valid from the read command's dispatch because the next dispatch waits for
//! its completion, and a read or TRIM after buffered writes is sent only after they are.

use crate::command::MAX_MERGED_PARTS;
use crate::host::CommandPlan;
use crate::op::Op;

/// What the driver does with the next request the block layer hands it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Serve {
    /// Send it to the device as planned.
    Device,
    /// A sequential read smaller than the buffer: read `extra` more bytes into the buffer
    /// (at buffer offset 0) with the same command.
    DeviceWithReadAhead { extra: u32 },
    /// The read lies in what the last read-ahead brought: copy from buffer offset `at`.
    ReadFromBuffer { at: u32 },
    /// A write continuing the previous one: copy it into the buffer at `at` and acknowledge.
    CoalesceWrite { at: u32 },
}

/// The driver's buffer state.
#[derive(Debug)]
pub struct DriverBuffer {
    read_ahead: bool,
    coalesce_writes: bool,
    /// Its size: the driver's transfer size (what it can send as one command).
    pub bytes: u32,
    /// Index of the buffer's slot (just past the caller's slots).
    pub slot: u32,
    /// Device range the buffer holds from a read-ahead (start, end); empty when start == end.
    read_region: (u64, u64),
    /// Where the last read sent to the device ended (sequential detection).
    last_read_end: u64,
    /// Where the last write (sent or buffered) ended.
    last_write_end: u64,
    /// Device offset and length of the writes held in the buffer, not yet sent, and how many
    /// requests they are.
    held_write: Option<(u64, u32)>,
    held_requests: u64,
    /// How long gathered writes may wait, and when the batch held now began.
    hold_ns: u64,
    held_since_ns: u64,
    /// The driver's timer is pending (one at a time), or has fired for the batch held now.
    timer_pending: bool,
    hold_expired: bool,
    /// Counters for the report.
    pub reads_from_buffer: u64,
    pub coalesced_writes: u64,
}

impl DriverBuffer {
    pub fn new(read_ahead: bool, coalesce_writes: bool, hold_ns: u64, bytes: u32) -> DriverBuffer {
        DriverBuffer {
            read_ahead,
            coalesce_writes,
            bytes,
            slot: 0,
            read_region: (0, 0),
            last_read_end: u64::MAX,
            last_write_end: u64::MAX,
            held_write: None,
            held_requests: 0,
            hold_ns,
            held_since_ns: 0,
            timer_pending: false,
            hold_expired: false,
            reads_from_buffer: 0,
            coalesced_writes: 0,
        }
    }

    /// Whether the driver keeps a buffer at all.
    pub fn enabled(&self) -> bool {
        self.read_ahead || self.coalesce_writes
    }

    /// Whether the held writes must go to the device now: their hold ran out, or `next` (the
    /// request waiting behind them, if any) does not continue them or finds no room.
    pub fn must_flush_before(&self, next: Option<&CommandPlan>) -> bool {
        let Some((start, len)) = self.held_write else {
            return false;
        };
        if self.hold_expired {
            return true;
        }
        match next {
            None => false,
            Some(p) => {
                !(p.op == Op::Write
                    && p.offset_bytes == start + u64::from(len)
                    && len + p.len <= self.bytes)
            }
        }
    }

    /// How many bytes of writes not yet sent the buffer holds (its first bytes), if any.
    pub fn holds_writes(&self) -> Option<u32> {
        self.held_write.map(|(_, len)| len)
    }

    /// A write was gathered at `now_ns`: when it began a batch, returns when the driver's timer
    /// must fire (unless one is already pending).
    pub fn arm_timer(&mut self, at: u32, now_ns: u64) -> Option<u64> {
        if at != 0 {
            return None;
        }
        self.held_since_ns = now_ns;
        if self.timer_pending {
            return None;
        }
        self.timer_pending = true;
        Some(now_ns + self.hold_ns)
    }

    /// The timer fired at `now_ns`: the batch held now expires if it is old enough; otherwise
    /// returns when to fire again for it.
    pub fn on_timer(&mut self, now_ns: u64) -> Option<u64> {
        self.timer_pending = false;
        self.held_write?;
        let due_ns = self.held_since_ns + self.hold_ns;
        if now_ns >= due_ns {
            self.hold_expired = true;
            None
        } else {
            self.timer_pending = true;
            Some(due_ns)
        }
    }

    /// Decide how to serve `plan` (the held writes are flushed before it when
    /// [`must_flush_before`](Self::must_flush_before) says so), and update the state as if it
    /// was served that way. `capacity_bytes` bounds the read-ahead.
    pub fn serve(&mut self, plan: &CommandPlan, capacity_bytes: u64) -> Serve {
        let start = plan.offset_bytes;
        let end = start + u64::from(plan.len);
        match plan.op {
            Op::Read => {
                if self.read_ahead && start >= self.read_region.0 && end <= self.read_region.1 {
                    self.reads_from_buffer += 1;
                    return Serve::ReadFromBuffer {
                        at: (start - self.read_region.0) as u32,
                    };
                }
                let sequential = start == self.last_read_end;
                self.last_read_end = end;
                self.read_region = (0, 0);
                if self.read_ahead
                    && sequential
                    && plan.len < self.bytes
                    && usize::from(plan.part_count) < MAX_MERGED_PARTS
                {
                    let extra = u64::from(self.bytes - plan.len).min(capacity_bytes - end) as u32;
                    if extra > 0 {
                        self.read_region = (end, end + u64::from(extra));
                        self.last_read_end = end + u64::from(extra);
                        return Serve::DeviceWithReadAhead { extra };
                    }
                }
                Serve::Device
            }
            Op::Write => {
                // What the buffer held from a read-ahead may be stale now.
                self.read_region = (0, 0);
                let sequential = start == self.last_write_end;
                self.last_write_end = end;
                if !self.coalesce_writes || plan.len >= self.bytes {
                    return Serve::Device;
                }
                match self.held_write {
                    Some((held_start, held_len)) => {
                        debug_assert_eq!(held_start + u64::from(held_len), start);
                        self.held_write = Some((held_start, held_len + plan.len));
                        self.held_requests += 1;
                        self.coalesced_writes += 1;
                        Serve::CoalesceWrite { at: held_len }
                    }
                    None if sequential => {
                        self.held_write = Some((start, plan.len));
                        self.held_requests = 1;
                        self.coalesced_writes += 1;
                        Serve::CoalesceWrite { at: 0 }
                    }
                    None => Serve::Device,
                }
            }
            Op::Trim => {
                self.read_region = (0, 0);
                Serve::Device
            }
            // The held writes went first (`must_flush_before`); a flush has no data to serve.
            Op::Flush => Serve::Device,
        }
    }

    /// The held writes leave as one command: returns their offset, length and how many requests
    /// they are, and empties the buffer.
    pub fn take_held_write(&mut self) -> Option<(u64, u32, u64)> {
        let (offset, len) = self.held_write.take()?;
        self.hold_expired = false;
        Some((offset, len, std::mem::take(&mut self.held_requests)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(op: Op, offset_bytes: u64, len: u32) -> CommandPlan {
        CommandPlan {
            op,
            offset_bytes,
            len,
            part_count: 1,
        }
    }

    #[test]
    fn reads_ahead_only_for_a_sequential_stream_and_serves_the_rest_from_the_buffer() {
        let mut b = DriverBuffer::new(true, false, 0, 65536);
        assert_eq!(b.serve(&plan(Op::Read, 0, 4096), 1 << 30), Serve::Device);
        assert_eq!(
            b.serve(&plan(Op::Read, 4096, 4096), 1 << 30),
            Serve::DeviceWithReadAhead {
                extra: 65536 - 4096
            }
        );
        assert_eq!(
            b.serve(&plan(Op::Read, 8192, 4096), 1 << 30),
            Serve::ReadFromBuffer { at: 0 }
        );
        assert_eq!(
            b.serve(&plan(Op::Read, 12288, 4096), 1 << 30),
            Serve::ReadFromBuffer { at: 4096 }
        );
        // A write drops what the buffer held.
        b.serve(&plan(Op::Write, 1 << 20, 4096), 1 << 30);
        assert_eq!(
            b.serve(&plan(Op::Read, 16384, 4096), 1 << 30),
            Serve::Device
        );
        assert_eq!(b.reads_from_buffer, 2);
    }

    #[test]
    fn coalesces_consecutive_writes_until_a_request_does_not_continue_them() {
        let mut b = DriverBuffer::new(false, true, 1000, 16384);
        assert_eq!(b.serve(&plan(Op::Write, 0, 4096), 1 << 30), Serve::Device);
        assert_eq!(
            b.serve(&plan(Op::Write, 4096, 4096), 1 << 30),
            Serve::CoalesceWrite { at: 0 }
        );
        assert!(!b.must_flush_before(Some(&plan(Op::Write, 8192, 4096))));
        assert_eq!(
            b.serve(&plan(Op::Write, 8192, 4096), 1 << 30),
            Serve::CoalesceWrite { at: 4096 }
        );
        assert!(b.must_flush_before(Some(&plan(Op::Read, 8192, 4096))));
        assert!(b.must_flush_before(Some(&plan(Op::Write, 0, 4096))));
        assert!(!b.must_flush_before(None));
        assert_eq!(b.take_held_write(), Some((4096, 8192, 2)));
        assert_eq!(b.take_held_write(), None);
        // Full: the next continuing write does not fit a 16 KiB buffer holding 16 KiB.
        b.serve(&plan(Op::Write, 12288, 4096), 1 << 30);
        b.serve(&plan(Op::Write, 16384, 12288), 1 << 30);
        assert!(b.must_flush_before(Some(&plan(Op::Write, 28672, 4096))));
    }

    #[test]
    fn a_batch_waits_at_most_its_hold_with_one_timer_pending() {
        let mut b = DriverBuffer::new(false, true, 1000, 16384);
        b.serve(&plan(Op::Write, 0, 4096), 1 << 30);
        b.serve(&plan(Op::Write, 4096, 4096), 1 << 30);
        assert_eq!(b.arm_timer(0, 100), Some(1100));
        b.take_held_write();
        // A new batch while the first timer is pending: no second timer.
        b.serve(&plan(Op::Write, 8192, 4096), 1 << 30);
        assert_eq!(b.arm_timer(0, 600), None);
        assert!(!b.must_flush_before(None));
        // The pending timer fires for the old batch: re-armed for the new one.
        assert_eq!(b.on_timer(1100), Some(1600));
        assert_eq!(b.on_timer(1600), None);
        assert!(b.must_flush_before(None));
        assert_eq!(b.take_held_write(), Some((8192, 4096, 1)));
        assert!(!b.must_flush_before(None));
    }

    #[test]
    fn never_reads_ahead_past_the_device() {
        let mut b = DriverBuffer::new(true, false, 0, 65536);
        b.serve(&plan(Op::Read, 0, 4096), 8192 + 4096);
        assert_eq!(
            b.serve(&plan(Op::Read, 4096, 4096), 8192 + 4096),
            Serve::DeviceWithReadAhead { extra: 4096 }
        );
    }
}
