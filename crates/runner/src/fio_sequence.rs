//! The I/O sequence of one fio thread as fio 3.33 draws it (io_u.c, `fill_io_u`): the
//! direction from `rwmix_state`, the random/sequential choice from `seq_rand_state`, the
//! offset from `random_state` through the random map, the size from `bsrange_state`, each
//! seeded as fio seeds thread `thread_number`, so a fio job issues fio's own I/O in fio's order.

use crate::axmap::Axmap;
use crate::distribution::{fio_distribution_seed, FioDistribution};
use crate::fio_rand::{fio_job_seeds, seed_index, FioRand};
use crate::fio_zones::FioZones;
use crate::lfsr::Lfsr;
use crate::offsets::{PlannedIo, Region};
use bounds::seq_add_bytes;
use bounds::{fio_io_size_bytes, fio_map_bytes, fio_mmap_window_bytes, loop_bounds};
use file_service::{FileService, ResetStep};
use storlab_engine::IoDirection;
use storlab_job::{
    BlockSizeShare, BlockSizeSpec, FioRandom, JobSpec, RandomDistribution, RwModifier,
    StridedZones, Target, TrimMode,
};
use units::UnitFlags;

/// Index of reads and writes in fio's per-direction arrays (`DDIR_READ`, `DDIR_WRITE`).
const READ: usize = 0;
const WRITE: usize = 1;

/// Percent scale of fio's `rwmix` and `percentage_random` draws (`rand_between(s, 1, 100)`).
const PERCENT: u64 = 100;

/// One direction's block sizes as fio holds them (`min_bs`, `max_bs`, `bssplit` sorted by
/// share, as options.c's `bs_cmp` sorts them) and its offset spacing (`ba`, `blockalign`).
struct Sizes {
    min_bytes: u64,
    max_bytes: u64,
    split: Vec<BlockSizeShare>,
    align_bytes: u64,
    /// `log2(min_bytes)` when it is a power of two: the map's block of an offset by a shift
    /// instead of a division, on every I/O.
    min_shift: Option<u32>,
    /// fio's `last_block` for this direction: the blocks a random offset is drawn among
    /// (fixed for the region, so computed once).
    last_block: u64,
}

impl Sizes {
    fn new(spec: &BlockSizeSpec, job: &JobSpec) -> Self {
        let (min_bytes, max_bytes) = (spec.min_bytes().max(1), spec.max_bytes().max(1));
        let mut split = match spec {
            BlockSizeSpec::Split(shares) => shares.clone(),
            _ => Vec::new(),
        };
        split.sort_by_key(|share| share.percent);
        // fio's `blockalign` defaults to the smallest block; storlab keeps its own alignment
        // under it (docs/job-format.md, `blockalign`).
        let align = job.align_bytes.max(1);
        let align_bytes = if job.align_given {
            align
        } else {
            min_bytes.next_multiple_of(align)
        };
        Sizes {
            min_bytes,
            max_bytes,
            split,
            align_bytes,
            min_shift: min_bytes
                .is_power_of_two()
                .then(|| min_bytes.trailing_zeros()),
            last_block: 0,
        }
    }

    /// Blocks of the smallest size in `bytes` (rounded down, or up when `round_up`).
    #[inline]
    fn blocks(&self, bytes: u64, round_up: bool) -> u64 {
        let bytes = if round_up {
            bytes + self.min_bytes - 1
        } else {
            bytes
        };
        match self.min_shift {
            Some(shift) => bytes >> shift,
            None => bytes / self.min_bytes,
        }
    }

    /// io_u.c, `last_block`: places `blockalign` apart where a smallest block still fits in
    /// `usable_bytes` (the region, or the file if shorter).
    fn set_last_block(&mut self, usable_bytes: u64) {
        let mut max_bytes = usable_bytes;
        if self.min_bytes > self.align_bytes {
            // A strided zone's range can be shorter than a block: no place fits (fio's u64
            // wraps there, for a sequential job that never draws one).
            max_bytes = max_bytes.saturating_sub(self.min_bytes - self.align_bytes);
        }
        self.last_block = max_bytes / self.align_bytes;
    }
}

