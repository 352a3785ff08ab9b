//! Fills write buffers with the job's data pattern, and derives verifiable per-block content.
//!
//! Random data is generated once per slot at setup (like fio, which does not refill buffers by
//! default) and then stamped per write with the offset and a counter, so no two writes carry the
//! same block: a deduplicating controller cannot flatter the result. Compressible data keeps the
//! requested share of every 4 KiB chunk as zeros and the rest random, so a real compressor finds
//! exactly that share.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use storlab_job::DataPattern;

/// Compressible patterns are built per chunk of this size (a flash page; SandForce-class
/// controllers compress at about this granularity).
pub const PATTERN_CHUNK_BYTES: usize = 4096;
/// Bytes at the head of each write that carry the (offset, counter) stamp.
pub const STAMP_BYTES: usize = 16;

/// Fill `buf` with `pattern`, deterministically from `seed`.
pub fn fill(buf: &mut [u8], pattern: DataPattern, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    match pattern {
        DataPattern::Zeros => buf.fill(0),
        DataPattern::Random => rng.fill_bytes(buf),
        DataPattern::Compressible(percent) => {
            let percent = usize::from(percent.min(100));
            for chunk in buf.chunks_mut(PATTERN_CHUNK_BYTES) {
                let zero_len = chunk.len() * percent / 100;
                let (random_part, zero_part) = chunk.split_at_mut(chunk.len() - zero_len);
                rng.fill_bytes(random_part);
                zero_part.fill(0);
            }
        }
    }
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
    if pattern == DataPattern::Zeros || buf.len() < STAMP_BYTES {
        return;
    }
    buf[..8].copy_from_slice(&offset_bytes.to_le_bytes());
    buf[8..STAMP_BYTES].copy_from_slice(&counter.to_le_bytes());
}

/// The content a verify run writes to each `granule_bytes`-sized granule of a write at
/// `offset_bytes` in write generation `generation`: a function of the seed, the granule's offset
/// and the generation only, so the read-back recomputes it from the write record alone. The
/// generation makes each rewrite of a granule different, so a drive that drops a write and keeps
/// the older data is caught too. The stamp carries the offset and the generation, so a hex dump
/// of a bad block says which write it holds.
pub fn fill_verifiable(
    buf: &mut [u8],
    pattern: DataPattern,
    seed: u64,
    offset_bytes: u64,
    granule_bytes: usize,
    generation: u32,
) {
    for (i, granule) in buf.chunks_mut(granule_bytes.max(1)).enumerate() {
        let granule_offset = offset_bytes + (i * granule_bytes) as u64;
        let granule_seed = mix(seed ^ mix(granule_offset ^ u64::from(generation).rotate_left(40)));
        fill(granule, pattern, granule_seed);
        stamp(granule, pattern, granule_offset, u64::from(generation));
    }
}

/// SplitMix64's finaliser: nearby offsets and generations give unrelated seeds.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressible_share_is_exact_per_chunk() {
        let mut buf = vec![0xA5u8; 3 * PATTERN_CHUNK_BYTES];
        fill(&mut buf, DataPattern::Compressible(75), 7);
        for chunk in buf.chunks(PATTERN_CHUNK_BYTES) {
            let zeros = chunk.iter().filter(|b| **b == 0).count();
            // the random quarter may itself hold a few zero bytes
            assert!((3072..3072 + 40).contains(&zeros), "{zeros}");
        }
    }

    #[test]
    fn random_is_incompressible_looking_and_seeded() {
        let mut a = vec![0u8; 8192];
        let mut b = vec![0u8; 8192];
        fill(&mut a, DataPattern::Random, 1);
        fill(&mut b, DataPattern::Random, 1);
        assert_eq!(a, b);
        let distinct = a.iter().collect::<std::collections::HashSet<_>>().len();
        assert_eq!(distinct, 256);
        fill(&mut b, DataPattern::Random, 2);
        assert_ne!(a, b);
    }

    #[test]
    fn verifiable_content_depends_on_offset_and_generation_only() {
        let mut whole = vec![0u8; 8192];
        fill_verifiable(&mut whole, DataPattern::Random, 9, 4096, 512, 3);
        let mut second = vec![0u8; 4096];
        fill_verifiable(&mut second, DataPattern::Random, 9, 8192, 512, 3);
        assert_eq!(&whole[4096..], &second[..]);
        fill_verifiable(&mut second, DataPattern::Random, 9, 8192, 512, 4);
        assert_ne!(
            &whole[4096..4096 + 512],
            &second[..512],
            "a rewrite differs"
        );
    }
}
