//! The data storlab writes, in one leaf crate so the runner (which writes it) and the simulator
//! (which stores it as the parameters that generated it, see `storlab_sim::store`) share it.
//!
//! Random data is generated once per slot at setup (like fio, which does not refill buffers by
//! default) and then stamped per write with the offset and a counter, so no two writes carry the
//! same block: a deduplicating controller cannot flatter the result. Compressible data keeps the
//! requested share of every 4 KiB chunk as zeros and the rest random, so a real compressor finds
//! exactly that share. Verify writes are self-describing: each granule's header names the seed,
//! granule size and pattern that generated it, so anyone holding the bytes can regenerate them.

#![forbid(unsafe_code)]

pub mod fio;

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// What fills a buffer (the job's `DataPattern`, without the job crate's dependencies).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// Incompressible pseudo-random bytes.
    Random,
    /// All zeros.
    Zeros,
    /// This percentage of every chunk is zeros, the rest random.
    Compressible(u8),
}

/// Compressible patterns are built per chunk of this size (a flash page; SandForce-class
/// controllers compress at about this granularity).
pub const PATTERN_CHUNK_BYTES: usize = 4096;
/// Bytes at the head of each write that carry the (offset, counter) stamp.
pub const STAMP_BYTES: usize = 16;
/// Bytes at the head of each verify granule: the stamp, then the worker seed, the granule size
/// and the pattern (see [`VerifiableHeader`]).
pub const VERIFY_HEADER_BYTES: usize = 32;
/// High half of the header's pattern word: marks a self-describing granule ("SV").
const VERIFY_TAG: u32 = 0x5356_0000;
/// Pattern byte of [`Pattern::Random`] in the header (0..=100 are compressible percentages).
const RANDOM_CODE: u32 = 0xFF;

