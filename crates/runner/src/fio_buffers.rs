//! fio 3.33's write buffers for fio jobs whose bytes do not depend on the clock, byte for
//! byte: filled once per I/O unit when the job starts (backend.c, `init_io_u`) and, with
//! `refill_buffers` (or what implies it), again before each write from the thread's buffer
//! stream (`buf_state`) as io_u.c's `fill_io_buffer` does: in `buffer_compress_chunk` pieces
//! when a share is compressible or repeats, the pattern, zeros, or one random fill otherwise.
//! A `dedupe_percentage` share of buffers regenerate earlier content: from the stream's last
//! saved state (`dedupe_mode=repeat`) or from one of the working set's saved states
//! (`working_set`, dedupe.c), which with `dedupe_global` rotate over every thread of the run.
//! The bytes are lib/rand.c's `__fill_random_buf` (seed buckets and golden-ratio hashing).

use crate::fio_rand::{fio_job_seeds, job_seeds, seed_index, FioRand, FIO_DEFAULT_RANDSEED};
use storlab_job::{DedupeMode, DedupeSpec, FioBufferFill, JobSet, JobSpec};

/// fio's `FIO_RAND_*_OFF` indexes of the seeds the buffers draw from (fio.h; `seed_index` names
/// only the offset streams').
const BUF_SEED_INDEX: usize = 9;
/// `FIO_DEDUPE_OFF`: whether a buffer is a repeat.
const DEDUPE_SEED_INDEX: usize = 14;
/// `FIO_RAND_DEDUPE_WORKING_SET_IX`: which working-set buffer a repeat regenerates.
const WORKING_SET_INDEX_SEED_INDEX: usize = 20;

/// fio's `buffer_compress_chunk` default (options.c: `.def = "512"`): a buffer is filled in
/// pieces of this size, each from its own draw of the stream.
const COMPRESS_CHUNK_BYTES: u64 = 512;
/// `rand_between(&td->dedupe_state, 1, 100)`: a buffer is a repeat when the draw is at most
/// `dedupe_percentage`.
const PERCENT_DRAW_MAX: u64 = 100;
/// A whole chunk, in percent (`buffer_compress_percentage` is its zero share).
const PERCENT_WHOLE: u64 = 100;

/// Which stream `get_buf_state` handed out for a buffer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stream {
    /// `td->buf_state`: new content.
    Main,
    /// `td->buf_state_ret`: a copy of a saved state, regenerating earlier content.
    Repeat,
}

/// One fio thread's buffer streams and dedupe choices.
pub struct FioBuffers {
    /// `dedupe_percentage` (0: none, and no draw of the dedupe stream).
    dedupe: DedupeSpec,
    fill: FioBufferFill,
    /// The thread's seeds when `randrepeat` re-seeds the streams at each loop (libfio.c,
    /// `clear_io_state`); `None` without it.
    loop_seeds: Option<([u64; seed_index::COUNT], bool)>,
    /// The loops whose re-seeding the streams have had.
    reseeds: u32,
    buf_state: FioRand,
    buf_state_prev: FioRand,
    buf_state_ret: FioRand,
    dedupe_state: FioRand,
    working_set_index_state: FioRand,
    working_set_states: Vec<FioRand>,
    /// `buffer_compress_percentage` below 100.
    compress_percent: u64,
    /// `buffer_pattern`: what the compressible part of a chunk holds (zeros without it).
    pattern: Option<Vec<u8>>,
    min_write_bytes: u64,
    /// Without a refill, each I/O unit's buffer as setup filled it and reads left it.
    units: Vec<Vec<u8>>,
    /// The engine completes each I/O before the next is taken (fio's sync engines), so
    /// every I/O takes the unit fio's free list hands out first, the last.
    one_in_flight: bool,
}

