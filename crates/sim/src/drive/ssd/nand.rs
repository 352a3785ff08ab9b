//! NAND side of the SSD: derived geometry, per-die state (program and read timing, page
//! register), and the timing of page reads and of merge work booked on a die.

use super::ftl_log_block::NandWork;
use super::{SsdDrive, SsdProfile, LOGICAL_PAGE_BYTES, NONE};
use crate::resource::{bytes_ns, Server};

/// Derived sizes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Geometry {
    pub(super) dies: u32,
    pub(super) blocks_per_die: u32,
    pub(super) slot_bytes: u32,
    pub(super) slots_per_page: u64,
    pub(super) slots_per_block: u64,
    /// Slots one multi-plane program writes.
    pub(super) slots_per_program: u64,
    /// Slots of one full logical page (uncompressed).
    pub(super) slots_per_logical_page: u32,
}

impl Geometry {
    pub(super) fn new(p: &SsdProfile) -> Geometry {
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
    pub(super) fn block_bytes(&self) -> u64 {
        self.slots_per_block * u64::from(self.slot_bytes)
    }
    pub(super) fn total_blocks(&self) -> u64 {
        u64::from(self.dies) * u64::from(self.blocks_per_die)
    }
    pub(super) fn total_slots(&self) -> u64 {
        self.total_blocks() * self.slots_per_block
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BlockState {
    Free,
    /// A write frontier (host or GC) is filling it.
    Open,
    /// Full; a garbage-collection candidate.
    Closed,
}

/// Where a die's next extent goes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Frontier {
    pub(super) block: u32,
    pub(super) next_slot: u64,
}

impl Frontier {
    pub(super) const EMPTY: Frontier = Frontier {
        block: NONE,
        next_slot: 0,
    };
}

pub(super) struct Die {
    pub(super) free_blocks: Vec<u32>,
    pub(super) host: Frontier,
    pub(super) gc: Frontier,
    /// Closed blocks by valid-slot count: head of each doubly linked list.
    pub(super) bucket_heads: Vec<u32>,
    /// Programs, erases and GC booked in order.
    pub(super) unit: Server,
    /// When the die's last read ends: reads go ahead of queued programs (read priority with
    /// program suspend), serialised only among themselves, and push the program backlog back
    /// by their duration.
    pub(super) read_busy_until_ns: u64,
    /// The physical page whose data sits in the die's page register after its last sense
    /// (NO_PAGE after an erase): another logical page of it needs only the channel transfer,
    /// which is what an 8 KiB page or compression (several logical pages per NAND page) gives.
    pub(super) register_page: u64,
    pub(super) register_ready_ns: u64,
}

/// `Die::register_page` when the register holds nothing reusable.
pub(super) const NO_PAGE: u64 = u64::MAX;

impl SsdDrive {
    /// Merge copies (copy-back inside the die: page read then program) and erases, booked on
    /// `die` from `now_ns`.
    pub(super) fn book_nand_work(&mut self, die: usize, work: NandWork, now_ns: u64) {
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
    pub(super) fn locate(&self, lpn: usize) -> Option<(usize, u64, u64)> {
        if let Some(log) = self.ftl.log_block() {
            let page = log.locate(lpn as u64)?;
            return Some((log.die_of(lpn as u64), page, u64::from(LOGICAL_PAGE_BYTES)));
        }
        let slot = self.map.forward.get(lpn);
        if slot == NONE {
            return None;
        }
        let die = self.die_of_block(self.block_of(slot));
        let bytes = self.extent_len(lpn) * u64::from(self.geometry.slot_bytes);
        Some((die, u64::from(slot) / self.geometry.slots_per_page, bytes))
    }

    /// Read one logical page from NAND (for a read or a read-modify-write) starting at
    /// `earliest_ns`; returns when its data is in the controller, or None when unmapped.
    pub(super) fn read_page(&mut self, lpn: usize, earliest_ns: u64) -> Option<u64> {
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
}
