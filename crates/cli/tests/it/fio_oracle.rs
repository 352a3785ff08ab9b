//! fio as the oracle (issue 24, "same job, same I/O as fio"): the same job runs under fio and
//! under storlab, each recording every I/O with `write_iolog`, and the logs must agree: the same
//! offset sequence for deterministic jobs, the same size distribution for `bsrange`, the same
//! file length after a job that lays out or refuses. Skipped with a message where fio is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One I/O of a log: direction, offset, length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LoggedIo {
    pub(crate) write: bool,
    pub(crate) offset_bytes: u64,
    pub(crate) len_bytes: u64,
}

/// Reads an iolog of fio's format version 2 (`FILE ACTION [OFFSET LENGTH]`) or 3 (the same after
/// a timestamp), keeping the reads and writes in order.
pub(crate) fn parse_iolog(path: &Path) -> Vec<LoggedIo> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    let timestamped = match header {
        "fio version 2 iolog" => false,
        "fio version 3 iolog" => true,
        other => panic!("{}: not an iolog: {other}", path.display()),
    };
    lines
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let fields = if timestamped {
                &fields[1..]
            } else {
                &fields[..]
            };
            let (action, offset, len) = match fields {
                [_, action, offset, len] => (*action, offset, len),
                _ => return None,
            };
            let write = match action {
                "read" => false,
                "write" => true,
                _ => return None,
            };
            Some(LoggedIo {
                write,
                offset_bytes: offset.parse().unwrap(),
                len_bytes: len.parse().unwrap(),
            })
        })
        .collect()
}

pub(crate) fn fio_present() -> bool {
    let found = Command::new("fio").arg("--version").output().is_ok();
    if !found {
        eprintln!("skipping: fio is not installed (Debian package fio)");
    }
    found
}

/// A scratch directory with a data file of `file_bytes` (sparse, read as zeros).
pub(crate) fn scratch(file_bytes: u64) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::File::create(&data)
        .unwrap()
        .set_len(file_bytes)
        .unwrap();
    (dir, data)
}

/// Runs fio with `flags` on `data`; its I/O log.
pub(crate) fn fio_log(dir: &Path, data: &Path, flags: &[&str]) -> Vec<LoggedIo> {
    let log = dir.join("fio.log");
    // In `dir`: a verify job leaves fio's verify state file in the current directory.
    let output = Command::new("fio")
        .current_dir(dir)
        .arg("--name=oracle")
        .arg(format!("--filename={}", data.display()))
        .arg(format!("--write_iolog={}", log.display()))
        .arg("--output=/dev/null")
        .args(flags)
        .output()
        .unwrap();
    assert!(output.status.success(), "fio {flags:?}: {output:?}");
    parse_iolog(&log)
}

/// Runs storlab with the same `flags` on `data`; its I/O log.
pub(crate) fn storlab_log(dir: &Path, data: &Path, flags: &[&str]) -> Vec<LoggedIo> {
    run_storlab(dir, data, flags);
    parse_iolog(&dir.join("storlab.log"))
}

/// Runs storlab with the same `flags` on `data`, logging to `storlab.log` in `dir`.
pub(crate) fn run_storlab(dir: &Path, data: &Path, flags: &[&str]) {
    let log = dir.join("storlab.log");
    let output = Command::new(env!("CARGO_BIN_EXE_storlab"))
        .current_dir(dir)
        .args(["run", "--no-db"])
        .arg(format!("--filename={}", data.display()))
        .arg(format!("--write_iolog={}", log.display()))
        .args(flags)
        .output()
        .unwrap();
    assert!(output.status.success(), "storlab {flags:?}: {output:?}");
}

/// A time-based job's logs agree for as far as the shorter one goes, which must be more than
/// `at_least` I/Os (the tools ran for the same time, not the same count).
pub(crate) fn assert_same_prefix(fio: &[LoggedIo], storlab: &[LoggedIo], at_least: usize) {
    let common = fio.len().min(storlab.len());
    assert!(common > at_least, "only {common} I/Os in the run");
    assert_eq!(storlab[..common], fio[..common]);
}

/// Both tools' logs of one job on a fresh file of `file_bytes`.
pub(crate) fn both_logs(file_bytes: u64, flags: &[&str]) -> (Vec<LoggedIo>, Vec<LoggedIo>) {
    let (dir, data) = scratch(file_bytes);
    let fio = fio_log(dir.path(), &data, flags);
    let storlab = storlab_log(dir.path(), &data, flags);
    (fio, storlab)
}

