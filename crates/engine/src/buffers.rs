//! `AlignedBuffers`: the I/O buffer slots of one engine, as one aligned, zeroed allocation.
//!
//! O_DIRECT needs buffer addresses aligned to the device's logical block size, and io_uring
//! registers buffers once by address, so the slots must live in memory that neither moves nor
//! is freed while requests are in flight. `Vec<u8>` guarantees neither alignment beyond 1 nor
//! (for `register_buffers`) a stable promise we can document, hence this small owner of a raw
//! allocation. All `unsafe` for buffers is in this file.

use crate::EngineError;
use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// `slots` buffers of `slot_bytes` each, every slot starting on a `align_bytes` boundary.
pub struct AlignedBuffers {
    base: NonNull<u8>,
    layout: Layout,
    slots: u32,
    slot_bytes: usize,
    /// Distance between slot starts: `slot_bytes` rounded up to the alignment.
    stride_bytes: usize,
}

// SAFETY: `AlignedBuffers` exclusively owns its allocation (like `Box<[u8]>`); moving it to
// another thread moves that ownership. Shared references only hand out `&[u8]`.
unsafe impl Send for AlignedBuffers {}
// SAFETY: `&AlignedBuffers` only gives read access (`&[u8]`); mutation needs `&mut self`.
unsafe impl Sync for AlignedBuffers {}

impl AlignedBuffers {
    /// Allocate `slots × slot_bytes`, zero-filled, each slot aligned to `align_bytes`
    /// (a power of two).
    pub fn new(slots: u32, slot_bytes: usize, align_bytes: usize) -> Result<Self, EngineError> {
        if slots == 0 || slot_bytes == 0 {
            return Err(EngineError::Setup(format!(
                "buffers need at least one slot of at least one byte (asked for {slots} slots \
                 of {slot_bytes} bytes)"
            )));
        }
        if !align_bytes.is_power_of_two() {
            return Err(EngineError::Setup(format!(
                "buffer alignment must be a power of two, got {align_bytes} bytes"
            )));
        }
        let too_large = || {
            EngineError::Setup(format!(
                "{slots} buffer slots of {slot_bytes} bytes aligned to {align_bytes} do not fit \
                 in memory"
            ))
        };
        let stride_bytes = slot_bytes
            .checked_next_multiple_of(align_bytes)
            .ok_or_else(too_large)?;
        let total_bytes = stride_bytes
            .checked_mul(slots as usize)
            .ok_or_else(too_large)?;
        let layout = Layout::from_size_align(total_bytes, align_bytes).map_err(|_| too_large())?;
        // SAFETY: `layout` has a non-zero size (slots ≥ 1, stride ≥ slot_bytes ≥ 1).
        // Zeroed so that every byte is initialised before anyone reads a slot.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let base = NonNull::new(raw).ok_or_else(|| {
            EngineError::Setup(format!(
                "could not allocate {total_bytes} bytes of I/O buffers"
            ))
        })?;
        Ok(AlignedBuffers {
            base,
            layout,
            slots,
            slot_bytes,
            stride_bytes,
        })
    }

    pub fn slots(&self) -> u32 {
        self.slots
    }

    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }

    pub fn align_bytes(&self) -> usize {
        self.layout.align()
    }

    /// One slot, read-only. Panics if `slot >= slots()` (a caller bug, like slice indexing).
    #[inline]
    pub fn slot(&self, slot: u32) -> &[u8] {
        let start = self.slot_start(slot);
        // SAFETY: `slot_start` checked the slot lies inside the allocation, which is
        // initialised (zeroed) and lives as long as `self`; `&self` forbids mutation through us.
        unsafe { std::slice::from_raw_parts(start, self.slot_bytes) }
    }

    /// One slot, writable. Panics if `slot >= slots()`.
    #[inline]
    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        let start = self.slot_start(slot);
        // SAFETY: as in `slot`, and `&mut self` makes this the only live reference.
        unsafe { std::slice::from_raw_parts_mut(start, self.slot_bytes) }
    }

    /// Raw address of one slot, for the kernel (io_uring SQEs). The pointer stays valid until
    /// `self` is dropped; the allocation never moves.
    #[inline]
    pub fn slot_ptr(&self, slot: u32) -> *mut u8 {
        self.slot_start(slot)
    }

    /// One `iovec` per slot, for `io_uring_register_buffers`.
    pub fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.slots)
            .map(|slot| libc::iovec {
                iov_base: self.slot_start(slot).cast(),
                iov_len: self.slot_bytes,
            })
            .collect()
    }

    #[inline]
    fn slot_start(&self, slot: u32) -> *mut u8 {
        assert!(
            slot < self.slots,
            "buffer slot {slot} out of range (slots: {})",
            self.slots
        );
        // SAFETY: slot < slots, so slot × stride + slot_bytes ≤ slots × stride = layout.size():
        // the offset stays inside the allocation.
        unsafe { self.base.as_ptr().add(slot as usize * self.stride_bytes) }
    }
}

impl Drop for AlignedBuffers {
    fn drop(&mut self) {
        // SAFETY: `base` came from `alloc_zeroed(self.layout)` and is freed exactly once here.
        unsafe { alloc::dealloc(self.base.as_ptr(), self.layout) }
    }
}

impl std::fmt::Debug for AlignedBuffers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBuffers")
            .field("slots", &self.slots)
            .field("slot_bytes", &self.slot_bytes)
            .field("align_bytes", &self.layout.align())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_aligned_disjoint_and_zeroed() {
        let mut buffers = AlignedBuffers::new(5, 1000, 4096).unwrap();
        for slot in 0..5 {
            assert_eq!(buffers.slot_ptr(slot) as usize % 4096, 0);
            assert!(buffers.slot(slot).iter().all(|&b| b == 0));
            buffers.slot_mut(slot).fill(slot as u8 + 1);
        }
        for slot in 0..5 {
            assert!(buffers.slot(slot).iter().all(|&b| b == slot as u8 + 1));
        }
        assert_eq!(buffers.iovecs().len(), 5);
    }

    #[test]
    fn rejects_bad_shapes() {
        assert!(AlignedBuffers::new(0, 4096, 4096).is_err());
        assert!(AlignedBuffers::new(1, 0, 4096).is_err());
        assert!(AlignedBuffers::new(1, 4096, 3000).is_err());
        assert!(AlignedBuffers::new(u32::MAX, usize::MAX / 2, 4096).is_err());
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn slot_out_of_range_panics() {
        let buffers = AlignedBuffers::new(2, 512, 512).unwrap();
        let _ = buffers.slot(2);
    }
}
