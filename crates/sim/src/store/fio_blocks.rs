//! fio-format verify blocks as storlab writes them (`verify=crc32c` and the other fio verify
//! kinds: the runner's `fio_verify.rs`), recognised from their bytes so the store keeps each
//! block as its header's bytes plus the generator that made the rest, not as bytes counted
//! against its budget (ADR 0014). Before this, every such block became a source of its own, and
//! a verify past the 4 GiB budget read zeros where the dropped blocks were and failed falsely.
//!
//! A block is one granule: `storlab_pattern::fill` of the granule from the header's seed, then
//! fio's header over its first bytes (40 bytes, `struct verify_header`, then the checksum: up
//! to 64 bytes). Blocks with a `verify_pattern`, a `verify_interval` shorter than the block or
//! a `verify_offset` are laid out otherwise and stay sources, as before.

use storlab_pattern::{fill, Pattern, PATTERN_CHUNK_BYTES};

/// fio's `FIO_HDR_MAGIC`, little-endian at the block's start.
const MAGIC: u16 = 0xacca;
/// Bytes of fio's `struct verify_header`; the checksum follows.
const COMMON_HEADER_BYTES: usize = 40;
/// Largest header with its checksum (sha512, sha3-512: 64 bytes).
const MAX_HEADER_BYTES: usize = COMMON_HEADER_BYTES + 64;
/// Where the header keeps the interval's length, the data's seed and the interval's offset.
const LEN_AT: usize = 4;
const SEED_AT: usize = 8;
const OFFSET_AT: usize = 16;

/// A fio verify block the store can regenerate: its header's length, and how its data was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FioBlock {
    pub block_bytes: u32,
    pub header_bytes: u32,
    pub seed: u64,
    pub pattern: Pattern,
}

/// The fio verify block at the start of `data`, written at `offset`, if it is one storlab wrote:
/// fio's magic, its offset field naming `offset`, and past at most [`MAX_HEADER_BYTES`] of
/// header every byte `fill`'s for the header's seed (checked byte for byte, so a block is only
/// ever kept as what it is). `data` may end inside the block (a driver split it; the rest comes
/// in the next command). `scratch` is reused for the fill.
pub(super) fn recognise(data: &[u8], offset: u64, scratch: &mut Vec<u8>) -> Option<FioBlock> {
    let word = |at: usize, len: usize| {
        let mut bytes = [0u8; 8];
        bytes[..len].copy_from_slice(data.get(at..at + len)?);
        Some(u64::from_le_bytes(bytes))
    };
    if word(0, 2)? != u64::from(MAGIC) || word(OFFSET_AT, 8)? != offset {
        return None;
    }
    let block_bytes = usize::try_from(word(LEN_AT, 4)?).ok()?;
    if block_bytes <= MAX_HEADER_BYTES || data.len() <= MAX_HEADER_BYTES {
        return None;
    }
    let block = &data[..block_bytes.min(data.len())];
    let seed = word(SEED_AT, 8)?;
    scratch.resize(block_bytes, 0);
    let pattern = candidate_patterns(block).into_iter().find(|&pattern| {
        fill(scratch, pattern, seed);
        scratch[MAX_HEADER_BYTES..block.len()] == block[MAX_HEADER_BYTES..]
    })?;
    // The header ends after its last byte that differs from the fill (a checksum byte equal to
    // the fill's only moves the boundary: those bytes regenerate the same either way).
    let header_bytes = (0..MAX_HEADER_BYTES)
        .rev()
        .find(|&i| scratch[i] != block[i])
        .map_or(0, |i| i + 1)
        .max(COMMON_HEADER_BYTES);
    Some(FioBlock {
        block_bytes: block_bytes as u32,
        header_bytes: header_bytes as u32,
        seed,
        pattern,
    })
}

/// The patterns `block` may have been filled with: random, and the compressible shares that
/// leave as many zeros as end its last pattern chunk (a random byte may be zero too, so the
/// few shares just below count as well).
fn candidate_patterns(block: &[u8]) -> Vec<Pattern> {
    let mut patterns = vec![Pattern::Random];
    let last_chunk = block.chunks(PATTERN_CHUNK_BYTES).last().unwrap_or_default();
    let trailing_zeros = last_chunk.iter().rev().take_while(|&&b| b == 0).count();
    if trailing_zeros > 0 {
        patterns.extend((1..=100u8).rev().map(Pattern::Compressible).filter(|p| {
            let Pattern::Compressible(percent) = *p else {
                return false;
            };
            let zero_len = last_chunk.len() * usize::from(percent) / 100;
            zero_len <= trailing_zeros && zero_len + 4 >= trailing_zeros
        }));
    }
    patterns
}

/// Whether `data` is the bytes of `block` from `phase` bytes into it (the rest of a block a
/// driver split, its header in the part before).
pub(super) fn continues(block: &FioBlock, phase: u32, data: &[u8], scratch: &mut Vec<u8>) -> bool {
    scratch.resize(block.block_bytes as usize, 0);
    fill(scratch, block.pattern, block.seed);
    let from = phase as usize;
    scratch.get(from..from + data.len()) == Some(data)
}

/// Write into `out` the bytes of `block` from `from` bytes into it (past its header).
pub(super) fn render(block: &FioBlock, from: u64, out: &mut [u8], scratch: &mut Vec<u8>) {
    scratch.resize(block.block_bytes as usize, 0);
    fill(scratch, block.pattern, block.seed);
    let from = from as usize;
    out.copy_from_slice(&scratch[from..from + out.len()]);
}
