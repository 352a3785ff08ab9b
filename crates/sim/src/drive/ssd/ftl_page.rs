//! The page-mapping FTL: forward map, valid bitmaps and out-of-band records, per-die block
//! lists by valid count, allocation on the write frontiers, greedy garbage collection, and the
//! full consistency check.

use super::compact_table::CompactTable;
use super::nand::{BlockState, Frontier, NO_PAGE};
use super::{SsdDrive, NONE};

/// The page-mapping FTL's state: what the controller keeps in RAM, plus the simulated NAND
/// out-of-band areas GC reads.
pub(super) struct PageMap {
    /// Logical page → first slot of its extent (NONE = unmapped).
    pub(super) forward: CompactTable,
    /// Slots of each logical page's extent (compression only; otherwise all are 1).
    pub(super) extent_slots: Vec<u8>,
    /// Controller RAM: one bit per slot, set where a valid extent starts (GC reads only the
    /// pages these bits name).
    pub(super) valid_bits: Vec<u64>,
    /// Simulated NAND contents, not controller RAM: the logical page each extent-start slot's
    /// out-of-band area records, written with the program and erased with the block (NONE =
    /// erased). Stale entries stay until the erase, as on NAND; only GC reads it.
    pub(super) oob_lpn: CompactTable,
    pub(super) valid_slots: Vec<u16>,
    pub(super) state: Vec<BlockState>,
    pub(super) bucket_prev: Vec<u32>,
    pub(super) bucket_next: Vec<u32>,
    pub(super) erase_count: Vec<u32>,
}

impl SsdDrive {
    pub(super) fn block_of(&self, slot: u32) -> usize {
        (u64::from(slot) / self.geometry.slots_per_block) as usize
    }

    pub(super) fn die_of_block(&self, block: usize) -> usize {
        block / self.geometry.blocks_per_die as usize
    }

    pub(super) fn extent_len(&self, lpn: usize) -> u64 {
        if self.map.extent_slots.is_empty() {
            1
        } else {
            u64::from(self.map.extent_slots[lpn])
        }
    }

    // ---- bucket lists of closed blocks by valid count (greedy victim selection in O(1)) ----

    pub(super) fn bucket_insert(&mut self, block: usize) {
        let die = self.die_of_block(block);
        let v = self.map.valid_slots[block] as usize;
        let head = self.dies[die].bucket_heads[v];
        self.map.bucket_prev[block] = NONE;
        self.map.bucket_next[block] = head;
        if head != NONE {
            self.map.bucket_prev[head as usize] = block as u32;
        }
        self.dies[die].bucket_heads[v] = block as u32;
    }

    pub(super) fn bucket_remove(&mut self, block: usize) {
        let (prev, next) = (self.map.bucket_prev[block], self.map.bucket_next[block]);
        if prev != NONE {
            self.map.bucket_next[prev as usize] = next;
        } else {
            let die = self.die_of_block(block);
            let v = self.map.valid_slots[block] as usize;
            debug_assert_eq!(self.dies[die].bucket_heads[v], block as u32);
            self.dies[die].bucket_heads[v] = next;
        }
        if next != NONE {
            self.map.bucket_prev[next as usize] = prev;
        }
        self.map.bucket_prev[block] = NONE;
        self.map.bucket_next[block] = NONE;
    }

    /// The logical page's current extent is no longer valid (overwritten or trimmed).
    pub(super) fn invalidate(&mut self, lpn: usize) {
        let slot = self.map.forward.get(lpn);
        if slot == NONE {
            return;
        }
        let len = self.extent_len(lpn);
        let block = self.block_of(slot);
        debug_assert!(self.slot_valid(slot), "mapped slot not marked valid");
        debug_assert_eq!(
            self.map.oob_lpn.get(slot as usize),
            lpn as u32,
            "the slot's out-of-band area names another page"
        );
        let closed = self.map.state[block] == BlockState::Closed;
        if closed {
            self.bucket_remove(block);
        }
        debug_assert!(u64::from(self.map.valid_slots[block]) >= len);
        self.map.valid_slots[block] -= len as u16;
        if closed {
            self.bucket_insert(block);
        }
        self.set_slot_valid(slot, false);
        self.map.forward.set(lpn, NONE);
        self.mapped_pages -= 1;
    }

    pub(super) fn slot_valid(&self, slot: u32) -> bool {
        self.map.valid_bits[slot as usize / 64] & (1 << (slot % 64)) != 0
    }

    pub(super) fn set_slot_valid(&mut self, slot: u32, valid: bool) {
        let bit = 1u64 << (slot % 64);
        if valid {
            self.map.valid_bits[slot as usize / 64] |= bit;
        } else {
            self.map.valid_bits[slot as usize / 64] &= !bit;
        }
    }

    /// An extent starting at `slot` is programmed for `lpn`: the page's out-of-band area
    /// records `lpn` (NAND is written once between erases) and the RAM bitmap marks it valid.
    pub(super) fn program_slot(&mut self, slot: u32, lpn: u32) {
        debug_assert!(!self.slot_valid(slot), "slot holds another page");
        debug_assert_eq!(
            self.map.oob_lpn.get(slot as usize),
            NONE,
            "slot programmed twice without an erase"
        );
        self.map.oob_lpn.set(slot as usize, lpn);
        self.set_slot_valid(slot, true);
    }

