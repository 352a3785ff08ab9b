//! Helpers shared by the engine integration tests: a queue-depth-bounded driver, deterministic
//! data, and the "external tool missing" rule (fail under CI, skip with a message otherwise).

use std::collections::HashMap;
use storlab_engine::{EngineSetup, IoCompletion, IoDirection, IoEngine, IoRequest};

pub const BLOCK_BYTES: u32 = 4096;

/// One I/O a test wants done.
#[derive(Clone, Copy, Debug)]
pub struct Io {
    pub direction: IoDirection,
    pub offset_bytes: u64,
    pub len_bytes: u32,
}

/// SplitMix64: a tiny seeded generator so tests need no RNG crate and replay exactly.
pub struct TestRng(u64);

impl TestRng {
    pub fn new(seed: u64) -> Self {
        TestRng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// `count` distinct numbers below `bound`, in random order.
    pub fn distinct_below(&mut self, bound: u64, count: usize) -> Vec<u64> {
        let mut all: Vec<u64> = (0..bound).collect();
        for i in (1..all.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            all.swap(i, j);
        }
        all.truncate(count);
        all
    }
}

/// The bytes a test writes at `offset_bytes`: unique per offset and seed.
pub fn expected_bytes(buf: &mut [u8], offset_bytes: u64, seed: u64) {
    let mut rng = TestRng::new(offset_bytes ^ seed.rotate_left(17));
    for chunk in buf.chunks_mut(8) {
        let word = rng.next_u64().to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
}

/// Queue one `direction` request of `BLOCK_BYTES` in each of `slots`, slot `s` at block `s`.
pub fn queue_one_per_slot(engine: &mut dyn IoEngine, slots: u32, direction: IoDirection) {
    for slot in 0..slots {
        engine
            .queue(IoRequest {
                slot,
                direction,
                offset_bytes: u64::from(slot) * u64::from(BLOCK_BYTES),
                len_bytes: BLOCK_BYTES,
                ioprio: None,
            })
            .unwrap();
    }
}

pub fn setup(engine: &mut dyn IoEngine, slots: u32, slot_bytes: u32) {
    engine
        .setup(&EngineSetup {
            slots,
            slot_bytes: slot_bytes as usize,
            buffer_align_bytes: BLOCK_BYTES as usize,
        })
        .expect("engine setup");
}

/// Run `ios` through `engine` keeping up to `queue_depth` outstanding. Write buffers are
/// filled with `expected_bytes(offset, seed)`; `check` sees each completion with the slot's
/// buffer. Alternates blocking and non-blocking reaps so both paths run.
pub fn drive(
    engine: &mut dyn IoEngine,
    queue_depth: u32,
    ios: &[Io],
    seed: u64,
    mut check: impl FnMut(&Io, &IoCompletion, &[u8]),
) {
    let mut free_slots: Vec<u32> = (0..queue_depth).rev().collect();
    let mut slot_to_io: HashMap<u32, usize> = HashMap::new();
    let mut next = 0;
    let mut completions = Vec::with_capacity(queue_depth as usize);
    let mut round = 0u64;
    while next < ios.len() || !slot_to_io.is_empty() {
        while next < ios.len() {
            let Some(slot) = free_slots.pop() else { break };
            let io = ios[next];
            if io.direction == IoDirection::Write {
                let buf = &mut engine.buffer_mut(slot)[..io.len_bytes as usize];
                expected_bytes(buf, io.offset_bytes, seed);
            }
            engine
                .queue(IoRequest {
                    slot,
                    direction: io.direction,
                    offset_bytes: io.offset_bytes,
                    len_bytes: io.len_bytes,
                    ioprio: None,
                })
                .expect("queue");
            slot_to_io.insert(slot, next);
            next += 1;
        }
        engine.submit().expect("submit");
        round += 1;
        let min = usize::from(!round.is_multiple_of(3));
        completions.clear();
        let reaped = engine.reap(min, &mut completions).expect("reap");
        assert_eq!(reaped, completions.len());
        assert!(reaped >= min);
        for completion in &completions {
            let index = slot_to_io
                .remove(&completion.slot)
                .expect("completion for a slot that was not in flight");
            check(&ios[index], completion, engine.buffer(completion.slot));
            free_slots.push(completion.slot);
        }
    }
}

/// Writes to `blocks` distinct random blocks, then reads them all back in another random
/// order, checking every byte. Returns the number of I/Os done.
pub fn write_then_read_back(
    engine: &mut dyn IoEngine,
    queue_depth: u32,
    region_bytes: u64,
    blocks: usize,
    seed: u64,
) -> usize {
    setup(engine, queue_depth, BLOCK_BYTES);
    let mut rng = TestRng::new(seed);
    let offsets: Vec<u64> = rng
        .distinct_below(region_bytes / u64::from(BLOCK_BYTES), blocks)
        .into_iter()
        .map(|block| block * u64::from(BLOCK_BYTES))
        .collect();
    let writes: Vec<Io> = offsets
        .iter()
        .map(|&offset_bytes| Io {
            direction: IoDirection::Write,
            offset_bytes,
            len_bytes: BLOCK_BYTES,
        })
        .collect();
    drive(engine, queue_depth, &writes, seed, |_, completion, _| {
        assert_eq!(completion.result, Ok(BLOCK_BYTES), "write {completion:?}");
    });
    let mut reads: Vec<Io> = writes
        .iter()
        .map(|io| Io {
            direction: IoDirection::Read,
            ..*io
        })
        .collect();
    reads.reverse();
    let mut expected = vec![0u8; BLOCK_BYTES as usize];
    let mut last_done_ns = 0;
    drive(engine, queue_depth, &reads, seed, |io, completion, buf| {
        assert_eq!(completion.result, Ok(BLOCK_BYTES), "read {completion:?}");
        expected_bytes(&mut expected, io.offset_bytes, seed);
        assert!(
            buf[..BLOCK_BYTES as usize] == expected[..],
            "data read at {} differs from what was written",
            io.offset_bytes
        );
        assert!(completion.done_ns >= last_done_ns, "engine clock went back");
        last_done_ns = completion.done_ns;
    });
    writes.len() + reads.len()
}

/// The preamble's rule for tests needing an external tool or privilege: fail under CI,
/// otherwise print why the test is skipped. Returns true when the test should go on.
pub fn tool_available(available: bool, why_missing: &str) -> bool {
    if available {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("required tool missing under CI: {why_missing}");
    }
    eprintln!("skipped: {why_missing}");
    false
}