pub(crate) const MIB: u64 = 1 << 20;

/// Regression: without `rw` storlab read at random; fio reads sequentially. Also `number_ios`,
/// which fio stops at one pass over the region: 1000 I/Os of 4 KiB on 1 MiB are 256.
#[test]
fn default_rw_and_number_ios_issue_fios_offsets() {
    if !fio_present() {
        return;
    }
    let (fio, storlab) = both_logs(MIB, &["--bs=4k", "--number_ios=1000"]);
    assert_eq!(fio.len(), 256, "fio's own count changed");
    assert_eq!(storlab, fio);
}

#[test]
fn loops_and_offset_increment_issue_fios_offsets() {
    if !fio_present() {
        return;
    }
    let (fio, storlab) = both_logs(
        MIB,
        &[
            "--rw=read",
            "--bs=16k",
            "--offset=64k",
            "--size=256k",
            "--loops=3",
        ],
    );
    assert_eq!(fio.len(), 3 * 16);
    assert_eq!(storlab, fio);
    // Two workers: fio logs both into one file, storlab one file per worker; compare each
    // worker's stream (fio's are told apart by their regions).
    let (dir, data) = scratch(MIB);
    let flags = [
        "--rw=write",
        "--bs=8k",
        "--size=64k",
        "--offset_increment=256k",
        "--numjobs=2",
    ];
    let fio = fio_log(dir.path(), &data, &flags);
    run_storlab(dir.path(), &data, &flags);
    for worker in 0..2u64 {
        let region = worker * 256 * 1024..worker * 256 * 1024 + 64 * 1024;
        let fio_worker: Vec<LoggedIo> = fio
            .iter()
            .copied()
            .filter(|io| region.contains(&io.offset_bytes))
            .collect();
        let storlab_worker = parse_iolog(&dir.path().join(format!("storlab.log.{worker}")));
        assert_eq!(fio_worker.len(), 8);
        assert_eq!(storlab_worker, fio_worker, "worker {worker}");
    }
}

/// Regression: `rw=rw` walked one offset stream shared by reads and writes; fio keeps one per
/// direction. Each stream is checked, and the whole sequence equals fio's.
#[test]
fn a_sequential_mix_walks_fios_stream_per_direction() {
    if !fio_present() {
        return;
    }
    let (fio, storlab) = both_logs(MIB, &["--rw=rw", "--bs=4k"]);
    // Which direction goes next is fio's mix stream, drawn as fio draws it.
    assert_eq!(storlab, fio);
    for log in [&fio, &storlab] {
        for write in [false, true] {
            let stream: Vec<u64> = log
                .iter()
                .filter(|io| io.write == write)
                .map(|io| io.offset_bytes)
                .collect();
            let expected: Vec<u64> = (0..stream.len() as u64).map(|i| i * 4096).collect();
            assert_eq!(stream, expected, "writes: {write}");
        }
    }
}

/// Regression: `bsrange=1k-4k` gave storlab only 1 KiB blocks; fio draws 1, 2, 3 and 4 KiB about
/// equally (mean 2.5 KiB).
#[test]
fn bsrange_sizes_follow_fios_distribution() {
    if !fio_present() {
        return;
    }
    let ios = 10_000;
    let (fio, storlab) = both_logs(
        256 * MIB,
        &["--rw=read", "--bsrange=1k-4k", "--number_ios=10000"],
    );
    for (tool, log) in [("fio", &fio), ("storlab", &storlab)] {
        assert_eq!(log.len(), ios, "{tool}");
        for size in [1024, 2048, 3072, 4096] {
            let count = log.iter().filter(|io| io.len_bytes == size).count();
            // A quarter each; 2 250..2 750 is more than 11 standard deviations wide.
            assert!(
                (2250..=2750).contains(&count),
                "{tool}: {size} B {count} times"
            );
        }
    }
    // The sizes are fio's own draws, in fio's order.
    assert_eq!(storlab, fio);
    let mean =
        |log: &[LoggedIo]| log.iter().map(|io| io.len_bytes).sum::<u64>() as f64 / ios as f64;
    assert!(
        (mean(&fio) - mean(&storlab)).abs() < 100.0,
        "mean fio {} storlab {}",
        mean(&fio),
        mean(&storlab)
    );
    // Sequential: each I/O starts where the previous ended, in both.
    for log in [&fio, &storlab] {
        for pair in log.windows(2) {
            assert_eq!(
                pair[1].offset_bytes,
                pair[0].offset_bytes + pair[0].len_bytes
            );
        }
    }
}

