//! INQUIRY Vital Product Data pages: Supported Pages (0x00), Unit Serial Number (0x80),
//! Device Identification (0x83), Block Limits (0xB0), Block Device Characteristics (0xB1)
//! and Logical Block Provisioning (0xB2).

use crate::bytes::{be16, be32, be64, put_be16, put_be32, put_be64, InlineBytes};
use crate::error::{need, room, Error, Result};

/// Length of the header every VPD page starts with.
pub const VPD_HEADER_LEN: usize = 4;
/// Page length of Block Limits (0xB0) and Block Device Characteristics (0xB1).
pub const BLOCK_LIMITS_PAGE_LEN: usize = 0x3C;
/// Page length of Block Device Characteristics (0xB1).
pub const BLOCK_CHARACTERISTICS_PAGE_LEN: usize = 0x3C;
/// Page length of Logical Block Provisioning (0xB2) without a provisioning group descriptor.
pub const PROVISIONING_PAGE_LEN: usize = 0x04;
/// Longest variable-length page payload kept inline.
pub const VPD_PAYLOAD_MAX_LEN: usize = 252;
const UGAVALID_BIT: u32 = 0x8000_0000;
const FORM_FACTOR_MASK: u8 = 0x0F;
const LBPU_BIT: u8 = 0x80;
const LBPWS_BIT: u8 = 0x40;
const LBPWS10_BIT: u8 = 0x20;
const LBPRZ_SHIFT: u8 = 2;
const LBPRZ_MASK: u8 = 0x07;
const ANC_SUP_BIT: u8 = 0x02;
const DP_BIT: u8 = 0x01;
const PROVISIONING_TYPE_MASK: u8 = 0x07;
const DESIGNATOR_HEADER_LEN: usize = 4;
const CODE_SET_MASK: u8 = 0x0F;
const ASSOCIATION_SHIFT: u8 = 4;
const ASSOCIATION_MASK: u8 = 0x03;
const DESIGNATOR_TYPE_MASK: u8 = 0x0F;

crate::bytes::code_enum! {
    /// VPD page codes.
    pub enum VpdPageCode: u8 {
        /// Supported VPD Pages.
        SupportedPages = 0x00,
        /// Unit Serial Number.
        UnitSerialNumber = 0x80,
        /// Device Identification.
        DeviceIdentification = 0x83,
        /// Block Limits.
        BlockLimits = 0xB0,
        /// Block Device Characteristics.
        BlockDeviceCharacteristics = 0xB1,
        /// Logical Block Provisioning.
        LogicalBlockProvisioning = 0xB2,
    }
}

crate::bytes::code_enum! {
    /// Designator type of a Device Identification descriptor.
    pub enum DesignatorType: u8 {
        /// Vendor specific.
        VendorSpecific = 0x0,
        /// T10 vendor ID based.
        T10VendorId = 0x1,
        /// EUI-64 based.
        Eui64 = 0x2,
        /// NAA.
        Naa = 0x3,
    }
}

crate::bytes::code_enum! {
    /// Code set of a designator.
    pub enum CodeSet: u8 {
        /// Binary.
        Binary = 0x1,
        /// ASCII.
        Ascii = 0x2,
        /// UTF-8.
        Utf8 = 0x3,
    }
}

/// Block Limits (0xB0) fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BlockLimits {
    /// OPTIMAL TRANSFER LENGTH GRANULARITY in blocks.
    pub optimal_transfer_granularity_blocks: u16,
    /// MAXIMUM TRANSFER LENGTH in blocks (0 = no limit reported).
    pub maximum_transfer_blocks: u32,
    /// OPTIMAL TRANSFER LENGTH in blocks.
    pub optimal_transfer_blocks: u32,
    /// MAXIMUM UNMAP LBA COUNT.
    pub maximum_unmap_lba_count: u32,
    /// MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT.
    pub maximum_unmap_descriptor_count: u32,
    /// OPTIMAL UNMAP GRANULARITY in blocks.
    pub optimal_unmap_granularity_blocks: u32,
    /// UNMAP GRANULARITY ALIGNMENT, when UGAVALID.
    pub unmap_granularity_alignment: Option<u32>,
    /// MAXIMUM WRITE SAME LENGTH in blocks.
    pub maximum_write_same_blocks: u64,
}

