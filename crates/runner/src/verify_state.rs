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
//!
//! `verify_state_load` reads the file back ([`SavedVerifyState::load`], its own function: the
//! writer's random-state bytes are not read) and [`VerifyCut`] decides, as fio 3.33's
//! `verify_state_should_stop` does, at which logged write the verify pass stops.

use std::collections::VecDeque;
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

/// Bytes of the file's header: version, payload size, crc (verify-state.h `verify_state_hdr`).
const HEADER_BYTES: usize = 3 * 8;
/// Bytes of `thread_io_list` before its completions: `no_comps`, `depth`, `nofiles`,
/// `numberio`, `index`, the random state and the name.
const FIXED_PAYLOAD_BYTES: usize = 8 + 4 + 4 + 8 + 8 + (8 + RAND_UNION_BYTES) + NAME_BYTES;
/// Bytes of one completion, `struct file_comp`: file number and offset.
const COMPLETION_BYTES: usize = 16;
/// The largest state file `verify_state_load` reads: one that keeps the completions of the
/// deepest queue a job may have (`iodepth`'s maximum).
const STATE_MAX_BYTES: u64 = (HEADER_BYTES
    + FIXED_PAYLOAD_BYTES
    + storlab_job::validate::IODEPTH_MAX as usize * COMPLETION_BYTES)
    as u64;

/// What fio's `verify_state_load` uses of a saved state file: the writes the saved run issued,
/// its `iodepth`, and the offsets of its last completed writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SavedVerifyState {
    /// `thread_io_list.depth`: the window of writes that may not have completed.
    depth: u64,
    /// `thread_io_list.numberio`: writes the saved run issued.
    writes_issued: u64,
    /// `thread_io_list.comps`: (file number, offset) of the last completed writes.
    completions: Vec<(u64, u64)>,
}

impl SavedVerifyState {
    /// Reads and checks the state file at `path` as fio's `verify_load_state` does (version 3,
    /// the whole payload the header announces, its crc32c); the error says what is wrong and
    /// names the file.
    pub(crate) fn load(path: &Path) -> Result<Self, String> {
        // A regular file only, read up to what the largest state can take: a FIFO there would
        // block the run, a link to /dev/zero fill memory.
        let bytes = storlab_engine::regular_file::read_regular_file(path, STATE_MAX_BYTES)
            .map_err(|error| {
                format!(
                "cannot read {}: {error} (the writing run's verify_state_save leaves it in its \
                 current directory)",
                path.display()
            )
            })?;
        Self::parse(&bytes).map_err(|what| format!("{}: {what}", path.display()))
    }

