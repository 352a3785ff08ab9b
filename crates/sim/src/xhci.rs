//! Host controller processing cost (xHCI, or AHCI for direct SATA): a fixed cost per transfer
//! plus a cost per descriptor (TRB / PRD entry), and whether bulk streams exist.

use crate::profile::{ControllerKind, ControllerProfile};

/// Precomputed controller costs.
#[derive(Clone, Debug)]
pub struct Controller {
    pub kind: ControllerKind,
    per_transfer_ns: u64,
    per_descriptor_ns: u64,
    max_descriptor_bytes: u64,
    pub supports_streams: bool,
    pub max_streams: u32,
    pub interrupt_cpu_ns: u64,
}

impl Controller {
    pub fn new(p: &ControllerProfile) -> Controller {
        Controller {
            kind: p.kind,
            per_transfer_ns: p.per_transfer_ns,
            per_descriptor_ns: p.per_descriptor_ns,
            max_descriptor_bytes: p.max_descriptor_bytes.into(),
            supports_streams: p.supports_streams,
            max_streams: p.max_streams,
            interrupt_cpu_ns: p.interrupt_cpu_ns,
        }
    }

    /// Descriptors needed for a transfer of `bytes` (at least one).
    #[inline]
    pub fn descriptors(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.max_descriptor_bytes).max(1)
    }

    /// Controller time for one transfer: per_transfer + descriptors × per_descriptor.
    #[inline]
    pub fn transfer_ns(&self, bytes: u64) -> u64 {
        self.per_transfer_ns + self.descriptors(bytes) * self.per_descriptor_ns
    }

    /// Controller time for the first descriptor (the pipelining piece).
    #[inline]
    pub fn first_piece_ns(&self) -> u64 {
        self.per_transfer_ns + self.per_descriptor_ns
    }
}
