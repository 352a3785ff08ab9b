//! fio's non-uniform random offsets (`random_distribution`): the Zipf and Pareto generators of
//! fio's lib/zipf.c, the Gaussian of lib/gauss.c, and the zones of io_u.c
//! (`__get_next_rand_offset_zoned`, `_zoned_abs`). Each yields a block index; the offset
//! generator turns it into bytes. Zipf, Pareto and Gauss draw from their own 32-bit
//! Tausworthe stream as fio's do (`zipf_state.rand`, `gauss_state.r`), seeded from the file's
//! name and the thread's number (filesetup.c, `__init_rand_distribution`), so a fio job's
//! blocks are fio's own; the zones draw from the worker's ChaCha8 stream (their shape is fio's,
//! their sequence storlab's).

use crate::fio_rand::FioRand;
use rand_chacha::ChaCha8Rng;
use rand_core::RngCore;
use storlab_job::{RandomDistribution, ZoneShare, MICROS_PER_UNIT};

/// fio hashes each drawn rank before it becomes a block (`__hash_u64`, the Linux kernel's
/// `GOLDEN_RATIO_64`), so the hot blocks are scattered over the file rather than packed at its
/// start.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
/// fio's Gaussian sums this many uniform draws (central limit theorem, lib/gauss.c).
const GAUSS_ITERS: u64 = 12;
/// fio sums at most this many terms of the Zipf normalisation (lib/zipf.c, `ZIPF_MAX_GEN`).
const ZIPF_MAX_GEN: u64 = 10_000_000;
/// fio's `FRAND32_MAX`: its uniforms are 32-bit.
const FRAND32_MAX: f64 = u32::MAX as f64;
/// hash.h's `JHASH_INITVAL` (`GOLDEN_RATIO_32`): Bob Jenkins' hash starts from it.
const JHASH_INITVAL: u32 = 0x61C8_8647;

fn hash_u64(value: u64) -> u64 {
    value.wrapping_mul(GOLDEN_RATIO_64)
}

fn fraction(micros: u64) -> f64 {
    micros as f64 / MICROS_PER_UNIT as f64
}

/// hash.h, `jhash(key, length, 0)`: Bob Jenkins' lookup2-style hash of `key`, fio's hash of a
/// file's name.
pub fn jhash(key: &[u8]) -> u32 {
    fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(4);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(6);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(8);
        *b = b.wrapping_add(*a);
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(16);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(19);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(4);
        *b = b.wrapping_add(*a);
    }
    fn final_mix(a: &mut u32, b: &mut u32, c: &mut u32) {
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(14));
        *a ^= *c;
        *a = a.wrapping_sub(c.rotate_left(11));
        *b ^= *a;
        *b = b.wrapping_sub(a.rotate_left(25));
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(16));
        *a ^= *c;
        *a = a.wrapping_sub(c.rotate_left(4));
        *b ^= *a;
        *b = b.wrapping_sub(a.rotate_left(14));
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(24));
    }
    let start = JHASH_INITVAL.wrapping_add(key.len() as u32);
    let (mut a, mut b, mut c) = (start, start, start);
    let mut rest = key;
    // fio adds one byte per word here (`a += *k`, not a 32-bit load): kept, for its seeds.
    while rest.len() > 12 {
        a = a.wrapping_add(u32::from(rest[0]));
        b = b.wrapping_add(u32::from(rest[4]));
        c = c.wrapping_add(u32::from(rest[8]));
        mix(&mut a, &mut b, &mut c);
        rest = &rest[12..];
    }
    if rest.is_empty() {
        return c;
    }
    // The last block: its bytes little-endian into a, b and c, as fio's fall-through switch.
    for (i, byte) in rest.iter().enumerate() {
        let shifted = u32::from(*byte) << (8 * (i % 4));
        match i / 4 {
            0 => a = a.wrapping_add(shifted),
            1 => b = b.wrapping_add(shifted),
            _ => c = c.wrapping_add(shifted),
        }
    }
    final_mix(&mut a, &mut b, &mut c);
    c
}

/// filesetup.c, `__init_rand_distribution`: the seed of the distribution of fio's thread
/// `thread_number` on the file fio names `file_name` (the hash of the name times the thread,
/// in 32 bits).
pub fn fio_distribution_seed(file_name: &str, thread_number: u32) -> u32 {
    jhash(file_name.as_bytes()).wrapping_mul(thread_number)
}

