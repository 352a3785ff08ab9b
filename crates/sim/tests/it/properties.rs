//! Property test: random mixes of reads, writes and trims of random sizes at random depth, on
//! every shipped stack, complete exactly once each, in non-decreasing virtual time, with the
//! data a sequential reference model predicts. Each slot owns a disjoint region, so requests in
//! flight never overlap and the reference is exact.

use proptest::prelude::*;
use std::collections::HashMap;
use storlab_sim::{Op, ProfileSet, SimRequest, Simulator, ERRNO_EOPNOTSUPP};

const SECTOR: u64 = 512;
const REGION_BYTES: u64 = 16 << 20;
const SLOT_BYTES: usize = 512 * 1024;

#[derive(Clone, Debug)]
struct Step {
    op: Op,
    sector: u64,
    sectors: u32,
    fill: u8,
}

fn step() -> impl Strategy<Value = Step> {
    (
        0u8..10,
        0u64..(REGION_BYTES / SECTOR - 1024),
        1u32..1024,
        any::<u8>(),
    )
        .prop_map(|(kind, sector, sectors, fill)| Step {
            op: match kind {
                0..=3 => Op::Write,
                4..=8 => Op::Read,
                _ => Op::Trim,
            },
            sector,
            sectors,
            fill,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_sessions_complete_once_with_the_right_data(
        stack_index in 0usize..64,
        depth in 1u32..12,
        seed in any::<u64>(),
        steps in proptest::collection::vec(step(), 1..60),
    ) {
        let profiles = ProfileSet::embedded();
        let stacks = profiles.stacks();
        let stack = &stacks[stack_index % stacks.len()].0;
        let mut sim = Simulator::from_profiles(&profiles, stack, seed).unwrap();
        sim.setup_slots(depth, SLOT_BYTES).unwrap();
        // A host without discard (Linux usb-storage) refuses a trim with EOPNOTSUPP; otherwise
        // direct SATA always trims, and behind a bridge only if its firmware translates UNMAP.
        let host_discards = sim.stack().host.discard;
        let translates_trim =
            host_discards && sim.stack().bridge.as_ref().is_none_or(|b| b.unmap_to_trim);
        // Reference contents, per sector (absent = zeros).
        let mut reference: HashMap<u64, u8> = HashMap::new();
        let mut pending: HashMap<u32, (Step, u64)> = HashMap::new();
        let mut last_done = 0u64;
        let mut completions = 0usize;
        let mut check = |sim: &mut Simulator, pending: &mut HashMap<u32, (Step, u64)>, reference: &HashMap<u64, u8>| {
            let c = sim.pop_completion().expect("a completion");
            assert!(c.done_ns >= last_done, "completions go back in time");
            last_done = c.done_ns;
            let (s, base) = pending.remove(&c.slot).expect("completion for a request in flight");
            if s.op == Op::Trim && !host_discards {
                assert_eq!(c.result, Err(ERRNO_EOPNOTSUPP));
            } else {
                assert_eq!(c.result, Ok(s.sectors * SECTOR as u32));
            }
            if s.op == Op::Read {
                let buf = sim.slot_buffer(c.slot);
                for i in 0..u64::from(s.sectors) {
                    let want = reference.get(&(base + s.sector + i)).copied().unwrap_or(0);
                    let got = buf[(i * SECTOR) as usize];
                    assert_eq!(got, want, "{stack}: sector {} read {got} want {want}", s.sector + i);
                }
            }
            completions += 1;
        };
        for (i, s) in steps.iter().enumerate() {
            let slot = (i as u32) % depth;
            if pending.contains_key(&slot) {
                while pending.contains_key(&slot) {
                    sim.run_until_completions(1);
                    check(&mut sim, &mut pending, &reference);
                }
            }
            let base = u64::from(slot) * (REGION_BYTES / SECTOR);
            let len = s.sectors * SECTOR as u32;
            if s.op == Op::Write {
                sim.slot_buffer_mut(slot)[..len as usize].fill(s.fill);
                for k in 0..u64::from(s.sectors) {
                    reference.insert(base + s.sector + k, s.fill);
                }
            }
            if s.op == Op::Trim && translates_trim {
                for k in 0..u64::from(s.sectors) {
                    reference.remove(&(base + s.sector + k));
                }
            }
            sim.submit(SimRequest { slot, op: s.op, offset_bytes: (base + s.sector) * SECTOR, len_bytes: len }).unwrap();
            pending.insert(slot, (s.clone(), base));
        }
        while !pending.is_empty() {
            sim.run_until_completions(1);
            check(&mut sim, &mut pending, &reference);
        }
        prop_assert_eq!(completions, steps.len());
        prop_assert_eq!(sim.requests_in_flight(), 0);
    }
}
