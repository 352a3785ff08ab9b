//! fio's random map: random offsets that visit every block of a region exactly once per pass, in
//! a seeded order, before any block comes round again.
//!
//! fio keeps a bitmap of the blocks used; here a keyed permutation of the block indices does the
//! same in constant memory, so a region of any size costs nothing: a balanced Feistel network on
//! the smallest even-width power of two at or above the block count, with cycle walking to stay
//! below the count (at most four steps per draw on average, since the domain is under four times
//! the count). Each pass draws new round keys, so passes differ.

use rand_chacha::ChaCha8Rng;
use rand_core::RngCore;

/// Feistel rounds: four make a keyed permutation that looks random to any workload.
const ROUNDS: usize = 4;

/// A permutation of `0..blocks`, walked one index at a time, re-keyed each pass.
pub struct RandomMap {
    blocks: u64,
    /// Bits in each Feistel half.
    half_bits: u32,
    keys: [u64; ROUNDS],
    /// Draws made in this pass.
    drawn: u64,
}

impl RandomMap {
    /// A map over `blocks` (at least 1) blocks, keyed from `rng`.
    pub fn new(blocks: u64, rng: &mut ChaCha8Rng) -> Self {
        let blocks = blocks.max(1);
        // Width of the largest index, rounded up to an even number of bits (at least 2).
        let bits = (64 - (blocks - 1).leading_zeros()).max(1);
        let half_bits = bits.div_ceil(2);
        let mut map = RandomMap {
            blocks,
            half_bits,
            keys: [0; ROUNDS],
            drawn: 0,
        };
        map.rekey(rng);
        map
    }

    fn rekey(&mut self, rng: &mut ChaCha8Rng) {
        for key in &mut self.keys {
            *key = rng.next_u64();
        }
        self.drawn = 0;
    }

    /// The next block index of this pass; a new pass, in a new order, starts when all are drawn.
    pub fn next(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        if self.drawn == self.blocks {
            self.rekey(rng);
        }
        let mut index = self.permute(self.drawn);
        // Cycle walking: the permutation of the whole domain, restricted to 0..blocks by
        // following each index's cycle until it lands inside, is a permutation of 0..blocks.
        while index >= self.blocks {
            index = self.permute(index);
        }
        self.drawn += 1;
        index
    }

    /// The keyed Feistel permutation of `0..2^(2 × half_bits)`.
    fn permute(&self, value: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let mut left = (value >> self.half_bits) & mask;
        let mut right = value & mask;
        for key in self.keys {
            let next = left ^ (mix(right ^ key) & mask);
            left = right;
            right = next;
        }
        (left << self.half_bits) | right
    }
}

/// splitmix64's finaliser: every input bit affects every output bit.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand_core::SeedableRng;

    fn pass(blocks: u64, seed: u64) -> Vec<u64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut map = RandomMap::new(blocks, &mut rng);
        (0..blocks).map(|_| map.next(&mut rng)).collect()
    }

    proptest! {
        #[test]
        fn every_block_once_per_pass(blocks in 1u64..5000, seed: u64) {
            let mut drawn = pass(blocks, seed);
            drawn.sort_unstable();
            prop_assert_eq!(drawn, (0..blocks).collect::<Vec<_>>());
        }
    }

    #[test]
    fn passes_differ_and_each_covers_every_block() {
        let blocks = 1000;
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut map = RandomMap::new(blocks, &mut rng);
        let first: Vec<u64> = (0..blocks).map(|_| map.next(&mut rng)).collect();
        let second: Vec<u64> = (0..blocks).map(|_| map.next(&mut rng)).collect();
        assert_ne!(first, second);
        let mut sorted = second.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..blocks).collect::<Vec<_>>());
    }

    #[test]
    fn the_order_looks_random_not_sequential() {
        let drawn = pass(1 << 16, 1);
        // Adjacent draws land next to each other about as often as chance says (2 in 65536).
        let neighbours = drawn
            .windows(2)
            .filter(|w| w[0].abs_diff(w[1]) == 1)
            .count();
        assert!(neighbours < 20, "{neighbours} adjacent steps");
        // The first half of a pass reaches across the whole region.
        let early_max = drawn[..1000].iter().max().unwrap();
        assert!(*early_max > (1 << 16) * 9 / 10, "{early_max}");
    }

    #[test]
    fn a_huge_region_costs_no_memory_and_stays_in_range() {
        let blocks = (16u64 << 40) / 4096 + 3;
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut map = RandomMap::new(blocks, &mut rng);
        for _ in 0..10_000 {
            assert!(map.next(&mut rng) < blocks);
        }
    }
}
