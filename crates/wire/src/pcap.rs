//! usbmon captures: the pcap file format with LINKTYPE_USB_LINUX_MMAPPED (220) records, each a
//! 64-byte usbmon header plus the captured data. A reader that rejects damage with the record
//! index and byte offset, and (with `alloc`) a writer for whole simulated sessions.
//!
//! Byte order: the pcap and usbmon headers are in the byte order of the capturing host, which
//! the magic number reveals; this crate writes little-endian and reads both.

use core::fmt;

use crate::bytes::{le16, le32, le64, packet_view, put_le16, put_le32, put_le64};
use crate::error::{need, room, Error, Result};
use crate::usb::request::SetupPacket;

/// pcap magic for microsecond timestamps.
pub const PCAP_MAGIC_MICROS: u32 = 0xa1b2_c3d4;
/// pcap magic for nanosecond timestamps.
pub const PCAP_MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// pcap format major version.
pub const PCAP_VERSION_MAJOR: u16 = 2;
/// pcap format minor version.
pub const PCAP_VERSION_MINOR: u16 = 4;
/// Link type of usbmon's binary (mmapped) interface.
pub const LINKTYPE_USB_LINUX_MMAPPED: u32 = 220;
/// Length of the pcap global header.
pub const GLOBAL_HEADER_LEN: usize = 24;
/// Length of a pcap record header.
pub const RECORD_HEADER_LEN: usize = 16;
/// Length of the usbmon mmapped header.
pub const USBMON_HEADER_LEN: usize = 64;
/// Snapshot length written into captures.
pub const SNAPLEN: u32 = 0x0004_0000;

/// The 24-byte global header of a usbmon capture, little-endian: `magic` says whether record
/// times are in microseconds ([`PCAP_MAGIC_MICROS`]) or nanoseconds ([`PCAP_MAGIC_NANOS`]);
/// UTC, [`SNAPLEN`], [`LINKTYPE_USB_LINUX_MMAPPED`]. One writer for every capture storlab makes.
pub fn global_header(magic: u32) -> [u8; GLOBAL_HEADER_LEN] {
    let mut header = [0u8; GLOBAL_HEADER_LEN];
    header[0..4].copy_from_slice(&magic.to_le_bytes());
    header[4..6].copy_from_slice(&PCAP_VERSION_MAJOR.to_le_bytes());
    header[6..8].copy_from_slice(&PCAP_VERSION_MINOR.to_le_bytes());
    // Bytes 8..16, thiszone (UTC) and sigfigs, stay 0.
    header[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
    header[20..24].copy_from_slice(&LINKTYPE_USB_LINUX_MMAPPED.to_le_bytes());
    header
}
/// usbmon `flag_setup` when a SETUP packet is present.
pub const FLAG_SETUP_PRESENT: u8 = 0;
/// usbmon `flag_setup` when none is.
pub const FLAG_SETUP_ABSENT: u8 = b'-';
/// usbmon `flag_data` when data is present.
pub const FLAG_DATA_PRESENT: u8 = 0;
/// usbmon `flag_data` for an IN submission (no data by design) or no data captured.
pub const FLAG_DATA_ABSENT: u8 = b'<';
/// usbmon `flag_data` for an OUT completion (its data went out with the submission).
pub const FLAG_DATA_OUT_COMPLETION: u8 = b'>';
/// URB status of a submission: -EINPROGRESS.
pub const STATUS_IN_PROGRESS: i32 = -115;

crate::bytes::code_enum! {
    /// usbmon event type.
    pub enum EventType: u8 {
        /// URB submission.
        Submission = b'S',
        /// URB completion.
        Completion = b'C',
        /// Submission error.
        Error = b'E',
    }
}

crate::bytes::code_enum! {
    /// usbmon transfer type.
    pub enum TransferType: u8 {
        /// Isochronous.
        Isochronous = 0,
        /// Interrupt.
        Interrupt = 1,
        /// Control.
        Control = 2,
        /// Bulk.
        Bulk = 3,
    }
}

mod field {
    use core::ops::Range;
    pub const ID: Range<usize> = 0..8;
    pub const TYPE: usize = 8;
    pub const XFER_TYPE: usize = 9;
    pub const EPNUM: usize = 10;
    pub const DEVNUM: usize = 11;
    pub const BUSNUM: Range<usize> = 12..14;
    pub const FLAG_SETUP: usize = 14;
    pub const FLAG_DATA: usize = 15;
    pub const TS_SEC: Range<usize> = 16..24;
    pub const TS_USEC: Range<usize> = 24..28;
    pub const STATUS: Range<usize> = 28..32;
    pub const LENGTH: Range<usize> = 32..36;
    pub const LEN_CAP: Range<usize> = 36..40;
    pub const SETUP: Range<usize> = 40..48;
    pub const INTERVAL: Range<usize> = 48..52;
    pub const START_FRAME: Range<usize> = 52..56;
    pub const XFER_FLAGS: Range<usize> = 56..60;
    pub const NDESC: Range<usize> = 60..64;
}

/// Zero-copy view of a (little-endian) usbmon mmapped header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsbmonPacket<T: AsRef<[u8]>> {
    buffer: T,
}
packet_view!(UsbmonPacket, USBMON_HEADER_LEN);

