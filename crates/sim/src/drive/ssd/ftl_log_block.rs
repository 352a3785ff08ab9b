//! Hybrid (log-block) mapping as 2009-era Indilinx Barefoot firmware did it: block-level mapping
//! of data blocks plus a few page-mapped log blocks, in the FAST arrangement (Lee et al. 2007):
//! one sequential log block per die that becomes a data block by a *switch* merge (no copy) when
//! a host stream fills it from page 0, or by a *partial* merge (copy the rest of the old data
//! block) when something else needs it; and a small pool of fully associative random-write log
//! blocks per die, reclaimed oldest first, each valid page in the victim costing a *full* merge
//! of its data block (copy every valid page of the logical block into a new block, erase the
//! old one). BAST (Kim et al. 2002) would give one log block per data block; under uniform
//! random writes over a whole drive both pay about one full merge per log page reclaimed, and
//! FAST's shared pool is what lets pages of one block meet in the log (fewer merges).
//!
//! Logical pages are striped over the dies page by page (`lpn % dies`), as the Barefoot's own
//! reference firmware (OpenSSD Jasmine's sample FTLs: `bank = lpn % NUM_BANKS`) does, so every
//! die runs its own block-mapped FTL on every `dies`-th page: a sequential stream keeps all dies
//! busy and a random write's merge stays on one die (copy-back, no channel transfer).
//!
//! This module keeps the maps and counts the NAND work each host page causes; the SSD model
//! (`ssd.rs`) books that work on its dies. Erases are lazy: a released block is erased when it
//! is next taken from the free list, which charges the erase to the operation that needs it.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;

/// Marks an absent block, page or log entry.
const NONE: u32 = u32::MAX;

/// Fixed-key hasher: lookups do not depend on a per-process random seed.
type FixedMap<K, V> = HashMap<K, V, BuildHasherDefault<DefaultHasher>>;

/// NAND work on one die: page reads and programs of merge copies, block erases.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NandWork {
    pub reads: u64,
    pub programs: u64,
    pub erases: u64,
}

impl NandWork {
    pub fn is_empty(&self) -> bool {
        *self == NandWork::default()
    }
}

/// Where a host page went and what placing it cost before its own program.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    pub die: usize,
    /// Global physical page (block × pages per block + page) the host page is programmed to.
    pub physical_page: u64,
    /// Merges and erases that had to run first on `die`.
    pub work: NandWork,
}

/// Merge counts by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MergeCounts {
    pub switch: u64,
    pub partial: u64,
    pub full: u64,
}

/// The sequential-write log block of a die: pages at their own offsets of logical block `lbn`,
/// programmed in order up to `next`.
#[derive(Clone, Debug)]
struct SeqLog {
    lbn: u32,
    block: u32,
    next: u32,
    valid: Vec<u64>,
}

/// One die's block-mapped FTL (die-local logical pages `q = lpn / dies`).
struct DieMap {
    /// Local logical block → its data block (NONE = none: never written, trimmed or merged
    /// away).
    data_block: Vec<u32>,
    /// One bit per local logical page: its current data sits at its offset in the data block.
    data_valid: Vec<u64>,
    free: Vec<u32>,
    seq: Option<SeqLog>,
    /// Full random-write log blocks, oldest first.
    random_full: VecDeque<u32>,
    /// The random-write log block being filled and its next page.
    random_open: Option<(u32, u32)>,
    /// How far reclamation of the oldest full log block has got (its next slot to merge).
    reclaim_slot: u32,
    /// Local logical page → global physical page in a random-write log block (the latest copy).
    log_map: FixedMap<u32, u64>,
    /// Random-write log block → the local logical page each programmed page holds (its
    /// out-of-band area; stale entries stay until the erase).
    log_oob: FixedMap<u32, Vec<u32>>,
}

/// Parameters of the hybrid map.
#[derive(Clone, Copy, Debug)]
pub struct LogBlockGeometry {
    pub dies: u32,
    pub blocks_per_die: u32,
    pub pages_per_block: u32,
    pub logical_pages: u64,
    /// Random-write log blocks per die (the sequential log block is one more).
    pub random_logs_per_die: u32,
}

