//! Every real engine reads back what it wrote, reports short reads and errno honestly, and
//! rejects requests that break the engine contract. io_uring fallbacks are forced one by one.

use crate::common::*;
use std::path::Path;
use storlab_engine::engines::io_uring::{IoUringEngine, IoUringOptions, RingSetup};
use storlab_engine::engines::libaio::{LibaioEngine, LibaioOptions};
use storlab_engine::engines::mmap::MmapEngine;
use storlab_engine::engines::null::NullEngine;
use storlab_engine::engines::posixaio::PosixAioEngine;
use storlab_engine::engines::psync::PsyncEngine;
use storlab_engine::engines::pvsync::PvsyncEngine;
use storlab_engine::engines::pvsync2::{Pvsync2Engine, Pvsync2Options};
use storlab_engine::engines::sync::SyncEngine;
use storlab_engine::registry::{engine_names, open_engine, EngineOptions};
use storlab_engine::target::{open_target, OpenTarget};
use storlab_engine::{EngineError, IoDirection, IoEngine, IoRequest};
use storlab_job::{EngineKind, Target};

const REGION_BYTES: u64 = 8 << 20;
const SEED: u64 = 0x0E61_4E55;

fn temp_target(dir: &Path, direct: bool) -> OpenTarget {
    open_target(
        &Target::TempFileIn(dir.to_path_buf()),
        REGION_BYTES,
        direct,
        true,
        None,
    )
    .expect("open temp target")
}

fn all_ring_setups() -> [RingSetup; 3] {
    [
        RingSetup::SingleIssuerDeferTaskrun,
        RingSetup::CoopTaskrun,
        RingSetup::Plain,
    ]
}

#[test]
fn psync_reads_back_what_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let target = temp_target(dir.path(), false);
    let mut engine = PsyncEngine::new(&target).unwrap();
    assert!(!engine.capabilities().queued);
    assert_eq!(engine.target_size_bytes(), REGION_BYTES);
    // psync is synchronous, but must still accept a batch of queued requests.
    write_then_read_back(&mut engine, 4, REGION_BYTES, 300, SEED);
}

#[test]
fn io_uring_reads_back_what_it_wrote_at_every_queue_depth() {
    let dir = tempfile::tempdir().unwrap();
    let target = temp_target(dir.path(), false);
    for queue_depth in [1, 7, 32] {
        let mut engine = IoUringEngine::new(&target, IoUringOptions::default()).unwrap();
        write_then_read_back(&mut engine, queue_depth, REGION_BYTES, 400, SEED + 1);
        assert!(engine.uses_registered_buffers(), "{:?}", engine.report());
    }
}

#[test]
fn io_uring_with_o_direct_reads_back_what_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let target = match open_target(
        &Target::TempFileIn(dir.path().to_path_buf()),
        REGION_BYTES,
        true,
        true,
        None,
    ) {
        Ok(target) => target,
        Err(EngineError::Target { message, .. }) if message.contains("O_DIRECT") => {
            eprintln!("skipped: the temp directory's filesystem refuses O_DIRECT");
            return;
        }
        Err(err) => panic!("{err}"),
    };
    assert!(target.logical_block_bytes >= 512);
    let mut engine = IoUringEngine::new(&target, IoUringOptions::default()).unwrap();
    write_then_read_back(&mut engine, 32, REGION_BYTES, 500, SEED + 2);
}

#[test]
fn io_uring_every_forced_fallback_level_works() {
    let dir = tempfile::tempdir().unwrap();
    let target = temp_target(dir.path(), false);
    for best_setup in all_ring_setups() {
        for (register_buffers, register_file) in [(true, true), (false, true), (true, false)] {
            let options = IoUringOptions {
                best_setup,
                register_buffers,
                register_file,
                ..IoUringOptions::default()
            };
            let mut engine = IoUringEngine::new(&target, options.clone()).unwrap();
            write_then_read_back(&mut engine, 16, REGION_BYTES, 64, SEED + 3);
            // A kernel older than the level asked for may fall further, never higher.
            let used = engine.ring_setup().unwrap();
            assert!(used <= best_setup, "{options:?} used {used:?}");
            assert_eq!(engine.uses_registered_buffers(), register_buffers);
            let report = engine.report();
            let detail = |key: &str| {
                report
                    .details
                    .iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.clone())
                    .unwrap()
            };
            assert_eq!(detail("ring_setup"), used.as_str());
            assert_eq!(
                detail("buffers").starts_with("registered"),
                register_buffers
            );
            assert_eq!(detail("file") == "registered", register_file);
        }
    }
}

