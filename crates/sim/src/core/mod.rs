//! The simulator's core: one thread, one event queue, virtual time in nanoseconds. It owns the
//! stack's components (timing models and shared-resource servers), the commands in flight, the
//! slot buffers that carry payload and the drive's contents.
//!
//! This directory is the only `impl Simulator` (a tidy test keeps it so), split by phase into
//! private files: `assembly` builds the components once from the stack (`Endpoints` in
//! `endpoints.rs`, `DeviceLink` in `device_link.rs`, `Bridge`, the drive from the drive-model
//! registry), `issue` the host side, `bridge_path` a USB bridge's work, `drive_io` the drive's,
//! `data` the payload and completions, `recovery/` every fault and its recovery (its
//! `on_failed_status` is the one match on (transport, fault)), `trace_hooks` the pcap recorder's hooks. `handle`, below,
//! is the one match on events; it hands the bridge's steps the `Bridged` endpoints, and the
//! phases that differ by path match `Endpoints` whole and hand theirs down the same way. The components work on the narrow context `Cx` (`cx.rs`),
//! never on the simulator: transports compute, the core applies. See
//! docs/decisions/0012-sim-seams.md and docs/decisions/0026-simulator-core-floor-plan.md.

mod assembly;
mod bridge_path;
mod data;
mod drive_io;
mod issue;
mod recovery;
mod trace_hooks;

use crate::bridge::Bridge;
use crate::command::Command;
use crate::counters::Counters;
use crate::cx::{Cx, UsbTiming};
use crate::device_link::DeviceLink;
use crate::drive::{Drive, DriveCommand};
use crate::driver_buffer::DriverBuffer;
use crate::endpoints::Endpoints;
use crate::error::SimError;
use crate::event::{CmdId, Event};
use crate::host::BlockLayer;
use crate::op::Op;
use crate::power::PowerJournal;
use crate::profile::{ProfileSet, StackSpec};
use crate::request::{SimCompletion, SimRequest, ERRNO_EINVAL, ERRNO_EOPNOTSUPP};
use crate::store::{SourceMatch, Store};
use crate::trace::PcapRecorder;
use crate::transport::Transport;
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use trace_hooks::TraceHook;

/// Virtual time after which the simulator takes no more requests: 2^62 ns, 146 years. Profile
/// validation bounds every step of a command (`profile::STEP_NS_MAX` and the limits beside
/// it), so what the requests already accepted add stays far below the clock's 2^64 ns; a
/// stack slow enough to get here ends its run with an error instead of overflowing.
pub const CLOCK_LIMIT_NS: u64 = 1 << 62;

#[derive(Clone, Copy, Debug, Default)]
struct SlotState {
    active: bool,
    pieces_left: u32,
    len: u32,
    /// A command carrying part of this request failed with this errno (0: none did).
    errno: i32,
}

/// The deterministic discrete-event simulator of one stack: the core that owns the clock and
/// queue (in `Cx`), the components assembled from the stack (transport, bridge, drive link,
/// drive), the commands in flight and the payload. `handle` is the one place that branches on
/// the phase of a command; each phase matches the transport and the drive link whole.
pub struct Simulator {
    spec: StackSpec,
    fallback: Option<String>,
    max_outstanding: u32,
    cx: Cx,
    endpoints: Endpoints,
    bridge: Option<Bridge>,
    link: DeviceLink,
    drive: Box<dyn Drive>,
    /// Commands at the drive (each holds one of the link's slots).
    at_drive: u32,
    /// Reads the drive has accepted and not started, oldest first (its NCQ queue), with their
    /// decoded commands alongside for [`Drive::pick_read`].
    drive_reads: Vec<CmdId>,
    drive_read_commands: Vec<DriveCommand>,
    /// A DriveWake event is pending.
    drive_wake_pending: bool,
    /// A cache flush is at the drive: a non-queued command, so the bridge sends nothing else
    /// until it completes (SAT-3 §3.1 translates SYNCHRONIZE CACHE to FLUSH CACHE EXT, which
    /// ACS-3 §4.19.1 does not allow beside queued commands).
    flush_at_drive: bool,
    /// Flushes the bridge has parsed and not yet sent to the drive: commands parsed after one
    /// wait behind it in the bridge's queue.
    flushes_at_bridge: u32,
    /// The host queues commands with NCQ through AHCI: a flush waits until no command is
    /// outstanding, and nothing is issued while it is (libata's `ata_std_qc_defer`).
    ahci_ncq: bool,
    /// Flushes the host has issued and not completed.
    flushes_outstanding: u32,
    /// Write data of a command of several parts, gathered for drives that look at it
    /// (compression); a one-part command goes to the drive from its slot.
    drive_payload: Vec<u8>,

