//! fio 3.33's random generators bit for bit: the taus88 and taus258 Tausworthe generators
//! (lib/rand.h, lib/rand.c), their seeding, and the per-job seeds fio derives from `randseed`
//! (init.c, `setup_random_seeds`), so a fio job drawn here issues fio's own offsets, sizes and
//! directions.

/// fio's `randseed` when a job file gives none (options.c: `.def = "0x89"`).
pub const FIO_DEFAULT_RANDSEED: u64 = 0x89;

/// The multiplier fio scrambles `randseed` with (init.c, `setup_random_seeds`): a 32-bit
/// golden-ratio prime, applied four times before the first seed and once between seeds.
const SEED_SCRAMBLE: u64 = 0x9e37_0001;

/// Scrambling rounds before the first of a job's seeds (init.c: `for (i = 0; i < 4; i++)`).
const SEED_SCRAMBLE_ROUNDS: u32 = 4;

/// fio's `FIO_RANDSEED` (init.c): with `randrepeat=1`, the offset stream's seed is this times
/// the job's thread number, whatever `randseed` says.
const FIO_RANDSEED: u64 = 0xb189_9bed;

/// The seeds fio gives one job, indexed as fio.h's `FIO_RAND_*_OFF` enum; only the ones
/// storlab draws from are named.
pub mod seed_index {
    /// Block sizes of reads (`bsrange_state[DDIR_READ]`).
    pub const BS_READ: usize = 0;
    /// Block sizes of writes (`bsrange_state[DDIR_WRITE]`).
    pub const BS_WRITE: usize = 1;
    /// Block sizes of trims (`bsrange_state[DDIR_TRIM]`).
    pub const BS_TRIM: usize = 2;
    /// The read/write mix (`rwmix_state`).
    pub const MIX: usize = 4;
    /// Random offsets (`random_state`).
    pub const BLOCK: usize = 6;
    /// Random-versus-sequential choice of `percentage_random` (`seq_rand_state`, both
    /// directions: fio seeds all of them from the read one).
    pub const SEQ_RAND_READ: usize = 10;
    /// The zone of a zoned distribution's offsets (`zone_state`, `FIO_RAND_ZONE_OFF`).
    pub const ZONE: usize = 16;
    /// Which requests fio's cmdprio family gives a priority (`prio_state`,
    /// `FIO_RAND_PRIO_CMDS`).
    pub const PRIO_CMDS: usize = 19;
    /// How many seeds fio derives (`FIO_RAND_NR_OFFS`).
    pub const COUNT: usize = 21;
}

/// The seeds of fio's thread `thread_number` (numbered from 1 over the whole run, clones
/// included) for `randseed` (init.c, `setup_random_seeds`; the offset seed as
/// `td_fill_rand_seeds_internal` overrides it when `randrepeat` is on).
pub fn job_seeds(randseed: u64, thread_number: u32, randrepeat: bool) -> [u64; seed_index::COUNT] {
    let thread = u64::from(thread_number);
    let mut seed = randseed;
    for _ in 0..SEED_SCRAMBLE_ROUNDS {
        seed = seed.wrapping_mul(SEED_SCRAMBLE);
    }
    let mut seeds = [0; seed_index::COUNT];
    for (index, slot) in seeds.iter_mut().enumerate() {
        *slot = seed.wrapping_mul(thread).wrapping_add(index as u64);
        seed = seed.wrapping_mul(SEED_SCRAMBLE);
    }
    if randrepeat {
        seeds[seed_index::BLOCK] = FIO_RANDSEED.wrapping_mul(thread);
    }
    seeds
}

/// The seeds of fio's thread `thread_number` for the job's `fio` keys: `randseed`'s
/// (`job_seeds`), the system's entropy with `randrepeat=0` and no `randseed`, or with
/// `allrandrepeat` every stream's fixed one, `FIO_RANDSEED` times the thread plus the stream's
/// index (init.c, `td_fill_rand_seeds`), the offsets' still `FIO_RANDSEED` times the thread
/// under `randrepeat`.
pub fn fio_job_seeds(fio: &storlab_job::FioRandom, thread_number: u32) -> [u64; seed_index::COUNT] {
    if fio.allrandrepeat {
        let thread = u64::from(thread_number);
        let mut seeds = [0; seed_index::COUNT];
        for (index, slot) in seeds.iter_mut().enumerate() {
            *slot = FIO_RANDSEED.wrapping_mul(thread).wrapping_add(index as u64);
        }
        if fio.randrepeat {
            seeds[seed_index::BLOCK] = FIO_RANDSEED.wrapping_mul(thread);
        }
        return seeds;
    }
    if fio.randrepeat || fio.randseed_given {
        job_seeds(fio.randseed, thread_number, fio.randrepeat)
    } else {
        entropy_seeds()
    }
}

