//! The SLC-mode write cache of consumer TLC/QLC drives (Samsung's TurboWrite, Crucial's dynamic
//! write acceleration): host data is programmed first into blocks run one bit per cell, which
//! programs several times faster than the native mode; the firmware later folds it into native
//! blocks while the drive is idle. A write that finds the cache full goes straight to native
//! blocks at the native program time ("after TurboWrite" speed): the write cliff.
//!
//! The model keeps the cache's timing and capacity, not its placement: the FTL maps pages as it
//! does without the cache (`ftl_page.rs`), and this file decides how long each program takes
//! and books the fold's die time. Each die holds its share of the cache (programs are striped
//! over the dies round robin, so they fill together). See decision 0029.

use super::{SsdDrive, LOGICAL_PAGE_BYTES};
use crate::drive::check_range;
use serde::{Deserialize, Serialize};

/// The `[slc_cache]` table of an SSD profile: sizes and timings of the SLC-mode region, from the
/// drive's data sheet or a review (cite them in the profile).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlcCacheProfile {
    /// Bytes of the region reserved for SLC mode whatever the drive holds (Samsung's "default
    /// TurboWrite region").
    pub static_bytes: u64,
    /// Most bytes of SLC-mode cache the firmware adds from free native blocks (Samsung's
    /// "Intelligent TurboWrite region"); it shrinks when the free space run one bit per cell
    /// would not hold it.
    #[serde(default)]
    pub dynamic_bytes: u64,
    /// Bits per cell of the native mode (3 for TLC, 4 for QLC): a byte of SLC-mode cache takes
    /// the cells of this many native bytes.
    pub native_bits_per_cell: u32,
    /// Program time of one page in SLC mode (the profile's `page_program_ns` is the native
    /// one).
    pub page_program_ns: u64,
    /// Read time of one SLC-mode page: the fold reads the cached data back before programming
    /// it into native blocks.
    pub page_read_ns: u64,
}

/// Validation limits: SLC-mode pages program in 0.1 to 0.5 ms and read in 20 to 60 us on the
/// parts of the era; the bounds leave room and refuse unit slips.
const SLC_PAGE_PROGRAM_NS_MAX: u64 = 2_000_000;
const SLC_PAGE_READ_NS_MAX: u64 = 500_000;
/// Largest cache a profile may give: the most NAND a profile may have (2^30 slots of 4 KiB).
const CACHE_BYTES_MAX: u64 = 1 << 42;

/// Why an `[slc_cache]` table is impossible: (key, reason).
pub(super) fn validate(
    p: &SlcCacheProfile,
    user_capacity_bytes: u64,
    native_program_ns: u64,
) -> Result<(), (&'static str, String)> {
    check_range(
        "slc_cache.native_bits_per_cell",
        p.native_bits_per_cell.into(),
        2,
        4,
        "MLC, TLC or QLC cells run one bit per cell",
    )?;
    let why = "at most the 4 TiB of NAND a profile may have";
    check_range(
        "slc_cache.static_bytes",
        p.static_bytes,
        0,
        CACHE_BYTES_MAX,
        why,
    )?;
    check_range(
        "slc_cache.dynamic_bytes",
        p.dynamic_bytes,
        0,
        CACHE_BYTES_MAX,
        why,
    )?;
    let cache_bytes = p.static_bytes + p.dynamic_bytes;
    if cache_bytes == 0 {
        return Err((
            "slc_cache.static_bytes",
            "static_bytes + dynamic_bytes must be positive".into(),
        ));
    }
    let cells = user_capacity_bytes / u64::from(p.native_bits_per_cell);
    if cache_bytes > cells {
        return Err((
            "user_capacity_bytes",
            format!(
                "{user_capacity_bytes} bytes run one bit per cell hold {cells}: less than the \
                 slc_cache's static_bytes + dynamic_bytes = {cache_bytes}"
            ),
        ));
    }
    check_range(
        "slc_cache.page_program_ns",
        p.page_program_ns,
        1,
        SLC_PAGE_PROGRAM_NS_MAX.min(native_program_ns),
        "an SLC-mode program takes 0.1 to 0.5 ms, less than the native page_program_ns",
    )?;
    check_range(
        "slc_cache.page_read_ns",
        p.page_read_ns,
        0,
        SLC_PAGE_READ_NS_MAX,
        "an SLC-mode page read takes 20 to 60 us",
    )
}

/// The cache's state on a drive.
pub(super) struct SlcCache {
    profile: SlcCacheProfile,
    /// Bytes each die holds in SLC mode, not yet folded.
    held_bytes: Vec<u64>,
    /// Counters for the report.
    slc_programmed_bytes: u64,
    native_programmed_bytes: u64,
    folded_bytes: u64,
}

