//! `run --repeat N`: a job set run N times over, each repeat a copy of every job that knows
//! which repeat it is, so the report can give each figure's mean, spread and interval
//! (docs/decisions/0032-repeats.md).

use crate::JobSet;
use serde::{Deserialize, Serialize};

/// Which repeat of how many a job is: `index` counts from 1 to `of`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repeat {
    pub index: u32,
    pub of: u32,
}

/// `set` run `repeats` times: the whole set once, then again, each copy after the one before
/// has ended (the first job of every later copy is a `stonewall`), as a reviewer runs a test
/// several times. Repeat `k` (from 0) runs with `seed + k` and, for a job on fio's random
/// streams, `randseed + k`: a simulated stack is deterministic, so the same seed would give the
/// same figures, and what spreads them is what a different draw of offsets and data meets on
/// the target (and what the earlier repeats left on it). One repeat is the set as it is.
pub fn repeat_set(set: JobSet, repeats: u32) -> JobSet {
    if repeats <= 1 {
        return set;
    }
    let mut jobs = Vec::with_capacity(set.jobs.len().saturating_mul(repeats as usize));
    for round in 0..repeats {
        for (position, job) in set.jobs.iter().enumerate() {
            let mut copy = job.clone();
            copy.repeat = Some(Repeat {
                index: round + 1,
                of: repeats,
            });
            copy.seed = job.seed.wrapping_add(u64::from(round));
            if let Some(fio) = &mut copy.fio_random {
                fio.randseed = fio.randseed.wrapping_add(u64::from(round));
            }
            if round > 0 && position == 0 {
                copy.stonewall = true;
            }
            jobs.push(copy);
        }
    }
    JobSet { jobs }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EngineKind, JobSpec, Target};

    fn set() -> JobSet {
        let mut first = JobSpec::new("a", EngineKind::Null, Target::None);
        first.seed = 10;
        let second = JobSpec::new("b", EngineKind::Null, Target::None);
        JobSet {
            jobs: vec![first, second],
        }
    }

    #[test]
    fn one_repeat_is_the_set_unchanged() {
        assert_eq!(repeat_set(set(), 1), set());
    }

    #[test]
    fn each_repeat_is_the_whole_set_in_order_with_its_own_seed() {
        let repeated = repeat_set(set(), 3);
        let names: Vec<&str> = repeated.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "a", "b", "a", "b"]);
        let seeds: Vec<u64> = repeated.jobs.iter().step_by(2).map(|j| j.seed).collect();
        assert_eq!(seeds, [10, 11, 12]);
        let indexes: Vec<u32> = repeated
            .jobs
            .iter()
            .map(|j| j.repeat.map_or(0, |r| r.index))
            .collect();
        assert_eq!(indexes, [1, 1, 2, 2, 3, 3]);
        assert!(repeated.jobs.iter().all(|j| j.repeat.unwrap().of == 3));
        // A later repeat starts once the one before ended; within a repeat, groups as written.
        let walls: Vec<bool> = repeated.jobs.iter().map(|j| j.stonewall).collect();
        assert_eq!(walls, [false, false, true, false, true, false]);
    }
}