/// Block Device Characteristics (0xB1) fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockDeviceCharacteristics {
    /// MEDIUM ROTATION RATE: 0 not reported, 1 non-rotating, else rpm (same coding as ATA).
    pub medium_rotation_rate: u16,
    /// NOMINAL FORM FACTOR (0 not reported, 1 = 5.25", 2 = 3.5", 3 = 2.5", 4 = 1.8").
    pub nominal_form_factor: u8,
}

/// Logical Block Provisioning (0xB2) fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LogicalBlockProvisioning {
    /// THRESHOLD EXPONENT.
    pub threshold_exponent: u8,
    /// LBPU: UNMAP supported.
    pub unmap_supported: bool,
    /// LBPWS: WRITE SAME(16) with UNMAP supported.
    pub write_same16_unmap: bool,
    /// LBPWS10: WRITE SAME(10) with UNMAP supported.
    pub write_same10_unmap: bool,
    /// LBPRZ (3 bits): what unmapped blocks read as.
    pub lbprz: u8,
    /// ANC_SUP: anchored LBAs supported.
    pub anchor_supported: bool,
    /// DP: a provisioning group descriptor follows.
    pub descriptor_present: bool,
    /// PROVISIONING TYPE (0 full, 1 resource, 2 thin).
    pub provisioning_type: u8,
}

/// One designation descriptor of the Device Identification page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Designator<'a> {
    /// CODE SET.
    pub code_set: CodeSet,
    /// ASSOCIATION (0 = logical unit).
    pub association: u8,
    /// DESIGNATOR TYPE.
    pub designator_type: DesignatorType,
    /// The designator bytes.
    pub value: &'a [u8],
}

/// A parsed VPD page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VpdPage {
    /// 0x00: the page codes supported, ascending.
    SupportedPages(InlineBytes<VPD_PAYLOAD_MAX_LEN>),
    /// 0x80: the product serial number, ASCII.
    UnitSerialNumber(InlineBytes<VPD_PAYLOAD_MAX_LEN>),
    /// 0x83: the raw designation descriptor list; walk it with [`designators`].
    DeviceIdentification(InlineBytes<VPD_PAYLOAD_MAX_LEN>),
    /// 0xB0.
    BlockLimits(BlockLimits),
    /// 0xB1.
    BlockDeviceCharacteristics(BlockDeviceCharacteristics),
    /// 0xB2.
    LogicalBlockProvisioning(LogicalBlockProvisioning),
}

/// Zero-copy VPD page header view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VpdPacket<T: AsRef<[u8]>> {
    buffer: T,
}
crate::bytes::packet_view!(VpdPacket, VPD_HEADER_LEN);

impl<T: AsRef<[u8]>> VpdPacket<T> {
    /// Fails unless the buffer holds the header and the page length it announces.
    pub fn check_len(&self) -> Result<()> {
        let data = self.buffer.as_ref();
        need("VPD page header", data, VPD_HEADER_LEN)?;
        need(
            "VPD page",
            data,
            VPD_HEADER_LEN + usize::from(self.page_length()),
        )
    }
    /// PERIPHERAL QUALIFIER and DEVICE TYPE byte.
    pub fn peripheral(&self) -> u8 {
        self.buffer.as_ref()[0]
    }
    /// PAGE CODE.
    pub fn page_code(&self) -> VpdPageCode {
        self.buffer.as_ref()[1].into()
    }
    /// PAGE LENGTH.
    pub fn page_length(&self) -> u16 {
        be16(&self.buffer.as_ref()[2..4])
    }
    /// The page payload after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[VPD_HEADER_LEN..VPD_HEADER_LEN + usize::from(self.page_length())]
    }
}

fn inline(field: &'static str, payload: &[u8]) -> Result<InlineBytes<VPD_PAYLOAD_MAX_LEN>> {
    InlineBytes::new(payload).ok_or(Error::BadField {
        field,
        value: payload.len() as u64,
        reason: "page longer than 252 bytes",
    })
}