    /// Map `lpn` to `slot` (an extent of `len` slots the caller allocated).
    pub(super) fn map(&mut self, lpn: usize, slot: u32, len: u64) {
        debug_assert_eq!(self.map.forward.get(lpn), NONE, "page mapped twice");
        let block = self.block_of(slot);
        debug_assert_eq!(self.map.state[block], BlockState::Open);
        self.map.forward.set(lpn, slot);
        self.program_slot(slot, lpn as u32);
        if !self.map.extent_slots.is_empty() {
            self.map.extent_slots[lpn] = len as u8;
        }
        self.map.valid_slots[block] += len as u16;
        self.mapped_pages += 1;
    }

    /// Take a free block on `die` for a frontier.
    pub(super) fn open_block(&mut self, die: usize) -> u32 {
        let block = self.dies[die]
            .free_blocks
            .pop()
            .expect("the GC reserve keeps a free block for every frontier");
        debug_assert_eq!(self.map.state[block as usize], BlockState::Free);
        debug_assert_eq!(self.map.valid_slots[block as usize], 0);
        self.map.state[block as usize] = BlockState::Open;
        block
    }

    pub(super) fn close_block(&mut self, block: u32) {
        self.map.state[block as usize] = BlockState::Closed;
        self.bucket_insert(block as usize);
    }

    /// Allocate `len` consecutive slots on a die's frontier (host or GC); a block too full for
    /// the extent is closed (its tail, if any, left unused). Returns (slot, slots consumed
    /// including padding, whether a new block was opened).
    pub(super) fn allocate(&mut self, die: usize, len: u64, gc: bool) -> (u32, u64, bool) {
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
    pub(super) fn collect(&mut self, die: usize, now_ns: u64) {
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
                let lpn = self.map.oob_lpn.get(next as usize);
                debug_assert_ne!(lpn, NONE, "valid slot with an erased out-of-band area");
                debug_assert_eq!(self.map.forward.get(lpn as usize), next as u32);
                let len = self.extent_len(lpn as usize);
                let page = next / self.geometry.slots_per_page;
                if page != last_page {
                    pages_read += 1;
                    last_page = page;
                }
                self.set_slot_valid(next as u32, false);
                self.map.valid_slots[victim] -= len as u16;
                let (to, consumed, _) = self.allocate(die, len, true);
                self.map.forward.set(lpn as usize, to);
                self.program_slot(to, lpn);
                let to_block = self.block_of(to);
                debug_assert_eq!(self.map.state[to_block], BlockState::Open);
                self.map.valid_slots[to_block] += len as u16;
                copied_slots += consumed;
                self.gc_copies += 1;
            }
            debug_assert_eq!(
                self.map.valid_slots[victim], 0,
                "victim still holds valid data"
            );
            // The erase clears the block's out-of-band areas with its data.
            self.map
                .oob_lpn
                .erase(first as usize..(first + spb) as usize);
            self.map.state[victim] = BlockState::Free;
            self.map.erase_count[victim] += 1;
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
    pub(super) fn next_valid_slot(&self, from: u64, end: u64) -> Option<u64> {
        let mut at = from;
        while at < end {
            let word = self.map.valid_bits[(at / 64) as usize] >> (at % 64);
            if word != 0 {
                let found = at + u64::from(word.trailing_zeros());
                return (found < end).then_some(found);
            }
            at = (at / 64 + 1) * 64;
        }
        None
    }

    /// Full consistency check (O(size)): every mapped page's slot is marked valid and its
    /// out-of-band area names the page, every valid bit belongs to a mapped page (so no slot is
    /// claimed twice), valid counts and bucket membership match the map, free (erased) blocks
    /// hold no valid bits and no out-of-band entries. Returns the first violation.
    pub fn check_consistency(&self) -> Result<(), String> {
        if let Some(log) = self.ftl.log_block() {
            return log.check_consistency();
        }
        let spb = self.geometry.slots_per_block;
        let mut valid = vec![0u64; self.map.valid_slots.len()];
        let mut mapped = 0;
        for (lpn, slot) in self.map.forward.iter().enumerate() {
            if slot == NONE {
                continue;
            }
            mapped += 1;
            if !self.slot_valid(slot) {
                return Err(format!(
                    "page {lpn} maps to slot {slot}, which is not marked valid"
                ));
            }
            if self.map.oob_lpn.get(slot as usize) != lpn as u32 {
                return Err(format!(
                    "page {lpn} maps to slot {slot}, whose out-of-band area names page {}",
                    self.map.oob_lpn.get(slot as usize)
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
            .map
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
            if u64::from(self.map.valid_slots[block]) != v {
                return Err(format!(
                    "block {block}: valid count {} but the map holds {v}",
                    self.map.valid_slots[block]
                ));
            }
            if v > spb {
                return Err(format!("block {block} holds more than it can"));
            }
            if self.map.state[block] == BlockState::Free {
                let first = block as u64 * spb;
                if v != 0 || self.next_valid_slot(first, first + spb).is_some() {
                    return Err(format!("free block {block} holds valid data"));
                }
                if (first as usize..(first + spb) as usize).any(|s| self.map.oob_lpn.get(s) != NONE)
                {
                    return Err(format!("free block {block} has unerased out-of-band areas"));
                }
            }
        }
        for die in &self.dies {
            for (count, &head) in die.bucket_heads.iter().enumerate() {
                let mut b = head;
                while b != NONE {
                    if self.map.state[b as usize] != BlockState::Closed
                        || self.map.valid_slots[b as usize] as usize != count
                    {
                        return Err(format!("block {b} is in the wrong GC bucket"));
                    }
                    b = self.map.bucket_next[b as usize];
                }
            }
        }
        Ok(())
    }
}
