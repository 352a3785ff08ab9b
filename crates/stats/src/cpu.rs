//! CPU time and scheduler/page-fault counters from `getrusage`, per thread or per process,
//! so a report can say how much CPU the tool itself spent per I/O.

use std::ops::{Add, Sub};

use nix::sys::resource::{getrusage, Usage, UsageWho};
use nix::sys::time::TimeVal;

const NS_PER_S: u64 = 1_000_000_000;
const NS_PER_US: u64 = 1_000;

/// User and system CPU time consumed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CpuTime {
    /// Time spent in user mode.
    pub user_ns: u64,
    /// Time spent in the kernel on this thread's/process's behalf.
    pub system_ns: u64,
}

impl CpuTime {
    /// CPU time of the calling thread so far (`getrusage(RUSAGE_THREAD)`).
    pub fn thread_now() -> CpuTime {
        ResourceUsage::thread_now().cpu
    }

    /// CPU time of the whole process so far (`getrusage(RUSAGE_SELF)`).
    pub fn process_now() -> CpuTime {
        ResourceUsage::process_now().cpu
    }

    /// User plus system time.
    pub fn total_ns(&self) -> u64 {
        self.user_ns.saturating_add(self.system_ns)
    }
}

impl Sub for CpuTime {
    type Output = CpuTime;
    /// Saturating: a later snapshot minus an earlier one; never wraps if swapped.
    fn sub(self, earlier: CpuTime) -> CpuTime {
        CpuTime {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            system_ns: self.system_ns.saturating_sub(earlier.system_ns),
        }
    }
}

impl Add for CpuTime {
    type Output = CpuTime;
    fn add(self, other: CpuTime) -> CpuTime {
        CpuTime {
            user_ns: self.user_ns.saturating_add(other.user_ns),
            system_ns: self.system_ns.saturating_add(other.system_ns),
        }
    }
}

/// A `getrusage` snapshot: CPU time plus the counters fio reports as `ctx`, `majf`, `minf`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResourceUsage {
    /// User and system time.
    pub cpu: CpuTime,
    /// Voluntary plus involuntary context switches.
    pub context_switches: u64,
    /// Page faults served without I/O.
    pub minor_faults: u64,
    /// Page faults that needed I/O.
    pub major_faults: u64,
}

impl ResourceUsage {
    /// Counters of the calling thread so far.
    pub fn thread_now() -> ResourceUsage {
        Self::of(UsageWho::RUSAGE_THREAD)
    }

    /// Counters of the whole process so far.
    pub fn process_now() -> ResourceUsage {
        Self::of(UsageWho::RUSAGE_SELF)
    }

    fn of(who: UsageWho) -> ResourceUsage {
        // getrusage only fails for an invalid `who` or a bad pointer, neither of which can
        // happen here; a zero snapshot is the harmless answer if it ever does.
        getrusage(who)
            .map(|usage| Self::from_usage(&usage))
            .unwrap_or_default()
    }

    fn from_usage(usage: &Usage) -> ResourceUsage {
        let non_negative = |value: std::os::raw::c_long| u64::try_from(value).unwrap_or(0);
        ResourceUsage {
            cpu: CpuTime {
                user_ns: timeval_ns(usage.user_time()),
                system_ns: timeval_ns(usage.system_time()),
            },
            context_switches: non_negative(usage.voluntary_context_switches())
                .saturating_add(non_negative(usage.involuntary_context_switches())),
            minor_faults: non_negative(usage.minor_page_faults()),
            major_faults: non_negative(usage.major_page_faults()),
        }
    }
}

impl Sub for ResourceUsage {
    type Output = ResourceUsage;
    fn sub(self, earlier: ResourceUsage) -> ResourceUsage {
        ResourceUsage {
            cpu: self.cpu - earlier.cpu,
            context_switches: self
                .context_switches
                .saturating_sub(earlier.context_switches),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
        }
    }
}

fn timeval_ns(time: TimeVal) -> u64 {
    let seconds = u64::try_from(time.tv_sec()).unwrap_or(0);
    let micros = u64::try_from(time.tv_usec()).unwrap_or(0);
    seconds
        .saturating_mul(NS_PER_S)
        .saturating_add(micros.saturating_mul(NS_PER_US))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn burn_cpu(iterations: u64) -> u64 {
        let mut accumulator = 0u64;
        for i in 0..iterations {
            accumulator = std::hint::black_box(accumulator.wrapping_mul(31).wrapping_add(i));
        }
        accumulator
    }

    #[test]
    fn thread_cpu_time_is_monotonic_and_advances_with_work() {
        let before = CpuTime::thread_now();
        let mut previous = before;
        // Spin until the kernel's accounting (tick- or ns-granular) shows progress.
        let mut rounds = 0;
        while (CpuTime::thread_now() - before).total_ns() == 0 && rounds < 10_000 {
            burn_cpu(100_000);
            let now = CpuTime::thread_now();
            assert!(now.user_ns >= previous.user_ns && now.system_ns >= previous.system_ns);
            previous = now;
            rounds += 1;
        }
        assert!((CpuTime::thread_now() - before).total_ns() > 0);
    }

    #[test]
    fn process_time_covers_thread_time() {
        burn_cpu(1_000_000);
        let thread = CpuTime::thread_now();
        let process = CpuTime::process_now();
        assert!(process.total_ns() >= thread.total_ns());
    }

    #[test]
    fn subtraction_saturates() {
        let earlier = CpuTime {
            user_ns: 10,
            system_ns: 5,
        };
        let later = CpuTime {
            user_ns: 15,
            system_ns: 5,
        };
        assert_eq!(
            later - earlier,
            CpuTime {
                user_ns: 5,
                system_ns: 0
            }
        );
        assert_eq!(earlier - later, CpuTime::default());
    }
}
