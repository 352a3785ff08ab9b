//! One worker's record of what it wrote: per granule the generation of its last write, the
//! writes fio's list holds, and what it takes to regenerate any write's bytes (its data seed,
//! its extent where a later write cut its run).

use super::generations::Generations;
use crate::fio_verify::FioFormat;
use crate::offsets::Region;
use crate::pattern;
use crate::verify_data_seeds::DataSeeds;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use storlab_job::DataPattern;

/// What one worker wrote: per granule of its region, the generation of the last write.
pub struct WriteRecord {
    pub worker_index: u32,
    seed: u64,
    pattern: DataPattern,
    granule_bytes: u64,
    region: Region,
    /// Generation per granule, by pages that exist once written to.
    pub(super) generations: Generations,
    /// Granules whose last write was issued while an earlier write of this worker to them was
    /// in flight: the earlier generations that may have landed instead.
    ambiguous: HashMap<u64, Vec<u32>>,
    written_granules: u64,
    /// fio's block format, when the job names a fio verify kind (`fio_verify.rs`).
    pub(super) format: Option<Arc<FioFormat>>,
    /// The data seed of each write in `format` (`verify_data_seeds.rs`).
    data_seeds: DataSeeds,
    /// Where a write began and how long it was, for each write a later one overlapped in
    /// part while its data depends on its extent (`FioFormat::needs_write_extent`): its run
    /// of granules no longer says so.
    cut_writes: HashMap<u32, (u64, u64)>,
    /// Read back in the order written, not by offset: fio keeps its written pieces in a list
    /// when the file has a random map, else sorted (iolog.c, `log_io_piece`).
    write_order: bool,
    /// With `write_order`, fio's list itself: every write as (generation, offset, length) in
    /// the order issued, those a later write overlapped included, as fio reads each back.
    pieces: VecDeque<(u32, u64, u64)>,
}

impl WriteRecord {
    pub fn new(
        worker_index: u32,
        seed: u64,
        pattern: DataPattern,
        granule_bytes: u64,
        region: Region,
    ) -> Self {
        let granules = region.len_bytes / granule_bytes;
        WriteRecord {
            worker_index,
            seed,
            pattern,
            granule_bytes,
            region,
            generations: Generations::new(granules),
            ambiguous: HashMap::new(),
            written_granules: 0,
            format: None,
            data_seeds: DataSeeds::Mixed { worker_seed: seed },
            cut_writes: HashMap::new(),
            write_order: false,
            pieces: VecDeque::new(),
        }
    }

    /// Read back in the order written (fio's list of pieces) when `write_order`.
    pub fn in_write_order(mut self, write_order: bool) -> Self {
        self.write_order = write_order;
        self
    }

    /// Writes carry fio's verify blocks in `format`.
    pub fn with_format(mut self, format: Option<Arc<FioFormat>>) -> Self {
        self.format = format;
        self
    }

    /// Writes in fio's format take their data seeds from `data_seeds` (fio's own streams).
    pub fn use_data_seeds(&mut self, data_seeds: DataSeeds) {
        self.data_seeds = data_seeds;
    }

    /// The data seed of the write of `generation`, about to be filled (`reseeds`: the loops
    /// that re-seeded fio's streams so far).
    pub fn draw_data_seed(&mut self, generation: u32, reseeds: Option<u32>) {
        if self.format.is_some() {
            self.data_seeds.draw_for_write(generation, reseeds);
        }
    }

    /// A draw of the data seeds' stream by a read of fio's verify log (or a requeued write).
    pub fn draw_data_seed_aside(&mut self, reseeds: Option<u32>) {
        if self.format.is_some() {
            self.data_seeds.draw_aside(reseeds);
        }
    }

    /// fio's verify pass after a loop re-seeds the data seeds' stream its reads draw from.
    pub fn restart_data_seeds_for_verify_pass(&mut self) {
        if self.format.is_some() {
            self.data_seeds.restart_for_verify_pass();
        }
    }

    /// fio's thread number of the worker (from 1), as its headers carry it.
    fn thread(&self) -> u16 {
        self.worker_index.saturating_add(1) as u16
    }

    pub fn granule_bytes(&self) -> u64 {
        self.granule_bytes
    }

