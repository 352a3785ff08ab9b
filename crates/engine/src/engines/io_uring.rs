//! The `io_uring` engine: Linux io_uring with a registered file and registered buffers,
//! one `io_uring_enter` per submitted batch and completions drained from the shared ring
//! without a syscall whenever some are already there (fio's `ioengine=io_uring` with
//! `fixedbufs` and `registerfiles`).
//!
//! Setup tries the cheapest ring first and falls back when the kernel says EINVAL:
//! SINGLE_ISSUER + DEFER_TASKRUN (6.1+: completions are processed only when we ask, on our
//! thread) → COOP_TASKRUN (5.19+: no IPI to interrupt us for task work) → plain. Registered
//! buffers fall back to plain `Read`/`Write` when the kernel refuses to pin them (ENOMEM under a
//! low RLIMIT_MEMLOCK on kernels before 5.12). What was used is in `report()`.
//!
//! fio's io_uring options, with fio's meaning: `hipri` → IORING_SETUP_IOPOLL (completions are
//! polled for, so reaping always enters the kernel), `sqthread_poll` → IORING_SETUP_SQPOLL (a
//! kernel thread submits; we enter only to wake it; `sqthread_poll_cpu` binds it to a CPU,
//! IORING_SETUP_SQ_AFF), `nonvectored=0` → READV/WRITEV with one iovec, `nowait` →
//! RWF_NOWAIT; every read and write carries the job's `prio`/`prioclass` in its SQE (as fio's: a
//! `sqthread_poll` thread does not inherit the submitter's `ioprio_set`), or the request's own
//! priority when fio's cmdprio family gave it one (the runner draws which, as fio).
//! `fixedbufs`/`registerfiles` given explicitly are required (setup fails without them) or,
//! as `=0`, turned off; unset, storlab registers both when the kernel allows, which fio only
//! does when asked.

use super::{check_request, drop_cached_range, fadvise, reap_too_many, WallClock, NOT_SET_UP};
use crate::buffers::AlignedBuffers;
use crate::device_stats::DeviceReadWindow;
use crate::target::{OpenTarget, TargetKind};
use crate::{
    AccessAdvice, Capabilities, EngineError, EngineReport, EngineSetup, IoCompletion, IoDirection,
    IoEngine, IoRequest,
};
use io_uring::{opcode, squeue, types, IoUring};
use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

/// Kernel limit on submission queue entries (IORING_MAX_ENTRIES).
pub const MAX_RING_ENTRIES: u32 = 32768;
/// Kernel limit on registered buffers (IORING_MAX_REG_BUFFERS); buf_index is also a u16.
pub const MAX_REGISTERED_BUFFERS: u32 = 1 << 14;
/// Index of our one file in the registered file table.
const FIXED_FILE_INDEX: i32 = 0;
/// Kernel default SQPOLL idle time is used (`sq_thread_idle = 0` → one second), as fio does.
const SQPOLL_IDLE_DEFAULT_MS: u32 = 0;

/// How the ring was set up, from most to least capable. Each level falls back to the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RingSetup {
    Plain,
    CoopTaskrun,
    SingleIssuerDeferTaskrun,
}

impl RingSetup {
    pub fn as_str(self) -> &'static str {
        match self {
            RingSetup::SingleIssuerDeferTaskrun => "single_issuer+defer_taskrun",
            RingSetup::CoopTaskrun => "coop_taskrun",
            RingSetup::Plain => "plain",
        }
    }

    fn fallback(self) -> Option<RingSetup> {
        match self {
            RingSetup::SingleIssuerDeferTaskrun => Some(RingSetup::CoopTaskrun),
            RingSetup::CoopTaskrun => Some(RingSetup::Plain),
            RingSetup::Plain => None,
        }
    }
}

