//! Faults drawn as a command leaves the host, and the device-wide ones: a hang, a bridge
//! reset, a disconnect or a power loss takes every command the device holds, which the
//! recovery of the command the fault hit later takes along.

use crate::core::{trace_hooks::TraceHook, Simulator};
use crate::cx::UsbTiming;
use crate::drive::DriveCommand;
use crate::endpoints::Endpoints;
use crate::event::{CmdId, Event};
use crate::fault::{CommandFault, FaultKind, PowerLossRecord};
use crate::op::Op;
use crate::request::ERRNO_EIO;
use crate::trace::data_urb;
use crate::trace::{Urb, URB_UNLINKED};
use crate::transport::Transport;
use crate::usb_reset::{link_loss_seen, LinkLossSeen, PortReset};

/// usbmon's status of a URB ended because its device went away (`usb_hcd_flush_endpoint` at
/// disconnect: -ESHUTDOWN).
const URB_SHUT_DOWN: i32 = -108;

impl Simulator {
    /// The host sends command `id`: ask the plan which fault hits this attempt.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn draw_command_fault(&mut self, id: CmdId) {
        if self.endpoints.port_recovering_at(self.cx.now_ns) {
            // Not sent yet: it waits for libata's error handler (`faulted_ahci_issue`).
            return;
        }
        let transport = self.endpoints.kind();
        let f = self.cx.faults.as_mut().expect("checked by the caller");
        if f.removed_at_ns.is_some() {
            // The hub removed the device: the command is never sent (and no fault drawn).
            self.commands[id as usize].fault = CommandFault::Removed;
            return;
        }
        let (fault, attempt) = f.on_command_sent(
            self.cx.now_ns,
            transport == Transport::Bot,
            transport.is_usb(),
        );
        if f.device_lost_with.is_some() {
            // The bridge is hung, restarting or off the bus: this command is lost as those in
            // flight were, and goes again after their recovery (a fault drawn for it is
            // resolved with it).
            f.record_lost(f.device_loss_kind, attempt, self.cx.now_ns);
            let c = &mut self.commands[id as usize];
            c.fault = CommandFault::Lost;
            c.attempt = attempt;
            return;
        }
        let alone = self.outstanding == 1;
        // A drawn hang, bridge reset or disconnect only for a USB command alone in flight; a
        // placed one whatever is in flight (`FaultInjector::hangs`, `loses_device`).
        let hang = fault == CommandFault::None
            && transport.is_usb()
            && f.hangs(alone, attempt, self.cx.now_ns);
        let now = self.cx.now_ns;
        let mut fault = if hang {
            CommandFault::Hang
        } else if fault == CommandFault::None && transport.is_usb() {
            f.loses_device(alone, attempt, now)
        } else {
            fault
        };
        if matches!(
            fault,
            CommandFault::Hang | CommandFault::BridgeReset | CommandFault::Disconnect
        ) {
            self.lose_device_commands(id, fault);
        }
        let f = self.cx.faults.as_mut().expect("a plan");
        if fault == CommandFault::None && f.power_fails(attempt, now) {
            self.power_loss(now);
        }
        let drive_ready_ns = self.cx.faults.as_ref().map_or(0, |f| f.drive_ready_ns);
        let unit_attention = self
            .bridge
            .as_ref()
            .is_some_and(|b| b.pending_unit_attention);
        if fault == CommandFault::None && now < drive_ready_ns {
            // Judged as the command leaves the host: the bridge sees the drive's state a
            // bus trip later, microseconds against a spin-up of seconds.
            fault = CommandFault::NotReady;
        } else if fault == CommandFault::None && unit_attention {
            // Only a bridge reports one: an ATA device on AHCI just answers once ready.
            self.bridge
                .as_mut()
                .expect("a bridge")
                .pending_unit_attention = false;
            fault = CommandFault::UnitAttention;
        }
        let counts = &mut self.cx.faults.as_mut().expect("a plan").counts;
        match fault {
            CommandFault::NotReady => counts.not_ready += 1,
            CommandFault::UnitAttention => counts.unit_attentions += 1,
            _ => {}
        }
        let c = &mut self.commands[id as usize];
        c.fault = fault;
        c.attempt = attempt;
    }

    /// The drive read `device` for `id`: does the plan make it fail? An attempt the plan
    /// already gave a phase error keeps that one fault (its retry reads the sector again).
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn draw_media_error(&mut self, id: CmdId, device: &DriveCommand) {
        let now = self.cx.now_ns;
        let f = self.cx.faults.as_mut().expect("checked by the caller");
        let c = &mut self.commands[id as usize];
        if c.fault == CommandFault::None && f.media_read(device.lba, device.blocks, c.attempt, now)
        {
            c.fault = CommandFault::Medium;
        }
    }

    /// Drop journal entries the drive has written to its media (their writes can no longer
    /// be lost).
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn prune_power_journal(&mut self) {
        let now = self.cx.now_ns;
        let journal = self.power_journal.as_mut().expect("checked by the caller");
        journal.prune(&mut self.store, self.drive.oldest_volatile_write(now));
    }

    /// The drive's supply fails at `now_ns` and comes back: the drive loses what its volatile
    /// cache held (the store puts back what the media has), spins up, and will report a unit
    /// attention condition once it is ready.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn power_loss(&mut self, now_ns: u64) {
        let lost = self.drive.power_loss(now_ns);
        let ready_ns = now_ns + self.drive.power_on_ready_ns();
        if let Some(bridge) = self.bridge.as_mut() {
            bridge.pending_unit_attention = true;
        }
        let mut restored = Vec::new();
        if let Some(journal) = self.power_journal.as_mut() {
            restored = journal.undo_lost(&mut self.store, &lost);
        }
        let f = self.cx.faults.as_mut().expect("a plan");
        let mut writes: Vec<u64> = lost.iter().map(|l| l.ordinal).collect();
        writes.sort_unstable();
        writes.dedup();
        f.counts.power_losses += 1;
        f.counts.lost_writes += writes.len() as u64;
        f.counts.lost_bytes += restored.iter().map(|(s, e)| e - s).sum::<u64>();
        f.drive_ready_ns = ready_ns;
        f.power_losses.push(PowerLossRecord {
            at_ns: now_ns,
            ready_ns,
            restored,
        });
        self.fail_commands_of_unpowered_drive(ready_ns);
    }

    /// The commands at the device when its drive lost power: the drive will never finish
    /// them. AHCI: the link went down with the drive; libata's error handler, woken by the
    /// PHY event, aborts every queued command (`ata_eh_qc_retry` after the link is back, not
    /// counted against their retries), which goes again when the drive is ready. USB: the
    /// bridge's link to the drive went down, and it answers each command it held as it
    /// answers those that arrive while the drive spins up, CHECK CONDITION with NOT READY
    /// (02/04/01), which the host retries after its delay (`retry_after_sense`); a command
    /// still on its way to the bridge gets that answer when it arrives.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn fail_commands_of_unpowered_drive(&mut self, ready_ns: u64) {
        let usb = match self.endpoints {
            Endpoints::Bridged(usb) => usb,
            Endpoints::Direct(ahci) => {
                let aborted = self.abort_at_drive();
                self.flush_at_drive = false;
                return self.requeue_aborted(ahci, &aborted, ready_ns);
            }
        };
        let arriving = self
            .cx
            .events
            .commands_with(|e| matches!(e, Event::CommandAtDevice { .. }));
        let in_data_phase = self.data_urbs_queued_on_ready();
        let held = self.abort_device_commands(&arriving);
        if let Some(p) = self.pcap.as_mut() {
            // The error status makes the driver unlink a data transfer it had queued
            // (`uas_stat_cmplt`); with streams `on_failed_status` does it for every command.
            let now = self.cx.now_ns;
            for &(id, booked_ns) in &in_data_phase {
                let op = self.commands[id as usize].op;
                p.end_urb(now.max(booked_ns), id, data_urb(op), URB_UNLINKED);
            }
        }
        let f = self.cx.faults.as_mut().expect("a plan");
        for &id in arriving.iter().chain(&held) {
            f.counts.not_ready += 1;
            self.commands[id as usize].fault = CommandFault::NotReady;
        }
        for id in held {
            self.bridge_answers_itself(id, usb);
        }
    }

    /// A device-wide fault: every command the bridge or the drive holds (translated, queued,
    /// at the drive, in its data phase) leaves them, all but `keep`: their pending steps go,
    /// their places in the bridge's queue and the drive's, their NCQ tags and slots come
    /// back, as `abort_at_drive` does for the drive. A command whose status is on its way to
    /// the host is done at the device and stays. Returns the commands taken out.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn abort_device_commands(&mut self, keep: &[CmdId]) -> Vec<CmdId> {
        let mut held = self.cx.events.commands_with(|e| {
            matches!(
                e,
                Event::CommandAtDevice { .. }
                    | Event::BridgeReady { .. }
                    | Event::DriveCommand { .. }
                    | Event::DataReady { .. }
                    | Event::DataDone { .. }
            )
        });
        if let Some(bridge) = self.bridge.as_ref() {
            held.extend(bridge.waiting.iter().copied());
        }
        held.extend(self.drive_reads.iter().copied());
        held.extend(
            (0..self.commands.len() as CmdId)
                .filter(|&a| self.commands[a as usize].holds_drive_slot),
        );
        held.retain(|id| !keep.contains(id));
        held.sort_unstable();
        held.dedup();
        let arriving = self
            .cx
            .events
            .commands_with(|e| matches!(e, Event::CommandAtDevice { .. }));
        for &id in &held {
            let c = &self.commands[id as usize];
            // A flush the bridge parsed and had not sent to the drive was counted there.
            if c.op == Op::Flush && !c.holds_drive_slot && !arriving.contains(&id) {
                self.flushes_at_bridge = self.flushes_at_bridge.saturating_sub(1);
            }
            if c.op == Op::Flush && c.holds_drive_slot {
                self.flush_at_drive = false;
            }
        }
        if let Some(bridge) = self.bridge.as_mut() {
            bridge.waiting.retain(|id| !held.contains(id));
        }
        self.cx.events.remove_commands(|cmd| held.contains(&cmd));
        self.abort_at_drive();
        held
    }

    /// A hang, bridge reset or disconnect hit `trigger`: every command the bridge or the drive
    /// holds is lost with it (`abort_device_commands`), and so is every command sent until
    /// the host has recovered. None gets a status; each one's block-layer timer runs.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn lose_device_commands(&mut self, trigger: CmdId, fault: CommandFault) {
        // A Command IU on its way completes its URB at the device's endpoint all the same
        // (in the capture now, as its delivery is no longer an event).
        let arriving = self
            .cx
            .events
            .commands_with(|e| matches!(e, Event::CommandAtDevice { .. }));
        for &a in &arriving {
            self.trace(a, TraceHook::CommandDelivered);
        }
        let in_data_phase = self.data_urbs_queued_on_ready();
        let lost = self.abort_device_commands(&[trigger]);
        let kind = match fault {
            CommandFault::Hang => FaultKind::Hang,
            CommandFault::BridgeReset => FaultKind::BridgeReset,
            _ => FaultKind::Disconnect,
        };
        let now = self.cx.now_ns;
        let f = self.cx.faults.as_mut().expect("a plan");
        f.device_loss_kind = kind;
        for &a in &lost {
            let c = &mut self.commands[a as usize];
            c.fault = CommandFault::Lost;
            f.record_lost(kind, c.attempt, now);
        }
        f.device_lost_with = Some(trigger);
        f.lost_with_device.extend(lost);
        f.lost_in_data_phase = in_data_phase;
    }

    /// High-Speed UAS: the commands whose data transfer the host queued when the device's
    /// Ready IU came (their data phase is under way); empty with streams, whose data
    /// transfers are queued at issue and ended with the command's status transfer.
    pub(in crate::core) fn data_urbs_queued_on_ready(&self) -> Vec<(CmdId, u64)> {
        match self.endpoints.kind() {
            Transport::Uas { streams: false } => self
                .cx
                .events
                .command_events_with(|e| matches!(e, Event::DataDone { .. })),
            _ => Vec::new(),
        }
    }

    /// The bridge lost command `id` at the bridge (drop, hang, bridge reset, disconnect): for
    /// a disconnect, what the hub sees of it; for a bridge reset, the firmware's restart.
    /// Returns true when the command's end is already scheduled (the device is removed).
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn loses_device_with(&mut self, id: CmdId) -> bool {
        let now = self.cx.now_ns;
        match self.commands[id as usize].fault {
            CommandFault::Lost => {
                // Sent to a bridge that is hung, restarting or gone: no status, no timer of
                // its own; the recovery of the command the fault hit takes it along.
                let f = self.cx.faults.as_mut().expect("a plan");
                if f.device_lost_with.is_some() {
                    f.lost_with_device.push(id);
                    return true;
                }
                // It arrived after that: the hub had removed the device already (it ends as
                // the others did), or the recovery was done (its own timer recovers it).
                if f.removed_at_ns.is_some() {
                    self.commands[id as usize].fault = CommandFault::None;
                    self.on_removed_in_flight(id);
                    return true;
                }
                self.commands[id as usize].fault = CommandFault::Drop;
                false
            }
            CommandFault::BridgeReset => {
                self.bridge_firmware_reset(now);
                false
            }
            CommandFault::Disconnect => {
                let super_speed = matches!(self.cx.usb, Some(UsbTiming::Super(_)));
                let f = self.cx.faults.as_mut().expect("a plan");
                f.counts.disconnects += 1;
                let dropout_ns = f.plan.disconnect_for_ns.unwrap_or(u64::MAX);
                match link_loss_seen(dropout_ns, super_speed) {
                    LinkLossSeen::WarmReset { reset_at_ns } => {
                        // hub_wq resets the device and keeps it; the command it held stays
                        // lost until the host's timer, whose recovery is a drop's.
                        let uas = self.endpoints.is_uas();
                        self.usb_reset_device(now + reset_at_ns, PortReset::Warm, uas);
                        self.commands[id as usize].fault = CommandFault::Drop;
                        false
                    }
                    LinkLossSeen::Removed { removed_at_ns } => {
                        let at = now + removed_at_ns;
                        f.counts.devices_removed += 1;
                        f.removed_at_ns = Some(at);
                        self.cx.schedule(at, Event::Complete { cmd: id });
                        true
                    }
                }
            }
            _ => false,
        }
    }

    /// The bridge's firmware restarted at `at_ns` (its watchdog): what it held is gone. A SAT
    /// bridge reports UNIT ATTENTION, POWER ON, RESET, OR BUS DEVICE RESET OCCURRED (sense
    /// 06h/29h/00h, SPC-4 §5.14) on the next command it gets, as after a power loss
    /// (`Bridge::pending_unit_attention`, answered in `draw_command_fault`).
    pub(in crate::core) fn bridge_firmware_reset(&mut self, _at_ns: u64) {
        if let Some(bridge) = self.bridge.as_mut() {
            bridge.pending_unit_attention = true;
        }
        self.cx
            .faults
            .as_mut()
            .expect("a plan")
            .counts
            .bridge_resets += 1;
    }

    /// The hub removed the device with command `id` in flight: the driver's disconnect ends
    /// its URBs (-ESHUTDOWN) and fails it (`DID_NO_CONNECT`, which the block layer returns as
    /// EIO).
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn on_removed_in_flight(&mut self, id: CmdId) {
        let now = self.cx.now_ns;
        self.end_urbs_of_removed(id, now);
        let at = self.cx.completion_cpu(now);
        self.fail_command(id, at, ERRNO_EIO);
        // Those lost with the device end as it does (`uas_disconnect`: `uas_zap_pending` with
        // DID_NO_CONNECT).
        let lost = self.lost_with(id);
        let f = self.cx.faults.as_mut().expect("a plan");
        f.device_lost_with = None;
        f.lost_with_device.clear();
        for a in lost {
            self.end_urbs_of_removed(a, now);
            self.commands[a as usize].fault = CommandFault::None;
            self.fail_command(a, at, ERRNO_EIO);
        }
        self.cx
            .faults
            .as_mut()
            .expect("a plan")
            .lost_in_data_phase
            .clear();
    }

    /// The driver's disconnect ends the URBs of command `id` (-ESHUTDOWN) at `now`.
    pub(in crate::core) fn end_urbs_of_removed(&mut self, id: CmdId, now: u64) {
        let data_phase = self.data_phase_booked_until(id);
        let queued_on_ready = data_phase.is_some();
        // Not before the transfers a Ready IU queued began.
        let now = now.max(data_phase.unwrap_or(0));
        if let Some(p) = self.pcap.as_mut() {
            let c = &self.commands[id as usize];
            match self.endpoints.kind() {
                Transport::Bot => p.end_urb(now, id, data_urb(c.op), URB_SHUT_DOWN),
                Transport::Uas { streams } => {
                    if streams || queued_on_ready {
                        p.end_urb(now, id, data_urb(c.op), URB_SHUT_DOWN);
                    }
                    p.end_urb(now, id, Urb::Status, URB_SHUT_DOWN);
                }
                Transport::SataNcq | Transport::SataIde => {}
            }
        }
    }

    /// A command for a removed device: the SCSI layer fails it without sending it (the
    /// device is being deleted, `scsi_device_state_check`: EIO), once the removal is done.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn fail_on_removed_device(&mut self, id: CmdId) {
        let f = self.cx.faults.as_ref().expect("a plan");
        let removed_ns = f.removed_at_ns.expect("the device was removed");
        let c = &mut self.commands[id as usize];
        c.fault = CommandFault::None;
        // No attempt was sent: no fault record is this command's (attempts count from 1).
        c.attempt = 0;
        let at = self.cx.completion_cpu(self.cx.now_ns.max(removed_ns));
        self.fail_command(id, at, ERRNO_EIO);
    }
}