/// Walks the designation descriptors of a Device Identification payload.
pub fn designators(payload: &[u8]) -> impl Iterator<Item = Result<Designator<'_>>> + '_ {
    let mut at = 0usize;
    core::iter::from_fn(move || {
        if at >= payload.len() {
            return None;
        }
        let rest = &payload[at..];
        if let Err(e) = need("designation descriptor header", rest, DESIGNATOR_HEADER_LEN) {
            at = payload.len();
            return Some(Err(e));
        }
        let end = DESIGNATOR_HEADER_LEN + usize::from(rest[3]);
        if let Err(e) = need("designation descriptor", rest, end) {
            at = payload.len();
            return Some(Err(e));
        }
        at += end;
        Some(Ok(Designator {
            code_set: (rest[0] & CODE_SET_MASK).into(),
            association: (rest[1] >> ASSOCIATION_SHIFT) & ASSOCIATION_MASK,
            designator_type: (rest[1] & DESIGNATOR_TYPE_MASK).into(),
            value: &rest[DESIGNATOR_HEADER_LEN..end],
        }))
    })
}

/// Writes designation descriptors into `buffer`; returns their total length.
pub fn emit_designators(list: &[Designator<'_>], buffer: &mut [u8]) -> Result<usize> {
    let mut at = 0;
    for d in list {
        let value_len = u8::try_from(d.value.len()).map_err(|_| Error::BadField {
            field: "DESIGNATOR LENGTH",
            value: d.value.len() as u64,
            reason: "at most 255 bytes",
        })?;
        let len = DESIGNATOR_HEADER_LEN + d.value.len();
        room("designation descriptor", &buffer[at..], len)?;
        let out = &mut buffer[at..at + len];
        out[0] = u8::from(d.code_set) & CODE_SET_MASK;
        out[1] = (d.association & ASSOCIATION_MASK) << ASSOCIATION_SHIFT
            | (u8::from(d.designator_type) & DESIGNATOR_TYPE_MASK);
        out[2] = 0;
        out[3] = value_len;
        out[DESIGNATOR_HEADER_LEN..].copy_from_slice(d.value);
        at += len;
    }
    Ok(at)
}

impl VpdPage {
    /// Parses a whole VPD page (header included).
    pub fn parse<T: AsRef<[u8]>>(packet: &VpdPacket<T>) -> Result<Self> {
        packet.check_len()?;
        let p = packet.payload();
        Ok(match packet.page_code() {
            VpdPageCode::SupportedPages => VpdPage::SupportedPages(inline("SUPPORTED PAGES", p)?),
            VpdPageCode::UnitSerialNumber => {
                VpdPage::UnitSerialNumber(inline("PRODUCT SERIAL NUMBER", p)?)
            }
            VpdPageCode::DeviceIdentification => {
                for d in designators(p) {
                    d?;
                }
                VpdPage::DeviceIdentification(inline("DESIGNATION DESCRIPTORS", p)?)
            }
            VpdPageCode::BlockLimits => {
                need("Block Limits page", p, BLOCK_LIMITS_PAGE_LEN)?;
                let alignment = be32(&p[28..32]);
                VpdPage::BlockLimits(BlockLimits {
                    optimal_transfer_granularity_blocks: be16(&p[2..4]),
                    maximum_transfer_blocks: be32(&p[4..8]),
                    optimal_transfer_blocks: be32(&p[8..12]),
                    maximum_unmap_lba_count: be32(&p[16..20]),
                    maximum_unmap_descriptor_count: be32(&p[20..24]),
                    optimal_unmap_granularity_blocks: be32(&p[24..28]),
                    unmap_granularity_alignment: (alignment & UGAVALID_BIT != 0)
                        .then_some(alignment & !UGAVALID_BIT),
                    maximum_write_same_blocks: be64(&p[32..40]),
                })
            }
            VpdPageCode::BlockDeviceCharacteristics => {
                need(
                    "Block Device Characteristics page",
                    p,
                    BLOCK_CHARACTERISTICS_PAGE_LEN,
                )?;
                VpdPage::BlockDeviceCharacteristics(BlockDeviceCharacteristics {
                    medium_rotation_rate: be16(&p[0..2]),
                    nominal_form_factor: p[3] & FORM_FACTOR_MASK,
                })
            }
            VpdPageCode::LogicalBlockProvisioning => {
                need("Logical Block Provisioning page", p, PROVISIONING_PAGE_LEN)?;
                VpdPage::LogicalBlockProvisioning(LogicalBlockProvisioning {
                    threshold_exponent: p[0],
                    unmap_supported: p[1] & LBPU_BIT != 0,
                    write_same16_unmap: p[1] & LBPWS_BIT != 0,
                    write_same10_unmap: p[1] & LBPWS10_BIT != 0,
                    lbprz: (p[1] >> LBPRZ_SHIFT) & LBPRZ_MASK,
                    anchor_supported: p[1] & ANC_SUP_BIT != 0,
                    descriptor_present: p[1] & DP_BIT != 0,
                    provisioning_type: p[2] & PROVISIONING_TYPE_MASK,
                })
            }
            VpdPageCode::Unknown(code) => {
                return Err(Error::Unsupported {
                    what: "VPD page code",
                    value: code.into(),
                })
            }
        })
    }

    /// Page code.
    pub fn page_code(&self) -> VpdPageCode {
        match self {
            VpdPage::SupportedPages(_) => VpdPageCode::SupportedPages,
            VpdPage::UnitSerialNumber(_) => VpdPageCode::UnitSerialNumber,
            VpdPage::DeviceIdentification(_) => VpdPageCode::DeviceIdentification,
            VpdPage::BlockLimits(_) => VpdPageCode::BlockLimits,
            VpdPage::BlockDeviceCharacteristics(_) => VpdPageCode::BlockDeviceCharacteristics,
            VpdPage::LogicalBlockProvisioning(_) => VpdPageCode::LogicalBlockProvisioning,
        }
    }

    fn payload_len(&self) -> usize {
        match self {
            VpdPage::SupportedPages(b)
            | VpdPage::UnitSerialNumber(b)
            | VpdPage::DeviceIdentification(b) => b.len(),
            VpdPage::BlockLimits(_) => BLOCK_LIMITS_PAGE_LEN,
            VpdPage::BlockDeviceCharacteristics(_) => BLOCK_CHARACTERISTICS_PAGE_LEN,
            VpdPage::LogicalBlockProvisioning(_) => PROVISIONING_PAGE_LEN,
        }
    }

    /// Bytes `emit` writes.
    pub fn buffer_len(&self) -> usize {
        VPD_HEADER_LEN + self.payload_len()
    }

    /// Writes the page for a connected direct-access device (peripheral byte 0).
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        room("VPD page", buffer, len)?;
        let out = &mut buffer[..len];
        out.fill(0);
        out[1] = self.page_code().into();
        put_be16(&mut out[2..4], self.payload_len() as u16);
        let p = &mut out[VPD_HEADER_LEN..];
        match self {
            VpdPage::SupportedPages(b)
            | VpdPage::UnitSerialNumber(b)
            | VpdPage::DeviceIdentification(b) => p.copy_from_slice(b),
            VpdPage::BlockLimits(l) => {
                put_be16(&mut p[2..4], l.optimal_transfer_granularity_blocks);
                put_be32(&mut p[4..8], l.maximum_transfer_blocks);
                put_be32(&mut p[8..12], l.optimal_transfer_blocks);
                put_be32(&mut p[16..20], l.maximum_unmap_lba_count);
                put_be32(&mut p[20..24], l.maximum_unmap_descriptor_count);
                put_be32(&mut p[24..28], l.optimal_unmap_granularity_blocks);
                if let Some(a) = l.unmap_granularity_alignment {
                    if a & UGAVALID_BIT != 0 {
                        return Err(Error::BadField {
                            field: "UNMAP GRANULARITY ALIGNMENT",
                            value: a.into(),
                            reason: "31-bit field",
                        });
                    }
                    put_be32(&mut p[28..32], a | UGAVALID_BIT);
                }
                put_be64(&mut p[32..40], l.maximum_write_same_blocks);
            }
            VpdPage::BlockDeviceCharacteristics(c) => {
                put_be16(&mut p[0..2], c.medium_rotation_rate);
                p[3] = c.nominal_form_factor & FORM_FACTOR_MASK;
            }
            VpdPage::LogicalBlockProvisioning(l) => {
                p[0] = l.threshold_exponent;
                p[1] = if l.unmap_supported { LBPU_BIT } else { 0 }
                    | if l.write_same16_unmap { LBPWS_BIT } else { 0 }
                    | if l.write_same10_unmap { LBPWS10_BIT } else { 0 }
                    | (l.lbprz & LBPRZ_MASK) << LBPRZ_SHIFT
                    | if l.anchor_supported { ANC_SUP_BIT } else { 0 }
                    | if l.descriptor_present { DP_BIT } else { 0 };
                p[2] = l.provisioning_type & PROVISIONING_TYPE_MASK;
            }
        }
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(golden: &[u8], page: VpdPage) {
        assert_eq!(VpdPage::parse(&VpdPacket::new_unchecked(golden)), Ok(page));
        let mut buf = [0xA5u8; 300];
        let n = page.emit(&mut buf).unwrap();
        assert_eq!(&buf[..n], golden);
    }

    #[test]
    fn supported_and_serial_golden() {
        let pages = [0x00, 0x80, 0x83, 0xb0, 0xb1, 0xb2];
        let mut golden = [0u8; 10];
        golden[..4].copy_from_slice(&[0, 0, 0, 6]);
        golden[4..].copy_from_slice(&pages);
        round_trip(
            &golden,
            VpdPage::SupportedPages(InlineBytes::new(&pages).unwrap()),
        );
        round_trip(
            b"\x00\x80\x00\x04S123",
            VpdPage::UnitSerialNumber(InlineBytes::new(b"S123").unwrap()),
        );
    }

    #[test]
    fn device_identification_golden() {
        let naa = [0x50, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07];
        let list = [Designator {
            code_set: CodeSet::Binary,
            association: 0,
            designator_type: DesignatorType::Naa,
            value: &naa,
        }];
        let mut payload = [0u8; 12];
        assert_eq!(emit_designators(&list, &mut payload), Ok(12));
        assert_eq!(&payload[..4], &[0x01, 0x03, 0x00, 0x08]);
        let mut golden = [0u8; 16];
        golden[..4].copy_from_slice(&[0, 0x83, 0, 12]);
        golden[4..].copy_from_slice(&payload);
        round_trip(
            &golden,
            VpdPage::DeviceIdentification(InlineBytes::new(&payload).unwrap()),
        );
        assert_eq!(designators(&payload).next(), Some(Ok(list[0])));
        assert!(matches!(
            VpdPage::parse(&VpdPacket::new_unchecked(&[0, 0x83, 0, 3, 1, 3, 0][..])),
            Err(Error::Truncated { .. })
        ));
    }

    #[test]
    fn block_pages_golden() {
        let mut b0 = [0u8; 64];
        b0[..4].copy_from_slice(&[0, 0xb0, 0, 0x3c]);
        b0[8..12].copy_from_slice(&[0, 0, 0x08, 0]); // max transfer 2048 blocks
        b0[20..24].copy_from_slice(&[0, 0x40, 0, 0]); // max unmap LBA count
        b0[24..28].copy_from_slice(&[0, 0, 0, 1]);
        b0[32..36].copy_from_slice(&[0x80, 0, 0, 0]);
        round_trip(
            &b0,
            VpdPage::BlockLimits(BlockLimits {
                maximum_transfer_blocks: 2048,
                maximum_unmap_lba_count: 0x0040_0000,
                maximum_unmap_descriptor_count: 1,
                unmap_granularity_alignment: Some(0),
                ..BlockLimits::default()
            }),
        );
        let mut b1 = [0u8; 64];
        b1[..8].copy_from_slice(&[0, 0xb1, 0, 0x3c, 0x1c, 0x20, 0, 0x02]);
        round_trip(
            &b1,
            VpdPage::BlockDeviceCharacteristics(BlockDeviceCharacteristics {
                medium_rotation_rate: 7200,
                nominal_form_factor: 2,
            }),
        );
        round_trip(
            &[0, 0xb2, 0, 4, 0, 0x84, 0x02, 0],
            VpdPage::LogicalBlockProvisioning(LogicalBlockProvisioning {
                threshold_exponent: 0,
                unmap_supported: true,
                write_same16_unmap: false,
                write_same10_unmap: false,
                lbprz: 1,
                anchor_supported: false,
                descriptor_present: false,
                provisioning_type: 2,
            }),
        );
    }
}
