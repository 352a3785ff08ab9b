//! Session trace as a usbmon pcap (LINKTYPE_USB_LINUX_MMAPPED): enumeration with the
//! descriptors of a mass-storage bridge, then every URB the host driver submits and completes,
//! stamped with virtual time, including the URBs of fault recovery (stalled and unlinked
//! transfers, CLEAR_FEATURE, Bulk-Only Mass Storage Reset, REQUEST SENSE, task management).
//! Headers and descriptors are encoded by `wire`; what Wireshark shows is the bytes the
//! simulated layers exchanged.

use crate::usb_reset::{bridge_device_descriptor, PortReset};
use storlab_wire::pcap::{
    global_header, EventType, TransferType, UsbmonRepr, GLOBAL_HEADER_LEN, PCAP_MAGIC_NANOS,
    RECORD_HEADER_LEN, USBMON_HEADER_LEN,
};
use storlab_wire::usb::request::{HUB_FEATURE_BH_PORT_RESET, HUB_FEATURE_PORT_RESET};
use storlab_wire::usb::{
    emit_mass_storage_configuration, DescriptorType, MassStorageConfig, SetupPacket,
    ENDPOINT_DIR_IN,
};

/// Payload bytes captured per data URB (the URB length still says how much moved), so a trace
/// of a long run stays small.
pub const CAPTURE_DATA_BYTES_MAX: usize = 512;
const NANOS_PER_SECOND: u64 = 1_000_000_000;
/// Bus and device address the simulated bridge enumerates at.
const BUS: u16 = 1;
const DEVICE_ADDRESS: u8 = 2;
/// The root hub is device 1 of its bus; usbmon records its control requests too (the hub
/// driver's SetPortFeature), and the bridge is on its port 1.
const ROOT_HUB_ADDRESS: u8 = 1;
const ROOT_HUB_PORT: u16 = 1;
/// URB ids look like kernel addresses; one per (command, pipe) keeps submissions and
/// completions paired while a command is in flight.
const URB_ID_BASE: u64 = 0xffff_8800_0000_0000;
const CONTROL_URB_BASE: u64 = 0xffff_8900_0000_0000;
/// Bulk URBs of recoveries that are no command's own (REQUEST SENSE, task management).
const RECOVERY_URB_BASE: u64 = 0xffff_8a00_0000_0000;
/// usbmon's status of a URB that ended early (negative errno; Linux
/// Documentation/driver-api/usb/error-codes.rst): the endpoint stalled (-EPIPE) ...
pub const URB_STALLED: i32 = -32;
/// ... the driver unlinked it, asynchronously (`usb_unlink_urb`: -ECONNRESET) ...
pub const URB_UNLINKED: i32 = -104;
/// ... or killed it, waiting for its end (`usb_kill_urb`: -ENOENT).
pub const URB_KILLED: i32 = -2;
const CONFIG_DESCRIPTOR_HEADER_LEN: u16 = 9;
const DEVICE_DESCRIPTOR_LEN: u16 = 18;
/// Room for the largest configuration bundle (UAS, SuperSpeed).
const CONFIG_BUFFER_BYTES: usize = 256;

/// Which of a command's URBs: its command (CBW / Command IU), its data, its status
/// (CSW / Sense IU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Urb {
    Command,
    DataIn,
    DataOut,
    Status,
}

/// Records URBs into an in-memory pcap.
#[derive(Clone, Debug)]
pub struct PcapRecorder {
    bytes: Vec<u8>,
    /// Each record's time and where it starts in `bytes`, in the order recorded: the recorder
    /// learns some URBs' times before others it writes first (a status arrival is known when
    /// the command is issued), so [`PcapRecorder::into_bytes`] puts them in time order, as
    /// usbmon, which records each event as it happens, does.
    record_times: Vec<(u64, usize)>,
    config: MassStorageConfig,
    next_control_urb: u64,
    next_recovery_urb: u64,
    /// UAS: bytes each status URB asks for (the host driver's Sense IU buffer).
    status_urb_bytes: u32,
    /// UAS without streams: after a Ready IU the status URB is submitted before the data URB.
    status_before_data_after_ready: bool,
    /// The host driver's bulk URB `transfer_flags`.
    transfer_flags: crate::profile::UrbTransferFlags,
}

