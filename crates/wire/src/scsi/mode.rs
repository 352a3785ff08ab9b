//! MODE SENSE(6)/(10) parameter data: header, short block descriptor and the Caching mode page.

use crate::bytes::{be16, be32, put_be16, put_be32};
use crate::error::{need, room, Error, Result};

/// Length of the MODE SENSE(6) parameter header.
pub const MODE6_HEADER_LEN: usize = 4;
/// Length of the MODE SENSE(10) parameter header.
pub const MODE10_HEADER_LEN: usize = 8;
/// Length of a short-LBA block descriptor.
pub const BLOCK_DESCRIPTOR_LEN: usize = 8;
/// Page code of the Caching mode page.
pub const PAGE_CODE_CACHING: u8 = 0x08;
/// Page code that asks for all pages.
pub const PAGE_CODE_ALL: u8 = 0x3F;
/// Length of the Caching mode page (header included).
pub const CACHING_PAGE_LEN: usize = 20;
const PAGE_HEADER_LEN: usize = 2;
/// Offset of the WCE/RCD flags byte inside the Caching mode page.
const CACHING_FLAGS_OFFSET: usize = 2;
const PAGE_CODE_MASK: u8 = 0x3F;
const SPF_BIT: u8 = 0x40;
const SUBPAGE_HEADER_LEN: usize = 4;
const WP_BIT: u8 = 0x80;
const DPOFUA_BIT: u8 = 0x10;
const WCE_BIT: u8 = 0x04;
const RCD_BIT: u8 = 0x01;
const BLOCK_LEN_MASK: u32 = 0x00FF_FFFF;

/// A short block descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockDescriptor {
    /// NUMBER OF BLOCKS (0xFFFFFFFF = too many to report).
    pub blocks: u32,
    /// LOGICAL BLOCK LENGTH in bytes (24 bits).
    pub block_len_bytes: u32,
}

/// Caching mode page fields that matter to a USB disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CachingPage {
    /// WCE: write cache enabled.
    pub write_cache_enabled: bool,
    /// RCD: read cache disabled.
    pub read_cache_disabled: bool,
}

/// MODE SENSE parameter data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ModeSenseData {
    /// true for the MODE SENSE(10) layout.
    pub ten: bool,
    /// MEDIUM TYPE.
    pub medium_type: u8,
    /// WP: write protected.
    pub write_protect: bool,
    /// DPOFUA: DPO and FUA supported.
    pub dpo_fua: bool,
    /// The block descriptor, if any.
    pub block_descriptor: Option<BlockDescriptor>,
    /// The Caching page, if present.
    pub caching: Option<CachingPage>,
}

impl ModeSenseData {
    /// Parses parameter data of the given layout; pages other than Caching are skipped.
    pub fn parse(data: &[u8], ten: bool) -> Result<Self> {
        let header_len = if ten {
            MODE10_HEADER_LEN
        } else {
            MODE6_HEADER_LEN
        };
        need("mode parameter header", data, header_len)?;
        let (mode_len, medium_type, dsp, bd_len) = if ten {
            (
                usize::from(be16(&data[0..2])) + 2,
                data[2],
                data[3],
                usize::from(be16(&data[6..8])),
            )
        } else {
            (
                usize::from(data[0]) + 1,
                data[1],
                data[2],
                usize::from(data[3]),
            )
        };
        // Hosts often allocate less than the device has; parse what is present.
        let end = mode_len.min(data.len());
        if end < header_len + bd_len {
            return Err(Error::BadField {
                field: "BLOCK DESCRIPTOR LENGTH",
                value: bd_len as u64,
                reason: "exceeds the mode data length",
            });
        }
        let block_descriptor = match bd_len {
            0 => None,
            BLOCK_DESCRIPTOR_LEN => {
                let d = &data[header_len..header_len + BLOCK_DESCRIPTOR_LEN];
                Some(BlockDescriptor {
                    blocks: be32(&d[0..4]),
                    block_len_bytes: be32(&d[4..8]) & BLOCK_LEN_MASK,
                })
            }
            other => {
                return Err(Error::BadField {
                    field: "BLOCK DESCRIPTOR LENGTH",
                    value: other as u64,
                    reason: "only one short block descriptor (8 bytes) is supported",
                })
            }
        };
        let mut caching = None;
        let mut at = header_len + bd_len;
        while at + PAGE_HEADER_LEN <= end {
            let page = &data[at..end];
            let (page_len, code) = if page[0] & SPF_BIT != 0 {
                need("mode subpage header", page, SUBPAGE_HEADER_LEN)?;
                (SUBPAGE_HEADER_LEN + usize::from(be16(&page[2..4])), None)
            } else {
                (
                    PAGE_HEADER_LEN + usize::from(page[1]),
                    Some(page[0] & PAGE_CODE_MASK),
                )
            };
            if code == Some(PAGE_CODE_CACHING) {
                // The flags live in the first byte after the page header: a page that declares
                // no room for it is malformed, not a page whose flags are the next page's bytes.
                if page_len <= CACHING_FLAGS_OFFSET {
                    return Err(Error::BadField {
                        field: "Caching mode page PAGE LENGTH",
                        value: page[1] as u64,
                        reason: "too short to hold the WCE/RCD flags byte",
                    });
                }
                need("Caching mode page", page, CACHING_FLAGS_OFFSET + 1)?;
                caching = Some(CachingPage {
                    write_cache_enabled: page[CACHING_FLAGS_OFFSET] & WCE_BIT != 0,
                    read_cache_disabled: page[CACHING_FLAGS_OFFSET] & RCD_BIT != 0,
                });
            }
            at += page_len;
        }
        Ok(ModeSenseData {
            ten,
            medium_type,
            write_protect: dsp & WP_BIT != 0,
            dpo_fua: dsp & DPOFUA_BIT != 0,
            block_descriptor,
            caching,
        })
    }

