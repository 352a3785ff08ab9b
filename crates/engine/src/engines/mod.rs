//! One module per engine; see each file. Also the small pieces every real engine shares: the
//! wall clock, the check of a request against the buffer slots, and the slot bookkeeping of
//! engines that complete requests inside `submit` (`blocking` holds the synchronous engines'
//! common skeleton).

pub mod blocking;
pub mod io_uring;
pub mod libaio;
pub mod mmap;
pub mod null;
pub mod posixaio;
pub mod psync;
pub mod pvsync;
pub mod pvsync2;
pub mod sim;
pub mod sync;

use crate::buffers::AlignedBuffers;
use crate::{EngineError, EngineSetup, IoCompletion, IoDirection, IoRequest};
use std::time::Duration;

/// Monotonic wall clock in nanoseconds since `reset` (setup): a vDSO
/// `clock_gettime(CLOCK_MONOTONIC)`, no syscall, tens of nanoseconds, read as plain nanoseconds
/// (`Instant::elapsed`'s `Duration` arithmetic cost a null-engine I/O a few ns per read: its
/// `sub_timespec` was 3.5% of the I/O in `perf record`).
#[derive(Clone, Copy, Debug)]
pub struct WallClock {
    start_ns: u64,
}

impl Default for WallClock {
    fn default() -> Self {
        WallClock {
            start_ns: monotonic_ns(),
        }
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds (what `Instant::now` reads).
#[inline]
fn monotonic_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer; CLOCK_MONOTONIC
    // exists on every Linux, so it cannot fail (and a zero time would only read as "early").
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    // Seconds since boot times 1e9 fit u64 for 584 years; tv_nsec is below 1e9.
    (now.tv_sec as u64)
        .wrapping_mul(NS_PER_S)
        .wrapping_add(now.tv_nsec as u64)
}

/// Nanoseconds per second.
const NS_PER_S: u64 = 1_000_000_000;

impl WallClock {
    pub fn reset(&mut self) {
        self.start_ns = monotonic_ns();
    }

    #[inline]
    pub fn now_ns(&self) -> u64 {
        monotonic_ns().saturating_sub(self.start_ns)
    }

    /// Sleep until `deadline_ns`. The kernel's timer slack makes this late by tens of
    /// microseconds at most, which rate limiting tolerates; spinning would burn the CPU the
    /// measurement is trying to account for.
    pub fn wait_until_ns(&self, deadline_ns: u64) {
        let now_ns = self.now_ns();
        if deadline_ns > now_ns {
            std::thread::sleep(Duration::from_nanos(deadline_ns - now_ns));
        }
    }
}

/// The buffer slots of an engine that completes requests inside `submit` (null and the
/// synchronous engines), and
/// which slots hold a request not yet reaped. io_uring keeps its own: its ring must drop before
/// its buffers, and its `Drop` may leak them on purpose while the kernel still owns them.
#[derive(Default)]
pub(crate) struct Slots {
    buffers: Option<AlignedBuffers>,
    in_flight: Vec<bool>,
}

impl Slots {
    /// Allocate the buffers `setup` asks for; every slot starts free.
    pub(crate) fn setup(&mut self, setup: &EngineSetup) -> Result<(), EngineError> {
        self.buffers = Some(AlignedBuffers::new(
            setup.slots,
            setup.slot_bytes,
            setup.buffer_align_bytes,
        )?);
        self.in_flight = vec![false; setup.slots as usize];
        Ok(())
    }

    pub(crate) fn buffer(&self, slot: u32) -> &[u8] {
        self.buffers.as_ref().expect(NOT_SET_UP).slot(slot)
    }

    pub(crate) fn buffer_mut(&mut self, slot: u32) -> &mut [u8] {
        self.buffers.as_mut().expect(NOT_SET_UP).slot_mut(slot)
    }

    /// Check `request` against the slots and mark its slot in flight.
    #[inline]
    pub(crate) fn claim(&mut self, request: &IoRequest) -> Result<(), EngineError> {
        let slot_bytes = self.buffers.as_ref().map_or(0, |b| b.slot_bytes());
        check_request(request, &self.in_flight, slot_bytes)?;
        self.in_flight[request.slot as usize] = true;
        Ok(())
    }

