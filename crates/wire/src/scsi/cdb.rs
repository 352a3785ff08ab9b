//! SCSI Command Descriptor Blocks: opcodes, a zero-copy view, and [`Command`], the parsed form
//! the simulator and the pretty-printer work with.

use super::ata_passthrough::AtaPassThrough;
use crate::bytes::{be16, be32, be64, packet_view, put_be16, put_be32, put_be64};
use crate::error::{need, room, Error, Result};

crate::bytes::code_enum! {
    /// Operation code, byte 0 of every CDB.
    pub enum Opcode: u8 {
        /// TEST UNIT READY.
        TestUnitReady = 0x00,
        /// REQUEST SENSE.
        RequestSense = 0x03,
        /// INQUIRY.
        Inquiry = 0x12,
        /// MODE SENSE(6).
        ModeSense6 = 0x1A,
        /// READ CAPACITY(10).
        ReadCapacity10 = 0x25,
        /// READ(10).
        Read10 = 0x28,
        /// WRITE(10).
        Write10 = 0x2A,
        /// SYNCHRONIZE CACHE(10).
        SynchronizeCache10 = 0x35,
        /// UNMAP.
        Unmap = 0x42,
        /// MODE SENSE(10).
        ModeSense10 = 0x5A,
        /// ATA PASS-THROUGH(16).
        AtaPassThrough16 = 0x85,
        /// READ(16).
        Read16 = 0x88,
        /// WRITE(16).
        Write16 = 0x8A,
        /// SERVICE ACTION IN(16): READ CAPACITY(16) is its service action 0x10.
        ServiceActionIn16 = 0x9E,
        /// REPORT LUNS.
        ReportLuns = 0xA0,
        /// ATA PASS-THROUGH(12).
        AtaPassThrough12 = 0xA1,
    }
}

/// Service action of SERVICE ACTION IN(16) that is READ CAPACITY(16).
pub const SERVICE_ACTION_READ_CAPACITY_16: u8 = 0x10;
const SERVICE_ACTION_MASK: u8 = 0x1F;
const DPO_BIT: u8 = 0x10;
const FUA_BIT: u8 = 0x08;
const EVPD_BIT: u8 = 0x01;
const DESC_BIT: u8 = 0x01;
const DBD_BIT: u8 = 0x08;
const LLBAA_BIT: u8 = 0x10;
const IMMED_BIT: u8 = 0x02;
const ANCHOR_BIT: u8 = 0x01;
const GROUP_NUMBER_MASK: u8 = 0x1F;
const PAGE_CODE_MASK: u8 = 0x3F;
const PAGE_CONTROL_SHIFT: u8 = 6;

/// CDB length of a 6-byte command.
pub const CDB6_LEN: usize = 6;
/// CDB length of a 10-byte command.
pub const CDB10_LEN: usize = 10;
/// CDB length of a 12-byte command.
pub const CDB12_LEN: usize = 12;
/// CDB length of a 16-byte command.
pub const CDB16_LEN: usize = 16;

/// Length of a CDB implied by its opcode's group code (bits 7..5), or `None` for the
/// reserved and vendor-specific groups.
pub fn cdb_len_for_opcode(opcode: u8) -> Option<usize> {
    match opcode >> 5 {
        0 => Some(CDB6_LEN),
        1 | 2 => Some(CDB10_LEN),
        4 => Some(CDB16_LEN),
        5 => Some(CDB12_LEN),
        _ => None,
    }
}

/// Which of the two CDB sizes a READ/WRITE uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CdbSize {
    /// READ(10)/WRITE(10): 32-bit LBA, 16-bit block count.
    Ten,
    /// READ(16)/WRITE(16): 64-bit LBA, 32-bit block count.
    Sixteen,
}

/// PC field of MODE SENSE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PageControl {
    /// Current values.
    Current = 0,
    /// Changeable values.
    Changeable = 1,
    /// Default values.
    Default = 2,
    /// Saved values.
    Saved = 3,
}

