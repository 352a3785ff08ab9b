//! Chooses each I/O's direction, size and offset inside a worker's region, reproducibly from a seed.

use crate::distribution::BlockDistribution;
use crate::fio_sequence::FioSequence;
use crate::random_map::RandomMap;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use storlab_engine::IoDirection;
use storlab_job::{BlockSizeSpec, FioRandom, JobSpec, RwModifier, StridedZones, TrimMode};

/// The region one worker may touch: `[start_bytes, start_bytes + len_bytes)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub start_bytes: u64,
    pub len_bytes: u64,
}

/// Generates the sequence of (direction, offset, length) a worker issues.
pub struct OffsetGenerator {
    rng: ChaCha8Rng,
    region: Region,
    align_bytes: u64,
    read_percent: u32,
    /// Share of random offsets for reads and for writes (fio's `perc_rand[ddir]`).
    random_percent: [u32; 2],
    block_size_read: BlockSizeSpec,
    block_size_write: BlockSizeSpec,
    /// Next sequential offset relative to the region start, one per direction (reads, writes)
    /// as fio keeps `last_pos` per direction: `rw=rw` reads from the start of the region while
    /// writes do too, each stream going on where its own last I/O ended.
    cursor_bytes: [u64; 2],
    /// fio's random map, for a fully random job with one block size: a permutation of the
    /// places a block can start at, and their spacing in bytes.
    random_map: Option<(RandomMap, u64)>,
    /// fio's `random_distribution` other than uniform: block indices, and the bytes between
    /// two blocks (fio: `b * blockalign`).
    distribution: Option<(BlockDistribution, u64)>,
    /// fio's `rw=MODE:N`.
    rw_modifier: RwModifier,
    /// Random I/Os issued under `rw=randMODE:N`: every N-th takes a new random offset.
    random_draws: u64,
    /// fio's trim modes: every I/O a trim, or a trim and then a write of its block.
    trim: TrimMode,
    /// `trimwrite`: the trim whose block the next I/O writes.
    trim_to_write: Option<PlannedIo>,
    /// fio's `zonemode=strided`: the zones, where the current one starts (relative to the
    /// region) and the bytes done in it.
    strided: Option<StridedZones>,
    zone_start_bytes: u64,
    zone_done_bytes: u64,
    /// A fio job's own sequence, drawn from fio's generators (replaces everything above).
    fio: Option<Box<FioSequence>>,
}

/// Bytes one pass of `job` moves over `region`: the region's length, except under fio's
/// `rw=MODE:SIZE` in a preset, where the holes between I/Os are skipped and the pass ends at
/// the first I/O that would start past the region's end. A fio job's own sequence ends its
/// loops itself (`FioSequence`, backend.c's bounds): for it this is only the region's length
/// (what its page-cache drops and its priority draws' re-seeds count passes in).
pub fn pass_bytes(job: &JobSpec, region: Region) -> u64 {
    match (job.rw_modifier, &job.block_size_read) {
        // A fio job's own sequence ends its loops where fio does (`FioSequence`).
        _ if job.fio_random.is_some() => region.len_bytes,
        (RwModifier::SkipBytes(skip), BlockSizeSpec::Fixed(block))
            if job.random_percent == 0 && job.random_percent_writes() == 0 =>
        {
            let stride = block + skip;
            let starts = region.len_bytes.saturating_sub(*block) / stride.max(1) + 1;
            starts * block
        }
        _ => region.len_bytes,
    }
}

/// The bytes one loop of the clone of `job` over `region` moves when that is not the
/// region's length (fio's `io_size`): under `filesize` a `size` below the first clone's
/// region stands for `io_size`, and fio cuts it to each clone's own region (filesetup.c
/// `setup_files`: `o->size` is at most `total_size`, the clone's `filesize - file_offset`),
/// so a later clone `offset_increment` further on may move its whole, shorter region.
pub fn clone_io_size_bytes(job: &JobSpec, region: Region) -> Option<u64> {
    match job.io_size_bytes {
        Some(bytes)
            if job.filesize_bytes.is_some()
                && !job.io_size_given
                && job.strided_zones.is_none()
                && bytes >= region.len_bytes =>
        {
            None
        }
        other => other,
    }
}

/// Draws of a size that does not fit before the region's end, before the pass ends there.
const SIZE_REDRAWS_MAX: u32 = 64;

/// One planned I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedIo {
    pub direction: IoDirection,
    pub offset_bytes: u64,
    pub len_bytes: u32,
}

