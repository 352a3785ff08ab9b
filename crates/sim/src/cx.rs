//! The narrow context every protocol component works in: the clock, the event queue, the
//! shared-resource calendars, and the host-side timing models (controller, its PCIe
//! attachment, the USB link) that transports book their messages and data on. Components get
//! `&mut Cx`, never the simulator, so none of them can reach another component's state.

use crate::event::{Event, EventQueue};
use crate::fault::FaultInjector;
use crate::link_usb2::Usb2Link;
use crate::link_usb3::Usb3Link;
use crate::pcie::{PcieLink, DESCRIPTOR_BYTES};
use crate::profile::{ControllerKind, HostProfile};
use crate::resource::{Calendar, Flow};
use crate::xhci::Controller;
use storlab_wire::usb::request::SETUP_LEN;
use storlab_wire::usb::SetupPacket;

/// Bytes per KiB, the unit of the host driver's per-size CPU cost.
const BYTES_PER_KIB: u64 = 1024;
/// Largest bulk data packet at High-Speed: 512 bytes (USB 2.0 §5.8.3).
const HIGH_SPEED_BULK_PACKET_BYTES: u64 = 512;
/// Largest bulk data packet at SuperSpeed: 1024 bytes (USB 3.0 §9.6.6, the endpoint descriptor's wMaxPacketSize).
const SUPER_SPEED_BULK_PACKET_BYTES: u64 = 1024;

/// The layer that models the host CPU running the driver (its busy time is of one thread).
pub const LAYER_HOST_CPU: &str = "host_cpu";

/// Indices of the shared-resource servers, and their names in the report.
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
        crate::cx::LAYER_HOST_CPU,
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
    /// The bulk data packet size: what one CRC error makes the link send again.
    pub fn bulk_packet_bytes(&self) -> u64 {
        match self {
            UsbTiming::High(_) => HIGH_SPEED_BULK_PACKET_BYTES,
            UsbTiming::Super(_) => SUPER_SPEED_BULK_PACKET_BYTES,
        }
    }
}

/// The clock, the queue, the resources and the host-side timing models.
pub(crate) struct Cx {
    pub now_ns: u64,
    pub events: EventQueue,
    pub servers: [Calendar; layer::COUNT],
    /// Server index of the USB IN direction (= USB_OUT on half-duplex High-Speed).
    pub usb_in: usize,
    pub controller: Controller,
    pub pcie_up: PcieLink,
    pub pcie_down: PcieLink,
    pub usb: Option<UsbTiming>,
    pub host: HostProfile,
    /// The fault plan the seams consult (`fault.rs`); None, the default, injects nothing and
    /// costs one branch where a seam checks it.
    pub faults: Option<Box<FaultInjector>>,
}

impl Cx {
    /// Reserve work on a shared resource (see [`Calendar::reserve`]).
    #[inline]
    pub fn reserve(&mut self, layer: usize, earliest_ns: u64, duration_ns: u64, bytes: u64) -> u64 {
        let now = self.now_ns;
        self.servers[layer].reserve(now, earliest_ns, duration_ns, bytes)
    }