impl<T: AsRef<[u8]>> UsbmonPacket<T> {
    /// Fails unless the 64-byte header is present.
    pub fn check_len(&self) -> Result<()> {
        need("usbmon header", self.buffer.as_ref(), USBMON_HEADER_LEN)
    }
    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    /// URB id (kernel address of the URB, pairs S with C).
    pub fn urb_id(&self) -> u64 {
        le64(&self.b()[field::ID])
    }
    /// Event type.
    pub fn event_type(&self) -> EventType {
        self.b()[field::TYPE].into()
    }
    /// Transfer type.
    pub fn transfer_type(&self) -> TransferType {
        self.b()[field::XFER_TYPE].into()
    }
    /// Endpoint address (bit 7 = IN).
    pub fn endpoint(&self) -> u8 {
        self.b()[field::EPNUM]
    }
    /// Device address.
    pub fn device(&self) -> u8 {
        self.b()[field::DEVNUM]
    }
    /// Bus number.
    pub fn bus(&self) -> u16 {
        le16(&self.b()[field::BUSNUM])
    }
    /// flag_setup.
    pub fn flag_setup(&self) -> u8 {
        self.b()[field::FLAG_SETUP]
    }
    /// flag_data.
    pub fn flag_data(&self) -> u8 {
        self.b()[field::FLAG_DATA]
    }
    /// Timestamp seconds.
    pub fn ts_sec(&self) -> i64 {
        le64(&self.b()[field::TS_SEC]) as i64
    }
    /// Timestamp microseconds.
    pub fn ts_usec(&self) -> i32 {
        le32(&self.b()[field::TS_USEC]) as i32
    }
    /// URB status (negative errno).
    pub fn status(&self) -> i32 {
        le32(&self.b()[field::STATUS]) as i32
    }
    /// URB length (requested on submission, actual on completion).
    pub fn urb_len(&self) -> u32 {
        le32(&self.b()[field::LENGTH])
    }
    /// Captured data length that follows the header.
    pub fn data_len(&self) -> u32 {
        le32(&self.b()[field::LEN_CAP])
    }
    /// SETUP bytes (meaningful when flag_setup is 0).
    pub fn setup_bytes(&self) -> &[u8] {
        &self.b()[field::SETUP]
    }
    /// Interval.
    pub fn interval(&self) -> i32 {
        le32(&self.b()[field::INTERVAL]) as i32
    }
    /// Start frame.
    pub fn start_frame(&self) -> i32 {
        le32(&self.b()[field::START_FRAME]) as i32
    }
    /// URB transfer flags.
    pub fn xfer_flags(&self) -> u32 {
        le32(&self.b()[field::XFER_FLAGS])
    }
    /// Number of isochronous descriptors.
    pub fn ndesc(&self) -> u32 {
        le32(&self.b()[field::NDESC])
    }
}

