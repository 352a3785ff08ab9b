//! fio as the oracle (issue 24, "same job, same I/O as fio"): the same job runs under fio and
//! under storlab, each recording every I/O with `write_iolog`, and the logs must agree: the same
//! offset sequence for deterministic jobs, the same size distribution for `bsrange`, the same
//! file length after a job that lays out or refuses. Skipped with a message where fio is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One I/O of a log: direction, offset, length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LoggedIo {
    write: bool,
    offset_bytes: u64,
    len_bytes: u64,
}

/// Reads an iolog of fio's format version 2 (`FILE ACTION [OFFSET LENGTH]`) or 3 (the same after
/// a timestamp), keeping the reads and writes in order.
fn parse_iolog(path: &Path) -> Vec<LoggedIo> {
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

fn fio_present() -> bool {
    let found = Command::new("fio").arg("--version").output().is_ok();
    if !found {
        eprintln!("skipping: fio is not installed (Debian package fio)");
    }
    found
}

/// A scratch directory with a data file of `file_bytes` (sparse, read as zeros).
fn scratch(file_bytes: u64) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::File::create(&data)
        .unwrap()
        .set_len(file_bytes)
        .unwrap();
    (dir, data)
}

/// Runs fio with `flags` on `data`; its I/O log.
fn fio_log(dir: &Path, data: &Path, flags: &[&str]) -> Vec<LoggedIo> {
    let log = dir.join("fio.log");
    let output = Command::new("fio")
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
fn storlab_log(dir: &Path, data: &Path, flags: &[&str]) -> Vec<LoggedIo> {
    run_storlab(dir, data, flags);
    parse_iolog(&dir.join("storlab.log"))
}

/// Runs storlab with the same `flags` on `data`, logging to `storlab.log` in `dir`.
fn run_storlab(dir: &Path, data: &Path, flags: &[&str]) {
    let log = dir.join("storlab.log");
    let output = Command::new(env!("CARGO_BIN_EXE_storlab"))
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
fn assert_same_prefix(fio: &[LoggedIo], storlab: &[LoggedIo], at_least: usize) {
    let common = fio.len().min(storlab.len());
    assert!(common > at_least, "only {common} I/Os in the run");
    assert_eq!(storlab[..common], fio[..common]);
}

/// Both tools' logs of one job on a fresh file of `file_bytes`.
fn both_logs(file_bytes: u64, flags: &[&str]) -> (Vec<LoggedIo>, Vec<LoggedIo>) {
    let (dir, data) = scratch(file_bytes);
    let fio = fio_log(dir.path(), &data, flags);
    let storlab = storlab_log(dir.path(), &data, flags);
    (fio, storlab)
}

const MIB: u64 = 1 << 20;

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
        "psync", "sync", "pvsync2", "libaio", "posixaio", "mmap", "io_uring",
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
fn actions(path: &Path) -> Vec<String> {
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
fn both_actions(file_bytes: u64, flags: &[&str]) -> (Vec<String>, Vec<String>) {
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

/// Runs a tool's replay of `trace` in `dir` with fio-shaped JSON; the job's JSON and the exit.
fn replay_json(tool: &str, dir: &Path, trace: &Path, flags: &[&str]) -> serde_json::Value {
    let out = dir.join(format!("{tool}-replay.json"));
    let mut command = if tool == "fio" {
        let mut c = Command::new("fio");
        c.args(["--name=replay", "--output-format=json"]);
        c
    } else {
        let mut c = Command::new(env!("CARGO_BIN_EXE_storlab"));
        c.args(["run", "--no-db", "--output-format=fio-json"]);
        c
    };
    let output = command
        .arg(format!("--read_iolog={}", trace.display()))
        .arg(format!("--output={}", out.display()))
        .args(flags)
        .output()
        .unwrap();
    assert!(output.status.success(), "{tool} {flags:?}: {output:?}");
    let text = std::fs::read_to_string(&out).unwrap();
    // fio may put notes before its JSON.
    let json = &text[text.find('{').unwrap()..];
    serde_json::from_str::<serde_json::Value>(json).unwrap()["jobs"][0].clone()
}

/// I/Os and bytes of each direction of a fio-shaped job.
fn moved(job: &serde_json::Value) -> [u64; 4] {
    let n = |dir: &str, key: &str| job[dir][key].as_u64().unwrap();
    [
        n("read", "total_ios"),
        n("read", "io_bytes"),
        n("write", "total_ios"),
        n("write", "io_bytes"),
    ]
}

/// fio's `read_iolog`: fio records a trace (mixed directions and sizes, fsyncs); storlab replays
/// it, on psync and at queue depth 8 on libaio, and its own log of the replay is the trace's
/// sequence line for line; fio's replay of the same trace moves the same I/Os and bytes.
#[test]
fn read_iolog_replays_fios_trace_as_fio_does() {
    if !fio_present() {
        return;
    }
    let (dir, data) = scratch(MIB);
    let trace = dir.path().join("trace.log");
    let recorded = Command::new("fio")
        .args(["--name=record", "--output=/dev/null", "--rw=randrw"])
        .args(["--bsrange=1k-8k", "--size=256k", "--fsync=4"])
        .arg(format!("--filename={}", data.display()))
        .arg(format!("--write_iolog={}", trace.display()))
        .output()
        .unwrap();
    assert!(recorded.status.success(), "{recorded:?}");
    let recorded_actions = actions(&trace);
    assert!(recorded_actions.iter().any(|a| a.starts_with("sync")));
    let fio = replay_json("fio", dir.path(), &trace, &["--replay_no_stall=1"]);
    for engine in [
        &["--ioengine=psync"][..],
        &["--ioengine=libaio", "--iodepth=8"],
    ] {
        let log = dir.path().join("replayed.log");
        let log_flag = format!("--write_iolog={}", log.display());
        let flags: Vec<&str> = engine
            .iter()
            .copied()
            .chain(["--replay_no_stall=1", &log_flag])
            .collect();
        let storlab = replay_json("storlab", dir.path(), &trace, &flags);
        assert_eq!(actions(&log), recorded_actions, "{engine:?}");
        assert_eq!(moved(&storlab), moved(&fio), "{engine:?}");
    }
    assert_eq!(
        std::fs::metadata(&data).unwrap().len(),
        MIB,
        "a replay grew the file"
    );
}

/// A version 3 trace's gaps are kept (here 300 ms between two reads) unless `replay_no_stall`,
/// in both tools.
#[test]
fn read_iolog_keeps_the_recorded_gaps_as_fio_does() {
    if !fio_present() {
        return;
    }
    let (dir, data) = scratch(MIB);
    let trace = dir.path().join("slow.log");
    let file = data.display();
    std::fs::write(
        &trace,
        format!(
            "fio version 3 iolog\n0 {file} add\n0 {file} open\n1000 {file} read 0 4096\n\
             301000 {file} read 4096 4096\n302000 {file} close\n"
        ),
    )
    .unwrap();
    let gap_ms = 300;
    for tool in ["fio", "storlab"] {
        let paced = replay_json(tool, dir.path(), &trace, &[]);
        let runtime_ms = |job: &serde_json::Value| job["read"]["runtime"].as_u64().unwrap();
        assert!(runtime_ms(&paced) >= gap_ms, "{tool}: {paced}");
        assert_eq!(moved(&paced), [2, 8192, 0, 0], "{tool}");
        let fast = replay_json(tool, dir.path(), &trace, &["--replay_no_stall=1"]);
        assert!(runtime_ms(&fast) < gap_ms / 2, "{tool}: {fast}");
    }
}

/// A trace replays on a simulated drive (`--target` as `replay_redirect`), its syncs as the
/// drive's cache flush, or left out with fio's `replay_skip=sync`; a bad trace line, or a line past the target's end, is refused with one line
/// naming the trace and the line, exit 2, and nothing runs.
#[test]
fn read_iolog_on_a_simulated_drive_and_bad_traces() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.log");
    std::fs::write(
        &trace,
        "fio version 2 iolog\n/x/f add\n/x/f open\n/x/f write 0 4096\n/x/f sync 0 0\n\
         /x/f read 0 4096\n/x/f read 65536 512\n/x/f close\n",
    )
    .unwrap();
    let storlab = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_storlab"))
            .args(["run", "--no-db", "--replay_no_stall=1"])
            .arg(format!("--read_iolog={}", trace.display()))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let refused = |output: &std::process::Output, wanted: &str| {
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(wanted), "{stderr}");
    };
    let sim = ["--target", "sim:usb3-uas-ssd"];
    let log = dir.path().join("sim.log");
    let log_flag = format!("--write_iolog={}", log.display());
    let output = storlab(&[sim[0], sim[1], &log_flag]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        actions(&log),
        ["write 0 4096", "sync 0 0", "read 0 4096", "read 65536 512"]
    );
    let output = storlab(&[sim[0], sim[1], "--replay_skip=sync", &log_flag]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        actions(&log),
        ["write 0 4096", "read 0 4096", "read 65536 512"]
    );
    let data = dir.path().join("small");
    std::fs::File::create(&data)
        .unwrap()
        .set_len(64 << 10)
        .unwrap();
    let redirect = format!("--replay_redirect={}", data.display());
    refused(&storlab(&[&redirect]), "trace.log:7:");
    assert_eq!(std::fs::metadata(&data).unwrap().len(), 64 << 10);
    std::fs::write(
        &trace,
        "fio version 2 iolog\nf add\nf read 0 4096\nf seek 0 1\n",
    )
    .unwrap();
    refused(&storlab(&[]), "trace.log:4: unknown action 'seek'");
    assert!(
        !dir.path().join("f").exists(),
        "a refused replay created its file"
    );
}

/// How a row of the key table is compared with fio.
#[derive(Clone, Copy, Debug)]
enum Agreement {
    /// The same I/Os in the same order.
    Sequence,
    /// Draws storlab does not take from fio's streams (a `random_distribution` other than
    /// uniform, the 4 KiB alignment it keeps on purpose): the same number of I/Os and bytes in
    /// all, each direction's share within 5 points.
    Totals,
}

/// One line storlab must print for a row where it differs from fio on purpose (checked per
/// row: no other row may print such a note).
const DIFFERS_NOTE: &str = "storlab differs from fio here";

/// fio as the oracle over the key table: every key of the job language that changes which I/O
/// is issued, each in a job both tools run with `write_iolog`, compared as its row says. Keys
/// whose fio effect storlab does not reproduce print their one line (`warnings.rs` checks those
/// lines); keys that only change timing or data (rates, thinktime, patterns, engines, syncs) are
/// compared on counts here and on their own in the tests above.
#[test]
fn the_key_table_issues_fios_io() {
    if !fio_present() {
        return;
    }
    use Agreement::*;
    let table: &[(&[&str], Agreement, Option<&str>)] = &[
        // Sequential: rw, bs, offset, size, io_size, filesize, nrfiles, loops, number_ios.
        (&["--rw=read", "--bs=8k", "--size=256k"], Sequence, None),
        (
            &[
                "--readwrite=write",
                "--blocksize=4k",
                "--offset=128k",
                "--size=64k",
            ],
            Sequence,
            None,
        ),
        (
            &["--rw=read", "--bs=4k", "--size=64k", "--io_size=160k"],
            Sequence,
            None,
        ),
        (
            &["--rw=write", "--bs=16k", "--filesize=128k", "--nrfiles=1"],
            Sequence,
            None,
        ),
        (
            &["--rw=read", "--bs=4k", "--size=32k", "--loops=2"],
            Sequence,
            None,
        ),
        (
            &["--rw=read", "--bs=4k", "--size=32k", "--number_ios=6"],
            Sequence,
            None,
        ),
        // fio bounds a looped job at `number_ios` × `loops`, each loop ending with its bytes:
        // blocks 0..=7, then 0..=6.
        (
            &[
                "--rw=read",
                "--bs=4k",
                "--size=32k",
                "--loops=3",
                "--number_ios=5",
            ],
            Sequence,
            None,
        ),
        (&["--rw=write", "--bs=4k,8k", "--size=64k"], Sequence, None),
        (
            &["--rw=read", "--bs=4k", "--offset=25%", "--size=25%"],
            Sequence,
            None,
        ),
        (&["--rw=write:8k", "--bs=4k", "--size=128k"], Sequence, None),
        (
            &[
                "--rw=read",
                "--bs=4k",
                "--size=256k",
                "--zonemode=strided",
                "--zonesize=16k",
                "--zoneskip=16k",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=write",
                "--bs=4k",
                "--size=64k",
                "--fsync=4",
                "--end_fsync=1",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=write",
                "--bs=4k",
                "--size=32k",
                "--iodepth=4",
                "--ioengine=libaio",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=read",
                "--bs=4k",
                "--size=32k",
                "--direct=1",
                "--invalidate=1",
                "--fadvise_hint=0",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=write",
                "--bs=4k",
                "--size=32k",
                "--thinktime=10",
                "--thinktime_blocks=4",
            ],
            Sequence,
            None,
        ),
        (
            &["--rw=write", "--bs=4k", "--size=32k", "--rate_iops=2000"],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=write",
                "--bs=4k",
                "--size=32k",
                "--buffer_pattern=0xab",
                "--randseed=3",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=read",
                "--bs=4k",
                "--size=64k",
                "--runtime=10",
                "--ramp_time=0",
            ],
            Sequence,
            None,
        ),
        // Random: fio's own streams (fio_rand.rs), seeded as fio seeds them, give fio's
        // sequence, through its random map or without it.
        (&["--rw=randread", "--bs=4k", "--size=256k"], Sequence, None),
        (
            &["--rw=randwrite", "--bs=16k", "--size=256k", "--loops=2"],
            Sequence,
            None,
        ),
        (
            &["--rw=randread", "--bs=4k", "--size=256k", "--randseed=12"],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=256k",
                "--random_generator=tausworthe64",
            ],
            Sequence,
            None,
        ),
        (
            &["--rw=randrw", "--bs=4k,16k", "--size=512k", "--iodepth=4"],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=64k",
                "--io_size=128k",
                "--randrepeat=1",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randread",
                "--bs=8k",
                "--blockalign=8k",
                "--offset=64k",
                "--size=128k",
            ],
            Sequence,
            None,
        ),
        // Sizes drawn at random, from fio's size stream: fio's sequence too, and at random
        // offsets the map shrinks an I/O to the free blocks before a taken one, as fio's does.
        (
            &[
                "--rw=read",
                "--bsrange=4k-16k",
                "--number_ios=4000",
                "--size=64m",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=write",
                "--bssplit=4k/50:16k/30:64k/20",
                "--number_ios=4000",
                "--size=512m",
            ],
            Sequence,
            None,
        ),
        (
            &["--rw=randread", "--bsrange=4k-64k", "--size=1m"],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randwrite",
                "--bssplit=4k/10:8k/60:32k/30",
                "--size=2m",
                "--randseed=77",
            ],
            Sequence,
            None,
        ),
        // The direction of each I/O: fio's mix stream and its switching rule.
        (
            &["--rw=randrw", "--bs=4k", "--size=4m", "--rwmixread=70"],
            Sequence,
            None,
        ),
        (
            &["--rw=rw", "--bs=4k", "--size=4m", "--rwmixwrite=25"],
            Sequence,
            None,
        ),
        (
            &["--rw=randread", "--bs=4k", "--size=256k", "--norandommap"],
            Sequence,
            None,
        ),
        // `percentage_random` between 0 and 100 on a region that ends before its file (as
        // here): fio ends the job when a sequential I/O after a random one would pass the
        // region's end, after 58, 44, 56 or 52 of 64 I/Os for randseed unset, 1, 9, 12;
        // storlab draws the same streams and ends at the same I/O.
        (
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=256k",
                "--percentage_random=50",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=256k",
                "--percentage_random=50",
                "--randseed=1",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randwrite",
                "--bs=4k",
                "--size=256k",
                "--percentage_random=10",
                "--randseed=12",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randrw",
                "--bs=4k",
                "--size=256k",
                "--percentage_random=25,75",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=256k",
                "--percentage_random=1",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=256k",
                "--percentage_random=99",
            ],
            Sequence,
            None,
        ),
        (
            &["--rw=randread:4", "--bs=4k", "--size=256k"],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=256k",
                "--random_distribution=zipf:1.2",
            ],
            Totals,
            None,
        ),
        // fio's alignment (the smallest block) under 4 KiB too: fio input, fio semantics.
        (&["--rw=randread", "--bs=512", "--size=64k"], Sequence, None),
    ];
    for &(flags, agreement, note) in table {
        // Sparse, and larger than any row's region, so that neither tool lays it out.
        let (dir, data) = scratch(512 * MIB);
        let fio = fio_log(dir.path(), &data, flags);
        let log = dir.path().join("storlab.log");
        let output = Command::new(env!("CARGO_BIN_EXE_storlab"))
            .args(["run", "--no-db"])
            .arg(format!("--filename={}", data.display()))
            .arg(format!("--write_iolog={}", log.display()))
            .args(flags)
            .output()
            .unwrap();
        assert!(output.status.success(), "storlab {flags:?}: {output:?}");
        let storlab = parse_iolog(&log);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let notes = stderr.lines().filter(|l| l.contains(DIFFERS_NOTE)).count();
        assert_eq!(notes, usize::from(note.is_some()), "{flags:?}: {stderr}");
        let totals = |log: &[LoggedIo]| {
            let writes: Vec<&LoggedIo> = log.iter().filter(|io| io.write).collect();
            (
                log.len(),
                log.iter().map(|io| io.len_bytes).sum::<u64>(),
                writes.len(),
            )
        };
        let (fio_ios, fio_bytes, fio_writes) = totals(&fio);
        let (ios, bytes, writes) = totals(&storlab);
        assert!(fio_ios > 0, "{flags:?}: fio did nothing");
        match agreement {
            Sequence => assert_eq!(storlab, fio, "{flags:?}"),
            Totals => {
                assert_eq!((ios, bytes), (fio_ios, fio_bytes), "{flags:?}");
                let share = |w: usize, n: usize| w as f64 * 100.0 / n as f64;
                assert!(
                    (share(writes, ios) - share(fio_writes, fio_ios)).abs() < 5.0,
                    "{flags:?}: {writes} writes against fio's {fio_writes}"
                );
            }
        }
    }
}