    /// Bytes `emit` writes.
    pub fn buffer_len(&self) -> usize {
        (if self.ten {
            MODE10_HEADER_LEN
        } else {
            MODE6_HEADER_LEN
        }) + if self.block_descriptor.is_some() {
            BLOCK_DESCRIPTOR_LEN
        } else {
            0
        } + if self.caching.is_some() {
            CACHING_PAGE_LEN
        } else {
            0
        }
    }

    /// Writes the parameter data.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        room("mode parameter data", buffer, len)?;
        let out = &mut buffer[..len];
        out.fill(0);
        let dsp =
            if self.write_protect { WP_BIT } else { 0 } | if self.dpo_fua { DPOFUA_BIT } else { 0 };
        let bd_len = if self.block_descriptor.is_some() {
            BLOCK_DESCRIPTOR_LEN
        } else {
            0
        };
        let header_len = if self.ten {
            put_be16(&mut out[0..2], (len - 2) as u16);
            out[2] = self.medium_type;
            out[3] = dsp;
            put_be16(&mut out[6..8], bd_len as u16);
            MODE10_HEADER_LEN
        } else {
            out[0] = (len - 1) as u8;
            out[1] = self.medium_type;
            out[2] = dsp;
            out[3] = bd_len as u8;
            MODE6_HEADER_LEN
        };
        let mut at = header_len;
        if let Some(bd) = self.block_descriptor {
            if bd.block_len_bytes > BLOCK_LEN_MASK {
                return Err(Error::BadField {
                    field: "LOGICAL BLOCK LENGTH",
                    value: bd.block_len_bytes.into(),
                    reason: "24-bit field",
                });
            }
            put_be32(&mut out[at..at + 4], bd.blocks);
            put_be32(&mut out[at + 4..at + 8], bd.block_len_bytes);
            at += BLOCK_DESCRIPTOR_LEN;
        }
        if let Some(c) = self.caching {
            out[at] = PAGE_CODE_CACHING;
            out[at + 1] = (CACHING_PAGE_LEN - PAGE_HEADER_LEN) as u8;
            out[at + 2] = if c.write_cache_enabled { WCE_BIT } else { 0 }
                | if c.read_cache_disabled { RCD_BIT } else { 0 };
        }
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode6_golden_with_caching() {
        let mut golden = [0u8; 32];
        golden[..12].copy_from_slice(&[31, 0, 0x10, 8, 0x00, 0x10, 0, 0, 0, 0, 0x02, 0x00]);
        golden[12..15].copy_from_slice(&[0x08, 0x12, 0x04]);
        let repr = ModeSenseData {
            ten: false,
            medium_type: 0,
            write_protect: false,
            dpo_fua: true,
            block_descriptor: Some(BlockDescriptor {
                blocks: 0x0010_0000,
                block_len_bytes: 512,
            }),
            caching: Some(CachingPage {
                write_cache_enabled: true,
                read_cache_disabled: false,
            }),
        };
        assert_eq!(ModeSenseData::parse(&golden, false), Ok(repr));
        let mut buf = [0xA5u8; 32];
        assert_eq!(repr.emit(&mut buf), Ok(32));
        assert_eq!(buf, golden);
    }

    #[test]
    fn caching_page_without_room_for_its_flags_is_rejected() {
        // MODE SENSE(6) header (no block descriptor), then a Caching page declaring length 0
        // followed by another page whose first byte must not be read as WCE/RCD.
        let data = [7u8, 0, 0, 0, 0x08, 0x00, 0x0A, 0x00];
        assert!(matches!(
            ModeSenseData::parse(&data, false),
            Err(Error::BadField {
                field: "Caching mode page PAGE LENGTH",
                ..
            })
        ));
    }

    #[test]
    fn mode10_round_trip_and_bad_descriptor_length() {
        let repr = ModeSenseData {
            ten: true,
            medium_type: 0,
            write_protect: true,
            dpo_fua: false,
            block_descriptor: None,
            caching: Some(CachingPage {
                write_cache_enabled: false,
                read_cache_disabled: true,
            }),
        };
        let mut buf = [0xA5u8; 28];
        assert_eq!(repr.emit(&mut buf), Ok(28));
        assert_eq!(&buf[..8], &[0, 26, 0, 0x80, 0, 0, 0, 0]);
        assert_eq!(ModeSenseData::parse(&buf, true), Ok(repr));
        assert!(matches!(
            ModeSenseData::parse(&[11, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0], false),
            Err(Error::BadField {
                field: "BLOCK DESCRIPTOR LENGTH",
                ..
            })
        ));
    }
}