/// A parsed usbmon header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UsbmonRepr {
    /// URB id.
    pub urb_id: u64,
    /// Event type.
    pub event: EventType,
    /// Transfer type.
    pub transfer: TransferType,
    /// Endpoint address (bit 7 = IN).
    pub endpoint: u8,
    /// Device address.
    pub device: u8,
    /// Bus number.
    pub bus: u16,
    /// SETUP packet of a control submission.
    pub setup: Option<SetupPacket>,
    /// Timestamp seconds.
    pub ts_sec: i64,
    /// Timestamp microseconds.
    pub ts_usec: i32,
    /// URB status.
    pub status: i32,
    /// URB length.
    pub urb_len: u32,
    /// Captured data bytes following the header.
    pub data_len: u32,
    /// Interval.
    pub interval: i32,
    /// Start frame.
    pub start_frame: i32,
    /// Transfer flags.
    pub xfer_flags: u32,
    /// Isochronous descriptor count.
    pub ndesc: u32,
}

impl UsbmonRepr {
    /// A record of one URB event with no setup packet, no data and zero timestamps: a
    /// submission is still in progress (`-EINPROGRESS`), a completion succeeded. Callers fill
    /// in the rest.
    pub fn new(
        urb_id: u64,
        event: EventType,
        transfer: TransferType,
        endpoint: u8,
        device: u8,
        bus: u16,
    ) -> Self {
        UsbmonRepr {
            urb_id,
            event,
            transfer,
            endpoint,
            device,
            bus,
            setup: None,
            ts_sec: 0,
            ts_usec: 0,
            status: if event == EventType::Submission {
                STATUS_IN_PROGRESS
            } else {
                0
            },
            urb_len: 0,
            data_len: 0,
            interval: 0,
            start_frame: 0,
            xfer_flags: 0,
            ndesc: 0,
        }
    }

    /// Parses a little-endian usbmon header.
    pub fn parse<T: AsRef<[u8]>>(p: &UsbmonPacket<T>) -> Result<Self> {
        p.check_len()?;
        if let EventType::Unknown(v) = p.event_type() {
            return Err(Error::BadField {
                field: "usbmon type",
                value: v.into(),
                reason: "must be 'S', 'C' or 'E'",
            });
        }
        if let TransferType::Unknown(v) = p.transfer_type() {
            return Err(Error::BadField {
                field: "usbmon xfer_type",
                value: v.into(),
                reason: "must be 0..=3",
            });
        }
        let setup = if p.flag_setup() == FLAG_SETUP_PRESENT {
            Some(SetupPacket::parse_bytes(p.setup_bytes())?)
        } else {
            None
        };
        Ok(UsbmonRepr {
            urb_id: p.urb_id(),
            event: p.event_type(),
            transfer: p.transfer_type(),
            endpoint: p.endpoint(),
            device: p.device(),
            bus: p.bus(),
            setup,
            ts_sec: p.ts_sec(),
            ts_usec: p.ts_usec(),
            status: p.status(),
            urb_len: p.urb_len(),
            data_len: p.data_len(),
            interval: p.interval(),
            start_frame: p.start_frame(),
            xfer_flags: p.xfer_flags(),
            ndesc: p.ndesc(),
        })
    }
    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        USBMON_HEADER_LEN
    }
    /// Writes the 64-byte header (little-endian).
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        room("usbmon header", buffer, USBMON_HEADER_LEN)?;
        let b = &mut buffer[..USBMON_HEADER_LEN];
        b.fill(0);
        put_le64(&mut b[field::ID], self.urb_id);
        b[field::TYPE] = self.event.into();
        b[field::XFER_TYPE] = self.transfer.into();
        b[field::EPNUM] = self.endpoint;
        b[field::DEVNUM] = self.device;
        put_le16(&mut b[field::BUSNUM], self.bus);
        b[field::FLAG_SETUP] = if self.setup.is_some() {
            FLAG_SETUP_PRESENT
        } else {
            FLAG_SETUP_ABSENT
        };
        // As drivers/usb/mon/mon_bin.c sets it: an IN submission and an OUT completion carry
        // no data by design ('<' and '>'), anything else with no bytes captured is '<'.
        b[field::FLAG_DATA] = if self.data_len > 0 {
            FLAG_DATA_PRESENT
        } else if self.event == EventType::Completion
            && self.endpoint & crate::usb::ENDPOINT_DIR_IN == 0
        {
            FLAG_DATA_OUT_COMPLETION
        } else {
            FLAG_DATA_ABSENT
        };
        put_le64(&mut b[field::TS_SEC], self.ts_sec as u64);
        put_le32(&mut b[field::TS_USEC], self.ts_usec as u32);
        put_le32(&mut b[field::STATUS], self.status as u32);
        put_le32(&mut b[field::LENGTH], self.urb_len);
        put_le32(&mut b[field::LEN_CAP], self.data_len);
        if let Some(setup) = self.setup {
            b[field::SETUP].copy_from_slice(&setup.to_bytes());
        }
        put_le32(&mut b[field::INTERVAL], self.interval as u32);
        put_le32(&mut b[field::START_FRAME], self.start_frame as u32);
        put_le32(&mut b[field::XFER_FLAGS], self.xfer_flags);
        put_le32(&mut b[field::NDESC], self.ndesc);
        Ok(USBMON_HEADER_LEN)
    }
}

