//! Payload store of the simulated drive: what was written, as extents in an ordered map, so a
//! read returns what was written and memory grows with the number of writes, not their bytes.
//! Never-written and trimmed ranges read as zeros.
//!
//! Every byte storlab writes comes from `storlab-pattern`'s generators, and the store keeps such
//! data as what generated it, found from the bytes alone (no side channel, so the simulator still
//! carries and checks real bytes on its protocol path) and kept only when byte-exact:
//! - a verify write is self-describing: each granule's header names its seed, granule size,
//!   pattern and generation, so the extent is those numbers and a read regenerates the range
//!   asked (`Content::Verifiable`);
//! - a normal write is a slot buffer filled once and stamped per write with (offset, counter)
//!   in its first 16 bytes: the store keeps the buffer once as a *source* and each write as a
//!   reference to it plus the counter (`Content::Source`); sequential writes of one slot
//!   merge into one extent. A source is learned from the first write that carries it (an index
//!   of 8-byte words at fixed positions finds it again with one hash look-up and a memcmp).
//!
//! Data no generator explains (foreign data: the pcap decoder, a future block-device front end)
//! becomes a source of its own, counted against a budget: past it, new data is not kept and the
//! count of bytes lost says so (the report warns; timing never depends on the store).
//!
//! Here: the extent map and its bookkeeping (insert, split, merge, release, snapshots);
//! `recognise.rs` finds what generated a write, `read.rs` renders extents back to bytes,
//! `fio_blocks.rs` knows fio's verify block layout.

mod fio_blocks;
mod read;
mod recognise;
#[cfg(test)]
mod tests;

use recognise::index_key;

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound::Excluded;
use storlab_pattern::Pattern;

/// Bytes per chunk of the old per-chunk store; still the unit tests and callers reason in.
pub const CHUNK_BYTES: usize = 4096;
/// Payload memory (sources: data the store could not describe by its generator) a simulated
/// drive keeps by default: room for a 1000 MB benchmark file many times over, and a quarter or
/// less of a machine that runs the suite.
pub const DEFAULT_BUDGET_BYTES: u64 = 4 << 30;
/// Bytes of each normal write's per-write stamp (offset, counter) at its head.
pub(crate) const STAMP_BYTES: usize = storlab_pattern::STAMP_BYTES;
/// Bytes of the stamp holding the write's offset (the rest is its counter).
const STAMP_OFFSET_BYTES: usize = 8;
/// A source is indexed by the 8-byte word just past a stamp at every multiple of this offset
/// (a write split into several commands starts its later parts at such multiples).
const INDEX_STRIDE_BYTES: usize = 4096;
/// Sources one index key lists at most (low-entropy data would otherwise put every source under
/// a few keys and make each write compare against all of them).
const MAX_SOURCES_PER_KEY: usize = 8;
/// Bytes of an index key.
const INDEX_KEY_BYTES: usize = 8;
/// Writes longer than this are stored in pieces (source offsets and lengths fit in `u32`).
const MAX_PIECE_BYTES: usize = 1 << 30;

/// Bytes the store could not describe by a generator, shared by every extent that refers to
/// them.
struct Source {
    bytes: Box<[u8]>,
    /// Extents referring to this source; at zero it is dropped.
    refs: u64,
}

/// Normal writes in offset and counter order whose slot buffers differ (a queue of several
/// slots): which source each write came from, one byte per write.
struct Sequence {
    /// The distinct sources (each holding one reference for the sequence).
    palette: Vec<u32>,
    /// Per write, its source's index in `palette`.
    picks: Vec<u8>,
    /// Counter of the write `picks[0]` describes.
    first_counter: u64,
    /// Extents referring to this sequence; at zero it is dropped.
    refs: u64,
}

/// Sources a sequence tells apart (its picks are bytes).
const MAX_PALETTE_SOURCES: usize = 256;

