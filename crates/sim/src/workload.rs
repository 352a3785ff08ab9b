//! A minimal closed-loop workload driver for tests and the speed benchmark: keeps a fixed number
//! of requests outstanding against a `Simulator` (the real runner lives in `storlab-runner`).

use crate::core::Simulator;
use crate::op::Op;
use crate::request::SimRequest;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct ClosedLoop {
    pub op: Op,
    pub block_bytes: u32,
    pub queue_depth: u32,
    /// Random offsets (aligned to the block size) instead of sequential ones.
    pub random: bool,
    /// Offsets stay below this (0 = the whole device).
    pub region_bytes: u64,
    /// Requests to complete.
    pub ios: u64,
    pub seed: u64,
}

/// What it measured, in virtual time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoopResult {
    pub ios: u64,
    pub bytes: u64,
    pub elapsed_ns: u64,
}

impl LoopResult {
    pub fn mb_per_s(&self) -> f64 {
        self.bytes as f64 / self.elapsed_ns.max(1) as f64 * 1e3
    }
    pub fn iops(&self) -> f64 {
        self.ios as f64 / self.elapsed_ns.max(1) as f64 * 1e9
    }
}

impl ClosedLoop {
    /// Run on `sim` (which must have at least `queue_depth` slots of `block_bytes`), starting at
    /// its current time. Write data is a seeded pattern; it is not verified here.
    pub fn run(&self, sim: &mut Simulator) -> LoopResult {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let region = if self.region_bytes == 0 {
            sim.capacity_bytes()
        } else {
            self.region_bytes.min(sim.capacity_bytes())
        };
        let blocks_in_region = (region / u64::from(self.block_bytes)).max(1);
        let start_ns = sim.now_ns();
        let mut next_sequential = 0u64;
        let mut issued = 0u64;
        let mut done = 0u64;
        let mut bytes = 0u64;
        let mut next_offset = |rng: &mut ChaCha8Rng| {
            let block = if self.random {
                rng.next_u64() % blocks_in_region
            } else {
                let b = next_sequential % blocks_in_region;
                next_sequential += 1;
                b
            };
            block * u64::from(self.block_bytes)
        };
        let mut submit = |sim: &mut Simulator, slot: u32, rng: &mut ChaCha8Rng| {
            let offset_bytes = next_offset(rng);
            if self.op == Op::Write {
                let fill = rng.next_u64();
                let buf = sim.slot_buffer_mut(slot);
                buf[..8].copy_from_slice(&fill.to_le_bytes());
            }
            sim.submit(SimRequest {
                slot,
                op: self.op,
                offset_bytes,
                len_bytes: self.block_bytes,
            })
            .expect("slot is free and sized");
        };
        for slot in 0..self
            .queue_depth
            .min(self.ios.try_into().unwrap_or(u32::MAX))
        {
            submit(sim, slot, &mut rng);
            issued += 1;
        }
        while done < self.ios {
            sim.run_until_completions(1);
            let Some(c) = sim.pop_completion() else {
                panic!("simulator stalled with requests outstanding");
            };
            done += 1;
            bytes += u64::from(c.result.expect("request failed"));
            if issued < self.ios {
                submit(sim, c.slot, &mut rng);
                issued += 1;
            }
        }
        LoopResult {
            ios: done,
            bytes,
            elapsed_ns: sim.now_ns() - start_ns,
        }
    }
}
