//! Simulator speed benchmark: simulated seconds per wall second and simulated commands per
//! wall second, on 4 KiB QD32 random reads through a UAS SSD stack (the target: ≥ 10×
//! real time, ≥ 1 million commands per second). Run with `bench/sim-speed.sh`.
//!
//! Usage: sim_speed [STACK] [IOS] [CASE-SUBSTRING]
//!
//! Reads go through the payload store (never-written blocks read as zeros); writes run with
//! the store off, since a million random 4 KiB writes would otherwise keep 4 GB of payload.

use std::time::Instant;
use storlab_sim::workload::ClosedLoop;
use storlab_sim::{Op, ProfileSet, Simulator};

/// This process's user+system CPU seconds from /proc/self/stat (Linux; 100 ticks per second
/// on every mainstream kernel config), so the figures mean something on a loaded machine too.
fn cpu_seconds() -> Option<f64> {
    const TICKS_PER_SECOND: f64 = 100.0;
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / TICKS_PER_SECOND)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let stack = args.next().unwrap_or_else(|| "usb3-uas-ssd".to_string());
    let ios: u64 = args
        .next()
        .map(|a| a.parse().expect("IOS is a number"))
        .unwrap_or(2_000_000);
    let only = args.next().unwrap_or_default();
    let profiles = ProfileSet::embedded();
    for (label, op, block, qd, random) in [
        ("4k-randread-qd32", Op::Read, 4096u32, 32u32, true),
        ("4k-randwrite-qd32", Op::Write, 4096, 32, true),
        ("1m-seqread-qd4", Op::Read, 1 << 20, 4, false),
    ] {
        if !label.contains(&only) {
            continue;
        }
        let mut sim = Simulator::from_profiles(&profiles, &stack, 1).expect("stack");
        sim.setup_slots(qd, block as usize).expect("slots");
        sim.set_store_payload(op == Op::Read);
        let ios = if block > 4096 { ios / 100 } else { ios };
        let wall = Instant::now();
        let cpu_start = cpu_seconds();
        let result = ClosedLoop {
            op,
            block_bytes: block,
            queue_depth: qd,
            random,
            region_bytes: 16 << 30,
            ios,
            seed: 1,
        }
        .run(&mut sim);
        let wall_s = wall.elapsed().as_secs_f64();
        let cpu_s = cpu_seconds().zip(cpu_start).map(|(end, start)| end - start);
        let sim_s = result.elapsed_ns as f64 / 1e9;
        let commands = sim.report().commands;
        println!(
            "{stack} {label}: {ios} I/Os, {:.1} MB/s simulated, {:.3} s simulated in {:.3} s wall = \
             {:.1}x real time, {:.2} M commands/s",
            result.mb_per_s(),
            sim_s,
            wall_s,
            sim_s / wall_s,
            commands as f64 / wall_s / 1e6
        );
        if let Some(cpu_s) = cpu_s.filter(|&c| c > 0.0) {
            println!(
                "    per CPU second: {:.1}x real time, {:.2} M commands/s ({cpu_s:.2} s CPU)",
                sim_s / cpu_s,
                commands as f64 / cpu_s / 1e6
            );
        }
    }
}