/// Where a normal write's bytes were found: a source, the offset in it and the length. The
/// store hands it out from [`Store::write_known`]; a writer that writes the same bytes again
/// past the stamp (a slot buffer restamped, nothing else in it changed) hands it back, and the
/// store then skips comparing those bytes with the source, which it would find equal. Opaque:
/// only the store makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceMatch {
    source: u32,
    source_offset: u32,
    len: u32,
}

/// What an extent holds.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Content {
    /// Repeats of a source range: the extent is writes of `period` bytes, each
    /// `source[source_offset..source_offset + period]`, the first starting `phase` bytes before
    /// the extent; when `stamped`, write k's first 16 bytes are (its drive offset, `counter + k`).
    Source {
        source: u32,
        source_offset: u32,
        period: u32,
        phase: u32,
        counter: u64,
        stamped: bool,
    },
    /// Like a stamped `Source`, but write k's source is the sequence's pick for counter
    /// `counter + k`.
    Sequence {
        sequence: u32,
        source_offset: u32,
        period: u32,
        phase: u32,
        counter: u64,
    },
    /// Written zeros (kept apart from never-written holes so the drive's written bytes count
    /// them).
    Zeros,
    /// The data of a fio-format verify block past its header (kept as a source): the block's
    /// fill, from `phase` bytes into the block.
    FioData {
        block: fio_blocks::FioBlock,
        phase: u32,
    },
    /// A verify write: granules of `granule_bytes` from `granule_base_bytes`, each
    /// `fill_verifiable`'s output for the seed, pattern and generation.
    Verifiable {
        seed: u64,
        granule_base_bytes: u64,
        generation: u32,
        granule_bytes: u32,
        pattern: Pattern,
    },
}

#[derive(Clone, Copy, Debug)]
struct Extent {
    len: u64,
    content: Content,
}

/// A byte range's contents at one moment (see [`Store::snapshot`]): extent records relative
/// to nothing but the store that made it, holding references there until released.
#[derive(Debug)]
pub struct Snapshot {
    offset: u64,
    len: u64,
    extents: Vec<(u64, Extent)>,
}

/// The drive's contents.
pub struct Store {
    /// Written ranges by start offset; they never overlap.
    extents: BTreeMap<u64, Extent>,
    sources: HashMap<u32, Source>,
    sequences: HashMap<u32, Sequence>,
    next_sequence: u32,
    /// Word past a stamp → (source, offset in the source of a write's start).
    index: HashMap<u64, Vec<(u32, u32)>>,
    next_source: u32,
    /// Bytes of all sources.
    held_bytes: u64,
    /// Bytes of written data the drive holds (extents' lengths).
    covered_bytes: u64,
    budget_bytes: u64,
    /// Bytes written while the budget was full, not kept: reading them returns zeros.
    dropped_bytes: u64,
    /// Regenerated verify data, compared with what is written.
    scratch: Vec<u8>,
    /// Source ids wrapped round: an id a writer holds in a [`SourceMatch`] may now name another
    /// source, so matches handed back are no longer trusted.
    source_ids_wrapped: bool,
    /// Writes whose bytes past the stamp were taken as known (not part of the state: a count
    /// of comparisons skipped, for tests and measurements).
    known_tail_writes: u64,
}

impl Default for Store {
    fn default() -> Self {
        Store::with_budget(DEFAULT_BUDGET_BYTES)
    }
}

impl Store {
    pub fn new() -> Store {
        Store::default()
    }

    /// A store that keeps at most `budget_bytes` of data it cannot describe by a generator.
    pub fn with_budget(budget_bytes: u64) -> Store {
        Store {
            extents: BTreeMap::new(),
            sources: HashMap::new(),
            sequences: HashMap::new(),
            next_sequence: 0,
            index: HashMap::new(),
            next_source: 0,
            held_bytes: 0,
            covered_bytes: 0,
            budget_bytes,
            dropped_bytes: 0,
            scratch: Vec::new(),
            source_ids_wrapped: false,
            known_tail_writes: 0,
        }
    }

    /// Bytes of written data the drive holds: written, not trimmed, not dropped.
    pub fn stored_bytes(&self) -> u64 {
        self.covered_bytes
    }

