//! fio's sequences checked against fio 3.33's own first I/Os, ends and orders.

use super::*;
use storlab_job::{EngineKind, Target};

const KIB: u64 = 1024;

fn fio_job(shape: impl Fn(&mut JobSpec)) -> JobSpec {
    let mut job = JobSpec::new("t", EngineKind::Null, Target::None);
    job.fio_random = Some(FioRandom {
        randseed: crate::fio_rand::FIO_DEFAULT_RANDSEED,
        randrepeat: true,
        randseed_given: false,
        tausworthe64: false,
        lfsr: false,
        allrandrepeat: false,
        rand_mode: false,
    });
    shape(&mut job);
    job
}

fn drawn(job: &JobSpec, region_bytes: u64, file_bytes: u64) -> Vec<(char, u64, u32)> {
    let region = Region {
        start_bytes: 0,
        len_bytes: region_bytes,
    };
    let fio = job.fio_random.expect("a fio job");
    let mut sequence = FioSequence::new(job, &fio, region, file_bytes, 1);
    std::iter::from_fn(|| sequence.next(None))
        .map(|io| {
            let action = if io.direction == IoDirection::Write {
                'w'
            } else {
                'r'
            };
            (action, io.offset_bytes, io.len_bytes)
        })
        .collect()
}

/// fio 3.33's `write_iolog` of `fio --name=x --filename=F --rw=randrw --rwmixread=60
/// --bssplit=4k/50:16k/50 --size=512k --randseed=3` on a 1 MiB file: directions from the
/// mix stream, sizes from the split stream, offsets through the random map (the 16 KiB
/// write at 184320 shrinks to the 12 KiB left free before a taken block).
#[test]
fn a_random_mix_with_a_split_issues_fios_first_ios() {
    let job = fio_job(|job| {
        job.read_percent = 60;
        job.fio_random.as_mut().unwrap().randseed = 3;
        job.fio_random.as_mut().unwrap().randseed_given = true;
        let split = BlockSizeSpec::Split(vec![
            BlockSizeShare {
                size_bytes: 4 * KIB,
                percent: 50,
            },
            BlockSizeShare {
                size_bytes: 16 * KIB,
                percent: 50,
            },
        ]);
        job.block_size_read = split.clone();
        job.block_size_write = split;
    });
    let ios = drawn(&job, 512 * KIB, 1024 * KIB);
    let expected = [
        ('w', 28672, 4096),
        ('r', 385024, 16384),
        ('w', 438272, 16384),
        ('w', 245760, 4096),
        ('r', 208896, 16384),
        ('w', 454656, 16384),
        ('w', 196608, 4096),
        ('w', 184320, 12288),
        ('w', 475136, 4096),
        ('r', 32768, 4096),
        ('r', 471040, 4096),
        ('r', 339968, 4096),
    ];
    assert_eq!(ios[..expected.len()], expected);
}

/// fio 3.33 with `--rw=randread --percentage_random=50 --bs=4k --size=256k` on a 1 MiB
/// file ends the job after 58 I/Os, when a sequential one would start past the region's
/// end; its first ones, from its log, go on from where the random ones ended.
#[test]
fn a_partly_random_job_ends_where_fio_ends_it() {
    let job = fio_job(|job| job.random_percent = 50);
    let ios = drawn(&job, 256 * KIB, 1024 * KIB);
    assert_eq!(ios.len(), 58);
    let offsets: Vec<u64> = ios.iter().take(12).map(|io| io.1).collect();
    assert_eq!(
        offsets,
        [
            12288, 16384, 20480, 192512, 196608, 217088, 221184, 122880, 102400, 221184, 98304,
            102400
        ]
    );
    // On a region that is the whole file, the sequential stream falls back to a random
    // block at the end instead, and the job moves all its bytes.
    let whole = drawn(&job, 256 * KIB, 256 * KIB);
    assert_eq!(
        whole.iter().map(|io| u64::from(io.2)).sum::<u64>(),
        256 * KIB
    );
}

/// Every loop re-seeds (randrepeat): the second pass repeats the first.
#[test]
fn each_loop_repeats_the_first_with_randrepeat() {
    let job = fio_job(|job| job.loops = 2);
    let ios = drawn(&job, 64 * KIB, 64 * KIB);
    assert_eq!(ios.len(), 32);
    assert_eq!(ios[..16], ios[16..]);
    let mut offsets: Vec<u64> = ios[..16].iter().map(|io| io.1).collect();
    offsets.sort_unstable();
    assert_eq!(offsets, (0..16).map(|b| b * 4 * KIB).collect::<Vec<_>>());
}

/// The offsets, in KiB, of a read job with backward holes on a region of a file.
fn backward_kib(shape: impl Fn(&mut JobSpec), region: Region, file_kib: u64) -> Vec<u64> {
    let job = fio_job(|job| {
        job.read_percent = 100;
        job.random_percent = 0;
        job.rw_modifier = RwModifier::BackBytes(8 * KIB);
        shape(job);
    });
    let fio = job.fio_random.expect("a fio job");
    let mut sequence = FioSequence::new(&job, &fio, region, file_kib * KIB, 1);
    std::iter::from_fn(|| sequence.next(None))
        .map(|io| {
            assert_eq!(u64::from(io.len_bytes), 4 * KIB);
            io.offset_bytes / KIB
        })
        .collect()
}

