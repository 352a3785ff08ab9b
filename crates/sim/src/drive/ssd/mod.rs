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

mod compact_table;
pub mod compress;
pub mod ftl_log_block;
mod ftl_page;
mod nand;
mod processor;
mod profile;
mod read_ahead;
mod slc_cache;
mod write_buffer;

pub use profile::{validate, Mapping, PartialPageUpdate, SsdProfile, DEFAULT_READ_AHEAD_STREAMS};
pub use slc_cache::{SlcCacheProfile, SlcCacheReport};

use super::{
    busy_until_horizon, CacheOccupancy, Drive, DriveCommand, DriveModelReport, DriveStats,
    LostWrite, MergeReport, ProcessorStats, ReleaseRing, SsdReport, TrimRange,
    COMPRESSION_PIECE_BYTES, SOLID_STATE_READY_NS, UNKNOWN_COMPRESSED_BYTES,
};
use crate::profile::limits::SECTOR_BYTES;
use crate::resource::{bytes_ns, ps_per_byte, Flow, Server};
use compact_table::CompactTable;
use compress::compressed_bytes;
use ftl_log_block::LogBlockFtl;
use ftl_page::PageMap;
use nand::{BlockState, Die, Frontier, Geometry, NO_PAGE};
use processor::Processor;
use profile::log_block_geometry;
use rand_chacha::ChaCha8Rng;
use read_ahead::ReadStream;
use slc_cache::SlcCache;
use write_buffer::Staging;

/// The FTL's mapping unit (logical page).
pub const LOGICAL_PAGE_BYTES: u32 = 4096;
// The simulator keeps compression estimates by piece: a piece must be one logical page.
const _: () = assert!(LOGICAL_PAGE_BYTES as usize == COMPRESSION_PIECE_BYTES);
const SECTORS_PER_LOGICAL_PAGE: u64 = (LOGICAL_PAGE_BYTES / SECTOR_BYTES) as u64;
const BYTES_PER_MB: f64 = 1e6;
/// Bytes of one entry of the usual page-mapping table (a 32-bit physical page number).
const MAP_ENTRY_BYTES: u64 = 4;
/// Marks an unmapped logical page or a slot holding no extent start.
const NONE: u32 = u32::MAX;

/// The flash translation layer a profile's `mapping` picks.
enum Ftl {
    /// Page mapping with greedy GC (`ftl_page.rs`; its state is `SsdDrive::map`).
    Page,
    /// The hybrid log-block map (`ftl_log_block.rs`).
    LogBlock(LogBlockFtl),
}

impl Ftl {
    fn log_block(&self) -> Option<&LogBlockFtl> {
        match self {
            Ftl::Page => None,
            Ftl::LogBlock(log) => Some(log),
        }
    }

    fn log_block_mut(&mut self) -> Option<&mut LogBlockFtl> {
        match self {
            Ftl::Page => None,
            Ftl::LogBlock(log) => Some(log),
        }
    }
}

/// The SSD.
pub struct SsdDrive {
    profile: SsdProfile,
    geometry: Geometry,
    logical_pages: u64,
    /// The page-mapping FTL's state (empty under the hybrid map).
    map: PageMap,
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
    /// The write ([`Drive::writes_taken`] when it came) each write-buffer entry holds a page
    /// of: what a power loss names.
    buffer_writes: Vec<u64>,
    /// Writes taken (the next one's ordinal).
    writes_taken: u64,
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
    /// Which FTL maps logical pages.
    ftl: Ftl,
    /// The SLC-mode write cache, when the profile has one.
    slc: Option<SlcCache>,
}

