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

use super::{
    busy_until_horizon, check_range, check_step_ns, CacheOccupancy, Drive, DriveCommand,
    DriveModelReport, DriveStats, HddReport, LostWrite, TrimRange,
};
use crate::profile::limits::SECTOR_BYTES;
use crate::resource::{Flow, Server};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

const NS_PER_MINUTE: u64 = 60_000_000_000;
/// Profile limits, well beyond every real drive: spindle speed, tracks per surface (the seek
/// curve fit visits each distance), heads, zones, sectors per track, read-ahead, cache
/// segments, write cache entries and buffer size.
const RPM_MIN: u32 = 1_000;
const RPM_MAX: u32 = 30_000;
const CYLINDERS_MAX: u32 = 2_000_000;
const HEADS_MAX: u32 = 64;
const ZONES_MAX: u32 = 1_024;
const SECTORS_PER_TRACK_MAX: u32 = 65_535;
const READ_AHEAD_SECTORS_MAX: u32 = 65_536;
const CACHE_SEGMENTS_MAX: u32 = 1_024;
const WRITE_CACHE_ENTRIES_MAX: u32 = 4_096;
const CACHE_BYTES_MAX: u64 = 4 << 30;
/// Sectors the first piece of a read carries to the interface (one 4 KiB buffer unit).
const FIRST_PIECE_SECTORS: u64 = 8;

/// HDD parameters (a `model = "hdd"` drive profile).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HddProfile {
    pub description: String,
    pub rpm: u32,
    pub cylinders: u32,
    /// Recording surfaces (heads).
    pub heads: u32,
    /// Zones of equal cylinder count, outermost first.
    pub zones: u32,
    pub outer_sectors_per_track: u32,
    pub inner_sectors_per_track: u32,
    pub track_to_track_seek_ns: u64,
    /// Mean seek over uniformly random cylinder pairs (the datasheet's average seek).
    pub average_seek_ns: u64,
    pub full_stroke_seek_ns: u64,
    /// Seeks up to this many cylinders follow the square-root part of the curve.
    pub short_seek_cylinders: u32,
    pub head_switch_ns: u64,
    /// Head switch before writing resumes on the next track: the write gate opens only once
    /// the head follows the new track within the tighter write tolerance (writing off track
    /// would overwrite the neighbour), so a write may settle longer than a read. A streaming
    /// write pays it per track. Absent = `head_switch_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_head_switch_ns: Option<u64>,
    /// Controller (firmware) time per command.
    pub command_overhead_ns: u64,
    /// A read segment's size: the ring holds the last this-many sectors read into it, and
    /// every read is followed by a read-ahead of this many sectors (0 = no read buffer).
    pub read_ahead_sectors: u32,
    /// Read segments, replaced least recently used first; a sequential stream keeps its own.
    pub cache_segments: u32,
    /// The drive's buffer (the datasheet's cache size). Cached writes may hold what the read
    /// segments (`cache_segments` × `read_ahead_sectors`) leave of it, besides the
    /// `write_cache_entries` limit; a single write larger than that is taken when the cache
    /// is empty. Absent = no byte limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_bytes: Option<u64>,
    pub write_cache: bool,
    /// Writes the write-back cache holds before the host must wait for the media.
    pub write_cache_entries: u32,
    /// Background write-back waits until no read has arrived for this long: firmware gives
    /// host reads priority over destaging cached writes and keeps the head on a read stream
    /// while the host is still reading (a full cache is written back at once regardless).
    /// Absent = 0 (write back whenever the head is free).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_back_read_idle_ns: Option<u64>,
    pub queue_depth: u32,
    /// Queued commands (oldest first) the firmware's rotational position optimisation
    /// evaluates per decision: its sort time must fit in the current command's execution
    /// (US 6 640 258). Absent = every queued command (ideal SPTF).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpo_candidates: Option<u32>,
    /// Cached writes (oldest first) the write-back scheduler evaluates when it picks the next
    /// one to write to the media. Destaging is the firmware's own background work, not a host
    /// command whose execution bounds the sort time, so it may look further than the NCQ
    /// scheduler does. Absent = `rpo_candidates`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_back_candidates: Option<u32>,
    /// Seek-time uncertainty the scheduler allows for: a target whose sector passes less than
    /// this after the nominal seek ends is costed one more revolution (a likely miss: the
    /// expected-access-time ordering of Hitachi GST's command-queue-ordering patents, with the
    /// miss probability taken as a step). Absent = 0 (exact seek times).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpo_settle_margin_ns: Option<u64>,
    /// Power on to ready: the spindle spins up and the heads load before the drive answers
    /// commands (a datasheet's "spin-up time" or "power-on to ready"). Absent =
    /// [`DEFAULT_SPIN_UP_NS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spin_up_ns: Option<u64>,
}

