//! USB Attached SCSI, both ends: tagged Command IUs on the command pipe, data on streams
//! (stream id = tag) at SuperSpeed or announced by Read/Write Ready IUs at High-Speed, and a
//! Sense IU per command on the status pipe, whose tag the host checks. Its per-command state
//! is the tag (the command's index + 1), so it needs nothing beside the command's messages.

use crate::command::{Command, Op};
use crate::cx::Cx;
use crate::event::CmdId;
use crate::resource::Flow;
use crate::scsi::{decode_cdb, emit_cdb, emit_unmap_list, ScsiOp, CDB_BYTES_MAX};
use storlab_wire::scsi::{Lun, Status};
use storlab_wire::uas::{
    IuId, IuPacket, IuRepr, TaskAttribute, COMMAND_IU_CDB_LEN, COMMAND_IU_LEN, READY_IU_LEN,
    SENSE_IU_HEADER_LEN,
};

/// UAS transfers queued per command besides the Command IU: status (Sense IU) and data.
const URBS_BESIDES_COMMAND: u64 = 2;

/// A Ready IU the device sent (High-Speed UAS): when it reached the host, and its bytes.
pub(crate) struct ReadyIu {
    pub at_ns: u64,
    pub bytes: [u8; READY_IU_LEN],
}

/// The UAS host driver and the bridge's UAS endpoint.
pub(crate) struct Uas {
    /// Data moves on bulk streams (SuperSpeed); without them (High-Speed) the device announces
    /// each data phase with a Read/Write Ready IU.
    pub streams: bool,
}

impl Uas {
    /// UAS tag of a command: its table index + 1 (tag 0 is not a valid stream id).
    fn tag(id: CmdId) -> u16 {
        u16::try_from(id + 1).expect("outstanding commands are bounded by 16-bit tags")
    }

    /// Host: build the Command IU, queue the status and data transfers, send the IU. Returns
    /// when it reached the bridge.
    pub fn issue(&self, cx: &mut Cx, id: CmdId, c: &mut Command) -> u64 {
        let now = cx.now_ns;
        let tag = Self::tag(id);
        c.tag = tag.into();
        c.status_len = 0;
        if c.op == Op::Trim {
            emit_unmap_list(c.offset_bytes, c.len_bytes, &mut c.unmap_list);
        }
        // Written in place through the packet view (SIMPLE, priority 0, LUN 0, no additional
        // CDB bytes, reserved bytes zero), as the Sense IU is: an `IuRepr::Command` carries
        // a 268-byte inline CDB, which building, moving and emitting copied for every command.
        let bytes = &mut c.command_bytes[..COMMAND_IU_LEN];
        bytes.fill(0);
        let mut packet = IuPacket::new_unchecked(bytes);
        packet.set_iu_id(IuId::Command);
        packet.set_tag(tag);
        packet.set_prio_attr(0, TaskAttribute::Simple);
        packet.set_additional_cdb_length_byte(0);
        packet.set_lun(Lun::from_index(0));
        let cdb: &mut [u8; CDB_BYTES_MAX] = (&mut packet.buffer_mut()
            [COMMAND_IU_LEN - COMMAND_IU_CDB_LEN..])
            .try_into()
            .expect("a Command IU ends with its 16 CDB bytes");
        emit_cdb(c.op, c.offset_bytes, c.len_bytes, cdb);
        c.command_len = COMMAND_IU_LEN as u8;
        // The driver rings the doorbell for the status and data transfers alongside.
        let extra = URBS_BESIDES_COMMAND * cx.controller.transfer_ns(0);
        cx.usb_message_out(now, COMMAND_IU_LEN as u64, extra)
    }

