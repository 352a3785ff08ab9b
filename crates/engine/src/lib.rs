//! The `IoEngine` trait and its engines (one file each under `engines/`): how I/O reaches a target.
//!
//! An engine owns its I/O buffers (preallocated, aligned, registered where the engine can) and its
//! clock. The runner asks for a buffer slot, fills it, queues a request naming the slot, submits,
//! and reaps completions. Real engines run in wall time; the simulator engine runs in virtual time
//! and advances it inside `reap`/`wait_until_ns`, so the runner never knows which it drives.
//!
//! This is the only crate allowed `unsafe` (io_uring buffers, O_DIRECT allocations, ioctls).

pub mod buffers;
pub mod cpu_affinity;
pub mod descriptors;
pub mod device_stats;
pub mod engines;
pub mod error;
pub mod io_priority;
pub mod layout;
pub mod numa_memory;
pub mod observed;
pub mod output_file;
pub mod probe;
pub mod registry;
pub mod regular_file;
pub mod safety;
pub mod target;
pub mod usbmon;

pub use error::EngineError;
pub use storlab_job::AccessAdvice;
pub use storlab_sim::{SimReport, SimWarning};

/// Direction of one I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IoDirection {
    Read,
    Write,
    /// Discard / TRIM / UNMAP of the range (no buffer).
    Trim,
}

/// One request handed to an engine. `slot` names the buffer (0..slots) and doubles as the
/// request's identity until it completes: a slot is never reused before its completion is reaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRequest {
    pub slot: u32,
    pub direction: IoDirection,
    pub offset_bytes: u64,
    pub len_bytes: u32,
    /// The request's own I/O priority (linux/ioprio.h value), when fio's cmdprio family gave
    /// it one (the runner draws which requests, as fio 3.33's engines/cmdprio.c): io_uring
    /// puts it in the SQE's `ioprio`, libaio in `aio_reqprio` with `IOCB_FLAG_IOPRIO`; other
    /// engines have no per-request priority and ignore it. `None`: the submitter's priority.
    pub ioprio: Option<u16>,
}

/// One finished request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoCompletion {
    pub slot: u32,
    /// Bytes transferred, or the OS error number (positive `errno`).
    pub result: Result<u32, i32>,
    /// Engine clock at completion (wall ns since engine start, or simulated ns).
    pub done_ns: u64,
}

/// What a flush makes stable (fio's `fsync` and `fdatasync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlushKind {
    /// `fsync`: written data and all of the file's metadata.
    All,
    /// `fdatasync`: written data and only the metadata needed to read it back.
    Data,
}

/// What an engine can do, as flags rather than special cases.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// Several requests can be outstanding at once (queue depth > 1 means something).
    pub queued: bool,
    /// The engine moves real bytes (null does not; reads return unchanged buffers).
    pub moves_data: bool,
    /// The engine can discard ranges.
    pub trim: bool,
    /// Time is virtual: every worker of a run must share this one engine instance and thread,
    /// so that their I/O interleaves on the same simulated timeline.
    pub shared_timeline: bool,
    /// Buffered I/O (`direct=0`) goes through the host's page cache, so what a job reads may
    /// come from memory rather than the device (real files and devices; not null, which has
    /// no device, nor the simulator, whose every request reaches the simulated stack).
    pub page_cache: bool,
}

/// How an engine should prepare itself before the first request.
#[derive(Clone, Debug)]
pub struct EngineSetup {
    /// Number of buffer slots (= maximum outstanding requests the runner will use).
    pub slots: u32,
    /// Size of each buffer slot.
    pub slot_bytes: usize,
    /// Buffer address alignment (O_DIRECT needs the device's logical block size or more).
    pub buffer_align_bytes: usize,
}

/// Per-engine statistics the report can show (simulator layers, kernel-side counters...).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineReport {
    /// Free-form key/value details, in a stable order.
    pub details: Vec<(String, String)>,
    /// Simulator only: its full report (layers, drive-side counters, stack profile), typed so
    /// that the runner and the CLI read fields, not keys of the text `details`.
    pub sim: Option<Box<SimReport>>,
}

impl EngineReport {
    /// This report over the part of the session after `before` (the same engine's report taken
    /// earlier): a simulated stack's cumulative report becomes the interval's
    /// ([`SimReport::since`]), its details with it; other engines' details are already per job.
    pub fn since(&self, before: Option<&EngineReport>) -> EngineReport {
        match (&self.sim, before.and_then(|b| b.sim.as_deref())) {
            (Some(now), Some(then)) => {
                let interval = now.since(Some(then));
                EngineReport {
                    details: interval.details(),
                    sim: Some(Box::new(interval)),
                }
            }
            _ => self.clone(),
        }
    }

