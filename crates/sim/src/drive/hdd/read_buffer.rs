//! The segmented read buffer: a ring of one segment per sequential stream, replaced least
//! recently used first, each read followed by a read-ahead that a detected stream keeps up to
//! its minimum pre-fetch while other streams wait; reads served from it or from the media.

use super::{DriveCommand, HddDrive};
use crate::profile::limits::SECTOR_BYTES;
use crate::resource::Flow;

/// Sectors the first piece of a read carries to the interface (one 4 KiB buffer unit).
const FIRST_PIECE_SECTORS: u64 = 8;

/// A read segment of the buffer, a ring of `segment_sectors`: sectors [start, end) are (or will
/// be, as the prefetch streams in) read from the media into it, and sector `s ≥ fill_lba` is
/// there at fill_start + (s − fill_lba + 1) · sector. The ring holds the last
/// `segment_sectors` read: as the prefetch streams on, the oldest sectors are overwritten
/// (`held_start`), so a stream never holds more than its segment (DiskSim's segment wrap: the
/// segment's start follows its end at one segment size; the Fujitsu ATA manuals' "read-ahead
/// to the empty area that becomes vacant by data transfer").
#[derive(Clone, Copy, Debug)]
pub(super) struct Segment {
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) fill_lba: u64,
    pub(super) fill_start_ns: u64,
    pub(super) sector_ps: u64,
    pub(super) last_used: u64,
    /// End of the last host command served from this segment: a read starting here (or in
    /// the read-ahead beyond it) continues the segment's sequential stream.
    pub(super) host_next: u64,
    /// The prefetch is not cut short by a command for another stream before this sector (the
    /// minimum pre-fetch; `fill_lba` = none).
    pub(super) min_end: u64,
    /// End of the read-ahead sectors whose media time the report counts: those the host has
    /// taken (from `fill_lba` on).
    pub(super) used_end: u64,
}

impl Segment {
    pub(super) fn available_ns(&self, lba: u64) -> u64 {
        if lba < self.fill_lba {
            0
        } else {
            self.fill_start_ns + ((lba - self.fill_lba + 1) * self.sector_ps).div_ceil(1000)
        }
    }

    /// End of the sectors read into the segment by `at_ns`.
    pub(super) fn filled_end(&self, at_ns: u64) -> u64 {
        if self.end <= self.fill_lba || at_ns >= self.available_ns(self.end - 1) {
            return self.end;
        }
        let elapsed_ps = at_ns.saturating_sub(self.fill_start_ns) * 1000;
        (self.fill_lba + elapsed_ps / self.sector_ps).clamp(self.fill_lba, self.end)
    }

    /// First sector the ring still holds at `at_ns`: the prefetch overwrites the oldest data
    /// once it has read `segment_sectors` beyond it.
    pub(super) fn held_start(&self, at_ns: u64, segment_sectors: u64) -> u64 {
        self.start
            .max(self.filled_end(at_ns).saturating_sub(segment_sectors))
    }
}

impl HddDrive {
    /// When the running read-ahead will have filled its segment (0 when none runs).
    pub(super) fn prefetch_end_ns(&self) -> u64 {
        self.prefetching.map_or(0, |i| {
            let s = &self.segments[i];
            if s.end > s.fill_lba {
                s.available_ns(s.end - 1)
            } else {
                0
            }
        })
    }

    /// Until when the running prefetch may not be cut short for another command: its minimum
    /// pre-fetch (0 when none runs).
    pub(super) fn min_prefetch_end_ns(&self) -> u64 {
        self.prefetching.map_or(0, |i| {
            let s = &self.segments[i];
            let min_end = s.min_end.min(s.end);
            if min_end > s.fill_lba {
                s.available_ns(min_end - 1)
            } else {
                0
            }
        })
    }

    /// Stop a running prefetch when the head is needed at `at_ns`.
    pub(super) fn stop_prefetch(&mut self, at_ns: u64) {
        if let Some(i) = self.prefetching.take() {
            let s = &mut self.segments[i];
            if at_ns < s.available_ns(s.end - 1) {
                let elapsed_ps = at_ns.saturating_sub(s.fill_start_ns) * 1000;
                let done = elapsed_ps / s.sector_ps;
                s.end = (s.fill_lba + done).clamp(s.fill_lba, s.end);
            }
        }
    }

    /// The segment that holds at `now_ns` (or, for the segment still prefetching, will stream
    /// in within one read-ahead) the sectors [lba, lba + sectors).
    pub(super) fn cached_segment(&self, now_ns: u64, lba: u64, sectors: u64) -> Option<usize> {
        self.segment_holding(now_ns, lba, sectors, false)
    }