/// Knobs that force a fallback level (to test them, or to compare their cost).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoUringOptions {
    /// The most capable setup to try; lower levels are tried on EINVAL.
    pub best_setup: RingSetup,
    /// Register the slot buffers (`ReadFixed`/`WriteFixed`); if false use `Read`/`Write`.
    pub register_buffers: bool,
    /// Register the target file (fixed file index); if false pass the plain descriptor.
    pub register_file: bool,
    /// Fail setup when the buffers cannot be registered (fio's `fixedbufs` given).
    pub require_registered_buffers: bool,
    /// Fail setup when the file cannot be registered (fio's `registerfiles` given).
    pub require_registered_file: bool,
    /// `hipri`: IORING_SETUP_IOPOLL.
    pub iopoll: bool,
    /// `sqthread_poll`: IORING_SETUP_SQPOLL.
    pub sqpoll: bool,
    /// `nonvectored=0`: READV/WRITEV instead of READ/WRITE.
    pub vectored: bool,
    /// `nowait`: RWF_NOWAIT on every read and write.
    pub nowait: bool,
    /// The job's `prio`/`prioclass` as an ioprio value (0: none), in every read's and write's
    /// SQE unless the request carries its own (fio's `sqe->ioprio = td->ioprio`).
    pub default_ioprio: u16,
    /// `sqthread_poll_cpu`: the CPU of the SQPOLL thread (IORING_SETUP_SQ_AFF).
    pub sqpoll_cpu: Option<u32>,
}

impl Default for IoUringOptions {
    fn default() -> Self {
        IoUringOptions {
            best_setup: RingSetup::SingleIssuerDeferTaskrun,
            register_buffers: true,
            register_file: true,
            require_registered_buffers: false,
            require_registered_file: false,
            iopoll: false,
            sqpoll: false,
            vectored: false,
            nowait: false,
            default_ioprio: 0,
            sqpoll_cpu: None,
        }
    }
}

/// The slots' iovecs. They point into the engine's own buffers, so they move between threads
/// with the engine like the buffers do.
struct SlotIovecs(Vec<libc::iovec>);

// SAFETY: each iovec addresses memory of the `AlignedBuffers` the same engine owns (itself
// `Send`); the vector is only read or written through `&mut IoUringEngine`.
unsafe impl Send for SlotIovecs {}

pub struct IoUringEngine {
    // Field order matters: the ring (which may still reference the buffers) drops first.
    ring: Option<IoUring>,
    buffers: Option<AlignedBuffers>,
    file: File,
    /// What trims go through (`OpenTarget::try_clone_trim_file`).
    trim_file: File,
    kind: TargetKind,
    size_bytes: u64,
    options: IoUringOptions,
    /// Set when the ring was created disabled (single issuer): it is enabled by the first
    /// `submit`, so the thread that does the I/O becomes the ring's only submitter even when
    /// the engine was set up on another thread.
    needs_enable: bool,
    setup_used: Option<RingSetup>,
    setup_notes: Vec<String>,
    fixed_buffers: bool,
    buffers_note: String,
    /// Descriptor value and SQE flag for our file: index 0 + FIXED_FILE, or the raw fd.
    sqe_fd: i32,
    sqe_flags: squeue::Flags,
    in_flight: Vec<bool>,
    /// One iovec per slot for READV/WRITEV (`nonvectored=0`), at fixed addresses from setup.
    iovecs: SlotIovecs,
    /// Requests that carried their own I/O priority (fio's cmdprio picks).
    prioritized_ios: u64,
    /// Requests in the ring (queued or submitted) whose completion has not been reaped.
    in_ring: usize,
    queued_since_submit: usize,
    /// Trims wait here for `submit`, which carries them out synchronously.
    pending_trims: Vec<IoRequest>,
    /// Finished trims, handed out by the next `reap`.
    ready: Vec<IoCompletion>,
    clock: WallClock,
    submit_syscalls: u64,
    wait_syscalls: u64,
    /// What the device under the target read from `setup` on, when it can be known.
    device_reads: Option<DeviceReadWindow>,
}

impl IoUringEngine {
    /// An engine on its own descriptor of `target`. The ring is built in `setup`, once the
    /// number of slots is known.
    pub fn new(target: &OpenTarget, options: IoUringOptions) -> Result<Self, EngineError> {
        Ok(IoUringEngine {
            ring: None,
            buffers: None,
            file: target.try_clone_file()?,
            trim_file: target.try_clone_trim_file()?,
            kind: target.kind,
            size_bytes: target.size_bytes,
            options,
            needs_enable: false,
            setup_used: None,
            setup_notes: Vec::new(),
            fixed_buffers: false,
            buffers_note: String::new(),
            sqe_fd: -1,
            sqe_flags: squeue::Flags::empty(),
            in_flight: Vec::new(),
            iovecs: SlotIovecs(Vec::new()),
            prioritized_ios: 0,
            in_ring: 0,
            queued_since_submit: 0,
            pending_trims: Vec::new(),
            ready: Vec::new(),
            clock: WallClock::default(),
            submit_syscalls: 0,
            wait_syscalls: 0,
            device_reads: None,
        })
    }

