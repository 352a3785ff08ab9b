//! A table of `u32` entries (slots of logical pages, logical pages of slots) that all start as
//! NONE and costs memory by what is irregular, not by its length: a two-level table whose
//! leaves of [`LEAF_LEN`] entries are empty (all NONE), a pattern, or a plain array.
//!
//! The pattern is the shape a die-striped write leaves: runs of `run_len` consecutive values,
//! the runs dealt round `bases.len()` dies, each die's next run `stride` past its last. A
//! sequential fill maps logical pages that way (runs of one multi-plane program per die, the
//! dies in turn) and programs each block's out-of-band areas that way (one run of logical pages
//! per program, `run_len × dies` apart), so a filled 2 TB drive's map takes a few bytes per
//! leaf instead of 4 per entry. A leaf becomes an array when first written and is turned back
//! into a pattern when its last entry is written and every entry fits one; a write to a
//! pattern leaf that breaks it is kept as an exception beside the pattern until there are too
//! many (random writes over a filled drive cost memory by the pages they write). The encoding
//! is checked entry by entry before a leaf changes form, so every form reads back exactly what
//! was written.

use super::NONE;

const LEAF_BITS: u32 = 10;
/// Entries per leaf: a leaf of the forward map covers 4 MiB of logical pages, which on the
/// shipped geometries stays inside one block per die (a pattern holds one base per die).
const LEAF_LEN: usize = 1 << LEAF_BITS;
/// Most dies (bases) a pattern holds.
const MAX_BASES: usize = 64;
/// Most exceptions a pattern leaf keeps before it becomes an array (8 bytes each: at this
/// count the pattern costs a quarter of the array).
const MAX_EXCEPTIONS: usize = LEAF_LEN / 16;

/// Most pieces a leaf's pattern may have: a fill whose dies move to their next blocks inside
/// the leaf gives two, one before and one after.
const MAX_SEGMENTS: usize = 4;

/// The shape of a stretch of a leaf written by striped runs; see the module comment.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Segment {
    /// Offset in the leaf where the segment starts.
    start: u16,
    run_len: u32,
    /// Entries of the segment's first run that lie before it (it may start inside a run).
    phase: u32,
    stride: u32,
    /// Where each die's first run in the segment starts (the first one counted from `phase`
    /// entries before the segment).
    bases: Box<[u32]>,
}

impl Segment {
    #[inline]
    fn predicted(&self, offset: usize) -> u32 {
        let at = (offset - usize::from(self.start)) as u32 + self.phase;
        let run = at / self.run_len;
        let dies = self.bases.len() as u32;
        self.bases[(run % dies) as usize]
            .wrapping_add((run / dies).wrapping_mul(self.stride))
            .wrapping_add(at % self.run_len)
    }

    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Segment>() + self.bases.len() * 4
    }
}

/// A leaf as segments of patterns, plus the entries that differ from them.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Pattern {
    segments: Box<[Segment]>,
    /// Entries that differ from the segments, by offset in the leaf (sorted).
    exceptions: Vec<(u16, u32)>,
}

impl Pattern {
    #[inline]
    fn predicted(&self, offset: usize) -> u32 {
        let segment = match &*self.segments {
            [] => return NONE,
            [only] => only,
            segments => segments
                .iter()
                .rev()
                .find(|s| usize::from(s.start) <= offset)
                .expect("the first segment starts the leaf"),
        };
        segment.predicted(offset)
    }

    #[inline]
    fn get(&self, offset: usize) -> u32 {
        if !self.exceptions.is_empty() {
            if let Ok(i) = self
                .exceptions
                .binary_search_by_key(&(offset as u16), |e| e.0)
            {
                return self.exceptions[i].1;
            }
        }
        self.predicted(offset)
    }

    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Pattern>()
            + self.segments.iter().map(Segment::heap_bytes).sum::<usize>()
            + self.exceptions.capacity() * std::mem::size_of::<(u16, u32)>()
    }

    /// The segments of `values` (no NONE among them), if a few cover every entry exactly.
    fn find(values: &[u32]) -> Option<Pattern> {
        // Runs of consecutive values: (offset, first value); a sentinel run marks the end.
        let mut runs: Vec<(usize, u32)> = vec![(0, values[0])];
        for k in 1..values.len() {
            if values[k] != values[k - 1].wrapping_add(1) {
                runs.push((k, values[k]));
            }
        }
        runs.push((values.len(), 0));
        let mut segments = Vec::new();
        let mut first = 0;
        while first + 1 < runs.len() {
            if segments.len() == MAX_SEGMENTS {
                return None;
            }
            let (segment, next) = Segment::longest(&runs, first);
            segments.push(segment);
            first = next;
        }
        let pattern = Pattern {
            segments: segments.into_boxed_slice(),
            exceptions: Vec::new(),
        };
        // Every entry, the runs' lengths included, is checked against the encoding.
        values
            .iter()
            .enumerate()
            .all(|(k, &v)| pattern.predicted(k) == v)
            .then_some(pattern)
    }
}

