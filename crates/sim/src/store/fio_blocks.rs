//! fio-format verify blocks as storlab writes them (`verify=crc32c` and the other fio verify
//! kinds: the runner's `fio_verify.rs`), recognised from their bytes so the store keeps each
//! block as its header's bytes plus the generator that made the rest, not as bytes counted
//! against its budget (ADR 0014). Before this, every such block became a source of its own, and
//! a verify past the 4 GiB budget read zeros where the dropped blocks were and failed falsely.
//!
//! A block is one granule: fio's random fill (`storlab_pattern::fio`, as the runner's
//! `fio_verify.rs` writes it: lib/rand.c `__fill_random_buf` from the header's seed) of its
//! first bytes, zeros from where the write's compressible share begins, then fio's header over
//! its first bytes (40 bytes, `struct verify_header`, then the checksum: up to 64 bytes). Blocks
//! with a `verify_pattern`, a `verify_interval` shorter than the write (a header past a write's
//! first: its data is the middle of the write's fill) or a `verify_offset` are laid out
//! otherwise and stay sources, as before.

use storlab_pattern::fio::{fill_segment_window, GROUP_BYTES};

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
    /// The length of fio's random fill, where the block's zeros begin (`block_bytes`: none
    /// seen). fio fills a write's whole buffer at once, its compressible share as zeros at the
    /// write's end (lib/rand.c, `__fill_random_buf_percentage`), so a block is random up to
    /// here and zeros after; `buffer_compress_percentage` puts the boundary anywhere. The
    /// fill's last partial group of words depends on this length.
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
    let random_len = random_len_of(seed, block_bytes, block, 0, MAX_HEADER_BYTES, scratch)?;
    scratch.resize(block.len(), 0);
    render_window(seed, random_len, 0, scratch);
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
        zeros_from: random_len as u32,
    })
}

/// Bytes `from..from + out.len()` of a block whose data is fio's fill of its first
/// `random_len` bytes from `seed`, zeros after.
fn render_window(seed: u64, random_len: usize, from: usize, out: &mut [u8]) {
    fill_segment_window(out, seed, random_len, None, from);
}

/// The length of the random fill that makes `have` (a block's bytes from `from`, checked
/// from `check_from`) fio's fill of `seed` followed by zeros: `block_bytes` when no zeros
/// show, `None` when the bytes are not such a block. A fill's layout depends on its length
/// only in its last partial group of words, so the candidates lie in the group where the
/// bytes first leave the whole block's fill, at or past their last non-zero byte.
fn random_len_of(
    seed: u64,
    block_bytes: usize,
    have: &[u8],
    from: usize,
    check_from: usize,
    scratch: &mut Vec<u8>,
) -> Option<usize> {
    scratch.resize(have.len(), 0);
    render_window(seed, block_bytes, from, scratch);
    let start = check_from.saturating_sub(from).min(have.len());
    let Some(differs) = (start..have.len()).find(|&i| scratch[i] != have[i]) else {
        return Some(block_bytes);
    };
    let last_non_zero = have
        .iter()
        .rposition(|&b| b != 0)
        .map_or(0, |i| from + i + 1);
    if last_non_zero <= check_from {
        // Zeros from the body's first byte (a fill shorter than the header's span): the fill
        // ends where the zeros before the checked bytes begin, down to the common header.
        let mut end = check_from;
        while end > COMMON_HEADER_BYTES.max(from) && have[end - 1 - from] == 0 {
            end -= 1;
        }
        return Some(end);
    }
    let group = (from + differs) / GROUP_BYTES * GROUP_BYTES;
    let first = group.max(last_non_zero).max(from);
    let last = (group + GROUP_BYTES).min(block_bytes);
    let compare_from = group.max(check_from).max(from);
    let have_tail = &have[compare_from - from..];
    let mut rendered = vec![0u8; have_tail.len()];
    (first..=last).find(|&random_len| {
        render_window(seed, random_len, compare_from, &mut rendered);
        rendered == have_tail
    })
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
    if block.zeros_from != block.block_bytes {
        scratch.resize(data.len(), 0);
        render_window(block.seed, block.zeros_from as usize, from, scratch);
        return (&scratch[..] == data).then_some(*block);
    }
    // Zeros not seen before this part: they may begin in it.
    let block_bytes = block.block_bytes as usize;
    let random_len = random_len_of(block.seed, block_bytes, data, from, from, scratch)?;
    (random_len >= from).then_some(FioBlock {
        zeros_from: random_len as u32,
        ..*block
    })
}

/// Write into `out` the bytes of `block` from `from` bytes into it (past its header).
pub(super) fn render(block: &FioBlock, from: u64, out: &mut [u8]) {
    render_window(block.seed, block.zeros_from as usize, from as usize, out);
}
