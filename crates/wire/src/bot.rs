//! USB Mass Storage Bulk-Only Transport: Command Block Wrapper, Command Status Wrapper and the
//! class-specific control requests.
//!
//! Byte order: every multi-byte BOT field is **little-endian** (USB MSC BOT 1.0 §5).

use crate::bytes::{le32, packet_view, put_le32};
use crate::error::{need, room, Error, Result};

/// `dCBWSignature`: the bytes `USBC` read as a little-endian u32.
pub const CBW_SIGNATURE: u32 = 0x4342_5355;
/// `dCSWSignature`: the bytes `USBS` read as a little-endian u32.
pub const CSW_SIGNATURE: u32 = 0x5342_5355;
/// A CBW is exactly this long.
pub const CBW_LEN: usize = 31;
/// A CSW is exactly this long.
pub const CSW_LEN: usize = 13;
/// Largest command block a CBW carries.
pub const CB_MAX_LEN: usize = 16;
/// Largest LUN a CBW can address (4 bits).
pub const LUN_MAX: u8 = 15;
/// `bmCBWFlags` bit 7: data flows device-to-host.
pub const CBW_FLAG_DATA_IN: u8 = 0x80;
const CBW_LUN_MASK: u8 = 0x0F;
const CBW_CB_LENGTH_MASK: u8 = 0x1F;
/// Bit 6 of `bmCBWFlags` is obsolete and bits 0..5 reserved; hosts send zero.
const CBW_FLAGS_RESERVED: u8 = 0x7F;

/// Interface protocol code of Bulk-Only Transport (interface class 8).
pub const INTERFACE_PROTOCOL_BOT: u8 = 0x50;

crate::bytes::code_enum! {
    /// bCSWStatus.
    pub enum CswStatus: u8 {
        /// Command Passed ("good status").
        Passed = 0x00,
        /// Command Failed: the host should ask REQUEST SENSE.
        Failed = 0x01,
        /// Phase Error: the host must reset recovery.
        PhaseError = 0x02,
    }
}

crate::bytes::code_enum! {
    /// Class-specific requests on the default control pipe (BOT §3).
    pub enum ClassRequest: u8 {
        /// Bulk-Only Mass Storage Reset.
        BulkOnlyReset = 0xFF,
        /// Get Max LUN: device returns one byte, the highest LUN.
        GetMaxLun = 0xFE,
    }
}

/// Direction of a CBW's data phase, from the host's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Host to device (or no data).
    Out,
    /// Device to host.
    In,
}

mod cbw_field {
    use core::ops::Range;
    pub const SIGNATURE: Range<usize> = 0..4;
    pub const TAG: Range<usize> = 4..8;
    pub const DATA_TRANSFER_LENGTH: Range<usize> = 8..12;
    pub const FLAGS: usize = 12;
    pub const LUN: usize = 13;
    pub const CB_LENGTH: usize = 14;
    pub const CB: Range<usize> = 15..31;
}

/// Zero-copy view of a Command Block Wrapper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CbwPacket<T: AsRef<[u8]>> {
    buffer: T,
}
packet_view!(CbwPacket, CBW_LEN);

impl<T: AsRef<[u8]>> CbwPacket<T> {
    /// Fails unless the buffer holds a whole CBW.
    pub fn check_len(&self) -> Result<()> {
        need("CBW", self.buffer.as_ref(), CBW_LEN)
    }
    /// dCBWSignature.
    pub fn signature(&self) -> u32 {
        le32(&self.buffer.as_ref()[cbw_field::SIGNATURE])
    }
    /// dCBWTag: echoed in the CSW.
    pub fn tag(&self) -> u32 {
        le32(&self.buffer.as_ref()[cbw_field::TAG])
    }
    /// dCBWDataTransferLength in bytes.
    pub fn data_transfer_length(&self) -> u32 {
        le32(&self.buffer.as_ref()[cbw_field::DATA_TRANSFER_LENGTH])
    }
    /// bmCBWFlags, raw.
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[cbw_field::FLAGS]
    }
    /// bCBWLUN byte, raw (LUN in the low 4 bits).
    pub fn lun_byte(&self) -> u8 {
        self.buffer.as_ref()[cbw_field::LUN]
    }
    /// bCBWCBLength byte, raw (length in the low 5 bits).
    pub fn cb_length_byte(&self) -> u8 {
        self.buffer.as_ref()[cbw_field::CB_LENGTH]
    }
    /// All 16 bytes of CBWCB, including the padding after the command block.
    pub fn cb_field(&self) -> &[u8] {
        &self.buffer.as_ref()[cbw_field::CB]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> CbwPacket<T> {
    /// Sets dCBWSignature.
    pub fn set_signature(&mut self, value: u32) {
        put_le32(&mut self.buffer.as_mut()[cbw_field::SIGNATURE], value)
    }
    /// Sets dCBWTag.
    pub fn set_tag(&mut self, value: u32) {
        put_le32(&mut self.buffer.as_mut()[cbw_field::TAG], value)
    }
    /// Sets dCBWDataTransferLength.
    pub fn set_data_transfer_length(&mut self, value: u32) {
        put_le32(
            &mut self.buffer.as_mut()[cbw_field::DATA_TRANSFER_LENGTH],
            value,
        )
    }
    /// Sets bmCBWFlags.
    pub fn set_flags(&mut self, value: u8) {
        self.buffer.as_mut()[cbw_field::FLAGS] = value
    }
    /// Sets bCBWLUN.
    pub fn set_lun_byte(&mut self, value: u8) {
        self.buffer.as_mut()[cbw_field::LUN] = value
    }
    /// Sets bCBWCBLength.
    pub fn set_cb_length_byte(&mut self, value: u8) {
        self.buffer.as_mut()[cbw_field::CB_LENGTH] = value
    }
    /// The 16-byte CBWCB field, writable.
    pub fn cb_field_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[cbw_field::CB]
    }
}

