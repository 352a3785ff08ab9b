//! Power loss of the drive (`power_loss` faults): exactly the acknowledged writes the drive's
//! volatile cache still held read back as they were before; writes on the media (write cache
//! off, or flushed) survive; the drive answers NOT READY while it spins up and UNIT ATTENTION
//! once after (USB bridges), or the SATA link stays down until it is ready; the I/O caught by
//! the loss completes once the drive is ready, not counted against its retries.

use storlab_sim::fault::FaultOutcome;
use storlab_sim::{FaultKind, FaultPlan, Op, ProfileSet, SimRequest, Simulator};

const SLOT_BYTES: usize = 64 << 10;
const BLOCK: u32 = 4096;
/// Writes before the loss; each to its own block, spread over 64 MiB.
const WRITES: u64 = 48;
const STRIDE_BYTES: u64 = 1 << 20;

fn profiles(stack: &str, drive_overrides: &str) -> ProfileSet {
    let mut profiles = ProfileSet::embedded();
    if drive_overrides.is_empty() {
        return profiles;
    }
    let path = format!("profiles/stacks/{stack}.toml");
    let text = std::fs::read_to_string(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR")))
        .expect("shipped stack");
    profiles
        .insert_text(
            "stacks",
            stack,
            &format!("user/stacks/{stack}.toml"),
            &format!("{text}\n[overrides.drive]\n{drive_overrides}\n"),
        )
        .unwrap();
    profiles
}

fn new_sim(stack: &str, drive_overrides: &str, spec: &str) -> Simulator {
    let mut sim = Simulator::from_profiles(&profiles(stack, drive_overrides), stack, 3).unwrap();
    sim.setup_slots(4, SLOT_BYTES).unwrap();
    sim.set_faults(FaultPlan::parse(spec).unwrap()).unwrap();
    sim
}

fn io(sim: &mut Simulator, op: Op, offset: u64, fill: u8) -> (Result<u32, i32>, u64) {
    let len = if op == Op::Flush { 0 } else { BLOCK };
    if op == Op::Write {
        sim.slot_buffer_mut(0)[..BLOCK as usize].fill(fill);
    }
    let start = sim.now_ns();
    sim.submit(SimRequest {
        slot: 0,
        op,
        offset_bytes: offset,
        len_bytes: len,
    })
    .unwrap();
    sim.run_until_completions(1);
    let c = sim.pop_completion().unwrap();
    (c.result, c.done_ns - start)
}

/// Write `WRITES` blocks at QD1 (fill k + 1), optionally flush, then read block 0 as the
/// command the power loss catches (`power_loss@cmd=N` names it). Returns the sim, the read's
/// latency, and which blocks read back old (zeros).
fn write_then_lose_power(
    stack: &str,
    drive_overrides: &str,
    flush: bool,
) -> (Simulator, u64, Vec<u64>) {
    let loss_at = WRITES + 1 + u64::from(flush);
    let mut sim = new_sim(stack, drive_overrides, &format!("power_loss@cmd={loss_at}"));
    for k in 0..WRITES {
        let (result, _) = io(&mut sim, Op::Write, k * STRIDE_BYTES, k as u8 + 1);
        assert_eq!(result, Ok(BLOCK), "{stack}: write {k}");
    }
    if flush {
        assert_eq!(io(&mut sim, Op::Flush, 0, 0).0, Ok(0), "{stack}: flush");
    }
    let (result, latency) = io(&mut sim, Op::Read, 0, 0);
    assert_eq!(result, Ok(BLOCK), "{stack}: the read caught by the loss");
    let got = &sim.slot_buffer(0)[..BLOCK as usize];
    let lost_first = sim.power_losses()[0]
        .restored
        .iter()
        .any(|&(s, _)| s < u64::from(BLOCK));
    assert!(
        got.iter().all(|&b| b == 1) || (lost_first && got.iter().all(|&b| b == 0)),
        "{stack}: the caught read returned other data than block 0 holds"
    );
    assert_eq!(sim.power_losses().len(), 1, "{stack}");
    let mut old = Vec::new();
    for k in 0..WRITES {
        assert_eq!(io(&mut sim, Op::Read, k * STRIDE_BYTES, 0).0, Ok(BLOCK));
        let got = &sim.slot_buffer(0)[..BLOCK as usize];
        if got.iter().all(|&b| b == 0) {
            old.push(k);
        } else {
            assert!(
                got.iter().all(|&b| b == k as u8 + 1),
                "{stack}: block {k} holds neither its write nor what was there before"
            );
        }
    }
    (sim, latency, old)
}

/// The blocks (of the test's layout) the loss's restored ranges cover.
fn restored_blocks(sim: &Simulator) -> Vec<u64> {
    let mut blocks: Vec<u64> = sim.power_losses()[0]
        .restored
        .iter()
        .flat_map(|&(s, e)| (s / STRIDE_BYTES)..=((e - 1) / STRIDE_BYTES))
        .collect();
    blocks.sort_unstable();
    blocks.dedup();
    blocks
}

#[test]
fn a_power_loss_loses_exactly_the_cached_writes_and_the_host_recovers_after_spin_up() {
    for (stack, spin_up_ns, usb) in [
        ("sata-ahci-hdd", 10_000_000_000, false),
        ("usb2-bot-hdd", 10_000_000_000, true),
        ("usb3-uas-ssd", 500_000_000, true),
        ("usb3-bot-ssd", 500_000_000, true),
    ] {
        let (sim, latency, old) = write_then_lose_power(stack, "", false);
        eprintln!(
            "{stack}: {} of {WRITES} acknowledged writes lost, caught read {:.3} s, {:?}",
            old.len(),
            latency as f64 / 1e9,
            sim.fault_counts().unwrap()
        );
        // What reads back old is what the store put back, and nothing else.
        assert_eq!(old, restored_blocks(&sim), "{stack}");
        let counts = sim.fault_counts().unwrap();
        assert_eq!(counts.power_losses, 1, "{stack}");
        assert_eq!(counts.lost_writes, old.len() as u64, "{stack}");
        if stack.contains("hdd") {
            // A 7200 rpm disk destages a random write in milliseconds; the host sends the
            // next one from the cache in well under one: most are still cached.
            assert!(old.len() > WRITES as usize / 2, "{stack}: {old:?}");
        }
        // The caught read waited for the spin-up; over USB it saw NOT READY until then
        // (retried every few ms) and one UNIT ATTENTION after.
        assert!(latency >= spin_up_ns, "{stack}: {latency} ns");
        assert!(latency < spin_up_ns + 100_000_000, "{stack}: {latency} ns");
        if usb {
            assert!(counts.not_ready >= 1, "{stack}");
            assert_eq!(counts.unit_attentions, 1, "{stack}");
        } else {
            assert_eq!(
                (counts.not_ready, counts.unit_attentions),
                (1, 0),
                "{stack}"
            );
        }
        let records = sim.fault_records();
        assert_eq!(records.len(), 1, "{stack}");
        assert_eq!(records[0].kind, FaultKind::PowerLoss);
        assert!(matches!(records[0].outcome, FaultOutcome::Retried { .. }));
        assert_eq!((counts.injected, counts.retried), (1, 1), "{stack}");
    }
}

#[test]
fn writes_on_the_media_survive_a_power_loss() {
    // Write cache off: every write completes on the media.
    let (sim, _, old) = write_then_lose_power("sata-ahci-hdd", "write_cache = false", false);
    assert!(old.is_empty(), "{old:?}");
    assert!(sim.power_losses()[0].restored.is_empty());
    // A cache flush before the loss: what it wrote is on the media.
    for stack in ["sata-ahci-hdd", "usb3-uas-ssd"] {
        let (sim, _, old) = write_then_lose_power(stack, "", true);
        assert!(old.is_empty(), "{stack}: {old:?}");
        assert_eq!(sim.fault_counts().unwrap().lost_writes, 0, "{stack}");
    }
}

#[test]
fn power_loss_is_placed_and_needs_no_transport_of_its_own() {
    let e = FaultPlan::parse("power_loss=0.01").unwrap_err();
    assert!(e.contains("power_loss is placed"), "{e}");
    let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), "sata-ahci-ssd", 1).unwrap();
    sim.set_faults(FaultPlan::parse("power_loss@t=1s").unwrap())
        .unwrap();
}
