//! Bulk-Only Transport, both ends: the host class driver sends a CBW, the data and reads a CSW;
//! the bridge parses the CBW and answers with exactly one CSW carrying the CBW's tag.
//! One command at a time (the host's outstanding limit is 1 for BOT). The transfer times a
//! chaining driver adds (data and CSW transfers queued one after another) are BOT's own
//! per-command state, kept here.

use crate::command::{BotCommand, Command, UNMAP_LIST_BYTES};
use crate::cx::{layer, ControlTransfer, Cx};
use crate::fault::CommandFault;
use crate::op::Op;
use crate::resource::Flow;
use crate::scsi::{decode_cdb, emit_cdb, emit_unmap_list, ScsiOp, CDB_BYTES_MAX};
use storlab_wire::bot::{
    CbwPacket, CbwRepr, CswPacket, CswRepr, CswStatus, Direction, CBW_LEN, CSW_LEN,
};
use storlab_wire::scsi::{AdditionalSense, Command as Cdb, SenseKey, SenseRepr};
use storlab_wire::usb::request::SETUP_LEN;
use storlab_wire::usb::SetupPacket;

/// BOT addresses a single logical unit here.
const LUN: u8 = 0;
/// The mass-storage interface's number (`wire`'s enumeration emits interface 0).
const INTERFACE: u8 = 0;
/// Bulk endpoint addresses (`wire`'s mass-storage configuration: EP1 IN, EP2 OUT).
const BULK_IN_ENDPOINT: u8 = 0x81;
const BULK_OUT_ENDPOINT: u8 = 0x02;
/// Fixed-format sense data the host asks for with REQUEST SENSE: 18 bytes (SPC-4 §4.5.3;
/// Linux usb-storage's `US_SENSE_SIZE`).
const SENSE_ALLOCATION_BYTES: u8 = 18;

/// The BOT host driver and the bridge's BOT endpoint. Its per-command state is the command's
/// own (`Command::bot`), so the core can hand a copy down the bridged path; only `issue` and
/// `request_sense` change it (the tag), on the one in `Endpoints`.
#[derive(Clone, Copy)]
pub(crate) struct Bot {
    /// The host driver submits data and CSW transfers one after another, each on the previous
    /// one's completion (`HostProfile::chains_transfers`).
    pub chains_transfers: bool,
    /// Last dCBWTag used (any 32-bit value, echoed in the CSW).
    next_tag: u32,
}

impl Bot {
    pub fn new(chains_transfers: bool) -> Bot {
        Bot {
            chains_transfers,
            next_tag: 0,
        }
    }

    /// Host: build the CBW and send it on bulk-out. Returns when it reached the bridge.
    pub fn issue(&mut self, cx: &mut Cx, c: &mut Command) -> u64 {
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
            // No data: usb-storage sets no direction flag (`usb_stor_Bulk_transport`: IN only
            // for DMA_FROM_DEVICE) and a zero dCBWDataTransferLength.
            Op::Flush => (0, Direction::Out),
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
        c.bot = BotCommand {
            data_urb_ns,
            ..BotCommand::default()
        };
        at
    }

    /// An IN data phase moves only once the host has queued its transfer.
    #[inline]
    pub fn data_in_gate(c: &Command, mut flow: Flow) -> Flow {
        let queued = c.bot.data_urb_ns;
        let ready = flow.start_ns + flow.first_piece_ns;
        if queued > ready {
            flow.start_ns += queued - ready;
        }
        flow
    }

    /// When an OUT data phase (write data, UNMAP list) ready at `at_ns` can leave the host.
    #[inline]
    pub fn data_out_start(c: &Command, at_ns: u64) -> u64 {
        at_ns.max(c.bot.data_urb_ns)
    }