    /// The ring setup actually in use (after fallbacks); `None` before `setup`.
    pub fn ring_setup(&self) -> Option<RingSetup> {
        self.setup_used
    }

    /// Whether `ReadFixed`/`WriteFixed` on registered buffers are in use.
    pub fn uses_registered_buffers(&self) -> bool {
        self.fixed_buffers
    }

    fn build_ring(&mut self, entries: u32) -> Result<IoUring, EngineError> {
        let mut level = self.options.best_setup;
        loop {
            let mut builder = IoUring::builder();
            match level {
                RingSetup::SingleIssuerDeferTaskrun => {
                    builder
                        .setup_single_issuer()
                        .setup_defer_taskrun()
                        .setup_taskrun_flag()
                        .setup_r_disabled();
                }
                RingSetup::CoopTaskrun => {
                    builder.setup_coop_taskrun().setup_taskrun_flag();
                }
                RingSetup::Plain => {}
            }
            if self.options.iopoll {
                builder.setup_iopoll();
            }
            if self.options.sqpoll {
                builder.setup_sqpoll(SQPOLL_IDLE_DEFAULT_MS);
                if let Some(cpu) = self.options.sqpoll_cpu {
                    builder.setup_sqpoll_cpu(cpu);
                }
            }
            match builder.build(entries) {
                Ok(ring) => {
                    self.setup_used = Some(level);
                    self.needs_enable = level == RingSetup::SingleIssuerDeferTaskrun;
                    return Ok(ring);
                }
                Err(err) if err.raw_os_error() == Some(libc::EINVAL) => {
                    self.setup_notes
                        .push(format!("{} refused (EINVAL)", level.as_str()));
                    match level.fallback() {
                        Some(next) => level = next,
                        None => {
                            return Err(EngineError::Setup(format!(
                                "io_uring_setup with {entries} entries failed: {err}"
                            )))
                        }
                    }
                }
                Err(err) => {
                    return Err(EngineError::Setup(match err.raw_os_error() {
                        Some(libc::ENOSYS) | Some(libc::EPERM) => format!(
                            "io_uring is not available here ({err}; the kernel lacks it or \
                             sysctl kernel.io_uring_disabled forbids it): use the psync engine"
                        ),
                        _ => format!("io_uring_setup with {entries} entries failed: {err}"),
                    }))
                }
            }
        }
    }

    fn register_buffers(
        &mut self,
        ring: &IoUring,
        buffers: &AlignedBuffers,
    ) -> Result<(), EngineError> {
        self.try_register_buffers(ring, buffers);
        if self.options.require_registered_buffers && !self.fixed_buffers {
            return Err(EngineError::Setup(format!(
                "fixedbufs: the buffers could not be registered: {}",
                self.buffers_note
            )));
        }
        Ok(())
    }

    fn try_register_buffers(&mut self, ring: &IoUring, buffers: &AlignedBuffers) {
        self.fixed_buffers = false;
        if !self.options.register_buffers {
            self.buffers_note = "unregistered (disabled by option)".into();
            return;
        }
        if buffers.slots() > MAX_REGISTERED_BUFFERS {
            self.buffers_note = format!(
                "unregistered ({} slots exceed the kernel's {MAX_REGISTERED_BUFFERS} registered \
                 buffers)",
                buffers.slots()
            );
            return;
        }
        let iovecs = buffers.iovecs();
        // SAFETY: every iovec points into `buffers`, which lives in `self.buffers` until after
        // the ring is dropped (field order, and `Drop` waits for in-flight requests).
        match unsafe { ring.submitter().register_buffers(&iovecs) } {
            Ok(()) => {
                self.fixed_buffers = true;
                self.buffers_note = "registered".into();
            }
            Err(err) => {
                let why = if err.raw_os_error() == Some(libc::ENOMEM) {
                    " — RLIMIT_MEMLOCK too low to pin them; raise `ulimit -l`"
                } else {
                    ""
                };
                self.buffers_note = format!("unregistered (register_buffers: {err}{why})");
            }
        }
    }

