//! `storlab run --faults` with device-wide faults at any queue depth (issue 33, item 3), as a
//! user runs it: `hang`, `bridge_reset`, `disconnect` and `power_loss` placed with `@cmd=` or
//! `@t=` fire on UAS, AHCI and BOT stacks at iodepth 1, 2 and 32 (the JSON's fault counters say
//! so), the run's writes and verify pass after the recovery, and a power loss's lost writes are
//! found by verify (exit 1). A kind the stack cannot take, a duplicated key and a sector past
//! the drive are refused before the run in one line (exit 2); a placed fault the run never
//! reached is a warning in every output and fails the run (exit 1).

use crate::common::{run_in, stderr, stdout};

/// 256 random 4 KiB writes, then fio's verify pass over them.
fn job(stack: &str, depth: u32, faults: &str) -> Vec<String> {
    [
        "run",
        "--no-db",
        "--output-format=json",
        &format!("--target=sim:{stack}"),
        "--name=j",
        "--rw=randwrite",
        "--bs=4k",
        "--size=1m",
        &format!("--iodepth={depth}"),
        "--verify=crc32c",
        &format!("--faults={faults}"),
    ]
    .map(String::from)
    .to_vec()
}

/// Host parameters that keep the recoveries short in simulated time.
const HOST: &str = "timeout=1s,tm_timeout=100ms,reset_delay=10ms,disconnect_for=5ms";

/// A counter the job did not record counts 0.
fn detail(doc: &serde_json::Value, key: &str) -> u64 {
    crate::common::engine_detail(doc, key).unwrap_or(0)
}

#[test]
fn placed_device_faults_fire_at_every_queue_depth_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    for stack in ["usb3-uas-ssd", "sata-ahci-ssd", "usb3-bot-ssd"] {
        for kind in ["hang", "bridge_reset", "disconnect", "power_loss"] {
            for place in ["cmd=100", "t=3ms"] {
                for depth in [1, 2, 32] {
                    let faults = format!("{kind}@{place},{HOST}");
                    let args = job(stack, depth, &faults);
                    let cell = format!("storlab {}", args.join(" "));
                    let out = run_in(dir.path(), &args);
                    let err = stderr(&out);
                    let usb = stack != "sata-ahci-ssd";
                    if !usb && kind != "power_loss" {
                        assert_eq!(out.status.code(), Some(2), "{cell}: {err}");
                        assert_eq!(err.trim().lines().count(), 1, "{cell}: {err}");
                        assert!(err.contains("does not happen on a"), "{cell}: {err}");
                        continue;
                    }
                    assert!(!err.contains("never fired"), "{cell}: {err}");
                    let doc: serde_json::Value = serde_json::from_str(&stdout(&out))
                        .unwrap_or_else(|e| panic!("{cell}: {e}: {err}"));
                    let counter = match kind {
                        "hang" => "sim.faults.device_resets",
                        "bridge_reset" => "sim.faults.bridge_resets",
                        "disconnect" => "sim.faults.disconnects",
                        _ => "sim.faults.power_losses",
                    };
                    assert!(detail(&doc, counter) >= 1, "{cell}: {counter} is 0");
                    if kind == "power_loss" {
                        // The SSDs' write buffers held acknowledged writes: verify finds them.
                        assert!(detail(&doc, "sim.faults.lost_writes") > 0, "{cell}");
                        assert_eq!(out.status.code(), Some(1), "{cell}: {err}");
                        assert!(err.contains("verify failed"), "{cell}: {err}");
                    } else {
                        assert!(out.status.success(), "{cell}: {err}");
                    }
                }
            }
        }
    }
}

#[test]
fn a_placed_fault_the_run_never_reaches_is_reported_and_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let args = job("usb3-uas-ssd", 4, "hang@cmd=100000,power_loss@t=3600s");
    let out = run_in(dir.path(), &args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for fault in ["hang@cmd=100000", "power_loss@t=3600s"] {
        assert!(
            err.contains(&format!(
                "warning: placed fault sim:usb3-uas-ssd: `{fault}` never fired"
            )),
            "{err}"
        );
    }
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("results written");
    let text = doc.to_string();
    assert!(
        text.contains("never fired"),
        "no warning in the JSON: {text}"
    );
    assert!(text.contains("hang@cmd=100000"), "{text}");
    assert_eq!(doc["jobs"].as_array().map(Vec::len), Some(1), "{text}");
}

