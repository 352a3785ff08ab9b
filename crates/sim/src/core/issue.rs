//! The host side of a command's life: the block layer's requests become commands while the
//! driver has room (or are served from the driver's own buffer), and the driver sends each
//! one over its transport.

use crate::command::Command;
use crate::core::{data::forget_compressed_pieces, trace_hooks::TraceHook, Simulator};
use crate::cx::layer;
use crate::drive::UNKNOWN_COMPRESSED_BYTES;
use crate::driver_buffer::Serve;
use crate::driver_sata::Ahci;
use crate::endpoints::{Bridged, Endpoints};
use crate::event::{CmdId, Event};
use crate::fault::CommandFault;
use crate::host::CommandPlan;
use crate::op::Op;

impl Simulator {
    /// Build commands from the block layer while the driver has room; a buffering driver first
    /// sends the writes it gathered when they must go, and serves what it can from its buffer.
    pub(in crate::core) fn host_dispatch(&mut self) {
        while self.outstanding < self.max_outstanding {
            let next = self.block.peek();
            if self.driver_buffer.must_flush_before(next.as_ref()) {
                self.send_gathered_writes();
                continue;
            }
            let Some(next) = next else {
                break;
            };
            if self.ahci_ncq && self.ncq_defers(next.op) {
                break;
            }
            let id = self.new_command();
            let mut plan = self
                .block
                .take(&mut self.commands[id as usize].parts)
                .expect("a request is pending");
            let merged = u64::from(plan.part_count) - 1;
            let serve = if self.driver_buffer.enabled() {
                self.driver_buffer.serve(&plan, self.drive.capacity_bytes())
            } else {
                Serve::Device
            };
            match serve {
                Serve::Device => self.issue_command(id, plan, merged),
                Serve::DeviceWithReadAhead { extra } => {
                    // The rest of the command lands in the driver's buffer.
                    let c = &mut self.commands[id as usize];
                    c.parts[usize::from(plan.part_count)] = crate::command::Part {
                        slot: self.driver_buffer.slot,
                        slot_offset: 0,
                        len: extra,
                    };
                    plan.part_count += 1;
                    plan.len += extra;
                    self.issue_command(id, plan, merged);
                }
                Serve::ReadFromBuffer { at } => {
                    self.counters.driver_buffer_reads += 1;
                    self.serve_in_driver(id, plan, at);
                }
                Serve::CoalesceWrite { at } => {
                    self.serve_in_driver(id, plan, at);
                    if let Some(fire) = self.driver_buffer.arm_timer(at, self.cx.now_ns) {
                        self.cx.schedule(fire, Event::DriverFlush);
                    }
                }
            }
        }
    }

    /// AHCI with NCQ: whether the driver holds back a command of `op` (libata's
    /// `ata_std_qc_defer`): a flush is not queued, so it waits until no command is
    /// outstanding, and nothing is issued while a flush is.
    #[cold]
    pub(in crate::core) fn ncq_defers_flush(&self, op: Op) -> bool {
        self.flushes_outstanding > 0 || (op == Op::Flush && self.outstanding > 0)
    }

    #[inline]
    pub(in crate::core) fn ncq_defers(&self, op: Op) -> bool {
        (self.flushes_outstanding > 0 || op == Op::Flush) && self.ncq_defers_flush(op)
    }

    pub(in crate::core) fn new_command(&mut self) -> CmdId {
        let taken = if self.lowest_free_tag {
            // Every free id is below the table's length, so the lowest free one is the
            // least in the free list (at most a few hundred entries).
            let lowest = (0..self.free_commands.len()).min_by_key(|&i| self.free_commands[i]);
            lowest.map(|i| self.free_commands.swap_remove(i))
        } else {
            self.free_commands.pop()
        };
        match taken {
            Some(id) => id,
            None => {
                self.commands.push(Command::new());
                (self.commands.len() - 1) as CmdId
            }
        }
    }