    /// Move every completion the kernel has posted into `out` (no syscall).
    #[inline]
    fn drain_completions(&mut self, out: &mut Vec<IoCompletion>) -> usize {
        let ring = self.ring.as_mut().expect(NOT_SET_UP);
        let mut completions = ring.completion();
        if completions.is_empty() {
            return 0;
        }
        // One clock read per drained batch: these were all seen at the same moment.
        let done_ns = self.clock.now_ns();
        let mut drained = 0;
        for cqe in &mut completions {
            let slot = cqe.user_data() as u32;
            let res = cqe.result();
            let result = if res >= 0 { Ok(res as u32) } else { Err(-res) };
            if let Some(busy) = self.in_flight.get_mut(slot as usize) {
                *busy = false;
            }
            out.push(IoCompletion {
                slot,
                result,
                done_ns,
            });
            drained += 1;
        }
        self.in_ring -= drained;
        drained
    }

    /// Push `entry`, the request of `slot`, onto the submission queue.
    ///
    /// # Safety
    /// Whatever memory `entry` points at stays valid until its completion is reaped (or
    /// `Drop` has waited for the kernel), and `slot` is free.
    unsafe fn push_entry(&mut self, entry: &squeue::Entry, slot: u32) -> Result<(), EngineError> {
        let ring = self.ring.as_mut().expect(NOT_SET_UP);
        // The ring has `slots` or more entries and at most `slots` requests are in it, so
        // without SQPOLL the push cannot find the queue full. With SQPOLL the kernel's thread
        // publishes the queue's head only after it has issued a whole batch, and a request of
        // that batch can complete first: the queue can still look full for a moment after its
        // slot came back, so wait for the thread to free an entry (IORING_ENTER_SQ_WAIT), as
        // the kernel documents for SQPOLL rings.
        // SAFETY: the caller keeps what the entry points at alive (this function's contract).
        let mut pushed = unsafe { ring.submission().push(entry) };
        while pushed.is_err() && self.options.sqpoll {
            ring.submitter()
                .squeue_wait()
                .map_err(|err| enter_error("wait for a submission entry", err))?;
            // SAFETY: as above; the entry is the same.
            pushed = unsafe { ring.submission().push(entry) };
        }
        pushed.map_err(|_| EngineError::InvalidRequest("io_uring submission queue full".into()))?;
        self.in_flight[slot as usize] = true;
        self.in_ring += 1;
        self.queued_since_submit += 1;
        Ok(())
    }

    fn enable_if_needed(&mut self) -> Result<(), EngineError> {
        if self.needs_enable {
            let ring = self.ring.as_ref().expect(NOT_SET_UP);
            ring.submitter()
                .register_enable_rings()
                .map_err(|err| EngineError::Setup(format!("enabling the io_uring: {err}")))?;
            self.needs_enable = false;
        }
        Ok(())
    }
}

fn enter_error(what: &str, err: io::Error) -> EngineError {
    if err.raw_os_error() == Some(libc::EEXIST) {
        EngineError::Setup(format!(
            "io_uring {what}: {err} — a single-issuer ring must be driven by one thread; keep \
             each io_uring engine on the thread that first submitted on it"
        ))
    } else {
        EngineError::Io(io::Error::new(
            err.kind(),
            format!("io_uring {what}: {err}"),
        ))
    }
}

impl IoEngine for IoUringEngine {
    fn name(&self) -> &'static str {
        "io_uring"
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
        if self.ring.is_some() {
            return Err(EngineError::Setup("io_uring engine set up twice".into()));
        }
        let entries = setup.slots.max(1).next_power_of_two();
        if entries > MAX_RING_ENTRIES {
            return Err(EngineError::Setup(format!(
                "io_uring supports at most {MAX_RING_ENTRIES} outstanding requests per ring, \
                 asked for {}",
                setup.slots
            )));
        }
        let buffers = AlignedBuffers::new(setup.slots, setup.slot_bytes, setup.buffer_align_bytes)?;
        let ring = self.build_ring(entries)?;

        self.sqe_fd = self.file.as_raw_fd();
        self.sqe_flags = squeue::Flags::empty();
        if self.options.register_file {
            match ring.submitter().register_files(&[self.file.as_raw_fd()]) {
                Ok(()) => {
                    self.sqe_fd = FIXED_FILE_INDEX;
                    self.sqe_flags = squeue::Flags::FIXED_FILE;
                }
                Err(err) if self.options.require_registered_file => {
                    return Err(EngineError::Setup(format!(
                        "registerfiles: the file could not be registered: {err}"
                    )))
                }
                Err(err) => self
                    .setup_notes
                    .push(format!("register_files failed ({err}); using the plain fd")),
            }
        }
        self.register_buffers(&ring, &buffers)?;
        self.iovecs = SlotIovecs(buffers.iovecs());

