//! The order posixaio hands out requests it finds finished in one scan: fio's (its unit of
//! highest index is the first one used and the scan walks the units from index 0), which
//! decides the unit freed last and so the offset fio logs on its next sync.

use crate::common::*;
use storlab_engine::engines::posixaio::PosixAioEngine;
use storlab_engine::target::open_target;
use storlab_engine::{IoDirection, IoEngine};
use storlab_job::Target;

#[test]
fn requests_finished_together_come_out_from_the_last_slot_to_the_first() {
    const SLOTS: u32 = 4;
    let dir = tempfile::tempdir().unwrap();
    let target = open_target(
        &Target::TempFileIn(dir.path().to_path_buf()),
        1 << 20,
        false,
        true,
        None,
    )
    .unwrap();
    let mut engine = PosixAioEngine::new(&target).unwrap();
    setup(&mut engine, SLOTS, BLOCK_BYTES);
    queue_one_per_slot(&mut engine, SLOTS, IoDirection::Write);
    engine.submit().unwrap();
    // Let glibc's thread finish the writes (buffered 4 KiB writes take microseconds), then
    // scan: each `reap(0)` is one scan, and what one scan finds comes out from the last slot to
    // the first. On a loaded machine a scan may find fewer; the order within each holds.
    let mut batches: Vec<Vec<u32>> = Vec::new();
    let mut reaped = 0;
    for _ in 0..500 {
        std::thread::sleep(std::time::Duration::from_millis(10));
        let mut out = Vec::new();
        engine.reap(0, &mut out).unwrap();
        reaped += out.len();
        if !out.is_empty() {
            batches.push(out.iter().map(|c| c.slot).collect());
        }
        if reaped == SLOTS as usize {
            break;
        }
    }
    assert_eq!(reaped, SLOTS as usize, "every write finished: {batches:?}");
    for batch in &batches {
        assert!(
            batch.windows(2).all(|w| w[0] > w[1]),
            "one scan's slots: {batches:?}"
        );
    }
}
