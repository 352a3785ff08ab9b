//! The NCQ Command Error log (ACS-3 §9.13, log address 10h): the one 512-byte page a drive fills
//! when a queued command fails, and which the host must read with READ LOG EXT before the drive
//! takes another command (SATA 3.x §13.6.3.3 NCQ error handling; Linux libata
//! `ata_eh_read_log_10h`). It names the failed command's tag and its ending STATUS, ERROR, LBA
//! and COUNT; byte 511 makes the page's bytes sum to zero.
//!
//! Byte layout (ACS-3 Table "NCQ Command Error log"; libata reads the same offsets):
//! byte 0 bit 7 NQ (the error was on a non-queued command: no tag), bit 6 UNL, bits 4:0 the NCQ
//! tag; 2 STATUS; 3 ERROR; 4..=6 LBA 23:0; 7 DEVICE; 8..=10 LBA 47:24; 12..=13 COUNT; 14..=16
//! the sense key, ASC and ASCQ of ACS-4's NCQ autosense (zero without it); 256..=510 vendor
//! specific (zero here); 511 checksum.

use crate::bytes::packet_view;
use crate::error::{need, room, Error, Result};

/// Length of the log page (one 512-byte sector).
pub const NCQ_ERROR_LOG_LEN: usize = 512;
/// Log address of the NCQ Command Error log.
pub const LOG_ADDRESS_NCQ_COMMAND_ERROR: u8 = 0x10;
/// READ LOG EXT, the PIO data-in command that reads a log page (ACS-3 §7.24).
pub const ATA_READ_LOG_EXT: u8 = 0x2F;
/// Largest NCQ tag.
const NCQ_TAG_MAX: u8 = 31;
/// Largest 48-bit LBA.
const LBA48_MAX: u64 = (1 << 48) - 1;
/// Largest sense key (4 bits).
const SENSE_KEY_MAX: u8 = 0x0F;

mod field {
    pub const TAG: usize = 0;
    pub const STATUS: usize = 2;
    pub const ERROR: usize = 3;
    pub const LBA_LOW: core::ops::Range<usize> = 4..7;
    pub const DEVICE: usize = 7;
    pub const LBA_HIGH: core::ops::Range<usize> = 8..11;
    pub const COUNT: core::ops::Range<usize> = 12..14;
    pub const SENSE_KEY: usize = 14;
    pub const ASC: usize = 15;
    pub const ASCQ: usize = 16;
    pub const CHECKSUM: usize = 511;
}
/// Byte 0, bit 7: NQ, the failed command was not queued (the tag bits mean nothing).
const NQ_BIT: u8 = 0x80;
/// Byte 0, bit 6: UNL, an IDLE IMMEDIATE with UNLOAD was aborted.
const UNL_BIT: u8 = 0x40;
/// Byte 0, bits 4:0: the failed command's tag.
const TAG_MASK: u8 = 0x1F;
/// Byte 14: the sense key is its low nibble.
const SENSE_KEY_MASK: u8 = 0x0F;

/// Zero-copy view of the log page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NcqErrorLogPacket<T: AsRef<[u8]>> {
    buffer: T,
}
packet_view!(NcqErrorLogPacket, NCQ_ERROR_LOG_LEN);