/// fio's `init_random_seeds` with `randrepeat=0` and no `randseed`: seeds from the system's
/// entropy, so every run differs.
fn entropy_seeds() -> [u64; seed_index::COUNT] {
    use std::io::Read;
    let mut bytes = [0u8; seed_index::COUNT * 8];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        // No entropy device: the clock's nanoseconds still differ run to run.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        return job_seeds(now, 1, false);
    }
    let mut seeds = [0u64; seed_index::COUNT];
    for (seed, chunk) in seeds.iter_mut().zip(bytes.chunks_exact(8)) {
        *seed = u64::from_le_bytes(chunk.try_into().expect("8-byte chunk"));
    }
    seeds
}

/// One of fio's generators (`struct frand_state`): taus88 with 32-bit output, or taus258
/// (`random_generator=tausworthe64`, or a region of more than 2^32 blocks) with 64-bit output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FioRand {
    Taus88([u32; 3]),
    Taus258([u64; 5]),
}

/// Seeds below these make a Tausworthe component degenerate (L'Ecuyer's erratum, quoted in
/// lib/rand.c): fio adds the bound to such a seed.
const TAUS88_SEED_FLOORS: [u64; 3] = [1, 7, 15];
const TAUS258_SEED_FLOORS: [u64; 5] = [1, 7, 15, 33, 49];

/// fio's LCG multipliers for spreading one seed over the components (lib/rand.c, `LCG`,
/// `LCG64`).
const LCG32_MULTIPLIER: u32 = 69069;
const LCG64_MULTIPLIER: u64 = 6_906_969_069;

/// The LCG's starting value: fio writes `(2^31) + (2^17) + (2^7)`, which in C is XOR, not
/// powers: 29 + 19 + 5.
const LCG_START: u64 = (2 ^ 31) + (2 ^ 17) + (2 ^ 7);

/// 1 / (FRAND32_MAX + 1) and 1 / (FRAND64_MAX + 1), exact in a double (powers of two).
const TWO_POW_MINUS_32: f64 = 1.0 / 4_294_967_296.0;
const TWO_POW_MINUS_64: f64 = TWO_POW_MINUS_32 * TWO_POW_MINUS_32;

/// Draws fio throws away after seeding (lib/rand.c: `cranks = 6`).
const SEED_CRANKS: u32 = 6;

fn floor_seed(value: u64, floor: u64) -> u64 {
    if value < floor {
        value + floor
    } else {
        value
    }
}

impl FioRand {
    /// fio's `init_rand_seed(state, seed, use64)`: taus88 takes the low 32 bits of the seed.
    pub fn new(seed: u64, use64: bool) -> Self {
        if use64 {
            let mut state = [0u64; 5];
            let mut previous = LCG_START;
            for (slot, floor) in state.iter_mut().zip(TAUS258_SEED_FLOORS) {
                *slot = floor_seed(previous.wrapping_mul(LCG64_MULTIPLIER) ^ seed, floor);
                previous = *slot;
            }
            let mut rand = FioRand::Taus258(state);
            (0..SEED_CRANKS).for_each(|_| {
                rand.next();
            });
            rand
        } else {
            let seed = seed as u32;
            let mut state = [0u32; 3];
            let mut previous = LCG_START as u32;
            for (slot, floor) in state.iter_mut().zip(TAUS88_SEED_FLOORS) {
                *slot = floor_seed(
                    u64::from(previous.wrapping_mul(LCG32_MULTIPLIER) ^ seed),
                    floor,
                ) as u32;
                previous = *slot;
            }
            let mut rand = FioRand::Taus88(state);
            (0..SEED_CRANKS).for_each(|_| {
                rand.next();
            });
            rand
        }
    }

    /// The largest value `next` returns (fio's `rand_max`).
    pub fn max(&self) -> u64 {
        match self {
            FioRand::Taus88(_) => u64::from(u32::MAX),
            FioRand::Taus258(_) => u64::MAX,
        }
    }