#[test]
fn impossible_fault_plans_are_refused_before_the_run_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for (faults, needle) in [
        ("seed=1,seed=2", "`seed` is given twice"),
        ("hang@cmd=5,hang@cmd=5", "`hang@cmd=5` is given twice"),
        ("media_error@lba=1000000000000", "outside every region"),
        (
            "hang@cmd=10000000",
            "can never fire: the jobs on sim:usb3-uas-ssd send at most",
        ),
    ] {
        let args = job("usb3-uas-ssd", 1, faults);
        let out = run_in(dir.path(), &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{faults}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{faults}: {err}");
        assert!(err.contains(needle), "{faults}: {err}");
        assert!(stdout(&out).trim().is_empty(), "{faults}: wrote results");
    }
}

/// A power loss under two clones sharing one simulated drive (`numjobs=2`), reading and writing
/// at QD32: the clone whose read-back meets the first lost write fails with "verify failed"
/// and both clones are in the results. The code before this test left that clone's other
/// reads in flight when it stopped, the second clone's read-back reaped them as slots it never
/// used, and the run ended on "engine protocol violation: engine completed unknown slot"
/// with no results at all.
#[test]
fn a_verify_failure_of_one_clone_leaves_the_shared_drive_clean_for_the_next() {
    let dir = tempfile::tempdir().unwrap();
    for stack in ["usb3-uas-ssd", "usb3-bot-ssd", "sata-ahci-ssd"] {
        let mut args = job(stack, 32, "power_loss@t=1ms");
        args.iter_mut()
            .filter(|a| a.as_str() == "--rw=randwrite")
            .for_each(|a| *a = "--rw=randrw".into());
        args.push("--numjobs=2".into());
        let cell = format!("storlab {}", args.join(" "));
        let out = run_in(dir.path(), &args);
        let err = stderr(&out);
        assert!(!err.contains("protocol violation"), "{cell}: {err}");
        assert_eq!(out.status.code(), Some(1), "{cell}: {err}");
        assert!(err.contains("verify failed"), "{cell}: {err}");
        let doc: serde_json::Value =
            serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{cell}: {e}: {err}"));
        let jobs = doc["jobs"].as_array().expect("jobs");
        assert_eq!(jobs.len(), 2, "{cell}: {doc}");
        assert!(
            jobs.iter()
                .any(|j| j["error"].as_i64().is_some_and(|e| e != 0)),
            "{cell}: no job carries the verify error: {doc}"
        );
    }
}

/// Placed faults drawn at random, as the outside check draws them: a stack (UAS, BOT, AHCI,
/// IDE, SuperSpeed and High-Speed), a kind, a place (`@cmd=` near the start, anywhere or past
/// the run; `@t=` in µs or ms), a depth of 1, 2 or 32, a workload (reads, writes, mixed, two
/// clones, time based, a short region) and the host's recovery options. Each case must end in
/// one of the three ways the issue allows: refused before the run (exit 2, one line, no
/// results), fired (its kind's counter in the JSON; exit 0, or 1 when the fault failed I/O or
/// verify), or reported as never fired (exit 1, in stderr and in the JSON). 64 cases here
/// (about 3 s); `STORLAB_SOAK=1` draws 2 000. Before the read-back fix beside it, case 59
/// (two clones, randrw, a power loss on usb2-bot-hdd) ended with no results.
#[test]
fn drawn_fault_placements_fire_are_refused_or_are_reported_unfired() {
    let cases = if std::env::var_os("STORLAB_SOAK").is_some() {
        2000
    } else {
        64
    };
    // xorshift64*: a fixed, reproducible draw without a dependency.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut draw = |n: usize| {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    };
    let dir = tempfile::tempdir().unwrap();
    for case in 0..cases {
        let (args, counters) = drawn_placement(&mut draw);
        let cell = format!("case {case}: storlab {}", args.join(" "));
        assert_fired_refused_or_reported(&cell, &run_in(dir.path(), &args), counters);
    }
}

