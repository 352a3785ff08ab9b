//! The drive interface every drive model implements (simple, SSD with a page-mapping FTL, HDD
//! with mechanics and NCQ reordering), the command it executes and the per-model report.

pub mod hdd;
pub mod simple;
pub mod ssd;

use crate::error::SimError;
use crate::resource::Flow;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The piece of written data a compressing drive estimates on its own (its logical page); the
/// simulator keeps each slot piece's estimate while the piece's bytes stay unchanged, so a
/// restamped buffer is estimated again only where the stamp landed ([`Drive::write_payload`]).
pub const COMPRESSION_PIECE_BYTES: usize = 4096;
/// A piece whose compressed size is not known ([`Drive::write_payload`]).
pub const UNKNOWN_COMPRESSED_BYTES: u32 = u32::MAX;

/// The drive-model registry: one line per model gives the name its profile's `model` key takes,
/// the variant of [`DriveProfile`], the model's profile type, its drive type (built with
/// `new(&profile)`) and its validation. A new model is its file or folder under `drive/` plus
/// one line in the invocation below; every match over the models is generated from it.
macro_rules! drive_models {
    ($($name:literal => $variant:ident($profile:ty, $drive:ty, $validate:expr)),* $(,)?) => {
        /// A drive profile file: the `model` key picks the model.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "model", rename_all = "kebab-case")]
        pub enum DriveProfile {
            $($variant($profile)),*
        }

        /// The values a drive profile's `model` key may take.
        pub const DRIVE_MODELS: &[&str] = &[$($name),*];

        impl DriveProfile {
            pub fn description(&self) -> &str {
                match self {
                    $(DriveProfile::$variant(p) => &p.description),*
                }
            }

            /// The profile of model `model` from the rest of its file's table.
            pub(crate) fn deserialize_model(
                model: &str,
                rest: toml::Value,
            ) -> Result<DriveProfile, toml::de::Error> {
                match model {
                    $($name => Ok(DriveProfile::$variant(<$profile>::deserialize(rest)?)),)*
                    other => Err(serde::de::Error::unknown_variant(other, DRIVE_MODELS)),
                }
            }

            /// Check the profile's values; an error names `origin` and the key.
            pub(crate) fn validate(&self, origin: &str) -> Result<(), SimError> {
                match self {
                    $(DriveProfile::$variant(p) => ($validate)(origin, p)),*
                }
            }

            /// A fresh drive of this (validated) profile.
            pub fn build(&self) -> Box<dyn Drive> {
                match self {
                    $(DriveProfile::$variant(p) => Box::new(<$drive>::new(p))),*
                }
            }
        }
    };
}

/// A model's `(key, reason)` validation error as the profile error naming `origin`.
fn named(origin: &str, checked: Result<(), (&'static str, String)>) -> Result<(), SimError> {
    checked.map_err(|(key, reason)| SimError::profile(origin, key, reason))
}

drive_models! {
    "simple" => Simple(simple::SimpleDriveProfile, simple::SimpleDrive, simple::validate),
    "ssd" => Ssd(ssd::SsdProfile, ssd::SsdDrive, |origin, p| named(origin, ssd::validate(p))),
    "hdd" => Hdd(hdd::HddProfile, hdd::HddDrive, |origin, p| named(origin, hdd::validate(p))),
}

/// `key` must lie in `min..=max` (see [`crate::profile::limits::out_of_range`]): a drive model's
/// validation error as (key, reason).
pub(crate) fn check_range(
    key: &'static str,
    value: u64,
    min: u64,
    max: u64,
    why: &str,
) -> Result<(), (&'static str, String)> {
    match crate::profile::limits::out_of_range(value, min, max, why) {
        Some(reason) => Err((key, reason)),
        None => Ok(()),
    }
}

/// A time of one step of one command (see [`crate::profile::limits::STEP_NS_MAX`]).
pub(crate) fn check_step_ns(key: &'static str, value: u64) -> Result<(), (&'static str, String)> {
    check_range(
        key,
        value,
        0,
        crate::profile::limits::STEP_NS_MAX,
        crate::profile::limits::STEP_NS_WHY,
    )
}

/// What the drive is asked to do, as decoded from the ATA command the bridge (or host) sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DriveCommand {
    pub write: bool,
    pub lba: u64,
    pub blocks: u32,
}

/// One TRIM range: `blocks` logical blocks from `lba`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrimRange {
    pub lba: u64,
    pub blocks: u64,
}

