//! The simulator: one thread, one event queue, virtual time in nanoseconds. It owns the stack's
//! components (timing models and shared-resource servers), the commands in flight, the slot
//! buffers that carry payload and the drive's contents.
//!
//! This is the core, and the only `impl Simulator` (a tidy test keeps it so): it assembles the
//! components once from the stack (`Endpoints` in `transport.rs`, `DeviceLink` in
//! `device_link.rs`, `Bridge`, the drive) and sequences each phase of a command, matching the
//! transport and the drive link whole. The components work on the narrow context `Cx`
//! (`cx.rs`), never on the simulator. See docs/decisions/0012-sim-seams.md.

use crate::bridge::Bridge;
use crate::command::{Command, Op, UNMAP_LIST_BYTES};
pub use crate::cx::UsbTiming;
use crate::cx::{layer, Cx};
use crate::device_link::{DeviceLink, SataPort};
use crate::drive::hdd::HddDrive;
use crate::drive::simple::SimpleDrive;
use crate::drive::ssd::SsdDrive;
use crate::drive::{Drive, DriveCommand, COMPRESSION_PIECE_BYTES, UNKNOWN_COMPRESSED_BYTES};
use crate::driver_bot::Bot;
use crate::driver_buffer::{DriverBuffer, Serve};
use crate::driver_sata::Ahci;
use crate::driver_uas::{Answer, ReadyIu, TaskManagement, Uas};
use crate::error::SimError;
use crate::event::{CmdId, Event, EventQueue};
use crate::fault::{
    CommandFault, FaultCounts, FaultInjector, FaultKind, FaultOutcome, FaultPlan, FaultRecord,
    HangRecovery, PowerLossRecord, LINUX_NOT_READY_RETRY_DELAY_NS,
};
use crate::host::BlockLayer;
use crate::link_sata::{NcqTags, SataLink};
use crate::link_usb2::Usb2Link;
use crate::link_usb3::Usb3Link;
use crate::pcie::PcieLink;
use crate::power::PowerJournal;
use crate::profile::{DriveProfile, DriverKind, LinkProfile, ProfileSet, StackSpec, SECTOR_BYTES};
use crate::resource::{Calendar, Flow};
use crate::scsi::ScsiOp;
use crate::store::{SourceMatch, Store};
use crate::trace::{
    PcapRecorder, TraceEvent, TracedCommand, Urb, CAPTURE_DATA_BYTES_MAX, STATUS_URB_BYTES,
    URB_KILLED, URB_STALLED, URB_UNLINKED,
};
use crate::transport::Endpoints;
use crate::usb_reset::{link_loss_seen, DeviceReset, LinkLossSeen, PortReset};
use crate::xhci::Controller;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::collections::{BTreeMap, VecDeque};
use storlab_wire::bot::CSW_LEN;
use storlab_wire::usb::SetupPacket;

/// The mass-storage interface (`wire`'s enumeration emits interface 0; BOT is its alternate
/// setting 0, UAS alternate setting 1).
const MASS_STORAGE_INTERFACE: u8 = 0;
/// Get Max LUN answers one byte (BOT 1.0 §3.2).
const MAX_LUN_BYTES: u64 = 1;
/// usb-storage gives a class request 5 s (`usb_stor_reset_common`:
/// `usb_stor_control_msg(..., 5 * HZ)`, drivers/usb/storage/transport.c).
const LINUX_USB_STOR_RESET_TIMEOUT_NS: u64 = 5_000_000_000;
/// usbmon's status of a URB ended because its device went away (`usb_hcd_flush_endpoint` at
/// disconnect: -ESHUTDOWN).
const URB_SHUT_DOWN: i32 = -108;

/// errno for a request outside the device or not aligned to its logical block.
pub const ERRNO_EINVAL: i32 = 22;
/// errno of a read the drive could not do (MEDIUM ERROR): Linux's SCSI midlayer fails it with
/// `BLK_STS_MEDIUM`, which the block layer returns as -ENODATA (block/blk-core.c
/// `blk_errors`).
pub const ERRNO_ENODATA: i32 = 61;
/// errno of a command that still failed after the host's retries (`BLK_STS_IOERR`).
pub const ERRNO_EIO: i32 = 5;
/// errno of a discard on a queue without discard (`HostProfile::discard = false`): Linux's
/// `blkdev_issue_discard` returns -EOPNOTSUPP when `bdev_max_discard_sectors` is 0.
pub const ERRNO_EOPNOTSUPP: i32 = 95;
/// Virtual time after which the simulator takes no more requests: 2^62 ns, 146 years. Profile
/// validation bounds every step of a command (`profile::STEP_NS_MAX` and the limits beside
/// it), so what the requests already accepted add stays far below the clock's 2^64 ns; a
/// stack slow enough to get here ends its run with an error instead of overflowing.
pub const CLOCK_LIMIT_NS: u64 = 1 << 62;

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
        match self {
            Transport::Bot | Transport::Uas { .. } => true,
            Transport::SataNcq | Transport::SataIde => false,
        }
    }
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
    /// A command carrying part of this request failed with this errno (0: none did).
    errno: i32,
}

/// Counters for the report.
#[derive(Clone, Debug, Default)]
pub(crate) struct Counters {
    pub host_requests: u64,
    pub host_request_bytes: u64,
    pub commands: u64,
    pub merged_requests: u64,
    /// Reads the host driver served from its own read-ahead.
    pub driver_buffer_reads: u64,
    pub rejected_requests: u64,
    pub trims_to_drive: u64,
    pub trims_not_translated: u64,
    /// Cache flushes the drive carried out.
    pub flushes_to_drive: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Size of each read/write that reached the drive → count.
    pub drive_io_sizes: BTreeMap<u32, u64>,
    /// Smallest and largest host request sizes seen (read/write).
    pub host_size_min: u32,
    pub host_size_max: u32,
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