    /// Bytes of payload held in memory (sources); generated data costs only its extent records.
    pub fn held_bytes(&self) -> u64 {
        self.held_bytes
    }

    /// Extent records held (one per write or merged run of writes, plus splits).
    pub fn extent_count(&self) -> usize {
        self.extents.len()
    }

    /// The budget, in bytes.
    pub fn budget_bytes(&self) -> u64 {
        self.budget_bytes
    }

    /// Bytes written while the budget was full and so not kept (counted each time written).
    pub fn dropped_bytes(&self) -> u64 {
        self.dropped_bytes
    }

    /// Writes stored without comparing their bytes past the stamp, because the caller handed
    /// back the match of an earlier write of the same bytes ([`Store::write_known`]).
    pub fn known_tail_writes(&self) -> u64 {
        self.known_tail_writes
    }

    /// A hash of everything the store holds (extents, sources with their bytes and reference
    /// counts, sequences, the index, the counters; not [`Store::known_tail_writes`], which
    /// counts how the state was reached): equal for two stores in the same state.
    /// For tests that prove two ways of writing leave the same store; it walks the whole store.
    pub fn state_digest(&self) -> u64 {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let mut h = DefaultHasher::new();
        for (start, extent) in &self.extents {
            (start, format!("{extent:?}")).hash(&mut h);
        }
        let mut sources: Vec<_> = self.sources.iter().collect();
        sources.sort_by_key(|(id, _)| **id);
        for (id, source) in sources {
            (id, source.refs, &source.bytes).hash(&mut h);
        }
        let mut sequences: Vec<_> = self.sequences.iter().collect();
        sequences.sort_by_key(|(id, _)| **id);
        for (id, seq) in sequences {
            (id, &seq.palette, &seq.picks, seq.first_counter, seq.refs).hash(&mut h);
        }
        let mut index: Vec<_> = self.index.iter().collect();
        index.sort_by_key(|(key, _)| **key);
        index.hash(&mut h);
        (
            self.next_source,
            self.next_sequence,
            self.held_bytes,
            self.covered_bytes,
            self.budget_bytes,
            self.dropped_bytes,
            self.source_ids_wrapped,
        )
            .hash(&mut h);
        h.finish()
    }

    /// Store `data` at byte `offset`.
    pub fn write(&mut self, offset: u64, data: &[u8]) {
        self.write_known(offset, data, None);
    }

    /// Store `data` at byte `offset`, as [`Store::write`] does. `known` is a match an earlier
    /// write returned when the caller knows `data` past its first 16 bytes (the stamp) is
    /// byte for byte what that write held past its own: the comparison of those bytes with the
    /// source is then skipped, and the store ends in exactly the state the comparison would
    /// have left. Returns where this write's bytes were found, if in a source (a normal
    /// write), for the caller's next write of the same bytes.
    pub fn write_known(
        &mut self,
        offset: u64,
        data: &[u8],
        known: Option<SourceMatch>,
    ) -> Option<SourceMatch> {
        if data.len() > MAX_PIECE_BYTES {
            for (i, piece) in data.chunks(MAX_PIECE_BYTES).enumerate() {
                self.write_piece(offset + (i * MAX_PIECE_BYTES) as u64, piece, None);
            }
            return None;
        }
        self.write_piece(offset, data, known)
    }

    fn write_piece(
        &mut self,
        offset: u64,
        data: &[u8],
        known: Option<SourceMatch>,
    ) -> Option<SourceMatch> {
        if data.is_empty() {
            return None;
        }
        let len = data.len() as u64;
        self.remove_range(offset, offset + len);
        if self.write_fio_blocks(offset, data) {
            return None;
        }
        let known = known.filter(|_| !self.source_ids_wrapped);
        let content = match self.recognise(offset, data, known) {
            Some(content) => content,
            None if data.iter().all(|&b| b == 0) => Content::Zeros,
            None if self.held_bytes + len > self.budget_bytes => {
                self.dropped_bytes += len;
                return None;
            }
            None => self.add_source(offset, data),
        };
        let found = match content {
            Content::Source {
                source,
                source_offset,
                period,
                phase: 0,
                ..
            } if u64::from(period) == len => Some(SourceMatch {
                source,
                source_offset,
                len: period,
            }),
            _ => None,
        };
        self.covered_bytes += len;
        self.insert(offset, Extent { len, content });
        found
    }

