//! Payload and completion: the slot buffers the caller's data travels in, the data phase's
//! start and end, the copy between slots and the store, and each request's completion.

use crate::core::{trace_hooks::TraceHook, Simulator, SlotState};
use crate::drive::{COMPRESSION_PIECE_BYTES, UNKNOWN_COMPRESSED_BYTES};
use crate::driver_bot::Bot;
use crate::driver_uas::Uas;
use crate::endpoints::{Bridged, Endpoints};
use crate::error::SimError;
use crate::event::{CmdId, Event};
use crate::fault::CommandFault;
use crate::op::Op;
use crate::power::PowerJournal;
use crate::profile::SECTOR_BYTES;
use crate::request::SimCompletion;
use crate::store::Store;

impl Simulator {
    /// Allocate `slots` payload buffers of `slot_bytes` each. Call before the first request;
    /// calling again resizes (only when nothing is outstanding).
    pub fn setup_slots(&mut self, slots: u32, slot_bytes: usize) -> Result<(), SimError> {
        if self.outstanding > 0 || self.slots.iter().any(|s| s.active) {
            return Err(SimError::Request(
                "cannot resize slots while requests are outstanding".into(),
            ));
        }
        // The driver's buffer is one more slot, past the caller's; writes it still holds move.
        let held = self.driver_buffer.holds_writes().map(|len| {
            let start = self.driver_buffer.slot as usize * self.slot_bytes;
            self.slot_buffers[start..start + len as usize].to_vec()
        });
        let driver_bytes = if self.driver_buffer.enabled() {
            self.driver_buffer.bytes as usize
        } else {
            0
        };
        self.slots = vec![SlotState::default(); slots as usize];
        self.slot_bytes = slot_bytes;
        self.slot_buffers = vec![0u8; slots as usize * slot_bytes + driver_bytes];
        self.slot_zero = vec![true; slots as usize + 1];
        self.slot_tails = vec![Vec::new(); slots as usize + 1];
        self.slot_compressed = if self.drive.wants_payload() {
            let mut pieces = vec![slot_bytes.div_ceil(COMPRESSION_PIECE_BYTES); slots as usize];
            pieces.push(driver_bytes.div_ceil(COMPRESSION_PIECE_BYTES));
            pieces
                .into_iter()
                .map(|n| vec![UNKNOWN_COMPRESSED_BYTES; n])
                .collect()
        } else {
            vec![Vec::new(); slots as usize + 1]
        };
        self.driver_buffer.slot = slots;
        if let Some(held) = held {
            let start = slots as usize * slot_bytes;
            self.slot_buffers[start..start + held.len()].copy_from_slice(&held);
            self.slot_zero[slots as usize] = false;
        }
        self.block.set_bound(slots, slot_bytes);
        Ok(())
    }

    /// Keep payload out of the drive's store (timing only: reads return zeros). For speed runs
    /// that do not verify data.
    pub fn set_store_payload(&mut self, store: bool) {
        self.store_payload = store;
    }

    /// Keep at most `budget_bytes` of written data (default [`crate::store::DEFAULT_BUDGET_BYTES`]);
    /// what is written past it is counted in the report, not kept. Starts an empty store: call
    /// it before the first write.
    pub fn set_payload_budget_bytes(&mut self, budget_bytes: u64) {
        self.store = Store::with_budget(budget_bytes);
        if self.power_journal.is_some() {
            self.power_journal = Some(Box::new(PowerJournal::new()));
        }
    }

    pub fn slot_buffer(&self, slot: u32) -> &[u8] {
        let start = slot as usize * self.slot_bytes;
        &self.slot_buffers[start..start + self.slot_bytes]
    }

    pub fn slot_buffer_mut(&mut self, slot: u32) -> &mut [u8] {
        self.slot_zero[slot as usize] = false;
        self.slot_tails[slot as usize].clear();
        let pieces = &mut self.slot_compressed[slot as usize];
        // Empty unless the drive compresses: skip the call to `memset` then (its AVX-512
        // entry cost 7% of CPU time on 4 KiB writes even with nothing to fill, perf record).
        if !pieces.is_empty() {
            pieces.fill(UNKNOWN_COMPRESSED_BYTES);
        }
        let start = slot as usize * self.slot_bytes;
        &mut self.slot_buffers[start..start + self.slot_bytes]
    }

    /// The first `len` bytes of a slot's buffer, for a caller that changes only those (the
    /// runner stamping a write): the rest of the buffer is known unchanged, so a write of it
    /// again is stored without comparing it byte for byte (ADR 0016). Any other change goes
    /// through [`Simulator::slot_buffer_mut`].
    pub fn slot_head_mut(&mut self, slot: u32, len: usize) -> &mut [u8] {
        let len = len.min(self.slot_bytes);
        self.slot_zero[slot as usize] = false;
        // A part's match covers its bytes past its own stamp: keep those the head ends before.
        self.slot_tails[slot as usize]
            .retain(|&(slot_offset, _)| len <= slot_offset as usize + crate::store::STAMP_BYTES);
        // Estimates of the pieces the head reaches into are forgotten; the rest stay true.
        let pieces = &mut self.slot_compressed[slot as usize];
        let touched = len.div_ceil(COMPRESSION_PIECE_BYTES).min(pieces.len());
        pieces[..touched].fill(UNKNOWN_COMPRESSED_BYTES);
        let start = slot as usize * self.slot_bytes;
        &mut self.slot_buffers[start..start + len]
    }

