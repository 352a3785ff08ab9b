//! SATA error recovery on the direct AHCI path, as libata runs it: after a queued command's
//! media error the drive aborts every other queued command and the host reads the NCQ Command
//! Error log (READ LOG EXT 10h) before it sends them again; a command the drive lost costs the
//! host's timeout, a hardreset (COMRESET) and revalidation, then succeeds. In IDE mode only the
//! one command fails.

use storlab_sim::drive::DriveCommand;
use storlab_sim::fault::FaultOutcome;
use storlab_sim::link_sata::{read_ncq_error_log, SataLink};
use storlab_sim::{FaultKind, FaultPlan, Op, ProfileSet, SimRequest, Simulator, ERRNO_ENODATA};

const SLOT_BYTES: usize = 64 << 10;
const BLOCK: u32 = 4096;
const SECOND_NS: u64 = 1_000_000_000;
const MS_NS: u64 = 1_000_000;
/// libata's fixed waits in a hardreset: 1 ms of COMRESET, 200 ms before the debounce and the
/// debounce's 105 ms (`sata_recovery.rs`).
const HARDRESET_WAITS_NS: u64 = 306 * MS_NS;

fn new_sim(stack: &str, slots: u32, spec: Option<&str>) -> Simulator {
    let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), stack, 3).unwrap();
    sim.setup_slots(slots, SLOT_BYTES).unwrap();
    if let Some(spec) = spec {
        sim.set_faults(FaultPlan::parse(spec).unwrap()).unwrap();
    }
    sim
}

/// Write block `i` (at `i` × 64 KiB) with bytes `fill + i`, one at a time.
fn write_blocks(sim: &mut Simulator, blocks: u32, fill: u8) {
    for i in 0..blocks {
        sim.slot_buffer_mut(0)[..BLOCK as usize].fill(fill.wrapping_add(i as u8));
        sim.submit(SimRequest {
            slot: 0,
            op: Op::Write,
            offset_bytes: u64::from(i) * SLOT_BYTES as u64,
            len_bytes: BLOCK,
        })
        .unwrap();
        sim.run_until_completions(1);
        assert_eq!(sim.pop_completion().unwrap().result, Ok(BLOCK));
    }
}

/// Read blocks 0..n at once (slot i reads block i); completions by slot.
fn read_all(sim: &mut Simulator, n: u32) -> Vec<(Result<u32, i32>, u64)> {
    for i in 0..n {
        sim.submit(SimRequest {
            slot: i,
            op: Op::Read,
            offset_bytes: u64::from(i) * SLOT_BYTES as u64,
            len_bytes: BLOCK,
        })
        .unwrap();
    }
    sim.run_until_completions(n as usize);
    let mut done = vec![(Ok(0), 0); n as usize];
    while let Some(c) = sim.pop_completion() {
        done[c.slot as usize] = (c.result, c.done_ns);
    }
    done
}

#[test]
fn an_ncq_media_error_aborts_the_other_queued_reads_which_are_retried_after_the_log_read() {
    const QD: u32 = 4;
    let stack = "sata-ahci-ssd";
    let mut faulty = new_sim(stack, QD, None);
    let mut clean = new_sim(stack, QD, None);
    write_blocks(&mut faulty, QD, 0x40);
    write_blocks(&mut clean, QD, 0x40);
    // Then block 1 (sectors 128..136) gets a bad sector (a write would heal it).
    faulty
        .set_faults(FaultPlan::parse("media_error@lba=130").unwrap())
        .unwrap();
    let start = faulty.now_ns();
    assert_eq!(start, clean.now_ns());
    let got = read_all(&mut faulty, QD);
    let want = read_all(&mut clean, QD);
    assert_eq!(got[1].0, Err(ERRNO_ENODATA));
    for i in [0, 2, 3] {
        assert_eq!(got[i].0, Ok(BLOCK), "block {i}");
        assert!(
            faulty.slot_buffer(i as u32)[..BLOCK as usize]
                .iter()
                .all(|&b| b == 0x40 + i as u8),
            "block {i} read back other data"
        );
    }
    let counts = faulty.fault_counts().unwrap();
    assert_eq!(counts.read_log_exts, 1, "{counts:?}");
    assert_eq!((counts.injected, counts.reported), (1, 1), "{counts:?}");
    // Block 0 had completed when block 1 failed; blocks 2 and 3 were at the drive: aborted
    // and sent again.
    assert_eq!(counts.sata_aborted, 2, "{counts:?}");
    assert_eq!(counts.retried, 0, "aborted reads do not count as retries");
    // The failed read's status came after the READ LOG EXT exchange on the link.
    let spec = ProfileSet::embedded().resolve(stack).unwrap();
    let link = SataLink::new(&spec.sata_link);
    let failed = DriveCommand {
        write: false,
        lba: 128,
        blocks: 8,
    };
    let (log, log_ns) = read_ncq_error_log(&link, 0, &failed);
    assert_eq!((log.lba, log.count), (128, 8));
    assert!(got[1].1 - start >= log_ns, "{} ns", got[1].1 - start);
    // The aborted reads finished later than without the fault (the drive did their work twice).
    let last = |v: &[(Result<u32, i32>, u64)]| v.iter().map(|d| d.1).max().unwrap();
    assert!(
        last(&got) > last(&want) + log_ns,
        "with the error {} ns, without {} ns",
        last(&got) - start,
        last(&want) - start
    );
    assert!(matches!(
        faulty.fault_records(),
        [r] if r.kind == FaultKind::MediaError
            && matches!(r.outcome, FaultOutcome::Reported { errno: ERRNO_ENODATA, .. })
    ));
}

