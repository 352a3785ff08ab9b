//! USB Attached SCSI (UAS, T10 UAS-2) Information Units: Command, Sense, Response, Task
//! Management, Read Ready and Write Ready.
//!
//! Byte order: every multi-byte UAS field is **big-endian** (SCSI convention).

use crate::bytes::{be16, packet_view, put_be16, InlineBytes};
use crate::error::{need, room, Error, Result};
use crate::scsi::{Lun, Status};

/// Interface protocol code of UAS (interface class 8).
pub const INTERFACE_PROTOCOL_UAS: u8 = 0x62;
/// Length of the fixed part of a Command IU.
pub const COMMAND_IU_LEN: usize = 32;
/// Length of the CDB field inside a Command IU (shorter CDBs are zero-padded).
pub const COMMAND_IU_CDB_LEN: usize = 16;
/// Largest CDB a Command IU carries: 16 bytes plus 63 dwords of additional CDB.
pub const CDB_MAX_LEN: usize = COMMAND_IU_CDB_LEN + ADDITIONAL_CDB_DWORDS_MAX * 4;
const ADDITIONAL_CDB_DWORDS_MAX: usize = 63;
const ADDITIONAL_CDB_LENGTH_SHIFT: u8 = 2;
const ADDITIONAL_CDB_RESERVED_MASK: u8 = 0x03;
/// Length of the fixed part of a Sense IU, before the sense data.
pub const SENSE_IU_HEADER_LEN: usize = 16;
/// Longest sense data kept (SPC: 8 + 244 additional bytes).
pub const SENSE_DATA_MAX_LEN: usize = 252;
/// Length of a Response IU.
pub const RESPONSE_IU_LEN: usize = 8;
/// Length of a Task Management IU.
pub const TASK_MANAGEMENT_IU_LEN: usize = 16;
/// Length of a Read Ready or Write Ready IU.
pub const READY_IU_LEN: usize = 4;
/// Length of the header every IU shares (IU id, reserved, tag).
pub const IU_HEADER_LEN: usize = 4;
const TASK_ATTRIBUTE_MASK: u8 = 0x07;
const PRIORITY_SHIFT: u8 = 3;
const PRIORITY_MASK: u8 = 0x0F;

crate::bytes::code_enum! {
    /// IU ID, the first byte of every IU.
    pub enum IuId: u8 {
        /// Command IU (host → device, command pipe).
        Command = 0x01,
        /// Sense IU (device → host, status pipe): completes a command.
        Sense = 0x03,
        /// Response IU (device → host, status pipe): answers a task management function.
        Response = 0x04,
        /// Task Management IU (host → device, command pipe).
        TaskManagement = 0x05,
        /// Read Ready IU: the device is ready to send data for a tag (High-Speed only).
        ReadReady = 0x06,
        /// Write Ready IU: the device is ready to receive data for a tag (High-Speed only).
        WriteReady = 0x07,
    }
}

crate::bytes::code_enum! {
    /// Task attribute of a Command IU (SAM).
    pub enum TaskAttribute: u8 {
        /// SIMPLE.
        Simple = 0x0,
        /// HEAD OF QUEUE.
        HeadOfQueue = 0x1,
        /// ORDERED.
        Ordered = 0x2,
        /// ACA.
        Aca = 0x4,
    }
}

crate::bytes::code_enum! {
    /// Task management function of a Task Management IU.
    pub enum TaskManagementFunction: u8 {
        /// ABORT TASK (the task named by `tag_of_managed_task`).
        AbortTask = 0x01,
        /// ABORT TASK SET.
        AbortTaskSet = 0x02,
        /// CLEAR TASK SET.
        ClearTaskSet = 0x04,
        /// LOGICAL UNIT RESET.
        LogicalUnitReset = 0x08,
        /// I_T NEXUS RESET.
        ItNexusReset = 0x10,
        /// CLEAR ACA.
        ClearAca = 0x40,
        /// QUERY TASK.
        QueryTask = 0x80,
        /// QUERY TASK SET.
        QueryTaskSet = 0x81,
        /// QUERY ASYNCHRONOUS EVENT.
        QueryAsynchronousEvent = 0x82,
    }
}