    /// Distinct bytes written (and not yet forgotten).
    pub fn written_bytes(&self) -> u64 {
        self.written_granules * self.granule_bytes
    }

    fn index_of(&self, offset_bytes: u64) -> Option<u64> {
        let relative = offset_bytes.checked_sub(self.region.start_bytes)?;
        (relative < self.region.len_bytes).then_some(relative / self.granule_bytes)
    }

    fn get(&self, index: u64) -> u32 {
        self.generations.get(index)
    }

    /// Record a write of `len_bytes` at `offset_bytes` in `generation`, issued while the writes
    /// of `in_flight` (generations) were outstanding.
    pub fn record(
        &mut self,
        offset_bytes: u64,
        len_bytes: u64,
        generation: u32,
        in_flight: &[u32],
    ) {
        // Granules count from the region's start, which a fio job's `offset` may put anywhere.
        debug_assert!(
            (offset_bytes.wrapping_sub(self.region.start_bytes)).is_multiple_of(self.granule_bytes)
        );
        debug_assert!(len_bytes.is_multiple_of(self.granule_bytes));
        let Some(first) = self.index_of(offset_bytes) else {
            return;
        };
        if self.write_order {
            self.pieces.push_back((generation, offset_bytes, len_bytes));
        }
        self.keep_extents_cut_by(first, len_bytes / self.granule_bytes, in_flight);
        // fio's tree of pieces (no random map) drops every earlier piece the write overlaps,
        // whole (iolog.c, `log_io_piece`): their bytes left standing go unchecked.
        let drops_overlapped = self.format.is_some() && !self.write_order;
        let mut overlapped: Vec<u32> = Vec::new();
        let mut end = first;
        for index in first..first + len_bytes / self.granule_bytes {
            let Some(previous) = self.generations.replace(index, generation) else {
                break;
            };
            end = index + 1;
            if previous == 0 {
                self.written_granules += 1;
            } else if in_flight.contains(&previous) {
                self.ambiguous.entry(index).or_default().push(previous);
            } else if !self.ambiguous.is_empty() {
                self.ambiguous.remove(&index);
            }
            if drops_overlapped && previous != 0 && !overlapped.contains(&previous) {
                overlapped.push(previous);
            }
        }
        for previous in overlapped {
            self.drop_piece_beside(first, end, previous);
        }
    }

    /// Before a write (or a read-back that forgets them) over `count` granules from index
    /// `first`: the extent of every earlier write it overlaps and leaves part of (or that may
    /// still land, being in flight), while the runs of granules still show it.
    fn keep_extents_cut_by(&mut self, first: u64, count: u64, in_flight: &[u32]) {
        if !self.format.as_ref().is_some_and(|f| f.needs_write_extent()) {
            return;
        }
        let granules = self.region.len_bytes / self.granule_bytes;
        let end = (first + count).min(granules);
        let first_byte = self.region.start_bytes + first * self.granule_bytes;
        let end_byte = self.region.start_bytes + end * self.granule_bytes;
        // A write's granules lie in one run: each run is looked at once (one met again after
        // another run is looked at again, to the same end).
        let mut last_seen = 0;
        for index in first..end {
            let previous = self.get(index);
            if previous == 0 || previous == last_seen {
                continue;
            }
            last_seen = previous;
            if self.cut_writes.contains_key(&previous) {
                continue;
            }
            let at = self.region.start_bytes + index * self.granule_bytes;
            let (start, len) = self.write_extent(at, self.granule_bytes, previous);
            let covered = start >= first_byte && start + len <= end_byte;
            if !covered || in_flight.contains(&previous) {
                self.cut_writes.insert(previous, (start, len));
            }
        }
    }

    /// Forget what is left of the piece of `generation` that a write over granules
    /// `first..end` overlapped: a piece is one run, so its rest lies against either edge.
    fn drop_piece_beside(&mut self, first: u64, end: u64, generation: u32) {
        let granules = self.region.len_bytes / self.granule_bytes;
        let left = (0..first).rev().take_while(|&i| self.get(i) == generation);
        let right = (end..granules).take_while(|&i| self.get(i) == generation);
        let rest: Vec<u64> = left.chain(right).collect();
        for index in rest {
            self.generations.replace(index, 0);
            self.written_granules -= 1;
            if !self.ambiguous.is_empty() {
                self.ambiguous.remove(&index);
            }
        }
    }

