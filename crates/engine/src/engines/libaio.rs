//! The `libaio` engine: Linux native AIO through its system calls (`io_setup`, `io_submit`,
//! `io_getevents`, `io_destroy`), called directly with `libc::syscall` so that no C library
//! (libaio) is needed to build or run storlab (fio's `ioengine=libaio`).
//!
//! Native AIO is asynchronous only with O_DIRECT: a buffered request completes inside
//! `io_submit`, as with fio. `userspace_reap` (fio's option of the same name) reads completions
//! straight from the AIO completion ring the kernel maps into our address space, as fio's
//! `user_io_getevents` does: no system call when completions are already there; the engine
//! still blocks in `io_getevents` when it must wait for more. Without it, every reap is an
//! `io_getevents` call, as in fio. fio's command priorities (`cmdprio_percentage`,
//! `cmdprio_class`, `cmdprio`, `cmdprio_bssplit`) set `aio_reqprio` with `IOCB_FLAG_IOPRIO` on
//! the requests they pick, as fio's libaio engine does (the runner draws which, as fio).

use super::{check_request, drop_cached_range, fadvise, reap_too_many, WallClock, NOT_SET_UP};
use crate::buffers::AlignedBuffers;
use crate::device_stats::DeviceReadWindow;
use crate::target::{OpenTarget, TargetKind};
use crate::{
    AccessAdvice, Capabilities, EngineError, EngineReport, EngineSetup, IoCompletion, IoDirection,
    IoEngine, IoRequest,
};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, Ordering};

/// `IOCB_CMD_PREAD` and `IOCB_CMD_PWRITE` (linux/aio_abi.h).
const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
/// `IOCB_FLAG_IOPRIO` (linux/aio_abi.h, Linux 5.0+): the kernel takes `aio_reqprio` as the
/// request's I/O priority.
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;
/// The completion ring's header magic (fs/aio.c `AIO_RING_MAGIC`): user-space reaping is only
/// attempted on a ring that carries it.
const AIO_RING_MAGIC: u32 = 0xa10a_10a1;