impl PageControl {
    fn from_bits(bits: u8) -> Self {
        match bits & 0x03 {
            0 => PageControl::Current,
            1 => PageControl::Changeable,
            2 => PageControl::Default,
            _ => PageControl::Saved,
        }
    }
}

/// Direction of a command's data phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataDirection {
    /// No data phase.
    None,
    /// Device to host.
    In,
    /// Host to device.
    Out,
}

/// Zero-copy view of a CDB: the opcode and the length its group code implies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CdbPacket<T: AsRef<[u8]>> {
    buffer: T,
}
packet_view!(CdbPacket, CDB6_LEN);

impl<T: AsRef<[u8]>> CdbPacket<T> {
    /// Fails unless the buffer is as long as the opcode's group code says.
    pub fn check_len(&self) -> Result<()> {
        let data = self.buffer.as_ref();
        need("CDB", data, 1)?;
        match cdb_len_for_opcode(data[0]) {
            Some(len) => need("CDB", data, len),
            None => Err(Error::Unsupported {
                what: "SCSI opcode group",
                value: data[0].into(),
            }),
        }
    }
    /// Operation code.
    pub fn opcode(&self) -> Opcode {
        self.buffer.as_ref()[0].into()
    }
    /// The CDB bytes (exactly the length the opcode implies).
    pub fn bytes(&self) -> &[u8] {
        let data = self.buffer.as_ref();
        let len = cdb_len_for_opcode(data[0])
            .unwrap_or(data.len())
            .min(data.len());
        &data[..len]
    }
}

/// A parsed CDB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    /// TEST UNIT READY.
    TestUnitReady,
    /// REQUEST SENSE.
    RequestSense {
        /// DESC: ask for descriptor-format sense.
        descriptor_format: bool,
        /// Allocation length in bytes.
        allocation_length: u8,
    },
    /// INQUIRY.
    Inquiry {
        /// EVPD: a VPD page rather than standard data.
        evpd: bool,
        /// VPD page code (0 with `evpd == false`).
        page_code: u8,
        /// Allocation length in bytes.
        allocation_length: u16,
    },
    /// MODE SENSE(6) or (10).
    ModeSense {
        /// Which CDB: false = MODE SENSE(6), true = MODE SENSE(10).
        ten: bool,
        /// LLBAA (10-byte form only).
        long_lba_accepted: bool,
        /// DBD: disable block descriptors.
        disable_block_descriptors: bool,
        /// PC.
        page_control: PageControl,
        /// Page code (0x3F = all pages).
        page_code: u8,
        /// Subpage code.
        subpage_code: u8,
        /// Allocation length in bytes (≤ 255 for the 6-byte form).
        allocation_length: u16,
    },
    /// READ CAPACITY(10).
    ReadCapacity10,
    /// READ CAPACITY(16).
    ReadCapacity16 {
        /// Allocation length in bytes.
        allocation_length: u32,
    },
    /// READ(10) or READ(16).
    Read {
        /// First logical block.
        lba: u64,
        /// Number of logical blocks.
        blocks: u32,
        /// FUA: force unit access.
        fua: bool,
        /// DPO: disable page out.
        dpo: bool,
        /// Which CDB carries it.
        size: CdbSize,
    },
    /// WRITE(10) or WRITE(16).
    Write {
        /// First logical block.
        lba: u64,
        /// Number of logical blocks.
        blocks: u32,
        /// FUA: force unit access (write through the cache).
        fua: bool,
        /// DPO: disable page out.
        dpo: bool,
        /// Which CDB carries it.
        size: CdbSize,
    },
    /// SYNCHRONIZE CACHE(10).
    SynchronizeCache10 {
        /// First logical block (0 with `blocks == 0` = whole medium).
        lba: u32,
        /// Number of blocks, 0 = to the end.
        blocks: u16,
        /// IMMED: return status before the flush completes.
        immediate: bool,
    },
    /// REPORT LUNS.
    ReportLuns {
        /// SELECT REPORT.
        select_report: u8,
        /// Allocation length in bytes.
        allocation_length: u32,
    },
    /// UNMAP (the block descriptors travel in the data-out parameter list).
    Unmap {
        /// ANCHOR.
        anchor: bool,
        /// GROUP NUMBER.
        group_number: u8,
        /// Parameter list length in bytes.
        parameter_list_length: u16,
    },
    /// ATA PASS-THROUGH (12) or (16).
    AtaPassThrough(AtaPassThrough),
}

