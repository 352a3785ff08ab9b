//! Injected faults and the host's recovery, per transport: a media error fails the read with
//! ENODATA after the transport's way of learning why (BOT REQUEST SENSE, the UAS Sense IU,
//! SATA's status FIS and READ LOG EXT 10h); a dropped command is retried after the host's
//! timeout and the transport's recovery (BOT Reset Recovery, UAS ABORT TASK); a BOT phase
//! error runs Reset Recovery and retries; CRC errors cost link time, never data.

use storlab_sim::fault::{FaultOutcome, FaultRecord};
use storlab_sim::{
    FaultKind, FaultPlan, Op, ProfileSet, SimRequest, Simulator, ERRNO_EIO, ERRNO_ENODATA,
};

const SLOT_BYTES: usize = 64 << 10;
pub(crate) const BLOCK: u32 = 4096;
const SECOND_NS: u64 = 1_000_000_000;

pub(crate) fn new_sim(stack: &str, spec: Option<&str>) -> Simulator {
    let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), stack, 3).unwrap();
    sim.setup_slots(4, SLOT_BYTES).unwrap();
    if let Some(spec) = spec {
        sim.set_faults(FaultPlan::parse(spec).unwrap()).unwrap();
    }
    sim
}

/// One `BLOCK` at `offset` (a write fills it with `fill`): its result and latency.
pub(crate) fn do_io(sim: &mut Simulator, op: Op, offset: u64, fill: u8) -> (Result<u32, i32>, u64) {
    if op == Op::Write {
        sim.slot_buffer_mut(0)[..BLOCK as usize].fill(fill);
    }
    let start = sim.now_ns();
    sim.submit(SimRequest {
        slot: 0,
        op,
        offset_bytes: offset,
        len_bytes: BLOCK,
    })
    .unwrap();
    sim.run_until_completions(1);
    let c = sim.pop_completion().unwrap();
    (c.result, c.done_ns - start)
}

fn outcomes(sim: &Simulator) -> Vec<(FaultKind, FaultOutcome)> {
    sim.fault_records()
        .iter()
        .map(|r: &FaultRecord| (r.kind, r.outcome))
        .collect()
}

#[test]
fn a_media_error_fails_the_read_with_enodata_on_every_transport_and_a_write_heals_it() {
    for stack in [
        "usb3-bot-ssd",
        "usb3-uas-ssd",
        "sata-ahci-ssd",
        "sata-ide-ssd",
    ] {
        let mut sim = new_sim(stack, Some("media_error@lba=80"));
        // LBA 80 is in the 4 KiB block at byte 40960 (sectors 80..88).
        assert_eq!(do_io(&mut sim, Op::Read, 0, 0).0, Ok(BLOCK), "{stack}");
        assert_eq!(
            do_io(&mut sim, Op::Read, 40960, 0).0,
            Err(ERRNO_ENODATA),
            "{stack}"
        );
        let counts = sim.fault_counts().unwrap();
        assert_eq!((counts.injected, counts.reported), (1, 1), "{stack}");
        match stack {
            "usb3-bot-ssd" => assert_eq!(counts.request_senses, 1),
            "sata-ahci-ssd" => assert_eq!(counts.read_log_exts, 1, "NCQ error recovery"),
            _ => {}
        }
        // A written pending sector is reallocated: it reads again.
        assert_eq!(
            do_io(&mut sim, Op::Write, 40960, 0x5A).0,
            Ok(BLOCK),
            "{stack}"
        );
        assert_eq!(do_io(&mut sim, Op::Read, 40960, 0).0, Ok(BLOCK), "{stack}");
        assert!(sim.slot_buffer(0)[..BLOCK as usize]
            .iter()
            .all(|b| *b == 0x5A));
        assert!(matches!(
            outcomes(&sim)[..],
            [(
                FaultKind::MediaError,
                FaultOutcome::Reported {
                    errno: ERRNO_ENODATA,
                    ..
                }
            )]
        ));
    }
}