    /// Insert a new extent at `offset` (the range is free), merged into the extent ending there
    /// when it continues it.
    fn insert(&mut self, offset: u64, extent: Extent) {
        if let Some((&start, before)) = self.extents.range_mut(..offset).next_back() {
            if start + before.len == offset {
                if continues(before, &extent) {
                    before.len += extent.len;
                    if let Content::Source { source, .. } = extent.content {
                        self.release(source);
                    }
                    return;
                }
                let mut before = *before;
                if self.extend_sequence(&mut before, &extent) {
                    self.extents.insert(start, before);
                    return;
                }
            }
        }
        self.extents.insert(offset, extent);
    }

    /// Append the stamped write `next` to `before` as a sequence when it continues its offsets
    /// and counters from another slot buffer (`before` becomes or stays a sequence); the
    /// write's source reference moves to the sequence's palette.
    fn extend_sequence(&mut self, before: &mut Extent, next: &Extent) -> bool {
        let Content::Source {
            source: next_source,
            source_offset: next_source_offset,
            period: next_period,
            phase: 0,
            counter: next_counter,
            stamped: true,
        } = next.content
        else {
            return false;
        };
        if u64::from(next_period) != next.len {
            return false;
        }
        match before.content {
            Content::Source {
                source,
                source_offset,
                period,
                phase: 0,
                counter,
                stamped: true,
            } if source_offset == next_source_offset
                && period == next_period
                && before.len.is_multiple_of(u64::from(period))
                && counter + before.len / u64::from(period) == next_counter =>
            {
                let writes = (before.len / u64::from(period)) as usize;
                let mut picks = vec![0u8; writes];
                picks.push(1);
                let id = self.next_sequence;
                self.next_sequence = self.next_sequence.wrapping_add(1);
                self.sequences.insert(
                    id,
                    Sequence {
                        palette: vec![source, next_source],
                        picks,
                        first_counter: counter,
                        refs: 1,
                    },
                );
                before.content = Content::Sequence {
                    sequence: id,
                    source_offset,
                    period,
                    phase: 0,
                    counter,
                };
                before.len += next.len;
                true
            }
            Content::Sequence {
                sequence,
                source_offset,
                period,
                phase,
                counter,
            } if source_offset == next_source_offset && period == next_period => {
                let relative = u64::from(phase) + before.len;
                let seq = self.sequences.get_mut(&sequence).expect("referenced");
                let ends_sequence = seq.first_counter + seq.picks.len() as u64 == next_counter;
                if !relative.is_multiple_of(u64::from(period))
                    || counter + relative / u64::from(period) != next_counter
                    || !ends_sequence
                {
                    return false;
                }
                let pick = match seq.palette.iter().position(|&s| s == next_source) {
                    Some(pick) => {
                        seq.picks.push(pick as u8);
                        self.release(next_source);
                        pick
                    }
                    None if seq.palette.len() < MAX_PALETTE_SOURCES => {
                        seq.palette.push(next_source);
                        seq.picks.push((seq.palette.len() - 1) as u8);
                        seq.palette.len() - 1
                    }
                    None => return false,
                };
                let _ = pick;
                before.len += next.len;
                true
            }
            _ => false,
        }
    }

    /// Cut the extent that spans `pos` (if any) in two there.
    fn split_at(&mut self, pos: u64) {
        let Some((&start, extent)) = self.extents.range_mut(..pos).next_back() else {
            return;
        };
        if start + extent.len <= pos {
            return;
        }
        let cut = pos - start;
        let right = Extent {
            len: extent.len - cut,
            content: advance(extent.content, cut),
        };
        extent.len = cut;
        match right.content {
            Content::Source { source, .. } => {
                self.sources.get_mut(&source).expect("referenced").refs += 1;
            }
            Content::Sequence { sequence, .. } => {
                self.sequences.get_mut(&sequence).expect("referenced").refs += 1;
            }
            Content::Verifiable { .. } | Content::Zeros | Content::FioData { .. } => {}
        }
        self.extents.insert(pos, right);
    }

