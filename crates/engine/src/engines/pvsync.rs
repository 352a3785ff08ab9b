//! The `pvsync` engine: `preadv`/`pwritev` of one iovec, synchronous, one request at a time per
//! worker (fio's `ioengine=pvsync`, engines/sync.c `fio_pvsyncio_queue`). The shared bookkeeping
//! is `blocking::BlockingEngine`.

use super::blocking::{one_iovec_transfer, BlockingEngine, BlockingIo};
use crate::target::OpenTarget;
use crate::{EngineError, IoDirection};
use std::fs::File;
use std::os::fd::AsRawFd;

/// `preadv`/`pwritev` of one iovec at the request's offset: no file position, so a duplicated
/// descriptor is enough.
pub struct VectoredIo {
    file: File,
}

impl BlockingIo for VectoredIo {
    const NAME: &'static str = "pvsync";

    fn file(&self) -> &File {
        &self.file
    }

    fn transfer(
        &mut self,
        direction: IoDirection,
        buf: &mut [u8],
        offset_bytes: u64,
    ) -> Result<u32, i32> {
        let fd = self.file.as_raw_fd();
        // SAFETY: the iovec covers the part of `buf` not yet moved, which lives and is not
        // otherwise borrowed for the call; the kernel reads (pwritev) or writes (preadv) only
        // those bytes.
        one_iovec_transfer(buf, offset_bytes, |iov, offset| unsafe {
            match direction {
                IoDirection::Read => libc::preadv(fd, iov, 1, offset),
                _ => libc::pwritev(fd, iov, 1, offset),
            }
        })
    }
}

pub type PvsyncEngine = BlockingEngine<VectoredIo>;

impl PvsyncEngine {
    /// An engine on its own descriptor of `target` (one engine per worker).
    pub fn new(target: &OpenTarget) -> Result<Self, EngineError> {
        BlockingEngine::on_target(target, |file| VectoredIo { file })
    }
}
