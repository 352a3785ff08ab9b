//! Assembly: the simulator of a resolved stack, built once. It negotiates the transport with
//! its fallbacks (what the bridge and controller support), sizes the queues, and assembles
//! each component (`Endpoints`, `DeviceLink`, `Bridge`, the drive from the drive-model
//! registry) and the narrow context `Cx` they work on.

use crate::bridge::Bridge;
use crate::core::Simulator;
use crate::counters::Counters;
use crate::cx::{layer, Cx, UsbTiming};
use crate::device_link::{DeviceLink, SataPort};
use crate::drive::Drive;
use crate::driver_bot::Bot;
use crate::driver_buffer::DriverBuffer;
use crate::driver_sata::Ahci;
use crate::driver_uas::Uas;
use crate::endpoints::{Bridged, Endpoints};
use crate::error::SimError;
use crate::event::EventQueue;
use crate::fault::FaultPlan;
use crate::host::BlockLayer;
use crate::link_sata::{NcqTags, SataLink};
use crate::link_usb2::Usb2Link;
use crate::link_usb3::Usb3Link;
use crate::pcie::PcieLink;
use crate::profile::{DriverKind, LinkProfile, StackSpec};
use crate::resource::Calendar;
use crate::store::Store;
use crate::transport::Transport;
use crate::xhci::Controller;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::collections::VecDeque;

impl Simulator {
    /// Build the simulator of a resolved stack: negotiate the transport (with its fallbacks)
    /// and assemble each component once.
    pub fn new(spec: StackSpec, seed: u64) -> Result<Simulator, SimError> {
        let controller = Controller::new(&spec.controller);
        let usb = usb_timing(&spec);
        let bridge = spec.bridge.as_ref().map(Bridge::new);
        // The drive-model registry builds the model the profile names (`drive/mod.rs`).
        let drive = spec.drive.build();
        let high_speed = matches!(usb, Some(UsbTiming::High(_)));
        let Negotiated {
            transport,
            max_outstanding,
            drive_slots,
            fallback,
        } = negotiate(
            &spec,
            &controller,
            bridge.as_ref(),
            drive.as_ref(),
            high_speed,
        );
        let host = &spec.host;
        let endpoints = endpoints_for(transport, host.chains_transfers, max_outstanding);
        let max_transfer = match (high_speed, host.max_transfer_bytes_high_speed) {
            (true, Some(hs)) => hs,
            _ => host.max_transfer_bytes,
        };
        let link = DeviceLink::Sata(SataPort {
            link: SataLink::new(&spec.sata_link),
            ncq_tags: NcqTags::new(drive_slots, max_outstanding as usize),
            slots: drive_slots,
        });
        let cx = context(&spec, controller, usb, max_outstanding, high_speed);

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
}

/// What the host and the device agreed on: the transport that runs, the commands the host
/// keeps outstanding, the drive's command slots, and why the transport differs from what the
/// host profile asked for, if it does.
struct Negotiated {
    transport: Transport,
    max_outstanding: u32,
    drive_slots: u32,
    fallback: Option<String>,
}

impl Negotiated {
    /// One command at a time, host to drive.
    fn serial(transport: Transport, fallback: Option<String>) -> Negotiated {
        Negotiated {
            transport,
            max_outstanding: 1,
            drive_slots: 1,
            fallback,
        }
    }
}

/// The USB link's timing at the speed the device runs (None for a direct SATA stack).
fn usb_timing(spec: &StackSpec) -> Option<UsbTiming> {
    spec.usb_link.as_ref().map(|l| match l {
        LinkProfile::Usb2Hs(p) => UsbTiming::High(Usb2Link::new(p)),
        LinkProfile::Usb3Ss(p) => UsbTiming::Super(Usb3Link::new(p)),
        LinkProfile::Sata(_) => unreachable!("validated: usb_link is a USB link"),
    })
}

/// Which transport actually runs, and how many commands it can keep outstanding.
fn negotiate(
    spec: &StackSpec,
    controller: &Controller,
    bridge: Option<&Bridge>,
    drive: &dyn Drive,
    high_speed: bool,
) -> Negotiated {
    let host = &spec.host;
    let fallback = spec.host_fallback.clone();
    match host.driver {
        DriverKind::Bot => Negotiated::serial(Transport::Bot, fallback),
        DriverKind::Uas => {
            let bridge = bridge.expect("validated: USB stacks have a bridge");
            negotiate_uas(spec, controller, bridge, drive, high_speed)
                .unwrap_or_else(|why| Negotiated::serial(Transport::Bot, Some(why)))
        }
        DriverKind::SataAhci => {
            let depth = host.max_outstanding_commands.min(drive.queue_depth());
            if depth > 1 {
                Negotiated {
                    transport: Transport::SataNcq,
                    max_outstanding: depth,
                    drive_slots: depth,
                    fallback,
                }
            } else {
                Negotiated::serial(Transport::SataIde, fallback)
            }
        }
        DriverKind::SataIde => Negotiated::serial(Transport::SataIde, fallback),
    }
}

/// UAS as the host asked for it, or why the host uses BOT instead.
fn negotiate_uas(
    spec: &StackSpec,
    controller: &Controller,
    bridge: &Bridge,
    drive: &dyn Drive,
    high_speed: bool,
) -> Result<Negotiated, String> {
    let host = &spec.host;
    let b = &bridge.profile;
    if !b.supports_uas {
        return Err(format!(
            "bridge `{}` does not support UAS: the host uses BOT",
            spec.bridge_name.as_deref().unwrap_or("?")
        ));
    }
    if !high_speed && !controller.supports_streams {
        return Err(format!(
            "controller `{}` has no bulk streams, which UAS needs at SuperSpeed: the host uses \
             BOT",
            spec.controller_name
        ));
    }
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
    Ok(Negotiated {
        transport: Transport::Uas {
            streams: !high_speed,
        },
        max_outstanding: tags,
        drive_slots,
        fallback: spec.host_fallback.clone(),
    })
}

/// The running transport's endpoints, each holding its own per-command state.
fn endpoints_for(transport: Transport, chains_transfers: bool, max_outstanding: u32) -> Endpoints {
    match transport {
        Transport::Bot => Endpoints::Bridged(Bridged::Bot(Bot::new(chains_transfers))),
        Transport::Uas { streams } => Endpoints::Bridged(Bridged::Uas(Uas {
            streams,
            // One past the command tags (1..=max_outstanding); with all 65535 in use,
            // 0 is the one no command holds (TM IUs go on the command pipe, not a stream).
            task_management_tag: u16::try_from(max_outstanding + 1).unwrap_or(0),
        })),
        Transport::SataNcq => Endpoints::Direct(Ahci::new(true)),
        Transport::SataIde => Endpoints::Direct(Ahci::new(false)),
    }
}

/// The narrow context the components work on, at virtual time 0 with no event queued.
fn context(
    spec: &StackSpec,
    controller: Controller,
    usb: Option<UsbTiming>,
    max_outstanding: u32,
    high_speed: bool,
) -> Cx {
    let usb_in = if high_speed {
        layer::USB_OUT
    } else {
        layer::USB_IN
    };
    Cx {
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
    }
}