impl SsdDrive {
    /// Build a fresh (never written, all blocks erased) drive. The profile must be validated.
    pub fn new(profile: &SsdProfile) -> SsdDrive {
        let g = Geometry::new(profile);
        let logical_pages = profile.user_capacity_bytes / u64::from(LOGICAL_PAGE_BYTES);
        let ftl = match profile.mapping {
            Mapping::Page => Ftl::Page,
            Mapping::LogBlock => Ftl::LogBlock(LogBlockFtl::new(log_block_geometry(profile, &g))),
        };
        // The page map's per-page and per-block state is not needed with the hybrid map.
        let page_mapped = matches!(ftl, Ftl::Page);
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
            map: PageMap {
                forward: CompactTable::new(per_page(logical_pages)),
                extent_slots: if profile.compression {
                    vec![0; logical_pages as usize]
                } else {
                    Vec::new()
                },
                valid_bits: vec![0; per_page(g.total_slots()).div_ceil(64)],
                oob_lpn: CompactTable::new(per_page(g.total_slots())),
                valid_slots: vec![0; blocks],
                state: vec![BlockState::Free; blocks],
                bucket_prev: vec![NONE; blocks],
                bucket_next: vec![NONE; blocks],
                erase_count: vec![0; blocks],
            },
            dies,
            channels: vec![Server::default(); profile.channels as usize],
            processor: Processor::new(profile.controller_cores, profile.queue_depth),
            staging: Staging::default(),
            next_die: 0,
            buffer: ReleaseRing::new(profile.write_buffer_pages as usize),
            buffer_lpns: vec![NONE; (profile.write_buffer_pages as usize).max(1)],
            buffer_maybe: vec![0; (logical_pages as usize).div_ceil(64)],
            buffer_writes: vec![0; (profile.write_buffer_pages as usize).max(1)],
            writes_taken: 0,
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
            ftl,
            slc: profile
                .slc_cache
                .as_ref()
                .map(|cache| SlcCache::new(cache, g.dies as usize)),
            profile: profile.clone(),
        }
    }

    /// Bytes of FTL state held in controller RAM, measured from the allocations: forward map,
    /// extent lengths (compression), write-buffer presence bits, per-slot valid bitmap, per
    /// block valid count, state, erase count and bucket links, per die the free-block list and
    /// bucket heads. The out-of-band areas are NAND contents ([`SsdDrive::nand_oob_bytes`]).
    pub fn mapping_ram_bytes(&self) -> u64 {
        if let Some(log) = self.ftl.log_block() {
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
        (self.map.forward.bytes()
            + bytes(&self.map.extent_slots)
            + bytes(&self.buffer_maybe)
            + bytes(&self.map.valid_bits)
            + bytes(&self.map.valid_slots)
            + bytes(&self.map.state)
            + bytes(&self.map.erase_count)
            + bytes(&self.map.bucket_prev)
            + bytes(&self.map.bucket_next)
            + per_die) as u64
    }

    /// The hybrid map, when the profile asks for `mapping = "log_block"`.
    pub fn log_block_ftl(&self) -> Option<&LogBlockFtl> {
        self.ftl.log_block()
    }

    /// The hybrid map, mutable (tests switch on content tracking with it).
    pub fn log_block_ftl_mut(&mut self) -> Option<&mut LogBlockFtl> {
        self.ftl.log_block_mut()
    }

    /// Bytes the simulator holds for what a real drive keeps on the NAND itself: the logical
    /// page number in each slot's out-of-band area.
    pub fn nand_oob_bytes(&self) -> u64 {
        self.map.oob_lpn.bytes() as u64
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

    /// [`Drive::write`], with the compressed sizes of pieces of the payload kept by the caller
    /// (`compressed`, empty when it keeps none; see [`Drive::write_payload`]).
    fn write_pages(
        &mut self,
        incoming: Flow,
        command: &DriveCommand,
        payload: Option<&[u8]>,
        compressed: &mut [u32],
    ) -> Flow {
        self.commands += 1;
        let bytes = u64::from(command.blocks) * u64::from(SECTOR_BYTES);
        self.bytes += bytes;
        let now = incoming.start_ns;
        self.fold_while_idle(now);
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
            if partial && self.profile.partial_page_update == PartialPageUpdate::CopyBack {
                if let Some(room) = self.write_page_copy_back(lpn as usize, data_ready, now) {
                    self.read_modify_writes += 1;
                    self.host_pages_written += 1;
                    self.host_bytes_compressed += u64::from(LOGICAL_PAGE_BYTES);
                    done = done.max(room);
                    continue;
                }
            }
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
                    let size = Self::page_compressed_bytes(page, offset, compressed)
                        .min(LOGICAL_PAGE_BYTES as usize);
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
        self.writes_taken += 1;
        self.acknowledged_ns = self.acknowledged_ns.max(done);
        self.processor.note_done(done);
        Flow {
            start_ns: incoming.start_ns,
            end_ns: done,
            first_piece_ns: incoming.first_piece_ns,
        }
    }

    /// The compression estimate of the page at `offset` in a write's payload: the one the
    /// caller kept in `compressed` when it has it, else computed (and handed back there).
    fn page_compressed_bytes(page: &[u8], offset: usize, compressed: &mut [u32]) -> usize {
        let kept = offset
            .is_multiple_of(COMPRESSION_PIECE_BYTES)
            .then(|| compressed.get_mut(offset / COMPRESSION_PIECE_BYTES))
            .flatten();
        match kept {
            Some(size) if *size != UNKNOWN_COMPRESSED_BYTES => *size as usize,
            Some(size) => {
                let estimate = compressed_bytes(page);
                *size = estimate as u32;
                estimate
            }
            None => compressed_bytes(page),
        }
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
        self.write_pages(incoming, command, payload, &mut [])
    }

    fn write_payload(
        &mut self,
        incoming: Flow,
        command: &DriveCommand,
        payload: &[u8],
        compressed: &mut [u32],
        _rng: &mut ChaCha8Rng,
    ) -> Flow {
        self.write_pages(incoming, command, Some(payload), compressed)
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
                if let Some(log) = self.ftl.log_block_mut() {
                    if log.trim(lpn) {
                        self.trimmed_pages += 1;
                    }
                } else if self.map.forward.get(lpn as usize) != NONE {
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

    /// FLUSH CACHE: the pages staged for a multi-plane program are programmed now (a partly
    /// filled program, as when the buffer must make room), and the flush completes once every
    /// page in the write buffer has been programmed and the firmware has handled the command on
    /// a core.
    fn flush(&mut self, now_ns: u64) -> u64 {
        self.issue_program();
        let programmed = self.buffer.last_release_ns();
        let end = self
            .processor
            .run(now_ns, programmed.max(now_ns), self.profile.command_cpu_ns)
            + self.profile.command_latency_ns;
        self.acknowledged_ns = self.acknowledged_ns.max(end);
        self.processor.note_done(end);
        end
    }

    fn writes_taken(&self) -> u64 {
        self.writes_taken
    }

    fn oldest_volatile_write(&self, now_ns: u64) -> Option<u64> {
        self.volatile_entries(now_ns)
            .map(|slot| self.buffer_writes[slot])
            .min()
    }

    /// The write buffer is DRAM without power-loss protection (the consumer drives the
    /// shipped profiles describe have no hold-up capacitors): every page in it that was not
    /// programmed by `now_ns` (staged, or its program not ended) is lost. The FTL's map keeps
    /// the lost pages mapped (timing state only: the data the host reads back comes from the
    /// payload store, which puts the old contents back); the buffer and the staged program
    /// are empty after power-on.
    fn power_loss(&mut self, now_ns: u64) -> Vec<LostWrite> {
        let slots: Vec<usize> = self.volatile_entries(now_ns).collect();
        let sectors = u64::from(LOGICAL_PAGE_BYTES / SECTOR_BYTES);
        let mut lost = Vec::with_capacity(slots.len());
        for slot in slots {
            let lpn = self.buffer_lpns[slot];
            if lpn != NONE {
                lost.push(LostWrite {
                    ordinal: self.buffer_writes[slot],
                    lba: u64::from(lpn) * sectors,
                    blocks: sectors,
                });
            }
            self.buffer_lpns[slot] = NONE;
        }
        self.buffer.power_loss(now_ns);
        self.staging = Staging {
            first_seq: self.buffer.next_seq(),
            ..Staging::default()
        };
        lost
    }

    fn power_on_ready_ns(&self) -> u64 {
        SOLID_STATE_READY_NS
    }

    /// Trimmed pages are unmapped and read from the map as zeroes without a flash read, as the
    /// era's controllers answer them (the 860 EVO: "TRIM Command: Available, deterministic,
    /// zeroed" in smartctl's reading of its IDENTIFY).
    fn reads_zeroes_after_trim(&self) -> bool {
        true
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
        let (erases, free): (&[u32], Vec<u64>) = match self.ftl.log_block() {
            Some(log) => (
                log.erase_counts(),
                (0..dies).map(|d| log.free_blocks(d)).collect(),
            ),
            None => (
                &self.map.erase_count,
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
            gc_copies: self.ftl.log_block().map_or(self.gc_copies, |l| l.copies()),
            read_modify_writes: self.read_modify_writes,
            erases_total: erases.iter().map(|&e| u64::from(e)).sum(),
            erases_max_per_block: erases.iter().copied().max().unwrap_or(0),
            free_blocks: free.iter().sum(),
            free_blocks_min_per_die: free.iter().copied().min().unwrap_or(0),
            mapped_pages: self
                .ftl
                .log_block()
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
            merges: self.ftl.log_block().map(|l| {
                let m = l.merges();
                MergeReport {
                    switch: m.switch,
                    partial: m.partial,
                    full: m.full,
                }
            }),
            slc_cache: self.slc_cache_report(),
        })
    }
}