impl Command {
    /// READ with the smallest CDB that can carry `lba` and `blocks`.
    pub fn read(lba: u64, blocks: u32) -> Self {
        Command::Read {
            lba,
            blocks,
            fua: false,
            dpo: false,
            size: smallest_rw_size(lba, blocks),
        }
    }

    /// WRITE with the smallest CDB that can carry `lba` and `blocks`.
    pub fn write(lba: u64, blocks: u32) -> Self {
        Command::Write {
            lba,
            blocks,
            fua: false,
            dpo: false,
            size: smallest_rw_size(lba, blocks),
        }
    }

    /// Parses a CDB; an opcode this crate does not decode is [`Error::Unsupported`].
    pub fn parse(cdb: &[u8]) -> Result<Self> {
        need("CDB", cdb, 1)?;
        let opcode = Opcode::from(cdb[0]);
        let len = match opcode {
            Opcode::Unknown(op) => {
                return Err(Error::Unsupported {
                    what: "SCSI opcode",
                    value: op.into(),
                })
            }
            Opcode::ServiceActionIn16 => CDB16_LEN,
            Opcode::AtaPassThrough12 => CDB12_LEN,
            _ => cdb_len_for_opcode(cdb[0]).unwrap_or(CDB16_LEN),
        };
        need(opcode_name(opcode), cdb, len)?;
        Ok(match opcode {
            Opcode::TestUnitReady => Command::TestUnitReady,
            Opcode::RequestSense => Command::RequestSense {
                descriptor_format: cdb[1] & DESC_BIT != 0,
                allocation_length: cdb[4],
            },
            Opcode::Inquiry => {
                let evpd = cdb[1] & EVPD_BIT != 0;
                if !evpd && cdb[2] != 0 {
                    return Err(Error::BadField {
                        field: "INQUIRY PAGE CODE",
                        value: cdb[2].into(),
                        reason: "must be zero when EVPD is zero",
                    });
                }
                Command::Inquiry {
                    evpd,
                    page_code: cdb[2],
                    allocation_length: be16(&cdb[3..5]),
                }
            }
            Opcode::ModeSense6 | Opcode::ModeSense10 => {
                let ten = opcode == Opcode::ModeSense10;
                Command::ModeSense {
                    ten,
                    long_lba_accepted: ten && cdb[1] & LLBAA_BIT != 0,
                    disable_block_descriptors: cdb[1] & DBD_BIT != 0,
                    page_control: PageControl::from_bits(cdb[2] >> PAGE_CONTROL_SHIFT),
                    page_code: cdb[2] & PAGE_CODE_MASK,
                    subpage_code: cdb[3],
                    allocation_length: if ten { be16(&cdb[7..9]) } else { cdb[4].into() },
                }
            }
            Opcode::ReadCapacity10 => Command::ReadCapacity10,
            Opcode::ServiceActionIn16 => {
                let action = cdb[1] & SERVICE_ACTION_MASK;
                if action != SERVICE_ACTION_READ_CAPACITY_16 {
                    return Err(Error::Unsupported {
                        what: "SERVICE ACTION IN(16) service action",
                        value: action.into(),
                    });
                }
                Command::ReadCapacity16 {
                    allocation_length: be32(&cdb[10..14]),
                }
            }
            Opcode::Read10 | Opcode::Write10 | Opcode::Read16 | Opcode::Write16 => {
                let (lba, blocks, size) = if matches!(opcode, Opcode::Read10 | Opcode::Write10) {
                    (
                        u64::from(be32(&cdb[2..6])),
                        u32::from(be16(&cdb[7..9])),
                        CdbSize::Ten,
                    )
                } else {
                    (be64(&cdb[2..10]), be32(&cdb[10..14]), CdbSize::Sixteen)
                };
                let fua = cdb[1] & FUA_BIT != 0;
                let dpo = cdb[1] & DPO_BIT != 0;
                if matches!(opcode, Opcode::Read10 | Opcode::Read16) {
                    Command::Read {
                        lba,
                        blocks,
                        fua,
                        dpo,
                        size,
                    }
                } else {
                    Command::Write {
                        lba,
                        blocks,
                        fua,
                        dpo,
                        size,
                    }
                }
            }
            Opcode::SynchronizeCache10 => Command::SynchronizeCache10 {
                lba: be32(&cdb[2..6]),
                blocks: be16(&cdb[7..9]),
                immediate: cdb[1] & IMMED_BIT != 0,
            },
            Opcode::ReportLuns => Command::ReportLuns {
                select_report: cdb[2],
                allocation_length: be32(&cdb[6..10]),
            },
            Opcode::Unmap => Command::Unmap {
                anchor: cdb[1] & ANCHOR_BIT != 0,
                group_number: cdb[6] & GROUP_NUMBER_MASK,
                parameter_list_length: be16(&cdb[7..9]),
            },
            Opcode::AtaPassThrough12 => Command::AtaPassThrough(AtaPassThrough::parse12(cdb)?),
            Opcode::AtaPassThrough16 => Command::AtaPassThrough(AtaPassThrough::parse16(cdb)?),
            Opcode::Unknown(op) => {
                return Err(Error::Unsupported {
                    what: "SCSI opcode",
                    value: op.into(),
                })
            }
        })
    }

