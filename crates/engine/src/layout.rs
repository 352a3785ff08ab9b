//! What a file layout checks before and while it writes: that the file system has room for it
//! (a layout that cannot fit is refused before its first byte, not after writing gigabytes
//! until ENOSPC), and that no interrupt asked the run to stop (a layout of a huge `size=` takes
//! minutes; the first Ctrl-C or SIGTERM ends it at the next chunk).

use crate::EngineError;
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once by the interrupt handler; every layout in progress or to come stops.
static STOP_LAYOUTS: AtomicBool = AtomicBool::new(false);

/// Ask every file layout to stop at its next chunk (the run's first Ctrl-C or SIGTERM). The
/// layout then fails with [`EngineError::Interrupted`] and its bytes are taken back.
pub fn stop_layouts() {
    STOP_LAYOUTS.store(true, Ordering::SeqCst);
}

/// Whether [`stop_layouts`] was called.
pub(crate) fn layouts_stopped() -> bool {
    STOP_LAYOUTS.load(Ordering::Relaxed)
}

/// Refuses a layout that extends `file` from `from_bytes` to `to_bytes` when its file system
/// has fewer bytes free for it (`statvfs`'s `f_bavail * f_frsize`: what an unprivileged writer
/// may use; root's reserve is left alone, as a layout is no reason to eat it).
pub(crate) fn check_free_space(
    file: &File,
    path: &Path,
    from_bytes: u64,
    to_bytes: u64,
) -> Result<(), EngineError> {
    let needed_bytes = to_bytes.saturating_sub(from_bytes);
    let free_bytes = match free_bytes(file) {
        Ok(free_bytes) => free_bytes,
        // A file system that cannot say: the layout's own ENOSPC stays the check.
        Err(_) => return Ok(()),
    };
    if needed_bytes <= free_bytes {
        return Ok(());
    }
    Err(EngineError::Target {
        path: path.to_path_buf(),
        message: format!(
            "no space left on its file system to lay it out to {to_bytes} bytes: that needs \
             {needed_bytes} more bytes, {free_bytes} are free; free some space or shrink the \
             job's size"
        ),
    })
}

/// Bytes free to an unprivileged writer on the file system holding `file`.
fn free_bytes(file: &File) -> std::io::Result<u64> {
    // SAFETY: an all-zero statvfs is a valid value of the plain C struct the kernel fills.
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open and `stats` is a valid statvfs for the kernel to write.
    if unsafe { libc::fstatvfs(file.as_raw_fd(), &mut stats) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(stats.f_bavail.saturating_mul(stats.f_frsize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_larger_than_the_free_space_is_refused_and_one_within_passes() {
        let file = tempfile::tempfile().unwrap();
        let free = free_bytes(&file).unwrap();
        let path = Path::new("data");
        assert!(check_free_space(&file, path, 0, 4096.min(free)).is_ok());
        let error = check_free_space(&file, path, 0, free + (1 << 30)).unwrap_err();
        assert!(error.to_string().contains("free some space"), "{error}");
        // Only what the layout adds counts: a file already holding most of it needs less.
        assert!(check_free_space(&file, path, free + (1 << 30), free + (1 << 30)).is_ok());
    }
}
