//! SSD model: NAND geometry and timings, a page-mapping FTL (flat forward map and per-block
//! valid bitmaps in controller RAM; the physical→logical direction written into each page's
//! out-of-band area on the NAND and read back by garbage collection), a write buffer that gathers host pages into multi-plane
//! programs striped over the dies, read-modify-write of partial pages, greedy garbage
//! collection below a free-block threshold, TRIM, optional on-the-fly compression, and the
//! figures that show the drive's state (write amplification, GC copies, erases, free blocks).
//!
//! With `mapping = "log_block"` the hybrid map of `ftl_log_block.rs` replaces the page map
//! (block-mapped data blocks, page-mapped log blocks, merges instead of greedy GC); the NAND
//! timing, write buffer, reads and TRIM path here serve both.
//!
//! Data layout: the FTL maps 4 KiB logical pages to *slots*, the unit NAND space is allocated
//! in: a whole 4 KiB without compression, `compression_slot_bytes` with it (a compressed page
//! takes as many consecutive slots as its compressed size needs).

use super::compress::compressed_bytes;
use super::ftl_log_block::{LogBlockFtl, LogBlockGeometry, NandWork};
use super::{
    busy_until_horizon, check_range, check_step_ns, CacheOccupancy, Drive, DriveCommand,
    DriveModelReport, DriveStats, MergeReport, ProcessorStats, ReleaseRing, SsdReport, TrimRange,
};
use crate::profile::SECTOR_BYTES;
use crate::resource::{bytes_ns, ps_per_byte, Calendar, Flow, Server};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The FTL's mapping unit (logical page).
pub const LOGICAL_PAGE_BYTES: u32 = 4096;
const SECTORS_PER_LOGICAL_PAGE: u64 = (LOGICAL_PAGE_BYTES / SECTOR_BYTES) as u64;
const BYTES_PER_MB: f64 = 1e6;
/// Bytes of one entry of the usual page-mapping table (a 32-bit physical page number).
const MAP_ENTRY_BYTES: u64 = 4;
/// Marks an unmapped logical page or a slot holding no extent start.
const NONE: u32 = u32::MAX;

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
        crate::profile::RATE_MB_S_MAX,
        crate::profile::RATE_MB_S_WHY,
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
    if p.queue_depth == 0 || p.queue_depth > crate::profile::NCQ_TAGS_MAX {
        return Err((
            "queue_depth",
            format!("must be 1..={}", crate::profile::NCQ_TAGS_MAX),
        ));
    }
    validate_mapping(p, &geometry)
}

