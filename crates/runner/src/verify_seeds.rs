//! fio's check of each verify header's `rand_seed` in a job that both reads and writes.
//!
//! fio 3.33 draws every write's data seed from its `verify_state` stream (verify.c,
//! `fill_verify_pattern`: two draws multiplied) and puts it in the block's header. Its verify
//! pass re-seeds that stream (backend.c `clear_io_state`, `do_verify`) and gives the k-th block
//! it reads back the k-th draw (`get_next_verify`); `verify_header` then compares the two
//! unless the job only writes or has a `verify_backlog` (`!td_rw(td)` copies the header's seed
//! first). So in a mixed job the check passes only where the pass reads its blocks back in the
//! order it wrote them, each once:
//!
//! - with fio's random map (uniform random offsets, `randommap`, not `lfsr`) fio logs writes in
//!   a list and reads them back in write order: always;
//! - otherwise (`norandommap`, `random_generator=lfsr`, a non-uniform distribution, sequential
//!   `rw=rw`) it keeps them in a tree by offset, a write dropping every earlier one it overlaps
//!   (iolog.c, `log_io_piece`), and reads them back in offset order: only if every write of the
//!   pass started at or past the end of the one before. Any rewrite or step back fails the pass
//!   with `bad header rand_seed` (error 84), e.g. `rw=randrw norandommap verify=crc32`.
//!
//! - in the list, a block a later write of the same pass overwrote fails too (its header or
//!   checksum is the later write's when the pass reads the earlier one back): random offsets
//!   through the map only overlap where the map is bypassed, `rw=randrw:N`'s sequential I/Os.
//!
//! - in a job that only writes, fio takes each header's seed as the one wanted, but where all
//!   blocks have one size (not `time_based`, not `verify_only`) it checks the header's
//!   `numberio`, the write's number: a block a later write of the pass changed fails there
//!   (`bad header numberio`), e.g. `rw=randwrite:4k bs=4k verify=md5`.
//!
//! [`SeedOrder`] keeps fio's tree (or list) for the current pass (one entry per surviving write, as fio
//! does) and judges each pass as fio's verify pass would, with fio's own seeds, so a failure
//! names fio's offset and seeds.

use crate::fio_history::FioHistory;
use crate::fio_rand::FioRand;
use crate::verify_data_seeds::{draw, VERIFY_SEED_INDEX};
use std::collections::BTreeMap;
use storlab_job::{JobSpec, RandomDistribution, VerifyKind};

/// Whether fio logs a fio job's writes in a list, read back in the order written, rather than
/// in a tree by offset (iolog.c, `log_io_piece`): when the file keeps a random map
/// (filesetup.c, `init_random_map`: a random `rw` mode, whatever `percentage_random` says, the
/// map on, no LFSR, which replaces it, and the uniform distribution; init.c turns the map off
/// for every other).
pub(crate) fn fio_logs_writes_in_a_list(job: &JobSpec) -> bool {
    let Some(fio) = job.fio_random.as_ref() else {
        return false;
    };
    // init.c `fixup_options`: any distribution but the uniform one turns the map off.
    let map_kept = matches!(job.random_distribution, RandomDistribution::Random);
    // `td_random`: `randwrite` with `percentage_random=0` keeps its map (seed 6363).
    let random = fio.rand_mode || job.random_percent > 0 || job.random_percent_writes() > 0;
    random && job.random_map && !fio.lfsr && map_kept
}

/// The first block whose header seed is not the one fio's verify pass wants there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedMismatch {
    pub header_seed: u64,
    pub wanted_seed: u64,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// What fio finds wrong with the block.
    pub found: Found,
}

/// What fio's verify finds in a block a later write changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// Another write's header: its seed is not the one wanted (`bad header rand_seed`).
    OtherSeed,
    /// Another write's header in a job that only writes: its number is not the one wanted
    /// (`bad header numberio`; fio's 16-bit write numbers of the pass).
    OtherNumber { header: u16, wanted: u16 },
    /// A later write's data over the header, from before the block (`bad magic header`).
    DataOverHeader,
    /// The header intact, part of the data another write's (a bad checksum).
    OtherData,
}

impl SeedMismatch {
    /// fio's words for it (verify.c, `verify_header`).
    pub fn reason(&self) -> String {
        match self.found {
            Found::DataOverHeader => {
                return "bad magic header: a later write of the pass covers the block's header"
                    .to_owned()
            }
            Found::OtherData => {
                return "bad checksum: a later write of the pass changed the block's data"
                    .to_owned()
            }
            Found::OtherNumber { header, wanted } => {
                return format!("bad header numberio {header}, wanted {wanted}")
            }
            Found::OtherSeed => {}
        }
        format!(
            "bad header rand_seed {}, wanted {}",
            self.header_seed, self.wanted_seed
        )
    }
}

