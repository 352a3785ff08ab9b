//! Swarm test with seed replay: each seed draws a shipped stack (for half the seeds with up to
//! three numeric keys of its parts scaled by 0.5–2 in its `[overrides]`, among the draws the
//! profile checks accept, so parts nobody shipped run too), a workload (mix, sizes, queue
//! depth, region) and a fault plan, runs it, and checks the invariants that cross the layers:
//!
//! - every request completes exactly once, and only requests that were submitted;
//! - virtual time never goes back (completions in order, the clock monotone);
//! - tags pair (the transports assert this on every status they parse: a panic fails the seed);
//! - data read back is what was last written, unless a fault explains it (a write that failed
//!   leaves its blocks unknown; a power loss may take a sector back to an earlier write of it
//!   (or the write itself, one of whose earlier attempts reached the media), or to never
//!   written, only where the simulator says the drive's volatile cache lost a write, and never
//!   more than that cache holds);
//! - a failed I/O is explained by a fault the plan reported at that instant with that errno
//!   (or by the device's removal before it: every later I/O fails with EIO), and every
//!   injected fault ends recovered (the command sent again) or reported.
//!
//! A failure prints one line to replay it: `STORLAB_SWARM_SEED=N cargo test -p storlab-sim
//! --test it swarm`. The normal suite runs `SEEDS` seeds; `STORLAB_SOAK=1` runs `SOAK_SEEDS`.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use std::collections::{HashMap, HashSet};
use storlab_sim::fault::{FaultCounts, FaultOutcome, FaultRecord};
use storlab_sim::profiles::embedded::EMBEDDED_PROFILES;
use storlab_sim::{
    FaultKind, FaultPlan, Op, ProfileSet, SimRequest, Simulator, Transport, ERRNO_EIO,
    ERRNO_ENODATA,
};

const SEEDS: u64 = 200;
const SOAK_SEEDS: u64 = 10_000;
const SECTOR: u64 = 512;
/// Requests sizes are multiples of this (every shipped drive's logical block divides it).
const GRAIN: u64 = 4096;
const SLOT_BYTES: usize = 128 << 10;
/// Salt of the stream that draws hang faults (a constant with no meaning but its bits).
const HANG_STREAM: u64 = 0x4841_4e47_0000_0001;
/// Salt of the stream that draws drops on SATA stacks (lost commands, COMRESET recovery).
const SATA_DROP_STREAM: u64 = 0x5341_5441_0000_0001;
/// Salt of the stream that draws power losses (as `HANG_STREAM`).
const POWER_STREAM: u64 = 0x504f_5745_5200_0001;
/// Salt of the stream that draws the device-level faults (bridge reset, disconnect, a BOT
/// hang, the device reset as the hang's recovery), so earlier seeds' other draws stay.
const DEVICE_STREAM: u64 = 0x4445_5649_4345_0002;

fn below(rng: &mut ChaCha8Rng, n: u64) -> u64 {
    rng.next_u64() % n
}

fn chance(rng: &mut ChaCha8Rng, p: f64) -> bool {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 > 1.0 - p
}

/// What one seed runs.
struct Scenario {
    stack: String,
    queue_depth: u32,
    requests: u32,
    region_bytes: u64,
    write_share: f64,
    max_blocks: u64,
    faults: Option<String>,
    /// The stack file with perturbed keys in its `[overrides]` (run as [`PERTURBED_STACK`]),
    /// and what was changed, for the failure message.
    perturbed: Option<(String, Vec<String>)>,
}