/// The initial buffer stream of each thread of `set` (index: fio thread number - 1), as fio
/// seeds `td->buf_state` (init.c, `td_fill_rand_seeds`).
pub fn initial_buffer_states(set: &JobSet) -> Vec<FioRand> {
    let mut states = Vec::new();
    for (job_index, job) in set.jobs.iter().enumerate() {
        let first = set.first_thread_number(job_index);
        for clone in 0..job.numjobs {
            let seeds = thread_seeds(job, first.saturating_add(clone));
            states.push(FioRand::new(seeds[BUF_SEED_INDEX], tausworthe64(job)));
        }
    }
    states
}

/// fio's `rand_seeds[]` of thread `thread_number` running `job`.
fn thread_seeds(job: &JobSpec, thread_number: u32) -> [u64; seed_index::COUNT] {
    match &job.fio_random {
        Some(fio) => fio_job_seeds(fio, thread_number),
        // A job drawing offsets from storlab's generator (`random_generator=lfsr`) still fills
        // buffers from fio's taus streams, seeded as fio's default `randseed`.
        None => job_seeds(FIO_DEFAULT_RANDSEED, thread_number, true),
    }
}

fn tausworthe64(job: &JobSpec) -> bool {
    job.fio_random.as_ref().is_some_and(|fio| fio.tausworthe64)
}

impl FioBuffers {
    /// The buffers of fio thread `thread_number` running `job`, filled as `fill` says, with
    /// `all_threads` every thread's initial stream ([`initial_buffer_states`]).
    pub fn new(
        job: &JobSpec,
        fill: FioBufferFill,
        thread_number: u32,
        all_threads: &[FioRand],
    ) -> Self {
        let seeds = thread_seeds(job, thread_number);
        let use64 = tausworthe64(job);
        // The run's copy, so that a thread and the working sets copying its stream agree
        // even when the seeds come from entropy (`randrepeat=0`).
        let buf_state = all_threads
            .get(thread_number.saturating_sub(1) as usize)
            .cloned()
            .unwrap_or_else(|| FioRand::new(seeds[BUF_SEED_INDEX], use64));
        let dedupe = job.dedupe.unwrap_or(DedupeSpec {
            percent: 0,
            mode: DedupeMode::Repeat,
            working_set_percent: 0,
            global: false,
            size_as_written_bytes: None,
        });
        // A given `randseed` turns fio's `randrepeat` off after seeding (init.c).
        let randrepeat = job
            .fio_random
            .as_ref()
            .is_none_or(|fio| fio.randrepeat && !fio.randseed_given);
        let mut buffers = FioBuffers {
            dedupe,
            fill,
            loop_seeds: randrepeat.then_some((seeds, use64)),
            reseeds: 0,
            buf_state_prev: buf_state.clone(),
            buf_state_ret: buf_state.clone(),
            // init.c: the dedupe draw is always 32-bit (`use64` false).
            dedupe_state: FioRand::new(seeds[DEDUPE_SEED_INDEX], false),
            working_set_index_state: FioRand::new(seeds[WORKING_SET_INDEX_SEED_INDEX], use64),
            working_set_states: Vec::new(),
            buf_state,
            compress_percent: u64::from(fill.compress_percent),
            pattern: job.buffer_pattern.clone(),
            min_write_bytes: job.block_size_write.min_bytes(),
            units: Vec::new(),
            one_in_flight: false,
        };
        if dedupe.percent > 0 && dedupe.mode == DedupeMode::WorkingSet {
            buffers.working_set_states = buffers.working_set(job, thread_number, all_threads);
        }
        buffers
    }

    /// backend.c, `init_io_u`: fio fills each of a writing job's `units` (`iodepth`) I/O
    /// units once, in order, over the largest block, before the first I/O; without a refill
    /// the buffers are kept, as writes carry them. `one_in_flight`: the engine completes each
    /// I/O before the next goes.
    pub fn set_up(&mut self, units: u32, max_block_bytes: u64, one_in_flight: bool) {
        self.one_in_flight = one_in_flight;
        self.units.clear();
        for _ in 0..units {
            let mut buf = vec![0u8; max_block_bytes as usize];
            self.fill(&mut buf);
            if !self.fill.refill {
                self.units.push(buf);
            }
        }
    }