    /// Pass a data stream through a shared resource (see [`Calendar::pass`]). Always inlined:
    /// left to LLVM it was called out of line once sata_recovery.rs joined the crate (+6% of
    /// 4 KiB read instructions on usb3-uas-ssd, callgrind), as the codegen units shifted.
    #[inline(always)]
    pub fn pass(
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
    pub fn schedule(&mut self, at_ns: u64, event: Event) {
        debug_assert!(at_ns >= self.now_ns);
        self.events.push(at_ns, event);
    }

    fn usb(&self) -> &UsbTiming {
        self.usb.as_ref().expect("USB stack")
    }

    /// Host CPU to map a command's data buffer of `bytes` (`cpu_ns_per_kib` per KiB started).
    #[inline]
    pub fn buffer_cpu_ns(&self, bytes: u32) -> u64 {
        self.host.cpu_ns_per_kib * u64::from(bytes).div_ceil(BYTES_PER_KIB)
    }

    /// The host's work when one of a command's transfers completes and the driver submits
    /// the next one: the transfer event's interrupt plus the hand-off (`phase_cpu_ns`) plus
    /// `extra_ns`. Booked on the host CPU from `at_ns`; returns when the next transfer is queued.
    pub fn hand_off(&mut self, at_ns: u64, extra_ns: u64) -> u64 {
        let cpu = self.controller.interrupt_cpu_ns
            + self.host.xhci_transfer_cpu_ns
            + self.host.phase_cpu_ns
            + extra_ns;
        self.reserve(layer::HOST_CPU, at_ns, cpu, 0)
    }

    /// Status reached host memory at `at_ns`: the interrupt and the driver's completion work
    /// are booked on the host CPU from then; returns when the command completes. The xHCI
    /// driver's per-transfer work: the CSW's for a chaining BOT driver (its CBW and data were
    /// handed off), else all three of the command's transfers, whose events arrive together.
    pub fn completion_cpu(&mut self, at_ns: u64) -> u64 {
        let transfers = if self.host.chains_transfers { 1 } else { 3 };
        let cpu = self.controller.interrupt_cpu_ns
            + self.host.complete_cpu_ns
            + transfers * self.host.xhci_transfer_cpu_ns;
        self.reserve(layer::HOST_CPU, at_ns, cpu, 0)
    }

    /// USB data IN: waits for the host's poll at High-Speed.
    #[inline]
    pub fn usb_data_in(&mut self, mut upstream: Flow, len: u64) -> Flow {
        let usb = self.usb();
        let ready = upstream.start_ns + upstream.first_piece_ns;
        upstream.start_ns += usb.in_start_ns(ready) - ready;
        let (d, p) = (usb.transfer_ns(len), usb.first_piece_ns(len));
        let flow = self.pass(self.usb_in, upstream, d, p, len);
        if self.faults.is_some() {
            return self.crc_retries(self.usb_in, flow, len);
        }
        flow
    }

    #[inline]
    pub fn usb_data_out(&mut self, upstream: Flow, len: u64) -> Flow {
        let usb = self.usb();
        let (d, p) = (usb.transfer_ns(len), usb.first_piece_ns(len));
        let flow = self.pass(layer::USB_OUT, upstream, d, p, len);
        if self.faults.is_some() {
            return self.crc_retries(layer::USB_OUT, flow, len);
        }
        flow
    }

    /// Data packets of a transfer that failed their CRC are sent again on the same direction
    /// once the transfer's other packets are through: at SuperSpeed the receiver answers the
    /// packet with an ACK whose Retry bit asks for it again (USB 3.0 ch. 8, ACK transaction packet); at High-Speed it
    /// sends no handshake and the host repeats the transaction (USB 2.0 ch. 8, bulk transactions). Each retry
    /// costs one packet's time on the link; the transfer ends that much later.
    #[cold]
    #[inline(never)]
    fn crc_retries(&mut self, direction: usize, mut flow: Flow, len: u64) -> Flow {
        let packet = self.usb().bulk_packet_bytes();
        let packets = len.div_ceil(packet).max(1);
        let errors = self
            .faults
            .as_mut()
            .expect("checked by the caller")
            .crc_errors(packets);
        if errors > 0 {
            let retry_ns = errors * self.usb().transfer_ns(packet);
            flow.end_ns = self.reserve(direction, flow.end_ns, retry_ns, errors * packet);
        }
        flow
    }

    /// Device to host memory: controller descriptor processing, then PCIe writes upstream.
    #[inline]
    pub fn host_data_in(&mut self, upstream: Flow, len: u64) -> Flow {
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
    pub fn host_data_out(&mut self, upstream: Flow, len: u64) -> Flow {
        // An AHCI controller read its PRDs with the command table (`Ahci::issue`); an xHCI
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
    pub fn usb_message_out(&mut self, at_ns: u64, bytes: u64, queue_ns: u64) -> u64 {
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
        let ns = self.usb().transfer_ns(bytes);
        self.reserve(layer::USB_OUT, t, ns, bytes)
    }

    /// A small device-to-host message (CSW, Sense IU, Ready IU): bus, PCIe, event processing.
    pub fn usb_message_in(&mut self, at_ns: u64, bytes: u64) -> u64 {
        let usb = self.usb();
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

    /// A control transfer without a data stage on endpoint 0 (CLEAR_FEATURE, Bulk-Only Mass
    /// Storage Reset): the SETUP packet goes out, the device parses it, the status stage comes
    /// back empty, and the driver handles the completion. Returns its times (the pcap writer
    /// records the URB from them); `driver_ns` is when the driver has handled it.
    pub fn usb_control(&mut self, at_ns: u64, setup: &SetupPacket) -> ControlTransfer {
        let mut bytes = [0u8; SETUP_LEN];
        setup
            .emit_into(&mut bytes)
            .expect("a SETUP packet is 8 bytes");
        let t = self.usb_message_out(at_ns, SETUP_LEN as u64, 0);
        let parsed = SetupPacket::parse_bytes(&bytes).expect("device: invalid SETUP packet");
        assert_eq!(&parsed, setup, "device decoded another request");
        let done_ns = self.usb_message_in(t, 0);
        ControlTransfer {
            setup: *setup,
            submit_ns: at_ns,
            done_ns,
            driver_ns: self.hand_off(done_ns, 0),
        }
    }

    /// A control transfer with a data stage into the host (GET_DESCRIPTOR) on endpoint 0: the
    /// SETUP packet goes out, the device's firmware answers after `firmware_ns` with
    /// `answer_bytes`, the status stage follows (a zero-length OUT packet), and the driver
    /// handles the completion.
    pub fn usb_control_in(
        &mut self,
        at_ns: u64,
        setup: &SetupPacket,
        answer_bytes: u64,
        firmware_ns: u64,
    ) -> ControlTransfer {
        let mut bytes = [0u8; SETUP_LEN];
        setup
            .emit_into(&mut bytes)
            .expect("a SETUP packet is 8 bytes");
        let t = self.usb_message_out(at_ns, SETUP_LEN as u64, 0);
        let parsed = SetupPacket::parse_bytes(&bytes).expect("device: invalid SETUP packet");
        assert_eq!(&parsed, setup, "device decoded another request");
        let data_ns = self.usb_message_in(t + firmware_ns, answer_bytes);
        let done_ns = self.usb_message_out(data_ns, 0, 0);
        ControlTransfer {
            setup: *setup,
            submit_ns: at_ns,
            done_ns,
            driver_ns: self.hand_off(done_ns, 0),
        }
    }
}

/// One control transfer of a recovery, as the host saw it: submitted, completed (status stage
/// back), handled by the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ControlTransfer {
    pub setup: SetupPacket,
    pub submit_ns: u64,
    pub done_ns: u64,
    pub driver_ns: u64,
}
