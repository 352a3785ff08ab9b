//! `run --repeat N`: a job set run N times over, each repeat a copy of every job that knows
//! which repeat it is, so the report can give each figure's mean, spread and interval
//! (docs/decisions/0032-repeats.md).

use crate::preset::SweepPoint;
use crate::{JobSet, JobSpec};
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
            let mut copy = repeat_of(job, round, repeats);
            if round > 0 && position == 0 {
                copy.stonewall = true;
            }
            jobs.push(copy);
        }
    }
    JobSet { jobs }
}

/// A sweep's points with each point `repeats` times in a row (its repeats follow one another
/// before the next point, so a point's repeats meet the same state of the target as far as the
/// target keeps it), seeded as [`repeat_set`]'s. One repeat is the points as they are.
pub fn repeat_points(points: Vec<SweepPoint>, repeats: u32) -> Vec<SweepPoint> {
    if repeats <= 1 {
        return points;
    }
    points
        .iter()
        .flat_map(|point| {
            (0..repeats).map(move |round| SweepPoint {
                coords: point.coords.clone(),
                job: repeat_of(&point.job, round, repeats),
            })
        })
        .collect()
}

/// Repeat `round` (from 0) of `repeats` of `job`: marked, with its seeds moved on by `round`.
fn repeat_of(job: &JobSpec, round: u32, repeats: u32) -> JobSpec {
    let mut copy = job.clone();
    copy.repeat = Some(Repeat {
        index: round + 1,
        of: repeats,
    });
    copy.seed = job.seed.wrapping_add(u64::from(round));
    if let Some(fio) = &mut copy.fio_random {
        fio.randseed = fio.randseed.wrapping_add(u64::from(round));
    }
    copy
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
    fn a_points_repeats_follow_each_other() {
        let points: Vec<SweepPoint> = set()
            .jobs
            .into_iter()
            .map(|job| SweepPoint {
                coords: vec![("job".into(), job.name.clone())],
                job,
            })
            .collect();
        let repeated = repeat_points(points, 2);
        let order: Vec<(&str, u32, u64)> = repeated
            .iter()
            .map(|p| (p.job.name.as_str(), p.job.repeat.unwrap().index, p.job.seed))
            .collect();
        let default = crate::DEFAULT_SEED;
        assert_eq!(
            order,
            [
                ("a", 1, 10),
                ("a", 2, 11),
                ("b", 1, default),
                ("b", 2, default + 1)
            ]
        );
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