crate::bytes::code_enum! {
    /// Response code of a Response IU.
    pub enum ResponseCode: u8 {
        /// TASK MANAGEMENT FUNCTION COMPLETE.
        Complete = 0x00,
        /// INVALID INFORMATION UNIT.
        InvalidIu = 0x02,
        /// TASK MANAGEMENT FUNCTION NOT SUPPORTED.
        NotSupported = 0x04,
        /// TASK MANAGEMENT FUNCTION FAILED.
        Failed = 0x05,
        /// TASK MANAGEMENT FUNCTION SUCCEEDED.
        Succeeded = 0x08,
        /// INCORRECT LOGICAL UNIT NUMBER.
        IncorrectLun = 0x09,
        /// OVERLAPPED TAG ATTEMPTED.
        OverlappedTag = 0x0A,
    }
}

mod field {
    use core::ops::Range;
    pub const IU_ID: usize = 0;
    pub const TAG: Range<usize> = 2..4;
    // Command IU
    pub const PRIO_ATTR: usize = 4;
    pub const ADDITIONAL_CDB_LENGTH: usize = 6;
    pub const LUN: Range<usize> = 8..16;
    pub const CDB: Range<usize> = 16..32;
    // Sense IU
    pub const STATUS_QUALIFIER: Range<usize> = 4..6;
    pub const STATUS: usize = 6;
    pub const SENSE_LENGTH: Range<usize> = 14..16;
    // Response IU
    pub const ADDITIONAL_RESPONSE_INFO: Range<usize> = 4..7;
    pub const RESPONSE_CODE: usize = 7;
    // Task Management IU
    pub const FUNCTION: usize = 4;
    pub const TAG_OF_MANAGED_TASK: Range<usize> = 6..8;
    // LUN of a Task Management IU shares the Command IU's LUN range.
}

/// Zero-copy view of any UAS IU; which getters are meaningful depends on [`Self::iu_id`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IuPacket<T: AsRef<[u8]>> {
    buffer: T,
}
packet_view!(IuPacket, IU_HEADER_LEN);

