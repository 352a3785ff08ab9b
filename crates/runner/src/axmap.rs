//! fio's random map (lib/axmap.c) with its semantics: one bit per block of the smallest size,
//! a block taken when its bit is set, and a taken draw moved to the next free block after it,
//! wrapping to the region's start. Memory: one bit per block plus 1/63 of that for the levels
//! above (a 1 TiB region of 4 KiB blocks takes 32.5 MiB, as in fio).

/// Bits per word, as fio's `unsigned long` on 64-bit machines (`UNIT_SHIFT` 6).
const WORD_BITS: u64 = u64::BITS as u64;

/// A hierarchical bitmap: level 0 holds one bit per block; a bit of level `n + 1` is set when
/// the word of level `n` below it is full, so searches skip full stretches 64 words at a time.
pub struct Axmap {
    blocks: u64,
    levels: Vec<Vec<u64>>,
}

impl Axmap {
    /// A map of `blocks` blocks, all free.
    pub fn new(blocks: u64) -> Self {
        let mut levels = Vec::new();
        let mut bits = blocks.max(1);
        loop {
            let words = bits.div_ceil(WORD_BITS);
            levels.push(vec![0u64; words as usize]);
            if words == 1 {
                break;
            }
            bits = words;
        }
        Axmap { blocks, levels }
    }

    /// Frees every block (fio's `axmap_reset`, at each loop's file open).
    pub fn reset(&mut self) {
        self.levels.iter_mut().for_each(|l| l.fill(0));
    }

    /// Whether `block` is taken.
    pub fn is_set(&self, block: u64) -> bool {
        block < self.blocks
            && self.levels[0][(block / WORD_BITS) as usize] & (1 << (block % WORD_BITS)) != 0
    }

    /// The word `word_index` of level 0 just filled: set its bit in the levels above, as far
    /// as words fill.
    fn mark_full_above(&mut self, word_index: u64) {
        let mut index = word_index;
        for level in self.levels.iter_mut().skip(1) {
            let word = &mut level[(index / WORD_BITS) as usize];
            *word |= 1 << (index % WORD_BITS);
            if *word != u64::MAX {
                break;
            }
            index /= WORD_BITS;
        }
    }

    fn set_one(&mut self, block: u64) {
        let mut index = block;
        for level in self.levels.iter_mut() {
            let word = &mut level[(index / WORD_BITS) as usize];
            *word |= 1 << (index % WORD_BITS);
            if *word != u64::MAX {
                break;
            }
            index /= WORD_BITS;
        }
    }

    /// fio's `axmap_set_nr`: takes up to `count` blocks from `block` on, stopping at the first
    /// taken one or the end of the map's last word; returns how many it took.
    pub fn set_run(&mut self, block: u64, count: u64) -> u64 {
        // One block, the common case: one word test and set.
        if count == 1 && block < self.blocks {
            let word = &mut self.levels[0][(block / WORD_BITS) as usize];
            let bit = 1 << (block % WORD_BITS);
            if *word & bit != 0 {
                return 0;
            }
            *word |= bit;
            if *word == u64::MAX {
                self.mark_full_above(block / WORD_BITS);
            }
            return 1;
        }
        // fio sets a word's worth at a time; `__axmap_set` stops at a word that starts past the
        // last block (`bit_nr > nr_bits`) but, its trim to the last block lost (it passes the
        // untrimmed count on to `axmap_handler`), fills a word it starts in past that block:
        // an I/O near the map's end keeps its length up to the last word's end.
        // A map of whole words lets a run that starts at its end write one word past its
        // array, into the allocation's slack, whose bits are whatever the heap left there:
        // storlab stops there (strided zones refuse such maps, `validate/io.rs`; a
        // `bs_is_seq_rand` read of a larger write size that reaches one ends the job,
        // `run_passes_array`).
        let capacity = self.levels[0].len() as u64 * WORD_BITS;
        let (mut taken, mut at, mut left) = (0, block, count);
        while left > 0 && at <= self.blocks && at < capacity {
            let chunk = left.min(WORD_BITS - at % WORD_BITS);
            let mut set = 0;
            while set < chunk && !self.bit(at + set) {
                self.set_one(at + set);
                set += 1;
            }
            taken += set;
            if set != chunk {
                break;
            }
            left -= set;
            at += set;
        }
        taken
    }