/// A write a power loss took from a drive's volatile cache before it reached the media: the
/// drive's `ordinal`-th write (counted from 0 in the order [`Drive::write`] took them), at
/// `lba` for `blocks` (a drive that caches pages loses a page of it at a time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LostWrite {
    pub ordinal: u64,
    pub lba: u64,
    pub blocks: u64,
}

/// Power on to ready of a drive without a spindle (SSD, the simple model): firmware boot and
/// loading the FTL's map, a fraction of a second. An assumption, not a datasheet figure (none
/// of the shipped SSD profiles' sources gives one): 500 ms.
pub const SOLID_STATE_READY_NS: u64 = 500_000_000;

/// Busy time and counters a drive reports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DriveStats {
    /// Busy time of the drive's most loaded part (model-specific; see each model).
    pub busy_ns: u64,
    pub commands: u64,
    pub bytes: u64,
    pub trims: u64,
    pub trimmed_bytes: u64,
}

/// Busy time of a drive's controller processor (SSD firmware cores).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcessorStats {
    pub cores: u32,
    /// Firmware time booked on all cores together.
    pub busy_ns: u64,
    /// Pieces of firmware work served (commands, TRIMs).
    pub operations: u64,
}

/// FTL figures of the SSD model.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SsdReport {
    /// Logical (4 KiB) pages the host wrote, counting each read-modify-written page once.
    pub host_pages_written: u64,
    /// NAND pages programmed (host data, read-modify-write and GC copies), in page units.
    pub nand_pages_programmed: f64,
    /// NAND pages programmed per host page written (1 = none; below 1 with compression).
    pub write_amplification: f64,
    /// Logical pages garbage collection relocated.
    pub gc_copies: u64,
    /// Partial-page host writes served as read-modify-write.
    pub read_modify_writes: u64,
    pub erases_total: u64,
    pub erases_max_per_block: u32,
    pub free_blocks: u64,
    pub free_blocks_min_per_die: u64,
    /// Logical pages currently mapped.
    pub mapped_pages: u64,
    pub trimmed_pages: u64,
    /// Host bytes written ÷ NAND bytes they took (1 without compression).
    pub compression_ratio: f64,
    /// Bytes of FTL state held in controller RAM (forward map, valid bitmap, per-block
    /// counters), measured from the simulator's allocations.
    pub mapping_ram_bytes: u64,
    /// Bytes the simulator holds for the physical→logical direction, which a real drive keeps
    /// on the NAND: each page's out-of-band area names its logical page (GC reads it back).
    pub reverse_map_bytes: u64,
    /// Hybrid (log-block) mapping only: merges by kind since the drive was built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merges: Option<MergeReport>,
    /// SLC-mode write cache only: its size, fill and traffic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slc_cache: Option<ssd::SlcCacheReport>,
}

/// Merges of the hybrid (log-block) FTL: switch (a log block filled in order becomes the data
/// block, no copy), partial (the rest of the data block copied into the log block first), full
/// (every current page of the logical block copied into a new block).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MergeReport {
    pub switch: u64,
    pub partial: u64,
    pub full: u64,
}

/// Mechanical figures of the HDD model.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HddReport {
    /// Commands that moved the head to another cylinder.
    pub seeks: u64,
    pub seek_ns_total: u64,
    pub rotational_wait_ns_total: u64,
    pub head_switches: u64,
    /// Reads served from the read-ahead segments without touching the media.
    pub read_cache_hits: u64,
    /// Writes acknowledged from the write-back cache before reaching the media.
    pub write_cache_absorbed: u64,
    /// Times NCQ served a queued read other than the oldest.
    pub reordered_reads: u64,
    /// Times the write-back cache wrote an entry other than the oldest to the media.
    pub reordered_destages: u64,
}

/// What one of a drive's caches holds at a moment, against its size. Read-only and off the
/// hot path: tests check that no cache ever holds more than it can (`tests/it/physics/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheOccupancy {
    /// Which cache (`write_buffer`, `read_ahead`, ...).
    pub name: &'static str,
    pub held_bytes: u64,
    /// Its size, from the drive's profile.
    pub capacity_bytes: u64,
}

/// Model-specific figures for the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "kebab-case")]
pub enum DriveModelReport {
    Simple,
    Ssd(SsdReport),
    Hdd(HddReport),
}