impl<T: AsRef<[u8]>> IuPacket<T> {
    /// Fails unless the buffer holds the whole IU its id and length fields announce.
    pub fn check_len(&self) -> Result<()> {
        let data = self.buffer.as_ref();
        need("UAS IU header", data, IU_HEADER_LEN)?;
        match self.iu_id() {
            IuId::Command => {
                need("Command IU", data, COMMAND_IU_LEN)?;
                need("Command IU additional CDB", data, self.command_iu_len())
            }
            IuId::Sense => {
                need("Sense IU", data, SENSE_IU_HEADER_LEN)?;
                need(
                    "Sense IU sense data",
                    data,
                    SENSE_IU_HEADER_LEN + usize::from(self.sense_length()),
                )
            }
            IuId::Response => need("Response IU", data, RESPONSE_IU_LEN),
            IuId::TaskManagement => need("Task Management IU", data, TASK_MANAGEMENT_IU_LEN),
            IuId::ReadReady | IuId::WriteReady => Ok(()),
            IuId::Unknown(_) => Ok(()),
        }
    }
    /// IU ID.
    pub fn iu_id(&self) -> IuId {
        self.buffer.as_ref()[field::IU_ID].into()
    }
    /// Tag (command tag, or the tag of the task management request).
    pub fn tag(&self) -> u16 {
        be16(&self.buffer.as_ref()[field::TAG])
    }
    /// Command IU: task attribute.
    pub fn task_attribute(&self) -> TaskAttribute {
        (self.buffer.as_ref()[field::PRIO_ATTR] & TASK_ATTRIBUTE_MASK).into()
    }
    /// Command IU: command priority (0..=15).
    pub fn command_priority(&self) -> u8 {
        (self.buffer.as_ref()[field::PRIO_ATTR] >> PRIORITY_SHIFT) & PRIORITY_MASK
    }
    /// Command IU: the additional-CDB-length byte, raw.
    pub fn additional_cdb_length_byte(&self) -> u8 {
        self.buffer.as_ref()[field::ADDITIONAL_CDB_LENGTH]
    }
    /// Command IU: additional CDB bytes beyond the first 16.
    pub fn additional_cdb_len(&self) -> usize {
        usize::from(self.additional_cdb_length_byte() >> ADDITIONAL_CDB_LENGTH_SHIFT) * 4
    }
    /// Command IU: total length including additional CDB bytes.
    pub fn command_iu_len(&self) -> usize {
        COMMAND_IU_LEN + self.additional_cdb_len()
    }
    /// Command IU and Task Management IU: logical unit number.
    pub fn lun(&self) -> Lun {
        let mut lun = [0u8; 8];
        lun.copy_from_slice(&self.buffer.as_ref()[field::LUN]);
        Lun(lun)
    }
    /// Command IU: the whole CDB field (16 bytes plus additional CDB bytes).
    pub fn cdb(&self) -> &[u8] {
        &self.buffer.as_ref()[field::CDB.start..self.command_iu_len()]
    }
    /// Sense IU: status qualifier.
    pub fn status_qualifier(&self) -> u16 {
        be16(&self.buffer.as_ref()[field::STATUS_QUALIFIER])
    }
    /// Sense IU: SCSI status.
    pub fn status(&self) -> Status {
        self.buffer.as_ref()[field::STATUS].into()
    }
    /// Sense IU: length of the sense data that follows the header.
    pub fn sense_length(&self) -> u16 {
        be16(&self.buffer.as_ref()[field::SENSE_LENGTH])
    }
    /// Sense IU: the sense data.
    pub fn sense_data(&self) -> &[u8] {
        let start = SENSE_IU_HEADER_LEN;
        &self.buffer.as_ref()[start..start + usize::from(self.sense_length())]
    }
    /// Response IU: additional response information (3 bytes).
    pub fn additional_response_info(&self) -> [u8; 3] {
        let b = &self.buffer.as_ref()[field::ADDITIONAL_RESPONSE_INFO];
        [b[0], b[1], b[2]]
    }
    /// Response IU: response code.
    pub fn response_code(&self) -> ResponseCode {
        self.buffer.as_ref()[field::RESPONSE_CODE].into()
    }
    /// Task Management IU: function.
    pub fn function(&self) -> TaskManagementFunction {
        self.buffer.as_ref()[field::FUNCTION].into()
    }
    /// Task Management IU: tag of the task the function applies to.
    pub fn tag_of_managed_task(&self) -> u16 {
        be16(&self.buffer.as_ref()[field::TAG_OF_MANAGED_TASK])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> IuPacket<T> {
    /// Sets the IU ID.
    pub fn set_iu_id(&mut self, value: IuId) {
        self.buffer.as_mut()[field::IU_ID] = value.into()
    }
    /// Sets the tag.
    pub fn set_tag(&mut self, value: u16) {
        put_be16(&mut self.buffer.as_mut()[field::TAG], value)
    }
    /// Command IU: sets task attribute and priority.
    pub fn set_prio_attr(&mut self, priority: u8, attribute: TaskAttribute) {
        self.buffer.as_mut()[field::PRIO_ATTR] = ((priority & PRIORITY_MASK) << PRIORITY_SHIFT)
            | (u8::from(attribute) & TASK_ATTRIBUTE_MASK)
    }
    /// Command IU: sets the additional CDB length byte.
    pub fn set_additional_cdb_length_byte(&mut self, value: u8) {
        self.buffer.as_mut()[field::ADDITIONAL_CDB_LENGTH] = value
    }
    /// Command IU / Task Management IU: sets the LUN.
    pub fn set_lun(&mut self, value: Lun) {
        self.buffer.as_mut()[field::LUN].copy_from_slice(&value.0)
    }
    /// Sense IU: sets the status qualifier.
    pub fn set_status_qualifier(&mut self, value: u16) {
        put_be16(&mut self.buffer.as_mut()[field::STATUS_QUALIFIER], value)
    }
    /// Sense IU: sets the status.
    pub fn set_status(&mut self, value: Status) {
        self.buffer.as_mut()[field::STATUS] = value.into()
    }
    /// Sense IU: sets the sense length.
    pub fn set_sense_length(&mut self, value: u16) {
        put_be16(&mut self.buffer.as_mut()[field::SENSE_LENGTH], value)
    }
    /// Response IU: sets additional response information.
    pub fn set_additional_response_info(&mut self, value: [u8; 3]) {
        self.buffer.as_mut()[field::ADDITIONAL_RESPONSE_INFO].copy_from_slice(&value)
    }
    /// Response IU: sets the response code.
    pub fn set_response_code(&mut self, value: ResponseCode) {
        self.buffer.as_mut()[field::RESPONSE_CODE] = value.into()
    }
    /// Task Management IU: sets the function.
    pub fn set_function(&mut self, value: TaskManagementFunction) {
        self.buffer.as_mut()[field::FUNCTION] = value.into()
    }
    /// Task Management IU: sets the tag of the managed task.
    pub fn set_tag_of_managed_task(&mut self, value: u16) {
        put_be16(&mut self.buffer.as_mut()[field::TAG_OF_MANAGED_TASK], value)
    }
    /// The whole buffer, writable.
    pub fn buffer_mut(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
}

/// A Command IU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CommandIu {
    /// Command tag; also the stream id of its data on SuperSpeed.
    pub tag: u16,
    /// Task attribute.
    pub task_attribute: TaskAttribute,
    /// Command priority, 0..=15.
    pub priority: u8,
    /// Logical unit.
    pub lun: Lun,
    /// The CDB: at least 16 bytes as carried (short CDBs are zero-padded to 16).
    pub cdb: InlineBytes<CDB_MAX_LEN>,
}

impl CommandIu {
    /// Builds a SIMPLE, priority-0 Command IU for `cdb` (1..=268 bytes).
    pub fn new(tag: u16, lun: Lun, cdb: &[u8]) -> Result<Self> {
        let cdb = InlineBytes::new(cdb).ok_or(Error::BadField {
            field: "CDB",
            value: cdb.len() as u64,
            reason: "a Command IU carries at most 268 CDB bytes",
        })?;
        Ok(CommandIu {
            tag,
            task_attribute: TaskAttribute::Simple,
            priority: 0,
            lun,
            cdb,
        })
    }
    fn additional_cdb_dwords(&self) -> usize {
        self.cdb
            .len()
            .saturating_sub(COMMAND_IU_CDB_LEN)
            .div_ceil(4)
    }
}

/// A Sense IU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SenseIu {
    /// Tag of the command this completes.
    pub tag: u16,
    /// Status qualifier (SAM-5; zero in practice).
    pub status_qualifier: u16,
    /// SCSI status.
    pub status: Status,
    /// Sense data (empty on GOOD status).
    pub sense: InlineBytes<SENSE_DATA_MAX_LEN>,
}

/// A Response IU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResponseIu {
    /// Tag of the task management request (or of the failed IU).
    pub tag: u16,
    /// Additional response information.
    pub additional_response_info: [u8; 3],
    /// Response code.
    pub response_code: ResponseCode,
}