    /// Mark `slot` in flight for a queued sync (no buffer to check), as `claim` for an I/O.
    pub(crate) fn claim_for_flush(&mut self, slot: u32) -> Result<(), EngineError> {
        check_slot_free(slot, &self.in_flight)?;
        self.in_flight[slot as usize] = true;
        Ok(())
    }

    /// Hand every finished request in `done` to `out`, freeing their slots (`min` may not
    /// exceed what is finished: these engines have nothing else to wait for).
    #[inline]
    pub(crate) fn reap_into(
        &mut self,
        done: &mut Vec<IoCompletion>,
        min: usize,
        out: &mut Vec<IoCompletion>,
    ) -> Result<usize, EngineError> {
        if min > done.len() {
            return Err(reap_too_many(min, done.len()));
        }
        for completion in done.iter() {
            self.in_flight[completion.slot as usize] = false;
        }
        let reaped = done.len();
        out.append(done);
        Ok(reaped)
    }
}

/// Reject a request that names a slot outside the buffers, a slot still in flight, or more
/// bytes than a slot holds (trims carry no data and may be any length).
#[inline]
/// `slot` exists (the engine is set up) and holds no request whose completion is unreaped: a
/// request's or a queued sync's (`IoEngine::queue_flush`).
pub(crate) fn check_slot_free(slot: u32, in_flight: &[bool]) -> Result<(), EngineError> {
    let Some(&busy) = in_flight.get(slot as usize) else {
        return Err(EngineError::InvalidRequest(if in_flight.is_empty() {
            "request queued before setup".to_string()
        } else {
            format!(
                "slot {slot} out of range (engine has {} slots)",
                in_flight.len()
            )
        }));
    };
    if busy {
        return Err(EngineError::InvalidRequest(format!(
            "slot {slot} queued again before its completion was reaped"
        )));
    }
    Ok(())
}

pub(crate) fn check_request(
    request: &IoRequest,
    in_flight: &[bool],
    slot_bytes: usize,
) -> Result<(), EngineError> {
    check_slot_free(request.slot, in_flight)?;
    if request.direction != IoDirection::Trim && request.len_bytes as usize > slot_bytes {
        return Err(EngineError::InvalidRequest(format!(
            "request of {} bytes does not fit a {slot_bytes}-byte buffer slot",
            request.len_bytes
        )));
    }
    Ok(())
}

/// The queued engines' TRIMs (io_uring, libaio): each runs at submit, in submission order, as
/// one discard call, and its completion is ready at once for the next reap.
pub(crate) fn run_trims_now(
    pending: &mut Vec<IoRequest>,
    trim_file: &std::fs::File,
    kind: crate::target::TargetKind,
    clock: &WallClock,
    ready: &mut Vec<IoCompletion>,
) {
    for request in pending.drain(..) {
        let result =
            crate::target::discard(trim_file, kind, request.offset_bytes, request.len_bytes);
        ready.push(IoCompletion {
            slot: request.slot,
            result,
            done_ns: clock.now_ns(),
        });
    }
}

/// Error for `reap(min)` with `min` above the number of requests that can still complete.
pub(crate) fn reap_too_many(min: usize, outstanding: usize) -> EngineError {
    EngineError::InvalidRequest(format!(
        "reap asked to wait for {min} completions but only {outstanding} are outstanding"
    ))
}

/// `posix_fadvise` on `file` for the range (fio's `fadvise_hint`; the advice is the open file's
/// in Linux, shared with every descriptor duplicated from it).
pub(crate) fn fadvise(
    file: &std::fs::File,
    advice: crate::AccessAdvice,
    offset_bytes: u64,
    len_bytes: u64,
) -> Result<(), EngineError> {
    use std::os::fd::AsRawFd;
    let flag = match advice {
        crate::AccessAdvice::Normal => libc::POSIX_FADV_NORMAL,
        crate::AccessAdvice::Random => libc::POSIX_FADV_RANDOM,
        crate::AccessAdvice::Sequential => libc::POSIX_FADV_SEQUENTIAL,
    };
    let out_of_range = || {
        EngineError::InvalidRequest(format!(
            "advice range {offset_bytes}+{len_bytes} is beyond what the kernel addresses"
        ))
    };
    let offset = libc::off_t::try_from(offset_bytes).map_err(|_| out_of_range())?;
    let len = libc::off_t::try_from(len_bytes).map_err(|_| out_of_range())?;
    // SAFETY: posix_fadvise reads no memory of ours; the descriptor is open for `file`'s life.
    let errno = unsafe { libc::posix_fadvise(file.as_raw_fd(), offset, len, flag) };
    if errno == 0 {
        Ok(())
    } else {
        Err(EngineError::Io(std::io::Error::from_raw_os_error(errno)))
    }
}

/// Drop `file`'s cached pages in the range with `POSIX_FADV_DONTNEED`, as fio's per-loop
/// invalidation does (filesetup.c, `__file_invalidate_cache`): clean pages go at once; dirty
/// ones are handed to writeback, not waited for, so a buffered write job is not made to sync.
/// `fsync` or `fdatasync` of `file` (what both real engines' `flush` does: the runner drains
/// their queues first, so nothing they issued is still in flight).
pub(crate) fn flush_file(file: &std::fs::File, kind: crate::FlushKind) -> Result<(), EngineError> {
    match kind {
        crate::FlushKind::All => file.sync_all(),
        crate::FlushKind::Data => file.sync_data(),
    }
    .map_err(EngineError::Io)
}

/// `set_sync_writes` of an engine whose writes go to the kernel through `file` (write(2)
/// family, native AIO, io_uring, POSIX AIO): they are synchronous exactly when the descriptor
/// was opened with `O_SYNC` / `O_DSYNC` (`OpenTarget::reopen_synchronous`, as fio opens the
/// file for `sync=`), so the engine accepts when it was and refuses when it was not, and
/// refuses to "turn off" a flag the descriptor carries.
pub(crate) fn sync_writes_by_descriptor(
    engine: &str,
    file: &std::fs::File,
    kind: Option<crate::FlushKind>,
) -> Result<(), EngineError> {
    let carries = |kind| crate::target::writes_synchronously(file, kind).map_err(EngineError::Io);
    match kind {
        Some(kind) if carries(kind)? => Ok(()),
        Some(kind) => Err(EngineError::Unsupported(format!(
            "the {engine} engine's target was not opened with {}: open it with \
             OpenTarget::reopen_synchronous",
            match kind {
                crate::FlushKind::All => "O_SYNC",
                crate::FlushKind::Data => "O_DSYNC",
            }
        ))),
        None if carries(crate::FlushKind::Data)? => Err(EngineError::Unsupported(format!(
            "the {engine} engine's target was opened with O_SYNC or O_DSYNC, which cannot be \
             turned off on an open descriptor"
        ))),
        None => Ok(()),
    }
}

pub(crate) fn drop_cached_range(
    file: &std::fs::File,
    offset_bytes: u64,
    len_bytes: u64,
) -> Result<(), EngineError> {
    use std::os::fd::AsRawFd;
    let out_of_range = || {
        EngineError::InvalidRequest(format!(
            "invalidate range {offset_bytes}+{len_bytes} is beyond what the kernel addresses"
        ))
    };
    let offset = libc::off_t::try_from(offset_bytes).map_err(|_| out_of_range())?;
    let len = libc::off_t::try_from(len_bytes).map_err(|_| out_of_range())?;
    // SAFETY: posix_fadvise reads no memory of ours; the descriptor is open for `file`'s life.
    let errno =
        unsafe { libc::posix_fadvise(file.as_raw_fd(), offset, len, libc::POSIX_FADV_DONTNEED) };
    if errno == 0 {
        Ok(())
    } else {
        Err(EngineError::Io(std::io::Error::from_raw_os_error(errno)))
    }
}

/// Buffers must exist before a slot is read or written; say so instead of panicking vaguely.
pub(crate) const NOT_SET_UP: &str = "engine buffers used before setup()";