/// One fio thread's streams and file position.
pub struct FioSequence {
    seeds: [u64; seed_index::COUNT],
    use64: bool,
    /// fio's `randrepeat` as its threads run (`FioRandom::reseeds_each_loop`): every loop
    /// re-seeds the streams.
    randrepeat: bool,
    /// Loops that re-seeded the streams so far (fio's `clear_io_state` re-seeds every stream
    /// of the thread, its command priorities' `prio_state` too).
    pub(crate) reseeds: u32,
    /// Loops begun after the first (fio's `keep_running` turns), re-seeded or not.
    pub(crate) passes: u32,
    /// The offset fio's last failed placement left on its I/O unit (`io_u->offset` is set
    /// before the check that fails: relative to the region when it failed against `io_size`,
    /// absolute after), `None` when the placement failed before choosing one. fio's end
    /// sync takes the I/O unit freed last, so it logs this offset (backend.c, `fio_io_sync`).
    pub(crate) attempted_offset_bytes: Option<u64>,
    /// `attempted_offset_bytes` as the last loop ended (`None`: it ended on its bytes).
    pub(crate) loop_end_offset_bytes: Option<u64>,
    /// A job with writes only.
    write_only: bool,
    /// A job with trims (`rw=trim`, `randtrim`, `randtrimwrite`): fio's `DDIR_TRIM`, which
    /// storlab keeps in the read slot of its per-direction arrays (a trim job reads nothing
    /// and its read sizes are its trims').
    trim: TrimMode,
    /// `randtrimwrite`: each trim followed by a write of its offset and length, which takes
    /// nothing from the map or the size streams (io_u.c, `get_next_block`, `get_next_buflen`).
    random_trim_write: bool,
    /// Where each direction's last I/O started (fio's `last_start`, `u64::MAX` for none): a
    /// trim/write job writes when the last write did not start where the last trim did.
    last_start_bytes: [u64; 2],
    /// Write sizes draw from the read seed when the job verifies (init.c: read-back must
    /// regenerate the same sizes).
    write_sizes_from_read_seed: bool,
    random_state: FioRand,
    seq_rand_state: [FioRand; 2],
    rwmix_state: FioRand,
    bsrange_state: [FioRand; 2],
    map: Option<Axmap>,
    /// fio's LFSR (`random_generator=lfsr`), which replaces `random_state` and the map for
    /// random offsets; `None` in a job with it where fio's `lfsr_init` fails.
    lfsr: Option<Lfsr>,
    lfsr_job: bool,
    /// fio's Zipf, Pareto or Gauss generator (`random_distribution`), which replaces the
    /// offset stream, the map and the LFSR for random offsets.
    distribution: Option<FioDistribution>,
    /// Set where fio 3.33 does what storlab cannot follow (why: its Gauss draw never returns,
    /// its map runs into the heap): the job ends.
    fio_unfollowed: Option<String>,
    /// What fio's mmap engine maps (`bounds::fio_mmap_window_bytes`).
    mmap_window_bytes: Option<u64>,
    /// fio's zoned distributions (`zoned`, `zoned_abs`): the zone of each random offset.
    zones: Option<FioZones>,
    /// fio's `file_offset` (the region's start), `io_size` (its length) and `real_file_size`.
    region: Region,
    file_size_bytes: u64,
    /// Where each direction's next sequential I/O starts (fio's `last_pos`), absolute.
    last_pos_bytes: [u64; 2],
    sizes: [Sizes; 2],
    /// fio's `perc_rand`.
    random_percent: [u64; 2],
    random_job: bool,
    /// fio's `td_random`: the job's `rw` is a rand* mode, whatever its random share.
    rand_mode: bool,
    /// fio's `rwmix`, for a mixed job.
    rwmix: Option<[u64; 2]>,
    rwmix_direction: usize,
    rwmix_issues: u64,
    io_issues: [u64; 2],
    /// fio's `ddir_seq_nr` (`rw=randMODE:N`) and its countdown.
    random_every_ios: u64,
    /// fio's `rw_sequencer=identical`: the I/Os between new random offsets repeat the last
    /// one's offset (io_u.c, `get_next_block`, RW_SEQ_IDENT).
    repeat_between: bool,
    /// fio's `bs_is_seq_rand`: sizes by sequential or random offset, not by direction.
    bs_is_seq_rand: bool,
    /// fio's `bs_unaligned`: drawn sizes are any byte count, not multiples of the smallest.
    bs_unaligned: bool,
    random_countdown: u64,
    /// fio's `ddir_seq_add` (`rw=MODE:SIZE`, negative for `rw=MODE:-SIZE`).
    seq_add_bytes: i64,
    time_based: bool,
    /// backend.c's two byte bounds: one loop (`do_io`'s `total_bytes`: `size`, or `io_size` if
    /// larger for a random write without the map) and the whole job (`io_bytes_exceeded`:
    /// `io_size`, else `size`, times `loops`, counted over every loop), the loops left, and
    /// what this loop and the whole job have moved.
    pass_bytes: u64,
    job_bytes: u64,
    passes_left: u32,
    moved_bytes: u64,
    job_moved_bytes: u64,
    /// What `io_bytes_exceeded` counts of it: a trim/write job's writes only (fio counts the
    /// directions of the job's mode, and a trim/write job is a writing one).
    job_limit_bytes: u64,
    /// `keep_running`'s bound after the loops: `io_size`, else `size` (not times `loops`), and
    /// whether `io_size` was given (without it, a job whose file is done stops there).
    keep_running_bytes: u64,
    io_size_given: bool,
    file_service: FileService,
    /// A verify job: fio's `clear_io_state` before each verify pass clears the files' done
    /// marks (libfio.c, `reset_io_counters` with `do_verify`), so a loop that ended at its
    /// file's end is not the job's end while its bytes are short.
    verify_reopens_files: bool,
    /// A verify job's bytes written this loop and read back by the passes so far: fio counts a
    /// verify pass's reads in the bytes `keep_running` weighs (`td->io_bytes`), and each pass
    /// reads back what its loop wrote.
    loop_written: crate::fio_history::FioHistory,
    read_back_bytes: u64,
    largest_block_bytes: u64,
    /// Where the loops after the first start, when fio's start moves with its file
    /// (`fio_later_loops_start`); the region keeps its length, the file its end.
    later_loops_start_bytes: Option<u64>,
    /// `zonemode=strided`: the region's start is fio's `file_offset`, moved a zone on once
    /// `zone_bytes` reach the zone's size (`setup_strided_zone_mode`).
    strided: Option<StridedZones>,
    /// How far past fio's start a drawn size may end (`io_u_fits`: `io_size`).
    fit_len_bytes: u64,
    zone_bytes: u64,
    /// Where fio's start is taken at each loop (`get_start_offset`).
    first_start_bytes: u64,
    /// fio's I/O units' `IO_U_F_BUSY_OK` flags.
    units: UnitFlags,
}