fn draw_scenario(seed: u64, profiles: &ProfileSet) -> Scenario {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let stacks = profiles.stacks();
    let stack = stacks[below(&mut rng, stacks.len() as u64) as usize]
        .0
        .clone();
    let transport = Simulator::from_profiles(profiles, &stack, 0)
        .expect("shipped stacks build")
        .transport();
    let faults = (!chance(&mut rng, 0.15)).then(|| {
        let timeout_s = 1 + below(&mut rng, 30);
        let mut items = vec![
            format!("seed={}", rng.next_u64()),
            format!("timeout={timeout_s}s"),
            format!("retries={}", below(&mut rng, 6)),
            format!("reset_delay={}ms", below(&mut rng, 6001)),
        ];
        if chance(&mut rng, 0.5) {
            items.push(format!(
                "media_error={}",
                below(&mut rng, 20) as f64 / 1000.0
            ));
        }
        for _ in 0..below(&mut rng, 3) {
            items.push(format!(
                "media_error@lba={}",
                below(&mut rng, 4 << 20) / SECTOR
            ));
        }
        if transport.is_usb() {
            if chance(&mut rng, 0.6) {
                items.push(format!(
                    "usb_crc={}",
                    below(&mut rng, 100) as f64 / 10_000.0
                ));
            }
            if chance(&mut rng, 0.5) {
                items.push(format!("drop={}", below(&mut rng, 30) as f64 / 1000.0));
            }
            if chance(&mut rng, 0.3) {
                items.push(format!("drop@cmd={}", 1 + below(&mut rng, 200)));
            }
        }
        if transport == Transport::Bot && chance(&mut rng, 0.5) {
            items.push(format!(
                "phase_error={}",
                below(&mut rng, 30) as f64 / 1000.0
            ));
            items.push(format!("phase_error@t={}ms", below(&mut rng, 50)));
        }
        if !transport.is_usb() {
            // From a stream of its own, as hangs: seeds drawn before SATA drops existed keep
            // their scenarios and replay lines.
            let mut drop_rng = ChaCha8Rng::seed_from_u64(seed ^ SATA_DROP_STREAM);
            if chance(&mut drop_rng, 0.5) {
                items.push(format!("drop@cmd={}", 1 + below(&mut drop_rng, 200)));
                if chance(&mut drop_rng, 0.3) {
                    items.push(format!("drop={}", below(&mut drop_rng, 10) as f64 / 1000.0));
                }
            }
        }
        if matches!(transport, Transport::Uas { .. }) {
            // From a stream of its own, so the scenarios of seeds drawn before hangs existed
            // (and their replay lines) stay what they were.
            let mut hang_rng = ChaCha8Rng::seed_from_u64(seed ^ HANG_STREAM);
            if chance(&mut hang_rng, 0.4) {
                items.push(format!("hang@cmd={}", 1 + below(&mut hang_rng, 200)));
                if chance(&mut hang_rng, 0.3) {
                    items.push(format!("hang={}", below(&mut hang_rng, 10) as f64 / 1000.0));
                }
                let step = ["lu_reset", "it_nexus_reset", "none"][below(&mut hang_rng, 3) as usize];
                items.push(format!("hang_recovery={step}"));
                items.push(format!("tm_timeout={}ms", 1 + below(&mut hang_rng, 3000)));
            }
        }
        // From a stream of its own too (the earlier seeds' scenarios stay as they were).
        let mut power_rng = ChaCha8Rng::seed_from_u64(seed ^ POWER_STREAM);
        if chance(&mut power_rng, 0.3) {
            items.push(format!("power_loss@cmd={}", 1 + below(&mut power_rng, 250)));
        }
        if transport.is_usb() {
            let mut device_rng = ChaCha8Rng::seed_from_u64(seed ^ DEVICE_STREAM);
            if transport == Transport::Bot && chance(&mut device_rng, 0.3) {
                items.push(format!("hang@cmd={}", 1 + below(&mut device_rng, 200)));
            }
            if matches!(transport, Transport::Uas { .. }) && chance(&mut device_rng, 0.15) {
                // Replaces the step drawn above (a plan names each key once).
                items.retain(|item| !item.starts_with("hang_recovery="));
                items.push("hang_recovery=device_reset".into());
            }
            if chance(&mut device_rng, 0.3) {
                items.push(format!(
                    "bridge_reset@cmd={}",
                    1 + below(&mut device_rng, 200)
                ));
                if chance(&mut device_rng, 0.3) {
                    let rate = below(&mut device_rng, 5) as f64 / 1000.0;
                    items.push(format!("bridge_reset={rate}"));
                }
            }
            if chance(&mut device_rng, 0.3) {
                items.push(format!(
                    "disconnect@cmd={}",
                    1 + below(&mut device_rng, 200)
                ));
                // Short drops (a SuperSpeed warm reset keeps the device) and long ones.
                if chance(&mut device_rng, 0.7) {
                    let ms = 1 + below(&mut device_rng, 40);
                    items.push(format!("disconnect_for={ms}ms"));
                }
            }
        }
        // A plan names each item once: a repeated draw (the same bad LBA) is the same fault.
        let mut unique: Vec<String> = Vec::new();
        for item in items {
            if !unique.contains(&item) {
                unique.push(item);
            }
        }
        unique.join(",")
    });
    let perturbed = perturb_stack(seed, profiles, &stack);
    Scenario {
        stack,
        queue_depth: 1 + below(&mut rng, 8) as u32,
        requests: 100 + below(&mut rng, 200) as u32,
        region_bytes: (1 + below(&mut rng, 4)) << 20,
        write_share: below(&mut rng, 101) as f64 / 100.0,
        max_blocks: 1 + below(&mut rng, (SLOT_BYTES as u64 / GRAIN).min(16)),
        faults,
        perturbed,
    }
}

