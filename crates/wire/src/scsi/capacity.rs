//! READ CAPACITY(10) and READ CAPACITY(16) parameter data.

use crate::bytes::{be16, be32, be64, put_be16, put_be32, put_be64};
use crate::error::{need, room, Error, Result};

/// Length of READ CAPACITY(10) data.
pub const CAPACITY10_LEN: usize = 8;
/// Length of READ CAPACITY(16) data.
pub const CAPACITY16_LEN: usize = 32;
/// READ CAPACITY(10) reports this LBA when the medium needs READ CAPACITY(16).
pub const CAPACITY10_OVERFLOW: u32 = u32::MAX;
const EXPONENT_MASK: u8 = 0x0F;
const LBPME_BIT: u16 = 0x8000;
const LBPRZ_BIT: u16 = 0x4000;
const LOWEST_ALIGNED_MASK: u16 = 0x3FFF;

/// READ CAPACITY(10) data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Capacity10 {
    /// RETURNED LOGICAL BLOCK ADDRESS: the last LBA (0xFFFFFFFF = too large, use (16)).
    pub last_lba: u32,
    /// Logical block length in bytes.
    pub block_len_bytes: u32,
}

impl Capacity10 {
    /// The (10) answer for a medium of `blocks` blocks, saturating as SBC requires.
    pub fn for_blocks(blocks: u64, block_len_bytes: u32) -> Self {
        let last = blocks.saturating_sub(1);
        Capacity10 {
            last_lba: u32::try_from(last).unwrap_or(CAPACITY10_OVERFLOW),
            block_len_bytes,
        }
    }
    /// Parses 8 bytes.
    pub fn parse(data: &[u8]) -> Result<Self> {
        need("READ CAPACITY(10) data", data, CAPACITY10_LEN)?;
        Ok(Capacity10 {
            last_lba: be32(&data[0..4]),
            block_len_bytes: be32(&data[4..8]),
        })
    }
    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        CAPACITY10_LEN
    }
    /// Writes 8 bytes.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        room("READ CAPACITY(10) data", buffer, CAPACITY10_LEN)?;
        put_be32(&mut buffer[0..4], self.last_lba);
        put_be32(&mut buffer[4..8], self.block_len_bytes);
        Ok(CAPACITY10_LEN)
    }
}

/// READ CAPACITY(16) data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Capacity16 {
    /// The last LBA.
    pub last_lba: u64,
    /// Logical block length in bytes.
    pub block_len_bytes: u32,
    /// LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT (physical = logical << exponent).
    pub logical_per_physical_exponent: u8,
    /// LBPME: logical block provisioning (thin provisioning, UNMAP) enabled.
    pub provisioning_enabled: bool,
    /// LBPRZ: unmapped blocks read as zero.
    pub unmapped_read_zero: bool,
    /// LOWEST ALIGNED LOGICAL BLOCK ADDRESS (14 bits).
    pub lowest_aligned_lba: u16,
}

impl Capacity16 {
    /// Parses 32 bytes.
    pub fn parse(data: &[u8]) -> Result<Self> {
        need("READ CAPACITY(16) data", data, CAPACITY16_LEN)?;
        let flags = be16(&data[14..16]);
        Ok(Capacity16 {
            last_lba: be64(&data[0..8]),
            block_len_bytes: be32(&data[8..12]),
            logical_per_physical_exponent: data[13] & EXPONENT_MASK,
            provisioning_enabled: flags & LBPME_BIT != 0,
            unmapped_read_zero: flags & LBPRZ_BIT != 0,
            lowest_aligned_lba: flags & LOWEST_ALIGNED_MASK,
        })
    }
    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        CAPACITY16_LEN
    }
    /// Writes 32 bytes.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        room("READ CAPACITY(16) data", buffer, CAPACITY16_LEN)?;
        if self.logical_per_physical_exponent > EXPONENT_MASK {
            return Err(Error::BadField {
                field: "LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT",
                value: self.logical_per_physical_exponent.into(),
                reason: "4-bit field",
            });
        }
        if self.lowest_aligned_lba > LOWEST_ALIGNED_MASK {
            return Err(Error::BadField {
                field: "LOWEST ALIGNED LOGICAL BLOCK ADDRESS",
                value: self.lowest_aligned_lba.into(),
                reason: "14-bit field",
            });
        }
        let out = &mut buffer[..CAPACITY16_LEN];
        out.fill(0);
        put_be64(&mut out[0..8], self.last_lba);
        put_be32(&mut out[8..12], self.block_len_bytes);
        out[13] = self.logical_per_physical_exponent;
        put_be16(
            &mut out[14..16],
            self.lowest_aligned_lba
                | if self.provisioning_enabled {
                    LBPME_BIT
                } else {
                    0
                }
                | if self.unmapped_read_zero {
                    LBPRZ_BIT
                } else {
                    0
                },
        );
        Ok(CAPACITY16_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity10_golden() {
        let golden = [0x0e, 0x8e, 0x0f, 0xff, 0x00, 0x00, 0x02, 0x00];
        let repr = Capacity10::for_blocks(0x0e8e_1000, 512);
        assert_eq!(Capacity10::parse(&golden), Ok(repr));
        let mut buf = [0xA5u8; 8];
        repr.emit(&mut buf).unwrap();
        assert_eq!(buf, golden);
        assert_eq!(
            Capacity10::for_blocks(1 << 33, 512).last_lba,
            CAPACITY10_OVERFLOW
        );
    }

    #[test]
    fn capacity16_golden() {
        let mut golden = [0u8; 32];
        golden[..16].copy_from_slice(&[
            0, 0, 0, 0x01, 0xd1, 0xc0, 0xbe, 0xaf, 0, 0, 0x02, 0x00, 0, 0x03, 0xc0, 0x00,
        ]);
        let repr = Capacity16 {
            last_lba: 0x01_d1c0_beaf,
            block_len_bytes: 512,
            logical_per_physical_exponent: 3,
            provisioning_enabled: true,
            unmapped_read_zero: true,
            lowest_aligned_lba: 0,
        };
        assert_eq!(Capacity16::parse(&golden), Ok(repr));
        let mut buf = [0xA5u8; 32];
        repr.emit(&mut buf).unwrap();
        assert_eq!(buf, golden);
    }
}