    /// Operation code.
    pub fn opcode(&self) -> Opcode {
        match self {
            Command::TestUnitReady => Opcode::TestUnitReady,
            Command::RequestSense { .. } => Opcode::RequestSense,
            Command::Inquiry { .. } => Opcode::Inquiry,
            Command::ModeSense { ten: false, .. } => Opcode::ModeSense6,
            Command::ModeSense { ten: true, .. } => Opcode::ModeSense10,
            Command::ReadCapacity10 => Opcode::ReadCapacity10,
            Command::ReadCapacity16 { .. } => Opcode::ServiceActionIn16,
            Command::Read {
                size: CdbSize::Ten, ..
            } => Opcode::Read10,
            Command::Read {
                size: CdbSize::Sixteen,
                ..
            } => Opcode::Read16,
            Command::Write {
                size: CdbSize::Ten, ..
            } => Opcode::Write10,
            Command::Write {
                size: CdbSize::Sixteen,
                ..
            } => Opcode::Write16,
            Command::SynchronizeCache10 { .. } => Opcode::SynchronizeCache10,
            Command::ReportLuns { .. } => Opcode::ReportLuns,
            Command::Unmap { .. } => Opcode::Unmap,
            Command::AtaPassThrough(a) if a.sixteen => Opcode::AtaPassThrough16,
            Command::AtaPassThrough(_) => Opcode::AtaPassThrough12,
        }
    }

    /// Direction of the data phase.
    pub fn data_direction(&self) -> DataDirection {
        match self {
            Command::TestUnitReady | Command::SynchronizeCache10 { .. } => DataDirection::None,
            Command::Write { blocks: 0, .. } | Command::Read { blocks: 0, .. } => {
                DataDirection::None
            }
            Command::Write { .. } | Command::Unmap { .. } => DataDirection::Out,
            Command::AtaPassThrough(a) => {
                if a.t_length == super::TransferLengthField::NoData {
                    DataDirection::None
                } else if a.transfer_from_device {
                    DataDirection::In
                } else {
                    DataDirection::Out
                }
            }
            _ => DataDirection::In,
        }
    }

