//! Fingerprint of simulated results: runs mixed sessions (reads, writes, trims, several sizes
//! and depths) on every embedded stack and prints one line per stack and case with a hash of
//! every completion (slot, result, time), of the data read back, and the report JSON's hash.
//! Speed work must leave this output unchanged: save it before a change, diff it after.
//!
//! Usage: sim_fingerprint [STACK-SUBSTRING]

use std::hash::{DefaultHasher, Hash, Hasher};
use storlab_sim::workload::ClosedLoop;
use storlab_sim::{Op, ProfileSet, SimRequest, Simulator};

/// Slots and their size for the mixed session.
const SLOTS: u32 = 32;
const SLOT_BYTES: usize = 256 * 1024;

/// A mixed session at depth `depth`: writes, reads and trims of 4 KiB–256 KiB over 64 MiB,
/// from a xorshift sequence so the run needs no RNG crate. Returns (completions hash, data
/// hash, report JSON).
fn mixed(stack: &str, depth: u32, requests: u32) -> (u64, u64, String) {
    let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), stack, 7).expect("stack");
    sim.setup_slots(SLOTS, SLOT_BYTES).expect("slots");
    let mut completions = DefaultHasher::new();
    let mut data = DefaultHasher::new();
    let mut x = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut free: Vec<u32> = (0..depth.min(SLOTS)).collect();
    let mut reap = |sim: &mut Simulator, completions: &mut DefaultHasher| {
        sim.run_until_completions(1);
        let c = sim.pop_completion().expect("a completion");
        (c.slot, c.result, c.done_ns).hash(completions);
        // The head and tail of what the request moved: enough to see misplaced or lost data
        // (data.rs tests every byte) while keeping the run short.
        let len = c.result.map_or(0, |n| n as usize);
        let buf = &sim.slot_buffer(c.slot)[..len];
        buf[..len.min(256)].hash(&mut data);
        buf[len.saturating_sub(256)..].hash(&mut data);
        c.slot
    };
    for i in 0..requests {
        let slot = match free.pop() {
            Some(s) => s,
            None => reap(&mut sim, &mut completions),
        };
        let op = match next() % 10 {
            0..=3 => Op::Write,
            4 => Op::Trim,
            _ => Op::Read,
        };
        let len = 4096 * (1 + (next() % 64) as u32);
        let offset = (next() % 16_384) * 4096;
        let fill = next();
        if op == Op::Write {
            let buf = &mut sim.slot_buffer_mut(slot)[..len as usize];
            buf.fill(fill as u8);
            buf[..8].copy_from_slice(&fill.to_le_bytes());
            buf[len as usize - 8..].copy_from_slice(&u64::from(i).to_le_bytes());
        }
        sim.submit(SimRequest {
            slot,
            op,
            offset_bytes: offset,
            len_bytes: len,
        })
        .expect("valid request");
    }
    sim.run();
    while let Some(c) = sim.pop_completion() {
        (c.slot, c.result, c.done_ns).hash(&mut completions);
    }
    (completions.finish(), data.finish(), sim.report().to_json())
}

fn hash_str(s: &str) -> u64 {
    let mut h = DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

fn main() {
    let only = std::env::args().nth(1).unwrap_or_default();
    let profiles = ProfileSet::embedded();
    for (stack, _) in profiles.stacks() {
        if !stack.contains(&only) {
            continue;
        }
        for depth in [1u32, 32] {
            let (c, d, report) = mixed(&stack, depth, 3000);
            println!(
                "{stack} mixed-qd{depth}: completions {c:016x} data {d:016x} report {:016x}",
                hash_str(&report)
            );
        }
        for (label, op, block, qd, random) in [
            ("4k-randread-qd32", Op::Read, 4096u32, 32u32, true),
            ("4k-randwrite-qd32", Op::Write, 4096, 32, true),
            ("128k-seqwrite-qd4", Op::Write, 128 << 10, 4, false),
        ] {
            let mut sim = Simulator::from_profiles(&profiles, &stack, 3).expect("stack");
            sim.setup_slots(qd, block as usize).expect("slots");
            let result = ClosedLoop {
                op,
                block_bytes: block,
                queue_depth: qd,
                random,
                region_bytes: 1 << 30,
                ios: 20_000,
                seed: 5,
            }
            .run(&mut sim);
            println!(
                "{stack} {label}: elapsed {} ns report {:016x}",
                result.elapsed_ns,
                hash_str(&sim.report().to_json())
            );
        }
    }
}
