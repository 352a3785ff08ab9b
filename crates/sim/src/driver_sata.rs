//! Direct SATA, the reference path: the AHCI driver (with NCQ) or a controller in IDE mode
//! (one command at a time) sends the command FIS straight to the drive; TRIM goes as DATA SET
//! MANAGEMENT with its range payload encoded by `wire`.

use crate::command::Op;
use crate::drive::{DriveCommand, TrimRange};
use crate::event::{CmdId, Event};
use crate::link_sata::{
    check_status, decode_command, emit_dsm_command, emit_rw_command, emit_status, AtaCommand,
    DSM_BLOCK_BYTES, FIS_REG_H2D_BYTES, STATUS_FIS_BYTES_MAX,
};
use crate::pcie::DESCRIPTOR_BYTES;
use crate::profile::{SECTOR_BYTES, TRIM_RANGE_SECTORS_MAX};
use crate::resource::Flow;
use crate::sim::{layer, Simulator};
use storlab_wire::ata::{
    emit_trim_ranges, trim_payload_len, trim_ranges, TrimRange as WireTrimRange,
};
use storlab_wire::sata::REG_H2D_LEN;

/// AHCI command table: a 64-byte command FIS area the controller fetches per command.
const AHCI_COMMAND_FIS_AREA_BYTES: u64 = 64;

impl Simulator {
    /// Host: the driver fills a command slot; the controller fetches it and sends the
    /// Register H2D FIS. The drive decodes LBA, count and tag from the FIS bytes.
    pub(crate) fn sata_issue(&mut self, id: CmdId) {
        let now = self.now_ns();
        let c = self.cmd_mut(id);
        c.device = DriveCommand {
            write: c.op == Op::Write,
            lba: c.offset_bytes / u64::from(SECTOR_BYTES),
            blocks: c.len_bytes / SECTOR_BYTES,
        };
        let (op, len) = (c.op, u64::from(c.len_bytes));
        c.holds_drive_slot = true;
        self.at_drive += 1;
        assert!(
            self.at_drive <= self.drive_slots,
            "more commands at the drive than tags"
        );
        let descriptors = self.controller.descriptors(len) * DESCRIPTOR_BYTES;
        let t = self.reserve(layer::CONTROLLER, now, self.controller.transfer_ns(0), 0);
        let t = self.reserve(
            layer::PCIE_DOWN,
            t,
            // The AHCI controller reads the command table (FIS area and PRDs) from host memory.
            self.pcie_down
                .read_ns(AHCI_COMMAND_FIS_AREA_BYTES + descriptors),
            0,
        );
        if op == Op::Trim {
            let (offset, len) = {
                let c = self.cmd(id);
                (c.offset_bytes, c.len_bytes)
            };
            self.encode_dsm(
                id,
                offset / u64::from(SECTOR_BYTES),
                u64::from(len / SECTOR_BYTES),
            );
            let at = self.dsm_command_to_drive(id, t);
            self.schedule(at, Event::DriveCommand { cmd: id });
        } else {
            self.ata_command_to_drive(id, t);
        }
    }

    /// Host side (AHCI or bridge): encode `id`'s read/write as a Register H2D FIS (READ/WRITE
    /// FPDMA QUEUED with a fresh NCQ tag when the drive queues, else DMA EXT) and send it from
    /// `from_ns`. The drive's decoding of those bytes replaces the command's `device` view.
    pub(crate) fn ata_command_to_drive(&mut self, id: CmdId, from_ns: u64) {
        let tag = (self.drive_slots > 1).then(|| self.ncq_tags.acquire(id));
        let mut fis = [0u8; REG_H2D_LEN];
        emit_rw_command(&self.cmd(id).device, tag, &mut fis);
        let AtaCommand::ReadWrite {
            command,
            tag: decoded_tag,
        } = decode_command(&fis)
        else {
            panic!("drive: a read/write FIS decoded as another command");
        };
        assert_eq!(decoded_tag, tag, "drive decoded another NCQ tag");
        self.cmd_mut(id).device = command;
        let ns = self.sata.fis_ns(FIS_REG_H2D_BYTES);
        let at = self.reserve(layer::SATA_LINK, from_ns, ns, 0);
        self.schedule(at, Event::DriveCommand { cmd: id });
    }

