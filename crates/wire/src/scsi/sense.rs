//! SCSI status codes and sense data (fixed and descriptor formats), with sense keys and
//! additional sense codes as enums that keep unknown values.

use crate::bytes::{be32, be64, put_be32, put_be64};
use crate::error::{need, room, Error, Result};

crate::bytes::code_enum! {
    /// SCSI status (SAM-5).
    pub enum Status: u8 {
        /// GOOD.
        Good = 0x00,
        /// CHECK CONDITION: sense data describes the error.
        CheckCondition = 0x02,
        /// CONDITION MET.
        ConditionMet = 0x04,
        /// BUSY.
        Busy = 0x08,
        /// RESERVATION CONFLICT.
        ReservationConflict = 0x18,
        /// TASK SET FULL: the queue is full, retry later.
        TaskSetFull = 0x28,
        /// ACA ACTIVE.
        AcaActive = 0x30,
        /// TASK ABORTED.
        TaskAborted = 0x40,
    }
}

crate::bytes::code_enum! {
    /// Sense key (SPC-4 table 48).
    pub enum SenseKey: u8 {
        /// NO SENSE.
        NoSense = 0x0,
        /// RECOVERED ERROR.
        RecoveredError = 0x1,
        /// NOT READY.
        NotReady = 0x2,
        /// MEDIUM ERROR.
        MediumError = 0x3,
        /// HARDWARE ERROR.
        HardwareError = 0x4,
        /// ILLEGAL REQUEST.
        IllegalRequest = 0x5,
        /// UNIT ATTENTION.
        UnitAttention = 0x6,
        /// DATA PROTECT.
        DataProtect = 0x7,
        /// BLANK CHECK.
        BlankCheck = 0x8,
        /// VENDOR SPECIFIC.
        VendorSpecific = 0x9,
        /// COPY ABORTED.
        CopyAborted = 0xA,
        /// ABORTED COMMAND.
        AbortedCommand = 0xB,
        /// VOLUME OVERFLOW.
        VolumeOverflow = 0xD,
        /// MISCOMPARE.
        Miscompare = 0xE,
        /// COMPLETED.
        Completed = 0xF,
    }
}

crate::bytes::code_enum! {
    /// Additional sense code and qualifier, `ASC << 8 | ASCQ` (SPC-4 table D.1).
    pub enum AdditionalSense: u16 {
        /// NO ADDITIONAL SENSE INFORMATION.
        NoAdditionalSense = 0x0000,
        /// ATA PASS THROUGH INFORMATION AVAILABLE.
        AtaPassThroughInformationAvailable = 0x001D,
        /// LOGICAL UNIT NOT READY, CAUSE NOT REPORTABLE.
        NotReadyCauseNotReportable = 0x0400,
        /// LOGICAL UNIT IS IN PROCESS OF BECOMING READY.
        NotReadyBecomingReady = 0x0401,
        /// WRITE ERROR.
        WriteError = 0x0C00,
        /// UNRECOVERED READ ERROR.
        UnrecoveredReadError = 0x1100,
        /// PARAMETER LIST LENGTH ERROR.
        ParameterListLengthError = 0x1A00,
        /// INVALID COMMAND OPERATION CODE.
        InvalidCommandOperationCode = 0x2000,
        /// LOGICAL BLOCK ADDRESS OUT OF RANGE.
        LbaOutOfRange = 0x2100,
        /// INVALID FIELD IN CDB.
        InvalidFieldInCdb = 0x2400,
        /// LOGICAL UNIT NOT SUPPORTED.
        LogicalUnitNotSupported = 0x2500,
        /// INVALID FIELD IN PARAMETER LIST.
        InvalidFieldInParameterList = 0x2600,
        /// WRITE PROTECTED.
        WriteProtected = 0x2700,
        /// NOT READY TO READY CHANGE, MEDIUM MAY HAVE CHANGED.
        NotReadyToReadyChange = 0x2800,
        /// POWER ON, RESET, OR BUS DEVICE RESET OCCURRED.
        PowerOnReset = 0x2900,
        /// COMMANDS CLEARED BY ANOTHER INITIATOR.
        CommandsClearedByAnotherInitiator = 0x2F00,
        /// MEDIUM NOT PRESENT.
        MediumNotPresent = 0x3A00,
        /// INTERNAL TARGET FAILURE.
        InternalTargetFailure = 0x4400,
        /// INFORMATION UNIT iuCRC ERROR DETECTED (UAS transport failures).
        IuCrcError = 0x4703,
    }
}

