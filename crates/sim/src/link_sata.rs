//! SATA link timing: 8b/10b, FIS framing, Data FISes of at most 8 KiB, one FIS at a time.

use crate::profile::SataLinkProfile;

/// Register Host-to-Device FIS (command) length in bytes.
pub const FIS_REG_H2D_BYTES: u64 = 20;
/// Register Device-to-Host FIS (status) length in bytes.
pub const FIS_REG_D2H_BYTES: u64 = 20;
/// DMA Setup FIS (NCQ: the drive picks which tag's data moves next).
pub const FIS_DMA_SETUP_BYTES: u64 = 28;
/// DMA Activate FIS (non-queued write: the drive is ready for data).
pub const FIS_DMA_ACTIVATE_BYTES: u64 = 4;
/// Set Device Bits FIS (NCQ completion).
pub const FIS_SET_DEVICE_BITS_BYTES: u64 = 8;
/// One DATA SET MANAGEMENT (TRIM) payload block.
pub const DSM_BLOCK_BYTES: u64 = 512;
const DWORD_BYTES: u64 = 4;

/// Precomputed timing of one SATA link.
#[derive(Clone, Debug)]
pub struct SataLink {
    max_data_fis_bytes: u64,
    /// Framing plus handshake bytes per FIS.
    per_fis_bytes: u64,
    byte_ps: u64,
}

impl SataLink {
    pub fn new(p: &SataLinkProfile) -> SataLink {
        let byte_ps = f64::from(p.line_bits_per_byte) * 1e12 / p.line_rate_bps as f64;
        SataLink {
            max_data_fis_bytes: p.max_data_fis_bytes.into(),
            per_fis_bytes: u64::from(p.fis_framing_bytes)
                + u64::from(p.fis_handshake_dwords) * DWORD_BYTES,
            byte_ps: byte_ps.round() as u64,
        }
    }

    /// One non-data FIS of `fis_bytes` (framing and handshake included).
    #[inline]
    pub fn fis_ns(&self, fis_bytes: u64) -> u64 {
        ((fis_bytes + self.per_fis_bytes) * self.byte_ps).div_ceil(1000)
    }

    /// A data phase of `bytes`: ceil(bytes / 8 KiB) Data FISes, each with framing and handshake.
    #[inline]
    pub fn data_ns(&self, bytes: u64) -> u64 {
        let fises = bytes.div_ceil(self.max_data_fis_bytes).max(1);
        ((bytes + fises * self.per_fis_bytes) * self.byte_ps).div_ceil(1000)
    }

    /// Time of the first Data FIS (the pipelining piece).
    #[inline]
    pub fn first_piece_ns(&self, bytes: u64) -> u64 {
        self.data_ns(bytes.min(self.max_data_fis_bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sata_3g_data_ceiling_is_just_under_300_mb_s() {
        let link = SataLink::new(&SataLinkProfile {
            description: String::new(),
            line_rate_bps: 3_000_000_000,
            line_bits_per_byte: 10,
            max_data_fis_bytes: 8192,
            fis_framing_bytes: 16,
            fis_handshake_dwords: 10,
        });
        let bytes = 1 << 20;
        let mb_s = bytes as f64 / link.data_ns(bytes) as f64 * 1000.0;
        assert!((290.0..300.0).contains(&mb_s), "{mb_s}");
    }
}