    /// Host side: send DATA SET MANAGEMENT for the DSM payload already encoded in `id`; the
    /// drive checks the block count it decodes against the payload. Returns when it arrived.
    pub(crate) fn dsm_command_to_drive(&mut self, id: CmdId, from_ns: u64) -> u64 {
        let payload_len = self.cmd(id).dsm_payload.len() as u64;
        let mut fis = [0u8; REG_H2D_LEN];
        emit_dsm_command(payload_len / DSM_BLOCK_BYTES, &mut fis);
        let AtaCommand::Trim { blocks } = decode_command(&fis) else {
            panic!("drive: a DSM FIS decoded as another command");
        };
        assert_eq!(
            u64::from(blocks) * DSM_BLOCK_BYTES,
            payload_len,
            "drive decoded another DSM block count"
        );
        let ns = self.sata.fis_ns(FIS_REG_H2D_BYTES);
        self.reserve(layer::SATA_LINK, from_ns, ns, 0)
    }

    /// Host (direct SATA): send the DSM TRIM payload encoded at issue; returns when the drive
    /// has it.
    pub(crate) fn sata_trim_payload(&mut self, id: CmdId) -> u64 {
        let now = self.now_ns();
        let payload_len = self.cmd(id).dsm_payload.len() as u64;
        let from_host = {
            let d = self.pcie_down.read_ns(payload_len);
            let p = self.pcie_down.read_first_piece_ns(payload_len);
            self.pass(layer::PCIE_DOWN, Flow::ready_at(now), d, p, payload_len)
        };
        self.sata_data(from_host, payload_len).end_ns
    }

    /// Encode TRIM ranges for `blocks` sectors at `lba` into the command's DSM payload.
    pub(crate) fn encode_dsm(&mut self, id: CmdId, lba: u64, blocks: u64) -> u64 {
        let mut ranges = Vec::new();
        let mut done = 0;
        while done < blocks {
            let n = (blocks - done).min(TRIM_RANGE_SECTORS_MAX);
            ranges.push(WireTrimRange {
                lba: lba + done,
                sectors: n as u16,
            });
            done += n;
        }
        let c = self.cmd_mut(id);
        c.dsm_payload.clear();
        c.dsm_payload.resize(trim_payload_len(ranges.len()), 0);
        let n = emit_trim_ranges(&ranges, &mut c.dsm_payload).expect("payload sized for ranges");
        debug_assert!((n as u64).is_multiple_of(DSM_BLOCK_BYTES));
        n as u64
    }

    /// Drive: decode the DSM payload and trim; returns when the drive reports completion.
    pub(crate) fn execute_dsm(&mut self, id: CmdId, at_ns: u64) -> u64 {
        let ranges: Vec<TrimRange> = trim_ranges(&self.cmd(id).dsm_payload)
            .map(|r| TrimRange {
                lba: r.lba,
                blocks: r.sectors.into(),
            })
            .collect();
        for r in &ranges {
            self.store.trim(
                r.lba * u64::from(SECTOR_BYTES),
                r.blocks * u64::from(SECTOR_BYTES),
            );
        }
        self.counters.trims_to_drive += 1;
        self.drive.trim(at_ns, &ranges)
    }

    /// Direct SATA TRIM: the payload arrived; the drive executes it.
    pub(crate) fn sata_trim_execute(&mut self, id: CmdId) -> u64 {
        let now = self.now_ns();
        self.execute_dsm(id, now)
    }

    /// Drive status (Set Device Bits naming the NCQ tag, Register D2H otherwise) to host
    /// memory, where the driver parses and checks it.
    pub(crate) fn sata_send_status(&mut self, id: CmdId, from_ns: u64) {
        let tag = self.ncq_tags.release(id);
        let mut bytes = [0u8; STATUS_FIS_BYTES_MAX];
        let len = emit_status(tag, &mut bytes);
        check_status(&bytes[..len], tag);
        let fis = len as u64;
        let t = self.reserve(layer::SATA_LINK, from_ns, self.sata.fis_ns(fis), 0);
        let t = self.reserve(layer::PCIE_UP, t, self.pcie_up.transfer_ns(fis), 0);
        let t = self.reserve(layer::CONTROLLER, t, self.controller.transfer_ns(0), 0);
        self.status_at_host(id, t);
    }
}