impl AdditionalSense {
    /// Builds from separate ASC and ASCQ bytes.
    pub fn from_parts(asc: u8, ascq: u8) -> Self {
        u16::from_be_bytes([asc, ascq]).into()
    }
    /// ADDITIONAL SENSE CODE.
    pub fn asc(self) -> u8 {
        u16::from(self).to_be_bytes()[0]
    }
    /// ADDITIONAL SENSE CODE QUALIFIER.
    pub fn ascq(self) -> u8 {
        u16::from(self).to_be_bytes()[1]
    }
}

/// Sense data format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SenseFormat {
    /// Fixed format (response codes 0x70/0x71), 18 bytes.
    Fixed,
    /// Descriptor format (response codes 0x72/0x73).
    Descriptor,
}

/// Response code: current error, fixed format.
pub const RESPONSE_CODE_FIXED_CURRENT: u8 = 0x70;
/// Response code: deferred error, fixed format.
pub const RESPONSE_CODE_FIXED_DEFERRED: u8 = 0x71;
/// Response code: current error, descriptor format.
pub const RESPONSE_CODE_DESCRIPTOR_CURRENT: u8 = 0x72;
/// Response code: deferred error, descriptor format.
pub const RESPONSE_CODE_DESCRIPTOR_DEFERRED: u8 = 0x73;
/// Length of fixed-format sense data as this crate emits it.
pub const FIXED_SENSE_LEN: usize = 18;
/// Shortest fixed-format sense data that still carries ASC/ASCQ.
pub const FIXED_SENSE_MIN_LEN: usize = 14;
/// Length of the descriptor-format header.
pub const DESCRIPTOR_SENSE_HEADER_LEN: usize = 8;
/// Descriptor type: information.
pub const DESCRIPTOR_TYPE_INFORMATION: u8 = 0x00;
/// Descriptor type: ATA status return (SAT).
pub const DESCRIPTOR_TYPE_ATA_STATUS_RETURN: u8 = 0x09;
const INFORMATION_DESCRIPTOR_LEN: usize = 12;
const ATA_STATUS_RETURN_DESCRIPTOR_LEN: usize = 14;
const RESPONSE_CODE_MASK: u8 = 0x7F;
const VALID_BIT: u8 = 0x80;
const SENSE_KEY_MASK: u8 = 0x0F;
const EXTEND_BIT: u8 = 0x01;
const FIXED_ADDITIONAL_LEN: u8 = (FIXED_SENSE_LEN - 8) as u8;

/// ATA registers returned by a bridge (SAT ATA Status Return descriptor).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AtaStatusReturn {
    /// EXTEND: the 48-bit fields are valid.
    pub extend: bool,
    /// ERROR register.
    pub error: u8,
    /// COUNT.
    pub count: u16,
    /// LBA (48 bits).
    pub lba: u64,
    /// DEVICE register.
    pub device: u8,
    /// STATUS register.
    pub status: u8,
}

/// Parsed sense data (either format).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SenseRepr {
    /// Fixed or descriptor format.
    pub format: SenseFormat,
    /// Deferred error (response code 0x71/0x73).
    pub deferred: bool,
    /// Sense key.
    pub key: SenseKey,
    /// ASC/ASCQ.
    pub additional: AdditionalSense,
    /// INFORMATION field (e.g. the failing LBA), when valid.
    pub information: Option<u64>,
    /// ATA status return (descriptor format only).
    pub ata_status: Option<AtaStatusReturn>,
}

impl SenseRepr {
    /// Current-error fixed-format sense with just key and ASC/ASCQ.
    pub fn fixed(key: SenseKey, additional: AdditionalSense) -> Self {
        SenseRepr {
            format: SenseFormat::Fixed,
            deferred: false,
            key,
            additional,
            information: None,
            ata_status: None,
        }
    }

