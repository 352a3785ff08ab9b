//! fio 3.33's LFSR offset generator (lib/lfsr.c, `random_generator=lfsr`): a maximal XNOR
//! linear feedback shift register over the region's blocks, which visits each block once per
//! pass without a random map.

/// fio's `FIO_MAX_TAPS`: the most taps one register has in its table.
const MAX_TAPS: usize = 6;

/// The smallest register fio builds (lib/lfsr.c: "LFSRs with less than 3-bits cannot exist").
const MIN_BITS: usize = 3;

/// fio's `lfsr_taps` table (lib/lfsr.c): for an n-bit register, the positions (from 1) of its
/// taps; index n. fio took it from a published table of maximal-length taps.
const TAPS: [[u8; MAX_TAPS]; 64] = [
    [0; 6],
    [0; 6],
    [0; 6],
    [3, 2, 0, 0, 0, 0],
    [4, 3, 0, 0, 0, 0],
    [5, 3, 0, 0, 0, 0],
    [6, 5, 0, 0, 0, 0],
    [7, 6, 0, 0, 0, 0],
    [8, 6, 5, 4, 0, 0],
    [9, 5, 0, 0, 0, 0],
    [10, 7, 0, 0, 0, 0],
    [11, 9, 0, 0, 0, 0],
    [12, 6, 4, 1, 0, 0],
    [13, 4, 3, 1, 0, 0],
    [14, 5, 3, 1, 0, 0],
    [15, 14, 0, 0, 0, 0],
    [16, 15, 13, 4, 0, 0],
    [17, 14, 0, 0, 0, 0],
    [18, 11, 0, 0, 0, 0],
    [19, 6, 2, 1, 0, 0],
    [20, 17, 0, 0, 0, 0],
    [21, 19, 0, 0, 0, 0],
    [22, 21, 0, 0, 0, 0],
    [23, 18, 0, 0, 0, 0],
    [24, 23, 22, 17, 0, 0],
    [25, 22, 0, 0, 0, 0],
    [26, 6, 2, 1, 0, 0],
    [27, 5, 2, 1, 0, 0],
    [28, 25, 0, 0, 0, 0],
    [29, 27, 0, 0, 0, 0],
    [30, 6, 4, 1, 0, 0],
    [31, 28, 0, 0, 0, 0],
    [32, 31, 29, 1, 0, 0],
    [33, 20, 0, 0, 0, 0],
    [34, 27, 2, 1, 0, 0],
    [35, 33, 0, 0, 0, 0],
    [36, 25, 0, 0, 0, 0],
    [37, 5, 4, 3, 2, 1],
    [38, 6, 5, 1, 0, 0],
    [39, 35, 0, 0, 0, 0],
    [40, 38, 21, 19, 0, 0],
    [41, 38, 0, 0, 0, 0],
    [42, 41, 20, 19, 0, 0],
    [43, 42, 38, 37, 0, 0],
    [44, 43, 18, 17, 0, 0],
    [45, 44, 42, 41, 0, 0],
    [46, 45, 26, 25, 0, 0],
    [47, 42, 0, 0, 0, 0],
    [48, 47, 21, 20, 0, 0],
    [49, 40, 0, 0, 0, 0],
    [50, 49, 24, 23, 0, 0],
    [51, 50, 36, 35, 0, 0],
    [52, 49, 0, 0, 0, 0],
    [53, 52, 38, 37, 0, 0],
    [54, 53, 18, 17, 0, 0],
    [55, 31, 0, 0, 0, 0],
    [56, 55, 35, 34, 0, 0],
    [57, 50, 0, 0, 0, 0],
    [58, 39, 0, 0, 0, 0],
    [59, 58, 38, 37, 0, 0],
    [60, 59, 0, 0, 0, 0],
    [61, 60, 46, 45, 0, 0],
    [62, 61, 6, 5, 0, 0],
    [63, 62, 0, 0, 0, 0],
];