    /// Drop the piece of `len_bytes` at `offset_bytes` from fio's list (`write_order`): a
    /// backlog read took it, whatever it found there. fio's list is read from its head: the
    /// piece read is one of the first.
    pub fn drop_piece(&mut self, offset_bytes: u64, len_bytes: u64) {
        if let Some(at) = self
            .pieces
            .iter()
            .position(|&(_, at, len)| (at, len) == (offset_bytes, len_bytes))
        {
            self.pieces.remove(at);
        }
    }

    /// Drop the granules of `len_bytes` at `offset_bytes` from the read-back: they were read and
    /// checked already (`verify_backlog`), and no longer count in [`Self::written_bytes`].
    pub fn forget(&mut self, offset_bytes: u64, len_bytes: u64) {
        let Some(first) = self.index_of(offset_bytes) else {
            return;
        };
        self.drop_piece(offset_bytes, len_bytes);
        // A read of one piece may take part of another write's run (fio's piece was cut).
        self.keep_extents_cut_by(first, len_bytes / self.granule_bytes, &[]);
        for index in first..first + len_bytes / self.granule_bytes {
            if self.generations.replace(index, 0).is_some_and(|g| g != 0) {
                self.written_granules -= 1;
            }
            if !self.ambiguous.is_empty() {
                self.ambiguous.remove(&index);
            }
        }
    }

    /// Drop from the read-back every granule whose last write is of generation
    /// `first_generation` or later: fio's `verify_state_load` stops its verify pass at the first
    /// write the saved run had not completed, so that write and the ones after it go unchecked.
    pub fn forget_generations_from(&mut self, first_generation: u32) {
        self.pieces
            .retain(|&(generation, _, _)| generation < first_generation);
        self.cut_writes
            .retain(|&generation, _| generation < first_generation);
        let (written, ambiguous) = (&mut self.written_granules, &mut self.ambiguous);
        self.generations.forget_from(first_generation, |index| {
            *written -= 1;
            if !ambiguous.is_empty() {
                ambiguous.remove(&index);
            }
        });
    }

    /// fio's verify pass stops at the block it fails: nothing after the piece of `len_bytes`
    /// at `offset_bytes` (in the read-back's order) is read back.
    pub fn end_read_back_at(&mut self, offset_bytes: u64, len_bytes: u64) {
        if self.write_order {
            let failing = self
                .pieces
                .iter()
                .position(|&(_, at, len)| (at, len) == (offset_bytes, len_bytes));
            if let Some(at) = failing {
                self.pieces.truncate(at + 1);
            }
            return;
        }
        let region_end = self.region.start_bytes + self.region.len_bytes;
        let end = offset_bytes + len_bytes;
        if end < region_end {
            self.forget(end, region_end - end);
        }
    }

    /// The generation of the last write to the granule at `offset_bytes` (0: never written).
    pub fn generation_at(&self, offset_bytes: u64) -> u32 {
        self.index_of(offset_bytes).map_or(0, |i| self.get(i))
    }

    /// Whether the granule at `offset_bytes` may hold another generation than the last.
    pub fn is_ambiguous(&self, offset_bytes: u64) -> bool {
        !self.ambiguous.is_empty()
            && self
                .index_of(offset_bytes)
                .is_some_and(|i| self.ambiguous.contains_key(&i))
    }

    /// Every generation the granule at `offset_bytes` may hold, the last first.
    pub(super) fn candidates_at(&self, offset_bytes: u64) -> Vec<u32> {
        let Some(index) = self.index_of(offset_bytes) else {
            return Vec::new();
        };
        let last = self.get(index);
        if last == 0 {
            return Vec::new();
        }
        let mut all = vec![last];
        if let Some(earlier) = self.ambiguous.get(&index) {
            all.extend(earlier.iter().rev());
        }
        all
    }

    /// Fill `buf` (whole granules from `offset_bytes`) with what generation `generation` wrote.
    pub fn fill_expected(&self, buf: &mut [u8], offset_bytes: u64, generation: u32) {
        self.fill_expected_near(buf, offset_bytes, generation, &mut None);
    }

