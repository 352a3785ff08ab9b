//! Payload is carried end to end: what is written reads back on every stack, through splitting
//! and merging; TRIM reaches the drive only when the bridge translates UNMAP.

use storlab_sim::{Op, ProfileSet, SimRequest, Simulator, ERRNO_EINVAL};

const SLOT_BYTES: usize = 1 << 20;

fn new_sim(stack: &str, slots: u32) -> Simulator {
    let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), stack, 3).unwrap();
    sim.setup_slots(slots, SLOT_BYTES).unwrap();
    sim
}

fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 56) as u8
        })
        .collect()
}

fn do_io(sim: &mut Simulator, slot: u32, op: Op, offset: u64, len: u32) -> Result<u32, i32> {
    sim.submit(SimRequest {
        slot,
        op,
        offset_bytes: offset,
        len_bytes: len,
    })
    .unwrap();
    sim.run_until_completions(1);
    let c = sim.pop_completion().unwrap();
    assert_eq!(c.slot, slot);
    c.result
}

/// The payload store has a memory budget for data it cannot describe by its generator (here,
/// bytes from outside storlab's pattern generators): a session that writes past it keeps what it
/// has, reads the rest as zeros, and says how much it dropped, so a whole-drive fill of a
/// terabyte drive with foreign data cannot take a terabyte of RAM.
#[test]
fn written_data_past_the_payload_budget_is_counted_not_kept() {
    let mut sim = new_sim("usb3-uas-ssd", 1);
    sim.set_payload_budget_bytes(1 << 20);
    let first = pattern(7, SLOT_BYTES);
    for (i, offset) in [0u64, 1 << 20, 2 << 20].into_iter().enumerate() {
        sim.slot_buffer_mut(0)
            .copy_from_slice(&pattern(7 + i as u64, SLOT_BYTES));
        assert_eq!(do_io(&mut sim, 0, Op::Write, offset, 1 << 20), Ok(1 << 20));
    }
    let report = sim.report();
    assert_eq!(report.stored_bytes, 1 << 20);
    assert_eq!(report.payload_dropped_bytes, 2 << 20);
    assert!(report
        .details()
        .iter()
        .any(|(k, v)| k == storlab_sim::report::DETAIL_PAYLOAD_DROPPED_BYTES && v == "2097152"));
    assert_eq!(do_io(&mut sim, 0, Op::Read, 0, 1 << 20), Ok(1 << 20));
    assert_eq!(sim.slot_buffer(0), &first[..], "the first MiB was kept");
    assert_eq!(do_io(&mut sim, 0, Op::Read, 2 << 20, 1 << 20), Ok(1 << 20));
    assert!(
        sim.slot_buffer(0).iter().all(|&b| b == 0),
        "the last was not"
    );
}

#[test]
fn written_data_reads_back_on_every_stack() {
    for (stack, _) in ProfileSet::embedded().stacks() {
        let mut sim = new_sim(&stack, 1);
        // Sizes that split at 64 KiB / 120 KiB / 128 KiB limits and odd sector counts.
        for (i, &(offset, len)) in [
            (0u64, 4096u32),
            (1 << 20, 300 * 1024),
            (5 << 20, 1 << 20),
            (9 << 20, 512 * 7),
        ]
        .iter()
        .enumerate()
        {
            let data = pattern(i as u64 + 1, len as usize);
            sim.slot_buffer_mut(0)[..len as usize].copy_from_slice(&data);
            assert_eq!(do_io(&mut sim, 0, Op::Write, offset, len), Ok(len));
            sim.slot_buffer_mut(0).fill(0xEE);
            assert_eq!(do_io(&mut sim, 0, Op::Read, offset, len), Ok(len));
            assert_eq!(
                &sim.slot_buffer(0)[..len as usize],
                &data[..],
                "stack {stack} at {offset}"
            );
        }
    }
}

#[test]
fn merged_commands_carry_each_request_to_its_own_place() {
    let mut sim = new_sim("usb3-turbo-ssd", 16);
    for slot in 0..16u32 {
        let data = pattern(100 + u64::from(slot), 4096);
        sim.slot_buffer_mut(slot)[..4096].copy_from_slice(&data);
        sim.submit(SimRequest {
            slot,
            op: Op::Write,
            offset_bytes: u64::from(slot) * 4096,
            len_bytes: 4096,
        })
        .unwrap();
    }
    sim.run();
    while sim.pop_completion().is_some() {}
    assert!(
        sim.report().merged_requests > 0,
        "the test must exercise merging"
    );
    for slot in 0..16u32 {
        sim.slot_buffer_mut(slot).fill(0);
        sim.submit(SimRequest {
            slot,
            op: Op::Read,
            offset_bytes: u64::from(15 - slot) * 4096,
            len_bytes: 4096,
        })
        .unwrap();
    }
    sim.run();
    for slot in 0..16u32 {
        assert_eq!(
            &sim.slot_buffer(slot)[..4096],
            &pattern(100 + u64::from(15 - slot), 4096)[..]
        );
    }
}

