//! The drive's side: commands at the drive, its read queue, writes with their payload (for
//! drives that look at it), flushes, TRIM, and the direct (AHCI) data path.

use crate::core::{data::for_kept_pieces, Simulator};
use crate::drive::{DriveCommand, COMPRESSION_PIECE_BYTES, UNKNOWN_COMPRESSED_BYTES};
use crate::driver_sata::Ahci;
use crate::endpoints::Endpoints;
use crate::event::{CmdId, Event};
use crate::op::Op;
use crate::profile::SECTOR_BYTES;
use crate::resource::Flow;

impl Simulator {
    /// FLUSH CACHE EXT reached the drive: no data phase; the drive empties its write cache,
    /// then reports status.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn drive_flush(&mut self, id: CmdId, now_ns: u64) {
        self.counters.flushes_to_drive += 1;
        let done = self.drive.flush(now_ns);
        self.cx.schedule(done, Event::DataDone { cmd: id });
    }

    /// The drive finished a flush: later commands may go to it; a BOT driver has the CSW
    /// transfer queued since the CBW's completion.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn flush_done_at_drive(&mut self, id: CmdId) {
        self.flush_at_drive = false;
        match self.endpoints {
            Endpoints::Bridged(usb) => usb.no_data_phase(&mut self.commands[id as usize]),
            Endpoints::Direct(_) => {}
        }
    }

    /// The drive received a command.
    pub(in crate::core) fn on_drive_command(&mut self, id: CmdId) {
        let now = self.cx.now_ns;
        let c = &self.commands[id as usize];
        let (op, device) = (c.op, c.device);
        match op {
            Op::Read => {
                self.count_drive_io(&device);
                self.drive_reads.push(id);
                self.drive_read_commands.push(device);
                self.drive_serve_reads();
            }
            Op::Write => {
                self.count_drive_io(&device);
                if let Some(f) = self.cx.faults.as_mut() {
                    f.media_written(device.lba, device.blocks);
                }
                // The drive asks for the data.
                let ready = self.link.request_write_data(&mut self.cx, now);
                self.cx.schedule(ready, Event::DataReady { cmd: id });
            }
            Op::Trim => {
                // Direct SATA: the DSM payload follows the command.
                self.cx.schedule(now, Event::DataReady { cmd: id });
            }
            Op::Flush => self.drive_flush(id, now),
        }
    }

    /// Start queued reads while the drive can take one (at once for SSDs; when the head is
    /// free for an HDD, which picks the read it reaches soonest).
    pub(in crate::core) fn drive_serve_reads(&mut self) {
        while !self.drive_reads.is_empty() {
            let now = self.cx.now_ns;
            let ready = self.drive.read_ready_ns(now, &self.drive_read_commands);
            if ready > now {
                if !self.drive_wake_pending {
                    self.drive_wake_pending = true;
                    self.cx.schedule(ready, Event::DriveWake);
                }
                return;
            }
            let i = if self.drive_reads.len() == 1 {
                0
            } else {
                self.drive.pick_read(now, &self.drive_read_commands)
            };
            let id = self.drive_reads.remove(i);
            let device = self.drive_read_commands.remove(i);
            let media = self.drive.read(now, &device, &mut self.rng);
            self.commands[id as usize].media = media;
            if self.cx.faults.is_some() {
                self.draw_media_error(id, &device);
            }
            self.cx
                .schedule(media.start_ns, Event::DataReady { cmd: id });
        }
    }

    /// Hand a write's data (arriving as `at_drive`) to the drive; returns when it completes.
    pub(in crate::core) fn drive_write(&mut self, id: CmdId, at_drive: Flow) -> u64 {
        let end_ns = self.drive_write_payload(id, at_drive);
        if let Some(journal) = self.power_journal.as_mut() {
            // A model without a volatile cache does not count its writes: nothing to note.
            if let Some(ordinal) = self.drive.writes_taken().checked_sub(1) {
                journal.note_drive_write(id, ordinal);
            }
        }
        end_ns
    }

    /// [`Simulator::drive_write`]'s work: the drive takes the write, with its bytes when it
    /// wants them.
    pub(in crate::core) fn drive_write_payload(&mut self, id: CmdId, at_drive: Flow) -> u64 {
        let device = self.commands[id as usize].device;
        if !self.drive.wants_payload() {
            return self
                .drive
                .write(at_drive, &device, None, &mut self.rng)
                .end_ns;
        }
        let c = &self.commands[id as usize];
        let (parts, part_count) = (c.parts, usize::from(c.part_count));
        let slot_range = |part: &crate::command::Part| {
            let start = part.slot as usize * self.slot_bytes + part.slot_offset as usize;
            start..start + part.len as usize
        };
        // One part (the usual case) goes to the drive from its slot; several are gathered.
        let one_part = (part_count == 1).then(|| slot_range(&parts[0]));
        if one_part.is_none() {
            self.drive_payload.clear();
            for part in &parts[..part_count] {
                self.drive_payload
                    .extend_from_slice(&self.slot_buffers[slot_range(part)]);
            }
        }
        let payload_len = one_part
            .as_ref()
            .map_or(self.drive_payload.len(), ExactSizeIterator::len);
        self.drive_compressed.clear();
        self.drive_compressed.resize(
            payload_len.div_ceil(COMPRESSION_PIECE_BYTES),
            UNKNOWN_COMPRESSED_BYTES,
        );
        for_kept_pieces(&parts[..part_count], &mut |piece, slot, slot_piece| {
            let kept = self.slot_compressed[slot][slot_piece];
            self.reused_compression_estimates += u64::from(kept != UNKNOWN_COMPRESSED_BYTES);
            self.drive_compressed[piece] = kept;
        });
        let payload = match one_part {
            Some(range) => &self.slot_buffers[range],
            None => &self.drive_payload[..],
        };
        let end_ns = self
            .drive
            .write_payload(
                at_drive,
                &device,
                payload,
                &mut self.drive_compressed,
                &mut self.rng,
            )
            .end_ns;
        for_kept_pieces(&parts[..part_count], &mut |piece, slot, slot_piece| {
            self.slot_compressed[slot][slot_piece] = self.drive_compressed[piece];
        });
        end_ns
    }

    /// Pieces whose compression estimate a write reused from an earlier write of the same
    /// slot bytes (tests assert the fast path took them).
    pub fn reused_compression_estimates(&self) -> u64 {
        self.reused_compression_estimates
    }

    pub(in crate::core) fn count_drive_io(&mut self, device: &DriveCommand) {
        let bytes = device.blocks * SECTOR_BYTES;
        *self.counters.drive_io_sizes.entry(bytes).or_insert(0) += 1;
    }

    /// The data phase of direct SATA: drive link, controller, PCIe. Returns when it ended at
    /// its far end.
    pub(in crate::core) fn direct_data(&mut self, id: CmdId, ahci: Ahci) -> u64 {
        let now = self.cx.now_ns;
        let c = &self.commands[id as usize];
        let (op, len) = (c.op, u64::from(c.len_bytes));
        let cx = &mut self.cx;
        match op {
            Op::Read => {
                let on_link = self.link.data_in(cx, c.media, len);
                cx.host_data_in(on_link, len).end_ns
            }
            Op::Write => {
                let from_host = cx.host_data_out(Flow::ready_at(now), len);
                let on_link = self.link.data_out(cx, from_host, len);
                self.drive_write(id, on_link)
            }
            Op::Trim => ahci.trim_payload(cx, &mut self.link, c),
            Op::Flush => unreachable!("a flush has no data phase"),
        }
    }

    /// Drive: decode the TRIM payload and trim; returns when the drive reports completion.
    pub(in crate::core) fn execute_trim(&mut self, id: CmdId, at_ns: u64) -> u64 {
        let ranges = self.link.decode_trim(&self.commands[id as usize]);
        for r in &ranges {
            let (offset, len) = (
                r.lba * u64::from(SECTOR_BYTES),
                r.blocks * u64::from(SECTOR_BYTES),
            );
            self.store.trim(offset, len);
            if let Some(journal) = self.power_journal.as_mut() {
                journal.trimmed(offset, len);
            }
        }
        self.counters.trims_to_drive += 1;
        self.drive.trim(at_ns, &ranges)
    }
}