#[test]
fn io_uring_set_up_on_one_thread_runs_on_another() {
    // The runner may build engines on its main thread and move each to a worker: the
    // single-issuer ring must bind to the thread that does the I/O, not the one that built it.
    let dir = tempfile::tempdir().unwrap();
    let target = temp_target(dir.path(), false);
    let mut engine = IoUringEngine::new(&target, IoUringOptions::default()).unwrap();
    setup(&mut engine, 8, BLOCK_BYTES);
    let worker = std::thread::spawn(move || {
        let ios: Vec<Io> = (0..64)
            .map(|i| Io {
                direction: IoDirection::Read,
                offset_bytes: i * u64::from(BLOCK_BYTES),
                len_bytes: BLOCK_BYTES,
            })
            .collect();
        drive(&mut engine, 8, &ios, SEED, |_, completion, _| {
            assert_eq!(completion.result, Ok(BLOCK_BYTES));
        });
    });
    worker.join().unwrap();
}

/// A 10 000-byte file: not a multiple of the block size, so the last block is short.
fn short_file(dir: &Path) -> OpenTarget {
    let path = dir.join("short");
    std::fs::write(&path, vec![0xA5u8; 10_000]).unwrap();
    open_target(&Target::Path(path), 0, false, false, None).unwrap()
}

fn assert_short_reads_and_errno(engine: &mut dyn IoEngine) {
    setup(engine, 4, BLOCK_BYTES);
    let ios = [
        (IoDirection::Read, 0, Ok(BLOCK_BYTES)),
        (IoDirection::Read, 8192, Ok(10_000 - 8192)),
        (IoDirection::Read, 16384, Ok(0)),
        // The target was opened read-only: the kernel says EBADF and so must we.
        (IoDirection::Write, 0, Err(libc::EBADF)),
    ];
    let list: Vec<Io> = ios
        .iter()
        .map(|&(direction, offset_bytes, _)| Io {
            direction,
            offset_bytes,
            len_bytes: BLOCK_BYTES,
        })
        .collect();
    drive(engine, 4, &list, SEED, |io, completion, buf| {
        let (_, _, expected) = ios
            .iter()
            .find(|(d, o, _)| *d == io.direction && *o == io.offset_bytes)
            .unwrap();
        assert_eq!(&completion.result, expected, "{io:?}");
        if let Ok(n) = completion.result {
            if io.direction == IoDirection::Read {
                assert!(buf[..n as usize].iter().all(|&b| b == 0xA5));
            }
        }
    });
}

#[test]
fn psync_reports_short_reads_at_eof_and_errno() {
    let dir = tempfile::tempdir().unwrap();
    let target = short_file(dir.path());
    assert_eq!(target.size_bytes, 10_000);
    assert_short_reads_and_errno(&mut PsyncEngine::new(&target).unwrap());
}

#[test]
fn io_uring_reports_short_reads_at_eof_and_errno() {
    let dir = tempfile::tempdir().unwrap();
    let target = short_file(dir.path());
    assert_short_reads_and_errno(
        &mut IoUringEngine::new(&target, IoUringOptions::default()).unwrap(),
    );
}

fn assert_trim_punches_a_hole(engine: &mut dyn IoEngine) {
    setup(engine, 2, BLOCK_BYTES);
    let trim = Io {
        direction: IoDirection::Trim,
        offset_bytes: 2 * u64::from(BLOCK_BYTES),
        len_bytes: 4 * BLOCK_BYTES,
    };
    let read = |block: u64| Io {
        direction: IoDirection::Read,
        offset_bytes: block * u64::from(BLOCK_BYTES),
        len_bytes: BLOCK_BYTES,
    };
    drive(engine, 1, &[trim], SEED, |_, completion, _| {
        assert_eq!(completion.result, Ok(4 * BLOCK_BYTES));
    });
    drive(
        engine,
        2,
        &[read(3), read(7)],
        SEED,
        |io, completion, buf| {
            assert_eq!(completion.result, Ok(BLOCK_BYTES));
            let zeros = buf[..BLOCK_BYTES as usize].iter().all(|&b| b == 0);
            // Block 3 lies in the hole; block 7 keeps the laid-out (non-zero) data.
            assert_eq!(
                zeros,
                io.offset_bytes == 3 * u64::from(BLOCK_BYTES),
                "{io:?}"
            );
        },
    );
}

#[test]
fn psync_and_io_uring_trim_files_by_punching_holes() {
    let dir = tempfile::tempdir().unwrap();
    let target = temp_target(dir.path(), false);
    assert_trim_punches_a_hole(&mut PsyncEngine::new(&target).unwrap());
    let target = temp_target(dir.path(), false);
    assert_trim_punches_a_hole(
        &mut IoUringEngine::new(&target, IoUringOptions::default()).unwrap(),
    );
}

