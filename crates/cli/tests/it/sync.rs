//! fio's syncs (issue 20 item 2): `fsync`, `fdatasync`, `end_fsync`, `fsync_on_close`, `sync=1`
//! and a trace's `sync` lines run on files and on simulated drives (where they are the drive's
//! cache flush, SYNCHRONIZE CACHE → FLUSH CACHE EXT), and fio's JSON carries their latency in
//! its `sync` block, as fio 3.33 writes it (compared with fio where it is installed).

use crate::common;

use serde_json::Value;
use std::process::Command;

const MIB: u64 = 1 << 20;

fn sync_block(report: &Value) -> &Value {
    &report["jobs"][0]["sync"]
}

/// The keys of fio 3.33's `sync` block for a job that synced.
fn assert_fio_sync_shape(sync: &Value, syncs: u64, what: &str) {
    assert_eq!(sync["total_ios"].as_u64(), Some(syncs), "{what}: {sync}");
    let lat = &sync["lat_ns"];
    assert_eq!(lat["N"].as_u64(), Some(syncs), "{what}: {sync}");
    let (min, max) = (lat["min"].as_u64().unwrap(), lat["max"].as_u64().unwrap());
    let mean = lat["mean"].as_f64().unwrap();
    assert!(
        0 < min && (min as f64) <= mean && mean <= max as f64,
        "{what}: {sync}"
    );
    assert!(lat["stddev"].is_number(), "{what}: {sync}");
    let percentiles = lat["percentile"].as_object().expect("percentiles");
    for key in ["1.000000", "50.000000", "99.000000", "99.990000"] {
        assert!(percentiles.contains_key(key), "{what}: {key} in {sync}");
    }
}

/// 64 writes of 4 KiB with `fsync=1` make 63 syncs (none after the last write, fio's
/// `get_rw_ddir`), on a file as on a simulated drive; fio's own run of the same job file on the
/// file reports the same count and the same keys.
#[test]
fn fsync_latency_is_reported_in_fios_sync_block_on_files_and_simulated_drives() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::File::create(&data).unwrap().set_len(MIB).unwrap();
    let job =
        |filename: &str| format!("[j]\nfilename={filename}\nrw=write\nbs=4k\nsize=256k\nfsync=1\n");
    std::fs::write(
        dir.path().join("file.fio"),
        job(&data.display().to_string()),
    )
    .unwrap();
    std::fs::write(dir.path().join("sim.fio"), job("sim:usb3-uas-ssd")).unwrap();
    let on_file = common::run_fio_json(dir.path(), &["file.fio"]);
    assert_fio_sync_shape(sync_block(&on_file), 63, "file");
    let on_sim = common::run_fio_json(dir.path(), &["sim.fio"]);
    assert_fio_sync_shape(sync_block(&on_sim), 63, "sim");
    // Without syncs the block is fio's empty one.
    std::fs::write(
        dir.path().join("plain.fio"),
        "[j]\nfilename=sim:usb3-uas-ssd\nrw=write\nbs=4k\nsize=256k\n",
    )
    .unwrap();
    let plain = common::run_fio_json(dir.path(), &["plain.fio"]);
    assert_eq!(sync_block(&plain)["total_ios"].as_u64(), Some(0));
    assert!(sync_block(&plain)["lat_ns"].get("percentile").is_none());

    let Ok(fio) = Command::new("fio")
        .current_dir(dir.path())
        .args(["--output-format=json", "file.fio"])
        .output()
    else {
        eprintln!("skipping the fio comparison: fio is not installed (Debian package fio)");
        return;
    };
    assert!(fio.status.success(), "{fio:?}");
    let fio: Value = serde_json::from_slice(&fio.stdout).unwrap();
    assert_fio_sync_shape(sync_block(&fio), 63, "fio");
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v["lat_ns"].as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(sync_block(&fio)), keys(sync_block(&on_file)));
}

