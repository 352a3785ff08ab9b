//! PCIe attachment of a host controller as a bandwidth cap: generation × lanes, line encoding,
//! TLP overhead per Max_Payload_Size bytes, DLLP share.

use crate::profile::PcieProfile;

/// Bytes of one xHCI TRB / AHCI descriptor fetched over PCIe.
pub const DESCRIPTOR_BYTES: u64 = 16;

/// Usable byte rate of one lane before TLP overhead, in bytes per second (public so tests can
/// bound throughput by the same spec figures the timing uses).
pub fn lane_bytes_per_second(generation: u32) -> f64 {
    match generation {
        // 2.5 GT/s, 8b/10b
        1 => 2.5e9 * 8.0 / 10.0 / 8.0,
        // 5 GT/s, 8b/10b
        2 => 5.0e9 * 8.0 / 10.0 / 8.0,
        // 8 GT/s, 128b/130b
        _ => 8.0e9 * 128.0 / 130.0 / 8.0,
    }
}

/// Precomputed timing of one PCIe direction.
#[derive(Clone, Debug)]
pub struct PcieLink {
    max_payload_bytes: u64,
    tlp_overhead_bytes: u64,
    byte_ps: u64,
}

impl PcieLink {
    pub fn new(p: &PcieProfile) -> PcieLink {
        let rate = lane_bytes_per_second(p.generation) * f64::from(p.lanes);
        PcieLink {
            max_payload_bytes: p.max_payload_bytes.into(),
            tlp_overhead_bytes: p.tlp_overhead_bytes.into(),
            byte_ps: (1e12 / rate * (1.0 + p.dllp_overhead_fraction)).round() as u64,
        }
    }

    /// Moving `bytes` of DMA data: (bytes + ceil(bytes / MPS) × TLP overhead) × byte_time.
    #[inline]
    pub fn transfer_ns(&self, bytes: u64) -> u64 {
        let tlps = bytes.div_ceil(self.max_payload_bytes).max(1);
        ((bytes + tlps * self.tlp_overhead_bytes) * self.byte_ps).div_ceil(1000)
    }

    /// One TLP (the pipelining piece).
    #[inline]
    pub fn first_piece_ns(&self, bytes: u64) -> u64 {
        self.transfer_ns(bytes.min(self.max_payload_bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(generation: u32) -> PcieLink {
        PcieLink::new(&PcieProfile {
            generation,
            lanes: 1,
            max_payload_bytes: 128,
            tlp_overhead_bytes: 24,
            dllp_overhead_fraction: 0.05,
        })
    }

    #[test]
    fn gen1_x1_is_below_usb3_and_gen2_above_300() {
        let bytes = 1 << 20;
        let gen1 = bytes as f64 / link(1).transfer_ns(bytes) as f64 * 1000.0;
        let gen2 = bytes as f64 / link(2).transfer_ns(bytes) as f64 * 1000.0;
        assert!((190.0..250.0).contains(&gen1), "{gen1}");
        assert!((380.0..500.0).contains(&gen2), "{gen2}");
    }
}