impl DriveModelReport {
    /// Flat `key = value` pairs (prefixed `sim.drive.`) for result tables.
    pub fn pairs(&self) -> Vec<(String, String)> {
        let value = serde_json::to_value(self).unwrap_or_default();
        let mut out = Vec::new();
        if let Some(map) = value.as_object() {
            for (k, v) in map {
                let text = match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                out.push((format!("sim.drive.{k}"), text));
            }
        }
        out
    }
}

/// A drive model. State persists between jobs (the same instance serves a whole session).
///
/// Reads go through the drive's queue: the simulator holds the reads the drive has accepted
/// (NCQ) and, whenever [`Drive::read_ready_ns`] says the drive can start one, asks
/// [`Drive::pick_read`] which, then books it with [`Drive::read`]. Drives that work on many
/// commands at once answer "now" and "the oldest"; an HDD answers when its head is free and
/// the command with the shortest positioning time.
pub trait Drive: Send {
    fn capacity_bytes(&self) -> u64;
    fn logical_block_bytes(&self) -> u32;
    /// NCQ depth the drive advertises (1 = no queueing).
    fn queue_depth(&self) -> u32;
    /// When the drive can start one of the queued reads (never before `now_ns`).
    fn read_ready_ns(&self, now_ns: u64, _queued: &[DriveCommand]) -> u64 {
        now_ns
    }
    /// Which of the queued reads (oldest first) to serve at `now_ns`.
    fn pick_read(&mut self, _now_ns: u64, _queued: &[DriveCommand]) -> usize {
        0
    }
    /// A read started at `now_ns`: when its data leaves the media (start, end, first piece).
    fn read(&mut self, now_ns: u64, command: &DriveCommand, rng: &mut ChaCha8Rng) -> Flow;
    /// Whether [`Drive::write`] needs the written bytes (on-the-fly compression).
    fn wants_payload(&self) -> bool {
        false
    }
    /// A write whose data arrives as `incoming` (its bytes in `payload` when the drive wants
    /// them): when the drive has absorbed it; `end_ns` is when it can report completion.
    fn write(
        &mut self,
        incoming: Flow,
        command: &DriveCommand,
        payload: Option<&[u8]>,
        rng: &mut ChaCha8Rng,
    ) -> Flow;
    /// [`Drive::write`] with the written bytes and, for each [`COMPRESSION_PIECE_BYTES`] piece
    /// of them (`compressed[k]` for the bytes from `k * COMPRESSION_PIECE_BYTES`), the piece's
    /// estimated compressed size when the caller kept it from an earlier write of the same
    /// bytes, else [`UNKNOWN_COMPRESSED_BYTES`]. The drive fills in the estimates it computes,
    /// so the caller can keep them; the result is exactly [`Drive::write`]'s (the estimate is
    /// a function of the piece's bytes alone). Default: the entries are ignored.
    fn write_payload(
        &mut self,
        incoming: Flow,
        command: &DriveCommand,
        payload: &[u8],
        _compressed: &mut [u32],
        rng: &mut ChaCha8Rng,
    ) -> Flow {
        self.write(incoming, command, Some(payload), rng)
    }
    /// TRIM ranges arriving at `now_ns`; returns the completion time.
    fn trim(&mut self, now_ns: u64, ranges: &[TrimRange]) -> u64;
    /// FLUSH CACHE arriving at `now_ns` (no queued command is at the drive): every write it
    /// acknowledged from a volatile cache goes to the media, timed by the model's own
    /// mechanics; returns when the last is there and the drive reports completion.
    fn flush(&mut self, now_ns: u64) -> u64;
    /// Writes [`Drive::write`] has taken (the next write's ordinal, see [`LostWrite`]).
    /// A model without a volatile cache loses nothing and need not count.
    fn writes_taken(&self) -> u64 {
        0
    }
    /// The ordinal of the oldest write that may be in a volatile cache only at `now_ns` (a
    /// lower bound: every older write is on the media); None when none may be.
    fn oldest_volatile_write(&self, _now_ns: u64) -> Option<u64> {
        None
    }
    /// The supply fails at `now_ns` and comes back: returns the writes the volatile cache
    /// held that had not reached the media then (lost), and leaves the drive as power-on
    /// leaves it (caches empty, nothing in progress), busy until it is ready
    /// [`Drive::power_on_ready_ns`] later. Default: no volatile cache, nothing lost.
    fn power_loss(&mut self, _now_ns: u64) -> Vec<LostWrite> {
        Vec::new()
    }
    /// From power on until the drive answers commands (an HDD's spin-up).
    fn power_on_ready_ns(&self) -> u64;
    /// Whether a read of a trimmed LBA returns zeroes, which its IDENTIFY then states (ATA word
    /// 69: DRAT and RZAT). The payload store reads trimmed ranges as zeroes on every drive;
    /// only a drive that unmaps on TRIM (an SSD's FTL) says so. Default: no.
    fn reads_zeroes_after_trim(&self) -> bool {
        false
    }
    fn stats(&self) -> DriveStats;
    /// The controller processor's busy time, for drives that model one (the report shows it
    /// as its own layer, `drive_cpu`, beside the media's `drive`).
    fn processor_stats(&self) -> Option<ProcessorStats> {
        None
    }
    /// Model-specific figures (FTL, mechanics).
    fn model_report(&self) -> DriveModelReport {
        DriveModelReport::Simple
    }
    /// What each of the drive's caches holds at `now_ns` (none for a model without caches, or
    /// one that does not expose them yet).
    fn cache_occupancy(&self, _now_ns: u64) -> Vec<CacheOccupancy> {
        Vec::new()
    }
}