/// fio's `struct fio_lfsr` with spin 0, the only spin fio's offset generator uses
/// (filesetup.c, `init_random_map`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lfsr {
    xormask: u64,
    last_val: u64,
    cached_bit: u64,
    max_val: u64,
    num_vals: u64,
    /// fio's `cycle_length`: with spin 0 it starts at 1 and is never set again, so only the
    /// first value after `lfsr_init` steps the register twice (`prepare_spin`'s "increment
    /// cycle length for the first time only"); `lfsr_reset` leaves it alone, so later passes
    /// step once.
    cycle_length: u64,
}

impl Lfsr {
    /// fio's `lfsr_init(fl, blocks, seed, 0)`: a register of the fewest bits whose values
    /// reach `blocks`, started at `seed`; `None` where fio fails ("failed initializing
    /// LFSR"): no register that large, or a seed whose low bits are all ones (the XNOR
    /// register's one forbidden state).
    pub fn new(blocks: u64, seed: u64) -> Option<Self> {
        let bits = (MIN_BITS..TAPS.len()).find(|&bits| (1u64 << bits) > blocks)?;
        let taps = &TAPS[bits];
        let xormask = taps
            .iter()
            .take_while(|&&tap| tap != 0)
            .fold(0u64, |mask, &tap| mask | (1u64 << (tap - 1)));
        let mut lfsr = Lfsr {
            xormask,
            last_val: 0,
            cached_bit: 1u64 << (taps[0] - 1),
            max_val: blocks.wrapping_sub(1),
            num_vals: 0,
            cycle_length: 1,
        };
        lfsr.reset(seed).then_some(lfsr)
    }

    /// fio's `lfsr_reset`: the pass starts over from `seed`; false for the forbidden state.
    pub fn reset(&mut self, seed: u64) -> bool {
        let bitmask = (self.cached_bit << 1) - 1;
        self.num_vals = 0;
        self.last_val = seed & bitmask;
        self.last_val != bitmask
    }

    /// One step of fio's `__LFSR_NEXT`: shift right, feed the top bit, and XOR the taps in
    /// when the bit shifted out was 0 (XNOR feedback).
    #[inline]
    fn step(&mut self) {
        let v = self.last_val;
        let taps_in = (v & 1).wrapping_sub(1) & self.xormask;
        self.last_val = ((v >> 1) | self.cached_bit) ^ taps_in;
    }

    /// fio's `lfsr_next`: the next block below `blocks`, or `None` once the pass has given
    /// `blocks` of them.
    pub fn next_block(&mut self) -> Option<u64> {
        let given = self.num_vals;
        self.num_vals += 1;
        if given > self.max_val {
            return None;
        }
        loop {
            if self.cycle_length != 0 {
                self.cycle_length -= 1;
                if self.cycle_length == 0 {
                    // `__lfsr_next(fl, spin + 1)`: two steps; the cached cycle length of
                    // spin 0 is 0, so this happens once.
                    self.step();
                }
            }
            self.step();
            if self.last_val <= self.max_val {
                return Some(self.last_val);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block once per pass, then the end: a maximal register's values below `blocks`.
    #[test]
    fn a_pass_visits_every_block_once() {
        for blocks in [5u64, 8, 100, 256, 1000] {
            let mut lfsr = Lfsr::new(blocks, 0x1234).expect("an allowed seed");
            let mut seen: Vec<u64> = std::iter::from_fn(|| lfsr.next_block()).collect();
            assert_eq!(seen.len() as u64, blocks, "{blocks} blocks");
            seen.sort_unstable();
            assert_eq!(seen, (0..blocks).collect::<Vec<_>>());
        }
    }

    /// The all-ones state is forbidden, as fio's `lfsr_reset` refuses it.
    #[test]
    fn the_all_ones_seed_is_refused() {
        // 100 blocks take a 7-bit register: seeds whose low 7 bits are all ones fail.
        assert!(Lfsr::new(100, 0x7f).is_none());
        assert!(Lfsr::new(100, 0x17f).is_none());
        assert!(Lfsr::new(100, 0x7e).is_some());
    }
}