#[test]
fn bot_request_sense_costs_a_command_round_trip_uas_carries_sense_in_its_status() {
    let failed_read_ns = |stack: &str| {
        let mut sim = new_sim(stack, Some("media_error@lba=0"));
        do_io(&mut sim, Op::Read, 0, 0).1
    };
    let good_read_ns = |stack: &str| {
        let mut sim = new_sim(stack, None);
        do_io(&mut sim, Op::Read, 0, 0).1
    };
    // BOT: STALL, CLEAR_FEATURE, CSW, then a whole REQUEST SENSE command: more than the read.
    let bot = failed_read_ns("usb3-bot-ssd");
    assert!(bot > good_read_ns("usb3-bot-ssd"), "{bot}");
    // UAS: the Sense IU is the status; no data phase, no extra command.
    let uas = failed_read_ns("usb3-uas-ssd");
    assert!(uas < bot, "UAS {uas} ns, BOT {bot} ns");
}

#[test]
fn a_dropped_uas_command_is_aborted_after_the_timeout_and_retried() {
    let mut sim = new_sim("usb3-uas-ssd", Some("drop@cmd=2,timeout=30s"));
    assert_eq!(do_io(&mut sim, Op::Write, 0, 0x11).0, Ok(BLOCK));
    let (result, took_ns) = do_io(&mut sim, Op::Write, 0, 0x22);
    assert_eq!(result, Ok(BLOCK));
    assert!(
        (30 * SECOND_NS..31 * SECOND_NS).contains(&took_ns),
        "{took_ns}"
    );
    let counts = sim.fault_counts().unwrap();
    assert_eq!((counts.uas_aborts, counts.retried), (1, 1));
    assert!(matches!(
        outcomes(&sim)[..],
        [(FaultKind::Drop, FaultOutcome::Retried { .. })]
    ));
    assert_eq!(do_io(&mut sim, Op::Read, 0, 0).0, Ok(BLOCK));
    assert!(sim.slot_buffer(0)[..BLOCK as usize]
        .iter()
        .all(|b| *b == 0x22));
}

#[test]
fn a_dropped_bot_command_costs_the_timeout_and_reset_recovery_with_linux_s_six_seconds() {
    let mut sim = new_sim("usb3-bot-ssd", Some("drop@cmd=1"));
    let (result, took_ns) = do_io(&mut sim, Op::Read, 0, 0);
    assert_eq!(result, Ok(BLOCK));
    // 30 s SCSI timeout + 6 s usb_stor_reset_common wait + the retry.
    assert!(
        (36 * SECOND_NS..37 * SECOND_NS).contains(&took_ns),
        "{took_ns}"
    );
    assert_eq!(sim.fault_counts().unwrap().bot_resets, 1);
}

#[test]
fn a_bot_phase_error_runs_reset_recovery_and_retries() {
    let mut sim = new_sim("usb3-bot-ssd", Some("phase_error@cmd=1,reset_delay=0s"));
    assert_eq!(do_io(&mut sim, Op::Write, 8192, 0x33).0, Ok(BLOCK));
    let counts = sim.fault_counts().unwrap();
    assert_eq!((counts.bot_resets, counts.retried), (1, 1));
    assert_eq!(do_io(&mut sim, Op::Read, 8192, 0).0, Ok(BLOCK));
    assert!(sim.slot_buffer(0)[..BLOCK as usize]
        .iter()
        .all(|b| *b == 0x33));
}

#[test]
fn a_command_that_keeps_failing_is_reported_as_eio_after_the_retries() {
    let mut sim = new_sim(
        "usb3-bot-ssd",
        Some("phase_error=1,retries=2,reset_delay=0s"),
    );
    assert_eq!(do_io(&mut sim, Op::Read, 0, 0).0, Err(ERRNO_EIO));
    let counts = sim.fault_counts().unwrap();
    assert_eq!(
        (counts.injected, counts.retried, counts.reported),
        (3, 2, 1)
    );
    assert!(sim
        .fault_records()
        .iter()
        .all(|r| r.outcome != FaultOutcome::Pending));
}