/// Busy time of a drive part up to `horizon_ns`, the latest completion the drive reported:
/// work booked beyond it (a write cache's backlog, programs behind a write buffer) has not
/// happened yet as far as the host can tell, so it does not count towards utilisation.
pub(crate) fn busy_until_horizon(server: &crate::resource::Server, horizon_ns: u64) -> u64 {
    server
        .busy_ns
        .saturating_sub(server.busy_until_ns.saturating_sub(horizon_ns))
}

/// A bounded buffer (SSD write buffer, HDD write-back cache) as a ring of release times: entry
/// `k` can enter once entry `k - capacity` has left. Entries whose release time is not known
/// yet hold [`ReleaseRing::PENDING`].
#[derive(Clone, Debug)]
pub(crate) struct ReleaseRing {
    release_ns: Vec<u64>,
    next: u64,
}

impl ReleaseRing {
    pub const PENDING: u64 = u64::MAX;

    pub fn new(capacity: usize) -> ReleaseRing {
        ReleaseRing {
            release_ns: vec![0; capacity.max(1)],
            next: 0,
        }
    }

    /// Sequence number the next entry gets.
    pub fn next_seq(&self) -> u64 {
        self.next
    }

    /// When the slot the next entry needs frees up (PENDING if its occupant has no release time
    /// yet).
    pub fn slot_free_ns(&self) -> u64 {
        self.release_ns[(self.next % self.release_ns.len() as u64) as usize]
    }

    /// Take the next slot; its release time is set later with [`ReleaseRing::set`].
    pub fn push(&mut self, release_ns: u64) -> u64 {
        let seq = self.next;
        let len = self.release_ns.len() as u64;
        self.release_ns[(seq % len) as usize] = release_ns;
        self.next += 1;
        seq
    }

    /// When the last entry taken leaves (0 when none was taken). Every entry must have its
    /// release time (nothing staged).
    pub fn last_release_ns(&self) -> u64 {
        let last = self.release_ns.iter().copied().max().unwrap_or(0);
        debug_assert_ne!(last, Self::PENDING, "an entry is still staged");
        last
    }

    /// Entries still held at `now_ns`: released later, or not yet given a release time.
    pub fn held_at(&self, now_ns: u64) -> usize {
        // Slots never taken hold release time 0, which is never after the present.
        self.release_ns.iter().filter(|&&r| r > now_ns).count()
    }

    /// Slots whose entry is still held at `now_ns` (see [`ReleaseRing::held_at`]).
    pub fn held_slots(&self, now_ns: u64) -> impl Iterator<Item = usize> + '_ {
        (0..self.release_ns.len()).filter(move |&i| self.release_ns[i] > now_ns)
    }

    /// Power failed at `now_ns`: every entry still held is gone (its slot is free now).
    pub fn power_loss(&mut self, now_ns: u64) {
        for r in &mut self.release_ns {
            if *r > now_ns {
                *r = now_ns;
            }
        }
    }

    pub fn set(&mut self, seq: u64, release_ns: u64) {
        let len = self.release_ns.len() as u64;
        debug_assert!(
            seq < self.next && seq + len >= self.next,
            "entry left the ring"
        );
        self.release_ns[(seq % len) as usize] = release_ns;
    }
}