impl LogBlockGeometry {
    /// Local logical pages die `die` holds.
    fn local_pages(&self, die: u32) -> u64 {
        let dies = u64::from(self.dies);
        (self.logical_pages + dies - 1 - u64::from(die)) / dies
    }

    /// Data blocks the busiest die needs when every logical page is written.
    pub fn data_blocks_per_die(&self) -> u64 {
        self.local_pages(0)
            .div_ceil(u64::from(self.pages_per_block))
    }

    /// Blocks a die needs at most at once: every data block, every random log block, the
    /// sequential log block and the target of a full merge (taken before the old data block
    /// is released).
    pub fn blocks_needed_per_die(&self) -> u64 {
        self.data_blocks_per_die() + u64::from(self.random_logs_per_die) + 2
    }
}

/// The hybrid FTL's maps and counters.
pub struct LogBlockFtl {
    g: LogBlockGeometry,
    dies: Vec<DieMap>,
    /// Released blocks wait erased-on-demand: set while a free block still holds old data.
    dirty: Vec<u64>,
    erase_count: Vec<u32>,
    /// Optional simulated page contents (a tag per physical page), for tests of the mapping.
    contents: Option<Vec<u32>>,
    mapped_pages: u64,
    copies: u64,
    merges: MergeCounts,
}

fn bit(words: &[u64], i: u64) -> bool {
    words[(i / 64) as usize] & (1 << (i % 64)) != 0
}

fn set_bit(words: &mut [u64], i: u64, on: bool) {
    let b = 1u64 << (i % 64);
    if on {
        words[(i / 64) as usize] |= b;
    } else {
        words[(i / 64) as usize] &= !b;
    }
}

impl LogBlockFtl {
    /// A fresh drive: every block erased and free.
    pub fn new(g: LogBlockGeometry) -> LogBlockFtl {
        let ppb = u64::from(g.pages_per_block);
        let dies = (0..g.dies)
            .map(|d| {
                let local_pages = g.local_pages(d);
                let first = d * g.blocks_per_die;
                DieMap {
                    data_block: vec![NONE; local_pages.div_ceil(ppb) as usize],
                    data_valid: vec![0; (local_pages.div_ceil(ppb) * ppb).div_ceil(64) as usize],
                    // Popped from the back: lowest block first.
                    free: (first..first + g.blocks_per_die).rev().collect(),
                    seq: None,
                    random_full: VecDeque::new(),
                    random_open: None,
                    reclaim_slot: 0,
                    log_map: FixedMap::default(),
                    log_oob: FixedMap::default(),
                }
            })
            .collect();
        let blocks = u64::from(g.dies) * u64::from(g.blocks_per_die);
        LogBlockFtl {
            g,
            dies,
            dirty: vec![0; blocks.div_ceil(64) as usize],
            erase_count: vec![0; blocks as usize],
            contents: None,
            mapped_pages: 0,
            copies: 0,
            merges: MergeCounts::default(),
        }
    }

    /// Keep a tag per physical page (what the host wrote there), moved by every merge, so tests
    /// can check that each logical page maps to the data last written to it.
    pub fn track_contents(&mut self) {
        let pages = u64::from(self.g.dies)
            * u64::from(self.g.blocks_per_die)
            * u64::from(self.g.pages_per_block);
        self.contents = Some(vec![NONE; pages as usize]);
    }

    /// The tag of the data logical page `lpn` maps to (None when unmapped or not tracking).
    pub fn content_of(&self, lpn: u64) -> Option<u32> {
        let page = self.locate(lpn)?;
        self.contents.as_ref().map(|c| c[page as usize])
    }

    pub fn die_of(&self, lpn: u64) -> usize {
        (lpn % u64::from(self.g.dies)) as usize
    }

    fn split(&self, lpn: u64) -> (usize, u32) {
        let dies = u64::from(self.g.dies);
        ((lpn % dies) as usize, (lpn / dies) as u32)
    }

    fn ppb(&self) -> u32 {
        self.g.pages_per_block
    }