/// The spot checks of issue 24 on verify, side by side with fio: the read-back's reads count in
/// the read statistics (fio's own test suite relies on it), and a sequential write mixing 512 B
/// and larger blocks, and two clones without a file name, verify in both tools.
#[test]
fn verify_reads_count_and_pass_where_fios_do() {
    if !fio_present() {
        return;
    }
    let (dir, data) = scratch(MIB);
    let file = format!("--filename={}", data.display());
    let counted = [
        "--rw=write",
        "--bs=4k",
        "--size=1m",
        "--verify=crc32c",
        &file,
    ];
    let mixed = [
        "--rw=write",
        "--bssplit=512/50:4k/50",
        "--size=256k",
        "--verify=crc32c",
        &file,
    ];
    let clones = [
        "--rw=write",
        "--bs=4k",
        "--size=256k",
        "--numjobs=2",
        "--verify=crc32c",
    ];
    for (flags, same_reads) in [
        (&counted[..], true),
        (&mixed[..], false),
        (&clones[..], false),
    ] {
        let mut reads = Vec::new();
        for tool in ["fio", "storlab"] {
            let out = dir.path().join(format!("{tool}.json"));
            let mut command = if tool == "fio" {
                let mut c = Command::new("fio");
                c.args(["--name=v", "--output-format=json"]);
                c
            } else {
                let mut c = Command::new(env!("CARGO_BIN_EXE_storlab"));
                c.args(["run", "--no-db", "--name=v", "--output-format=fio-json"]);
                c
            };
            let output = command
                .current_dir(dir.path())
                .arg(format!("--output={}", out.display()))
                .args(flags)
                .output()
                .unwrap();
            assert!(output.status.success(), "{tool} {flags:?}: {output:?}");
            let text = std::fs::read_to_string(&out).unwrap();
            let json: serde_json::Value =
                serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
            let jobs = json["jobs"].as_array().unwrap();
            assert_eq!(
                jobs.len(),
                if flags.contains(&"--numjobs=2") { 2 } else { 1 }
            );
            for job in jobs {
                assert_eq!(job["error"], 0, "{tool} {flags:?}");
                let read = &job["read"];
                let written = job["write"]["io_bytes"].as_u64().unwrap();
                assert!(
                    read["io_bytes"].as_u64().unwrap() >= written / 2,
                    "{tool} {flags:?}: {job}"
                );
                reads.push((read["total_ios"].as_u64(), read["io_bytes"].as_u64()));
            }
        }
        if same_reads {
            assert_eq!(reads[0], reads[1], "{flags:?}");
            assert_eq!(reads[0], (Some(256), Some(MIB)));
        }
    }
}

