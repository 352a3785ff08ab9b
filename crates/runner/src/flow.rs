//! fio's `flow` (fio 3.33, flow.c): jobs that share a `flow_id` issue I/O in the ratio of their
//! `flow` weights. Each member counts the I/Os it issued; the flow counts every member's. A
//! member whose share of the flow's I/Os is above its share of the flow's weight is held back
//! (`flow_threshold_exceeded`): it waits `flow_sleep`, its queue drained first, or looks again
//! at once. A member that ends takes its I/Os and weight out of the flow (`flow_put`), so the
//! others go on in the ratio of theirs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use storlab_job::FlowSpec;

/// One flow's shared counters (fio's `struct fio_flow`).
#[derive(Debug)]
pub struct Flow {
    /// I/Os issued by the flow's members, plus one: fio starts the count at 1 so that the first
    /// share (`0 / 1`) is defined.
    issued_ios: AtomicU64,
    /// The sum of the members' weights.
    total_weight: AtomicU64,
}

impl Flow {
    fn new() -> Self {
        Flow {
            issued_ios: AtomicU64::new(1),
            total_weight: AtomicU64::new(0),
        }
    }
}

/// The flows of the jobs running together, by `flow_id`.
#[derive(Debug, Default)]
pub struct Flows(HashMap<u32, Arc<Flow>>);

impl Flows {
    /// A member of `spec`'s flow (fio's `flow_init_job`: its weight joins the flow's total).
    pub fn join(&mut self, spec: FlowSpec) -> FlowMember {
        let flow = self
            .0
            .entry(spec.id)
            .or_insert_with(|| Arc::new(Flow::new()));
        flow.total_weight
            .fetch_add(u64::from(spec.weight), Ordering::Relaxed);
        FlowMember {
            flow: Arc::clone(flow),
            weight: u64::from(spec.weight),
            issued_ios: 0,
            sleep_ns: spec.sleep_ns,
            left: false,
        }
    }
}

/// One worker's part of a flow.
#[derive(Debug)]
pub struct FlowMember {
    flow: Arc<Flow>,
    weight: u64,
    issued_ios: u64,
    /// `flow_sleep`: how long to wait when ahead (0: look again at once).
    pub sleep_ns: u64,
    left: bool,
}

impl FlowMember {
    /// Whether this member is ahead of its share: its I/Os over the flow's are more than its
    /// weight over the flow's total (fio compares the two ratios as doubles; the products
    /// here are the same comparison without rounding).
    pub fn ahead(&self) -> bool {
        let flow_ios = self.flow.issued_ios.load(Ordering::Relaxed);
        let total_weight = self.flow.total_weight.load(Ordering::Relaxed);
        u128::from(self.issued_ios) * u128::from(total_weight)
            > u128::from(self.weight) * u128::from(flow_ios)
    }

    /// Counts one I/O this member issues.
    pub fn count_io(&mut self) {
        self.flow.issued_ios.fetch_add(1, Ordering::Relaxed);
        self.issued_ios += 1;
    }

    /// Takes this member's I/Os and weight out of the flow (fio's `flow_put` at job exit), so
    /// the members still running are not held back by one that stopped.
    pub fn leave(&mut self) {
        if std::mem::replace(&mut self.left, true) {
            return;
        }
        self.flow
            .issued_ios
            .fetch_sub(self.issued_ios, Ordering::Relaxed);
        self.flow
            .total_weight
            .fetch_sub(self.weight, Ordering::Relaxed);
    }
}

impl Drop for FlowMember {
    fn drop(&mut self) {
        self.leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: u32, weight: u32) -> FlowSpec {
        FlowSpec {
            id,
            weight,
            sleep_ns: 0,
        }
    }

    /// Members that issue whenever they are not ahead end in the ratio of their weights.
    #[test]
    fn members_issue_in_the_ratio_of_their_weights() {
        let mut flows = Flows::default();
        let mut members = [
            flows.join(spec(1, 1)),
            flows.join(spec(1, 5)),
            flows.join(spec(1, 10)),
        ];
        let mut issued = [0u64; 3];
        for _ in 0..16_000 {
            for (member, count) in members.iter_mut().zip(issued.iter_mut()) {
                if !member.ahead() {
                    member.count_io();
                    *count += 1;
                }
            }
        }
        // Within a few I/Os of the weights (the flow's count starts at 1, as fio's).
        assert!(issued[1].abs_diff(5 * issued[0]) <= 5, "{issued:?}");
        assert!(issued[2].abs_diff(10 * issued[0]) <= 10, "{issued:?}");
        assert_eq!(
            issued[2], 16_000,
            "the heaviest is never held back here: {issued:?}"
        );
    }

    /// Another flow_id is another flow; a member that leaves no longer holds the others back.
    #[test]
    fn flows_are_separate_and_a_member_that_leaves_frees_the_rest() {
        let mut flows = Flows::default();
        let mut a = flows.join(spec(1, 1));
        let mut b = flows.join(spec(1, 3));
        let mut other = flows.join(spec(2, 1));
        for _ in 0..10 {
            other.count_io();
        }
        assert!(!a.ahead() && !b.ahead());
        a.count_io();
        assert!(a.ahead(), "1 of 2 I/Os is more than a quarter");
        b.leave();
        assert!(!a.ahead(), "alone in the flow, a has all the weight");
        a.count_io();
        assert!(!a.ahead());
    }
}