impl PcapRecorder {
    /// A capture with its global header and the device's enumeration at time 0.
    pub fn new(uas: bool, super_speed: bool) -> PcapRecorder {
        let mut bytes = Vec::with_capacity(1 << 16);
        bytes.extend_from_slice(&global_header(PCAP_MAGIC_NANOS));
        debug_assert_eq!(bytes.len(), GLOBAL_HEADER_LEN);
        let mut rec = PcapRecorder {
            bytes,
            record_times: Vec::new(),
            config: MassStorageConfig::new(uas, super_speed),
            next_control_urb: CONTROL_URB_BASE,
            next_recovery_urb: RECOVERY_URB_BASE,
            status_urb_bytes: STATUS_URB_BYTES,
            status_before_data_after_ready: false,
            transfer_flags: crate::profile::UrbTransferFlags::default(),
        };
        rec.enumerate();
        rec
    }

    /// The host driver's UAS status URBs: the bytes each asks for, and whether, after a Ready
    /// IU, it is submitted before the data URB (`HostProfile::status_urb_bytes`,
    /// `status_before_data_after_ready`).
    pub fn with_status_urbs(mut self, bytes: u32, before_data_after_ready: bool) -> PcapRecorder {
        self.status_urb_bytes = bytes;
        self.status_before_data_after_ready = before_data_after_ready;
        self
    }

    /// The host driver's bulk URB `transfer_flags` (`HostProfile::urb_transfer_flags`).
    pub fn with_transfer_flags(mut self, flags: crate::profile::UrbTransferFlags) -> PcapRecorder {
        self.transfer_flags = flags;
        self
    }

    /// Bytes each UAS status URB asks for.
    pub fn status_urb_bytes(&self) -> u32 {
        self.status_urb_bytes
    }

    fn enumerate(&mut self) {
        let device = bridge_device_descriptor(self.config.super_speed);
        let mut buf = [0u8; CONFIG_BUFFER_BYTES];
        let n = device.emit(&mut buf).expect("device descriptor fits");
        self.control(
            SetupPacket::get_descriptor(DescriptorType::Device, 0, DEVICE_DESCRIPTOR_LEN),
            &buf[..n],
        );
        let n = emit_mass_storage_configuration(&self.config, &mut buf)
            .expect("configuration bundle fits");
        let header = usize::from(CONFIG_DESCRIPTOR_HEADER_LEN);
        self.control(
            SetupPacket::get_descriptor(
                DescriptorType::Configuration,
                0,
                CONFIG_DESCRIPTOR_HEADER_LEN,
            ),
            &buf[..header],
        );
        self.control(
            SetupPacket::get_descriptor(DescriptorType::Configuration, 0, n as u16),
            &buf[..n],
        );
        self.control(SetupPacket::set_configuration(1), &[]);
        if self.config.uas {
            // UAS is alternate setting 1 of interface 0.
            self.control(SetupPacket::set_interface(0, 1), &[]);
        } else {
            self.control(SetupPacket::get_max_lun(0), &[0]);
        }
    }

    fn control(&mut self, setup: SetupPacket, data: &[u8]) {
        self.control_at(setup, data, 0, 0);
    }

    /// A control transfer submitted at `submit_ns` and completed at `done_ns` (IN requests
    /// complete with `data`, OUT requests carry it).
    fn control_at(&mut self, setup: SetupPacket, data: &[u8], submit_ns: u64, done_ns: u64) {
        self.control_to(DEVICE_ADDRESS, setup, data, submit_ns, done_ns);
    }