impl Segment {
    /// The segment starting at run `first` of `runs` (the last one a sentinel at the leaf's
    /// end) that covers the most runs, and the run after it.
    fn longest(runs: &[(usize, u32)], first: usize) -> (Segment, usize) {
        let end = runs.len() - 1;
        let len = |j: usize| runs[j + 1].0 - runs[j].0;
        let start_offset = runs[first].0;
        // A lone run, or one longer than the next: a segment of its own.
        let single = |first: usize| Segment {
            start: start_offset as u16,
            run_len: len(first) as u32,
            phase: 0,
            stride: 0,
            bases: Box::new([runs[first].1]),
        };
        if first + 1 == end || len(first) > len(first + 1) {
            return (single(first), first + 1);
        }
        let run_len = len(first + 1);
        let phase = (run_len - len(first)) as u32;
        let start = |j: usize| -> u32 {
            if j == first {
                runs[first].1.wrapping_sub(phase)
            } else {
                runs[j].1
            }
        };
        let mut best = (single(first), first + 1);
        for dies in 1..=MAX_BASES.min(end - first - 1) {
            let stride = start(first + dies).wrapping_sub(start(first));
            // Runs after the first fit while each starts where the pattern says and every
            // run but the segment's last is whole.
            let mut next = first + 1;
            while next < end {
                let k = next - first;
                let fits = start(next)
                    == start(first + k % dies)
                        .wrapping_add(((k / dies) as u32).wrapping_mul(stride));
                if !fits {
                    break;
                }
                next += 1;
                if len(next - 1) != run_len {
                    break;
                }
            }
            if next > best.1 {
                best = (
                    Segment {
                        start: start_offset as u16,
                        run_len: run_len as u32,
                        phase,
                        stride,
                        bases: (0..dies).map(|d| start(first + d)).collect(),
                    },
                    next,
                );
                if next == end {
                    break;
                }
            }
        }
        best
    }
}

#[derive(Clone, Debug)]
enum Leaf {
    Empty,
    Array(Box<[u32]>),
    Pattern(Box<Pattern>),
}

/// The table; see the module comment.
#[derive(Clone, Debug)]
pub(super) struct CompactTable {
    len: usize,
    leaves: Vec<Leaf>,
    /// Bytes the leaves hold on the heap.
    heap_bytes: usize,
}

impl CompactTable {
    pub(super) fn new(len: usize) -> CompactTable {
        CompactTable {
            len,
            leaves: vec![Leaf::Empty; len.div_ceil(LEAF_LEN)],
            heap_bytes: 0,
        }
    }

    /// Entries of leaf `leaf` (the last one may be short).
    fn leaf_len(&self, leaf: usize) -> usize {
        (self.len - leaf * LEAF_LEN).min(LEAF_LEN)
    }

    #[inline]
    pub(super) fn get(&self, index: usize) -> u32 {
        debug_assert!(index < self.len);
        let offset = index & (LEAF_LEN - 1);
        match &self.leaves[index >> LEAF_BITS] {
            Leaf::Array(values) => values[offset],
            Leaf::Empty => NONE,
            Leaf::Pattern(p) => p.get(offset),
        }
    }

    pub(super) fn set(&mut self, index: usize, value: u32) {
        debug_assert!(index < self.len);
        let leaf = index >> LEAF_BITS;
        let offset = index & (LEAF_LEN - 1);
        let leaf_len = self.leaf_len(leaf);
        match &mut self.leaves[leaf] {
            Leaf::Array(values) => {
                values[offset] = value;
                if offset + 1 == leaf_len {
                    self.compact(leaf);
                }
            }
            Leaf::Empty => {
                if value != NONE {
                    // Entries of an empty leaf are kept as exceptions to no pattern (NONE) until
                    // there are too many: a random write costs 8 bytes, not a whole array.
                    let sparse = Pattern {
                        segments: Box::new([]),
                        exceptions: vec![(offset as u16, value)],
                    };
                    self.heap_bytes += sparse.heap_bytes();
                    self.leaves[leaf] = Leaf::Pattern(Box::new(sparse));
                }
            }
            Leaf::Pattern(p) => {
                let before = p.heap_bytes();
                let found = p.exceptions.binary_search_by_key(&(offset as u16), |e| e.0);
                match (found, p.predicted(offset) == value) {
                    (Ok(i), true) => {
                        p.exceptions.remove(i);
                    }
                    (Ok(i), false) => p.exceptions[i].1 = value,
                    (Err(_), true) => {}
                    (Err(i), false) => p.exceptions.insert(i, (offset as u16, value)),
                }
                let after = p.heap_bytes();
                self.heap_bytes = self.heap_bytes + after - before;
                if p.segments.is_empty() && p.exceptions.is_empty() {
                    self.heap_bytes -= after;
                    self.leaves[leaf] = Leaf::Empty;
                } else if p.exceptions.len() > MAX_EXCEPTIONS {
                    self.expand(leaf);
                }
            }
        }
    }