/// fio's `percentage_random=READ,WRITE`: each direction draws random offsets at its own share.
/// With 0 for one direction and 100 for the other, both tools walk the first sequentially from
/// the region's start and scatter the second, and move the same I/Os in all.
#[test]
fn percentage_random_takes_a_share_per_direction_as_fio() {
    if !fio_present() {
        return;
    }
    for (shares, sequential_writes) in [("0,100", false), ("100,0,50", true)] {
        let flags = [
            "--rw=randrw",
            "--bs=4k",
            "--size=1m",
            &format!("--percentage_random={shares}"),
        ]
        .map(String::from);
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let (fio, storlab) = both_logs(MIB, &flags);
        assert_eq!(fio.len(), 256, "{shares}");
        assert_eq!(storlab, fio, "{shares}");
        for log in [&fio, &storlab] {
            let offsets = |write: bool| -> Vec<u64> {
                log.iter()
                    .filter(|io| io.write == write)
                    .map(|io| io.offset_bytes)
                    .collect()
            };
            let (sequential, random) = if sequential_writes {
                (offsets(true), offsets(false))
            } else {
                (offsets(false), offsets(true))
            };
            let expected: Vec<u64> = (0..sequential.len() as u64).map(|i| i * 4096).collect();
            assert_eq!(sequential, expected, "{shares}");
            let steps = random.windows(2).filter(|w| w[1] == w[0] + 4096).count();
            assert!(
                random.len() > 64 && steps < random.len() / 8,
                "{shares}: {steps} sequential steps in {} random I/Os",
                random.len()
            );
        }
    }
}