/// The name the perturbed copy of a seed's stack runs under.
const PERTURBED_STACK: &str = "swarm-perturbed";
/// Seeds whose stack runs with perturbed keys, in percent.
const PERTURBED_PERCENT: u64 = 50;
/// Keys perturbed per stack at most, and tries to find a set the profile checks accept.
const PERTURBED_KEYS_MAX: u64 = 3;
const PERTURB_TRIES: u32 = 8;
/// Stream of the perturbation draws (its own, so a seed's workload and plan stay as they were).
const PERTURB_STREAM: u64 = 0x9E27_0B5E;

/// Every number in a profile table, by dotted path.
fn numeric_keys(table: &toml::Table, prefix: &str, out: &mut Vec<(String, toml::Value)>) {
    for (key, value) in table {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            toml::Value::Integer(_) | toml::Value::Float(_) => out.push((path, value.clone())),
            toml::Value::Table(inner) => numeric_keys(inner, &path, out),
            _ => {}
        }
    }
}

/// `value` scaled by a factor drawn in 0.5..2 (integers rounded, at least 1 if they were).
fn scaled(rng: &mut ChaCha8Rng, value: &toml::Value) -> toml::Value {
    let factor = 0.5 + 1.5 * (below(rng, 1001) as f64 / 1000.0);
    match value {
        toml::Value::Integer(v) => {
            let scaled = (*v as f64 * factor).round() as i64;
            toml::Value::Integer(if *v > 0 { scaled.max(1) } else { *v })
        }
        toml::Value::Float(v) => toml::Value::Float(v * factor),
        other => other.clone(),
    }
}

