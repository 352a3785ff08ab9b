//! Where a job's offsets go: random distributions, fio's random generators, and `rw`'s modifier.

use serde::{Deserialize, Serialize};

/// Millionths: the unit fractional settings are held in (`zipf:1.2` is 1 200 000), so that a job
/// stays comparable and hashable.
pub const MICROS_PER_UNIT: u64 = 1_000_000;

/// Where random offsets fall (fio's `random_distribution`). Fractions are in millionths.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum RandomDistribution {
    /// Uniform over the region (fio's default), with fio's random map unless `norandommap`.
    #[default]
    Random,
    /// `zipf:THETA[:CENTER]`: a few blocks are hot, by fio's Zipf generator (lib/zipf.c).
    Zipf {
        theta_micros: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        center_micros: Option<u64>,
    },
    /// `pareto:H[:CENTER]`: fio's Pareto generator (lib/zipf.c), 0 < H < 1.
    Pareto {
        h_micros: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        center_micros: Option<u64>,
    },
    /// `normal:DEV[:CENTER]`: fio's Gaussian generator (lib/gauss.c), DEV a percentage of the
    /// region (0 ≤ DEV < 100).
    Normal {
        dev_percent_micros: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        center_micros: Option<u64>,
    },
    /// `zoned:ACCESS/SIZE:...`: ACCESS percent of the I/O goes uniformly to the next SIZE percent
    /// of the region.
    Zoned { zones: Vec<ZoneShare> },
    /// `zoned_abs:ACCESS/SIZE:...`: as `zoned`, the zones' sizes in bytes.
    ZonedAbs { zones: Vec<ZoneShare> },
}

/// How fio seeds a job's random streams (init.c, `setup_random_seeds`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FioRandom {
    /// fio's `randseed` (default 0x89).
    pub randseed: u64,
    /// fio's `randrepeat` (default on): the same sequence every run. Off and without
    /// `randseed`, the seeds come from the operating system's entropy, as fio's do.
    pub randrepeat: bool,
    /// `randseed` was given (then `randrepeat=0` still repeats from it, as in fio).
    pub randseed_given: bool,
    /// fio's `random_generator=tausworthe64`: 64-bit draws.
    pub tausworthe64: bool,
    /// fio's `random_generator=lfsr`: random offsets from fio's LFSR (lib/lfsr.c), without
    /// a random map.
    #[serde(default)]
    pub lfsr: bool,
    /// fio's `allrandrepeat`: every stream seeded from `FIO_RANDSEED` and the thread number,
    /// whatever `randseed` says.
    #[serde(default)]
    pub allrandrepeat: bool,
    /// The job's `rw` is a random mode (fio's `td_random`), whatever `percentage_random`
    /// says: a sequential offset past the file's end falls back to a random block (io_u.c,
    /// `get_next_block`).
    #[serde(default)]
    pub rand_mode: bool,
}

impl FioRandom {
    /// Whether a loop (and a verify pass) re-seeds the streams. fio's `fixup_options` turns
    /// `randrepeat` off when `randseed` is given (init.c: "If randseed is set, that overrides
    /// randrepeat"), after `add_job` has seeded the job's first thread: no thread of such a
    /// job re-seeds, its loops go on in the streams.
    pub fn reseeds_each_loop(&self) -> bool {
        self.randrepeat && !self.randseed_given
    }

    /// How fio seeds a `numjobs` clone: copied from its job after `fixup_options`, so with
    /// `randrepeat` off when `randseed` is given (its offset stream then takes `randseed`'s
    /// seed, not `FIO_RANDSEED` × its thread number as the job's first thread does).
    pub fn for_clone(&self) -> FioRandom {
        FioRandom {
            randrepeat: self.reseeds_each_loop(),
            ..*self
        }
    }
}

impl RandomDistribution {
    /// Uniform: the default.
    pub fn is_random(&self) -> bool {
        *self == RandomDistribution::Random
    }
}

/// fio's `rw=MODE:N` offset modifier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum RwModifier {
    /// No modifier.
    #[default]
    None,
    /// `rw=write:4k`: a hole of this many bytes after every sequential I/O.
    SkipBytes(u64),
    /// `rw=read:-8k`: fio's backward holes (a negative `ddir_seq_add`): each I/O starts this
    /// many bytes before the end of the previous one, wrapping back to the region's end
    /// (io_u.c, `get_next_seq_offset`).
    BackBytes(u64),
    /// `rw=randread:8`: a new random offset every this many I/Os, sequential ones between.
    RandomEveryIos(u32),
    /// `rw=randread:8` with fio's `rw_sequencer=identical`: a new random offset every this
    /// many I/Os, the last I/O's offset again between.
    RepeatEveryIos(u32),
}

impl RwModifier {
    pub(super) fn is_none(&self) -> bool {
        *self == RwModifier::None
    }

    /// `rw=randMODE:N`'s N (either sequencer): I/Os per new random offset.
    pub fn random_every_ios(&self) -> Option<u32> {
        match *self {
            RwModifier::RandomEveryIos(n) | RwModifier::RepeatEveryIos(n) => Some(n),
            _ => None,
        }
    }
}

/// One zone of a `zoned`/`zoned_abs` distribution: the share of I/Os it gets and its size (a
/// percentage of the region for `zoned`, bytes for `zoned_abs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneShare {
    pub access_percent: u8,
    pub size: u64,
}
