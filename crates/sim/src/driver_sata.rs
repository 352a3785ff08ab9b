//! Direct SATA, the reference path: the AHCI driver (with NCQ) or a controller in IDE mode
//! (one command at a time) sends the command FIS straight to the drive; TRIM goes as DATA SET
//! MANAGEMENT with its range payload encoded by `wire`.

use crate::drive::{DriveCommand, TrimRange};
use crate::event::{CmdId, Event};
use crate::link_sata::{
    DSM_BLOCK_BYTES, FIS_REG_D2H_BYTES, FIS_REG_H2D_BYTES, FIS_SET_DEVICE_BITS_BYTES,
};
use crate::pcie::DESCRIPTOR_BYTES;
use crate::profile::{SECTOR_BYTES, TRIM_RANGE_SECTORS_MAX};
use crate::resource::Flow;
use crate::sim::{layer, Simulator, Transport};
use storlab_wire::ata::{
    emit_trim_ranges, trim_payload_len, trim_ranges, TrimRange as WireTrimRange,
};

/// AHCI command table: a 64-byte command FIS area the controller fetches per command.
const AHCI_COMMAND_FIS_AREA_BYTES: u64 = 64;

impl Simulator {
    /// Host: the driver fills a command slot; the controller fetches it and sends the
    /// Register H2D FIS. The drive decodes LBA and count from it.
    pub(crate) fn sata_issue(&mut self, id: CmdId) {
        let now = self.now_ns();
        let ncq_tag = id;
        let c = self.cmd_mut(id);
        c.tag = ncq_tag;
        c.device_tag = ncq_tag;
        c.device = DriveCommand {
            write: c.op == crate::command::Op::Write,
            lba: c.offset_bytes / u64::from(SECTOR_BYTES),
            blocks: c.len_bytes / SECTOR_BYTES,
        };
        let len = u64::from(c.len_bytes);
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
            self.pcie_down
                .transfer_ns(AHCI_COMMAND_FIS_AREA_BYTES + descriptors),
            0,
        );
        let t = self.reserve(layer::SATA_LINK, t, self.sata.fis_ns(FIS_REG_H2D_BYTES), 0);
        self.schedule(t, Event::DriveCommand { cmd: id });
    }

    /// Host (direct SATA): encode the DSM TRIM payload and send it; returns when the drive has it.
    pub(crate) fn sata_trim_payload(&mut self, id: CmdId) -> u64 {
        let now = self.now_ns();
        let (offset, len) = {
            let c = self.cmd(id);
            (c.offset_bytes, c.len_bytes)
        };
        let payload_len = self.encode_dsm(
            id,
            offset / u64::from(SECTOR_BYTES),
            u64::from(len / SECTOR_BYTES),
        );
        let from_host = {
            let d = self.pcie_down.transfer_ns(payload_len);
            let p = self.pcie_down.first_piece_ns(payload_len);
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

    /// Drive status (Set Device Bits for NCQ, Register D2H otherwise) to host memory.
    pub(crate) fn sata_send_status(&mut self, id: CmdId, from_ns: u64) {
        let fis = if self.transport == Transport::SataNcq {
            FIS_SET_DEVICE_BITS_BYTES
        } else {
            FIS_REG_D2H_BYTES
        };
        let t = self.reserve(layer::SATA_LINK, from_ns, self.sata.fis_ns(fis), 0);
        let t = self.reserve(layer::PCIE_UP, t, self.pcie_up.transfer_ns(fis), 0);
        let t = self.reserve(layer::CONTROLLER, t, self.controller.transfer_ns(0), 0);
        self.status_at_host(id, t);
    }
}
