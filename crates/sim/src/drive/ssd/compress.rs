//! Compressibility of written data, measured the way an on-the-fly compressing SSD controller
//! sees it: an LZ77-style single pass per 4 KiB page (hash of the next 4 bytes → last position,
//! greedy matches), counting what a byte-oriented LZ encoding would emit. Fast (one table
//! lookup per position, skipping over matches) and honest: random data stays at full size,
//! repeated or zero data shrinks to a few bytes.

/// Shortest match worth encoding (a match token costs about this much).
const MIN_MATCH_BYTES: usize = 4;
/// Bytes a match token costs in the estimated encoding (offset + length).
const MATCH_TOKEN_BYTES: usize = 3;
/// A literal run's length field grows by one byte per this many literals (LZ4-style).
const LITERALS_PER_LENGTH_BYTE: usize = 255;
/// Matches reach back at most this far (the encoding's offset field).
const WINDOW_BYTES: usize = 65_535;
const HASH_BITS: u32 = 12;

/// Estimated compressed size of `data` in bytes (never more than `data.len()` plus its
/// literal headers; a page that does not shrink is stored raw by the caller).
pub fn compressed_bytes(data: &[u8]) -> usize {
    let mut table = [u32::MAX; 1 << HASH_BITS];
    let n = data.len();
    let mut literals = 0usize;
    let mut out = 0usize;
    let mut i = 0usize;
    while i + MIN_MATCH_BYTES <= n {
        let word = u32::from_le_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]);
        let h = (word.wrapping_mul(2_654_435_761) >> (32 - HASH_BITS)) as usize;
        let candidate = table[h];
        table[h] = i as u32;
        if candidate != u32::MAX {
            let c = candidate as usize;
            if i - c <= WINDOW_BYTES && data[c..c + MIN_MATCH_BYTES] == data[i..i + MIN_MATCH_BYTES]
            {
                let mut len = MIN_MATCH_BYTES;
                while i + len < n && data[c + len] == data[i + len] {
                    len += 1;
                }
                out += literal_run_bytes(literals) + MATCH_TOKEN_BYTES;
                literals = 0;
                i += len;
                continue;
            }
        }
        literals += 1;
        i += 1;
    }
    literals += n - i.min(n);
    out + literal_run_bytes(literals)
}

/// A run of literals: the bytes themselves plus their length field.
fn literal_run_bytes(literals: usize) -> usize {
    literals + literals.div_ceil(LITERALS_PER_LENGTH_BYTE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};

    #[test]
    fn zeros_shrink_to_a_few_bytes() {
        assert!(compressed_bytes(&[0u8; 4096]) < 16);
    }

    #[test]
    fn random_bytes_do_not_shrink() {
        let mut data = vec![0u8; 4096];
        ChaCha8Rng::seed_from_u64(1).fill_bytes(&mut data);
        assert!(compressed_bytes(&data) >= 4096);
    }

    #[test]
    fn half_random_half_zero_compresses_to_about_half() {
        let mut data = vec![0u8; 4096];
        ChaCha8Rng::seed_from_u64(2).fill_bytes(&mut data[..2048]);
        let size = compressed_bytes(&data);
        assert!((2048..2100).contains(&size), "{size}");
    }

    #[test]
    fn short_input_counts_literals() {
        assert_eq!(compressed_bytes(b"ab"), 3);
        assert_eq!(compressed_bytes(&[7u8; 300][..2]), 3);
        assert_eq!(compressed_bytes(b""), 0);
    }
}