    /// CDB length `emit` writes.
    pub fn buffer_len(&self) -> usize {
        match self {
            Command::AtaPassThrough(a) => a.buffer_len(),
            Command::ReadCapacity16 { .. } => CDB16_LEN,
            other => cdb_len_for_opcode(other.opcode().into()).unwrap_or(CDB16_LEN),
        }
    }

    /// Writes the CDB (reserved bytes and control byte zero); fails if a value does not fit
    /// the chosen CDB size.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        room(opcode_name(self.opcode()), buffer, len)?;
        if let Command::AtaPassThrough(a) = self {
            return a.emit(buffer);
        }
        let cdb = &mut buffer[..len];
        cdb.fill(0);
        cdb[0] = self.opcode().into();
        match *self {
            Command::TestUnitReady | Command::ReadCapacity10 => {}
            Command::RequestSense {
                descriptor_format,
                allocation_length,
            } => {
                cdb[1] = if descriptor_format { DESC_BIT } else { 0 };
                cdb[4] = allocation_length;
            }
            Command::Inquiry {
                evpd,
                page_code,
                allocation_length,
            } => {
                if !evpd && page_code != 0 {
                    return Err(Error::BadField {
                        field: "INQUIRY PAGE CODE",
                        value: page_code.into(),
                        reason: "must be zero when EVPD is zero",
                    });
                }
                cdb[1] = if evpd { EVPD_BIT } else { 0 };
                cdb[2] = page_code;
                put_be16(&mut cdb[3..5], allocation_length);
            }
            Command::ModeSense {
                ten,
                long_lba_accepted,
                disable_block_descriptors,
                page_control,
                page_code,
                subpage_code,
                allocation_length,
            } => {
                if page_code > PAGE_CODE_MASK {
                    return Err(Error::BadField {
                        field: "MODE SENSE PAGE CODE",
                        value: page_code.into(),
                        reason: "page code is 6 bits",
                    });
                }
                cdb[1] = if disable_block_descriptors {
                    DBD_BIT
                } else {
                    0
                } | if ten && long_lba_accepted {
                    LLBAA_BIT
                } else {
                    0
                };
                cdb[2] = ((page_control as u8) << PAGE_CONTROL_SHIFT) | page_code;
                cdb[3] = subpage_code;
                if ten {
                    put_be16(&mut cdb[7..9], allocation_length);
                } else {
                    cdb[4] = u8::try_from(allocation_length).map_err(|_| Error::BadField {
                        field: "MODE SENSE(6) ALLOCATION LENGTH",
                        value: allocation_length.into(),
                        reason: "at most 255 in the 6-byte CDB",
                    })?;
                }
            }
            Command::ReadCapacity16 { allocation_length } => {
                cdb[1] = SERVICE_ACTION_READ_CAPACITY_16;
                put_be32(&mut cdb[10..14], allocation_length);
            }
            Command::Read {
                lba,
                blocks,
                fua,
                dpo,
                size,
            }
            | Command::Write {
                lba,
                blocks,
                fua,
                dpo,
                size,
            } => {
                cdb[1] = if fua { FUA_BIT } else { 0 } | if dpo { DPO_BIT } else { 0 };
                match size {
                    CdbSize::Ten => {
                        let lba = u32::try_from(lba).map_err(|_| Error::BadField {
                            field: "LOGICAL BLOCK ADDRESS",
                            value: lba,
                            reason: "READ/WRITE(10) carries a 32-bit LBA",
                        })?;
                        let blocks = u16::try_from(blocks).map_err(|_| Error::BadField {
                            field: "TRANSFER LENGTH",
                            value: blocks.into(),
                            reason: "READ/WRITE(10) carries at most 65535 blocks",
                        })?;
                        put_be32(&mut cdb[2..6], lba);
                        put_be16(&mut cdb[7..9], blocks);
                    }
                    CdbSize::Sixteen => {
                        put_be64(&mut cdb[2..10], lba);
                        put_be32(&mut cdb[10..14], blocks);
                    }
                }
            }
            Command::SynchronizeCache10 {
                lba,
                blocks,
                immediate,
            } => {
                cdb[1] = if immediate { IMMED_BIT } else { 0 };
                put_be32(&mut cdb[2..6], lba);
                put_be16(&mut cdb[7..9], blocks);
            }
            Command::ReportLuns {
                select_report,
                allocation_length,
            } => {
                cdb[2] = select_report;
                put_be32(&mut cdb[6..10], allocation_length);
            }
            Command::Unmap {
                anchor,
                group_number,
                parameter_list_length,
            } => {
                cdb[1] = if anchor { ANCHOR_BIT } else { 0 };
                cdb[6] = group_number & GROUP_NUMBER_MASK;
                put_be16(&mut cdb[7..9], parameter_list_length);
            }
            Command::AtaPassThrough(_) => {}
        }
        Ok(len)
    }
}