#[test]
fn null_engine_completes_everything_and_moves_no_data() {
    let mut engine = NullEngine::new(REGION_BYTES);
    let caps = engine.capabilities();
    assert!(caps.queued && !caps.moves_data);
    setup(&mut engine, 32, BLOCK_BYTES);
    engine.buffer_mut(5).fill(0x77);
    let ios: Vec<Io> = (0..1000)
        .map(|i| Io {
            direction: if i % 2 == 0 {
                IoDirection::Read
            } else {
                IoDirection::Write
            },
            offset_bytes: (i % 100) * u64::from(BLOCK_BYTES),
            len_bytes: BLOCK_BYTES,
        })
        .collect();
    let mut completed = 0;
    drive(&mut engine, 32, &ios, SEED, |_, completion, _| {
        assert_eq!(completion.result, Ok(BLOCK_BYTES));
        completed += 1;
    });
    assert_eq!(completed, 1000);
    // Reads did not touch the buffer (write slots were refilled by the driver).
    let report = engine.report();
    assert_eq!(report.details[0], ("ios".to_string(), "1000".to_string()));
}

#[test]
fn contract_violations_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let target = temp_target(dir.path(), false);
    let engines: Vec<Box<dyn IoEngine>> = vec![
        Box::new(NullEngine::new(REGION_BYTES)),
        Box::new(PsyncEngine::new(&target).unwrap()),
        Box::new(IoUringEngine::new(&target, IoUringOptions::default()).unwrap()),
        Box::new(SyncEngine::new(&target).unwrap()),
        Box::new(PvsyncEngine::new(&target).unwrap()),
        Box::new(Pvsync2Engine::new(&target, Pvsync2Options::default()).unwrap()),
        Box::new(LibaioEngine::new(&target, LibaioOptions::default()).unwrap()),
        Box::new(PosixAioEngine::new(&target).unwrap()),
        Box::new(MmapEngine::new(&target).unwrap()),
    ];
    for mut engine in engines {
        let read = |slot, len_bytes| IoRequest {
            slot,
            direction: IoDirection::Read,
            offset_bytes: 0,
            len_bytes,
            ioprio: None,
        };
        let name = engine.name();
        assert!(
            matches!(
                engine.queue(read(0, 4096)),
                Err(EngineError::InvalidRequest(_))
            ),
            "{name}: queue before setup"
        );
        setup(engine.as_mut(), 2, BLOCK_BYTES);
        let invalid = |r: Result<(), EngineError>| matches!(r, Err(EngineError::InvalidRequest(_)));
        assert!(
            invalid(engine.queue(read(2, 4096))),
            "{name}: slot out of range"
        );
        assert!(
            invalid(engine.queue(read(0, 8192))),
            "{name}: longer than slot"
        );
        engine.queue(read(0, 4096)).unwrap();
        assert!(
            invalid(engine.queue(read(0, 4096))),
            "{name}: slot in flight"
        );
        engine.submit().unwrap();
        let mut out = Vec::new();
        assert!(
            engine.reap(2, &mut out).is_err(),
            "{name}: reap more than outstanding"
        );
        engine.reap(1, &mut out).unwrap();
        assert_eq!(out.len(), 1);
        // The slot is free again once reaped.
        engine.queue(read(0, 4096)).unwrap();
        engine.submit().unwrap();
        engine.reap(1, &mut out).unwrap();
    }
}

#[test]
fn registry_opens_every_real_engine() {
    let dir = tempfile::tempdir().unwrap();
    let target = temp_target(dir.path(), false);
    let options = EngineOptions::default();
    assert_eq!(engine_names().len(), EngineKind::ALL.len());
    for (kind, name) in EngineKind::ALL.into_iter().zip(engine_names()) {
        assert_eq!(kind.as_str(), *name);
        if kind == EngineKind::Sim {
            assert!(open_engine(EngineKind::Sim, None, &options).is_err());
            continue;
        }
        let mut engine = open_engine(kind, Some(&target), &options).unwrap();
        assert_eq!(engine.name(), *name);
        assert_eq!(engine.target_size_bytes(), REGION_BYTES);
        assert_eq!(engine.capabilities().queued, kind.queued(), "{name}");
        write_then_read_back_if_moves_data(engine.as_mut());
        if kind != EngineKind::Null {
            assert!(open_engine(kind, None, &options).is_err(), "{name}");
        }
    }
    let null = open_engine(EngineKind::Null, None, &options).unwrap();
    assert_eq!(null.target_size_bytes(), options.null_size_bytes);
}