/// With `PERTURBED_PERCENT` chance, `stack`'s file with up to `PERTURBED_KEYS_MAX` numeric keys
/// of its parts scaled in its `[overrides.ROLE]` tables, among the sets the profile checks
/// accept (a draw they refuse is drawn again): the swarm then also runs parts nobody shipped,
/// inside the ranges the simulator promises to handle.
fn perturb_stack(seed: u64, profiles: &ProfileSet, stack: &str) -> Option<(String, Vec<String>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ PERTURB_STREAM);
    if below(&mut rng, 100) >= PERTURBED_PERCENT {
        return None;
    }
    let spec = profiles.resolve(stack).ok()?;
    let stack_text = EMBEDDED_PROFILES
        .iter()
        .find(|(c, n, _)| *c == "stacks" && *n == stack)?
        .2;
    let parts: Vec<(&str, &str, String)> = [
        ("host", "hosts", Some(spec.host_name.clone())),
        (
            "controller",
            "controllers",
            Some(spec.controller_name.clone()),
        ),
        ("usb_link", "links", spec.usb_link_name.clone()),
        ("bridge", "bridges", spec.bridge_name.clone()),
        ("sata_link", "links", Some(spec.sata_link_name.clone())),
        ("drive", "drives", Some(spec.drive_name.clone())),
    ]
    .into_iter()
    .filter_map(|(role, category, name)| name.map(|n| (role, category, n)))
    .collect();
    let mut keys: Vec<(&str, String, toml::Value)> = Vec::new();
    for (role, category, name) in &parts {
        let Some((_, _, text)) = EMBEDDED_PROFILES
            .iter()
            .find(|(c, n, _)| c == category && n == name)
        else {
            continue;
        };
        let table: toml::Table = text.parse().ok()?;
        let mut found = Vec::new();
        numeric_keys(&table, "", &mut found);
        keys.extend(found.into_iter().map(|(path, value)| (*role, path, value)));
    }
    if keys.is_empty() {
        return None;
    }
    for _ in 0..PERTURB_TRIES {
        let mut file: toml::Table = stack_text.parse().ok()?;
        let mut changed = Vec::new();
        for _ in 0..1 + below(&mut rng, PERTURBED_KEYS_MAX) {
            let (role, path, value) = &keys[below(&mut rng, keys.len() as u64) as usize];
            let overrides = file
                .entry("overrides")
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            let mut table = overrides.as_table_mut()?;
            table = table
                .entry(role.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()?;
            let segments: Vec<&str> = path.split('.').collect();
            for segment in &segments[..segments.len() - 1] {
                table = table
                    .entry(segment.to_string())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                    .as_table_mut()?;
            }
            let last = segments[segments.len() - 1];
            // A key the stack already overrides is scaled from its overridden value.
            let base = table.get(last).cloned().unwrap_or_else(|| value.clone());
            let new = scaled(&mut rng, &base);
            changed.push(format!("{role}.{path} = {new}"));
            table.insert(last.to_string(), new);
        }
        let text = toml::to_string(&file).ok()?;
        let mut trial = profiles.clone();
        trial
            .insert_text("stacks", PERTURBED_STACK, "swarm", &text)
            .ok()?;
        if trial.resolve(PERTURBED_STACK).is_ok()
            && Simulator::from_profiles(&trial, PERTURBED_STACK, 0).is_ok()
        {
            return Some((text, changed));
        }
    }
    None
}

/// The byte every sector of write number `write` holds at sector `lba` (a sector's content
/// names its write and its place, so a misplaced or stale sector is caught).
fn sector_fill(write: u32, lba: u64, out: &mut [u8]) {
    let stamp = (u64::from(write) << 40) ^ lba;
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        let v = stamp
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(i as u64);
        chunk.copy_from_slice(&v.to_le_bytes()[..chunk.len()]);
    }
}

/// What the test knows a sector holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Known {
    /// Written by this write number.
    Write(u32),
    /// A write to it failed: the drive may hold the old or the new data.
    Unknown,
    /// A power loss took it back from this write to what the media held: an earlier write of
    /// it, or nothing (zeros).
    Reverted(u32),
}

struct InFlight {
    op: Op,
    offset: u64,
    len: u64,
    write: u32,
}

