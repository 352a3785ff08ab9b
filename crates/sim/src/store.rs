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

mod fio_blocks;

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound::Excluded;
use storlab_pattern::{read_verifiable_header, regenerate_verifiable, Pattern, VerifiableHeader};

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

    /// Keeps `data` at `offset` (its range free) as fio-format verify blocks when it is whole
    /// blocks storlab wrote (the first may be the rest of one a driver split, going on from the
    /// extent before), each as its header (a source, within the budget) and its data's
    /// generator; false, keeping nothing, when it is not.
    fn write_fio_blocks(&mut self, offset: u64, data: &[u8]) -> bool {
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut blocks = Vec::new();
        let mut at = 0;
        if let Some((block, phase)) = self.fio_block_ending_at(offset) {
            let len = ((block.block_bytes - phase) as usize).min(data.len());
            if fio_blocks::continues(&block, phase, &data[..len], &mut scratch) {
                let content = Content::FioData { block, phase };
                self.covered_bytes += len as u64;
                self.insert(
                    offset,
                    Extent {
                        len: len as u64,
                        content,
                    },
                );
                at = len;
            }
        }
        while at < data.len() {
            match fio_blocks::recognise(&data[at..], offset + at as u64, &mut scratch) {
                Some(block) => {
                    let len = (block.block_bytes as usize).min(data.len() - at);
                    blocks.push((at, len as u64, block));
                    at += len;
                }
                None => break,
            }
        }
        self.scratch = scratch;
        if at != data.len() {
            // Only a continued block was kept: the range is free again for the caller.
            self.remove_range(offset, offset + data.len() as u64);
            return false;
        }
        for (at, len, block) in blocks {
            let start = offset + at as u64;
            let header = &data[at..at + block.header_bytes as usize];
            let header_len = header.len() as u64;
            if self.held_bytes + header_len > self.budget_bytes {
                self.dropped_bytes += header_len;
            } else {
                let content = self.add_source(start, header);
                self.covered_bytes += header_len;
                self.insert(
                    start,
                    Extent {
                        len: header_len,
                        content,
                    },
                );
            }
            let data_len = len - header_len;
            let content = Content::FioData {
                block,
                phase: block.header_bytes,
            };
            self.covered_bytes += data_len;
            self.insert(
                start + header_len,
                Extent {
                    len: data_len,
                    content,
                },
            );
        }
        true
    }

    /// The fio verify block an extent ending at `offset` holds part of, when `offset` falls
    /// inside it: the block and how far into it `offset` is.
    fn fio_block_ending_at(&self, offset: u64) -> Option<(fio_blocks::FioBlock, u32)> {
        let (&start, before) = self.extents.range(..offset).next_back()?;
        let Content::FioData { block, phase } = before.content else {
            return None;
        };
        let end_phase = u64::from(phase) + before.len;
        (start + before.len == offset && end_phase < u64::from(block.block_bytes))
            .then_some((block, end_phase as u32))
    }

    /// What generated `data` written at `offset`, checked byte for byte (past the stamp, the
    /// bytes of the `known` match are taken as equal: the caller wrote them before); takes a
    /// reference to a source it names.
    fn recognise(
        &mut self,
        offset: u64,
        data: &[u8],
        known: Option<SourceMatch>,
    ) -> Option<Content> {
        if let Some(header) = read_verifiable_header(data) {
            if header.offset_bytes == offset && self.regenerates(data, offset, &header, offset) {
                return Some(verifiable(&header, offset));
            }
        }
        // The rest of a verify write a driver split mid-granule (a 128 KiB block in 64 KiB
        // transfers): no header at its start, but the bytes the verify write ending here goes
        // on with.
        if let Some((header, granule_base_bytes)) = self.verifiable_ending_at(offset) {
            if self.regenerates(data, offset, &header, granule_base_bytes) {
                return Some(verifiable(&header, granule_base_bytes));
            }
        }
        let key = index_key(data, STAMP_BYTES)?;
        let candidates = self.index.get(&key)?;
        // A stamp naming this offset is kept as its counter (even where the source holds the
        // same bytes: then the write can continue a run); other heads must match. The head is
        // compared first: low-entropy data puts many sources under one key.
        let stamp = stamp_of(offset, data);
        for &(source_id, source_offset) in candidates {
            let source = &self.sources[&source_id].bytes;
            let start = source_offset as usize;
            let Some(expected) = source.get(start..start + data.len()) else {
                continue;
            };
            if stamp.is_none() && expected[..STAMP_BYTES] != data[..STAMP_BYTES] {
                continue;
            }
            // Sources never change, so the bytes a known match found equal are equal still;
            // every other candidate (one listed before it included) is compared as always.
            let tail_known = known
                == Some(SourceMatch {
                    source: source_id,
                    source_offset,
                    len: data.len() as u32,
                });
            if !tail_known && expected[STAMP_BYTES..] != data[STAMP_BYTES..] {
                continue;
            }
            self.known_tail_writes += u64::from(tail_known);
            self.sources.get_mut(&source_id).expect("indexed").refs += 1;
            return Some(Content::Source {
                source: source_id,
                source_offset,
                period: data.len() as u32,
                phase: 0,
                counter: stamp.unwrap_or(0),
                stamped: stamp.is_some(),
            });
        }
        None
    }

    /// Whether `data` at `offset` is byte for byte the verify write `header` describes, its
    /// granules starting at `granule_base_bytes`.
    fn regenerates(
        &mut self,
        data: &[u8],
        offset: u64,
        header: &VerifiableHeader,
        granule_base_bytes: u64,
    ) -> bool {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.resize(data.len(), 0);
        let mut partial = Vec::new();
        regenerate_verifiable(
            &mut scratch,
            offset,
            header,
            granule_base_bytes,
            &mut partial,
        );
        let same = scratch[..] == *data;
        self.scratch = scratch;
        same
    }

    /// The verify write an extent ending at `offset` holds, when `offset` falls inside one of
    /// its granules (at a granule boundary the next part starts with its own header): its
    /// header and where its granules start.
    fn verifiable_ending_at(&self, offset: u64) -> Option<(VerifiableHeader, u64)> {
        let (&start, before) = self.extents.range(..offset).next_back()?;
        let Content::Verifiable {
            seed,
            granule_base_bytes,
            generation,
            granule_bytes,
            pattern,
        } = before.content
        else {
            return None;
        };
        let mid_granule = !(offset - granule_base_bytes).is_multiple_of(u64::from(granule_bytes));
        (start + before.len == offset && mid_granule).then_some((
            VerifiableHeader {
                offset_bytes: granule_base_bytes,
                generation,
                seed,
                granule_bytes,
                pattern,
            },
            granule_base_bytes,
        ))
    }

    /// Keep `data` written at `offset` as a new source (one reference taken) and index it. Data
    /// that starts with a stamp naming `offset` is described as stamped (the stamp is in the
    /// source too), so the write can open a run its slot's later writes continue.
    fn add_source(&mut self, offset: u64, data: &[u8]) -> Content {
        let id = self.next_source;
        self.next_source = self.next_source.wrapping_add(1);
        self.source_ids_wrapped |= self.next_source == 0;
        for start in (0..data.len()).step_by(INDEX_STRIDE_BYTES) {
            if let Some(key) = index_key(&data[start..], STAMP_BYTES) {
                let entries = self.index.entry(key).or_default();
                // The index is a cache: a source it does not list only costs memory.
                if entries.len() < MAX_SOURCES_PER_KEY {
                    entries.push((id, start as u32));
                }
            }
        }
        self.held_bytes += data.len() as u64;
        self.sources.insert(
            id,
            Source {
                bytes: data.into(),
                refs: 1,
            },
        );
        let stamp = stamp_of(offset, data);
        Content::Source {
            source: id,
            source_offset: 0,
            period: data.len() as u32,
            phase: 0,
            counter: stamp.unwrap_or(0),
            stamped: stamp.is_some(),
        }
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

    /// Fill `out` with the bytes at `offset`.
    pub fn read(&self, offset: u64, out: &mut [u8]) {
        self.read_into(offset, out, false);
    }

    /// Fill `out` with the bytes at `offset`; when the caller knows `out` already holds only
    /// zeros (`out_is_zero`), never-written ranges are left as they are instead of zeroed
    /// again. Returns whether `out` holds only zeros afterwards (false when unsure).
    pub fn read_into(&self, offset: u64, out: &mut [u8], out_is_zero: bool) -> bool {
        if self.extents.is_empty() || out.is_empty() {
            // Nothing was ever written (read-only sessions): every byte reads as zero.
            if !out_is_zero {
                out.fill(0);
            }
            return true;
        }
        let end = offset + out.len() as u64;
        let first = self
            .extents
            .range(..=offset)
            .next_back()
            .filter(|(&start, e)| start + e.len > offset);
        let rest = self.extents.range((Excluded(offset), Excluded(end)));
        let mut all_zero = true;
        let mut pos = offset;
        let mut scratch = Vec::new();
        for (&start, extent) in first.into_iter().chain(rest) {
            let from = start.max(offset);
            let to = (start + extent.len).min(end);
            if from > pos && !out_is_zero {
                out[(pos - offset) as usize..(from - offset) as usize].fill(0);
            }
            let target = &mut out[(from - offset) as usize..(to - offset) as usize];
            self.render(start, extent, from - start, target, &mut scratch);
            all_zero = false;
            pos = to;
        }
        if pos < end && !out_is_zero {
            out[(pos - offset) as usize..].fill(0);
        }
        all_zero
    }

    /// Write into `out` the extent's bytes from `skip` bytes past its start at `start`.
    fn render(
        &self,
        start: u64,
        extent: &Extent,
        skip: u64,
        out: &mut [u8],
        scratch: &mut Vec<u8>,
    ) {
        match extent.content {
            Content::Zeros => out.fill(0),
            Content::FioData { block, phase } => {
                fio_blocks::render(&block, u64::from(phase) + skip, out, scratch);
            }
            Content::Verifiable {
                seed,
                granule_base_bytes,
                generation,
                granule_bytes,
                pattern,
            } => {
                let header = VerifiableHeader {
                    offset_bytes: granule_base_bytes,
                    generation,
                    seed,
                    granule_bytes,
                    pattern,
                };
                regenerate_verifiable(out, start + skip, &header, granule_base_bytes, scratch);
            }
            Content::Source {
                source,
                source_offset,
                period,
                phase,
                counter,
                stamped,
            } => {
                let bytes = &self.sources[&source].bytes;
                self.render_writes(
                    start,
                    skip,
                    out,
                    source_offset,
                    period,
                    phase,
                    counter,
                    stamped,
                    |_| bytes,
                );
            }
            Content::Sequence {
                sequence,
                source_offset,
                period,
                phase,
                counter,
            } => {
                let seq = &self.sequences[&sequence];
                let source_of = |write_counter: u64| -> &[u8] {
                    let pick = seq.picks[(write_counter - seq.first_counter) as usize];
                    &self.sources[&seq.palette[usize::from(pick)]].bytes
                };
                self.render_writes(
                    start,
                    skip,
                    out,
                    source_offset,
                    period,
                    phase,
                    counter,
                    true,
                    source_of,
                );
            }
        }
    }

    /// Write into `out` the bytes from `skip` past `start` of an extent of writes of `period`
    /// bytes, the first starting `phase` bytes before it, write k from `source_of(counter + k)`
    /// at `source_offset`, stamped (its offset, `counter + k`) when `stamped`.
    #[allow(clippy::too_many_arguments)]
    fn render_writes<'a>(
        &self,
        start: u64,
        skip: u64,
        out: &mut [u8],
        source_offset: u32,
        period: u32,
        phase: u32,
        counter: u64,
        stamped: bool,
        source_of: impl Fn(u64) -> &'a [u8],
    ) {
        let period = u64::from(period);
        let mut done = 0usize;
        while done < out.len() {
            let relative = u64::from(phase) + skip + done as u64;
            let write_counter = counter + relative / period;
            let within = (relative % period) as usize;
            let n = (period as usize - within).min(out.len() - done);
            let from = source_offset as usize + within;
            out[done..done + n].copy_from_slice(&source_of(write_counter)[from..from + n]);
            if stamped && within < STAMP_BYTES {
                let write_start = start + skip + done as u64 - within as u64;
                let mut stamp = [0u8; STAMP_BYTES];
                stamp[..STAMP_OFFSET_BYTES].copy_from_slice(&write_start.to_le_bytes());
                stamp[STAMP_OFFSET_BYTES..].copy_from_slice(&write_counter.to_le_bytes());
                let m = (STAMP_BYTES - within).min(n);
                out[done..done + m].copy_from_slice(&stamp[within..within + m]);
            }
            done += n;
        }
    }

    /// Forget `len` bytes at `offset`: they read as zeros.
    pub fn trim(&mut self, offset: u64, len: u64) {
        self.remove_range(offset, offset + len);
    }
}

