//! fio 3.33 as the oracle of what its random distributions and its write buffers do (issue 34):
//! each job runs under fio and storlab on the same fresh file (the fuzzer's runner), and
//! - a `random_distribution` of `zipf`, `pareto` or `normal` issues fio's offsets in fio's
//!   order (lib/zipf.c, lib/gauss.c, seeded from the file's name: filesetup.c
//!   `__init_rand_distribution`), whatever the generator, map, mix or share of random I/O;
//! - `buffer_compress_percentage`, `zero_buffers`, `buffer_pattern`, `refill_buffers` and
//!   `dedupe_percentage` leave fio's bytes in the file (io_u.c `fill_io_buffer`, backend.c
//!   `init_io_u`, re-seeded at each loop as libfio.c's `clear_io_state` does).
//!
//! A failure prints the job as the two command lines that show it.

use crate::fio_diff::jobs::Job;
use crate::fio_diff::run::{run, Exited, Ran, Tool};
use crate::fio_diff::{fio_present, reproduction};

/// Jobs whose offsets come from fio's hashed-rank generators (several drawn from the fuzzer's
/// corpus, where they differed before).
const DISTRIBUTION_JOBS: &[&str] = &[
    "--rw=randread --bs=4k --size=256k --random_distribution=zipf:1.1",
    "--rw=randwrite --bs=512 --size=512k --random_distribution=zipf:1.1 --refill_buffers",
    "--rw=randread --size=256k --randseed=83487 --random_distribution=normal:30 --iodepth=4",
    "--rw=randrw --rwmixread=70 --bs=16k --offset=65536 --size=256k --norandommap \
     --random_distribution=pareto:0.5 --fsync=7",
    "--rw=randrw --rwmixread=10 --bs=512 --offset=512 --size=512k --random_generator=lfsr \
     --random_distribution=pareto:0.5",
    "--rw=randrw --bsrange=512-8k --blockalign=1k --offset=6144 --size=128k \
     --random_distribution=zipf:1.1 --ioengine=sync",
    "--rw=randread --bs=16k,1k --size=256k --random_generator=tausworthe \
     --random_distribution=normal:30",
    "--rw=randread --bs=4k --size=256k --random_distribution=zipf:0.8:0.25 --loops=2",
    "--rw=randread --bs=4k --size=256k --random_distribution=normal:5:0.75",
    // Zoned: the zone from `zone_state`, the block inside it from the offset stream, no map
    // (fio turns it off for every distribution but the uniform one).
    "--rw=randrw --rwmixread=10 --bs=32k --blockalign=8k --size=512k \
     --random_distribution=zoned:50/10:50/90 --ioengine=posixaio",
    "--rw=randwrite --bs=4k --size=128k --random_distribution=zoned:50/10:50/90",
    "--rw=randread --bs=4k --size=256k --random_distribution=zoned_abs:60/16k:40/48k",
    "--rw=randrw --bs=4k --size=256k --random_distribution=zoned:30/20:70 --loops=2 --randseed=3",
    "--rw=randread --bs=4k --size=256k --random_distribution=zoned:60/10:40/90 \
     --random_generator=lfsr",
];

/// Jobs whose written bytes fio fixes without its clock stamp.
const DATA_JOBS: &[&str] = &[
    "--rw=write --bs=4k --size=256k --buffer_compress_percentage=90",
    "--rw=rw --bsrange=2k-4k --blockalign=1k --size=512k --buffer_compress_percentage=90",
    "--rw=write --bs=32k --offset=65536 --loops=3 --iodepth=2 --buffer_compress_percentage=0",
    "--rw=randwrite --bs=8k --size=256k --iodepth=4 --ioengine=psync --zero_buffers",
    "--rw=write --bs=4k --size=128k --buffer_pattern=0xdeadbeef",
    "--rw=randwrite --bs=4k --size=256k --refill_buffers --loops=2",
    "--rw=write:8k --bs=16k --size=128k --loops=2 --ioengine=sync --dedupe_percentage=25",
    "--rw=randwrite --bs=4k --size=128k --buffer_compress_percentage=50 --buffer_pattern=0xab",
    // `scramble_buffers=0`: the buffers as filled at the start, no clock stamp; with
    // `allrandrepeat` filled from fio's fixed buffer seed, whatever `randseed` says.
    "--rw=rw --bs=8k --size=128k --iodepth=4 --ioengine=libaio --scramble_buffers=0",
    "--rw=randwrite --bs=4k --size=128k --randseed=5 --allrandrepeat=1 --scramble_buffers=0",
];