fn run_seed(seed: u64, profiles: &ProfileSet) -> Result<FaultCounts, String> {
    let sc = draw_scenario(seed, profiles);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5EED);
    let mut perturbed = profiles.clone();
    let stack = match &sc.perturbed {
        Some((text, _)) => {
            perturbed
                .insert_text("stacks", PERTURBED_STACK, "swarm", text)
                .map_err(|e| e.to_string())?;
            PERTURBED_STACK
        }
        None => sc.stack.as_str(),
    };
    let mut sim = Simulator::from_profiles(&perturbed, stack, seed).map_err(|e| e.to_string())?;
    sim.setup_slots(sc.queue_depth, SLOT_BYTES)
        .map_err(|e| e.to_string())?;
    let mut faults_on = false;
    if let Some(spec) = &sc.faults {
        let plan = FaultPlan::parse(spec).map_err(|e| format!("drawn plan `{spec}`: {e}"))?;
        // Stacks whose driver buffers I/O refuse plans (recovery not modelled): run clean.
        faults_on = sim.set_faults(plan).is_ok();
    }
    let region = sc.region_bytes.min(sim.capacity_bytes());
    let mut known: HashMap<u64, Known> = HashMap::new();
    let mut in_flight: HashMap<u32, InFlight> = HashMap::new();
    let mut free: Vec<u32> = (0..sc.queue_depth).rev().collect();
    let (mut submitted, mut completed, mut writes) = (0u32, 0u32, 0u32);
    let mut failures: Vec<(i32, u64)> = Vec::new();
    let mut last_done_ns = 0u64;
    let mut last_now_ns = 0u64;
    // Every write that completed to each sector, or failed (its data may be there), oldest
    // first: what a power loss may take it back to.
    let mut history: HashMap<u64, Vec<u32>> = HashMap::new();
    // Sectors a power loss put back under a write still in flight: the drive had taken the
    // write and sent its status (on its way to the host) when the loss took it from its
    // cache, so the write completes successfully and the sector reads as before it.
    let mut reverted_in_flight: HashSet<u64> = HashSet::new();
    // Reads in flight at a power loss: their data may have left the drive before it (a
    // sector the loss then put back reads as before the loss), so they pin nothing.
    let mut reads_across_loss: HashSet<u32> = HashSet::new();
    let mut losses_seen = 0usize;
    let volatile_capacity_bytes: Option<u64> = {
        let caches: Vec<u64> = sim
            .drive_cache_occupancy()
            .iter()
            .filter(|c| matches!(c.name, "write_back" | "write_buffer"))
            .map(|c| c.capacity_bytes)
            .collect();
        (!caches.is_empty()).then(|| caches.iter().sum())
    };
    while completed < sc.requests {
        // Keep the queue full with requests that overlap nothing in flight (the order of
        // overlapping I/O in flight is undefined, on real drives too).
        while submitted < sc.requests {
            let Some(&slot) = free.last() else { break };
            let blocks = 1 + below(&mut rng, sc.max_blocks);
            let len = blocks * GRAIN;
            let offset = below(&mut rng, (region / GRAIN).saturating_sub(blocks) + 1) * GRAIN;
            let overlaps = in_flight
                .values()
                .any(|f| offset < f.offset + f.len && f.offset < offset + len);
            if overlaps {
                break;
            }
            free.pop();
            let op = if chance(&mut rng, sc.write_share) {
                Op::Write
            } else {
                Op::Read
            };
            let mut write = 0;
            if op == Op::Write {
                writes += 1;
                write = writes;
                let buf = sim.slot_buffer_mut(slot);
                for s in 0..len / SECTOR {
                    let at = (s * SECTOR) as usize;
                    sector_fill(
                        write,
                        offset / SECTOR + s,
                        &mut buf[at..at + SECTOR as usize],
                    );
                }
            }
            sim.submit(SimRequest {
                slot,
                op,
                offset_bytes: offset,
                len_bytes: len as u32,
            })
            .map_err(|e| e.to_string())?;
            in_flight.insert(
                slot,
                InFlight {
                    op,
                    offset,
                    len,
                    write,
                },
            );
            submitted += 1;
        }
        if sim.completions_ready() == 0 && !sim.step() {
            return Err(format!(
                "the simulator stopped with {} requests in flight",
                in_flight.len()
            ));
        }
        if sim.now_ns() < last_now_ns {
            return Err("the clock went back".into());
        }
        last_now_ns = sim.now_ns();
        while losses_seen < sim.power_losses().len() {
            let loss = &sim.power_losses()[losses_seen];
            losses_seen += 1;
            let bytes: u64 = loss.restored.iter().map(|(s, e)| e - s).sum();
            if let Some(capacity) = volatile_capacity_bytes {
                // A lone write larger than the cache is taken whole into an empty one.
                let largest = sc.max_blocks * GRAIN;
                if bytes > capacity.max(largest) {
                    return Err(format!(
                        "a power loss put back {bytes} bytes, more than the drive's volatile \
                         cache holds ({capacity})"
                    ));
                }
            }
            reads_across_loss.extend(
                in_flight
                    .iter()
                    .filter(|(_, f)| f.op == Op::Read)
                    .map(|(&slot, _)| slot),
            );
            for &(start, end) in &loss.restored {
                for sector in start / SECTOR..end / SECTOR {
                    let at = sector * SECTOR;
                    if in_flight
                        .values()
                        .any(|f| f.op == Op::Write && f.offset <= at && at < f.offset + f.len)
                    {
                        reverted_in_flight.insert(sector);
                    }
                    match known.get(&sector).copied() {
                        Some(Known::Write(w)) => {
                            known.insert(sector, Known::Reverted(w));
                        }
                        Some(Known::Unknown | Known::Reverted(_)) => {}
                        None if reverted_in_flight.contains(&sector) => {}
                        None => {
                            return Err(format!(
                                "a power loss put back LBA {sector}, which no completed write \
                                 changed"
                            ))
                        }
                    }
                }
            }
        }
        while let Some(c) = sim.pop_completion() {
            let f = in_flight
                .remove(&c.slot)
                .ok_or_else(|| format!("completion for slot {} that had no request", c.slot))?;
            if c.done_ns < last_done_ns {
                return Err(format!(
                    "completion at {} after one at {last_done_ns}",
                    c.done_ns
                ));
            }
            last_done_ns = c.done_ns;
            completed += 1;
            free.push(c.slot);
            let first = f.offset / SECTOR;
            let sectors = f.len / SECTOR;
            let across_loss = reads_across_loss.remove(&c.slot);
            match (f.op, c.result) {
                (Op::Write, Ok(n)) if u64::from(n) == f.len => {
                    for s in first..first + sectors {
                        let state = if reverted_in_flight.remove(&s) {
                            Known::Reverted(f.write)
                        } else {
                            Known::Write(f.write)
                        };
                        known.insert(s, state);
                        history.entry(s).or_default().push(f.write);
                    }
                }
                (Op::Read, Ok(n)) if u64::from(n) == f.len => {
                    let buf = sim.slot_buffer(c.slot);
                    let mut expected = [0u8; SECTOR as usize];
                    for s in 0..sectors {
                        let got = &buf[(s * SECTOR) as usize..((s + 1) * SECTOR) as usize];
                        match known.get(&(first + s)) {
                            Some(Known::Unknown) => {}
                            Some(Known::Reverted(w)) => {
                                // An earlier write of this sector, or nothing: pinned once read.
                                // Or write `w` itself: an attempt of it before a retry (after a
                                // phase error, a lost command) may have reached the media while
                                // the last attempt's copy was still cached.
                                let sector = first + s;
                                let earlier = history.get(&sector).map_or(&[][..], |h| &h[..]);
                                let found =
                                    earlier.iter().copied().filter(|&e| e <= *w).find(|&e| {
                                        sector_fill(e, sector, &mut expected);
                                        got == expected
                                    });
                                match found {
                                    Some(_) if across_loss => {}
                                    Some(e) => {
                                        known.insert(sector, Known::Write(e));
                                    }
                                    None if got.iter().all(|b| *b == 0) => {
                                        if !across_loss {
                                            known.remove(&sector);
                                        }
                                    }
                                    None => {
                                        let holds = (1..=writes).find(|&e| {
                                            sector_fill(e, sector, &mut expected);
                                            got == expected
                                        });
                                        return Err(format!(
                                            "LBA {sector} after a power loss holds neither write \
                                             {w} nor an earlier write of it ({earlier:?}) nor \
                                             zeros, but write {holds:?}'s data"
                                        ));
                                    }
                                }
                            }
                            Some(Known::Write(w)) => {
                                sector_fill(*w, first + s, &mut expected);
                                if got != expected {
                                    return Err(format!(
                                        "LBA {} read back other data than write {w} put there",
                                        first + s
                                    ));
                                }
                            }
                            None => {
                                if got.iter().any(|b| *b != 0) {
                                    return Err(format!(
                                        "LBA {} was never written but reads non-zero",
                                        first + s
                                    ));
                                }
                            }
                        }
                    }
                }
                (_, Ok(n)) => return Err(format!("short I/O: {n} of {} bytes", f.len)),
                (op, Err(errno)) => {
                    if !faults_on {
                        return Err(format!("{op:?} failed with errno {errno} without faults"));
                    }
                    if op == Op::Write {
                        for s in first..first + sectors {
                            reverted_in_flight.remove(&s);
                            known.insert(s, Known::Unknown);
                            // Its data may have reached the drive, even its media: a power
                            // loss may take a later write back to it.
                            history.entry(s).or_default().push(f.write);
                        }
                    }
                    failures.push((errno, c.done_ns));
                }
            }
        }
    }
    if !in_flight.is_empty() || sim.requests_in_flight() != 0 {
        return Err("requests left in flight after every completion".into());
    }
    sim.run();
    check_faults(sim.fault_records(), &failures)?;
    let counts = sim.fault_counts().unwrap_or_default();
    if counts.injected != counts.retried + counts.reported {
        return Err(format!("faults not resolved exactly once: {counts:?}"));
    }
    Ok(counts)
}