/// One I/O of fio's latency log with `log_prio=1`: write?, size, priority value.
fn prio_log(path: &Path) -> Vec<(bool, u64, u16)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|line| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let prio = fields[4].trim_start_matches("0x");
            (
                fields[2] == "1",
                fields[3].parse().unwrap(),
                u16::from_str_radix(prio, 16).unwrap(),
            )
        })
        .collect()
}

/// fio's command priorities per direction and per block size (`cmdprio_bssplit` in both of
/// fio 3.33's forms, `cmdprio_percentage=READ,WRITE` with `cmdprio_class` and `cmdprio` per
/// direction), on io_uring and libaio. fio's latency log with `log_prio=1` shows the priority
/// each I/O carried; the shares chosen are 0 or 100 so the rule decides every I/O, and
/// storlab's engine must give a priority to exactly the I/Os fio gave one: as many as its own
/// log holds of those sizes and directions.
#[test]
fn cmdprio_marks_the_ios_fio_marks() {
    if !fio_present() {
        return;
    }
    // (flags, which I/Os get which priority: (write, size) -> class << 13 | level)
    type Rule = fn(bool, u64) -> u16;
    let cases: [(&[&str], Rule); 2] = [
        (
            &[
                "--bssplit=4k/50:64k/50",
                "--cmdprio_bssplit=4k/100/2/3:64k/0,64k/100",
            ],
            |write, size| match (write, size) {
                (false, 4096) => 2 << 13 | 3,
                // An entry without class and level takes fio's defaults: real-time, 0.
                (true, 65536) => 1 << 13,
                _ => 0,
            },
        ),
        (
            &[
                "--bs=4k",
                "--cmdprio_percentage=100,0",
                "--cmdprio_class=2,3",
                "--cmdprio=6,0",
            ],
            |write, _| if write { 0 } else { 2 << 13 | 6 },
        ),
    ];
    for engine in ["io_uring", "libaio"] {
        for (flags_of_case, rule) in cases {
            let (dir, data) = scratch(4 * MIB);
            // fio reads an engine's options only after the engine is chosen.
            let engine_flag = format!("--ioengine={engine}");
            let mut flags: Vec<&str> =
                vec![&engine_flag, "--rw=randrw", "--size=1m", "--norandommap"];
            flags.extend_from_slice(flags_of_case);
            let prefix = dir.path().join("lat");
            let output = Command::new("fio")
                .arg("--name=oracle")
                .arg(format!("--filename={}", data.display()))
                .arg(format!("--write_lat_log={}", prefix.display()))
                .args(["--log_prio=1", "--output=/dev/null"])
                .args(&flags)
                .output()
                .unwrap();
            assert!(output.status.success(), "fio {flags:?}: {output:?}");
            let fio = prio_log(&dir.path().join("lat_clat.1.log"));
            assert!(fio.len() > 16, "{flags:?}");
            for (write, size, prio) in &fio {
                assert_eq!(*prio, rule(*write, *size), "fio {flags:?}: {write} {size}");
            }
            // storlab: its own log for the I/Os, its engine's count of prioritized ones.
            let log = dir.path().join("storlab.log");
            let out = dir.path().join("storlab.json");
            let output = Command::new(env!("CARGO_BIN_EXE_storlab"))
                .args(["run", "--no-db", "--output-format=json"])
                .arg(format!("--filename={}", data.display()))
                .arg(format!("--write_iolog={}", log.display()))
                .arg(format!("--output={}", out.display()))
                .args(&flags)
                .output()
                .unwrap();
            assert!(output.status.success(), "storlab {flags:?}: {output:?}");
            let ios = parse_iolog(&log);
            let expected = ios
                .iter()
                .filter(|io| rule(io.write, io.len_bytes) != 0)
                .count();
            assert!(expected > 0 && expected < ios.len(), "{flags:?}");
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
            let details = json["jobs"][0]["engine_details"].as_array().unwrap();
            let marked = details
                .iter()
                .find(|pair| pair[0] == "prioritized_ios")
                .unwrap_or_else(|| panic!("{engine} {flags:?}: {details:?}"))[1]
                .as_str()
                .unwrap()
                .parse::<usize>()
                .unwrap();
            assert_eq!(marked, expected, "{engine} {flags:?}");
        }
    }
}

