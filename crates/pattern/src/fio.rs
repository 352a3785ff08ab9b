//! fio 3.33's random buffer fill (lib/rand.c `__fill_random_buf`), bit for bit, so storlab's
//! fio jobs write fio's bytes and the simulator's store can regenerate them from their seed.
//!
//! Words of 8 bytes in groups of [`SEED_BUCKETS`]: word `p` of each group from its own seed
//! (`seed * prime[p]`), each stepped by the golden ratio (lib/hash.h `__hash_u64` on 64-bit);
//! the words past the last whole group one after another from the first bucket's seed
//! (`__fill_random_buf_small`), a last partial word as the low bytes of the next seed.
//! Little-endian, as fio's `uint64_t` stores on x86-64. Every word is a seed times a power of
//! the golden ratio, so any window of a fill can be generated where it starts.

/// lib/hash.h `GOLDEN_RATIO_64`: the multiplier `__hash_u64` steps each word's seed with.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
/// configure's `CONFIG_SEED_BUCKETS` default (4): words filled side by side from their own seeds.
pub const SEED_BUCKETS: usize = 4;
/// lib/rand.c `__fill_random_buf`'s bucket seed multipliers (the first `SEED_BUCKETS` used).
const BUCKET_PRIMES: [u64; SEED_BUCKETS] = [1, 2, 3, 5];
const WORD_BYTES: usize = 8;
/// Bytes of one group of words: a fill's layout depends on its length only in its last
/// partial group.
pub const GROUP_BYTES: usize = WORD_BYTES * SEED_BUCKETS;

/// lib/rand.c `__fill_random_buf` of `buf` from `seed` (see the module docs).
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let grouped_words = buf.len() / WORD_BYTES / SEED_BUCKETS * SEED_BUCKETS;
    let mut seeds = BUCKET_PRIMES.map(|prime| seed.wrapping_mul(prime));
    let (grouped, tail) = buf.split_at_mut(grouped_words * WORD_BYTES);
    for group in grouped.chunks_exact_mut(WORD_BYTES * SEED_BUCKETS) {
        for (word, bucket_seed) in group.chunks_exact_mut(WORD_BYTES).zip(seeds.iter_mut()) {
            word.copy_from_slice(&bucket_seed.to_le_bytes());
            *bucket_seed = bucket_seed.wrapping_mul(GOLDEN_RATIO_64);
        }
    }
    let mut small_seed = seeds[0];
    let mut words = tail.chunks_exact_mut(WORD_BYTES);
    for word in &mut words {
        word.copy_from_slice(&small_seed.to_le_bytes());
        small_seed = small_seed.wrapping_mul(GOLDEN_RATIO_64);
    }
    let partial = words.into_remainder();
    let partial_len = partial.len();
    partial.copy_from_slice(&small_seed.to_le_bytes()[..partial_len]);
}

/// Bytes `start..start + out.len()` of `fill_random` over a buffer of `len` bytes: each word
/// is its bucket's seed times a power of the golden ratio, so the window starts where it is.
pub fn fill_random_window(out: &mut [u8], seed: u64, len: usize, start: usize) {
    let grouped_words = len / WORD_BYTES / SEED_BUCKETS * SEED_BUCKETS;
    let first_word = start / WORD_BYTES;
    let group = first_word.min(grouped_words) / SEED_BUCKETS;
    let step = golden_power(group as u64);
    let mut buckets = BUCKET_PRIMES.map(|prime| seed.wrapping_mul(prime).wrapping_mul(step));
    if first_word < grouped_words {
        // The buckets before the first word's in its group have stepped past this group.
        for bucket in buckets.iter_mut().take(first_word % SEED_BUCKETS) {
            *bucket = bucket.wrapping_mul(GOLDEN_RATIO_64);
        }
    }
    let tail_steps = grouped_words / SEED_BUCKETS + first_word.saturating_sub(grouped_words);
    let mut small_seed = seed.wrapping_mul(golden_power(tail_steps as u64));
    let mut at = start;
    let end = start + out.len();
    let mut word_index = first_word;
    while at < end {
        let value = if word_index < grouped_words {
            let bucket = &mut buckets[word_index % SEED_BUCKETS];
            let value = *bucket;
            *bucket = bucket.wrapping_mul(GOLDEN_RATIO_64);
            value
        } else {
            let value = small_seed;
            small_seed = small_seed.wrapping_mul(GOLDEN_RATIO_64);
            value
        };
        let word_start = word_index * WORD_BYTES;
        let from = at - word_start;
        let to = (end - word_start).min(WORD_BYTES);
        out[at - start..at - start + (to - from)].copy_from_slice(&value.to_le_bytes()[from..to]);
        at = word_start + to;
        word_index += 1;
    }
}