impl FioSequence {
    /// The sequence of fio's thread `thread_number` running `job` over `region` of a target of
    /// `file_size_bytes`.
    pub fn new(
        job: &JobSpec,
        fio: &FioRandom,
        region: Region,
        file_size_bytes: u64,
        thread_number: u32,
    ) -> Self {
        let seeds = fio_job_seeds(fio, thread_number);
        let mut sizes = [
            Sizes::new(&job.block_size_read, job),
            Sizes::new(&job.block_size_write, job),
        ];
        let map_bytes = fio_map_bytes(job, region, file_size_bytes);
        sizes.iter_mut().for_each(|s| s.set_last_block(map_bytes));
        let random_percent = [job.random_percent, job.random_percent_writes()].map(u64::from);
        let random_job = random_percent.iter().any(|p| *p > 0);
        let distribution_bytes = fio_io_size_bytes(job, region).min(file_size_bytes);
        let mapped_job = random_job || fio.rand_mode;
        let (map, lfsr, distribution) = offset_generators(
            job,
            (map_bytes, distribution_bytes),
            mapped_job,
            (fio.lfsr, seeds[seed_index::BLOCK]),
            distribution_seed(job, fio, &seeds, thread_number),
        );
        let lfsr_job = mapped_job && fio.lfsr && distribution.is_none();
        let random_every_ios = u64::from(job.rw_modifier.random_every_ios().unwrap_or(1).max(1));
        let read = u64::from(job.read_percent);
        let (pass_bytes, job_bytes, passes) = loop_bounds(job, region, random_job);
        let mut sequence = FioSequence {
            seeds,
            randrepeat: fio.reseeds_each_loop(),
            reseeds: 0,
            passes: 0,
            attempted_offset_bytes: None,
            loop_end_offset_bytes: None,
            write_only: read == 0,
            trim: job.trim,
            random_trim_write: job.trim == TrimMode::TrimWrite && random_job,
            last_start_bytes: [u64::MAX; 2],
            use64: fio.tausworthe64,
            // init.c `td_fill_rand_seeds_internal`: any verify kind (`do_verify=0` too).
            write_sizes_from_read_seed: job.verify || job.verify_spec.is_some(),
            random_state: FioRand::new(0, false),
            seq_rand_state: [FioRand::new(0, false), FioRand::new(0, false)],
            rwmix_state: FioRand::new(0, false),
            bsrange_state: [FioRand::new(0, false), FioRand::new(0, false)],
            map,
            lfsr,
            lfsr_job,
            distribution,
            fio_unfollowed: None,
            mmap_window_bytes: fio_mmap_window_bytes(job, region),
            zones: FioZones::new(&job.random_distribution),
            region,
            file_size_bytes,
            last_pos_bytes: [region.start_bytes; 2],
            sizes,
            random_percent,
            random_job,
            rand_mode: fio.rand_mode,
            rwmix: rwmix_shares(read),
            rwmix_direction: READ,
            rwmix_issues: 0,
            io_issues: [0; 2],
            random_every_ios,
            repeat_between: matches!(job.rw_modifier, RwModifier::RepeatEveryIos(_)),
            bs_is_seq_rand: job.bs_is_seq_rand,
            bs_unaligned: job.bs_unaligned,
            random_countdown: 1, // init.c: the first I/O is random (`td->ddir_seq_nr = 1`).
            seq_add_bytes: seq_add_bytes(job.rw_modifier),
            time_based: job.time_based && job.runtime_ns.is_some(),
            pass_bytes: pass_bytes.max(1),
            job_bytes: job_bytes.max(1),
            passes_left: passes,
            moved_bytes: 0,
            job_moved_bytes: 0,
            job_limit_bytes: 0,
            keep_running_bytes: crate::offsets::clone_io_size_bytes(job, region)
                .unwrap_or(fio_io_size_bytes(job, region)),
            io_size_given: job.fio_loops_past_a_done_file(),
            file_service: FileService::of(job),
            verify_reopens_files: job.verify,
            loop_written: crate::fio_history::FioHistory::new(
                crate::verify_seeds::fio_logs_writes_in_a_list(job),
            ),
            read_back_bytes: 0,
            largest_block_bytes: job.max_block_bytes(),
            later_loops_start_bytes: None,
            strided: job.strided_zones,
            fit_len_bytes: fio_io_size_bytes(job, region),
            zone_bytes: 0,
            first_start_bytes: region.start_bytes,
            units: UnitFlags::default(),
        };
        sequence.seed_streams();
        sequence
    }

    /// The loops after the first start at `start_bytes` (fio's null engine with a start given
    /// as a share: `fio_later_loops_start`).
    pub fn start_later_loops_at(&mut self, start_bytes: Option<u64>) {
        self.later_loops_start_bytes = start_bytes;
    }