    /// The state in a file's `bytes`; bytes after the payload the header announces are ignored,
    /// as fio reads no further.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, String> {
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        if bytes.len() < HEADER_BYTES {
            return Err(format!(
                "{} bytes, shorter than the {HEADER_BYTES}-byte verify state header",
                bytes.len()
            ));
        }
        let version = u64_at(0);
        if version != STATE_VERSION {
            return Err(format!(
                "unsupported version {version} in the verify state header (fio 3.33 writes and \
                 reads version {STATE_VERSION})"
            ));
        }
        let payload_bytes = u64_at(8);
        let held_bytes = (bytes.len() - HEADER_BYTES) as u64;
        if payload_bytes > held_bytes {
            return Err(format!(
                "the header announces {payload_bytes} bytes of state, the file holds {held_bytes}"
            ));
        }
        let payload = &bytes[HEADER_BYTES..HEADER_BYTES + payload_bytes as usize];
        let saved_crc = u64_at(16);
        let crc = u64::from(crate::fio_verify::fio_crc32c(payload));
        if crc != saved_crc {
            return Err(format!(
                "verify state is corrupt: crc32c of its {payload_bytes} bytes is {crc:#x}, the \
                 header says {saved_crc:#x}"
            ));
        }
        if payload.len() < FIXED_PAYLOAD_BYTES {
            return Err(format!(
                "{payload_bytes} bytes of state, shorter than the {FIXED_PAYLOAD_BYTES} of fio's \
                 thread_io_list"
            ));
        }
        let at = HEADER_BYTES;
        let completions_kept = u64_at(at);
        let room = ((payload.len() - FIXED_PAYLOAD_BYTES) / COMPLETION_BYTES) as u64;
        if completions_kept > room {
            // fio would read past its buffer here; storlab says so instead.
            return Err(format!(
                "the state says {completions_kept} completed writes, its {payload_bytes} bytes \
                 hold {room}"
            ));
        }
        let completions = (0..completions_kept as usize)
            .map(|i| {
                let pair = at + FIXED_PAYLOAD_BYTES + i * COMPLETION_BYTES;
                (u64_at(pair), u64_at(pair + 8))
            })
            .collect();
        Ok(SavedVerifyState {
            depth: u64::from(u32_at(at + 8)),
            writes_issued: u64_at(at + 16),
            completions,
        })
    }

    /// fio 3.33's `verify_state_should_stop` for a read of the write logged at `offset_bytes`
    /// in file 0, with `reads_done` reads of the verify pass completed before it: outside the
    /// window of the last `depth` writes issued every read goes on; inside it, only a write
    /// the saved run saw complete is read, and the first other one stops the verify pass.
    /// fio's unsigned arithmetic is kept (a read past the writes issued wraps and goes on).
    fn should_stop(&self, reads_done: u64, offset_bytes: u64) -> bool {
        let before_window =
            reads_done < self.depth || self.writes_issued.wrapping_sub(reads_done) > self.depth;
        if before_window && self.writes_issued > self.depth {
            return false;
        }
        !self
            .completions
            .iter()
            .any(|&(file, offset)| file == FILE_NUMBER && offset == offset_bytes)
    }
}

/// Where one clone's verify pass stops under `verify_state_load`: its writes are offered in the
/// order fio's verify pass reads them (issue order, which is fio's for a sequential job), and
/// the first one fio would stop at is kept.
#[derive(Debug, Clone)]
pub(crate) struct VerifyCut {
    saved: SavedVerifyState,
    /// Index (from 0, in issue order) of the first write the verify pass does not read.
    first_unchecked_write: Option<u64>,
}

impl VerifyCut {
    pub(crate) fn new(saved: SavedVerifyState) -> Self {
        VerifyCut {
            saved,
            first_unchecked_write: None,
        }
    }

    /// The write numbered `write_index` (from 0, in issue order) at `offset_bytes` was logged
    /// for the verify pass. fio's verify pass reads the log in this order and counts completed
    /// reads; storlab decides as fio's pass at depth 1 would, with every read before this one
    /// completed. At a larger depth fio's count lags by the reads still in flight, which can
    /// move its stop a few reads later: when fewer writes were issued than the saved depth and
    /// the verify depth together, or when the saved run's last writes had not all completed.
    pub(crate) fn note_logged_write(&mut self, write_index: u64, offset_bytes: u64) {
        if self.first_unchecked_write.is_none() && self.saved.should_stop(write_index, offset_bytes)
        {
            self.first_unchecked_write = Some(write_index);
        }
    }

    /// Index of the first logged write the verify pass leaves unchecked, if it stops early.
    pub(crate) fn first_unchecked_write(&self) -> Option<u64> {
        self.first_unchecked_write
    }
}

