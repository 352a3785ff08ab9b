//! The 8-byte SETUP packet of control transfers and the standard and mass-storage class
//! requests built from it.

use crate::bytes::{le16, packet_view, put_le16};
use crate::error::{need, room, Result};

/// Length of a SETUP packet.
pub const SETUP_LEN: usize = 8;
const DIRECTION_IN_BIT: u8 = 0x80;
const KIND_SHIFT: u8 = 5;
const KIND_MASK: u8 = 0x03;
const RECIPIENT_MASK: u8 = 0x1F;
/// Feature selector ENDPOINT_HALT (CLEAR_FEATURE on an endpoint).
pub const FEATURE_ENDPOINT_HALT: u16 = 0;
/// Hub class port feature PORT_RESET (USB 2.0 §11.24.2, Table 11-17): USB 2.0 reset
/// signalling, or a USB 3.0 hot reset.
pub const HUB_FEATURE_PORT_RESET: u16 = 4;
/// Hub class port feature BH_PORT_RESET (USB 3.0 §10.14.2, Table 10-9): a warm reset.
pub const HUB_FEATURE_BH_PORT_RESET: u16 = 28;

crate::bytes::code_enum! {
    /// Standard request codes (USB 2.0 table 9-4).
    pub enum StandardRequest: u8 {
        /// GET_STATUS.
        GetStatus = 0,
        /// CLEAR_FEATURE.
        ClearFeature = 1,
        /// SET_FEATURE.
        SetFeature = 3,
        /// SET_ADDRESS.
        SetAddress = 5,
        /// GET_DESCRIPTOR.
        GetDescriptor = 6,
        /// SET_DESCRIPTOR.
        SetDescriptor = 7,
        /// GET_CONFIGURATION.
        GetConfiguration = 8,
        /// SET_CONFIGURATION.
        SetConfiguration = 9,
        /// GET_INTERFACE.
        GetInterface = 10,
        /// SET_INTERFACE.
        SetInterface = 11,
        /// SET_SEL (USB 3.2 Table 9-4): the system exit latencies for U1/U2, 6 bytes of data.
        SetSel = 48,
        /// SET_ISOCH_DELAY (USB 3.2 Table 9-4): wValue is the delay from host to device in ns.
        SetIsochDelay = 49,
    }
}

/// bmRequestType bits 6..5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequestKind {
    /// Standard.
    Standard = 0,
    /// Class.
    Class = 1,
    /// Vendor.
    Vendor = 2,
    /// Reserved.
    Reserved = 3,
}

crate::bytes::code_enum! {
    /// bmRequestType bits 4..0.
    pub enum Recipient: u8 {
        /// Device.
        Device = 0,
        /// Interface.
        Interface = 1,
        /// Endpoint.
        Endpoint = 2,
        /// Other.
        Other = 3,
    }
}

mod field {
    use core::ops::Range;
    pub const REQUEST_TYPE: usize = 0;
    pub const REQUEST: usize = 1;
    pub const VALUE: Range<usize> = 2..4;
    pub const INDEX: Range<usize> = 4..6;
    pub const LENGTH: Range<usize> = 6..8;
}

/// Zero-copy view of a SETUP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetupView<T: AsRef<[u8]>> {
    buffer: T,
}
packet_view!(SetupView, SETUP_LEN);

