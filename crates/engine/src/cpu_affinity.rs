//! The calling thread's CPU affinity (`sched_setaffinity(0, ...)`), which fio's `cpus_allowed`
//! sets on each job thread (backend.c `thread_main`, `fio_setaffinity`), and the machine's CPU
//! count fio checks the list against (`cpus_configured`).
//!
//! With pid 0 the kernel changes the calling thread alone, and threads it creates afterwards
//! inherit the mask, so [`ThreadCpuAffinity`] puts the old mask back when dropped: a job that
//! runs on the main thread leaves no trace on the next.

use std::io;

/// CPUs the system has configured (`sysconf(_SC_NPROCESSORS_CONF)`, fio's `cpus_configured`):
/// the numbers a CPU list may name are below it.
pub fn configured_cpus() -> io::Result<u32> {
    // SAFETY: sysconf takes an integer and touches no memory of ours.
    let count = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    if count < 1 {
        return Err(io::Error::last_os_error());
    }
    u32::try_from(count).map_err(|_| io::Error::other("sysconf returned more than 2^32 CPUs"))
}

fn current() -> io::Result<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the kernel writes at most `size_of::<cpu_set_t>()` bytes into `set`.
    let result =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(set)
}

fn set(set: &libc::cpu_set_t) -> io::Result<()> {
    // SAFETY: the kernel reads `size_of::<cpu_set_t>()` bytes from `set`.
    let result = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The calling thread runs on a set of CPUs until this is dropped, which puts back the set it
/// had. Keep it on the thread that set it (it is not `Send`).
pub struct ThreadCpuAffinity {
    previous: libc::cpu_set_t,
    /// Not `Send`: the affinity belongs to the thread that set it.
    _on_this_thread: std::marker::PhantomData<*const ()>,
}

impl ThreadCpuAffinity {
    /// Run the calling thread on `cpus` only (CPU numbers below [`configured_cpus`]; a CPU
    /// that is offline or outside the process's cpuset fails with EINVAL, as in fio).
    pub fn set(cpus: &[u32]) -> io::Result<Self> {
        // SAFETY: as in `current`, all zeroes is the empty set.
        let mut wanted: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
        for &cpu in cpus {
            let cpu = cpu as usize;
            if cpu >= capacity {
                return Err(io::Error::other(format!(
                    "CPU {cpu} does not fit a cpu_set_t of {capacity} CPUs"
                )));
            }
            // SAFETY: `cpu` is below the set's capacity, checked above.
            unsafe { libc::CPU_SET(cpu, &mut wanted) };
        }
        let previous = current()?;
        set(&wanted)?;
        Ok(ThreadCpuAffinity {
            previous,
            _on_this_thread: std::marker::PhantomData,
        })
    }

    /// The CPUs the calling thread may run on now, ascending.
    pub fn of_this_thread() -> io::Result<Vec<u32>> {
        let set = current()?;
        let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: every index is below the set's capacity.
        Ok((0..capacity)
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .map(|cpu| cpu as u32)
            .collect())
    }
}

impl Drop for ThreadCpuAffinity {
    fn drop(&mut self) {
        // Nothing useful can be done if the old mask cannot be restored: the thread keeps the
        // job's CPUs, which still holds every CPU the job ran on.
        let _ = set(&self.previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_runs_on_the_cpus_it_was_given_until_dropped() {
        // On a thread of its own, so no other test's thread is pinned.
        std::thread::spawn(|| {
            let before = ThreadCpuAffinity::of_this_thread().unwrap();
            let only = before[0];
            let pinned = ThreadCpuAffinity::set(&[only]).unwrap();
            assert_eq!(ThreadCpuAffinity::of_this_thread().unwrap(), vec![only]);
            drop(pinned);
            assert_eq!(ThreadCpuAffinity::of_this_thread().unwrap(), before);
        })
        .join()
        .unwrap();
        assert!(configured_cpus().unwrap() >= 1);
    }
}