/// Fill `buf` with `pattern`, deterministically from `seed`.
pub fn fill(buf: &mut [u8], pattern: Pattern, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    match pattern {
        Pattern::Zeros => buf.fill(0),
        Pattern::Random => rng.fill_bytes(buf),
        Pattern::Compressible(percent) => {
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

/// Mark a write buffer with its offset and a per-worker counter (fio's `scramble_buffers`).
/// Zero-pattern buffers are left all-zero: the user asked for zeros.
#[inline]
pub fn stamp(buf: &mut [u8], pattern: Pattern, offset_bytes: u64, counter: u64) {
    if pattern == Pattern::Zeros || buf.len() < STAMP_BYTES {
        return;
    }
    buf[..8].copy_from_slice(&offset_bytes.to_le_bytes());
    buf[8..STAMP_BYTES].copy_from_slice(&counter.to_le_bytes());
}

/// fio's `scramble_buffers` (io_u.c, `small_content_scramble`), on by default in fio: each
/// 512-byte sector of a write gets its own offset at the start of one of its eight 64-byte
/// lines and a per-write tag at the end of the first, so no two sectors of a run are alike
/// however the buffer was filled (a read into the same buffer leaves zeros) and no 4 KiB
/// block dedupes against another. fio's tag and line pick come from the write's start time;
/// storlab's from the worker's write count, so a run repeats byte for byte. Zero-pattern
/// buffers stay zero, as `stamp`.
#[inline]
pub fn scramble_sectors(buf: &mut [u8], pattern: Pattern, offset_bytes: u64, counter: u64) {
    const SECTOR: usize = 512;
    const LINE: usize = 64;
    if pattern == Pattern::Zeros {
        return;
    }
    let line_start = ((counter ^ offset_bytes) & 7) as usize * LINE;
    // Never zero, as fio's time is not: the first write at offset 0 is marked too.
    let tag = counter.wrapping_add(1);
    let mut sector_offset = offset_bytes;
    for sector in buf.chunks_exact_mut(SECTOR) {
        sector[line_start..line_start + 8].copy_from_slice(&sector_offset.to_le_bytes());
        sector[LINE - 16..LINE - 8].copy_from_slice(&tag.to_le_bytes());
        sector[LINE - 8..LINE].copy_from_slice(&offset_bytes.to_le_bytes());
        sector_offset += SECTOR as u64;
    }
}

/// The content a verify run writes to each `granule_bytes`-sized granule of a write at
/// `offset_bytes` in write generation `generation`: a function of the seed, the granule's offset
/// and the generation only, so the read-back recomputes it from the write record alone. The
/// generation makes each rewrite of a granule different, so a drive that drops a write and keeps
/// the older data is caught too. The header carries the offset and the generation, so a hex
/// dump of a bad block says which write it holds, and the seed, granule size and pattern, so a
/// store can keep the granule as those few numbers ([`regenerate_verifiable`]).
pub fn fill_verifiable(
    buf: &mut [u8],
    pattern: Pattern,
    seed: u64,
    offset_bytes: u64,
    granule_bytes: usize,
    generation: u32,
) {
    let granule_bytes = granule_bytes.max(1);
    for (i, granule) in buf.chunks_mut(granule_bytes).enumerate() {
        let granule_offset = offset_bytes + (i * granule_bytes) as u64;
        fill_granule(
            granule,
            pattern,
            seed,
            granule_offset,
            granule_bytes,
            generation,
        );
    }
}

/// One granule of [`fill_verifiable`] (`granule` may be the shorter last one).
fn fill_granule(
    granule: &mut [u8],
    pattern: Pattern,
    seed: u64,
    granule_offset: u64,
    granule_bytes: usize,
    generation: u32,
) {
    let granule_seed = mix(seed ^ mix(granule_offset ^ u64::from(generation).rotate_left(40)));
    fill(granule, pattern, granule_seed);
    stamp(granule, pattern, granule_offset, u64::from(generation));
    let code = match pattern {
        Pattern::Zeros => return,
        Pattern::Random => RANDOM_CODE,
        Pattern::Compressible(percent) => u32::from(percent.min(100)),
    };
    let (Ok(granule_bytes), true) = (
        u32::try_from(granule_bytes),
        granule.len() >= VERIFY_HEADER_BYTES,
    ) else {
        return;
    };
    granule[16..24].copy_from_slice(&seed.to_le_bytes());
    granule[24..28].copy_from_slice(&granule_bytes.to_le_bytes());
    granule[28..32].copy_from_slice(&(VERIFY_TAG | code).to_le_bytes());
}

/// What a verify granule's header says generated it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifiableHeader {
    pub offset_bytes: u64,
    pub generation: u32,
    pub seed: u64,
    pub granule_bytes: u32,
    pub pattern: Pattern,
}

/// The header at the start of `granule`, if it has the shape [`fill_verifiable`] writes. Only a
/// claim: the bytes after it are the granule's only if [`regenerate_verifiable`] reproduces them.
pub fn read_verifiable_header(granule: &[u8]) -> Option<VerifiableHeader> {
    let word = |range: std::ops::Range<usize>| -> u64 {
        let mut bytes = [0u8; 8];
        bytes[..range.len()].copy_from_slice(&granule[range]);
        u64::from_le_bytes(bytes)
    };
    if granule.len() < VERIFY_HEADER_BYTES {
        return None;
    }
    let tagged = word(28..32) as u32;
    if tagged & 0xFFFF_0000 != VERIFY_TAG {
        return None;
    }
    let pattern = match tagged & 0xFFFF {
        RANDOM_CODE => Pattern::Random,
        percent @ 0..=100 => Pattern::Compressible(percent as u8),
        _ => return None,
    };
    let generation = u32::try_from(word(8..16)).ok()?;
    let granule_bytes = word(24..28) as u32;
    if (granule_bytes as usize) < VERIFY_HEADER_BYTES {
        return None;
    }
    Some(VerifiableHeader {
        offset_bytes: word(0..8),
        generation,
        seed: word(16..24),
        granule_bytes,
        pattern,
    })
}

/// Write into `out` the bytes at `offset_bytes` of a verify write made from `header`'s seed,
/// granule size, pattern and generation, whose granules start at `granule_base_bytes` (any
/// granule boundary): `out` may start and end mid-granule. `scratch` holds a partial granule.
pub fn regenerate_verifiable(
    out: &mut [u8],
    offset_bytes: u64,
    header: &VerifiableHeader,
    granule_base_bytes: u64,
    scratch: &mut Vec<u8>,
) {
    let granule = u64::from(header.granule_bytes);
    let mut done = 0usize;
    while done < out.len() {
        let pos = offset_bytes + done as u64;
        let within = (pos - granule_base_bytes) % granule;
        let granule_offset = pos - within;
        let n = ((granule - within) as usize).min(out.len() - done);
        let whole = within == 0 && n as u64 == granule;
        let target: &mut [u8] = if whole {
            &mut out[done..done + n]
        } else {
            scratch.resize(granule as usize, 0);
            scratch.as_mut_slice()
        };
        fill_granule(
            target,
            header.pattern,
            header.seed,
            granule_offset,
            granule as usize,
            header.generation,
        );
        if !whole {
            out[done..done + n].copy_from_slice(&scratch[within as usize..within as usize + n]);
        }
        done += n;
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
        fill(&mut buf, Pattern::Compressible(75), 7);
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
        fill(&mut a, Pattern::Random, 1);
        fill(&mut b, Pattern::Random, 1);
        assert_eq!(a, b);
        let distinct = a.iter().collect::<std::collections::HashSet<_>>().len();
        assert_eq!(distinct, 256);
        fill(&mut b, Pattern::Random, 2);
        assert_ne!(a, b);
    }

    #[test]
    fn verifiable_content_depends_on_offset_and_generation_only() {
        let mut whole = vec![0u8; 8192];
        fill_verifiable(&mut whole, Pattern::Random, 9, 4096, 512, 3);
        let mut second = vec![0u8; 4096];
        fill_verifiable(&mut second, Pattern::Random, 9, 8192, 512, 3);
        assert_eq!(&whole[4096..], &second[..]);
        fill_verifiable(&mut second, Pattern::Random, 9, 8192, 512, 4);
        assert_ne!(
            &whole[4096..4096 + 512],
            &second[..512],
            "a rewrite differs"
        );
    }

    #[test]
    fn a_verify_granule_names_its_generator_and_any_range_regenerates() {
        for pattern in [Pattern::Random, Pattern::Compressible(60)] {
            let mut written = vec![0u8; 4 * 1024];
            fill_verifiable(&mut written, pattern, 0xDEAD, 1 << 20, 1024, 77);
            let header = read_verifiable_header(&written[1024..]).unwrap();
            assert_eq!(
                header,
                VerifiableHeader {
                    offset_bytes: (1 << 20) + 1024,
                    generation: 77,
                    seed: 0xDEAD,
                    granule_bytes: 1024,
                    pattern,
                }
            );
            let mut scratch = Vec::new();
            for (start, end) in [(0, 4096), (5, 4000), (1024, 2048), (1500, 1501)] {
                let mut out = vec![0xEEu8; end - start];
                regenerate_verifiable(
                    &mut out,
                    (1 << 20) + start as u64,
                    &header,
                    1 << 20,
                    &mut scratch,
                );
                assert_eq!(out, &written[start..end], "{pattern:?} {start}..{end}");
            }
        }
        let mut plain = vec![0u8; 4096];
        fill(&mut plain, Pattern::Random, 3);
        stamp(&mut plain, Pattern::Random, 0, 1);
        assert_eq!(read_verifiable_header(&plain), None, "a normal write");
    }
}