/// Every fault ended recovered or reported; every failed I/O has a reported fault with its
/// errno at its instant, and every reported fault failed at least one I/O.
fn check_faults(records: &[FaultRecord], failures: &[(i32, u64)]) -> Result<(), String> {
    for r in records {
        match r.outcome {
            FaultOutcome::Pending => {
                return Err(format!(
                    "{:?} fault on command {} never handled",
                    r.kind, r.command
                ))
            }
            FaultOutcome::Retried { at_ns } | FaultOutcome::Reported { at_ns, .. }
                if at_ns < r.injected_ns =>
            {
                return Err(format!("{:?} fault handled before it happened", r.kind))
            }
            FaultOutcome::Reported { errno, at_ns } => {
                if !failures.contains(&(errno, at_ns)) {
                    return Err(format!(
                        "{:?} fault reported errno {errno} at {at_ns} ns but no I/O failed",
                        r.kind
                    ));
                }
            }
            FaultOutcome::Retried { .. } => {}
        }
    }
    for &(errno, at_ns) in failures {
        if errno != ERRNO_ENODATA && errno != ERRNO_EIO {
            return Err(format!("an I/O failed with unexpected errno {errno}"));
        }
        // A device removed by a disconnect fails every I/O from then on with EIO (the device
        // was gone from the disconnect itself; the I/Os queued behind the one in flight may
        // fail before that one's own report).
        let removed_at_ns = records.iter().find_map(|r| match r.outcome {
            FaultOutcome::Reported {
                errno: ERRNO_EIO, ..
            } if r.kind == FaultKind::Disconnect => Some(r.injected_ns),
            _ => None,
        });
        let explained = records
            .iter()
            .any(|r| r.outcome == FaultOutcome::Reported { errno, at_ns })
            || (errno == ERRNO_EIO && removed_at_ns.is_some_and(|t| t <= at_ns));
        if !explained {
            return Err(format!(
                "an I/O failed with errno {errno} at {at_ns} ns, no fault explains it"
            ));
        }
    }
    Ok(())
}

