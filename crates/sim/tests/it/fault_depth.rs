//! Placed device-wide faults at any queue depth (issue 33, item 3): `hang`, `bridge_reset`,
//! `disconnect` and `power_loss`, placed with `@cmd=` or `@t=`, on a UAS, an AHCI (NCQ) and a
//! BOT stack at queue depths 1, 2 and 32. Each fault fires (its counters say so), every request
//! completes exactly once and successfully (the commands in flight with it are recovered as
//! Linux's error handlers recover them), no placed fault is left unfired, and every block reads
//! back what was last written to it, except, after a power loss, the blocks whose acknowledged
//! writes the drive's volatile cache lost, which read what the media held (zeros here), and
//! which a verify pass therefore finds.

use storlab_sim::fault::FaultOutcome;
use storlab_sim::{FaultPlan, Op, SimRequest, Simulator};

const BLOCK: u32 = 4096;
/// Blocks written (each once, spread over 256 MiB), then read back.
const WRITES: u64 = 256;
const STRIDE_BYTES: u64 = 1 << 20;
/// The write the `@cmd=` placements hit (mid-run, after the queue filled).
const PLACED_CMD: u64 = 100;
/// The time the `@t=` placements name: mid-run on every stack below.
const PLACED_T: &str = "3ms";
/// Host parameters that keep the recoveries short in simulated time.
const HOST: &str = "timeout=1s,tm_timeout=100ms,reset_delay=10ms,disconnect_for=5ms";

const STACKS: [&str; 3] = ["usb3-uas-ssd", "sata-ahci-ssd", "usb3-bot-ssd"];
const KINDS: [&str; 4] = ["hang", "bridge_reset", "disconnect", "power_loss"];
const DEPTHS: [u32; 3] = [1, 2, 32];

fn fill(block: u64) -> u8 {
    (block % 251) as u8 + 1
}

/// Run `requests` (op, block) keeping up to `depth` in flight; every slot must complete exactly
/// once per submission. Returns each request's result, with the slot buffer's first byte for
/// reads (a block reads as one byte value throughout, or the check fails).
fn run_at_depth(sim: &mut Simulator, depth: u32, requests: &[(Op, u64)]) -> Vec<(i64, u8)> {
    let mut results = vec![(i64::MIN, 0u8); requests.len()];
    let mut in_slot: Vec<Option<usize>> = vec![None; depth as usize];
    let mut next = 0;
    let mut done = 0;
    while done < requests.len() {
        for slot in 0..depth {
            if in_slot[slot as usize].is_some() || next == requests.len() {
                continue;
            }
            let (op, block) = requests[next];
            if op == Op::Write {
                sim.slot_buffer_mut(slot)[..BLOCK as usize].fill(fill(block));
            }
            sim.submit(SimRequest {
                slot,
                op,
                offset_bytes: block * STRIDE_BYTES,
                len_bytes: BLOCK,
            })
            .unwrap();
            in_slot[slot as usize] = Some(next);
            next += 1;
        }
        sim.run_until_completions(1);
        let c = sim
            .pop_completion()
            .expect("a request in flight never completed");
        let i = in_slot[c.slot as usize]
            .take()
            .expect("a completion for a slot with nothing in flight");
        let buffer = &sim.slot_buffer(c.slot)[..BLOCK as usize];
        let first = buffer[0];
        if requests[i].0 == Op::Read {
            assert!(
                buffer.iter().all(|&b| b == first),
                "block {} read back mixed bytes",
                requests[i].1
            );
        }
        results[i] = (c.result.map_or_else(|e| -i64::from(e), i64::from), first);
        done += 1;
    }
    assert_eq!(sim.completions_ready(), 0, "a request completed twice");
    assert_eq!(sim.requests_in_flight(), 0);
    results
}