/// The shape of one of fio's hashed-rank generators.
#[derive(Clone, Debug)]
enum Shape {
    Zipf { theta: f64, zeta2: f64, zetan: f64 },
    Pareto { pareto_pow: f64 },
    Gauss { stddev: u64 },
}

/// fio's `zipf_state` or `gauss_state`: block indices in `0..ranges` from its own stream.
#[derive(Clone, Debug)]
pub struct FioDistribution {
    shape: Shape,
    ranges: u64,
    rand_off: u64,
    rand: FioRand,
}

impl FioDistribution {
    /// fio's `zipf_init`, `pareto_init` or `gauss_init` for `distribution` over a region of
    /// `region_bytes` ranked in blocks of the smallest block size, `smallest_block_bytes`
    /// (filesetup.c, `__init_rand_distribution`), drawing from a stream seeded with `seed`.
    /// `None` for the uniform and zoned distributions, which are not fio's hashed ranks.
    pub fn new(
        distribution: &RandomDistribution,
        region_bytes: u64,
        smallest_block_bytes: u64,
        seed: u32,
    ) -> Option<Self> {
        let ranges = region_bytes.div_ceil(smallest_block_bytes.max(1)).max(1);
        let mut rand = FioRand::new(u64::from(seed), false);
        // lib/zipf.c, `shared_rand_init`: a random rotation of the ranks is drawn first, and
        // replaced by the center when one is given.
        let mut rotation = |center: Option<u64>| {
            let drawn = rand.next();
            center.map_or(drawn, |c| (ranges as f64 * fraction(c)) as u64)
        };
        let (shape, rand_off) = match distribution {
            RandomDistribution::Zipf {
                theta_micros,
                center_micros,
            } => {
                let rand_off = rotation(*center_micros);
                let theta = fraction(*theta_micros);
                let zetan = (0..ranges.min(ZIPF_MAX_GEN))
                    .map(|i| (1.0 / (i + 1) as f64).powf(theta))
                    .sum();
                let zeta2 = 1.0 + 0.5f64.powf(theta);
                (
                    Shape::Zipf {
                        theta,
                        zeta2,
                        zetan,
                    },
                    rand_off,
                )
            }
            RandomDistribution::Pareto {
                h_micros,
                center_micros,
            } => {
                let rand_off = rotation(*center_micros);
                let h = fraction(*h_micros);
                let pareto_pow = h.ln() / (1.0 - h).ln();
                (Shape::Pareto { pareto_pow }, rand_off)
            }
            RandomDistribution::Normal {
                dev_percent_micros,
                center_micros,
            } => {
                let dev = fraction(*dev_percent_micros);
                let stddev = if dev == 0.0 {
                    0
                } else {
                    ((ranges as f64 * dev / 100.0).ceil() as u64).min(ranges / 2)
                };
                // lib/gauss.c: the center moves the bell by (center - 0.5) of the range, kept
                // in an `unsigned int` as fio keeps it.
                let rand_off = center_micros
                    .map_or(0, |c| (ranges as f64 * (fraction(c) - 0.5)) as i64 as u32);
                (Shape::Gauss { stddev }, u64::from(rand_off))
            }
            _ => return None,
        };
        Some(FioDistribution {
            shape,
            ranges,
            rand_off,
            rand,
        })
    }