fn check(seed: u64, profiles: &ProfileSet) -> FaultCounts {
    let replay = format!("STORLAB_SWARM_SEED={seed} cargo test -p storlab-sim --test it swarm");
    let outcome =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_seed(seed, profiles)));
    match outcome {
        Ok(Ok(counts)) => counts,
        Ok(Err(why)) => {
            let sc = draw_scenario(seed, profiles);
            panic!(
                "swarm seed {seed} ({} qd{} faults {:?} perturbed {:?}): {why}\nreplay: {replay}",
                sc.stack,
                sc.queue_depth,
                sc.faults,
                sc.perturbed.as_ref().map(|(_, changed)| changed)
            )
        }
        Err(panic) => {
            eprintln!("swarm seed {seed} panicked; replay: {replay}");
            std::panic::resume_unwind(panic)
        }
    }
}

#[test]
fn swarm() {
    let profiles = ProfileSet::embedded();
    if let Ok(seed) = std::env::var("STORLAB_SWARM_SEED") {
        let seed = seed.parse().expect("STORLAB_SWARM_SEED is a number");
        check(seed, &profiles);
        return;
    }
    let seeds = if std::env::var_os("STORLAB_SOAK").is_some() {
        SOAK_SEEDS
    } else {
        SEEDS
    };
    let mut total = FaultCounts::default();
    let mut perturbed = 0u64;
    for seed in 0..seeds {
        perturbed += u64::from(draw_scenario(seed, &profiles).perturbed.is_some());
        let c = check(seed, &profiles);
        total.injected += c.injected;
        total.retried += c.retried;
        total.reported += c.reported;
        total.usb_crc_retries += c.usb_crc_retries;
        total.bot_resets += c.bot_resets;
        total.uas_aborts += c.uas_aborts;
        total.uas_lu_resets += c.uas_lu_resets;
        total.uas_it_nexus_resets += c.uas_it_nexus_resets;
        total.uas_bot_fallbacks += c.uas_bot_fallbacks;
        total.device_resets += c.device_resets;
        total.bridge_resets += c.bridge_resets;
        total.disconnects += c.disconnects;
        total.devices_removed += c.devices_removed;
        total.request_senses += c.request_senses;
        total.read_log_exts += c.read_log_exts;
        total.comresets += c.comresets;
        total.sata_aborted += c.sata_aborted;
        total.power_losses += c.power_losses;
        total.lost_writes += c.lost_writes;
        total.lost_bytes += c.lost_bytes;
        total.not_ready += c.not_ready;
        total.unit_attentions += c.unit_attentions;
    }
    eprintln!("swarm: {seeds} seeds, {perturbed} with perturbed stack keys, {total:?}");
    assert!(perturbed > 0, "no seed perturbed its stack's keys");
    // The seeds exercised every recovery path, not just clean runs.
    for (path, n) in [
        ("retried", total.retried),
        ("reported", total.reported),
        ("usb_crc_retries", total.usb_crc_retries),
        ("bot_resets", total.bot_resets),
        ("uas_aborts", total.uas_aborts),
        ("uas_lu_resets", total.uas_lu_resets),
        ("uas_it_nexus_resets", total.uas_it_nexus_resets),
        ("uas_bot_fallbacks", total.uas_bot_fallbacks),
        ("device_resets", total.device_resets),
        ("bridge_resets", total.bridge_resets),
        ("disconnects", total.disconnects),
        ("devices_removed", total.devices_removed),
        ("request_senses", total.request_senses),
        ("read_log_exts", total.read_log_exts),
        ("comresets", total.comresets),
        ("sata_aborted", total.sata_aborted),
        ("power_losses", total.power_losses),
        ("lost_writes", total.lost_writes),
        ("not_ready", total.not_ready),
        ("unit_attentions", total.unit_attentions),
    ] {
        assert!(n > 0, "no seed exercised {path}: {total:?}");
    }
}

/// The swarm draws faults at all: most seeds run a plan that injects something.
#[test]
fn the_swarm_injects_faults_of_every_kind() {
    let profiles = ProfileSet::embedded();
    let mut kinds = std::collections::BTreeSet::new();
    for seed in 0..60 {
        let sc = draw_scenario(seed, &profiles);
        for kind in [
            "usb_crc",
            "media_error",
            "drop",
            "phase_error",
            "hang",
            "power_loss",
            "bridge_reset",
            "disconnect",
        ] {
            if sc.faults.as_deref().is_some_and(|f| f.contains(kind)) {
                kinds.insert(kind);
            }
        }
    }
    assert_eq!(kinds.len(), 8, "{kinds:?}");
}