/// One fio thread's writes of the current pass as fio's verify log holds them, and the first
/// pass whose read-back fio's seed check fails.
#[derive(Debug)]
pub struct SeedOrder {
    /// `verify_state` as seeded: every verify pass starts from it, and with `randrepeat` every
    /// pass's writes too.
    seeded: FioRand,
    randrepeat: bool,
    /// The stream the writes draw from now.
    writes: FioRand,
    /// The pass the logged writes belong to.
    pass: u32,
    /// fio's log of the pass's writes (its tree, or its list where a random map is kept), each
    /// with its header seed.
    pieces: FioHistory<u64>,
    /// The job only writes: fio checks write numbers, not seeds (list only).
    numbers_only: bool,
    failure: Option<SeedMismatch>,
}

/// Whether fio checks each header's write number in `job` (verify.c `verify_header`:
/// `numberio` when `td_write`, `td_min_bs == td_max_bs`, not time-based, not `verify_only`): a
/// fio job that writes, with one block size, a headed kind, on an engine that moves data.
pub(crate) fn fio_checks_write_numbers(job: &JobSpec) -> bool {
    job.fio_random.is_some()
        && job.fio_writes()
        && job.fio_smallest_block_bytes() == job.max_block_bytes()
        && !job.time_based
        && !job.fio_engine_fakes_io()
        && job
            .verify_spec
            .as_ref()
            .is_some_and(|v| !v.only && !matches!(v.kind, VerifyKind::Pattern | VerifyKind::Null))
}

impl SeedOrder {
    /// The tracker for fio thread `thread_number` running `job`, when fio checks its seeds (or
    /// write numbers) and can fail the check: a fio job (its own streams) that verifies with a
    /// headed kind and random data, without a backlog, and either reads and writes, or only
    /// writes blocks of one size into fio's list (module docs).
    pub fn for_job(job: &JobSpec, thread_number: u32) -> Option<SeedOrder> {
        let fio = job.fio_random.as_ref()?;
        let spec = job.verify_spec.as_ref()?;
        let headed = !matches!(spec.kind, VerifyKind::Pattern | VerifyKind::Null);
        let mixed = job.read_percent > 0 && job.read_percent < 100;
        // A verify pattern leaves fio's seeds undrawn (verify.c `fill_verify_pattern`): only
        // the write numbers are checked then.
        // fio's null engine fakes its I/O (FIO_FAKEIO): verify.c `verify_io_u` passes every
        // read before looking at a header.
        let checked = job.verify && headed && spec.backlog.is_none() && !job.fio_engine_fakes_io();
        let mixed = mixed && spec.pattern.is_none();
        let numbered = job.read_percent == 0
            && job.trim == storlab_job::TrimMode::None
            && fio_checks_write_numbers(job)
            && fio_logs_writes_in_a_list(job);
        if !(checked && (mixed || numbered)) {
            return None;
        }
        let seeds = crate::fio_rand::fio_job_seeds(fio, thread_number);
        let seeded = FioRand::new(seeds[VERIFY_SEED_INDEX], fio.tausworthe64);
        Some(SeedOrder {
            writes: seeded.clone(),
            seeded,
            randrepeat: fio.reseeds_each_loop(),
            pass: 0,
            pieces: FioHistory::new(fio_logs_writes_in_a_list(job)),
            numbers_only: !mixed,
            failure: None,
        })
    }

    /// A write of `len_bytes` at `offset_bytes` issued in fio pass `pass` (loops counted from
    /// 0): it draws its seed and enters the log, dropping every logged write it overlaps.
    pub fn write(&mut self, pass: u32, offset_bytes: u64, len_bytes: u64) {
        if self.failure.is_some() {
            return;
        }
        if pass != self.pass {
            self.judge_pass();
            self.pass = pass;
            if self.failure.is_some() {
                return;
            }
        }
        let seed = draw(&mut self.writes);
        self.pieces.log(offset_bytes, len_bytes, seed);
    }

    /// A write `serialize_overlap` held back: fio drew its seed before the overlap check, and
    /// draws another when the requeued write goes again (backend.c `do_io` populates every
    /// write it takes, a requeued one too, before `io_u_submit` can return FIO_Q_BUSY).
    pub fn requeued_write(&mut self) {
        draw(&mut self.writes);
    }

    /// The job's writes are done: judges the last pass; the first failing block, if any.
    pub fn finish(&mut self) -> Option<SeedMismatch> {
        self.judge_pass();
        self.failure
    }