/// `struct iocb` (linux/aio_abi.h), little-endian field order (`aio_key` before
/// `aio_rw_flags`); 64 bytes.
#[cfg(target_endian = "little")]
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event` (linux/aio_abi.h): `data` is our slot, `res` bytes or −errno.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

/// `struct aio_ring`'s header (fs/aio.c), followed in memory by `nr` `io_event`s. The kernel
/// writes `tail` and reads `head`; a reader in user space advances `head`.
#[repr(C)]
struct AioRingHeader {
    id: u32,
    nr: u32,
    head: u32,
    tail: u32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

/// fio's libaio engine options storlab has.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LibaioOptions {
    /// `userspace_reap`: read completions from the ring without a system call.
    pub userspace_reap: bool,
}

pub struct LibaioEngine {
    /// `aio_context_t`: 0 until `setup`. It is also the ring's address in our memory.
    ctx: libc::c_ulong,
    // Dropped after the context is destroyed (`Drop` destroys it first).
    buffers: Option<AlignedBuffers>,
    file: File,
    /// What trims go through (`OpenTarget::try_clone_trim_file`).
    trim_file: File,
    kind: TargetKind,
    size_bytes: u64,
    options: LibaioOptions,
    /// Requests that carried their own I/O priority (fio's cmdprio picks).
    prioritized_ios: u64,
    /// One control block per slot, at a fixed address from `setup` on.
    iocbs: Vec<Iocb>,
    /// Slots queued since the last `submit`.
    queued: Vec<u32>,
    /// Addresses of the queued control blocks, as `io_submit` takes them (reused).
    submit_addresses: Vec<usize>,
    in_flight: Vec<bool>,
    /// Requests the kernel holds (submitted, not reaped).
    in_kernel: usize,
    /// Trims wait here for `submit`, which carries them out synchronously (as fio does).
    pending_trims: Vec<IoRequest>,
    /// Finished without the kernel's ring (trims, requests `io_submit` refused): next `reap`.
    ready: Vec<IoCompletion>,
    events: Vec<IoEvent>,
    clock: WallClock,
    submit_syscalls: u64,
    getevents_syscalls: u64,
    userspace_reaped: u64,
    device_reads: Option<DeviceReadWindow>,
}

fn syscall_error(what: &str, err: io::Error) -> EngineError {
    EngineError::Io(io::Error::new(err.kind(), format!("{what}: {err}")))
}

impl LibaioEngine {
    /// An engine on its own descriptor of `target`; the AIO context is made in `setup`.
    pub fn new(target: &OpenTarget, options: LibaioOptions) -> Result<Self, EngineError> {
        Ok(LibaioEngine {
            ctx: 0,
            buffers: None,
            file: target.try_clone_file()?,
            trim_file: target.try_clone_trim_file()?,
            kind: target.kind,
            size_bytes: target.size_bytes,
            options,
            prioritized_ios: 0,
            iocbs: Vec::new(),
            queued: Vec::new(),
            submit_addresses: Vec::new(),
            in_flight: Vec::new(),
            in_kernel: 0,
            pending_trims: Vec::new(),
            ready: Vec::new(),
            events: Vec::new(),
            clock: WallClock::default(),
            submit_syscalls: 0,
            getevents_syscalls: 0,
            userspace_reaped: 0,
            device_reads: None,
        })
    }

    fn record(&mut self, event: IoEvent, done_ns: u64, out: &mut Vec<IoCompletion>) {
        let slot = event.data as u32;
        let result = if event.res >= 0 {
            // A request moves at most its slot's u32 length.
            Ok(u32::try_from(event.res).unwrap_or(u32::MAX))
        } else {
            Err(i32::try_from(-event.res).unwrap_or(libc::EIO))
        };
        if let Some(busy) = self.in_flight.get_mut(slot as usize) {
            *busy = false;
        }
        self.in_kernel -= 1;
        out.push(IoCompletion {
            slot,
            result,
            done_ns,
        });
    }

    /// Completions read from the ring in user space, at most `max` (fio's `user_io_getevents`):
    /// `None` when the ring does not carry the expected magic.
    fn reap_from_ring(&mut self, max: usize, out: &mut Vec<IoCompletion>) -> Option<usize> {
        let ring = self.ctx as *mut AioRingHeader;
        // SAFETY: `ctx` is the address of the ring the kernel mapped for this context at
        // `io_setup`; it stays mapped until `io_destroy` (in `Drop`). The header's fields are
        // u32s shared with the kernel, accessed atomically (head, tail) or read once (magic,
        // nr, which the kernel never changes after setup).
        unsafe {
            if std::ptr::read_volatile(&raw const (*ring).magic) != AIO_RING_MAGIC {
                return None;
            }
            let nr = std::ptr::read_volatile(&raw const (*ring).nr);
            let head_ref = AtomicU32::from_ptr(&raw mut (*ring).head);
            let tail_ref = AtomicU32::from_ptr(&raw mut (*ring).tail);
            let events = ring
                .cast::<u8>()
                .add(std::mem::size_of::<AioRingHeader>())
                .cast::<IoEvent>();
            let mut head = head_ref.load(Ordering::Relaxed);
            let mut reaped = 0;
            // The kernel publishes an event before it moves `tail` (smp_wmb in aio_complete).
            let tail = tail_ref.load(Ordering::Acquire);
            let done_ns = if head != tail { self.clock.now_ns() } else { 0 };
            while reaped < max && head != tail && nr > 0 {
                let event = std::ptr::read_volatile(events.add(head as usize));
                self.record(event, done_ns, out);
                head = (head + 1) % nr;
                reaped += 1;
            }
            if reaped > 0 {
                // Hand the slots back to the kernel only after the events were copied out.
                head_ref.store(head, Ordering::Release);
                self.userspace_reaped += reaped as u64;
            }
            Some(reaped)
        }
    }

    /// `io_getevents(min, max)`, blocking until `min` are there; returns how many it took.
    fn getevents(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> Result<usize, EngineError> {
        let max = self.in_kernel.min(self.events.len());
        loop {
            self.getevents_syscalls += 1;
            // SAFETY: `events` holds `max` writable io_events; a null timeout blocks.
            let got = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    max as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            if got < 0 {
                let err = io::Error::last_os_error();
                if err.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(syscall_error("io_getevents", err));
            }
            let got = got as usize;
            let done_ns = self.clock.now_ns();
            for index in 0..got {
                let event = self.events[index];
                self.record(event, done_ns, out);
            }
            return Ok(got);
        }
    }
}

impl IoEngine for LibaioEngine {
    fn name(&self) -> &'static str {
        "libaio"
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
        if self.ctx != 0 {
            return Err(EngineError::Setup("libaio engine set up twice".into()));
        }
        let buffers = AlignedBuffers::new(setup.slots, setup.slot_bytes, setup.buffer_align_bytes)?;
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the new context into `ctx`, which must be 0 beforehand.
        let made = unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                setup.slots as libc::c_uint,
                &mut ctx as *mut libc::c_ulong,
            )
        };
        if made < 0 {
            let err = io::Error::last_os_error();
            return Err(EngineError::Setup(match err.raw_os_error() {
                Some(libc::EAGAIN) => format!(
                    "io_setup for {} requests: {err} — above the system's AIO limit \
                     (/proc/sys/fs/aio-max-nr) or what is left of it; lower iodepth or numjobs",
                    setup.slots
                ),
                Some(libc::ENOSYS) => {
                    format!("Linux native AIO is not available here ({err}): use io_uring")
                }
                _ => format!("io_setup for {} requests: {err}", setup.slots),
            }));
        }
        self.ctx = ctx;
        let slots = setup.slots as usize;
        self.iocbs = vec![Iocb::default(); slots];
        self.queued = Vec::with_capacity(slots);
        self.submit_addresses = Vec::with_capacity(slots);
        self.in_flight = vec![false; slots];
        self.pending_trims = Vec::with_capacity(slots);
        self.ready = Vec::with_capacity(slots);
        self.events = vec![IoEvent::default(); slots];
        self.buffers = Some(buffers);
        self.device_reads = DeviceReadWindow::start(&self.file);
        self.clock.reset();
        Ok(())
    }

    fn flush(&mut self, kind: crate::FlushKind) -> Result<(), EngineError> {
        // Covers every write completed so far; a fio job's sync runs beside the I/O still in
        // flight, as fio's libaio runs it (the runner drains first otherwise).
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
        let buffers = self
            .buffers
            .as_ref()
            .ok_or_else(|| EngineError::InvalidRequest("request queued before setup".into()))?;
        check_request(&request, &self.in_flight, buffers.slot_bytes())?;
        let slot = request.slot;
        self.in_flight[slot as usize] = true;
        let opcode = match request.direction {
            IoDirection::Trim => {
                self.pending_trims.push(request);
                return Ok(());
            }
            IoDirection::Read => IOCB_CMD_PREAD,
            IoDirection::Write => IOCB_CMD_PWRITE,
        };
        let offset = i64::try_from(request.offset_bytes).map_err(|_| {
            EngineError::InvalidRequest(format!(
                "offset {} is beyond what the kernel addresses",
                request.offset_bytes
            ))
        })?;
        // As fio's libaio: only a request cmdprio picked says its priority; the others run at
        // the submitting thread's (`ioprio_set` of the job's `prio`/`prioclass`).
        let (ioprio, flags) = match request.ioprio {
            Some(own) => {
                self.prioritized_ios += 1;
                (own, IOCB_FLAG_IOPRIO)
            }
            None => (0, 0),
        };
        self.iocbs[slot as usize] = Iocb {
            aio_data: u64::from(slot),
            aio_lio_opcode: opcode,
            // An I/O priority is at most `3 << 13 | 7`, within an i16.
            aio_reqprio: ioprio as i16,
            aio_fildes: self.file.as_raw_fd() as u32,
            aio_buf: buffers.slot_ptr(slot) as u64,
            aio_nbytes: u64::from(request.len_bytes),
            aio_offset: offset,
            aio_flags: flags,
            ..Iocb::default()
        };
        self.queued.push(slot);
        Ok(())
    }

    fn submit(&mut self) -> Result<usize, EngineError> {
        let issued = self.queued.len() + self.pending_trims.len();
        self.submit_addresses.clear();
        for &slot in &self.queued {
            self.submit_addresses
                .push(&self.iocbs[slot as usize] as *const Iocb as usize);
        }
        let mut next = 0;
        while next < self.submit_addresses.len() {
            let rest = &self.submit_addresses[next..];
            self.submit_syscalls += 1;
            // SAFETY: `rest` is an array of addresses of our control blocks (as `struct iocb *`,
            // same size as usize); each names a live slot buffer, which stays allocated until
            // its completion is reaped or `Drop` has waited for it.
            let taken = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    rest.len() as libc::c_long,
                    rest.as_ptr(),
                )
            };
            if taken > 0 {
                let taken = taken as usize;
                self.in_kernel += taken;
                next += taken;
                continue;
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => return Err(syscall_error("io_submit", err)),
                // The first control block was refused (EINVAL for a misaligned O_DIRECT
                // request, EBADF...): that request failed; go on with the rest.
                errno => {
                    let slot = self.queued[next];
                    self.ready.push(IoCompletion {
                        slot,
                        result: Err(errno.unwrap_or(libc::EIO)),
                        done_ns: self.clock.now_ns(),
                    });
                    next += 1;
                }
            }
        }
        self.queued.clear();
        super::run_trims_now(
            &mut self.pending_trims,
            &self.trim_file,
            self.kind,
            &self.clock,
            &mut self.ready,
        );
        Ok(issued)
    }

    fn submits_each_request(&self) -> bool {
        // The device (or the loop driver's worker) serves requests while the runner handles
        // completions: each freed slot goes back to it at once, as fio's default does.
        true
    }

    fn reap(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> Result<usize, EngineError> {
        let outstanding = self.in_kernel + self.ready.len();
        if min > outstanding {
            return Err(reap_too_many(min, outstanding));
        }
        let mut reaped = self.ready.len();
        for completion in self.ready.drain(..) {
            self.in_flight[completion.slot as usize] = false;
            out.push(completion);
        }
        if self.in_kernel == 0 {
            return Ok(reaped);
        }
        if self.options.userspace_reap {
            if let Some(from_ring) = self.reap_from_ring(self.in_kernel, out) {
                reaped += from_ring;
                while reaped < min {
                    reaped += self.getevents(min - reaped, out)?;
                }
                return Ok(reaped);
            }
        }
        // As fio: one io_getevents per reap, non-blocking when nothing is required.
        if reaped < min || reaped == 0 {
            reaped += self.getevents(min.saturating_sub(reaped), out)?;
        }
        while reaped < min {
            reaped += self.getevents(min - reaped, out)?;
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
        let mut details = vec![
            (
                "submit_syscalls".to_string(),
                self.submit_syscalls.to_string(),
            ),
            (
                "getevents_syscalls".to_string(),
                self.getevents_syscalls.to_string(),
            ),
            (
                "userspace_reaped".to_string(),
                self.userspace_reaped.to_string(),
            ),
        ];
        if self.prioritized_ios > 0 {
            details.push((
                "prioritized_ios".to_string(),
                self.prioritized_ios.to_string(),
            ));
        }
        details.extend(self.device_reads.iter().flat_map(DeviceReadWindow::details));
        EngineReport { details, sim: None }
    }
}

impl Drop for LibaioEngine {
    fn drop(&mut self) {
        if self.ctx == 0 {
            return;
        }
        // The kernel may still be writing into our buffers: wait for every request it holds
        // before they are freed. If waiting fails, leak the buffers rather than let the kernel
        // scribble on freed memory.
        let mut scratch = Vec::with_capacity(self.in_kernel);
        while self.in_kernel > 0 {
            scratch.clear();
            if self.getevents(self.in_kernel, &mut scratch).is_err() {
                std::mem::forget(self.buffers.take());
                break;
            }
        }
        // SAFETY: destroys the context made in `setup`, once; its ring mapping goes with it.
        unsafe {
            libc::syscall(libc::SYS_io_destroy, self.ctx);
        }
    }
}