impl OffsetGenerator {
    /// A generator for worker `worker_index` of `job`; each worker gets its own stream of the seed.
    pub fn new(job: &JobSpec, region: Region, worker_index: u32) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(job.seed);
        rng.set_stream(u64::from(worker_index));
        // fio's map works in blocks of one size; mixed sizes and partly sequential jobs draw
        // independent offsets, as fio with `norandommap` does (docs/job-format.md).
        let one_size = match (&job.block_size_read, &job.block_size_write) {
            (BlockSizeSpec::Fixed(read), BlockSizeSpec::Fixed(write)) if read == write => {
                Some(*read)
            }
            _ => None,
        };
        let align_bytes = job.align_bytes.max(1);
        // fio's generators other than uniform never consult the random map (io_u.c,
        // `get_next_rand_offset`), so it is not built for them. Their indices are placed as the
        // map's places are: `blockalign` apart when given, else a smallest block apart (fio's
        // `blockalign` defaults to it), rounded up to the alignment.
        let smallest = job
            .block_size_read
            .min_bytes()
            .min(job.block_size_write.min_bytes())
            .max(1);
        let spacing_bytes = if job.align_given {
            align_bytes
        } else {
            smallest.next_multiple_of(align_bytes)
        };
        let distribution = BlockDistribution::new(
            &job.random_distribution,
            region.len_bytes,
            smallest,
            spacing_bytes,
            &mut rng,
        )
        .map(|generator| (generator, spacing_bytes));
        let random_map = one_size
            .filter(|_| distribution.is_none())
            .filter(|&bs| job.random_map && job.fully_random() && bs > 0 && region.len_bytes >= bs)
            .map(|bs| {
                // As fio (io_u.c: `last_block`, and `offset = b * blockalign`), the map permutes
                // the places `blockalign` apart where a whole block still fits, so
                // `bs=4k blockalign=512` issues 512-byte-aligned I/O. fio's `blockalign`
                // defaults to the block size; so does the map's spacing here when `blockalign`
                // is not given (rounded up to storlab's alignment), so each block comes once
                // per pass.
                let spacing = if job.align_given {
                    align_bytes
                } else {
                    bs.next_multiple_of(align_bytes)
                };
                let places = (region.len_bytes - bs) / spacing + 1;
                (RandomMap::new(places, &mut rng), spacing)
            });
        OffsetGenerator {
            rng,
            region,
            align_bytes,
            read_percent: u32::from(job.read_percent),
            random_percent: [
                u32::from(job.random_percent),
                u32::from(job.random_percent_writes()),
            ],
            block_size_read: job.block_size_read.clone(),
            block_size_write: job.block_size_write.clone(),
            trim: job.trim,
            trim_to_write: None,
            cursor_bytes: [0; 2],
            random_map: random_map.filter(|_| job.rw_modifier == RwModifier::None),
            distribution,
            rw_modifier: job.rw_modifier,
            random_draws: 0,
            strided: job.strided_zones,
            zone_start_bytes: 0,
            zone_done_bytes: 0,
            fio: None,
        }
    }

    /// From here on, draw as fio 3.33 draws for its thread `thread_number` (subjob `clone` of
    /// its job) on a target of `file_size_bytes`, if `job` came from a fio job file or fio-style
    /// flags and draws anything at random (strided zones too: `FioSequence` moves fio's start
    /// zone by zone). Sequential fixed-size jobs and zoned distributions keep the generator
    /// above (the first already issue fio's sequence; the others, trim/write pairs included,
    /// are fio's sets, not its sequence: docs/job-format.md).
    pub fn use_fio_streams(
        &mut self,
        job: &JobSpec,
        file_size_bytes: u64,
        thread_number: u32,
        clone: u64,
    ) {
        // Backward holes are fio's sequence alone (io_u.c, `get_next_seq_offset`), whatever
        // generator the job otherwise keeps; without fio's streams they take fio's defaults,
        // which only a mixed direction draws from.
        let backward = matches!(job.rw_modifier, RwModifier::BackBytes(_));
        let default_streams = FioRandom {
            randseed: crate::fio_rand::FIO_DEFAULT_RANDSEED,
            randrepeat: true,
            randseed_given: false,
            tausworthe64: false,
            lfsr: false,
            allrandrepeat: false,
            rand_mode: false,
        };
        let fio = match &job.fio_random {
            Some(fio) => fio,
            None if backward => &default_streams,
            None => return,
        };
        // Random offsets are fio's only where storlab's alignment puts them where fio's
        // `blockalign` (default: the smallest block) does; elsewhere the job keeps the
        // generator above and the run says it differs (docs/job-format.md, `blockalign`).
        let align = job.align_bytes.max(1);
        let random = job.random_percent > 0 || job.random_percent_writes() > 0;
        let aligned_as_fio = job.align_given
            || (job.block_size_read.min_bytes().is_multiple_of(align)
                && job.block_size_write.min_bytes().is_multiple_of(align));
        let supported =
            (aligned_as_fio || !random) && job.replay.is_none() && self.region.len_bytes > 0;
        if supported {
            let region_end_bytes = self.region.start_bytes + self.region.len_bytes;
            let fio_file_bytes = if job.fio_engine_sizes_no_file() {
                fio_null_file_bytes(job, region_end_bytes)
            } else {
                file_size_bytes.max(region_end_bytes)
            };
            let mut sequence =
                FioSequence::new(job, fio, self.region, fio_file_bytes, thread_number);
            sequence.start_later_loops_at(crate::fio_later_loops_start(
                job,
                region_end_bytes,
                clone,
            ));
            self.fio = Some(Box::new(sequence));
        }
    }

    /// Whether the I/O comes from fio's own streams (fio does not trim a job's last I/O to
    /// the bytes left: it stops once they are done).
    pub fn draws_as_fio(&self) -> bool {
        self.fio.is_some()
    }

    /// A `verify_backlog` read of the piece written at `offset_bytes` (fio's sequence counts
    /// it in the loop's bytes).
    pub fn note_backlog_read(&mut self, offset_bytes: u64, len_bytes: u64) {
        if let Some(fio) = self.fio.as_mut() {
            fio.note_backlog_read(offset_bytes, len_bytes);
        }
    }

    /// The I/Os the worker has in flight as it asks for the next (fio's free I/O units).
    pub fn set_units_in_flight(&mut self, in_flight: usize) {
        if let Some(fio) = self.fio.as_mut() {
            fio.set_units_in_flight(in_flight as u64);
        }
    }

    /// A sync or verify read took fio's top free I/O unit, before the I/O drawn already if
    /// `before_drawn` (`FioSequence::top_unit_taken`).
    pub fn fio_top_unit_taken(&mut self, before_drawn: bool) {
        if let Some(fio) = self.fio.as_mut() {
            fio.top_unit_taken(before_drawn);
        }
    }

    /// The next I/O (in `forced` direction if given), or `None` when a fio job ends here.
    pub fn next(&mut self, forced: Option<IoDirection>) -> Option<PlannedIo> {
        if let Some(fio) = self.fio.as_mut() {
            return fio.next(forced);
        }
        Some(match forced {
            Some(direction) => self.next_io_in(direction),
            None => self.next_io(),
        })
    }

    /// The loops that re-seeded fio's streams so far, when fio's sequence draws this job's
    /// I/O (`None`: the job's passes are its region's bytes, `pass_bytes`).
    pub fn fio_reseeds(&self) -> Option<u32> {
        self.fio.as_ref().map(|fio| fio.reseeds)
    }

    /// For a fio job: the loops it ended so far with another begun, and the offset fio's
    /// I/O unit kept from the failed placement that ended the last of them (its end sync
    /// logs it; `None`: that loop ended on its bytes).
    pub fn fio_loops_ended(&self) -> Option<(u32, Option<u64>)> {
        self.fio
            .as_ref()
            .map(|fio| (fio.passes, fio.loop_end_offset_bytes))
    }

    /// For a fio job whose sequence has ended: why fio itself would never have ended it.
    pub fn fio_not_followed(&self) -> Option<String> {
        self.fio.as_ref().and_then(|fio| fio.fio_not_followed())
    }

    /// For a fio job: fio's `file_offset` now, its region's start (which strided zones move
    /// zone by zone), or None for a job storlab draws itself.
    pub fn fio_file_offset_bytes(&self) -> Option<u64> {
        self.fio.as_ref().map(|fio| fio.file_offset_bytes())
    }

    /// For a fio job whose sequence has ended: the offset fio's last failed placement left
    /// on its I/O unit, if it chose one.
    pub fn fio_end_offset(&self) -> Option<u64> {
        self.fio.as_ref().and_then(|fio| fio.attempted_offset_bytes)
    }

    /// For a fio job whose sequence has ended: whether fio begins one more, empty loop (its
    /// bytes ran out with `loops` to go), which still syncs at its end.
    pub fn fio_empty_loop_follows(&self) -> bool {
        self.fio
            .as_ref()
            .is_some_and(|fio| fio.empty_loop_follows())
    }

    /// Whether fio's sequence's loop has issued its bytes (see `FioSequence::loop_bytes_done`).
    pub fn fio_loop_bytes_done(&self) -> bool {
        self.fio.as_ref().is_some_and(|fio| fio.loop_bytes_done())
    }

    /// Whether fio's sequence has loops left after this one (see `FioSequence::loops_follow`).
    pub fn fio_loops_follow(&self) -> bool {
        self.fio.as_ref().is_some_and(|fio| fio.loops_follow())
    }

    /// The loop fio's sequence is in (from 0), when it draws this job's I/O.
    pub fn fio_pass(&self) -> Option<u32> {
        self.fio.as_ref().map(|fio| fio.passes)
    }

    /// fio's offset stream's state at the job's end, for its verify state file (after a
    /// read-back phase when `read_back`): 64-bit or not, and its words; `None` when the job
    /// draws no random offsets from fio's streams.
    pub fn fio_random_state(&self, read_back: bool) -> Option<(bool, Vec<u64>)> {
        self.fio
            .as_ref()
            .and_then(|fio| fio.random_state(read_back))
    }

    fn below(&mut self, bound: u64) -> u64 {
        below(&mut self.rng, bound)
    }

    fn percent_hit(&mut self, percent: u32) -> bool {
        match percent {
            0 => false,
            100.. => true,
            p => self.below(100) < u64::from(p),
        }
    }

    fn pick_size(&mut self, direction: IoDirection) -> u64 {
        let rng = &mut self.rng;
        let spec = match direction {
            IoDirection::Write => &self.block_size_write,
            _ => &self.block_size_read,
        };
        match spec {
            BlockSizeSpec::Fixed(size) => *size,
            BlockSizeSpec::Range {
                min_bytes,
                max_bytes,
            } => range_size(rng, *min_bytes, *max_bytes),
            BlockSizeSpec::Split(shares) => {
                let roll = below(rng, 100) as u32;
                let mut acc = 0;
                let mut chosen = shares.last().map(|s| s.size_bytes).unwrap_or(0);
                for share in shares {
                    acc += share.percent;
                    if roll < acc {
                        chosen = share.size_bytes;
                        break;
                    }
                }
                chosen
            }
        }
    }

    /// The next I/O. Sequential I/O wraps at the end of the region (time-based runs go round).
    pub fn next_io(&mut self) -> PlannedIo {
        match self.trim {
            TrimMode::None => {}
            // Trims take the first stream (its cursor, random map and block sizes: fio's `bs`
            // sets the trim size with the read size).
            TrimMode::Trim => return self.next_io_in(IoDirection::Trim),
            // fio 3.33 (io_u.c, `set_rw_ddir`, `get_next_offset`, `get_next_buflen`): after a
            // trim, a write of the same offset and length; the write takes nothing from the
            // random map or the cursor.
            TrimMode::TrimWrite => {
                if let Some(trim) = self.trim_to_write.take() {
                    return PlannedIo {
                        direction: IoDirection::Write,
                        ..trim
                    };
                }
                let trim = self.next_io_in(IoDirection::Trim);
                self.trim_to_write = Some(trim);
                return trim;
            }
        }
        let direction = if self.percent_hit(self.read_percent) {
            IoDirection::Read
        } else {
            IoDirection::Write
        };
        self.next_io_in(direction)
    }

    /// The next I/O, in `direction` whatever the read share says (a mixed job whose other
    /// direction is held back by its rate).
    pub fn next_io_in(&mut self, direction: IoDirection) -> PlannedIo {
        if let Some(zones) = self.strided {
            return self.next_io_in_zone(direction, zones);
        }
        let region_len = self.region.len_bytes;
        let mut len = self.pick_size(direction).min(region_len);
        let stream = usize::from(direction == IoDirection::Write);
        let sequential_turn = match self.rw_modifier {
            // fio (io_u.c, `get_next_offset`): a random offset only when the count of I/Os
            // since the last one reaches N; the others go on from where the last I/O ended.
            RwModifier::RandomEveryIos(every) | RwModifier::RepeatEveryIos(every)
                if self.random_percent[stream] > 0 =>
            {
                self.random_draws += 1;
                !self.random_draws.is_multiple_of(u64::from(every))
            }
            _ => false,
        };
        let relative = if sequential_turn {
            let at = self.cursor_bytes[stream];
            let at = if at + len > region_len { 0 } else { at };
            self.cursor_bytes[stream] = at + len;
            at
        } else if let Some((map, spacing_bytes)) = &mut self.random_map {
            map.next(&mut self.rng) * *spacing_bytes
        } else if self.percent_hit(self.random_percent[stream]) {
            if let Some((generator, spacing_bytes)) = &mut self.distribution {
                // A block whose I/O would pass the region's end moves back to the last aligned
                // place it fits (fio ends the job there instead).
                let at = generator.next_block(&mut self.rng) * *spacing_bytes;
                let last_fit = (region_len - len) / self.align_bytes * self.align_bytes;
                let at = at.min(last_fit);
                self.follow_random(stream, at + len);
                return PlannedIo {
                    direction,
                    offset_bytes: self.region.start_bytes + at,
                    len_bytes: len as u32,
                };
            }
            let slots = (region_len - len) / self.align_bytes + 1;
            let at = self.below(slots) * self.align_bytes;
            self.follow_random(stream, at + len);
            at
        } else {
            let min_len = self.min_size(direction).min(region_len);
            // As fio: a pass ends when not even the smallest block fits before the region's
            // end, and the next starts over at the region's start.
            if self.cursor_bytes[stream] + min_len > region_len {
                self.cursor_bytes[stream] = 0;
            }
            let mut at = self.cursor_bytes[stream];
            // fio (io_u.c, get_next_buflen) draws again a size that does not fit before the
            // region's end. A split may never draw its smallest size (a 0% share): after a
            // few tries the pass ends instead, where every size fits.
            let mut tries = 0;
            while at + len > region_len {
                tries += 1;
                if tries > SIZE_REDRAWS_MAX {
                    at = 0;
                    break;
                }
                len = self.pick_size(direction).min(region_len);
            }
            self.cursor_bytes[stream] = at + len;
            if let RwModifier::SkipBytes(skip) = self.rw_modifier {
                // fio's `ddir_seq_add`: a hole after each I/O.
                self.cursor_bytes[stream] += skip;
            }
            at
        };
        PlannedIo {
            direction,
            offset_bytes: self.region.start_bytes + relative,
            len_bytes: len as u32,
        }
    }

    /// The next I/O under fio's `zonemode=strided` (io_u.c, `setup_strided_zone_mode`): after
    /// `zonesize` bytes in a zone, the next starts `zonerange + zoneskip` further on (back at
    /// the region's start past its end); inside a zone, sequential I/O goes round its
    /// `zonerange` and random I/O draws uniformly in it.
    fn next_io_in_zone(&mut self, direction: IoDirection, zones: StridedZones) -> PlannedIo {
        let region_len = self.region.len_bytes;
        let stream = usize::from(direction == IoDirection::Write);
        let len = self.pick_size(direction).min(region_len);
        if self.zone_done_bytes >= zones.size_bytes {
            self.zone_done_bytes = 0;
            self.zone_start_bytes += zones.range_bytes + zones.skip_bytes;
            if self.zone_start_bytes >= region_len {
                self.zone_start_bytes = 0;
            }
            self.cursor_bytes = [self.zone_start_bytes; 2];
        }
        let zone_start = self.zone_start_bytes;
        // A zone that passes the region's end ends with it.
        let zone_len = zones.range_bytes.min(region_len - zone_start).max(len);
        let at = if self.percent_hit(self.random_percent[stream]) {
            let places = zone_len.saturating_sub(len) / self.align_bytes + 1;
            zone_start + self.below(places) * self.align_bytes
        } else {
            let mut at = self.cursor_bytes[stream];
            if at < zone_start || at + len > zone_start + zone_len {
                at = zone_start;
            }
            self.cursor_bytes[stream] = at + len;
            at
        };
        let at = at.min(region_len - len);
        self.zone_done_bytes += len;
        PlannedIo {
            direction,
            offset_bytes: self.region.start_bytes + at,
            len_bytes: len as u32,
        }
    }

    /// Under `rw=randMODE:N` the sequential I/Os after a random one go on from its end.
    fn follow_random(&mut self, stream: usize, end_bytes: u64) {
        if self.rw_modifier.random_every_ios().is_some() {
            self.cursor_bytes[stream] = end_bytes;
        }
    }

    fn min_size(&self, direction: IoDirection) -> u64 {
        match direction {
            IoDirection::Write => self.block_size_write.min_bytes(),
            _ => self.block_size_read.min_bytes(),
        }
    }
}

