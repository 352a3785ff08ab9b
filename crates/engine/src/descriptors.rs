//! The calling thread's own descriptor table (`unshare(CLONE_FILES)`), which makes every
//! later `read`/`write`/`lseek` of a lone I/O thread as cheap as in fio's job processes.
//!
//! While the descriptor table is shared by several threads, the kernel takes a reference on
//! the file for each system call on a descriptor (`fdget`), and with that reference a file's
//! count is above one, so `read`, `write` and `lseek` also take the file's position lock
//! (`f_pos_lock`). fio runs each job in a forked process with one thread, and pays neither;
//! storlab's Ctrl-C handler is a thread, so its process never has a single thread. Measured
//! here (kernel 6.18, `docs/performance.md`): fio's `sync` engine, 4 KiB random reads from the
//! page cache, costs 125–314 ns more CPU per I/O with `--thread` (jobs as threads) than without.

use std::io;

/// Give the calling thread a descriptor table of its own: a copy of the shared one, so every
/// descriptor open now stays open (and at its number) in both, and what either side opens or
/// closes afterwards is its alone. Threads the caller spawns afterwards share its new table.
///
/// Call it before anything but the standard streams is open, and from the thread that will
/// open, use and close every other descriptor: a descriptor open in both tables keeps two
/// references (the position lock stays), and a POSIX record lock taken before belongs to the
/// other table.
pub fn use_private_descriptor_table() -> io::Result<()> {
    // SAFETY: unshare(CLONE_FILES) only replaces the calling thread's descriptor table with a
    // copy; no memory is touched.
    if unsafe { libc::unshare(libc::CLONE_FILES) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