    /// Whether a read's data goes out with the next write of its unit before anything else
    /// could change it: one I/O in flight (every I/O uses the last unit) and no refill. The
    /// worker then queues nothing after a read until the read is done, as fio's sync engines
    /// do each I/O before taking the next.
    pub fn reads_feed_next_write(&self) -> bool {
        self.one_in_flight && !self.fill.refill
    }

    /// The I/O unit an I/O in the worker's slot `relative_slot` stands for. fio's free list
    /// hands the last unit out first and takes each back on top, as the worker's free slots
    /// go from its first: slot `k` is unit `iodepth - 1 - k`, and with one I/O in flight the
    /// last unit serves every I/O.
    fn unit_of(&self, relative_slot: u32) -> usize {
        let last = self.units.len().saturating_sub(1);
        if self.one_in_flight {
            last
        } else {
            last.saturating_sub(relative_slot as usize)
        }
    }

    /// `buf` (a write's whole length, in slot `relative_slot`) as fio's `get_io_u` leaves it:
    /// refilled, or its unit's buffer as setup or a read left it.
    pub fn fill_write(&mut self, buf: &mut [u8], relative_slot: u32, offset_bytes: u64) {
        if self.fill.refill {
            self.fill(buf);
            return;
        }
        let untimed_scramble = self.fill.untimed_scramble;
        let unit = self.unit_of(relative_slot);
        if let Some(unit) = self.units.get_mut(unit) {
            let len = buf.len().min(unit.len());
            if untimed_scramble {
                // fio scrambles the unit's own buffer: the marks stay for its next write.
                scramble_untimed(&mut unit[..len], offset_bytes);
            }
            buf[..len].copy_from_slice(&unit[..len]);
        }
    }

    /// A read in slot `relative_slot` brought `data` into its unit's buffer, which the unit's
    /// next write carries when nothing refills it (fio reads into `io_u->buf`).
    pub fn read_into_unit(&mut self, data: &[u8], relative_slot: u32) {
        if self.fill.refill {
            return;
        }
        let unit = self.unit_of(relative_slot);
        if let Some(unit) = self.units.get_mut(unit) {
            let len = data.len().min(unit.len());
            unit[..len].copy_from_slice(&data[..len]);
        }
    }

    /// init.c, `td_fill_rand_seeds` (from libfio.c's `clear_io_state` at each loop with
    /// `randrepeat`): the buffer, dedupe and working-set index streams start over when the
    /// job's loops so far, `loops_reseeded`, pass the ones already taken.
    pub fn follow_loops(&mut self, loops_reseeded: u32) {
        let Some((seeds, use64)) = self.loop_seeds else {
            return;
        };
        if loops_reseeded <= self.reseeds {
            return;
        }
        self.reseeds = loops_reseeded;
        self.buf_state = FioRand::new(seeds[BUF_SEED_INDEX], use64);
        self.buf_state_prev = self.buf_state.clone();
        self.dedupe_state = FioRand::new(seeds[DEDUPE_SEED_INDEX], false);
        self.working_set_index_state = FioRand::new(seeds[WORKING_SET_INDEX_SEED_INDEX], use64);
    }

    /// dedupe.c, `init_dedupe_working_set_seeds`: state `i` regenerates the `i`-th buffer the
    /// stream would make; with `dedupe_global` the states rotate to the next thread's stream
    /// every `pages / threads` buffers.
    fn working_set(
        &self,
        job: &JobSpec,
        thread_number: u32,
        all_threads: &[FioRand],
    ) -> Vec<FioRand> {
        let pages = self
            .dedupe
            .working_set_blocks(fio_size_bytes(job), self.min_write_bytes);
        let advances_per_page =
            self.min_write_bytes / min_not_zero(self.min_write_bytes, COMPRESS_CHUNK_BYTES);
        let threads = (all_threads.len() as u64).max(1);
        let pages_per_seed = (pages / threads).max(1);
        let mut thread_index = u64::from(thread_number.saturating_sub(1));
        let mut state = self.buf_state.clone();
        let mut states = Vec::with_capacity(pages as usize);
        states.push(state.clone());
        for page in 1..pages {
            for _ in 0..advances_per_page {
                next_seed(&mut state);
            }
            if self.dedupe.global && page % pages_per_seed == 0 {
                thread_index += 1;
                if let Some(other) = all_threads.get((thread_index % threads) as usize) {
                    state = other.clone();
                }
            }
            states.push(state.clone());
        }
        states
    }

