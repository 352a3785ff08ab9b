//! The USB-to-SATA bridge's own parts: firmware cost per command, its internal data path, the
//! queue of translated commands waiting for a drive slot, and its reading of the UNMAP
//! parameter list. The steps that join it to the transport (which parses the CBW or Command IU
//! and builds the CSW or Sense IU) and to the drive link (which carries the ATA command) are
//! the simulator's, in `sim.rs`, so this file never reaches into either.

use crate::command::Command;
use crate::cx::{layer, Cx};
use crate::event::CmdId;
use crate::profile::{BridgeProfile, SECTOR_BYTES};
use crate::resource::{bytes_ns, ps_per_byte, Flow};
use crate::scsi::parse_unmap_list;
use std::collections::VecDeque;

const BYTES_PER_MB: f64 = 1e6;

/// The bridge, assembled from its profile.
pub(crate) struct Bridge {
    pub profile: BridgeProfile,
    data_byte_ps: u64,
    /// Translated commands waiting for a drive slot, oldest first.
    pub waiting: VecDeque<CmdId>,
    /// The bridge has a unit attention condition to report with the next command (SAM-5:
    /// established by a power on or a reset of the logical unit, cleared once reported). A
    /// power loss of the drive sets it; so may any reset of the bridge or drive that SAM says
    /// establishes one.
    pub pending_unit_attention: bool,
}

impl Bridge {
    pub fn new(profile: &BridgeProfile) -> Bridge {
        Bridge {
            profile: profile.clone(),
            data_byte_ps: ps_per_byte(profile.data_rate_mb_s as f64 * BYTES_PER_MB),
            waiting: VecDeque::new(),
            pending_unit_attention: false,
        }
    }

    /// The bridge's internal data path.
    #[inline]
    pub fn data(&self, cx: &mut Cx, upstream: Flow, len: u64) -> Flow {
        let piece = len.min(self.profile.forward_chunk_bytes.into());
        let (d, p) = (
            bytes_ns(len, self.data_byte_ps),
            bytes_ns(piece, self.data_byte_ps),
        );
        cx.pass(layer::BRIDGE_DATA, upstream, d, p, len)
    }

    /// The firmware parses a command of `op` from `from_ns`; returns when it is done.
    pub fn parse_command(&self, cx: &mut Cx, op: crate::op::Op, from_ns: u64) -> u64 {
        let fw = self.profile.firmware_ns(op);
        cx.reserve(layer::BRIDGE_CPU, from_ns, fw, 0)
    }

    /// The firmware turns the drive's status into the host's status message from `from_ns`.
    pub fn build_status(&self, cx: &mut Cx, from_ns: u64) -> u64 {
        let fw = self.profile.firmware_status_ns;
        cx.reserve(layer::BRIDGE_CPU, from_ns, fw, 0)
    }

    /// The range of the UNMAP parameter list the host sent with `c` (LBA, blocks), checked
    /// against what the host asked for.
    pub fn unmap_range(c: &Command) -> (u64, u64) {
        let list = parse_unmap_list(&c.unmap_list);
        assert_eq!(list.len(), 1, "the host sends one descriptor per UNMAP");
        let descriptor = list.descriptors().next().expect("one descriptor");
        let (lba, blocks) = (descriptor.lba, descriptor.blocks);
        assert_eq!(
            (lba * u64::from(SECTOR_BYTES), blocks * SECTOR_BYTES),
            (c.offset_bytes, c.len_bytes),
            "bridge decoded another UNMAP range than the host sent"
        );
        (lba, blocks.into())
    }
}
