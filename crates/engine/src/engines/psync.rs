//! The `psync` engine: `pread`/`pwrite`, synchronous, one request at a time per worker (fio's
//! `ioengine=psync`). The shared bookkeeping is `blocking::BlockingEngine`.

use super::blocking::{whole_transfer, BlockingEngine, BlockingIo};
use crate::target::OpenTarget;
use crate::{EngineError, IoDirection};
use std::fs::File;
use std::os::unix::fs::FileExt;

/// `pread`/`pwrite` at the request's offset: no file position, so a duplicated descriptor is
/// enough.
pub struct PositionalIo {
    file: File,
}

impl BlockingIo for PositionalIo {
    const NAME: &'static str = "psync";

    fn file(&self) -> &File {
        &self.file
    }

    fn transfer(
        &mut self,
        direction: IoDirection,
        buf: &mut [u8],
        offset_bytes: u64,
    ) -> Result<u32, i32> {
        let file = &self.file;
        whole_transfer(buf.len(), |done| {
            let at = offset_bytes + done as u64;
            match direction {
                IoDirection::Read => file.read_at(&mut buf[done..], at),
                _ => file.write_at(&buf[done..], at),
            }
        })
    }
}

pub type PsyncEngine = BlockingEngine<PositionalIo>;

impl PsyncEngine {
    /// An engine on its own descriptor of `target` (one engine per worker).
    pub fn new(target: &OpenTarget) -> Result<Self, EngineError> {
        BlockingEngine::on_target(target, |file| PositionalIo { file })
    }
}