    /// init.c, `td_fill_rand_seeds`: every stream from its own seed (again at each loop with
    /// `randrepeat`, libfio.c `clear_io_state`).
    fn seed_streams(&mut self) {
        let seeds = &self.seeds;
        let use64 = self.use64;
        let write_seed = if self.write_sizes_from_read_seed {
            seeds[seed_index::BS_READ]
        } else {
            seeds[seed_index::BS_WRITE]
        };
        // A trim job's sizes come from `bsrange_state[DDIR_TRIM]`: its own seed, a trim/write
        // job's the write seed ("the same offsets to get the write after trim effect").
        let read_slot_seed = match self.trim {
            TrimMode::None => seeds[seed_index::BS_READ],
            TrimMode::Trim => seeds[seed_index::BS_TRIM],
            TrimMode::TrimWrite => write_seed,
        };
        self.bsrange_state = [
            FioRand::new(read_slot_seed, use64),
            FioRand::new(write_seed, use64),
        ];
        // fio draws the mix and the random/sequential choice from 32-bit streams always.
        self.rwmix_state = FioRand::new(seeds[seed_index::MIX], false);
        self.random_state = FioRand::new(seeds[seed_index::BLOCK], use64);
        if let Some(zones) = self.zones.as_mut() {
            zones.state = FioRand::new(seeds[seed_index::ZONE], false);
        }
        let seq_rand = FioRand::new(seeds[seed_index::SEQ_RAND_READ], false);
        self.seq_rand_state = [seq_rand.clone(), seq_rand];
    }

    /// fio's `fio_file_reset`: both directions back at the region's start, the map empty,
    /// the LFSR back at its seed.
    fn reset_file(&mut self) {
        self.last_pos_bytes = [self.region.start_bytes; 2];
        self.last_start_bytes = [u64::MAX; 2];
        if let Some(map) = self.map.as_mut() {
            map.reset();
        }
        if let Some(lfsr) = self.lfsr.as_mut() {
            lfsr.reset(self.seeds[seed_index::BLOCK]);
        }
    }

    /// The random offset stream's state as fio's verify state file stores it at the job's end:
    /// 64-bit or not, and its words; `None` for a job without random offsets (fio never seeds
    /// that stream then, and writes zeros). A read-back phase starts with fio's
    /// `clear_io_state`, which re-seeds with `randrepeat`: the state is then the fresh one.
    pub fn random_state(&self, read_back: bool) -> Option<(bool, Vec<u64>)> {
        if !self.random_job {
            return None;
        }
        let words = if read_back && self.randrepeat {
            FioRand::new(self.seeds[seed_index::BLOCK], self.use64).words()
        } else {
            self.random_state.words()
        };
        Some((self.use64, words))
    }

    /// Where fio's close of a file no I/O finds room in fails (`FileService`), the reason
    /// the job stops, kept; whether it does.
    fn fio_close_fails(&mut self) -> bool {
        self.fio_unfollowed = self.file_service.close_after_failed_fill();
        self.fio_unfollowed.is_some()
    }

    /// The next I/O, in `forced` direction if given (a rate holding the other back), or `None`
    /// when fio would end the job here.
    pub fn next(&mut self, forced: Option<IoDirection>) -> Option<PlannedIo> {
        loop {
            if !self.time_based {
                if self.job_limit_bytes >= self.job_bytes {
                    // backend.c: a loop begun past the job's bytes issues nothing, and a loop
                    // that issues nothing terminates the job.
                    return None;
                }
                if self.moved_bytes >= self.pass_bytes {
                    self.next_pass(false)?;
                }
            }
            let filled = self.fill(forced);
            if self.fio_unfollowed.is_some() {
                return None;
            }
            match filled {
                Some(io) => {
                    if let Some(reason) = self.mmap_overrun(&io) {
                        self.fio_unfollowed = Some(reason);
                        return None;
                    }
                    self.file_service.reset_without_io = false;
                    self.moved_bytes += u64::from(io.len_bytes);
                    self.job_moved_bytes += u64::from(io.len_bytes);
                    if io.direction == IoDirection::Write && self.verify_reopens_files {
                        self.loop_written
                            .log(io.offset_bytes, u64::from(io.len_bytes), ());
                    }
                    if !(self.trim == TrimMode::TrimWrite && io.direction == IoDirection::Trim) {
                        self.job_limit_bytes += u64::from(io.len_bytes);
                    }
                    return Some(io);
                }
                // A non-uniform `file_service_type`: fio resets the file and fills the same
                // I/O unit again, its BUSY_OK flag kept, in the same loop (io_u.c
                // `set_io_u_file`), the loop's first I/O too; a file that still has no room
                // after its reset ends the job here (fio would try forever).
                None if self.file_service.resets && !self.time_based => {
                    match self.file_service.after_failed_fill() {
                        ResetStep::Reset => {
                            self.units.refill = true;
                            self.reset_file();
                        }
                        ResetStep::FioHangs(reason) => {
                            self.fio_unfollowed = Some(reason);
                            return None;
                        }
                    }
                }
                None if !self.time_based && self.moved_bytes > 0 && self.fio_close_fails() => {
                    return None;
                }
                None if self.units.busy_ok => {
                    self.units.failed_with_flag();
                    if !self.time_based && self.moved_bytes > 0 {
                        self.next_pass(true)?;
                    } else {
                        return None;
                    }
                }
                // The loop ends where fio could not place an I/O (its file is done); the next
                // starts over.
                None if !self.time_based && self.moved_bytes > 0 => self.next_pass(true)?,
                None => return None,
            }
        }
    }

    /// The job's bytes ran out with `loops` still to go: fio then begins one more loop, which
    /// issues nothing but its end sync and ends the job (backend.c, `keep_running`, `do_io`).
    pub fn empty_loop_follows(&self) -> bool {
        !self.time_based && self.job_limit_bytes >= self.job_bytes && self.passes_left > 1
    }

