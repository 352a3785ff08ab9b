//! fio's `flow` (fio 3.33, flow.c): jobs that share a `flow_id` issue I/O in the ratio of their
//! `flow` weights. Each member counts the I/Os it issued; the flow counts every member's. A
//! member whose share of the flow's I/Os is above its share of the flow's weight is held back
//! (`flow_threshold_exceeded`): it waits `flow_sleep`, its queue drained first, or looks again
//! at once. A member that ends takes its I/Os and weight out of the flow (`flow_put`), so the
//! others go on in the ratio of theirs — not at once: fio's parent process does it when it
//! reaps the ended job (backend.c, `reap_threads`, polled every 10 ms), and until then the
//! ended member still holds the others to their shares. Jobs that end together (the same
//! `runtime`) therefore end in the ratio, whichever thread's clock ran out first (fio's
//! t0011: 1000 and ~8000 IOPS, not a burst of the heavier one after the lighter one ended).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use storlab_job::FlowSpec;

/// How long after a member ends its I/Os and weight leave the flow: fio's parent reaps ended
/// jobs between sleeps of 10 ms (backend.c, `run_threads`: `do_usleep(10000)`).
pub const FIO_REAP_POLL: Duration = Duration::from_millis(10);

/// No departure pending.
const NONE_PENDING: u64 = u64::MAX;

/// One flow's shared counters (fio's `struct fio_flow`).
#[derive(Debug)]
pub struct Flow {
    /// I/Os issued by the flow's members, plus one: fio starts the count at 1 so that the first
    /// share (`0 / 1`) is defined.
    issued_ios: AtomicU64,
    /// The sum of the members' weights.
    total_weight: AtomicU64,
    /// Members that ended and are not yet taken out: (when, as ns since `created`, their I/Os,
    /// their weight).
    departures: Mutex<Vec<(u64, u64, u64)>>,
    /// The earliest pending departure's time (ns since `created`), [`NONE_PENDING`] if none:
    /// members look at it before each share, and lock `departures` only once one is due.
    next_departure_ns: AtomicU64,
    created: Instant,
}

impl Flow {
    fn new() -> Self {
        Flow {
            issued_ios: AtomicU64::new(1),
            total_weight: AtomicU64::new(0),
            departures: Mutex::new(Vec::new()),
            next_departure_ns: AtomicU64::new(NONE_PENDING),
            created: Instant::now(),
        }
    }

    fn elapsed_ns(&self) -> u64 {
        u64::try_from(self.created.elapsed().as_nanos()).unwrap_or(u64::MAX - 1)
    }

    /// Takes out the ended members whose reap time has come.
    fn reap_due(&self) {
        // The clock is read only while a departure is pending: members ask before every I/O.
        let next_ns = self.next_departure_ns.load(Ordering::Acquire);
        if next_ns == NONE_PENDING || next_ns > self.elapsed_ns() {
            return;
        }
        let mut departures = self.departures.lock().unwrap_or_else(|e| e.into_inner());
        let now_ns = self.elapsed_ns();
        departures.retain(|&(at_ns, ios, weight)| {
            if at_ns > now_ns {
                return true;
            }
            self.issued_ios.fetch_sub(ios, Ordering::AcqRel);
            self.total_weight.fetch_sub(weight, Ordering::AcqRel);
            false
        });
        let next = departures.iter().map(|d| d.0).min().unwrap_or(NONE_PENDING);
        self.next_departure_ns.store(next, Ordering::Release);
    }

    /// A member with `ios` issued and `weight` ended: it leaves `delay` later.
    fn depart(&self, ios: u64, weight: u64, delay: Duration) {
        let at_ns = self
            .elapsed_ns()
            .saturating_add(u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX));
        let mut departures = self.departures.lock().unwrap_or_else(|e| e.into_inner());
        departures.push((at_ns.min(NONE_PENDING - 1), ios, weight));
        let next = departures.iter().map(|d| d.0).min().unwrap_or(NONE_PENDING);
        self.next_departure_ns.store(next, Ordering::Release);
    }
}