/// fio's name for the state file of clone `thread_index` of job `name`, in the current
/// directory (one definition, the job crate's, which the front end checks before the run).
pub(crate) fn file_name(name: &str, thread_index: u32) -> PathBuf {
    storlab_job::paths::verify_state_file(name, thread_index)
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

    /// The recorder's own bytes read back: what `file_bytes` wrote is what `load` sees.
    fn saved(depth: u32, writes: u64) -> SavedVerifyState {
        let mut recorder = VerifyStateRecorder::new(depth);
        for block in 0..writes {
            recorder.write_completed(block * 4096);
        }
        SavedVerifyState::parse(&recorder.file_bytes("j", 0, writes, None)).unwrap()
    }

    /// fio 3.33 wrote 10 of 16 blocks (`number_ios=10`, psync), then `verify_only=1
    /// verify_state_load=1` read 40960 bytes: the first 10 writes, stopping at the 11th.
    #[test]
    fn the_verify_pass_stops_at_the_first_write_not_completed() {
        let state = saved(1, 10);
        assert_eq!(state.completions, [(0, 36864)]);
        let mut cut = VerifyCut::new(state);
        for block in 0..16u64 {
            cut.note_logged_write(block, block * 4096);
        }
        assert_eq!(cut.first_unchecked_write(), Some(10));
        // At depth 4 the window holds the last four writes; the fifth after them stops.
        let mut cut = VerifyCut::new(saved(4, 10));
        for block in 0..16u64 {
            cut.note_logged_write(block, block * 4096);
        }
        assert_eq!(cut.first_unchecked_write(), Some(10));
        // A run that completed every write: the verify pass of the same job reads them all.
        let mut cut = VerifyCut::new(saved(4, 16));
        for block in 0..16u64 {
            cut.note_logged_write(block, block * 4096);
        }
        assert_eq!(cut.first_unchecked_write(), None);
    }

    /// Inside the window a write the saved run issued but did not see complete stops the pass
    /// at that write, even before the writes issued run out.
    #[test]
    fn an_issued_write_that_did_not_complete_stops_the_pass() {
        let mut recorder = VerifyStateRecorder::new(4);
        // Issued 0..10, the one at 32768 (write 8) never completed.
        for block in (0..10u64).filter(|b| *b != 8) {
            recorder.write_completed(block * 4096);
        }
        let state = SavedVerifyState::parse(&recorder.file_bytes("j", 0, 10, None)).unwrap();
        let mut cut = VerifyCut::new(state);
        for block in 0..16u64 {
            cut.note_logged_write(block, block * 4096);
        }
        assert_eq!(cut.first_unchecked_write(), Some(8));
    }

    /// Each bad file fio's `verify_load_state` rejects is an error naming what is wrong.
    #[test]
    fn short_wrong_version_and_corrupt_files_are_refused() {
        let good = VerifyStateRecorder::new(1).file_bytes("j", 0, 0, None);
        assert!(SavedVerifyState::parse(&good).is_ok());
        let error = SavedVerifyState::parse(&good[..10]).unwrap_err();
        assert!(error.contains("shorter than the 24-byte"), "{error}");
        let mut version = good.clone();
        version[0] = 2;
        let error = SavedVerifyState::parse(&version).unwrap_err();
        assert!(error.contains("unsupported version 2"), "{error}");
        let error = SavedVerifyState::parse(&good[..good.len() - 1]).unwrap_err();
        assert!(error.contains("announces 152 bytes"), "{error}");
        let mut corrupt = good.clone();
        corrupt[HEADER_BYTES + 30] ^= 1;
        let error = SavedVerifyState::parse(&corrupt).unwrap_err();
        assert!(error.contains("verify state is corrupt"), "{error}");
        // A completion count the payload cannot hold, with a crc that matches.
        let mut payload = good[HEADER_BYTES..].to_vec();
        payload[0] = 3;
        let mut lying = good[..HEADER_BYTES].to_vec();
        let crc = u64::from(crate::fio_verify::fio_crc32c(&payload));
        lying[16..24].copy_from_slice(&crc.to_le_bytes());
        lying.extend_from_slice(&payload);
        let error = SavedVerifyState::parse(&lying).unwrap_err();
        assert!(error.contains("3 completed writes"), "{error}");
        let missing = Path::new("/nonexistent-dir-storlab/local-j-0-verify.state");
        let error = SavedVerifyState::load(missing).unwrap_err();
        assert!(error.contains("local-j-0-verify.state"), "{error}");
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