    /// Build the simulator of a resolved stack: negotiate the transport (with its fallbacks)
    /// and assemble each component once.
    pub fn new(spec: StackSpec, seed: u64) -> Result<Simulator, SimError> {
        let controller = Controller::new(&spec.controller);
        let usb = spec.usb_link.as_ref().map(|l| match l {
            LinkProfile::Usb2Hs(p) => UsbTiming::High(Usb2Link::new(p)),
            LinkProfile::Usb3Ss(p) => UsbTiming::Super(Usb3Link::new(p)),
            LinkProfile::Sata(_) => unreachable!("validated: usb_link is a USB link"),
        });
        let bridge = spec.bridge.as_ref().map(Bridge::new);
        let drive: Box<dyn Drive> = match &spec.drive {
            DriveProfile::Simple(p) => Box::new(SimpleDrive::new(p)),
            DriveProfile::Ssd(p) => Box::new(SsdDrive::new(p)),
            DriveProfile::Hdd(p) => Box::new(HddDrive::new(p)),
        };
        let high_speed = matches!(usb, Some(UsbTiming::High(_)));

        // Which transport actually runs, and how many commands it can keep outstanding.
        let host = &spec.host;
        let mut fallback = spec.host_fallback.clone();
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
                    let mut depth = host.max_outstanding_commands.min(b.max_uas_tags);
                    if !high_speed {
                        // Stream ids are the tags; tag 0 is not a valid stream.
                        depth = depth
                            .min(controller.max_streams)
                            .min(b.uas_streams.unwrap_or(u32::MAX));
                    } else if let Some(hs_depth) = host.uas_queue_depth_high_speed {
                        depth = hs_depth.min(b.max_uas_tags);
                    }
                    let tags = depth.saturating_sub(host.uas_tags_held_back).max(1);
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
        let endpoints = match transport {
            Transport::Bot => Endpoints::Bot(Bot::new(host.chains_transfers, max_outstanding)),
            Transport::Uas { streams } => Endpoints::Uas(Uas {
                streams,
                // One past the command tags (1..=max_outstanding); with all 65535 in use,
                // 0 is the one no command holds (TM IUs go on the command pipe, not a stream).
                task_management_tag: u16::try_from(max_outstanding + 1).unwrap_or(0),
            }),
            Transport::SataNcq => Endpoints::Ahci(Ahci::new(true)),
            Transport::SataIde => Endpoints::Ahci(Ahci::new(false)),
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
        let link = DeviceLink::Sata(SataPort {
            link: SataLink::new(&spec.sata_link),
            ncq_tags: NcqTags::new(drive_slots, max_outstanding as usize),
            slots: drive_slots,
        });
        let cx = Cx {
            now_ns: 0,
            events: EventQueue::with_bound(2 * max_outstanding as usize + 16),
            servers: std::array::from_fn(|_| Calendar::for_commands(max_outstanding as usize)),
            usb_in,
            pcie_up: PcieLink::new(&spec.controller.pcie),
            pcie_down: PcieLink::new(&spec.controller.pcie),
            controller,
            usb,
            host: spec.host.clone(),
            faults: None,
        };

        let mut sim = Simulator {
            fallback,
            max_outstanding,
            cx,
            endpoints,
            bridge,
            link,
            drive,
            at_drive: 0,
            flush_at_drive: false,
            flushes_at_bridge: 0,
            ahci_ncq: transport == Transport::SataNcq,
            flushes_outstanding: 0,
            drive_reads: Vec::new(),
            drive_read_commands: Vec::new(),
            drive_wake_pending: false,
            drive_payload: Vec::new(),
            rng: ChaCha8Rng::seed_from_u64(seed),
            block: BlockLayer::new(max_transfer, host.max_trim_bytes, host.merge_adjacent),
            driver_buffer: DriverBuffer::new(
                host.read_ahead,
                host.coalesce_writes,
                host.coalesce_hold_ns,
                max_transfer,
            ),
            commands: Vec::new(),
            free_commands: Vec::new(),
            lowest_free_tag: host.lowest_free_tag,
            outstanding: 0,
            slots: Vec::new(),
            slot_bytes: 0,
            slot_buffers: Vec::new(),
            slot_zero: Vec::new(),
            slot_tails: Vec::new(),
            slot_compressed: Vec::new(),
            drive_compressed: Vec::new(),
            reused_compression_estimates: 0,
            completions: VecDeque::new(),
            store: Store::new(),
            store_payload: true,
            power_journal: None,
            counters: Counters {
                host_size_min: u32::MAX,
                ..Counters::default()
            },
            pcap: None,
            spec,
        };
        // The stack file's own fault plan (checked to parse when the stack resolved); the
        // transport decides whether it applies, so a refusal names the stack.
        if let Some(text) = sim.stack().faults.clone() {
            let name = sim.stack().name.clone();
            let plan = FaultPlan::parse(&text)
                .map_err(|why| SimError::Request(format!("stack `{name}`: faults: {why}")))?;
            sim.set_faults(plan)
                .map_err(|e| SimError::Request(format!("stack `{name}`: faults: {e}")))?;
        }
        Ok(sim)
    }

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

    fn handle(&mut self, event: Event) {
        match event {
            Event::HostIssue { cmd } => self.on_host_issue(cmd),
            Event::CommandAtDevice { cmd } => {
                self.trace(cmd, TraceHook::CommandDelivered);
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
            Event::DriverFlush => {
                let now = self.cx.now_ns;
                if let Some(at) = self.driver_buffer.on_timer(now) {
                    self.cx.schedule(at, Event::DriverFlush);
                }
                self.host_dispatch();
            }
        }
    }

    /// Build commands from the block layer while the driver has room; a buffering driver first
    /// sends the writes it gathered when they must go, and serves what it can from its buffer.
    fn host_dispatch(&mut self) {
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
    fn ncq_defers_flush(&self, op: Op) -> bool {
        self.flushes_outstanding > 0 || (op == Op::Flush && self.outstanding > 0)
    }

    #[inline]
    fn ncq_defers(&self, op: Op) -> bool {
        (self.flushes_outstanding > 0 || op == Op::Flush) && self.ncq_defers_flush(op)
    }

    fn new_command(&mut self) -> CmdId {
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
    fn issue_command(&mut self, id: CmdId, plan: crate::host::CommandPlan, merged: u64) {
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
        c.op = plan.op;
        c.offset_bytes = plan.offset_bytes;
        c.len_bytes = plan.len;
        c.part_count = plan.part_count;
        c.holds_drive_slot = false;
        c.served_by_driver = false;
        c.issued_ns = issue_at;
        c.retries = 0;
        c.errno = 0;
        self.cx.schedule(issue_at, Event::HostIssue { cmd: id });
    }

    /// The writes the driver gathered leave as one write command from its buffer.
    fn send_gathered_writes(&mut self) {
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
        let plan = crate::host::CommandPlan {
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
    fn serve_in_driver(&mut self, id: CmdId, plan: crate::host::CommandPlan, at: u32) {
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
        let c = &mut self.commands[id as usize];
        c.op = plan.op;
        c.offset_bytes = plan.offset_bytes;
        c.len_bytes = plan.len;
        c.part_count = plan.part_count;
        c.holds_drive_slot = false;
        c.served_by_driver = true;
        c.issued_ns = now;
        c.errno = 0;
        self.cx.schedule(done, Event::Complete { cmd: id });
    }

    /// The driver sends the command: over USB to the bridge, or through AHCI to the drive.
    fn on_host_issue(&mut self, id: CmdId) {
        if self.cx.faults.is_some() {
            self.draw_command_fault(id);
            if self.commands[id as usize].fault == CommandFault::Removed {
                return self.fail_on_removed_device(id);
            }
        }
        let c = &mut self.commands[id as usize];
        match &mut self.endpoints {
            Endpoints::Bot(bot) => {
                let at = bot.issue(&mut self.cx, id, c);
                self.trace(id, TraceHook::Issued);
                self.cx.schedule(at, Event::CommandAtDevice { cmd: id });
            }
            Endpoints::Uas(uas) => {
                let at = uas.issue(&mut self.cx, id, c);
                self.trace(id, TraceHook::Issued);
                self.cx.schedule(at, Event::CommandAtDevice { cmd: id });
            }
            Endpoints::Ahci(_) if c.fault == CommandFault::NotReady => {
                // The SATA link is down while the drive powers up: the command never reaches
                // it. libata's error handler, woken by the PHY's change of state, resets the
                // link (COMRESET) until the drive's signature FIS comes with BSY clear, then
                // retries the command (`ata_eh_qc_retry`, not counted against its retries).
                let ready_ns = self.cx.faults.as_ref().map_or(0, |f| f.drive_ready_ns);
                let ready = ready_ns.max(self.cx.now_ns);
                self.cx.schedule(ready, Event::Complete { cmd: id });
            }
            Endpoints::Ahci(ahci) => {
                // Both false without a plan (no fault drawn, no recovery ever ran).
                if c.fault != CommandFault::None || ahci.recovery_until_ns > self.cx.now_ns {
                    return self.faulted_ahci_issue(id);
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
    fn faulted_ahci_issue(&mut self, id: CmdId) {
        let Endpoints::Ahci(ahci) = &self.endpoints else {
            unreachable!("called for AHCI");
        };
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

    fn bridge(&self) -> &Bridge {
        self.bridge.as_ref().expect("USB stacks have a bridge")
    }

    /// Command bytes arrived at the bridge: parse them, pay the firmware cost.
    fn bridge_on_command(&mut self, id: CmdId) {
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
        let decoded = match &self.endpoints {
            Endpoints::Bot(_) => Bot::decode_command(c),
            Endpoints::Uas(_) => Uas::decode_command(c),
            Endpoints::Ahci(_) => unreachable!("AHCI commands go to the drive, not a bridge"),
        };
        assert_eq!(decoded.op(), c.op, "bridge decoded another operation");
        if c.fault.answered_by_bridge() {
            self.bridge_answers_itself(id);
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
        if let Some(buffered_ns) = self.bot_write_into_buffer(id) {
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
    fn bot_write_into_buffer(&mut self, id: CmdId) -> Option<u64> {
        let bot = match &mut self.endpoints {
            Endpoints::Bot(bot) => bot,
            Endpoints::Uas(_) | Endpoints::Ahci(_) => return None,
        };
        let bridge = self.bridge.as_ref().expect("USB stacks have a bridge");
        let c = &self.commands[id as usize];
        if c.op != Op::Write || c.len_bytes > bridge.profile.bot_write_buffer_bytes {
            return None;
        }
        let len = u64::from(c.len_bytes);
        let cx = &mut self.cx;
        let start = bot.data_out_start(id, cx.now_ns);
        let from_host = cx.host_data_out(Flow::ready_at(start), len);
        let on_bus = cx.usb_data_out(from_host, len);
        bot.data_done_at_host(cx, id, on_bus.end_ns);
        let in_buffer = bridge.data(cx, on_bus, len);
        bot.set_buffered(id);
        Some(in_buffer.end_ns)
    }

    /// The translated command waits for a drive slot.
    fn bridge_on_ready(&mut self, id: CmdId) {
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
    fn drive_takes(&self, op: Op) -> bool {
        if op == Op::Flush || self.flush_at_drive {
            return self.drive_takes_beside_flush(op);
        }
        self.at_drive < self.link.slots()
    }

    /// [`Simulator::drive_takes`] when a flush is involved.
    #[cold]
    #[inline(never)]
    fn drive_takes_beside_flush(&self, op: Op) -> bool {
        if op == Op::Flush {
            !self.flush_at_drive && self.at_drive == 0
        } else {
            !self.flush_at_drive && self.at_drive < self.link.slots()
        }
    }

    /// Pass waiting commands to the drive while it has free slots (NCQ tags, or one).
    fn bridge_dispatch(&mut self) {
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
    fn bridge_dispatch_beside_flush(&mut self) {
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
    fn command_to_drive(&mut self, id: CmdId, from_ns: u64) {
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
    fn flush_to_drive(&mut self, id: CmdId, from_ns: u64) {
        self.flush_at_drive = true;
        self.flushes_at_bridge = self.flushes_at_bridge.saturating_sub(1);
        let at = self.link.send_flush_command(&mut self.cx, from_ns);
        self.cx.schedule(at, Event::DriveCommand { cmd: id });
    }

    /// FLUSH CACHE EXT reached the drive: no data phase; the drive empties its write cache,
    /// then reports status.
    #[cold]
    #[inline(never)]
    fn drive_flush(&mut self, id: CmdId, now_ns: u64) {
        self.counters.flushes_to_drive += 1;
        let done = self.drive.flush(now_ns);
        self.cx.schedule(done, Event::DataDone { cmd: id });
    }

    /// The drive finished a flush: later commands may go to it; a BOT driver has the CSW
    /// transfer queued since the CBW's completion.
    #[cold]
    #[inline(never)]
    fn flush_done_at_drive(&mut self, id: CmdId) {
        self.flush_at_drive = false;
        if let Endpoints::Bot(bot) = &mut self.endpoints {
            bot.no_data_phase(id);
        }
    }

    /// The drive received a command.
    fn on_drive_command(&mut self, id: CmdId) {
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
    fn drive_serve_reads(&mut self) {
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
    fn drive_write(&mut self, id: CmdId, at_drive: Flow) -> u64 {
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
    fn drive_write_payload(&mut self, id: CmdId, at_drive: Flow) -> u64 {
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

    fn count_drive_io(&mut self, device: &DriveCommand) {
        let bytes = device.blocks * SECTOR_BYTES;
        *self.counters.drive_io_sizes.entry(bytes).or_insert(0) += 1;
    }

    /// Data can move: compute its pipelined path through every layer, by transport.
    fn on_data_ready(&mut self, id: CmdId) {
        if self.commands[id as usize].fault == CommandFault::Medium {
            // The drive has no data to send: it reports the error at once.
            self.cx
                .schedule(self.cx.now_ns, Event::DataDone { cmd: id });
            return;
        }
        let done = match &self.endpoints {
            Endpoints::Bot(_) | Endpoints::Uas(_) => self.bridged_data(id),
            Endpoints::Ahci(_) => self.direct_data(id),
        };
        self.cx.schedule(done, Event::DataDone { cmd: id });
    }

    /// The data phase through a USB bridge: drive link, bridge, bus, controller, PCIe, with
    /// the transport's gates (BOT: the host's queued transfer; High-Speed UAS: Ready IUs).
    /// Returns when it ended at its far end.
    fn bridged_data(&mut self, id: CmdId) -> u64 {
        let now = self.cx.now_ns;
        let buffered = self.bot_write_buffered(id);
        let c = &self.commands[id as usize];
        let (op, len) = (c.op, u64::from(c.len_bytes));
        let bridge = self.bridge.as_ref().expect("USB stacks have a bridge");
        let cx = &mut self.cx;
        let mut ready_iu = None;
        let done = match op {
            Op::Read => {
                let at_bridge = self.link.data_in(cx, c.media, len);
                let through = bridge.data(cx, at_bridge, len);
                let queued = match &self.endpoints {
                    Endpoints::Bot(bot) => bot.data_in_gate(id, through),
                    Endpoints::Uas(uas) => {
                        let (flow, iu) = uas.data_in_gate(cx, c, through);
                        ready_iu = iu;
                        flow
                    }
                    Endpoints::Ahci(_) => unreachable!("AHCI data does not cross a bridge"),
                };
                let on_bus = cx.usb_data_in(queued, len);
                let at_host = cx.host_data_in(on_bus, len);
                self.endpoints.data_done_at_host(cx, id, at_host.end_ns);
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
                let start = match &self.endpoints {
                    Endpoints::Bot(bot) => bot.data_out_start(id, now),
                    Endpoints::Uas(uas) => {
                        let (start, iu) = uas.data_out_start(cx, c, now);
                        ready_iu = iu;
                        start
                    }
                    Endpoints::Ahci(_) => unreachable!("AHCI data does not cross a bridge"),
                };
                if let Some(iu) = ready_iu.take() {
                    self.trace_ready(id, &iu);
                }
                let cx = &mut self.cx;
                let from_host = cx.host_data_out(Flow::ready_at(start), bytes);
                let on_bus = cx.usb_data_out(from_host, bytes);
                self.endpoints.data_done_at_host(cx, id, on_bus.end_ns);
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

    fn bot_write_buffered(&self, id: CmdId) -> bool {
        match &self.endpoints {
            Endpoints::Bot(bot) => bot.command(id).buffered,
            Endpoints::Uas(_) | Endpoints::Ahci(_) => false,
        }
    }

    /// The data phase of direct SATA: drive link, controller, PCIe. Returns when it ended at
    /// its far end.
    fn direct_data(&mut self, id: CmdId) -> u64 {
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
            Op::Trim => match &self.endpoints {
                Endpoints::Ahci(ahci) => ahci.trim_payload(cx, &mut self.link, c),
                Endpoints::Bot(_) | Endpoints::Uas(_) => unreachable!("USB data crosses a bridge"),
            },
            Op::Flush => unreachable!("a flush has no data phase"),
        }
    }

    /// The data phase ended: move payload, free the drive slot, send status.
    fn on_data_done(&mut self, id: CmdId) {
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
        match &self.endpoints {
            Endpoints::Bot(_) | Endpoints::Uas(_) => {
                self.bridge_send_status(id, status_from);
                if released_slot {
                    self.bridge_dispatch();
                }
            }
            Endpoints::Ahci(ahci) => {
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
                    self.ncq_error_aborts(at);
                }
                self.status_at_host(id, at);
            }
        }
    }

    /// The UNMAP parameter list arrived at the bridge: translate to TRIM (or drop it, as
    /// firmware without translation does). Returns when status can be sent.
    fn bridge_unmap(&mut self, id: CmdId) -> u64 {
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

    /// Drive: decode the TRIM payload and trim; returns when the drive reports completion.
    fn execute_trim(&mut self, id: CmdId, at_ns: u64) -> u64 {
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

    /// The drive's status to the bridge, which parses and checks it; firmware builds the CSW /
    /// Sense IU, it goes to the host.
    fn bridge_send_status(&mut self, id: CmdId, from_ns: u64) {
        let failed = self.commands[id as usize].fault == CommandFault::Medium;
        let device = &self.commands[id as usize].device;
        let (t, _) = self
            .link
            .send_status(&mut self.cx, id, from_ns, failed, device);
        let bridge = self.bridge.as_ref().expect("USB stacks have a bridge");
        let mut t = bridge.build_status(&mut self.cx, t);
        if failed && matches!(self.endpoints, Endpoints::Bot(_)) {
            t = self.bot_stall_data_in(id, t);
        }
        let c = &mut self.commands[id as usize];
        let (t, len) = match &self.endpoints {
            // BOT: the CSW goes once the host has asked for it (its transfer is queued).
            Endpoints::Bot(bot) => (t.max(bot.command(id).status_urb_ns), Bot::encode_status(c)),
            Endpoints::Uas(_) => (t, Uas::encode_status(c)),
            Endpoints::Ahci(_) => unreachable!("AHCI status does not cross a bridge"),
        };
        let at = self.cx.usb_message_in(t, len);
        self.status_at_host(id, at);
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
    fn status_at_host(&mut self, id: CmdId, at_ns: u64) {
        self.trace(id, TraceHook::Status(at_ns));
        let done = self.cx.completion_cpu(at_ns);
        self.cx.schedule(done, Event::Complete { cmd: id });
    }

    fn on_complete(&mut self, id: CmdId) {
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
            match &self.endpoints {
                Endpoints::Bot(_) => {
                    let status = Bot::check_status(c);
                    assert_eq!(
                        status,
                        storlab_wire::bot::CswStatus::Passed,
                        "command failed"
                    );
                }
                Endpoints::Uas(_) => {
                    assert_eq!(Uas::check_status(c), None, "command failed");
                }
                Endpoints::Ahci(_) => {}
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

    /// Drop journal entries the drive has written to its media (their writes can no longer
    /// be lost).
    #[cold]
    #[inline(never)]
    fn prune_power_journal(&mut self) {
        let now = self.cx.now_ns;
        let journal = self.power_journal.as_mut().expect("checked by the caller");
        journal.prune(&mut self.store, self.drive.oldest_volatile_write(now));
    }

    /// The drive's supply fails at `now_ns` and comes back: the drive loses what its volatile
    /// cache held (the store puts back what the media has), spins up, and will report a unit
    /// attention condition once it is ready.
    #[cold]
    #[inline(never)]
    fn power_loss(&mut self, now_ns: u64) {
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
    fn fail_commands_of_unpowered_drive(&mut self, ready_ns: u64) {
        if let Endpoints::Ahci(_) = self.endpoints {
            let aborted = self.abort_at_drive();
            self.flush_at_drive = false;
            return self.requeue_aborted(&aborted, ready_ns);
        }
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
            self.bridge_answers_itself(id);
        }
    }

    /// A device-wide fault: every command the bridge or the drive holds (translated, queued,
    /// at the drive, in its data phase) leaves them, all but `keep`: their pending steps go,
    /// their places in the bridge's queue and the drive's, their NCQ tags and slots come
    /// back, as `abort_at_drive` does for the drive. A command whose status is on its way to
    /// the host is done at the device and stays. Returns the commands taken out.
    #[cold]
    #[inline(never)]
    fn abort_device_commands(&mut self, keep: &[CmdId]) -> Vec<CmdId> {
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

    /// The bridge answers command `id` itself: CHECK CONDITION with NOT READY while its drive
    /// spins up, or with the pending UNIT ATTENTION. It parses the command and builds the
    /// status; a data phase the host set up is refused with a STALL (BOT) or never asked for
    /// (UAS: no Ready IU comes, the Sense IU ends the command).
    #[cold]
    #[inline(never)]
    fn bridge_answers_itself(&mut self, id: CmdId) {
        let now = self.cx.now_ns;
        let op = self.commands[id as usize].op;
        let bridge = self.bridge.as_ref().expect("USB stacks have a bridge");
        let parsed = bridge.parse_command(&mut self.cx, op, now);
        let mut t = bridge.build_status(&mut self.cx, parsed);
        let has_data = self.commands[id as usize].len_bytes > 0 && op != Op::Flush;
        if matches!(self.endpoints, Endpoints::Bot(_)) && has_data {
            let stalled = if op == Op::Read {
                Bot::stall_data_in(&mut self.cx, t)
            } else {
                Bot::stall_data_out(&mut self.cx, t)
            };
            let queued = stalled.clear.driver_ns;
            if let Some(p) = self.pcap.as_mut() {
                p.end_urb(stalled.stalled_ns, id, data_urb(op), URB_STALLED);
                let clear = stalled.clear;
                p.control_transfer(clear.setup, clear.submit_ns, clear.done_ns);
                p.submit(queued, id, Urb::Status, CSW_LEN as u32, &[]);
            }
            t = queued;
        }
        let c = &mut self.commands[id as usize];
        let (t, len) = match &self.endpoints {
            Endpoints::Bot(bot) => (t.max(bot.command(id).status_urb_ns), Bot::encode_status(c)),
            Endpoints::Uas(_) => (t, Uas::encode_status(c)),
            Endpoints::Ahci(_) => unreachable!("AHCI commands do not cross a bridge"),
        };
        let at = self.cx.usb_message_in(t, len);
        self.status_at_host(id, at);
    }

    /// After a NOT READY or UNIT ATTENTION at `at_ns`: the command goes again, not counted
    /// against its retries (Linux: `scsi_io_completion_action` requeues it as
    /// `ACTION_DELAYED_RETRY` or `ACTION_RETRY`, without touching `cmd->retries`).
    fn retry_uncounted(&mut self, id: CmdId, at_ns: u64) {
        let f = self.cx.faults.as_mut().expect("a plan");
        let c = &self.commands[id as usize];
        f.resolve(c.attempt, FaultOutcome::Retried { at_ns });
        let submit_ns = self.spec.host.submit_cpu_ns;
        let issue_at = self.cx.reserve(layer::HOST_CPU, at_ns, submit_ns, 0);
        let c = &mut self.commands[id as usize];
        c.issued_ns = issue_at;
        self.cx.schedule(issue_at, Event::HostIssue { cmd: id });
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

    /// The host sends command `id`: ask the plan which fault hits this attempt.
    #[cold]
    #[inline(never)]
    fn draw_command_fault(&mut self, id: CmdId) {
        if let Endpoints::Ahci(ahci) = &self.endpoints {
            if ahci.recovery_until_ns > self.cx.now_ns {
                // Not sent yet: it waits for libata's error handler (`faulted_ahci_issue`).
                return;
            }
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
    fn draw_media_error(&mut self, id: CmdId, device: &DriveCommand) {
        let now = self.cx.now_ns;
        let f = self.cx.faults.as_mut().expect("checked by the caller");
        let c = &mut self.commands[id as usize];
        if c.fault == CommandFault::None && f.media_read(device.lba, device.blocks, c.attempt, now)
        {
            c.fault = CommandFault::Medium;
        }
    }

    /// A failed command's status reached the driver: run the transport's recovery, then send
    /// the command again or fail the I/O.
    #[cold]
    #[inline(never)]
    fn on_failed_status(&mut self, id: CmdId) {
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
            (Endpoints::Bot(bot), CommandFault::Medium) => {
                let status = Bot::check_status(c);
                assert_eq!(
                    status,
                    storlab_wire::bot::CswStatus::Failed,
                    "CSW of a failed read"
                );
                let lba = c.device.lba;
                let asked = fault.sense(lba).expect("a medium error has sense");
                let sense = bot.request_sense(&mut self.cx, now, firmware_ns, asked);
                assert_eq!(sense.key, storlab_wire::scsi::SenseKey::MediumError);
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
                let at = self.cx.completion_cpu(sense.csw_done_ns);
                self.fail_command(id, at, ERRNO_ENODATA);
            }
            (Endpoints::Uas(_), CommandFault::Medium) => {
                let key = Uas::check_status(c);
                assert_eq!(key, Some(storlab_wire::scsi::SenseKey::MediumError));
                // The driver cancels the data transfer of a command whose status is an error
                // (Linux `uas_stat_cmplt`: `usb_unlink_urb`); without streams no Read Ready IU
                // came, so no data transfer was queued.
                if let (Some(p), Transport::Uas { streams: true }) =
                    (self.pcap.as_mut(), self.endpoints.kind())
                {
                    p.end_urb(now, id, Urb::DataIn, URB_UNLINKED);
                }
                self.fail_command(id, now, ERRNO_ENODATA);
            }
            // The drive link's status carried ERR (and a queued command's READ LOG EXT ran).
            (Endpoints::Ahci(_), CommandFault::Medium) => self.fail_command(id, now, ERRNO_ENODATA),
            (Endpoints::Bot(_), CommandFault::PhaseError) => {
                let status = Bot::check_status(c);
                assert_eq!(status, storlab_wire::bot::CswStatus::PhaseError);
                let at = self.bot_reset_recovery(now);
                self.retry_or_fail(id, at);
            }
            (Endpoints::Uas(_) | Endpoints::Ahci(_), CommandFault::PhaseError) => {
                unreachable!("phase errors are BOT's (set_faults refuses them elsewhere)")
            }
            (Endpoints::Bot(bot), CommandFault::NotReady | CommandFault::UnitAttention) => {
                let status = Bot::check_status(c);
                assert_eq!(status, storlab_wire::bot::CswStatus::Failed);
                let asked = fault
                    .sense(c.device.lba)
                    .expect("a bridge answer has sense");
                let sense = bot.request_sense(&mut self.cx, now, firmware_ns, asked);
                assert_eq!(
                    (sense.key, sense.additional),
                    (asked.key, asked.additional),
                    "host read other sense than the bridge built"
                );
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
                self.cx
                    .faults
                    .as_mut()
                    .expect("a plan")
                    .counts
                    .request_senses += 1;
                let at = self.cx.completion_cpu(sense.csw_done_ns);
                self.retry_after_sense(id, fault, at);
            }
            (Endpoints::Uas(_), CommandFault::NotReady | CommandFault::UnitAttention) => {
                let key = Uas::check_status(c);
                assert_eq!(key, fault.sense(0).map(|s| s.key), "Sense IU's key");
                // With streams the data transfer was queued at issue (a flush has none).
                if let (Some(p), Transport::Uas { streams: true }, true) =
                    (self.pcap.as_mut(), self.endpoints.kind(), c.op != Op::Flush)
                {
                    p.end_urb(now, id, data_urb(c.op), URB_UNLINKED);
                }
                self.retry_after_sense(id, fault, now);
            }
            // The link came back with the drive ready: libata's error handler retries.
            (Endpoints::Ahci(_), CommandFault::NotReady) => self.retry_uncounted(id, now),
            (Endpoints::Ahci(_), CommandFault::UnitAttention) => {
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

    /// The host read NOT READY or UNIT ATTENTION for `id` at `at_ns`: as Linux's
    /// `scsi_io_completion_action`, 02/04/01 is retried after a delay (`ACTION_DELAYED_RETRY`)
    /// and a unit attention on a fixed disk at once ("Must have been a power glitch, or a bus
    /// reset": `ACTION_RETRY`).
    fn retry_after_sense(&mut self, id: CmdId, fault: CommandFault, at_ns: u64) {
        let delay_ns = if fault == CommandFault::NotReady {
            LINUX_NOT_READY_RETRY_DELAY_NS
        } else {
            0
        };
        self.retry_uncounted(id, at_ns + delay_ns);
    }

    /// BOT: the failed read's data phase ends in a STALL the host clears before reading the
    /// CSW; returns when the CSW transfer is queued.
    #[cold]
    #[inline(never)]
    fn bot_stall_data_in(&mut self, id: CmdId, at_ns: u64) -> u64 {
        let stalled = Bot::stall_data_in(&mut self.cx, at_ns);
        let queued = stalled.clear.driver_ns;
        if let Some(p) = self.pcap.as_mut() {
            p.end_urb(stalled.stalled_ns, id, Urb::DataIn, URB_STALLED);
            let clear = stalled.clear;
            p.control_transfer(clear.setup, clear.submit_ns, clear.done_ns);
            p.submit(queued, id, Urb::Status, CSW_LEN as u32, &[]);
        }
        queued
    }

    /// BOT Reset Recovery with the plan's post-reset delay; returns when it is done.
    fn bot_reset_recovery(&mut self, at_ns: u64) -> u64 {
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

    /// The host's timer fired for a command the bridge lost. BOT: the SCSI error handler's
    /// abort makes usb-storage reset the device (`command_abort`, then Reset Recovery);
    /// UAS: ABORT TASK for its tag, or for a hung bridge the escalation of `uas_escalate`.
    /// Then the command goes again.
    #[cold]
    #[inline(never)]
    fn on_host_timeout(&mut self, id: CmdId, hung: bool) {
        let now = self.cx.now_ns;
        let firmware_ns = self
            .bridge
            .as_ref()
            .map_or(0, |b| b.profile.firmware_status_ns);
        self.commands[id as usize].fault = CommandFault::None;
        let at = match &self.endpoints {
            Endpoints::Bot(_) => {
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
            Endpoints::Uas(_) if hung => self.uas_escalate(id, now, firmware_ns),
            Endpoints::Uas(uas) => {
                let uas = *uas;
                let mut t = now;
                // The SCSI error handler aborts each timed-out command in turn
                // (`scsi_eh_abort_cmds`): the lost one, then those lost with the device.
                for a in std::iter::once(id).chain(self.lost_with(id)) {
                    let tm =
                        uas.abort_task(&mut self.cx, &self.commands[a as usize], t, firmware_ns);
                    self.cx.faults.as_mut().expect("a plan").counts.uas_aborts += 1;
                    self.trace_task_management(&tm);
                    let queued = uas.streams || self.data_urb_queued(a);
                    self.trace_aborted_urbs(a, tm.driver_ns, queued);
                    t = tm.driver_ns;
                }
                t
            }
            Endpoints::Ahci(_) => self.sata_hardreset(id, now),
        };
        self.retry_or_fail(id, at);
        self.retry_lost_with(id, at);
    }

    /// Command `a`, lost with the device, had its data transfer queued on a Ready IU.
    fn data_urb_queued(&self, a: CmdId) -> bool {
        self.data_phase_booked_until(a).is_some()
    }

    /// Command `a`, lost with the device, was in a data phase booked to end then.
    fn data_phase_booked_until(&self, a: CmdId) -> Option<u64> {
        let f = self.cx.faults.as_ref()?;
        f.lost_in_data_phase
            .iter()
            .find(|&&(c, _)| c == a)
            .map(|&(_, at)| at)
    }

    /// The commands lost with the device by `id`'s fault (empty for any other command).
    fn lost_with(&self, id: CmdId) -> Vec<CmdId> {
        let f = self.cx.faults.as_ref().expect("a plan");
        if f.device_lost_with == Some(id) {
            f.lost_with_device.clone()
        } else {
            Vec::new()
        }
    }

    /// A hang, bridge reset or disconnect hit `trigger`: every command the bridge or the drive
    /// holds is lost with it (`abort_device_commands`), and so is every command sent until
    /// the host has recovered. None gets a status; each one's block-layer timer runs.
    #[cold]
    #[inline(never)]
    fn lose_device_commands(&mut self, trigger: CmdId, fault: CommandFault) {
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
    fn data_urbs_queued_on_ready(&self) -> Vec<(CmdId, u64)> {
        match self.endpoints.kind() {
            Transport::Uas { streams: false } => self
                .cx
                .events
                .command_events_with(|e| matches!(e, Event::DataDone { .. })),
            _ => Vec::new(),
        }
    }

    /// The timer of `id`, whose fault lost the device's other commands, fired: Linux's SCSI
    /// error handler starts only once every outstanding command has failed or timed out
    /// (`scsi_eh_wakeup`: `scsi_host_busy(shost) == shost->host_failed`), so it waits for
    /// the last of the lost commands' timers. True when the recovery was put off until then.
    #[cold]
    #[inline(never)]
    fn error_handler_waits(&mut self, id: CmdId) -> bool {
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
    fn retry_lost_with(&mut self, id: CmdId, at_ns: u64) {
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
    fn send_serial_retry(&mut self) {
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

    /// AHCI with NCQ: a queued command's status reported an error. The drive aborted every
    /// other command it holds (SATA 3.x NCQ error handling) and took nothing until the host
    /// read the NCQ Command Error log, which `send_status` did, ending at `log_read_ns`: the
    /// aborted commands are sent again from then (libata's `ata_eh_qc_retry`). The failed one
    /// completes with its error as before.
    #[cold]
    #[inline(never)]
    fn ncq_error_aborts(&mut self, log_read_ns: u64) {
        let aborted = self.abort_at_drive();
        self.requeue_aborted(&aborted, log_read_ns);
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
    fn sata_hardreset(&mut self, id: CmdId, at_ns: u64) -> u64 {
        let aborted = self.abort_at_drive();
        let identify = crate::sata_recovery::drive_identify(
            self.drive.capacity_bytes(),
            self.drive.logical_block_bytes(),
            self.drive.queue_depth(),
        );
        let DeviceLink::Sata(port) = &self.link;
        let reset = crate::sata_recovery::hardreset(&mut self.cx, &port.link, &identify, at_ns);
        let done = reset.revalidated_ns;
        self.cx.faults.as_mut().expect("a plan").counts.comresets += 1;
        let others: Vec<CmdId> = aborted.into_iter().filter(|&a| a != id).collect();
        self.requeue_aborted(&others, done);
        done
    }

    /// The drive aborts every command it holds: their pending events go, their queued reads
    /// leave its queue, their NCQ tags and slots come back. What a drive had already done
    /// for them stays done (its media time, a written cache entry), as on a real drive, and
    /// the link time booked for a data phase under way stays booked. Returns them.
    fn abort_at_drive(&mut self) -> Vec<CmdId> {
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
    /// count against the command's retries (`ata_eh_qc_retry`).
    fn requeue_aborted(&mut self, aborted: &[CmdId], at_ns: u64) {
        if let Endpoints::Ahci(ahci) = &mut self.endpoints {
            ahci.recovery_until_ns = ahci.recovery_until_ns.max(at_ns);
        }
        let submit_ns = self.spec.host.submit_cpu_ns;
        for &a in aborted {
            let f = self.cx.faults.as_mut().expect("a plan");
            f.counts.sata_aborted += 1;
            let c = &mut self.commands[a as usize];
            if std::mem::take(&mut c.fault) != CommandFault::None {
                f.resolve(c.attempt, FaultOutcome::Retried { at_ns });
            }
            let issue_at = self.cx.reserve(layer::HOST_CPU, at_ns, submit_ns, 0);
            self.commands[a as usize].issued_ns = issue_at;
            self.cx.schedule(issue_at, Event::HostIssue { cmd: a });
        }
    }

    /// UAS: the bridge hung with command `id`, whose timer fired at `at_ns`. The host escalates
    /// as the SCSI error handler does (abort, then device reset, then bus reset), each step a
    /// task management function it waits `tm_timeout` for: ABORT TASK, LOGICAL UNIT RESET,
    /// I_T NEXUS RESET, then the USB device reset. The bridge answers the plan's
    /// `hang_recovery` step (FUNCTION COMPLETE, or its firmware restarting with the device
    /// reset: the command is sent again); when none does, the device reset's re-enumeration
    /// leaves it as BOT. Returns when the command can be sent again.
    #[cold]
    #[inline(never)]
    fn uas_escalate(&mut self, id: CmdId, at_ns: u64, firmware_ns: u64) -> u64 {
        use storlab_wire::uas::TaskManagementFunction as Tmf;
        let Endpoints::Uas(uas) = &self.endpoints else {
            unreachable!("called for UAS");
        };
        let uas = *uas;
        let f = self.cx.faults.as_mut().expect("a plan");
        let (timeout_ns, recovery) = (f.plan.tm_timeout_ns, f.plan.hang_recovery);
        f.counts.uas_aborts += 1;
        let managed = u16::try_from(self.commands[id as usize].tag).expect("UAS tags are 16-bit");
        let lost = self.lost_with(id);
        let mut t = at_ns;
        // One ABORT TASK per timed-out command (`scsi_eh_abort_cmds`), none answered.
        for a in std::iter::once(id).chain(lost.iter().copied()) {
            let tag = u16::try_from(self.commands[a as usize].tag).expect("UAS tags are 16-bit");
            if a != id {
                self.cx.faults.as_mut().expect("a plan").counts.uas_aborts += 1;
            }
            let abort = uas.task_management(
                &mut self.cx,
                Tmf::AbortTask,
                tag,
                t,
                Answer::Never(timeout_ns),
            );
            self.trace_task_management(&abort);
            t = abort.driver_ns;
        }
        for (function, step) in [
            (Tmf::LogicalUnitReset, HangRecovery::LogicalUnitReset),
            (Tmf::ItNexusReset, HangRecovery::ItNexusReset),
        ] {
            let counts = &mut self.cx.faults.as_mut().expect("a plan").counts;
            match function {
                Tmf::LogicalUnitReset => counts.uas_lu_resets += 1,
                _ => counts.uas_it_nexus_resets += 1,
            }
            let answer = if recovery == step {
                Answer::Within(firmware_ns)
            } else {
                Answer::Never(timeout_ns)
            };
            let tm = uas.task_management(&mut self.cx, function, managed, t, answer);
            self.trace_task_management(&tm);
            t = tm.driver_ns;
            if tm.response.is_some() {
                // The reset aborted every task at the logical unit: the lost commands'
                // transfers end, and they are sent again.
                for a in std::iter::once(id).chain(lost.iter().copied()) {
                    self.trace_aborted_urbs(a, t, uas.streams || self.data_urb_queued(a));
                }
                return t;
            }
        }
        for a in std::iter::once(id).chain(lost.iter().copied()) {
            self.trace_aborted_urbs(a, t, uas.streams || self.data_urb_queued(a));
        }
        // The SCSI error handler's last step before it takes the device offline: the USB
        // device reset (3.x uas's bus-reset handler, `usb_reset_device`).
        if recovery == HangRecovery::DeviceReset {
            return self.usb_reset_device(t, PortReset::Reset, true);
        }
        self.fall_back_to_bot(t)
    }

    /// The host gives up on UAS at `at_ns`: it resets the device and re-enumerates it with
    /// the interface at its Bulk-Only alternate setting (SET_CONFIGURATION selects alternate
    /// 0; Linux binds usb-storage at a re-enumeration when the `US_FL_IGNORE_UAS` quirk is
    /// set), and usb-storage's probe asks Get Max LUN; from then on every command is a BOT
    /// command, one at a time, and the bridge gives the drive one command at a time. Returns
    /// when the endpoints are ready.
    fn fall_back_to_bot(&mut self, at_ns: u64) -> u64 {
        let reset_done_ns = self.usb_reset_device(at_ns, PortReset::Reset, false);
        let firmware_ns = self.bridge().profile.firmware_status_ns;
        let setup = SetupPacket::get_max_lun(MASS_STORAGE_INTERFACE);
        let max_lun = self
            .cx
            .usb_control_in(reset_done_ns, &setup, MAX_LUN_BYTES, firmware_ns);
        if let Some(p) = self.pcap.as_mut() {
            p.use_bot();
            p.enumeration_transfer(setup, &[0], max_lun.submit_ns, max_lun.done_ns);
        }
        // BOT's per-command state is indexed by command id: room for every id in use.
        let ids = (self.commands.len() as u32).max(self.max_outstanding);
        self.endpoints = Endpoints::Bot(Bot::new(self.spec.host.chains_transfers, ids));
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
    fn usb_reset_device(&mut self, at_ns: u64, reset: PortReset, uas: bool) -> u64 {
        let super_speed = matches!(self.cx.usb, Some(UsbTiming::Super(_)));
        // The device offers UAS in its descriptors when the run began as UAS.
        let offers_uas = matches!(self.endpoints, Endpoints::Uas(_)) || self.fallback.is_some();
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

    /// BOT, hung bridge: the Bulk-Only Mass Storage Reset goes unanswered; usb-storage gives up
    /// on it after its control timeout (`usb_stor_reset_common`, 5 s, the URB killed) and the
    /// SCSI error handler's next step resets the port (`usb_stor_port_reset`:
    /// `usb_reset_device`), with which the bridge's firmware restarts. Returns when the
    /// device is usable again.
    #[cold]
    #[inline(never)]
    fn bot_reset_unanswered(&mut self, at_ns: u64) -> u64 {
        let f = self.cx.faults.as_mut().expect("a plan");
        f.counts.bot_resets += 1;
        let reset = Bot::reset_unanswered(&mut self.cx, at_ns, LINUX_USB_STOR_RESET_TIMEOUT_NS);
        if let Some(p) = self.pcap.as_mut() {
            p.control_unanswered(reset.setup, reset.submit_ns, reset.gave_up_ns, URB_KILLED);
        }
        self.usb_reset_device(reset.gave_up_ns, PortReset::Reset, false)
    }

    /// The bridge lost command `id` at the bridge (drop, hang, bridge reset, disconnect): for
    /// a disconnect, what the hub sees of it; for a bridge reset, the firmware's restart.
    /// Returns true when the command's end is already scheduled (the device is removed).
    #[cold]
    #[inline(never)]
    fn loses_device_with(&mut self, id: CmdId) -> bool {
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
                        let uas = matches!(self.endpoints, Endpoints::Uas(_));
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
    fn bridge_firmware_reset(&mut self, _at_ns: u64) {
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
    fn on_removed_in_flight(&mut self, id: CmdId) {
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
    fn end_urbs_of_removed(&mut self, id: CmdId, now: u64) {
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
    fn fail_on_removed_device(&mut self, id: CmdId) {
        let f = self.cx.faults.as_ref().expect("a plan");
        let removed_ns = f.removed_at_ns.expect("the device was removed");
        let c = &mut self.commands[id as usize];
        c.fault = CommandFault::None;
        // No attempt was sent: no fault record is this command's (attempts count from 1).
        c.attempt = 0;
        let at = self.cx.completion_cpu(self.cx.now_ns.max(removed_ns));
        self.fail_command(id, at, ERRNO_EIO);
    }

    /// Record one task management exchange: the status transfer queued for the response, the
    /// Task Management IU, and the Response IU, or (hung bridge) the status transfer killed when
    /// the host stopped waiting.
    #[cold]
    #[inline(never)]
    fn trace_task_management(&mut self, tm: &TaskManagement) {
        if let Some(p) = self.pcap.as_mut() {
            let status = p.begin_transfer(Urb::Status, tm.submit_ns, p.status_urb_bytes(), &[]);
            p.transfer(Urb::Command, tm.submit_ns, tm.request_done_ns, &tm.request);
            match &tm.response {
                Some(r) => p.end_transfer(status, Urb::Status, tm.response_ns, r, 0),
                None => p.end_transfer(status, Urb::Status, tm.response_ns, &[], URB_KILLED),
            }
        }
    }

    /// Record the end of an aborted UAS command's transfers at `at_ns`: no Sense IU will come,
    /// and the driver kills its status transfer and its data transfer when one was queued
    /// (with streams at issue; at High-Speed on the device's Ready IU).
    fn trace_aborted_urbs(&mut self, id: CmdId, at_ns: u64, data_urb_queued: bool) {
        if let Some(p) = self.pcap.as_mut() {
            if data_urb_queued {
                p.end_urb(
                    at_ns,
                    id,
                    data_urb(self.commands[id as usize].op),
                    URB_KILLED,
                );
            }
            p.end_urb(at_ns, id, Urb::Status, URB_KILLED);
        }
    }

    /// After recovery at `at_ns`: the SCSI midlayer sends the command again while it has
    /// retries left (the driver's submit work first), else fails the I/O with EIO.
    fn retry_or_fail(&mut self, id: CmdId, at_ns: u64) {
        let f = self.cx.faults.as_mut().expect("a plan");
        let c = &mut self.commands[id as usize];
        if c.retries >= f.plan.retries {
            return self.fail_command(id, at_ns, ERRNO_EIO);
        }
        c.retries += 1;
        f.resolve(c.attempt, FaultOutcome::Retried { at_ns });
        let submit_ns = self.spec.host.submit_cpu_ns;
        let issue_at = self.cx.reserve(layer::HOST_CPU, at_ns, submit_ns, 0);
        let c = &mut self.commands[id as usize];
        c.issued_ns = issue_at;
        self.cx.schedule(issue_at, Event::HostIssue { cmd: id });
    }

    /// The command's I/O fails with `errno`, reported to the caller at `at_ns`.
    fn fail_command(&mut self, id: CmdId, at_ns: u64, errno: i32) {
        let c = &mut self.commands[id as usize];
        c.errno = errno;
        let f = self.cx.faults.as_mut().expect("a plan");
        f.resolve(c.attempt, FaultOutcome::Reported { errno, at_ns });
        self.cx.schedule(at_ns, Event::Complete { cmd: id });
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

    /// Record the session as a usbmon pcap from now on (USB stacks only; enumeration first).
    pub fn enable_pcap(&mut self) {
        if self.pcap.is_some() {
            return;
        }
        let uas = match &self.endpoints {
            Endpoints::Bot(_) => false,
            Endpoints::Uas(_) => true,
            Endpoints::Ahci(_) => return,
        };
        let super_speed = matches!(self.cx.usb, Some(UsbTiming::Super(_)));
        let host = &self.spec.host;
        let status_urb_bytes = host.status_urb_bytes.unwrap_or(STATUS_URB_BYTES);
        self.pcap = Some(
            PcapRecorder::new(uas, super_speed)
                .with_status_urbs(status_urb_bytes, host.status_before_data_after_ready)
                .with_transfer_flags(host.urb_transfer_flags),
        );
    }

    /// The capture so far, ending the recording (empty when tracing was not enabled).
    pub fn take_pcap(&mut self) -> Vec<u8> {
        self.pcap
            .take()
            .map(PcapRecorder::into_bytes)
            .unwrap_or_default()
    }

    // The trace hooks run on every command while recording is rare: each is an inlined check,
    // and the body that tells the recorder stays out of the hot path.

    #[inline]
    fn trace(&mut self, id: CmdId, hook: TraceHook) {
        if self.pcap.is_some() {
            self.record(id, hook);
        }
    }

    #[inline]
    fn trace_ready(&mut self, id: CmdId, iu: &ReadyIu) {
        if self.pcap.is_some() {
            self.record(id, TraceHook::Ready(iu.at_ns, iu.bytes));
        }
    }

    /// Tell the recorder what happened to `id`, with what it needs of the command.
    #[cold]
    #[inline(never)]
    fn record(&mut self, id: CmdId, hook: TraceHook) {
        let now = self.cx.now_ns;
        let c = &self.commands[id as usize];
        let bot = match &self.endpoints {
            Endpoints::Bot(bot) => Some(*bot.command(id)),
            Endpoints::Uas(_) | Endpoints::Ahci(_) => None,
        };
        let data_head: &[u8] = if c.op == Op::Trim {
            &c.unmap_list
        } else {
            let part = c.parts[0];
            let start = part.slot as usize * self.slot_bytes + part.slot_offset as usize;
            let n = (part.len as usize).min(CAPTURE_DATA_BYTES_MAX);
            &self.slot_buffers[start..start + n]
        };
        let traced = TracedCommand {
            id,
            op: c.op,
            data_len: if c.op == Op::Trim {
                UNMAP_LIST_BYTES as u32
            } else {
                c.len_bytes
            },
            command: &c.command_bytes[..usize::from(c.command_len)],
            status: &c.status_bytes[..usize::from(c.status_len)],
            data_head,
        };
        let ready_iu;
        let event = match hook {
            TraceHook::Issued => TraceEvent::Issued,
            TraceHook::CommandDelivered => TraceEvent::CommandDelivered {
                data_urb_ns: bot.map_or(0, |b| b.data_urb_ns),
            },
            TraceHook::Ready(at_ns, bytes) => {
                ready_iu = bytes;
                TraceEvent::Ready {
                    at_ns,
                    ready_iu: &ready_iu,
                }
            }
            // Chained BOT: the data transfer completed at the host when its last byte arrived
            // (for a write held in the bridge's buffer, before the drive finished), and the CSW
            // transfer was submitted once that completion was handled.
            TraceHook::DataDone => match bot {
                Some(b) if b.status_urb_ns > 0 => TraceEvent::DataDone {
                    done_at_ns: b.data_urb_done_ns,
                    status_at_ns: b.status_urb_ns,
                },
                _ => TraceEvent::DataDone {
                    done_at_ns: now,
                    status_at_ns: now,
                },
            },
            TraceHook::Status(at_ns) => TraceEvent::Status { at_ns },
        };
        if let Some(p) = self.pcap.as_mut() {
            p.on_event(now, &traced, event);
        }
    }
}

/// The data URB of a command doing `op`.
fn data_urb(op: Op) -> Urb {
    if op == Op::Read {
        Urb::DataIn
    } else {
        Urb::DataOut
    }
}

/// Where in a command's life the simulator calls the recorder.
#[derive(Clone, Copy)]
enum TraceHook {
    Issued,
    CommandDelivered,
    Ready(u64, [u8; storlab_wire::uas::READY_IU_LEN]),
    DataDone,
    Status(u64),
}

/// Call `f(piece, slot, slot_piece)` for each whole `COMPRESSION_PIECE_BYTES` piece of a write's
/// payload (`piece`: its index in the payload) that lies inside one part at a piece boundary of
/// that part's slot (`slot_piece`: its index in the slot): the pieces whose estimate the slot
/// can keep.
fn for_kept_pieces(parts: &[crate::command::Part], f: &mut dyn FnMut(usize, usize, usize)) {
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
fn forget_compressed_pieces(pieces: &mut [u32], offset: usize, len: usize) {
    let first = offset / COMPRESSION_PIECE_BYTES;
    let end = (offset + len)
        .div_ceil(COMPRESSION_PIECE_BYTES)
        .min(pieces.len());
    if first < end {
        pieces[first..end].fill(UNKNOWN_COMPRESSED_BYTES);
    }
}
