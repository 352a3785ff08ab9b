//! HDD model: zoned recording (cylinders × heads, sectors per track falling from the outer to
//! the inner zone, so the media rate falls too), a seek curve fitted to the datasheet's
//! track-to-track, average and full-stroke times (a + b·√d for short seeks, c + e·d for long
//! ones), rotational position from the spindle speed, head switches, per-command controller
//! overhead, a segmented read buffer (a ring of one segment per sequential stream, LRU
//! replacement, read-ahead that a detected stream keeps up to its minimum pre-fetch while other
//! streams wait), a switchable write-back cache, and NCQ reordering by
//! shortest positioning time with the two limits real firmware has: it evaluates only the
//! oldest few queued commands per decision, and it treats a target reached with less than a
//! settle margin to spare as missed (one more revolution).
//!
//! One file per mechanism: `profile.rs` (the keys and their checks), `seek.rs` (the seek curve),
//! `geometry.rs` (where a sector lies, positioning, booking a media access), `read_buffer.rs`
//! (segments, read-ahead, reads) and `write_cache.rs` (write-back); the `Drive` implementation
//! here ties them together.

mod geometry;
mod profile;
mod read_buffer;
mod seek;
mod write_cache;

pub use profile::{validate, HddProfile, DEFAULT_SPIN_UP_NS};
pub use seek::SeekCurve;

use super::{
    busy_until_horizon, CacheOccupancy, Drive, DriveCommand, DriveModelReport, DriveStats,
    HddReport, LostWrite, TrimRange,
};
use crate::profile::limits::SECTOR_BYTES;
use crate::resource::{Flow, Server};
use geometry::{Position, Zone};
use rand_chacha::ChaCha8Rng;
use read_buffer::Segment;
use std::collections::VecDeque;
use write_cache::{DirtyWrite, WriteBack};

const NS_PER_MINUTE: u64 = 60_000_000_000;

/// The HDD.
pub struct HddDrive {
    profile: HddProfile,
    zones: Vec<Zone>,
    capacity_sectors: u64,
    curve: SeekCurve,
    revolution_ns: u64,
    actuator: Server,
    head: Position,
    /// Where the last media write ended (a cached sequential write stream continues there).
    write_stream_end: u64,
    segments: Vec<Segment>,
    /// A read segment's size: `read_ahead_sectors` (the profile gives `cache_segments` read
    /// segments of that size and leaves the rest of `cache_bytes` to the write cache).
    segment_sectors: u64,
    /// Index of the segment whose prefetch may still be running.
    prefetching: Option<usize>,
    /// Media time of the read-ahead sectors the host took from the segments: the head was
    /// busy reading them, though no command had booked it (the report's drive busy time).
    prefetch_used_ns: u64,
    /// The media writes booked for entries that hold their cache space until they end (in
    /// booking order, so by ascending end: the actuator books one at a time).
    writing_back: VecDeque<WriteBack>,
    /// Writes taken (the next one's ordinal).
    writes_taken: u64,
    /// Cached writes waiting for the media, oldest first.
    dirty: Vec<DirtyWrite>,
    uses: u64,
    /// Latest completion time the drive has reported.
    acknowledged_ns: u64,
    /// When the last read command arrived (None: none yet).
    last_read_ns: Option<u64>,
    /// `pick_read` found a queued command needing the head elsewhere: the read it picked may
    /// not extend the running prefetch (taken by that read).
    head_contended: bool,
    commands: u64,
    bytes: u64,
    trims: u64,
    trimmed_bytes: u64,
    report: HddReport,
}