    /// The value of detail `key`, if the engine gave it.
    pub fn detail(&self, key: &str) -> Option<&str> {
        self.details
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// How I/O reaches a target. One instance per worker thread (or one shared instance for
/// engines with `shared_timeline`).
pub trait IoEngine {
    /// Short name (`null`, `psync`, `io_uring`, `sim`).
    fn name(&self) -> &'static str;
    fn capabilities(&self) -> Capabilities;
    /// Size of the target in bytes (the runner checks the job's regions fit).
    fn target_size_bytes(&self) -> u64;
    /// Allocate buffers; called once before any request.
    fn setup(&mut self, setup: &EngineSetup) -> Result<(), EngineError>;
    /// The buffer of one slot (to verify read data).
    fn buffer(&self, slot: u32) -> &[u8];
    /// The buffer of one slot (to fill write data).
    fn buffer_mut(&mut self, slot: u32) -> &mut [u8];
    /// The first `len` bytes of one slot's buffer (at most the slot), for a caller that
    /// changes only those (the runner stamping a write over a buffer filled once). An engine
    /// that keeps what it was given may rely on the rest of the buffer being unchanged since
    /// the slot's last request (the simulator's store then skips comparing it; ADR 0016).
    fn buffer_head_mut(&mut self, slot: u32, len: usize) -> &mut [u8] {
        let buffer = self.buffer_mut(slot);
        let len = len.min(buffer.len());
        &mut buffer[..len]
    }
    /// Queue a request; it is not necessarily issued until `submit`.
    fn queue(&mut self, request: IoRequest) -> Result<(), EngineError>;
    /// Issue everything queued; returns how many requests were issued.
    fn submit(&mut self) -> Result<usize, EngineError>;
    /// Whether a device works on this engine's requests while the runner handles completions,
    /// so that the runner hands each request over as soon as a completion frees its slot, as
    /// fio does by default (`iodepth_batch_submit=1`: one I/O queued, one committed), rather
    /// than first handling every completion a reap returned and then submitting them together.
    /// The batch saves system calls but leaves the device with fewer requests for as long as
    /// the batch takes. Engines that complete inside `submit` or on a virtual clock (null, the
    /// synchronous engines, the simulator) gain nothing from it and keep `false`.
    fn submits_each_request(&self) -> bool {
        false
    }
    /// Collect finished requests into `out`, waiting until at least `min` are available
    /// (`min` never exceeds the number outstanding). Returns how many were appended.
    fn reap(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> Result<usize, EngineError>;
    /// The engine's clock in nanoseconds since setup (monotonic wall time, or virtual time).
    fn now_ns(&self) -> u64;
    /// Let time pass until `deadline_ns` on this engine's clock (rate limiting, think time).
    fn wait_until_ns(&mut self, deadline_ns: u64);
    /// Advise the kernel how `[offset_bytes, offset_bytes + len_bytes)` will be accessed (fio's
    /// `fadvise_hint`, called once after `setup` with the worker's region). Engines with no page
    /// cache in their path (null, the simulator) ignore it.
    fn advise(
        &mut self,
        _advice: AccessAdvice,
        _offset_bytes: u64,
        _len_bytes: u64,
    ) -> Result<(), EngineError> {
        Ok(())
    }
    /// Drop the cached pages of `[offset_bytes, offset_bytes + len_bytes)` (fio's `invalidate`, which fio repeats at every loop and every wrap of a
    /// time-based job): the worker calls it each time a pass over its region completes, so a
    /// buffered job measures the device on every pass, not the cache the previous pass filled.
    /// Engines with no page cache in their path (null, the simulator) ignore it.
    fn invalidate(&mut self, _offset_bytes: u64, _len_bytes: u64) -> Result<(), EngineError> {
        Ok(())
    }
    /// Make what this engine wrote stable (fio's `fsync`, `fdatasync`, `end_fsync`,
    /// `fsync_on_close`): returns once the kernel, and the drive's write cache below it, hold
    /// nothing unwritten of the target. The runner calls it with none of the engine's requests
    /// outstanding. An engine that cannot flush says so rather than returning at once.
    fn flush(&mut self, _kind: FlushKind) -> Result<(), EngineError> {
        Err(EngineError::Unsupported(format!(
            "the {} engine cannot flush written data (fsync)",
            self.name()
        )))
    }
    /// Whether `queue_flush` queues a sync as a request (fio's engines that hand a sync to
    /// the kernel beside the I/O in flight: posixaio's `aio_fsync`, io_uring's IORING_OP_FSYNC).
    fn queues_flushes(&self) -> bool {
        false
    }
    /// Queue a sync of the target in `slot`, as `queue` queues a request (issued by the next
    /// `submit` in queue order, completed through `reap` with 0 bytes): fio's `fsync=N` on an
    /// engine that queues it, so the worker's I/O goes on while it runs. Only where
    /// `queues_flushes` says so.
    fn queue_flush(&mut self, _slot: u32, _kind: FlushKind) -> Result<(), EngineError> {
        Err(EngineError::Unsupported(format!(
            "the {} engine cannot queue a sync",
            self.name()
        )))
    }
    /// Make every write synchronous, as a target opened with fio's `sync=1` (`O_SYNC`, `kind`
    /// [`FlushKind::All`]) or `sync=dsync` (`O_DSYNC`, [`FlushKind::Data`]) has it: a write
    /// completes only once it is stable. Called after `setup`; `None` turns it off. The
    /// simulator models it; an engine on a real target says yes only when its descriptor was
    /// opened with the flag (`target::OpenTarget::reopen_synchronous`), which is what makes its
    /// writes synchronous. Any other engine refuses rather than run asynchronous writes under
    /// a synchronous name.
    fn set_sync_writes(&mut self, kind: Option<FlushKind>) -> Result<(), EngineError> {
        match kind {
            None => Ok(()),
            Some(_) => Err(EngineError::Unsupported(format!(
                "the {} engine cannot open its target with O_SYNC or O_DSYNC",
                self.name()
            ))),
        }
    }
    /// Engine-side statistics at the end of a run.
    fn report(&self) -> EngineReport {
        EngineReport::default()
    }
    /// The protocol trace recorded so far as a usbmon pcap, if this engine records one (the
    /// simulator with tracing enabled); taking it empties the recording.
    fn take_pcap(&mut self) -> Option<Vec<u8>> {
        None
    }
    /// Trim a regular file as fio 3.33 does: its `os_trim` (os/os-linux.h) is BLKDISCARD
    /// alone, which a regular file refuses with ENOTTY (error 25), where storlab's own trims
    /// punch a hole. Engines without a file keep their trims.
    fn trim_files_as_fio(&mut self) {}
}
