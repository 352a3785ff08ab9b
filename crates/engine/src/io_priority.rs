//! The calling thread's I/O priority (`ioprio_set(IOPRIO_WHO_PROCESS, 0, value)`), which the
//! kernel gives every request the thread issues (fio's `prio` and `prioclass`).
//!
//! With `IOPRIO_WHO_PROCESS` and `who` 0 the kernel changes the calling task alone, a thread
//! and not its whole process (linux/block/ioprio.c, `ioprio_set`: `p = current`). Threads it
//! creates afterwards inherit it (kernel/fork.c `copy_io`), so [`ThreadIoPriority`] puts the
//! old value back when dropped: a job that runs on the main thread leaves no trace on the next.

use std::io;

/// linux/ioprio.h `IOPRIO_WHO_PROCESS`: `who` names a task (0: the caller).
const IOPRIO_WHO_PROCESS: libc::c_int = 1;
/// `who` 0: the calling thread.
const CALLING_THREAD: libc::c_int = 0;

/// The calling thread's I/O priority value (`class << 13 | level`), as `ioprio_get` returns it.
pub fn current() -> io::Result<u16> {
    // SAFETY: ioprio_get takes two integers and touches no memory of ours.
    let value = unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, CALLING_THREAD) };
    if value < 0 {
        return Err(io::Error::last_os_error());
    }
    u16::try_from(value).map_err(|_| io::Error::other("ioprio_get returned a value above 16 bits"))
}

fn set(value: u16) -> io::Result<()> {
    // SAFETY: ioprio_set takes three integers and touches no memory of ours.
    let result = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            CALLING_THREAD,
            libc::c_int::from(value),
        )
    };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The calling thread runs at an I/O priority until this is dropped, which puts back the one
/// it had. Keep it on the thread that set it (it is not `Send`).
pub struct ThreadIoPriority {
    previous: u16,
    /// Not `Send`: the priority belongs to the thread that set it.
    _on_this_thread: std::marker::PhantomData<*const ()>,
}

impl ThreadIoPriority {
    /// Set the calling thread's I/O priority to `value` (linux/ioprio.h `IOPRIO_PRIO_VALUE`).
    /// The real-time class needs CAP_SYS_ADMIN (EPERM otherwise), as in fio.
    pub fn set(value: u16) -> io::Result<Self> {
        let previous = current()?;
        set(value)?;
        Ok(ThreadIoPriority {
            previous,
            _on_this_thread: std::marker::PhantomData,
        })
    }
}

impl Drop for ThreadIoPriority {
    fn drop(&mut self) {
        // Setting back a value this thread had cannot be refused for lack of privilege; should
        // it fail anyway the thread keeps the job's priority, which only orders its own I/O.
        let _ = set(self.previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Best-effort level 6 (`2 << 13 | 6`): a class any user may set.
    const BEST_EFFORT_LEVEL_6: u16 = 0x4006;

    #[test]
    fn set_changes_this_thread_alone_and_drop_puts_it_back() {
        let before = current().unwrap();
        let other_thread = std::thread::spawn(|| {
            let guard = ThreadIoPriority::set(BEST_EFFORT_LEVEL_6).unwrap();
            let during = current().unwrap();
            drop(guard);
            (during, current().unwrap())
        });
        let (during, after) = other_thread.join().unwrap();
        assert_eq!(during, BEST_EFFORT_LEVEL_6);
        assert_eq!(after, before);
        // The test's own thread never changed.
        assert_eq!(current().unwrap(), before);
    }
}
