//! Fills write buffers with the job's data pattern, and derives verifiable per-block content:
//! the generators live in `storlab-pattern` (shared with the simulator's payload store, which
//! keeps generated data as its generator's parameters); these take the job's `DataPattern`.

use storlab_job::DataPattern;
pub use storlab_pattern::{Pattern, PATTERN_CHUNK_BYTES, STAMP_BYTES, VERIFY_HEADER_BYTES};

/// The generator's pattern for a job's `DataPattern`.
pub fn generator_pattern(pattern: DataPattern) -> Pattern {
    match pattern {
        DataPattern::Random => Pattern::Random,
        DataPattern::Zeros => Pattern::Zeros,
        DataPattern::Compressible(percent) => Pattern::Compressible(percent),
    }
}

/// Fill `buf` with `pattern`, deterministically from `seed`.
pub fn fill(buf: &mut [u8], pattern: DataPattern, seed: u64) {
    storlab_pattern::fill(buf, generator_pattern(pattern), seed);
}

/// Fill `buf` with `bytes` repeated from its start (fio's `buffer_pattern`).
pub fn fill_repeated(buf: &mut [u8], bytes: &[u8]) {
    for (dst, src) in buf.iter_mut().zip(bytes.iter().cycle()) {
        *dst = *src;
    }
}

/// Mark a write buffer with its offset and a per-worker counter (fio's `scramble_buffers`).
/// Zero-pattern buffers are left all-zero: the user asked for zeros.
#[inline]
pub fn stamp(buf: &mut [u8], pattern: DataPattern, offset_bytes: u64, counter: u64) {
    storlab_pattern::stamp(buf, generator_pattern(pattern), offset_bytes, counter);
}

/// fio's per-sector scramble of a write buffer (see [`storlab_pattern::scramble_sectors`]).
#[inline]
pub fn scramble_sectors(buf: &mut [u8], pattern: DataPattern, offset_bytes: u64, counter: u64) {
    storlab_pattern::scramble_sectors(buf, generator_pattern(pattern), offset_bytes, counter);
}

/// The content a verify run writes to each granule of a write (see
/// [`storlab_pattern::fill_verifiable`]).
pub fn fill_verifiable(
    buf: &mut [u8],
    pattern: DataPattern,
    seed: u64,
    offset_bytes: u64,
    granule_bytes: usize,
    generation: u32,
) {
    storlab_pattern::fill_verifiable(
        buf,
        generator_pattern(pattern),
        seed,
        offset_bytes,
        granule_bytes,
        generation,
    );
}
