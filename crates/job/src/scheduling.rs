//! fio's keys that place a job in time among the others (`startdelay`, `exitall`, `exit_what`,
//! `exitall_on_error`) and the I/O priority its thread gives the kernel's I/O scheduler (`prio`,
//! `prioclass`).

use serde::{Deserialize, Serialize};

/// fio's `startdelay=TIME` or `startdelay=LOW-HIGH`: the job starts this long after the run
/// did; a range is drawn once per job (fio's init.c `rand_between(delay_state, low, high)`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartDelay {
    pub low_ns: u64,
    /// Equal to `low_ns` unless a range was given.
    pub high_ns: u64,
}

impl StartDelay {
    pub fn is_unset(&self) -> bool {
        self.high_ns == 0
    }

    /// The delay of a job seeded with `seed`: the fixed delay, or a draw from the range that
    /// is the same for the same seed (fio's `randrepeat=1` makes its draw repeat too, from
    /// fio's own random stream, which storlab does not reproduce).
    pub fn draw_ns(&self, seed: u64) -> u64 {
        if self.high_ns <= self.low_ns {
            return self.low_ns;
        }
        let span = self.high_ns - self.low_ns;
        // One step of splitmix64 (Steele, Lea, Flood 2014) turns the job's seed into a draw;
        // the constant keeps it apart from the seed's other uses.
        const START_DELAY_STREAM: u64 = 0x5354_4152_5444_4c59; // "STARTDLY"
        let mut z = (seed ^ START_DELAY_STREAM).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        match span.checked_add(1) {
            Some(choices) => self.low_ns + z % choices,
            None => self.low_ns.saturating_add(z),
        }
    }
}

/// Which jobs fio's `exitall` stops when this job ends (`exit_what`, fio 3.33's
/// `fio_terminate_threads`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExitWhat {
    /// The jobs of the same reporting group (`groupid`), fio's default.
    #[default]
    Group,
    /// The jobs of the same stonewall group: every job running beside it.
    Stonewall,
    /// Every job, running or still to come.
    All,
}

impl ExitWhat {
    pub fn as_str(self) -> &'static str {
        match self {
            ExitWhat::Group => "group",
            ExitWhat::Stonewall => "stonewall",
            ExitWhat::All => "all",
        }
    }
}

/// What a job's end does to the other jobs (fio's `exitall`, `exit_what`, `exitall_on_error`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitAll {
    /// `exitall`: when the job ends, the jobs `what` names stop as if their runtime had ended.
    pub on_end: bool,
    /// `exitall_on_error`: when the job fails, every job stops.
    pub on_error: bool,
    pub what: ExitWhat,
}

impl ExitAll {
    pub fn is_unset(&self) -> bool {
        !self.on_end && !self.on_error
    }
}

/// linux/ioprio.h's classes (`IOPRIO_CLASS_*`): 0 none, 1 real-time, 2 best-effort, 3 idle.
pub const IOPRIO_CLASS_MAX: u8 = 3;
/// linux/ioprio.h: levels 0 (highest) to 7 (lowest) within the real-time and best-effort classes.
pub const IOPRIO_LEVEL_MAX: u8 = 7;
/// linux/ioprio.h `IOPRIO_CLASS_BE`: the class fio gives `prio` when `prioclass` is not set.
const IOPRIO_CLASS_BEST_EFFORT: u8 = 2;
/// linux/ioprio.h `IOPRIO_CLASS_SHIFT`: a priority value is `class << 13 | level`.
const IOPRIO_CLASS_SHIFT: u16 = 13;

/// fio's `prio` and `prioclass`: the priority the job's threads set with `ioprio_set`, which
/// every I/O they issue carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoPriority {
    /// `prioclass` as given (0 means "none", which fio and the kernel take as best-effort).
    pub class: u8,
    /// `prio` (0 unless given).
    pub level: u8,
}

impl IoPriority {
    /// The value `ioprio_set` takes (fio's os-linux.h `ioprio_value`: class 0 becomes
    /// best-effort).
    pub fn value(&self) -> u16 {
        let class = if self.class == 0 {
            IOPRIO_CLASS_BEST_EFFORT
        } else {
            self.class
        };
        (u16::from(class) << IOPRIO_CLASS_SHIFT) | u16::from(self.level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_delay_is_itself_and_a_range_stays_inside() {
        let fixed = StartDelay {
            low_ns: 5,
            high_ns: 5,
        };
        assert_eq!(fixed.draw_ns(1), 5);
        let range = StartDelay {
            low_ns: 1_000,
            high_ns: 2_000,
        };
        let draws: Vec<u64> = (0..200).map(|seed| range.draw_ns(seed)).collect();
        assert!(draws.iter().all(|d| (1_000..=2_000).contains(d)));
        // Different seeds spread over the range; the same seed repeats.
        assert!(draws.iter().any(|&d| d < 1_500) && draws.iter().any(|&d| d > 1_500));
        assert_eq!(range.draw_ns(7), range.draw_ns(7));
    }

    #[test]
    fn priority_values_are_fios() {
        // fio's ioprio_value: no class is best-effort.
        assert_eq!(IoPriority { class: 0, level: 4 }.value(), 0x4004);
        assert_eq!(IoPriority { class: 2, level: 5 }.value(), 0x4005);
        assert_eq!(IoPriority { class: 3, level: 0 }.value(), 0x6000);
        assert_eq!(IoPriority { class: 1, level: 7 }.value(), 0x2007);
    }

    #[test]
    fn job_files_set_them_as_fio_reads_them() {
        let set = crate::fio::parse_fio_str(
            "[a]\nsize=1M\nstartdelay=500ms:2\nprio=3\nexitall\n\
             [b]\nsize=1M\nprioclass=3\nexitall_on_error\nexit_what=all\nstartdelay=2\n",
            "t.fio",
            None,
        )
        .unwrap();
        let (a, b) = (&set.jobs[0], &set.jobs[1]);
        assert_eq!(
            a.start_delay,
            StartDelay {
                low_ns: 500_000_000,
                high_ns: 2_000_000_000
            }
        );
        assert_eq!(a.io_priority.map(|p| p.value()), Some(0x4003));
        assert_eq!(
            (a.exit_all.on_end, a.exit_all.what),
            (true, ExitWhat::Group)
        );
        assert_eq!(b.start_delay.draw_ns(b.seed), 2_000_000_000);
        assert_eq!(b.io_priority, Some(IoPriority { class: 3, level: 0 }));
        assert!(b.exit_all.on_error && !b.exit_all.on_end);
        assert_eq!(b.exit_all.what, ExitWhat::All);
    }
}
