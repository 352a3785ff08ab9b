//! Syncs queued as requests (fio's posixaio `aio_fsync`, io_uring's IORING_OP_FSYNC): one sync
//! rides among the writes in flight, completes through `reap` with 0 bytes in its own slot, and
//! engines that cannot queue one say so rather than run it out of turn.

use crate::common::*;
use storlab_engine::engines::io_uring::{IoUringEngine, IoUringOptions};
use storlab_engine::engines::posixaio::PosixAioEngine;
use storlab_engine::engines::psync::PsyncEngine;
use storlab_engine::target::{open_target, OpenTarget};
use storlab_engine::{EngineError, FlushKind, IoDirection, IoEngine, IoRequest};
use storlab_job::Target;

const TARGET_BYTES: u64 = 1 << 20;

/// A temporary file of `TARGET_BYTES` in `dir`, buffered.
fn temp_file_target(dir: &std::path::Path) -> OpenTarget {
    open_target(
        &Target::TempFileIn(dir.to_path_buf()),
        TARGET_BYTES,
        false,
        true,
        None,
    )
    .unwrap()
}

fn write(slot: u32) -> IoRequest {
    IoRequest {
        slot,
        direction: IoDirection::Write,
        offset_bytes: u64::from(slot) * u64::from(BLOCK_BYTES),
        len_bytes: BLOCK_BYTES,
        ioprio: None,
    }
}

#[test]
fn posixaio_and_io_uring_queue_a_sync_among_writes_and_reap_it_in_its_slot() {
    let dir = tempfile::tempdir().unwrap();
    let target = temp_file_target(dir.path());
    let engines: [Box<dyn IoEngine>; 2] = [
        Box::new(PosixAioEngine::new(&target).unwrap()),
        Box::new(IoUringEngine::new(&target, IoUringOptions::default()).unwrap()),
    ];
    for mut engine in engines {
        sync_among_writes(engine.as_mut());
    }
}

fn sync_among_writes(engine: &mut dyn IoEngine) {
    assert!(engine.queues_flushes(), "{}", engine.name());
    setup(engine, 4, BLOCK_BYTES);
    engine.queue(write(0)).unwrap();
    engine.queue(write(1)).unwrap();
    engine.queue_flush(2, FlushKind::Data).unwrap();
    assert!(
        matches!(
            engine.queue_flush(2, FlushKind::All),
            Err(EngineError::InvalidRequest(_))
        ),
        "{}: a slot in flight takes no second request",
        engine.name()
    );
    engine.queue(write(3)).unwrap();
    assert_eq!(engine.submit().unwrap(), 4);
    let mut out = Vec::new();
    while out.len() < 4 {
        engine.reap(1, &mut out).unwrap();
    }
    let mut results: Vec<(u32, Result<u32, i32>)> =
        out.iter().map(|c| (c.slot, c.result)).collect();
    results.sort_unstable();
    assert_eq!(
        results,
        [
            (0, Ok(BLOCK_BYTES)),
            (1, Ok(BLOCK_BYTES)),
            (2, Ok(0)),
            (3, Ok(BLOCK_BYTES))
        ]
    );
    // The slot is free again once reaped.
    engine.queue_flush(2, FlushKind::All).unwrap();
    engine.submit().unwrap();
    out.clear();
    engine.reap(1, &mut out).unwrap();
    assert_eq!((out[0].slot, out[0].result), (2, Ok(0)));
}

#[test]
fn an_engine_that_cannot_queue_a_sync_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let target = temp_file_target(dir.path());
    let mut engine = PsyncEngine::new(&target).unwrap();
    assert!(!engine.queues_flushes());
    setup(&mut engine, 2, BLOCK_BYTES);
    assert!(matches!(
        engine.queue_flush(0, FlushKind::All),
        Err(EngineError::Unsupported(_))
    ));
}
