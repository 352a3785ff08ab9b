//! Standard INQUIRY data (the first 36 bytes, SPC-4 §6.6.2).

use crate::error::{need, room, Error, Result};

/// Length of standard INQUIRY data as emitted.
pub const STANDARD_INQUIRY_LEN: usize = 36;
/// Smallest standard INQUIRY data parsed: up to and including the product revision.
const ADDITIONAL_LENGTH_BASE: usize = 5;
/// RESPONSE DATA FORMAT every SPC-2+ device reports.
pub const RESPONSE_DATA_FORMAT_SPC: u8 = 2;
/// VERSION: the device claims SPC-4.
pub const VERSION_SPC4: u8 = 0x06;
const QUALIFIER_SHIFT: u8 = 5;
const DEVICE_TYPE_MASK: u8 = 0x1F;
const RMB_BIT: u8 = 0x80;
const HISUP_BIT: u8 = 0x10;
const FORMAT_MASK: u8 = 0x0F;
const CMDQUE_BIT: u8 = 0x02;
const PROTECT_BIT: u8 = 0x01;

crate::bytes::code_enum! {
    /// PERIPHERAL DEVICE TYPE.
    pub enum DeviceType: u8 {
        /// Direct access block device (disk).
        DirectAccess = 0x00,
        /// CD/DVD.
        CdDvd = 0x05,
        /// Optical memory.
        OpticalMemory = 0x07,
        /// Simplified direct-access (RBC).
        SimplifiedDirectAccess = 0x0E,
        /// Well-known logical unit.
        WellKnownLu = 0x1E,
        /// Unknown or no device type.
        NoDevice = 0x1F,
    }
}

/// Standard INQUIRY data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InquiryRepr {
    /// PERIPHERAL QUALIFIER (0 = connected).
    pub peripheral_qualifier: u8,
    /// PERIPHERAL DEVICE TYPE.
    pub device_type: DeviceType,
    /// RMB: removable medium.
    pub removable: bool,
    /// VERSION.
    pub version: u8,
    /// HISUP: hierarchical LUN addressing.
    pub hierarchical_support: bool,
    /// PROTECT: protection information supported.
    pub protect: bool,
    /// CMDQUE: command queueing supported.
    pub command_queueing: bool,
    /// T10 VENDOR IDENTIFICATION, ASCII, space padded.
    pub vendor: [u8; 8],
    /// PRODUCT IDENTIFICATION, ASCII, space padded.
    pub product: [u8; 16],
    /// PRODUCT REVISION LEVEL, ASCII, space padded.
    pub revision: [u8; 4],
}

/// Pads `text` with spaces to an `N`-byte SCSI ASCII field (longer text is cut).
pub fn scsi_text<const N: usize>(text: &str) -> [u8; N] {
    let mut out = [b' '; N];
    let n = text.len().min(N);
    out[..n].copy_from_slice(&text.as_bytes()[..n]);
    out
}

impl InquiryRepr {
    /// Parses standard INQUIRY data (at least 36 bytes).
    pub fn parse(data: &[u8]) -> Result<Self> {
        need("standard INQUIRY data", data, STANDARD_INQUIRY_LEN)?;
        let format = data[3] & FORMAT_MASK;
        if format != RESPONSE_DATA_FORMAT_SPC {
            return Err(Error::BadField {
                field: "INQUIRY RESPONSE DATA FORMAT",
                value: format.into(),
                reason: "must be 2",
            });
        }
        let mut vendor = [0u8; 8];
        let mut product = [0u8; 16];
        let mut revision = [0u8; 4];
        vendor.copy_from_slice(&data[8..16]);
        product.copy_from_slice(&data[16..32]);
        revision.copy_from_slice(&data[32..36]);
        Ok(InquiryRepr {
            peripheral_qualifier: data[0] >> QUALIFIER_SHIFT,
            device_type: (data[0] & DEVICE_TYPE_MASK).into(),
            removable: data[1] & RMB_BIT != 0,
            version: data[2],
            hierarchical_support: data[3] & HISUP_BIT != 0,
            protect: data[5] & PROTECT_BIT != 0,
            command_queueing: data[7] & CMDQUE_BIT != 0,
            vendor,
            product,
            revision,
        })
    }
    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        STANDARD_INQUIRY_LEN
    }
    /// Writes 36 bytes of standard INQUIRY data.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        room("standard INQUIRY data", buffer, STANDARD_INQUIRY_LEN)?;
        let device_type = u8::from(self.device_type);
        if self.peripheral_qualifier > 7 || device_type > DEVICE_TYPE_MASK {
            return Err(Error::BadField {
                field: "INQUIRY PERIPHERAL QUALIFIER/DEVICE TYPE",
                value: u64::from(self.peripheral_qualifier) << 8 | u64::from(device_type),
                reason: "3-bit qualifier, 5-bit type",
            });
        }
        let out = &mut buffer[..STANDARD_INQUIRY_LEN];
        out.fill(0);
        out[0] = self.peripheral_qualifier << QUALIFIER_SHIFT | device_type;
        out[1] = if self.removable { RMB_BIT } else { 0 };
        out[2] = self.version;
        out[3] = RESPONSE_DATA_FORMAT_SPC
            | if self.hierarchical_support {
                HISUP_BIT
            } else {
                0
            };
        out[4] = (STANDARD_INQUIRY_LEN - ADDITIONAL_LENGTH_BASE) as u8;
        out[5] = if self.protect { PROTECT_BIT } else { 0 };
        out[7] = if self.command_queueing { CMDQUE_BIT } else { 0 };
        out[8..16].copy_from_slice(&self.vendor);
        out[16..32].copy_from_slice(&self.product);
        out[32..36].copy_from_slice(&self.revision);
        Ok(STANDARD_INQUIRY_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_usb_bridge() {
        let mut golden = [0u8; 36];
        golden[..8].copy_from_slice(&[0x00, 0x00, 0x06, 0x02, 31, 0, 0, 0x02]);
        golden[8..36].copy_from_slice(b"ASMT    2105            0   ");
        let repr = InquiryRepr {
            peripheral_qualifier: 0,
            device_type: DeviceType::DirectAccess,
            removable: false,
            version: VERSION_SPC4,
            hierarchical_support: false,
            protect: false,
            command_queueing: true,
            vendor: scsi_text("ASMT"),
            product: scsi_text("2105"),
            revision: scsi_text("0"),
        };
        assert_eq!(InquiryRepr::parse(&golden), Ok(repr));
        let mut buf = [0xA5u8; 36];
        repr.emit(&mut buf).unwrap();
        assert_eq!(buf, golden);
        golden[3] = 1;
        assert!(matches!(
            InquiryRepr::parse(&golden),
            Err(Error::BadField {
                field: "INQUIRY RESPONSE DATA FORMAT",
                ..
            })
        ));
    }
}