impl HddDrive {
    /// Build the drive (head parked at cylinder 0). The profile must be validated.
    pub fn new(profile: &HddProfile) -> HddDrive {
        let revolution_ns = NS_PER_MINUTE / u64::from(profile.rpm);
        let per_zone = profile.cylinders / profile.zones;
        let mut zones = Vec::new();
        let mut lba = 0;
        for z in 0..profile.zones {
            let span = u64::from(profile.outer_sectors_per_track - profile.inner_sectors_per_track);
            let step = if profile.zones > 1 {
                span * u64::from(z) / u64::from(profile.zones - 1)
            } else {
                0
            };
            let spt = u64::from(profile.outer_sectors_per_track) - step;
            let cylinders = if z == profile.zones - 1 {
                profile.cylinders - per_zone * z
            } else {
                per_zone
            };
            zones.push(Zone {
                first_lba: lba,
                first_cylinder: per_zone * z,
                sectors_per_track: spt,
                sector_ps: revolution_ns * 1000 / spt,
            });
            lba += u64::from(cylinders) * u64::from(profile.heads) * spt;
        }
        HddDrive {
            zones,
            capacity_sectors: lba,
            curve: SeekCurve::fit(profile),
            revolution_ns,
            actuator: Server::default(),
            head: Position {
                cylinder: 0,
                head: 0,
                sector: 0,
                zone: 0,
            },
            write_stream_end: u64::MAX,
            segments: Vec::new(),
            segment_sectors: u64::from(profile.read_ahead_sectors),
            prefetching: None,
            prefetch_used_ns: 0,
            writing_back: VecDeque::new(),
            writes_taken: 0,
            dirty: Vec::new(),
            uses: 0,
            acknowledged_ns: 0,
            last_read_ns: None,
            head_contended: false,
            commands: 0,
            bytes: 0,
            trims: 0,
            trimmed_bytes: 0,
            report: HddReport::default(),
            profile: profile.clone(),
        }
    }

    /// The seek curve in use.
    pub fn seek_curve(&self) -> SeekCurve {
        self.curve
    }

    pub fn revolution_ns(&self) -> u64 {
        self.revolution_ns
    }

    fn sectors(command: &DriveCommand) -> u64 {
        u64::from(command.blocks)
    }
}

/// Whether `command` starts where another queued read ends: the later part of a sequential
/// run the host queued in pieces. The run is one media access from its first sector (what the
/// pieces after it need streams under the head behind it, and the read-ahead then holds them), so
/// the scheduler positions for the run's first piece, never for a later one: starting at a later
/// piece because it passes under the head sooner leaves the earlier pieces a revolution behind
/// the head, and the stream's read-ahead begins past them.
fn continues_a_queued_read(queued: &[DriveCommand], command: &DriveCommand) -> bool {
    queued
        .iter()
        .any(|q| q.lba + u64::from(q.blocks) == command.lba)
}

impl Drive for HddDrive {
    fn capacity_bytes(&self) -> u64 {
        self.capacity_sectors * u64::from(SECTOR_BYTES)
    }

    fn logical_block_bytes(&self) -> u32 {
        SECTOR_BYTES
    }

    fn queue_depth(&self) -> u32 {
        self.profile.queue_depth
    }

    /// One actuator: the next read starts when the head is free and a detected stream's
    /// minimum pre-fetch is in, unless a queued read is in the cache (it needs no head).
    fn read_ready_ns(&self, now_ns: u64, queued: &[DriveCommand]) -> u64 {
        let contended = self.head_wanted_elsewhere(now_ns, queued);
        if queued.iter().any(|c| {
            self.segment_holding(now_ns, c.lba, Self::sectors(c), contended)
                .is_some()
        }) {
            now_ns
        } else {
            now_ns
                .max(self.actuator.busy_until_ns)
                .max(self.min_prefetch_end_ns())
        }
    }

    /// A queued read in the cache first (found as it arrives: it needs no head); otherwise,
    /// of the oldest `rpo_candidates` media accesses, shortest expected positioning time (seek
    /// plus rotational wait from where the head is now, a revolution more inside the settle
    /// margin; oldest wins ties). Queued reads that continue one another are one access, from
    /// the first (a sequential stream the host keeps several reads of in the queue).
    fn pick_read(&mut self, now_ns: u64, queued: &[DriveCommand]) -> usize {
        self.destage_until(now_ns);
        let contended = self.head_wanted_elsewhere(now_ns, queued);
        // The read picked here is the next `read`: it sees the head as contended too.
        self.head_contended = contended;
        if let Some(hit) = queued.iter().position(|c| {
            self.segment_holding(now_ns, c.lba, Self::sectors(c), contended)
                .is_some()
        }) {
            if hit != 0 {
                self.report.reordered_reads += 1;
            }
            return hit;
        }
        let start = now_ns + self.profile.command_overhead_ns;
        let mut best = (u64::MAX, 0);
        // The window counts media accesses: a run of queued pieces is one candidate, its first.
        let run_starts = queued
            .iter()
            .enumerate()
            .filter(|(_, c)| !continues_a_queued_read(queued, c));
        for (i, c) in run_starts.take(self.rpo_window(queued.len())) {
            let cost = self.scheduled_positioning_ns(c.lba, start, false);
            if cost < best.0 {
                best = (cost, i);
            }
        }
        if best.1 != 0 {
            self.report.reordered_reads += 1;
        }
        best.1
    }

