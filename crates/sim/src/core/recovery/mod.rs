//! Fault recovery: `on_failed_status` is the one match on (transport, fault). A failed command's
//! status (or its host timer) comes here; each transport's recovery is computed by its own
//! code (`driver_bot`'s request sense and reset recovery, `driver_uas`'s task management,
//! `usb_reset`, `sata_recovery`) and applied here: the command is retried or fails.

use crate::core::Simulator;
use crate::cx::layer;
use crate::driver_bot::{Bot, RequestSense};
use crate::driver_uas::Uas;
use crate::endpoints::{Bridged, Endpoints};
use crate::error::SimError;
use crate::event::{CmdId, Event};
use crate::fault::{
    CommandFault, FaultCounts, FaultInjector, FaultKind, FaultOutcome, FaultPlan, FaultRecord,
    PowerLossRecord, LINUX_NOT_READY_RETRY_DELAY_NS,
};
use crate::op::Op;
use crate::power::PowerJournal;
use crate::request::{ERRNO_EIO, ERRNO_ENODATA};
use crate::trace::data_urb;
use crate::trace::{Urb, URB_UNLINKED};
use crate::transport::Transport;
use storlab_wire::bot::CswStatus;

mod device_loss;
mod resets;

impl Simulator {
    /// Inject the faults of `plan` from now on (`fault.rs`; docs/simulator.md, "Faults").
    /// Refused, with a one-line reason, for a fault the stack's transport does not have or
    /// a stack whose recovery the simulator does not model yet.
    pub fn set_faults(&mut self, plan: FaultPlan) -> Result<(), SimError> {
        let transport = self.endpoints.kind();
        let refuse = |why: String| Err(SimError::Request(format!("fault plan: {why}")));
        for kind in FaultKind::ALL {
            if !plan.uses(kind) {
                continue;
            }
            let applies = match kind {
                FaultKind::UsbCrc => transport.is_usb(),
                FaultKind::Drop => true,
                FaultKind::PhaseError => transport == Transport::Bot,
                FaultKind::Hang | FaultKind::BridgeReset | FaultKind::Disconnect => {
                    transport.is_usb()
                }
                FaultKind::MediaError | FaultKind::PowerLoss => true,
            };
            if !applies {
                return refuse(format!(
                    "{kind} does not happen on a {} stack",
                    transport.name()
                ));
            }
        }
        let blocks = self.drive.capacity_bytes() / u64::from(self.drive.logical_block_bytes());
        if let Some(lba) = plan.bad_lbas.iter().find(|&&lba| lba >= blocks) {
            return refuse(format!(
                "media_error@lba={lba} is past the drive's last LBA ({}): no read can meet it",
                blocks - 1
            ));
        }
        if self.driver_buffer.enabled() {
            return refuse(
                "the host driver buffers reads or writes (read_ahead, coalesce_writes), whose \
                 failed commands the simulator does not recover yet"
                    .into(),
            );
        }
        // A plan replacing another (the stack file's) starts the journal afresh, or ends it.
        self.power_journal = (plan.uses(FaultKind::PowerLoss) && self.store_payload)
            .then(|| Box::new(PowerJournal::new()));
        self.cx.faults = Some(Box::new(FaultInjector::new(plan)));
        Ok(())
    }

    /// Every power loss so far: when, and the byte ranges it took back to what the media
    /// held (empty without a plan that cuts power).
    pub fn power_losses(&self) -> &[PowerLossRecord] {
        self.cx.faults.as_ref().map_or(&[], |f| &f.power_losses)
    }

    /// Every command fault injected so far and what became of it (empty without a plan).
    pub fn fault_records(&self) -> &[FaultRecord] {
        self.cx.faults.as_ref().map_or(&[], |f| &f.records)
    }

    /// Placed faults that have not fired (yet), in spec form (empty without a plan): at the
    /// end of a run, faults the run never met.
    pub fn unfired_faults(&self) -> Vec<String> {
        self.cx.faults.as_ref().map_or(Vec::new(), |f| f.unfired())
    }

    /// Fault and recovery counts (None without a plan).
    pub fn fault_counts(&self) -> Option<FaultCounts> {
        self.cx.faults.as_ref().map(|f| f.counts.clone())
    }

