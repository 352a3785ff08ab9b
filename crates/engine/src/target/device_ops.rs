//! Operations on an open target's descriptor: a block device's size and logical block size
//! (ioctls), dropping cached pages, and discarding a range.

use super::{OpenTarget, TargetKind};
use crate::EngineError;
use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

// Block-layer ioctls from <linux/fs.h>: BLKSSZGET = _IO(0x12,104) (int), BLKGETSIZE64 =
// _IOR(0x12,114,size_t), BLKDISCARD = _IO(0x12,119) (uint64_t[2]: start, length).
const BLOCK_IOCTL_TYPE: u8 = 0x12;
const BLKSSZGET_NR: u8 = 104;
const BLKGETSIZE64_NR: u8 = 114;
const BLKDISCARD_NR: u8 = 119;
nix::ioctl_read_bad!(
    ioctl_blksszget,
    nix::request_code_none!(BLOCK_IOCTL_TYPE, BLKSSZGET_NR),
    libc::c_int
);
nix::ioctl_read!(ioctl_blkgetsize64, BLOCK_IOCTL_TYPE, BLKGETSIZE64_NR, u64);
nix::ioctl_write_ptr_bad!(
    ioctl_blkdiscard,
    nix::request_code_none!(BLOCK_IOCTL_TYPE, BLKDISCARD_NR),
    [u64; 2]
);

/// Size of a block device in bytes (BLKGETSIZE64).
pub fn block_device_size_bytes(file: &File) -> io::Result<u64> {
    let mut size_bytes = 0u64;
    // SAFETY: the fd is open and the kernel writes one u64 into `size_bytes`.
    unsafe { ioctl_blkgetsize64(file.as_raw_fd(), &mut size_bytes) }?;
    Ok(size_bytes)
}

/// Logical block size of a block device (BLKSSZGET): the O_DIRECT granularity.
pub fn block_device_logical_block_bytes(file: &File) -> io::Result<u32> {
    let mut block_bytes: libc::c_int = 0;
    // SAFETY: the fd is open and the kernel writes one int into `block_bytes`.
    unsafe { ioctl_blksszget(file.as_raw_fd(), &mut block_bytes) }?;
    u32::try_from(block_bytes)
        .map_err(|_| io::Error::other(format!("BLKSSZGET returned {block_bytes}")))
}

/// Drop the target's pages from the page cache (fio's `invalidate`): dirty pages are written
/// first, so nothing is lost, and the next buffered read comes from the device.
pub fn drop_cached_pages(target: &OpenTarget) -> Result<(), EngineError> {
    drop_cached_file_pages(&target.file).map_err(|source| EngineError::Open {
        path: target.path.clone(),
        source,
    })
}

/// Drop one open file's pages from the page cache, flushing dirty ones first (DONTNEED skips
/// dirty pages, so without the flush they would stay cached).
pub fn drop_cached_file_pages(file: &File) -> io::Result<()> {
    use nix::fcntl::{posix_fadvise, PosixFadviseAdvice};
    use std::os::fd::AsRawFd;
    file.sync_data()?;
    posix_fadvise(
        file.as_raw_fd(),
        0,
        0,
        PosixFadviseAdvice::POSIX_FADV_DONTNEED,
    )
    .map_err(|errno| io::Error::from_raw_os_error(errno as i32))
}

/// Discard a range: punch a hole in a file (keeping its size), or BLKDISCARD on a block device.
/// Synchronous. Returns the length discarded, or the errno.
pub fn discard(
    file: &File,
    kind: TargetKind,
    offset_bytes: u64,
    len_bytes: u32,
) -> Result<u32, i32> {
    match kind {
        TargetKind::RegularFile => {
            let offset = libc::off_t::try_from(offset_bytes).map_err(|_| libc::EINVAL)?;
            // SAFETY: fallocate takes plain integers; the fd is open.
            let rc = unsafe {
                libc::fallocate(
                    file.as_raw_fd(),
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    offset,
                    libc::off_t::from(len_bytes),
                )
            };
            if rc == 0 {
                Ok(len_bytes)
            } else {
                Err(io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO))
            }
        }
        TargetKind::BlockDevice => {
            let range = [offset_bytes, u64::from(len_bytes)];
            // SAFETY: the fd is open; the kernel reads two u64 from `range`.
            match unsafe { ioctl_blkdiscard(file.as_raw_fd(), &range) } {
                Ok(_) => Ok(len_bytes),
                Err(errno) => Err(errno as i32),
            }
        }
    }
}
