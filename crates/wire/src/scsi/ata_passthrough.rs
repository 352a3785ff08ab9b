//! SAT ATA PASS-THROUGH (12) and (16) CDBs: how a SCSI initiator sends a raw ATA command
//! (IDENTIFY DEVICE, DATA SET MANAGEMENT) through a USB-to-SATA bridge.

use crate::bytes::{be16, put_be16};
use crate::error::{need, room, Error, Result};

/// Length of an ATA PASS-THROUGH (12) CDB.
pub const CDB12_LEN: usize = 12;
/// Length of an ATA PASS-THROUGH (16) CDB.
pub const CDB16_LEN: usize = 16;
const PROTOCOL_SHIFT: u8 = 1;
const PROTOCOL_MASK: u8 = 0x0F;
const EXTEND_BIT: u8 = 0x01;
const MULTIPLE_COUNT_SHIFT: u8 = 5;
const OFF_LINE_SHIFT: u8 = 6;
const CK_COND_BIT: u8 = 0x20;
const T_TYPE_BIT: u8 = 0x10;
const T_DIR_BIT: u8 = 0x08;
const BYTE_BLOCK_BIT: u8 = 0x04;
const T_LENGTH_MASK: u8 = 0x03;

crate::bytes::code_enum! {
    /// PROTOCOL field (SAT-2 table 100).
    pub enum AtaProtocol: u8 {
        /// ATA hardware reset.
        HardReset = 0,
        /// Software reset.
        SoftReset = 1,
        /// Non-data.
        NonData = 3,
        /// PIO data-in (IDENTIFY DEVICE).
        PioDataIn = 4,
        /// PIO data-out.
        PioDataOut = 5,
        /// DMA (DATA SET MANAGEMENT).
        Dma = 6,
        /// DMA queued.
        DmaQueued = 7,
        /// EXECUTE DEVICE DIAGNOSTIC.
        DeviceDiagnostic = 8,
        /// DEVICE RESET.
        DeviceReset = 9,
        /// UDMA data-in.
        UdmaDataIn = 10,
        /// UDMA data-out.
        UdmaDataOut = 11,
        /// FPDMA (NCQ).
        Fpdma = 12,
        /// Return response information.
        ReturnResponseInformation = 15,
    }
}

/// T_LENGTH: where the length of the data transfer is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransferLengthField {
    /// No data.
    NoData = 0,
    /// In the FEATURES field.
    Features = 1,
    /// In the COUNT field.
    Count = 2,
    /// In the transport's STPSIU.
    Stpsiu = 3,
}

impl TransferLengthField {
    fn from_bits(bits: u8) -> Self {
        match bits & T_LENGTH_MASK {
            0 => TransferLengthField::NoData,
            1 => TransferLengthField::Features,
            2 => TransferLengthField::Count,
            _ => TransferLengthField::Stpsiu,
        }
    }
}

/// A parsed ATA PASS-THROUGH CDB (either size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AtaPassThrough {
    /// True for the 16-byte form (opcode 0x85), false for the 12-byte form (0xA1).
    pub sixteen: bool,
    /// MULTIPLE_COUNT (16-byte form only; 0 for the 12-byte form).
    pub multiple_count: u8,
    /// PROTOCOL.
    pub protocol: AtaProtocol,
    /// EXTEND: 48-bit command (16-byte form only).
    pub extend: bool,
    /// OFF_LINE, 0..=3.
    pub off_line: u8,
    /// CK_COND: return ATA registers in sense data even on success.
    pub check_condition: bool,
    /// T_TYPE: transfer length in blocks (true) or bytes (false).
    pub transfer_in_blocks: bool,
    /// T_DIR: data from device (true) or to device (false).
    pub transfer_from_device: bool,
    /// BYT_BLOK: length counts blocks (true) or bytes (false).
    pub byte_block: bool,
    /// T_LENGTH.
    pub t_length: TransferLengthField,
    /// FEATURES (16 bits in the 16-byte form, 8 otherwise).
    pub features: u16,
    /// COUNT (16 bits in the 16-byte form, 8 otherwise).
    pub count: u16,
    /// LBA (48 bits in the 16-byte form, 24 otherwise).
    pub lba: u64,
    /// DEVICE.
    pub device: u8,
    /// ATA COMMAND.
    pub command: u8,
}

