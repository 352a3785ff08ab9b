//! Bulk-Only Transport, both ends: the host class driver sends a CBW, the data and reads a CSW;
//! the bridge parses the CBW and answers with exactly one CSW carrying the CBW's tag.
//! One command at a time (the host's outstanding limit is 1 for BOT). The transfer times a
//! chaining driver adds (data and CSW transfers queued one after another) are BOT's own
//! per-command state, kept here.

use crate::command::{Command, Op, UNMAP_LIST_BYTES};
use crate::cx::{layer, Cx};
use crate::event::CmdId;
use crate::resource::Flow;
use crate::scsi::{decode_cdb, emit_cdb, emit_unmap_list, ScsiOp, CDB_BYTES_MAX};
use storlab_wire::bot::{
    CbwPacket, CbwRepr, CswPacket, CswRepr, CswStatus, Direction, CBW_LEN, CSW_LEN,
};

/// BOT addresses a single logical unit here.
const LUN: u8 = 0;

/// BOT's state of one command in flight.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BotCommand {
    /// When the host has queued the data transfer (after the CBW's completion).
    pub data_urb_ns: u64,
    /// When the data transfer completed at the host.
    pub data_urb_done_ns: u64,
    /// When the host has queued the CSW transfer (after the data's completion).
    pub status_urb_ns: u64,
    /// The write's data is already in the bridge's buffer (see
    /// `BridgeProfile::bot_write_buffer_bytes`).
    pub buffered: bool,
}

/// The BOT host driver and the bridge's BOT endpoint.
pub(crate) struct Bot {
    /// The host driver submits data and CSW transfers one after another, each on the previous
    /// one's completion (`HostProfile::chains_transfers`).
    pub chains_transfers: bool,
    /// Last dCBWTag used (any 32-bit value, echoed in the CSW).
    next_tag: u32,
    /// Per command, by command id.
    commands: Vec<BotCommand>,
}

impl Bot {
    pub fn new(chains_transfers: bool, max_outstanding: u32) -> Bot {
        Bot {
            chains_transfers,
            next_tag: 0,
            commands: vec![BotCommand::default(); max_outstanding as usize],
        }
    }

    #[inline]
    pub fn command(&self, id: CmdId) -> &BotCommand {
        &self.commands[id as usize]
    }

    /// Host: build the CBW and send it on bulk-out. Returns when it reached the bridge.
    pub fn issue(&mut self, cx: &mut Cx, id: CmdId, c: &mut Command) -> u64 {
        self.next_tag = self.next_tag.wrapping_add(1);
        let tag = self.next_tag;
        let now = cx.now_ns;
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
        let at = cx.usb_message_out(now, CBW_LEN as u64, 0);
        let data_urb_ns = if self.chains_transfers {
            // The CBW's completion: the driver submits the data transfer (for a read, while
            // the device works on the command). Its per-KiB work (a TRB and a transfer event
            // per page) runs alongside the data phase: it costs CPU but does not hold the
            // data back.
            let queued = cx.hand_off(at, 0);
            let map_ns = cx.buffer_cpu_ns(data_len);
            cx.reserve(layer::HOST_CPU, queued, map_ns, 0);
            queued
        } else {
            // Queued with the CBW (the buffer was mapped before it went out).
            now
        };
        self.commands[id as usize] = BotCommand {
            data_urb_ns,
            ..BotCommand::default()
        };
        at
    }

    /// An IN data phase moves only once the host has queued its transfer.
    #[inline]
    pub fn data_in_gate(&self, id: CmdId, mut flow: Flow) -> Flow {
        let queued = self.commands[id as usize].data_urb_ns;
        let ready = flow.start_ns + flow.first_piece_ns;
        if queued > ready {
            flow.start_ns += queued - ready;
        }
        flow
    }

    /// When an OUT data phase (write data, UNMAP list) ready at `at_ns` can leave the host.
    #[inline]
    pub fn data_out_start(&self, id: CmdId, at_ns: u64) -> u64 {
        at_ns.max(self.commands[id as usize].data_urb_ns)
    }

    /// The data transfer completed at the host at `at_ns`: a chaining driver submits the CSW
    /// transfer, which the bridge's CSW waits for.
    #[inline]
    pub fn data_done_at_host(&mut self, cx: &mut Cx, id: CmdId, at_ns: u64) {
        if self.chains_transfers {
            let queued = cx.hand_off(at_ns, 0);
            let b = &mut self.commands[id as usize];
            b.data_urb_done_ns = at_ns;
            b.status_urb_ns = queued;
        }
    }

    /// Mark a write whose data phase went into the bridge's buffer.
    pub fn set_buffered(&mut self, id: CmdId) {
        self.commands[id as usize].buffered = true;
    }

    /// Bridge: parse the CBW bytes and its CDB.
    pub fn decode_command(c: &mut Command) -> ScsiOp {
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

    /// Bridge: the one CSW for this CBW; returns its bytes.
    pub fn encode_status(c: &mut Command) -> u64 {
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
    pub fn check_status(c: &Command) {
        let packet = CswPacket::new_checked(&c.status_bytes[..usize::from(c.status_len)])
            .expect("host: short CSW");
        let csw = CswRepr::parse(&packet).expect("host: invalid CSW");
        assert_eq!(csw.tag, c.tag, "CSW tag differs from the CBW tag");
        assert_eq!(csw.status, CswStatus::Passed, "command failed");
        assert_eq!(csw.data_residue, 0, "residue on a full transfer");
    }
}