/// fio lays a file out to `offset` + `size` when it is shorter, and refuses an offset beyond it
/// without `size`: storlab does the same, leaving the same file length.
#[test]
fn offsets_beyond_a_file_grow_it_only_with_size_as_in_fio() {
    if !fio_present() {
        return;
    }
    for (flags, grows) in [
        (&["--rw=read", "--bs=4k", "--offset=4m"][..], false),
        (
            &["--rw=read", "--bs=4k", "--offset=4m", "--size=64k"][..],
            true,
        ),
    ] {
        let mut lengths = Vec::new();
        let mut succeeded = Vec::new();
        for tool in ["fio", "storlab"] {
            let (dir, data) = scratch(MIB);
            let mut command = if tool == "fio" {
                let mut c = Command::new("fio");
                c.args(["--name=oracle", "--output=/dev/null"]);
                c
            } else {
                let mut c = Command::new(env!("CARGO_BIN_EXE_storlab"));
                c.args(["run", "--no-db"]);
                c
            };
            let output = command
                .arg(format!("--filename={}", data.display()))
                .args(flags)
                .output()
                .unwrap();
            if tool == "storlab" && !grows {
                assert_eq!(output.status.code(), Some(2), "{output:?}");
                let stderr = String::from_utf8_lossy(&output.stderr);
                assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
            }
            succeeded.push(output.status.success());
            lengths.push(std::fs::metadata(&data).unwrap().len());
            drop(dir);
        }
        assert_eq!(succeeded, [grows, grows], "{flags:?}");
        let expected = if grows { 4 * MIB + 64 * 1024 } else { MIB };
        assert_eq!(lengths, [expected, expected], "{flags:?}");
    }
}

/// Each engine fio and storlab share issues the same I/O as fio's engine of the same name:
/// the same offsets and lengths, so the same bytes moved, buffered and with O_DIRECT, writing
/// then reading (issue 20).
#[test]
fn every_shared_engine_issues_fios_io() {
    if !fio_present() {
        return;
    }
    for engine in [
        "psync", "sync", "pvsync", "pvsync2", "libaio", "posixaio", "mmap", "io_uring",
    ] {
        for direct in ["0", "1"] {
            for rw in ["write", "randread"] {
                let flags = [
                    format!("--ioengine={engine}"),
                    format!("--direct={direct}"),
                    format!("--rw={rw}"),
                    "--bs=4k".to_string(),
                    "--size=256k".to_string(),
                    "--iodepth=8".to_string(),
                ];
                let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
                let (fio, storlab) = both_logs(MIB, &flags);
                assert_eq!(fio.len(), 64, "{flags:?}: fio's own count changed");
                let bytes = |log: &[LoggedIo]| log.iter().map(|io| io.len_bytes).sum::<u64>();
                assert_eq!(bytes(&storlab), bytes(&fio), "{flags:?}");
                if rw == "write" {
                    assert_eq!(storlab, fio, "{flags:?}");
                } else {
                    // Random offsets are each tool's own draw: the same set of blocks, once each.
                    let sorted = |log: &[LoggedIo]| {
                        let mut offsets: Vec<u64> = log.iter().map(|io| io.offset_bytes).collect();
                        offsets.sort_unstable();
                        offsets
                    };
                    assert_eq!(sorted(&storlab), sorted(&fio), "{flags:?}");
                }
            }
        }
    }
}

/// Every line of an iolog after the header and the file's `add`/`open`, as `ACTION [OFFSET
/// LENGTH]` without timestamp or file name: the reads, writes and syncs both tools issued.
pub(crate) fn actions(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let timestamped = lines.next() == Some("fio version 3 iolog");
    lines
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let after_file = if timestamped { 2 } else { 1 };
            fields[after_file..].join(" ")
        })
        .filter(|action| !matches!(action.as_str(), "add" | "open" | "close"))
        .collect()
}