/// A size of a `bsrange=min-max` as fio draws it (io_u.c, `get_next_buflen`): `min` plus a
/// uniform share of `max`, rounded down to a multiple of `min` (fio's `bs_unaligned` off) and
/// capped at `max`. So `1k-4k` gives 1, 2, 3 and 4 KiB a quarter of the time each, and
/// `4k-10k` gives 4 and 8 KiB only, whatever the job's alignment.
fn range_size(rng: &mut ChaCha8Rng, min_bytes: u64, max_bytes: u64) -> u64 {
    if min_bytes == 0 || min_bytes >= max_bytes {
        return max_bytes;
    }
    let drawn = min_bytes + below(rng, max_bytes);
    (drawn - drawn % min_bytes).min(max_bytes)
}

/// A uniformly distributed value in `0..bound` (`bound` > 0) by Lemire's multiply-shift, whose
/// bias is below 2^-40 for the bounds used here.
fn below(rng: &mut ChaCha8Rng, bound: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(bound)) >> 64) as u64
}

/// fio's null engine's file (FIO_DISKLESSIO | FIO_FAKEIO), which it never sizes: `add_file`
/// makes its size unknown (-1), `size` when given makes it that (filesetup.c
/// `get_file_sizes`), and a region reaching past it makes it the region's end (`setup_files`).
/// So a sequential job there ends when `last_pos` reaches the region's end (the placement
/// fails before an offset is chosen, and the end sync logs the last I/O's), holes wrap at the
/// file's end, and with `filesize` alone the file has no end: holes never wrap there and the
/// last I/O may reach past the region (`--rw=write:4k --filesize=512k`: 64 writes, where
/// `--size=512k` wraps to 128; measured against fio 3.33).
fn fio_null_file_bytes(job: &JobSpec, region_end_bytes: u64) -> u64 {
    match (job.filesize_bytes, job.size_given_bytes) {
        (Some(_), None) => u64::MAX,
        (Some(_), Some(size)) => size.max(region_end_bytes),
        // `size` alone: the region ends at `offset` + `size`, past the file's `size`.
        (None, _) => region_end_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_job::{EngineKind, Target};

    fn job() -> JobSpec {
        JobSpec::new("t", EngineKind::Null, Target::None)
    }

    /// fio's `percentage_random=READ,WRITE`: each direction draws random offsets at its own
    /// share (fio's `perc_rand[ddir]`), the rest going on sequentially in its own stream.
    #[test]
    fn each_direction_takes_its_own_random_share() {
        let mut job = job();
        job.read_percent = 50;
        job.random_percent = 0;
        job.random_percent_write = Some(100);
        let region = Region {
            start_bytes: 0,
            len_bytes: 64 << 20,
        };
        let mut generator = OffsetGenerator::new(&job, region, 0);
        let ios: Vec<PlannedIo> = (0..400).map(|_| generator.next_io()).collect();
        let offsets_of = |direction| -> Vec<u64> {
            ios.iter()
                .filter(|io| io.direction == direction)
                .map(|io| io.offset_bytes)
                .collect()
        };
        let (reads, writes) = (
            offsets_of(IoDirection::Read),
            offsets_of(IoDirection::Write),
        );
        assert!(reads.len() > 100 && writes.len() > 100);
        // Reads: 0, 4k, 8k...; writes: not one sequential step in a row.
        assert!(reads
            .iter()
            .enumerate()
            .all(|(i, at)| *at == i as u64 * 4096));
        let sequential_steps = writes.windows(2).filter(|w| w[1] == w[0] + 4096).count();
        assert!(sequential_steps < 3, "{sequential_steps}");
        assert_eq!(job.rw_name(), "rw");
    }

    /// fio's `rw=randread:4`: every fourth I/O takes a new random offset, the three between go
    /// on sequentially from where the previous one ended.
    #[test]
    fn a_random_offset_every_n_ios_with_sequential_ones_between() {
        let mut job = job();
        job.rw_modifier = RwModifier::RandomEveryIos(4);
        let region = Region {
            start_bytes: 0,
            len_bytes: 64 << 20,
        };
        let mut generator = OffsetGenerator::new(&job, region, 0);
        let offsets: Vec<u64> = (0..40).map(|_| generator.next_io().offset_bytes).collect();
        let mut jumps = 0;
        for (i, pair) in offsets.windows(2).enumerate() {
            let sequential = pair[1] == pair[0] + 4096;
            if (i + 2) % 4 == 0 {
                jumps += usize::from(!sequential);
            } else {
                assert!(sequential, "I/O {} at {} after {}", i + 2, pair[1], pair[0]);
            }
        }
        // Nine random draws over 16384 places: all but a chance neighbour jump.
        assert!(jumps >= 8, "{jumps}");
    }

    /// `random_distribution=zoned_abs:100/64k` puts every random I/O in the region's first
    /// 64 KiB, bypassing the random map, at places one block apart.
    #[test]
    fn a_distribution_decides_random_offsets() {
        let mut job = job();
        job.block_size_read = BlockSizeSpec::Fixed(16 << 10);
        job.block_size_write = BlockSizeSpec::Fixed(16 << 10);
        job.random_distribution = storlab_job::RandomDistribution::ZonedAbs {
            zones: vec![storlab_job::ZoneShare {
                access_percent: 100,
                size: 64 << 10,
            }],
        };
        let region = Region {
            start_bytes: 1 << 20,
            len_bytes: 1 << 20,
        };
        let mut generator = OffsetGenerator::new(&job, region, 0);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..400 {
            let io = generator.next_io();
            assert!(io.offset_bytes >= 1 << 20 && io.offset_bytes < (1 << 20) + (64 << 10));
            assert_eq!(io.offset_bytes % 4096, 0);
            seen.insert(io.offset_bytes);
        }
        // The four 16 KiB places of a 64 KiB zone, drawn with repeats.
        assert_eq!(seen.len(), 4);
        assert!(seen.iter().all(|o| o % (16 << 10) == 0));
    }

    #[test]
    fn random_offsets_stay_aligned_and_inside_region() {
        let region = Region {
            start_bytes: 1 << 20,
            len_bytes: 8 << 20,
        };
        let mut gen = OffsetGenerator::new(&job(), region, 0);
        for _ in 0..10_000 {
            let io = gen.next_io();
            assert_eq!(io.offset_bytes % 4096, 0);
            assert!(io.offset_bytes >= region.start_bytes);
            assert!(
                io.offset_bytes + u64::from(io.len_bytes) <= region.start_bytes + region.len_bytes
            );
        }
    }

    /// Distinct block offsets among the first `draws` I/Os of `job` over `blocks` 4 KiB blocks.
    fn distinct_blocks(job: &JobSpec, blocks: u64, draws: u64) -> usize {
        let region = Region {
            start_bytes: 1 << 20,
            len_bytes: blocks * 4096,
        };
        let mut gen = OffsetGenerator::new(job, region, 0);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..draws {
            let io = gen.next_io();
            assert!(io.offset_bytes >= region.start_bytes);
            assert!(io.offset_bytes + 4096 <= region.start_bytes + region.len_bytes);
            seen.insert(io.offset_bytes);
        }
        seen.len()
    }

    #[test]
    fn the_random_map_visits_every_block_once_per_pass_as_fio_does() {
        let blocks = 1000;
        assert_eq!(distinct_blocks(&job(), blocks, blocks), blocks as usize);
        // Without the map, draws repeat: about 1 - 1/e of the blocks in one region's worth.
        let mut repeats = job();
        repeats.random_map = false;
        let distinct = distinct_blocks(&repeats, blocks, blocks);
        assert!((580..=680).contains(&distinct), "{distinct}");
    }

    /// Offsets of the first `draws` I/Os of a random 4 KiB job aligned to `align_bytes`.
    fn offsets_with_alignment(align_bytes: u64, random_map: bool, draws: usize) -> Vec<u64> {
        let mut j = job();
        j.align_bytes = align_bytes;
        j.align_given = true;
        j.random_map = random_map;
        let region = Region {
            start_bytes: 1 << 20,
            len_bytes: 4 << 20,
        };
        let mut gen = OffsetGenerator::new(&j, region, 0);
        (0..draws)
            .map(|_| {
                let io = gen.next_io();
                assert!(io.offset_bytes + 4096 <= region.start_bytes + region.len_bytes);
                io.offset_bytes - region.start_bytes
            })
            .collect()
    }

    #[test]
    fn blockalign_below_the_block_size_gives_offsets_off_the_block_grid_with_or_without_map() {
        for random_map in [true, false] {
            let offsets = offsets_with_alignment(512, random_map, 4000);
            assert!(offsets.iter().all(|o| o % 512 == 0));
            let off_grid = offsets.iter().filter(|&&o| o % 4096 != 0).count();
            // 7 in 8 of the 512-byte places are not 4 KiB places.
            assert!(off_grid > 3000, "map {random_map}: {off_grid} of 4000");
        }
        // The map still draws each place once per pass: 8185 places fit a 4 KiB block.
        let places = (4 << 20) / 512 - 7;
        let mut pass = offsets_with_alignment(512, true, places);
        pass.sort_unstable();
        pass.dedup();
        assert_eq!(pass.len(), places);
    }

    #[test]
    fn without_blockalign_the_map_visits_every_block_once_as_fio_does() {
        // fio's blockalign defaults to the block size: 64 KiB blocks, each once per pass.
        let mut j = job();
        j.block_size_read = BlockSizeSpec::Fixed(64 << 10);
        j.block_size_write = j.block_size_read.clone();
        let region = Region {
            start_bytes: 0,
            len_bytes: 4 << 20,
        };
        let mut gen = OffsetGenerator::new(&j, region, 0);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..64 {
            let io = gen.next_io();
            assert_eq!(io.offset_bytes % (64 << 10), 0);
            seen.insert(io.offset_bytes);
        }
        assert_eq!(seen.len(), 64);
    }

    #[test]
    fn blockalign_above_the_block_size_spaces_the_offsets() {
        let mut j = job();
        j.align_bytes = 64 << 10;
        j.align_given = true;
        let region = Region {
            start_bytes: 0,
            len_bytes: 4 << 20,
        };
        let mut gen = OffsetGenerator::new(&j, region, 0);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..64 {
            let io = gen.next_io();
            assert_eq!(io.offset_bytes % (64 << 10), 0);
            seen.insert(io.offset_bytes);
        }
        // 64 places of 64 KiB, each once per pass.
        assert_eq!(seen.len(), 64);
    }

    #[test]
    fn mixed_sizes_and_partly_sequential_jobs_draw_without_the_map() {
        let blocks = 1000;
        let mut partly = job();
        partly.random_percent = 99;
        assert!(distinct_blocks(&partly, blocks, blocks) < blocks as usize);
        let mut range = job();
        range.block_size_read = BlockSizeSpec::Range {
            min_bytes: 4096,
            max_bytes: 4096,
        };
        range.block_size_write = range.block_size_read.clone();
        assert!(distinct_blocks(&range, blocks, blocks) < blocks as usize);
    }

    #[test]
    fn sequential_wraps_and_same_seed_repeats() {
        let mut j = job();
        j.random_percent = 0;
        let region = Region {
            start_bytes: 0,
            len_bytes: 3 * 4096,
        };
        let mut gen = OffsetGenerator::new(&j, region, 0);
        let offsets: Vec<u64> = (0..4).map(|_| gen.next_io().offset_bytes).collect();
        assert_eq!(offsets, vec![0, 4096, 8192, 0]);
        let mut a = OffsetGenerator::new(&job(), region, 1);
        let mut b = OffsetGenerator::new(&job(), region, 1);
        let mut c = OffsetGenerator::new(&job(), region, 2);
        let sa: Vec<_> = (0..50).map(|_| a.next_io()).collect();
        let sb: Vec<_> = (0..50).map(|_| b.next_io()).collect();
        let sc: Vec<_> = (0..50).map(|_| c.next_io()).collect();
        assert_eq!(sa, sb);
        assert_ne!(sa, sc, "workers must not repeat each other's offsets");
    }

    /// Regression (issue 24): `bsrange=1k-4k` drew only 1 KiB, the 4 KiB alignment collapsing
    /// the range. fio draws 1, 2, 3 and 4 KiB a quarter of the time each (mean 2.5 KiB).
    #[test]
    fn bsrange_draws_every_multiple_of_the_minimum_as_fio_does() {
        let mut j = job();
        j.block_size_read = BlockSizeSpec::Range {
            min_bytes: 1024,
            max_bytes: 4096,
        };
        let region = Region {
            start_bytes: 0,
            len_bytes: 1 << 30,
        };
        let mut gen = OffsetGenerator::new(&j, region, 0);
        let n = 10_000;
        let mut counts = std::collections::BTreeMap::new();
        for _ in 0..n {
            *counts.entry(gen.next_io().len_bytes).or_insert(0u32) += 1;
        }
        assert_eq!(
            counts.keys().copied().collect::<Vec<_>>(),
            [1024, 2048, 3072, 4096]
        );
        for (size, count) in &counts {
            assert!((2250..=2750).contains(count), "{size}: {count} of {n}");
        }
    }

    /// Regression (issue 24): `rw=rw` walked one stream shared by reads and writes; fio keeps
    /// one per direction, each starting at the region's start.
    #[test]
    fn a_sequential_mix_walks_one_stream_per_direction_as_fio_does() {
        let mut j = job();
        j.random_percent = 0;
        j.read_percent = 50;
        let region = Region {
            start_bytes: 1 << 20,
            len_bytes: 1 << 20,
        };
        let mut gen = OffsetGenerator::new(&j, region, 0);
        let (mut reads, mut writes) = (Vec::new(), Vec::new());
        for _ in 0..200 {
            let io = gen.next_io();
            let stream = if io.direction == IoDirection::Read {
                &mut reads
            } else {
                &mut writes
            };
            stream.push(io.offset_bytes - region.start_bytes);
        }
        for stream in [&reads, &writes] {
            let expected: Vec<u64> = (0..stream.len() as u64).map(|i| i * 4096).collect();
            assert_eq!(stream, &expected);
        }
    }

    #[test]
    fn read_share_and_bssplit_follow_their_percentages() {
        let mut j = job();
        j.read_percent = 70;
        j.block_size_read = BlockSizeSpec::Split(vec![
            storlab_job::BlockSizeShare {
                size_bytes: 4096,
                percent: 25,
            },
            storlab_job::BlockSizeShare {
                size_bytes: 65536,
                percent: 75,
            },
        ]);
        let region = Region {
            start_bytes: 0,
            len_bytes: 1 << 30,
        };
        let mut gen = OffsetGenerator::new(&j, region, 0);
        let n = 100_000;
        let (mut reads, mut small_reads) = (0, 0);
        for _ in 0..n {
            let io = gen.next_io();
            if io.direction == IoDirection::Read {
                reads += 1;
                if io.len_bytes == 4096 {
                    small_reads += 1;
                }
            }
        }
        let read_share = f64::from(reads) / f64::from(n);
        let small_share = f64::from(small_reads) / f64::from(reads);
        assert!((read_share - 0.70).abs() < 0.01, "{read_share}");
        assert!((small_share - 0.25).abs() < 0.01, "{small_share}");
    }
}