/// A parsed Command Block Wrapper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CbwRepr {
    /// dCBWTag.
    pub tag: u32,
    /// Bytes the host expects to move in the data phase.
    pub data_transfer_length: u32,
    /// Direction of the data phase.
    pub direction: Direction,
    /// Logical unit, 0..=15.
    pub lun: u8,
    cb: [u8; CB_MAX_LEN],
    cb_len: u8,
}

impl CbwRepr {
    /// Builds a CBW around a command block of 1..=16 bytes.
    pub fn new(
        tag: u32,
        data_transfer_length: u32,
        direction: Direction,
        lun: u8,
        cdb: &[u8],
    ) -> Result<Self> {
        if cdb.is_empty() || cdb.len() > CB_MAX_LEN {
            return Err(Error::BadField {
                field: "bCBWCBLength",
                value: cdb.len() as u64,
                reason: "command block must be 1..=16 bytes",
            });
        }
        if lun > LUN_MAX {
            return Err(Error::BadField {
                field: "bCBWLUN",
                value: lun.into(),
                reason: "LUN must be 0..=15",
            });
        }
        let mut cb = [0u8; CB_MAX_LEN];
        cb[..cdb.len()].copy_from_slice(cdb);
        Ok(CbwRepr {
            tag,
            data_transfer_length,
            direction,
            lun,
            cb,
            cb_len: cdb.len() as u8,
        })
    }

    /// The command block (SCSI CDB), exactly bCBWCBLength bytes.
    pub fn cdb(&self) -> &[u8] {
        &self.cb[..usize::from(self.cb_len)]
    }

    /// Parses and validates a CBW (the "valid and meaningful" checks of BOT §6.2).
    pub fn parse<T: AsRef<[u8]>>(packet: &CbwPacket<T>) -> Result<Self> {
        packet.check_len()?;
        if packet.signature() != CBW_SIGNATURE {
            return Err(Error::BadSignature {
                what: "dCBWSignature",
                expected: CBW_SIGNATURE,
                found: packet.signature(),
            });
        }
        let flags = packet.flags();
        if flags & CBW_FLAGS_RESERVED != 0 {
            return Err(Error::BadField {
                field: "bmCBWFlags",
                value: flags.into(),
                reason: "reserved bits 0..6 must be zero",
            });
        }
        let lun_byte = packet.lun_byte();
        if lun_byte & !CBW_LUN_MASK != 0 {
            return Err(Error::BadField {
                field: "bCBWLUN",
                value: lun_byte.into(),
                reason: "reserved bits 4..7 must be zero",
            });
        }
        let cb_length = packet.cb_length_byte();
        if cb_length & !CBW_CB_LENGTH_MASK != 0
            || cb_length == 0
            || usize::from(cb_length) > CB_MAX_LEN
        {
            return Err(Error::BadField {
                field: "bCBWCBLength",
                value: cb_length.into(),
                reason: "command block length must be 1..=16",
            });
        }
        let direction = if flags & CBW_FLAG_DATA_IN != 0 {
            Direction::In
        } else {
            Direction::Out
        };
        let mut cb = [0u8; CB_MAX_LEN];
        cb.copy_from_slice(packet.cb_field());
        // Bytes past bCBWCBLength are padding; drop them so equal commands compare equal.
        cb[usize::from(cb_length)..].fill(0);
        Ok(CbwRepr {
            tag: packet.tag(),
            data_transfer_length: packet.data_transfer_length(),
            direction,
            lun: lun_byte,
            cb,
            cb_len: cb_length,
        })
    }

    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        CBW_LEN
    }

    /// Writes this CBW (padding after the command block is zeroed).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut CbwPacket<T>) {
        packet.set_signature(CBW_SIGNATURE);
        packet.set_tag(self.tag);
        packet.set_data_transfer_length(self.data_transfer_length);
        packet.set_flags(match self.direction {
            Direction::In => CBW_FLAG_DATA_IN,
            Direction::Out => 0,
        });
        packet.set_lun_byte(self.lun & CBW_LUN_MASK);
        packet.set_cb_length_byte(self.cb_len);
        packet.cb_field_mut().copy_from_slice(&self.cb);
    }

    /// Writes this CBW into the front of `buffer`, returning the bytes written.
    pub fn emit_into(&self, buffer: &mut [u8]) -> Result<usize> {
        room("CBW", buffer, CBW_LEN)?;
        self.emit(&mut CbwPacket::new_unchecked(&mut buffer[..CBW_LEN]));
        Ok(CBW_LEN)
    }
}