    fn read(&mut self, now_ns: u64, command: &DriveCommand, _rng: &mut ChaCha8Rng) -> Flow {
        let flow = self.read_at(now_ns, command);
        self.acknowledged_ns = self.acknowledged_ns.max(flow.end_ns);
        flow
    }

    /// Write-back cache on: the command completes once its data is in the cache and the cache
    /// has room (an entry leaves when its media write ends); the cache writes back while the
    /// head is idle, the entry reached soonest first, and a write continuing the previous one
    /// streams on without repositioning. Off: completion waits for the media.
    fn write(
        &mut self,
        incoming: Flow,
        command: &DriveCommand,
        _payload: Option<&[u8]>,
        _rng: &mut ChaCha8Rng,
    ) -> Flow {
        self.commands += 1;
        let sectors = Self::sectors(command);
        self.bytes += sectors * u64::from(SECTOR_BYTES);
        self.drop_segments_overlapping(command.lba, sectors);
        let arrived = incoming.end_ns + self.profile.command_overhead_ns;
        let end_ns = if self.profile.write_cache {
            self.report.write_cache_absorbed += 1;
            self.destage_until(arrived);
            let room = self.cache_room_ns(arrived, sectors);
            let continued = self.continued_segment(command.lba);
            let entry = DirtyWrite {
                lba: command.lba,
                position: self.position(command.lba),
                sectors,
                arrived_ns: room,
                ordinal: self.writes_taken,
                joins_previous: continued.is_some(),
            };
            // A segment's entries stay together in the cache, in stream order.
            self.dirty
                .insert(continued.map_or(self.dirty.len(), |i| i + 1), entry);
            room
        } else {
            let (_, media_end) = self.media_access(command.lba, sectors, arrived, false, true);
            self.write_stream_end = command.lba + sectors;
            media_end
        };
        self.writes_taken += 1;
        self.acknowledged_ns = self.acknowledged_ns.max(end_ns);
        Flow { end_ns, ..incoming }
    }

    /// FLUSH CACHE: the firmware takes the head as soon as it is free (the host waits for this
    /// command, as for a full cache) and writes every cached entry back, each time the one the
    /// write-back scheduler reaches soonest, so the flush costs the seeks and rotations of the
    /// backlog; it completes when the last media write, including any write-back already under
    /// way, has ended. With the write cache off nothing is cached: it costs the command
    /// overhead.
    fn flush(&mut self, now_ns: u64) -> u64 {
        // Write-back the idle drive would have started before the command arrived.
        self.destage_until(now_ns);
        let start = now_ns + self.profile.command_overhead_ns;
        while !self.dirty.is_empty() {
            let head_free = self.actuator.busy_until_ns.max(start);
            self.destage_one_from(head_free);
        }
        let written = self
            .writing_back
            .iter()
            .map(|w| w.end_ns)
            .max()
            .unwrap_or(0);
        let end_ns = start.max(written);
        self.acknowledged_ns = self.acknowledged_ns.max(end_ns);
        end_ns
    }

    fn writes_taken(&self) -> u64 {
        self.writes_taken
    }

    fn oldest_volatile_write(&self, now_ns: u64) -> Option<u64> {
        let dirty = self.dirty.iter().map(|w| w.ordinal);
        let writing = self.writing_back.iter().filter(|w| w.end_ns > now_ns);
        dirty.chain(writing.map(|w| w.ordinal)).min()
    }