impl AtaPassThrough {
    /// A 16-byte pass-through of `command` with every flag off.
    pub fn new16(protocol: AtaProtocol, command: u8) -> Self {
        AtaPassThrough {
            sixteen: true,
            multiple_count: 0,
            protocol,
            extend: false,
            off_line: 0,
            check_condition: false,
            transfer_in_blocks: false,
            transfer_from_device: false,
            byte_block: false,
            t_length: TransferLengthField::NoData,
            features: 0,
            count: 0,
            lba: 0,
            device: 0,
            command,
        }
    }

    fn parse_flags(cdb: &[u8], sixteen: bool) -> Self {
        let b1 = cdb[1];
        let b2 = cdb[2];
        AtaPassThrough {
            sixteen,
            multiple_count: if sixteen {
                b1 >> MULTIPLE_COUNT_SHIFT
            } else {
                0
            },
            protocol: ((b1 >> PROTOCOL_SHIFT) & PROTOCOL_MASK).into(),
            extend: sixteen && b1 & EXTEND_BIT != 0,
            off_line: b2 >> OFF_LINE_SHIFT,
            check_condition: b2 & CK_COND_BIT != 0,
            transfer_in_blocks: b2 & T_TYPE_BIT != 0,
            transfer_from_device: b2 & T_DIR_BIT != 0,
            byte_block: b2 & BYTE_BLOCK_BIT != 0,
            t_length: TransferLengthField::from_bits(b2),
            features: 0,
            count: 0,
            lba: 0,
            device: 0,
            command: 0,
        }
    }

    /// Parses a 12-byte form CDB (opcode already known to be 0xA1).
    pub fn parse12(cdb: &[u8]) -> Result<Self> {
        need("ATA PASS-THROUGH(12) CDB", cdb, CDB12_LEN)?;
        let mut r = Self::parse_flags(cdb, false);
        r.features = cdb[3].into();
        r.count = cdb[4].into();
        r.lba = u64::from(cdb[5]) | u64::from(cdb[6]) << 8 | u64::from(cdb[7]) << 16;
        r.device = cdb[8];
        r.command = cdb[9];
        Ok(r)
    }

    /// Parses a 16-byte form CDB (opcode already known to be 0x85).
    pub fn parse16(cdb: &[u8]) -> Result<Self> {
        need("ATA PASS-THROUGH(16) CDB", cdb, CDB16_LEN)?;
        let mut r = Self::parse_flags(cdb, true);
        r.features = be16(&cdb[3..5]);
        r.count = be16(&cdb[5..7]);
        // SAT interleaves the LBA: (31:24) (7:0) (39:32) (15:8) (47:40) (23:16).
        r.lba = u64::from(cdb[8])
            | u64::from(cdb[10]) << 8
            | u64::from(cdb[12]) << 16
            | u64::from(cdb[7]) << 24
            | u64::from(cdb[9]) << 32
            | u64::from(cdb[11]) << 40;
        r.device = cdb[13];
        r.command = cdb[14];
        Ok(r)
    }

    /// CDB length `emit` writes.
    pub fn buffer_len(&self) -> usize {
        if self.sixteen {
            CDB16_LEN
        } else {
            CDB12_LEN
        }
    }