    /// Forget everything in `start..end`.
    fn remove_range(&mut self, start: u64, end: u64) {
        if self.extents.is_empty() {
            return;
        }
        self.split_at(start);
        self.split_at(end);
        while let Some((&key, _)) = self.extents.range(start..end).next() {
            let removed = self.extents.remove(&key).expect("listed");
            self.covered_bytes -= removed.len;
            match Some(removed.content) {
                Some(Content::Source { source, .. }) => self.release(source),
                Some(Content::Sequence { sequence, .. }) => self.release_sequence(sequence),
                _ => {}
            }
        }
    }

    /// Drop one reference to `sequence`; the last drops it and its palette's references.
    fn release_sequence(&mut self, id: u32) {
        let sequence = self.sequences.get_mut(&id).expect("referenced");
        sequence.refs -= 1;
        if sequence.refs > 0 {
            return;
        }
        let sequence = self.sequences.remove(&id).expect("present");
        for source in sequence.palette {
            self.release(source);
        }
    }

    /// Drop one reference to `source`; the last drops the source and its index entries.
    fn release(&mut self, id: u32) {
        let source = self.sources.get_mut(&id).expect("referenced");
        source.refs -= 1;
        if source.refs > 0 {
            return;
        }
        let source = self.sources.remove(&id).expect("present");
        for start in (0..source.bytes.len()).step_by(INDEX_STRIDE_BYTES) {
            if let Some(key) = index_key(&source.bytes[start..], STAMP_BYTES) {
                if let Some(entries) = self.index.get_mut(&key) {
                    entries.retain(|&(s, _)| s != id);
                    if entries.is_empty() {
                        self.index.remove(&key);
                    }
                }
            }
        }
        self.held_bytes -= source.bytes.len() as u64;
    }

    /// What `offset..offset + len` holds now, as the store's own extent records (each taking a
    /// reference to the source or sequence it names, so a snapshot costs records, not bytes,
    /// and its sources stay counted in [`Store::held_bytes`]): the contents a drive's volatile
    /// cache may lose are put back from one ([`Store::restore`]). Give it back with
    /// [`Store::release_snapshot`].
    pub fn snapshot(&mut self, offset: u64, len: u64) -> Snapshot {
        let end = offset + len;
        let first = self
            .extents
            .range(..=offset)
            .next_back()
            .filter(|(&start, e)| start + e.len > offset)
            .map(|(&start, e)| (start, *e));
        let rest: Vec<(u64, Extent)> = self
            .extents
            .range((Excluded(offset), Excluded(end)))
            .map(|(&start, e)| (start, *e))
            .collect();
        let mut extents = Vec::with_capacity(rest.len() + 1);
        for (start, extent) in first.into_iter().chain(rest) {
            let clipped = clip(start, &extent, offset, end);
            self.retain(clipped.1.content);
            extents.push(clipped);
        }
        Snapshot {
            offset,
            len,
            extents,
        }
    }

    /// Put back what `snapshot` held in `start..end` (inside the snapshot's range): the
    /// range reads as it did when the snapshot was taken.
    pub fn restore(&mut self, snapshot: &Snapshot, start: u64, end: u64) {
        debug_assert!(
            snapshot.offset <= start && end <= snapshot.offset + snapshot.len,
            "restore outside the snapshot"
        );
        if start >= end {
            return;
        }
        self.remove_range(start, end);
        for (at, extent) in &snapshot.extents {
            if at + extent.len <= start || *at >= end {
                continue;
            }
            let (at, extent) = clip(*at, extent, start, end);
            self.retain(extent.content);
            self.covered_bytes += extent.len;
            // Inserted as is, not merged: the range is free, and a record more or less
            // changes nothing that is read.
            self.extents.insert(at, extent);
        }
    }

