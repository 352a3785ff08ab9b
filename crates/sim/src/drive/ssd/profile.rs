//! The SSD's profile (`model = "ssd"`): its keys, their limits and their validation.

use super::ftl_log_block::LogBlockGeometry;
use super::nand::Geometry;
use super::slc_cache::{self, SlcCacheProfile};
use super::LOGICAL_PAGE_BYTES;
use crate::drive::{check_range, check_step_ns};
use crate::profile::limits::SECTOR_BYTES;
use serde::{Deserialize, Serialize};

/// SSD parameters (a `model = "ssd"` drive profile).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsdProfile {
    pub description: String,
    pub channels: u32,
    pub dies_per_channel: u32,
    /// Planes per die: a program writes this many pages at once (multi-plane).
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    /// NAND page size, a multiple of 4096.
    pub page_bytes: u32,
    /// Capacity the host sees; the rest of the NAND is spare area.
    pub user_capacity_bytes: u64,
    pub page_read_ns: u64,
    pub page_program_ns: u64,
    pub block_erase_ns: u64,
    /// Transfer rate of one channel (the bus between controller and its dies).
    pub channel_rate_mb_s: u64,
    /// Embedded processor cores the controller runs its firmware on. Each serves one command's
    /// firmware work at a time; a command takes the core that can start it first. Required
    /// (the default only lets a profile with the retired `command_ns` get its own error).
    #[serde(default)]
    pub controller_cores: u32,
    /// Firmware time per command on one core (decode, map lookup or update, completion): the
    /// processor is busy for it, so queued commands wait for a core. Required.
    #[serde(default = "missing_u64")]
    pub command_cpu_ns: u64,
    /// Firmware time of a read command on one core, when the drive's documentation or a review
    /// shows it differs from other commands (default `command_cpu_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_cpu_ns: Option<u64>,
    /// Firmware time of a write command on one core (default `command_cpu_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_cpu_ns: Option<u64>,
    /// Time per command spent waiting on hardware (DMA, ECC or compression engines) that does
    /// not occupy a core: pure latency, overlapping across queued commands.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub command_latency_ns: u64,
    /// The retired `command_ns` key (a per-command latency before the processor model): only
    /// read so a profile that still has it gets a clear error.
    #[serde(default, rename = "command_ns", skip_serializing)]
    pub retired_command_ns: Option<u64>,
    /// Host pages the DRAM write buffer holds.
    pub write_buffer_pages: u32,
    /// Garbage collection runs on a die while it has fewer free blocks than this (page
    /// mapping; the log-block mapping reclaims log blocks instead and reserves its own blocks).
    pub gc_free_blocks_threshold: u32,
    /// NCQ depth the drive advertises.
    pub queue_depth: u32,
    /// Processor time of a TRIM command (on one core, after the drive's pending work).
    pub trim_command_ns: u64,
    /// Compress each logical page on the fly (SandForce-class controllers).
    #[serde(default)]
    pub compression: bool,
    /// Allocation unit of compressed data (divides 4096); ignored without compression.
    #[serde(default = "default_compression_slot_bytes")]
    pub compression_slot_bytes: u32,
    /// Sequential read-ahead buffer: when a read continues a stream the controller follows,
    /// it reads ahead beyond it into this buffer, so a stream of small sequential reads at
    /// queue depth 1 overlaps NAND reads with host transfers (0 = none). A multiple of 4096.
    /// Streams that hold read-ahead share it evenly.
    #[serde(default)]
    pub read_ahead_bytes: u32,
    /// Sequential streams the controller follows at once (its stream detectors), replaced
    /// least recently used first. No controller of the era publishes the number: the default
    /// is the shared [`DEFAULT_READ_AHEAD_STREAMS`].
    #[serde(
        default = "default_read_ahead_streams",
        skip_serializing_if = "is_default_read_ahead_streams"
    )]
    pub read_ahead_streams: u32,
    /// How the FTL maps logical pages: `page` (a page-mapping table, greedy GC; the default)
    /// or `log_block` (hybrid: block-mapped data blocks plus page-mapped log blocks, merged
    /// when reclaimed; `ftl_log_block.rs`).
    #[serde(default, skip_serializing_if = "Mapping::is_page")]
    pub mapping: Mapping,
    /// Random-write log blocks of the `log_block` mapping, over the whole drive: a multiple
    /// of the die count (each die has its share, plus one sequential log block).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub log_blocks: u32,
    /// How the firmware updates a logical page a write covers only partly (a sub-4 KiB or
    /// misaligned write): `buffered` (the default) reads the old page into the write buffer,
    /// merges, and the merged page joins write combining like any other; `copy_back` merges on
    /// the die that holds the old page with the NAND's internal data move (see
    /// [`PartialPageUpdate`]). A firmware property of the controller.
    #[serde(default, skip_serializing_if = "PartialPageUpdate::is_buffered")]
    pub partial_page_update: PartialPageUpdate,
    /// An SLC-mode write cache in front of the native (TLC/QLC) blocks (`slc_cache.rs`); the
    /// profile's `page_program_ns` is then the native program time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slc_cache: Option<SlcCacheProfile>,
}

