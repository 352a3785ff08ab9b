//! The simulator: one thread, one event queue, virtual time in nanoseconds. It owns the stack's
//! components (timing models and shared-resource servers), the commands in flight, the slot
//! buffers that carry payload and the drive's contents.
//!
//! Protocol-specific steps live beside this file, one per layer: `driver_bot.rs`,
//! `driver_uas.rs`, `driver_sata.rs`, `bridge.rs`.

use crate::command::{Command, Op};
use crate::drive::hdd::HddDrive;
use crate::drive::simple::SimpleDrive;
use crate::drive::ssd::SsdDrive;
use crate::drive::{Drive, DriveCommand};
use crate::error::SimError;
use crate::event::{CmdId, Event, EventQueue};
use crate::host::BlockLayer;
use crate::link_sata::SataLink;
use crate::link_usb2::Usb2Link;
use crate::link_usb3::Usb3Link;
use crate::pcie::{PcieLink, DESCRIPTOR_BYTES};
use crate::profile::{
    BridgeProfile, ControllerKind, DriveProfile, DriverKind, LinkProfile, ProfileSet, StackSpec,
    SECTOR_BYTES,
};
use crate::resource::{bytes_ns, ps_per_byte, Calendar, Flow};
use crate::store::Store;
use crate::trace::PcapRecorder;
use crate::xhci::Controller;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::collections::{BTreeMap, VecDeque};

/// Bytes per KiB, the unit of the host driver's per-size CPU cost.
const BYTES_PER_KIB: u64 = 1024;

/// errno for a request outside the device or not aligned to its logical block.
pub const ERRNO_EINVAL: i32 = 22;
/// Virtual time after which the simulator takes no more requests: 2^62 ns, 146 years. Profile
/// validation bounds every step of a command (`profile::STEP_NS_MAX` and the limits beside
/// it), so what the requests already accepted add stays far below the clock's 2^64 ns; a
/// stack slow enough to get here ends its run with an error instead of overflowing.
pub const CLOCK_LIMIT_NS: u64 = 1 << 62;
const BYTES_PER_MB: f64 = 1e6;

/// Indices of the shared-resource servers.
pub(crate) mod layer {
    pub const HOST_CPU: usize = 0;
    pub const CONTROLLER: usize = 1;
    pub const PCIE_UP: usize = 2;
    pub const PCIE_DOWN: usize = 3;
    pub const USB_OUT: usize = 4;
    pub const USB_IN: usize = 5;
    pub const BRIDGE_CPU: usize = 6;
    pub const BRIDGE_DATA: usize = 7;
    pub const SATA_LINK: usize = 8;
    pub const COUNT: usize = 9;
    pub const NAMES: [&str; COUNT] = [
        "host_cpu",
        "controller",
        "pcie_upstream",
        "pcie_downstream",
        "usb_out",
        "usb_in",
        "bridge_cpu",
        "bridge_data",
        "sata_link",
    ];
}

/// How commands travel between host and drive, after fallbacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// USB Bulk-Only Transport.
    Bot,
    /// USB Attached SCSI; `streams` at SuperSpeed, Read/Write Ready IUs at High-Speed.
    Uas { streams: bool },
    /// Direct SATA, AHCI with NCQ.
    SataNcq,
    /// Direct SATA, IDE mode (no NCQ).
    SataIde,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Bot => "bot",
            Transport::Uas { streams: true } => "uas-streams",
            Transport::Uas { streams: false } => "uas-ready-ius",
            Transport::SataNcq => "sata-ncq",
            Transport::SataIde => "sata-ide",
        }
    }
    pub fn is_usb(self) -> bool {
        matches!(self, Transport::Bot | Transport::Uas { .. })
    }
}

/// USB link timing at the speed the device runs.
#[derive(Clone, Debug)]
pub enum UsbTiming {
    High(Usb2Link),
    Super(Usb3Link),
}

impl UsbTiming {
    #[inline]
    pub fn transfer_ns(&self, bytes: u64) -> u64 {
        match self {
            UsbTiming::High(l) => l.transfer_ns(bytes),
            UsbTiming::Super(l) => l.transfer_ns(bytes),
        }
    }
    #[inline]
    pub fn first_piece_ns(&self, bytes: u64) -> u64 {
        match self {
            UsbTiming::High(l) => l.first_piece_ns(bytes),
            UsbTiming::Super(l) => l.first_piece_ns(bytes),
        }
    }
    /// When an IN transfer the device is ready for at `ready_ns` can start (High-Speed is
    /// host-polled; SuperSpeed devices notify with ERDY).
    #[inline]
    pub fn in_start_ns(&self, ready_ns: u64) -> u64 {
        match self {
            UsbTiming::High(l) => l.next_poll_ns(ready_ns),
            UsbTiming::Super(_) => ready_ns,
        }
    }
}