    /// Whether this loop has issued its bytes, so the next draw begins another (only with an
    /// engine that queues: backend.c `do_io` breaks right after the I/O that reached them,
    /// before `get_rw_ddir` could choose a sync).
    pub fn loop_bytes_done(&self) -> bool {
        !self.time_based && self.moved_bytes >= self.pass_bytes
    }

    /// Whether `loops` has loops left after this one: fio runs them even once the job's
    /// `number_ios` are done (backend.c, `keep_running` asks `loops` first), empty.
    pub fn loops_follow(&self) -> bool {
        !self.time_based && self.passes_left > 1
    }

    /// backend.c, `keep_running`, after a loop (`file_done`: it ended because no I/O could be
    /// placed): the `loops` first, then more while the job's bytes are short of `io_size` (else
    /// `size`) by at least a largest block, and without `io_size` only while the file is not
    /// done. A new loop re-seeds (with `randrepeat`), reopens the file (emptying the map) and
    /// starts the mix over.
    fn next_pass(&mut self, file_done: bool) -> Option<()> {
        self.passes_left = self.passes_left.saturating_sub(1);
        if self.verify_reopens_files {
            self.read_back_bytes += self.loop_written.take_bytes();
        }
        if self.passes_left == 0 {
            let moved_bytes = self.job_moved_bytes + self.read_back_bytes;
            let short_bytes = self.keep_running_bytes.saturating_sub(moved_bytes);
            let more = short_bytes > 0
                && short_bytes >= self.largest_block_bytes.max(1)
                && (!file_done || self.io_size_given || self.verify_reopens_files);
            if !more {
                return None;
            }
        }
        self.loop_end_offset_bytes = if file_done {
            self.attempted_offset_bytes.take()
        } else {
            None
        };
        self.moved_bytes = 0;
        self.rwmix_issues = 0;
        self.passes += 1;
        // libfio.c `clear_io_state`: the start taken again, the zone's bytes back to 0.
        self.region.start_bytes = self
            .later_loops_start_bytes
            .unwrap_or(self.first_start_bytes);
        self.zone_bytes = 0;
        if self.randrepeat {
            self.seed_streams();
            self.reseeds += 1;
        }
        self.reset_file();
        Some(())
    }

    /// io_u.c, `get_rw_ddir`: in a mix, a new direction is drawn once the current one has had
    /// its share of the other's issues.
    fn direction(&mut self, forced: Option<IoDirection>) -> usize {
        let direction = match (forced, self.rwmix) {
            (Some(IoDirection::Write), _) => WRITE,
            (Some(_), _) => READ,
            (None, _) if self.trim == TrimMode::Trim => READ,
            // io_u.c, `set_rw_ddir`: a trim when the last write started where the last trim
            // did (or neither was issued), else the write.
            (None, _) if self.trim == TrimMode::TrimWrite => {
                if self.last_start_bytes[WRITE] == self.last_start_bytes[READ] {
                    READ
                } else {
                    WRITE
                }
            }
            (None, None) if self.write_only => WRITE,
            (None, None) => READ,
            (None, Some(rwmix)) => {
                if self.io_issues[self.rwmix_direction] >= self.rwmix_issues {
                    let drawn = self.rwmix_state.between(1, PERCENT);
                    let direction = if drawn <= rwmix[READ] { READ } else { WRITE };
                    if direction != self.rwmix_direction {
                        self.rwmix_issues =
                            self.io_issues[self.rwmix_direction] * rwmix[direction] / PERCENT;
                    }
                    direction
                } else {
                    self.rwmix_direction
                }
            }
        };
        self.rwmix_direction = direction;
        direction
    }

    /// Why storlab cannot follow fio 3.33 past this point, once the sequence has ended there:
    /// fio's Gauss draw (lib/gauss.c, `gauss_next`) spins forever on the draw storlab just
    /// made, or its random map runs into heap memory.
    pub fn fio_not_followed(&self) -> Option<String> {
        self.fio_unfollowed.clone()
    }

    /// The I/Os the worker has in flight as it asks for the next.
    pub fn set_units_in_flight(&mut self, in_flight: u64) {
        self.units.in_flight = in_flight;
    }

    /// A sync or a verify read took fio's top free I/O unit (a stale `IO_U_F_BUSY_OK` on it
    /// is cleared as it completes); `before_drawn`: in fio before the fill storlab has drawn
    /// already, which then marks the map after all (seed 6565: a loop's end sync).
    pub fn top_unit_taken(&mut self, before_drawn: bool) {
        if let (Some((block, blocks)), Some(map)) =
            (self.units.top_unit_taken(before_drawn), self.map.as_mut())
        {
            map.set_run(block, blocks);
        }
    }

