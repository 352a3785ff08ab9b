//! The `psync` engine: `pread`/`pwrite`, synchronous. `submit` carries out the queued requests
//! one after another; `reap` hands back their completions (fio's `ioengine=psync`).

use super::{check_request, reap_too_many, WallClock, NOT_SET_UP};
use crate::buffers::AlignedBuffers;
use crate::target::{discard, OpenTarget, TargetKind};
use crate::{
    Capabilities, EngineError, EngineReport, EngineSetup, IoCompletion, IoDirection, IoEngine,
    IoRequest,
};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

pub struct PsyncEngine {
    file: File,
    kind: TargetKind,
    size_bytes: u64,
    buffers: Option<AlignedBuffers>,
    in_flight: Vec<bool>,
    queued: Vec<IoRequest>,
    done: Vec<IoCompletion>,
    clock: WallClock,
    short_transfers: u64,
    errors: u64,
}

impl PsyncEngine {
    /// An engine on its own descriptor of `target` (one engine per worker).
    pub fn new(target: &OpenTarget) -> Result<Self, EngineError> {
        Ok(PsyncEngine {
            file: target.try_clone_file()?,
            kind: target.kind,
            size_bytes: target.size_bytes,
            buffers: None,
            in_flight: Vec::new(),
            queued: Vec::new(),
            done: Vec::new(),
            clock: WallClock::default(),
            short_transfers: 0,
            errors: 0,
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
        self.buffers = Some(AlignedBuffers::new(
            setup.slots,
            setup.slot_bytes,
            setup.buffer_align_bytes,
        )?);
        let slots = setup.slots as usize;
        self.in_flight = vec![false; slots];
        self.queued = Vec::with_capacity(slots);
        self.done = Vec::with_capacity(slots);
        self.clock.reset();
        Ok(())
    }

    fn buffer(&self, slot: u32) -> &[u8] {
        self.buffers.as_ref().expect(NOT_SET_UP).slot(slot)
    }

    fn buffer_mut(&mut self, slot: u32) -> &mut [u8] {
        self.buffers.as_mut().expect(NOT_SET_UP).slot_mut(slot)
    }

    #[inline]
    fn queue(&mut self, request: IoRequest) -> Result<(), EngineError> {
        let slot_bytes = self.buffers.as_ref().map_or(0, |b| b.slot_bytes());
        check_request(&request, &self.in_flight, slot_bytes)?;
        self.in_flight[request.slot as usize] = true;
        self.queued.push(request);
        Ok(())
    }

    fn submit(&mut self) -> Result<usize, EngineError> {
        let issued = self.queued.len();
        let buffers = self.buffers.as_mut().expect(NOT_SET_UP);
        for request in self.queued.drain(..) {
            let result = match request.direction {
                IoDirection::Trim => discard(
                    &self.file,
                    self.kind,
                    request.offset_bytes,
                    request.len_bytes,
                ),
                direction => {
                    let buf = &mut buffers.slot_mut(request.slot)[..request.len_bytes as usize];
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
        if min > self.done.len() {
            return Err(reap_too_many(min, self.done.len()));
        }
        let reaped = self.done.len();
        for completion in &self.done {
            self.in_flight[completion.slot as usize] = false;
        }
        out.extend_from_slice(&self.done);
        self.done.clear();
        Ok(reaped)
    }

    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    fn wait_until_ns(&mut self, deadline_ns: u64) {
        self.clock.wait_until_ns(deadline_ns);
    }

    fn report(&self) -> EngineReport {
        EngineReport {
            details: vec![
                (
                    "short_transfers".to_string(),
                    self.short_transfers.to_string(),
                ),
                ("errors".to_string(), self.errors.to_string()),
            ],
            sim_json: None,
        }
    }
}