        let slots = setup.slots as usize;
        self.in_flight = vec![false; slots];
        self.pending_trims = Vec::with_capacity(slots);
        self.ready = Vec::with_capacity(slots);
        self.ring = Some(ring);
        self.buffers = Some(buffers);
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

    fn set_sync_writes(&mut self, kind: Option<crate::FlushKind>) -> Result<(), EngineError> {
        super::sync_writes_by_descriptor(self.name(), &self.file, kind)
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
        let fd = types::Fd(self.sqe_fd);
        let buf = buffers.slot_ptr(slot);
        let len = request.len_bytes;
        // Fixed-buffer index = slot: `register_buffers` registered slot i at index i, and
        // check_request keeps slot < slots ≤ MAX_REGISTERED_BUFFERS < u16::MAX.
        let rw_flags = if self.options.nowait {
            libc::RWF_NOWAIT
        } else {
            0
        };
        let ioprio = match request.ioprio {
            Some(own) => {
                self.prioritized_ios += 1;
                own
            }
            None => self.options.default_ioprio,
        };
        let vectored = self.options.vectored && !self.fixed_buffers;
        if vectored {
            self.iovecs.0[slot as usize].iov_len = len as usize;
        }
        let iovec: *const libc::iovec = &self.iovecs.0[slot as usize];
        let entry = match (request.direction, self.fixed_buffers) {
            (IoDirection::Trim, _) => {
                self.in_flight[slot as usize] = true;
                self.pending_trims.push(request);
                self.queued_since_submit += 1;
                return Ok(());
            }
            (IoDirection::Read, true) => opcode::ReadFixed::new(fd, buf, len, slot as u16)
                .offset(request.offset_bytes)
                .rw_flags(rw_flags)
                .ioprio(ioprio)
                .build(),
            (IoDirection::Read, false) if vectored => opcode::Readv::new(fd, iovec, 1)
                .offset(request.offset_bytes)
                .rw_flags(rw_flags)
                .ioprio(ioprio)
                .build(),
            (IoDirection::Read, false) => opcode::Read::new(fd, buf, len)
                .offset(request.offset_bytes)
                .rw_flags(rw_flags)
                .ioprio(ioprio)
                .build(),
            (IoDirection::Write, true) => opcode::WriteFixed::new(fd, buf, len, slot as u16)
                .offset(request.offset_bytes)
                .rw_flags(rw_flags)
                .ioprio(ioprio)
                .build(),
            (IoDirection::Write, false) if vectored => opcode::Writev::new(fd, iovec, 1)
                .offset(request.offset_bytes)
                .rw_flags(rw_flags)
                .ioprio(ioprio)
                .build(),
            (IoDirection::Write, false) => opcode::Write::new(fd, buf, len)
                .offset(request.offset_bytes)
                .rw_flags(rw_flags)
                .ioprio(ioprio)
                .build(),
        }
        .flags(self.sqe_flags)
        .user_data(u64::from(slot));
        // SAFETY: the SQE points at `len` ≤ slot_bytes bytes of slot `slot` (check_request),
        // directly or through that slot's iovec in `self.iovecs` (never reallocated after setup),
        // memory owned by `self.buffers`, which outlives the request: the slot is marked in
        // flight so it is not handed out again, and `Drop` waits for the kernel to finish
        // before the buffers are freed.
        unsafe { self.push_entry(&entry, slot) }
    }

    fn queues_flushes(&self) -> bool {
        true
    }

    fn queue_flush(&mut self, slot: u32, kind: crate::FlushKind) -> Result<(), EngineError> {
        super::check_slot_free(slot, &self.in_flight)?;
        // fio's io_uring engine: IORING_OP_FSYNC, with IORING_FSYNC_DATASYNC for fdatasync
        // (engines/io_uring.c, `fio_ioring_prep`).
        let flags = match kind {
            crate::FlushKind::All => types::FsyncFlags::empty(),
            crate::FlushKind::Data => types::FsyncFlags::DATASYNC,
        };
        let entry = opcode::Fsync::new(types::Fd(self.sqe_fd))
            .flags(flags)
            .build()
            .flags(self.sqe_flags)
            .user_data(u64::from(slot));
        // SAFETY: a sync names no memory; `push_entry`'s other conditions hold as for `queue`.
        unsafe { self.push_entry(&entry, slot) }
    }

