//! Queue-depth distributions as fio keeps them (`io_u_mark_depth`, `io_u_mark_submit`,
//! `io_u_mark_complete` in fio's io_u.c): how many I/Os were in flight when each was queued,
//! how many went to the device per submit call, and how many came back per reap.

use serde::{Deserialize, Serialize};

/// Buckets of every distribution (fio's `FIO_IO_U_MAP_NR`).
pub const DEPTH_BUCKETS: usize = 7;
/// Lowest depth of each `level` bucket: 1, 2-3, 4-7, 8-15, 16-31, 32-63, 64 and more.
const LEVEL_FLOORS: [u64; DEPTH_BUCKETS] = [1, 2, 4, 8, 16, 32, 64];
/// Highest batch of each `submit`/`complete` bucket: 0, 1-4, 5-8, 9-16, 17-32, 33-64; the
/// last holds more than 64.
const BATCH_CEILINGS: [u64; DEPTH_BUCKETS - 1] = [0, 4, 8, 16, 32, 64];

/// Counts of one worker (or of merged workers) over the measured window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepthCounts {
    /// I/Os by the number in flight (themselves included) when each was queued.
    pub level: [u64; DEPTH_BUCKETS],
    /// Submit calls by how many I/Os each passed to the engine.
    pub submit: [u64; DEPTH_BUCKETS],
    /// Reaps by how many completions each returned.
    pub complete: [u64; DEPTH_BUCKETS],
}

impl DepthCounts {
    /// An I/O queued with `in_flight` I/Os outstanding, itself included.
    pub fn mark_depth(&mut self, in_flight: u64) {
        let bucket = LEVEL_FLOORS
            .iter()
            .rposition(|&floor| in_flight >= floor)
            .unwrap_or(0);
        self.level[bucket] += 1;
    }

    /// One submit call that passed `ios` I/Os to the engine.
    pub fn mark_submit(&mut self, ios: u64) {
        self.submit[batch_bucket(ios)] += 1;
    }

    /// One reap that returned `ios` completions.
    pub fn mark_complete(&mut self, ios: u64) {
        self.complete[batch_bucket(ios)] += 1;
    }

    pub fn merge(&mut self, other: &DepthCounts) {
        for (mine, theirs) in [
            (&mut self.level, &other.level),
            (&mut self.submit, &other.submit),
            (&mut self.complete, &other.complete),
        ] {
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
    }

    /// Nothing was counted (a run from before these were kept, or one with no I/O).
    pub fn is_empty(&self) -> bool {
        *self == DepthCounts::default()
    }
}

fn batch_bucket(ios: u64) -> usize {
    BATCH_CEILINGS
        .iter()
        .position(|&ceiling| ios <= ceiling)
        .unwrap_or(DEPTH_BUCKETS - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_match_fios_switches() {
        let mut counts = DepthCounts::default();
        for depth in [1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 200] {
            counts.mark_depth(depth);
        }
        assert_eq!(counts.level, [1, 2, 2, 2, 2, 2, 2]);
        for batch in [0, 1, 4, 5, 8, 9, 16, 17, 32, 33, 64, 65] {
            counts.mark_submit(batch);
        }
        assert_eq!(counts.submit, [1, 2, 2, 2, 2, 2, 1]);
    }
}