fn job_of(line: &str) -> Job {
    let keys = line
        .split_whitespace()
        .map(|flag| {
            let flag = flag.trim_start_matches("--");
            match flag.split_once('=') {
                Some((key, value)) => (key.to_owned(), value.to_owned()),
                None => (flag.to_owned(), String::new()),
            }
        })
        .collect();
    Job { keys }
}

/// Both tools' runs of `job`, each required to have ended with status 0.
fn both(job: &Job) -> (Box<Exited>, Box<Exited>) {
    let scratch = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ran = |tool| match run(tool, job, scratch.path()) {
        Ran::Exited(exited) if exited.code == 0 => exited,
        Ran::Exited(exited) => panic!(
            "{tool:?} failed ({}): {}\n{}",
            exited.code,
            exited.stderr,
            reproduction(job)
        ),
        Ran::Hung => panic!("{tool:?} hung\n{}", reproduction(job)),
    };
    (ran(Tool::Fio), ran(Tool::Storlab))
}

#[test]
fn distributions_issue_fios_offsets_in_fios_order() {
    if !fio_present() {
        return;
    }
    let mut logged = 0;
    for line in DISTRIBUTION_JOBS {
        let job = job_of(line);
        let (fio, storlab) = both(&job);
        // A block larger than the ranked one (`bs=16k,1k`, `blockalign`) can put the first
        // offset past the region, where fio ends the job before any I/O.
        logged += usize::from(!fio.actions.is_empty());
        let first_difference = fio
            .actions
            .iter()
            .zip(&storlab.actions)
            .position(|(a, b)| a != b);
        assert!(
            first_difference.is_none() && fio.actions.len() == storlab.actions.len(),
            "{} actions by fio, {} by storlab, first difference at {first_difference:?}: \
             fio {:?}, storlab {:?}\n{}",
            fio.actions.len(),
            storlab.actions.len(),
            first_difference.map(|at| &fio.actions[at]),
            first_difference.map(|at| &storlab.actions[at]),
            reproduction(&job)
        );
    }
    assert!(
        logged + 2 >= DISTRIBUTION_JOBS.len(),
        "{logged} jobs did I/O"
    );
}

#[test]
fn buffers_hold_fios_bytes() {
    if !fio_present() {
        return;
    }
    for line in DATA_JOBS {
        let job = job_of(line);
        let (fio, storlab) = both(&job);
        assert!(fio.data.iter().any(|b| *b != 0) || line.contains("zero_buffers"));
        let first_difference = fio.data.iter().zip(&storlab.data).position(|(a, b)| a != b);
        assert!(
            first_difference.is_none() && fio.data.len() == storlab.data.len(),
            "the files differ first at byte {first_difference:?} (sizes {} and {})\n{}",
            fio.data.len(),
            storlab.data.len(),
            reproduction(&job)
        );
    }
}

/// fio 3.33's mmap engine puts an I/O at its offset less the region's start (engines/mmap.c):
/// a job whose region starts past 0 writes the file's first bytes. On a regular file storlab
/// does the same, with a warning saying so: the same sectors written as fio's.
#[test]
fn an_mmap_job_past_the_files_start_writes_its_first_bytes_as_fio() {
    if !fio_present() {
        return;
    }
    for line in [
        "--rw=write --bs=16k --size=64k --offset=128k --ioengine=mmap",
        "--rw=randrw --rwmixread=10 --bs=16k --size=64k --ioengine=mmap --numjobs=2 \
         --offset_increment=256k",
    ] {
        let job = job_of(line);
        let scratch = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let Ran::Exited(fio) = run(Tool::Fio, &job, scratch.path()) else {
            panic!("fio hung\n{}", reproduction(&job))
        };
        let first_bytes_written = fio.data[..64 << 10].iter().any(|&b| b != 0);
        let past_the_region = fio.data[(320 << 10)..].iter().all(|&b| b == 0);
        assert!(
            fio.code == 0 && first_bytes_written && past_the_region,
            "fio's mmap no longer writes the file's first bytes: {}",
            reproduction(&job)
        );
        let Ran::Exited(storlab) = run(Tool::Storlab, &job, scratch.path()) else {
            panic!("storlab hung\n{}", reproduction(&job))
        };
        assert_eq!(storlab.code, 0, "{}", reproduction(&job));
        assert!(
            storlab.stderr.contains("fio 3.33's mmap engine"),
            "{}",
            storlab.stderr
        );
        let written = |data: &[u8]| -> Vec<bool> {
            data.chunks(512)
                .map(|s| s.iter().any(|&b| b != 0))
                .collect()
        };
        assert_eq!(
            written(&storlab.data),
            written(&fio.data),
            "another set of sectors written\n{}",
            reproduction(&job)
        );
    }
}