    /// Drop a snapshot's references.
    pub fn release_snapshot(&mut self, snapshot: Snapshot) {
        for (_, extent) in snapshot.extents {
            match extent.content {
                Content::Source { source, .. } => self.release(source),
                Content::Sequence { sequence, .. } => self.release_sequence(sequence),
                Content::Verifiable { .. } | Content::Zeros | Content::FioData { .. } => {}
            }
        }
    }

    /// Take one more reference to what `content` names.
    fn retain(&mut self, content: Content) {
        match content {
            Content::Source { source, .. } => {
                self.sources.get_mut(&source).expect("referenced").refs += 1;
            }
            Content::Sequence { sequence, .. } => {
                self.sequences.get_mut(&sequence).expect("referenced").refs += 1;
            }
            Content::Verifiable { .. } | Content::Zeros | Content::FioData { .. } => {}
        }
    }

    /// Forget `len` bytes at `offset`: they read as zeros.
    pub fn trim(&mut self, offset: u64, len: u64) {
        self.remove_range(offset, offset + len);
    }
}

/// `content` as seen from `cut` bytes further on.
/// The part of the extent at `start` inside `from..to` (which it overlaps), and where it starts.
fn clip(start: u64, extent: &Extent, from: u64, to: u64) -> (u64, Extent) {
    let at = start.max(from);
    let end = (start + extent.len).min(to);
    (
        at,
        Extent {
            len: end - at,
            content: advance(extent.content, at - start),
        },
    )
}

fn advance(content: Content, cut: u64) -> Content {
    match content {
        Content::Source {
            source,
            source_offset,
            period,
            phase,
            counter,
            stamped,
        } => {
            let relative = u64::from(phase) + cut;
            Content::Source {
                source,
                source_offset,
                period,
                phase: (relative % u64::from(period)) as u32,
                counter: counter + relative / u64::from(period),
                stamped,
            }
        }
        Content::Sequence {
            sequence,
            source_offset,
            period,
            phase,
            counter,
        } => {
            let relative = u64::from(phase) + cut;
            Content::Sequence {
                sequence,
                source_offset,
                period,
                phase: (relative % u64::from(period)) as u32,
                counter: counter + relative / u64::from(period),
            }
        }
        Content::FioData { block, phase } => Content::FioData {
            block,
            phase: phase + cut as u32,
        },
        other @ (Content::Verifiable { .. } | Content::Zeros) => other,
    }
}

/// Whether `next` (a new extent of one write) continues `before` exactly where it ends, so the
/// two are one extent.
fn continues(before: &Extent, next: &Extent) -> bool {
    match (before.content, next.content) {
        (
            Content::Source {
                source,
                source_offset,
                period,
                phase,
                counter,
                stamped,
            },
            Content::Source {
                source: next_source,
                source_offset: next_source_offset,
                period: next_period,
                phase: 0,
                counter: next_counter,
                stamped: next_stamped,
            },
        ) => {
            let relative = u64::from(phase) + before.len;
            source == next_source
                && source_offset == next_source_offset
                && period == next_period
                && stamped == next_stamped
                && relative.is_multiple_of(u64::from(period))
                && (!stamped || counter + relative / u64::from(period) == next_counter)
        }
        (
            Content::Verifiable {
                seed,
                granule_base_bytes,
                generation,
                granule_bytes,
                pattern,
            },
            Content::Verifiable {
                seed: next_seed,
                granule_base_bytes: next_base,
                generation: next_generation,
                granule_bytes: next_granule,
                pattern: next_pattern,
            },
        ) => {
            seed == next_seed
                && generation == next_generation
                && granule_bytes == next_granule
                && pattern == next_pattern
                && (next_base - granule_base_bytes).is_multiple_of(u64::from(granule_bytes))
        }
        (Content::Zeros, Content::Zeros) => true,
        _ => false,
    }
}