    fn fill(&mut self, forced: Option<IoDirection>) -> Option<PlannedIo> {
        self.attempted_offset_bytes = None;
        self.units.begin_fill();
        let direction = self.direction(forced);
        self.strided_zone_step(direction);
        let (relative, mark) = self.offset(direction)?;
        let offset = self.region.start_bytes + relative;
        // io_u.c, `fill_io_u`: the offset is on the I/O unit before its size is drawn.
        self.attempted_offset_bytes = Some(offset);
        let trim = direction == READ && self.trim != TrimMode::None;
        if trim && self.random_trim_write && self.last_start_bytes[READ] == offset {
            // io_u.c, `get_next_offset`: a trim drawn where the last one started would read
            // as its write done; fio moves the write's mark so the write still follows.
            self.last_start_bytes[WRITE] = self.last_start_bytes[WRITE].wrapping_sub(1);
        }
        let mut len = if self.random_trim_write && direction == WRITE {
            self.last_pos_bytes[READ] - self.last_start_bytes[READ]
        } else {
            self.size(direction, offset, mark)?
        };
        if offset + len > self.file_size_bytes {
            return None;
        }
        let mut unmarked = None;
        if let (true, Some(map)) = (mark, self.map.as_mut()) {
            // io_u.c, `mark_random_map`: the blocks the I/O covers, up to the first taken one;
            // the I/O shrinks to what was free. fio counts them in the direction's smallest
            // block, whatever granule the map was built with. A stale BUSY_OK marks nothing.
            let sizes = &self.sizes[direction];
            let block = sizes.blocks(relative, false);
            let wanted = sizes.blocks(len, true);
            if self.units.busy_ok {
                unmarked = Some((block, wanted));
            } else {
                let taken = map.set_run(block, wanted);
                if map.run_passes_array(block, wanted, taken) {
                    self.fio_unfollowed = Some(format!(
                        "fio 3.33 marks its random map past its end here, into heap memory it never set (lib/axmap.c, __axmap_set: a {len}-byte I/O at block {block} of a map of {} whole 64-block words), so its length is whatever the heap held; storlab stops the job there (bs_is_seq_rand with a larger fixed write size: use a region that is not a multiple of 64 of the smallest block, or norandommap)",
                        block + taken
                    ));
                    return None;
                }
                len = len.min(taken * sizes.min_bytes);
            }
        }
        self.last_pos_bytes[direction] = offset + len;
        self.last_start_bytes[direction] = offset;
        self.io_issues[direction] += 1;
        self.zone_bytes += len;
        self.units.filled(unmarked);
        Some(PlannedIo {
            direction: if direction == WRITE {
                IoDirection::Write
            } else if trim {
                IoDirection::Trim
            } else {
                IoDirection::Read
            },
            offset_bytes: offset,
            len_bytes: len as u32,
        })
    }

    /// io_u.c, `setup_strided_zone_mode`, before `direction`'s offset is chosen: past the
    /// zone's size the next zone (back at the start past the file's end), `direction` at its
    /// start; a position past the zone's range back at its start; at every range's worth of
    /// bytes (each zone's start included) the file reset, both directions and the map.
    fn strided_zone_step(&mut self, direction: usize) {
        let Some(zones) = self.strided else {
            return;
        };
        if self.zone_bytes >= zones.size_bytes {
            self.zone_bytes = 0;
            self.region.start_bytes += zones.range_bytes + zones.skip_bytes;
            if self.region.start_bytes >= self.file_size_bytes {
                // `get_start_offset` again: on the null engine a share of the file set up since.
                self.region.start_bytes = self
                    .later_loops_start_bytes
                    .unwrap_or(self.first_start_bytes);
            }
            self.last_pos_bytes[direction] = self.region.start_bytes;
        }
        if self.last_pos_bytes[direction] >= self.region.start_bytes + zones.range_bytes {
            self.last_pos_bytes[direction] = self.region.start_bytes;
        }
        if self.zone_bytes.is_multiple_of(zones.range_bytes.max(1)) {
            self.reset_file();
        }
    }

    /// io_u.c, `get_next_offset` / `get_next_block`: the offset relative to the region, and
    /// whether the random map is to mark it.
    fn offset(&mut self, direction: usize) -> Option<(u64, bool)> {
        self.random_countdown -= 1;
        let random_turn = self.random_countdown == 0;
        if random_turn {
            self.random_countdown = self.random_every_ios;
        }
        let (relative, mark) = if self.random_trim_write && direction == WRITE {
            // io_u.c, `get_next_block`: the last trim's start, which fio then takes as relative
            // to the region (its `file_offset` added once more below, as fio 3.33 does).
            self.units.busy_ok = true;
            (self.last_start_bytes[READ], false)
        } else if random_turn && (self.random_job || self.repeat_between) {
            // `repeat_between` comes of a `rand*` mode's `:N`: fio's `td_random` whatever
            // `percentage_random` says, so its turn asks `should_do_random` too.
            if self.should_do_random(direction) {
                (self.random_block(direction)?, true)
            } else {
                self.units.busy_ok = true;
                match self.sequential(direction) {
                    Some(at) => (at, false),
                    None => (self.random_block(direction)?, false),
                }
            }
        } else if self.repeat_between {
            // The same direction's last start, or the region's start before any.
            self.units.busy_ok = true;
            match self.last_start_bytes[direction] {
                u64::MAX => (0, false),
                last => (last.wrapping_sub(self.region.start_bytes), false),
            }
        } else {
            // Between a `rand*:N` mode's random turns fio takes the sequential offset with the
            // flag; a job without turns asks no `ddir_seq_nr` and sets none.
            self.units.busy_ok |= !random_turn;
            match self.sequential(direction) {
                Some(at) => (at, false),
                // fio's `td_random` (a rand* mode, `percentage_random=0` too) falls back to
                // a random block past the file's end.
                None if self.random_job || self.rand_mode => (self.random_block(direction)?, false),
                None => return None,
            }
        };
        // A sequential I/O that would start past the region's end ends the job (fio 3.33
        // ends a partly random job there when the region ends before its file): io_u.c
        // `get_next_offset` measures it against `io_size`.
        if relative >= self.fit_len_bytes {
            self.attempted_offset_bytes = Some(relative);
            return None;
        }
        if self.region.start_bytes + relative >= self.file_size_bytes {
            self.attempted_offset_bytes = Some(self.region.start_bytes + relative);
            return None;
        }
        Some((relative, mark))
    }

