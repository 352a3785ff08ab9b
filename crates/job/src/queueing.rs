//! How a job's I/Os are handed to the engine and where its threads run: fio's
//! `iodepth_batch_submit`, `iodepth_batch_complete_min`/`_max`, `iodepth_low` (fio 3.33,
//! init.c `fixup_options`, backend.c `wait_for_completions`, ioengines.c `td_io_queue`) and
//! `cpus_allowed`/`cpus_allowed_policy` (options.c `set_cpus_allowed`, backend.c
//! `fio_cpus_split`).

use serde::{Deserialize, Serialize};

/// fio's batching of submissions and completions, as fio's `fixup_options` leaves it for the
/// job's `iodepth`. Only queueing engines (io_uring, libaio, posixaio, the simulator) batch: a
/// synchronous engine does each I/O inside its submit, as fio's engines without a commit step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoBatch {
    /// I/Os queued before they are submitted together (fio's `iodepth_batch_submit`:
    /// 1..=iodepth; 0 or more than `iodepth` is `iodepth`).
    pub submit: u32,
    /// Completions a reap waits for (`iodepth_batch_complete_min`; 0 with `complete_max` 0 is
    /// fio's polling: the worker looks for a completion after every I/O it queues).
    pub complete_min: u32,
    /// Most completions one reap takes (`iodepth_batch_complete_max`; raised to `complete_min`).
    pub complete_max: u32,
    /// Once the queue is full, completions are reaped until no more than this many are in
    /// flight (`iodepth_low`: 1..=iodepth, default `iodepth`).
    pub depth_low: u32,
}

impl IoBatch {
    /// The batching fio 3.33 runs for `iodepth` and the keys as given (`None`: not set; fio's
    /// option defaults are 1 for `iodepth_batch_submit` and `iodepth_batch_complete_min`, 0
    /// for `iodepth_batch_complete_max` and `iodepth_low`), after `fixup_options`.
    pub fn fio(
        iodepth: u32,
        submit: Option<u32>,
        complete_min: Option<u32>,
        complete_max: Option<u32>,
        depth_low: Option<u32>,
    ) -> IoBatch {
        let iodepth = iodepth.max(1);
        let up_to_depth = |value: u32| {
            if value == 0 || value > iodepth {
                iodepth
            } else {
                value
            }
        };
        let complete_min = complete_min.unwrap_or(1);
        IoBatch {
            submit: up_to_depth(submit.unwrap_or(1)),
            complete_min,
            complete_max: complete_max.unwrap_or(0).max(complete_min),
            depth_low: up_to_depth(depth_low.unwrap_or(0)),
        }
    }

    /// fio's defaults for `iodepth`: one I/O submitted at a time, one completion reaped at a
    /// time, reaping stops as soon as a slot is free. storlab's runner does this without
    /// the batching bookkeeping.
    pub fn is_fio_default(&self, iodepth: u32) -> bool {
        *self == IoBatch::fio(iodepth, None, None, None, None)
    }

    /// fio's `io_in_polling`: neither a minimum nor a maximum of completions.
    pub fn polls(&self) -> bool {
        self.complete_min == 0 && self.complete_max == 0
    }
}

/// fio's `cpus_allowed` with its `cpus_allowed_policy`: the CPUs the job's threads may run on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuAffinity {
    /// The CPU numbers of `cpus_allowed`, ascending, each once.
    pub cpus: Vec<u32>,
    /// `cpus_allowed_policy=split`: each thread (fio's clone) runs on one CPU of the set, the
    /// thread numbered N on the set's `(N - 1) mod len`-th; `shared` (false): every thread may
    /// use the whole set.
    pub split: bool,
}

impl CpuAffinity {
    /// The CPUs fio's thread `thread_number` (1-based, counted over the run) may run on.
    pub fn cpus_of_thread(&self, thread_number: u32) -> Vec<u32> {
        if !self.split || self.cpus.is_empty() {
            return self.cpus.clone();
        }
        let index = thread_number.saturating_sub(1) as usize % self.cpus.len();
        vec![self.cpus[index]]
    }
}

/// fio's largest CPU number plus one (os/os-linux.h `FIO_MAX_CPUS`, glibc's `CPU_SETSIZE`).
pub const FIO_MAX_CPUS: u32 = 1024;

/// A CPU list as fio's `set_cpus_allowed` reads it: comma-separated CPU numbers and `A-B`
/// ranges (`0-3,6`). fio reads each number with `atoi`, so `x` or `^2` silently mean CPU 0;
/// storlab refuses anything but digits instead. A range whose end is below its start adds
/// nothing, as in fio's loop.
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, String> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',') {
        if part.is_empty() {
            // fio's loop stops at the first empty element.
            break;
        }
        let (first, last) = match part.split_once('-') {
            Some((first, last)) => (first, last),
            None => (part, part),
        };
        let number = |digits: &str| -> Result<u32, String> {
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("'{part}' is not a CPU number or range such as 0-3"));
            }
            digits
                .parse::<u32>()
                .ok()
                .filter(|&cpu| cpu < FIO_MAX_CPUS)
                .ok_or_else(|| format!("CPU {digits} is past fio's limit of {FIO_MAX_CPUS} CPUs"))
        };
        let (first, last) = (number(first)?, number(last)?);
        cpus.extend(first..=last);
    }
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        return Err("a CPU list such as 0-3,6 is needed".into());
    }
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batching_is_fixed_up_as_fio_init_c_does() {
        // Defaults: submit 1, complete 1..1, low water mark at iodepth.
        let default = IoBatch::fio(32, None, None, None, None);
        assert_eq!(
            default,
            IoBatch {
                submit: 1,
                complete_min: 1,
                complete_max: 1,
                depth_low: 32
            }
        );
        assert!(default.is_fio_default(32));
        // 0 and more than iodepth mean iodepth, for the batch and the low water mark.
        let batch = IoBatch::fio(8, Some(0), Some(4), Some(2), Some(9));
        assert_eq!((batch.submit, batch.depth_low), (8, 8));
        // A maximum below the minimum is raised to it.
        assert_eq!((batch.complete_min, batch.complete_max), (4, 4));
        let batch = IoBatch::fio(8, Some(20), Some(0), None, Some(2));
        assert_eq!(batch.submit, 8);
        assert_eq!(batch.depth_low, 2);
        assert!(batch.polls());
        assert!(!IoBatch::fio(8, None, Some(0), Some(4), None).polls());
    }

    #[test]
    fn cpu_lists_read_as_fio_reads_them() {
        assert_eq!(parse_cpu_list("0-3,6").unwrap(), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list(" 1,1,0 ").unwrap(), vec![0, 1]);
        // fio stops at the first empty element.
        assert_eq!(parse_cpu_list("2,,5").unwrap(), vec![2]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").unwrap_err().contains("'x'"));
        assert!(parse_cpu_list("^2").is_err());
        assert!(parse_cpu_list("1024").unwrap_err().contains("1024"));
    }

    #[test]
    fn split_gives_each_thread_one_cpu_of_the_set_in_turn() {
        let affinity = CpuAffinity {
            cpus: vec![2, 5, 7],
            split: true,
        };
        let placed: Vec<Vec<u32>> = (1..=4).map(|n| affinity.cpus_of_thread(n)).collect();
        assert_eq!(placed, vec![vec![2], vec![5], vec![7], vec![2]]);
        let shared = CpuAffinity {
            split: false,
            ..affinity
        };
        assert_eq!(shared.cpus_of_thread(3), vec![2, 5, 7]);
    }
}