    /// io_u.c `fill_io_buffer`: `buf` (a write's whole length) in chunks of
    /// `min(min_bs[write], buffer_compress_chunk)` with one stream choice per buffer when a
    /// share is compressible or repeats; else the pattern, zeros or one random fill.
    pub fn fill(&mut self, buf: &mut [u8]) {
        if self.dedupe.percent == 0 && self.compress_percent == 0 {
            match self.pattern.as_deref().filter(|p| !p.is_empty()) {
                Some(pattern) => crate::pattern::fill_repeated(buf, pattern),
                None if self.fill.zero => buf.fill(0),
                // fio's last branch, `fill_random_buf` over the whole buffer from one seed
                // (lib/rand.c).
                None => storlab_pattern::fio::fill_random(buf, next_seed(&mut self.buf_state)),
            }
            return;
        }
        let mut min_write = self.min_write_bytes;
        let mut stream = None;
        let mut at = 0usize;
        while at < buf.len() {
            let chosen = *stream.get_or_insert_with(|| self.choose_stream());
            let left = (buf.len() - at) as u64;
            min_write = min_write.min(left);
            let this_write = min_not_zero(min_write, COMPRESS_CHUNK_BYTES) as usize;
            let seed = next_seed(self.stream_mut(chosen));
            fill_percentage(
                &mut buf[at..at + this_write],
                seed,
                self.compress_percent,
                self.pattern.as_deref(),
            );
            at += this_write;
            self.save(chosen);
        }
    }

    fn stream_mut(&mut self, stream: Stream) -> &mut FioRand {
        match stream {
            Stream::Main => &mut self.buf_state,
            Stream::Repeat => &mut self.buf_state_ret,
        }
    }

    /// io_u.c, `get_buf_state`.
    fn choose_stream(&mut self) -> Stream {
        if self.dedupe.percent == 0 {
            return Stream::Main;
        }
        if self.dedupe.percent >= 100 {
            self.buf_state_prev = self.buf_state.clone();
            return Stream::Main;
        }
        let draw = self.dedupe_state.between(1, PERCENT_DRAW_MAX);
        if draw > u64::from(self.dedupe.percent) {
            return Stream::Main;
        }
        self.buf_state_ret = match self.dedupe.mode {
            DedupeMode::Repeat => self.buf_state_prev.clone(),
            DedupeMode::WorkingSet => {
                let last = self.working_set_states.len().saturating_sub(1) as u64;
                let index = self.working_set_index_state.between(0, last);
                self.working_set_states[index as usize].clone()
            }
        };
        Stream::Repeat
    }

    /// io_u.c, `save_buf_state`: at 100% every chunk restarts from the buffer's first state;
    /// else new content moves the saved state on.
    fn save(&mut self, stream: Stream) {
        if self.dedupe.percent >= 100 {
            self.buf_state = self.buf_state_prev.clone();
        } else if stream == Stream::Main {
            self.buf_state_prev = self.buf_state.clone();
        }
    }
}

