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
//! The random state is fio's offset generator as it stands at the job's end: for a random fio
//! job, the Tausworthe state storlab draws from too (`fio_rand.rs`; after a read-back phase,
//! the state fio re-seeds before it); zeros for a sequential job, as fio writes it, and for a
//! job drawing from storlab's own generator, which fio has no state for.
//! Only fio's `verify_state_load` reads the file; storlab refuses that key.

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};

/// verify-state.h `VSTATE_HDR_VERSION` in fio 3.33.
const STATE_VERSION: u64 = 3;
/// Bytes of `thread_rand_state`'s union: the larger member, six u64s (taus88 fills four u32s,
/// the last zero; taus258 five u64s and a zero).
const RAND_UNION_BYTES: usize = 6 * 8;
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
    /// `writes_issued` writes, its offset generator at `random_state` (64-bit or not, and its
    /// words; `None`: zeros).
    pub(crate) fn file_bytes(
        &self,
        name: &str,
        thread_index: u32,
        writes_issued: u64,
        random_state: Option<(bool, Vec<u64>)>,
    ) -> Vec<u8> {
        let mut payload = Vec::new();
        payload.extend_from_slice(&(self.last_writes.len() as u64).to_le_bytes());
        payload.extend_from_slice(&(self.depth as u32).to_le_bytes());
        payload.extend_from_slice(&FILES.to_le_bytes());
        payload.extend_from_slice(&writes_issued.to_le_bytes());
        payload.extend_from_slice(&u64::from(thread_index).to_le_bytes());
        let mut rand_union = Vec::with_capacity(RAND_UNION_BYTES);
        let use64 = match random_state {
            Some((true, words)) => {
                words
                    .iter()
                    .for_each(|w| rand_union.extend_from_slice(&w.to_le_bytes()));
                1u64
            }
            Some((false, words)) => {
                words
                    .iter()
                    .for_each(|w| rand_union.extend_from_slice(&(*w as u32).to_le_bytes()));
                0
            }
            None => 0,
        };
        rand_union.resize(RAND_UNION_BYTES, 0);
        payload.extend_from_slice(&use64.to_le_bytes());
        payload.extend_from_slice(&rand_union);
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
        let bytes = recorder.file_bytes("j", 0, 16, None);
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
        let bytes = recorder.file_bytes("j", 0, 16, None);
        assert_eq!(bytes.len(), 24 + 216);
        let offsets: Vec<u64> = bytes[24 + 0x98..]
            .chunks(16)
            .map(|pair| u64::from_le_bytes(pair[8..].try_into().unwrap()))
            .collect();
        assert_eq!(offsets, [61440, 57344, 53248, 49152]);
        assert_eq!(file_name("j", 1), PathBuf::from("local-j-1-verify.state"));
    }

    /// fio 3.33's file for `--name=j --filename=F --size=64k --bs=4k --rw=randwrite
    /// --verify=crc32c` holds its taus88 state as it was re-seeded for the read-back
    /// (3434720573, 94578680, 327051208); with `--do_verify=0`, as it stood after the 16
    /// writes' draws (1718099614, 3830848579, 220617254). Both from that fio's files.
    #[test]
    fn a_random_job_stores_fios_generator_state() {
        use crate::fio_rand::{job_seeds, seed_index, FioRand, FIO_DEFAULT_RANDSEED};
        let seeds = job_seeds(FIO_DEFAULT_RANDSEED, 1, true);
        let mut rand = FioRand::new(seeds[seed_index::BLOCK], false);
        assert_eq!(rand.words(), [3434720573, 94578680, 327051208]);
        (0..16).for_each(|_| {
            rand.next();
        });
        assert_eq!(rand.words(), [1718099614, 3830848579, 220617254]);
        let recorder = VerifyStateRecorder::new(1);
        let bytes = recorder.file_bytes("j", 0, 16, Some((false, rand.words())));
        let rand_state = &bytes[24 + 32..24 + 32 + 8 + 16];
        assert_eq!(&rand_state[..8], &0u64.to_le_bytes());
        assert_eq!(&rand_state[8..12], &1718099614u32.to_le_bytes());
        assert_eq!(&rand_state[20..24], &0u32.to_le_bytes());
    }
}
