//! The USB-to-SATA bridge: firmware parses each command (CBW or Command IU), translates SCSI to
//! ATA (READ/WRITE, UNMAP → DATA SET MANAGEMENT TRIM when the firmware can), feeds the drive
//! through its NCQ slots (or one at a time), and turns ATA status into a CSW or Sense IU.

use crate::drive::DriveCommand;
use crate::event::{CmdId, Event};
use crate::link_sata::{check_status, emit_status, STATUS_FIS_BYTES_MAX};
use crate::profile::SECTOR_BYTES;
use crate::resource::Flow;
use crate::scsi::{parse_unmap_list, ScsiOp};
use crate::sim::{layer, Simulator, Transport};

impl Simulator {
    fn bridge_profile(&self) -> &crate::profile::BridgeProfile {
        &self
            .bridge
            .as_ref()
            .expect("USB stacks have a bridge")
            .profile
    }

    /// Command bytes arrived: parse them, pay the firmware cost.
    pub(crate) fn bridge_on_command(&mut self, id: CmdId) {
        let decoded = match self.transport {
            Transport::Bot => self.bot_decode_command(id),
            Transport::Uas { .. } => self.uas_decode_command(id),
            _ => unreachable!("direct SATA has no bridge"),
        };
        assert_eq!(
            decoded.op(),
            self.cmd(id).op,
            "bridge decoded another operation"
        );
        let c = self.cmd_mut(id);
        match decoded {
            ScsiOp::Read { lba, blocks } | ScsiOp::Write { lba, blocks } => {
                c.device = DriveCommand {
                    write: matches!(decoded, ScsiOp::Write { .. }),
                    lba,
                    blocks,
                };
            }
            ScsiOp::Unmap {
                parameter_list_length,
            } => {
                assert_eq!(
                    usize::from(parameter_list_length),
                    crate::command::UNMAP_LIST_BYTES,
                    "UNMAP parameter list length"
                );
            }
        }
        let now = self.now_ns();
        let fw = self.bridge_profile().firmware_ns(decoded.op());
        let mut t = self.reserve(layer::BRIDGE_CPU, now, fw, 0);
        if let Some(buffered_ns) = self.bot_write_into_buffer(id) {
            // The firmware issues the ATA command once the whole data phase is in its buffer.
            t = t.max(buffered_ns);
        }
        if decoded.op() == crate::command::Op::Trim {
            // The firmware asks for the parameter list before it can translate.
            self.schedule(t, Event::DataReady { cmd: id });
        } else if self.bridge_waiting.is_empty() && self.at_drive < self.drive_slots {
            // Nothing queued ahead and a drive slot free: the command goes to the drive as
            // soon as the firmware is done (the slot is held from now, which no queued
            // command can notice).
            self.at_drive += 1;
            self.cmd_mut(id).holds_drive_slot = true;
            self.ata_command_to_drive(id, t);
        } else {
            self.schedule(t, Event::BridgeReady { cmd: id });
        }
    }

    /// A BOT write that fits the bridge's buffer (`bot_write_buffer_bytes`): its data phase
    /// runs now, from the host into the buffer, as soon as the host has queued it. Returns when
    /// the data is in the buffer, or None when the command is not such a write.
    fn bot_write_into_buffer(&mut self, id: CmdId) -> Option<u64> {
        let buffer = self.bridge_profile().bot_write_buffer_bytes;
        let c = self.cmd(id);
        if self.transport != Transport::Bot || c.op != crate::command::Op::Write {
            return None;
        }
        if c.len_bytes > buffer {
            return None;
        }
        let len = u64::from(c.len_bytes);
        let start = self.now_ns().max(c.data_urb_ns);
        let from_host = self.host_data_out(Flow::ready_at(start), len);
        let on_bus = self.usb_data_out(from_host, len);
        self.bot_data_completed(id, on_bus.end_ns);
        let in_buffer = self.bridge_data(on_bus, len);
        self.cmd_mut(id).buffered = true;
        Some(in_buffer.end_ns)
    }

    /// The translated ATA command waits for a drive slot.
    pub(crate) fn bridge_on_ready(&mut self, id: CmdId) {
        self.bridge_waiting.push_back(id);
        assert!(
            self.bridge_waiting.len() <= self.max_outstanding_commands() as usize,
            "bridge queue bound exceeded"
        );
        self.bridge_dispatch();
    }

    /// Pass waiting commands to the drive while it has free slots (NCQ tags, or one).
    pub(crate) fn bridge_dispatch(&mut self) {
        let now = self.now_ns();
        while self.at_drive < self.drive_slots {
            let Some(id) = self.bridge_waiting.pop_front() else {
                break;
            };
            self.at_drive += 1;
            self.cmd_mut(id).holds_drive_slot = true;
            self.ata_command_to_drive(id, now);
        }
    }

    /// The UNMAP parameter list arrived: translate to TRIM (or drop it, as firmware without
    /// translation does). Returns when status can be sent.
    pub(crate) fn bridge_unmap(&mut self, id: CmdId) -> u64 {
        let now = self.now_ns();
        if !self.bridge_profile().unmap_to_trim {
            self.counters.trims_not_translated += 1;
            return now;
        }
        let list = parse_unmap_list(&self.cmd(id).unmap_list);
        assert_eq!(list.len(), 1, "the host sends one descriptor per UNMAP");
        let descriptor = list.descriptors().next().expect("one descriptor");
        let (lba, blocks) = (descriptor.lba, descriptor.blocks);
        let host = self.cmd(id);
        assert_eq!(
            (lba * u64::from(SECTOR_BYTES), blocks * SECTOR_BYTES),
            (host.offset_bytes, host.len_bytes),
            "bridge decoded another UNMAP range than the host sent"
        );
        let payload = self.encode_dsm(id, lba, blocks.into());
        let t = self.dsm_command_to_drive(id, now);
        let at_drive = self.sata_data(Flow::ready_at(t), payload).end_ns;
        self.execute_dsm(id, at_drive)
    }

    /// ATA status to the bridge (Set Device Bits naming the NCQ tag, or Register D2H), which
    /// parses and checks it; firmware builds the CSW / Sense IU, it goes to the host.
    pub(crate) fn bridge_send_status(&mut self, id: CmdId, from_ns: u64) {
        let tag = self.ncq_tags.release(id);
        let mut fis = [0u8; STATUS_FIS_BYTES_MAX];
        let fis_len = emit_status(tag, &mut fis);
        check_status(&fis[..fis_len], tag);
        let ns = self.sata.fis_ns(fis_len as u64);
        let t = self.reserve(layer::SATA_LINK, from_ns, ns, 0);
        let fw = self.bridge_profile().firmware_status_ns;
        let t = self.reserve(layer::BRIDGE_CPU, t, fw, 0);
        // BOT: the CSW goes once the host has asked for it (its transfer is queued).
        let t = t.max(self.bot_status_urb_ns(id));
        let len = match self.transport {
            Transport::Bot => self.bot_encode_status(id),
            _ => self.uas_encode_status(id),
        };
        let at = self.usb_message_in(t, len);
        self.status_at_host(id, at);
    }
}