    /// A control transfer to the device at `address` (the bridge, or the root hub).
    fn control_to(
        &mut self,
        address: u8,
        setup: SetupPacket,
        data: &[u8],
        submit_ns: u64,
        done_ns: u64,
    ) {
        let id = self.next_control_urb;
        self.next_control_urb += 1;
        let endpoint = if setup.device_to_host {
            ENDPOINT_DIR_IN
        } else {
            0
        };
        let out: &[u8] = if setup.device_to_host { &[] } else { data };
        let mut s = header(id, EventType::Submission, TransferType::Control, endpoint);
        s.device = address;
        s.setup = Some(setup);
        s.urb_len = u32::from(setup.length);
        self.record(submit_ns, &s, out);
        let mut c = header(id, EventType::Completion, TransferType::Control, endpoint);
        c.device = address;
        c.urb_len = data.len() as u32;
        let input: &[u8] = if setup.device_to_host { data } else { &[] };
        self.record(done_ns, &c, input);
    }

    /// A recovery's control transfer without a data stage (Bulk-Only Mass Storage Reset,
    /// CLEAR_FEATURE(ENDPOINT_HALT)), submitted at `submit_ns`, its status stage back at
    /// `done_ns`.
    pub fn control_transfer(&mut self, setup: SetupPacket, submit_ns: u64, done_ns: u64) {
        self.control_at(setup, &[], submit_ns, done_ns);
    }

    /// A control transfer of the re-enumeration after a device reset: GET_DESCRIPTOR
    /// completes with `data`, SET_CONFIGURATION and SET_INTERFACE carry none.
    pub fn enumeration_transfer(
        &mut self,
        setup: SetupPacket,
        data: &[u8],
        submit_ns: u64,
        done_ns: u64,
    ) {
        self.control_at(setup, data, submit_ns, done_ns);
    }

    /// The hub driver resets the bridge's port at `at_ns`: SetPortFeature(PORT_RESET) or, for
    /// a warm reset, (BH_PORT_RESET) to the root hub, which completes the request at once and
    /// signals the reset itself.
    pub fn port_reset(&mut self, reset: PortReset, at_ns: u64) {
        let feature = match reset {
            PortReset::Reset => HUB_FEATURE_PORT_RESET,
            PortReset::Warm => HUB_FEATURE_BH_PORT_RESET,
        };
        let setup = SetupPacket::set_port_feature(feature, ROOT_HUB_PORT);
        self.control_to(ROOT_HUB_ADDRESS, setup, &[], at_ns, at_ns);
    }

    /// A control transfer the device never answered: submitted at `submit_ns`, ended by the
    /// host at `ended_ns` with `status` (`URB_KILLED`).
    pub fn control_unanswered(
        &mut self,
        setup: SetupPacket,
        submit_ns: u64,
        ended_ns: u64,
        status: i32,
    ) {
        let id = self.next_control_urb;
        self.next_control_urb += 1;
        let endpoint = if setup.device_to_host {
            ENDPOINT_DIR_IN
        } else {
            0
        };
        let mut s = header(id, EventType::Submission, TransferType::Control, endpoint);
        s.setup = Some(setup);
        s.urb_len = u32::from(setup.length);
        self.record(submit_ns, &s, &[]);
        let mut c = header(id, EventType::Completion, TransferType::Control, endpoint);
        c.status = status;
        self.record(ended_ns, &c, &[]);
    }

    /// The usbmon header of a bulk URB of `command` on `urb`'s endpoint.
    fn bulk_header(&self, command: u32, urb: Urb, event: EventType) -> UsbmonRepr {
        let mut h = header(
            Self::urb_id(command, urb),
            event,
            TransferType::Bulk,
            self.endpoint(urb),
        );
        let flags = &self.transfer_flags;
        h.xfer_flags = match urb {
            Urb::Command => flags.command,
            Urb::Status => flags.status,
            Urb::DataIn => flags.data_in,
            Urb::DataOut => flags.data_out,
        };
        h
    }