fn smallest_rw_size(lba: u64, blocks: u32) -> CdbSize {
    if lba <= u64::from(u32::MAX) && blocks <= u32::from(u16::MAX) {
        CdbSize::Ten
    } else {
        CdbSize::Sixteen
    }
}

/// The SPC/SBC name of an opcode, e.g. "READ(10)"; "UNKNOWN" for unnamed ones.
pub fn opcode_name(opcode: Opcode) -> &'static str {
    match opcode {
        Opcode::TestUnitReady => "TEST UNIT READY",
        Opcode::RequestSense => "REQUEST SENSE",
        Opcode::Inquiry => "INQUIRY",
        Opcode::ModeSense6 => "MODE SENSE(6)",
        Opcode::ReadCapacity10 => "READ CAPACITY(10)",
        Opcode::Read10 => "READ(10)",
        Opcode::Write10 => "WRITE(10)",
        Opcode::SynchronizeCache10 => "SYNCHRONIZE CACHE(10)",
        Opcode::Unmap => "UNMAP",
        Opcode::ModeSense10 => "MODE SENSE(10)",
        Opcode::AtaPassThrough16 => "ATA PASS-THROUGH(16)",
        Opcode::Read16 => "READ(16)",
        Opcode::Write16 => "WRITE(16)",
        Opcode::ServiceActionIn16 => "SERVICE ACTION IN(16)",
        Opcode::ReportLuns => "REPORT LUNS",
        Opcode::AtaPassThrough12 => "ATA PASS-THROUGH(12)",
        Opcode::Unknown(_) => "UNKNOWN",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn golden(bytes: &[u8], command: Command) {
        assert_eq!(Command::parse(bytes), Ok(command), "parse {bytes:02x?}");
        let mut buf = [0xA5u8; 20];
        let n = command.emit(&mut buf).unwrap();
        assert_eq!(&buf[..n], bytes, "emit {command:?}");
        assert_eq!(buf[n], 0xA5);
        assert_eq!(command.buffer_len(), bytes.len());
    }

    #[test]
    fn golden_cdbs() {
        golden(&[0x00, 0, 0, 0, 0, 0], Command::TestUnitReady);
        golden(
            &[0x03, 0, 0, 0, 18, 0],
            Command::RequestSense {
                descriptor_format: false,
                allocation_length: 18,
            },
        );
        golden(
            &[0x12, 0, 0, 0, 36, 0],
            Command::Inquiry {
                evpd: false,
                page_code: 0,
                allocation_length: 36,
            },
        );
        golden(
            &[0x12, 1, 0xb0, 0x01, 0x00, 0],
            Command::Inquiry {
                evpd: true,
                page_code: 0xb0,
                allocation_length: 256,
            },
        );
        golden(
            &[0x1a, 0x08, 0x3f, 0, 192, 0],
            Command::ModeSense {
                ten: false,
                long_lba_accepted: false,
                disable_block_descriptors: true,
                page_control: PageControl::Current,
                page_code: 0x3f,
                subpage_code: 0,
                allocation_length: 192,
            },
        );
        golden(
            &[0x5a, 0x00, 0x48, 0, 0, 0, 0, 0x02, 0x00, 0],
            Command::ModeSense {
                ten: true,
                long_lba_accepted: false,
                disable_block_descriptors: false,
                page_control: PageControl::Changeable,
                page_code: 0x08,
                subpage_code: 0,
                allocation_length: 512,
            },
        );
        golden(&[0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0], Command::ReadCapacity10);
        golden(
            &[0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0],
            Command::ReadCapacity16 {
                allocation_length: 32,
            },
        );
        golden(
            &[0x28, 0, 0x00, 0x01, 0x02, 0x03, 0, 0x00, 0x80, 0],
            Command::read(0x0001_0203, 128),
        );
        golden(
            &[0x2a, 0x08, 0, 0, 0, 8, 0, 0, 1, 0],
            Command::Write {
                lba: 8,
                blocks: 1,
                fua: true,
                dpo: false,
                size: CdbSize::Ten,
            },
        );
        golden(
            &[0x88, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0],
            Command::read(1 << 32, 256),
        );
        golden(
            &[0x8a, 0x10, 0, 0, 0, 0, 0, 0, 0, 9, 0, 1, 0, 0, 0, 0],
            Command::Write {
                lba: 9,
                blocks: 65536,
                fua: false,
                dpo: true,
                size: CdbSize::Sixteen,
            },
        );
        golden(
            &[0x35, 0x02, 0, 0, 0, 0, 0, 0, 0, 0],
            Command::SynchronizeCache10 {
                lba: 0,
                blocks: 0,
                immediate: true,
            },
        );
        golden(
            &[0xa0, 0, 0x02, 0, 0, 0, 0, 0, 0x10, 0, 0, 0],
            Command::ReportLuns {
                select_report: 2,
                allocation_length: 4096,
            },
        );
        golden(
            &[0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0],
            Command::Unmap {
                anchor: false,
                group_number: 0,
                parameter_list_length: 24,
            },
        );
    }

    #[test]
    fn rejects_with_named_errors() {
        assert_eq!(
            Command::parse(&[0x28, 0, 0, 0]),
            Err(Error::Truncated {
                what: "READ(10)",
                needed: 10,
                got: 4
            })
        );
        assert_eq!(
            Command::parse(&[0xff, 0, 0, 0, 0, 0]),
            Err(Error::Unsupported {
                what: "SCSI opcode",
                value: 0xff
            })
        );
        assert!(matches!(
            Command::parse(&[0x12, 0, 0x80, 0, 36, 0]),
            Err(Error::BadField {
                field: "INQUIRY PAGE CODE",
                ..
            })
        ));
        let too_far = Command::Read {
            lba: 1 << 32,
            blocks: 1,
            fua: false,
            dpo: false,
            size: CdbSize::Ten,
        };
        assert!(matches!(
            too_far.emit(&mut [0u8; 16]),
            Err(Error::BadField {
                field: "LOGICAL BLOCK ADDRESS",
                ..
            })
        ));
        assert_eq!(
            Command::parse(&[]),
            Err(Error::Truncated {
                what: "CDB",
                needed: 1,
                got: 0
            })
        );
    }

    #[test]
    fn directions() {
        assert_eq!(Command::read(0, 1).data_direction(), DataDirection::In);
        assert_eq!(Command::write(0, 1).data_direction(), DataDirection::Out);
        assert_eq!(Command::TestUnitReady.data_direction(), DataDirection::None);
    }
}
