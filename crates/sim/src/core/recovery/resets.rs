//! The resets each transport's error handling escalates to: BOT reset recovery, UAS task
//! management and the fall back to BOT, the USB device reset, and libata's hardreset with
//! the requeue of what the drive aborted.

use crate::core::Simulator;
use crate::cx::UsbTiming;
use crate::device_link::DeviceLink;
use crate::driver_bot::Bot;
use crate::driver_sata::Ahci;
use crate::driver_uas::{EscalationEnd, Uas};
use crate::endpoints::{Bridged, Endpoints};
use crate::event::CmdId;
use crate::fault::{CommandFault, FaultOutcome};
use crate::link_sata::NcqTags;
use crate::op::Op;
use crate::trace::data_urb;
use crate::trace::{Urb, URB_KILLED, URB_STALLED};
use crate::usb_reset::{DeviceReset, PortReset};
use storlab_wire::bot::CSW_LEN;

/// usb-storage gives a class request 5 s (`usb_stor_reset_common`:
/// `usb_stor_control_msg(..., 5 * HZ)`, drivers/usb/storage/transport.c).
const LINUX_USB_STOR_RESET_TIMEOUT_NS: u64 = 5_000_000_000;

impl Simulator {
    /// BOT: the data phase the host set up for a failed command (`op`'s direction) ends in a
    /// STALL the host clears before reading the CSW; returns when the CSW transfer is queued.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn bot_stall_data(&mut self, id: CmdId, op: Op, at_ns: u64) -> u64 {
        let stalled = if op == Op::Read {
            Bot::stall_data_in(&mut self.cx, at_ns)
        } else {
            Bot::stall_data_out(&mut self.cx, at_ns)
        };
        let queued = stalled.clear.driver_ns;
        if let Some(p) = self.pcap.as_mut() {
            p.end_urb(stalled.stalled_ns, id, data_urb(op), URB_STALLED);
            let clear = stalled.clear;
            p.control_transfer(clear.setup, clear.submit_ns, clear.done_ns);
            p.submit(queued, id, Urb::Status, CSW_LEN as u32, &[]);
        }
        queued
    }

    /// BOT Reset Recovery with the plan's post-reset delay; returns when it is done.
    pub(in crate::core) fn bot_reset_recovery(&mut self, at_ns: u64) -> u64 {
        let f = self.cx.faults.as_mut().expect("a plan");
        f.counts.bot_resets += 1;
        let delay_ns = f.plan.reset_delay_ns;
        let transfers = Bot::reset_recovery(&mut self.cx, at_ns, delay_ns);
        if let Some(p) = self.pcap.as_mut() {
            for t in &transfers {
                p.control_transfer(t.setup, t.submit_ns, t.done_ns);
            }
        }
        transfers[transfers.len() - 1].driver_ns
    }

    /// BOT, hung bridge: the Bulk-Only Mass Storage Reset goes unanswered; usb-storage gives up
    /// on it after its control timeout (`usb_stor_reset_common`, 5 s, the URB killed) and the
    /// SCSI error handler's next step resets the port (`usb_stor_port_reset`:
    /// `usb_reset_device`), with which the bridge's firmware restarts. Returns when the
    /// device is usable again.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn bot_reset_unanswered(&mut self, at_ns: u64) -> u64 {
        let f = self.cx.faults.as_mut().expect("a plan");
        f.counts.bot_resets += 1;
        let reset = Bot::reset_unanswered(&mut self.cx, at_ns, LINUX_USB_STOR_RESET_TIMEOUT_NS);
        if let Some(p) = self.pcap.as_mut() {
            p.control_unanswered(reset.setup, reset.submit_ns, reset.gave_up_ns, URB_KILLED);
        }
        self.usb_reset_device(reset.gave_up_ns, PortReset::Reset, false)
    }

    /// AHCI with NCQ: a queued command's status reported an error. The drive aborted every
    /// other command it holds (SATA 3.x NCQ error handling) and took nothing until the host
    /// read the NCQ Command Error log, which `send_status` did, ending at `log_read_ns`: the
    /// aborted commands are sent again from then (libata's `ata_eh_qc_retry`). The failed one
    /// completes with its error as before.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn ncq_error_aborts(&mut self, ahci: Ahci, log_read_ns: u64) {
        let aborted = self.abort_at_drive();
        self.requeue_aborted(ahci, &aborted, log_read_ns);
    }

    /// AHCI: the timer of command `id`, which the drive lost, fired at `at_ns`. libata's EH
    /// freezes the port and hardresets it (`sata_recovery::hardreset`: COMRESET, signature,
    /// revalidation); the reset aborts every command at the drive, the lost one included. The
    /// others go again once the port is revalidated; returns then, for the lost one's retry.
    /// Linux's SCSI error handler first waits for the other outstanding commands to finish
    /// (`scsi_eh_wakeup` runs it once every busy command failed or completed); here they are
    /// aborted at the timer instead, which costs their remaining service time again.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn sata_hardreset(&mut self, id: CmdId, ahci: Ahci, at_ns: u64) -> u64 {
        let aborted = self.abort_at_drive();
        let identify = crate::sata_recovery::drive_identify(
            self.drive.capacity_bytes(),
            self.drive.logical_block_bytes(),
            self.drive.queue_depth(),
            self.drive.reads_zeroes_after_trim(),
        );
        let DeviceLink::Sata(port) = &self.link;
        let reset = crate::sata_recovery::hardreset(&mut self.cx, &port.link, &identify, at_ns);
        let done = reset.revalidated_ns;
        self.cx.faults.as_mut().expect("a plan").counts.comresets += 1;
        let others: Vec<CmdId> = aborted.into_iter().filter(|&a| a != id).collect();
        self.requeue_aborted(ahci, &others, done);
        done
    }

    /// The drive aborts every command it holds: their pending events go, their queued reads
    /// leave its queue, their NCQ tags and slots come back. What a drive had already done
    /// for them stays done (its media time, a written cache entry), as on a real drive, and
    /// the link time booked for a data phase under way stays booked. Returns them.
    pub(in crate::core) fn abort_at_drive(&mut self) -> Vec<CmdId> {
        let aborted: Vec<CmdId> = (0..self.commands.len() as CmdId)
            .filter(|&a| self.commands[a as usize].holds_drive_slot)
            .collect();
        self.cx.events.remove_commands(|cmd| aborted.contains(&cmd));
        let DeviceLink::Sata(port) = &mut self.link;
        for &a in &aborted {
            port.ncq_tags.release(a);
            self.commands[a as usize].holds_drive_slot = false;
            self.at_drive -= 1;
            if let Some(i) = self.drive_reads.iter().position(|&r| r == a) {
                self.drive_reads.remove(i);
                self.drive_read_commands.remove(i);
            }
        }
        aborted
    }

    /// Commands the drive aborted go again at `at_ns` (the driver's submit work first), until
    /// then the port takes nothing new. An aborted attempt's own fault (a media error drawn at
    /// its read, a drop) never reached the host: it is recorded as retried. The retry does not
    /// count against the command's retries (`ata_eh_qc_retry`). `ahci` is the running
    /// endpoint, which holds the port until then.
    pub(in crate::core) fn requeue_aborted(&mut self, ahci: Ahci, aborted: &[CmdId], at_ns: u64) {
        self.endpoints = Endpoints::Direct(ahci.recovering_until(at_ns));
        for &a in aborted {
            let f = self.cx.faults.as_mut().expect("a plan");
            f.counts.sata_aborted += 1;
            let c = &mut self.commands[a as usize];
            if std::mem::take(&mut c.fault) != CommandFault::None {
                f.resolve(c.attempt, FaultOutcome::Retried { at_ns });
            }
            self.reissue(a, at_ns);
        }
    }

    /// UAS: the timer of command `id`, which the bridge lost, fired at `at_ns`: the SCSI error
    /// handler aborts each timed-out command in turn (`Uas::abort_tasks`: the lost one, then
    /// those lost with the device), which the bridge answers; the core counts and records each
    /// exchange and ends the aborted command's transfers. Returns when the last was checked.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn uas_abort(
        &mut self,
        id: CmdId,
        uas: Uas,
        at_ns: u64,
        firmware_ns: u64,
    ) -> u64 {
        let aborted: Vec<CmdId> = std::iter::once(id).chain(self.lost_with(id)).collect();
        let tags = self.uas_tags(&aborted);
        let exchanges = uas.abort_tasks(&mut self.cx, &tags, at_ns, firmware_ns);
        let counts = &mut self.cx.faults.as_mut().expect("a plan").counts;
        counts.uas_aborts += exchanges.len() as u64;
        let mut t = at_ns;
        for (&a, tm) in aborted.iter().zip(&exchanges) {
            self.trace_task_management(tm);
            let queued = uas.streams || self.data_urb_queued(a);
            self.trace_aborted_urbs(a, tm.driver_ns, queued);
            t = tm.driver_ns;
        }
        t
    }

    /// The UAS tags of commands `ids` (each its index + 1, 16-bit).
    fn uas_tags(&self, ids: &[CmdId]) -> Vec<u16> {
        ids.iter()
            .map(|&a| u16::try_from(self.commands[a as usize].tag).expect("UAS tags are 16-bit"))
            .collect()
    }

    /// UAS: the bridge hung with command `id`, whose timer fired at `at_ns`. The host escalates
    /// as the SCSI error handler does (abort, then device reset, then bus reset), each step a
    /// task management function it waits `tm_timeout` for: ABORT TASK, LOGICAL UNIT RESET,
    /// I_T NEXUS RESET, then the USB device reset. The bridge answers the plan's
    /// `hang_recovery` step (FUNCTION COMPLETE, or its firmware restarting with the device
    /// reset: the command is sent again); when none does, the device reset's re-enumeration
    /// leaves it as BOT. `Uas::escalate` computes the task management; the core counts and
    /// records it and applies what follows. Returns when the command can be sent again.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn uas_escalate(
        &mut self,
        id: CmdId,
        uas: Uas,
        at_ns: u64,
        firmware_ns: u64,
    ) -> u64 {
        let f = self.cx.faults.as_ref().expect("a plan");
        let (timeout_ns, recovery) = (f.plan.tm_timeout_ns, f.plan.hang_recovery);
        let aborted: Vec<CmdId> = std::iter::once(id).chain(self.lost_with(id)).collect();
        let tags = self.uas_tags(&aborted);
        let escalation = uas.escalate(
            &mut self.cx,
            &tags,
            at_ns,
            timeout_ns,
            firmware_ns,
            recovery,
        );
        let counts = &mut self.cx.faults.as_mut().expect("a plan").counts;
        counts.uas_aborts += escalation.aborts;
        counts.uas_lu_resets += escalation.lu_resets;
        counts.uas_it_nexus_resets += escalation.it_nexus_resets;
        for tm in &escalation.exchanges {
            self.trace_task_management(tm);
        }
        // The lost commands' transfers end: a reset aborted their tasks, or the host gave up.
        let t = escalation.ended_ns;
        for &a in &aborted {
            self.trace_aborted_urbs(a, t, uas.streams || self.data_urb_queued(a));
        }
        match escalation.next {
            EscalationEnd::Answered => t,
            EscalationEnd::DeviceReset => self.usb_reset_device(t, PortReset::Reset, true),
            EscalationEnd::FallBackToBot => self.fall_back_to_bot(t),
        }
    }

    /// The host gives up on UAS at `at_ns`: it resets the device and re-enumerates it with
    /// the interface at its Bulk-Only alternate setting (SET_CONFIGURATION selects alternate
    /// 0; Linux binds usb-storage at a re-enumeration when the `US_FL_IGNORE_UAS` quirk is
    /// set), and usb-storage's probe asks Get Max LUN; from then on every command is a BOT
    /// command, one at a time, and the bridge gives the drive one command at a time. Returns
    /// when the endpoints are ready.
    pub(in crate::core) fn fall_back_to_bot(&mut self, at_ns: u64) -> u64 {
        let reset_done_ns = self.usb_reset_device(at_ns, PortReset::Reset, false);
        let firmware_ns = self.bridge().profile.firmware_status_ns;
        let (max_lun, answer) = Bot::get_max_lun(&mut self.cx, reset_done_ns, firmware_ns);
        if let Some(p) = self.pcap.as_mut() {
            p.use_bot();
            p.enumeration_transfer(max_lun.setup, &answer, max_lun.submit_ns, max_lun.done_ns);
        }
        // The drive link's tag table is indexed by command id: room for every id in use.
        let ids = (self.commands.len() as u32).max(self.max_outstanding);
        self.endpoints =
            Endpoints::Bridged(Bridged::Bot(Bot::new(self.spec.host.chains_transfers)));
        self.max_outstanding = 1;
        let DeviceLink::Sata(port) = &mut self.link;
        port.slots = 1;
        port.ncq_tags = NcqTags::new(1, ids as usize);
        self.fallback = Some(
            "the UAS bridge answered no task management (ABORT TASK, LOGICAL UNIT RESET, I_T \
             NEXUS RESET): the host gave up on UAS, reset the device and uses it as BOT"
                .into(),
        );
        self.cx
            .faults
            .as_mut()
            .expect("a plan")
            .counts
            .uas_bot_fallbacks += 1;
        max_lun.driver_ns
    }

    /// `usb_reset_device` from `at_ns` (`usb_reset.rs`): the port reset and the
    /// re-enumeration, restoring the UAS alternate setting when `uas`; in the pcap the hub
    /// driver's SetPortFeature and every control transfer. Returns when the device is usable.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn usb_reset_device(
        &mut self,
        at_ns: u64,
        reset: PortReset,
        uas: bool,
    ) -> u64 {
        let super_speed = matches!(self.cx.usb, Some(UsbTiming::Super(_)));
        // The device offers UAS in its descriptors when the run began as UAS.
        let offers_uas = self.endpoints.is_uas() || self.fallback.is_some();
        let firmware_ns = self.bridge().profile.firmware_status_ns;
        let done: DeviceReset = crate::usb_reset::reset_device(
            &mut self.cx,
            at_ns,
            reset,
            super_speed,
            offers_uas,
            uas,
            firmware_ns,
        );
        self.cx
            .faults
            .as_mut()
            .expect("a plan")
            .counts
            .device_resets += 1;
        if let Some(p) = self.pcap.as_mut() {
            p.port_reset(done.reset, done.reset_start_ns);
            for t in &done.transfers {
                let c = t.transfer;
                p.enumeration_transfer(c.setup, &t.data, c.submit_ns, c.done_ns);
            }
        }
        done.driver_ns
    }
}