    /// A URB of `command` still pending ends without data at `at_ns`, with `status`
    /// ([`URB_STALLED`], [`URB_UNLINKED`], [`URB_KILLED`]).
    pub fn end_urb(&mut self, at_ns: u64, command: u32, urb: Urb, status: i32) {
        let mut h = self.bulk_header(command, urb, EventType::Completion);
        h.status = status;
        self.record(at_ns, &h, &[]);
    }

    /// A bulk transfer of a recovery that is no command's own (REQUEST SENSE's CBW, sense data
    /// and CSW; a Task Management IU; the Response IU) begins: a URB of `urb_len` bytes on
    /// `urb`'s pipe, submitted at `at_ns` (an OUT transfer carries `out_bytes`). Returns its
    /// id for [`PcapRecorder::end_transfer`].
    pub fn begin_transfer(&mut self, urb: Urb, at_ns: u64, urb_len: u32, out_bytes: &[u8]) -> u64 {
        let id = self.next_recovery_urb;
        self.next_recovery_urb += 1;
        let mut s = header(
            id,
            EventType::Submission,
            TransferType::Bulk,
            self.endpoint(urb),
        );
        s.urb_len = urb_len;
        self.record(at_ns, &s, out_bytes);
        id
    }

    /// The IN transfer `id` of [`PcapRecorder::begin_transfer`] ended at `at_ns` with
    /// `in_bytes` and `status` (0, or [`URB_KILLED`] when the driver stopped waiting).
    pub fn end_transfer(&mut self, id: u64, urb: Urb, at_ns: u64, in_bytes: &[u8], status: i32) {
        let mut c = header(
            id,
            EventType::Completion,
            TransferType::Bulk,
            self.endpoint(urb),
        );
        c.urb_len = in_bytes.len() as u32;
        c.status = status;
        self.record(at_ns, &c, in_bytes);
    }

    /// The host gave up on UAS and left the interface at its Bulk-Only alternate setting: from
    /// now on commands, data and status use the two bulk endpoints.
    pub fn use_bot(&mut self) {
        self.config.uas = false;
    }

    /// [`PcapRecorder::begin_transfer`] and [`PcapRecorder::end_transfer`] of a transfer of
    /// exactly `bytes` with nothing recorded between them.
    pub fn transfer(&mut self, urb: Urb, submit_ns: u64, done_ns: u64, bytes: &[u8]) {
        let into_host = self.endpoint(urb) & ENDPOINT_DIR_IN != 0;
        let len = bytes.len() as u32;
        let (out, input): (&[u8], &[u8]) = if into_host {
            (&[], bytes)
        } else {
            (bytes, &[])
        };
        let id = self.begin_transfer(urb, submit_ns, len, out);
        let mut c = header(
            id,
            EventType::Completion,
            TransferType::Bulk,
            self.endpoint(urb),
        );
        c.urb_len = len;
        self.record(done_ns, &c, input);
    }

    /// The endpoint a URB uses: UAS has command and status pipes, BOT sends everything on
    /// its two bulk endpoints.
    fn endpoint(&self, urb: Urb) -> u8 {
        match (urb, self.config.uas) {
            (Urb::Command, true) => self.config.command_out,
            (Urb::Status, true) => self.config.status_in,
            (Urb::Command | Urb::DataOut, _) => self.config.bulk_out,
            (Urb::Status | Urb::DataIn, _) => self.config.bulk_in,
        }
    }

    fn urb_id(command: u32, urb: Urb) -> u64 {
        URB_ID_BASE + (u64::from(command) << 8) + ((urb as u64) << 4)
    }

    /// The host submits a URB for `command`: OUT URBs carry their data, IN URBs the length
    /// they ask for.
    pub fn submit(&mut self, at_ns: u64, command: u32, urb: Urb, urb_len: u32, out_data: &[u8]) {
        let mut h = self.bulk_header(command, urb, EventType::Submission);
        h.urb_len = urb_len;
        let captured = &out_data[..out_data.len().min(CAPTURE_DATA_BYTES_MAX)];
        self.record(at_ns, &h, captured);
    }