/// Bytes `start..start + out.len()` of one segment of lib/rand.c
/// `__fill_random_buf_percentage`: its first `random_len` bytes `fill_random`'s from `seed`,
/// the rest `rest_pattern` repeated from the rest's start, or zeros without one.
pub fn fill_segment_window(
    out: &mut [u8],
    seed: u64,
    random_len: usize,
    rest_pattern: Option<&[u8]>,
    start: usize,
) {
    let random_end = random_len.clamp(start, start + out.len()) - start;
    let (random, rest) = out.split_at_mut(random_end);
    if !random.is_empty() {
        fill_random_window(random, seed, random_len, start);
    }
    match rest_pattern.filter(|p| !p.is_empty()) {
        Some(pattern) => {
            let phase = (start + random_end).saturating_sub(random_len) % pattern.len();
            for (dst, src) in rest.iter_mut().zip(pattern.iter().cycle().skip(phase)) {
                *dst = *src;
            }
        }
        None => rest.fill(0),
    }
}

/// `GOLDEN_RATIO_64` to the power `exponent`, modulo 2^64 (by squaring).
fn golden_power(mut exponent: u64) -> u64 {
    let mut base = GOLDEN_RATIO_64;
    let mut result = 1u64;
    while exponent > 0 {
        if exponent & 1 == 1 {
            result = result.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exponent >>= 1;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_is_those_bytes_of_the_whole_fill() {
        for len in [1usize, 7, 8, 31, 32, 33, 100, 4096, 4097, 5000] {
            let seed = 0x0123_4567_89ab_cdefu64 ^ len as u64;
            let mut whole = vec![0u8; len];
            fill_random(&mut whole, seed);
            for start in [0, 1, 8, 9, 31, 32, 33, len / 2, len - 1]
                .into_iter()
                .filter(|&s| s <= len)
            {
                for end in [start, (start + 1).min(len), (start + 40).min(len), len] {
                    let mut window = vec![0xffu8; end - start];
                    fill_random_window(&mut window, seed, len, start);
                    assert_eq!(window, whole[start..end], "len {len} {start}..{end}");
                }
            }
        }
    }

    #[test]
    fn the_random_fill_is_fios_bucket_layout() {
        // lib/rand.c with 4 buckets: words 0..4 are seed * 1, 2, 3, 5; word 4 is seed * golden.
        let mut buf = [0u8; 44];
        fill_random(&mut buf, 3);
        let word = |i: usize| u64::from_le_bytes(buf[i * 8..i * 8 + 8].try_into().unwrap());
        assert_eq!([word(0), word(1), word(2), word(3)], [3, 6, 9, 15]);
        assert_eq!(word(4), 3u64.wrapping_mul(GOLDEN_RATIO_64));
        // The 12 bytes past the groups: one word and 4 bytes from the first bucket's stream.
        let small = 3u64.wrapping_mul(GOLDEN_RATIO_64);
        assert_eq!(buf[32..40], small.to_le_bytes());
        assert_eq!(
            buf[40..44],
            small.wrapping_mul(GOLDEN_RATIO_64).to_le_bytes()[..4]
        );
    }
}