    /// The driver sends `plan` (its parts already in the command) to the device.
    pub(in crate::core) fn issue_command(&mut self, id: CmdId, plan: CommandPlan, merged: u64) {
        self.outstanding += 1;
        assert!(self.outstanding <= self.max_outstanding);
        self.counters.commands += 1;
        self.counters.merged_requests += merged;
        if plan.op == Op::Flush {
            self.flushes_outstanding += 1;
        }
        let now = self.cx.now_ns;
        let submit_ns = if self.endpoints.maps_buffer_before_issue() {
            self.spec.host.submit_cpu_ns + self.cx.buffer_cpu_ns(plan.len)
        } else {
            self.spec.host.submit_cpu_ns
        };
        let issue_at = self.cx.reserve(layer::HOST_CPU, now, submit_ns, 0);
        let c = &mut self.commands[id as usize];
        begin_command(c, &plan, issue_at, false);
        c.retries = 0;
        self.cx.schedule(issue_at, Event::HostIssue { cmd: id });
    }

    /// The writes the driver gathered leave as one write command from its buffer.
    pub(in crate::core) fn send_gathered_writes(&mut self) {
        let (offset_bytes, len, requests) = self
            .driver_buffer
            .take_held_write()
            .expect("the driver holds writes");
        let id = self.new_command();
        self.commands[id as usize].parts[0] = crate::command::Part {
            slot: self.driver_buffer.slot,
            slot_offset: 0,
            len,
        };
        let plan = CommandPlan {
            op: Op::Write,
            offset_bytes,
            len,
            part_count: 1,
        };
        self.issue_command(id, plan, requests - 1);
    }

    /// The driver serves `plan` from its buffer at offset `at` (a read from its read-ahead, or a
    /// write copied in to be sent later): the copy on the host CPU, then the completion, without
    /// a transfer. The command holds one of the driver's slots meanwhile.
    pub(in crate::core) fn serve_in_driver(&mut self, id: CmdId, plan: CommandPlan, at: u32) {
        let buffer_start = self.driver_buffer.slot as usize * self.slot_bytes + at as usize;
        let mut offset = buffer_start;
        let c = &self.commands[id as usize];
        for part in &c.parts[..usize::from(plan.part_count)] {
            let slot_start = part.slot as usize * self.slot_bytes + part.slot_offset as usize;
            let n = part.len as usize;
            if plan.op == Op::Write {
                self.slot_buffers
                    .copy_within(slot_start..slot_start + n, offset);
                self.slot_tails[self.driver_buffer.slot as usize].clear();
                self.slot_compressed[self.driver_buffer.slot as usize]
                    .fill(UNKNOWN_COMPRESSED_BYTES);
            } else {
                self.slot_buffers
                    .copy_within(offset..offset + n, slot_start);
                self.slot_zero[part.slot as usize] = false;
                self.slot_tails[part.slot as usize].clear();
                forget_compressed_pieces(
                    &mut self.slot_compressed[part.slot as usize],
                    part.slot_offset as usize,
                    n,
                );
            }
            offset += n;
        }
        if plan.op == Op::Write {
            self.slot_zero[self.driver_buffer.slot as usize] = false;
        }
        self.outstanding += 1;
        assert!(self.outstanding <= self.max_outstanding);
        let host = &self.spec.host;
        let cpu_ns = host.submit_cpu_ns + self.cx.buffer_cpu_ns(plan.len) + host.complete_cpu_ns;
        let now = self.cx.now_ns;
        let done = self.cx.reserve(layer::HOST_CPU, now, cpu_ns, 0);
        begin_command(&mut self.commands[id as usize], &plan, now, true);
        self.cx.schedule(done, Event::Complete { cmd: id });
    }