mod csw_field {
    use core::ops::Range;
    pub const SIGNATURE: Range<usize> = 0..4;
    pub const TAG: Range<usize> = 4..8;
    pub const DATA_RESIDUE: Range<usize> = 8..12;
    pub const STATUS: usize = 12;
}

/// Zero-copy view of a Command Status Wrapper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CswPacket<T: AsRef<[u8]>> {
    buffer: T,
}
packet_view!(CswPacket, CSW_LEN);

impl<T: AsRef<[u8]>> CswPacket<T> {
    /// Fails unless the buffer holds a whole CSW.
    pub fn check_len(&self) -> Result<()> {
        need("CSW", self.buffer.as_ref(), CSW_LEN)
    }
    /// dCSWSignature.
    pub fn signature(&self) -> u32 {
        le32(&self.buffer.as_ref()[csw_field::SIGNATURE])
    }
    /// dCSWTag.
    pub fn tag(&self) -> u32 {
        le32(&self.buffer.as_ref()[csw_field::TAG])
    }
    /// dCSWDataResidue in bytes.
    pub fn data_residue(&self) -> u32 {
        le32(&self.buffer.as_ref()[csw_field::DATA_RESIDUE])
    }
    /// bCSWStatus.
    pub fn status(&self) -> CswStatus {
        self.buffer.as_ref()[csw_field::STATUS].into()
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> CswPacket<T> {
    /// Sets dCSWSignature.
    pub fn set_signature(&mut self, value: u32) {
        put_le32(&mut self.buffer.as_mut()[csw_field::SIGNATURE], value)
    }
    /// Sets dCSWTag.
    pub fn set_tag(&mut self, value: u32) {
        put_le32(&mut self.buffer.as_mut()[csw_field::TAG], value)
    }
    /// Sets dCSWDataResidue.
    pub fn set_data_residue(&mut self, value: u32) {
        put_le32(&mut self.buffer.as_mut()[csw_field::DATA_RESIDUE], value)
    }
    /// Sets bCSWStatus.
    pub fn set_status(&mut self, value: CswStatus) {
        self.buffer.as_mut()[csw_field::STATUS] = value.into()
    }
}

/// A parsed Command Status Wrapper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CswRepr {
    /// dCSWTag: equals the tag of the CBW it answers.
    pub tag: u32,
    /// Bytes of the data phase not moved.
    pub data_residue: u32,
    /// Outcome.
    pub status: CswStatus,
}

impl CswRepr {
    /// Parses a CSW; unknown status values are kept as [`CswStatus::Unknown`].
    pub fn parse<T: AsRef<[u8]>>(packet: &CswPacket<T>) -> Result<Self> {
        packet.check_len()?;
        if packet.signature() != CSW_SIGNATURE {
            return Err(Error::BadSignature {
                what: "dCSWSignature",
                expected: CSW_SIGNATURE,
                found: packet.signature(),
            });
        }
        Ok(CswRepr {
            tag: packet.tag(),
            data_residue: packet.data_residue(),
            status: packet.status(),
        })
    }
    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        CSW_LEN
    }
    /// Writes this CSW.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut CswPacket<T>) {
        packet.set_signature(CSW_SIGNATURE);
        packet.set_tag(self.tag);
        packet.set_data_residue(self.data_residue);
        packet.set_status(self.status);
    }
    /// Writes this CSW into the front of `buffer`, returning the bytes written.
    pub fn emit_into(&self, buffer: &mut [u8]) -> Result<usize> {
        room("CSW", buffer, CSW_LEN)?;
        self.emit(&mut CswPacket::new_unchecked(&mut buffer[..CSW_LEN]));
        Ok(CSW_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // READ(10) lba=0x1234 blocks=8, tag 0xdeadbeef, 4096 bytes in, LUN 0.
    const CBW_READ10: [u8; CBW_LEN] = [
        0x55, 0x53, 0x42, 0x43, 0xef, 0xbe, 0xad, 0xde, 0x00, 0x10, 0x00, 0x00, 0x80, 0x00, 0x0a,
        0x28, 0x00, 0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00,
    ];
    const CDB_READ10: [u8; 10] = [0x28, 0, 0, 0, 0x12, 0x34, 0, 0, 8, 0];
    const CSW_FAILED: [u8; CSW_LEN] = [
        0x55, 0x53, 0x42, 0x53, 0xef, 0xbe, 0xad, 0xde, 0x00, 0x02, 0x00, 0x00, 0x01,
    ];

    #[test]
    fn cbw_golden_parse() {
        let repr = CbwRepr::parse(&CbwPacket::new_checked(&CBW_READ10[..]).unwrap()).unwrap();
        assert_eq!(repr.tag, 0xdead_beef);
        assert_eq!(repr.data_transfer_length, 4096);
        assert_eq!(repr.direction, Direction::In);
        assert_eq!(repr.lun, 0);
        assert_eq!(repr.cdb(), &CDB_READ10);
    }

    #[test]
    fn cbw_golden_emit() {
        let repr = CbwRepr::new(0xdead_beef, 4096, Direction::In, 0, &CDB_READ10).unwrap();
        let mut buf = [0xA5u8; CBW_LEN];
        repr.emit(&mut CbwPacket::new_unchecked(&mut buf[..]));
        assert_eq!(buf, CBW_READ10);
        assert_eq!(repr.buffer_len(), CBW_LEN);
    }

    #[test]
    fn cbw_rejects_damage_naming_the_field() {
        let mut bad = CBW_READ10;
        bad[0] = b'X';
        assert!(matches!(
            CbwRepr::parse(&CbwPacket::new_unchecked(&bad[..])),
            Err(Error::BadSignature {
                what: "dCBWSignature",
                ..
            })
        ));
        let mut bad = CBW_READ10;
        bad[14] = 17;
        assert!(matches!(
            CbwRepr::parse(&CbwPacket::new_unchecked(&bad[..])),
            Err(Error::BadField {
                field: "bCBWCBLength",
                value: 17,
                ..
            })
        ));
        let mut bad = CBW_READ10;
        bad[13] = 0x10;
        assert!(matches!(
            CbwRepr::parse(&CbwPacket::new_unchecked(&bad[..])),
            Err(Error::BadField {
                field: "bCBWLUN",
                ..
            })
        ));
        let mut bad = CBW_READ10;
        bad[12] = 0x81;
        assert!(matches!(
            CbwRepr::parse(&CbwPacket::new_unchecked(&bad[..])),
            Err(Error::BadField {
                field: "bmCBWFlags",
                ..
            })
        ));
        assert_eq!(
            CbwPacket::new_checked(&CBW_READ10[..30]).unwrap_err(),
            Error::Truncated {
                what: "CBW",
                needed: 31,
                got: 30
            }
        );
        assert!(CbwRepr::new(1, 0, Direction::Out, 16, &[0]).is_err());
        assert!(CbwRepr::new(1, 0, Direction::Out, 0, &[]).is_err());
    }

    #[test]
    fn csw_golden_parse_and_emit() {
        let repr = CswRepr::parse(&CswPacket::new_checked(&CSW_FAILED[..]).unwrap()).unwrap();
        assert_eq!(
            repr,
            CswRepr {
                tag: 0xdead_beef,
                data_residue: 512,
                status: CswStatus::Failed
            }
        );
        let mut buf = [0xA5u8; CSW_LEN];
        assert_eq!(repr.emit_into(&mut buf), Ok(CSW_LEN));
        assert_eq!(buf, CSW_FAILED);
    }

    #[test]
    fn csw_keeps_unknown_status() {
        let mut raw = CSW_FAILED;
        raw[12] = 0x7e;
        let repr = CswRepr::parse(&CswPacket::new_unchecked(&raw[..])).unwrap();
        assert_eq!(repr.status, CswStatus::Unknown(0x7e));
        assert_eq!(u8::from(repr.status), 0x7e);
        let mut buf = [0xA5u8; CSW_LEN];
        repr.emit_into(&mut buf).unwrap();
        assert_eq!(buf, raw);
    }

    #[test]
    fn class_request_codes() {
        assert_eq!(u8::from(ClassRequest::BulkOnlyReset), 0xFF);
        assert_eq!(ClassRequest::from(0xFE), ClassRequest::GetMaxLun);
    }
}