/// The extent content of a verify write at `offset` described by `header`.
fn verifiable(header: &VerifiableHeader, offset: u64) -> Content {
    Content::Verifiable {
        seed: header.seed,
        granule_base_bytes: offset,
        generation: header.generation,
        granule_bytes: header.granule_bytes,
        pattern: header.pattern,
    }
}

/// The counter of the stamp `data` written at `offset` starts with, if it starts with one.
fn stamp_of(offset: u64, data: &[u8]) -> Option<u64> {
    let head = data.get(..STAMP_BYTES)?;
    (head[..STAMP_OFFSET_BYTES] == offset.to_le_bytes())
        .then(|| u64::from_le_bytes(head[STAMP_OFFSET_BYTES..].try_into().expect("8 bytes")))
}

/// The index key of `data`: its 8-byte word at `at`, if it has one.
fn index_key(data: &[u8], at: usize) -> Option<u64> {
    let word = data.get(at..at + INDEX_KEY_BYTES)?;
    Some(u64::from_le_bytes(word.try_into().expect("8 bytes")))
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use storlab_pattern::{fill, fill_verifiable, stamp};

    /// A queue of restamped slot buffers written in order, once comparing every byte and once
    /// handing back each slot's last match: the same store, reads alike, comparisons skipped;
    /// a match handed back for bytes the index does not lead to changes nothing.
    #[test]
    fn handed_back_matches_leave_the_store_the_full_comparison_leaves() {
        const SLOT: usize = 128 << 10;
        let slots: Vec<Vec<u8>> = (0..4u64)
            .map(|seed| {
                let mut b = vec![0u8; SLOT];
                fill(&mut b, Pattern::Random, seed);
                b
            })
            .collect();
        let mut checked = Store::new();
        let mut fast = Store::new();
        let mut known: Vec<Option<SourceMatch>> = vec![None; slots.len()];
        for write in 0..64u64 {
            let slot = (write % 4) as usize;
            let offset = write * SLOT as u64;
            let mut data = slots[slot].clone();
            stamp(&mut data, Pattern::Random, offset, write);
            checked.write(offset, &data);
            known[slot] = fast.write_known(offset, &data, known[slot]);
        }
        // A stale match on other bytes: its source is not the candidate these bytes lead to.
        let mut other = vec![0u8; SLOT];
        fill(&mut other, Pattern::Random, 99);
        checked.write(3 << 20, &other);
        fast.write_known(3 << 20, &other, known[0]);
        assert_eq!(checked.state_digest(), fast.state_digest());
        assert_eq!(checked.known_tail_writes(), 0);
        assert_eq!(
            fast.known_tail_writes(),
            60,
            "all but each slot's first write"
        );
        let (mut a, mut b) = (vec![0u8; 9 << 20], vec![0u8; 9 << 20]);
        checked.read(0, &mut a);
        fast.read(0, &mut b);
        assert!(a == b);
    }

    #[test]
    fn reads_back_what_was_written_across_chunks_and_zeros_elsewhere() {
        let mut store = Store::new();
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 + 3) as u8).collect();
        store.write(1000, &data);
        let mut out = vec![0xAAu8; 12_000];
        store.read(0, &mut out);
        assert!(out[..1000].iter().all(|&b| b == 0));
        assert_eq!(&out[1000..11_000], &data[..]);
        assert!(out[11_000..].iter().all(|&b| b == 0));
        assert_eq!(store.held_bytes(), 10_000, "foreign data is kept as bytes");
        assert_eq!(store.stored_bytes(), 10_000);
    }

    #[test]
    fn read_into_skips_zeroing_a_known_zero_buffer_and_reports_zeros() {
        let mut store = Store::new();
        // A buffer the caller claims is zero is left alone where nothing was written.
        let mut out = vec![0u8; 2 * CHUNK_BYTES];
        assert!(store.read_into(0, &mut out, true));
        let mut dirty = vec![7u8; CHUNK_BYTES];
        assert!(store.read_into(0, &mut dirty, false));
        assert!(dirty.iter().all(|&b| b == 0), "unknown buffers are zeroed");
        store.write(CHUNK_BYTES as u64 + 5, &[9u8; 3]);
        assert!(
            !store.read_into(0, &mut out, true),
            "stored bytes were copied"
        );
        assert_eq!(&out[CHUNK_BYTES + 4..CHUNK_BYTES + 9], &[0, 9, 9, 9, 0]);
        let mut dirty = vec![7u8; 2 * CHUNK_BYTES];
        store.read_into(0, &mut dirty, false);
        assert_eq!(dirty, out);
    }

    #[test]
    fn past_its_budget_the_store_keeps_what_it_has_and_counts_what_it_drops() {
        let mut store = Store::with_budget(2 * CHUNK_BYTES as u64);
        store.write(0, &[1u8; 2 * CHUNK_BYTES]);
        store.write(2 * CHUNK_BYTES as u64, &[2u8; 3 * CHUNK_BYTES]);
        assert_eq!(store.stored_bytes(), 2 * CHUNK_BYTES as u64);
        assert_eq!(store.dropped_bytes(), 3 * CHUNK_BYTES as u64);
        let mut out = vec![9u8; 5 * CHUNK_BYTES];
        store.read(0, &mut out);
        assert!(out[..2 * CHUNK_BYTES].iter().all(|&b| b == 1));
        assert!(out[2 * CHUNK_BYTES..].iter().all(|&b| b == 0));
        // A trim frees room for new data.
        store.trim(0, 2 * CHUNK_BYTES as u64);
        assert_eq!((store.stored_bytes(), store.held_bytes()), (0, 0));
        store.write(4 * CHUNK_BYTES as u64, &[4u8; CHUNK_BYTES]);
        store.read(4 * CHUNK_BYTES as u64, &mut out[..CHUNK_BYTES]);
        assert!(out[..CHUNK_BYTES].iter().all(|&b| b == 4));
        assert_eq!(store.budget_bytes(), 2 * CHUNK_BYTES as u64);
    }

    #[test]
    fn trim_forgets_exactly_the_range() {
        let mut store = Store::new();
        store.write(0, &[1u8; 3 * CHUNK_BYTES]);
        store.trim(100, 2 * CHUNK_BYTES as u64);
        let mut out = vec![0u8; 3 * CHUNK_BYTES];
        store.read(0, &mut out);
        assert!(out[..100].iter().all(|&b| b == 1));
        assert!(out[100..100 + 2 * CHUNK_BYTES].iter().all(|&b| b == 0));
        assert!(out[100 + 2 * CHUNK_BYTES..].iter().all(|&b| b == 1));
    }

    /// A sequential fill as the runner makes it (slot buffers filled once, stamped per write)
    /// followed by verify writes: the store holds the slot buffers once and a few extent
    /// records, however many bytes were written; the old per-chunk store held every byte.
    #[test]
    fn generated_data_costs_records_not_bytes() {
        const WRITE_BYTES: usize = 128 * 1024;
        const SLOTS: usize = 4;
        const WRITES: usize = 2048; // 256 MiB
        let mut store = Store::with_budget(16 << 20);
        let mut slots: Vec<Vec<u8>> = (0..SLOTS)
            .map(|slot| {
                let mut buf = vec![0u8; WRITE_BYTES];
                fill(&mut buf, Pattern::Random, 42 ^ ((slot as u64) << 32));
                buf
            })
            .collect();
        for write in 0..WRITES {
            let offset = (write * WRITE_BYTES) as u64;
            let buf = &mut slots[write % SLOTS];
            stamp(buf, Pattern::Random, offset, write as u64);
            store.write(offset, buf);
        }
        assert_eq!(store.dropped_bytes(), 0);
        assert_eq!(store.held_bytes(), (SLOTS * WRITE_BYTES) as u64);
        assert_eq!(store.stored_bytes(), (WRITES * WRITE_BYTES) as u64);
        assert_eq!(
            store.extent_count(),
            1,
            "one sequence of writes from 4 slots"
        );
        // Verify writes of 64 KiB in 4 KiB granules: regenerated, nothing held.
        let mut verify = vec![0u8; 65536];
        for write in 0..256u64 {
            let offset = write * 1_048_576 + 4096;
            fill_verifiable(
                &mut verify,
                Pattern::Random,
                7,
                offset,
                4096,
                write as u32 + 1,
            );
            store.write(offset, &verify);
        }
        assert_eq!(store.held_bytes(), (SLOTS * WRITE_BYTES) as u64);
        // Spot-check a read across a stamped write, a verify write and the next write.
        let mut out = vec![0u8; 3 * WRITE_BYTES];
        let at = 1_048_576 * 100;
        store.read(at, &mut out);
        let mut expected = slots[(at as usize / WRITE_BYTES) % SLOTS].clone();
        stamp(&mut expected, Pattern::Random, at, at / WRITE_BYTES as u64);
        fill_verifiable(&mut verify, Pattern::Random, 7, at + 4096, 4096, 101);
        expected[4096..4096 + 65536].copy_from_slice(&verify);
        assert_eq!(&out[..WRITE_BYTES], &expected[..]);
    }

    /// A driver that splits a verify write inside a granule (a 128 KiB block sent as two
    /// 64 KiB transfers, as a BOT driver with 64 KiB transfers does): the second part has no
    /// header at its start, and is still the verify write's, regenerated, nothing held.
    #[test]
    fn a_verify_write_split_mid_granule_is_regenerated() {
        const BLOCK: usize = 128 << 10;
        let mut store = Store::with_budget(1 << 20);
        let mut block = vec![0u8; 2 * BLOCK];
        fill_verifiable(&mut block, Pattern::Random, 11, 1 << 20, BLOCK, 17);
        for (i, half) in block.chunks(BLOCK / 2).enumerate() {
            store.write((1 << 20) + (i * BLOCK / 2) as u64, half);
        }
        assert_eq!(store.held_bytes(), 0, "nothing kept as bytes");
        assert_eq!(store.dropped_bytes(), 0);
        assert_eq!(store.extent_count(), 1, "one verify write");
        let mut out = vec![0u8; 2 * BLOCK];
        store.read(1 << 20, &mut out);
        assert!(out == block, "read back as written");
        // Bytes that are not the write's continuation are not taken for it.
        let mut other = block[BLOCK / 2..BLOCK].to_vec();
        other[100] ^= 1;
        store.write((1 << 20) + (BLOCK / 2) as u64, &other);
        assert_eq!(store.held_bytes(), other.len() as u64);
    }

    /// One step of the model test.
    #[derive(Clone, Debug)]
    enum Op {
        /// A stamped write from slot `slot` (of a few) at sector `sector`, `sectors` long,
        /// starting `skip` sectors into the slot (a later part of a split command: unstamped).
        Generated {
            slot: usize,
            sector: u64,
            sectors: usize,
            skip: usize,
        },
        /// A verify write of whole granules.
        Verifiable {
            sector: u64,
            granules: usize,
            generation: u32,
        },
        /// Consecutive stamped writes of `sectors` each (a sequential job), from the slots
        /// `slots` names in turn.
        Run {
            sector: u64,
            sectors: usize,
            slots: Vec<usize>,
        },
        /// Bytes from nowhere (foreign data), at any byte offset.
        Foreign {
            offset: u64,
            len: usize,
            seed: u64,
        },
        /// Foreign data of one repeated byte after an 8-byte header (many sources share an
        /// index key).
        Flat {
            sector: u64,
            sectors: usize,
            byte: u8,
            header: u64,
        },
        Trim {
            offset: u64,
            len: u64,
        },
    }

    const MODEL_BYTES: usize = 256 * 1024;
    const SECTOR: usize = 512;
    const SLOT_BYTES: usize = 16 * 1024;
    const GRANULE: usize = 1024;

    fn op() -> impl Strategy<Value = Op> {
        let sectors = (MODEL_BYTES / SECTOR) as u64;
        prop_oneof![
            4 => (0..3usize, 0..sectors, 1..=32usize, 0..4usize).prop_map(
                |(slot, sector, sectors, skip)| Op::Generated { slot, sector, sectors, skip }
            ),
            2 => (0..sectors, 1..=8usize, 1..5u32).prop_map(|(sector, granules, generation)| {
                Op::Verifiable { sector: sector & !1, granules, generation }
            }),
            2 => (0..sectors, 1..=16usize, prop::collection::vec(0..3usize, 1..12))
                .prop_map(|(sector, sectors, slots)| Op::Run { sector, sectors, slots }),
            1 => (0..MODEL_BYTES as u64, 1..9000usize, any::<u64>())
                .prop_map(|(offset, len, seed)| Op::Foreign { offset, len, seed }),
            1 => (0..sectors, 1..=16usize, 0..3u8, 0..4u64)
                .prop_map(|(sector, sectors, byte, header)| Op::Flat { sector, sectors, byte, header }),
            1 => (0..MODEL_BYTES as u64, 1..40_000u64).prop_map(|(offset, len)| Op::Trim { offset, len }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Random writes, overwrites and trims of generated and foreign data read back exactly
        /// as a plain byte array holds them, over any range.
        #[test]
        fn reads_match_a_byte_array(ops in prop::collection::vec(op(), 1..60),
                                    reads in prop::collection::vec((0..MODEL_BYTES, 1..20_000usize), 4)) {
            let mut store = Store::with_budget(1 << 20);
            let mut model = vec![0u8; MODEL_BYTES + 128 * 1024];
            let mut slots: Vec<Vec<u8>> = (0..3)
                .map(|slot| {
                    let mut buf = vec![0u8; SLOT_BYTES];
                    fill(&mut buf, Pattern::Random, 5 + slot as u64);
                    buf
                })
                .collect();
            let mut counter = 0u64;
            for op in &ops {
                counter += 1;
                let (offset, data) = match *op {
                    Op::Generated { slot, sector, sectors, skip } => {
                        let offset = sector * SECTOR as u64;
                        let buf = &mut slots[slot];
                        stamp(buf, Pattern::Random, offset, counter);
                        let len = (sectors * SECTOR).min(SLOT_BYTES - skip * SECTOR);
                        (offset, buf[skip * SECTOR..skip * SECTOR + len].to_vec())
                    }
                    Op::Verifiable { sector, granules, generation } => {
                        let offset = sector * SECTOR as u64;
                        let mut buf = vec![0u8; granules * GRANULE];
                        fill_verifiable(&mut buf, Pattern::Compressible(30), 11, offset, GRANULE, generation);
                        (offset, buf)
                    }
                    Op::Run { sector, sectors, slots: ref picks } => {
                        let len = sectors * SECTOR;
                        for (k, &slot) in picks.iter().enumerate() {
                            let offset = (sector * SECTOR as u64) + (k * len) as u64;
                            let buf = &mut slots[slot];
                            stamp(buf, Pattern::Random, offset, counter);
                            counter += 1;
                            store.write(offset, &buf[..len]);
                            model[offset as usize..offset as usize + len].copy_from_slice(&buf[..len]);
                        }
                        continue;
                    }
                    Op::Flat { sector, sectors, byte, header } => {
                        let mut buf = vec![byte; sectors * SECTOR];
                        buf[..8].copy_from_slice(&header.to_le_bytes());
                        (sector * SECTOR as u64, buf)
                    }
                    Op::Foreign { offset, len, seed } => {
                        let mut buf = vec![0u8; len];
                        fill(&mut buf, Pattern::Random, seed);
                        (offset, buf)
                    }
                    Op::Trim { offset, len } => {
                        let end = (offset + len).min(model.len() as u64);
                        store.trim(offset, end - offset);
                        model[offset as usize..end as usize].fill(0);
                        continue;
                    }
                };
                store.write(offset, &data);
                model[offset as usize..offset as usize + data.len()].copy_from_slice(&data);
            }
            prop_assert_eq!(store.dropped_bytes(), 0);
            let mut whole = vec![0xA5u8; model.len()];
            store.read(0, &mut whole);
            prop_assert!(whole == model, "whole-drive read differs");
            for (offset, len) in reads {
                let mut out = vec![0x5Au8; len];
                store.read(offset as u64, &mut out);
                prop_assert!(out[..] == model[offset..offset + len], "read {}+{}", offset, len);
            }
            // Everything trimmed: nothing held.
            store.trim(0, model.len() as u64);
            prop_assert_eq!(store.stored_bytes(), 0);
            prop_assert_eq!(store.held_bytes(), 0);
            prop_assert_eq!(store.extent_count(), 0);
        }
    }
}