/// One cell of the matrix; None when the stack refuses the kind (checked to be refused).
fn run_cell(stack: &str, kind: &str, place: &str, depth: u32) -> Option<String> {
    let spec = format!("{kind}@{place},{HOST}");
    let mut sim = Simulator::from_profiles(&storlab_sim::ProfileSet::embedded(), stack, 5).unwrap();
    sim.setup_slots(depth, 64 << 10).unwrap();
    let cell = format!("{stack} {spec} iodepth={depth}");
    let usb = sim.transport().is_usb();
    let bot = sim.transport() == storlab_sim::Transport::Bot;
    if let Err(e) = sim.set_faults(FaultPlan::parse(&spec).unwrap()) {
        assert!(!usb && kind != "power_loss", "{cell}: refused: {e}");
        assert!(
            e.to_string().contains("does not happen on a"),
            "{cell}: {e}"
        );
        return None;
    }
    assert!(usb || kind == "power_loss", "{cell}: accepted");
    let writes: Vec<(Op, u64)> = (0..WRITES).map(|b| (Op::Write, b)).collect();
    let written = run_at_depth(&mut sim, depth, &writes);
    let reads: Vec<(Op, u64)> = (0..WRITES).map(|b| (Op::Read, b)).collect();
    let read = run_at_depth(&mut sim, depth, &reads);
    for (i, (result, _)) in written.iter().chain(&read).enumerate() {
        assert_eq!(*result, i64::from(BLOCK), "{cell}: request {i} failed");
    }
    assert!(
        sim.unfired_faults().is_empty(),
        "{cell}: {:?}",
        sim.unfired_faults()
    );
    let counts = sim.fault_counts().unwrap();
    // Each command lost with the device is a fault of the same kind: one per command in
    // flight at the fault (and sent before its recovery), all retried.
    assert!(
        counts.injected >= 1 && counts.injected == counts.retried,
        "{cell}: {counts:?}"
    );
    if depth == 1 || !usb || bot {
        assert_eq!(counts.injected, 1, "{cell}: {counts:?}");
    }
    let fired = match kind {
        "hang" => counts.uas_aborts + counts.bot_resets >= 1,
        "bridge_reset" => counts.bridge_resets == 1,
        "disconnect" => counts.disconnects == 1 && counts.devices_removed == 0,
        _ => counts.power_losses == 1,
    };
    assert!(fired, "{cell}: did not fire: {counts:?}");
    for r in sim.fault_records() {
        assert!(
            matches!(r.outcome, FaultOutcome::Retried { .. }),
            "{cell}: {r:?}"
        );
    }
    // Verify: a block reads what was written, unless a power loss put its range back.
    let restored: Vec<(u64, u64)> = sim
        .power_losses()
        .iter()
        .flat_map(|l| l.restored.iter().copied())
        .collect();
    let mut lost = 0;
    for (b, (_, byte)) in read.iter().enumerate() {
        let b = b as u64;
        let offset = b * STRIDE_BYTES;
        let put_back = restored.iter().any(|&(s, e)| s <= offset && offset < e);
        if *byte != fill(b) {
            assert!(put_back && *byte == 0, "{cell}: block {b} reads {byte:#x}");
            lost += 1;
        }
    }
    // A write put back and then sent again (it was in flight at the loss) reads right.
    assert!(lost <= restored.len(), "{cell}");
    Some(format!("{cell}: {lost} lost, {counts:?}"))
}

#[test]
fn placed_device_faults_fire_and_recover_at_every_queue_depth() {
    let mut lost_at_uas_qd32 = None;
    for stack in STACKS {
        for kind in KINDS {
            for place in [format!("cmd={PLACED_CMD}"), format!("t={PLACED_T}")] {
                for depth in DEPTHS {
                    let Some(line) = run_cell(stack, kind, &place, depth) else {
                        continue;
                    };
                    if stack == "usb3-uas-ssd" && kind == "power_loss" && depth == 32 {
                        lost_at_uas_qd32 = Some(line.clone());
                    }
                    eprintln!("{line}");
                }
            }
        }
    }
    let line = lost_at_uas_qd32.expect("ran");
    assert!(
        !line.contains(": 0 lost"),
        "a power loss at QD32 on UAS loses acknowledged writes: {line}"
    );
}

/// The capture of a device-wide fault at queue depth 8: every URB of every command in flight
/// ends exactly once (killed by the recovery, or shut down with a removed device), and the
/// recovery is there, one ABORT TASK per lost command, or the NOT READY statuses of a power
/// loss. High-Speed UAS announces data with Ready IUs, SuperSpeed queues it on streams.
#[test]
fn the_capture_of_a_fault_at_depth_ends_every_urb_once_and_shows_the_recovery() {
    const DEPTH: u32 = 8;
    for stack in ["usb3-uas-ssd", "usb2-uas-ssd"] {
        for (kind, needle, at_least) in [
            ("bridge_reset", "AbortTask", DEPTH as usize),
            ("hang", "AbortTask", DEPTH as usize),
            ("disconnect", "AbortTask", DEPTH as usize),
            ("power_loss", "sense key=NotReady", DEPTH as usize),
        ] {
            let spec = format!("{kind}@cmd=40,{HOST}");
            let mut sim =
                Simulator::from_profiles(&storlab_sim::ProfileSet::embedded(), stack, 5).unwrap();
            sim.setup_slots(DEPTH, 64 << 10).unwrap();
            sim.enable_pcap();
            sim.set_faults(FaultPlan::parse(&spec).unwrap()).unwrap();
            let mixed: Vec<(Op, u64)> = (0..96)
                .map(|b| (if b % 3 == 0 { Op::Read } else { Op::Write }, b))
                .collect();
            let cell = format!("{stack} {spec}");
            eprintln!("{cell}");
            let results = run_at_depth(&mut sim, DEPTH, &mixed);
            // A disconnect at High-Speed removes the device: EIO from then on.
            let removed = sim.fault_counts().unwrap().devices_removed > 0;
            assert!(
                results
                    .iter()
                    .all(|(r, _)| *r == i64::from(BLOCK) || (removed && *r == -5)),
                "{cell}: {results:?}"
            );
            let pcap = sim.take_pcap();
            crate::trace::assert_urbs_pair(&cell, &pcap);
            let text = storlab_wire::decode_pcap(&pcap).unwrap();
            let found = text.matches(needle).count();
            if !removed {
                assert!(found >= at_least, "{cell}: {found} × {needle}");
            }
        }
    }
}