    /// Data can move: compute its pipelined path through every layer, by transport.
    pub(in crate::core) fn on_data_ready(&mut self, id: CmdId) {
        if self.commands[id as usize].fault == CommandFault::Medium {
            // The drive has no data to send: it reports the error at once.
            self.cx
                .schedule(self.cx.now_ns, Event::DataDone { cmd: id });
            return;
        }
        let done = match self.endpoints {
            Endpoints::Bridged(usb) => self.bridged_data(id, usb),
            Endpoints::Direct(ahci) => self.direct_data(id, ahci),
        };
        self.cx.schedule(done, Event::DataDone { cmd: id });
    }

    /// The data phase ended: move payload, free the drive slot, send status.
    pub(in crate::core) fn on_data_done(&mut self, id: CmdId) {
        let now = self.cx.now_ns;
        let op = self.commands[id as usize].op;
        let usb = self.endpoints.is_usb();
        let mut status_from = now;
        let failed = self.commands[id as usize].fault == CommandFault::Medium;
        match op {
            Op::Read if failed => {}
            Op::Read => {
                self.move_payload(id, false);
                self.trace(id, TraceHook::DataDone);
            }
            Op::Write => {
                self.move_payload(id, true);
                self.trace(id, TraceHook::DataDone);
            }
            Op::Trim => {
                if usb {
                    self.trace(id, TraceHook::DataDone);
                    status_from = self.bridge_unmap(id);
                } else {
                    status_from = self.execute_trim(id, now);
                }
            }
            Op::Flush => self.flush_done_at_drive(id),
        }
        let released_slot = self.commands[id as usize].holds_drive_slot;
        if released_slot {
            self.commands[id as usize].holds_drive_slot = false;
            self.at_drive -= 1;
        }
        // Status first: its Set Device Bits FIS gives the NCQ tag back before the bridge can
        // hand the tag to the next command.
        match self.endpoints {
            Endpoints::Bridged(usb) => {
                self.bridge_send_status(id, status_from, usb);
                if released_slot {
                    self.bridge_dispatch();
                }
            }
            Endpoints::Direct(ahci) => {
                let device = &self.commands[id as usize].device;
                let at = ahci.send_status(
                    &mut self.cx,
                    &mut self.link,
                    id,
                    status_from,
                    failed,
                    device,
                );
                if failed && ahci.ncq {
                    self.ncq_error_aborts(ahci, at);
                }
                self.status_at_host(id, at);
            }
        }
    }

    /// Copy payload between the slot buffers and the drive's store, at the LBA the device
    /// decoded (so a codec bug shows up as wrong data).
    pub(in crate::core) fn move_payload(&mut self, id: CmdId, write: bool) {
        let c = &self.commands[id as usize];
        let device_offset = c.device.lba * u64::from(SECTOR_BYTES);
        assert_eq!(
            u64::from(c.device.blocks) * u64::from(SECTOR_BYTES),
            u64::from(c.len_bytes),
            "device decoded a different length than the host sent"
        );
        let mut offset = device_offset;
        for part in c.parts() {
            let start = part.slot as usize * self.slot_bytes + part.slot_offset as usize;
            let range = start..start + part.len as usize;
            if self.store_payload {
                if write {
                    let tails = &mut self.slot_tails[part.slot as usize];
                    let known = tails
                        .iter()
                        .position(|&(slot_offset, _)| slot_offset == part.slot_offset)
                        .map(|i| tails.swap_remove(i).1);
                    if let Some(journal) = self.power_journal.as_mut() {
                        journal.before_write(&mut self.store, id, offset, u64::from(part.len));
                    }
                    let found = self
                        .store
                        .write_known(offset, &self.slot_buffers[range], known);
                    if let Some(found) = found {
                        self.slot_tails[part.slot as usize].push((part.slot_offset, found));
                    }
                } else {
                    let slot = part.slot as usize;
                    self.slot_tails[slot].clear();
                    // Only the pieces this read overwrites change (clearing all of a large
                    // slot's estimates on every read cost a memset per command).
                    forget_compressed_pieces(
                        &mut self.slot_compressed[slot],
                        part.slot_offset as usize,
                        part.len as usize,
                    );
                    let was_zero = self.slot_zero[slot];
                    let zero =
                        self.store
                            .read_into(offset, &mut self.slot_buffers[range], was_zero);
                    let whole_slot = part.len as usize == self.slot_bytes;
                    self.slot_zero[slot] = zero && (was_zero || whole_slot);
                }
            }
            offset += u64::from(part.len);
        }
        if write {
            self.counters.bytes_written += u64::from(c.len_bytes);
            if self.power_journal.is_some() {
                self.prune_power_journal();
            }
        } else {
            self.counters.bytes_read += u64::from(c.len_bytes);
        }
    }