    /// Parses sense data of either format.
    pub fn parse(data: &[u8]) -> Result<Self> {
        need("sense data", data, 1)?;
        let response_code = data[0] & RESPONSE_CODE_MASK;
        match response_code {
            RESPONSE_CODE_FIXED_CURRENT | RESPONSE_CODE_FIXED_DEFERRED => {
                need("fixed sense data", data, FIXED_SENSE_MIN_LEN)?;
                Ok(SenseRepr {
                    format: SenseFormat::Fixed,
                    deferred: response_code == RESPONSE_CODE_FIXED_DEFERRED,
                    key: (data[2] & SENSE_KEY_MASK).into(),
                    additional: AdditionalSense::from_parts(data[12], data[13]),
                    information: (data[0] & VALID_BIT != 0).then(|| be32(&data[3..7]).into()),
                    ata_status: None,
                })
            }
            RESPONSE_CODE_DESCRIPTOR_CURRENT | RESPONSE_CODE_DESCRIPTOR_DEFERRED => {
                need("descriptor sense data", data, DESCRIPTOR_SENSE_HEADER_LEN)?;
                let end = DESCRIPTOR_SENSE_HEADER_LEN + usize::from(data[7]);
                need("sense descriptors", data, end)?;
                let mut repr = SenseRepr {
                    format: SenseFormat::Descriptor,
                    deferred: response_code == RESPONSE_CODE_DESCRIPTOR_DEFERRED,
                    key: (data[1] & SENSE_KEY_MASK).into(),
                    additional: AdditionalSense::from_parts(data[2], data[3]),
                    information: None,
                    ata_status: None,
                };
                let mut at = DESCRIPTOR_SENSE_HEADER_LEN;
                while at < end {
                    need("sense descriptor header", &data[..end], at + 2)?;
                    let desc_end = at + 2 + usize::from(data[at + 1]);
                    need("sense descriptor", &data[..end], desc_end)?;
                    let desc = &data[at..desc_end];
                    match desc[0] {
                        DESCRIPTOR_TYPE_INFORMATION => {
                            need("information descriptor", desc, INFORMATION_DESCRIPTOR_LEN)?;
                            if desc[2] & VALID_BIT != 0 {
                                repr.information = Some(be64(&desc[4..12]));
                            }
                        }
                        DESCRIPTOR_TYPE_ATA_STATUS_RETURN => {
                            need(
                                "ATA status return descriptor",
                                desc,
                                ATA_STATUS_RETURN_DESCRIPTOR_LEN,
                            )?;
                            repr.ata_status = Some(AtaStatusReturn {
                                extend: desc[2] & EXTEND_BIT != 0,
                                error: desc[3],
                                count: u16::from_be_bytes([desc[4], desc[5]]),
                                lba: u64::from(desc[7])
                                    | u64::from(desc[9]) << 8
                                    | u64::from(desc[11]) << 16
                                    | u64::from(desc[6]) << 24
                                    | u64::from(desc[8]) << 32
                                    | u64::from(desc[10]) << 40,
                                device: desc[12],
                                status: desc[13],
                            });
                        }
                        // Other descriptor types are legal; skipping them loses nothing we model.
                        _ => {}
                    }
                    at = desc_end;
                }
                Ok(repr)
            }
            other => Err(Error::BadField {
                field: "sense RESPONSE CODE",
                value: other.into(),
                reason: "must be 0x70..=0x73",
            }),
        }
    }

    /// Bytes `emit` writes.
    pub fn buffer_len(&self) -> usize {
        match self.format {
            SenseFormat::Fixed => FIXED_SENSE_LEN,
            SenseFormat::Descriptor => {
                DESCRIPTOR_SENSE_HEADER_LEN
                    + if self.information.is_some() {
                        INFORMATION_DESCRIPTOR_LEN
                    } else {
                        0
                    }
                    + if self.ata_status.is_some() {
                        ATA_STATUS_RETURN_DESCRIPTOR_LEN
                    } else {
                        0
                    }
            }
        }
    }

