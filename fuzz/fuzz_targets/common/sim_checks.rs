//! Properties the simulator keeps for any input, shared by the fuzz targets `sim_faults`,
//! `sim_profiles` and `sim_ops` and by the seeded no-panic test of the normal suite
//! (`crates/sim/tests/it/no_panic.rs`, which includes this file):
//!
//! - a fault plan, a profile file or a stack either builds or is refused with a one-line error;
//!   nothing panics, whatever the text;
//! - whatever builds runs: every request submitted completes exactly once, for its own slot,
//!   with the whole length or an errno, and the clock never goes back;
//! - without faults, data read back is what was last written there (or zeros if never
//!   written), sector by sector.

// Each target uses part of this file.
#![allow(dead_code)]

use std::collections::HashMap;
use storlab_sim::{FaultPlan, Op, ProfileSet, SimRequest, Simulator, StackSpec};

/// Sector size every shipped drive's logical block divides.
const SECTOR: u64 = 512;
/// Request sizes are multiples of this.
const GRAIN: u64 = 4096;
/// Largest request, in grains.
const MAX_GRAINS: u64 = 16;
const SLOT_BYTES: usize = (GRAIN * MAX_GRAINS) as usize;
/// The region the operations address (small, so reads hit written data).
const REGION_BYTES: u64 = 4 << 20;
/// Requests run per built stack when the input does not say (profiles, fault plans).
const DEFAULT_REQUESTS: usize = 24;
/// A bound on simulator steps per request, so a stuck simulator fails instead of hanging.
const STEPS_PER_REQUEST_MAX: u64 = 100_000;

/// Stacks the targets run on: one per transport and driver family.
pub const STACKS: [&str; 4] = [
    "usb3-uas-ssd",
    "usb2-bot-hdd",
    "sata-ahci-hdd",
    "lucidport/x25e-uas-gen2",
];

/// A refusal is one line.
fn check_error_line(what: &str, text: &str) {
    assert!(!text.is_empty(), "{what}: empty error");
    assert!(
        !text.contains('\n'),
        "{what}: error of several lines: {text}"
    );
}

/// Fault plan text: parses or is refused in one line; a plan that parses is taken or refused
/// by every stack in one line, and a stack that takes it runs requests to completion.
pub fn check_fault_spec(text: &str) {
    let plan = match FaultPlan::parse(text) {
        Ok(plan) => plan,
        Err(e) => return check_error_line("fault plan", &e),
    };
    let profiles = ProfileSet::embedded();
    for stack in STACKS {
        let mut sim = Simulator::from_profiles(&profiles, stack, 1).expect("shipped stacks build");
        match sim.set_faults(plan.clone()) {
            Ok(()) => run_requests(&mut sim, &default_ops(), true),
            Err(e) => check_error_line("set_faults", &e.to_string()),
        }
    }
}

/// A profile file's text under `category`, named as the file every stack in [`STACKS`] uses
/// in that category (so it replaces a part they are built from): each stack resolves or is
/// refused in one line, and what resolves builds and runs.
pub fn check_profile_text(category_index: u8, text: &str) {
    let categories = storlab_sim::profile::CATEGORIES;
    let category = categories[usize::from(category_index) % categories.len()];
    let base = ProfileSet::embedded();
    for stack in STACKS {
        let Ok(spec) = base.resolve(stack) else {
            panic!("shipped stack {stack} resolves");
        };
        let name = part_name(&spec, stack, category);
        let mut profiles = base.clone();
        profiles
            .insert_text(category, &name, "fuzz.toml", text)
            .expect("a known category");
        let spec = match profiles.resolve(stack) {
            Ok(spec) => spec,
            Err(e) => {
                check_error_line("profile", &e.to_string());
                continue;
            }
        };
        match Simulator::new(spec, 1) {
            Ok(mut sim) => run_requests(&mut sim, &default_ops(), false),
            Err(e) => check_error_line("simulator", &e.to_string()),
        }
    }
}

/// The name of the part of `stack` in `category` (the stack file's own name for `stacks`; the
/// SATA link for `links`, which every stack has).
fn part_name(spec: &StackSpec, stack: &str, category: &str) -> String {
    match category {
        "stacks" => stack.to_string(),
        "hosts" => spec.host_name.clone(),
        "controllers" => spec.controller_name.clone(),
        "links" => spec.sata_link_name.clone(),
        "bridges" => spec
            .bridge_name
            .clone()
            .unwrap_or_else(|| "unused-bridge".to_string()),
        "drives" => spec.drive_name.clone(),
        other => panic!("category {other} not known to the checks"),
    }
}