/// Both tools' actions for one job on a fresh file of `file_bytes`.
pub(crate) fn both_actions(file_bytes: u64, flags: &[&str]) -> (Vec<String>, Vec<String>) {
    let (dir, data) = scratch(file_bytes);
    fio_log(dir.path(), &data, flags);
    run_storlab(dir.path(), &data, flags);
    (
        actions(&dir.path().join("fio.log")),
        actions(&dir.path().join("storlab.log")),
    )
}

/// fio's `fsync=N`, `fdatasync=N`, `end_fsync` and `fsync_on_close`: a sync after every N
/// writes (before the next I/O), one at the end unless the last act was a sync, and the same
/// lines in the log.
#[test]
fn syncs_go_where_fios_go() {
    if !fio_present() {
        return;
    }
    let job = ["--rw=write", "--bs=4k", "--size=64k"];
    for (extra, syncs) in [
        (&["--fsync=3"][..], 5),
        (&["--fsync=3", "--end_fsync=1"][..], 6),
        (&["--fsync=4", "--end_fsync=1"][..], 4),
        (&["--fdatasync=5"][..], 3),
        (&["--fsync_on_close=1"][..], 1),
        (&["--fsync_on_close=1", "--end_fsync=1", "--fsync=2"][..], 8),
    ] {
        let flags: Vec<&str> = job.iter().chain(extra).copied().collect();
        let (fio, storlab) = both_actions(MIB, &flags);
        let fio_syncs = fio.iter().filter(|a| a.contains("sync")).count();
        assert_eq!(fio_syncs, syncs, "fio's own count changed for {extra:?}");
        assert_eq!(storlab, fio, "{extra:?}");
    }
}

/// Shares of a log's I/Os on its most-hit block and on its most-hit tenth of the blocks.
fn hot_shares(log: &[LoggedIo], blocks: usize) -> (f64, f64) {
    let mut hits = std::collections::HashMap::<u64, u32>::new();
    for io in log {
        *hits.entry(io.offset_bytes).or_default() += 1;
    }
    let mut counts: Vec<u32> = hits.into_values().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let total = log.len() as f64;
    let top = |n: usize| f64::from(counts.iter().take(n).sum::<u32>()) / total;
    (top(1), top(blocks / 10))
}

/// fio's `random_distribution`: the same generators (lib/zipf.c, lib/gauss.c, io_u.c's zones)
/// fed by different random streams put the same share of I/O on the hot blocks, and zones get
/// their access share.
#[test]
fn random_distributions_skew_as_fios() {
    if !fio_present() {
        return;
    }
    const BLOCKS: usize = 1024;
    let file_bytes = BLOCKS as u64 * 4096;
    for distribution in ["zipf:1.2", "pareto:0.9", "normal:5", "zipf:0.8"] {
        let flag = format!("--random_distribution={distribution}");
        let (fio, storlab) = both_logs(
            file_bytes,
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=4m",
                "--io_size=80m",
                &flag,
            ],
        );
        assert_eq!(fio.len(), storlab.len(), "{distribution}");
        let (fio_top, fio_tenth) = hot_shares(&fio, BLOCKS);
        let (storlab_top, storlab_tenth) = hot_shares(&storlab, BLOCKS);
        assert!(
            (fio_top - storlab_top).abs() < 0.03 && (fio_tenth - storlab_tenth).abs() < 0.03,
            "{distribution}: fio {fio_top:.3}/{fio_tenth:.3}, storlab {storlab_top:.3}/{storlab_tenth:.3}"
        );
    }
    // The second form leaves the last zone's size out (fio's example rand-zones.fio does):
    // it gets what the first leaves, 75% (fio's zone_split_ddir).
    for (distribution, first_quarter_share) in
        [("zoned:80/25:20/75", 0.8), ("zoned:60/25:40/", 0.6)]
    {
        let flag = format!("--random_distribution={distribution}");
        let (fio, storlab) = both_logs(
            file_bytes,
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=4m",
                "--io_size=20m",
                &flag,
            ],
        );
        let first_quarter = |log: &[LoggedIo]| {
            log.iter().filter(|io| io.offset_bytes < MIB).count() as f64 / log.len() as f64
        };
        let (fio_share, storlab_share) = (first_quarter(&fio), first_quarter(&storlab));
        assert!(
            (fio_share - first_quarter_share).abs() < 0.03,
            "{distribution}: fio's own share changed: {fio_share}"
        );
        assert!(
            (storlab_share - fio_share).abs() < 0.03,
            "{distribution}: {storlab_share} vs {fio_share}"
        );
    }
}