    /// The data transfer completed at the host at `at_ns`: a chaining driver submits the CSW
    /// transfer, which the bridge's CSW waits for.
    #[inline]
    pub fn data_done_at_host(self, cx: &mut Cx, c: &mut Command, at_ns: u64) {
        if self.chains_transfers {
            let queued = cx.hand_off(at_ns, 0);
            let b = &mut c.bot;
            b.data_urb_done_ns = at_ns;
            b.status_urb_ns = queued;
        }
    }

    /// A command without a data phase (SYNCHRONIZE CACHE): a chaining driver submits the CSW
    /// transfer on the CBW's completion, when it would have submitted the data transfer.
    pub fn no_data_phase(c: &mut Command) {
        let b = &mut c.bot;
        b.status_urb_ns = b.data_urb_ns;
    }

    /// Mark a write whose data phase went into the bridge's buffer.
    pub fn set_buffered(c: &mut Command) {
        c.bot.buffered = true;
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

    /// Bridge: the one CSW for this CBW; returns its bytes. A command the drive failed gets
    /// Command Failed with nothing transferred (BOT 1.0 §6.7.2: the bridge stalled the data
    /// phase), one the plan hit with a phase error gets Phase Error (bCSWStatus 02h, §5.2).
    pub fn encode_status(c: &mut Command) -> u64 {
        assert_eq!(c.status_len, 0, "bridge sent a second CSW for one CBW");
        let (status, data_residue) = match c.fault {
            CommandFault::None
            | CommandFault::Drop
            | CommandFault::Hang
            | CommandFault::BridgeReset
            | CommandFault::Disconnect
            | CommandFault::Removed
            | CommandFault::Lost => (CswStatus::Passed, 0),
            CommandFault::Medium | CommandFault::NotReady | CommandFault::UnitAttention => {
                (CswStatus::Failed, c.len_bytes)
            }
            CommandFault::PhaseError => (CswStatus::PhaseError, 0),
        };
        let csw = CswRepr {
            tag: c.device_tag,
            data_residue,
            status,
        };
        c.status_len = csw
            .emit_into(&mut c.status_bytes)
            .expect("status buffer holds a CSW") as u8;
        CSW_LEN as u64
    }

    /// Host: parse the CSW; its tag must be the CBW's. Returns its status.
    pub fn check_status(c: &Command) -> CswStatus {
        let packet = CswPacket::new_checked(&c.status_bytes[..usize::from(c.status_len)])
            .expect("host: short CSW");
        let csw = CswRepr::parse(&packet).expect("host: invalid CSW");
        assert_eq!(csw.tag, c.tag, "CSW tag differs from the CBW tag");
        if csw.status == CswStatus::Passed {
            assert_eq!(csw.data_residue, 0, "residue on a full transfer");
        }
        csw.status
    }

    /// Bridge and host: the bridge stalls bulk-in instead of sending read data it does not
    /// have (BOT 1.0 §6.7.2, Hi > Dn); the host's data transfer ends with STALL and the host
    /// clears the halt (Linux `usb_stor_clear_halt` from `interpret_urb_result`'s -EPIPE)
    /// before it reads the CSW. `clear.driver_ns` is when the CSW transfer is queued.
    pub fn stall_data_in(cx: &mut Cx, at_ns: u64) -> StalledDataIn {
        let stalled_ns = cx.usb_message_in(at_ns, 0);
        let t = cx.hand_off(stalled_ns, 0);
        StalledDataIn {
            stalled_ns,
            clear: cx.usb_control(t, &SetupPacket::clear_halt(BULK_IN_ENDPOINT)),
        }
    }

    /// Bridge and host: the bridge refuses a data-out phase it will not use (BOT 1.0 §6.7.3,
    /// Ho > Do: it may stall bulk-out) by stalling bulk-out; the host clears that halt before
    /// it reads the CSW.
    pub fn stall_data_out(cx: &mut Cx, at_ns: u64) -> StalledDataIn {
        let stalled_ns = cx.usb_message_in(at_ns, 0);
        let t = cx.hand_off(stalled_ns, 0);
        StalledDataIn {
            stalled_ns,
            clear: cx.usb_control(t, &SetupPacket::clear_halt(BULK_OUT_ENDPOINT)),
        }
    }

    /// Host: the CSW said Command Failed; the driver asks why with REQUEST SENSE as a BOT
    /// command of its own (CBW, 18 bytes of sense data in, CSW), as Linux usb-storage's
    /// auto-sense in `usb_stor_invoke_transport` does. The bridge answers with the failure as
    /// fixed-format sense (`sense_repr`: MEDIUM ERROR, UNRECOVERED READ ERROR 03/11/00 for a
    /// drive's read error; NOT READY 02/04/01 or UNIT ATTENTION 06/29/00 after a power loss)
    /// and a CSW of status Passed for the REQUEST SENSE itself. `firmware_ns` is the bridge's
    /// cost to build it. Returns the exchange's bytes and times, and the sense the host read.
    pub fn request_sense(
        &mut self,
        cx: &mut Cx,
        at_ns: u64,
        firmware_ns: u64,
        sense_repr: SenseRepr,
    ) -> RequestSense {
        self.next_tag = self.next_tag.wrapping_add(1);
        let tag = self.next_tag;
        let mut cdb = [0u8; CDB_BYTES_MAX];
        let cdb_len = Cdb::RequestSense {
            descriptor_format: false,
            allocation_length: SENSE_ALLOCATION_BYTES,
        }
        .emit(&mut cdb)
        .expect("REQUEST SENSE fits a CDB");
        let mut cbw = [0u8; CBW_LEN];
        let sense_len = u32::from(SENSE_ALLOCATION_BYTES);
        CbwRepr::new(tag, sense_len, Direction::In, LUN, &cdb[..cdb_len])
            .expect("6-byte CDB, LUN 0")
            .emit_into(&mut cbw)
            .expect("CBW buffer");
        let cbw_done_ns = cx.usb_message_out(at_ns, CBW_LEN as u64, 0);
        // Bridge: parse the CBW, build the sense data from the drive's error.
        let parsed_cbw = CbwRepr::parse(&CbwPacket::new_checked(&cbw[..]).expect("bridge: CBW"))
            .expect("bridge: invalid CBW");
        let asked = Cdb::parse(parsed_cbw.cdb()).expect("bridge: REQUEST SENSE CDB");
        assert!(
            matches!(asked, Cdb::RequestSense { .. }),
            "bridge: expected REQUEST SENSE"
        );
        let mut sense = [0u8; SENSE_ALLOCATION_BYTES as usize];
        let n = sense_repr
            .emit(&mut sense)
            .expect("fixed sense fits 18 bytes");
        assert_eq!(n, sense.len(), "fixed sense is 18 bytes");
        let mut csw = [0u8; CSW_LEN];
        CswRepr {
            tag: parsed_cbw.tag,
            data_residue: 0,
            status: CswStatus::Passed,
        }
        .emit_into(&mut csw)
        .expect("CSW buffer");
        let t = cx.reserve(layer::BRIDGE_CPU, cbw_done_ns, firmware_ns, 0);
        let sense_done_ns = cx.usb_message_in(t, n as u64);
        let csw_submit_ns = cx.hand_off(sense_done_ns, 0);
        let csw_done_ns = cx.usb_message_in(csw_submit_ns, CSW_LEN as u64);
        // Host: the CSW closes the REQUEST SENSE; the sense data says why the read failed.
        let parsed_csw = CswRepr::parse(&CswPacket::new_checked(&csw[..]).expect("host: CSW"))
            .expect("host: invalid CSW");
        assert_eq!(parsed_csw.tag, tag, "CSW tag differs from the CBW tag");
        assert_eq!(parsed_csw.status, CswStatus::Passed, "REQUEST SENSE failed");
        let parsed = SenseRepr::parse(&sense[..n]).expect("host: invalid sense data");
        RequestSense {
            key: parsed.key,
            additional: parsed.additional,
            cbw,
            sense,
            csw,
            cbw_done_ns,
            sense_done_ns,
            csw_submit_ns,
            csw_done_ns,
        }
    }

    /// Host: Reset Recovery (BOT 1.0 §5.3.4): a Bulk-Only Mass Storage Reset (class request
    /// FFh to the interface), then CLEAR_FEATURE(ENDPOINT_HALT) on bulk-in and on bulk-out.
    /// Between the reset and the clears Linux usb-storage waits `delay_ns`
    /// (`usb_stor_reset_common`, 6 s). The last transfer's `driver_ns` is when the endpoints
    /// are usable again.
    pub fn reset_recovery(cx: &mut Cx, at_ns: u64, delay_ns: u64) -> [ControlTransfer; 3] {
        let reset = cx.usb_control(at_ns, &SetupPacket::bulk_only_reset(INTERFACE));
        let clear_in = cx.usb_control(
            reset.driver_ns + delay_ns,
            &SetupPacket::clear_halt(BULK_IN_ENDPOINT),
        );
        let clear_out = cx.usb_control(
            clear_in.driver_ns,
            &SetupPacket::clear_halt(BULK_OUT_ENDPOINT),
        );
        [reset, clear_in, clear_out]
    }

    /// Host and bridge: usb-storage's probe asks Get Max LUN (BOT 1.0 §3.2) from `at_ns`, and
    /// the bridge, after `firmware_ns`, answers one byte: 0, its one LUN. Returns the control
    /// transfer and the answer.
    pub fn get_max_lun(cx: &mut Cx, at_ns: u64, firmware_ns: u64) -> (ControlTransfer, [u8; 1]) {
        let answer = [0u8];
        let setup = SetupPacket::get_max_lun(INTERFACE);
        let transfer = cx.usb_control_in(at_ns, &setup, answer.len() as u64, firmware_ns);
        (transfer, answer)
    }

    /// Host, hung bridge: the Bulk-Only Mass Storage Reset's SETUP goes out and nothing comes
    /// back; the host gives up `timeout_ns` after it submitted the request.
    pub fn reset_unanswered(cx: &mut Cx, at_ns: u64, timeout_ns: u64) -> UnansweredControl {
        let setup = SetupPacket::bulk_only_reset(INTERFACE);
        cx.usb_message_out(at_ns, SETUP_LEN as u64, 0);
        UnansweredControl {
            setup,
            submit_ns: at_ns,
            gave_up_ns: at_ns + timeout_ns,
        }
    }
}

/// A class request the device never answered: its SETUP went out at `submit_ns` and the host
/// gave up on it at `gave_up_ns`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UnansweredControl {
    pub setup: SetupPacket,
    pub submit_ns: u64,
    pub gave_up_ns: u64,
}

/// A read's data phase the bridge stalled: when the host's data transfer ended with STALL, and
/// the CLEAR_FEATURE(ENDPOINT_HALT) of bulk-in that followed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StalledDataIn {
    pub stalled_ns: u64,
    pub clear: ControlTransfer,
}

/// A REQUEST SENSE exchange: its CBW, sense data and CSW as sent, and when each transfer
/// completed at the host (the data transfer is queued at `cbw_done_ns`, the CSW's at
/// `csw_submit_ns`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RequestSense {
    pub key: SenseKey,
    /// ASC and ASCQ.
    pub additional: AdditionalSense,
    pub cbw: [u8; CBW_LEN],
    pub sense: [u8; SENSE_ALLOCATION_BYTES as usize],
    pub csw: [u8; CSW_LEN],
    pub cbw_done_ns: u64,
    pub sense_done_ns: u64,
    pub csw_submit_ns: u64,
    pub csw_done_ns: u64,
}