/// Bridge timing.
#[derive(Clone, Debug)]
pub(crate) struct BridgeTiming {
    pub profile: BridgeProfile,
    pub data_byte_ps: u64,
}

/// A request handed to the simulator. `slot` names the slot buffer that holds write data or
/// receives read data, and identifies the request until its completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimRequest {
    pub slot: u32,
    pub op: Op,
    pub offset_bytes: u64,
    pub len_bytes: u32,
}

/// A finished request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimCompletion {
    pub slot: u32,
    /// Bytes transferred, or a positive errno.
    pub result: Result<u32, i32>,
    pub done_ns: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct SlotState {
    active: bool,
    pieces_left: u32,
    len: u32,
}

/// Counters for the report.
#[derive(Clone, Debug, Default)]
pub(crate) struct Counters {
    pub host_requests: u64,
    pub host_request_bytes: u64,
    pub commands: u64,
    pub merged_requests: u64,
    pub rejected_requests: u64,
    pub trims_to_drive: u64,
    pub trims_not_translated: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Size of each read/write that reached the drive → count.
    pub drive_io_sizes: BTreeMap<u32, u64>,
    /// Smallest and largest host request sizes seen (read/write).
    pub host_size_min: u32,
    pub host_size_max: u32,
}

/// The deterministic discrete-event simulator of one stack.
pub struct Simulator {
    pub(crate) spec: StackSpec,
    pub(crate) transport: Transport,
    pub(crate) fallback: Option<String>,
    pub(crate) max_outstanding: u32,
    pub(crate) controller: Controller,
    pub(crate) pcie_up: PcieLink,
    pub(crate) pcie_down: PcieLink,
    pub(crate) usb: Option<UsbTiming>,
    pub(crate) sata: SataLink,
    pub(crate) bridge: Option<BridgeTiming>,
    pub(crate) servers: [Calendar; layer::COUNT],
    /// Server index of the USB IN direction (= USB_OUT on half-duplex High-Speed).
    pub(crate) usb_in: usize,
    pub(crate) drive: Box<dyn Drive>,
    /// Commands the drive may hold at once (NCQ depth in use, or 1).
    pub(crate) drive_slots: u32,
    pub(crate) at_drive: u32,
    /// NCQ tags of the commands at the drive (when it queues).
    pub(crate) ncq_tags: crate::link_sata::NcqTags,
    pub(crate) bridge_waiting: VecDeque<CmdId>,
    /// Reads the drive has accepted and not started, oldest first (its NCQ queue), with their
    /// decoded commands alongside for [`Drive::pick_read`].
    drive_reads: Vec<CmdId>,
    drive_read_commands: Vec<DriveCommand>,
    /// A DriveWake event is pending.
    drive_wake_pending: bool,
    /// Write data gathered for drives that look at it (compression).
    drive_payload: Vec<u8>,

    now_ns: u64,
    events: EventQueue,
    pub(crate) rng: ChaCha8Rng,
    block: BlockLayer,
    pub(crate) commands: Vec<Command>,
    free_commands: Vec<CmdId>,
    outstanding: u32,
    pub(crate) next_tag: u32,
    slots: Vec<SlotState>,
    pub(crate) slot_bytes: usize,
    pub(crate) slot_buffers: Vec<u8>,
    /// Per slot: its buffer is known to hold only zeros (so a read of never-written blocks
    /// need not zero it again). Cleared when the caller borrows the buffer mutably.
    slot_zero: Vec<bool>,
    completions: VecDeque<SimCompletion>,
    pub(crate) store: Store,
    store_payload: bool,
    pub(crate) counters: Counters,
    pub(crate) pcap: Option<PcapRecorder>,
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

