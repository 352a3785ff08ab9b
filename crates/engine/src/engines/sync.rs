//! The `sync` engine: `lseek` to the request's offset, then `read`/`write` at the file position
//! (fio's `ioengine=sync`), one request at a time per worker. As fio does (`fio_syncio_prep`),
//! the `lseek` is skipped when the position is already there, so a sequential job costs one
//! syscall per I/O. Each engine has its own open file description (`try_open_own_position`):
//! a duplicated descriptor would share its position with every other worker.

use super::blocking::{whole_transfer, BlockingEngine, BlockingIo};
use crate::target::OpenTarget;
use crate::{EngineError, IoDirection};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};

/// `read`/`write` at the file position, moved there by `lseek` when needed.
pub struct SeekIo {
    file: File,
    /// Where the file position is, when known (unknown after an error).
    position_bytes: Option<u64>,
    seeks: u64,
}

impl BlockingIo for SeekIo {
    const NAME: &'static str = "sync";

    fn file(&self) -> &File {
        &self.file
    }

    fn transfer(
        &mut self,
        direction: IoDirection,
        buf: &mut [u8],
        offset_bytes: u64,
    ) -> Result<u32, i32> {
        if self.position_bytes != Some(offset_bytes) {
            self.position_bytes = None;
            self.seeks += 1;
            if let Err(err) = self.file.seek(SeekFrom::Start(offset_bytes)) {
                return Err(err.raw_os_error().unwrap_or(libc::EIO));
            }
        }
        let file = &mut self.file;
        let result = whole_transfer(buf.len(), |done| match direction {
            IoDirection::Read => file.read(&mut buf[done..]),
            _ => file.write(&buf[done..]),
        });
        self.position_bytes = result.ok().map(|moved| offset_bytes + u64::from(moved));
        result
    }

    fn details(&self) -> Vec<(String, String)> {
        vec![("seeks".to_string(), self.seeks.to_string())]
    }
}

pub type SyncEngine = BlockingEngine<SeekIo>;

impl SyncEngine {
    /// An engine on its own open file description of `target` (one engine per worker).
    pub fn new(target: &OpenTarget) -> Result<Self, EngineError> {
        Ok(BlockingEngine::with_io(
            SeekIo {
                file: target.try_open_own_position()?,
                position_bytes: None,
                seeks: 0,
            },
            target.try_clone_trim_file()?,
            target.kind,
            target.size_bytes,
        ))
    }
}