/// fio's `rw=MODE:SIZE`: a hole after every sequential I/O, and the job ends at the first I/O
/// that would start past the region's end (not after `size` bytes).
#[test]
fn the_rw_offset_modifier_skips_fios_holes() {
    if !fio_present() {
        return;
    }
    for (flags, ios) in [
        (&["--size=64k", "--rw=write:4k"][..], 8),
        (&["--size=64k", "--rw=read:8k"][..], 6),
        (&["--offset=64k", "--size=64k", "--rw=read:4k"][..], 8),
        (&["--size=60k", "--rw=write:8k"][..], 5),
    ] {
        let flags: Vec<&str> = ["--bs=4k"].iter().chain(flags).copied().collect();
        let (fio, storlab) = both_logs(MIB, &flags);
        assert_eq!(fio.len(), ios, "fio's own count changed for {flags:?}");
        assert_eq!(storlab, fio, "{flags:?}");
    }
}

/// fio's loops (backend.c): a loop ends where its file is done (the next offset past the
/// region: a holed I/O may start anywhere before its end and run past it) or at `size` bytes,
/// and the job at `io_size` (else `size`) times `loops` bytes counted over every loop, so a
/// job with `io_size` under `size` goes on past `io_size` in its first loop. The same I/O as
/// fio's, I/O for I/O.
#[test]
fn loops_and_io_size_end_where_fios_do() {
    if !fio_present() {
        return;
    }
    for (flags, ios) in [
        (
            &["--bs=16k", "--size=128k", "--loops=2", "--rw=write:8k"][..],
            12,
        ),
        (&["--bs=4k", "--size=64k", "--rw=readwrite:8k"][..], 11),
        (
            &[
                "--bs=4k",
                "--size=64k",
                "--io_size=32k",
                "--loops=3",
                "--rw=read",
            ][..],
            24,
        ),
        (
            &["--bs=4k", "--size=64k", "--io_size=96k", "--rw=write"][..],
            24,
        ),
    ] {
        let (fio, storlab) = both_logs(MIB, flags);
        assert_eq!(fio.len(), ios, "fio's own count changed for {flags:?}");
        assert_eq!(storlab, fio, "{flags:?}");
    }
}

/// A fio job's region starts at its `offset` as given, aligned to its blocks or not, and its
/// `size` is not rounded to a block (filesetup.c): the I/O is the offset plus whole blocks, the
/// last one the last that starts inside the region and ends inside the file. On `null` the
/// read-back's reads are not checked, as fio's verify.c (`FIO_FAKEIO`). The same I/O as fio's.
#[test]
fn offsets_in_sectors_and_sizes_in_bytes_as_fio() {
    if !fio_present() {
        return;
    }
    for (flags, ios) in [
        (
            &["--bs=4k", "--offset=6144", "--size=64k", "--rw=read"][..],
            16,
        ),
        (
            &["--bs=4k", "--offset=6144", "--size=64k", "--rw=randread"][..],
            16,
        ),
        (&["--bs=32k", "--offset=512", "--rw=read"][..], 31),
        (&["--bs=16k", "--size=100k", "--rw=write"][..], 7),
        (
            &["--bs=64k", "--offset=6144", "--size=512k", "--rw=write"][..],
            8,
        ),
        (
            &[
                "--bs=4k",
                "--size=64k",
                "--rw=write",
                "--ioengine=null",
                "--verify=crc32c",
                "--verify_state_save=0",
            ][..],
            32,
        ),
    ] {
        let (fio, storlab) = both_logs(MIB, flags);
        assert_eq!(fio.len(), ios, "fio's own count changed for {flags:?}");
        assert_eq!(storlab, fio, "{flags:?}");
    }
}