    /// Build the simulator of a resolved stack.
    pub fn new(spec: StackSpec, seed: u64) -> Result<Simulator, SimError> {
        let controller = Controller::new(&spec.controller);
        let usb = spec.usb_link.as_ref().map(|l| match l {
            LinkProfile::Usb2Hs(p) => UsbTiming::High(Usb2Link::new(p)),
            LinkProfile::Usb3Ss(p) => UsbTiming::Super(Usb3Link::new(p)),
            LinkProfile::Sata(_) => unreachable!("validated: usb_link is a USB link"),
        });
        let bridge = spec.bridge.as_ref().map(|b| BridgeTiming {
            profile: b.clone(),
            data_byte_ps: ps_per_byte(b.data_rate_mb_s as f64 * BYTES_PER_MB),
        });
        let drive: Box<dyn Drive> = match &spec.drive {
            DriveProfile::Simple(p) => Box::new(SimpleDrive::new(p)),
            DriveProfile::Ssd(p) => Box::new(SsdDrive::new(p)),
            DriveProfile::Hdd(p) => Box::new(HddDrive::new(p)),
        };
        let high_speed = matches!(usb, Some(UsbTiming::High(_)));

        // Which transport actually runs, and how many commands it can keep outstanding.
        let host = &spec.host;
        let mut fallback = None;
        let (transport, max_outstanding, drive_slots) = match host.driver {
            DriverKind::Bot => (Transport::Bot, 1, 1),
            DriverKind::Uas => {
                let b = &bridge
                    .as_ref()
                    .expect("validated: USB stacks have a bridge")
                    .profile;
                if !b.supports_uas {
                    fallback = Some(format!(
                        "bridge `{}` does not support UAS: the host uses BOT",
                        spec.bridge_name.as_deref().unwrap_or("?")
                    ));
                    (Transport::Bot, 1, 1)
                } else if !high_speed && !controller.supports_streams {
                    fallback = Some(format!(
                        "controller `{}` has no bulk streams, which UAS needs at SuperSpeed: \
                         the host uses BOT",
                        spec.controller_name
                    ));
                    (Transport::Bot, 1, 1)
                } else {
                    let mut tags = host.max_outstanding_commands.min(b.max_uas_tags);
                    if !high_speed {
                        // Stream ids are the tags; tag 0 is not a valid stream.
                        tags = tags.min(controller.max_streams);
                    }
                    let drive_slots = if b.uses_ncq {
                        b.ncq_depth.min(drive.queue_depth())
                    } else {
                        1
                    };
                    (
                        Transport::Uas {
                            streams: !high_speed,
                        },
                        tags,
                        drive_slots,
                    )
                }
            }
            DriverKind::SataAhci => {
                let depth = host.max_outstanding_commands.min(drive.queue_depth());
                if depth > 1 {
                    (Transport::SataNcq, depth, depth)
                } else {
                    (Transport::SataIde, 1, 1)
                }
            }
            DriverKind::SataIde => (Transport::SataIde, 1, 1),
        };
        let max_transfer = match (high_speed, host.max_transfer_bytes_high_speed) {
            (true, Some(hs)) => hs,
            _ => host.max_transfer_bytes,
        };
        let usb_in = if high_speed {
            layer::USB_OUT
        } else {
            layer::USB_IN
        };

        Ok(Simulator {
            transport,
            fallback,
            max_outstanding,
            pcie_up: PcieLink::new(&spec.controller.pcie),
            pcie_down: PcieLink::new(&spec.controller.pcie),
            controller,
            usb,
            sata: SataLink::new(&spec.sata_link),
            bridge,
            servers: std::array::from_fn(|_| Calendar::for_commands(max_outstanding as usize)),
            usb_in,
            drive,
            drive_slots,
            at_drive: 0,
            ncq_tags: crate::link_sata::NcqTags::new(drive_slots, max_outstanding as usize),
            bridge_waiting: VecDeque::new(),
            drive_reads: Vec::new(),
            drive_read_commands: Vec::new(),
            drive_wake_pending: false,
            drive_payload: Vec::new(),
            now_ns: 0,
            events: EventQueue::with_bound(2 * max_outstanding as usize + 16),
            rng: ChaCha8Rng::seed_from_u64(seed),
            block: BlockLayer::new(max_transfer, host.max_trim_bytes, host.merge_adjacent),
            commands: Vec::new(),
            free_commands: Vec::new(),
            outstanding: 0,
            next_tag: 0,
            slots: Vec::new(),
            slot_bytes: 0,
            slot_buffers: Vec::new(),
            slot_zero: Vec::new(),
            completions: VecDeque::new(),
            store: Store::new(),
            store_payload: true,
            counters: Counters {
                host_size_min: u32::MAX,
                ..Counters::default()
            },
            pcap: None,
            spec,
        })
    }

    /// Allocate `slots` payload buffers of `slot_bytes` each. Call before the first request;
    /// calling again resizes (only when nothing is outstanding).
    pub fn setup_slots(&mut self, slots: u32, slot_bytes: usize) -> Result<(), SimError> {
        if self.outstanding > 0 || self.slots.iter().any(|s| s.active) {
            return Err(SimError::Request(
                "cannot resize slots while requests are outstanding".into(),
            ));
        }
        self.slots = vec![SlotState::default(); slots as usize];
        self.slot_bytes = slot_bytes;
        self.slot_buffers = vec![0u8; slots as usize * slot_bytes];
        self.slot_zero = vec![true; slots as usize];
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
    }