    /// Writes the CDB (control byte zero); fails if a field does not fit the chosen form.
    pub fn emit(&self, cdb: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        room("ATA PASS-THROUGH CDB", cdb, len)?;
        let (lba_max, count_max) = if self.sixteen {
            (crate::ata::LBA48_MAX, u64::from(u16::MAX))
        } else {
            (crate::ata::LBA24_MAX, u64::from(u8::MAX))
        };
        for (field, value, max) in [
            ("LBA", self.lba, lba_max),
            ("COUNT", self.count.into(), count_max),
            ("FEATURES", self.features.into(), count_max),
        ] {
            if value > max {
                return Err(Error::BadField {
                    field,
                    value,
                    reason: "does not fit this CDB size",
                });
            }
        }
        let cdb = &mut cdb[..len];
        cdb.fill(0);
        let protocol = (u8::from(self.protocol) & PROTOCOL_MASK) << PROTOCOL_SHIFT;
        cdb[2] = (self.off_line << OFF_LINE_SHIFT)
            | if self.check_condition { CK_COND_BIT } else { 0 }
            | if self.transfer_in_blocks {
                T_TYPE_BIT
            } else {
                0
            }
            | if self.transfer_from_device {
                T_DIR_BIT
            } else {
                0
            }
            | if self.byte_block { BYTE_BLOCK_BIT } else { 0 }
            | self.t_length as u8;
        let lba = self.lba.to_le_bytes();
        if self.sixteen {
            cdb[0] = super::cdb::Opcode::AtaPassThrough16.into();
            cdb[1] = (self.multiple_count << MULTIPLE_COUNT_SHIFT)
                | protocol
                | if self.extend { EXTEND_BIT } else { 0 };
            put_be16(&mut cdb[3..5], self.features);
            put_be16(&mut cdb[5..7], self.count);
            cdb[7] = lba[3];
            cdb[8] = lba[0];
            cdb[9] = lba[4];
            cdb[10] = lba[1];
            cdb[11] = lba[5];
            cdb[12] = lba[2];
            cdb[13] = self.device;
            cdb[14] = self.command;
        } else {
            cdb[0] = super::cdb::Opcode::AtaPassThrough12.into();
            cdb[1] = protocol;
            cdb[3] = self.features as u8;
            cdb[4] = self.count as u8;
            cdb[5] = lba[0];
            cdb[6] = lba[1];
            cdb[7] = lba[2];
            cdb[8] = self.device;
            cdb[9] = self.command;
        }
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ata::AtaCommand;

    #[test]
    fn identify_device_16_golden() {
        // What `sg_sat_identify` / hdparm send: PIO data-in, T_DIR in, BYT_BLOK, T_LENGTH=COUNT.
        let golden: [u8; 16] = [
            0x85, 0x08, 0x0e, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0x00, 0xec, 0,
        ];
        let mut repr =
            AtaPassThrough::new16(AtaProtocol::PioDataIn, AtaCommand::IdentifyDevice.into());
        repr.transfer_from_device = true;
        repr.byte_block = true;
        repr.t_length = TransferLengthField::Count;
        repr.count = 1;
        assert_eq!(AtaPassThrough::parse16(&golden), Ok(repr));
        let mut buf = [0xA5u8; 16];
        assert_eq!(repr.emit(&mut buf), Ok(16));
        assert_eq!(buf, golden);
    }

    #[test]
    fn lba48_interleaving_and_12_byte_form() {
        let mut repr =
            AtaPassThrough::new16(AtaProtocol::Dma, AtaCommand::DataSetManagement.into());
        repr.lba = 0x0605_0403_0201;
        repr.extend = true;
        let mut buf = [0xA5u8; 16];
        repr.emit(&mut buf).unwrap();
        assert_eq!(&buf[7..13], &[0x04, 0x01, 0x05, 0x02, 0x06, 0x03]);
        assert_eq!(AtaPassThrough::parse16(&buf), Ok(repr));

        let mut short = repr;
        short.sixteen = false;
        short.extend = false;
        assert!(matches!(
            short.emit(&mut buf),
            Err(Error::BadField { field: "LBA", .. })
        ));
        short.lba = 0x03_0201;
        let mut buf12 = [0xA5u8; 12];
        short.emit(&mut buf12).unwrap();
        assert_eq!(
            buf12,
            [0xa1, 0x0c, 0, 0, 0, 0x01, 0x02, 0x03, 0, 0x06, 0, 0]
        );
        assert_eq!(AtaPassThrough::parse12(&buf12), Ok(short));
    }
}
