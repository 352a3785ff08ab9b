//! Bulk-Only Transport, both ends: the host class driver sends a CBW, the data and reads a CSW;
//! the bridge parses the CBW and answers with exactly one CSW carrying the CBW's tag.
//! One command at a time (the host's outstanding limit is 1 for BOT).

use crate::command::{Op, UNMAP_LIST_BYTES};
use crate::event::{CmdId, Event};
use crate::resource::Flow;
use crate::scsi::{decode_cdb, emit_cdb, emit_unmap_list, ScsiOp, CDB_BYTES_MAX};
use crate::sim::{layer, Simulator, Transport};
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
        let data_urb_ns = if self.bot_chains_transfers() {
            // The CBW's completion: the driver submits the data transfer (for a read, while
            // the device works on the command). Its per-KiB work (a TRB and a transfer event
            // per page) runs alongside the data phase: it costs CPU but does not hold the
            // data back.
            let queued = self.bot_hand_off(at, 0);
            let map_ns = self.buffer_cpu_ns(data_len);
            self.reserve(layer::HOST_CPU, queued, map_ns, 0);
            queued
        } else {
            // Queued with the CBW (the buffer was mapped before it went out).
            now
        };
        let c = self.cmd_mut(id);
        c.data_urb_ns = data_urb_ns;
        c.data_urb_done_ns = 0;
        c.status_urb_ns = 0;
        c.buffered = false;
        self.schedule(at, Event::CommandAtDevice { cmd: id });
    }

    /// The transport is BOT and the host driver chains its three transfers.
    #[inline]
    pub(crate) fn bot_chains_transfers(&self) -> bool {
        self.transport == Transport::Bot && self.spec.host.chains_transfers
    }

    /// When the host has queued the data transfer of `id` (0 when the transport is not BOT).
    #[inline]
    pub(crate) fn bot_data_urb_ns(&self, id: CmdId) -> u64 {
        if self.transport == Transport::Bot {
            self.cmd(id).data_urb_ns
        } else {
            0
        }
    }

    /// A BOT IN data phase moves only once the host has queued its transfer.
    #[inline]
    pub(crate) fn bot_data_queued(&self, id: CmdId, mut flow: Flow) -> Flow {
        let queued = self.bot_data_urb_ns(id);
        let ready = flow.start_ns + flow.first_piece_ns;
        if queued > ready {
            flow.start_ns += queued - ready;
        }
        flow
    }

    /// The data transfer of a BOT command completed at the host at `at_ns`: the driver submits
    /// the CSW transfer, which the bridge's CSW waits for.
    #[inline]
    pub(crate) fn bot_data_completed(&mut self, id: CmdId, at_ns: u64) {
        if self.bot_chains_transfers() {
            let queued = self.bot_hand_off(at_ns, 0);
            let c = self.cmd_mut(id);
            c.data_urb_done_ns = at_ns;
            c.status_urb_ns = queued;
        }
    }

    /// When the host has queued the CSW transfer of `id` (0 when the transport is not BOT).
    #[inline]
    pub(crate) fn bot_status_urb_ns(&self, id: CmdId) -> u64 {
        if self.transport == Transport::Bot {
            self.cmd(id).status_urb_ns
        } else {
            0
        }
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