fn write_then_read_back_if_moves_data(engine: &mut dyn IoEngine) {
    if engine.capabilities().moves_data {
        write_then_read_back(engine, 8, REGION_BYTES, 32, SEED + 9);
    }
}

/// Per-I/O cost of each engine, printed for the report; opt-in because timing on a shared
/// machine is not a pass/fail matter. `STORLAB_BENCH=1 cargo test --release -p storlab-engine
/// --test it -- --nocapture engines::per_io_cost`
#[test]
fn per_io_cost() {
    if std::env::var_os("STORLAB_BENCH").is_none() {
        eprintln!("skipped: set STORLAB_BENCH=1 to measure per-I/O cost");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let target = temp_target(dir.path(), false);
    let ios_per_run: u64 = 2_000_000;
    let measure = |label: &str, engine: &mut dyn IoEngine, queue_depth: u32, ios: u64| {
        setup(engine, queue_depth, BLOCK_BYTES);
        let mut rng = TestRng::new(SEED);
        let blocks = REGION_BYTES / u64::from(BLOCK_BYTES);
        let mut out = Vec::with_capacity(queue_depth as usize);
        let mut free: Vec<u32> = (0..queue_depth).collect();
        let start = std::time::Instant::now();
        let (mut issued, mut done) = (0u64, 0u64);
        while done < ios {
            while issued < ios {
                let Some(slot) = free.pop() else { break };
                let request = IoRequest {
                    slot,
                    direction: IoDirection::Read,
                    offset_bytes: (rng.next_u64() % blocks) * u64::from(BLOCK_BYTES),
                    len_bytes: BLOCK_BYTES,
                    ioprio: None,
                };
                engine.queue(request).unwrap();
                issued += 1;
            }
            engine.submit().unwrap();
            out.clear();
            engine.reap(1, &mut out).unwrap();
            for completion in &out {
                assert!(completion.result.is_ok());
                free.push(completion.slot);
            }
            done += out.len() as u64;
        }
        let ns_per_io = start.elapsed().as_nanos() as f64 / ios as f64;
        eprintln!("{label}: {ns_per_io:.1} ns per 4 KiB random read ({ios} I/Os)");
    };
    measure(
        "null QD1",
        &mut NullEngine::new(REGION_BYTES),
        1,
        ios_per_run,
    );
    measure(
        "null QD32",
        &mut NullEngine::new(REGION_BYTES),
        32,
        ios_per_run,
    );
    measure(
        "psync QD1 cached",
        &mut PsyncEngine::new(&target).unwrap(),
        1,
        ios_per_run / 4,
    );
    measure(
        "io_uring QD32 cached",
        &mut IoUringEngine::new(&target, IoUringOptions::default()).unwrap(),
        32,
        ios_per_run / 4,
    );
    // O_DIRECT reaches the device: fewer I/Os, the disk sets the pace.
    if let Ok(direct) = open_target(
        &Target::TempFileIn(dir.path().to_path_buf()),
        REGION_BYTES,
        true,
        false,
        None,
    ) {
        measure(
            "io_uring QD32 O_DIRECT",
            &mut IoUringEngine::new(&direct, IoUringOptions::default()).unwrap(),
            32,
            ios_per_run / 20,
        );
    }
}

type Build = fn(&OpenTarget) -> Box<dyn IoEngine + Send>;

/// A constructor for every file engine storlab has beside psync and io_uring (libaio twice:
/// with and without `userspace_reap`).
fn fio_engine_builders() -> [Build; 7] {
    [
        |t| Box::new(SyncEngine::new(t).unwrap()),
        |t| Box::new(PvsyncEngine::new(t).unwrap()),
        |t| Box::new(Pvsync2Engine::new(t, Pvsync2Options::default()).unwrap()),
        |t| Box::new(LibaioEngine::new(t, LibaioOptions::default()).unwrap()),
        |t| {
            let options = LibaioOptions {
                userspace_reap: true,
            };
            Box::new(LibaioEngine::new(t, options).unwrap())
        },
        |t| Box::new(PosixAioEngine::new(t).unwrap()),
        |t| Box::new(MmapEngine::new(t).unwrap()),
    ]
}

/// Every engine of `fio_engine_builders`, built on `target`.
fn fio_engines(target: &OpenTarget) -> Vec<Box<dyn IoEngine + Send>> {
    fio_engine_builders()
        .iter()
        .map(|build| build(target))
        .collect()
}

/// A temporary target opened with O_DIRECT, or `None` (with a note) where the filesystem
/// refuses it.
fn direct_target(dir: &Path) -> Option<OpenTarget> {
    match open_target(
        &Target::TempFileIn(dir.to_path_buf()),
        REGION_BYTES,
        true,
        true,
        None,
    ) {
        Ok(target) => Some(target),
        Err(EngineError::Target { message, .. }) if message.contains("O_DIRECT") => {
            eprintln!("skipped: the temp directory's filesystem refuses O_DIRECT");
            None
        }
        Err(err) => panic!("{err}"),
    }
}

#[test]
fn fio_engines_read_back_what_they_wrote_buffered_and_with_o_direct() {
    let dir = tempfile::tempdir().unwrap();
    let buffered = temp_target(dir.path(), false);
    let direct = direct_target(dir.path());
    for target in std::iter::once(&buffered).chain(direct.as_ref()) {
        for build in fio_engine_builders() {
            // Queued engines at depth; the synchronous ones must still accept a batch. A fresh
            // engine per depth: `setup` is once per engine.
            let depths: &[u32] = if build(target).capabilities().queued {
                &[1, 7, 32]
            } else {
                &[1, 4]
            };
            for &depth in depths {
                write_then_read_back(build(target).as_mut(), depth, REGION_BYTES, 200, SEED + 20);
            }
        }
    }
}

#[test]
fn fio_engines_report_short_reads_at_eof_and_errno() {
    let dir = tempfile::tempdir().unwrap();
    let target = short_file(dir.path());
    for mut engine in fio_engines(&target) {
        assert_short_reads_and_errno(engine.as_mut());
    }
}

#[test]
fn fio_engines_trim_files_by_punching_holes() {
    let dir = tempfile::tempdir().unwrap();
    for build in fio_engine_builders() {
        let target = temp_target(dir.path(), false);
        assert_trim_punches_a_hole(build(&target).as_mut());
    }
}

/// The value of report detail `key`.
fn detail(engine: &dyn IoEngine, key: &str) -> String {
    engine
        .report()
        .detail(key)
        .unwrap_or_else(|| panic!("{}: no {key} in {:?}", engine.name(), engine.report()))
        .to_string()
}

/// `count` sequential 4 KiB requests from offset 0.
fn sequential(direction: IoDirection, count: u64) -> Vec<Io> {
    (0..count)
        .map(|i| Io {
            direction,
            offset_bytes: i * u64::from(BLOCK_BYTES),
            len_bytes: BLOCK_BYTES,
        })
        .collect()
}

#[test]
fn sync_seeks_only_when_the_file_position_is_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let target = temp_target(dir.path(), false);
    let mut engine = SyncEngine::new(&target).unwrap();
    setup(&mut engine, 1, BLOCK_BYTES);
    // A sequential pass: one lseek to get there, then the position follows the reads (fio's
    // `fio_syncio_prep` skips the lseek the same way).
    drive(
        &mut engine,
        1,
        &sequential(IoDirection::Read, 64),
        SEED,
        |_, c, _| {
            assert_eq!(c.result, Ok(BLOCK_BYTES));
        },
    );
    assert_eq!(detail(&engine, "seeks"), "1");
    // Going back is a seek; each worker's position is its own (a second engine's reads do not
    // move this one's position).
    let mut other = SyncEngine::new(&target).unwrap();
    setup(&mut other, 1, BLOCK_BYTES);
    drive(
        &mut other,
        1,
        &sequential(IoDirection::Read, 3),
        SEED,
        |_, _, _| {},
    );
    let next = [Io {
        direction: IoDirection::Read,
        offset_bytes: 64 * u64::from(BLOCK_BYTES),
        len_bytes: BLOCK_BYTES,
    }];
    drive(&mut engine, 1, &next, SEED, |_, c, _| {
        assert_eq!(c.result, Ok(BLOCK_BYTES));
    });
    assert_eq!(detail(&engine, "seeks"), "1");
    drive(
        &mut engine,
        1,
        &sequential(IoDirection::Read, 1),
        SEED,
        |_, _, _| {},
    );
    assert_eq!(detail(&engine, "seeks"), "2");
}

