//! The skeleton the synchronous engines share (psync, sync, pvsync, pvsync2, mmap): `queue` claims a
//! slot, `submit` carries the queued requests out one after another through the engine's own
//! transfer ([`BlockingIo`]), `reap` hands back their completions. One request is in flight per
//! worker at a time, as in fio's sync engines, so `iodepth` changes nothing for them.

use super::{drop_cached_range, fadvise, Slots, WallClock};
use crate::device_stats::DeviceReadWindow;
use crate::target::{discard, OpenTarget, TargetKind};
use crate::{
    AccessAdvice, Capabilities, EngineError, EngineReport, EngineSetup, IoCompletion, IoDirection,
    IoEngine, IoRequest,
};
use std::fs::File;
use std::io;

/// How one synchronous engine moves the bytes of one request.
pub trait BlockingIo: Send {
    /// The engine's name (`ioengine=`).
    const NAME: &'static str;
    /// The descriptor the page-cache advice, invalidation and device statistics use.
    fn file(&self) -> &File;
    /// Whether writes reach the kernel as write calls on `file`, so that opening it with
    /// `O_SYNC` / `O_DSYNC` makes them synchronous. Not so for stores into a mapping.
    const WRITES_THROUGH_DESCRIPTOR: bool = true;
    /// Move the whole request: `Ok(bytes)` (fewer only where the file ends) or `Err(errno)`.
    fn transfer(
        &mut self,
        direction: IoDirection,
        buf: &mut [u8],
        offset_bytes: u64,
    ) -> Result<u32, i32>;
    /// Engine-specific counters for the report.
    fn details(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// Repeat `step(done)` until `len` bytes moved, the file ends (a step of 0) or an error: the
/// kernel may return less than asked (a signal, a read crossing EOF), and a short count is only
/// reported when a retry cannot get more. Errors are reported as errno, even after partial
/// progress, because the caller must know the request failed.
pub(crate) fn whole_transfer(
    len: usize,
    mut step: impl FnMut(usize) -> io::Result<usize>,
) -> Result<u32, i32> {
    let mut done = 0usize;
    while done < len {
        match step(done) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err.raw_os_error().unwrap_or(libc::EIO)),
        }
    }
    // `done` ≤ len ≤ the request's u32 length.
    Ok(done as u32)
}

/// [`whole_transfer`] through one iovec (the vectored engines, `pvsync` and `pvsync2`): `call`
/// is the syscall on the iovec covering what is left of `buf` at its file offset, returning the
/// bytes moved or −1 with errno set.
pub(crate) fn one_iovec_transfer(
    buf: &mut [u8],
    offset_bytes: u64,
    mut call: impl FnMut(&libc::iovec, libc::off_t) -> libc::ssize_t,
) -> Result<u32, i32> {
    whole_transfer(buf.len(), |done| {
        let rest = &mut buf[done..];
        let iov = libc::iovec {
            iov_base: rest.as_mut_ptr().cast(),
            iov_len: rest.len(),
        };
        let offset = libc::off_t::try_from(offset_bytes + done as u64)
            .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        let moved = call(&iov, offset);
        if moved < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(moved as usize)
        }
    })
}

/// A synchronous engine: the shared bookkeeping around a [`BlockingIo`].
pub struct BlockingEngine<T: BlockingIo> {
    io: T,
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

impl<T: BlockingIo> BlockingEngine<T> {
    /// An engine on its own descriptor of `target` (one engine per worker), its I/O made from
    /// that descriptor by `io`.
    pub(crate) fn on_target(
        target: &OpenTarget,
        io: impl FnOnce(File) -> T,
    ) -> Result<Self, EngineError> {
        Ok(Self::with_io(
            io(target.try_clone_file()?),
            target.try_clone_trim_file()?,
            target.kind,
            target.size_bytes,
        ))
    }

    pub(crate) fn with_io(io: T, trim_file: File, kind: TargetKind, size_bytes: u64) -> Self {
        BlockingEngine {
            io,
            trim_file,
            kind,
            size_bytes,
            slots: Slots::default(),
            queued: Vec::new(),
            done: Vec::new(),
            clock: WallClock::default(),
            short_transfers: 0,
            errors: 0,
            device_reads: None,
        }
    }
}

impl<T: BlockingIo> IoEngine for BlockingEngine<T> {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            queued: false,
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
        self.slots.setup(setup)?;
        let slots = setup.slots as usize;
        self.queued = Vec::with_capacity(slots);
        self.done = Vec::with_capacity(slots);
        self.device_reads = DeviceReadWindow::start(self.io.file());
        self.clock.reset();
        Ok(())
    }

    fn flush(&mut self, kind: crate::FlushKind) -> Result<(), EngineError> {
        // The runner drains the queue before a sync, as fio does, so this covers every write
        // completed so far.
        super::flush_file(self.io.file(), kind)
    }

    fn set_sync_writes(&mut self, kind: Option<crate::FlushKind>) -> Result<(), EngineError> {
        if kind.is_some() && !T::WRITES_THROUGH_DESCRIPTOR {
            // fio opens an mmap target with O_SYNC all the same, and its stores stay
            // asynchronous; storlab refuses rather than run them under a synchronous name.
            return Err(EngineError::Unsupported(format!(
                "the {} engine writes through a mapping, which O_SYNC / O_DSYNC do not make \
                 synchronous",
                T::NAME
            )));
        }
        super::sync_writes_by_descriptor(T::NAME, self.io.file(), kind)
    }

    fn advise(
        &mut self,
        advice: AccessAdvice,
        offset_bytes: u64,
        len_bytes: u64,
    ) -> Result<(), EngineError> {
        fadvise(self.io.file(), advice, offset_bytes, len_bytes)
    }

    fn invalidate(&mut self, offset_bytes: u64, len_bytes: u64) -> Result<(), EngineError> {
        drop_cached_range(self.io.file(), offset_bytes, len_bytes)
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
                    self.io.transfer(direction, buf, request.offset_bytes)
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

    fn trim_files_as_fio(&mut self) {
        // BLKDISCARD on a regular file: the kernel's ENOTTY, as fio gets.
        self.kind = crate::target::TargetKind::BlockDevice;
    }
    fn report(&self) -> EngineReport {
        let mut details = vec![
            (
                "short_transfers".to_string(),
                self.short_transfers.to_string(),
            ),
            ("errors".to_string(), self.errors.to_string()),
        ];
        details.extend(self.io.details());
        details.extend(self.device_reads.iter().flat_map(DeviceReadWindow::details));
        EngineReport { details, sim: None }
    }
}