    /// Whether a run `set_run` took `taken` of `count` blocks from `block` for went on, in
    /// fio, past the map's array: it reached the end of a map of whole words with blocks
    /// left, where fio's next word is heap memory (see `set_run`).
    pub fn run_passes_array(&self, block: u64, count: u64, taken: u64) -> bool {
        let capacity = self.levels[0].len() as u64 * WORD_BITS;
        self.blocks == capacity && block + taken == capacity && count > taken
    }

    /// Level 0's bit for `block`, padding past the last block included.
    fn bit(&self, block: u64) -> bool {
        self.levels[0][(block / WORD_BITS) as usize] & (1 << (block % WORD_BITS)) != 0
    }

    /// The first free block at or after `from`, if any before the map's end.
    fn first_free_from(&self, from: u64) -> Option<u64> {
        if from >= self.blocks {
            return None;
        }
        // Climb while the rest of the current word is full, then descend to the free bit.
        let mut level = 0;
        let mut index = from;
        loop {
            let words = &self.levels[level];
            let word_index = (index / WORD_BITS) as usize;
            let below_mask = (1u64 << (index % WORD_BITS)) - 1;
            let free = !words[word_index] & !below_mask;
            if free != 0 {
                index = word_index as u64 * WORD_BITS + u64::from(free.trailing_zeros());
                break;
            }
            if level + 1 == self.levels.len() {
                return None;
            }
            // The next word of this level starts the search one level up.
            level += 1;
            index = word_index as u64 + 1;
            if index >= self.levels[level - 1].len() as u64 {
                return None;
            }
        }
        // Down: the first free bit of each word below the free bit found.
        while level > 0 {
            level -= 1;
            // A free bit past the last word below is padding: no free block is left.
            let word = *self.levels[level].get(index as usize)?;
            index = index * WORD_BITS + u64::from((!word).trailing_zeros());
        }
        (index < self.blocks).then_some(index)
    }

    /// fio's `axmap_next_free` for a taken `block`: the first free block after it, else the
    /// first free one from the map's start; `None` when the map is full.
    pub fn next_free(&self, block: u64) -> Option<u64> {
        if block >= self.blocks {
            return None;
        }
        let next = if block + 1 == self.blocks {
            0
        } else {
            block + 1
        };
        self.first_free_from(next)
            .or_else(|| (next != 0).then(|| self.first_free_from(0)).flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_block_moves_to_the_next_free_one_wrapping_to_the_start() {
        let mut map = Axmap::new(200);
        assert_eq!(map.set_run(13, 1), 1);
        assert_eq!(map.next_free(13), Some(14));
        map.set_run(14, 1);
        assert_eq!(map.next_free(13), Some(15));
        // Fill 150..200 and 0..5: from 199 the next free is 5. A run goes on past the last
        // block to its word's end (192..256 here), as fio's: 150..210 taken.
        assert_eq!(map.set_run(150, 60), 60);
        assert_eq!(
            map.set_run(210, 4),
            0,
            "a run that starts past the last block"
        );
        // A map of whole words stops at its end (fio's run goes on into heap slack there).
        assert_eq!(Axmap::new(128).set_run(126, 4), 2);
        assert_eq!(map.set_run(0, 5), 5);
        assert_eq!(map.next_free(199), Some(5));
        // A run stops at the first taken block.
        assert_eq!(map.set_run(10, 10), 3);
    }

    #[test]
    fn searches_cross_full_words_and_levels() {
        let blocks = 64 * 64 * 3 + 7;
        let mut map = Axmap::new(blocks);
        for block in 0..blocks - 1 {
            map.set_run(block, 1);
        }
        assert_eq!(map.next_free(0), Some(blocks - 1));
        map.set_run(blocks - 1, 1);
        assert_eq!(map.next_free(5), None);
        map.reset();
        assert_eq!(map.next_free(0), Some(1));
    }
}