    /// A URB completes: IN URBs carry the data received.
    pub fn complete(
        &mut self,
        at_ns: u64,
        command: u32,
        urb: Urb,
        actual_len: u32,
        in_data: &[u8],
    ) {
        let mut h = self.bulk_header(command, urb, EventType::Completion);
        h.urb_len = actual_len;
        let captured = &in_data[..in_data.len().min(CAPTURE_DATA_BYTES_MAX)];
        self.record(at_ns, &h, captured);
    }

    fn record(&mut self, at_ns: u64, header: &UsbmonRepr, data: &[u8]) {
        let mut h = *header;
        h.data_len = data.len() as u32;
        h.ts_sec = (at_ns / NANOS_PER_SECOND) as i64;
        h.ts_usec = ((at_ns % NANOS_PER_SECOND) / 1000) as i32;
        let len = (USBMON_HEADER_LEN + data.len()) as u32;
        self.record_times.push((at_ns, self.bytes.len()));
        self.bytes
            .extend_from_slice(&((at_ns / NANOS_PER_SECOND) as u32).to_le_bytes());
        self.bytes
            .extend_from_slice(&((at_ns % NANOS_PER_SECOND) as u32).to_le_bytes());
        self.bytes.extend_from_slice(&len.to_le_bytes());
        self.bytes.extend_from_slice(&len.to_le_bytes());
        let mut raw = [0u8; USBMON_HEADER_LEN];
        h.emit(&mut raw).expect("usbmon header buffer is exact");
        self.bytes.extend_from_slice(&raw);
        self.bytes.extend_from_slice(data);
    }

    /// The capture, its records in time order (records of one time keep the order they were
    /// recorded in: a submission before the completion it causes).
    pub fn into_bytes(mut self) -> Vec<u8> {
        if self.record_times.is_sorted_by_key(|&(at_ns, _)| at_ns) {
            return self.bytes;
        }
        self.record_times.sort_by_key(|&(at_ns, _)| at_ns);
        let mut sorted = Vec::with_capacity(self.bytes.len());
        sorted.extend_from_slice(&self.bytes[..GLOBAL_HEADER_LEN]);
        for &(_, start) in &self.record_times {
            let captured = u32::from_le_bytes(
                self.bytes[start + 8..start + 12]
                    .try_into()
                    .expect("a record header holds incl_len"),
            ) as usize;
            let end = start + RECORD_HEADER_LEN + captured;
            sorted.extend_from_slice(&self.bytes[start..end]);
        }
        self.bytes = sorted;
        self.bytes
    }
}

fn header(urb_id: u64, event: EventType, transfer: TransferType, endpoint: u8) -> UsbmonRepr {
    UsbmonRepr::new(urb_id, event, transfer, endpoint, DEVICE_ADDRESS, BUS)
}

use crate::op::Op;

/// Sense IU room a UAS driver asks for on the status pipe (header + fixed sense data) unless its
/// host profile names its own (`HostProfile::status_urb_bytes`).
pub const STATUS_URB_BYTES: u32 = 96;

/// What the recorder sees of one command: its id, its messages as sent, and the head of its
/// data (the payload as the host sees it, or the UNMAP list).
pub struct TracedCommand<'a> {
    pub id: u32,
    pub op: Op,
    /// Bytes of the data URB (the transfer, or the UNMAP list).
    pub data_len: u32,
    pub command: &'a [u8],
    pub status: &'a [u8],
    /// At most [`CAPTURE_DATA_BYTES_MAX`] bytes.
    pub data_head: &'a [u8],
}