    fn submit(&mut self) -> Result<usize, EngineError> {
        self.enable_if_needed()?;
        let issued = self.queued_since_submit;
        self.queued_since_submit = 0;
        let ring = self.ring.as_mut().expect(NOT_SET_UP);
        if !ring.submission().is_empty() {
            loop {
                self.submit_syscalls += 1;
                match ring.submit() {
                    Ok(_) => break,
                    Err(err) if err.raw_os_error() == Some(libc::EINTR) => continue,
                    Err(err) => return Err(enter_error("submit", err)),
                }
            }
        }
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
        let outstanding = self.in_ring + self.ready.len();
        if min > outstanding {
            return Err(reap_too_many(min, outstanding));
        }
        let mut reaped = self.ready.len();
        for completion in self.ready.drain(..) {
            self.in_flight[completion.slot as usize] = false;
            out.push(completion);
        }
        reaped += self.drain_completions(out);
        if reaped == 0 && min == 0 && self.in_ring > 0 {
            // With DEFER_TASKRUN (or COOP_TASKRUN) finished I/O may wait as task work that only
            // an enter runs; the kernel flags it, so poll without blocking only then. With
            // IOPOLL nothing completes unless we poll: always enter (the crate adds GETEVENTS).
            let iopoll = self.options.iopoll;
            let ring = self.ring.as_mut().expect(NOT_SET_UP);
            if iopoll || ring.submission().taskrun() {
                self.wait_syscalls += 1;
                ring.submit().map_err(|err| enter_error("poll", err))?;
                reaped += self.drain_completions(out);
            }
        }
        while reaped < min {
            self.enable_if_needed()?;
            let ring = self.ring.as_mut().expect(NOT_SET_UP);
            self.wait_syscalls += 1;
            match ring.submit_and_wait(min - reaped) {
                Ok(_) => {}
                Err(err) if err.raw_os_error() == Some(libc::EINTR) => {}
                Err(err) => return Err(enter_error("wait", err)),
            }
            reaped += self.drain_completions(out);
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
                "ring_setup".to_string(),
                self.setup_used
                    .map_or("not set up", RingSetup::as_str)
                    .to_string(),
            ),
            ("buffers".to_string(), self.buffers_note.clone()),
            (
                "file".to_string(),
                if self.sqe_flags.contains(squeue::Flags::FIXED_FILE) {
                    "registered".to_string()
                } else {
                    "plain fd".to_string()
                },
            ),
            (
                "submit_syscalls".to_string(),
                self.submit_syscalls.to_string(),
            ),
            ("wait_syscalls".to_string(), self.wait_syscalls.to_string()),
        ];
        let mut modes = Vec::new();
        if self.options.iopoll {
            modes.push("iopoll");
        }
        if self.options.sqpoll {
            modes.push("sqpoll");
        }
        if self.options.vectored && !self.fixed_buffers {
            modes.push("vectored");
        }
        if self.options.nowait {
            modes.push("nowait");
        }
        if !modes.is_empty() {
            details.push(("modes".to_string(), modes.join("+")));
        }
        if self.prioritized_ios > 0 {
            details.push((
                "prioritized_ios".to_string(),
                self.prioritized_ios.to_string(),
            ));
        }
        if !self.setup_notes.is_empty() {
            details.push(("setup_fallbacks".to_string(), self.setup_notes.join("; ")));
        }
        details.extend(self.device_reads.iter().flat_map(DeviceReadWindow::details));
        EngineReport { details, sim: None }
    }
}

impl Drop for IoUringEngine {
    fn drop(&mut self) {
        // The kernel may still be writing into our buffers: wait for every request in the ring
        // before the buffers are freed. If waiting fails, leak the buffers rather than let the
        // kernel scribble on freed memory.
        let mut scratch = Vec::with_capacity(self.in_ring);
        while self.in_ring > 0 {
            let Some(ring) = self.ring.as_mut() else {
                break;
            };
            if self.needs_enable && ring.submitter().register_enable_rings().is_ok() {
                self.needs_enable = false;
            }
            match ring.submit_and_wait(self.in_ring) {
                Ok(_) => {}
                Err(err) if err.raw_os_error() == Some(libc::EINTR) => {}
                Err(_) => break,
            }
            scratch.clear();
            self.drain_completions(&mut scratch);
        }
        if self.in_ring > 0 {
            std::mem::forget(self.buffers.take());
        }
    }
}
