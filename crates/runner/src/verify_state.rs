//! fio's verify state file (`verify_state_save`, on by default in fio): at the end of a writing
//! job with `verify`, each clone writes `local-JOBNAME-N-verify.state` (N its thread index in
//! the run, from 0) into the current directory, byte for byte as fio 3.33 writes it (verify.c
//! `verify_save_state`, verify-state.h): a header of three little-endian u64s (version 3, the
//! payload's size, fio's crc32c of the payload) and one `thread_io_list`: completions kept,
//! `iodepth`, files, writes issued, thread index, the offset generator's random state, the job
//! name in 64 bytes, then the last `iodepth` completed write offsets, newest first, as
//! (file number, offset) pairs. Worked out from files fio 3.33 wrote here and read back with
//! its `fio-verify-state`.
//!
//! The random state is fio's own Tausworthe state for a random job, which storlab does not
//! have (it draws from ChaCha8): it is written as zeros, what fio writes for a sequential job.
//! Only fio's `verify_state_load` reads the file; storlab refuses that key.

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};

/// verify-state.h `VSTATE_HDR_VERSION` in fio 3.33.
const STATE_VERSION: u64 = 3;
/// Bytes of `thread_rand_state`: `use64` (u64) and the larger union member, six u64s.
const RAND_STATE_BYTES: usize = 8 + 6 * 8;
/// Bytes of `thread_io_list.name`.
const NAME_BYTES: usize = 64;
/// The one file a storlab job does its I/O on is fio's file number 0.
const FILE_NUMBER: u64 = 0;
/// `thread_io_list.nofiles` for that one file.
const FILES: u32 = 1;

/// What one clone's state file records, kept as its writes complete.
#[derive(Debug, Clone)]
pub(crate) struct VerifyStateRecorder {
    /// fio's `iodepth`: how many completed writes are kept.
    depth: usize,
    /// Offsets of the last `depth` completed writes, oldest first.
    last_writes: VecDeque<u64>,
}

impl VerifyStateRecorder {
    pub(crate) fn new(iodepth: u32) -> Self {
        let depth = iodepth.max(1) as usize;
        VerifyStateRecorder {
            depth,
            last_writes: VecDeque::with_capacity(depth),
        }
    }

    /// A write at `offset_bytes` completed (or, under `verify_only`, was played).
    pub(crate) fn write_completed(&mut self, offset_bytes: u64) {
        if self.last_writes.len() == self.depth {
            self.last_writes.pop_front();
        }
        self.last_writes.push_back(offset_bytes);
    }

    /// The file's bytes for the clone `thread_index` (from 0) of job `name` that issued
    /// `writes_issued` writes.
    pub(crate) fn file_bytes(&self, name: &str, thread_index: u32, writes_issued: u64) -> Vec<u8> {
        let mut payload = Vec::new();
        payload.extend_from_slice(&(self.last_writes.len() as u64).to_le_bytes());
        payload.extend_from_slice(&(self.depth as u32).to_le_bytes());
        payload.extend_from_slice(&FILES.to_le_bytes());
        payload.extend_from_slice(&writes_issued.to_le_bytes());
        payload.extend_from_slice(&u64::from(thread_index).to_le_bytes());
        payload.extend_from_slice(&[0; RAND_STATE_BYTES]);
        // fio copies the name with snprintf: at most 63 bytes and a NUL.
        let mut name_field = [0u8; NAME_BYTES];
        let kept = name.len().min(NAME_BYTES - 1);
        name_field[..kept].copy_from_slice(&name.as_bytes()[..kept]);
        payload.extend_from_slice(&name_field);
        for offset in self.last_writes.iter().rev() {
            payload.extend_from_slice(&FILE_NUMBER.to_le_bytes());
            payload.extend_from_slice(&offset.to_le_bytes());
        }
        let mut bytes = Vec::with_capacity(3 * 8 + payload.len());
        bytes.extend_from_slice(&STATE_VERSION.to_le_bytes());
        bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        let crc = crate::fio_verify::fio_crc32c(&payload);
        bytes.extend_from_slice(&u64::from(crc).to_le_bytes());
        bytes.extend_from_slice(&payload);
        bytes
    }
}

/// fio's name for the state file of clone `thread_index` of job `name`, in the current
/// directory (verify.c `verify_state_gen_name` with its "local" prefix).
pub(crate) fn file_name(name: &str, thread_index: u32) -> PathBuf {
    PathBuf::from(format!("local-{name}-{thread_index}-verify.state"))
}

/// Writes `bytes` to `path` whole: through a temporary file beside it, renamed over it, so a
/// failed write leaves no half file.
pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut temp_name = path.as_os_str().to_owned();
    temp_name.push(format!(".tmp-{}", std::process::id()));
    let temp = PathBuf::from(temp_name);
    let written = std::fs::File::create(&temp)
        .and_then(|mut file| file.write_all(bytes))
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio 3.33's file for `--name=j --size=64k --bs=4k --rw=write --verify=crc32c` (psync,
    /// iodepth 1): 168 payload bytes, crc 0x75bba538, 16 writes, the last at 61440
    /// (`fio-verify-state local-j-0-verify.state`).
    #[test]
    fn a_sequential_job_writes_fios_bytes() {
        let mut recorder = VerifyStateRecorder::new(1);
        for block in 0..16u64 {
            recorder.write_completed(block * 4096);
        }
        let bytes = recorder.file_bytes("j", 0, 16);
        assert_eq!(bytes.len(), 24 + 168);
        assert_eq!(&bytes[..8], &3u64.to_le_bytes());
        assert_eq!(&bytes[8..16], &168u64.to_le_bytes());
        assert_eq!(&bytes[16..24], &0x75bb_a538u64.to_le_bytes());
        assert_eq!(&bytes[24 + 0x98 + 8..], &61440u64.to_le_bytes());
    }

    /// iodepth 4: four completions kept, newest first (fio's file for the same job with
    /// `--iodepth=4 --ioengine=libaio`: 216 payload bytes, 61440, 57344, 53248, 49152).
    #[test]
    fn the_last_iodepth_writes_are_kept_newest_first() {
        let mut recorder = VerifyStateRecorder::new(4);
        for block in 0..16u64 {
            recorder.write_completed(block * 4096);
        }
        let bytes = recorder.file_bytes("j", 0, 16);
        assert_eq!(bytes.len(), 24 + 216);
        let offsets: Vec<u64> = bytes[24 + 0x98..]
            .chunks(16)
            .map(|pair| u64::from_le_bytes(pair[8..].try_into().unwrap()))
            .collect();
        assert_eq!(offsets, [61440, 57344, 53248, 49152]);
        assert_eq!(file_name("j", 1), PathBuf::from("local-j-1-verify.state"));
    }
}