/// What is wrong with a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PcapErrorKind {
    /// The file does not start with a pcap magic number.
    BadMagic(u32),
    /// The capture's link type is not usbmon mmapped (220).
    UnsupportedLinkType(u32),
    /// The record's captured length exceeds its original length or the snapshot length.
    BadRecordLength {
        /// incl_len.
        captured: u32,
        /// orig_len.
        original: u32,
    },
    /// The usbmon header's len_cap disagrees with the bytes the record holds.
    DataLengthMismatch {
        /// len_cap.
        declared: u32,
        /// Bytes after the usbmon header.
        present: usize,
    },
    /// A header or message inside the capture is malformed.
    Wire(Error),
}

/// A damaged capture: what is wrong, in which record (0-based) and at which byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PcapError {
    /// Record index, or `None` for the global header.
    pub record: Option<usize>,
    /// Byte offset in the file where the faulty item starts.
    pub offset: usize,
    /// What is wrong.
    pub kind: PcapErrorKind,
}

impl fmt::Display for PcapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.record {
            Some(r) => write!(f, "record {r} at byte {}: ", self.offset)?,
            None => write!(f, "pcap header at byte {}: ", self.offset)?,
        }
        match self.kind {
            PcapErrorKind::BadMagic(m) => write!(f, "not a pcap file (magic {m:#010x})"),
            PcapErrorKind::UnsupportedLinkType(l) => {
                write!(
                    f,
                    "link type {l} is not usbmon mmapped ({LINKTYPE_USB_LINUX_MMAPPED})"
                )
            }
            PcapErrorKind::BadRecordLength { captured, original } => {
                write!(f, "captured length {captured} exceeds original length {original} or snapshot length")
            }
            PcapErrorKind::DataLengthMismatch { declared, present } => {
                write!(
                    f,
                    "usbmon len_cap {declared} but {present} data bytes present"
                )
            }
            PcapErrorKind::Wire(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for PcapError {}

/// One record of a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PcapRecord<'a> {
    /// 0-based record index.
    pub index: usize,
    /// Byte offset of the record header in the file.
    pub offset: usize,
    /// The usbmon header.
    pub usbmon: UsbmonRepr,
    /// Captured data after the usbmon header.
    pub data: &'a [u8],
}

/// Reads a usbmon pcap capture held in memory.
#[derive(Debug, Clone, Copy)]
pub struct PcapReader<'a> {
    data: &'a [u8],
    big_endian: bool,
    snaplen: u32,
}

impl<'a> PcapReader<'a> {
    /// Checks the global header.
    pub fn new(data: &'a [u8]) -> core::result::Result<Self, PcapError> {
        let err = |kind| PcapError {
            record: None,
            offset: 0,
            kind,
        };
        need("pcap global header", data, GLOBAL_HEADER_LEN)
            .map_err(|e| err(PcapErrorKind::Wire(e)))?;
        let magic_le = le32(&data[0..4]);
        let big_endian = match magic_le {
            PCAP_MAGIC_MICROS | PCAP_MAGIC_NANOS => false,
            m if m.swap_bytes() == PCAP_MAGIC_MICROS || m.swap_bytes() == PCAP_MAGIC_NANOS => true,
            m => return Err(err(PcapErrorKind::BadMagic(m))),
        };
        let reader = PcapReader {
            data,
            big_endian,
            snaplen: 0,
        };
        let linktype = reader.u32_at(20);
        if linktype != LINKTYPE_USB_LINUX_MMAPPED {
            return Err(PcapError {
                record: None,
                offset: 20,
                kind: PcapErrorKind::UnsupportedLinkType(linktype),
            });
        }
        Ok(PcapReader {
            snaplen: reader.u32_at(16),
            ..reader
        })
    }

