//! An engine that forwards every call to another and lets an observer see the requests it is
//! given: how tests and tools watch what the runner asks of an engine (offsets a job issues,
//! ranges it drops from the page cache) without a hand-written wrapper that has to forward
//! each trait method, and silently stops forwarding the ones added later.

use crate::{
    AccessAdvice, Capabilities, EngineError, EngineReport, EngineSetup, FlushKind, IoCompletion,
    IoEngine, IoRequest,
};

/// What an [`Observed`] engine shows its observer. Every method has a default that does
/// nothing, so an observer names only what it watches.
pub trait EngineObserver {
    /// A request is about to be queued on the inner engine.
    fn on_queue(&mut self, _request: &IoRequest) {}
    /// The runner asks to drop the cached pages of a range. Returns whether the inner engine
    /// should do it too (an observer standing in for the page cache says no).
    fn on_invalidate(&mut self, _offset_bytes: u64, _len_bytes: u64) -> bool {
        true
    }
}

/// `inner` with `observer` watching: every [`IoEngine`] method is forwarded unchanged.
pub struct Observed<E, O> {
    pub inner: E,
    pub observer: O,
}

impl<E, O> Observed<E, O> {
    pub fn new(inner: E, observer: O) -> Observed<E, O> {
        Observed { inner, observer }
    }
}

impl<E: IoEngine + ?Sized, O: EngineObserver> IoEngine for Observed<Box<E>, O> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    fn target_size_bytes(&self) -> u64 {
        self.inner.target_size_bytes()
    }
    fn setup(&mut self, setup: &EngineSetup) -> Result<(), EngineError> {
        self.inner.setup(setup)
    }
    fn buffer(&self, slot: u32) -> &[u8] {
        self.inner.buffer(slot)
    }
    fn buffer_mut(&mut self, slot: u32) -> &mut [u8] {
        self.inner.buffer_mut(slot)
    }
    fn buffer_head_mut(&mut self, slot: u32, len: usize) -> &mut [u8] {
        self.inner.buffer_head_mut(slot, len)
    }
    fn queue(&mut self, request: IoRequest) -> Result<(), EngineError> {
        self.observer.on_queue(&request);
        self.inner.queue(request)
    }
    fn submit(&mut self) -> Result<usize, EngineError> {
        self.inner.submit()
    }
    fn submits_each_request(&self) -> bool {
        self.inner.submits_each_request()
    }
    fn reap(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> Result<usize, EngineError> {
        self.inner.reap(min, out)
    }
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }
    fn wait_until_ns(&mut self, deadline_ns: u64) {
        self.inner.wait_until_ns(deadline_ns)
    }
    fn advise(
        &mut self,
        advice: AccessAdvice,
        offset_bytes: u64,
        len_bytes: u64,
    ) -> Result<(), EngineError> {
        self.inner.advise(advice, offset_bytes, len_bytes)
    }
    fn invalidate(&mut self, offset_bytes: u64, len_bytes: u64) -> Result<(), EngineError> {
        if self.observer.on_invalidate(offset_bytes, len_bytes) {
            self.inner.invalidate(offset_bytes, len_bytes)
        } else {
            Ok(())
        }
    }
    fn flush(&mut self, kind: FlushKind) -> Result<(), EngineError> {
        self.inner.flush(kind)
    }
    fn set_sync_writes(&mut self, kind: Option<FlushKind>) -> Result<(), EngineError> {
        self.inner.set_sync_writes(kind)
    }
    fn report(&self) -> EngineReport {
        self.inner.report()
    }
    fn take_pcap(&mut self) -> Option<Vec<u8>> {
        self.inner.take_pcap()
    }
    fn trim_files_as_fio(&mut self) {
        self.inner.trim_files_as_fio();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::null::NullEngine;
    use crate::IoDirection;

    /// Offsets queued and ranges invalidated, the latter kept from the inner engine.
    #[derive(Default)]
    struct Log {
        offsets: Vec<u64>,
        invalidated: Vec<(u64, u64)>,
    }

    impl EngineObserver for Log {
        fn on_queue(&mut self, request: &IoRequest) {
            self.offsets.push(request.offset_bytes);
        }
        fn on_invalidate(&mut self, offset_bytes: u64, len_bytes: u64) -> bool {
            self.invalidated.push((offset_bytes, len_bytes));
            false
        }
    }

    #[test]
    fn the_observer_sees_each_request_and_the_inner_engine_still_runs_it() {
        let inner: Box<dyn IoEngine> = Box::new(NullEngine::new(1 << 20));
        let mut engine = Observed::new(inner, Log::default());
        engine
            .setup(&EngineSetup {
                slots: 2,
                slot_bytes: 4096,
                buffer_align_bytes: 4096,
            })
            .unwrap();
        for (slot, offset_bytes) in [(0, 8192), (1, 0)] {
            engine
                .queue(IoRequest {
                    slot,
                    direction: IoDirection::Read,
                    offset_bytes,
                    len_bytes: 4096,
                    ioprio: None,
                })
                .unwrap();
        }
        assert_eq!(engine.submit().unwrap(), 2);
        let mut done = Vec::new();
        assert_eq!(engine.reap(2, &mut done).unwrap(), 2);
        engine.invalidate(0, 4096).unwrap();
        assert_eq!(engine.observer.offsets, [8192, 0]);
        assert_eq!(engine.observer.invalidated, [(0, 4096)]);
        assert_eq!(engine.name(), "null");
    }
}