#[test]
fn crc_errors_cost_link_time_not_data() {
    let run = |spec: Option<&str>| {
        let mut sim = new_sim("usb3-uas-ssd", spec);
        let mut total_ns = 0;
        for i in 0..64u64 {
            let (r, ns) = do_io(&mut sim, Op::Write, i * u64::from(BLOCK), i as u8);
            assert_eq!(r, Ok(BLOCK));
            total_ns += ns;
        }
        for i in 0..64u64 {
            let (r, ns) = do_io(&mut sim, Op::Read, i * u64::from(BLOCK), 0);
            assert_eq!(r, Ok(BLOCK));
            assert!(sim.slot_buffer(0)[..BLOCK as usize]
                .iter()
                .all(|b| *b == i as u8));
            total_ns += ns;
        }
        (
            total_ns,
            sim.fault_counts().map_or(0, |c| c.usb_crc_retries),
        )
    };
    let (clean_ns, _) = run(None);
    let (noisy_ns, retries) = run(Some("seed=5,usb_crc=0.05"));
    // 128 transfers of 4 packets at 5%: about 26 retries.
    assert!((10..=50).contains(&retries), "{retries}");
    assert!(noisy_ns > clean_ns, "{noisy_ns} vs {clean_ns}");
}

#[test]
fn a_plan_for_a_fault_the_stack_cannot_have_is_refused_in_one_line() {
    let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), "sata-ahci-ssd", 3).unwrap();
    let e = sim
        .set_faults(FaultPlan::parse("usb_crc=1e-4").unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("usb_crc does not happen on a sata-ncq stack"),
        "{e}"
    );
    let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), "usb3-uas-ssd", 3).unwrap();
    let e = sim
        .set_faults(FaultPlan::parse("phase_error@cmd=3").unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("phase_error does not happen on a uas-streams stack"),
        "{e}"
    );
    assert!(!e.contains('\n'));
    for kind in ["hang", "bridge_reset", "disconnect"] {
        let mut sim =
            Simulator::from_profiles(&ProfileSet::embedded(), "sata-ahci-ssd", 3).unwrap();
        let e = sim
            .set_faults(FaultPlan::parse(&format!("{kind}@cmd=3")).unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("{kind} does not happen on a sata-ncq stack")),
            "{e}"
        );
    }
}

#[test]
fn the_same_plan_and_seed_replay_the_same_run() {
    let run = || {
        let mut sim = new_sim(
            "usb2-uas-ssd",
            Some("seed=9,usb_crc=0.01,drop=0.02,timeout=1s"),
        );
        let mut log = Vec::new();
        for i in 0..200u64 {
            let op = if i % 3 == 0 { Op::Write } else { Op::Read };
            log.push(do_io(
                &mut sim,
                op,
                (i * 7919 % 512) * u64::from(BLOCK),
                i as u8,
            ));
        }
        (log, sim.fault_records().to_vec())
    };
    let (a, b) = (run(), run());
    assert_eq!(a, b);
    assert!(!a.1.is_empty(), "the plan injected nothing");
}

/// A user profile set with `usb3-uas-ssd` given a `faults` line.
fn profiles_with_stack_faults(faults: &str) -> ProfileSet {
    let mut profiles = ProfileSet::embedded();
    let stack = include_str!("../../../../profiles/stacks/usb3-uas-ssd.toml");
    profiles
        .insert_text(
            "stacks",
            "usb3-uas-ssd",
            "user/stacks/usb3-uas-ssd.toml",
            &format!("{stack}faults = \"{faults}\"\n"),
        )
        .unwrap();
    profiles
}

#[test]
fn a_stack_files_fault_plan_applies_to_every_run_and_a_plan_set_later_replaces_it() {
    let profiles = profiles_with_stack_faults("seed=1,media_error@lba=8");
    let mut sim = Simulator::from_profiles(&profiles, "usb3-uas-ssd", 3).unwrap();
    sim.setup_slots(4, SLOT_BYTES).unwrap();
    assert_eq!(do_io(&mut sim, Op::Read, 4096, 0).0, Err(ERRNO_ENODATA));
    assert_eq!(do_io(&mut sim, Op::Read, 0, 0).0, Ok(BLOCK));

    // `--faults` (set_faults) replaces the stack's plan: LBA 8 reads again.
    let mut sim = Simulator::from_profiles(&profiles, "usb3-uas-ssd", 3).unwrap();
    sim.setup_slots(4, SLOT_BYTES).unwrap();
    sim.set_faults(FaultPlan::parse("seed=1").unwrap()).unwrap();
    assert_eq!(do_io(&mut sim, Op::Read, 4096, 0).0, Ok(BLOCK));
}

