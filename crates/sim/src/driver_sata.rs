//! Direct SATA, the reference path: the AHCI driver (with NCQ) or a controller in IDE mode
//! (one command at a time) sends the command FIS straight to the drive; TRIM goes as DATA SET
//! MANAGEMENT with its range payload encoded by `wire` (see `device_link.rs`).

use crate::command::Command;
use crate::cx::{layer, Cx};
use crate::device_link::DeviceLink;
use crate::drive::DriveCommand;
use crate::event::CmdId;
use crate::op::Op;
use crate::pcie::DESCRIPTOR_BYTES;
use crate::profile::SECTOR_BYTES;
use crate::resource::Flow;

/// AHCI command table: a 64-byte command FIS area the controller fetches per command.
const AHCI_COMMAND_FIS_AREA_BYTES: u64 = 64;

/// The AHCI host driver (NCQ) or an IDE-mode controller: no per-command state beyond the
/// drive link's tags.
#[derive(Clone, Copy)]
pub(crate) struct Ahci {
    /// Commands are queued with NCQ (else IDE mode, one at a time).
    pub ncq: bool,
    /// libata's error handler owns the port until then (NCQ error recovery, or a hardreset and
    /// revalidation): the SCSI host is in recovery and sends the drive nothing new
    /// (`scsi_host_in_recovery`), and the drive would take nothing before the NCQ Command Error
    /// log is read. 0 when no recovery ran.
    pub recovery_until_ns: u64,
}

impl Ahci {
    pub fn new(ncq: bool) -> Ahci {
        Ahci {
            ncq,
            recovery_until_ns: 0,
        }
    }

    /// The endpoint once libata's error handler holds the port until `at_ns` too (the
    /// requeue after an NCQ error or a hardreset; the later of two holds wins).
    pub fn recovering_until(self, at_ns: u64) -> Ahci {
        Ahci {
            recovery_until_ns: self.recovery_until_ns.max(at_ns),
            ..self
        }
    }
}

impl Ahci {
    /// Host: the driver fills a command slot; the controller fetches it and sends the
    /// command to the drive, which decodes LBA, count and tag from its bytes. Returns when
    /// the drive has the command (a TRIM's payload follows in the data phase).
    #[inline(always)]
    pub fn issue(&self, cx: &mut Cx, link: &mut DeviceLink, id: CmdId, c: &mut Command) -> u64 {
        let now = cx.now_ns;
        c.device = DriveCommand {
            write: c.op == Op::Write,
            lba: c.offset_bytes / u64::from(SECTOR_BYTES),
            blocks: c.len_bytes / SECTOR_BYTES,
        };
        let (op, len) = (c.op, u64::from(c.len_bytes));
        let descriptors = cx.controller.descriptors(len) * DESCRIPTOR_BYTES;
        let controller_ns = cx.controller.transfer_ns(0);
        let t = cx.reserve(layer::CONTROLLER, now, controller_ns, 0);
        // The AHCI controller reads the command table (FIS area and PRDs) from host memory.
        let table_ns = cx
            .pcie_down
            .read_ns(AHCI_COMMAND_FIS_AREA_BYTES + descriptors);
        let t = cx.reserve(layer::PCIE_DOWN, t, table_ns, 0);
        if op == Op::Flush {
            // FLUSH CACHE EXT: not queued, no LBA; the host sends it only with no queued
            // command at the drive (libata's `ata_std_qc_defer`; the core keeps that rule).
            c.device = DriveCommand::default();
            link.send_flush_command(cx, t)
        } else if op == Op::Trim {
            let lba = c.offset_bytes / u64::from(SECTOR_BYTES);
            let blocks = u64::from(c.len_bytes / SECTOR_BYTES);
            link.encode_trim(c, lba, blocks);
            link.send_trim_command(cx, c, t)
        } else {
            link.send_rw_command(cx, id, c, t)
        }
    }

    /// Host: send the TRIM payload encoded at issue; returns when the drive has it.
    pub fn trim_payload(&self, cx: &mut Cx, link: &mut DeviceLink, c: &Command) -> u64 {
        let now = cx.now_ns;
        let payload_len = c.dsm_payload.len() as u64;
        let from_host = {
            let d = cx.pcie_down.read_ns(payload_len);
            let p = cx.pcie_down.read_first_piece_ns(payload_len);
            cx.pass(layer::PCIE_DOWN, Flow::ready_at(now), d, p, payload_len)
        };
        link.data_out(cx, from_host, payload_len).end_ns
    }

    /// Drive status to host memory, where the driver parses and checks it; returns when it is
    /// there.
    #[inline(always)]
    pub fn send_status(
        &self,
        cx: &mut Cx,
        link: &mut DeviceLink,
        id: CmdId,
        from_ns: u64,
        failed: bool,
        device: &DriveCommand,
    ) -> u64 {
        let (t, status_bytes) = link.send_status(cx, id, from_ns, failed, device);
        let pcie_ns = cx.pcie_up.transfer_ns(status_bytes);
        let t = cx.reserve(layer::PCIE_UP, t, pcie_ns, 0);
        let controller_ns = cx.controller.transfer_ns(0);
        cx.reserve(layer::CONTROLLER, t, controller_ns, 0)
    }
}