#[test]
fn pvsync2_passes_hipri_and_nowait_as_rwf_flags() {
    let dir = tempfile::tempdir().unwrap();
    let target = temp_target(dir.path(), false);
    for (options, flags) in [
        (Pvsync2Options::default(), "none"),
        (
            Pvsync2Options {
                hipri: true,
                nowait: false,
            },
            "RWF_HIPRI",
        ),
        (
            Pvsync2Options {
                hipri: true,
                nowait: true,
            },
            "RWF_HIPRI|RWF_NOWAIT",
        ),
    ] {
        let mut engine = Pvsync2Engine::new(&target, options).unwrap();
        // Buffered I/O on a laid-out file: HIPRI is ignored without O_DIRECT, NOWAIT is served
        // from the page cache or refused with EAGAIN, never blocked on.
        setup(&mut engine, 1, BLOCK_BYTES);
        drive(
            &mut engine,
            1,
            &sequential(IoDirection::Read, 16),
            SEED,
            |_, c, _| {
                assert!(
                    c.result == Ok(BLOCK_BYTES)
                        || (options.nowait && c.result == Err(libc::EAGAIN)),
                    "{options:?}: {:?}",
                    c.result
                );
            },
        );
        assert_eq!(detail(&engine, "rw_flags"), flags);
    }
    // The plain engine writes and reads back like psync.
    let mut engine = Pvsync2Engine::new(&target, Pvsync2Options::default()).unwrap();
    write_then_read_back(&mut engine, 1, REGION_BYTES, 100, SEED + 22);
}