impl<T: AsRef<[u8]>> NcqErrorLogPacket<T> {
    /// Fails unless the buffer holds the whole page.
    pub fn check_len(&self) -> Result<()> {
        need(
            "NCQ Command Error log",
            self.buffer.as_ref(),
            NCQ_ERROR_LOG_LEN,
        )
    }
    /// NQ: the error was on a non-queued command.
    pub fn non_queued(&self) -> bool {
        self.buffer.as_ref()[field::TAG] & NQ_BIT != 0
    }
    /// UNL: an IDLE IMMEDIATE with UNLOAD FEATURE was aborted.
    pub fn unload(&self) -> bool {
        self.buffer.as_ref()[field::TAG] & UNL_BIT != 0
    }
    /// The failed command's NCQ tag (meaningless when [`Self::non_queued`]).
    pub fn tag(&self) -> u8 {
        self.buffer.as_ref()[field::TAG] & TAG_MASK
    }
    /// The STATUS the failed command ended with.
    pub fn status(&self) -> u8 {
        self.buffer.as_ref()[field::STATUS]
    }
    /// The ERROR the failed command ended with.
    pub fn error(&self) -> u8 {
        self.buffer.as_ref()[field::ERROR]
    }
    /// The 48-bit LBA (low bytes 4..=6, high bytes 8..=10, each least significant first).
    pub fn lba(&self) -> u64 {
        let b = self.buffer.as_ref();
        b[field::LBA_LOW]
            .iter()
            .chain(&b[field::LBA_HIGH])
            .rev()
            .fold(0u64, |acc, &byte| acc << 8 | u64::from(byte))
    }
    /// DEVICE.
    pub fn device(&self) -> u8 {
        self.buffer.as_ref()[field::DEVICE]
    }
    /// COUNT (bytes 12..=13, little-endian).
    pub fn count(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::COUNT];
        u16::from_le_bytes([b[0], b[1]])
    }
    /// The autosense key, ASC and ASCQ (bytes 14..=16).
    pub fn sense(&self) -> (u8, u8, u8) {
        let b = self.buffer.as_ref();
        (
            b[field::SENSE_KEY] & SENSE_KEY_MASK,
            b[field::ASC],
            b[field::ASCQ],
        )
    }
    /// The page's bytes sum to zero (modulo 256), as its checksum byte makes them.
    pub fn checksum_ok(&self) -> bool {
        page_sum(&self.buffer.as_ref()[..NCQ_ERROR_LOG_LEN]) == 0
    }
}

fn page_sum(page: &[u8]) -> u8 {
    page.iter().fold(0u8, |acc, b| acc.wrapping_add(*b))
}

/// The NCQ Command Error log's contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NcqErrorLogRepr {
    /// The failed queued command's tag; None when the error was on a non-queued command (NQ).
    pub tag: Option<u8>,
    /// UNL: an IDLE IMMEDIATE with UNLOAD FEATURE was aborted.
    pub unload: bool,
    /// STATUS the failed command ended with (ERR set).
    pub status: u8,
    /// ERROR the failed command ended with (UNC for an unreadable sector).
    pub error: u8,
    /// LBA of the failed command.
    pub lba: u64,
    /// DEVICE.
    pub device: u8,
    /// COUNT of the failed command.
    pub count: u16,
    /// ACS-4 NCQ autosense: sense key (4 bits), ASC, ASCQ; zeros without it.
    pub sense_key: u8,
    /// Additional sense code.
    pub asc: u8,
    /// Additional sense code qualifier.
    pub ascq: u8,
}

