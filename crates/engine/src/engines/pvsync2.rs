//! The `pvsync2` engine: `preadv2`/`pwritev2` with per-I/O flags, one request at a time per
//! worker (fio's `ioengine=pvsync2`): `hipri` sets `RWF_HIPRI` (the block layer polls for the
//! completion instead of sleeping for its interrupt, on devices with poll queues), `nowait`
//! sets `RWF_NOWAIT` (a request that would block fails with EAGAIN instead).

use super::blocking::{one_iovec_transfer, BlockingEngine, BlockingIo};
use crate::target::OpenTarget;
use crate::{EngineError, IoDirection};
use std::fs::File;
use std::os::fd::AsRawFd;

/// The flags fio's `pvsync2` options give each request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pvsync2Options {
    /// `hipri`: `RWF_HIPRI`.
    pub hipri: bool,
    /// `nowait`: `RWF_NOWAIT`.
    pub nowait: bool,
}

impl Pvsync2Options {
    fn rwf_flags(self) -> libc::c_int {
        let mut flags = 0;
        if self.hipri {
            flags |= libc::RWF_HIPRI;
        }
        if self.nowait {
            flags |= libc::RWF_NOWAIT;
        }
        flags
    }
}

/// `preadv2`/`pwritev2` of one iovec at the request's offset.
pub struct VectoredFlagsIo {
    file: File,
    rwf_flags: libc::c_int,
}

impl BlockingIo for VectoredFlagsIo {
    const NAME: &'static str = "pvsync2";

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
        let flags = self.rwf_flags;
        // SAFETY: the iovec covers the part of `buf` not yet moved, which lives and is not
        // otherwise borrowed for the call; the kernel reads (pwritev2) or writes (preadv2) only
        // those bytes.
        one_iovec_transfer(buf, offset_bytes, |iov, offset| unsafe {
            match direction {
                IoDirection::Read => libc::preadv2(fd, iov, 1, offset, flags),
                _ => libc::pwritev2(fd, iov, 1, offset, flags),
            }
        })
    }

    fn details(&self) -> Vec<(String, String)> {
        let mut flags = Vec::new();
        if self.rwf_flags & libc::RWF_HIPRI != 0 {
            flags.push("RWF_HIPRI");
        }
        if self.rwf_flags & libc::RWF_NOWAIT != 0 {
            flags.push("RWF_NOWAIT");
        }
        let flags = if flags.is_empty() {
            "none".to_string()
        } else {
            flags.join("|")
        };
        vec![("rw_flags".to_string(), flags)]
    }
}

pub type Pvsync2Engine = BlockingEngine<VectoredFlagsIo>;

impl Pvsync2Engine {
    /// An engine on its own descriptor of `target` (one engine per worker).
    pub fn new(target: &OpenTarget, options: Pvsync2Options) -> Result<Self, EngineError> {
        Ok(BlockingEngine::with_io(
            VectoredFlagsIo {
                file: target.try_clone_file()?,
                rwf_flags: options.rwf_flags(),
            },
            target.try_clone_trim_file()?,
            target.kind,
            target.size_bytes,
        ))
    }
}