/// A Task Management IU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TaskManagementIu {
    /// Tag of this request.
    pub tag: u16,
    /// Function.
    pub function: TaskManagementFunction,
    /// Tag of the task the function applies to (ABORT TASK, QUERY TASK).
    pub tag_of_managed_task: u16,
    /// Logical unit.
    pub lun: Lun,
}

/// Any parsed UAS IU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IuRepr {
    /// Command IU.
    Command(CommandIu),
    /// Sense IU.
    Sense(SenseIu),
    /// Response IU.
    Response(ResponseIu),
    /// Task Management IU.
    TaskManagement(TaskManagementIu),
    /// Read Ready IU for `tag`.
    ReadReady {
        /// Tag whose data the device will send next.
        tag: u16,
    },
    /// Write Ready IU for `tag`.
    WriteReady {
        /// Tag whose data the device will accept next.
        tag: u16,
    },
}

impl IuRepr {
    /// Parses any IU; an unknown IU id is [`Error::Unsupported`].
    pub fn parse<T: AsRef<[u8]>>(packet: &IuPacket<T>) -> Result<Self> {
        packet.check_len()?;
        let tag = packet.tag();
        Ok(match packet.iu_id() {
            IuId::Command => {
                let dwords_byte = packet.additional_cdb_length_byte();
                if dwords_byte & ADDITIONAL_CDB_RESERVED_MASK != 0 {
                    return Err(Error::BadField {
                        field: "ADDITIONAL CDB LENGTH",
                        value: dwords_byte.into(),
                        reason: "reserved bits 0..1 must be zero",
                    });
                }
                let attr = packet.buffer.as_ref()[field::PRIO_ATTR];
                if attr & 0x80 != 0 {
                    return Err(Error::BadField {
                        field: "TASK PRIORITY/ATTRIBUTE",
                        value: attr.into(),
                        reason: "reserved bit 7 must be zero",
                    });
                }
                IuRepr::Command(CommandIu {
                    tag,
                    task_attribute: packet.task_attribute(),
                    priority: packet.command_priority(),
                    lun: packet.lun(),
                    // Cannot fail: the CDB field is at most 16 + 63 * 4 bytes.
                    cdb: InlineBytes::new(packet.cdb()).unwrap_or(InlineBytes::empty()),
                })
            }
            IuId::Sense => {
                let sense = InlineBytes::new(packet.sense_data()).ok_or(Error::BadField {
                    field: "SENSE LENGTH",
                    value: packet.sense_length().into(),
                    reason: "sense data is at most 252 bytes",
                })?;
                IuRepr::Sense(SenseIu {
                    tag,
                    status_qualifier: packet.status_qualifier(),
                    status: packet.status(),
                    sense,
                })
            }
            IuId::Response => IuRepr::Response(ResponseIu {
                tag,
                additional_response_info: packet.additional_response_info(),
                response_code: packet.response_code(),
            }),
            IuId::TaskManagement => IuRepr::TaskManagement(TaskManagementIu {
                tag,
                function: packet.function(),
                tag_of_managed_task: packet.tag_of_managed_task(),
                lun: packet.lun(),
            }),
            IuId::ReadReady => IuRepr::ReadReady { tag },
            IuId::WriteReady => IuRepr::WriteReady { tag },
            IuId::Unknown(id) => {
                return Err(Error::Unsupported {
                    what: "UAS IU ID",
                    value: id.into(),
                })
            }
        })
    }

