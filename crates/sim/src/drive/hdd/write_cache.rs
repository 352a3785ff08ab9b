//! The write-back cache: writes held until the media takes them, destaged while the head is
//! idle (the entry the scheduler reaches soonest first; reads keep priority), and the room a
//! new write waits for when the cache is full. A write that starts where a cached segment ends
//! joins that segment (one per write stream, whatever other streams' writes came between), and
//! the scheduler chooses among segments, not among the host's pieces of one transfer; a
//! segment's entries then stream to the media one after another.

use super::geometry::Position;
use super::HddDrive;
use crate::profile::limits::SECTOR_BYTES;

/// A write in the write-back cache, not yet on the media.
#[derive(Clone, Copy, Debug)]
pub(super) struct DirtyWrite {
    pub(super) lba: u64,
    /// Where `lba` lies, found once when the write is taken (the write-back scheduler
    /// evaluates every cached write at every decision).
    pub(super) position: Position,
    pub(super) sectors: u64,
    pub(super) arrived_ns: u64,
    /// Which write it is ([`crate::drive::Drive::writes_taken`] when it came): what a power
    /// loss names.
    pub(super) ordinal: u64,
    /// It continues the entry before it in the cache (starts at that entry's last sector + 1),
    /// so the two are one segment written back together.
    pub(super) joins_previous: bool,
}

/// A cached write whose media write is booked: it holds its cache space, and is lost to a
/// power loss, until `end_ns`.
#[derive(Clone, Copy, Debug)]
pub(super) struct WriteBack {
    pub(super) end_ns: u64,
    pub(super) lba: u64,
    pub(super) sectors: u64,
    pub(super) ordinal: u64,
}

impl HddDrive {
    /// How many of the cached segments (oldest first) one write-back decision evaluates.
    pub(super) fn write_back_window(&self, segments: usize) -> usize {
        match self.profile.write_back_candidates {
            Some(n) => segments.min(n as usize),
            None => self.rpo_window(segments),
        }
    }

    /// The cache segment a write at `lba` continues: the index of the segment's last entry,
    /// when that entry ends where the write starts (the host's pieces of one transfer, or a
    /// sequential stream, also when other streams' writes came in between). Drive firmware
    /// appends such a write to the segment already holding its predecessor (the write-side
    /// counterpart of the read buffer's per-stream segments: "segments are allocated per
    /// stream", docs/drives.md) and destages the segment in one pass.
    pub(super) fn continued_segment(&self, lba: u64) -> Option<usize> {
        // Newest first: a stream's latest piece is near the end.
        (0..self.dirty.len()).rev().find(|&i| {
            let w = &self.dirty[i];
            let segment_tail = self.dirty.get(i + 1).is_none_or(|n| !n.joins_previous);
            w.lba + w.sectors == lba && segment_tail
        })
    }

    /// When background write-back may take the head: once it is free, any read-ahead in
    /// progress has filled its segment, and reads have paused for `write_back_read_idle_ns`. Firmware gives reads priority over the write-back of
    /// cached data (the host waits for reads, not for destaging), so a read-ahead that a
    /// sequential read stream keeps extending is never cut short for a background write; the
    /// write-back waits until the stream pauses or the cache is full.
    pub(super) fn head_free_for_write_back_ns(&self) -> u64 {
        let reads_paused = self
            .last_read_ns
            .map_or(0, |t| t + self.profile.write_back_read_idle_ns.unwrap_or(0));
        self.actuator
            .busy_until_ns
            .max(self.prefetch_end_ns())
            .max(reads_paused)
    }

    /// Write one cached entry to the media from when the head frees: of the oldest
    /// `write_back_candidates` entries already in the cache then, the one the scheduler expects to
    /// reach soonest (oldest on ties). `forced` (the cache is full and a write waits for room):
    /// it takes the head as soon as it is free, cutting a read-ahead short; otherwise it waits
    /// for the read-ahead to finish.
    pub(super) fn destage_one(&mut self, forced: bool) {
        if self.dirty.is_empty() {
            return;
        }
        let head_free = if forced {
            // From when the cache filled (the latest entry's arrival), not earlier: until
            // then the write-back was background work that reads could hold off.
            let filled = self.dirty.iter().map(|w| w.arrived_ns).max().unwrap_or(0);
            self.actuator.busy_until_ns.max(filled)
        } else {
            self.head_free_for_write_back_ns()
        };
        self.destage_one_from(head_free);
    }