/// The flows of the jobs running together, by `flow_id`.
#[derive(Debug)]
pub struct Flows {
    flows: HashMap<u32, Arc<Flow>>,
    reap_delay: Duration,
}

impl Default for Flows {
    fn default() -> Self {
        Flows::with_reap_delay(FIO_REAP_POLL)
    }
}

impl Flows {
    /// Flows whose ended members leave `reap_delay` after they end.
    pub fn with_reap_delay(reap_delay: Duration) -> Self {
        Flows {
            flows: HashMap::new(),
            reap_delay,
        }
    }

    /// A member of `spec`'s flow (fio's `flow_init_job`: its weight joins the flow's total).
    /// `virtual_clock`: the member runs on a simulated target's clock, where a wait of wall
    /// time would make the run depend on the machine: it leaves the flow as it ends.
    pub fn join(&mut self, spec: FlowSpec, virtual_clock: bool) -> FlowMember {
        let reap_delay = if virtual_clock {
            Duration::ZERO
        } else {
            self.reap_delay
        };
        let flow = self
            .flows
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
            reap_delay,
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
    /// How long after it ends this member leaves the flow ([`FIO_REAP_POLL`], or none on a
    /// simulated target's clock).
    reap_delay: Duration,
}

impl FlowMember {
    /// Whether this member is ahead of its share: its I/Os over the flow's are more than its
    /// weight over the flow's total (fio compares the two ratios as doubles; the products
    /// here are the same comparison without rounding). Ended members due to be reaped leave
    /// first.
    pub fn ahead(&self) -> bool {
        self.flow.reap_due();
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

    /// This member has ended: its I/Os and weight leave the flow once fio's parent would have
    /// reaped it ([`FIO_REAP_POLL`]), so the members still running are then no longer held
    /// back by one that stopped.
    pub fn leave(&mut self) {
        if std::mem::replace(&mut self.left, true) {
            return;
        }
        self.flow
            .depart(self.issued_ios, self.weight, self.reap_delay);
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

    /// A light member (weight 1) that ended after one I/O, and a heavy one (weight 8) that
    /// issued until it was ahead of its share; `virtual_clock` as `Flows::join` takes it.
    fn heavy_after_light_ended(flows: &mut Flows, virtual_clock: bool) -> FlowMember {
        let mut light = flows.join(spec(1, 1), virtual_clock);
        let mut heavy = flows.join(spec(1, 8), virtual_clock);
        light.count_io();
        while !heavy.ahead() {
            heavy.count_io();
        }
        light.leave();
        heavy
    }

    /// A member that ended still holds the others to their shares until fio's parent would
    /// have reaped it.
    #[test]
    fn an_ended_member_holds_the_others_until_it_is_reaped() {
        let mut flows = Flows::with_reap_delay(Duration::from_millis(200));
        let heavy = heavy_after_light_ended(&mut flows, false);
        assert!(heavy.ahead(), "the ended member is not reaped yet");
        std::thread::sleep(Duration::from_millis(250));
        assert!(!heavy.ahead(), "reaped: the heavy member is alone");
    }

    /// On a simulated target's clock an ended member leaves at once: a wait of wall time
    /// would make the simulated run depend on the machine.
    #[test]
    fn on_virtual_time_an_ended_member_leaves_at_once() {
        let heavy = heavy_after_light_ended(&mut Flows::default(), true);
        assert!(!heavy.ahead(), "alone in the flow at once");
    }

    /// Members that issue whenever they are not ahead end in the ratio of their weights.
    #[test]
    fn members_issue_in_the_ratio_of_their_weights() {
        let mut flows = Flows::default();
        let mut members = [
            flows.join(spec(1, 1), false),
            flows.join(spec(1, 5), false),
            flows.join(spec(1, 10), false),
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
        let mut flows = Flows::with_reap_delay(Duration::ZERO);
        let mut a = flows.join(spec(1, 1), false);
        let mut b = flows.join(spec(1, 3), false);
        let mut other = flows.join(spec(2, 1), false);
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