/// fio's backward holes (`rw=MODE:-SIZE`, io_u.c `get_next_seq_offset`): the first I/O at the
/// region's start, then each one SIZE before the end of the last, wrapping to `io_size` less
/// SIZE; a region past 0 starts at `io_size` taken as a position; loops and `io_size` go on in
/// one sequence. The same offsets as fio's, I/O for I/O.
#[test]
fn backward_holes_walk_fios_sequence() {
    if !fio_present() {
        return;
    }
    const KIB: u64 = 1 << 10;
    for (file_bytes, flags, ios) in [
        (64 * KIB, &["--size=64k", "--rw=read:-8k"][..], 16),
        (MIB, &["--size=64k", "--rw=read:-8k"][..], 16),
        (MIB, &["--size=64k", "--rw=write:-4k"][..], 16),
        (MIB, &["--size=64k", "--rw=read:-12k"][..], 16),
        (MIB, &["--offset=64k", "--size=32k", "--rw=read:-8k"][..], 8),
        (MIB, &["--offset=16k", "--size=32k", "--rw=read:-8k"][..], 8),
        (MIB, &["--offset=768k", "--rw=write:-8k"][..], 64),
        (
            64 * KIB,
            &["--size=32k", "--loops=2", "--rw=read:-8k"][..],
            16,
        ),
        (
            64 * KIB,
            &["--size=16k", "--io_size=32k", "--rw=read:-8k"][..],
            8,
        ),
        (
            MIB,
            &[
                "--size=128k",
                "--rw=rw:-8k",
                "--rwmixread=70",
                "--randseed=7",
            ][..],
            32,
        ),
        (
            MIB,
            &[
                "--size=64k",
                "--rw=read:-8k",
                "--ioengine=io_uring",
                "--iodepth=8",
            ][..],
            16,
        ),
    ] {
        let flags: Vec<&str> = ["--bs=4k"].iter().chain(flags).copied().collect();
        let (fio, storlab) = both_logs(file_bytes, &flags);
        assert_eq!(fio.len(), ios, "fio's own count changed for {flags:?}");
        assert_eq!(storlab, fio, "{flags:?}");
    }
    // A time-based job goes round the same cycle for as long as it runs: both logs agree for
    // as far as the shorter one goes, which is several rounds of the 16 blocks.
    let (fio, storlab) = both_logs(
        64 * KIB,
        &[
            "--bs=4k",
            "--rw=read:-8k",
            "--time_based",
            "--runtime=100ms",
        ],
    );
    assert_same_prefix(&fio, &storlab, 64);
}

/// Backward holes on a simulated drive walk the same offsets as fio's on a file larger than
/// the region (what fio's sequence depends on: the region, and that the target is larger).
#[test]
fn backward_holes_on_a_simulated_drive_walk_fios_offsets() {
    if !fio_present() {
        return;
    }
    let flags = ["--bs=4k", "--offset=192k", "--size=64k", "--rw=write:-8k"];
    let (dir, data) = scratch(MIB);
    let fio = fio_log(dir.path(), &data, &flags);
    let log = dir.path().join("sim.log");
    let output = Command::new(env!("CARGO_BIN_EXE_storlab"))
        .args(["run", "--no-db", "--target", "sim:usb3-uas-ssd"])
        .arg(format!("--write_iolog={}", log.display()))
        .args(flags)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(fio.len(), 16);
    assert_eq!(parse_iolog(&log), fio);
}