    /// Write one cached entry to the media once the head is free at `head_free_ns`: the first
    /// entry of the segment, of the oldest `write_back_candidates` segments in the cache then,
    /// that the scheduler reaches soonest. The rest of that segment continues where the entry
    /// ends, so the following write-backs stream on to it entry by entry (a read arriving in
    /// between is served first, as it would be between any two write-backs).
    pub(super) fn destage_one_from(&mut self, head_free_ns: u64) {
        let earliest = self.dirty.iter().map(|w| w.arrived_ns).min();
        let Some(earliest) = earliest else { return };
        let start = head_free_ns.max(earliest);
        let mut best = (u64::MAX, 0);
        let window =
            self.write_back_window(self.dirty.iter().filter(|w| !w.joins_previous).count());
        let heads = self
            .dirty
            .iter()
            .enumerate()
            .filter(|(_, w)| !w.joins_previous);
        for (i, w) in heads.take(window) {
            if w.arrived_ns > start {
                continue;
            }
            let cost = if w.lba == self.write_stream_end {
                0
            } else {
                self.scheduled_positioning_to(&w.position, start, true)
            };
            if cost < best.0 {
                best = (cost, i);
            }
        }
        if best.1 != 0 {
            self.report.reordered_destages += 1;
        }
        let w = self.dirty.remove(best.1);
        if let Some(next) = self.dirty.get_mut(best.1) {
            // The rest of the segment starts where this entry ends: the next write-back
            // streams on to it (no repositioning) unless a read moves the head in between.
            next.joins_previous = false;
        }
        let stream = w.lba == self.write_stream_end;
        let (_, end) = self.media_access(w.lba, w.sectors, start, stream, true);
        self.write_stream_end = w.lba + w.sectors;
        self.writing_back.push_back(WriteBack {
            end_ns: end,
            lba: w.lba,
            sectors: w.sectors,
            ordinal: w.ordinal,
        });
    }

    /// Destage while the head frees up before `now_ns` (the cache writes back when idle; a
    /// command arriving at `now_ns` finds the destage that had started).
    pub(super) fn destage_until(&mut self, now_ns: u64) {
        while let Some(earliest) = self.dirty.iter().map(|w| w.arrived_ns).min() {
            if self.head_free_for_write_back_ns().max(earliest) >= now_ns {
                break;
            }
            self.destage_one(false);
        }
    }

    /// Sectors the write cache may hold: the buffer less the read segments.
    pub(super) fn write_cache_sectors(&self) -> u64 {
        self.profile.cache_bytes.map_or(u64::MAX, |bytes| {
            let reads = u64::from(self.profile.cache_segments)
                * u64::from(self.profile.read_ahead_sectors)
                * u64::from(SECTOR_BYTES);
            bytes.saturating_sub(reads) / u64::from(SECTOR_BYTES)
        })
    }

    /// When a write of `sectors` arriving at `arrived_ns` finds room in the write cache: at
    /// once while fewer than `write_cache_entries` writes occupy it and their sectors leave
    /// room for it (an entry frees its space when its media write ends, whichever entry that
    /// is); otherwise as soon as enough write-backs have ended, forcing them while none is
    /// under way.
    pub(super) fn cache_room_ns(&mut self, arrived_ns: u64, sectors: u64) -> u64 {
        let entries = self.profile.write_cache_entries as usize;
        let room_sectors = self.write_cache_sectors();
        let mut at = arrived_ns;
        loop {
            while self.writing_back.front().is_some_and(|w| w.end_ns <= at) {
                self.writing_back.pop_front();
            }
            let held = self.dirty.len() + self.writing_back.len();
            let held_sectors = self.dirty.iter().map(|w| w.sectors).sum::<u64>()
                + self.writing_back.iter().map(|w| w.sectors).sum::<u64>();
            if held == 0 || (held < entries && held_sectors + sectors <= room_sectors) {
                return at;
            }
            match self.writing_back.front() {
                // The host waits for the first write-back under way to end.
                Some(w) => at = w.end_ns,
                // Every entry still waits for the media: write one back now.
                None => self.destage_one(true),
            }
        }
    }
}