    /// Parses an IU from a byte slice.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Self> {
        Self::parse(&IuPacket::new_unchecked(bytes))
    }

    /// The IU's tag.
    pub fn tag(&self) -> u16 {
        match self {
            IuRepr::Command(c) => c.tag,
            IuRepr::Sense(s) => s.tag,
            IuRepr::Response(r) => r.tag,
            IuRepr::TaskManagement(t) => t.tag,
            IuRepr::ReadReady { tag } | IuRepr::WriteReady { tag } => *tag,
        }
    }

    /// The IU's id.
    pub fn iu_id(&self) -> IuId {
        match self {
            IuRepr::Command(_) => IuId::Command,
            IuRepr::Sense(_) => IuId::Sense,
            IuRepr::Response(_) => IuId::Response,
            IuRepr::TaskManagement(_) => IuId::TaskManagement,
            IuRepr::ReadReady { .. } => IuId::ReadReady,
            IuRepr::WriteReady { .. } => IuId::WriteReady,
        }
    }

    /// Bytes `emit` writes.
    pub fn buffer_len(&self) -> usize {
        match self {
            IuRepr::Command(c) => COMMAND_IU_LEN + c.additional_cdb_dwords() * 4,
            IuRepr::Sense(s) => SENSE_IU_HEADER_LEN + s.sense.len(),
            IuRepr::Response(_) => RESPONSE_IU_LEN,
            IuRepr::TaskManagement(_) => TASK_MANAGEMENT_IU_LEN,
            IuRepr::ReadReady { .. } | IuRepr::WriteReady { .. } => READY_IU_LEN,
        }
    }

    /// Writes the IU into a packet of at least [`Self::buffer_len`] bytes; reserved bytes are
    /// zeroed.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut IuPacket<T>) {
        let len = self.buffer_len();
        packet.buffer_mut()[..len].fill(0);
        packet.set_iu_id(self.iu_id());
        packet.set_tag(self.tag());
        match self {
            IuRepr::Command(c) => {
                packet.set_prio_attr(c.priority, c.task_attribute);
                packet.set_additional_cdb_length_byte(
                    (c.additional_cdb_dwords() as u8) << ADDITIONAL_CDB_LENGTH_SHIFT,
                );
                packet.set_lun(c.lun);
                let start = field::CDB.start;
                packet.buffer_mut()[start..start + c.cdb.len()].copy_from_slice(&c.cdb);
            }
            IuRepr::Sense(s) => {
                packet.set_status_qualifier(s.status_qualifier);
                packet.set_status(s.status);
                packet.set_sense_length(s.sense.len() as u16);
                packet.buffer_mut()[SENSE_IU_HEADER_LEN..len].copy_from_slice(&s.sense);
            }
            IuRepr::Response(r) => {
                packet.set_additional_response_info(r.additional_response_info);
                packet.set_response_code(r.response_code);
            }
            IuRepr::TaskManagement(t) => {
                packet.set_function(t.function);
                packet.set_tag_of_managed_task(t.tag_of_managed_task);
                packet.set_lun(t.lun);
            }
            IuRepr::ReadReady { .. } | IuRepr::WriteReady { .. } => {}
        }
    }

    /// Writes the IU into the front of `buffer`, returning the bytes written.
    pub fn emit_into(&self, buffer: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        room("UAS IU", buffer, len)?;
        self.emit(&mut IuPacket::new_unchecked(&mut buffer[..len]));
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(golden: &[u8], repr: IuRepr) {
        assert_eq!(IuRepr::parse_bytes(golden), Ok(repr));
        let mut buf = [0xA5u8; 300];
        let n = repr.emit_into(&mut buf).unwrap();
        assert_eq!(&buf[..n], golden);
        assert_eq!(buf[n], 0xA5, "emit wrote past buffer_len");
    }

    #[test]
    fn command_iu_golden() {
        // WRITE(10) lba 0x10 blocks 1, tag 0x0102, LUN 0, ORDERED, priority 3.
        let golden: [u8; 32] = [
            0x01, 0x00, 0x01, 0x02, 0x1a, 0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x2a, 0x00,
            0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0, 0,
        ];
        let mut cmd = CommandIu::new(0x0102, Lun::from_index(0), &golden[16..]).unwrap();
        cmd.task_attribute = TaskAttribute::Ordered;
        cmd.priority = 3;
        roundtrip(&golden, IuRepr::Command(cmd));
    }

    #[test]
    fn command_iu_with_additional_cdb() {
        let mut golden = [0u8; 40];
        golden[0] = 0x01;
        golden[3] = 0x07;
        golden[6] = 2 << 2; // two additional dwords
        golden[9] = 0x01; // LUN 1
        for (i, b) in golden[16..].iter_mut().enumerate() {
            *b = i as u8 + 1;
        }
        let cmd = CommandIu::new(7, Lun::from_index(1), &golden[16..]).unwrap();
        roundtrip(&golden, IuRepr::Command(cmd));
        assert_eq!(
            IuRepr::parse_bytes(&golden[..39]),
            Err(Error::Truncated {
                what: "Command IU additional CDB",
                needed: 40,
                got: 39
            })
        );
        let mut bad = golden;
        bad[6] |= 1;
        assert!(matches!(
            IuRepr::parse_bytes(&bad),
            Err(Error::BadField {
                field: "ADDITIONAL CDB LENGTH",
                ..
            })
        ));
    }

    #[test]
    fn sense_iu_golden() {
        let sense = [
            0x70, 0, 0x05, 0, 0, 0, 0, 0x0a, 0, 0, 0, 0, 0x24, 0x00, 0, 0, 0, 0,
        ];
        let mut golden = [0u8; 34];
        golden[..16]
            .copy_from_slice(&[0x03, 0, 0x00, 0x05, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 18]);
        golden[16..].copy_from_slice(&sense);
        let repr = IuRepr::Sense(SenseIu {
            tag: 5,
            status_qualifier: 0,
            status: Status::CheckCondition,
            sense: InlineBytes::new(&sense).unwrap(),
        });
        roundtrip(&golden, repr);
        assert!(matches!(
            IuRepr::parse_bytes(&golden[..33]),
            Err(Error::Truncated {
                what: "Sense IU sense data",
                ..
            })
        ));
    }

    #[test]
    fn response_tm_and_ready_golden() {
        roundtrip(
            &[0x04, 0, 0x00, 0x09, 0xaa, 0xbb, 0xcc, 0x08],
            IuRepr::Response(ResponseIu {
                tag: 9,
                additional_response_info: [0xaa, 0xbb, 0xcc],
                response_code: ResponseCode::Succeeded,
            }),
        );
        roundtrip(
            &[
                0x05, 0, 0x00, 0x0a, 0x01, 0, 0x00, 0x03, 0, 2, 0, 0, 0, 0, 0, 0,
            ],
            IuRepr::TaskManagement(TaskManagementIu {
                tag: 10,
                function: TaskManagementFunction::AbortTask,
                tag_of_managed_task: 3,
                lun: Lun::from_index(2),
            }),
        );
        roundtrip(&[0x06, 0, 0x01, 0x00], IuRepr::ReadReady { tag: 0x100 });
        roundtrip(&[0x07, 0, 0x00, 0x01], IuRepr::WriteReady { tag: 1 });
        assert_eq!(
            IuRepr::parse_bytes(&[0x02, 0, 0, 1]),
            Err(Error::Unsupported {
                what: "UAS IU ID",
                value: 2
            })
        );
        assert!(matches!(
            IuRepr::parse_bytes(&[0x06, 0]),
            Err(Error::Truncated { .. })
        ));
    }
}
