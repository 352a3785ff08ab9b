//! The `null` engine: no I/O at all. Every queued request completes at `submit`, so a run on
//! `null` measures storlab's own per-I/O cost (fio's `ioengine=null`).

use super::{Slots, WallClock};
use crate::{
    Capabilities, EngineError, EngineReport, EngineSetup, IoCompletion, IoEngine, IoRequest,
};

/// Size `null` pretends its target has when the job names none: large enough for any region a
/// real job asks for, finite so a sequential pass without a runtime still ends.
pub const NULL_DEFAULT_SIZE_BYTES: u64 = 1 << 40;

pub struct NullEngine {
    size_bytes: u64,
    slots: Slots,
    /// Queued but not yet submitted; they complete at `submit`.
    queued: Vec<IoCompletion>,
    /// Completed at `submit`, waiting for `reap`.
    done: Vec<IoCompletion>,
    clock: WallClock,
    ios: u64,
    /// Flushes asked for (`fsync` and friends).
    flushes: u64,
}

impl NullEngine {
    pub fn new(size_bytes: u64) -> Self {
        NullEngine {
            size_bytes,
            slots: Slots::default(),
            queued: Vec::new(),
            done: Vec::new(),
            clock: WallClock::default(),
            ios: 0,
            flushes: 0,
        }
    }
}

impl IoEngine for NullEngine {
    fn name(&self) -> &'static str {
        "null"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            queued: true,
            moves_data: false,
            trim: true,
            shared_timeline: false,
            page_cache: false,
        }
    }

    fn target_size_bytes(&self) -> u64 {
        self.size_bytes
    }

    fn setup(&mut self, setup: &EngineSetup) -> Result<(), EngineError> {
        self.slots.setup(setup)?;
        let slots = setup.slots as usize;
        // Reserved once so the I/O path never allocates.
        self.queued = Vec::with_capacity(slots);
        self.done = Vec::with_capacity(slots);
        self.clock.reset();
        Ok(())
    }

    fn buffer(&self, slot: u32) -> &[u8] {
        self.slots.buffer(slot)
    }

    fn buffer_mut(&mut self, slot: u32) -> &mut [u8] {
        self.slots.buffer_mut(slot)
    }

    #[inline]
    fn queue(&mut self, request: IoRequest) -> Result<(), EngineError> {
        self.slots.claim(&request)?;
        self.queued.push(IoCompletion {
            slot: request.slot,
            result: Ok(request.len_bytes),
            done_ns: 0,
        });
        Ok(())
    }

    #[inline]
    fn submit(&mut self) -> Result<usize, EngineError> {
        let issued = self.queued.len();
        if issued == 0 {
            return Ok(0);
        }
        // One clock read per batch: everything in it "completes" at the same instant.
        let now_ns = self.clock.now_ns();
        for completion in self.queued.iter_mut() {
            completion.done_ns = now_ns;
        }
        if self.done.is_empty() {
            // The usual case (everything before was reaped): hand the batch over as it is,
            // without `append`'s copy (a `memmove` call per I/O at depth 1).
            std::mem::swap(&mut self.done, &mut self.queued);
        } else {
            self.done.append(&mut self.queued);
        }
        self.ios += issued as u64;
        Ok(issued)
    }

    #[inline]
    fn reap(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> Result<usize, EngineError> {
        self.slots.reap_into(&mut self.done, min, out)
    }

    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    fn wait_until_ns(&mut self, deadline_ns: u64) {
        self.clock.wait_until_ns(deadline_ns);
    }

    /// fio's null engine above depth 1 takes a sync as any request (engines/null.c,
    /// `null_queue`): it completes with its batch, as an I/O does.
    fn queues_flushes(&self) -> bool {
        true
    }

    fn queue_flush(&mut self, slot: u32, _kind: crate::FlushKind) -> Result<(), EngineError> {
        self.slots.claim_for_flush(slot)?;
        self.flushes += 1;
        self.queued.push(IoCompletion {
            slot,
            result: Ok(0),
            done_ns: 0,
        });
        Ok(())
    }

    /// Nothing was written, so nothing is unstable: as fio's null engine, a sync completes at
    /// once. Counted, so a run shows how many the job asked for.
    fn flush(&mut self, _kind: crate::FlushKind) -> Result<(), EngineError> {
        self.flushes += 1;
        Ok(())
    }

    fn report(&self) -> EngineReport {
        EngineReport {
            details: vec![
                ("ios".to_string(), self.ios.to_string()),
                ("flushes".to_string(), self.flushes.to_string()),
            ],
            sim: None,
        }
    }
}