/// The stacks the drawn placements run on: UAS, BOT, AHCI and IDE, SuperSpeed and High-Speed.
const DRAWN_STACKS: [&str; 8] = [
    "usb3-uas-ssd",
    "usb3-linux-uas-ssd",
    "usb2-linux-uas-ssd",
    "usb3-bot-ssd",
    "usb2-bot-hdd",
    "sata-ahci-ssd",
    "sata-ahci-hdd",
    "sata-ide-ssd",
];

/// Each placed kind with the counters (`sim.faults.*`) that say it fired.
const DRAWN_KINDS: [(&str, &[&str]); 4] = [
    (
        "hang",
        &[
            "device_resets",
            "uas_lu_resets",
            "uas_it_nexus_resets",
            "bot_resets",
        ],
    ),
    ("bridge_reset", &["bridge_resets"]),
    ("disconnect", &["disconnects"]),
    ("power_loss", &["power_losses"]),
];

/// One drawn case: its arguments and the counters that say its fault fired. `draw(n)` is a
/// number below `n`.
fn drawn_placement(
    draw: &mut impl FnMut(usize) -> usize,
) -> (Vec<String>, &'static [&'static str]) {
    let stack = DRAWN_STACKS[draw(DRAWN_STACKS.len())];
    let (kind, counters) = DRAWN_KINDS[draw(DRAWN_KINDS.len())];
    let place = match draw(4) {
        0 => format!("cmd={}", 1 + draw(3)),
        1 => format!("cmd={}", 1 + draw(600)),
        2 => format!("t={}us", draw(3000)),
        _ => format!("t={}ms", draw(5000)),
    };
    let depth = [1, 2, 32][draw(3)];
    let rw = ["randwrite", "write", "randread", "randrw"][draw(4)];
    let workload: &[&str] = [
        &[][..],
        &["--numjobs=2"],
        &["--time_based", "--runtime=50ms"],
        &["--offset=512k", "--size=256k"],
    ][draw(4)];
    let recovery = ["", ",disconnect_for=5ms", ",hang_recovery=lu_reset"][draw(3)];
    let mut args = job(stack, depth, &format!("{kind}@{place},{HOST}{recovery}"));
    for arg in args.iter_mut() {
        if arg == "--rw=randwrite" {
            *arg = format!("--rw={rw}");
        }
    }
    args.extend(workload.iter().map(|a| a.to_string()));
    (args, counters)
}

/// The three ends a placed fault may have: refused before the run (exit 2, one line, no
/// results), fired (one of `counters` above 0; exit 0, or 1 with the failure said), or
/// reported as never fired (exit 1, on stderr and in the JSON).
fn assert_fired_refused_or_reported(cell: &str, out: &std::process::Output, counters: &[&str]) {
    let err = stderr(out);
    if out.status.code() == Some(2) {
        assert_eq!(err.trim().lines().count(), 1, "{cell}: {err}");
        assert!(
            stdout(out).trim().is_empty(),
            "{cell}: refused with results"
        );
        return;
    }
    let doc: serde_json::Value = serde_json::from_str(&stdout(out))
        .unwrap_or_else(|e| panic!("{cell}: no results ({e}): {err}"));
    let jobs = doc["jobs"].as_array().expect("jobs");
    let fired: u64 = jobs
        .iter()
        .flat_map(|j| j["engine_details"].as_array().into_iter().flatten())
        .filter(|d| {
            counters
                .iter()
                .any(|c| d[0].as_str() == Some(&format!("sim.faults.{c}")))
        })
        .filter_map(|d| d[1].as_str()?.parse::<u64>().ok())
        .sum();
    if fired > 0 {
        assert!(
            out.status.code() == Some(0) || err.contains("failed"),
            "{cell}: exit {:?} without a failure: {err}",
            out.status.code()
        );
    } else {
        assert_eq!(out.status.code(), Some(1), "{cell}: silent: {err}");
        assert!(err.contains("never fired"), "{cell}: silent: {err}");
        assert!(doc.to_string().contains("never fired"), "{cell}: {doc}");
    }
}