/// What happened to a command, in the host driver's terms.
#[derive(Clone, Copy, Debug)]
pub enum TraceEvent<'a> {
    /// The driver issued the command (for UAS the status and, with streams, data URBs with it).
    Issued,
    /// The command URB completed; a BOT driver submits the data URB at `data_urb_ns` (or now).
    CommandDelivered { data_urb_ns: u64 },
    /// A Ready IU reached the host (High-Speed UAS): the status URB completes with it, and the
    /// driver submits the data URB it announces and a new status URB for the Sense IU, as
    /// Linux's uas driver does without streams.
    Ready { at_ns: u64, ready_iu: &'a [u8] },
    /// The data URB completed at `done_at_ns`; BOT submits the CSW URB at `status_at_ns`.
    DataDone { done_at_ns: u64, status_at_ns: u64 },
    /// Status reached the host: the status URB completes with the CSW / Sense IU bytes.
    /// (Recorded when the arrival time is known, so records can be slightly out of time
    /// order; usbmon readers sort by timestamp.)
    Status { at_ns: u64 },
}

impl PcapRecorder {
    /// Record the URBs `event` stands for, at `now_ns` unless it names its own times.
    pub fn on_event(&mut self, now_ns: u64, cmd: &TracedCommand, event: TraceEvent) {
        let id = cmd.id;
        match event {
            TraceEvent::Issued => {
                if self.config.uas {
                    self.submit(now_ns, id, Urb::Status, self.status_urb_bytes, &[]);
                    // With streams the data URB waits on its stream from the start; without
                    // them the driver submits it only when the device's Ready IU names the tag.
                    if self.config.super_speed && cmd.data_len > 0 {
                        self.submit_data(now_ns, cmd);
                    }
                }
                self.submit(
                    now_ns,
                    id,
                    Urb::Command,
                    cmd.command.len() as u32,
                    cmd.command,
                );
            }
            TraceEvent::CommandDelivered { data_urb_ns } => {
                self.complete(now_ns, id, Urb::Command, cmd.command.len() as u32, &[]);
                if !self.config.uas && cmd.data_len == 0 {
                    // No data phase (SYNCHRONIZE CACHE): the CSW transfer goes in its place.
                    let csw = storlab_wire::bot::CSW_LEN as u32;
                    self.submit(now_ns.max(data_urb_ns), id, Urb::Status, csw, &[]);
                } else if !self.config.uas {
                    // A driver that chains its transfers submits the data transfer after the
                    // CBW's completion has been handled.
                    self.submit_data(now_ns.max(data_urb_ns), cmd);
                }
            }
            TraceEvent::Ready { at_ns, ready_iu } => {
                self.complete(at_ns, id, Urb::Status, ready_iu.len() as u32, ready_iu);
                if self.status_before_data_after_ready {
                    self.submit(at_ns, id, Urb::Status, self.status_urb_bytes, &[]);
                    self.submit_data(at_ns, cmd);
                } else {
                    self.submit_data(at_ns, cmd);
                    self.submit(at_ns, id, Urb::Status, self.status_urb_bytes, &[]);
                }
            }
            TraceEvent::DataDone {
                done_at_ns,
                status_at_ns,
            } => {
                let input: &[u8] = if cmd.op == Op::Read {
                    cmd.data_head
                } else {
                    &[]
                };
                self.complete(done_at_ns, id, data_urb(cmd.op), cmd.data_len, input);
                if !self.config.uas {
                    let csw = storlab_wire::bot::CSW_LEN as u32;
                    self.submit(status_at_ns, id, Urb::Status, csw, &[]);
                }
            }
            TraceEvent::Status { at_ns } => {
                self.complete(at_ns, id, Urb::Status, cmd.status.len() as u32, cmd.status);
            }
        }
    }

    /// The host submits the data URB (OUT carries the payload / UNMAP list).
    fn submit_data(&mut self, at_ns: u64, cmd: &TracedCommand) {
        let out: &[u8] = if cmd.op == Op::Read {
            &[]
        } else {
            cmd.data_head
        };
        self.submit(at_ns, cmd.id, data_urb(cmd.op), cmd.data_len, out);
    }
}

/// The data URB of a command doing `op`.
pub(crate) fn data_urb(op: Op) -> Urb {
    if op == Op::Read {
        Urb::DataIn
    } else {
        Urb::DataOut
    }
}