/// The `mapping` and `log_blocks` keys.
fn validate_mapping(p: &SsdProfile, geometry: &Geometry) -> Result<(), (&'static str, String)> {
    match p.mapping {
        Mapping::Page if p.log_blocks != 0 => Err((
            "log_blocks",
            "only the log_block mapping has log blocks".into(),
        )),
        Mapping::Page => Ok(()),
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

fn log_block_geometry(p: &SsdProfile, geometry: &Geometry) -> LogBlockGeometry {
    LogBlockGeometry {
        dies: geometry.dies,
        blocks_per_die: geometry.blocks_per_die,
        pages_per_block: p.pages_per_block,
        logical_pages: p.user_capacity_bytes / u64::from(LOGICAL_PAGE_BYTES),
        random_logs_per_die: p.log_blocks / geometry.dies,
    }
}

/// Derived sizes.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    dies: u32,
    blocks_per_die: u32,
    slot_bytes: u32,
    slots_per_page: u64,
    slots_per_block: u64,
    /// Slots one multi-plane program writes.
    slots_per_program: u64,
    /// Slots of one full logical page (uncompressed).
    slots_per_logical_page: u32,
}

impl Geometry {
    fn new(p: &SsdProfile) -> Geometry {
        let slot_bytes = if p.compression {
            p.compression_slot_bytes
        } else {
            LOGICAL_PAGE_BYTES
        };
        let slots_per_page = u64::from(p.page_bytes / slot_bytes);
        Geometry {
            dies: p.channels * p.dies_per_channel,
            blocks_per_die: p.planes_per_die * p.blocks_per_plane,
            slot_bytes,
            slots_per_page,
            slots_per_block: slots_per_page * u64::from(p.pages_per_block),
            slots_per_program: slots_per_page * u64::from(p.planes_per_die),
            slots_per_logical_page: LOGICAL_PAGE_BYTES / slot_bytes,
        }
    }
    fn block_bytes(&self) -> u64 {
        self.slots_per_block * u64::from(self.slot_bytes)
    }
    fn total_blocks(&self) -> u64 {
        u64::from(self.dies) * u64::from(self.blocks_per_die)
    }
    fn total_slots(&self) -> u64 {
        self.total_blocks() * self.slots_per_block
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockState {
    Free,
    /// A write frontier (host or GC) is filling it.
    Open,
    /// Full; a garbage-collection candidate.
    Closed,
}

/// Where a die's next extent goes.
#[derive(Clone, Copy, Debug)]
struct Frontier {
    block: u32,
    next_slot: u64,
}

impl Frontier {
    const EMPTY: Frontier = Frontier {
        block: NONE,
        next_slot: 0,
    };
}

struct Die {
    free_blocks: Vec<u32>,
    host: Frontier,
    gc: Frontier,
    /// Closed blocks by valid-slot count: head of each doubly linked list.
    bucket_heads: Vec<u32>,
    /// Programs, erases and GC booked in order.
    unit: Server,
    /// When the die's last read ends: reads go ahead of queued programs (read priority with
    /// program suspend), serialised only among themselves, and push the program backlog back
    /// by their duration.
    read_busy_until_ns: u64,
    /// The physical page whose data sits in the die's page register after its last sense
    /// (NO_PAGE after an erase): another logical page of it needs only the channel transfer,
    /// which is what an 8 KiB page or compression (several logical pages per NAND page) gives.
    register_page: u64,
    register_ready_ns: u64,
}

/// `Die::register_page` when the register holds nothing reusable.
const NO_PAGE: u64 = u64::MAX;

/// Host pages gathered for the next program on one die.
#[derive(Clone, Copy, Debug, Default)]
struct Staging {
    slots: u64,
    /// Write-buffer sequence numbers of the host pages waiting in this program.
    first_seq: u64,
    pages: u64,
    /// When all of their data is in the buffer.
    data_ready_ns: u64,
}

/// The controller's processor: `controller_cores` cores, each a calendar that serves one piece
/// of firmware work at a time. Work goes to the core that can start it first, into the first
/// gap that holds it, so a read arriving while a write's data is still on its way runs before
/// the write's firmware work booked for later.
struct Processor {
    cores: Vec<Calendar>,
    /// Drive-side completion times of the last `queue_depth` commands (a ring). At most
    /// `queue_depth` commands are at the drive at once, so when one arrives at least one of
    /// those has completed: their earliest completion is a time already past. Writes are not
    /// told the current time; they let the calendars forget finished work up to this time.
    recent_done_ns: Vec<u64>,
    next_done: usize,
    /// The earliest of `recent_done_ns` when it was last scanned, and the completions noted
    /// since. A time that was past stays past, and calendars only forget bookings that end by
    /// the time given, none of which can move work ready at or after the present (see
    /// `Calendar::book`): so the scan of the whole ring (a twentieth of the instructions of
    /// 4 KiB QD32 writes) is done once per ring's worth of completions, not on every write.
    past_ns: u64,
    noted_since_scan: usize,
}

impl Processor {
    fn new(cores: u32, queue_depth: u32) -> Processor {
        Processor {
            cores: vec![Calendar::default(); cores.max(1) as usize],
            recent_done_ns: vec![0; queue_depth.max(1) as usize],
            next_done: 0,
            past_ns: 0,
            noted_since_scan: 0,
        }
    }

    /// A time no later than the present (see `recent_done_ns` and `past_ns`), for a command
    /// that has just reached the drive.
    fn past_ns(&mut self) -> u64 {
        if self.noted_since_scan >= self.recent_done_ns.len() {
            self.past_ns = self.recent_done_ns.iter().copied().min().unwrap_or(0);
            self.noted_since_scan = 0;
        }
        self.past_ns
    }

    fn note_done(&mut self, done_ns: u64) {
        self.recent_done_ns[self.next_done] = done_ns;
        self.next_done = (self.next_done + 1) % self.recent_done_ns.len();
        self.noted_since_scan += 1;
    }

    /// Book `cpu_ns` of firmware work ready at `ready_ns` on the core that starts it first;
    /// returns when it ends. `past_ns` is a time already past (finished work is forgotten).
    fn run(&mut self, past_ns: u64, ready_ns: u64, cpu_ns: u64) -> u64 {
        if cpu_ns == 0 {
            return ready_ns;
        }
        let mut core = 0;
        if self.cores.len() > 1 {
            let mut best = u64::MAX;
            for (i, c) in self.cores.iter().enumerate() {
                let start = c.start_for(ready_ns, cpu_ns);
                if start < best {
                    (core, best) = (i, start);
                }
            }
        }
        self.cores[core].reserve(past_ns, ready_ns, cpu_ns, 0)
    }

    fn stats(&self) -> ProcessorStats {
        ProcessorStats {
            cores: self.cores.len() as u32,
            busy_ns: self.cores.iter().map(|c| c.busy_ns).sum(),
            operations: self.cores.iter().map(|c| c.operations).sum(),
        }
    }
}

/// A table of `u32` entries (slots, logical pages) that all start as NONE, stored complemented
/// so that NONE is held as 0: a fresh table is then a zeroed allocation, which the allocator
/// takes as fresh zero pages (calloc, mmap) instead of writing 0xFF over the tens of megabytes
/// of the forward map and out-of-band areas at set-up (71 M instructions of memset on the
/// 32 GB drive), and pages a run never touches are never faulted in.
#[derive(Clone, Debug)]
struct NoneTable(Vec<u32>);

impl NoneTable {
    fn new(len: usize) -> NoneTable {
        NoneTable(vec![0; len])
    }

    #[inline]
    fn get(&self, index: usize) -> u32 {
        !self.0[index]
    }

    #[inline]
    fn set(&mut self, index: usize, value: u32) {
        self.0[index] = !value;
    }

    /// Set every entry in `range` back to NONE.
    fn erase(&mut self, range: std::ops::Range<usize>) {
        self.0[range].fill(!NONE);
    }

    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().map(|&v| !v)
    }

    /// Bytes allocated.
    fn bytes(&self) -> usize {
        self.0.capacity() * std::mem::size_of::<u32>()
    }
}

/// A sequential read stream the controller follows (one stream detector) and its read-ahead:
/// when each logical page from `first_lpn` on is in the controller (contiguous pages).
#[derive(Clone, Debug)]
struct ReadStream {
    /// Logical page just after the stream's last read: a read starting here continues it.
    next_lpn: u64,
    first_lpn: u64,
    ready_ns: VecDeque<u64>,
    /// When the stream was last read (`stream_uses`), for least-recently-used replacement.
    last_used: u64,
}

impl ReadStream {
    /// The time logical page `lpn` is in the stream's read-ahead, taking it out (pages before
    /// it are dropped: the stream moved past them); None when it was not read ahead.
    fn take(&mut self, lpn: u64) -> Option<u64> {
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

/// The SSD.
pub struct SsdDrive {
    profile: SsdProfile,
    geometry: Geometry,
    logical_pages: u64,
    /// Logical page → first slot of its extent (NONE = unmapped).
    forward: NoneTable,
    /// Slots of each logical page's extent (compression only; otherwise all are 1).
    extent_slots: Vec<u8>,
    /// Controller RAM: one bit per slot, set where a valid extent starts (GC reads only the
    /// pages these bits name).
    valid_bits: Vec<u64>,
    /// Simulated NAND contents, not controller RAM: the logical page each extent-start slot's
    /// out-of-band area records, written with the program and erased with the block (NONE =
    /// erased). Stale entries stay until the erase, as on NAND; only GC reads it.
    oob_lpn: NoneTable,
    valid_slots: Vec<u16>,
    state: Vec<BlockState>,
    bucket_prev: Vec<u32>,
    bucket_next: Vec<u32>,
    erase_count: Vec<u32>,
    dies: Vec<Die>,
    channels: Vec<Server>,
    processor: Processor,
    staging: Staging,
    /// Die that receives the next program (round robin).
    next_die: usize,
    buffer: ReleaseRing,
    /// Logical page held in each write-buffer entry (the buffer keeps the last
    /// `write_buffer_pages` pages written, so reads of them need no NAND access).
    buffer_lpns: Vec<u32>,
    /// One bit per logical page: set when written, so reads of pages never in the buffer skip
    /// the scan of `buffer_lpns`; cleared lazily when a scan finds the page gone.
    buffer_maybe: Vec<u64>,
    channel_byte_ps: u64,
    /// Latest completion time the drive has reported.
    acknowledged_ns: u64,
    /// The sequential read streams the controller follows (at most `read_ahead_streams`),
    /// each with its share of the read-ahead buffer.
    streams: Vec<ReadStream>,
    /// Reads so far, the streams' recency clock.
    stream_uses: u64,
    // Counters.
    commands: u64,
    bytes: u64,
    trims: u64,
    trimmed_bytes: u64,
    trimmed_pages: u64,
    host_pages_written: u64,
    host_bytes_compressed: u64,
    nand_slots_written: u64,
    gc_copies: u64,
    read_modify_writes: u64,
    mapped_pages: u64,
    /// The hybrid map when `mapping = "log_block"`; the page-map fields above are then empty.
    log: Option<LogBlockFtl>,
}

impl SsdDrive {
    /// Build a fresh (never written, all blocks erased) drive. The profile must be validated.
    pub fn new(profile: &SsdProfile) -> SsdDrive {
        let g = Geometry::new(profile);
        let logical_pages = profile.user_capacity_bytes / u64::from(LOGICAL_PAGE_BYTES);
        let log = (profile.mapping == Mapping::LogBlock)
            .then(|| LogBlockFtl::new(log_block_geometry(profile, &g)));
        // The page map's per-page and per-block state is not needed with the hybrid map.
        let page_mapped = log.is_none();
        let per_page = |n: u64| if page_mapped { n as usize } else { 0 };
        let blocks = per_page(g.total_blocks());
        let dies = (0..g.dies)
            .map(|d| {
                let first = d * g.blocks_per_die;
                Die {
                    // Popped from the back: lowest block first (the hybrid map keeps its own).
                    free_blocks: if page_mapped {
                        (first..first + g.blocks_per_die).rev().collect()
                    } else {
                        Vec::new()
                    },
                    host: Frontier::EMPTY,
                    gc: Frontier::EMPTY,
                    bucket_heads: vec![NONE; g.slots_per_block as usize + 1],
                    unit: Server::default(),
                    read_busy_until_ns: 0,
                    register_page: NO_PAGE,
                    register_ready_ns: 0,
                }
            })
            .collect();
        SsdDrive {
            geometry: g,
            logical_pages,
            forward: NoneTable::new(per_page(logical_pages)),
            extent_slots: if profile.compression {
                vec![0; logical_pages as usize]
            } else {
                Vec::new()
            },
            valid_bits: vec![0; per_page(g.total_slots()).div_ceil(64)],
            oob_lpn: NoneTable::new(per_page(g.total_slots())),
            valid_slots: vec![0; blocks],
            state: vec![BlockState::Free; blocks],
            bucket_prev: vec![NONE; blocks],
            bucket_next: vec![NONE; blocks],
            erase_count: vec![0; blocks],
            dies,
            channels: vec![Server::default(); profile.channels as usize],
            processor: Processor::new(profile.controller_cores, profile.queue_depth),
            staging: Staging::default(),
            next_die: 0,
            buffer: ReleaseRing::new(profile.write_buffer_pages as usize),
            buffer_lpns: vec![NONE; (profile.write_buffer_pages as usize).max(1)],
            buffer_maybe: vec![0; (logical_pages as usize).div_ceil(64)],
            channel_byte_ps: ps_per_byte(profile.channel_rate_mb_s as f64 * BYTES_PER_MB),
            acknowledged_ns: 0,
            streams: Vec::with_capacity(profile.read_ahead_streams as usize),
            stream_uses: 0,
            commands: 0,
            bytes: 0,
            trims: 0,
            trimmed_bytes: 0,
            trimmed_pages: 0,
            host_pages_written: 0,
            host_bytes_compressed: 0,
            nand_slots_written: 0,
            gc_copies: 0,
            read_modify_writes: 0,
            mapped_pages: 0,
            log,
            profile: profile.clone(),
        }
    }

    fn block_of(&self, slot: u32) -> usize {
        (u64::from(slot) / self.geometry.slots_per_block) as usize
    }

    fn die_of_block(&self, block: usize) -> usize {
        block / self.geometry.blocks_per_die as usize
    }

    fn extent_len(&self, lpn: usize) -> u64 {
        if self.extent_slots.is_empty() {
            1
        } else {
            u64::from(self.extent_slots[lpn])
        }
    }

    // ---- bucket lists of closed blocks by valid count (greedy victim selection in O(1)) ----

    fn bucket_insert(&mut self, block: usize) {
        let die = self.die_of_block(block);
        let v = self.valid_slots[block] as usize;
        let head = self.dies[die].bucket_heads[v];
        self.bucket_prev[block] = NONE;
        self.bucket_next[block] = head;
        if head != NONE {
            self.bucket_prev[head as usize] = block as u32;
        }
        self.dies[die].bucket_heads[v] = block as u32;
    }

    fn bucket_remove(&mut self, block: usize) {
        let (prev, next) = (self.bucket_prev[block], self.bucket_next[block]);
        if prev != NONE {
            self.bucket_next[prev as usize] = next;
        } else {
            let die = self.die_of_block(block);
            let v = self.valid_slots[block] as usize;
            debug_assert_eq!(self.dies[die].bucket_heads[v], block as u32);
            self.dies[die].bucket_heads[v] = next;
        }
        if next != NONE {
            self.bucket_prev[next as usize] = prev;
        }
        self.bucket_prev[block] = NONE;
        self.bucket_next[block] = NONE;
    }

    /// The logical page's current extent is no longer valid (overwritten or trimmed).
    fn invalidate(&mut self, lpn: usize) {
        let slot = self.forward.get(lpn);
        if slot == NONE {
            return;
        }
        let len = self.extent_len(lpn);
        let block = self.block_of(slot);
        debug_assert!(self.slot_valid(slot), "mapped slot not marked valid");
        debug_assert_eq!(
            self.oob_lpn.get(slot as usize),
            lpn as u32,
            "the slot's out-of-band area names another page"
        );
        let closed = self.state[block] == BlockState::Closed;
        if closed {
            self.bucket_remove(block);
        }
        debug_assert!(u64::from(self.valid_slots[block]) >= len);
        self.valid_slots[block] -= len as u16;
        if closed {
            self.bucket_insert(block);
        }
        self.set_slot_valid(slot, false);
        self.forward.set(lpn, NONE);
        self.mapped_pages -= 1;
    }

    fn slot_valid(&self, slot: u32) -> bool {
        self.valid_bits[slot as usize / 64] & (1 << (slot % 64)) != 0
    }

    fn set_slot_valid(&mut self, slot: u32, valid: bool) {
        let bit = 1u64 << (slot % 64);
        if valid {
            self.valid_bits[slot as usize / 64] |= bit;
        } else {
            self.valid_bits[slot as usize / 64] &= !bit;
        }
    }

    /// An extent starting at `slot` is programmed for `lpn`: the page's out-of-band area
    /// records `lpn` (NAND is written once between erases) and the RAM bitmap marks it valid.
    fn program_slot(&mut self, slot: u32, lpn: u32) {
        debug_assert!(!self.slot_valid(slot), "slot holds another page");
        debug_assert_eq!(
            self.oob_lpn.get(slot as usize),
            NONE,
            "slot programmed twice without an erase"
        );
        self.oob_lpn.set(slot as usize, lpn);
        self.set_slot_valid(slot, true);
    }

    /// Map `lpn` to `slot` (an extent of `len` slots the caller allocated).
    fn map(&mut self, lpn: usize, slot: u32, len: u64) {
        debug_assert_eq!(self.forward.get(lpn), NONE, "page mapped twice");
        let block = self.block_of(slot);
        debug_assert_eq!(self.state[block], BlockState::Open);
        self.forward.set(lpn, slot);
        self.program_slot(slot, lpn as u32);
        if !self.extent_slots.is_empty() {
            self.extent_slots[lpn] = len as u8;
        }
        self.valid_slots[block] += len as u16;
        self.mapped_pages += 1;
    }

    /// Take a free block on `die` for a frontier.
    fn open_block(&mut self, die: usize) -> u32 {
        let block = self.dies[die]
            .free_blocks
            .pop()
            .expect("the GC reserve keeps a free block for every frontier");
        debug_assert_eq!(self.state[block as usize], BlockState::Free);
        debug_assert_eq!(self.valid_slots[block as usize], 0);
        self.state[block as usize] = BlockState::Open;
        block
    }

    fn close_block(&mut self, block: u32) {
        self.state[block as usize] = BlockState::Closed;
        self.bucket_insert(block as usize);
    }

    /// Allocate `len` consecutive slots on a die's frontier (host or GC); a block too full for
    /// the extent is closed (its tail, if any, left unused). Returns (slot, slots consumed
    /// including padding, whether a new block was opened).
    fn allocate(&mut self, die: usize, len: u64, gc: bool) -> (u32, u64, bool) {
        let spb = self.geometry.slots_per_block;
        let f = if gc {
            self.dies[die].gc
        } else {
            self.dies[die].host
        };
        let mut consumed = 0;
        let mut frontier = f;
        let mut opened = false;
        if frontier.block == NONE || frontier.next_slot + len > spb {
            if frontier.block != NONE {
                consumed += spb - frontier.next_slot;
                self.close_block(frontier.block);
            }
            frontier = Frontier {
                block: self.open_block(die),
                next_slot: 0,
            };
            opened = true;
        }
        let slot = u64::from(frontier.block) * spb + frontier.next_slot;
        frontier.next_slot += len;
        consumed += len;
        // A full block stays open until the next allocation, so the extent just placed is
        // mapped (and counted) before the block becomes a GC candidate.
        if gc {
            self.dies[die].gc = frontier;
        } else {
            self.dies[die].host = frontier;
        }
        (slot as u32, consumed, opened)
    }

    /// Greedy garbage collection on `die` until it has enough free blocks, booked on the die
    /// from `now_ns` (copy-back inside the die: page reads and programs, then the erase).
    fn collect(&mut self, die: usize, now_ns: u64) {
        let threshold = self.profile.gc_free_blocks_threshold as usize;
        let spb = self.geometry.slots_per_block;
        let mut rounds = 0;
        while self.dies[die].free_blocks.len() < threshold && rounds < self.geometry.blocks_per_die
        {
            rounds += 1;
            let Some(victim) = self.dies[die]
                .bucket_heads
                .iter()
                .take(spb as usize) // a block with every slot valid frees nothing
                .position(|&h| h != NONE)
                .map(|v| self.dies[die].bucket_heads[v] as usize)
            else {
                break;
            };
            self.bucket_remove(victim);
            let first = victim as u64 * spb;
            let mut copied_slots = 0u64;
            let mut pages_read = 0u64;
            let mut last_page = u64::MAX;
            let mut slot = first;
            while let Some(next) = self.next_valid_slot(slot, first + spb) {
                slot = next + 1;
                // The page read that copies the data brings its out-of-band area along: that
                // is where GC learns which logical page it holds.
                let lpn = self.oob_lpn.get(next as usize);
                debug_assert_ne!(lpn, NONE, "valid slot with an erased out-of-band area");
                debug_assert_eq!(self.forward.get(lpn as usize), next as u32);
                let len = self.extent_len(lpn as usize);
                let page = next / self.geometry.slots_per_page;
                if page != last_page {
                    pages_read += 1;
                    last_page = page;
                }
                self.set_slot_valid(next as u32, false);
                self.valid_slots[victim] -= len as u16;
                let (to, consumed, _) = self.allocate(die, len, true);
                self.forward.set(lpn as usize, to);
                self.program_slot(to, lpn);
                let to_block = self.block_of(to);
                debug_assert_eq!(self.state[to_block], BlockState::Open);
                self.valid_slots[to_block] += len as u16;
                copied_slots += consumed;
                self.gc_copies += 1;
            }
            debug_assert_eq!(self.valid_slots[victim], 0, "victim still holds valid data");
            // The erase clears the block's out-of-band areas with its data.
            self.oob_lpn.erase(first as usize..(first + spb) as usize);
            self.state[victim] = BlockState::Free;
            self.erase_count[victim] += 1;
            self.dies[die].free_blocks.push(victim as u32);
            self.dies[die].register_page = NO_PAGE;
            self.nand_slots_written += copied_slots;
            let programs = copied_slots.div_ceil(self.geometry.slots_per_program);
            let work = pages_read * self.profile.page_read_ns
                + programs * self.profile.page_program_ns
                + self.profile.block_erase_ns;
            self.dies[die].unit.reserve(now_ns, work, 0);
        }
    }

    /// The first slot in [from, end) marked valid in the RAM bitmap (a word at a time).
    fn next_valid_slot(&self, from: u64, end: u64) -> Option<u64> {
        let mut at = from;
        while at < end {
            let word = self.valid_bits[(at / 64) as usize] >> (at % 64);
            if word != 0 {
                let found = at + u64::from(word.trailing_zeros());
                return (found < end).then_some(found);
            }
            at = (at / 64 + 1) * 64;
        }
        None
    }

    /// Program the staged host pages on the current die and move to the next die.
    fn issue_program(&mut self) {
        let s = self.staging;
        if s.slots == 0 {
            return;
        }
        let die = self.next_die;
        let channel = die % self.channels.len();
        let transfer_bytes = s.slots * u64::from(self.geometry.slot_bytes);
        let on_die = self.channels[channel].reserve(
            s.data_ready_ns,
            bytes_ns(transfer_bytes, self.channel_byte_ps),
            transfer_bytes,
        );
        let done =
            self.dies[die]
                .unit
                .reserve(on_die, self.profile.page_program_ns, transfer_bytes);
        for seq in s.first_seq..s.first_seq + s.pages {
            self.buffer.set(seq, done);
        }
        self.nand_slots_written += s.slots;
        self.staging = Staging {
            first_seq: self.buffer.next_seq(),
            ..Staging::default()
        };
        self.next_die = (self.next_die + 1) % self.dies.len();
    }

    /// One host logical page enters the write buffer with its data in it at `data_ready_ns`;
    /// returns when the buffer had room for it.
    fn write_page(&mut self, lpn: usize, len: u64, data_ready_ns: u64, now_ns: u64) -> u64 {
        if self.log.is_some() {
            return self.write_page_log_block(lpn, data_ready_ns, now_ns);
        }
        let mut room_ns = self.buffer.slot_free_ns();
        if room_ns == ReleaseRing::PENDING {
            // The page it would displace is still staged: program it (partially full) now.
            self.issue_program();
            room_ns = self.buffer.slot_free_ns();
        }
        self.invalidate(lpn);
        let die = self.next_die;
        let (slot, consumed, opened) = self.allocate(die, len, false);
        self.map(lpn, slot, len);
        if opened {
            self.collect(die, now_ns);
        }
        if self.staging.pages == 0 {
            self.staging.first_seq = self.buffer.next_seq();
        }
        let seq = self.buffer.push(ReleaseRing::PENDING);
        let entries = self.buffer_lpns.len() as u64;
        self.buffer_lpns[(seq % entries) as usize] = lpn as u32;
        self.buffer_maybe[lpn / 64] |= 1 << (lpn % 64);
        self.staging.pages += 1;
        self.staging.slots += consumed;
        self.staging.data_ready_ns = self.staging.data_ready_ns.max(data_ready_ns.max(room_ns));
        if self.staging.slots >= self.geometry.slots_per_program {
            self.issue_program();
        }
        room_ns
    }

    /// The hybrid map's write path: the page goes to its die's log block (merges first when
    /// a log block must be reclaimed, booked on that die from `now_ns`), and is programmed
    /// there on its own once its data and a buffer entry are in; the buffer entry leaves when
    /// the program ends.
    fn write_page_log_block(&mut self, lpn: usize, data_ready_ns: u64, now_ns: u64) -> u64 {
        let room_ns = self.buffer.slot_free_ns();
        debug_assert_ne!(
            room_ns,
            ReleaseRing::PENDING,
            "log-block pages never wait staged"
        );
        let log = self.log.as_mut().expect("hybrid map");
        // The tag numbers host pages, so tests can check what each logical page maps to.
        let placed = log.write(lpn as u64, self.host_pages_written as u32);
        let die = placed.die;
        self.book_nand_work(die, placed.work, now_ns);
        let channel = die % self.channels.len();
        let bytes = u64::from(LOGICAL_PAGE_BYTES);
        let on_die = self.channels[channel].reserve(
            data_ready_ns.max(room_ns),
            bytes_ns(bytes, self.channel_byte_ps),
            bytes,
        );
        let done = self.dies[die]
            .unit
            .reserve(on_die, self.profile.page_program_ns, bytes);
        let seq = self.buffer.push(done);
        let entries = self.buffer_lpns.len() as u64;
        self.buffer_lpns[(seq % entries) as usize] = lpn as u32;
        self.buffer_maybe[lpn / 64] |= 1 << (lpn % 64);
        self.nand_slots_written += 1 + placed.work.programs;
        room_ns
    }

    /// Merge copies (copy-back inside the die: page read then program) and erases, booked on
    /// `die` from `now_ns`.
    fn book_nand_work(&mut self, die: usize, work: NandWork, now_ns: u64) {
        if work.is_empty() {
            return;
        }
        let p = &self.profile;
        let ns = work.reads * p.page_read_ns
            + work.programs * p.page_program_ns
            + work.erases * p.block_erase_ns;
        let d = &mut self.dies[die];
        d.unit.reserve(now_ns, ns, 0);
        d.register_page = NO_PAGE;
    }

    /// Where logical page `lpn` lives: (die, physical NAND page, bytes to transfer).
    fn locate(&self, lpn: usize) -> Option<(usize, u64, u64)> {
        if let Some(log) = &self.log {
            let page = log.locate(lpn as u64)?;
            return Some((log.die_of(lpn as u64), page, u64::from(LOGICAL_PAGE_BYTES)));
        }
        let slot = self.forward.get(lpn);
        if slot == NONE {
            return None;
        }
        let die = self.die_of_block(self.block_of(slot));
        let bytes = self.extent_len(lpn) * u64::from(self.geometry.slot_bytes);
        Some((die, u64::from(slot) / self.geometry.slots_per_page, bytes))
    }

    /// Read one logical page from NAND (for a read or a read-modify-write) starting at
    /// `earliest_ns`; returns when its data is in the controller, or None when unmapped.
    fn read_page(&mut self, lpn: usize, earliest_ns: u64) -> Option<u64> {
        let (die, physical_page, bytes) = self.locate(lpn)?;
        let bit = 1u64 << (lpn % 64);
        if self.buffer_maybe[lpn / 64] & bit != 0 {
            if self.buffer_lpns.contains(&(lpn as u32)) {
                // Still in the DRAM write buffer: no NAND access.
                return None;
            }
            self.buffer_maybe[lpn / 64] &= !bit;
        }
        let channel = die % self.channels.len();
        let read_ns = self.profile.page_read_ns;
        let d = &mut self.dies[die];
        let sensed = if d.register_page == physical_page {
            d.register_ready_ns.max(earliest_ns)
        } else {
            let start = earliest_ns.max(d.read_busy_until_ns);
            let sensed = start + read_ns;
            d.read_busy_until_ns = sensed;
            d.unit.busy_until_ns = d.unit.busy_until_ns.max(start) + read_ns;
            d.unit.busy_ns += read_ns;
            d.unit.operations += 1;
            d.register_page = physical_page;
            d.register_ready_ns = sensed;
            sensed
        };
        d.unit.bytes += bytes;
        Some(self.channels[channel].reserve(sensed, bytes_ns(bytes, self.channel_byte_ps), bytes))
    }

    /// The stream a read from `first_lpn` continues (it starts where the stream's last read
    /// ended), or a new stream for it in a free detector or the least recently used one; a
    /// replaced stream's read-ahead is dropped. Returns the stream and whether it continued.
    fn stream_for(&mut self, first_lpn: u64) -> (usize, bool) {
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
    fn read_ahead(&mut self, i: usize, end_lpn: u64, at_ns: u64) {
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
    fn drop_prefetch_overlapping(&mut self, first: u64, end: u64) {
        for s in &mut self.streams {
            let buffered_end = s.first_lpn + s.ready_ns.len() as u64;
            if first < buffered_end && end > s.first_lpn {
                s.ready_ns.clear();
            }
        }
    }

    /// Pages held in the read-ahead buffer, all streams together.
    fn read_ahead_held_pages(&self) -> u64 {
        self.streams.iter().map(|s| s.ready_ns.len() as u64).sum()
    }

    /// Full consistency check (O(size)): every mapped page's slot is marked valid and its
    /// out-of-band area names the page, every valid bit belongs to a mapped page (so no slot is
    /// claimed twice), valid counts and bucket membership match the map, free (erased) blocks
    /// hold no valid bits and no out-of-band entries. Returns the first violation.
    pub fn check_consistency(&self) -> Result<(), String> {
        if let Some(log) = &self.log {
            return log.check_consistency();
        }
        let spb = self.geometry.slots_per_block;
        let mut valid = vec![0u64; self.valid_slots.len()];
        let mut mapped = 0;
        for (lpn, slot) in self.forward.iter().enumerate() {
            if slot == NONE {
                continue;
            }
            mapped += 1;
            if !self.slot_valid(slot) {
                return Err(format!(
                    "page {lpn} maps to slot {slot}, which is not marked valid"
                ));
            }
            if self.oob_lpn.get(slot as usize) != lpn as u32 {
                return Err(format!(
                    "page {lpn} maps to slot {slot}, whose out-of-band area names page {}",
                    self.oob_lpn.get(slot as usize)
                ));
            }
            valid[self.block_of(slot)] += self.extent_len(lpn);
        }
        if mapped != self.mapped_pages {
            return Err(format!(
                "{mapped} pages mapped, counter says {}",
                self.mapped_pages
            ));
        }
        let valid_bits: u64 = self
            .valid_bits
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum();
        if valid_bits != mapped {
            // Every mapped page's bit is set (checked above), so extra bits are slots no
            // page maps to: claimed twice or leaked.
            return Err(format!(
                "{valid_bits} slots marked valid for {mapped} mapped pages"
            ));
        }
        for (block, &v) in valid.iter().enumerate() {
            if u64::from(self.valid_slots[block]) != v {
                return Err(format!(
                    "block {block}: valid count {} but the map holds {v}",
                    self.valid_slots[block]
                ));
            }
            if v > spb {
                return Err(format!("block {block} holds more than it can"));
            }
            if self.state[block] == BlockState::Free {
                let first = block as u64 * spb;
                if v != 0 || self.next_valid_slot(first, first + spb).is_some() {
                    return Err(format!("free block {block} holds valid data"));
                }
                if (first as usize..(first + spb) as usize).any(|s| self.oob_lpn.get(s) != NONE) {
                    return Err(format!("free block {block} has unerased out-of-band areas"));
                }
            }
        }
        for die in &self.dies {
            for (count, &head) in die.bucket_heads.iter().enumerate() {
                let mut b = head;
                while b != NONE {
                    if self.state[b as usize] != BlockState::Closed
                        || self.valid_slots[b as usize] as usize != count
                    {
                        return Err(format!("block {b} is in the wrong GC bucket"));
                    }
                    b = self.bucket_next[b as usize];
                }
            }
        }
        Ok(())
    }

    /// Bytes of FTL state held in controller RAM, measured from the allocations: forward map,
    /// extent lengths (compression), write-buffer presence bits, per-slot valid bitmap, per
    /// block valid count, state, erase count and bucket links, per die the free-block list and
    /// bucket heads. The out-of-band areas are NAND contents ([`SsdDrive::nand_oob_bytes`]).
    pub fn mapping_ram_bytes(&self) -> u64 {
        if let Some(log) = &self.log {
            return log.ram_bytes() + (self.buffer_maybe.capacity() * 8) as u64;
        }
        fn bytes<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        let per_die: usize = self
            .dies
            .iter()
            .map(|d| bytes(&d.free_blocks) + bytes(&d.bucket_heads))
            .sum();
        (self.forward.bytes()
            + bytes(&self.extent_slots)
            + bytes(&self.buffer_maybe)
            + bytes(&self.valid_bits)
            + bytes(&self.valid_slots)
            + bytes(&self.state)
            + bytes(&self.erase_count)
            + bytes(&self.bucket_prev)
            + bytes(&self.bucket_next)
            + per_die) as u64
    }

    /// The hybrid map, when the profile asks for `mapping = "log_block"`.
    pub fn log_block_ftl(&self) -> Option<&LogBlockFtl> {
        self.log.as_ref()
    }

    /// The hybrid map, mutable (tests switch on content tracking with it).
    pub fn log_block_ftl_mut(&mut self) -> Option<&mut LogBlockFtl> {
        self.log.as_mut()
    }

    /// Bytes the simulator holds for what a real drive keeps on the NAND itself: the logical
    /// page number in each slot's out-of-band area.
    pub fn nand_oob_bytes(&self) -> u64 {
        self.oob_lpn.bytes() as u64
    }

    /// The usual minimum of a page-mapping table: one 4-byte entry per logical page.
    pub fn four_byte_map_bytes(&self) -> u64 {
        self.logical_pages * MAP_ENTRY_BYTES
    }

    /// The smallest possible forward map: one entry per logical page of just enough bits to
    /// name a physical slot.
    pub fn minimum_map_bytes(&self) -> u64 {
        let bits = 64 - (self.geometry.total_slots().max(2) - 1).leading_zeros();
        (self.logical_pages * u64::from(bits)).div_ceil(8)
    }

    fn logical_pages_of(command_lba: u64, blocks: u64) -> (u64, u64) {
        let first = command_lba / SECTORS_PER_LOGICAL_PAGE;
        let end = (command_lba + blocks).div_ceil(SECTORS_PER_LOGICAL_PAGE);
        (first, end)
    }
}

impl Drive for SsdDrive {
    fn capacity_bytes(&self) -> u64 {
        self.profile.user_capacity_bytes
    }

    fn logical_block_bytes(&self) -> u32 {
        SECTOR_BYTES
    }

    fn queue_depth(&self) -> u32 {
        self.profile.queue_depth
    }

    /// Each mapped logical page is sensed on its die and crosses its channel; pages on
    /// different dies overlap, which is what queue depth and large requests unlock. Unmapped
    /// pages read as zeros from the controller.
    fn read(&mut self, now_ns: u64, command: &DriveCommand, _rng: &mut ChaCha8Rng) -> Flow {
        self.commands += 1;
        let bytes = u64::from(command.blocks) * u64::from(SECTOR_BYTES);
        self.bytes += bytes;
        // The firmware takes the command on a core, then the NAND reads start.
        let cpu_ns = self
            .profile
            .read_cpu_ns
            .unwrap_or(self.profile.command_cpu_ns);
        let start = self.processor.run(now_ns, now_ns, cpu_ns) + self.profile.command_latency_ns;
        let (first, end) = Self::logical_pages_of(command.lba, command.blocks.into());
        // Each followed stream keeps its read-ahead: a read of another stream, or a random
        // one, takes a detector of its own instead of clearing the others'.
        let (stream, sequential) = self.stream_for(first);
        self.streams[stream].next_lpn = end;
        let mut first_ready = u64::MAX;
        let mut last_ready = start;
        for lpn in first..end {
            let prefetched = if sequential {
                self.streams[stream].take(lpn)
            } else {
                None
            };
            let ready = match prefetched {
                Some(t) => Some(t.max(start)),
                None => self.read_page(lpn as usize, start),
            };
            if let Some(t) = ready {
                first_ready = first_ready.min(t);
                last_ready = last_ready.max(t);
            }
        }
        if sequential {
            self.read_ahead(stream, end, start);
        }
        self.acknowledged_ns = self.acknowledged_ns.max(last_ready);
        self.processor.note_done(last_ready);
        if first_ready == u64::MAX {
            return Flow::ready_at(start);
        }
        let piece = bytes_ns(LOGICAL_PAGE_BYTES.into(), self.channel_byte_ps);
        Flow {
            start_ns: first_ready.saturating_sub(piece).max(start),
            end_ns: last_ready,
            first_piece_ns: piece.min(last_ready - start),
        }
    }

    fn wants_payload(&self) -> bool {
        self.profile.compression
    }

    /// The data enters the write buffer as it arrives; each logical page waits for buffer room
    /// (a page leaves when its program ends), so a drive busy with GC slows the host only once
    /// the buffer is full. A partially covered page is read first (read-modify-write).
    fn write(
        &mut self,
        incoming: Flow,
        command: &DriveCommand,
        payload: Option<&[u8]>,
        _rng: &mut ChaCha8Rng,
    ) -> Flow {
        self.commands += 1;
        let bytes = u64::from(command.blocks) * u64::from(SECTOR_BYTES);
        self.bytes += bytes;
        let now = incoming.start_ns;
        let (first, end) = Self::logical_pages_of(command.lba, command.blocks.into());
        let cmd_start_byte = command.lba * u64::from(SECTOR_BYTES);
        let cmd_end_byte = cmd_start_byte + bytes;
        // The firmware's work on the write (map update, buffer bookkeeping, status) starts
        // once its data is in and takes a core; the write completes when that work is done
        // and the buffer had room for its last page.
        let past = self.processor.past_ns();
        let cpu_ns = self
            .profile
            .write_cpu_ns
            .unwrap_or(self.profile.command_cpu_ns);
        let mut done =
            self.processor.run(past, incoming.end_ns, cpu_ns) + self.profile.command_latency_ns;
        self.drop_prefetch_overlapping(first, end);
        for lpn in first..end {
            let page_start = lpn * u64::from(LOGICAL_PAGE_BYTES);
            let page_end = page_start + u64::from(LOGICAL_PAGE_BYTES);
            let partial = page_start < cmd_start_byte || page_end > cmd_end_byte;
            let mut data_ready = incoming.end_ns;
            if partial {
                self.read_modify_writes += 1;
                if let Some(t) = self.read_page(lpn as usize, now) {
                    data_ready = data_ready.max(t);
                }
            }
            let offset = (page_start.saturating_sub(cmd_start_byte)) as usize;
            let page = payload.and_then(|d| d.get(offset..offset + LOGICAL_PAGE_BYTES as usize));
            let len = match page {
                // Without the bytes (or for a partial page) the page is stored uncompressed.
                Some(page) if self.profile.compression && !partial => {
                    let size = compressed_bytes(page).min(LOGICAL_PAGE_BYTES as usize);
                    (size as u64)
                        .div_ceil(u64::from(self.geometry.slot_bytes))
                        .max(1)
                }
                _ => u64::from(self.geometry.slots_per_logical_page),
            };
            self.host_pages_written += 1;
            self.host_bytes_compressed += len * u64::from(self.geometry.slot_bytes);
            let room = self.write_page(lpn as usize, len, data_ready, now);
            done = done.max(room);
        }
        self.acknowledged_ns = self.acknowledged_ns.max(done);
        self.processor.note_done(done);
        Flow {
            start_ns: incoming.start_ns,
            end_ns: done,
            first_piece_ns: incoming.first_piece_ns,
        }
    }

    /// Unmap every logical page the ranges cover entirely (a partly covered page keeps its
    /// data, as drives that trim in whole mapping units do).
    fn trim(&mut self, now_ns: u64, ranges: &[TrimRange]) -> u64 {
        self.trims += 1;
        // DSM ranges hold at most 65535 sectors, so one large TRIM arrives as touching ranges
        // whose seams fall inside pages: join touching ranges before rounding to pages.
        let mut joined: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
        let mut sorted: Vec<TrimRange> = ranges.iter().copied().filter(|r| r.blocks > 0).collect();
        sorted.sort_by_key(|r| r.lba);
        for r in sorted {
            self.trimmed_bytes += r.blocks * u64::from(SECTOR_BYTES);
            match joined.last_mut() {
                Some(last) if r.lba <= last.1 => last.1 = last.1.max(r.lba + r.blocks),
                _ => joined.push((r.lba, r.lba + r.blocks)),
            }
        }
        for (start, end_sector) in joined {
            let first = start.div_ceil(SECTORS_PER_LOGICAL_PAGE);
            let end = (end_sector / SECTORS_PER_LOGICAL_PAGE).min(self.logical_pages);
            self.drop_prefetch_overlapping(first, end);
            for lpn in first..end {
                if let Some(log) = self.log.as_mut() {
                    if log.trim(lpn) {
                        self.trimmed_pages += 1;
                    }
                } else if self.forward.get(lpn as usize) != NONE {
                    self.invalidate(lpn as usize);
                    self.trimmed_pages += 1;
                }
            }
        }
        // TRIM is non-queued: it waits for the dies' pending work, then the firmware
        // processes it on a core.
        let busy = self
            .dies
            .iter()
            .map(|d| d.unit.busy_until_ns)
            .max()
            .unwrap_or(0);
        let end = self
            .processor
            .run(now_ns, busy.max(now_ns), self.profile.trim_command_ns);
        self.acknowledged_ns = self.acknowledged_ns.max(end);
        self.processor.note_done(end);
        end
    }

    fn stats(&self) -> DriveStats {
        let dies = self.dies.len() as u64;
        let horizon = self.acknowledged_ns;
        let die_busy = self
            .dies
            .iter()
            .map(|d| busy_until_horizon(&d.unit, horizon))
            .sum::<u64>()
            / dies;
        let channel_busy = self
            .channels
            .iter()
            .map(|c| busy_until_horizon(c, horizon))
            .max()
            .unwrap_or(0);
        DriveStats {
            busy_ns: die_busy.max(channel_busy),
            commands: self.commands,
            bytes: self.bytes,
            trims: self.trims,
            trimmed_bytes: self.trimmed_bytes,
        }
    }

    fn processor_stats(&self) -> Option<ProcessorStats> {
        Some(self.processor.stats())
    }

    fn cache_occupancy(&self, now_ns: u64) -> Vec<CacheOccupancy> {
        let page = u64::from(LOGICAL_PAGE_BYTES);
        vec![
            CacheOccupancy {
                name: "write_buffer",
                held_bytes: self.buffer.held_at(now_ns) as u64 * page,
                capacity_bytes: u64::from(self.profile.write_buffer_pages) * page,
            },
            CacheOccupancy {
                name: "read_ahead",
                held_bytes: self.read_ahead_held_pages() * page,
                capacity_bytes: self.profile.read_ahead_bytes.into(),
            },
        ]
    }

    fn model_report(&self) -> DriveModelReport {
        let g = &self.geometry;
        let nand_pages = self.nand_slots_written as f64 / g.slots_per_logical_page as f64;
        let host_pages = self.host_pages_written as f64;
        let dies = self.dies.len();
        let (erases, free): (&[u32], Vec<u64>) = match &self.log {
            Some(log) => (
                log.erase_counts(),
                (0..dies).map(|d| log.free_blocks(d)).collect(),
            ),
            None => (
                &self.erase_count,
                self.dies
                    .iter()
                    .map(|d| d.free_blocks.len() as u64)
                    .collect(),
            ),
        };
        DriveModelReport::Ssd(SsdReport {
            host_pages_written: self.host_pages_written,
            nand_pages_programmed: nand_pages,
            write_amplification: if host_pages > 0.0 {
                nand_pages / host_pages
            } else {
                0.0
            },
            gc_copies: self.log.as_ref().map_or(self.gc_copies, |l| l.copies()),
            read_modify_writes: self.read_modify_writes,
            erases_total: erases.iter().map(|&e| u64::from(e)).sum(),
            erases_max_per_block: erases.iter().copied().max().unwrap_or(0),
            free_blocks: free.iter().sum(),
            free_blocks_min_per_die: free.iter().copied().min().unwrap_or(0),
            mapped_pages: self
                .log
                .as_ref()
                .map_or(self.mapped_pages, |l| l.mapped_pages()),
            trimmed_pages: self.trimmed_pages,
            compression_ratio: if self.host_bytes_compressed > 0 {
                (self.host_pages_written * u64::from(LOGICAL_PAGE_BYTES)) as f64
                    / self.host_bytes_compressed as f64
            } else {
                1.0
            },
            mapping_ram_bytes: self.mapping_ram_bytes(),
            reverse_map_bytes: self.nand_oob_bytes(),
            merges: self.log.as_ref().map(|l| {
                let m = l.merges();
                MergeReport {
                    switch: m.switch,
                    partial: m.partial,
                    full: m.full,
                }
            }),
        })
    }
}
