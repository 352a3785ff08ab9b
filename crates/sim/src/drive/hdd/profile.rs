//! The HDD profile (a `model = "hdd"` drive profile's keys) and the limits a real drive keeps
//! them within.

use super::seek::SeekCurve;
use super::NS_PER_MINUTE;
use crate::drive::{check_range, check_step_ns};
use crate::profile::limits::SECTOR_BYTES;
use serde::{Deserialize, Serialize};

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
    check_limits(p)?;
    check_times(p)?;
    check_geometry(p)?;
    check_seek_curve(p)?;
    check_queueing(p)?;
    check_cache_and_settling(p)
}

/// Every count within what a real drive has.
fn check_limits(p: &HddProfile) -> Result<(), (&'static str, String)> {
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
    Ok(())
}

/// Every time a whole number of simulator steps, the spin-up within a minute.
fn check_times(p: &HddProfile) -> Result<(), (&'static str, String)> {
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
    Ok(())
}

/// Zones, tracks and the seek datasheet figures consistent with each other.
fn check_geometry(p: &HddProfile) -> Result<(), (&'static str, String)> {
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
    Ok(())
}

/// An increasing seek curve fits the datasheet's three seek times.
fn check_seek_curve(p: &HddProfile) -> Result<(), (&'static str, String)> {
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
    Ok(())
}

/// The NCQ depth and the schedulers' candidate windows.
fn check_queueing(p: &HddProfile) -> Result<(), (&'static str, String)> {
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
    Ok(())
}

/// Room for writes beside the read segments, and write settling against a read's and a
/// revolution.
fn check_cache_and_settling(p: &HddProfile) -> Result<(), (&'static str, String)> {
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