    /// The physical page holding logical page `lpn`'s current data, or None when unmapped.
    pub fn locate(&self, lpn: u64) -> Option<u64> {
        let (d, q) = self.split(lpn);
        let ppb = self.ppb();
        let (lbn, off) = (q / ppb, q % ppb);
        let die = &self.dies[d];
        if let Some(&p) = die.log_map.get(&q) {
            return Some(p);
        }
        if let Some(s) = &die.seq {
            if s.lbn == lbn && bit(&s.valid, u64::from(off)) {
                return Some(u64::from(s.block) * u64::from(ppb) + u64::from(off));
            }
        }
        if bit(&die.data_valid, u64::from(q)) {
            let b = die.data_block[lbn as usize];
            return Some(u64::from(b) * u64::from(ppb) + u64::from(off));
        }
        None
    }

    pub fn mapped_pages(&self) -> u64 {
        self.mapped_pages
    }

    /// Pages merges copied.
    pub fn copies(&self) -> u64 {
        self.copies
    }

    pub fn merges(&self) -> MergeCounts {
        self.merges
    }

    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_count
    }

    pub fn free_blocks(&self, die: usize) -> u64 {
        self.dies[die].free.len() as u64
    }

    fn take_free(&mut self, d: usize, work: &mut NandWork) -> u32 {
        let block = self.dies[d]
            .free
            .pop()
            .expect("validation keeps a free block for every merge");
        if bit(&self.dirty, u64::from(block)) {
            set_bit(&mut self.dirty, u64::from(block), false);
            self.erase_count[block as usize] += 1;
            work.erases += 1;
        }
        block
    }

    fn release(&mut self, d: usize, block: u32) {
        set_bit(&mut self.dirty, u64::from(block), true);
        if let Some(c) = self.contents.as_mut() {
            let ppb = self.g.pages_per_block as usize;
            c[block as usize * ppb..(block as usize + 1) * ppb].fill(NONE);
        }
        self.dies[d].free.push(block);
    }

    fn copy_page(&mut self, from: u64, to: u64, work: &mut NandWork) {
        work.reads += 1;
        work.programs += 1;
        self.copies += 1;
        if let Some(c) = self.contents.as_mut() {
            c[to as usize] = c[from as usize];
        }
    }

    /// Whether local logical block `lbn`'s data block still holds any current page.
    fn data_block_used(&self, d: usize, lbn: u32) -> bool {
        let ppb = u64::from(self.ppb());
        let first = u64::from(lbn) * ppb;
        (first..first + ppb).any(|q| bit(&self.dies[d].data_valid, q))
    }

    /// Forget the current copy of local page `q` (overwritten or trimmed); a data block left
    /// with no current page is released. Returns whether the page was mapped.
    fn invalidate(&mut self, d: usize, q: u32) -> bool {
        let ppb = self.ppb();
        let (lbn, off) = (q / ppb, q % ppb);
        let die = &mut self.dies[d];
        let was = if die.log_map.remove(&q).is_some() {
            true
        } else if let Some(s) = die
            .seq
            .as_mut()
            .filter(|s| s.lbn == lbn && bit(&s.valid, off.into()))
        {
            set_bit(&mut s.valid, off.into(), false);
            true
        } else if bit(&die.data_valid, q.into()) {
            set_bit(&mut die.data_valid, q.into(), false);
            if !self.data_block_used(d, lbn) {
                let block = std::mem::replace(&mut self.dies[d].data_block[lbn as usize], NONE);
                self.release(d, block);
            }
            true
        } else {
            false
        };
        if was {
            self.mapped_pages -= 1;
        }
        was
    }

    /// TRIM of logical page `lpn`: its data is forgotten (merges will not copy it). Returns
    /// whether it was mapped.
    pub fn trim(&mut self, lpn: u64) -> bool {
        let (d, q) = self.split(lpn);
        self.invalidate(d, q)
    }

    /// Place host page `lpn` (tagged `tag` when tracking contents).
    pub fn write(&mut self, lpn: u64, tag: u32) -> Placement {
        let (d, q) = self.split(lpn);
        let ppb = self.ppb();
        let (lbn, off) = (q / ppb, q % ppb);
        let mut work = NandWork::default();
        self.invalidate(d, q);
        self.mapped_pages += 1;
        let appends = self.dies[d]
            .seq
            .as_ref()
            .is_some_and(|s| s.lbn == lbn && s.next == off);
        let page = if off == 0 || appends {
            if off == 0 {
                // A stream starts at the block's first page: it gets the sequential log block.
                if let Some(s) = self.dies[d].seq.take() {
                    self.merge_seq(d, s, &mut work);
                }
                let block = self.take_free(d, &mut work);
                self.dies[d].seq = Some(SeqLog {
                    lbn,
                    block,
                    next: 0,
                    valid: vec![0; (ppb as usize).div_ceil(64)],
                });
            }
            let s = self.dies[d]
                .seq
                .as_mut()
                .expect("sequential log just opened");
            let page = u64::from(s.block) * u64::from(ppb) + u64::from(off);
            set_bit(&mut s.valid, off.into(), true);
            s.next += 1;
            page
        } else {
            self.append_random(d, q, &mut work)
        };
        if let Some(c) = self.contents.as_mut() {
            c[page as usize] = tag;
        }
        // A full sequential log block switches at once, so the next stream finds it free.
        if self.dies[d].seq.as_ref().is_some_and(|s| s.next == ppb) {
            let s = self.dies[d].seq.take().expect("checked");
            self.merge_seq(d, s, &mut work);
        }
        Placement {
            die: d,
            physical_page: page,
            work,
        }
    }

    fn append_random(&mut self, d: usize, q: u32, work: &mut NandWork) -> u64 {
        let ppb = self.ppb();
        let pool = self.g.random_logs_per_die as usize;
        // With the pool in use, every append reclaims one slot of the oldest log block, so the
        // oldest is empty by the time the open one fills: merges are spread one per host page
        // instead of a block's worth at once.
        if self.dies[d].random_full.len() + 1 >= pool && self.dies[d].random_open.is_some() {
            self.reclaim_step(d, work);
        }
        let open = match self.dies[d].random_open {
            Some((block, next)) if next < ppb => (block, next),
            full => {
                if let Some((block, _)) = full {
                    self.dies[d].random_full.push_back(block);
                }
                // Only when the pace slipped (a pool of one block): reclaim the rest at once.
                while self.dies[d].random_full.len() >= pool {
                    self.reclaim_step(d, work);
                }
                let block = self.take_free(d, work);
                self.dies[d].log_oob.insert(block, vec![NONE; ppb as usize]);
                (block, 0)
            }
        };
        let (block, next) = open;
        let page = u64::from(block) * u64::from(ppb) + u64::from(next);
        let die = &mut self.dies[d];
        die.log_oob
            .get_mut(&block)
            .expect("open log block has its OOB")[next as usize] = q;
        die.log_map.insert(q, page);
        die.random_open = Some((block, next + 1));
        page
    }

    /// One step of reclaiming the oldest random-write log block: if its next slot still holds
    /// a current page, a full merge of that page's logical block (which also takes that
    /// block's other log pages out of the log); after its last slot, the log block is
    /// released.
    fn reclaim_step(&mut self, d: usize, work: &mut NandWork) {
        let Some(&victim) = self.dies[d].random_full.front() else {
            return;
        };
        let ppb = self.ppb();
        let slot = self.dies[d].reclaim_slot;
        let q = self.dies[d].log_oob[&victim][slot as usize];
        let page = u64::from(victim) * u64::from(ppb) + u64::from(slot);
        if q != NONE && self.dies[d].log_map.get(&q) == Some(&page) {
            self.full_merge(d, q / ppb, work);
        }
        if slot + 1 < ppb {
            self.dies[d].reclaim_slot = slot + 1;
            return;
        }
        self.dies[d].reclaim_slot = 0;
        self.dies[d].random_full.pop_front();
        self.dies[d].log_oob.remove(&victim);
        self.release(d, victim);
    }

    /// Copy every current page of local logical block `lbn` (from the random logs, the
    /// sequential log and the data block) into a new data block at its offset; release the old
    /// data block, and the sequential log block if it belonged to `lbn`.
    fn full_merge(&mut self, d: usize, lbn: u32, work: &mut NandWork) {
        self.merges.full += 1;
        let ppb = self.ppb();
        let first = lbn * ppb;
        let old = self.dies[d].data_block[lbn as usize];
        let mut new = NONE;
        for off in 0..ppb {
            let q = first + off;
            let die = &mut self.dies[d];
            let from = if let Some(p) = die.log_map.remove(&q) {
                p
            } else if let Some(s) = die
                .seq
                .as_mut()
                .filter(|s| s.lbn == lbn && bit(&s.valid, off.into()))
            {
                set_bit(&mut s.valid, off.into(), false);
                u64::from(s.block) * u64::from(ppb) + u64::from(off)
            } else if bit(&die.data_valid, q.into()) {
                u64::from(old) * u64::from(ppb) + u64::from(off)
            } else {
                continue;
            };
            if new == NONE {
                new = self.take_free(d, work);
            }
            self.copy_page(from, u64::from(new) * u64::from(ppb) + u64::from(off), work);
            set_bit(&mut self.dies[d].data_valid, q.into(), true);
        }
        if old != NONE {
            self.release(d, old);
        }
        if self.dies[d].seq.as_ref().is_some_and(|s| s.lbn == lbn) {
            let s = self.dies[d].seq.take().expect("checked");
            self.release(d, s.block);
        }
        self.dies[d].data_block[lbn as usize] = new;
    }

    /// The sequential log block becomes `lbn`'s data block: a switch merge when the stream
    /// filled it, otherwise a partial merge that first copies the old data block's current
    /// pages beyond the stream into it.
    fn merge_seq(&mut self, d: usize, mut s: SeqLog, work: &mut NandWork) {
        let ppb = self.ppb();
        let first = s.lbn * ppb;
        let old = self.dies[d].data_block[s.lbn as usize];
        if s.next == ppb {
            self.merges.switch += 1;
        } else {
            self.merges.partial += 1;
            for off in s.next..ppb {
                let q = first + off;
                if bit(&self.dies[d].data_valid, q.into()) {
                    let from = u64::from(old) * u64::from(ppb) + u64::from(off);
                    let to = u64::from(s.block) * u64::from(ppb) + u64::from(off);
                    self.copy_page(from, to, work);
                    set_bit(&mut s.valid, off.into(), true);
                }
            }
        }
        // Every current page of the old data block is now in the log block (the stream's
        // writes invalidated those below `next`, the copy took the rest).
        if old != NONE {
            self.release(d, old);
        }
        let die = &mut self.dies[d];
        for off in 0..ppb {
            let on = bit(&s.valid, off.into());
            set_bit(&mut die.data_valid, u64::from(first + off), on);
        }
        if s.valid.iter().any(|&w| w != 0) {
            die.data_block[s.lbn as usize] = s.block;
        } else {
            die.data_block[s.lbn as usize] = NONE;
            self.release(d, s.block);
        }
    }

    /// Bytes of map state a controller keeps in RAM: the block map, the per-page current bits
    /// of the data blocks, the free lists, erase counts, the log blocks' page maps and their
    /// out-of-band copies (a hash entry counted as key + value).
    pub fn ram_bytes(&self) -> u64 {
        let ppb = self.g.pages_per_block as usize;
        let per_die: usize = self
            .dies
            .iter()
            .map(|d| {
                d.data_block.capacity() * 4
                    + d.data_valid.capacity() * 8
                    + d.free.capacity() * 4
                    + d.log_map.capacity() * (4 + 8)
                    + d.log_oob.len() * (4 + ppb * 4)
                    + d.random_full.capacity() * 4
                    + d.seq.as_ref().map_or(0, |s| 12 + s.valid.len() * 8)
            })
            .sum();
        (per_die + self.dirty.capacity() * 8 + self.erase_count.capacity() * 4) as u64
    }

    /// Full consistency check: every block has exactly one role (free, data block of one
    /// logical block, sequential log, random log), each logical page has at most one current
    /// copy and the count matches, log map entries name pages whose out-of-band area names the
    /// page back, data bits only where a data block exists, no die holds more random logs than
    /// its pool. With contents tracked, free blocks hold nothing.
    pub fn check_consistency(&self) -> Result<(), String> {
        const FREE: u8 = 1;
        const DATA: u8 = 2;
        const SEQ: u8 = 3;
        const RANDOM: u8 = 4;
        let ppb = self.ppb();
        let blocks = self.erase_count.len();
        let mut role = vec![0u8; blocks];
        let mut claim = |b: u32, r: u8, what: &str| -> Result<(), String> {
            let slot = role
                .get_mut(b as usize)
                .ok_or(format!("{what}: block {b} out of range"))?;
            if *slot != 0 {
                return Err(format!("block {b} is {what} and already had role {slot}"));
            }
            *slot = r;
            Ok(())
        };
        let mut mapped = 0u64;
        for (d, die) in self.dies.iter().enumerate() {
            let die_blocks =
                d as u32 * self.g.blocks_per_die..(d as u32 + 1) * self.g.blocks_per_die;
            for &b in &die.free {
                claim(b, FREE, "free")?;
            }
            for (lbn, &b) in die.data_block.iter().enumerate() {
                let first = lbn as u64 * u64::from(ppb);
                let used = (first..first + u64::from(ppb))
                    .filter(|&q| bit(&die.data_valid, q))
                    .count();
                if b == NONE {
                    if used != 0 {
                        return Err(format!(
                            "die {d} block {lbn}: current data bits without a data block"
                        ));
                    }
                    continue;
                }
                if used == 0 {
                    return Err(format!(
                        "die {d} logical block {lbn}: data block {b} holds nothing"
                    ));
                }
                claim(b, DATA, "a data block")?;
            }
            if let Some(s) = &die.seq {
                claim(s.block, SEQ, "the sequential log")?;
                for off in s.next..ppb {
                    if bit(&s.valid, off.into()) {
                        return Err(format!("die {d}: sequential log page {off} beyond its end"));
                    }
                }
            }
            let randoms: Vec<u32> = die
                .random_full
                .iter()
                .copied()
                .chain(die.random_open.map(|(b, _)| b))
                .collect();
            if randoms.len() > self.g.random_logs_per_die as usize {
                return Err(format!(
                    "die {d}: {} random logs, the pool has {}",
                    randoms.len(),
                    self.g.random_logs_per_die
                ));
            }
            for &b in &randoms {
                claim(b, RANDOM, "a random log")?;
                if !die.log_oob.contains_key(&b) {
                    return Err(format!("random log {b} has no out-of-band record"));
                }
            }
            if die.log_oob.len() != randoms.len() {
                return Err(format!(
                    "die {d}: out-of-band records of blocks that are not logs"
                ));
            }
            let all: Vec<u32> = die
                .free
                .iter()
                .copied()
                .chain(randoms.iter().copied())
                .collect();
            if all.iter().any(|b| !die_blocks.contains(b)) {
                return Err(format!("die {d} holds a block of another die"));
            }
            let ppb64 = u64::from(ppb);
            let local_pages = die.data_block.len() as u64 * ppb64;
            for q in 0..local_pages {
                let (lbn, off) = ((q / ppb64) as u32, (q % ppb64) as u32);
                let in_log = die.log_map.get(&(q as u32)).copied();
                let in_seq = die
                    .seq
                    .as_ref()
                    .is_some_and(|s| s.lbn == lbn && bit(&s.valid, off.into()));
                let in_data = bit(&die.data_valid, q);
                let copies =
                    usize::from(in_log.is_some()) + usize::from(in_seq) + usize::from(in_data);
                if copies > 1 {
                    return Err(format!(
                        "die {d} local page {q} has {copies} current copies"
                    ));
                }
                mapped += copies as u64;
                if let Some(p) = in_log {
                    let (b, slot) = ((p / ppb64) as u32, (p % ppb64) as usize);
                    let oob = die
                        .log_oob
                        .get(&b)
                        .ok_or(format!("page {q} maps into block {b}, not a log"))?;
                    if oob[slot] != q as u32 {
                        return Err(format!(
                            "log page {p} out-of-band names {} not {q}",
                            oob[slot]
                        ));
                    }
                    if let Some((open, next)) = die.random_open {
                        if open == b && slot as u32 >= next {
                            return Err(format!("page {q} maps beyond the open log's end"));
                        }
                    }
                }
            }
        }
        if mapped != self.mapped_pages {
            return Err(format!(
                "{mapped} pages mapped, counter says {}",
                self.mapped_pages
            ));
        }
        if let Some(pos) = role.iter().position(|&r| r == 0) {
            return Err(format!("block {pos} has no role (leaked)"));
        }
        if let Some(c) = &self.contents {
            for (b, &r) in role.iter().enumerate() {
                let pages = &c[b * ppb as usize..(b + 1) * ppb as usize];
                if r == FREE && pages.iter().any(|&t| t != NONE) {
                    return Err(format!("free block {b} holds data"));
                }
            }
        }
        Ok(())
    }
}