    /// Every cached write not on the media at `now_ns` is lost: those still waiting, and
    /// those whose media write had not ended (a sector half written is not trusted; the
    /// whole entry counts as lost). First the write-back the idle drive would have started
    /// by then. Power-on empties the buffer (read segments too), parks the head, and the
    /// actuator is busy until the spindle is up to speed.
    fn power_loss(&mut self, now_ns: u64) -> Vec<LostWrite> {
        self.destage_until(now_ns);
        let mut lost: Vec<LostWrite> = self
            .writing_back
            .iter()
            .filter(|w| w.end_ns > now_ns)
            .map(|w| LostWrite {
                ordinal: w.ordinal,
                lba: w.lba,
                blocks: w.sectors,
            })
            .collect();
        lost.extend(self.dirty.iter().map(|w| LostWrite {
            ordinal: w.ordinal,
            lba: w.lba,
            blocks: w.sectors,
        }));
        self.dirty.clear();
        self.writing_back.clear();
        self.segments.clear();
        self.prefetching = None;
        self.write_stream_end = u64::MAX;
        self.last_read_ns = None;
        self.head = Position {
            cylinder: 0,
            head: 0,
            sector: 0,
            zone: 0,
        };
        self.actuator.busy_until_ns = now_ns + self.power_on_ready_ns();
        lost
    }

    fn power_on_ready_ns(&self) -> u64 {
        self.profile.spin_up_ns.unwrap_or(DEFAULT_SPIN_UP_NS)
    }

    /// A disk has nothing to unmap: TRIM costs the command overhead.
    fn trim(&mut self, now_ns: u64, ranges: &[TrimRange]) -> u64 {
        self.destage_until(now_ns);
        self.trims += 1;
        self.trimmed_bytes += ranges
            .iter()
            .map(|r| r.blocks * u64::from(SECTOR_BYTES))
            .sum::<u64>();
        now_ns.max(self.actuator.busy_until_ns) + self.profile.command_overhead_ns
    }

    fn stats(&self) -> DriveStats {
        DriveStats {
            // The head's booked work, and the read-ahead the host used (a stream served from
            // the buffer is bound by the media all the same).
            busy_ns: busy_until_horizon(&self.actuator, self.acknowledged_ns)
                + self.prefetch_used_ns,
            commands: self.commands,
            bytes: self.bytes,
            trims: self.trims,
            trimmed_bytes: self.trimmed_bytes,
        }
    }

    fn model_report(&self) -> DriveModelReport {
        DriveModelReport::Hdd(self.report.clone())
    }

    /// The read segments (what each ring holds at `now_ns`, against `cache_segments` ×
    /// `read_ahead_sectors`) and, when the profile gives the buffer's size, the write-back
    /// cache (entries taken in by `now_ns` and not yet written to the media, against what the
    /// read segments leave of `cache_bytes`; a lone write larger than that is taken whole into
    /// an empty cache, so it is its own bound). Without `cache_bytes` only the
    /// `write_cache_entries` count bounds the write cache: no byte size to check against.
    fn cache_occupancy(&self, now_ns: u64) -> Vec<CacheOccupancy> {
        let sector = u64::from(SECTOR_BYTES);
        let read_held: u64 = self
            .segments
            .iter()
            .map(|s| {
                s.filled_end(now_ns)
                    .saturating_sub(s.held_start(now_ns, self.segment_sectors))
            })
            .sum();
        let mut caches = vec![CacheOccupancy {
            name: "read_segments",
            held_bytes: read_held * sector,
            capacity_bytes: u64::from(self.profile.cache_segments) * self.segment_sectors * sector,
        }];
        if self.profile.write_cache && self.profile.cache_bytes.is_some() {
            let admitted = self.dirty.iter().filter(|w| w.arrived_ns <= now_ns);
            let writing = self.writing_back.iter().filter(|w| w.end_ns > now_ns);
            let entries = admitted.clone().count() + writing.clone().count();
            let held =
                admitted.map(|w| w.sectors).sum::<u64>() + writing.map(|w| w.sectors).sum::<u64>();
            let room = self.write_cache_sectors();
            caches.push(CacheOccupancy {
                name: "write_back",
                held_bytes: held * sector,
                capacity_bytes: if entries == 1 { room.max(held) } else { room } * sector,
            });
        }
        caches
    }
}