/// A simulated HDD with a write-back cache: `sync=1` (every write followed by the drive's
/// cache flush) is slower than the same job without it, `end_fsync` adds one flush (which fio
/// does not count), and a trace's `sync` lines replay as flushes.
#[test]
fn synchronous_writes_on_a_simulated_drive_wait_for_the_flush() {
    let dir = tempfile::tempdir().unwrap();
    let write_iops = |extra: &str| {
        let args: Vec<&str> = [
            "--target=sim:sata-ahci-hdd",
            "--rw=randwrite",
            "--bs=4k",
            "--size=4m",
            "--number_ios=64",
        ]
        .into_iter()
        .chain(extra.split_whitespace())
        .collect();
        let report = common::run_fio_json(dir.path(), &args);
        let job = &report["jobs"][0];
        (job["write"]["iops"].as_f64().unwrap(), job["sync"].clone())
    };
    let (cached, none) = write_iops("");
    assert_eq!(none["total_ios"].as_u64(), Some(0));
    let (synchronous, _) = write_iops("--sync=1");
    assert!(
        synchronous * 2.0 < cached,
        "sync=1 {synchronous} IOPS against {cached} IOPS with the write cache"
    );
    // The end's flush is done but, as fio 3.33 (it syncs in the TD_FSYNCING state, which
    // `td_io_queue` leaves uncounted), neither counted nor timed.
    let (_, end) = write_iops("--end_fsync=1");
    assert_eq!(end["total_ios"].as_u64(), Some(0), "{end}");

    let trace = dir.path().join("trace.log");
    std::fs::write(
        &trace,
        "fio version 2 iolog\n/x add\n/x open\n/x write 0 4096\n/x write 65536 4096\n\
         /x sync 0 0\n/x write 131072 4096\n/x datasync 0 0\n/x close\n",
    )
    .unwrap();
    let report = common::run_fio_json(
        dir.path(),
        &[
            "--target=sim:usb3-uas-ssd",
            &format!("--read_iolog={}", trace.display()),
        ],
    );
    let job = &report["jobs"][0];
    assert_eq!(job["write"]["total_ios"].as_u64(), Some(3), "{job}");
    // fio 3.33 on this trace: both syncs timed, only the `fsync` counted (an `fdatasync`'s
    // DDIR_DATASYNC falls past its `total_io_u` array).
    assert_eq!(job["sync"]["total_ios"].as_u64(), Some(1), "{job}");
    assert_eq!(job["sync"]["lat_ns"]["N"].as_u64(), Some(2), "{job}");
}

/// The `write` block's bytes and I/O count of a fio-shaped report.
fn writes_moved(report: &Value) -> (Option<u64>, Option<u64>) {
    let write = &report["jobs"][0]["write"];
    (write["io_bytes"].as_u64(), write["total_ios"].as_u64())
}

/// `sync=1` and `sync=dsync` on a file (the target opened with O_SYNC / O_DSYNC, as fio opens
/// it) run on the engines that write through the descriptor and write every block of the file;
/// fio's run of the same job moves the same bytes in the same number of I/Os. Jobs with and
/// without `sync` on one file in one run each get their own opening.
#[test]
fn o_sync_writes_on_a_file_move_what_fio_moves() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::write(&data, vec![0u8; MIB as usize]).unwrap();
    let filename = format!("--filename={}", data.display());
    let job = ["--rw=write", "--bs=4k", "--size=1m", filename.as_str()];
    let with = |extra: &[&'static str]| -> Vec<&str> {
        job.iter().copied().chain(extra.iter().copied()).collect()
    };
    let storlab = common::run_fio_json(dir.path(), &with(&["--sync=1"]));
    assert_eq!(writes_moved(&storlab), (Some(MIB), Some(256)), "{storlab}");
    let written = std::fs::read(&data).unwrap();
    assert_eq!(written.len() as u64, MIB);
    assert!(
        written
            .chunks(4096)
            .all(|block| block.iter().any(|&b| b != 0)),
        "every 4 KiB block of the zeroed file was written"
    );
    for extra in [
        ["--sync=dsync", "--ioengine=libaio"],
        ["--sync=dsync", "--ioengine=io_uring"],
        ["--sync=1", "--ioengine=sync"],
    ] {
        let report = common::run_fio_json(dir.path(), &with(&extra));
        assert_eq!(
            writes_moved(&report),
            (Some(MIB), Some(256)),
            "{extra:?}: {report}"
        );
    }
    let mut mmap_args = vec!["run", "--no-db"];
    mmap_args.extend(with(&["--sync=1", "--ioengine=mmap"]));
    let refused = common::run_in(dir.path(), &mmap_args);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        common::stderr(&refused)
            .contains("--sync=1: ioengine=mmap writes by storing into a mapping"),
        "{}",
        common::stderr(&refused)
    );

    let two_jobs = format!(
        "[global]\nfilename={}\nrw=write\nbs=4k\nsize=256k\n[synchronous]\nsync=1\n\
         [plain]\nstonewall\n[data_synchronous]\nstonewall\nsync=dsync\n",
        data.display()
    );
    std::fs::write(dir.path().join("mixed.fio"), two_jobs).unwrap();
    let mixed = common::run_fio_json(dir.path(), &["mixed.fio"]);
    let jobs = mixed["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3, "{mixed}");
    for job in jobs {
        assert_eq!(job["write"]["io_bytes"].as_u64(), Some(256 << 10), "{job}");
    }

    let mut fio_args = vec!["--name=j", "--output-format=json", "--sync=1"];
    fio_args.extend_from_slice(&job);
    let Ok(fio) = Command::new("fio")
        .current_dir(dir.path())
        .args(&fio_args)
        .output()
    else {
        eprintln!("skipping the fio comparison: fio is not installed (Debian package fio)");
        return;
    };
    assert!(fio.status.success(), "{fio:?}");
    let fio: Value = serde_json::from_slice(&fio.stdout).unwrap();
    assert_eq!(writes_moved(&fio), writes_moved(&storlab), "fio: {fio}");
}