    /// fio's `__rand`: the next raw value.
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        match self {
            FioRand::Taus88(s) => {
                // lib/rand.h, `TAUSWORTHE(s, a, b, c, d)`: ((s & c) << d) ^ (((s << a) ^ s) >> b).
                fn step(s: u32, a: u32, b: u32, c: u32, d: u32) -> u32 {
                    ((s & c) << d) ^ (((s << a) ^ s) >> b)
                }
                s[0] = step(s[0], 13, 19, 0xffff_fffe, 12);
                s[1] = step(s[1], 2, 25, 0xffff_fff8, 4);
                s[2] = step(s[2], 3, 11, 0xffff_fff0, 17);
                u64::from(s[0] ^ s[1] ^ s[2])
            }
            FioRand::Taus258(s) => {
                // lib/rand.h, `__rand64`: (shift-xor, right shift, mask, left shift) per
                // component.
                const STEPS: [(u32, u32, u64, u32); 5] = [
                    (1, 53, 0xffff_ffff_ffff_fffe, 10),
                    (24, 50, 0xffff_ffff_ffff_fe00, 5),
                    (3, 23, 0xffff_ffff_ffff_f000, 29),
                    (5, 24, 0xffff_ffff_fffe_0000, 23),
                    (3, 33, 0xffff_ffff_ff80_0000, 8),
                ];
                let mut out = 0;
                for (value, (a, b, mask, d)) in s.iter_mut().zip(STEPS) {
                    let xval = ((*value << a) ^ *value) >> b;
                    *value = ((*value & mask) << d) ^ xval;
                    out ^= *value;
                }
                out
            }
        }
    }

    /// The next value scaled into `0..bound` as fio scales offsets and sizes:
    /// `bound * (r / (rand_max + 1.0))` in doubles, truncated. `rand_max + 1` is a power of
    /// two, so dividing by it is multiplying by its exact reciprocal: the same double, without
    /// a division on every I/O.
    #[inline]
    pub fn scaled(&mut self, bound: u64) -> u64 {
        let fraction = match self {
            // A 32-bit draw converts to a double directly (no unsigned 64-bit fix-up).
            FioRand::Taus88(_) => f64::from(self.next() as u32) * TWO_POW_MINUS_32,
            FioRand::Taus258(_) => self.next() as f64 * TWO_POW_MINUS_64,
        };
        // Below 2^63 the signed conversions give the same doubles and integers as the
        // unsigned ones, without their fix-up steps.
        match i64::try_from(bound) {
            Ok(bound) => (bound as f64 * fraction) as i64 as u64,
            Err(_) => (bound as f64 * fraction) as u64,
        }
    }

    /// fio's `rand_between(state, start, end)`, both ends included.
    #[inline]
    pub fn between(&mut self, start: u64, end: u64) -> u64 {
        let span = end - start;
        match self {
            FioRand::Taus88(_) => {
                // rand32_upto: the span + 1 in 32 bits, the product cast through `int`.
                let r = self.next() as f64;
                let end = (span as u32).wrapping_add(1);
                start
                    + u64::from(
                        (f64::from(end) * (r / (u64::from(u32::MAX) as f64 + 1.0))) as i32 as u32,
                    )
            }
            FioRand::Taus258(_) => {
                let r = self.next() as f64;
                start + ((span.wrapping_add(1)) as f64 * (r / (u64::MAX as f64 + 1.0))) as u64
            }
        }
    }

    /// The state as fio's verify state file stores it (verify.c, `__fill_thread_state`):
    /// the words of the generator in order.
    pub fn words(&self) -> Vec<u64> {
        match self {
            FioRand::Taus88(s) => s.iter().map(|w| u64::from(*w)).collect(),
            FioRand::Taus258(s) => s.to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fio --name=x --filename=F --size=64k --rw=randread --bs=4k --ioengine=null
    /// --debug=random` (fio 3.33, thread 1, randseed unset) prints these `off rand` values: the
    /// raw draws of the offset stream.
    #[test]
    fn scaling_by_the_reciprocal_is_fios_division() {
        let mut a = FioRand::new(12345, false);
        let mut b = a.clone();
        for bound in [1u64, 7, 256, 262_144, 1 << 31, u64::from(u32::MAX)] {
            for _ in 0..1000 {
                let by_division = (bound as f64 * (b.next() as f64 / 4_294_967_296.0)) as u64;
                assert_eq!(a.scaled(bound), by_division);
            }
        }
        let mut a = FioRand::new(12345, true);
        let mut b = a.clone();
        for _ in 0..1000 {
            let by_division = (1e12 * (b.next() as f64 / (u64::MAX as f64 + 1.0))) as u64;
            assert_eq!(a.scaled(1_000_000_000_000), by_division);
        }
    }

    #[test]
    fn taus88_offset_stream_of_fios_first_thread() {
        let seeds = job_seeds(FIO_DEFAULT_RANDSEED, 1, true);
        let mut rand = FioRand::new(seeds[seed_index::BLOCK], false);
        let drawn: Vec<u64> = (0..6).map(|_| rand.next()).collect();
        assert_eq!(
            drawn,
            [259043585, 3179521932, 3621444214, 2018697059, 1726199243, 3608323581]
        );
    }
}
