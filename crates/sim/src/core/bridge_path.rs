//! The bridged path: what a USB-to-SATA bridge does with a command (parse it, queue it for a
//! drive slot, translate it, move its data through its buffer, build its status), for BOT and
//! UAS alike. Each step takes the `Bridged` endpoints the central dispatch handed it, so none
//! has an arm for the direct (AHCI) path.

use crate::bridge::Bridge;
use crate::command::UNMAP_LIST_BYTES;
use crate::core::Simulator;
use crate::drive::DriveCommand;
use crate::driver_bot::Bot;
use crate::endpoints::Bridged;
use crate::event::{CmdId, Event};
use crate::fault::CommandFault;
use crate::op::Op;
use crate::resource::Flow;
use crate::scsi::ScsiOp;

impl Simulator {
    pub(in crate::core) fn bridge(&self) -> &Bridge {
        self.bridge.as_ref().expect("USB stacks have a bridge")
    }

    /// Command bytes arrived at the bridge: parse them, pay the firmware cost.
    pub(in crate::core) fn bridge_on_command(&mut self, id: CmdId, usb: Bridged) {
        if matches!(
            self.commands[id as usize].fault,
            CommandFault::Drop
                | CommandFault::Hang
                | CommandFault::BridgeReset
                | CommandFault::Disconnect
                | CommandFault::Lost
        ) {
            if self.loses_device_with(id) {
                return;
            }
            // The firmware lost it: no status will come. The host's timer fires `timeout`
            // after the command went out, as the `Complete` of a command whose fault is a
            // drop (`on_failed_status`): no event kind of its own, so the event loop's
            // dispatch, the hot path, keeps its shape (a tenth kind made it a jump table
            // whose indirect mispredictions cost 8% of CPU time on 4 KiB reads, measured).
            // A timeout shorter than the command's trip to the bridge has already expired
            // when the loss happens: the timer fires now (found by tests/it/no_panic.rs
            // with `timeout=1ns,drop=0.3`).
            let c = &self.commands[id as usize];
            let timeout_ns = self.cx.faults.as_ref().expect("a plan").plan.timeout_ns;
            let fires_ns = (c.issued_ns + timeout_ns).max(self.cx.now_ns);
            self.cx.schedule(fires_ns, Event::Complete { cmd: id });
            return;
        }
        let c = &mut self.commands[id as usize];
        let decoded = usb.decode_command(c);
        assert_eq!(decoded.op(), c.op, "bridge decoded another operation");
        if c.fault.answered_by_bridge() {
            self.bridge_answers_itself(id, usb);
            return;
        }
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
                    UNMAP_LIST_BYTES,
                    "UNMAP parameter list length"
                );
            }
            ScsiOp::SynchronizeCache => c.device = DriveCommand::default(),
        }
        let now = self.cx.now_ns;
        let bridge = self.bridge.as_ref().expect("USB stacks have a bridge");
        let mut t = bridge.parse_command(&mut self.cx, decoded.op(), now);
        if let Some(buffered_ns) = self.bot_write_into_buffer(id, usb) {
            // The firmware issues the ATA command once the whole data phase is in its buffer.
            t = t.max(buffered_ns);
        }
        if decoded.op() == Op::Trim {
            // The firmware asks for the parameter list before it can translate.
            self.cx.schedule(t, Event::DataReady { cmd: id });
        } else if self.bridge().waiting.is_empty()
            && self.flushes_at_bridge == 0
            && self.drive_takes(decoded.op())
        {
            // Nothing queued ahead and a drive slot free: the command goes to the drive as
            // soon as the firmware is done (the slot is held from now, which no queued
            // command can notice).
            self.command_to_drive(id, t);
        } else {
            if decoded.op() == Op::Flush {
                self.flushes_at_bridge += 1;
            }
            self.cx.schedule(t, Event::BridgeReady { cmd: id });
        }
    }

    /// A BOT write that fits the bridge's buffer (`bot_write_buffer_bytes`): its data phase
    /// runs now, from the host into the buffer, as soon as the host has queued it. Returns when
    /// the data is in the buffer, or None when the command is not such a write.
    pub(in crate::core) fn bot_write_into_buffer(
        &mut self,
        id: CmdId,
        usb: Bridged,
    ) -> Option<u64> {
        let bot = match usb {
            Bridged::Bot(bot) => bot,
            Bridged::Uas(_) => return None,
        };
        let bridge = self.bridge.as_ref().expect("USB stacks have a bridge");
        let c = &mut self.commands[id as usize];
        if c.op != Op::Write || c.len_bytes > bridge.profile.bot_write_buffer_bytes {
            return None;
        }
        let len = u64::from(c.len_bytes);
        let cx = &mut self.cx;
        let start = Bot::data_out_start(c, cx.now_ns);
        let from_host = cx.host_data_out(Flow::ready_at(start), len);
        let on_bus = cx.usb_data_out(from_host, len);
        bot.data_done_at_host(cx, c, on_bus.end_ns);
        let in_buffer = bridge.data(cx, on_bus, len);
        Bot::set_buffered(c);
        Some(in_buffer.end_ns)
    }

    /// The translated command waits for a drive slot.
    pub(in crate::core) fn bridge_on_ready(&mut self, id: CmdId) {
        let bridge = self.bridge.as_mut().expect("USB stacks have a bridge");
        bridge.waiting.push_back(id);
        assert!(
            bridge.waiting.len() <= self.max_outstanding as usize,
            "bridge queue bound exceeded"
        );
        self.bridge_dispatch();
    }

    /// Whether the drive can take a command of `op` now: a free slot (NCQ tag, or the one),
    /// and no flush in the way (a flush is not queued: it goes alone, once the drive holds
    /// nothing, and nothing follows it until it completes). The bridge's queue keeps the
    /// order: what it received after a flush waits behind it there.
    #[inline]
    pub(in crate::core) fn drive_takes(&self, op: Op) -> bool {
        if op == Op::Flush || self.flush_at_drive {
            return self.drive_takes_beside_flush(op);
        }
        self.at_drive < self.link.slots()
    }

    /// [`Simulator::drive_takes`] when a flush is involved.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn drive_takes_beside_flush(&self, op: Op) -> bool {
        if op == Op::Flush {
            !self.flush_at_drive && self.at_drive == 0
        } else {
            !self.flush_at_drive && self.at_drive < self.link.slots()
        }
    }

    /// Pass waiting commands to the drive while it has free slots (NCQ tags, or one).
    pub(in crate::core) fn bridge_dispatch(&mut self) {
        if self.flush_at_drive || self.flushes_at_bridge > 0 {
            return self.bridge_dispatch_beside_flush();
        }
        let now = self.cx.now_ns;
        while self.at_drive < self.link.slots() {
            let bridge = self.bridge.as_mut().expect("USB stacks have a bridge");
            let Some(id) = bridge.waiting.pop_front() else {
                break;
            };
            self.command_to_drive(id, now);
        }
    }

    /// [`Simulator::bridge_dispatch`] with a flush waiting or at the drive: oldest first, each
    /// only when the drive can take it, so nothing passes a flush.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn bridge_dispatch_beside_flush(&mut self) {
        let now = self.cx.now_ns;
        loop {
            let bridge = self.bridge.as_ref().expect("USB stacks have a bridge");
            let Some(&id) = bridge.waiting.front() else {
                break;
            };
            if !self.drive_takes(self.commands[id as usize].op) {
                break;
            }
            self.bridge
                .as_mut()
                .expect("USB stacks have a bridge")
                .waiting
                .pop_front();
            self.command_to_drive(id, now);
        }
    }

    /// The bridge sends a read/write to the drive from `from_ns`, holding one of its slots.
    pub(in crate::core) fn command_to_drive(&mut self, id: CmdId, from_ns: u64) {
        self.at_drive += 1;
        let c = &mut self.commands[id as usize];
        c.holds_drive_slot = true;
        if c.op == Op::Flush {
            return self.flush_to_drive(id, from_ns);
        }
        let at = self.link.send_rw_command(&mut self.cx, id, c, from_ns);
        self.cx.schedule(at, Event::DriveCommand { cmd: id });
    }

    /// The bridge translates SYNCHRONIZE CACHE to FLUSH CACHE EXT (SAT-3) and sends it. Out of
    /// line, as every flush-only step, so the phases of a read or write stay as small as they
    /// were (ADR 0019, "What it cost").
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn flush_to_drive(&mut self, id: CmdId, from_ns: u64) {
        self.flush_at_drive = true;
        self.flushes_at_bridge = self.flushes_at_bridge.saturating_sub(1);
        let at = self.link.send_flush_command(&mut self.cx, from_ns);
        self.cx.schedule(at, Event::DriveCommand { cmd: id });
    }

    /// The data phase through a USB bridge: drive link, bridge, bus, controller, PCIe, with
    /// the transport's gates (BOT: the host's queued transfer; High-Speed UAS: Ready IUs).
    /// Returns when it ended at its far end.
    pub(in crate::core) fn bridged_data(&mut self, id: CmdId, usb: Bridged) -> u64 {
        let now = self.cx.now_ns;
        let c = &self.commands[id as usize];
        let buffered = usb.write_buffered(c);
        let (op, len) = (c.op, u64::from(c.len_bytes));
        let bridge = self.bridge.as_ref().expect("USB stacks have a bridge");
        let cx = &mut self.cx;
        let mut ready_iu = None;
        let done = match op {
            Op::Read => {
                let at_bridge = self.link.data_in(cx, c.media, len);
                let through = bridge.data(cx, at_bridge, len);
                let queued = match usb {
                    Bridged::Bot(_) => Bot::data_in_gate(c, through),
                    Bridged::Uas(uas) => {
                        let (flow, iu) = uas.data_in_gate(cx, c, through);
                        ready_iu = iu;
                        flow
                    }
                };
                let on_bus = cx.usb_data_in(queued, len);
                let at_host = cx.host_data_in(on_bus, len);
                usb.data_done_at_host(cx, &mut self.commands[id as usize], at_host.end_ns);
                at_host.end_ns
            }
            Op::Flush => unreachable!("a flush has no data phase"),
            Op::Write if buffered => {
                // BOT: the data is in the bridge's buffer (`bridge_on_command`).
                let at_drive = self.link.data_out(cx, Flow::ready_at(now), len);
                return self.drive_write(id, at_drive);
            }
            Op::Write | Op::Trim => {
                // Write data, or the UNMAP parameter list, host to bridge.
                let bytes = if op == Op::Trim {
                    UNMAP_LIST_BYTES as u64
                } else {
                    len
                };
                let start = match usb {
                    Bridged::Bot(_) => Bot::data_out_start(c, now),
                    Bridged::Uas(uas) => {
                        let (start, iu) = uas.data_out_start(cx, c, now);
                        ready_iu = iu;
                        start
                    }
                };
                if let Some(iu) = ready_iu.take() {
                    self.trace_ready(id, &iu);
                }
                let cx = &mut self.cx;
                let from_host = cx.host_data_out(Flow::ready_at(start), bytes);
                let on_bus = cx.usb_data_out(from_host, bytes);
                usb.data_done_at_host(cx, &mut self.commands[id as usize], on_bus.end_ns);
                if op == Op::Trim {
                    return on_bus.end_ns;
                }
                let bridge = self.bridge.as_ref().expect("USB stacks have a bridge");
                let through = bridge.data(cx, on_bus, len);
                let at_drive = self.link.data_out(cx, through, len);
                return self.drive_write(id, at_drive);
            }
        };
        if let Some(iu) = ready_iu {
            self.trace_ready(id, &iu);
        }
        done
    }

    /// The UNMAP parameter list arrived at the bridge: translate to TRIM (or drop it, as
    /// firmware without translation does). Returns when status can be sent.
    pub(in crate::core) fn bridge_unmap(&mut self, id: CmdId) -> u64 {
        let now = self.cx.now_ns;
        if !self.bridge().profile.unmap_to_trim {
            self.counters.trims_not_translated += 1;
            return now;
        }
        let c = &mut self.commands[id as usize];
        let (lba, blocks) = Bridge::unmap_range(c);
        let payload = self.link.encode_trim(c, lba, blocks);
        let t = self.link.send_trim_command(&mut self.cx, c, now);
        let at_drive = self
            .link
            .data_out(&mut self.cx, Flow::ready_at(t), payload)
            .end_ns;
        self.execute_trim(id, at_drive)
    }

    /// The drive's status to the bridge, which parses and checks it; firmware builds the CSW /
    /// Sense IU, it goes to the host.
    pub(in crate::core) fn bridge_send_status(&mut self, id: CmdId, from_ns: u64, usb: Bridged) {
        let failed = self.commands[id as usize].fault == CommandFault::Medium;
        let device = &self.commands[id as usize].device;
        let (t, _) = self
            .link
            .send_status(&mut self.cx, id, from_ns, failed, device);
        let bridge = self.bridge.as_ref().expect("USB stacks have a bridge");
        let mut t = bridge.build_status(&mut self.cx, t);
        if failed && usb.stalls_failed_data_phase() {
            // Only a read fails at the drive (a medium error).
            t = self.bot_stall_data(id, Op::Read, t);
        }
        self.usb_status_to_host(id, t, usb);
    }

    /// The bridge answers command `id` itself: CHECK CONDITION with NOT READY while its drive
    /// spins up, or with the pending UNIT ATTENTION. It parses the command and builds the
    /// status; a data phase the host set up is refused with a STALL (BOT) or never asked for
    /// (UAS: no Ready IU comes, the Sense IU ends the command).
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn bridge_answers_itself(&mut self, id: CmdId, usb: Bridged) {
        let now = self.cx.now_ns;
        let op = self.commands[id as usize].op;
        let bridge = self.bridge.as_ref().expect("USB stacks have a bridge");
        let parsed = bridge.parse_command(&mut self.cx, op, now);
        let mut t = bridge.build_status(&mut self.cx, parsed);
        let has_data = self.commands[id as usize].len_bytes > 0 && op != Op::Flush;
        if has_data && usb.stalls_failed_data_phase() {
            t = self.bot_stall_data(id, op, t);
        }
        self.usb_status_to_host(id, t, usb);
    }

    /// The bridge's status for `id` (CSW or Sense IU), built by `t`, crosses USB to the host.
    #[inline]
    fn usb_status_to_host(&mut self, id: CmdId, t: u64, usb: Bridged) {
        let c = &mut self.commands[id as usize];
        // BOT: the CSW goes once the host has asked for it (its transfer is queued).
        let (t, len) = usb.encode_status(c, t);
        let at = self.cx.usb_message_in(t, len);
        self.status_at_host(id, at);
    }
}