    fn u32_at(&self, at: usize) -> u32 {
        let v = le32(&self.data[at..at + 4]);
        if self.big_endian {
            v.swap_bytes()
        } else {
            v
        }
    }

    /// The records, each checked; iteration stops after the first error.
    pub fn records(
        &self,
    ) -> impl Iterator<Item = core::result::Result<PcapRecord<'a>, PcapError>> + 'a {
        let reader = *self;
        let mut at = GLOBAL_HEADER_LEN;
        let mut index = 0usize;
        let mut failed = false;
        core::iter::from_fn(move || {
            if failed || at >= reader.data.len() {
                return None;
            }
            let result = reader.record_at(index, at);
            match &result {
                Ok((_, next)) => at = *next,
                Err(_) => failed = true,
            }
            index += 1;
            Some(result.map(|(r, _)| r))
        })
    }

    fn record_at(
        &self,
        index: usize,
        at: usize,
    ) -> core::result::Result<(PcapRecord<'a>, usize), PcapError> {
        let err = |offset, kind| PcapError {
            record: Some(index),
            offset,
            kind,
        };
        let rest = &self.data[at..];
        need("pcap record header", rest, RECORD_HEADER_LEN)
            .map_err(|e| err(at, PcapErrorKind::Wire(e)))?;
        let captured = self.u32_at(at + 8);
        let original = self.u32_at(at + 12);
        if captured > original || (self.snaplen != 0 && captured > self.snaplen.max(SNAPLEN)) {
            return Err(err(
                at + 8,
                PcapErrorKind::BadRecordLength { captured, original },
            ));
        }
        let body_at = at + RECORD_HEADER_LEN;
        let body_len = captured as usize;
        need("pcap record", &rest[RECORD_HEADER_LEN..], body_len)
            .map_err(|e| err(at, PcapErrorKind::Wire(e)))?;
        let body = &self.data[body_at..body_at + body_len];
        let mut header = [0u8; USBMON_HEADER_LEN];
        need("usbmon header", body, USBMON_HEADER_LEN)
            .map_err(|e| err(body_at, PcapErrorKind::Wire(e)))?;
        header.copy_from_slice(&body[..USBMON_HEADER_LEN]);
        if self.big_endian {
            swap_usbmon_header(&mut header);
        }
        let usbmon = UsbmonRepr::parse(&UsbmonPacket::new_unchecked(&header[..]))
            .map_err(|e| err(body_at, PcapErrorKind::Wire(e)))?;
        let data = &body[USBMON_HEADER_LEN..];
        if usbmon.data_len as usize != data.len() {
            return Err(err(
                body_at + field::LEN_CAP.start,
                PcapErrorKind::DataLengthMismatch {
                    declared: usbmon.data_len,
                    present: data.len(),
                },
            ));
        }
        Ok((
            PcapRecord {
                index,
                offset: at,
                usbmon,
                data,
            },
            body_at + body_len,
        ))
    }
}

/// Converts a big-endian usbmon header to little-endian in place (the SETUP bytes are
/// little-endian on the wire in either case and stay as they are).
fn swap_usbmon_header(h: &mut [u8; USBMON_HEADER_LEN]) {
    h[field::ID].reverse();
    h[field::BUSNUM].reverse();
    h[field::TS_SEC].reverse();
    for r in [
        field::TS_USEC,
        field::STATUS,
        field::LENGTH,
        field::LEN_CAP,
        field::INTERVAL,
        field::START_FRAME,
        field::XFER_FLAGS,
        field::NDESC,
    ] {
        h[r].reverse();
    }
}

#[cfg(feature = "alloc")]
pub use writer::PcapWriter;

#[cfg(feature = "alloc")]
mod writer {
    use super::*;
    use alloc::vec::Vec;

    const MICROS_PER_SECOND: u64 = 1_000_000;