#[test]
fn libaio_userspace_reap_takes_completions_from_the_ring_without_getevents() {
    let dir = tempfile::tempdir().unwrap();
    let target = direct_target(dir.path()).unwrap_or_else(|| temp_target(dir.path(), false));
    let depth = 16u32;
    for userspace_reap in [false, true] {
        let mut engine = LibaioEngine::new(&target, LibaioOptions { userspace_reap }).unwrap();
        write_then_read_back(&mut engine, depth, REGION_BYTES, 100, SEED + 23);
        let counter =
            |engine: &LibaioEngine, key: &str| -> u64 { detail(engine, key).parse().unwrap() };
        let getevents_before = counter(&engine, "getevents_syscalls");
        // A batch whose completions are all in the ring before we look: `reap(0)` then finds
        // them there (user space) or asks io_getevents (the kernel) once.
        queue_one_per_slot(&mut engine, depth, IoDirection::Read);
        engine.submit().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let mut out = Vec::new();
        let reaped = engine.reap(0, &mut out).unwrap();
        assert_eq!(
            reaped, depth as usize,
            "the device took over 200 ms for {depth} reads"
        );
        assert!(out.iter().all(|c| c.result == Ok(BLOCK_BYTES)));
        let getevents = counter(&engine, "getevents_syscalls") - getevents_before;
        if userspace_reap {
            assert_eq!(getevents, 0);
            assert!(counter(&engine, "userspace_reaped") >= u64::from(depth));
        } else {
            assert_eq!(getevents, 1);
            assert_eq!(counter(&engine, "userspace_reaped"), 0);
        }
    }
}

#[test]
fn io_uring_fio_options_read_back_and_show_in_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let target = temp_target(dir.path(), false);
    let cases = [
        (
            IoUringOptions {
                register_buffers: false,
                vectored: true,
                ..IoUringOptions::default()
            },
            Some("vectored"),
        ),
        (
            IoUringOptions {
                sqpoll: true,
                ..IoUringOptions::default()
            },
            Some("sqpoll"),
        ),
        (
            IoUringOptions {
                require_registered_buffers: true,
                require_registered_file: true,
                ..IoUringOptions::default()
            },
            None,
        ),
    ];
    for (options, mode) in cases {
        let mut engine = IoUringEngine::new(&target, options.clone()).unwrap();
        write_then_read_back(&mut engine, 8, REGION_BYTES, 200, SEED + 24);
        assert_eq!(engine.report().detail("modes"), mode, "{options:?}");
    }
}

#[test]
fn io_uring_fixedbufs_given_is_required() {
    // More slots than the kernel registers: unset, storlab falls back to plain buffers; asked
    // for with `fixedbufs`, setup fails with one line naming it.
    let dir = tempfile::tempdir().unwrap();
    let target = temp_target(dir.path(), false);
    let slots = 16385;
    let mut engine = IoUringEngine::new(&target, IoUringOptions::default()).unwrap();
    setup(&mut engine, slots, 512);
    assert!(!engine.uses_registered_buffers());
    let mut engine = IoUringEngine::new(
        &target,
        IoUringOptions {
            require_registered_buffers: true,
            ..IoUringOptions::default()
        },
    )
    .unwrap();
    let error = engine
        .setup(&storlab_engine::EngineSetup {
            slots,
            slot_bytes: 512,
            buffer_align_bytes: 512,
        })
        .unwrap_err();
    assert!(error.to_string().contains("fixedbufs"), "{error}");
}

