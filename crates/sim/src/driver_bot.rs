//! Bulk-Only Transport, both ends: the host class driver sends a CBW, the data and reads a CSW;
//! the bridge parses the CBW and answers with exactly one CSW carrying the CBW's tag.
//! One command at a time (the host's outstanding limit is 1 for BOT).

use crate::command::{Op, UNMAP_LIST_BYTES};
use crate::event::{CmdId, Event};
use crate::scsi::{decode_cdb, emit_cdb, emit_unmap_list, ScsiOp, CDB_BYTES_MAX};
use crate::sim::Simulator;
use storlab_wire::bot::{
    CbwPacket, CbwRepr, CswPacket, CswRepr, CswStatus, Direction, CBW_LEN, CSW_LEN,
};

/// BOT addresses a single logical unit here.
const LUN: u8 = 0;

impl Simulator {
    /// Host: build the CBW and send it on bulk-out.
    pub(crate) fn bot_issue(&mut self, id: CmdId) {
        let tag = self.take_tag();
        let now = self.now_ns();
        let c = self.cmd_mut(id);
        c.tag = tag;
        c.status_len = 0;
        let mut cdb = [0u8; CDB_BYTES_MAX];
        let cdb_len = emit_cdb(c.op, c.offset_bytes, c.len_bytes, &mut cdb);
        let (data_len, direction) = match c.op {
            Op::Read => (c.len_bytes, Direction::In),
            Op::Write => (c.len_bytes, Direction::Out),
            Op::Trim => {
                emit_unmap_list(c.offset_bytes, c.len_bytes, &mut c.unmap_list);
                (UNMAP_LIST_BYTES as u32, Direction::Out)
            }
        };
        let cbw = CbwRepr::new(tag, data_len, direction, LUN, &cdb[..cdb_len])
            .expect("CDB of 1..=16 bytes, LUN 0");
        c.command_len = cbw
            .emit_into(&mut c.command_bytes)
            .expect("command buffer holds a CBW") as u8;
        let at = self.usb_message_out(now, CBW_LEN as u64, 0);
        self.schedule(at, Event::CommandAtDevice { cmd: id });
    }

    /// Bridge: parse the CBW bytes and its CDB.
    pub(crate) fn bot_decode_command(&mut self, id: CmdId) -> ScsiOp {
        let c = self.cmd_mut(id);
        let bytes = &c.command_bytes[..usize::from(c.command_len)];
        let packet = CbwPacket::new_checked(bytes).expect("bridge: short CBW");
        let cbw = CbwRepr::parse(&packet).expect("bridge: invalid CBW");
        let op = decode_cdb(cbw.cdb());
        let expected_direction = match op {
            ScsiOp::Read { .. } => Direction::In,
            _ => Direction::Out,
        };
        assert_eq!(
            cbw.direction, expected_direction,
            "CBW direction disagrees with its CDB"
        );
        if let ScsiOp::Read { blocks, .. } | ScsiOp::Write { blocks, .. } = op {
            assert_eq!(
                cbw.data_transfer_length,
                blocks * crate::profile::SECTOR_BYTES,
                "CBW transfer length disagrees with its CDB"
            );
        }
        c.device_tag = cbw.tag;
        op
    }

    /// Bridge: the one CSW for this CBW.
    pub(crate) fn bot_encode_status(&mut self, id: CmdId) -> u64 {
        let c = self.cmd_mut(id);
        assert_eq!(c.status_len, 0, "bridge sent a second CSW for one CBW");
        let csw = CswRepr {
            tag: c.device_tag,
            data_residue: 0,
            status: CswStatus::Passed,
        };
        c.status_len = csw
            .emit_into(&mut c.status_bytes)
            .expect("status buffer holds a CSW") as u8;
        CSW_LEN as u64
    }

    /// Host: parse the CSW; its tag must be the CBW's.
    pub(crate) fn bot_check_status(&mut self, id: CmdId) {
        let c = self.cmd(id);
        let packet = CswPacket::new_checked(&c.status_bytes[..usize::from(c.status_len)])
            .expect("host: short CSW");
        let csw = CswRepr::parse(&packet).expect("host: invalid CSW");
        assert_eq!(csw.tag, c.tag, "CSW tag differs from the CBW tag");
        assert_eq!(csw.status, CswStatus::Passed, "command failed");
        assert_eq!(csw.data_residue, 0, "residue on a full transfer");
    }
}