    /// `fill_expected`, with the write extent last found kept in `last_write` (its
    /// generation, start and length): the granules of one write, checked one after another,
    /// find it once rather than each scanning the write again.
    pub(super) fn fill_expected_near(
        &self,
        buf: &mut [u8],
        offset_bytes: u64,
        generation: u32,
        last_write: &mut Option<(u32, u64, u64)>,
    ) {
        if let Some(format) = &self.format {
            let write = if format.needs_write_extent() {
                match *last_write {
                    Some((g, start, len))
                        if g == generation
                            && start <= offset_bytes
                            && offset_bytes + buf.len() as u64 <= start + len =>
                    {
                        (start, len)
                    }
                    _ => {
                        let (start, len) =
                            self.write_extent(offset_bytes, buf.len() as u64, generation);
                        *last_write = Some((generation, start, len));
                        (start, len)
                    }
                }
            } else {
                (offset_bytes, buf.len() as u64)
            };
            format.fill_within(
                buf,
                offset_bytes,
                self.data_seeds.seed_of(generation),
                self.thread(),
                generation,
                write,
            );
            return;
        }
        pattern::fill_verifiable(
            buf,
            self.pattern,
            self.seed,
            offset_bytes,
            self.granule_bytes as usize,
            generation,
        );
    }

    /// The write of `generation` that `len_bytes` at `offset_bytes` belong to: as kept when a
    /// later write cut it (`cut_writes`), else the run of granules that generation holds
    /// around them (each write has its own), or these bytes themselves when the write is not
    /// recorded yet (it is being filled).
    fn write_extent(&self, offset_bytes: u64, len_bytes: u64, generation: u32) -> (u64, u64) {
        if let Some(&extent) = self.cut_writes.get(&generation) {
            return extent;
        }
        let Some(first) = self.index_of(offset_bytes) else {
            return (offset_bytes, len_bytes);
        };
        if self.get(first) != generation {
            return (offset_bytes, len_bytes);
        }
        let granules = self.region.len_bytes / self.granule_bytes;
        let before = (0..first)
            .rev()
            .take_while(|&i| self.get(i) == generation)
            .count() as u64;
        let after = (first + 1..granules)
            .take_while(|&i| self.get(i) == generation)
            .count() as u64;
        let start = offset_bytes - before * self.granule_bytes;
        (start, (before + 1 + after) * self.granule_bytes)
    }

    /// The written extents in offset order (or the order written), cut into reads of at most
    /// `max_len_bytes`.
    pub(crate) fn extents(&self, max_len_bytes: u64) -> Box<dyn Iterator<Item = (u64, u64)> + '_> {
        let by_offset = Extents {
            record: self,
            next_index: 0,
            max_granules: (max_len_bytes / self.granule_bytes).max(1),
        };
        if !self.write_order {
            return Box::new(by_offset);
        }
        // fio reads its list back whole, piece by piece in the order written, a piece a later
        // write overlapped too (it checks what is there now).
        let max_bytes = max_len_bytes.max(self.granule_bytes);
        Box::new(self.pieces.iter().flat_map(move |&(_, offset, len)| {
            (0..len.div_ceil(max_bytes)).map(move |i| {
                let at = i * max_bytes;
                (offset + at, max_bytes.min(len - at))
            })
        }))
    }
}

/// Iterator over a record's written extents, one per write still whole or in part: (offset,
/// length) in bytes.
struct Extents<'a> {
    record: &'a WriteRecord,
    next_index: u64,
    max_granules: u64,
}

impl Iterator for Extents<'_> {
    type Item = (u64, u64);
    fn next(&mut self) -> Option<(u64, u64)> {
        let record = self.record;
        let granules = record.region.len_bytes / record.granule_bytes;
        // Skip to the first written granule, a whole unwritten page at a time.
        let Some(mut i) = record.generations.next_written(self.next_index, granules) else {
            self.next_index = granules;
            return None;
        };
        // One read per write, as fio reads back each logged piece whole (iolog.c): the run of
        // granules of one generation.
        let start = i;
        let generation = record.get(start);
        while i < granules && i - start < self.max_granules && record.get(i) == generation {
            i += 1;
        }
        self.next_index = i;
        Some((
            record.region.start_bytes + start * record.granule_bytes,
            (i - start) * record.granule_bytes,
        ))
    }
}
