//! What a job's writes carry: its data pattern, fio's dedupe buffers and how fio fills write
//! buffers.

use serde::{Deserialize, Serialize};

/// The data written (and expected back when verifying).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "percent")]
pub enum DataPattern {
    /// Incompressible pseudo-random bytes (the default: flatters no compressing controller).
    Random,
    /// All zeros (maximally compressible).
    Zeros,
    /// Each buffer is this percentage compressible (fio `buffer_compress_percentage`).
    Compressible(u8),
}

/// fio 3.33's deduplicable write buffers (`dedupe_percentage`, `dedupe_mode`,
/// `dedupe_working_set_percentage`, `dedupe_global`; io_u.c `fill_io_buffer`, dedupe.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DedupeSpec {
    /// `dedupe_percentage`: the share (1..=100) of write buffers that repeat earlier content.
    pub percent: u8,
    /// `dedupe_mode`: which earlier content a repeat carries.
    pub mode: DedupeMode,
    /// `dedupe_working_set_percentage` (fio's default 5): the share of `size` whose buffers the
    /// `working_set` mode repeats from.
    pub working_set_percent: u8,
    /// `dedupe_global`: the working set is spread over every thread of the run, so jobs repeat
    /// each other's buffers.
    pub global: bool,
    /// fio's `size` as the job wrote it, in bytes: dedupe.c sizes the working set from
    /// `o->size` before `setup_files`, so `filesize` (which makes a smaller `size` the job's
    /// bytes over a larger region) does not change it.
    #[serde(default)]
    pub size_as_written_bytes: Option<u64>,
}

impl DedupeSpec {
    /// Blocks of `block_bytes` in the working set of a job of `size_bytes` (dedupe.c:
    /// `size * dedupe_working_set_percentage / 100 / min_bs[DDIR_WRITE]`, in integers).
    pub fn working_set_blocks(&self, size_bytes: u64, block_bytes: u64) -> u64 {
        let share_bytes = u128::from(size_bytes) * u128::from(self.working_set_percent) / 100;
        u64::try_from(share_bytes / u128::from(block_bytes.max(1))).unwrap_or(u64::MAX)
    }
}

/// fio's `dedupe_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DedupeMode {
    /// `repeat` (fio's default): a repeat regenerates from the buffer stream's last saved state.
    Repeat,
    /// `working_set`: a repeat regenerates one of the working set's buffers, drawn uniformly.
    WorkingSet,
}

/// How fio 3.33 fills a fio job's write buffers when its bytes do not depend on the clock
/// (init.c `fixup_options` and `td_set_flags`, options.c's buffer callbacks, io_u.c
/// `fill_io_buffer`): refilled before every write, or filled once when the job starts and
/// written as they are (what a read into the same buffer leaves in it included).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FioBufferFill {
    /// fio's `TD_F_REFILL_BUFFERS`: `refill_buffers`, a compressible share below 100 without
    /// `refill_buffers=0`, `dedupe_percentage`, or `buffer_pattern` in a job that reads.
    pub refill: bool,
    /// `buffer_compress_percentage` below 100 (fio turns 100 into `zero_buffers`).
    pub compress_percent: u8,
    /// `zero_buffers` (or a share of 100): buffers of zeros unless a pattern or a share says
    /// otherwise.
    pub zero: bool,
    /// fio's default scramble of each write with a start time it never took (`disable_lat`,
    /// or `gtod_reduce`, leaves `io_u->start_time` zero, io_u.c `get_io_u`): the sectors'
    /// offsets on the first line and zeros for the time, the same every run.
    #[serde(default)]
    pub untimed_scramble: bool,
}