#[test]
fn in_ide_mode_a_media_error_fails_only_its_command() {
    let mut sim = new_sim("sata-ide-ssd", 4, None);
    write_blocks(&mut sim, 4, 0x10);
    sim.set_faults(FaultPlan::parse("media_error@lba=130").unwrap())
        .unwrap();
    let got = read_all(&mut sim, 4);
    assert_eq!(got[1].0, Err(ERRNO_ENODATA));
    assert!([0, 2, 3].iter().all(|&i| got[i].0 == Ok(BLOCK)));
    let counts = sim.fault_counts().unwrap();
    assert_eq!(
        (counts.read_log_exts, counts.sata_aborted, counts.comresets),
        (0, 0, 0),
        "{counts:?}"
    );
}

#[test]
fn a_command_the_drive_lost_costs_the_timeout_a_comreset_and_revalidation_then_succeeds() {
    for stack in ["sata-ahci-hdd", "sata-ahci-ssd", "sata-ide-ssd"] {
        let mut sim = new_sim(stack, 1, Some("drop@cmd=2,timeout=30s"));
        write_blocks(&mut sim, 1, 0x11);
        let start = sim.now_ns();
        write_blocks(&mut sim, 1, 0x22);
        let took_ns = sim.now_ns() - start;
        // The timer, libata's 306 ms of waits, a few FIS exchanges and the write itself.
        assert!(
            (30 * SECOND_NS + HARDRESET_WAITS_NS..30 * SECOND_NS + 400 * MS_NS).contains(&took_ns),
            "{stack}: {took_ns} ns"
        );
        let counts = sim.fault_counts().unwrap();
        assert_eq!(
            (counts.comresets, counts.retried, counts.injected),
            (1, 1, 1),
            "{stack}: {counts:?}"
        );
        assert!(matches!(
            sim.fault_records(),
            [r] if r.kind == FaultKind::Drop && matches!(r.outcome, FaultOutcome::Retried { .. })
        ));
        let got = read_all(&mut sim, 1);
        assert_eq!(got[0].0, Ok(BLOCK), "{stack}");
        assert!(sim.slot_buffer(0)[..BLOCK as usize]
            .iter()
            .all(|&b| b == 0x22));
    }
}

#[test]
fn a_reset_aborts_the_other_queued_commands_and_every_one_completes_once_with_its_data() {
    const QD: u32 = 8;
    let mut sim = new_sim("sata-ahci-ssd", QD, Some("drop@cmd=12,timeout=2s"));
    write_blocks(&mut sim, QD, 0x60);
    let start = sim.now_ns();
    let got = read_all(&mut sim, QD);
    for (i, (result, done_ns)) in got.iter().enumerate() {
        assert_eq!(*result, Ok(BLOCK), "slot {i}");
        assert!(
            sim.slot_buffer(i as u32)[..BLOCK as usize]
                .iter()
                .all(|&b| b == 0x60 + i as u8),
            "slot {i} read other data"
        );
        assert!(*done_ns > start);
    }
    let counts = sim.fault_counts().unwrap();
    assert_eq!((counts.comresets, counts.retried), (1, 1), "{counts:?}");
    // The lost read (the 4th of the 8) waited the 2 s timer and the reset.
    let last = got.iter().map(|d| d.1).max().unwrap() - start;
    assert!(last > 2 * SECOND_NS + HARDRESET_WAITS_NS, "{last} ns");
    assert_eq!(sim.requests_in_flight(), 0);
}