/// A butterfly of our own: two readers of one file, one walking up and one walking down with
/// backward holes, kept in step by `flow`. Each reads the whole region on a file and on a
/// simulated drive, as in fio.
#[test]
fn a_forward_and_a_backward_reader_in_one_flow_each_read_the_region() {
    let (dir, data) = scratch(MIB);
    let job = format!(
        "[global]\nfilename={}\nbs=4k\nsize=512k\nflow_id=1\n\
         [up]\nrw=read\nflow=1\n\
         [down]\nrw=read:-8k\nflow=2\n",
        data.display()
    );
    let job_file = dir.path().join("butterfly.fio");
    std::fs::write(&job_file, job).unwrap();
    let read_bytes = |json: &serde_json::Value| -> Vec<(String, u64)> {
        json["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| {
                (
                    j["jobname"].as_str().unwrap().to_string(),
                    j["read"]["io_bytes"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let expected = vec![
        ("up".to_string(), 512 << 10),
        ("down".to_string(), 512 << 10),
    ];
    let job_arg = job_file.to_str().unwrap();
    for target in [&[][..], &["--target", "sim:usb3-uas-ssd"][..]] {
        let mut args = vec!["run", "--no-db", "--output-format=fio-json", job_arg];
        args.extend_from_slice(target);
        let output = Command::new(env!("CARGO_BIN_EXE_storlab"))
            .args(&args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{target:?}: {output:?}");
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(read_bytes(&json), expected, "{target:?}");
    }
    if fio_present() {
        let output = Command::new("fio")
            .args(["--output-format=json", job_arg])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(read_bytes(&json), expected, "fio");
    }
}

/// fio's `random_generator=lfsr` (lib/lfsr.c): the register's sequence of blocks, each once a
/// pass, no random map (`norandommap` changes nothing), the same I/O for I/O as fio's.
#[test]
fn the_lfsr_generator_issues_fios_sequence() {
    if !fio_present() {
        return;
    }
    for (flags, ios) in [
        (&["--rw=randread", "--bs=4k", "--size=64k"][..], 16),
        (&["--rw=randwrite", "--bs=4k", "--size=1m"][..], 256),
        (&["--rw=randread", "--bs=8k", "--size=200k"][..], 25),
        (&["--rw=randread", "--bs=4k", "--size=36k"][..], 9),
        (
            &["--rw=randread", "--bs=4k", "--size=64k", "--loops=2"][..],
            32,
        ),
        (
            &["--rw=randrw", "--bs=4k", "--size=128k", "--randseed=5"][..],
            32,
        ),
        (
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=64k",
                "--offset=256k",
                "--norandommap",
            ][..],
            16,
        ),
        (&["--rw=randread", "--bsrange=4k-16k", "--size=64k"][..], 7),
    ] {
        let flags: Vec<&str> = ["--random_generator=lfsr"]
            .iter()
            .chain(flags)
            .copied()
            .collect();
        let (fio, storlab) = both_logs(MIB, &flags);
        assert_eq!(fio.len(), ios, "fio's own count changed for {flags:?}");
        assert_eq!(storlab, fio, "{flags:?}");
    }
    // A time-based job starts the register over after each pass, as fio's `fio_file_reset`.
    let (fio, storlab) = both_logs(
        MIB,
        &[
            "--random_generator=lfsr",
            "--rw=randwrite",
            "--bs=8k",
            "--size=64k",
            "--time_based",
            "--runtime=100ms",
        ],
    );
    assert_same_prefix(&fio, &storlab, 32);
}

/// fio's `zonemode=strided`: `zonesize` bytes in each zone of `zonerange` (going round a
/// smaller zone), `zoneskip` between zones, the job's `size` spread over the whole file.
#[test]
fn strided_zones_visit_fios_offsets() {
    if !fio_present() {
        return;
    }
    // 256 KiB read in 16 KiB zones 64 KiB apart reach the end of the 1 MiB file.
    let (fio, _) = both_logs(
        MIB,
        &[
            "--bs=4k",
            "--zonemode=strided",
            "--size=256k",
            "--zonesize=16k",
            "--zoneskip=48k",
        ],
    );
    assert_eq!(fio.last().map(|io| io.offset_bytes), Some(MIB - (52 << 10)));
    for flags in [
        &[
            "--size=256k",
            "--rw=read",
            "--zonesize=16k",
            "--zoneskip=48k",
        ][..],
        &[
            "--size=128k",
            "--rw=read",
            "--zonesize=16k",
            "--zonerange=8k",
            "--zoneskip=8k",
        ][..],
        &[
            "--size=128k",
            "--rw=write",
            "--zonesize=8k",
            "--zonerange=16k",
            "--zoneskip=4k",
        ][..],
        &[
            "--offset=512k",
            "--size=256k",
            "--rw=read",
            "--zonesize=64k",
            "--zoneskip=64k",
        ][..],
    ] {
        let flags: Vec<&str> = ["--bs=4k", "--zonemode=strided"]
            .iter()
            .chain(flags)
            .copied()
            .collect();
        let (fio, storlab) = both_logs(MIB, &flags);
        assert_eq!(storlab, fio, "{flags:?}");
    }
}

/// I/Os and bytes of each direction of a fio-shaped job.
pub(crate) fn moved(job: &serde_json::Value) -> [u64; 4] {
    let n = |dir: &str, key: &str| job[dir][key].as_u64().unwrap();
    [
        n("read", "total_ios"),
        n("read", "io_bytes"),
        n("write", "total_ios"),
        n("write", "io_bytes"),
    ]
}