/// How a partly written logical page is merged with its old data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartialPageUpdate {
    /// Old page read into the DRAM write buffer (reads go ahead of queued programs), merged
    /// there; the merged page is staged and programmed with other host pages (write combining,
    /// multi-plane, striped over the dies).
    #[default]
    Buffered,
    /// The die holding the old page senses it into its page register, the controller sends
    /// the new sectors into the register over the channel, and the die programs the register
    /// into a free page of its own block (ONFI 2.x copyback read and program with data
    /// modification, "internal data move": the old data never crosses the channel). The page
    /// register is held from the sense to the end of the program, so the die serves nothing
    /// else meanwhile (no read priority, no program suspend), and the program is one page on
    /// that die: no write combining, no multi-plane, no striping. The controller runs the
    /// sequence (sense, data in, program, status) on the die's channel as one, so the channel
    /// carries nothing else until the program ends: one merge at a time per channel.
    CopyBack,
}

impl PartialPageUpdate {
    fn is_buffered(&self) -> bool {
        *self == PartialPageUpdate::Buffered
    }
}

/// The FTL's mapping scheme.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mapping {
    #[default]
    Page,
    LogBlock,
}

impl Mapping {
    fn is_page(&self) -> bool {
        *self == Mapping::Page
    }
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// Marks a required key the file left out (checked by `validate`).
fn missing_u64() -> u64 {
    u64::MAX
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

/// Most controller cores a profile may ask for (controllers of the era had one to a few).
const CONTROLLER_CORES_MAX: u32 = 64;
/// Geometry limits: channels a controller drives, dies on one channel, planes of a die, NAND
/// page size.
const CHANNELS_MAX: u32 = 32;
const DIES_PER_CHANNEL_MAX: u32 = 16;
const PLANES_PER_DIE_MAX: u32 = 16;
const PAGE_BYTES_MAX: u32 = 64 * 1024;
/// Most NAND blocks (2^23: 4 TiB in blocks as small as 512 KiB; a 2 TB drive of 4 MiB blocks
/// has about 2^19) and allocation slots (2^30, 4 TiB of NAND in 4 KiB slots) a drive may have:
/// the simulator keeps ~16 bytes per block and 4-byte map entries per slot in RAM (the tables
/// start zeroed, so only the part a run touches takes memory).
const NAND_BLOCKS_MAX: u64 = 1 << 23;
const NAND_SLOTS_MAX: u64 = 1 << 30;
/// NAND timing limits, several times the slowest parts' datasheet figures.
const PAGE_READ_NS_MAX: u64 = 1_000_000;
const PAGE_PROGRAM_NS_MAX: u64 = 10_000_000;
const BLOCK_ERASE_NS_MAX: u64 = 100_000_000;
/// Largest DRAM write buffer, in 4 KiB host pages (256 MiB).
const WRITE_BUFFER_PAGES_MAX: u32 = 65_536;

/// Largest read-ahead a profile may ask for: controller read buffers of the era were well
/// below this.
const READ_AHEAD_BYTES_MAX: u32 = 16 * 1024 * 1024;

/// Sequential streams an SSD follows when its profile does not say. No SSD datasheet or review
/// of the era gives its controller's number of stream detectors; 4 is a shared assumption of
/// the order of the read segments disk firmware keeps at least (IBM Ultrastar DDRS: 3 or 6
/// segments; Fujitsu MAN3367 rounds a request below 3 up), not fitted to any figure (no
/// calibration scenario runs concurrent streams).
pub const DEFAULT_READ_AHEAD_STREAMS: u32 = 4;
/// Most streams a profile may ask for (each is a small record the firmware scans per read).
const READ_AHEAD_STREAMS_MAX: u32 = 64;

fn default_read_ahead_streams() -> u32 {
    DEFAULT_READ_AHEAD_STREAMS
}

fn is_default_read_ahead_streams(v: &u32) -> bool {
    *v == DEFAULT_READ_AHEAD_STREAMS
}

fn default_compression_slot_bytes() -> u32 {
    512
}

/// Why an SSD profile is impossible: (key, reason).
pub fn validate(p: &SsdProfile) -> Result<(), (&'static str, String)> {
    if p.retired_command_ns.is_some() {
        return Err((
            "command_ns",
            "no longer exists: the per-command firmware time is now `command_cpu_ns` (time on \
             one of `controller_cores` processor cores, serial per core) plus the optional \
             `command_latency_ns` (hardware waits that do not occupy a core)"
                .into(),
        ));
    }
    if p.controller_cores == 0 || p.controller_cores > CONTROLLER_CORES_MAX {
        return Err((
            "controller_cores",
            format!("required, 1..={CONTROLLER_CORES_MAX}"),
        ));
    }
    if p.command_cpu_ns == missing_u64() {
        return Err(("command_cpu_ns", "required".into()));
    }
    if !p.read_ahead_bytes.is_multiple_of(LOGICAL_PAGE_BYTES)
        || p.read_ahead_bytes > READ_AHEAD_BYTES_MAX
    {
        return Err((
            "read_ahead_bytes",
            format!(
                "{} is impossible: a multiple of {LOGICAL_PAGE_BYTES} up to {READ_AHEAD_BYTES_MAX}",
                p.read_ahead_bytes
            ),
        ));
    }
    check_range(
        "read_ahead_streams",
        p.read_ahead_streams.into(),
        1,
        READ_AHEAD_STREAMS_MAX.into(),
        "controllers follow a few sequential streams",
    )?;
    let positive = [
        ("pages_per_block", p.pages_per_block.into()),
        ("user_capacity_bytes", p.user_capacity_bytes),
    ];
    for (key, v) in positive {
        if v == 0 {
            return Err((key, "must be positive".into()));
        }
    }
    check_range(
        "channels",
        p.channels.into(),
        1,
        CHANNELS_MAX.into(),
        "SSD controllers drive at most 32 channels",
    )?;
    check_range(
        "dies_per_channel",
        p.dies_per_channel.into(),
        1,
        DIES_PER_CHANNEL_MAX.into(),
        "at most 16 dies share a channel",
    )?;
    check_range(
        "planes_per_die",
        p.planes_per_die.into(),
        1,
        PLANES_PER_DIE_MAX.into(),
        "NAND dies have 1 to 16 planes",
    )?;
    check_range(
        "blocks_per_plane",
        p.blocks_per_plane.into(),
        1,
        NAND_BLOCKS_MAX,
        "the simulator keeps state per block",
    )?;
    if p.page_bytes == 0
        || !p.page_bytes.is_multiple_of(LOGICAL_PAGE_BYTES)
        || p.page_bytes > PAGE_BYTES_MAX
    {
        return Err((
            "page_bytes",
            format!(
                "must be a multiple of {LOGICAL_PAGE_BYTES} in \
                 {LOGICAL_PAGE_BYTES}..={PAGE_BYTES_MAX}, got {} (NAND pages are 2 to 16 KiB)",
                p.page_bytes
            ),
        ));
    }
    check_range(
        "page_read_ns",
        p.page_read_ns,
        0,
        PAGE_READ_NS_MAX,
        "a NAND page read takes 25 to 150 us",
    )?;
    check_range(
        "page_program_ns",
        p.page_program_ns,
        0,
        PAGE_PROGRAM_NS_MAX,
        "a NAND page program takes 0.2 to 3 ms",
    )?;
    check_range(
        "block_erase_ns",
        p.block_erase_ns,
        0,
        BLOCK_ERASE_NS_MAX,
        "a NAND block erase takes 1.5 to 10 ms",
    )?;
    check_range(
        "channel_rate_mb_s",
        p.channel_rate_mb_s,
        1,
        crate::profile::limits::RATE_MB_S_MAX,
        crate::profile::limits::RATE_MB_S_WHY,
    )?;
    check_step_ns("command_cpu_ns", p.command_cpu_ns)?;
    check_step_ns("command_latency_ns", p.command_latency_ns)?;
    check_step_ns("read_cpu_ns", p.read_cpu_ns.unwrap_or(0))?;
    check_step_ns("write_cpu_ns", p.write_cpu_ns.unwrap_or(0))?;
    check_step_ns("trim_command_ns", p.trim_command_ns)?;
    check_range(
        "write_buffer_pages",
        p.write_buffer_pages.into(),
        1,
        WRITE_BUFFER_PAGES_MAX.into(),
        "a DRAM write buffer of at most 256 MiB",
    )?;
    if !p
        .user_capacity_bytes
        .is_multiple_of(u64::from(LOGICAL_PAGE_BYTES))
    {
        return Err((
            "user_capacity_bytes",
            format!("must be a multiple of {LOGICAL_PAGE_BYTES}"),
        ));
    }
    if p.compression
        && (p.compression_slot_bytes < SECTOR_BYTES
            || !LOGICAL_PAGE_BYTES.is_multiple_of(p.compression_slot_bytes))
    {
        return Err((
            "compression_slot_bytes",
            format!("must divide {LOGICAL_PAGE_BYTES} and be at least {SECTOR_BYTES}"),
        ));
    }
    if p.gc_free_blocks_threshold < 2 {
        return Err((
            "gc_free_blocks_threshold",
            "must be at least 2 (one block for the host, one for GC copies)".into(),
        ));
    }
    let geometry = Geometry::new(p);
    let dies = u64::from(geometry.dies);
    let blocks_per_die = u64::from(geometry.blocks_per_die);
    if geometry.slots_per_block > u64::from(u16::MAX) {
        return Err((
            "pages_per_block",
            "block holds too many allocation slots".into(),
        ));
    }
    if geometry.total_blocks() > NAND_BLOCKS_MAX {
        return Err((
            "blocks_per_plane",
            format!(
                "channels x dies_per_channel x planes_per_die x blocks_per_plane = {} blocks: \
                 at most {NAND_BLOCKS_MAX} (the simulator keeps state per block)",
                geometry.total_blocks()
            ),
        ));
    }
    if geometry.total_slots() > NAND_SLOTS_MAX {
        return Err((
            "blocks_per_plane",
            format!(
                "{} blocks x pages_per_block x page_bytes make {} allocation slots of {} bytes: \
                 at most {NAND_SLOTS_MAX} (2^30, 4 TiB of NAND in 4 KiB slots; the simulator \
                 keeps a map entry per slot)",
                geometry.total_blocks(),
                geometry.total_slots(),
                geometry.slot_bytes
            ),
        ));
    }
    // Spare blocks must cover the GC reserve and both write frontiers on every die.
    let reserve_blocks = dies * (u64::from(p.gc_free_blocks_threshold) + 2);
    let user_blocks = p.user_capacity_bytes.div_ceil(geometry.block_bytes());
    if user_blocks + reserve_blocks >= dies * blocks_per_die {
        return Err((
            "user_capacity_bytes",
            format!(
                "leaves no spare area: {user_blocks} blocks of user data + {reserve_blocks} \
                 reserved (gc_free_blocks_threshold + 2 per die) exceed the {} blocks of NAND \
                 (channels x dies_per_channel x planes_per_die x blocks_per_plane, each of \
                 pages_per_block x page_bytes)",
                dies * blocks_per_die
            ),
        ));
    }
    if p.queue_depth == 0 || p.queue_depth > crate::profile::limits::NCQ_TAGS_MAX {
        return Err((
            "queue_depth",
            format!("must be 1..={}", crate::profile::limits::NCQ_TAGS_MAX),
        ));
    }
    validate_mapping(p, &geometry)?;
    validate_slc_cache(p)
}

/// The `[slc_cache]` table: only on the page map's buffered write path, whose programs it
/// times.
fn validate_slc_cache(p: &SsdProfile) -> Result<(), (&'static str, String)> {
    let Some(cache) = &p.slc_cache else {
        return Ok(());
    };
    if p.mapping == Mapping::LogBlock {
        return Err((
            "slc_cache",
            "the SLC-mode cache is modelled on the page mapping".into(),
        ));
    }
    if p.partial_page_update == PartialPageUpdate::CopyBack {
        return Err((
            "slc_cache",
            "copy_back merges program on the die outside the cache's timing: use buffered".into(),
        ));
    }
    slc_cache::validate(cache, p.user_capacity_bytes, p.page_program_ns)
}

/// The `mapping` and `log_blocks` keys.
fn validate_mapping(p: &SsdProfile, geometry: &Geometry) -> Result<(), (&'static str, String)> {
    match p.mapping {
        Mapping::Page if p.log_blocks != 0 => Err((
            "log_blocks",
            "only the log_block mapping has log blocks".into(),
        )),
        Mapping::Page => Ok(()),
        Mapping::LogBlock if p.partial_page_update == PartialPageUpdate::CopyBack => Err((
            "partial_page_update",
            "copy_back places the merged page on its die's frontier: it needs the page mapping"
                .into(),
        )),
        Mapping::LogBlock => {
            if p.compression {
                return Err((
                    "compression",
                    "the log_block mapping keeps each logical page at a fixed offset of its \
                     block: compression needs the page mapping"
                        .into(),
                ));
            }
            if p.page_bytes != LOGICAL_PAGE_BYTES {
                return Err((
                    "page_bytes",
                    format!("the log_block mapping maps {LOGICAL_PAGE_BYTES}-byte NAND pages"),
                ));
            }
            if p.log_blocks == 0 || !p.log_blocks.is_multiple_of(geometry.dies) {
                return Err((
                    "log_blocks",
                    format!(
                        "{} is impossible: a positive multiple of the {} dies (each die has \
                         its share)",
                        p.log_blocks, geometry.dies
                    ),
                ));
            }
            let g = log_block_geometry(p, geometry);
            let needed = g.blocks_needed_per_die();
            if needed > u64::from(geometry.blocks_per_die) {
                return Err((
                    "log_blocks",
                    format!(
                        "{} per die do not fit: {} data blocks + {} random logs + a sequential \
                         log + a merge target = {needed} blocks > {} per die",
                        g.random_logs_per_die,
                        g.data_blocks_per_die(),
                        g.random_logs_per_die,
                        geometry.blocks_per_die
                    ),
                ));
            }
            Ok(())
        }
    }
}

pub(super) fn log_block_geometry(p: &SsdProfile, geometry: &Geometry) -> LogBlockGeometry {
    LogBlockGeometry {
        dies: geometry.dies,
        blocks_per_die: geometry.blocks_per_die,
        pages_per_block: p.pages_per_block,
        logical_pages: p.user_capacity_bytes / u64::from(LOGICAL_PAGE_BYTES),
        random_logs_per_die: p.log_blocks / geometry.dies,
    }
}