/// io_u.c `small_content_scramble` with `io_u->start_time` zero: in each 512-byte sector the
/// sector's offset at the start of line `offset & 7` (of eight 64-byte lines) and the time,
/// zero, in the first line's last 16 bytes.
fn scramble_untimed(buf: &mut [u8], offset_bytes: u64) {
    const SECTOR: usize = 512;
    const LINE: usize = 64;
    let line_start = (offset_bytes & 7) as usize * LINE;
    let mut sector_offset = offset_bytes;
    for sector in buf.chunks_exact_mut(SECTOR) {
        sector[line_start..line_start + 8].copy_from_slice(&sector_offset.to_le_bytes());
        sector[LINE - 16..LINE].fill(0);
        sector_offset += SECTOR as u64;
    }
}

/// fio's `o->size` when dedupe.c sizes the working set: the `size` the job wrote (a job spec
/// saved before that was kept: its region's size).
fn fio_size_bytes(job: &JobSpec) -> u64 {
    job.dedupe
        .and_then(|d| d.size_as_written_bytes)
        .or(job.size_bytes)
        .unwrap_or(0)
}

fn min_not_zero(a: u64, b: u64) -> u64 {
    match (a, b) {
        (0, b) => b,
        (a, 0) => a,
        (a, b) => a.min(b),
    }
}

/// lib/rand.h `__get_next_seed` on a 64-bit machine: the product of two draws.
fn next_seed(state: &mut FioRand) -> u64 {
    let first = state.next();
    first.wrapping_mul(state.next())
}

/// lib/rand.c `__fill_random_buf_percentage` with `segment == len`: the chunk's first
/// `100 - percent` share random, the rest zeros or the pattern.
fn fill_percentage(buf: &mut [u8], seed: u64, percent: u64, pattern: Option<&[u8]>) {
    let len = buf.len();
    fill_percentage_window(buf, seed, percent, pattern, len, 0);
}