    /// Builds a usbmon capture of one device in memory: every transfer is written as a
    /// submission and a completion with fresh URB ids and advancing timestamps.
    #[derive(Debug, Clone)]
    pub struct PcapWriter {
        bytes: Vec<u8>,
        bus: u16,
        device: u8,
        next_urb_id: u64,
        time_us: u64,
        step_us: u64,
    }

    impl PcapWriter {
        /// Starts a capture of device `device` on bus `bus`; each event advances the clock by
        /// `step_us` microseconds.
        pub fn new(bus: u16, device: u8, step_us: u64) -> Self {
            let mut bytes = Vec::with_capacity(4096);
            bytes.extend_from_slice(&global_header(PCAP_MAGIC_MICROS));
            // URB ids look like kernel addresses; any distinct non-zero values do.
            PcapWriter {
                bytes,
                bus,
                device,
                next_urb_id: 0xffff_8800_0000_0000,
                time_us: 0,
                step_us,
            }
        }

        /// Appends one record: `header` (its `data_len` is set from `data`) and `data`.
        pub fn record(&mut self, header: &UsbmonRepr, data: &[u8]) {
            let mut header = *header;
            header.data_len = data.len() as u32;
            header.ts_sec = (self.time_us / MICROS_PER_SECOND) as i64;
            header.ts_usec = (self.time_us % MICROS_PER_SECOND) as i32;
            let len = (USBMON_HEADER_LEN + data.len()) as u32;
            self.bytes
                .extend_from_slice(&(header.ts_sec as u32).to_le_bytes());
            self.bytes
                .extend_from_slice(&(header.ts_usec as u32).to_le_bytes());
            self.bytes.extend_from_slice(&len.to_le_bytes());
            self.bytes.extend_from_slice(&len.to_le_bytes());
            let mut raw = [0u8; USBMON_HEADER_LEN];
            // Cannot fail: `raw` is exactly the header length.
            let _ = header.emit(&mut raw);
            self.bytes.extend_from_slice(&raw);
            self.bytes.extend_from_slice(data);
            self.time_us += self.step_us;
        }

        fn header(
            &self,
            urb_id: u64,
            event: EventType,
            transfer: TransferType,
            endpoint: u8,
        ) -> UsbmonRepr {
            UsbmonRepr::new(urb_id, event, transfer, endpoint, self.device, self.bus)
        }

        fn urb_id(&mut self) -> u64 {
            let id = self.next_urb_id;
            self.next_urb_id += 0x100;
            id
        }

        /// A control transfer: SETUP (+ OUT data) submitted, then completed (+ IN data).
        pub fn control(&mut self, setup: SetupPacket, data: &[u8]) {
            let id = self.urb_id();
            let endpoint = if setup.device_to_host {
                crate::usb::ENDPOINT_DIR_IN
            } else {
                0
            };
            let mut s = self.header(id, EventType::Submission, TransferType::Control, endpoint);
            s.setup = Some(setup);
            s.urb_len = u32::from(setup.length);
            let out_data: &[u8] = if setup.device_to_host { &[] } else { data };
            self.record(&s, out_data);
            let mut c = self.header(id, EventType::Completion, TransferType::Control, endpoint);
            c.urb_len = data.len() as u32;
            let in_data: &[u8] = if setup.device_to_host { data } else { &[] };
            self.record(&c, in_data);
        }

        /// A bulk OUT transfer of `data` on `endpoint`.
        pub fn bulk_out(&mut self, endpoint: u8, data: &[u8]) {
            let id = self.urb_id();
            let mut s = self.header(id, EventType::Submission, TransferType::Bulk, endpoint);
            s.urb_len = data.len() as u32;
            self.record(&s, data);
            let mut c = self.header(id, EventType::Completion, TransferType::Bulk, endpoint);
            c.urb_len = data.len() as u32;
            self.record(&c, &[]);
        }

        /// A bulk IN transfer on `endpoint` asking for `requested` bytes and receiving `data`.
        pub fn bulk_in(&mut self, endpoint: u8, requested: u32, data: &[u8]) {
            let id = self.submit_bulk_in(endpoint, requested);
            self.complete_bulk_in(id, endpoint, data);
        }

        /// Submits a bulk IN URB (UAS keeps several outstanding); returns its id.
        pub fn submit_bulk_in(&mut self, endpoint: u8, requested: u32) -> u64 {
            let id = self.urb_id();
            let mut s = self.header(id, EventType::Submission, TransferType::Bulk, endpoint);
            s.urb_len = requested;
            self.record(&s, &[]);
            id
        }