impl<T: AsRef<[u8]>> SetupView<T> {
    /// Fails unless 8 bytes are present.
    pub fn check_len(&self) -> Result<()> {
        need("SETUP packet", self.buffer.as_ref(), SETUP_LEN)
    }
    /// bmRequestType.
    pub fn request_type(&self) -> u8 {
        self.buffer.as_ref()[field::REQUEST_TYPE]
    }
    /// bRequest.
    pub fn request(&self) -> u8 {
        self.buffer.as_ref()[field::REQUEST]
    }
    /// wValue.
    pub fn value(&self) -> u16 {
        le16(&self.buffer.as_ref()[field::VALUE])
    }
    /// wIndex.
    pub fn index(&self) -> u16 {
        le16(&self.buffer.as_ref()[field::INDEX])
    }
    /// wLength.
    pub fn length(&self) -> u16 {
        le16(&self.buffer.as_ref()[field::LENGTH])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> SetupView<T> {
    /// Sets bmRequestType.
    pub fn set_request_type(&mut self, v: u8) {
        self.buffer.as_mut()[field::REQUEST_TYPE] = v
    }
    /// Sets bRequest.
    pub fn set_request(&mut self, v: u8) {
        self.buffer.as_mut()[field::REQUEST] = v
    }
    /// Sets wValue.
    pub fn set_value(&mut self, v: u16) {
        put_le16(&mut self.buffer.as_mut()[field::VALUE], v)
    }
    /// Sets wIndex.
    pub fn set_index(&mut self, v: u16) {
        put_le16(&mut self.buffer.as_mut()[field::INDEX], v)
    }
    /// Sets wLength.
    pub fn set_length(&mut self, v: u16) {
        put_le16(&mut self.buffer.as_mut()[field::LENGTH], v)
    }
}

/// A parsed SETUP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SetupPacket {
    /// Data stage direction: device to host.
    pub device_to_host: bool,
    /// Standard, class or vendor.
    pub kind: RequestKind,
    /// Recipient.
    pub recipient: Recipient,
    /// bRequest.
    pub request: u8,
    /// wValue.
    pub value: u16,
    /// wIndex.
    pub index: u16,
    /// wLength: bytes of the data stage.
    pub length: u16,
}

impl SetupPacket {
    /// GET_DESCRIPTOR(type, index) asking for `length` bytes.
    pub fn get_descriptor(descriptor_type: super::DescriptorType, index: u8, length: u16) -> Self {
        SetupPacket {
            device_to_host: true,
            kind: RequestKind::Standard,
            recipient: Recipient::Device,
            request: StandardRequest::GetDescriptor.into(),
            value: u16::from_be_bytes([descriptor_type.into(), index]),
            index: 0,
            length,
        }
    }
    /// SET_CONFIGURATION(value).
    pub fn set_configuration(configuration: u8) -> Self {
        SetupPacket {
            device_to_host: false,
            kind: RequestKind::Standard,
            recipient: Recipient::Device,
            request: StandardRequest::SetConfiguration.into(),
            value: configuration.into(),
            index: 0,
            length: 0,
        }
    }
    /// SET_INTERFACE(interface, alternate setting).
    pub fn set_interface(interface: u8, alternate_setting: u8) -> Self {
        SetupPacket {
            device_to_host: false,
            kind: RequestKind::Standard,
            recipient: Recipient::Interface,
            request: StandardRequest::SetInterface.into(),
            value: alternate_setting.into(),
            index: interface.into(),
            length: 0,
        }
    }
    /// CLEAR_FEATURE(ENDPOINT_HALT) on `endpoint`.
    pub fn clear_halt(endpoint: u8) -> Self {
        SetupPacket {
            device_to_host: false,
            kind: RequestKind::Standard,
            recipient: Recipient::Endpoint,
            request: StandardRequest::ClearFeature.into(),
            value: FEATURE_ENDPOINT_HALT,
            index: endpoint.into(),
            length: 0,
        }
    }
    /// BOT class request Bulk-Only Mass Storage Reset on `interface`.
    pub fn bulk_only_reset(interface: u8) -> Self {
        SetupPacket {
            device_to_host: false,
            kind: RequestKind::Class,
            recipient: Recipient::Interface,
            request: crate::bot::ClassRequest::BulkOnlyReset.into(),
            value: 0,
            index: interface.into(),
            length: 0,
        }
    }
    /// Hub class request SetPortFeature(`feature`) on `port` (1-based; USB 2.0 §11.24.2.13).
    pub fn set_port_feature(feature: u16, port: u16) -> Self {
        SetupPacket {
            device_to_host: false,
            kind: RequestKind::Class,
            recipient: Recipient::Other,
            request: StandardRequest::SetFeature.into(),
            value: feature,
            index: port,
            length: 0,
        }
    }
    /// BOT class request Get Max LUN on `interface`.
    pub fn get_max_lun(interface: u8) -> Self {
        SetupPacket {
            device_to_host: true,
            kind: RequestKind::Class,
            recipient: Recipient::Interface,
            request: crate::bot::ClassRequest::GetMaxLun.into(),
            value: 0,
            index: interface.into(),
            length: 1,
        }
    }