    /// Whether a command in `queued` needs the head for something other than the running
    /// prefetch: a read no segment holds or will stream in (another stream's, or a random one).
    pub(super) fn head_wanted_elsewhere(&self, now_ns: u64, queued: &[DriveCommand]) -> bool {
        queued.iter().any(|c| {
            self.cached_segment(now_ns, c.lba, Self::sectors(c))
                .is_none()
        })
    }

    /// [`Self::cached_segment`]; when the head is `contended` (a command waits that needs it
    /// elsewhere), the prefetching segment reaches no further than its planned end: a stream's
    /// hits do not extend its read-ahead while another command waits, so a stream holds the
    /// head for its minimum pre-fetch and no longer (without this bound a stream whose host
    /// keeps several reads queued would keep the head for ever).
    pub(super) fn segment_holding(
        &self,
        now_ns: u64,
        lba: u64,
        sectors: u64,
        contended: bool,
    ) -> Option<usize> {
        let ahead = self.segment_sectors;
        self.segments.iter().enumerate().position(|(i, s)| {
            let reach = if self.prefetching == Some(i) && !contended {
                s.end + ahead
            } else {
                s.end
            };
            s.held_start(now_ns, self.segment_sectors) <= lba
                && lba <= s.end
                && lba + sectors <= reach.min(self.capacity_sectors)
        })
    }

    pub(super) fn drop_segments_overlapping(&mut self, lba: u64, sectors: u64) {
        let end = lba + sectors;
        let mut i = 0;
        while i < self.segments.len() {
            let s = self.segments[i];
            if s.start < end && lba < s.end {
                self.segments.swap_remove(i);
                self.prefetching = match self.prefetching {
                    Some(p) if p == i => None,
                    Some(p) if p == self.segments.len() => Some(i),
                    other => other,
                };
            } else {
                i += 1;
            }
        }
    }

    /// The segment whose sequential stream a read from `lba` continues at `now_ns`: it starts
    /// where the segment's last host command ended or in the read-ahead held beyond it.
    /// Returns the segment and the first sector it still holds.
    pub(super) fn continued_stream(&self, now_ns: u64, lba: u64) -> Option<(usize, u64)> {
        self.segments.iter().enumerate().find_map(|(i, s)| {
            let held = s.held_start(now_ns, self.segment_sectors);
            (s.host_next <= lba && lba <= s.end && held <= lba).then_some((i, held))
        })
    }

    /// Keep the read [lba, lba + sectors) in a segment and read ahead a segment's worth
    /// (`read_ahead_sectors`) beyond it after `data_end_ns`. The ring then holds the last
    /// segment's worth read, so the read-ahead overwrites the read's own data as it completes
    /// (SCSI drives' default: "the requested data is overwritten by read-ahead data" unless the
    /// Caching mode page's read retention priority says otherwise, HGST Ultrastar 15K450
    /// specification; DiskSim's "Read-ahead over requested").
    ///
    /// - A read that continues a segment's stream (`stream`: it starts where the stream's last
    ///   command ended, in what the segment holds) keeps that segment: segments are allocated
    ///   per stream. Its read-ahead is the stream's minimum pre-fetch: a command for another
    ///   stream waits until it is in (ATA firmware on a read "that targets the sequential
    ///   address to the previous read command ... tries to fill the buffer space with the read
    ///   ahead data", Fujitsu MPG3xxxAH product manual §6.5.3; SCSI drives expose the minimum
    ///   as the Caching mode page's MINIMUM PRE-FETCH).
    /// - Any other read replaces the least recently used segment, and the next command that
    ///   needs the head cuts its read-ahead short (a minimum pre-fetch of 0: "read ahead
    ///   should be terminated immediately after a new command arrives", HGST Ultrastar
    ///   C15K600 specification, Caching mode page).
    pub(super) fn remember_read(
        &mut self,
        stream: Option<(usize, u64)>,
        lba: u64,
        sectors: u64,
        data_end_ns: u64,
    ) {
        self.uses += 1;
        let read_end = lba + sectors;
        // A read longer than the segment leaves its last `segment_sectors`; a continued
        // stream keeps what its segment held before the read.
        let kept_from = read_end.saturating_sub(self.segment_sectors);
        let start = stream.map_or(lba, |(_, held)| held).max(kept_from);
        let end = (read_end + self.segment_sectors)
            .min(self.capacity_sectors)
            .max(read_end);
        let segment = Segment {
            start,
            end,
            fill_lba: read_end,
            fill_start_ns: data_end_ns,
            // Streaming across tracks: each track costs a revolution plus a head switch.
            sector_ps: (self.revolution_ns + self.profile.head_switch_ns) * 1000
                / self.zones[self.position(lba).zone].sectors_per_track,
            last_used: self.uses,
            host_next: read_end,
            min_end: if stream.is_some() { end } else { read_end },
            used_end: read_end,
        };
        let slot = if let Some((i, _)) = stream {
            self.segments[i] = segment;
            i
        } else if self.segments.len() < self.profile.cache_segments as usize {
            self.segments.push(segment);
            self.segments.len() - 1
        } else {
            let lru = (0..self.segments.len())
                .min_by_key(|&i| self.segments[i].last_used)
                .expect("at least one segment");
            self.segments[lru] = segment;
            lru
        };
        self.prefetching = (end > read_end).then_some(slot);
    }

