//! The `psync` engine: `pread`/`pwrite`, synchronous. `submit` carries out the queued requests
//! one after another; `reap` hands back their completions (fio's `ioengine=psync`).

use super::{drop_cached_range, fadvise, Slots, WallClock};
use crate::device_stats::DeviceReadWindow;
use crate::target::{discard, OpenTarget, TargetKind};
use crate::{
    AccessAdvice, Capabilities, EngineError, EngineReport, EngineSetup, IoCompletion, IoDirection,
    IoEngine, IoRequest,
};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

pub struct PsyncEngine {
    file: File,
    /// What trims go through (`OpenTarget::try_clone_trim_file`).
    trim_file: File,
    kind: TargetKind,
    size_bytes: u64,
    slots: Slots,
    queued: Vec<IoRequest>,
    done: Vec<IoCompletion>,
    clock: WallClock,
    short_transfers: u64,
    errors: u64,
    /// What the device under the target read from `setup` on, when it can be known.
    device_reads: Option<DeviceReadWindow>,
}

impl PsyncEngine {
    /// An engine on its own descriptor of `target` (one engine per worker).
    pub fn new(target: &OpenTarget) -> Result<Self, EngineError> {
        Ok(PsyncEngine {
            file: target.try_clone_file()?,
            trim_file: target.try_clone_trim_file()?,
            kind: target.kind,
            size_bytes: target.size_bytes,
            slots: Slots::default(),
            queued: Vec::new(),
            done: Vec::new(),
            clock: WallClock::default(),
            short_transfers: 0,
            errors: 0,
            device_reads: None,
        })
    }
}

/// Transfer the whole request unless the file ends (reads) or the device stops taking data
/// (writes): the kernel may return less than asked (a signal, a read crossing EOF), and a
/// short count is only reported when a retry cannot get more. Errors are reported as errno,
/// even after partial progress, because the caller must know the request failed.
fn transfer(
    file: &File,
    direction: IoDirection,
    buf: &mut [u8],
    offset_bytes: u64,
) -> Result<u32, i32> {
    let mut done = 0usize;
    while done < buf.len() {
        let at = offset_bytes + done as u64;
        let step = match direction {
            IoDirection::Read => file.read_at(&mut buf[done..], at),
            _ => file.write_at(&buf[done..], at),
        };
        match step {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err.raw_os_error().unwrap_or(libc::EIO)),
        }
    }
    // `done` ≤ buf.len() ≤ the request's u32 length.
    Ok(done as u32)
}

impl IoEngine for PsyncEngine {
    fn name(&self) -> &'static str {
        "psync"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            queued: false,
            moves_data: true,
            trim: true,
            shared_timeline: false,
        }
    }

    fn target_size_bytes(&self) -> u64 {
        self.size_bytes
    }

    fn setup(&mut self, setup: &EngineSetup) -> Result<(), EngineError> {
        self.slots.setup(setup)?;
        let slots = setup.slots as usize;
        self.queued = Vec::with_capacity(slots);
        self.done = Vec::with_capacity(slots);
        self.device_reads = DeviceReadWindow::start(&self.file);
        self.clock.reset();
        Ok(())
    }

    fn advise(
        &mut self,
        advice: AccessAdvice,
        offset_bytes: u64,
        len_bytes: u64,
    ) -> Result<(), EngineError> {
        fadvise(&self.file, advice, offset_bytes, len_bytes)
    }

    fn flush(&mut self, kind: crate::FlushKind) -> Result<(), EngineError> {
        super::flush_file(&self.file, kind)
    }

    fn invalidate(&mut self, offset_bytes: u64, len_bytes: u64) -> Result<(), EngineError> {
        drop_cached_range(&self.file, offset_bytes, len_bytes)
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
        self.queued.push(request);
        Ok(())
    }

    fn submit(&mut self) -> Result<usize, EngineError> {
        let issued = self.queued.len();
        for request in self.queued.drain(..) {
            let result = match request.direction {
                IoDirection::Trim => discard(
                    &self.trim_file,
                    self.kind,
                    request.offset_bytes,
                    request.len_bytes,
                ),
                direction => {
                    let buf =
                        &mut self.slots.buffer_mut(request.slot)[..request.len_bytes as usize];
                    transfer(&self.file, direction, buf, request.offset_bytes)
                }
            };
            match result {
                Ok(n) if n < request.len_bytes => self.short_transfers += 1,
                Ok(_) => {}
                Err(_) => self.errors += 1,
            }
            self.done.push(IoCompletion {
                slot: request.slot,
                result,
                done_ns: self.clock.now_ns(),
            });
        }
        Ok(issued)
    }

    fn reap(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> Result<usize, EngineError> {
        self.slots.reap_into(&mut self.done, min, out)
    }

    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    fn wait_until_ns(&mut self, deadline_ns: u64) {
        self.clock.wait_until_ns(deadline_ns);
    }

    fn report(&self) -> EngineReport {
        let mut details = vec![
            (
                "short_transfers".to_string(),
                self.short_transfers.to_string(),
            ),
            ("errors".to_string(), self.errors.to_string()),
        ];
        details.extend(self.device_reads.iter().flat_map(DeviceReadWindow::details));
        EngineReport {
            details,
            sim_json: None,
        }
    }
}