/// fio's log of a job with clones holds one section per clone (each from its `add` line),
/// written as each clone ends; storlab writes one log per clone (`LOG.N`).
fn fio_log_sections(path: &Path) -> Vec<Vec<LoggedIo>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut sections: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.ends_with(" add") || sections.is_empty() {
            sections.push(String::from("fio version 3 iolog\n"));
        }
        if !line.starts_with("fio version") {
            let last = sections.last_mut().unwrap();
            last.push_str(line);
            last.push('\n');
        }
    }
    let dir = tempfile::tempdir().unwrap();
    sections
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let part = dir.path().join(format!("part{i}"));
            std::fs::write(&part, text).unwrap();
            parse_iolog(&part)
        })
        .filter(|log| !log.is_empty())
        .collect()
}

/// fio numbers its threads over the whole run, clones included, and seeds each from its
/// number: every clone of `numjobs=3`, and the second job of a file, draws its own sequence,
/// and storlab's clone N draws fio's thread N's.
#[test]
fn clones_and_jobs_of_one_file_draw_fios_sequences_per_thread() {
    if !fio_present() {
        return;
    }
    let flags = [
        "--rw=randrw",
        "--bsrange=4k-16k",
        "--size=256k",
        "--numjobs=3",
        "--offset_increment=256k",
        "--percentage_random=80",
    ];
    let (dir, data) = scratch(MIB);
    let fio_path = dir.path().join("fio.log");
    let output = Command::new("fio")
        .arg("--name=oracle")
        .arg(format!("--filename={}", data.display()))
        .arg(format!("--write_iolog={}", fio_path.display()))
        .args(["--output=/dev/null", "--thread"])
        .args(flags)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    run_storlab(dir.path(), &data, &flags);
    let mut fio = fio_log_sections(&fio_path);
    assert_eq!(fio.len(), 3);
    // The sections come in the order the clones ended; each starts in its own region.
    fio.sort_by_key(|log| log[0].offset_bytes / (256 << 10));
    for (clone, fio_clone) in fio.iter().enumerate() {
        let storlab = parse_iolog(&dir.path().join(format!("storlab.log.{clone}")));
        assert_eq!(&storlab, fio_clone, "clone {clone}");
    }
    assert_ne!(fio[0].len(), 0);

    // Two jobs in one file, the second with its own randseed: threads 1 and 2.
    let job_file = dir.path().join("two.fio");
    let logs = ["one.log", "two.log"].map(|name| dir.path().join(name));
    std::fs::write(
        &job_file,
        format!(
            "[global]\nfilename={}\nbs=4k\nsize=256k\n\n\
             [one]\nrw=randread\nwrite_iolog={}\n\n\
             [two]\nrw=randwrite\noffset=512k\nrandseed=7\nwrite_iolog={}\n",
            data.display(),
            logs[0].display(),
            logs[1].display()
        ),
    )
    .unwrap();
    let run = |tool: &str| {
        let mut command = if tool == "fio" {
            let mut c = Command::new("fio");
            c.arg("--output=/dev/null");
            c
        } else {
            let mut c = Command::new(env!("CARGO_BIN_EXE_storlab"));
            c.args(["run", "--no-db"]);
            c
        };
        let output = command.arg(&job_file).output().unwrap();
        assert!(output.status.success(), "{tool}: {output:?}");
        logs.iter().map(|log| parse_iolog(log)).collect::<Vec<_>>()
    };
    let fio = run("fio");
    let storlab = run("storlab");
    assert_eq!(fio[0].len(), 64);
    assert_eq!(storlab, fio);
}