/// Power-on to ready of a 3.5" 7200 rpm desktop drive: 10 s maximum in Seagate's Barracuda
/// 7200.8 Serial ATA Product Manual (§2.7 "Start/stop times": Power-on to Ready 10 s max),
/// the class most shipped HDD profiles belong to; used where a profile gives no `spin_up_ns`.
pub const DEFAULT_SPIN_UP_NS: u64 = 10_000_000_000;
/// The longest spin-up a profile may give: a minute, beyond every datasheet (bounds the time
/// a power loss costs).
const SPIN_UP_NS_MAX: u64 = 60_000_000_000;

/// Why an HDD profile is impossible: (key, reason).
pub fn validate(p: &HddProfile) -> Result<(), (&'static str, String)> {
    let ranges: [(&'static str, u64, u64, u64, &str); 9] = [
        (
            "rpm",
            p.rpm.into(),
            RPM_MIN.into(),
            RPM_MAX.into(),
            "spindles turn at 3600 to 15000 rpm",
        ),
        (
            "cylinders",
            p.cylinders.into(),
            1,
            CYLINDERS_MAX.into(),
            "no drive has more tracks per surface",
        ),
        (
            "heads",
            p.heads.into(),
            1,
            HEADS_MAX.into(),
            "drives have at most 20 heads",
        ),
        (
            "zones",
            p.zones.into(),
            1,
            ZONES_MAX.into(),
            "drives record in a few dozen zones",
        ),
        (
            "outer_sectors_per_track",
            p.outer_sectors_per_track.into(),
            1,
            SECTORS_PER_TRACK_MAX.into(),
            "tracks hold a few thousand sectors",
        ),
        (
            "inner_sectors_per_track",
            p.inner_sectors_per_track.into(),
            1,
            SECTORS_PER_TRACK_MAX.into(),
            "tracks hold a few thousand sectors",
        ),
        (
            "read_ahead_sectors",
            p.read_ahead_sectors.into(),
            0,
            READ_AHEAD_SECTORS_MAX.into(),
            "a read-ahead of at most 32 MiB",
        ),
        (
            "cache_segments",
            p.cache_segments.into(),
            1,
            CACHE_SEGMENTS_MAX.into(),
            "drive caches have at most a few hundred segments",
        ),
        (
            "write_cache_entries",
            p.write_cache_entries.into(),
            1,
            WRITE_CACHE_ENTRIES_MAX.into(),
            "a write cache holds at most a few thousand commands",
        ),
    ];
    for (key, value, min, max, why) in ranges {
        check_range(key, value, min, max, why)?;
    }
    let times = [
        ("track_to_track_seek_ns", p.track_to_track_seek_ns),
        ("average_seek_ns", p.average_seek_ns),
        ("full_stroke_seek_ns", p.full_stroke_seek_ns),
        ("head_switch_ns", p.head_switch_ns),
        ("write_head_switch_ns", p.write_head_switch_ns.unwrap_or(0)),
        ("command_overhead_ns", p.command_overhead_ns),
        (
            "write_back_read_idle_ns",
            p.write_back_read_idle_ns.unwrap_or(0),
        ),
        ("rpo_settle_margin_ns", p.rpo_settle_margin_ns.unwrap_or(0)),
    ];
    for (key, value) in times {
        check_step_ns(key, value)?;
    }
    check_range(
        "spin_up_ns",
        p.spin_up_ns.unwrap_or(DEFAULT_SPIN_UP_NS),
        0,
        SPIN_UP_NS_MAX,
        "no drive takes longer than a minute from power on to ready",
    )?;
    if p.track_to_track_seek_ns == 0 {
        return Err(("track_to_track_seek_ns", "must be positive".into()));
    }
    if p.cache_bytes.is_some_and(|b| b > CACHE_BYTES_MAX) {
        return Err((
            "cache_bytes",
            format!(
                "must be at most {CACHE_BYTES_MAX}, got {} (drive buffers are at most a few \
                 hundred MB)",
                p.cache_bytes.unwrap_or(0)
            ),
        ));
    }
    if p.outer_sectors_per_track < p.inner_sectors_per_track {
        return Err((
            "outer_sectors_per_track",
            format!(
                "outer tracks hold at least as many sectors as inner ones: {} is below \
                 inner_sectors_per_track = {}",
                p.outer_sectors_per_track, p.inner_sectors_per_track
            ),
        ));
    }
    if p.zones > p.cylinders {
        return Err((
            "zones",
            format!(
                "{} zones are more than the {} cylinders",
                p.zones, p.cylinders
            ),
        ));
    }
    if !(p.track_to_track_seek_ns < p.average_seek_ns && p.average_seek_ns < p.full_stroke_seek_ns)
    {
        return Err((
            "average_seek_ns",
            format!(
                "need track_to_track_seek_ns < average_seek_ns < full_stroke_seek_ns, got {} / \
                 {} / {}",
                p.track_to_track_seek_ns, p.average_seek_ns, p.full_stroke_seek_ns
            ),
        ));
    }
    if p.short_seek_cylinders < 2 || p.short_seek_cylinders >= p.cylinders - 1 {
        return Err((
            "short_seek_cylinders",
            format!(
                "must be 2..cylinders-1 (cylinders = {}), got {}",
                p.cylinders, p.short_seek_cylinders
            ),
        ));
    }
    let curve = SeekCurve::fit(p);
    let finite = [curve.a, curve.b, curve.c, curve.e]
        .iter()
        .all(|v| v.is_finite());
    if !(finite && curve.b > 0.0 && curve.e > 0.0 && curve.a >= 0.0) {
        return Err((
            "average_seek_ns",
            format!(
                "no increasing seek curve a+b√d / c+e·d fits track_to_track_seek_ns = {}, \
                 average_seek_ns = {} and full_stroke_seek_ns = {} over {} cylinders with \
                 short_seek_cylinders = {} (fit: b = {:.1}, e = {:.3})",
                p.track_to_track_seek_ns,
                p.average_seek_ns,
                p.full_stroke_seek_ns,
                p.cylinders,
                p.short_seek_cylinders,
                curve.b,
                curve.e
            ),
        ));
    }
    if p.queue_depth == 0 || p.queue_depth > crate::profile::limits::NCQ_TAGS_MAX {
        return Err((
            "queue_depth",
            format!("must be 1..={}", crate::profile::limits::NCQ_TAGS_MAX),
        ));
    }
    if p.rpo_candidates == Some(0) {
        return Err((
            "rpo_candidates",
            "must be positive (1 = serve in arrival order)".into(),
        ));
    }
    if p.write_back_candidates == Some(0) {
        return Err((
            "write_back_candidates",
            "must be positive (1 = write back in arrival order)".into(),
        ));
    }
    let read_segments_bytes =
        u64::from(p.cache_segments) * u64::from(p.read_ahead_sectors) * u64::from(SECTOR_BYTES);
    if p.cache_bytes.is_some_and(|b| b <= read_segments_bytes) {
        return Err((
            "cache_bytes",
            format!(
                "must exceed the read segments' {read_segments_bytes} bytes \
                 (cache_segments x read_ahead_sectors x 512), or writes have no room"
            ),
        ));
    }
    if p.write_head_switch_ns.is_some_and(|w| w < p.head_switch_ns) {
        return Err((
            "write_head_switch_ns",
            "a write settles at least as long as a read: must be >= head_switch_ns".into(),
        ));
    }
    if let Some(margin) = p.rpo_settle_margin_ns {
        let revolution_ns = NS_PER_MINUTE / u64::from(p.rpm);
        if margin >= revolution_ns {
            return Err((
                "rpo_settle_margin_ns",
                format!("must be shorter than a revolution ({revolution_ns} ns)"),
            ));
        }
    }
    Ok(())
}

/// seek(d) = a + b·√d for 1 ≤ d < d0, c + e·d for d ≥ d0 (ns), fitted so that seek(1) is the
/// track-to-track time, seek(C−1) the full stroke, the two parts meet at d0, and the mean over
/// uniformly random start and end cylinders is the average seek.
#[derive(Clone, Copy, Debug)]
pub struct SeekCurve {
    a: f64,
    b: f64,
    c: f64,
    e: f64,
    d0: u32,
}

impl SeekCurve {
    pub fn fit(p: &HddProfile) -> SeekCurve {
        let cyl = f64::from(p.cylinders);
        let d0 = p.short_seek_cylinders;
        let (t2t, full, avg) = (
            p.track_to_track_seek_ns as f64,
            p.full_stroke_seek_ns as f64,
            p.average_seek_ns as f64,
        );
        // P(distance = d) for two independent uniform cylinders: 2(C−d)/C² (d ≥ 1).
        let (mut s0s, mut s1s, mut s0l, mut s1l) = (0.0, 0.0, 0.0, 0.0);
        for d in 1..p.cylinders {
            let df = f64::from(d);
            let pd = 2.0 * (cyl - df) / (cyl * cyl);
            if d < d0 {
                s0s += pd;
                s1s += pd * df.sqrt();
            } else {
                s0l += pd;
                s1l += pd * df;
            }
        }
        // a = t2t − b; c = full − e(C−1); continuity at d0 and the mean give two equations in b, e.
        let d0f = f64::from(d0);
        let (m11, m12, r1) = (d0f.sqrt() - 1.0, cyl - 1.0 - d0f, full - t2t);
        let (m21, m22, r2) = (
            s1s - s0s,
            s1l - (cyl - 1.0) * s0l,
            avg - t2t * s0s - full * s0l,
        );
        let det = m11 * m22 - m12 * m21;
        let b = (r1 * m22 - m12 * r2) / det;
        let e = (m11 * r2 - r1 * m21) / det;
        SeekCurve {
            a: t2t - b,
            b,
            c: full - e * (cyl - 1.0),
            e,
            d0,
        }
    }

    pub fn seek_ns(&self, distance: u32) -> u64 {
        if distance == 0 {
            0
        } else if distance < self.d0 {
            (self.a + self.b * f64::from(distance).sqrt()).round() as u64
        } else {
            (self.c + self.e * f64::from(distance)).round() as u64
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Zone {
    first_lba: u64,
    first_cylinder: u32,
    sectors_per_track: u64,
    /// Time one sector takes to pass under the head.
    sector_ps: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Position {
    cylinder: u32,
    head: u32,
    /// Sector within the track.
    sector: u64,
    zone: usize,
}

/// A read segment of the buffer, a ring of `segment_sectors`: sectors [start, end) are (or will
/// be, as the prefetch streams in) read from the media into it, and sector `s ≥ fill_lba` is
/// there at fill_start + (s − fill_lba + 1) · sector. The ring holds the last
/// `segment_sectors` read: as the prefetch streams on, the oldest sectors are overwritten
/// (`held_start`), so a stream never holds more than its segment (DiskSim's segment wrap: the
/// segment's start follows its end at one segment size; the Fujitsu ATA manuals' "read-ahead
/// to the empty area that becomes vacant by data transfer").
#[derive(Clone, Copy, Debug)]
struct Segment {
    start: u64,
    end: u64,
    fill_lba: u64,
    fill_start_ns: u64,
    sector_ps: u64,
    last_used: u64,
    /// End of the last host command served from this segment: a read starting here (or in
    /// the read-ahead beyond it) continues the segment's sequential stream.
    host_next: u64,
    /// The prefetch is not cut short by a command for another stream before this sector (the
    /// minimum pre-fetch; `fill_lba` = none).
    min_end: u64,
}

impl Segment {
    fn available_ns(&self, lba: u64) -> u64 {
        if lba < self.fill_lba {
            0
        } else {
            self.fill_start_ns + ((lba - self.fill_lba + 1) * self.sector_ps).div_ceil(1000)
        }
    }

    /// End of the sectors read into the segment by `at_ns`.
    fn filled_end(&self, at_ns: u64) -> u64 {
        if self.end <= self.fill_lba || at_ns >= self.available_ns(self.end - 1) {
            return self.end;
        }
        let elapsed_ps = at_ns.saturating_sub(self.fill_start_ns) * 1000;
        (self.fill_lba + elapsed_ps / self.sector_ps).clamp(self.fill_lba, self.end)
    }

    /// First sector the ring still holds at `at_ns`: the prefetch overwrites the oldest data
    /// once it has read `segment_sectors` beyond it.
    fn held_start(&self, at_ns: u64, segment_sectors: u64) -> u64 {
        self.start
            .max(self.filled_end(at_ns).saturating_sub(segment_sectors))
    }
}

/// A write in the write-back cache, not yet on the media.
#[derive(Clone, Copy, Debug)]
struct DirtyWrite {
    lba: u64,
    sectors: u64,
    arrived_ns: u64,
    /// Which write it is ([`Drive::writes_taken`] when it came): what a power loss names.
    ordinal: u64,
}

/// A cached write whose media write is booked: it holds its cache space, and is lost to a
/// power loss, until `end_ns`.
#[derive(Clone, Copy, Debug)]
struct WriteBack {
    end_ns: u64,
    lba: u64,
    sectors: u64,
    ordinal: u64,
}

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
            writing_back: VecDeque::new(),
            writes_taken: 0,
            dirty: Vec::new(),
            uses: 0,
            acknowledged_ns: 0,
            last_read_ns: None,
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

    fn position(&self, lba: u64) -> Position {
        let zone = self.zones.partition_point(|z| z.first_lba <= lba) - 1;
        let z = &self.zones[zone];
        let within = lba - z.first_lba;
        let track = within / z.sectors_per_track;
        let heads = u64::from(self.profile.heads);
        Position {
            cylinder: z.first_cylinder + (track / heads) as u32,
            head: (track % heads) as u32,
            sector: within % z.sectors_per_track,
            zone,
        }
    }

    /// (seek or head switch, rotational wait) to reach `target` from the head, starting at
    /// `at_ns`.
    fn positioning(&self, target: &Position, at_ns: u64, write: bool) -> (u64, u64) {
        let distance = self.head.cylinder.abs_diff(target.cylinder);
        let move_ns = if distance > 0 {
            self.curve.seek_ns(distance)
        } else if self.head.head != target.head {
            self.switch_ns(write)
        } else {
            0
        };
        let arrive = at_ns + move_ns;
        let zone = &self.zones[target.zone];
        let target_in_rev = target.sector * zone.sector_ps / 1000;
        let rev = self.revolution_ns;
        let wait = (target_in_rev + rev - arrive % rev) % rev;
        (move_ns, wait)
    }

    /// The scheduler's estimate of the time to reach `lba` from the head at `at_ns`: seek plus
    /// rotational wait, plus a revolution when the sector would pass within the settle margin
    /// of the seek's end (the seek may run long and miss it).
    fn scheduled_positioning_ns(&self, lba: u64, at_ns: u64, write: bool) -> u64 {
        let (move_ns, wait_ns) = self.positioning(&self.position(lba), at_ns, write);
        let margin_ns = self.profile.rpo_settle_margin_ns.unwrap_or(0);
        if wait_ns < margin_ns {
            move_ns + wait_ns + self.revolution_ns
        } else {
            move_ns + wait_ns
        }
    }

    /// How many of the queued commands (oldest first) one scheduling decision evaluates.
    fn rpo_window(&self, queued: usize) -> usize {
        self.profile
            .rpo_candidates
            .map_or(queued, |n| queued.min(n as usize))
    }

    /// How many of the cached writes (oldest first) one write-back decision evaluates.
    fn write_back_window(&self, cached: usize) -> usize {
        match self.profile.write_back_candidates {
            Some(n) => cached.min(n as usize),
            None => self.rpo_window(cached),
        }
    }

    /// Media time of `sectors` from `lba`: sector times plus a head switch per track boundary
    /// (track skew hides the rest of the switch).
    fn transfer_ns(&self, lba: u64, sectors: u64, write: bool) -> (u64, u64) {
        let mut ns = 0;
        let mut switches = 0;
        let mut at = lba;
        let end = lba + sectors;
        while at < end {
            let pos = self.position(at);
            let zone = &self.zones[pos.zone];
            let on_track = (zone.sectors_per_track - pos.sector).min(end - at);
            ns += (on_track * zone.sector_ps).div_ceil(1000);
            at += on_track;
            if at < end {
                ns += self.switch_ns(write);
                switches += 1;
            }
        }
        (ns, switches)
    }

    /// When the running read-ahead will have filled its segment (0 when none runs).
    fn prefetch_end_ns(&self) -> u64 {
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
    fn min_prefetch_end_ns(&self) -> u64 {
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

    /// When background write-back may take the head: once it is free, any read-ahead in
    /// progress has filled its segment, and reads have paused for `write_back_read_idle_ns`. Firmware gives reads priority over the write-back of
    /// cached data (the host waits for reads, not for destaging), so a read-ahead that a
    /// sequential read stream keeps extending is never cut short for a background write; the
    /// write-back waits until the stream pauses or the cache is full.
    fn head_free_for_write_back_ns(&self) -> u64 {
        let reads_paused = self
            .last_read_ns
            .map_or(0, |t| t + self.profile.write_back_read_idle_ns.unwrap_or(0));
        self.actuator
            .busy_until_ns
            .max(self.prefetch_end_ns())
            .max(reads_paused)
    }

    /// Stop a running prefetch when the head is needed at `at_ns`.
    fn stop_prefetch(&mut self, at_ns: u64) {
        if let Some(i) = self.prefetching.take() {
            let s = &mut self.segments[i];
            if at_ns < s.available_ns(s.end - 1) {
                let elapsed_ps = at_ns.saturating_sub(s.fill_start_ns) * 1000;
                let done = elapsed_ps / s.sector_ps;
                s.end = (s.fill_lba + done).clamp(s.fill_lba, s.end);
            }
        }
    }

    /// Head switch time before a read or a write.
    fn switch_ns(&self, write: bool) -> u64 {
        if write {
            self.profile
                .write_head_switch_ns
                .unwrap_or(self.profile.head_switch_ns)
        } else {
            self.profile.head_switch_ns
        }
    }

    /// Book a media access (a read, or a write when `write`) of `sectors` from `lba`, starting
    /// no earlier than `earliest_ns`; returns (data start, data end).
    fn media_access(
        &mut self,
        lba: u64,
        sectors: u64,
        earliest_ns: u64,
        stream: bool,
        write: bool,
    ) -> (u64, u64) {
        // The head is the prefetch's until its minimum pre-fetch is in, whatever waits.
        let start = earliest_ns
            .max(self.actuator.busy_until_ns)
            .max(self.min_prefetch_end_ns());
        self.stop_prefetch(start);
        let target = self.position(lba);
        let (move_ns, wait) = if stream {
            (0, 0)
        } else {
            self.positioning(&target, start, write)
        };
        if target.cylinder != self.head.cylinder {
            self.report.seeks += 1;
        } else if target.head != self.head.head {
            self.report.head_switches += 1;
        }
        self.report.seek_ns_total += move_ns;
        self.report.rotational_wait_ns_total += wait;
        let (xfer, switches) = self.transfer_ns(lba, sectors, write);
        self.report.head_switches += switches;
        let data_start = start + move_ns + wait;
        let end = data_start + xfer;
        self.actuator
            .reserve(start, end - start, sectors * u64::from(SECTOR_BYTES));
        self.head = self.position((lba + sectors).min(self.capacity_sectors) - 1);
        (data_start, end)
    }

    /// The segment that holds at `now_ns` (or, for the segment still prefetching, will stream
    /// in within one read-ahead) the sectors [lba, lba + sectors).
    fn cached_segment(&self, now_ns: u64, lba: u64, sectors: u64) -> Option<usize> {
        let ahead = self.segment_sectors;
        self.segments.iter().enumerate().position(|(i, s)| {
            let reach = if self.prefetching == Some(i) {
                s.end + ahead
            } else {
                s.end
            };
            s.held_start(now_ns, self.segment_sectors) <= lba
                && lba <= s.end
                && lba + sectors <= reach.min(self.capacity_sectors)
        })
    }

    /// Whether the read segments hold the sectors [lba, lba + sectors) at `now_ns`: read from
    /// the media by then and not yet overwritten (for tests and debugging).
    pub fn read_cache_holds(&self, now_ns: u64, lba: u64, sectors: u64) -> bool {
        self.segments.iter().any(|s| {
            s.held_start(now_ns, self.segment_sectors) <= lba
                && lba + sectors <= s.filled_end(now_ns)
        })
    }

    fn drop_segments_overlapping(&mut self, lba: u64, sectors: u64) {
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
    fn continued_stream(&self, now_ns: u64, lba: u64) -> Option<(usize, u64)> {
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
    fn remember_read(
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
    fn read_at(&mut self, now_ns: u64, command: &DriveCommand) -> Flow {
        self.destage_until(now_ns);
        self.last_read_ns = Some(now_ns);
        self.commands += 1;
        let sectors = Self::sectors(command);
        self.bytes += sectors * u64::from(SECTOR_BYTES);
        let start = now_ns + self.profile.command_overhead_ns;
        if let Some(i) = self.cached_segment(now_ns, command.lba, sectors) {
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
                    s.end = s.end.max((read_end + segment_sectors).min(capacity));
                }
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

    /// Write one cached entry to the media from when the head frees: of the oldest
    /// `write_back_candidates` entries already in the cache then, the one the scheduler expects to
    /// reach soonest (oldest on ties). `forced` (the cache is full and a write waits for room):
    /// it takes the head as soon as it is free, cutting a read-ahead short; otherwise it waits
    /// for the read-ahead to finish.
    fn destage_one(&mut self, forced: bool) {
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

    /// Write one cached entry to the media once the head is free at `head_free_ns`: of the
    /// oldest `write_back_candidates` entries in the cache then, the one reached soonest.
    fn destage_one_from(&mut self, head_free_ns: u64) {
        let earliest = self.dirty.iter().map(|w| w.arrived_ns).min();
        let Some(earliest) = earliest else { return };
        let start = head_free_ns.max(earliest);
        let mut best = (u64::MAX, 0);
        let window = self.write_back_window(self.dirty.len());
        for (i, w) in self.dirty.iter().enumerate().take(window) {
            if w.arrived_ns > start {
                continue;
            }
            let cost = if w.lba == self.write_stream_end {
                0
            } else {
                self.scheduled_positioning_ns(w.lba, start, true)
            };
            if cost < best.0 {
                best = (cost, i);
            }
        }
        if best.1 != 0 {
            self.report.reordered_destages += 1;
        }
        let w = self.dirty.remove(best.1);
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
    fn destage_until(&mut self, now_ns: u64) {
        while let Some(earliest) = self.dirty.iter().map(|w| w.arrived_ns).min() {
            if self.head_free_for_write_back_ns().max(earliest) >= now_ns {
                break;
            }
            self.destage_one(false);
        }
    }

    /// Sectors the write cache may hold: the buffer less the read segments.
    fn write_cache_sectors(&self) -> u64 {
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
    fn cache_room_ns(&mut self, arrived_ns: u64, sectors: u64) -> u64 {
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

    fn sectors(command: &DriveCommand) -> u64 {
        u64::from(command.blocks)
    }
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
        if queued.iter().any(|c| {
            self.cached_segment(now_ns, c.lba, Self::sectors(c))
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
    /// of the oldest `rpo_candidates`, shortest expected positioning time (seek plus rotational
    /// wait from where the head is now, a revolution more inside the settle margin; oldest
    /// wins ties).
    fn pick_read(&mut self, now_ns: u64, queued: &[DriveCommand]) -> usize {
        self.destage_until(now_ns);
        if let Some(hit) = queued.iter().position(|c| {
            self.cached_segment(now_ns, c.lba, Self::sectors(c))
                .is_some()
        }) {
            if hit != 0 {
                self.report.reordered_reads += 1;
            }
            return hit;
        }
        let start = now_ns + self.profile.command_overhead_ns;
        let mut best = (u64::MAX, 0);
        for (i, c) in queued
            .iter()
            .enumerate()
            .take(self.rpo_window(queued.len()))
        {
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
            self.dirty.push(DirtyWrite {
                lba: command.lba,
                sectors,
                arrived_ns: room,
                ordinal: self.writes_taken,
            });
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
            busy_ns: busy_until_horizon(&self.actuator, self.acknowledged_ns),
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