#[test]
fn trim_reaches_the_drive_only_through_a_translating_bridge() {
    for (stack, translated) in [
        ("usb3-uas-ssd", true),
        ("sata-ahci-ssd", true),
        ("usb3-bot-ssd", false),
    ] {
        let mut sim = new_sim(stack, 1);
        let data = pattern(9, 65536);
        sim.slot_buffer_mut(0)[..65536].copy_from_slice(&data);
        do_io(&mut sim, 0, Op::Write, 1 << 20, 65536).unwrap();
        assert_eq!(do_io(&mut sim, 0, Op::Trim, 1 << 20, 65536), Ok(65536));
        do_io(&mut sim, 0, Op::Read, 1 << 20, 65536).unwrap();
        let report = sim.report();
        if translated {
            assert!(
                sim.slot_buffer(0)[..65536].iter().all(|&b| b == 0),
                "{stack}: trimmed data must read as zeros"
            );
            assert_eq!(report.trims_to_drive, 1);
        } else {
            assert_eq!(
                &sim.slot_buffer(0)[..65536],
                &data[..],
                "{stack}: the drive never saw the TRIM"
            );
            assert_eq!(report.trims_not_translated, 1);
            assert!(report.warnings.iter().any(|w| w.contains("not translated")));
        }
    }
}

#[test]
fn requests_outside_the_device_or_unaligned_fail_with_einval() {
    let mut sim = new_sim("usb3-uas-ssd", 1);
    let capacity = sim.capacity_bytes();
    assert_eq!(
        do_io(&mut sim, 0, Op::Read, capacity, 4096),
        Err(ERRNO_EINVAL)
    );
    assert_eq!(do_io(&mut sim, 0, Op::Read, 100, 4096), Err(ERRNO_EINVAL));
    assert_eq!(do_io(&mut sim, 0, Op::Read, 0, 0), Err(ERRNO_EINVAL));
    assert!(sim
        .submit(SimRequest {
            slot: 5,
            op: Op::Read,
            offset_bytes: 0,
            len_bytes: 4096
        })
        .is_err());
}

/// The merging Turbo driver (hwfr2013/amd-win7-turbo) answers sequential reads from its own
/// read-ahead and acknowledges sequential writes before sending them gathered: every byte must
/// still be where it was written, whether the driver's buffer or the drive returns it.
#[test]
fn a_driver_that_reads_ahead_and_coalesces_writes_returns_what_was_written() {
    const BLOCK: u32 = 4096;
    const BLOCKS: u64 = 600; // more than one 1 MiB buffer of each
    let mut sim = new_sim("hwfr2013/amd-win7-turbo", 1);
    for i in 0..BLOCKS {
        sim.slot_buffer_mut(0)[..BLOCK as usize].copy_from_slice(&pattern(i, BLOCK as usize));
        assert_eq!(
            do_io(&mut sim, 0, Op::Write, i * u64::from(BLOCK), BLOCK),
            Ok(BLOCK)
        );
    }
    // The last writes are still in the driver's buffer: a read of one sends them first.
    let last = (BLOCKS - 1) * u64::from(BLOCK);
    assert_eq!(do_io(&mut sim, 0, Op::Read, last, BLOCK), Ok(BLOCK));
    assert_eq!(
        &sim.slot_buffer(0)[..BLOCK as usize],
        &pattern(BLOCKS - 1, BLOCK as usize)[..]
    );
    // Sequential reads: most come from the driver's read-ahead.
    for i in 0..BLOCKS {
        sim.slot_buffer_mut(0).fill(0);
        assert_eq!(
            do_io(&mut sim, 0, Op::Read, i * u64::from(BLOCK), BLOCK),
            Ok(BLOCK)
        );
        let expected = if i == 20 { 9999 } else { i };
        assert_eq!(
            &sim.slot_buffer(0)[..BLOCK as usize],
            &pattern(expected, BLOCK as usize)[..],
            "block {i}"
        );
        if i == 10 {
            // Overwrite a block the read-ahead already holds: the next read must see it.
            sim.slot_buffer_mut(0)[..BLOCK as usize]
                .copy_from_slice(&pattern(9999, BLOCK as usize));
            assert_eq!(
                do_io(&mut sim, 0, Op::Write, 20 * u64::from(BLOCK), BLOCK),
                Ok(BLOCK)
            );
        }
    }
    let report = sim.report();
    assert!(report.merged_requests > 0, "writes were coalesced");
    assert!(report.driver_buffer_reads > 0, "reads came from read-ahead");
    // Writes left gathered when the stream stops reach the drive on the driver's timer.
    sim.slot_buffer_mut(0)[..BLOCK as usize].copy_from_slice(&pattern(7777, BLOCK as usize));
    let end = BLOCKS * u64::from(BLOCK);
    do_io(&mut sim, 0, Op::Write, end - u64::from(BLOCK), BLOCK).unwrap();
    do_io(&mut sim, 0, Op::Write, end, BLOCK).unwrap();
    let written_before = sim.report().bytes_written;
    sim.run();
    assert!(
        sim.report().bytes_written > written_before,
        "the timer sent them"
    );
}