    /// The next block index: fio's `zipf_next`, `pareto_next` or `gauss_next`; `None` where
    /// fio 3.33's `gauss_next` never returns (see `gauss_rank`).
    pub fn next_block(&mut self) -> Option<u64> {
        let ranges = self.ranges;
        let rank = match self.shape {
            Shape::Zipf {
                theta,
                zeta2,
                zetan,
            } => {
                let n = ranges as f64;
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / n).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                let rand_uni = self.rand.next() as f64 / FRAND32_MAX;
                let rand_z = rand_uni * zetan;
                let rank = if rand_z < 1.0 {
                    1
                } else if rand_z < 1.0 + 0.5f64.powf(theta) {
                    2
                } else {
                    1 + (n * (eta * rand_uni - eta + 1.0).powf(alpha)) as u64
                };
                rank - 1
            }
            Shape::Pareto { pareto_pow } => {
                let rand = self.rand.next() as f64 / FRAND32_MAX;
                ((ranges - 1) as f64 * rand.powf(pareto_pow)) as u64
            }
            Shape::Gauss { stddev } => self.gauss_rank(stddev)?,
        };
        Some(hash_u64(rank).wrapping_add(self.rand_off) % ranges)
    }

    /// The ranks the generator spreads its draws over (fio's `nranges`).
    pub fn ranges(&self) -> u64 {
        self.ranges
    }

    /// lib/gauss.c, `gauss_next` before the hash: the mean of 12 uniform draws in
    /// `0..=ranges` rounded up, moved by `gauss_dev`'s uniform spread of one deviation, the
    /// spread halved while the sum is past the last range. `None` where fio spins forever:
    /// a mean at `ranges` with a spread that is not negative halves to 0 and stays past the
    /// end (likely on a region of a few blocks: with 2 ranges about two draws in five).
    fn gauss_rank(&mut self, stddev: u64) -> Option<u64> {
        let ranges = self.ranges;
        let sum: u64 = (0..GAUSS_ITERS)
            .map(|_| self.rand.next() % (ranges + 1))
            .sum();
        let sum = sum.div_ceil(GAUSS_ITERS);
        if stddev == 0 {
            return Some(sum);
        }
        let draw = self.rand.next() as f64 / (FRAND32_MAX + 1.0);
        let mut dev = (stddev as f64 * draw) as i64 - (stddev / 2) as i64;
        // fio adds an `int` to an unsigned sum: a negative spread wraps past the end too.
        while sum.wrapping_add_signed(dev) >= ranges {
            if dev == 0 {
                return None;
            }
            dev /= 2;
        }
        Some(sum.wrapping_add_signed(dev))
    }
}

/// One worker's generator of block indices in `0..ranges`.
#[derive(Clone, Debug)]
pub enum BlockDistribution {
    /// Zipf, Pareto or Gauss, as fio's.
    Ranked(FioDistribution),
    /// `(access percent, first block, blocks)` per zone.
    Zones(Vec<(u8, u64, u64)>),
}

impl BlockDistribution {
    /// The generator of `distribution` over a region of `region_bytes`, whose indices become
    /// offsets `spacing_bytes` apart (fio: `blockalign`). As fio (init.c,
    /// `__init_rand_distribution`), Zipf, Pareto and Gauss rank blocks of the smallest block
    /// size, `smallest_block_bytes`, with their stream seeded from `rng`; zones are counted in
    /// places `spacing_bytes` apart (io_u.c, `last_block`). `None` for the uniform default.
    pub fn new(
        distribution: &RandomDistribution,
        region_bytes: u64,
        smallest_block_bytes: u64,
        spacing_bytes: u64,
        rng: &mut ChaCha8Rng,
    ) -> Option<Self> {
        let spacing_bytes = spacing_bytes.max(1);
        let places = (region_bytes.saturating_sub(smallest_block_bytes) / spacing_bytes + 1).max(1);
        Some(match distribution {
            RandomDistribution::Random => return None,
            RandomDistribution::Zoned { zones } => {
                // Sizes are percentages of the region (io_u.c: `stotal * lastb / 100`).
                Self::zones(zones, |size| places * size / 100)
            }
            RandomDistribution::ZonedAbs { zones } => {
                Self::zones(zones, |size| size / spacing_bytes)
            }
            ranked => BlockDistribution::Ranked(FioDistribution::new(
                ranked,
                region_bytes,
                smallest_block_bytes,
                rng.next_u32(),
            )?),
        })
    }

    fn zones(zones: &[ZoneShare], blocks_of: impl Fn(u64) -> u64) -> Self {
        let mut first = 0;
        BlockDistribution::Zones(
            zones
                .iter()
                .map(|zone| {
                    let blocks = blocks_of(zone.size).max(1);
                    let entry = (zone.access_percent, first, blocks);
                    first += blocks;
                    entry
                })
                .collect(),
        )
    }