    /// io_u.c, `should_do_random`.
    fn should_do_random(&mut self, direction: usize) -> bool {
        let share = self.random_percent[direction];
        if share >= PERCENT {
            return true;
        }
        self.seq_rand_state[direction].between(1, PERCENT) <= share
    }

    /// io_u.c, `get_next_seq_offset`, in fio's unsigned arithmetic: `file_offset` is the
    /// region's start, `io_size` its length, `real_file_size` the target's.
    fn sequential(&mut self, direction: usize) -> Option<u64> {
        let start = self.region.start_bytes;
        let region_len = self.region.len_bytes;
        if self.time_based && self.last_pos_bytes[direction] >= start + region_len {
            self.last_pos_bytes[direction] = start;
        }
        if self.last_pos_bytes[direction] >= self.file_size_bytes {
            return None;
        }
        // The end a backward sequence wraps to: `io_size`, or the file's size if shorter.
        let back_end = if self.file_size_bytes > region_len {
            region_len
        } else {
            self.file_size_bytes
        };
        // fio's "only rewind if we already hit the end": a backward job whose region starts
        // past 0 starts at `io_size` taken as a position (not `file_offset + io_size`), as
        // fio 3.33 does.
        if self.seq_add_bytes < 0 && start != 0 && self.last_pos_bytes[direction] == start {
            self.last_pos_bytes[direction] = back_end;
        }
        let mut relative = self.last_pos_bytes[direction].wrapping_sub(start);
        if relative != 0 && self.seq_add_bytes != 0 {
            relative = relative.wrapping_add_signed(self.seq_add_bytes);
            // Past the file's end (or below 0, which wraps to past it): forward holes start
            // over at `file_offset`, backward ones at the end less one step.
            if relative >= self.file_size_bytes {
                relative = if self.seq_add_bytes > 0 {
                    start
                } else {
                    back_end.wrapping_add_signed(self.seq_add_bytes)
                };
            }
        }
        Some(relative)
    }

    /// io_u.c, `get_next_rand_block`: a time-based job starts the region over when it is used
    /// up.
    fn random_block(&mut self, direction: usize) -> Option<u64> {
        if let Some(at) = self.random_offset(direction) {
            return Some(at);
        }
        // io_u.c, `get_next_rand_block`: a time-based job, or one with a non-uniform
        // `file_service_type`, starts the file over and draws again, its direction kept.
        if self.time_based || self.file_service.resets {
            self.reset_file();
            return self.random_offset(direction);
        }
        None
    }

    /// io_u.c, `__get_next_rand_offset`: a block among the region's `lastb` scaled from the
    /// raw draw, moved to the next free one when the map has it taken.
    fn random_offset(&mut self, direction: usize) -> Option<u64> {
        let sizes = &self.sizes[direction];
        let align = sizes.align_bytes;
        if let Some(distribution) = self.distribution.as_mut() {
            // io_u.c, `__get_next_rand_offset_zipf` and its kin: the generator's block, never
            // refused (an offset past the region ends the job in `offset`).
            let Some(block) = distribution.next_block() else {
                self.fio_unfollowed = Some(format!(
                    "fio 3.33 never ends this job: its normal distribution over {} ranges drew a mean at the last one with no spread left to move it back (lib/gauss.c, gauss_next, loops forever); storlab stops the job there",
                    distribution.ranges()
                ));
                return None;
            };
            return Some(block * align);
        }
        let last_block = sizes.last_block;
        if last_block == 0 {
            return None;
        }
        // A zoned job draws its zone first: the block is drawn among the zone's, and the
        // random map is asked about it as drawn, before the zone's start is added, as fio 3.33
        // does (io_u.c, `__get_next_rand_offset_zoned`).
        let (zone_start, bound) = match self.zones.as_mut() {
            Some(zones) => {
                let zone = zones.draw(last_block, align)?;
                (zone.first_block, zone.blocks)
            }
            None => (0, last_block),
        };
        if self.lfsr_job {
            // io_u.c, `__get_next_rand_offset`: the register's next block, none once it has
            // given every block of the pass.
            return Some((self.lfsr.as_mut()?.next_block()? + zone_start) * align);
        }
        let mut block = self.random_state.scaled(bound);
        if let Some(map) = &self.map {
            if map.is_set(block) {
                block = map.next_free(block)?;
            }
        }
        Some((block + zone_start) * align)
    }

    /// io_u.c, `get_next_buflen`: a fixed size, or a draw from the range or split that fits
    /// before the region's end.
    fn size(&mut self, direction: usize, offset: u64, random: bool) -> Option<u64> {
        // `bs_is_seq_rand`: the read sizes for sequential I/O, the write sizes for random.
        let direction = match (self.bs_is_seq_rand, random) {
            (false, _) => direction,
            (true, false) => READ,
            (true, true) => WRITE,
        };
        let sizes = &self.sizes[direction];
        let (min, max) = (sizes.min_bytes, sizes.max_bytes);
        if min == max {
            return Some(min);
        }
        // io_u.c `io_u_fits`: `io_size` past fio's start as it stands now, which for a start
        // that moves with its null file is the later loops' from the first loop on (the file
        // has grown before the first I/O); a size past the file's end then ends the loop
        // (`fill_io_u`: "exceeds file size").
        let start = self
            .later_loops_start_bytes
            .unwrap_or(self.first_start_bytes);
        let end = start + self.fit_len_bytes;
        let fits = |len: u64| offset + len <= end;
        if !fits(min) {
            return None;
        }
        let len = self.draw_size(direction, offset, end)?;
        (offset + len <= self.file_size_bytes).then_some(len)
    }