    /// A pattern leaf with too many exceptions becomes an array.
    fn expand(&mut self, leaf: usize) {
        let leaf_len = self.leaf_len(leaf);
        if let Leaf::Pattern(p) = &self.leaves[leaf] {
            let values: Box<[u32]> = (0..leaf_len).map(|k| p.get(k)).collect();
            self.heap_bytes = self.heap_bytes - p.heap_bytes() + leaf_len * 4;
            self.leaves[leaf] = Leaf::Array(values);
        }
    }

    /// An array leaf whose entries fit a pattern (or are all NONE) becomes one.
    fn compact(&mut self, leaf: usize) {
        let Leaf::Array(values) = &self.leaves[leaf] else {
            return;
        };
        let replacement = if values.iter().all(|&v| v == NONE) {
            Leaf::Empty
        } else if values.contains(&NONE) {
            return;
        } else {
            match Pattern::find(values) {
                Some(p) => Leaf::Pattern(Box::new(p)),
                None => return,
            }
        };
        self.heap_bytes -= values.len() * 4;
        if let Leaf::Pattern(p) = &replacement {
            self.heap_bytes += p.heap_bytes();
        }
        self.leaves[leaf] = replacement;
    }

    /// Set every entry in `range` back to NONE.
    pub(super) fn erase(&mut self, range: std::ops::Range<usize>) {
        let mut index = range.start;
        while index < range.end {
            let leaf = index >> LEAF_BITS;
            let leaf_start = leaf * LEAF_LEN;
            let leaf_end = leaf_start + self.leaf_len(leaf);
            if index == leaf_start && range.end >= leaf_end {
                self.heap_bytes -= match &self.leaves[leaf] {
                    Leaf::Empty => 0,
                    Leaf::Array(values) => values.len() * 4,
                    Leaf::Pattern(p) => p.heap_bytes(),
                };
                self.leaves[leaf] = Leaf::Empty;
                index = leaf_end;
                continue;
            }
            let end = range.end.min(leaf_end);
            match &mut self.leaves[leaf] {
                Leaf::Empty => {}
                Leaf::Array(values) => {
                    values[index - leaf_start..end - leaf_start].fill(NONE);
                    if values.iter().all(|&v| v == NONE) {
                        self.heap_bytes -= values.len() * 4;
                        self.leaves[leaf] = Leaf::Empty;
                    }
                }
                Leaf::Pattern(_) => {
                    for i in index..end {
                        self.set(i, NONE);
                    }
                }
            }
            index = end;
        }
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len).map(|i| self.get(i))
    }

    /// Bytes allocated.
    pub(super) fn bytes(&self) -> usize {
        self.leaves.capacity() * std::mem::size_of::<Leaf>() + self.heap_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};

    /// Every form reads back what a plain array would, through die-striped fills, random
    /// overwrites, erases and refills.
    #[test]
    fn reads_back_what_was_written_in_every_form() {
        let len = 5 * LEAF_LEN + 77;
        let mut table = CompactTable::new(len);
        let mut plain = vec![NONE; len];
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let check = |table: &CompactTable, plain: &[u32]| {
            for (i, &v) in plain.iter().enumerate() {
                assert_eq!(table.get(i), v, "entry {i}");
            }
        };
        // Scattered writes to empty leaves cost bytes each, not arrays.
        for n in 0..5 {
            let i = n * LEAF_LEN + 3 * n;
            table.set(i, n as u32);
            plain[i] = n as u32;
        }
        check(&table, &plain);
        assert!(table.bytes() < table.leaves.len() * std::mem::size_of::<Leaf>() + 5 * 128);
        // A fill striped over 16 dies in runs of 2, as a sequential write leaves the map.
        let (dies, run, die_span) = (16usize, 2usize, 1u32 << 20);
        for (i, entry) in plain.iter_mut().enumerate() {
            let program = i / run;
            let value =
                (program % dies) as u32 * die_span + ((program / dies) * run + i % run) as u32;
            table.set(i, value);
            *entry = value;
        }
        check(&table, &plain);
        let striped = table.bytes();
        assert!(
            striped < len,
            "a striped fill should cost well under a byte an entry: {striped} bytes"
        );
        for round in 0..3 {
            for _ in 0..2000 {
                let i = rng.next_u32() as usize % len;
                let value = if rng.next_u32() % 5 == 0 {
                    NONE
                } else {
                    rng.next_u32()
                };
                table.set(i, value);
                plain[i] = value;
            }
            check(&table, &plain);
            let start = rng.next_u32() as usize % len;
            let end = (start + rng.next_u32() as usize % (3 * LEAF_LEN)).min(len);
            table.erase(start..end);
            plain[start..end].fill(NONE);
            check(&table, &plain);
            // A refill in order with one long run (the reverse map of one die's blocks).
            for (i, slot) in plain.iter_mut().enumerate() {
                let value = (i as u32).wrapping_mul(32).wrapping_add(round);
                table.set(i, value);
                *slot = value;
            }
            check(&table, &plain);
        }
        table.erase(0..len);
        assert_eq!(
            table.bytes(),
            table.leaves.capacity() * std::mem::size_of::<Leaf>()
        );
    }
}
