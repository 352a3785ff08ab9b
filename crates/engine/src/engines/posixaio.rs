//! The `posixaio` engine: POSIX asynchronous I/O (`aio_read`/`aio_write`, completion by
//! `aio_error`/`aio_return`, waiting in `aio_suspend`), fio's `ioengine=posixaio`. On Linux
//! these are glibc's: a pool of user-space threads that each do a `pread`/`pwrite`, so the
//! queue depth is real but every request costs a thread hand-off; it measures what programs
//! using POSIX AIO get, not what the kernel can do (use libaio or io_uring for that). It waits
//! as fio's `fio_posixaio_getevents` does (see `collect_finished`): that pattern decides how
//! often the job's thread sleeps and wakes, which is most of what this engine costs.

use super::{check_request, drop_cached_range, fadvise, reap_too_many, WallClock, NOT_SET_UP};
use crate::buffers::AlignedBuffers;
use crate::device_stats::DeviceReadWindow;
use crate::target::{discard, OpenTarget, TargetKind};
use crate::{
    AccessAdvice, Capabilities, EngineError, EngineReport, EngineSetup, IoCompletion, IoDirection,
    IoEngine, IoRequest,
};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

pub struct PosixAioEngine {
    /// One control block per slot, at a fixed heap address from `setup` on (glibc's threads
    /// write into it while the request is in flight).
    control_blocks: Box<[libc::aiocb]>,
    buffers: Option<AlignedBuffers>,
    file: File,
    /// What trims go through (`OpenTarget::try_clone_trim_file`).
    trim_file: File,
    kind: TargetKind,
    size_bytes: u64,
    in_flight: Vec<bool>,
    /// Requests queued since the last `submit`, syncs among them, in queue order.
    queued: Vec<Queued>,
    /// Per slot: handed to glibc and not yet seen complete.
    issued: Vec<bool>,
    /// How many slots `issued` marks.
    issued_count: usize,
    /// Addresses of the control blocks the next `aio_suspend` waits on: the first
    /// [`SUSPEND_ENTRIES`] still in progress, in the scan's order (fio's unit order), as the last scan found them.
    suspend_list: Vec<usize>,
    /// Finished without glibc (trims, refused requests): handed out by the next `reap`.
    ready: Vec<IoCompletion>,
    clock: WallClock,
    suspend_calls: u64,
    device_reads: Option<DeviceReadWindow>,
}

/// One request between `queue` and `submit`: an I/O, or a sync of the file in a slot.
enum Queued {
    Io(IoRequest),
    Flush(u32, crate::FlushKind),
}

// SAFETY: the control blocks and buffers are owned by the engine (heap, fixed addresses);
// glibc's helper threads write only into the control blocks and buffers of requests in
// flight, which the engine neither moves nor frees before they complete (see `Drop`).
// Moving the engine to another thread moves that ownership; POSIX AIO completion may be
// observed from any thread of the process.
unsafe impl Send for PosixAioEngine {}

/// How many in-progress requests one `aio_suspend` waits on: fio 3.33's `SUSPEND_ENTRIES`
/// (engines/posixaio.c). Waiting on a few requests taken in scan order, rather than on the
/// oldest, lets several finish between two wake-ups of the job's thread, which then collects
/// them all in one scan.
const SUSPEND_ENTRIES: usize = 8;

impl PosixAioEngine {
    /// An engine on its own descriptor of `target`.
    pub fn new(target: &OpenTarget) -> Result<Self, EngineError> {
        Ok(PosixAioEngine {
            control_blocks: Box::new([]),
            buffers: None,
            file: target.try_clone_file()?,
            trim_file: target.try_clone_trim_file()?,
            kind: target.kind,
            size_bytes: target.size_bytes,
            in_flight: Vec::new(),
            queued: Vec::new(),
            issued: Vec::new(),
            issued_count: 0,
            suspend_list: Vec::new(),
            ready: Vec::new(),
            clock: WallClock::default(),
            suspend_calls: 0,
            device_reads: None,
        })
    }