    /// A failed command's status reached the driver: run the transport's recovery, then send
    /// the command again or fail the I/O.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn on_failed_status(&mut self, id: CmdId) {
        if self.error_handler_waits(id) {
            return;
        }
        let now = self.cx.now_ns;
        let c = &mut self.commands[id as usize];
        let fault = std::mem::take(&mut c.fault);
        let firmware_ns = self
            .bridge
            .as_ref()
            .map_or(0, |b| b.profile.firmware_status_ns);
        match (&mut self.endpoints, fault) {
            (Endpoints::Bridged(Bridged::Bot(bot)), CommandFault::Medium) => {
                assert_eq!(
                    Bot::check_status(c),
                    CswStatus::Failed,
                    "CSW of a failed read"
                );
                let lba = c.device.lba;
                let asked = fault.sense(lba).expect("a medium error has sense");
                let sense = bot.request_sense(&mut self.cx, now, firmware_ns, asked);
                assert_eq!(sense.key, storlab_wire::scsi::SenseKey::MediumError);
                let at = self.sense_read(&sense, now);
                self.fail_command(id, at, ERRNO_ENODATA);
            }
            (Endpoints::Bridged(Bridged::Uas(uas)), CommandFault::Medium) => {
                let key = Uas::check_status(c);
                assert_eq!(key, Some(storlab_wire::scsi::SenseKey::MediumError));
                // The driver cancels the data transfer of a command whose status is an error
                // (Linux `uas_stat_cmplt`: `usb_unlink_urb`); without streams no Read Ready IU
                // came, so no data transfer was queued.
                if let (Some(p), true) = (self.pcap.as_mut(), uas.streams) {
                    p.end_urb(now, id, Urb::DataIn, URB_UNLINKED);
                }
                self.fail_command(id, now, ERRNO_ENODATA);
            }
            // The drive link's status carried ERR (and a queued command's READ LOG EXT ran).
            (Endpoints::Direct(_), CommandFault::Medium) => {
                self.fail_command(id, now, ERRNO_ENODATA)
            }
            (Endpoints::Bridged(Bridged::Bot(_)), CommandFault::PhaseError) => {
                assert_eq!(Bot::check_status(c), CswStatus::PhaseError);
                let at = self.bot_reset_recovery(now);
                self.retry_or_fail(id, at);
            }
            (
                Endpoints::Bridged(Bridged::Uas(_)) | Endpoints::Direct(_),
                CommandFault::PhaseError,
            ) => {
                unreachable!("phase errors are BOT's (set_faults refuses them elsewhere)")
            }
            (
                Endpoints::Bridged(Bridged::Bot(bot)),
                CommandFault::NotReady | CommandFault::UnitAttention,
            ) => {
                assert_eq!(Bot::check_status(c), CswStatus::Failed);
                let asked = fault
                    .sense(c.device.lba)
                    .expect("a bridge answer has sense");
                let sense = bot.request_sense(&mut self.cx, now, firmware_ns, asked);
                assert_eq!(
                    (sense.key, sense.additional),
                    (asked.key, asked.additional),
                    "host read other sense than the bridge built"
                );
                let at = self.sense_read(&sense, now);
                self.retry_after_sense(id, fault, at);
            }
            (
                Endpoints::Bridged(Bridged::Uas(uas)),
                CommandFault::NotReady | CommandFault::UnitAttention,
            ) => {
                let key = Uas::check_status(c);
                assert_eq!(key, fault.sense(0).map(|s| s.key), "Sense IU's key");
                // With streams the data transfer was queued at issue (a flush has none).
                if let (Some(p), true) = (self.pcap.as_mut(), uas.streams && c.op != Op::Flush) {
                    p.end_urb(now, id, data_urb(c.op), URB_UNLINKED);
                }
                self.retry_after_sense(id, fault, now);
            }
            // The link came back with the drive ready: libata's error handler retries.
            (Endpoints::Direct(_), CommandFault::NotReady) => self.retry_uncounted(id, now),
            (Endpoints::Direct(_), CommandFault::UnitAttention) => {
                unreachable!("an ATA device has no unit attention")
            }
            // Not a status: the host's timer for a command the bridge lost.
            (_, CommandFault::Drop) => self.on_host_timeout(id, false),
            (_, CommandFault::Hang) => self.on_host_timeout(id, true),
            (_, CommandFault::BridgeReset) => self.on_host_timeout(id, false),
            (_, CommandFault::Disconnect) => self.on_removed_in_flight(id),
            (_, CommandFault::None | CommandFault::Removed) => {
                unreachable!("called for a failed command")
            }
            (_, CommandFault::Lost) => unreachable!("a lost command has no status or timer"),
        }
    }

    /// BOT: the host read the sense of a failed command with REQUEST SENSE (its CBW, data and
    /// CSW, which `Bot::request_sense` computed) from `now`: the exchange goes in the capture
    /// and the counts. Returns when the driver has handled the CSW.
    fn sense_read(&mut self, sense: &RequestSense, now: u64) -> u64 {
        if let Some(p) = self.pcap.as_mut() {
            p.transfer(Urb::Command, now, sense.cbw_done_ns, &sense.cbw);
            let data = sense.cbw_done_ns;
            p.transfer(Urb::DataIn, data, sense.sense_done_ns, &sense.sense);
            p.transfer(
                Urb::Status,
                sense.csw_submit_ns,
                sense.csw_done_ns,
                &sense.csw,
            );
        }
        let f = self.cx.faults.as_mut().expect("a plan");
        f.counts.request_senses += 1;
        self.cx.completion_cpu(sense.csw_done_ns)
    }

    /// The host read NOT READY or UNIT ATTENTION for `id` at `at_ns`: as Linux's
    /// `scsi_io_completion_action`, 02/04/01 is retried after a delay (`ACTION_DELAYED_RETRY`)
    /// and a unit attention on a fixed disk at once ("Must have been a power glitch, or a bus
    /// reset": `ACTION_RETRY`).
    pub(in crate::core) fn retry_after_sense(
        &mut self,
        id: CmdId,
        fault: CommandFault,
        at_ns: u64,
    ) {
        let delay_ns = if fault == CommandFault::NotReady {
            LINUX_NOT_READY_RETRY_DELAY_NS
        } else {
            0
        };
        self.retry_uncounted(id, at_ns + delay_ns);
    }

    /// After a NOT READY or UNIT ATTENTION at `at_ns`: the command goes again, not counted
    /// against its retries (Linux: `scsi_io_completion_action` requeues it as
    /// `ACTION_DELAYED_RETRY` or `ACTION_RETRY`, without touching `cmd->retries`).
    pub(in crate::core) fn retry_uncounted(&mut self, id: CmdId, at_ns: u64) {
        let f = self.cx.faults.as_mut().expect("a plan");
        let c = &self.commands[id as usize];
        f.resolve(c.attempt, FaultOutcome::Retried { at_ns });
        self.reissue(id, at_ns);
    }

    /// After recovery at `at_ns`: the SCSI midlayer sends the command again while it has
    /// retries left (the driver's submit work first), else fails the I/O with EIO.
    pub(in crate::core) fn retry_or_fail(&mut self, id: CmdId, at_ns: u64) {
        let f = self.cx.faults.as_mut().expect("a plan");
        let c = &mut self.commands[id as usize];
        if c.retries >= f.plan.retries {
            return self.fail_command(id, at_ns, ERRNO_EIO);
        }
        c.retries += 1;
        f.resolve(c.attempt, FaultOutcome::Retried { at_ns });
        self.reissue(id, at_ns);
    }

    /// The driver sends `id` again from `at_ns`: its submit work on the host CPU, then the
    /// issue (the block layer's timer starts again then).
    pub(in crate::core) fn reissue(&mut self, id: CmdId, at_ns: u64) {
        let submit_ns = self.spec.host.submit_cpu_ns;
        let issue_at = self.cx.reserve(layer::HOST_CPU, at_ns, submit_ns, 0);
        self.commands[id as usize].issued_ns = issue_at;
        self.cx.schedule(issue_at, Event::HostIssue { cmd: id });
    }

    /// The command's I/O fails with `errno`, reported to the caller at `at_ns`.
    pub(in crate::core) fn fail_command(&mut self, id: CmdId, at_ns: u64, errno: i32) {
        let c = &mut self.commands[id as usize];
        c.errno = errno;
        let f = self.cx.faults.as_mut().expect("a plan");
        f.resolve(c.attempt, FaultOutcome::Reported { errno, at_ns });
        self.cx.schedule(at_ns, Event::Complete { cmd: id });
    }

    /// The host's timer fired for a command the bridge lost. BOT: the SCSI error handler's
    /// abort makes usb-storage reset the device (`command_abort`, then Reset Recovery);
    /// UAS: ABORT TASK for its tag, or for a hung bridge the escalation of `uas_escalate`.
    /// Then the command goes again.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn on_host_timeout(&mut self, id: CmdId, hung: bool) {
        let now = self.cx.now_ns;
        let firmware_ns = self
            .bridge
            .as_ref()
            .map_or(0, |b| b.profile.firmware_status_ns);
        self.commands[id as usize].fault = CommandFault::None;
        let at = match self.endpoints {
            Endpoints::Bridged(Bridged::Bot(_)) => {
                // usb-storage's abort stops the transfer in progress, the data phase the
                // bridge never answered (`usb_stor_stop_transport`: `usb_unlink_urb`).
                if let Some(p) = self.pcap.as_mut() {
                    p.end_urb(
                        now,
                        id,
                        data_urb(self.commands[id as usize].op),
                        URB_UNLINKED,
                    );
                }
                if hung {
                    self.bot_reset_unanswered(now)
                } else {
                    self.bot_reset_recovery(now)
                }
            }
            Endpoints::Bridged(Bridged::Uas(uas)) if hung => {
                self.uas_escalate(id, uas, now, firmware_ns)
            }
            Endpoints::Bridged(Bridged::Uas(uas)) => self.uas_abort(id, uas, now, firmware_ns),
            Endpoints::Direct(ahci) => self.sata_hardreset(id, ahci, now),
        };
        self.retry_or_fail(id, at);
        self.retry_lost_with(id, at);
    }

    /// The timer of `id`, whose fault lost the device's other commands, fired: Linux's SCSI
    /// error handler starts only once every outstanding command has failed or timed out
    /// (`scsi_eh_wakeup`: `scsi_host_busy(shost) == shost->host_failed`), so it waits for
    /// the last of the lost commands' timers. True when the recovery was put off until then.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn error_handler_waits(&mut self, id: CmdId) -> bool {
        if self.commands[id as usize].fault == CommandFault::Disconnect {
            // The hub's removal ends them all at once (`on_removed_in_flight`).
            return false;
        }
        let lost = self.lost_with(id);
        let f = self.cx.faults.as_ref().expect("a plan");
        let timeout_ns = f.plan.timeout_ns;
        let last_timer_ns = lost
            .iter()
            .map(|&a| {
                self.commands[a as usize]
                    .issued_ns
                    .saturating_add(timeout_ns)
            })
            .max()
            .unwrap_or(0);
        if last_timer_ns <= self.cx.now_ns {
            return false;
        }
        self.cx.schedule(last_timer_ns, Event::Complete { cmd: id });
        true
    }

    /// The recovery of `id` ended at `at_ns`: the commands lost with it go again (each timed
    /// out, so each uses a retry: `scsi_eh_flush_done_q`), their URBs killed by the reset
    /// (uas's `uas_eh_device_reset_handler`: `usb_kill_anchored_urbs`, `uas_zap_pending`).
    /// After a fall back to BOT they go one at a time (`send_serial_retry`).
    pub(in crate::core) fn retry_lost_with(&mut self, id: CmdId, at_ns: u64) {
        let f = self.cx.faults.as_mut().expect("a plan");
        if f.device_lost_with != Some(id) {
            return;
        }
        f.device_lost_with = None;
        f.lost_in_data_phase.clear();
        let lost = std::mem::take(&mut f.lost_with_device);
        if lost.is_empty() {
            return;
        }
        for &a in &lost {
            self.commands[a as usize].fault = CommandFault::None;
        }
        if self.outstanding > self.max_outstanding {
            // The host fell back to BOT: one command outstanding.
            self.cx
                .faults
                .as_mut()
                .expect("a plan")
                .serial_retries
                .extend(lost);
            return;
        }
        for a in lost {
            self.retry_or_fail(a, at_ns);
        }
    }

    /// After a fall back from UAS to BOT with several commands lost: the next of them goes
    /// once the one before has completed.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn send_serial_retry(&mut self) {
        let now = self.cx.now_ns;
        let next = self
            .cx
            .faults
            .as_mut()
            .and_then(|f| f.serial_retries.pop_front());
        if let Some(a) = next {
            self.retry_or_fail(a, now);
        }
    }

    /// Command `a`, lost with the device, had its data transfer queued on a Ready IU.
    pub(in crate::core) fn data_urb_queued(&self, a: CmdId) -> bool {
        self.data_phase_booked_until(a).is_some()
    }

    /// Command `a`, lost with the device, was in a data phase booked to end then.
    pub(in crate::core) fn data_phase_booked_until(&self, a: CmdId) -> Option<u64> {
        let f = self.cx.faults.as_ref()?;
        f.lost_in_data_phase
            .iter()
            .find(|&&(c, _)| c == a)
            .map(|&(_, at)| at)
    }

    /// The commands lost with the device by `id`'s fault (empty for any other command).
    pub(in crate::core) fn lost_with(&self, id: CmdId) -> Vec<CmdId> {
        let f = self.cx.faults.as_ref().expect("a plan");
        if f.device_lost_with == Some(id) {
            f.lost_with_device.clone()
        } else {
            Vec::new()
        }
    }
}