impl NcqErrorLogRepr {
    /// Parses the page, refusing one whose bytes do not sum to zero (libata warns of an
    /// "invalid checksum" on such a page; a codec here refuses it so a corrupted page is seen).
    pub fn parse<T: AsRef<[u8]>>(packet: &NcqErrorLogPacket<T>) -> Result<Self> {
        packet.check_len()?;
        if !packet.checksum_ok() {
            return Err(Error::BadField {
                field: "NCQ Command Error log checksum (byte 511)",
                value: packet.buffer.as_ref()[field::CHECKSUM].into(),
                reason: "bytes 0..=511 must sum to zero",
            });
        }
        let (sense_key, asc, ascq) = packet.sense();
        Ok(NcqErrorLogRepr {
            tag: (!packet.non_queued()).then(|| packet.tag()),
            unload: packet.unload(),
            status: packet.status(),
            error: packet.error(),
            lba: packet.lba(),
            device: packet.device(),
            count: packet.count(),
            sense_key,
            asc,
            ascq,
        })
    }

    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        NCQ_ERROR_LOG_LEN
    }

    /// Writes the whole page (reserved and vendor bytes zero) with its checksum; returns its
    /// length. Fails for a tag past 31, an LBA past 48 bits or a sense key past 4 bits.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        room("NCQ Command Error log", buffer, NCQ_ERROR_LOG_LEN)?;
        let tag_byte = match self.tag {
            Some(tag) if tag > NCQ_TAG_MAX => {
                return Err(Error::BadField {
                    field: "NCQ Command Error log tag",
                    value: tag.into(),
                    reason: "NCQ tags are 0..=31",
                })
            }
            Some(tag) => tag,
            None => NQ_BIT,
        };
        if self.lba > LBA48_MAX {
            return Err(Error::BadField {
                field: "NCQ Command Error log LBA",
                value: self.lba,
                reason: "LBA is 48 bits",
            });
        }
        if self.sense_key > SENSE_KEY_MAX {
            return Err(Error::BadField {
                field: "NCQ Command Error log sense key",
                value: self.sense_key.into(),
                reason: "a sense key is 4 bits",
            });
        }
        let page = &mut buffer[..NCQ_ERROR_LOG_LEN];
        page.fill(0);
        page[field::TAG] = tag_byte | if self.unload { UNL_BIT } else { 0 };
        page[field::STATUS] = self.status;
        page[field::ERROR] = self.error;
        let lba = self.lba.to_le_bytes();
        page[field::LBA_LOW].copy_from_slice(&lba[..3]);
        page[field::DEVICE] = self.device;
        page[field::LBA_HIGH].copy_from_slice(&lba[3..6]);
        page[field::COUNT].copy_from_slice(&self.count.to_le_bytes());
        page[field::SENSE_KEY] = self.sense_key;
        page[field::ASC] = self.asc;
        page[field::ASCQ] = self.ascq;
        page[field::CHECKSUM] = page_sum(page).wrapping_neg();
        Ok(NCQ_ERROR_LOG_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A READ FPDMA QUEUED of 8 sectors at LBA 0x1234_5678_9ABC, tag 17, failed with an
    /// unreadable sector: STATUS DRDY|ERR (41h), ERROR UNC (40h), DEVICE 40h.
    fn unc_on_tag_17() -> NcqErrorLogRepr {
        NcqErrorLogRepr {
            tag: Some(17),
            status: 0x41,
            error: 0x40,
            lba: 0x1234_5678_9ABC,
            device: 0x40,
            count: 8,
            ..NcqErrorLogRepr::default()
        }
    }

    #[test]
    fn golden_page() {
        let mut golden = [0u8; NCQ_ERROR_LOG_LEN];
        golden[..14].copy_from_slice(&[
            0x11, 0x00, 0x41, 0x40, 0xBC, 0x9A, 0x78, 0x40, 0x56, 0x34, 0x12, 0x00, 0x08, 0x00,
        ]);
        // 11h+41h+40h+BCh+9Ah+78h+40h+56h+34h+12h+08h = 344h; 100h - 44h = BCh.
        golden[511] = 0xBC;
        let mut page = [0xA5u8; NCQ_ERROR_LOG_LEN];
        assert_eq!(unc_on_tag_17().emit(&mut page), Ok(NCQ_ERROR_LOG_LEN));
        assert_eq!(page, golden);
        let packet = NcqErrorLogPacket::new_checked(&golden[..]).unwrap();
        assert_eq!(NcqErrorLogRepr::parse(&packet), Ok(unc_on_tag_17()));
    }

    #[test]
    fn non_queued_error_has_no_tag() {
        let repr = NcqErrorLogRepr {
            tag: None,
            ..unc_on_tag_17()
        };
        let mut page = [0u8; NCQ_ERROR_LOG_LEN];
        repr.emit(&mut page).unwrap();
        assert_eq!(page[0], 0x80);
        let back = NcqErrorLogRepr::parse(&NcqErrorLogPacket::new_unchecked(&page[..]));
        assert_eq!(back, Ok(repr));
    }

    #[test]
    fn damage_and_bad_fields_are_named() {
        let mut page = [0u8; NCQ_ERROR_LOG_LEN];
        unc_on_tag_17().emit(&mut page).unwrap();
        page[4] ^= 1;
        let e = NcqErrorLogRepr::parse(&NcqErrorLogPacket::new_unchecked(&page[..])).unwrap_err();
        assert!(matches!(e, Error::BadField { field, .. } if field.contains("checksum")));
        let short = NcqErrorLogPacket::new_checked(&page[..511]);
        assert!(matches!(short, Err(Error::Truncated { .. })));
        for bad in [
            NcqErrorLogRepr {
                tag: Some(32),
                ..unc_on_tag_17()
            },
            NcqErrorLogRepr {
                lba: 1 << 48,
                ..unc_on_tag_17()
            },
            NcqErrorLogRepr {
                sense_key: 0x10,
                ..unc_on_tag_17()
            },
        ] {
            assert!(matches!(bad.emit(&mut page), Err(Error::BadField { .. })));
        }
        assert!(matches!(
            unc_on_tag_17().emit(&mut page[..100]),
            Err(Error::BufferTooSmall { .. })
        ));
    }
}