/// Reads `count` 4 KiB blocks at depth 8, request `i` carrying `ioprio_of(i)`; the results.
fn drive_prioritized(
    engine: &mut dyn IoEngine,
    count: u64,
    ioprio_of: impl Fn(u64) -> Option<u16>,
) -> Vec<Result<u32, i32>> {
    const DEPTH: u32 = 8;
    let mut free: Vec<u32> = (0..DEPTH).collect();
    let (mut next, mut outstanding) = (0, 0);
    let mut results = Vec::new();
    let mut completions = Vec::new();
    while next < count || outstanding > 0 {
        while next < count {
            let Some(slot) = free.pop() else { break };
            engine
                .queue(IoRequest {
                    slot,
                    direction: IoDirection::Read,
                    offset_bytes: next * u64::from(BLOCK_BYTES),
                    len_bytes: BLOCK_BYTES,
                    ioprio: ioprio_of(next),
                })
                .unwrap();
            next += 1;
            outstanding += 1;
        }
        engine.submit().unwrap();
        completions.clear();
        engine.reap(1, &mut completions).unwrap();
        for c in &completions {
            results.push(c.result);
            free.push(c.slot);
            outstanding -= 1;
        }
    }
    results
}

/// linux/ioprio.h values: best-effort (open to every user) at level 4, real-time at 0.
const BEST_EFFORT_4: u16 = 2 << 13 | 4;
const REAL_TIME_0: u16 = 1 << 13;

#[test]
fn io_uring_puts_each_requests_own_priority_in_its_sqe() {
    // As fio's io_uring: the job's priority (`default_ioprio`, here best-effort 7) in every
    // SQE, a request's own (a cmdprio pick) instead when it has one. Best-effort is open to
    // every user, so each request completes; the engine counts the ones with their own.
    let dir = tempfile::tempdir().unwrap();
    let target = temp_target(dir.path(), false);
    let mut engine = IoUringEngine::new(
        &target,
        IoUringOptions {
            default_ioprio: 2 << 13 | 7,
            ..IoUringOptions::default()
        },
    )
    .unwrap();
    setup(&mut engine, 8, BLOCK_BYTES);
    let results = drive_prioritized(&mut engine, 300, |i| {
        i.is_multiple_of(3).then_some(BEST_EFFORT_4)
    });
    assert!(results.iter().all(|r| *r == Ok(BLOCK_BYTES)), "{results:?}");
    assert_eq!(detail(&engine, "prioritized_ios"), "100");
    // The real-time class needs CAP_SYS_ADMIN or CAP_SYS_NICE; without it the kernel refuses
    // those requests with EPERM, which the engine reports as the request's result.
    let results = drive_prioritized(&mut engine, 16, |_| Some(REAL_TIME_0));
    assert!(
        results
            .iter()
            .all(|r| *r == Ok(BLOCK_BYTES) || *r == Err(libc::EPERM)),
        "{results:?}"
    );
    assert_eq!(detail(&engine, "prioritized_ios"), "116");
}

#[test]
fn libaio_sets_aio_reqprio_on_the_requests_with_their_own_priority() {
    // fio's libaio sets aio_reqprio with IOCB_FLAG_IOPRIO (Linux 5.0+) on cmdprio's picks
    // only. Best-effort is open to every user, so every request completes.
    let dir = tempfile::tempdir().unwrap();
    let target = temp_target(dir.path(), false);
    let mut engine = LibaioEngine::new(&target, LibaioOptions::default()).unwrap();
    setup(&mut engine, 8, BLOCK_BYTES);
    let results = drive_prioritized(&mut engine, 200, |_| None);
    assert!(results.iter().all(|r| *r == Ok(BLOCK_BYTES)), "{results:?}");
    assert!(engine.report().detail("prioritized_ios").is_none());
    let results = drive_prioritized(&mut engine, 400, |i| {
        i.is_multiple_of(2).then_some(BEST_EFFORT_4)
    });
    assert!(results.iter().all(|r| *r == Ok(BLOCK_BYTES)), "{results:?}");
    assert_eq!(detail(&engine, "prioritized_ios"), "200");
}

#[test]
fn io_uring_hipri_polls_for_completions() {
    // IOPOLL on a target without poll queues: the kernel completes each request with
    // EOPNOTSUPP (buffered files) or by interrupt (some block devices); the engine must reap
    // every one of them without hanging, entering the kernel to poll.
    let dir = tempfile::tempdir().unwrap();
    let target = direct_target(dir.path()).unwrap_or_else(|| temp_target(dir.path(), false));
    let mut engine = IoUringEngine::new(
        &target,
        IoUringOptions {
            iopoll: true,
            ..IoUringOptions::default()
        },
    )
    .unwrap();
    setup(&mut engine, 8, BLOCK_BYTES);
    let mut completed = 0;
    drive(
        &mut engine,
        8,
        &sequential(IoDirection::Read, 64),
        SEED,
        |_, c, _| {
            assert!(
                c.result == Ok(BLOCK_BYTES) || c.result == Err(libc::EOPNOTSUPP),
                "{:?}",
                c.result
            );
            completed += 1;
        },
    );
    assert_eq!(completed, 64);
    assert_eq!(engine.report().detail("modes"), Some("iopoll"));
}

