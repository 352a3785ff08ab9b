//! Recognising generated data from its bytes: fio verify blocks, storlab verify writes and
//! stamped slot buffers, each kept as what generated it only when it regenerates byte for
//! byte; anything else becomes a source of its own, against the budget.

use super::{
    fio_blocks, Content, Extent, Source, SourceMatch, Store, INDEX_KEY_BYTES, INDEX_STRIDE_BYTES,
    MAX_SOURCES_PER_KEY, STAMP_BYTES, STAMP_OFFSET_BYTES,
};
use storlab_pattern::{read_verifiable_header, regenerate_verifiable, VerifiableHeader};

impl Store {
    /// Keeps `data` at `offset` (its range free) as fio-format verify blocks when it is whole
    /// blocks storlab wrote (the first may be the rest of one a driver split, going on from the
    /// extent before), each as its header (a source, within the budget) and its data's
    /// generator; false, keeping nothing, when it is not.
    pub(super) fn write_fio_blocks(&mut self, offset: u64, data: &[u8]) -> bool {
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut blocks = Vec::new();
        let mut at = 0;
        if let Some((block, phase)) = self.fio_block_ending_at(offset) {
            let len = ((block.block_bytes - phase) as usize).min(data.len());
            if let Some(block) = fio_blocks::continues(&block, phase, &data[..len], &mut scratch) {
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
    pub(super) fn fio_block_ending_at(&self, offset: u64) -> Option<(fio_blocks::FioBlock, u32)> {
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
    pub(super) fn recognise(
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
    pub(super) fn regenerates(
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
    pub(super) fn verifiable_ending_at(&self, offset: u64) -> Option<(VerifiableHeader, u64)> {
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
    pub(super) fn add_source(&mut self, offset: u64, data: &[u8]) -> Content {
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
}

/// The extent content of a verify write at `offset` described by `header`.
pub(super) fn verifiable(header: &VerifiableHeader, offset: u64) -> Content {
    Content::Verifiable {
        seed: header.seed,
        granule_base_bytes: offset,
        generation: header.generation,
        granule_bytes: header.granule_bytes,
        pattern: header.pattern,
    }
}

/// The counter of the stamp `data` written at `offset` starts with, if it starts with one.
pub(super) fn stamp_of(offset: u64, data: &[u8]) -> Option<u64> {
    let head = data.get(..STAMP_BYTES)?;
    (head[..STAMP_OFFSET_BYTES] == offset.to_le_bytes())
        .then(|| u64::from_le_bytes(head[STAMP_OFFSET_BYTES..].try_into().expect("8 bytes")))
}

/// The index key of `data`: its 8-byte word at `at`, if it has one.
pub(super) fn index_key(data: &[u8], at: usize) -> Option<u64> {
    let word = data.get(at..at + INDEX_KEY_BYTES)?;
    Some(u64::from_le_bytes(word.try_into().expect("8 bytes")))
}