/// One request an input asks for.
#[derive(Clone, Copy, Debug)]
pub struct OpSpec {
    pub op: Op,
    pub offset_bytes: u64,
    pub len_bytes: u64,
}

/// Reads, writes and trims spread over the region, the same every time.
fn default_ops() -> Vec<OpSpec> {
    (0..DEFAULT_REQUESTS as u64)
        .map(|i| OpSpec {
            op: [Op::Write, Op::Read, Op::Write, Op::Trim, Op::Flush][(i % 5) as usize],
            offset_bytes: if i % 5 == 4 { 0 } else { (i * 7 % 64) * GRAIN },
            len_bytes: if i % 5 == 4 {
                0
            } else {
                (1 + i % MAX_GRAINS) * GRAIN
            },
        })
        .collect()
}

/// Operation bytes: byte 0 picks the stack, byte 1 the queue depth, then 4 bytes per request
/// (kind: read, write, trim or flush; offset in grains as two bytes; length in grains).
pub fn check_ops(bytes: &[u8]) {
    let Some((&[stack_byte, depth_byte], rest)) = bytes.split_first_chunk::<2>() else {
        return;
    };
    let stack = STACKS[usize::from(stack_byte) % STACKS.len()];
    let queue_depth = 1 + u32::from(depth_byte % 32);
    let grains = REGION_BYTES / GRAIN;
    let ops: Vec<OpSpec> = rest
        .chunks_exact(4)
        .map(|c| {
            let len_grains = 1 + u64::from(c[3]) % MAX_GRAINS;
            let start = u64::from(u16::from_le_bytes([c[1], c[2]])) % (grains - len_grains + 1);
            match [Op::Read, Op::Write, Op::Trim, Op::Flush][usize::from(c[0] % 4)] {
                // A flush covers the whole medium: no range.
                Op::Flush => OpSpec {
                    op: Op::Flush,
                    offset_bytes: 0,
                    len_bytes: 0,
                },
                op => OpSpec {
                    op,
                    offset_bytes: start * GRAIN,
                    len_bytes: len_grains * GRAIN,
                },
            }
        })
        .collect();
    let mut sim =
        Simulator::from_profiles(&ProfileSet::embedded(), stack, 1).expect("shipped stacks build");
    run_requests_at_depth(&mut sim, &ops, false, queue_depth);
}

fn run_requests(sim: &mut Simulator, ops: &[OpSpec], faults: bool) {
    run_requests_at_depth(sim, ops, faults, 4);
}

/// The byte at `index` of a sector written by write number `write` at `lba`.
fn sector_byte(write: u32, lba: u64, index: usize) -> u8 {
    let v = ((u64::from(write) << 40) ^ lba).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    v.to_le_bytes()[index % 8] ^ (index / 8) as u8
}

/// What the checker knows a sector holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Known {
    Zero,
    Write(u32),
    /// A trim (may read as zeros or the old data) or a failed write.
    Unknown,
}

struct InFlight {
    op: Op,
    offset: u64,
    len: u64,
    write: u32,
}

/// Every sector of a completed read holds what the checker knows is there.
fn check_read(buf: &[u8], first: u64, sectors: u64, known: &HashMap<u64, Known>) {
    for s in 0..sectors {
        let lba = first + s;
        let got = &buf[(s * SECTOR) as usize..((s + 1) * SECTOR) as usize];
        match known.get(&lba).copied().unwrap_or(Known::Zero) {
            Known::Unknown => {}
            Known::Zero => assert!(got.iter().all(|b| *b == 0), "LBA {lba}: not zero"),
            Known::Write(w) => assert!(
                got.iter()
                    .enumerate()
                    .all(|(i, b)| *b == sector_byte(w, lba, i)),
                "LBA {lba}: not what write {w} put there"
            ),
        }
    }
}