#[test]
fn a_stack_files_bad_fault_plan_is_refused_naming_the_file_and_key() {
    let profiles = profiles_with_stack_faults("drop=2");
    let error = profiles.resolve("usb3-uas-ssd").unwrap_err().to_string();
    assert!(
        error.starts_with("user/stacks/usb3-uas-ssd.toml: faults: ") && error.contains("drop=2"),
        "{error}"
    );
    // A plan its transport cannot have is refused when the simulator is built, in one line.
    let profiles = profiles_with_stack_faults("phase_error=0.1");
    let error = Simulator::from_profiles(&profiles, "usb3-uas-ssd", 3)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        error.contains("stack `usb3-uas-ssd`: faults:") && error.contains("phase_error"),
        "{error}"
    );
    assert!(!error.contains('\n'));
}

/// A hung UAS bridge: ABORT TASK goes unanswered (the host waits `tm_timeout`), then the host
/// escalates to LOGICAL UNIT RESET, I_T NEXUS RESET and the USB device reset; the bridge
/// recovers at the plan's step and the command is sent again, or, answering none, the host
/// re-enumerates the device as BOT and it runs as BOT from then on, with its data intact.
#[test]
fn a_hung_uas_bridge_escalates_lu_reset_then_it_nexus_reset_then_device_reset_then_bot() {
    let base = "hang@cmd=2,timeout=1s,tm_timeout=3s,reset_delay=10ms";
    // A SuperSpeed hot reset is done at the hub driver's first poll (60 ms), then it waits
    // 50 ms and the address settles 10 ms before the first request.
    let device_reset_min_ns = 120_000_000;
    let mut times = Vec::new();
    for (step, lu, itn, device_resets, fallbacks) in [
        ("lu_reset", 1, 0, 0, 0),
        ("it_nexus_reset", 1, 1, 0, 0),
        ("device_reset", 1, 1, 1, 0),
        ("none", 1, 1, 1, 1),
    ] {
        let mut sim = new_sim(
            "usb3-uas-ssd",
            Some(&format!("{base},hang_recovery={step}")),
        );
        assert_eq!(
            do_io(&mut sim, Op::Write, 8192, 0x3C).0,
            Ok(BLOCK),
            "{step}"
        );
        let (result, latency) = do_io(&mut sim, Op::Read, 8192, 0);
        assert_eq!(result, Ok(BLOCK), "{step}");
        assert!(sim.slot_buffer(0)[..BLOCK as usize]
            .iter()
            .all(|&b| b == 0x3C));
        let c = sim.fault_counts().unwrap();
        assert_eq!(
            (c.injected, c.retried, c.uas_aborts, c.uas_lu_resets),
            (1, 1, 1, lu),
            "{step}: {c:?}"
        );
        assert_eq!(
            (c.uas_it_nexus_resets, c.device_resets, c.uas_bot_fallbacks),
            (itn, device_resets, fallbacks),
            "{step}"
        );
        assert_eq!(outcomes(&sim)[0].0, FaultKind::Hang);
        // The timer, then 3 s per unanswered task management function, then the reset.
        let unanswered = 1 + lu + itn - (1 - device_resets);
        let expected = SECOND_NS + unanswered * 3 * SECOND_NS + device_resets * device_reset_min_ns;
        assert!(
            latency >= expected && latency < expected + SECOND_NS / 10,
            "{step}: {latency} ns, expected {expected}"
        );
        times.push(latency);
        if fallbacks == 1 {
            assert_eq!(sim.transport(), storlab_sim::Transport::Bot);
            assert!(sim.fallback().unwrap().contains("gave up on UAS"));
            // BOT from now on: the next commands work, one at a time.
            assert_eq!(sim.max_outstanding_commands(), 1);
            assert_eq!(do_io(&mut sim, Op::Write, 0, 0x11).0, Ok(BLOCK));
            assert_eq!(do_io(&mut sim, Op::Read, 8192, 0).0, Ok(BLOCK));
            assert!(sim.slot_buffer(0)[..BLOCK as usize]
                .iter()
                .all(|&b| b == 0x3C));
        } else {
            assert!(matches!(
                sim.transport(),
                storlab_sim::Transport::Uas { .. }
            ));
        }
    }
    assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
}