    /// Bridge: parse the Command IU and its CDB.
    pub fn decode_command(c: &mut Command) -> ScsiOp {
        // Zero-copy view: the firmware reads fields in place, as a real bridge does.
        let packet = IuPacket::new_checked(&c.command_bytes[..usize::from(c.command_len)])
            .expect("bridge: short IU");
        assert_eq!(
            packet.iu_id(),
            IuId::Command,
            "bridge: expected a Command IU"
        );
        let tag = packet.tag();
        let op = decode_cdb(packet.cdb());
        c.device_tag = tag.into();
        op
    }

    /// Bridge: the Sense IU (GOOD status, no sense data) for this command; returns its bytes.
    pub fn encode_status(c: &mut Command) -> u64 {
        assert_eq!(
            c.status_len, 0,
            "bridge sent a second Sense IU for one command"
        );
        let tag = u16::try_from(c.device_tag).expect("UAS tags are 16-bit");
        // Written in place through the packet view (reserved bytes zero, no sense data).
        let bytes = &mut c.status_bytes[..SENSE_IU_HEADER_LEN];
        bytes.fill(0);
        let mut packet = IuPacket::new_unchecked(bytes);
        packet.set_iu_id(IuId::Sense);
        packet.set_tag(tag);
        packet.set_status_qualifier(0);
        packet.set_status(Status::Good);
        packet.set_sense_length(0);
        c.status_len = SENSE_IU_HEADER_LEN as u8;
        SENSE_IU_HEADER_LEN as u64
    }

    /// Host: parse the Sense IU; its tag must be the command's.
    pub fn check_status(c: &Command) {
        let packet = IuPacket::new_checked(&c.status_bytes[..usize::from(c.status_len)])
            .expect("host: short Sense IU");
        assert_eq!(packet.iu_id(), IuId::Sense, "host: expected a Sense IU");
        assert_eq!(
            u32::from(packet.tag()),
            c.tag,
            "Sense IU tag differs from the command's"
        );
        assert_eq!(packet.status(), Status::Good, "command failed");
    }

    /// A Ready IU at High-Speed (no streams): the device names the tag whose data moves next;
    /// returns when the host has it. The host checks the tag is one it has outstanding.
    fn ready_iu(cx: &mut Cx, c: &Command, at_ns: u64, read: bool) -> ReadyIu {
        let tag = u16::try_from(c.device_tag).expect("UAS tags are 16-bit");
        let iu = if read {
            IuRepr::ReadReady { tag }
        } else {
            IuRepr::WriteReady { tag }
        };
        let mut bytes = [0u8; READY_IU_LEN];
        iu.emit_into(&mut bytes).expect("4-byte Ready IU");
        let at = cx.usb_message_in(at_ns, READY_IU_LEN as u64);
        let parsed = IuRepr::parse_bytes(&bytes).expect("host: invalid Ready IU");
        assert_eq!(u32::from(parsed.tag()), c.tag, "Ready IU names another tag");
        ReadyIu { at_ns: at, bytes }
    }

    /// Before read data leaves the bridge at High-Speed UAS, a Read Ready IU goes first.
    pub fn data_in_gate(&self, cx: &mut Cx, c: &Command, flow: Flow) -> (Flow, Option<ReadyIu>) {
        if self.streams {
            return (flow, None);
        }
        let ready = flow.start_ns + flow.first_piece_ns;
        let iu = Self::ready_iu(cx, c, ready, true);
        let flow = Flow {
            start_ns: flow.start_ns + (iu.at_ns.max(ready) - ready),
            ..flow
        };
        (flow, Some(iu))
    }

    /// Before write data (or an UNMAP list) leaves the host at High-Speed UAS, the device sends
    /// a Write Ready IU. At SuperSpeed the stream's ERDY is part of the transfer setup.
    pub fn data_out_start(&self, cx: &mut Cx, c: &Command, at_ns: u64) -> (u64, Option<ReadyIu>) {
        if self.streams {
            return (at_ns, None);
        }
        let iu = Self::ready_iu(cx, c, at_ns, false);
        (iu.at_ns, Some(iu))
    }
}