/// Bytes `start..start + out.len()` of fio's `__fill_random_buf_percentage` over a buffer of
/// `len` bytes with `segment == len` (verify.c `__fill_buffer`: a verify write's whole buffer
/// from one seed): its first `100 - percent` share random, the rest zeros or `pattern` from
/// the rest's start. Any window costs as much as its own bytes, so the read-back can
/// regenerate one granule of a long write.
pub(crate) fn fill_percentage_window(
    out: &mut [u8],
    seed: u64,
    percent: u64,
    pattern: Option<&[u8]>,
    len: usize,
    start: usize,
) {
    let random_len =
        ((len as u64 * (PERCENT_WHOLE - percent.min(PERCENT_WHOLE))) / PERCENT_WHOLE) as usize;
    storlab_pattern::fio::fill_segment_window(out, seed, random_len, pattern, start);
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_job::{EngineKind, Target};

    /// What `dedupe_percentage` alone makes of fio's buffers: a refill before every write.
    const REFILL: FioBufferFill = FioBufferFill {
        untimed_scramble: false,
        refill: true,
        compress_percent: 0,
        zero: false,
    };

    fn job(dedupe: DedupeSpec) -> JobSpec {
        let mut job = JobSpec::new("dedupe", EngineKind::Null, Target::None);
        job.size_bytes = Some(1 << 20);
        job.dedupe = Some(dedupe);
        job
    }

    fn dedupe(percent: u8, mode: DedupeMode) -> DedupeSpec {
        DedupeSpec {
            percent,
            mode,
            working_set_percent: 5,
            global: false,
            size_as_written_bytes: None,
        }
    }

    fn buffers_of(job: &JobSpec, count: usize) -> Vec<Vec<u8>> {
        let mut buffers = FioBuffers::new(job, REFILL, 1, &[]);
        (0..count)
            .map(|_| {
                let mut buf = vec![0u8; 4096];
                buffers.fill(&mut buf);
                buf
            })
            .collect()
    }

    fn distinct(buffers: &[Vec<u8>]) -> usize {
        buffers
            .iter()
            .collect::<std::collections::HashSet<_>>()
            .len()
    }

    #[test]
    fn compressible_chunks_end_in_zeros_or_the_pattern() {
        let mut buf = [0xAAu8; 512];
        fill_percentage(&mut buf, 7, 25, None);
        assert!(buf[384..].iter().all(|b| *b == 0));
        assert!(buf[..384].iter().any(|b| *b != 0));
        fill_percentage(&mut buf, 7, 50, Some(&[1, 2, 3]));
        assert_eq!(buf[256..262], [1, 2, 3, 1, 2, 3]);
    }

    #[test]
    fn without_repeats_every_buffer_differs_and_at_100_percent_all_repeat() {
        let unique = buffers_of(&job(dedupe(1, DedupeMode::Repeat)), 200);
        assert!(distinct(&unique) >= 195, "{}", distinct(&unique));
        let same = buffers_of(&job(dedupe(100, DedupeMode::Repeat)), 50);
        assert_eq!(distinct(&same), 1);
        // At 100% every 512-byte chunk restarts from the buffer's first state.
        assert!(same[0].chunks(512).all(|chunk| chunk == &same[0][..512]));
    }

    #[test]
    fn the_repeat_share_follows_dedupe_percentage() {
        for (percent, mode) in [(30, DedupeMode::Repeat), (40, DedupeMode::WorkingSet)] {
            let buffers = buffers_of(&job(dedupe(percent, mode)), 2000);
            let repeated = 1.0 - distinct(&buffers) as f64 / buffers.len() as f64;
            let expected = f64::from(percent) / 100.0;
            // Binomial: 2000 draws give a standard deviation of about 0.011.
            assert!((repeated - expected).abs() < 0.04, "{mode:?}: {repeated}");
        }
    }

    #[test]
    fn working_set_repeats_regenerate_the_streams_first_buffers() {
        let job = job(dedupe(50, DedupeMode::WorkingSet));
        // 5% of 1 MiB in whole 4 KiB blocks, as fio rounds it: 12.
        let pages = dedupe(50, DedupeMode::WorkingSet).working_set_blocks(1 << 20, 4096);
        assert_eq!(pages, 12);
        let mut plain = FioBuffers::new(&job, REFILL, 1, &[]);
        let mut firsts = Vec::new();
        for _ in 0..pages {
            let mut buf = vec![0u8; 4096];
            let stream = Stream::Main;
            for chunk in buf.chunks_mut(512) {
                let seed = next_seed(plain.stream_mut(stream));
                fill_percentage(chunk, seed, 0, None);
            }
            firsts.push(buf);
        }
        let buffers = buffers_of(&job, 400);
        let first_set: std::collections::HashSet<_> = firsts.iter().collect();
        let repeats = buffers.iter().filter(|b| first_set.contains(b)).count();
        assert!(
            repeats > 150,
            "{repeats} of 400 buffers are working-set buffers"
        );
    }

    #[test]
    fn a_window_of_a_verify_fill_is_those_bytes_of_the_whole_fill() {
        let pattern = [0xde, 0xad, 0xbe];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |bound: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) as usize % bound
        };
        for case in 0..400 {
            let len = 1 + next(9000);
            let percent = [0, 0, 25, 50, 99][case % 5] as u64;
            let with_pattern = case % 3 == 0;
            let pattern = with_pattern.then_some(&pattern[..]);
            let seed = (case as u64).wrapping_mul(0x0123_4567_89ab_cdef) | 1;
            // The whole buffer as lib/rand.c lays it: the random share, then the rest.
            let mut whole = vec![0u8; len];
            let random_len = len * (100 - percent as usize) / 100;
            storlab_pattern::fio::fill_random(&mut whole[..random_len], seed);
            if let Some(pattern) = pattern {
                for (dst, src) in whole[random_len..].iter_mut().zip(pattern.iter().cycle()) {
                    *dst = *src;
                }
            }
            let start = next(len);
            let window_len = next(len - start + 1);
            let mut window = vec![0xffu8; window_len];
            fill_percentage_window(&mut window, seed, percent, pattern, len, start);
            assert_eq!(
                window,
                whole[start..start + window_len],
                "len {len} percent {percent} start {start} window {window_len}"
            );
        }
    }
}