    /// A read: from a cache segment, or from the media.
    pub(super) fn read_at(&mut self, now_ns: u64, command: &DriveCommand) -> Flow {
        self.destage_until(now_ns);
        self.last_read_ns = Some(now_ns);
        self.commands += 1;
        let sectors = Self::sectors(command);
        self.bytes += sectors * u64::from(SECTOR_BYTES);
        let start = now_ns + self.profile.command_overhead_ns;
        let contended = std::mem::take(&mut self.head_contended);
        if let Some(i) = self.segment_holding(now_ns, command.lba, sectors, contended) {
            self.report.read_cache_hits += 1;
            self.uses += 1;
            let capacity = self.capacity_sectors;
            let streaming = self.prefetching == Some(i);
            let segment_sectors = self.segment_sectors;
            let s = &mut self.segments[i];
            s.last_used = self.uses;
            s.start = s.held_start(now_ns, segment_sectors);
            let read_end = command.lba + sectors;
            if read_end > s.host_next {
                // The stream moves on: what the host has taken makes room for the prefetch,
                // which keeps a segment's worth ahead of the host while it still runs. A
                // re-read of data the host has had leaves the segment as it is.
                s.host_next = read_end;
                if streaming {
                    if !contended {
                        s.end = s.end.max((read_end + segment_sectors).min(capacity));
                    }
                    // The hit is served from the running prefetch: the head must read on at
                    // least to its last sector, whatever command comes next. (Cutting the
                    // prefetch there left the stream's segment short of what its host had
                    // been promised, so its next read no longer continued the stream: two
                    // streams at QD2 paid a seek every other command.)
                    s.min_end = s.min_end.max(read_end);
                }
            }
            // Read-ahead the host takes for the first time: the head's media time for it.
            if read_end > s.used_end {
                let first_new = s.used_end.max(command.lba).max(s.fill_lba);
                let new_sectors = read_end.saturating_sub(first_new);
                self.prefetch_used_ns += (new_sectors * s.sector_ps).div_ceil(1000);
                s.used_end = read_end;
            }
            let first = s.available_ns(command.lba).max(start);
            let last = s.available_ns(command.lba + sectors - 1).max(start);
            let piece = (FIRST_PIECE_SECTORS.min(sectors) * s.sector_ps).div_ceil(1000);
            return Flow {
                start_ns: first,
                end_ns: last,
                first_piece_ns: piece.min(last - first),
            };
        }
        let stream = self.continued_stream(now_ns, command.lba);
        let (data_start, data_end) = self.media_access(command.lba, sectors, start, false, false);
        // The head left the write stream: its next write-back repositions.
        self.write_stream_end = u64::MAX;
        self.remember_read(stream, command.lba, sectors, data_end);
        let zone = &self.zones[self.position(command.lba).zone];
        Flow {
            start_ns: data_start,
            end_ns: data_end,
            first_piece_ns: (FIRST_PIECE_SECTORS.min(sectors) * zone.sector_ps).div_ceil(1000),
        }
    }

    /// Whether the read segments hold the sectors [lba, lba + sectors) at `now_ns`: read from
    /// the media by then and not yet overwritten (for tests and debugging).
    pub fn read_cache_holds(&self, now_ns: u64, lba: u64, sectors: u64) -> bool {
        self.segments.iter().any(|s| {
            s.held_start(now_ns, self.segment_sectors) <= lba
                && lba + sectors <= s.filled_end(now_ns)
        })
    }
}