    rng: ChaCha8Rng,
    block: BlockLayer,
    /// The driver's own read-ahead and write-coalescing buffer (one slot past the caller's).
    driver_buffer: DriverBuffer,
    commands: Vec<Command>,
    free_commands: Vec<CmdId>,
    /// The host gives a new command the lowest free id (its UAS tag is id + 1), not the most
    /// recently freed (`HostProfile::lowest_free_tag`).
    lowest_free_tag: bool,
    outstanding: u32,
    slots: Vec<SlotState>,
    slot_bytes: usize,
    slot_buffers: Vec<u8>,
    /// Per slot: its buffer is known to hold only zeros (so a read of never-written blocks
    /// need not zero it again). Cleared when the caller borrows the buffer mutably.
    slot_zero: Vec<bool>,
    /// Per slot (the driver's buffer last): the store's match for each part last written from
    /// it, by the part's offset in the slot, while the bytes past the part's stamp are
    /// unchanged; forgotten as soon as anything may have changed them. Lets a restamped
    /// buffer skip the store's comparison with its source (ADR 0016).
    slot_tails: Vec<Vec<(u32, SourceMatch)>>,
    /// Per slot (the driver's buffer last), for a compressing drive only: each
    /// `COMPRESSION_PIECE_BYTES` piece's compression estimate, kept while the piece's bytes are
    /// unchanged and forgotten where the slot's bytes may change (as `slot_tails`), so a
    /// restamped buffer is estimated again only where its stamp landed.
    slot_compressed: Vec<Vec<u32>>,
    /// The estimates handed to the drive with `drive_payload`, one per piece of it.
    drive_compressed: Vec<u32>,
    /// Pieces whose kept estimate a write reused (for tests and measurements).
    reused_compression_estimates: u64,
    completions: VecDeque<SimCompletion>,
    store: Store,
    store_payload: bool,
    /// With a plan that cuts the drive's power: what each write the drive may still hold in a
    /// volatile cache replaced in the store (`power.rs`). None otherwise: no cost per write.
    power_journal: Option<Box<PowerJournal>>,
    counters: Counters,
    pcap: Option<PcapRecorder>,
}

impl Simulator {
    /// Build the simulator of a named stack from a profile set.
    pub fn from_profiles(
        profiles: &ProfileSet,
        stack: &str,
        seed: u64,
    ) -> Result<Simulator, SimError> {
        Simulator::new(profiles.resolve(stack)?, seed)
    }

    pub fn now_ns(&self) -> u64 {
        self.cx.now_ns
    }