    /// The driver sends the command: over USB to the bridge, or through AHCI to the drive.
    pub(in crate::core) fn on_host_issue(&mut self, id: CmdId) {
        if self.cx.faults.is_some() {
            self.draw_command_fault(id);
            if self.commands[id as usize].fault == CommandFault::Removed {
                return self.fail_on_removed_device(id);
            }
        }
        let c = &mut self.commands[id as usize];
        match &mut self.endpoints {
            Endpoints::Bridged(Bridged::Bot(bot)) => {
                let at = bot.issue(&mut self.cx, c);
                self.trace(id, TraceHook::Issued);
                self.cx.schedule(at, Event::CommandAtDevice { cmd: id });
            }
            Endpoints::Bridged(Bridged::Uas(uas)) => {
                let at = uas.issue(&mut self.cx, id, c);
                self.trace(id, TraceHook::Issued);
                self.cx.schedule(at, Event::CommandAtDevice { cmd: id });
            }
            Endpoints::Direct(_) if c.fault == CommandFault::NotReady => {
                // The SATA link is down while the drive powers up: the command never reaches
                // it. libata's error handler, woken by the PHY's change of state, resets the
                // link (COMRESET) until the drive's signature FIS comes with BSY clear, then
                // retries the command (`ata_eh_qc_retry`, not counted against its retries).
                let ready_ns = self.cx.faults.as_ref().map_or(0, |f| f.drive_ready_ns);
                let ready = ready_ns.max(self.cx.now_ns);
                self.cx.schedule(ready, Event::Complete { cmd: id });
            }
            Endpoints::Direct(ahci) => {
                // Both false without a plan (no fault drawn, no recovery ever ran).
                if c.fault != CommandFault::None || ahci.recovery_until_ns > self.cx.now_ns {
                    let ahci = *ahci;
                    return self.faulted_ahci_issue(id, ahci);
                }
                c.holds_drive_slot = true;
                self.at_drive += 1;
                assert!(
                    self.at_drive <= self.link.slots(),
                    "more commands at the drive than tags"
                );
                let at = ahci.issue(&mut self.cx, &mut self.link, id, c);
                self.cx.schedule(at, Event::DriveCommand { cmd: id });
            }
        }
    }

    /// AHCI, with a fault plan: a command issued while libata's error handler owns the port
    /// waits until it is done (`draw_command_fault` drew nothing for it); a command the drive
    /// loses (drop) goes to the drive, which never answers: the host's timer fires `timeout`
    /// after the issue (the lost command's `Complete`, as on USB).
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn faulted_ahci_issue(&mut self, id: CmdId, ahci: Ahci) {
        if ahci.recovery_until_ns > self.cx.now_ns {
            // The block layer's timer starts when the driver takes the command.
            let at = ahci.recovery_until_ns;
            self.commands[id as usize].issued_ns = at;
            self.cx.schedule(at, Event::HostIssue { cmd: id });
            return;
        }
        let c = &mut self.commands[id as usize];
        assert_eq!(
            c.fault,
            CommandFault::Drop,
            "the only fault drawn at an AHCI issue"
        );
        // Sent as `on_host_issue` sends it (apart, so that hot path stays as it was).
        c.holds_drive_slot = true;
        self.at_drive += 1;
        assert!(
            self.at_drive <= self.link.slots(),
            "more commands at the drive than tags"
        );
        let at = ahci.issue(&mut self.cx, &mut self.link, id, c);
        let timeout_ns = self.cx.faults.as_ref().expect("a plan").plan.timeout_ns;
        let fires_ns = (self.commands[id as usize].issued_ns + timeout_ns).max(at);
        self.cx.schedule(fires_ns, Event::Complete { cmd: id });
    }
}

/// A command starts as `plan` says, at `issued_ns` (the block layer's timer starts then),
/// holding no drive slot and with no error yet; `served_by_driver` when the driver's own
/// buffer serves it.
#[inline]
fn begin_command(c: &mut Command, plan: &CommandPlan, issued_ns: u64, served_by_driver: bool) {
    c.op = plan.op;
    c.offset_bytes = plan.offset_bytes;
    c.len_bytes = plan.len;
    c.part_count = plan.part_count;
    c.holds_drive_slot = false;
    c.served_by_driver = served_by_driver;
    c.issued_ns = issued_ns;
    c.errno = 0;
}