/// Runs `ops` in order, up to `queue_depth` at a time, never two overlapping ones in flight
/// together (their order is undefined, on real drives too), and checks every completion.
fn run_requests_at_depth(sim: &mut Simulator, ops: &[OpSpec], faults: bool, queue_depth: u32) {
    let slots = queue_depth.min(sim.max_outstanding_commands().max(1));
    if let Err(e) = sim.setup_slots(slots, SLOT_BYTES) {
        check_error_line("setup_slots", &e.to_string());
        return;
    }
    let capacity = sim.capacity_bytes();
    let mut known: HashMap<u64, Known> = HashMap::new();
    let mut in_flight: HashMap<u32, InFlight> = HashMap::new();
    let mut free: Vec<u32> = (0..slots).rev().collect();
    let mut next = 0;
    let mut writes = 0u32;
    let (mut last_done_ns, mut last_now_ns) = (0u64, 0u64);
    let mut steps = 0u64;
    let step_limit = STEPS_PER_REQUEST_MAX * (ops.len() as u64 + 1);
    while next < ops.len() || !in_flight.is_empty() {
        while next < ops.len() {
            let o = ops[next];
            if o.offset_bytes + o.len_bytes > capacity {
                next += 1;
                continue;
            }
            let overlaps = in_flight.values().any(|f| {
                o.offset_bytes < f.offset + f.len && f.offset < o.offset_bytes + o.len_bytes
            });
            let Some(&slot) = free.last() else { break };
            if overlaps {
                break;
            }
            let mut write = 0;
            if o.op == Op::Write {
                writes += 1;
                write = writes;
                let buf = sim.slot_buffer_mut(slot);
                for (i, b) in buf[..o.len_bytes as usize].iter_mut().enumerate() {
                    let lba = o.offset_bytes / SECTOR + (i as u64) / SECTOR;
                    *b = sector_byte(write, lba, i % SECTOR as usize);
                }
            }
            let submitted = sim.submit(SimRequest {
                slot,
                op: o.op,
                offset_bytes: o.offset_bytes,
                len_bytes: o.len_bytes as u32,
            });
            next += 1;
            if let Err(e) = submitted {
                // A stack may refuse an operation (a trim on a drive without it): one line.
                check_error_line("submit", &e.to_string());
                continue;
            }
            free.pop();
            in_flight.insert(
                slot,
                InFlight {
                    op: o.op,
                    offset: o.offset_bytes,
                    len: o.len_bytes,
                    write,
                },
            );
        }
        if in_flight.is_empty() {
            continue;
        }
        if sim.completions_ready() == 0 {
            assert!(sim.step(), "the simulator stopped with requests in flight");
            steps += 1;
            assert!(steps <= step_limit, "more than {step_limit} steps");
        }
        assert!(sim.now_ns() >= last_now_ns, "the clock went back");
        last_now_ns = sim.now_ns();
        while let Some(c) = sim.pop_completion() {
            let f = in_flight
                .remove(&c.slot)
                .unwrap_or_else(|| panic!("completion for slot {} with no request", c.slot));
            assert!(c.done_ns >= last_done_ns, "completions out of time order");
            last_done_ns = c.done_ns;
            free.push(c.slot);
            let (first, sectors) = (f.offset / SECTOR, f.len / SECTOR);
            match c.result {
                Ok(n) => {
                    assert_eq!(u64::from(n), f.len, "{:?}: short completion", f.op);
                    let mark = match f.op {
                        Op::Write => Known::Write(f.write),
                        Op::Trim => Known::Unknown,
                        // A flush moves no data and changes none.
                        Op::Flush => continue,
                        Op::Read => {
                            if !faults {
                                check_read(sim.slot_buffer(c.slot), first, sectors, &known);
                            }
                            continue;
                        }
                    };
                    for s in first..first + sectors {
                        known.insert(s, mark);
                    }
                }
                // A host that passes no discards (Linux's usb-storage) refuses a trim before
                // any command, as the kernel does: the data stays as it was.
                Err(storlab_sim::ERRNO_EOPNOTSUPP) if f.op == Op::Trim => {}
                Err(errno) => {
                    assert!(
                        faults,
                        "{:?} failed with errno {errno} without faults",
                        f.op
                    );
                    assert!(errno > 0, "errno {errno}");
                    if f.op != Op::Read {
                        for s in first..first + sectors {
                            known.insert(s, Known::Unknown);
                        }
                    }
                }
            }
        }
    }
    assert_eq!(sim.requests_in_flight(), 0, "requests left in flight");
}
