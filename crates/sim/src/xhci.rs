//! Host controller processing cost (xHCI, or AHCI for direct SATA): a fixed cost per transfer
//! plus a cost per descriptor (TRB / PRD entry) plus, where a chip's own data path is slower
//! than its links, the time its bytes take through it; and whether bulk streams exist.

use crate::profile::{ControllerKind, ControllerProfile};
use crate::resource::{bytes_ns, ps_per_byte};

/// Precomputed controller costs.
#[derive(Clone, Debug)]
pub struct Controller {
    pub kind: ControllerKind,
    per_transfer_ns: u64,
    per_descriptor_ns: u64,
    max_descriptor_bytes: u64,
    /// The chip's data path (buffer, DMA engine), 0 where it is not a bound.
    data_path_ps_per_byte: u64,
    pub supports_streams: bool,
    pub max_streams: u32,
    pub interrupt_cpu_ns: u64,
}

/// Bytes per second in one MB/s.
const BYTES_PER_MB: f64 = 1e6;

impl Controller {
    pub fn new(p: &ControllerProfile) -> Controller {
        let data_path_ps_per_byte = match p.data_path_mb_s {
            0 => 0,
            mb_s => ps_per_byte(mb_s as f64 * BYTES_PER_MB),
        };
        Controller {
            kind: p.kind,
            per_transfer_ns: p.per_transfer_ns,
            per_descriptor_ns: p.per_descriptor_ns,
            max_descriptor_bytes: p.max_descriptor_bytes.into(),
            data_path_ps_per_byte,
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

    /// Controller time for one transfer: per_transfer + descriptors × per_descriptor + the
    /// bytes through the chip's data path (a pipelined stage: it binds a long transfer's rate
    /// only when slower than the links around it).
    #[inline]
    pub fn transfer_ns(&self, bytes: u64) -> u64 {
        self.per_transfer_ns
            + self.descriptors(bytes) * self.per_descriptor_ns
            + bytes_ns(bytes, self.data_path_ps_per_byte)
    }

    /// Controller time for the first descriptor (the pipelining piece).
    #[inline]
    pub fn first_piece_ns(&self) -> u64 {
        self.per_transfer_ns + self.per_descriptor_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::ProfileSet;

    fn controller(stack: &str) -> ControllerProfile {
        ProfileSet::embedded()
            .resolve(stack)
            .expect(stack)
            .controller
    }

    /// A chip's data path adds its bytes' time to each transfer, so a long transfer through it
    /// runs at its rate; without one, a transfer costs only its fixed and descriptor work.
    #[test]
    fn a_data_path_rate_costs_a_transfer_its_bytes_at_that_rate() {
        let mut p = controller("hwfr2013/asm1042-win8-bot");
        assert_eq!(p.data_path_mb_s, 0);
        let fixed = Controller::new(&p);
        let two_mib = 2 << 20;
        assert_eq!(
            fixed.transfer_ns(two_mib),
            p.per_transfer_ns + 32 * p.per_descriptor_ns
        );
        p.data_path_mb_s = 200;
        let bound = Controller::new(&p);
        // 2 MiB at 200 MB/s: 10.49 ms.
        assert_eq!(
            bound.transfer_ns(two_mib) - fixed.transfer_ns(two_mib),
            10_485_760
        );
        assert_eq!(bound.first_piece_ns(), fixed.first_piece_ns());
    }
}