    /// `get_next_buflen`'s draw for `direction` at `offset`: until a size ends by `end`.
    fn draw_size(&mut self, direction: usize, offset: u64, end: u64) -> Option<u64> {
        let sizes = &self.sizes[direction];
        let (min, max) = (sizes.min_bytes, sizes.max_bytes);
        let fits = |len: u64| offset + len <= end;
        let state = &mut self.bsrange_state[direction];
        let rand_max = state.max();
        loop {
            let r = state.next();
            let mut len = if sizes.split.is_empty() {
                min + (max as f64 * (r as f64 / (rand_max as f64 + 1.0))) as u64
            } else {
                let mut len = 0;
                let mut cumulative = 0;
                for share in sizes.split.iter().filter(|s| s.percent > 0) {
                    len = share.size_bytes;
                    cumulative += u64::from(share.percent);
                    if r / cumulative <= rand_max / PERCENT && fits(len) {
                        break;
                    }
                }
                len
            };
            // A multiple of the smallest size unless `bs_unaligned`.
            if !self.bs_unaligned {
                len -= len % min;
            }
            len = len.min(max);
            if fits(len) {
                return Some(len);
            }
        }
    }
}

/// A mix's shares `[read, write]` in percent, `None` when the job does not mix.
fn rwmix_shares(read_percent: u64) -> Option<[u64; 2]> {
    (1..PERCENT)
        .contains(&read_percent)
        .then_some([read_percent, PERCENT - read_percent])
}

/// What draws a job's random offsets besides the offset stream, over `map_bytes` (the region,
/// or the file if shorter; a strided zone's range) and `distribution_bytes` (filesetup.c,
/// `__init_rand_distribution`: the region or the file if shorter, strided zones or not, each
/// zone's draws then running past the zone from its start): fio's random map,
/// its LFSR (`lfsr`: asked for, and its seed) or its Zipf, Pareto or Gauss generator, each
/// `None` where fio builds none; map and register for a rand* mode (`mapped_job`: fio's
/// `td_random`), `percentage_random=0` too, whose loops take their draws past the end from
/// them (seed 1313: `randread`, `lfsr`, `percentage_random=0`, `loops=2` on `null`).
fn offset_generators(
    job: &JobSpec,
    (map_bytes, distribution_bytes): (u64, u64),
    mapped_job: bool,
    lfsr: (bool, u64),
    distribution_seed: u32,
) -> (Option<Axmap>, Option<Lfsr>, Option<FioDistribution>) {
    // init.c, `init_random_map`: one bit per smallest block of all three directions
    // (`rw_min_bs`), over the region or the file if it is shorter.
    let map_block_bytes = job.fio_smallest_block_bytes();
    let map_blocks = map_bytes / map_block_bytes;
    // filesetup.c, `init_random_map`: a Zipf, Pareto or Gauss job has its generator and
    // neither map nor register (fio returns before building them), whether it draws random
    // offsets or not.
    let distribution = FioDistribution::new(
        &job.random_distribution,
        distribution_bytes,
        map_block_bytes,
        distribution_seed,
    );
    let ranked = distribution.is_some();
    // An LFSR job has the register instead of a map (`norandommap` or not), over the same
    // blocks, seeded with the offset seed.
    let (lfsr_asked, lfsr_seed) = lfsr;
    let lfsr_job = mapped_job && lfsr_asked && !ranked;
    // init.c `fixup_options`: "a non-uniform random distribution excludes usage of a random
    // map" (zoned ones too).
    let uniform = matches!(job.random_distribution, RandomDistribution::Random);
    let map =
        (mapped_job && job.random_map && !lfsr_job && uniform).then(|| Axmap::new(map_blocks));
    let lfsr = lfsr_job.then(|| Lfsr::new(map_blocks, lfsr_seed)).flatten();
    (map, lfsr, distribution)
}

/// filesetup.c, `__init_rand_distribution`: the distribution's seed hashes the file's name as
/// fio names it, times the thread's number; without `randrepeat`, the offset seed.
fn distribution_seed(
    job: &JobSpec,
    fio: &FioRandom,
    seeds: &[u64; seed_index::COUNT],
    thread_number: u32,
) -> u32 {
    // init.c: a given `randseed` turns `randrepeat` off (`fixup_options`), after the seeds
    // were drawn with it on (`setup_random_seeds` comes first): the offset seed is then
    // `FIO_RANDSEED` times the thread, as `seeds` holds it.
    if !fio.randrepeat || fio.randseed_given {
        return seeds[seed_index::BLOCK] as u32;
    }
    let file_name = match (&job.fio_file_name, &job.target) {
        (Some(name), _) => name.clone(),
        (None, target) => match target {
            Target::Path(path) | Target::TempFileIn(path) => path.display().to_string(),
            Target::Sim(name) => name.clone(),
            Target::None => String::new(),
        },
    };
    fio_distribution_seed(&file_name, thread_number)
}

mod bounds;
mod file_service;
#[cfg(test)]
mod tests;
mod units;