        /// Completes a bulk IN URB submitted earlier with `data`.
        pub fn complete_bulk_in(&mut self, urb_id: u64, endpoint: u8, data: &[u8]) {
            let mut c = self.header(urb_id, EventType::Completion, TransferType::Bulk, endpoint);
            c.urb_len = data.len() as u32;
            self.record(&c, data);
        }

        /// The capture so far.
        pub fn as_bytes(&self) -> &[u8] {
            &self.bytes
        }

        /// The finished capture.
        pub fn into_bytes(self) -> Vec<u8> {
            self.bytes
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usbmon_header_golden() {
        let repr = UsbmonRepr {
            urb_id: 0x1122_3344_5566_7788,
            event: EventType::Submission,
            transfer: TransferType::Control,
            endpoint: 0x80,
            device: 3,
            bus: 2,
            setup: Some(SetupPacket::get_descriptor(
                crate::usb::DescriptorType::Device,
                0,
                18,
            )),
            ts_sec: 1,
            ts_usec: 2,
            status: STATUS_IN_PROGRESS,
            urb_len: 18,
            data_len: 0,
            interval: 0,
            start_frame: 0,
            xfer_flags: 0,
            ndesc: 0,
        };
        let mut buf = [0xA5u8; 64];
        repr.emit(&mut buf).unwrap();
        assert_eq!(
            &buf[..16],
            &[0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, b'S', 2, 0x80, 3, 2, 0, 0, b'<']
        );
        assert_eq!(
            &buf[28..48],
            &[0x8d, 0xff, 0xff, 0xff, 18, 0, 0, 0, 0, 0, 0, 0, 0x80, 6, 0, 1, 0, 0, 18, 0]
        );
        assert_eq!(
            UsbmonRepr::parse(&UsbmonPacket::new_unchecked(&buf[..])),
            Ok(repr)
        );
        buf[8] = b'X';
        assert!(matches!(
            UsbmonRepr::parse(&UsbmonPacket::new_unchecked(&buf[..])),
            Err(Error::BadField {
                field: "usbmon type",
                ..
            })
        ));
    }

    #[cfg(feature = "alloc")]
    #[test]
    fn writer_reader_round_trip_and_damage() {
        let mut w = PcapWriter::new(1, 5, 10);
        w.control(SetupPacket::set_configuration(1), &[]);
        w.bulk_out(0x02, &[1, 2, 3]);
        let bytes = w.into_bytes();
        let reader = PcapReader::new(&bytes).unwrap();
        let records: alloc::vec::Vec<_> = reader
            .records()
            .collect::<core::result::Result<_, _>>()
            .unwrap();
        assert_eq!(records.len(), 4);
        assert_eq!(records[2].data, &[1, 2, 3]);
        assert_eq!(records[2].usbmon.endpoint, 0x02);
        assert_eq!(records[1].usbmon.ts_usec, 10);

        let mut damaged = bytes.clone();
        let third = records[2].offset;
        damaged[third + RECORD_HEADER_LEN + 36] = 9; // len_cap
        let e = PcapReader::new(&damaged)
            .unwrap()
            .records()
            .find_map(|r| r.err())
            .unwrap();
        assert_eq!(e.record, Some(2));
        assert_eq!(e.offset, third + RECORD_HEADER_LEN + 36);
        assert!(matches!(
            e.kind,
            PcapErrorKind::DataLengthMismatch {
                declared: 9,
                present: 3
            }
        ));
        assert!(matches!(
            PcapReader::new(&bytes[..10]),
            Err(PcapError { record: None, .. })
        ));
        let mut wrong_link = bytes.clone();
        wrong_link[20] = 1;
        assert!(matches!(
            PcapReader::new(&wrong_link).unwrap_err().kind,
            PcapErrorKind::UnsupportedLinkType(1)
        ));
        let truncated = &bytes[..bytes.len() - 1];
        let e = PcapReader::new(truncated)
            .unwrap()
            .records()
            .find_map(|r| r.err())
            .unwrap();
        assert_eq!(e.record, Some(3));
    }
}
