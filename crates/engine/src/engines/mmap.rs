//! The `mmap` engine: the whole target mapped shared into memory, reads and writes are `memcpy`
//! between the mapping and the slot buffer (fio's `ioengine=mmap`), one request at a time per
//! worker. O_DIRECT cannot apply to a mapping; as fio does, a `direct=1` job instead `msync`s
//! each I/O's pages (MS_SYNC) and drops them (`madvise(MADV_DONTNEED)`), so every I/O reaches
//! the device. A write job without `direct` leaves its pages dirty, as fio does; the kernel
//! writes them back, and the engine's drop unmaps (which does not wait for that writeback).
//!
//! A device error under a mapping arrives as SIGBUS, not as an errno: storlab cannot report it
//! per I/O (neither can fio). Regions are checked to fit the target before any I/O, so a job
//! never touches past the end of the mapping.

use super::blocking::{BlockingEngine, BlockingIo};
use crate::target::OpenTarget;
use crate::{EngineError, IoDirection};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

/// The target mapped into our address space.
pub struct MappedIo {
    file: File,
    base: NonNull<u8>,
    len_bytes: usize,
    writable: bool,
    /// `direct=1`: msync and drop each I/O's pages.
    sync_each_io: bool,
    msyncs: u64,
}

// SAFETY: `MappedIo` owns its mapping (like a `Box<[u8]>` over the file's pages); moving it to
// another thread moves that ownership. It is not `Sync` and hands out no references.
unsafe impl Send for MappedIo {}

impl MappedIo {
    fn map(target: &OpenTarget) -> Result<Self, EngineError> {
        let file = target.try_clone_file()?;
        let fd = file.as_raw_fd();
        // SAFETY: F_GETFL on an open descriptor takes no pointer.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 {
            return Err(EngineError::Io(io::Error::last_os_error()));
        }
        let writable = flags & libc::O_ACCMODE == libc::O_RDWR;
        let len_bytes = usize::try_from(target.size_bytes)
            .ok()
            .filter(|&len| len > 0)
            .ok_or_else(|| {
                EngineError::Setup(format!(
                    "the mmap engine cannot map {} ({} bytes)",
                    target.path.display(),
                    target.size_bytes
                ))
            })?;
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: a fresh shared mapping of our own descriptor; the kernel picks the address.
        // Nothing else in this process refers to the range it returns.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len_bytes,
                prot,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return Err(EngineError::Setup(format!(
                "mmap of {} ({len_bytes} bytes): {}",
                target.path.display(),
                io::Error::last_os_error()
            )));
        }
        Ok(MappedIo {
            file,
            // MAP_FAILED was excluded, and mmap never returns null for a kernel-chosen address.
            base: NonNull::new(raw.cast()).expect("mmap returned null"),
            len_bytes,
            writable,
            sync_each_io: flags & libc::O_DIRECT != 0,
            msyncs: 0,
        })
    }

    /// `msync(MS_SYNC)` then `madvise(MADV_DONTNEED)` over `[offset, offset+len)`, from the
    /// I/O's own address as fio's engine asks (engines/mmap.c): an I/O off a page boundary
    /// (`blockalign=1k`) fails there with EINVAL, as in fio.
    fn sync_and_drop(&mut self, offset_bytes: usize, len_bytes: usize) -> Result<(), i32> {
        // SAFETY: `offset_bytes..offset_bytes + len_bytes` lies inside the mapping (the
        // caller checked the request range).
        let addr = unsafe { self.base.as_ptr().add(offset_bytes) }.cast();
        self.msyncs += 1;
        // SAFETY: as above; msync and madvise only act on our own mapping's pages.
        let synced = unsafe { libc::msync(addr, len_bytes, libc::MS_SYNC) };
        if synced != 0 {
            return Err(io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO));
        }
        // SAFETY: as above. MADV_DONTNEED on a shared file mapping drops our page table entries;
        // the data is in the file (just synced), so nothing is lost.
        let dropped = unsafe { libc::madvise(addr, len_bytes, libc::MADV_DONTNEED) };
        if dropped != 0 {
            return Err(io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO));
        }
        Ok(())
    }
}

impl BlockingIo for MappedIo {
    const NAME: &'static str = "mmap";
    const WRITES_THROUGH_DESCRIPTOR: bool = false;

    fn file(&self) -> &File {
        &self.file
    }

    fn transfer(
        &mut self,
        direction: IoDirection,
        buf: &mut [u8],
        offset_bytes: u64,
    ) -> Result<u32, i32> {
        let Some(offset) = usize::try_from(offset_bytes)
            .ok()
            .filter(|&offset| offset < self.len_bytes)
        else {
            // At or past the end of the mapping: as a read at EOF, nothing moves.
            return Ok(0);
        };
        let len = buf.len().min(self.len_bytes - offset);
        if direction == IoDirection::Write && !self.writable {
            return Err(libc::EBADF);
        }
        // SAFETY: offset + len ≤ len_bytes, so the range is inside the mapping, which lives as
        // long as `self`; `buf` is our own slot and cannot overlap a file mapping.
        unsafe {
            let mapped = self.base.as_ptr().add(offset);
            match direction {
                IoDirection::Read => std::ptr::copy_nonoverlapping(mapped, buf.as_mut_ptr(), len),
                _ => std::ptr::copy_nonoverlapping(buf.as_ptr(), mapped, len),
            }
        }
        if self.sync_each_io {
            self.sync_and_drop(offset, len)?;
        }
        // len ≤ buf.len() ≤ the request's u32 length.
        Ok(len as u32)
    }

    fn details(&self) -> Vec<(String, String)> {
        vec![
            ("mapped_bytes".to_string(), self.len_bytes.to_string()),
            ("msyncs".to_string(), self.msyncs.to_string()),
        ]
    }
}

impl Drop for MappedIo {
    fn drop(&mut self) {
        // SAFETY: `base`/`len_bytes` are exactly the mapping `map` made; it is unmapped once.
        unsafe {
            libc::munmap(self.base.as_ptr().cast(), self.len_bytes);
        }
    }
}

pub type MmapEngine = BlockingEngine<MappedIo>;

impl MmapEngine {
    /// An engine with its own mapping of `target` (one engine per worker).
    pub fn new(target: &OpenTarget) -> Result<Self, EngineError> {
        Ok(BlockingEngine::with_io(
            MappedIo::map(target)?,
            target.try_clone_trim_file()?,
            target.kind,
            target.size_bytes,
        ))
    }
}