#[test]
fn io_uring_sqthread_poll_cpu_binds_the_polling_thread() {
    // IORING_SETUP_SQ_AFF on CPU 0, which every machine has: the ring is set up with it and
    // the I/O goes through the bound thread.
    let dir = tempfile::tempdir().unwrap();
    let target = temp_target(dir.path(), false);
    let mut engine = IoUringEngine::new(
        &target,
        IoUringOptions {
            sqpoll: true,
            sqpoll_cpu: Some(0),
            ..IoUringOptions::default()
        },
    )
    .unwrap();
    write_then_read_back(&mut engine, 8, REGION_BYTES, 200, SEED + 31);
    assert_eq!(engine.report().detail("modes"), Some("sqpoll"));
}

/// The descriptor's status flags (`fcntl(F_GETFL)`).
fn status_flags(file: &std::fs::File) -> libc::c_int {
    use std::os::fd::AsRawFd;
    // SAFETY: F_GETFL on an open descriptor takes no pointer.
    let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
    assert!(flags >= 0, "F_GETFL: {}", std::io::Error::last_os_error());
    flags
}

/// fio's `sync=1` / `sync=dsync` on a file: the reopening carries O_SYNC resp. O_DSYNC (Linux's
/// O_SYNC holds O_DSYNC's bit, so O_DSYNC alone is "the O_DSYNC bit without all of O_SYNC"),
/// the plain opening neither; every engine that writes through its descriptor accepts
/// synchronous writes on the synchronous opening (and still moves data), refuses them on the
/// plain one, and mmap refuses them everywhere.
#[test]
fn sync_openings_carry_o_sync_or_o_dsync_and_the_engines_write_through_them() {
    use storlab_engine::FlushKind;
    let dir = tempfile::tempdir().unwrap();
    let plain = temp_target(dir.path(), false);
    assert_eq!(
        status_flags(&plain.file) & libc::O_DSYNC,
        0,
        "no sync=: neither flag"
    );
    let synced = plain.reopen_synchronous(FlushKind::All).unwrap();
    assert_eq!(status_flags(&synced.file) & libc::O_SYNC, libc::O_SYNC);
    let dsynced = plain.reopen_synchronous(FlushKind::Data).unwrap();
    let dsync_flags = status_flags(&dsynced.file);
    assert_eq!(dsync_flags & libc::O_DSYNC, libc::O_DSYNC);
    assert_ne!(
        dsync_flags & libc::O_SYNC,
        libc::O_SYNC,
        "O_DSYNC, not O_SYNC"
    );
    assert_eq!(
        status_flags(&plain.file) & libc::O_DSYNC,
        0,
        "the plain opening is unchanged"
    );
    assert_eq!(
        (synced.path.as_path(), synced.size_bytes),
        (plain.path.as_path(), plain.size_bytes)
    );
    assert!(
        synced.temp.is_none(),
        "the plain opening owns the temporary file"
    );

    let options = EngineOptions::default();
    for kind in EngineKind::ALL {
        if matches!(kind, EngineKind::Sim | EngineKind::Null) {
            continue;
        }
        let name = kind.as_str();
        for (target, flush) in [(&synced, FlushKind::All), (&dsynced, FlushKind::Data)] {
            let mut engine = open_engine(kind, Some(target), &options).unwrap();
            let taken = engine.set_sync_writes(Some(flush));
            if kind == EngineKind::Mmap {
                let error = taken.unwrap_err().to_string();
                assert!(error.contains("mapping"), "{error}");
                continue;
            }
            taken.unwrap_or_else(|e| panic!("{name} {flush:?}: {e}"));
            write_then_read_back_if_moves_data(engine.as_mut());
        }
        let mut engine = open_engine(kind, Some(&plain), &options).unwrap();
        assert!(
            engine.set_sync_writes(Some(FlushKind::Data)).is_err(),
            "{name}"
        );
        engine.set_sync_writes(None).unwrap();
        if kind != EngineKind::Mmap {
            let mut engine = open_engine(kind, Some(&synced), &options).unwrap();
            assert!(
                engine.set_sync_writes(None).is_err(),
                "{name}: O_SYNC cannot be turned off"
            );
        }
    }
    drop((synced, dsynced));
    assert!(
        plain.path.exists(),
        "dropping the synchronous openings keeps the temporary file"
    );
}