    /// Status reaches host memory at `at_ns`: the interrupt and the driver's completion work
    /// are booked on the host CPU from then, and the command completes after them.
    pub(in crate::core) fn status_at_host(&mut self, id: CmdId, at_ns: u64) {
        self.trace(id, TraceHook::Status(at_ns));
        let done = self.cx.completion_cpu(at_ns);
        self.cx.schedule(done, Event::Complete { cmd: id });
    }

    pub(in crate::core) fn on_complete(&mut self, id: CmdId) {
        // The driver checks the status it received (tags asserted across layers).
        let c = &self.commands[id as usize];
        if c.fault != CommandFault::None {
            // The status reports a failure, or the timer of a lost command fired: the
            // driver's recovery runs first.
            self.on_failed_status(id);
            return;
        }
        // A command the driver served from its buffer had no status; a failed one's status
        // was read by its recovery.
        if !c.served_by_driver && c.errno == 0 {
            match self.endpoints {
                Endpoints::Bridged(Bridged::Bot(_)) => {
                    let status = Bot::check_status(c);
                    assert_eq!(
                        status,
                        storlab_wire::bot::CswStatus::Passed,
                        "command failed"
                    );
                }
                Endpoints::Bridged(Bridged::Uas(_)) => {
                    assert_eq!(Uas::check_status(c), None, "command failed");
                }
                Endpoints::Direct(_) => {}
            }
        }
        let errno = c.errno;
        if c.op == Op::Flush {
            self.flushes_outstanding -= 1;
        }
        if let Some(journal) = self.power_journal.as_mut() {
            journal.command_done(id);
        }
        let now = self.cx.now_ns;
        let part_count = usize::from(self.commands[id as usize].part_count);
        for i in 0..part_count {
            let slot = self.commands[id as usize].parts[i].slot as usize;
            if slot == self.driver_buffer.slot as usize {
                // Read-ahead, or writes the driver had already acknowledged.
                continue;
            }
            let s = &mut self.slots[slot];
            assert!(s.active && s.pieces_left > 0, "completion for an idle slot");
            s.pieces_left -= 1;
            if errno != 0 {
                s.errno = errno;
            }
            if s.pieces_left == 0 {
                s.active = false;
                self.completions.push_back(SimCompletion {
                    slot: slot as u32,
                    result: if s.errno == 0 {
                        Ok(s.len)
                    } else {
                        Err(s.errno)
                    },
                    done_ns: now,
                });
            }
        }
        self.free_commands.push(id);
        self.outstanding -= 1;
        if self.outstanding >= self.max_outstanding {
            // Only after a fall back to BOT with commands lost: they go one at a time.
            return self.send_serial_retry();
        }
        self.host_dispatch();
    }
}

/// Call `f(piece, slot, slot_piece)` for each whole `COMPRESSION_PIECE_BYTES` piece of a write's
/// payload (`piece`: its index in the payload) that lies inside one part at a piece boundary of
/// that part's slot (`slot_piece`: its index in the slot): the pieces whose estimate the slot
/// can keep.
pub(in crate::core) fn for_kept_pieces(
    parts: &[crate::command::Part],
    f: &mut dyn FnMut(usize, usize, usize),
) {
    let mut payload_offset = 0usize;
    for part in parts {
        let len = part.len as usize;
        let mut piece = payload_offset.div_ceil(COMPRESSION_PIECE_BYTES);
        while (piece + 1) * COMPRESSION_PIECE_BYTES <= payload_offset + len {
            let slot_offset =
                part.slot_offset as usize + piece * COMPRESSION_PIECE_BYTES - payload_offset;
            if slot_offset.is_multiple_of(COMPRESSION_PIECE_BYTES) {
                f(
                    piece,
                    part.slot as usize,
                    slot_offset / COMPRESSION_PIECE_BYTES,
                );
            }
            piece += 1;
        }
        payload_offset += len;
    }
}

/// Forgets the kept compression estimates of the pieces that bytes `offset..offset + len` of a
/// slot overlap (their bytes are being replaced); the other pieces' bytes, and so their
/// estimates, stay as they were.
pub(in crate::core) fn forget_compressed_pieces(pieces: &mut [u32], offset: usize, len: usize) {
    let first = offset / COMPRESSION_PIECE_BYTES;
    let end = (offset + len)
        .div_ceil(COMPRESSION_PIECE_BYTES)
        .min(pieces.len());
    if first < end {
        pieces[first..end].fill(UNKNOWN_COMPRESSED_BYTES);
    }
}
