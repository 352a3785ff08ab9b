//! fio-format verify blocks as storlab writes them (`verify=crc32c` and the other fio verify
//! kinds: the runner's `fio_verify.rs`), recognised from their bytes so the store keeps each
//! block as its header's bytes plus the generator that made the rest, not as bytes counted
//! against its budget (ADR 0014). Before this, every such block became a source of its own, and
//! a verify past the 4 GiB budget read zeros where the dropped blocks were and failed falsely.
//!
//! A block is one granule: `storlab_pattern::fill` of the granule from the header's seed, zeros
//! from where the write's compressible share begins, then fio's header over its first bytes (40 bytes, `struct verify_header`, then the checksum: up
//! to 64 bytes). Blocks with a `verify_pattern`, a `verify_interval` shorter than the block or
//! a `verify_offset` are laid out otherwise and stay sources, as before.

use storlab_pattern::{fill, Pattern};

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
    /// Where the block's zeros begin (`block_bytes`: none seen). fio fills a write's whole
    /// buffer at once, its compressible share as zeros at the write's end (lib/rand.c,
    /// `__fill_random_buf_percentage`), so a block is random up to here and zeros after;
    /// `buffer_compress_percentage` or zero buffers put the boundary anywhere, or before it.
    pub zeros_from: u32,
}

/// The fio verify block at the start of `data`, written at `offset`, if it is one storlab wrote:
/// fio's magic, its offset field naming `offset`, and past at most [`MAX_HEADER_BYTES`] of
/// header every byte `fill`'s random bytes for the header's seed up to a tail of zeros (checked
/// byte for byte, so a block is only ever kept as what it is). `data` may end inside the block
/// (a driver split it; the rest comes in the next command). `scratch` is reused for the fill.
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
    fill(scratch, Pattern::Random, seed);
    let mut zeros_from = zeros_after_fill(&scratch[..block.len()], block, MAX_HEADER_BYTES)?;
    if zeros_from == MAX_HEADER_BYTES {
        // Zeros from the body's first byte may have begun inside the header's span.
        while zeros_from > COMMON_HEADER_BYTES && block[zeros_from - 1] == 0 {
            zeros_from -= 1;
        }
    }
    let zeros_from = zeros_from.min(block_bytes);
    scratch[zeros_from..].fill(0);
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
        zeros_from: zeros_from as u32,
    })
}

/// Where `have` (from `from` on) leaves `random` for zeros it keeps to its end: `usize::MAX`
/// when it never leaves it (the zeros, if any, lie past it), `None` when it is neither.
fn zeros_after_fill(random: &[u8], have: &[u8], from: usize) -> Option<usize> {
    let Some(first_other) = (from..have.len()).find(|&i| random[i] != have[i]) else {
        return Some(usize::MAX);
    };
    have[first_other..]
        .iter()
        .all(|&b| b == 0)
        .then_some(first_other)
}

/// `block` as it is when `data`, from `phase` bytes into it, are its bytes (the rest of a block
/// a driver split, its header in the part before); the rest may show where its zeros begin.
pub(super) fn continues(
    block: &FioBlock,
    phase: u32,
    data: &[u8],
    scratch: &mut Vec<u8>,
) -> Option<FioBlock> {
    let from = phase as usize;
    let end = from + data.len();
    if end > block.block_bytes as usize {
        return None;
    }
    render_into(block, scratch);
    if &scratch[from..end] == data {
        return Some(*block);
    }
    if block.zeros_from != block.block_bytes {
        return None;
    }
    // Zeros not seen before this part: they may begin in it.
    let start = zeros_after_fill(&scratch[from..end], data, 0)?;
    Some(FioBlock {
        zeros_from: from.saturating_add(start).min(block.block_bytes as usize) as u32,
        ..*block
    })
}

/// Write into `out` the bytes of `block` from `from` bytes into it (past its header).
pub(super) fn render(block: &FioBlock, from: u64, out: &mut [u8], scratch: &mut Vec<u8>) {
    render_into(block, scratch);
    let from = from as usize;
    out.copy_from_slice(&scratch[from..from + out.len()]);
}

/// The whole block's bytes past its header, in `scratch`.
fn render_into(block: &FioBlock, scratch: &mut Vec<u8>) {
    scratch.resize(block.block_bytes as usize, 0);
    fill(scratch, Pattern::Random, block.seed);
    scratch[block.zeros_from as usize..].fill(0);
}
