//! USB device reset, bridge reset and disconnect: a hung BOT bridge that ignores the Bulk-Only
//! reset is recovered by the USB device reset; a bridge whose firmware resets itself loses the
//! command and the host's timeout recovers it; a device that drops off the bus is warm-reset
//! and kept when the hub saw only a link failure (SuperSpeed, back before the SS.Inactive
//! termination check), and removed otherwise, failing every I/O from then on with EIO.

use crate::faults::{self, do_io, BLOCK};
use storlab_sim::fault::FaultOutcome;
use storlab_sim::{Op, Simulator, ERRNO_EIO};

const SECOND_NS: u64 = 1_000_000_000;
const MS_NS: u64 = 1_000_000;

fn new_sim(stack: &str, spec: &str) -> Simulator {
    faults::new_sim(stack, Some(spec))
}

fn read_back_is(sim: &mut Simulator, offset: u64, fill: u8) -> bool {
    do_io(sim, Op::Read, offset, 0).0 == Ok(BLOCK)
        && sim.slot_buffer(0)[..BLOCK as usize]
            .iter()
            .all(|&b| b == fill)
}

/// A hung BOT bridge: the timer fires, the Bulk-Only Mass Storage Reset goes unanswered for
/// usb-storage's 5 s, the USB device reset (SuperSpeed hot reset, seen at the hub driver's
/// first poll, 60 ms, then its 50 ms wait and the 10 ms address settle, then five control
/// transfers) restarts the bridge, and the command goes again.
#[test]
fn a_hung_bot_bridge_is_recovered_by_the_usb_device_reset() {
    let mut sim = new_sim("usb3-bot-ssd", "hang@cmd=2,timeout=1s");
    assert_eq!(do_io(&mut sim, Op::Write, 0, 0x5A).0, Ok(BLOCK));
    let (result, latency) = do_io(&mut sim, Op::Read, 0, 0);
    assert_eq!(result, Ok(BLOCK));
    assert!(sim.slot_buffer(0)[..BLOCK as usize]
        .iter()
        .all(|&b| b == 0x5A));
    let c = sim.fault_counts().unwrap();
    assert_eq!(
        (c.injected, c.retried, c.bot_resets, c.device_resets),
        (1, 1, 1, 1),
        "{c:?}"
    );
    let expected = SECOND_NS + 5 * SECOND_NS + 120 * MS_NS;
    assert!(
        (expected..expected + 5 * MS_NS).contains(&latency),
        "{latency} ns, expected {expected}"
    );
    assert_eq!(sim.transport(), storlab_sim::Transport::Bot);
}

/// A bridge whose firmware resets itself with the command: the host's timer fires and the
/// transport's own recovery of a lost command runs (BOT Reset Recovery, UAS ABORT TASK); the
/// command goes again and the data is intact.
#[test]
fn a_bridge_reset_loses_the_command_and_the_timeout_recovers_it() {
    for (stack, recovery_min_ns) in [("usb3-bot-ssd", 10 * MS_NS), ("usb3-uas-ssd", 0)] {
        let mut sim = new_sim(stack, "bridge_reset@cmd=2,timeout=2s,reset_delay=10ms");
        assert_eq!(do_io(&mut sim, Op::Write, 4096, 0x77).0, Ok(BLOCK));
        let (result, latency) = do_io(&mut sim, Op::Read, 4096, 0);
        assert_eq!(result, Ok(BLOCK), "{stack}");
        let c = sim.fault_counts().unwrap();
        assert_eq!(
            (c.injected, c.retried, c.bridge_resets, c.device_resets),
            (1, 1, 1, 0),
            "{stack}: {c:?}"
        );
        let expected = 2 * SECOND_NS + recovery_min_ns;
        assert!(
            (expected..expected + 5 * MS_NS).contains(&latency),
            "{stack}: {latency} ns, expected {expected}"
        );
        assert!(read_back_is(&mut sim, 4096, 0x77), "{stack}");
    }
}

/// A SuperSpeed device off the bus for 5 ms: the link fails Recovery (12 ms) into SS.Inactive,
/// the device's terminations are back before the port's first check (24 ms), so the hub
/// driver, after waiting 100 ms for a disconnect, warm-resets the device and keeps it. The
/// command the device lost is recovered at the host's timer as a drop.
#[test]
fn a_short_superspeed_dropout_is_a_warm_reset_that_keeps_the_device() {
    for stack in ["usb3-uas-ssd", "usb3-bot-ssd"] {
        let mut sim = new_sim(
            stack,
            "disconnect@cmd=2,disconnect_for=5ms,timeout=1s,reset_delay=10ms",
        );
        assert_eq!(do_io(&mut sim, Op::Write, 0, 0x21).0, Ok(BLOCK));
        let (result, latency) = do_io(&mut sim, Op::Read, 0, 0);
        assert_eq!(result, Ok(BLOCK), "{stack}");
        let c = sim.fault_counts().unwrap();
        assert_eq!(
            (c.disconnects, c.devices_removed, c.device_resets, c.retried),
            (1, 0, 1, 1),
            "{stack}: {c:?}"
        );
        assert!(latency >= SECOND_NS, "{stack}: {latency}");
        assert!(read_back_is(&mut sim, 0, 0x21), "{stack}");
        let r = sim.fault_records()[0];
        assert!(matches!(r.outcome, FaultOutcome::Retried { .. }), "{r:?}");
    }
}

/// A device gone for longer than the SS.Inactive check (SuperSpeed), or any dropout at
/// High-Speed (the port sees the disconnect within TDDIS): the hub removes the device; the
/// I/O in flight fails with EIO when the removal is seen, and so does every later one,
/// without a command on the bus.
#[test]
fn a_device_the_hub_sees_gone_is_removed_and_every_io_fails_with_eio() {
    for (stack, dropout, removed_after_ns) in [
        ("usb3-uas-ssd", "30ms", 24 * MS_NS),
        ("usb3-bot-ssd", "1s", 24 * MS_NS),
        ("usb2-uas-ssd", "1ms", 2_500),
        ("usb2-bot-hdd", "1ms", 2_500),
    ] {
        let mut sim = new_sim(stack, &format!("disconnect@cmd=2,disconnect_for={dropout}"));
        assert_eq!(do_io(&mut sim, Op::Write, 0, 0x21).0, Ok(BLOCK), "{stack}");
        let (result, latency) = do_io(&mut sim, Op::Read, 0, 0);
        assert_eq!(result, Err(ERRNO_EIO), "{stack}");
        assert!(
            (removed_after_ns..removed_after_ns + MS_NS).contains(&latency),
            "{stack}: {latency} ns"
        );
        let (later, later_ns) = do_io(&mut sim, Op::Write, 0, 0x22);
        assert_eq!(later, Err(ERRNO_EIO), "{stack}");
        assert!(later_ns < 100_000, "{stack}: {later_ns} ns");
        let c = sim.fault_counts().unwrap();
        assert_eq!(
            (c.injected, c.reported, c.disconnects, c.devices_removed),
            (1, 1, 1, 1),
            "{stack}: {c:?}"
        );
        assert_eq!(c.device_resets, 0, "{stack}");
    }
}

/// Without `disconnect_for` a disconnect is for good: removal.
#[test]
fn a_disconnect_without_a_duration_removes_the_device() {
    let mut sim = new_sim("usb3-uas-ssd", "disconnect@cmd=1");
    assert_eq!(do_io(&mut sim, Op::Read, 0, 0).0, Err(ERRNO_EIO));
    assert_eq!(sim.fault_counts().unwrap().devices_removed, 1);
}