/// `randrepeat=0` without `randseed`: fio seeds from the system's entropy, so two runs differ;
/// storlab does the same, and each run still visits every block once, as fio's does.
#[test]
fn randrepeat_off_differs_run_to_run_and_keeps_the_map() {
    if !fio_present() {
        return;
    }
    let flags = ["--rw=randread", "--bs=4k", "--size=256k", "--randrepeat=0"];
    let (dir, data) = scratch(MIB);
    let fio = fio_log(dir.path(), &data, &flags);
    let first = storlab_log(dir.path(), &data, &flags);
    let second = storlab_log(dir.path(), &data, &flags);
    assert_ne!(first, second, "two runs drew the same sequence");
    let set = |log: &[LoggedIo]| {
        let mut offsets: Vec<u64> = log.iter().map(|io| io.offset_bytes).collect();
        offsets.sort_unstable();
        offsets
    };
    assert_eq!(set(&first), set(&fio));
    assert_eq!(set(&second), set(&fio));
    // Given a randseed, randrepeat=0 repeats it, in both tools.
    let seeded = [
        "--rw=randread",
        "--bs=4k",
        "--size=256k",
        "--randrepeat=0",
        "--randseed=5",
    ];
    let (fio, storlab) = both_logs(MIB, &seeded);
    assert_eq!(storlab, fio);
}