    pub fn slot_buffer(&self, slot: u32) -> &[u8] {
        let start = slot as usize * self.slot_bytes;
        &self.slot_buffers[start..start + self.slot_bytes]
    }

    pub fn slot_buffer_mut(&mut self, slot: u32) -> &mut [u8] {
        self.slot_zero[slot as usize] = false;
        let start = slot as usize * self.slot_bytes;
        &mut self.slot_buffers[start..start + self.slot_bytes]
    }

    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.drive.capacity_bytes()
    }

    pub fn stack(&self) -> &StackSpec {
        &self.spec
    }

    pub fn transport(&self) -> Transport {
        self.transport
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
        self.drive.cache_occupancy(self.now_ns)
    }

    /// Requests accepted and not yet completed.
    pub fn requests_in_flight(&self) -> usize {
        self.slots.iter().filter(|s| s.active).count()
    }

    /// Hand a request to the host's block layer at the current virtual time.
    pub fn submit(&mut self, request: SimRequest) -> Result<(), SimError> {
        if self.now_ns >= CLOCK_LIMIT_NS {
            return Err(SimError::Request(format!(
                "virtual time reached {} ns (146 years): the stack's timings are too slow to \
                 simulate further",
                self.now_ns
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
        let valid = request.len_bytes > 0
            && request.offset_bytes.is_multiple_of(block)
            && u64::from(request.len_bytes).is_multiple_of(block)
            && end.is_some_and(|e| e <= self.drive.capacity_bytes());
        if !valid {
            self.counters.rejected_requests += 1;
            self.completions.push_back(SimCompletion {
                slot: request.slot,
                result: Err(ERRNO_EINVAL),
                done_ns: self.now_ns,
            });
            return Ok(());
        }
        if request.op != Op::Trim {
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
        let Some((at_ns, event)) = self.events.pop() else {
            return false;
        };
        assert!(
            at_ns >= self.now_ns,
            "time went backwards: {at_ns} < {}",
            self.now_ns
        );
        self.now_ns = at_ns;
        self.handle(event);
        true
    }

    /// Process every event up to `deadline_ns`, then let time reach it.
    pub fn step_until(&mut self, deadline_ns: u64) {
        while self.events.peek_time().is_some_and(|t| t <= deadline_ns) {
            self.step();
        }
        self.now_ns = self.now_ns.max(deadline_ns);
    }

    /// Run until no event is left.
    pub fn run(&mut self) {
        while self.step() {}
    }

    /// Run until at least `count` completions are waiting (or nothing is left to run).
    pub fn run_until_completions(&mut self, count: usize) {
        while self.completions.len() < count && self.step() {}
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::HostIssue { cmd } => match self.transport {
                Transport::Bot => {
                    self.bot_issue(cmd);
                    self.trace_issue(cmd);
                }
                Transport::Uas { .. } => {
                    self.uas_issue(cmd);
                    self.trace_issue(cmd);
                }
                Transport::SataNcq | Transport::SataIde => self.sata_issue(cmd),
            },
            Event::CommandAtDevice { cmd } => {
                self.trace_command_delivered(cmd);
                self.bridge_on_command(cmd);
            }
            Event::BridgeReady { cmd } => self.bridge_on_ready(cmd),
            Event::DriveCommand { cmd } => self.on_drive_command(cmd),
            Event::DataReady { cmd } => self.on_data_ready(cmd),
            Event::DataDone { cmd } => self.on_data_done(cmd),
            Event::Complete { cmd } => self.on_complete(cmd),
            Event::DriveWake => {
                self.drive_wake_pending = false;
                self.drive_serve_reads();
            }
        }
    }

    /// Reserve work on a shared resource (see [`Calendar::reserve`]).
    #[inline]
    pub(crate) fn reserve(
        &mut self,
        layer: usize,
        earliest_ns: u64,
        duration_ns: u64,
        bytes: u64,
    ) -> u64 {
        let now = self.now_ns;
        self.servers[layer].reserve(now, earliest_ns, duration_ns, bytes)
    }

    /// Pass a data stream through a shared resource (see [`Calendar::pass`]).
    #[inline]
    pub(crate) fn pass(
        &mut self,
        layer: usize,
        upstream: Flow,
        duration_ns: u64,
        first_piece_ns: u64,
        bytes: u64,
    ) -> Flow {
        let now = self.now_ns;
        self.servers[layer].pass(now, upstream, duration_ns, first_piece_ns, bytes)
    }

    #[inline]
    pub(crate) fn schedule(&mut self, at_ns: u64, event: Event) {
        debug_assert!(at_ns >= self.now_ns);
        self.events.push(at_ns, event);
    }

    #[inline]
    pub(crate) fn cmd(&self, id: CmdId) -> &Command {
        &self.commands[id as usize]
    }

    #[inline]
    pub(crate) fn cmd_mut(&mut self, id: CmdId) -> &mut Command {
        &mut self.commands[id as usize]
    }

    /// Build commands from the block layer while the driver has room.
    fn host_dispatch(&mut self) {
        while self.outstanding < self.max_outstanding && self.block.has_pending() {
            let id = match self.free_commands.pop() {
                Some(id) => id,
                None => {
                    self.commands.push(Command::new());
                    (self.commands.len() - 1) as CmdId
                }
            };
            let plan = self
                .block
                .take(&mut self.commands[id as usize].parts)
                .expect("a request is pending");
            self.outstanding += 1;
            assert!(self.outstanding <= self.max_outstanding);
            self.counters.commands += 1;
            self.counters.merged_requests += u64::from(plan.part_count) - 1;
            let now = self.now_ns;
            let host = &self.spec.host;
            // A BOT driver that chains its transfers maps the data buffer when it submits the
            // data transfer, after the CBW's completion (`bot_issue`); the other drivers map
            // it before the command goes out.
            let submit_ns = if self.bot_chains_transfers() {
                host.submit_cpu_ns
            } else {
                host.submit_cpu_ns + self.buffer_cpu_ns(plan.len)
            };
            let issue_at = self.reserve(layer::HOST_CPU, now, submit_ns, 0);
            let c = &mut self.commands[id as usize];
            c.op = plan.op;
            c.offset_bytes = plan.offset_bytes;
            c.len_bytes = plan.len;
            c.part_count = plan.part_count;
            c.holds_drive_slot = false;
            c.issued_ns = issue_at;
            self.schedule(issue_at, Event::HostIssue { cmd: id });
        }
    }

    /// Host CPU to map a command's data buffer of `bytes` (`cpu_ns_per_kib` per KiB started).
    #[inline]
    pub(crate) fn buffer_cpu_ns(&self, bytes: u32) -> u64 {
        self.spec.host.cpu_ns_per_kib * u64::from(bytes).div_ceil(BYTES_PER_KIB)
    }

    /// The host's work when one of a BOT command's transfers completes and the driver submits
    /// the next one: the transfer event's interrupt plus the hand-off (`phase_cpu_ns`) plus
    /// `extra_ns`. Booked on the host CPU from `at_ns`; returns when the next transfer is queued.
    pub(crate) fn bot_hand_off(&mut self, at_ns: u64, extra_ns: u64) -> u64 {
        let cpu = self.controller.interrupt_cpu_ns + self.spec.host.phase_cpu_ns + extra_ns;
        self.reserve(layer::HOST_CPU, at_ns, cpu, 0)
    }

    /// The drive received an ATA command.
    fn on_drive_command(&mut self, id: CmdId) {
        let now = self.now_ns;
        let c = self.cmd(id);
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
                // The drive asks for the data: DMA Setup (NCQ) or DMA Activate.
                let fis = match self.transport {
                    Transport::SataIde | Transport::Bot => crate::link_sata::FIS_DMA_ACTIVATE_BYTES,
                    _ if self.drive_slots > 1 => crate::link_sata::FIS_DMA_SETUP_BYTES,
                    _ => crate::link_sata::FIS_DMA_ACTIVATE_BYTES,
                };
                let ns = self.sata.fis_ns(fis);
                let ready = self.reserve(layer::SATA_LINK, now, ns, 0);
                self.schedule(ready, Event::DataReady { cmd: id });
            }
            Op::Trim => {
                // Direct SATA: the DSM payload follows the command.
                self.schedule(now, Event::DataReady { cmd: id });
            }
        }
    }

    /// Start queued reads while the drive can take one (at once for SSDs; when the head is
    /// free for an HDD, which picks the read it reaches soonest).
    fn drive_serve_reads(&mut self) {
        while !self.drive_reads.is_empty() {
            let now = self.now_ns;
            let ready = self.drive.read_ready_ns(now, &self.drive_read_commands);
            if ready > now {
                if !self.drive_wake_pending {
                    self.drive_wake_pending = true;
                    self.schedule(ready, Event::DriveWake);
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
            self.cmd_mut(id).media = media;
            self.schedule(media.start_ns, Event::DataReady { cmd: id });
        }
    }

    /// Hand a write's data (arriving as `at_drive`) to the drive; returns when it completes.
    fn drive_write(&mut self, id: CmdId, at_drive: Flow) -> u64 {
        let device = self.cmd(id).device;
        if !self.drive.wants_payload() {
            return self
                .drive
                .write(at_drive, &device, None, &mut self.rng)
                .end_ns;
        }
        self.drive_payload.clear();
        let c = &self.commands[id as usize];
        for part in c.parts() {
            let start = part.slot as usize * self.slot_bytes + part.slot_offset as usize;
            self.drive_payload
                .extend_from_slice(&self.slot_buffers[start..start + part.len as usize]);
        }
        self.drive
            .write(at_drive, &device, Some(&self.drive_payload), &mut self.rng)
            .end_ns
    }

    fn count_drive_io(&mut self, device: &DriveCommand) {
        let bytes = device.blocks * SECTOR_BYTES;
        *self.counters.drive_io_sizes.entry(bytes).or_insert(0) += 1;
    }

    /// Data can move: compute its pipelined path through every layer.
    fn on_data_ready(&mut self, id: CmdId) {
        let now = self.now_ns;
        let c = self.cmd(id);
        let (op, len) = (c.op, u64::from(c.len_bytes));
        let done = match (op, self.transport.is_usb()) {
            (Op::Read, true) => {
                let media = self.cmd(id).media;
                let at_bridge = self.sata_read_data(media, len);
                let through = self.bridge_data(at_bridge, len);
                let announced = self.uas_read_ready(id, through);
                let queued = self.bot_data_queued(id, announced);
                let on_bus = self.usb_data_in(queued, len);
                let at_host = self.host_data_in(on_bus, len);
                self.bot_data_completed(id, at_host.end_ns);
                at_host.end_ns
            }
            (Op::Write, true) if self.cmd(id).buffered => {
                // BOT: the data is in the bridge's buffer (`bridge_on_command`).
                let at_drive = self.sata_data(Flow::ready_at(now), len);
                self.drive_write(id, at_drive)
            }
            (Op::Write, true) => {
                let start = self.uas_write_ready(id, now);
                let start = start.max(self.bot_data_urb_ns(id));
                let from_host = self.host_data_out(Flow::ready_at(start), len);
                let on_bus = self.usb_data_out(from_host, len);
                self.bot_data_completed(id, on_bus.end_ns);
                let through = self.bridge_data(on_bus, len);
                let at_drive = self.sata_data(through, len);
                self.drive_write(id, at_drive)
            }
            (Op::Trim, true) => {
                // UNMAP parameter list, host to bridge.
                let start = self.uas_write_ready(id, now);
                let start = start.max(self.bot_data_urb_ns(id));
                let from_host = self.host_data_out(
                    Flow::ready_at(start),
                    crate::command::UNMAP_LIST_BYTES as u64,
                );
                let on_bus = self.usb_data_out(from_host, crate::command::UNMAP_LIST_BYTES as u64);
                self.bot_data_completed(id, on_bus.end_ns);
                on_bus.end_ns
            }
            (Op::Read, false) => {
                let media = self.cmd(id).media;
                let on_link = self.sata_read_data(media, len);
                self.host_data_in(on_link, len).end_ns
            }
            (Op::Write, false) => {
                let from_host = self.host_data_out(Flow::ready_at(now), len);
                let on_link = self.sata_data(from_host, len);
                self.drive_write(id, on_link)
            }
            (Op::Trim, false) => self.sata_trim_payload(id),
        };
        self.schedule(done, Event::DataDone { cmd: id });
    }

    /// SATA link data phase (Data FISes).
    #[inline]
    pub(crate) fn sata_data(&mut self, upstream: Flow, len: u64) -> Flow {
        let (d, p) = (self.sata.data_ns(len), self.sata.first_piece_ns(len));
        self.pass(layer::SATA_LINK, upstream, d, p, len)
    }

    /// A read's data phase on the SATA link: with NCQ the drive first sends a DMA Setup FIS
    /// naming the tag, in the same link booking (the FIS and the data follow back to back).
    #[inline]
    fn sata_read_data(&mut self, upstream: Flow, len: u64) -> Flow {
        let setup_ns = if self.drive_slots > 1 {
            self.sata.fis_ns(crate::link_sata::FIS_DMA_SETUP_BYTES)
        } else {
            0
        };
        let d = setup_ns + self.sata.data_ns(len);
        let p = setup_ns + self.sata.first_piece_ns(len);
        self.pass(layer::SATA_LINK, upstream, d, p, len)
    }

    /// The bridge's internal data path.
    #[inline]
    pub(crate) fn bridge_data(&mut self, upstream: Flow, len: u64) -> Flow {
        let b = self.bridge.as_ref().expect("USB stacks have a bridge");
        let piece = len.min(b.profile.forward_chunk_bytes.into());
        let (d, p) = (
            bytes_ns(len, b.data_byte_ps),
            bytes_ns(piece, b.data_byte_ps),
        );
        self.pass(layer::BRIDGE_DATA, upstream, d, p, len)
    }

    /// USB data IN: waits for the host's poll at High-Speed.
    #[inline]
    fn usb_data_in(&mut self, mut upstream: Flow, len: u64) -> Flow {
        let usb = self.usb.as_ref().expect("USB stack");
        let ready = upstream.start_ns + upstream.first_piece_ns;
        upstream.start_ns += usb.in_start_ns(ready) - ready;
        let (d, p) = (usb.transfer_ns(len), usb.first_piece_ns(len));
        self.pass(self.usb_in, upstream, d, p, len)
    }

    #[inline]
    pub(crate) fn usb_data_out(&mut self, upstream: Flow, len: u64) -> Flow {
        let usb = self.usb.as_ref().expect("USB stack");
        let (d, p) = (usb.transfer_ns(len), usb.first_piece_ns(len));
        self.pass(layer::USB_OUT, upstream, d, p, len)
    }

    /// Device to host memory: controller descriptor processing, then PCIe writes upstream.
    #[inline]
    fn host_data_in(&mut self, upstream: Flow, len: u64) -> Flow {
        let (cd, cp) = (
            self.controller.transfer_ns(len),
            self.controller.first_piece_ns(),
        );
        let ctl = self.pass(layer::CONTROLLER, upstream, cd, cp, 0);
        let (d, p) = (
            self.pcie_up.transfer_ns(len),
            self.pcie_up.first_piece_ns(len),
        );
        self.pass(layer::PCIE_UP, ctl, d, p, len)
    }

    /// Host memory to device: the controller reads the transfer's descriptors, then its data,
    /// with Memory Read requests (`pcie::PcieLink::read_ns`: round trips bounded by its tags);
    /// the requests themselves go up the link. Then the controller's own work.
    #[inline]
    pub(crate) fn host_data_out(&mut self, upstream: Flow, len: u64) -> Flow {
        // An AHCI controller read its PRDs with the command table (`sata_issue`); an xHCI
        // reads the transfer's TRBs now.
        let descriptors = match self.controller.kind {
            ControllerKind::Ahci => 0,
            ControllerKind::Xhci => self.controller.descriptors(len) * DESCRIPTOR_BYTES,
        };
        let descriptors_ns = if descriptors == 0 {
            0
        } else {
            self.pcie_down.read_ns(descriptors)
        };
        let (d, p) = (
            descriptors_ns + self.pcie_down.read_ns(len),
            descriptors_ns + self.pcie_down.read_first_piece_ns(len),
        );
        let pcie = self.pass(layer::PCIE_DOWN, upstream, d, p, len);
        let requests_ns = if descriptors == 0 {
            0
        } else {
            self.pcie_down.read_requests_ns(descriptors)
        } + self.pcie_down.read_requests_ns(len);
        self.reserve(layer::PCIE_UP, pcie.start_ns, requests_ns, 0);
        let (cd, cp) = (
            self.controller.transfer_ns(len),
            self.controller.first_piece_ns(),
        );
        self.pass(layer::CONTROLLER, pcie, cd, cp, 0)
    }

    /// A small host-to-device message (CBW, Command IU) on the USB OUT direction, after
    /// `queue_ns` of controller work for transfers the driver queues alongside it (UAS status
    /// and data URBs), booked together since the driver rings the doorbells at once.
    pub(crate) fn usb_message_out(&mut self, at_ns: u64, bytes: u64, queue_ns: u64) -> u64 {
        let t = self.reserve(
            layer::CONTROLLER,
            at_ns,
            queue_ns + self.controller.transfer_ns(bytes),
            0,
        );
        // The controller reads the TRB, then the message it points to: two round trips.
        let t = self.reserve(
            layer::PCIE_DOWN,
            t,
            self.pcie_down.read_ns(DESCRIPTOR_BYTES) + self.pcie_down.read_ns(bytes),
            bytes,
        );
        let usb = self.usb.as_ref().expect("USB stack");
        let ns = usb.transfer_ns(bytes);
        self.reserve(layer::USB_OUT, t, ns, bytes)
    }

    /// A small device-to-host message (CSW, Sense IU, Ready IU): bus, PCIe, event processing.
    pub(crate) fn usb_message_in(&mut self, at_ns: u64, bytes: u64) -> u64 {
        let usb = self.usb.as_ref().expect("USB stack");
        let (start, ns) = (usb.in_start_ns(at_ns), usb.transfer_ns(bytes));
        let t = self.reserve(self.usb_in, start, ns, bytes);
        let t = self.reserve(
            layer::PCIE_UP,
            t,
            self.pcie_up.transfer_ns(bytes + DESCRIPTOR_BYTES),
            bytes,
        );
        self.reserve(layer::CONTROLLER, t, self.controller.transfer_ns(bytes), 0)
    }

    /// The data phase ended: move payload, free the drive slot, send status.
    fn on_data_done(&mut self, id: CmdId) {
        let now = self.now_ns;
        let op = self.cmd(id).op;
        let mut status_from = now;
        match op {
            Op::Read => {
                self.move_payload(id, false);
                self.trace_data_done(id);
            }
            Op::Write => {
                self.move_payload(id, true);
                self.trace_data_done(id);
            }
            Op::Trim => {
                if self.transport.is_usb() {
                    self.trace_data_done(id);
                    status_from = self.bridge_unmap(id);
                } else {
                    status_from = self.sata_trim_execute(id);
                }
            }
        }
        let released_slot = self.cmd(id).holds_drive_slot;
        if released_slot {
            self.cmd_mut(id).holds_drive_slot = false;
            self.at_drive -= 1;
        }
        // Status first: its Set Device Bits FIS gives the NCQ tag back before the bridge can
        // hand the tag to the next command.
        match self.transport {
            Transport::Bot | Transport::Uas { .. } => self.bridge_send_status(id, status_from),
            Transport::SataNcq | Transport::SataIde => self.sata_send_status(id, status_from),
        }
        if released_slot && self.transport.is_usb() {
            self.bridge_dispatch();
        }
    }

    /// Copy payload between the slot buffers and the drive's store, at the LBA the device
    /// decoded (so a codec bug shows up as wrong data).
    fn move_payload(&mut self, id: CmdId, write: bool) {
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
                    self.store.write(offset, &self.slot_buffers[range]);
                } else {
                    let slot = part.slot as usize;
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
        } else {
            self.counters.bytes_read += u64::from(c.len_bytes);
        }
    }

    /// Status reaches host memory at `at_ns`: the interrupt and the driver's completion work
    /// are booked on the host CPU from then, and the command completes after them.
    pub(crate) fn status_at_host(&mut self, id: CmdId, at_ns: u64) {
        self.trace_status(id, at_ns);
        let cpu = self.controller.interrupt_cpu_ns + self.spec.host.complete_cpu_ns;
        let done = self.reserve(layer::HOST_CPU, at_ns, cpu, 0);
        self.schedule(done, Event::Complete { cmd: id });
    }

    fn on_complete(&mut self, id: CmdId) {
        // The driver checks the status it received (tags asserted across layers).
        match self.transport {
            Transport::Bot => self.bot_check_status(id),
            Transport::Uas { .. } => self.uas_check_status(id),
            Transport::SataNcq | Transport::SataIde => {}
        }
        let now = self.now_ns;
        let part_count = usize::from(self.commands[id as usize].part_count);
        for i in 0..part_count {
            let slot = self.commands[id as usize].parts[i].slot as usize;
            let s = &mut self.slots[slot];
            assert!(s.active && s.pieces_left > 0, "completion for an idle slot");
            s.pieces_left -= 1;
            if s.pieces_left == 0 {
                s.active = false;
                self.completions.push_back(SimCompletion {
                    slot: slot as u32,
                    result: Ok(s.len),
                    done_ns: now,
                });
            }
        }
        self.free_commands.push(id);
        self.outstanding -= 1;
        self.host_dispatch();
    }

    /// Next transport tag (BOT: any 32-bit value, echoed in the CSW).
    pub(crate) fn take_tag(&mut self) -> u32 {
        self.next_tag = self.next_tag.wrapping_add(1);
        self.next_tag
    }

    /// Server state by layer name (for reports and tests).
    pub(crate) fn server(&self, index: usize) -> &Calendar {
        &self.servers[index]
    }
}