    /// The drive's payload store (read-only: tests compare stores and count its work).
    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.drive.capacity_bytes()
    }

    pub fn stack(&self) -> &StackSpec {
        &self.spec
    }

    pub fn transport(&self) -> Transport {
        self.endpoints.kind()
    }

    /// Why the transport differs from what the host profile asked for, if it does.
    pub fn fallback(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// Commands the host keeps outstanding at most (after protocol limits).
    pub fn max_outstanding_commands(&self) -> u32 {
        self.max_outstanding
    }

    /// What each of the drive's caches holds now, against its size (read-only; for tests).
    pub fn drive_cache_occupancy(&self) -> Vec<crate::drive::CacheOccupancy> {
        self.drive.cache_occupancy(self.cx.now_ns)
    }

    /// Requests accepted and not yet completed.
    pub fn requests_in_flight(&self) -> usize {
        self.slots.iter().filter(|s| s.active).count()
    }

    /// Hand a request to the host's block layer at the current virtual time.
    pub fn submit(&mut self, request: SimRequest) -> Result<(), SimError> {
        if self.cx.now_ns >= CLOCK_LIMIT_NS {
            return Err(SimError::Request(format!(
                "virtual time reached {} ns (146 years): the stack's timings are too slow to \
                 simulate further",
                self.cx.now_ns
            )));
        }
        let slot = request.slot as usize;
        if slot >= self.slots.len() {
            return Err(SimError::Request(format!(
                "slot {} out of range (0..{})",
                request.slot,
                self.slots.len()
            )));
        }
        if self.slots[slot].active {
            return Err(SimError::Request(format!(
                "slot {} is already in flight",
                request.slot
            )));
        }
        if request.op != Op::Trim && request.len_bytes as usize > self.slot_bytes {
            return Err(SimError::Request(format!(
                "{} bytes do not fit slot buffers of {} bytes",
                request.len_bytes, self.slot_bytes
            )));
        }
        self.counters.host_requests += 1;
        let block = u64::from(self.drive.logical_block_bytes());
        let end = request
            .offset_bytes
            .checked_add(u64::from(request.len_bytes));
        let valid = if request.op == Op::Flush {
            // A flush names no range (SYNCHRONIZE CACHE of the whole medium).
            request.len_bytes == 0 && request.offset_bytes == 0
        } else {
            request.len_bytes > 0
                && request.offset_bytes.is_multiple_of(block)
                && u64::from(request.len_bytes).is_multiple_of(block)
                && end.is_some_and(|e| e <= self.drive.capacity_bytes())
        };
        let refused = if !valid {
            Some(ERRNO_EINVAL)
        } else if request.op == Op::Trim && !self.spec.host.discard {
            Some(ERRNO_EOPNOTSUPP)
        } else {
            None
        };
        if let Some(errno) = refused {
            self.counters.rejected_requests += 1;
            self.completions.push_back(SimCompletion {
                slot: request.slot,
                result: Err(errno),
                done_ns: self.cx.now_ns,
            });
            return Ok(());
        }
        if matches!(request.op, Op::Read | Op::Write) {
            self.counters.host_request_bytes += u64::from(request.len_bytes);
            self.counters.host_size_min = self.counters.host_size_min.min(request.len_bytes);
            self.counters.host_size_max = self.counters.host_size_max.max(request.len_bytes);
        }
        let pieces = self.block.split(
            request.op,
            request.offset_bytes,
            request.len_bytes,
            request.slot,
        );
        self.slots[slot] = SlotState {
            active: true,
            pieces_left: pieces,
            len: request.len_bytes,
            errno: 0,
        };
        self.host_dispatch();
        Ok(())
    }

    /// Completions produced so far, oldest first.
    pub fn pop_completion(&mut self) -> Option<SimCompletion> {
        self.completions.pop_front()
    }

    pub fn completions_ready(&self) -> usize {
        self.completions.len()
    }

    /// Process the earliest event; false when none is left.
    pub fn step(&mut self) -> bool {
        let Some((at_ns, event)) = self.cx.events.pop() else {
            return false;
        };
        assert!(
            at_ns >= self.cx.now_ns,
            "time went backwards: {at_ns} < {}",
            self.cx.now_ns
        );
        self.cx.now_ns = at_ns;
        self.handle(event);
        true
    }

    /// Process every event up to `deadline_ns`, then let time reach it.
    pub fn step_until(&mut self, deadline_ns: u64) {
        while self.cx.events.peek_time().is_some_and(|t| t <= deadline_ns) {
            self.step();
        }
        self.cx.now_ns = self.cx.now_ns.max(deadline_ns);
    }

    /// Run until no event is left.
    pub fn run(&mut self) {
        while self.step() {}
    }

    /// Run until at least `count` completions are waiting (or nothing is left to run).
    pub fn run_until_completions(&mut self, count: usize) {
        while self.completions.len() < count && self.step() {}
    }

    /// Run until the request of `slot` has completed and take its completion, leaving the
    /// others queued (the engine waits for a flush while other requests may be in flight).
    /// None when nothing is left to run before it completes.
    pub fn run_until_slot_completes(&mut self, slot: u32) -> Option<SimCompletion> {
        loop {
            if let Some(i) = self.completions.iter().position(|c| c.slot == slot) {
                return self.completions.remove(i);
            }
            let ready = self.completions.len();
            self.run_until_completions(ready + 1);
            if self.completions.len() == ready {
                return None;
            }
        }
    }

    pub(in crate::core) fn handle(&mut self, event: Event) {
        match event {
            Event::HostIssue { cmd } => self.on_host_issue(cmd),
            Event::CommandAtDevice { cmd } => match self.endpoints {
                Endpoints::Bridged(usb) => {
                    self.trace(cmd, TraceHook::CommandDelivered);
                    self.bridge_on_command(cmd, usb);
                }
                // `on_host_issue` sends a direct path's command to the drive.
                Endpoints::Direct(_) => unreachable!("no bridge on a direct path"),
            },
            Event::BridgeReady { cmd } => self.bridge_on_ready(cmd),
            Event::DriveCommand { cmd } => self.on_drive_command(cmd),
            Event::DataReady { cmd } => self.on_data_ready(cmd),
            Event::DataDone { cmd } => self.on_data_done(cmd),
            Event::Complete { cmd } => self.on_complete(cmd),
            Event::DriveWake => {
                self.drive_wake_pending = false;
                self.drive_serve_reads();
            }
            Event::DriverFlush => {
                let now = self.cx.now_ns;
                if let Some(at) = self.driver_buffer.on_timer(now) {
                    self.cx.schedule(at, Event::DriverFlush);
                }
                self.host_dispatch();
            }
        }
    }

    /// The report of everything simulated so far.
    pub fn report(&self) -> crate::report::SimReport {
        crate::report::build(crate::report::ReportParts {
            now_ns: self.cx.now_ns,
            servers: &self.cx.servers,
            usb: self.endpoints.is_usb(),
            high_speed: matches!(self.cx.usb, Some(UsbTiming::High(_))),
            transport: self.endpoints.kind(),
            fallback: self.fallback.as_deref(),
            max_outstanding_commands: self.max_outstanding,
            drive: self.drive.as_ref(),
            counters: &self.counters,
            store: &self.store,
            spec: &self.spec,
            faults: self.fault_counts(),
            unfired_faults: self.unfired_faults(),
        })
    }
}