    /// Writes the sense data; fails if a field cannot be represented in the chosen format.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        room("sense data", buffer, len)?;
        let out = &mut buffer[..len];
        out.fill(0);
        match self.format {
            SenseFormat::Fixed => {
                if self.ata_status.is_some() {
                    return Err(Error::BadField {
                        field: "ATA status return",
                        value: 0,
                        reason: "only descriptor-format sense carries it",
                    });
                }
                out[0] = if self.deferred {
                    RESPONSE_CODE_FIXED_DEFERRED
                } else {
                    RESPONSE_CODE_FIXED_CURRENT
                };
                if let Some(info) = self.information {
                    let info32 = u32::try_from(info).map_err(|_| Error::BadField {
                        field: "sense INFORMATION",
                        value: info,
                        reason: "fixed format carries 32 bits",
                    })?;
                    out[0] |= VALID_BIT;
                    put_be32(&mut out[3..7], info32);
                }
                out[2] = u8::from(self.key) & SENSE_KEY_MASK;
                out[7] = FIXED_ADDITIONAL_LEN;
                out[12] = self.additional.asc();
                out[13] = self.additional.ascq();
            }
            SenseFormat::Descriptor => {
                out[0] = if self.deferred {
                    RESPONSE_CODE_DESCRIPTOR_DEFERRED
                } else {
                    RESPONSE_CODE_DESCRIPTOR_CURRENT
                };
                out[1] = u8::from(self.key) & SENSE_KEY_MASK;
                out[2] = self.additional.asc();
                out[3] = self.additional.ascq();
                out[7] = (len - DESCRIPTOR_SENSE_HEADER_LEN) as u8;
                let mut at = DESCRIPTOR_SENSE_HEADER_LEN;
                if let Some(info) = self.information {
                    let d = &mut out[at..at + INFORMATION_DESCRIPTOR_LEN];
                    d[0] = DESCRIPTOR_TYPE_INFORMATION;
                    d[1] = (INFORMATION_DESCRIPTOR_LEN - 2) as u8;
                    d[2] = VALID_BIT;
                    put_be64(&mut d[4..12], info);
                    at += INFORMATION_DESCRIPTOR_LEN;
                }
                if let Some(ata) = self.ata_status {
                    if ata.lba > crate::ata::LBA48_MAX {
                        return Err(Error::BadField {
                            field: "ATA status return LBA",
                            value: ata.lba,
                            reason: "LBA is 48 bits",
                        });
                    }
                    let d = &mut out[at..at + ATA_STATUS_RETURN_DESCRIPTOR_LEN];
                    let lba = ata.lba.to_le_bytes();
                    d[0] = DESCRIPTOR_TYPE_ATA_STATUS_RETURN;
                    d[1] = (ATA_STATUS_RETURN_DESCRIPTOR_LEN - 2) as u8;
                    d[2] = if ata.extend { EXTEND_BIT } else { 0 };
                    d[3] = ata.error;
                    d[4..6].copy_from_slice(&ata.count.to_be_bytes());
                    d[6] = lba[3];
                    d[7] = lba[0];
                    d[8] = lba[4];
                    d[9] = lba[1];
                    d[10] = lba[5];
                    d[11] = lba[2];
                    d[12] = ata.device;
                    d[13] = ata.status;
                }
            }
        }
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_golden() {
        // ILLEGAL REQUEST, LBA OUT OF RANGE, information = 0x1000.
        let golden: [u8; 18] = [
            0xf0, 0, 0x05, 0, 0, 0x10, 0, 0x0a, 0, 0, 0, 0, 0x21, 0x00, 0, 0, 0, 0,
        ];
        let mut repr = SenseRepr::fixed(SenseKey::IllegalRequest, AdditionalSense::LbaOutOfRange);
        repr.information = Some(0x1000);
        assert_eq!(SenseRepr::parse(&golden), Ok(repr));
        let mut buf = [0xA5u8; 19];
        assert_eq!(repr.emit(&mut buf), Ok(18));
        assert_eq!(&buf[..18], &golden);
        assert_eq!(buf[18], 0xA5);
    }

    #[test]
    fn descriptor_golden_with_ata_return() {
        let golden: [u8; 22] = [
            0x72, 0x01, 0x00, 0x1d, 0, 0, 0, 14, // header
            0x09, 0x0c, 0x01, 0x00, 0x00, 0x01, 0x04, 0x01, 0x05, 0x02, 0x06, 0x03, 0x40, 0x50,
        ];
        let repr = SenseRepr {
            format: SenseFormat::Descriptor,
            deferred: false,
            key: SenseKey::RecoveredError,
            additional: AdditionalSense::AtaPassThroughInformationAvailable,
            information: None,
            ata_status: Some(AtaStatusReturn {
                extend: true,
                error: 0,
                count: 1,
                lba: 0x0605_0403_0201,
                device: 0x40,
                status: 0x50,
            }),
        };
        assert_eq!(SenseRepr::parse(&golden), Ok(repr));
        let mut buf = [0xA5u8; 22];
        assert_eq!(repr.emit(&mut buf), Ok(22));
        assert_eq!(buf, golden);
    }

    #[test]
    fn unknown_codes_are_kept_and_errors_named() {
        let mut raw = [0u8; 18];
        raw[0] = 0x70;
        raw[2] = 0x0c;
        raw[12] = 0x99;
        raw[13] = 0x42;
        let repr = SenseRepr::parse(&raw).unwrap();
        assert_eq!(repr.key, SenseKey::Unknown(0x0c));
        assert_eq!(repr.additional, AdditionalSense::Unknown(0x9942));
        assert_eq!(
            (repr.additional.asc(), repr.additional.ascq()),
            (0x99, 0x42)
        );
        assert!(matches!(
            SenseRepr::parse(&[0x65; 18]),
            Err(Error::BadField {
                field: "sense RESPONSE CODE",
                ..
            })
        ));
        assert!(matches!(
            SenseRepr::parse(&[0x72, 0, 0, 0, 0, 0, 0, 4, 0x00, 0x0a]),
            Err(Error::Truncated {
                what: "sense descriptors",
                ..
            })
        ));
        assert_eq!(Status::from(0x28), Status::TaskSetFull);
    }
}