    /// The next block index.
    pub fn next_block(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        match self {
            // fio would spin forever on some Gauss draws; storlab's own generator draws again.
            BlockDistribution::Ranked(ranked) => loop {
                if let Some(block) = ranked.next_block() {
                    break block;
                }
            },
            BlockDistribution::Zones(zones) => {
                // io_u.c: v in 1..=100 picks the zone whose cumulative access share covers it.
                let v = rng.next_u64() % 100 + 1;
                let mut covered = 0;
                let &(_, first, blocks) = zones
                    .iter()
                    .find(|(access, _, _)| {
                        covered += u64::from(*access);
                        v <= covered
                    })
                    .unwrap_or(zones.last().expect("a zoned distribution has a zone"));
                first + rng.next_u64() % blocks
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    /// How often each block of `ranges` is drawn in `draws` draws, most-hit first.
    fn hits_sorted(distribution: RandomDistribution, ranges: u64, draws: u32) -> Vec<u32> {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut generator =
            BlockDistribution::new(&distribution, ranges * 4096, 4096, 4096, &mut rng).unwrap();
        let mut hits = vec![0u32; ranges as usize];
        for _ in 0..draws {
            let block = generator.next_block(&mut rng);
            assert!(block < ranges, "{block} of {ranges}");
            hits[block as usize] += 1;
        }
        hits.sort_unstable_by(|a, b| b.cmp(a));
        hits
    }

    fn top_share(hits: &[u32], top: usize) -> f64 {
        let total: u32 = hits.iter().sum();
        f64::from(hits[..top].iter().sum::<u32>()) / f64::from(total)
    }

    /// Zipf with theta 1.2 over 1000 blocks: the hottest block takes 1/zeta(1000, 1.2) of the
    /// draws, about 22% (the expected value, not a fit: 1 / sum of k^-1.2 for k ≤ 1000).
    #[test]
    fn zipf_hot_blocks_take_zipfs_share() {
        let zipf = RandomDistribution::Zipf {
            theta_micros: 1_200_000,
            center_micros: None,
        };
        let hits = hits_sorted(zipf, 1000, 200_000);
        let zetan: f64 = (1..=1000).map(|k| (k as f64).powf(-1.2)).sum();
        let expected = 1.0 / zetan;
        let hottest = top_share(&hits, 1);
        assert!((hottest - expected).abs() < 0.02, "{hottest} vs {expected}");
        // Uniform draws would give the hottest block about 0.1%.
        assert!(top_share(&hits, 10) > 0.4);
    }

    /// Pareto with h 0.9: fio's "90/10"-style skew, most draws on few blocks.
    #[test]
    fn pareto_concentrates_draws() {
        let pareto = RandomDistribution::Pareto {
            h_micros: 900_000,
            center_micros: None,
        };
        let hits = hits_sorted(pareto, 1000, 100_000);
        assert!(top_share(&hits, 100) > 0.6, "{}", top_share(&hits, 100));
    }

    /// normal:10 over 1000 blocks: the bell spans about a quarter of them; the rest are cold.
    #[test]
    fn normal_hits_a_bell_of_blocks() {
        let normal = RandomDistribution::Normal {
            dev_percent_micros: 10_000_000,
            center_micros: None,
        };
        let hits = hits_sorted(normal, 1000, 100_000);
        let touched = hits.iter().filter(|&&h| h > 0).count();
        assert!(touched < 600, "{touched} blocks touched");
        assert!(top_share(&hits, 200) > 0.6);
    }

    /// fio's Gauss over 2 ranges (a 128 KiB region of 64 KiB blocks) spins forever whenever
    /// the mean of its 12 draws in 0..=2, rounded up, is 2: a sum of 13 or more, whose chance
    /// is (1 - 73789/3^12) / 2 = 0.4306 (73789 being the ways 12 draws sum to 12); its spread
    /// of ceil(2 * 30%) = 1 is always 0, so nothing moves it back. Over 1000 ranges it never does.
    #[test]
    fn gauss_spins_where_fio_does() {
        let normal = RandomDistribution::Normal {
            dev_percent_micros: 30_000_000,
            center_micros: None,
        };
        let spins = |ranges: u64, draws: u32| {
            let mut gauss = FioDistribution::new(&normal, ranges * 4096, 4096, 1).unwrap();
            (0..draws).filter(|_| gauss.next_block().is_none()).count() as f64 / f64::from(draws)
        };
        let share = spins(2, 20_000);
        assert!((0.41..0.45).contains(&share), "{share}");
        assert_eq!(spins(1000, 20_000), 0.0);
    }

    /// zoned:60/10:40/90: 60% of draws land in the first tenth of the blocks.
    #[test]
    fn zones_take_their_access_share() {
        let zoned = RandomDistribution::Zoned {
            zones: vec![
                ZoneShare {
                    access_percent: 60,
                    size: 10,
                },
                ZoneShare {
                    access_percent: 40,
                    size: 90,
                },
            ],
        };
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut generator =
            BlockDistribution::new(&zoned, 1000 * 4096, 4096, 4096, &mut rng).unwrap();
        let draws = 100_000;
        let first_zone = (0..draws)
            .filter(|_| generator.next_block(&mut rng) < 100)
            .count();
        let share = first_zone as f64 / f64::from(draws);
        assert!((share - 0.6).abs() < 0.01, "{share}");
    }
}