    /// fio's verify pass over the logged writes: the stream re-seeded, one draw per block in
    /// offset order, the first header that differs fails it. The next pass's writes start
    /// from the re-seeded stream (`randrepeat`) or go on from the verify pass's.
    fn judge_pass(&mut self) {
        if self.failure.is_some() {
            return;
        }
        let pieces = self.pieces.drain();
        if self.pieces.is_list() {
            self.failure = first_overwritten(&pieces, &self.seeded, self.numbers_only);
            let mut verify = self.seeded.clone();
            pieces.iter().for_each(|_| {
                draw(&mut verify);
            });
            self.writes = if self.randrepeat {
                self.seeded.clone()
            } else {
                verify
            };
            return;
        }
        let mut verify = self.seeded.clone();
        for (offset_bytes, len_bytes, header_seed) in pieces {
            let wanted_seed = draw(&mut verify);
            if header_seed != wanted_seed {
                self.failure = Some(SeedMismatch {
                    header_seed,
                    wanted_seed,
                    offset_bytes,
                    len_bytes,
                    found: Found::OtherSeed,
                });
                return;
            }
        }
        self.writes = if self.randrepeat {
            self.seeded.clone()
        } else {
            verify
        };
    }
}

/// fio's verify pass over a list of one pass's writes: the first piece (in order) whose header
/// fails, as the pass finds it when it reads that piece back (`seeded` gives each read its
/// draw). A piece fails where a later write overlapped it, or (seeds checked) where its own
/// seed is not the draw the pass gives it: the writes of a pass after the first that did not
/// re-seed their stream. `numbers_only`: a job that only writes, whose headers carry the seed
/// wanted, checked by write number. Later writes are laid over the file from the last back, so
/// each byte range keeps the write that left it.
fn first_overwritten(
    pieces: &[(u64, u64, u64)],
    seeded: &FioRand,
    numbers_only: bool,
) -> Option<SeedMismatch> {
    // Disjoint ranges written after the piece at hand: start -> (end, writer's index).
    let mut later: BTreeMap<u64, (u64, usize)> = BTreeMap::new();
    let mut first = None;
    for (index, &(start, len, _)) in pieces.iter().enumerate().rev() {
        let end = start + len;
        let overlapping: Vec<(u64, (u64, usize))> = later
            .range(..end)
            .rev()
            .take_while(|(_, (range_end, _))| *range_end > start)
            .map(|(&at, &range)| (at, range))
            .collect();
        if !overlapping.is_empty() {
            // Which later write lies at the block's start now, if one does.
            let at_start = overlapping
                .iter()
                .find(|(at, (range_end, _))| *at <= start && *range_end > start)
                .map(|(_, (_, writer))| *writer);
            first = Some((index, at_start));
        }
        // This write fills what no later write covers.
        let mut cursor = start;
        let mut gaps = Vec::new();
        for (at, (range_end, _)) in overlapping.iter().rev() {
            if *at > cursor {
                gaps.push((cursor, *at));
            }
            cursor = cursor.max(*range_end);
        }
        if cursor < end {
            gaps.push((cursor, end));
        }
        for (gap_start, gap_end) in gaps {
            later.insert(gap_start, (gap_end, index));
        }
    }
    let mut verify = seeded.clone();
    let overwritten_at = first.map_or(pieces.len(), |(index, _)| index);
    for (index, &(offset_bytes, len_bytes, own_seed)) in pieces.iter().enumerate() {
        let wanted_seed = draw(&mut verify);
        if index < overwritten_at {
            if !numbers_only && own_seed != wanted_seed {
                return Some(SeedMismatch {
                    header_seed: own_seed,
                    wanted_seed,
                    offset_bytes,
                    len_bytes,
                    found: Found::OtherSeed,
                });
            }
            continue;
        }
        let writer = first.and_then(|(_, writer)| writer);
        let found = match writer {
            Some(writer) if pieces[writer].0 == offset_bytes && numbers_only => {
                Found::OtherNumber {
                    header: writer as u16,
                    wanted: index as u16,
                }
            }
            Some(writer) if pieces[writer].0 == offset_bytes => Found::OtherSeed,
            Some(_) => Found::DataOverHeader,
            None => Found::OtherData,
        };
        let header_seed = match (found, writer) {
            (Found::DataOverHeader, _) => 0,
            (_, Some(writer)) => pieces[writer].2,
            (_, None) => own_seed,
        };
        return Some(SeedMismatch {
            header_seed,
            wanted_seed,
            offset_bytes,
            len_bytes,
            found,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracker() -> SeedOrder {
        let mut job = JobSpec::new(
            "t",
            storlab_job::EngineKind::Psync,
            storlab_job::Target::None,
        );
        job.read_percent = 50;
        job.random_percent = 100;
        job.random_map = false;
        job.verify = true;
        job.verify_spec = Some(storlab_job::VerifySpec::new(VerifyKind::Crc32));
        job.fio_random = Some(storlab_job::FioRandom {
            randseed: crate::fio_rand::FIO_DEFAULT_RANDSEED,
            randrepeat: true,
            randseed_given: false,
            tausworthe64: false,
            lfsr: false,
            allrandrepeat: false,
            rand_mode: false,
        });
        SeedOrder::for_job(&job, 1).expect("a mixed norandommap verify job is checked")
    }

    /// fio 3.33, `--rw=randrw --rwmixread=50 --size=512k --loops=3 --norandommap
    /// --verify=crc32` (thread 1, default seed), fails: "verify: bad header rand_seed
    /// 1350878973192478184, wanted 46386204153304124 at file data offset 0": the wanted seed
    /// is the first draw of the re-seeded stream.
    #[test]
    fn the_first_block_read_back_wants_fios_first_draw() {
        let mut order = tracker();
        order.write(0, 8192, 4096);
        order.write(0, 0, 4096);
        let failure = order.finish().expect("a step back fails");
        assert_eq!(failure.wanted_seed, 46386204153304124);
        assert_eq!((failure.offset_bytes, failure.len_bytes), (0, 4096));
    }

    /// fio 3.33, `--rw=randrw:2 --size=256k --verify=crc32c`: with the random map the log is a
    /// list; the sequential I/O after a random one overwrites a later random block, and the
    /// pass fails reading the first write whose block changed.
    #[test]
    fn in_write_order_a_block_a_later_write_changed_fails() {
        let mut order = tracker();
        order.pieces = FioHistory::new(true);
        order.write(0, 0, 4096);
        order.write(0, 8192, 4096);
        order.write(0, 4096, 8192);
        let failure = order
            .finish()
            .expect("the second write's header was overwritten");
        assert_eq!(
            (failure.offset_bytes, failure.found),
            (8192, Found::DataOverHeader)
        );
        let mut order = tracker();
        order.pieces = FioHistory::new(true);
        order.write(0, 0, 4096);
        order.write(0, 8192, 4096);
        order.write(0, 8192, 4096);
        let failure = order.finish().expect("a rewrite at the same start");
        assert_eq!(
            (failure.offset_bytes, failure.found),
            (8192, Found::OtherSeed)
        );
        let mut order = tracker();
        order.pieces = FioHistory::new(true);
        for block in [3, 0, 2, 1] {
            order.write(0, block * 4096, 4096);
        }
        assert_eq!(order.finish(), None, "no block written twice");
    }

    /// fio 3.33, `--rw=randwrite:4k --bs=4k --verify=md5`: "verify: bad header numberio 174,
    /// wanted 0 at file data offset 61440": a job that only writes checks write numbers.
    #[test]
    fn a_writing_job_fails_on_the_number_of_the_write_over_its_block() {
        let mut order = tracker();
        order.pieces = FioHistory::new(true);
        order.numbers_only = true;
        for block in [0, 2, 3, 0] {
            order.write(0, block * 4096, 4096);
        }
        let failure = order.finish().expect("block 0 was written again");
        assert_eq!(
            (failure.offset_bytes, failure.found),
            (
                0,
                Found::OtherNumber {
                    header: 3,
                    wanted: 0
                }
            )
        );
        assert_eq!(failure.reason(), "bad header numberio 3, wanted 0");
    }

    /// fio 3.33, `--rw=randrw --size=512k --io_size=1024k --randseed=51767 --verify=xxhash`:
    /// `randseed` turns `randrepeat` off, so the second pass's writes go on in the stream its
    /// verify pass re-seeded, and that pass fails on its first piece.
    #[test]
    fn a_pass_whose_writes_did_not_start_the_stream_again_fails_in_the_list() {
        let mut order = tracker();
        order.pieces = FioHistory::new(true);
        order.randrepeat = false;
        for pass in 0..2 {
            for block in [1, 0] {
                order.write(pass, block * 4096, 4096);
            }
        }
        let failure = order.finish().expect("the second pass drew on");
        assert_eq!(
            (failure.offset_bytes, failure.found),
            (4096, Found::OtherSeed)
        );
        let mut order = tracker();
        order.pieces = FioHistory::new(true);
        for pass in 0..2 {
            for block in [1, 0] {
                order.write(pass, block * 4096, 4096);
            }
        }
        assert_eq!(
            order.finish(),
            None,
            "randrepeat starts each pass's writes again"
        );
    }

    #[test]
    fn ascending_writes_pass_and_a_rewrite_fails_its_pass() {
        let mut order = tracker();
        for pass in 0..2 {
            for block in 0..4 {
                order.write(pass, block * 4096, 4096);
            }
        }
        assert_eq!(order.finish(), None);
        let mut order = tracker();
        order.write(0, 0, 8192);
        order.write(0, 4096, 4096);
        let failure = order.finish().expect("the rewrite dropped the first write");
        assert_eq!((failure.offset_bytes, failure.len_bytes), (4096, 4096));
    }
}
