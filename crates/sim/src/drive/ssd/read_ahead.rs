//! The SSD controller's sequential read-ahead: the streams it follows (stream detectors) and
//! their shares of the read-ahead buffer.

use super::{SsdDrive, LOGICAL_PAGE_BYTES};
use std::collections::VecDeque;

/// A sequential read stream the controller follows (one stream detector) and its read-ahead:
/// when each logical page from `first_lpn` on is in the controller (contiguous pages).
#[derive(Clone, Debug)]
pub(super) struct ReadStream {
    /// Logical page just after the stream's last read: a read starting here continues it.
    pub(super) next_lpn: u64,
    pub(super) first_lpn: u64,
    pub(super) ready_ns: VecDeque<u64>,
    /// When the stream was last read (`stream_uses`), for least-recently-used replacement.
    pub(super) last_used: u64,
}

impl ReadStream {
    /// The time logical page `lpn` is in the stream's read-ahead, taking it out (pages before
    /// it are dropped: the stream moved past them); None when it was not read ahead.
    pub(super) fn take(&mut self, lpn: u64) -> Option<u64> {
        while self.first_lpn < lpn && !self.ready_ns.is_empty() {
            self.ready_ns.pop_front();
            self.first_lpn += 1;
        }
        if self.first_lpn != lpn {
            return None;
        }
        let ready = self.ready_ns.pop_front()?;
        self.first_lpn += 1;
        Some(ready)
    }
}

impl SsdDrive {
    /// The stream a read from `first_lpn` continues (it starts where the stream's last read
    /// ended), or a new stream for it in a free detector or the least recently used one; a
    /// replaced stream's read-ahead is dropped. Returns the stream and whether it continued.
    pub(super) fn stream_for(&mut self, first_lpn: u64) -> (usize, bool) {
        self.stream_uses += 1;
        let uses = self.stream_uses;
        if let Some(i) = self.streams.iter().position(|s| s.next_lpn == first_lpn) {
            self.streams[i].last_used = uses;
            return (i, true);
        }
        let fresh = ReadStream {
            next_lpn: first_lpn,
            first_lpn,
            ready_ns: VecDeque::new(),
            last_used: uses,
        };
        if self.streams.len() < self.profile.read_ahead_streams as usize {
            self.streams.push(fresh);
            return (self.streams.len() - 1, false);
        }
        let lru = (0..self.streams.len())
            .min_by_key(|&i| self.streams[i].last_used)
            .expect("at least one stream");
        self.streams[lru] = fresh;
        (lru, false)
    }

    /// Keep stream `i`'s share of the read-ahead buffer beyond `end_lpn` read, starting the
    /// NAND reads of pages not already there at `at_ns` (they use dies and channels like any
    /// read, so read-ahead costs bandwidth). The buffer is shared evenly by the streams that
    /// hold read-ahead, this one included: the others give up pages beyond their share (the
    /// furthest ahead first), so the buffer never holds more than `read_ahead_bytes`.
    pub(super) fn read_ahead(&mut self, i: usize, end_lpn: u64, at_ns: u64) {
        let buffer_pages = u64::from(self.profile.read_ahead_bytes / LOGICAL_PAGE_BYTES);
        if buffer_pages == 0 {
            return;
        }
        let sharing = 1 + self
            .streams
            .iter()
            .enumerate()
            .filter(|&(j, s)| j != i && !s.ready_ns.is_empty())
            .count() as u64;
        let share = buffer_pages / sharing;
        for (j, s) in self.streams.iter_mut().enumerate() {
            if j != i {
                s.ready_ns.truncate(share as usize);
            }
        }
        let target = (end_lpn + share).min(self.logical_pages);
        let s = &mut self.streams[i];
        if s.ready_ns.is_empty() {
            s.first_lpn = end_lpn;
        }
        s.ready_ns
            .truncate(target.saturating_sub(s.first_lpn) as usize);
        let mut next = s.first_lpn + s.ready_ns.len() as u64;
        while next < target {
            let ready = self.read_page(next as usize, at_ns).unwrap_or(at_ns);
            self.streams[i].ready_ns.push_back(ready);
            next += 1;
        }
    }

    /// Forget each stream's read-ahead that overlaps `[first, end)` (rewritten or trimmed).
    pub(super) fn drop_prefetch_overlapping(&mut self, first: u64, end: u64) {
        for s in &mut self.streams {
            let buffered_end = s.first_lpn + s.ready_ns.len() as u64;
            if first < buffered_end && end > s.first_lpn {
                s.ready_ns.clear();
            }
        }
    }

    /// Pages held in the read-ahead buffer, all streams together.
    pub(super) fn read_ahead_held_pages(&self) -> u64 {
        self.streams.iter().map(|s| s.ready_ns.len() as u64).sum()
    }
}