/// fio 3.33's `write_iolog` of `fio --name=x --filename=F --rw=read:-8k --bs=4k` with the
/// `--size`, `--offset`, `--loops` and `--io_size` below on a fresh file of the size given
/// (io_u.c, `get_next_seq_offset`): from the region's start, then back from its end less
/// 8 KiB a block at a time, wrapping to the end again; a region past 0 starts at `io_size`
/// taken as a position; every loop's bytes go in one sequence (backend.c counts issued
/// bytes over the job).
#[test]
fn backward_holes_issue_fios_offsets() {
    let at = |start_kib: u64, len_kib: u64| Region {
        start_bytes: start_kib * KIB,
        len_bytes: len_kib * KIB,
    };
    // --size=64k on 64 KiB, and on 128 KiB.
    let whole = [0, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0];
    assert_eq!(backward_kib(|_| {}, at(0, 64), 64), whole);
    assert_eq!(backward_kib(|_| {}, at(0, 64), 128), whole);
    // --size=32k --offset=64k, and --offset=16k, on 128 KiB.
    assert_eq!(
        backward_kib(|_| {}, at(64, 32), 128),
        [88, 84, 80, 76, 72, 68, 64, 88]
    );
    assert_eq!(
        backward_kib(|_| {}, at(16, 32), 128),
        [24, 20, 16, 40, 36, 32, 28, 24]
    );
    // --size=32k --loops=2 on 64 KiB: one sequence of 64 KiB, no start over.
    assert_eq!(
        backward_kib(|job| job.loops = 2, at(0, 32), 64),
        [0, 24, 20, 16, 12, 8, 4, 0, 24, 20, 16, 12, 8, 4, 0, 24]
    );
    // --size=16k --io_size=32k, and --size=16k --loops=3, on 64 KiB.
    assert_eq!(
        backward_kib(|job| job.io_size_bytes = Some(32 * KIB), at(0, 16), 64),
        [0, 8, 4, 0, 8, 4, 0, 8]
    );
    assert_eq!(
        backward_kib(|job| job.loops = 3, at(0, 16), 64),
        [0, 8, 4, 0, 8, 4, 0, 8, 4, 0, 8, 4]
    );
    // --rw=read:-12k --size=64k on 64 KiB.
    assert_eq!(
        backward_kib(
            |job| job.rw_modifier = RwModifier::BackBytes(12 * KIB),
            at(0, 64),
            64
        ),
        [0, 52, 44, 36, 28, 20, 12, 4, 52, 44, 36, 28, 20, 12, 4, 52]
    );
}

/// fio 3.33's `write_iolog` of `--rw=rw:-8k --bs=4k --size=64k` on 64 KiB: each direction
/// walks backwards from its own start, the mix drawn from fio's stream.
#[test]
fn a_backward_mix_walks_each_direction_as_fio() {
    let job = fio_job(|job| {
        job.read_percent = 50;
        job.random_percent = 0;
        job.rw_modifier = RwModifier::BackBytes(8 * KIB);
    });
    let ios = drawn(&job, 64 * KIB, 64 * KIB);
    let fio: Vec<(char, u64)> = [
        ('r', 0),
        ('r', 56),
        ('r', 52),
        ('w', 0),
        ('r', 48),
        ('r', 44),
        ('w', 56),
        ('w', 52),
        ('w', 48),
        ('r', 40),
        ('w', 44),
        ('r', 36),
        ('w', 40),
        ('r', 32),
        ('r', 28),
        ('r', 24),
    ]
    .iter()
    .map(|(action, kib)| (*action, kib * KIB))
    .collect();
    let ours: Vec<(char, u64)> = ios.iter().map(|io| (io.0, io.1)).collect();
    assert_eq!(ours, fio);
}

/// fio 3.33's `write_iolog` of `fio --name=x --filename=F --rw=randread
/// --random_generator=lfsr` with `--bs=4k --size=64k` and `--bs=8k --size=200k` on a 1 MiB
/// file (lib/lfsr.c seeded with thread 1's offset seed): the register's blocks in its
/// order, each once, and a second loop the same as the first.
#[test]
fn the_lfsr_issues_fios_blocks_in_fios_order() {
    let lfsr_blocks = |bs_kib: u64, size_kib: u64, loops: u32| -> Vec<u64> {
        let job = fio_job(|job| {
            job.fio_random.as_mut().unwrap().lfsr = true;
            job.block_size_read = BlockSizeSpec::Fixed(bs_kib * KIB);
            job.block_size_write = BlockSizeSpec::Fixed(bs_kib * KIB);
            job.loops = loops;
        });
        drawn(&job, size_kib * KIB, 1024 * KIB)
            .iter()
            .map(|io| io.1 / (bs_kib * KIB))
            .collect()
    };
    let fio_4k = [15, 11, 9, 14, 3, 8, 0, 4, 6, 7, 10, 1, 12, 2, 5, 13];
    assert_eq!(lfsr_blocks(4, 64, 1), fio_4k);
    assert_eq!(
        lfsr_blocks(8, 200, 1),
        [
            15, 23, 11, 21, 9, 20, 14, 3, 17, 24, 8, 0, 4, 6, 7, 19, 10, 1, 16, 12, 2, 5, 18, 13,
            22
        ]
    );
    let two_loops = lfsr_blocks(4, 64, 2);
    assert_eq!(two_loops[..16], fio_4k);
    assert_eq!(two_loops[16..], fio_4k);
}