    /// Parses a SETUP packet (every bit pattern is a valid packet).
    pub fn parse<T: AsRef<[u8]>>(view: &SetupView<T>) -> Result<Self> {
        view.check_len()?;
        let rt = view.request_type();
        Ok(SetupPacket {
            device_to_host: rt & DIRECTION_IN_BIT != 0,
            kind: match (rt >> KIND_SHIFT) & KIND_MASK {
                0 => RequestKind::Standard,
                1 => RequestKind::Class,
                2 => RequestKind::Vendor,
                _ => RequestKind::Reserved,
            },
            recipient: (rt & RECIPIENT_MASK).into(),
            request: view.request(),
            value: view.value(),
            index: view.index(),
            length: view.length(),
        })
    }
    /// Parses from a byte slice.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Self> {
        Self::parse(&SetupView::new_unchecked(bytes))
    }
    /// bmRequestType byte.
    pub fn request_type(&self) -> u8 {
        let direction = if self.device_to_host {
            DIRECTION_IN_BIT
        } else {
            0
        };
        direction | (self.kind as u8) << KIND_SHIFT | (u8::from(self.recipient) & RECIPIENT_MASK)
    }
    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        SETUP_LEN
    }
    /// Writes the 8 bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, view: &mut SetupView<T>) {
        view.set_request_type(self.request_type());
        view.set_request(self.request);
        view.set_value(self.value);
        view.set_index(self.index);
        view.set_length(self.length);
    }
    /// The 8 bytes as an array.
    pub fn to_bytes(&self) -> [u8; SETUP_LEN] {
        let mut out = [0u8; SETUP_LEN];
        self.emit(&mut SetupView::new_unchecked(&mut out[..]));
        out
    }
    /// Writes into the front of `buffer`.
    pub fn emit_into(&self, buffer: &mut [u8]) -> Result<usize> {
        room("SETUP packet", buffer, SETUP_LEN)?;
        buffer[..SETUP_LEN].copy_from_slice(&self.to_bytes());
        Ok(SETUP_LEN)
    }
    /// The standard request, when this is one.
    pub fn standard_request(&self) -> Option<StandardRequest> {
        (self.kind == RequestKind::Standard).then(|| self.request.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usb::DescriptorType;

    #[test]
    fn golden_setup_packets() {
        let cases: [([u8; 8], SetupPacket); 5] = [
            (
                [0x80, 0x06, 0x00, 0x02, 0, 0, 0xff, 0x00],
                SetupPacket::get_descriptor(DescriptorType::Configuration, 0, 255),
            ),
            (
                [0x00, 0x09, 0x01, 0x00, 0, 0, 0, 0],
                SetupPacket::set_configuration(1),
            ),
            (
                [0x01, 0x0b, 0x01, 0x00, 0x00, 0x00, 0, 0],
                SetupPacket::set_interface(0, 1),
            ),
            ([0xa1, 0xfe, 0, 0, 0, 0, 1, 0], SetupPacket::get_max_lun(0)),
            (
                [0x02, 0x01, 0, 0, 0x81, 0, 0, 0],
                SetupPacket::clear_halt(0x81),
            ),
        ];
        for (golden, repr) in cases {
            assert_eq!(SetupPacket::parse_bytes(&golden), Ok(repr));
            let mut buf = [0xA5u8; 8];
            repr.emit(&mut SetupView::new_unchecked(&mut buf[..]));
            assert_eq!(buf, golden);
        }
        assert!(SetupPacket::parse_bytes(&[0; 7]).is_err());
    }
}