/// The cache's figures for the report.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SlcCacheReport {
    /// Cache size now: the static region plus what free space allows of the dynamic one.
    pub capacity_bytes: u64,
    /// Bytes in the cache not yet folded into native blocks.
    pub held_bytes: u64,
    /// Host bytes programmed in SLC mode.
    pub slc_programmed_bytes: u64,
    /// Host bytes programmed straight into native blocks (the cache was full).
    pub native_programmed_bytes: u64,
    /// Bytes folded from the cache into native blocks during idle time.
    pub folded_bytes: u64,
}

impl SlcCache {
    pub(super) fn new(profile: &SlcCacheProfile, dies: usize) -> SlcCache {
        SlcCache {
            profile: profile.clone(),
            held_bytes: vec![0; dies],
            slc_programmed_bytes: 0,
            native_programmed_bytes: 0,
            folded_bytes: 0,
        }
    }

    /// Cache size with `free_bytes` of the user capacity unwritten: the dynamic part takes
    /// `native_bits_per_cell` native bytes of free space per byte it caches.
    fn capacity_bytes(&self, free_bytes: u64) -> u64 {
        let p = &self.profile;
        let dynamic = p
            .dynamic_bytes
            .min(free_bytes / u64::from(p.native_bits_per_cell));
        p.static_bytes + dynamic
    }
}

impl SsdDrive {
    /// User bytes no logical page maps: what the dynamic SLC region may use.
    fn free_user_bytes(&self) -> u64 {
        let mapped = self.mapped_pages * u64::from(LOGICAL_PAGE_BYTES);
        self.profile.user_capacity_bytes.saturating_sub(mapped)
    }

    /// Program time of `bytes` of host data about to be programmed on `die`: SLC mode while
    /// the die's share of the cache has room, else the native time. Without a cache, the
    /// profile's `page_program_ns`.
    pub(super) fn host_program_ns(&mut self, die: usize, bytes: u64) -> u64 {
        let native_ns = self.profile.page_program_ns;
        let free = self.free_user_bytes();
        let dies = self.dies.len() as u64;
        let Some(cache) = self.slc.as_mut() else {
            return native_ns;
        };
        let share = cache.capacity_bytes(free) / dies;
        if cache.held_bytes[die] + bytes <= share {
            cache.held_bytes[die] += bytes;
            cache.slc_programmed_bytes += bytes;
            cache.profile.page_program_ns
        } else {
            cache.native_programmed_bytes += bytes;
            native_ns
        }
    }

    /// Fold cached data into native blocks in the time each die was idle before `now_ns` (no
    /// host command outstanding and the die's own work done). The firmware starts only fold
    /// steps that end before the host comes back (a multi-plane SLC read, then a native
    /// program of the same bytes), so a fold never delays a host command: gaps shorter than
    /// a step, as between the commands of a streaming write, fold nothing.
    pub(super) fn fold_while_idle(&mut self, now_ns: u64) {
        let Some(cache) = self.slc.as_mut() else {
            return;
        };
        if self.staging.pages > 0 {
            // Host pages wait in the write buffer for their program: the drive is not idle.
            return;
        }
        let step_bytes = self.geometry.slots_per_program * u64::from(self.geometry.slot_bytes);
        let step_ns = cache.profile.page_read_ns + self.profile.page_program_ns;
        for (die, held) in self.dies.iter_mut().zip(cache.held_bytes.iter_mut()) {
            let idle_from = self
                .acknowledged_ns
                .max(die.unit.busy_until_ns)
                .max(die.read_busy_until_ns);
            if *held == 0 || idle_from >= now_ns {
                continue;
            }
            let steps = ((now_ns - idle_from) / step_ns).min(held.div_ceil(step_bytes));
            if steps == 0 {
                continue;
            }
            let folded = (steps * step_bytes).min(*held);
            *held -= folded;
            cache.folded_bytes += folded;
            die.unit.reserve(idle_from, steps * step_ns, 0);
            die.register_page = super::nand::NO_PAGE;
        }
    }

    /// The cache's figures, when the profile has one.
    pub(super) fn slc_cache_report(&self) -> Option<SlcCacheReport> {
        let cache = self.slc.as_ref()?;
        Some(SlcCacheReport {
            capacity_bytes: cache.capacity_bytes(self.free_user_bytes()),
            held_bytes: cache.held_bytes.iter().sum(),
            slc_programmed_bytes: cache.slc_programmed_bytes,
            native_programmed_bytes: cache.native_programmed_bytes,
            folded_bytes: cache.folded_bytes,
        })
    }
}