    /// Move every issued request glibc has finished into `out`, scanning the slots from the
    /// last to the first with `aio_error`, and note the first [`SUSPEND_ENTRIES`] still in
    /// progress for `suspend`: fio's `fio_posixaio_getevents`. fio walks `io_u_all` in index
    /// order, and its first I/O takes the unit of the highest index (backend.c `init_io_u`
    /// pushes units 0.. on its freelist, io_u.c pops the top), where storlab's worker takes slot
    /// 0 first: slot `s` is fio's unit `slots - 1 - s`, so the walk goes down. Which of two
    /// requests found finished in one walk is reaped last decides the unit fio's next sync
    /// takes (its logged offset). Returns how many were moved.
    fn collect_finished(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        self.suspend_list.clear();
        if self.issued_count == 0 {
            return 0;
        }
        let mut found = 0;
        let mut done_ns = None;
        for slot in (0..self.issued.len()).rev() {
            if !self.issued[slot] {
                continue;
            }
            let control_block = &mut self.control_blocks[slot];
            // SAFETY: the control block was handed to aio_read/aio_write and not yet reaped.
            let status = unsafe { libc::aio_error(control_block) };
            if status == libc::EINPROGRESS {
                if self.suspend_list.len() < SUSPEND_ENTRIES {
                    self.suspend_list
                        .push(control_block as *const libc::aiocb as usize);
                }
                continue;
            }
            // SAFETY: as above; aio_return is called exactly once per finished request.
            let returned = unsafe { libc::aio_return(control_block) };
            let result = if status == 0 && returned >= 0 {
                // At most the request's u32 length.
                Ok(u32::try_from(returned).unwrap_or(u32::MAX))
            } else if status > 0 {
                Err(status)
            } else {
                Err(io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO))
            };
            let done_ns = *done_ns.get_or_insert_with(|| self.clock.now_ns());
            self.issued[slot] = false;
            self.issued_count -= 1;
            self.in_flight[slot] = false;
            out.push(IoCompletion {
                // Slots are u32 (`EngineSetup::slots`).
                slot: slot as u32,
                result,
                done_ns,
            });
            found += 1;
        }
        found
    }

    /// Hands a sync of the file in `slot` to glibc (`aio_fsync`, as fio's posixaio queues
    /// `fsync`/`fdatasync`); glibc runs a descriptor's requests in the order given, so it
    /// covers every write handed over before it. A refusal completes at the next `reap`.
    fn start_flush(&mut self, slot: u32, kind: crate::FlushKind) {
        let control_block = &mut self.control_blocks[slot as usize];
        control_block.aio_fildes = self.file.as_raw_fd();
        control_block.aio_buf = std::ptr::null_mut();
        control_block.aio_nbytes = 0;
        control_block.aio_offset = 0;
        control_block.aio_reqprio = 0;
        control_block.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        let operation = match kind {
            crate::FlushKind::All => libc::O_SYNC,
            crate::FlushKind::Data => libc::O_DSYNC,
        };
        // SAFETY: the control block stays at a fixed address until the sync is reaped or
        // `Drop` has waited for it; it names no buffer.
        let started = unsafe { libc::aio_fsync(operation, control_block) };
        if started == 0 {
            self.issued[slot as usize] = true;
            self.issued_count += 1;
        } else {
            let errno = io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EAGAIN);
            self.ready.push(IoCompletion {
                slot,
                result: Err(errno),
                done_ns: self.clock.now_ns(),
            });
        }
    }

    /// Block in `aio_suspend` until one of the requests the last `collect_finished` found in
    /// progress finishes (fio passes no timeout when it must reap at least one).
    fn suspend(&mut self) -> Result<(), EngineError> {
        if self.suspend_list.is_empty() {
            return Ok(());
        }
        self.suspend_calls += 1;
        // SAFETY: `suspend_list` holds the addresses (as `const struct aiocb *`, same size as
        // usize) of control blocks in flight; a null timeout waits without limit.
        let waited = unsafe {
            libc::aio_suspend(
                self.suspend_list.as_ptr().cast(),
                self.suspend_list.len() as libc::c_int,
                std::ptr::null(),
            )
        };
        if waited != 0 {
            let err = io::Error::last_os_error();
            if !matches!(err.raw_os_error(), Some(libc::EINTR | libc::EAGAIN)) {
                return Err(EngineError::Io(io::Error::new(
                    err.kind(),
                    format!("aio_suspend: {err}"),
                )));
            }
        }
        Ok(())
    }
}

impl IoEngine for PosixAioEngine {
    fn name(&self) -> &'static str {
        "posixaio"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            queued: true,
            moves_data: true,
            trim: true,
            shared_timeline: false,
            page_cache: true,
        }
    }

    fn target_size_bytes(&self) -> u64 {
        self.size_bytes
    }

    fn setup(&mut self, setup: &EngineSetup) -> Result<(), EngineError> {
        if self.buffers.is_some() {
            return Err(EngineError::Setup("posixaio engine set up twice".into()));
        }
        let slots = setup.slots as usize;
        self.buffers = Some(AlignedBuffers::new(
            setup.slots,
            setup.slot_bytes,
            setup.buffer_align_bytes,
        )?);
        self.control_blocks = (0..slots)
            // SAFETY: an all-zero aiocb is its documented initial state (fields are integers
            // and pointers; SIGEV_NONE is set before use).
            .map(|_| unsafe { std::mem::zeroed::<libc::aiocb>() })
            .collect();
        self.in_flight = vec![false; slots];
        self.queued = Vec::with_capacity(slots);
        self.issued = vec![false; slots];
        self.issued_count = 0;
        self.suspend_list = Vec::with_capacity(SUSPEND_ENTRIES);
        self.ready = Vec::with_capacity(slots);
        self.device_reads = DeviceReadWindow::start(&self.file);
        self.clock.reset();
        Ok(())
    }

    fn flush(&mut self, kind: crate::FlushKind) -> Result<(), EngineError> {
        // The runner drains the queue before a sync, as fio does, so this covers every write
        // completed so far.
        super::flush_file(&self.file, kind)
    }

    fn set_sync_writes(&mut self, kind: Option<crate::FlushKind>) -> Result<(), EngineError> {
        super::sync_writes_by_descriptor(self.name(), &self.file, kind)
    }

    fn advise(
        &mut self,
        advice: AccessAdvice,
        offset_bytes: u64,
        len_bytes: u64,
    ) -> Result<(), EngineError> {
        fadvise(&self.file, advice, offset_bytes, len_bytes)
    }

    fn invalidate(&mut self, offset_bytes: u64, len_bytes: u64) -> Result<(), EngineError> {
        drop_cached_range(&self.file, offset_bytes, len_bytes)
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
        libc::off_t::try_from(request.offset_bytes).map_err(|_| {
            EngineError::InvalidRequest(format!(
                "offset {} is beyond what the kernel addresses",
                request.offset_bytes
            ))
        })?;
        self.in_flight[request.slot as usize] = true;
        self.queued.push(Queued::Io(request));
        Ok(())
    }

    fn queues_flushes(&self) -> bool {
        true
    }

    fn queue_flush(&mut self, slot: u32, kind: crate::FlushKind) -> Result<(), EngineError> {
        super::check_slot_free(slot, &self.in_flight)?;
        self.in_flight[slot as usize] = true;
        self.queued.push(Queued::Flush(slot, kind));
        Ok(())
    }

    fn submit(&mut self) -> Result<usize, EngineError> {
        let issued = self.queued.len();
        for queued in std::mem::take(&mut self.queued) {
            let request = match queued {
                Queued::Io(request) => request,
                Queued::Flush(slot, kind) => {
                    self.start_flush(slot, kind);
                    continue;
                }
            };
            let slot = request.slot;
            let result = match request.direction {
                IoDirection::Trim => Some(discard(
                    &self.trim_file,
                    self.kind,
                    request.offset_bytes,
                    request.len_bytes,
                )),
                direction => {
                    let buffer = self.buffers.as_ref().expect(NOT_SET_UP).slot_ptr(slot);
                    let control_block = &mut self.control_blocks[slot as usize];
                    control_block.aio_fildes = self.file.as_raw_fd();
                    control_block.aio_buf = buffer.cast();
                    control_block.aio_nbytes = request.len_bytes as usize;
                    // Checked to fit in `queue`.
                    control_block.aio_offset = request.offset_bytes as libc::off_t;
                    control_block.aio_reqprio = 0;
                    control_block.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
                    // SAFETY: the control block and the buffer it names stay at fixed addresses
                    // until the request is reaped or `Drop` has waited for it.
                    let started = unsafe {
                        match direction {
                            IoDirection::Read => libc::aio_read(control_block),
                            _ => libc::aio_write(control_block),
                        }
                    };
                    if started == 0 {
                        self.issued[slot as usize] = true;
                        self.issued_count += 1;
                        None
                    } else {
                        Some(Err(io::Error::last_os_error()
                            .raw_os_error()
                            .unwrap_or(libc::EAGAIN)))
                    }
                }
            };
            if let Some(result) = result {
                self.ready.push(IoCompletion {
                    slot,
                    result,
                    done_ns: self.clock.now_ns(),
                });
            }
        }
        Ok(issued)
    }

    fn reap(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> Result<usize, EngineError> {
        let outstanding = self.issued_count + self.ready.len();
        if min > outstanding {
            return Err(reap_too_many(min, outstanding));
        }
        let mut reaped = self.ready.len();
        for completion in self.ready.drain(..) {
            self.in_flight[completion.slot as usize] = false;
            out.push(completion);
        }
        reaped += self.collect_finished(out);
        while reaped < min {
            self.suspend()?;
            reaped += self.collect_finished(out);
        }
        Ok(reaped)
    }

    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    fn wait_until_ns(&mut self, deadline_ns: u64) {
        self.clock.wait_until_ns(deadline_ns);
    }

    fn trim_files_as_fio(&mut self) {
        // BLKDISCARD on a regular file: the kernel's ENOTTY, as fio gets.
        self.kind = crate::target::TargetKind::BlockDevice;
    }
    fn report(&self) -> EngineReport {
        let mut details = vec![("suspend_calls".to_string(), self.suspend_calls.to_string())];
        details.extend(self.device_reads.iter().flat_map(DeviceReadWindow::details));
        EngineReport { details, sim: None }
    }
}

impl Drop for PosixAioEngine {
    fn drop(&mut self) {
        // glibc's threads may still be writing into our buffers and control blocks: wait for
        // every issued request before they are freed; if waiting fails, leak them instead.
        let mut scratch = Vec::with_capacity(self.issued_count);
        while self.issued_count > 0 {
            scratch.clear();
            self.collect_finished(&mut scratch);
            if self.issued_count == 0 {
                break;
            }
            if self.suspend().is_err() {
                std::mem::forget(self.buffers.take());
                std::mem::forget(std::mem::take(&mut self.control_blocks));
                break;
            }
        }
    }
}
