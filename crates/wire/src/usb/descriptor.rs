//! Standard USB descriptors (device, configuration, interface, endpoint), the SuperSpeed
//! endpoint companion, the UAS pipe usage descriptor, and a builder for a whole mass-storage
//! configuration (BOT alternate setting 0, optional UAS alternate setting 1).

use crate::bytes::{le16, put_le16};
use crate::error::{need, room, Error, Result};

/// Length of a device descriptor.
pub const DEVICE_DESCRIPTOR_LEN: usize = 18;
/// Length of a configuration descriptor header.
pub const CONFIGURATION_DESCRIPTOR_LEN: usize = 9;
/// Length of an interface descriptor.
pub const INTERFACE_DESCRIPTOR_LEN: usize = 9;
/// Length of an endpoint descriptor.
pub const ENDPOINT_DESCRIPTOR_LEN: usize = 7;
/// Length of a SuperSpeed endpoint companion descriptor.
pub const SS_ENDPOINT_COMPANION_LEN: usize = 6;
/// Length of a UAS pipe usage descriptor.
pub const PIPE_USAGE_DESCRIPTOR_LEN: usize = 4;
/// Endpoint bmAttributes transfer type: bulk.
pub const ENDPOINT_TRANSFER_BULK: u8 = 0x02;
const TRANSFER_TYPE_MASK: u8 = 0x03;
const MAX_STREAMS_MASK: u8 = 0x1F;
/// bmAttributes bit 7 of a configuration: must be one.
pub const CONFIG_ATTRIBUTES_RESERVED_ONE: u8 = 0x80;
/// High-Speed bulk max packet size.
pub const HIGH_SPEED_BULK_MAX_PACKET: u16 = 512;
/// SuperSpeed bulk max packet size.
pub const SUPER_SPEED_BULK_MAX_PACKET: u16 = 1024;
/// bcdUSB of a USB 2.0 device.
pub const BCD_USB_2_0: u16 = 0x0200;
/// bcdUSB of a USB 3.0 device.
pub const BCD_USB_3_0: u16 = 0x0300;
/// bMaxPacketSize0 of a High-Speed device (bytes).
pub const HIGH_SPEED_EP0_MAX_PACKET: u8 = 64;
/// bMaxPacketSize0 of a SuperSpeed device (exponent: 2^9 = 512 bytes).
pub const SUPER_SPEED_EP0_MAX_PACKET_EXPONENT: u8 = 9;

crate::bytes::code_enum! {
    /// bDescriptorType.
    pub enum DescriptorType: u8 {
        /// DEVICE.
        Device = 0x01,
        /// CONFIGURATION.
        Configuration = 0x02,
        /// STRING.
        String = 0x03,
        /// INTERFACE.
        Interface = 0x04,
        /// ENDPOINT.
        Endpoint = 0x05,
        /// DEVICE_QUALIFIER.
        DeviceQualifier = 0x06,
        /// BOS (Binary device Object Store, USB 3.2 §9.6.2): the header of a SuperSpeed
        /// device's capability list.
        Bos = 0x0F,
        /// DEVICE CAPABILITY (USB 3.2 §9.6.2, Table 9-6): one capability inside the BOS.
        DeviceCapability = 0x10,
        /// Class-specific interface; for UAS this is the Pipe Usage descriptor.
        PipeUsage = 0x24,
        /// SUPERSPEED_USB_ENDPOINT_COMPANION.
        SsEndpointCompanion = 0x30,
    }
}

crate::bytes::code_enum! {
    /// UAS pipe ID of a Pipe Usage descriptor.
    pub enum PipeId: u8 {
        /// Command pipe (bulk OUT).
        Command = 0x01,
        /// Status pipe (bulk IN).
        Status = 0x02,
        /// Data-In pipe (bulk IN).
        DataIn = 0x03,
        /// Data-Out pipe (bulk OUT).
        DataOut = 0x04,
    }
}

fn check_header(what: &'static str, data: &[u8], len: usize, ty: DescriptorType) -> Result<()> {
    need(what, data, len)?;
    if usize::from(data[0]) != len {
        return Err(Error::BadField {
            field: "bLength",
            value: data[0].into(),
            reason: what,
        });
    }
    if data[1] != u8::from(ty) {
        return Err(Error::BadField {
            field: "bDescriptorType",
            value: data[1].into(),
            reason: what,
        });
    }
    Ok(())
}

fn start<'b>(
    what: &'static str,
    buffer: &'b mut [u8],
    len: usize,
    ty: DescriptorType,
) -> Result<&'b mut [u8]> {
    room(what, buffer, len)?;
    let out = &mut buffer[..len];
    out.fill(0);
    out[0] = len as u8;
    out[1] = ty.into();
    Ok(out)
}

/// Device descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeviceDescriptor {
    /// bcdUSB.
    pub usb_version_bcd: u16,
    /// bDeviceClass (0: per interface).
    pub class: u8,
    /// bDeviceSubClass.
    pub subclass: u8,
    /// bDeviceProtocol.
    pub protocol: u8,
    /// bMaxPacketSize0.
    pub max_packet_size0: u8,
    /// idVendor.
    pub vendor_id: u16,
    /// idProduct.
    pub product_id: u16,
    /// bcdDevice.
    pub device_version_bcd: u16,
    /// iManufacturer.
    pub manufacturer_index: u8,
    /// iProduct.
    pub product_index: u8,
    /// iSerialNumber.
    pub serial_index: u8,
    /// bNumConfigurations.
    pub num_configurations: u8,
}

impl DeviceDescriptor {
    /// Parses 18 bytes.
    pub fn parse(d: &[u8]) -> Result<Self> {
        check_header(
            "device descriptor",
            d,
            DEVICE_DESCRIPTOR_LEN,
            DescriptorType::Device,
        )?;
        Ok(DeviceDescriptor {
            usb_version_bcd: le16(&d[2..4]),
            class: d[4],
            subclass: d[5],
            protocol: d[6],
            max_packet_size0: d[7],
            vendor_id: le16(&d[8..10]),
            product_id: le16(&d[10..12]),
            device_version_bcd: le16(&d[12..14]),
            manufacturer_index: d[14],
            product_index: d[15],
            serial_index: d[16],
            num_configurations: d[17],
        })
    }
    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        DEVICE_DESCRIPTOR_LEN
    }
    /// Writes 18 bytes.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        let d = start(
            "device descriptor",
            buffer,
            DEVICE_DESCRIPTOR_LEN,
            DescriptorType::Device,
        )?;
        put_le16(&mut d[2..4], self.usb_version_bcd);
        d[4] = self.class;
        d[5] = self.subclass;
        d[6] = self.protocol;
        d[7] = self.max_packet_size0;
        put_le16(&mut d[8..10], self.vendor_id);
        put_le16(&mut d[10..12], self.product_id);
        put_le16(&mut d[12..14], self.device_version_bcd);
        d[14] = self.manufacturer_index;
        d[15] = self.product_index;
        d[16] = self.serial_index;
        d[17] = self.num_configurations;
        Ok(DEVICE_DESCRIPTOR_LEN)
    }
}

/// Configuration descriptor (the 9-byte header of the configuration bundle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConfigurationDescriptor {
    /// wTotalLength: the whole bundle.
    pub total_length: u16,
    /// bNumInterfaces.
    pub num_interfaces: u8,
    /// bConfigurationValue.
    pub configuration_value: u8,
    /// iConfiguration.
    pub configuration_index: u8,
    /// bmAttributes.
    pub attributes: u8,
    /// bMaxPower (2 mA units at High-Speed, 8 mA at SuperSpeed).
    pub max_power: u8,
}

impl ConfigurationDescriptor {
    /// Parses 9 bytes.
    pub fn parse(d: &[u8]) -> Result<Self> {
        check_header(
            "configuration descriptor",
            d,
            CONFIGURATION_DESCRIPTOR_LEN,
            DescriptorType::Configuration,
        )?;
        Ok(ConfigurationDescriptor {
            total_length: le16(&d[2..4]),
            num_interfaces: d[4],
            configuration_value: d[5],
            configuration_index: d[6],
            attributes: d[7],
            max_power: d[8],
        })
    }
    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        CONFIGURATION_DESCRIPTOR_LEN
    }
    /// Writes 9 bytes.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        let d = start(
            "configuration descriptor",
            buffer,
            CONFIGURATION_DESCRIPTOR_LEN,
            DescriptorType::Configuration,
        )?;
        put_le16(&mut d[2..4], self.total_length);
        d[4] = self.num_interfaces;
        d[5] = self.configuration_value;
        d[6] = self.configuration_index;
        d[7] = self.attributes;
        d[8] = self.max_power;
        Ok(CONFIGURATION_DESCRIPTOR_LEN)
    }
}

/// Interface descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InterfaceDescriptor {
    /// bInterfaceNumber.
    pub interface_number: u8,
    /// bAlternateSetting.
    pub alternate_setting: u8,
    /// bNumEndpoints.
    pub num_endpoints: u8,
    /// bInterfaceClass (8 = mass storage).
    pub class: u8,
    /// bInterfaceSubClass (6 = SCSI).
    pub subclass: u8,
    /// bInterfaceProtocol (0x50 BOT, 0x62 UAS).
    pub protocol: u8,
    /// iInterface.
    pub interface_index: u8,
}

impl InterfaceDescriptor {
    /// Parses 9 bytes.
    pub fn parse(d: &[u8]) -> Result<Self> {
        check_header(
            "interface descriptor",
            d,
            INTERFACE_DESCRIPTOR_LEN,
            DescriptorType::Interface,
        )?;
        Ok(InterfaceDescriptor {
            interface_number: d[2],
            alternate_setting: d[3],
            num_endpoints: d[4],
            class: d[5],
            subclass: d[6],
            protocol: d[7],
            interface_index: d[8],
        })
    }
    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        INTERFACE_DESCRIPTOR_LEN
    }
    /// Writes 9 bytes.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        let d = start(
            "interface descriptor",
            buffer,
            INTERFACE_DESCRIPTOR_LEN,
            DescriptorType::Interface,
        )?;
        d[2] = self.interface_number;
        d[3] = self.alternate_setting;
        d[4] = self.num_endpoints;
        d[5] = self.class;
        d[6] = self.subclass;
        d[7] = self.protocol;
        d[8] = self.interface_index;
        Ok(INTERFACE_DESCRIPTOR_LEN)
    }
}

/// Endpoint descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EndpointDescriptor {
    /// bEndpointAddress (bit 7 = IN).
    pub address: u8,
    /// bmAttributes (bits 1..0 = transfer type).
    pub attributes: u8,
    /// wMaxPacketSize in bytes.
    pub max_packet_size: u16,
    /// bInterval.
    pub interval: u8,
}

impl EndpointDescriptor {
    /// A bulk endpoint.
    pub fn bulk(address: u8, max_packet_size: u16) -> Self {
        EndpointDescriptor {
            address,
            attributes: ENDPOINT_TRANSFER_BULK,
            max_packet_size,
            interval: 0,
        }
    }
    /// True for a bulk endpoint.
    pub fn is_bulk(&self) -> bool {
        self.attributes & TRANSFER_TYPE_MASK == ENDPOINT_TRANSFER_BULK
    }
    /// Parses 7 bytes.
    pub fn parse(d: &[u8]) -> Result<Self> {
        check_header(
            "endpoint descriptor",
            d,
            ENDPOINT_DESCRIPTOR_LEN,
            DescriptorType::Endpoint,
        )?;
        Ok(EndpointDescriptor {
            address: d[2],
            attributes: d[3],
            max_packet_size: le16(&d[4..6]),
            interval: d[6],
        })
    }
    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        ENDPOINT_DESCRIPTOR_LEN
    }
    /// Writes 7 bytes.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        let d = start(
            "endpoint descriptor",
            buffer,
            ENDPOINT_DESCRIPTOR_LEN,
            DescriptorType::Endpoint,
        )?;
        d[2] = self.address;
        d[3] = self.attributes;
        put_le16(&mut d[4..6], self.max_packet_size);
        d[6] = self.interval;
        Ok(ENDPOINT_DESCRIPTOR_LEN)
    }
}

/// SuperSpeed endpoint companion descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SsEndpointCompanion {
    /// bMaxBurst: packets per burst minus one (0..=15).
    pub max_burst: u8,
    /// Bulk MaxStreams exponent: 2^n streams (0 = no streams, ≤ 16).
    pub max_streams_exponent: u8,
    /// wBytesPerInterval (periodic endpoints only).
    pub bytes_per_interval: u16,
}

impl SsEndpointCompanion {
    /// Number of streams this bulk endpoint supports (0 without streams).
    pub fn max_streams(&self) -> u32 {
        if self.max_streams_exponent == 0 {
            0
        } else {
            1u32 << self.max_streams_exponent.min(16)
        }
    }
    /// Parses 6 bytes.
    pub fn parse(d: &[u8]) -> Result<Self> {
        check_header(
            "SuperSpeed endpoint companion",
            d,
            SS_ENDPOINT_COMPANION_LEN,
            DescriptorType::SsEndpointCompanion,
        )?;
        Ok(SsEndpointCompanion {
            max_burst: d[2],
            max_streams_exponent: d[3] & MAX_STREAMS_MASK,
            bytes_per_interval: le16(&d[4..6]),
        })
    }
    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        SS_ENDPOINT_COMPANION_LEN
    }
    /// Writes 6 bytes.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        if self.max_streams_exponent > 16 || self.max_burst > 15 {
            return Err(Error::BadField {
                field: "SS companion bMaxBurst/MaxStreams",
                value: u64::from(self.max_burst) << 8 | u64::from(self.max_streams_exponent),
                reason: "burst ≤ 15, streams exponent ≤ 16",
            });
        }
        let d = start(
            "SuperSpeed endpoint companion",
            buffer,
            SS_ENDPOINT_COMPANION_LEN,
            DescriptorType::SsEndpointCompanion,
        )?;
        d[2] = self.max_burst;
        d[3] = self.max_streams_exponent;
        put_le16(&mut d[4..6], self.bytes_per_interval);
        Ok(SS_ENDPOINT_COMPANION_LEN)
    }
}

/// UAS Pipe Usage descriptor: which UAS pipe the preceding endpoint is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PipeUsageDescriptor {
    /// bPipeID.
    pub pipe: PipeId,
}

impl PipeUsageDescriptor {
    /// Parses 4 bytes.
    pub fn parse(d: &[u8]) -> Result<Self> {
        check_header(
            "pipe usage descriptor",
            d,
            PIPE_USAGE_DESCRIPTOR_LEN,
            DescriptorType::PipeUsage,
        )?;
        Ok(PipeUsageDescriptor { pipe: d[2].into() })
    }
    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        PIPE_USAGE_DESCRIPTOR_LEN
    }
    /// Writes 4 bytes.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        let d = start(
            "pipe usage descriptor",
            buffer,
            PIPE_USAGE_DESCRIPTOR_LEN,
            DescriptorType::PipeUsage,
        )?;
        d[2] = self.pipe.into();
        Ok(PIPE_USAGE_DESCRIPTOR_LEN)
    }
}

/// Any descriptor found in a descriptor bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Descriptor<'a> {
    /// Device.
    Device(DeviceDescriptor),
    /// Configuration header.
    Configuration(ConfigurationDescriptor),
    /// Interface.
    Interface(InterfaceDescriptor),
    /// Endpoint.
    Endpoint(EndpointDescriptor),
    /// SuperSpeed endpoint companion.
    SsEndpointCompanion(SsEndpointCompanion),
    /// UAS pipe usage.
    PipeUsage(PipeUsageDescriptor),
    /// A descriptor this crate does not decode, kept raw.
    Other {
        /// bDescriptorType.
        descriptor_type: DescriptorType,
        /// The whole descriptor.
        bytes: &'a [u8],
    },
}

/// Walks a descriptor bundle (e.g. a GET_DESCRIPTOR(CONFIGURATION) response) by bLength.
/// A zero or overlong bLength ends the walk with an error naming its offset-relative field.
pub fn descriptors(bundle: &[u8]) -> impl Iterator<Item = Result<Descriptor<'_>>> + '_ {
    let mut at = 0usize;
    core::iter::from_fn(move || {
        if at >= bundle.len() {
            return None;
        }
        let rest = &bundle[at..];
        if rest.len() < 2 {
            at = bundle.len();
            return Some(Err(Error::Truncated {
                what: "descriptor header",
                needed: 2,
                got: rest.len(),
            }));
        }
        let len = usize::from(rest[0]);
        if len < 2 {
            at = bundle.len();
            return Some(Err(Error::BadField {
                field: "bLength",
                value: len as u64,
                reason: "at least 2",
            }));
        }
        if len > rest.len() {
            at = bundle.len();
            return Some(Err(Error::Truncated {
                what: "descriptor",
                needed: len,
                got: rest.len(),
            }));
        }
        at += len;
        let d = &rest[..len];
        let ty = DescriptorType::from(d[1]);
        Some(match ty {
            DescriptorType::Device => DeviceDescriptor::parse(d).map(Descriptor::Device),
            DescriptorType::Configuration => {
                ConfigurationDescriptor::parse(d).map(Descriptor::Configuration)
            }
            DescriptorType::Interface => InterfaceDescriptor::parse(d).map(Descriptor::Interface),
            DescriptorType::Endpoint => EndpointDescriptor::parse(d).map(Descriptor::Endpoint),
            DescriptorType::SsEndpointCompanion => {
                SsEndpointCompanion::parse(d).map(Descriptor::SsEndpointCompanion)
            }
            DescriptorType::PipeUsage => PipeUsageDescriptor::parse(d).map(Descriptor::PipeUsage),
            other => Ok(Descriptor::Other {
                descriptor_type: other,
                bytes: d,
            }),
        })
    })
}

/// Shape of a mass-storage device's configuration: a BOT interface (alternate setting 0)
/// and, when `uas` is set, a UAS alternate setting 1 with four pipes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MassStorageConfig {
    /// Offer UAS as alternate setting 1.
    pub uas: bool,
    /// SuperSpeed (1024-byte packets, endpoint companions, streams on UAS pipes).
    pub super_speed: bool,
    /// bMaxBurst of the bulk endpoints (SuperSpeed).
    pub max_burst: u8,
    /// Streams exponent of the UAS data/status pipes (SuperSpeed; 5 = 32 streams).
    pub max_streams_exponent: u8,
    /// BOT bulk-in endpoint address (also UAS data-in).
    pub bulk_in: u8,
    /// BOT bulk-out endpoint address (also UAS data-out).
    pub bulk_out: u8,
    /// UAS status pipe endpoint address.
    pub status_in: u8,
    /// UAS command pipe endpoint address.
    pub command_out: u8,
}

impl MassStorageConfig {
    /// The endpoint layout common to UAS bridges: data-in 0x81, data-out 0x02, status 0x83,
    /// command 0x04.
    pub fn new(uas: bool, super_speed: bool) -> Self {
        MassStorageConfig {
            uas,
            super_speed,
            max_burst: if super_speed { 15 } else { 0 },
            max_streams_exponent: if super_speed && uas { 5 } else { 0 },
            bulk_in: 0x81,
            bulk_out: 0x02,
            status_in: 0x83,
            command_out: 0x04,
        }
    }
    /// wTotalLength of the bundle.
    pub fn total_len(&self) -> usize {
        let ep = ENDPOINT_DESCRIPTOR_LEN
            + if self.super_speed {
                SS_ENDPOINT_COMPANION_LEN
            } else {
                0
            };
        CONFIGURATION_DESCRIPTOR_LEN
            + INTERFACE_DESCRIPTOR_LEN
            + 2 * ep
            + if self.uas {
                INTERFACE_DESCRIPTOR_LEN + 4 * (ep + PIPE_USAGE_DESCRIPTOR_LEN)
            } else {
                0
            }
    }
}

/// Writes the whole configuration bundle for `config`; returns its length.
pub fn emit_mass_storage_configuration(
    config: &MassStorageConfig,
    buffer: &mut [u8],
) -> Result<usize> {
    let total = config.total_len();
    room("mass-storage configuration", buffer, total)?;
    let max_packet = if config.super_speed {
        SUPER_SPEED_BULK_MAX_PACKET
    } else {
        HIGH_SPEED_BULK_MAX_PACKET
    };
    let mut at = ConfigurationDescriptor {
        total_length: total as u16,
        num_interfaces: 1,
        configuration_value: 1,
        configuration_index: 0,
        attributes: CONFIG_ATTRIBUTES_RESERVED_ONE,
        max_power: if config.super_speed { 112 } else { 250 },
    }
    .emit(buffer)?;
    let endpoint = |buffer: &mut [u8],
                    at: &mut usize,
                    address: u8,
                    streams: u8,
                    pipe: Option<PipeId>|
     -> Result<()> {
        *at += EndpointDescriptor::bulk(address, max_packet).emit(&mut buffer[*at..])?;
        if config.super_speed {
            *at += SsEndpointCompanion {
                max_burst: config.max_burst,
                max_streams_exponent: streams,
                bytes_per_interval: 0,
            }
            .emit(&mut buffer[*at..])?;
        }
        if let Some(pipe) = pipe {
            *at += PipeUsageDescriptor { pipe }.emit(&mut buffer[*at..])?;
        }
        Ok(())
    };
    let interface = |alternate_setting: u8, num_endpoints: u8, protocol: u8| InterfaceDescriptor {
        interface_number: 0,
        alternate_setting,
        num_endpoints,
        class: super::CLASS_MASS_STORAGE,
        subclass: super::SUBCLASS_SCSI,
        protocol,
        interface_index: 0,
    };
    at += interface(0, 2, crate::bot::INTERFACE_PROTOCOL_BOT).emit(&mut buffer[at..])?;
    endpoint(buffer, &mut at, config.bulk_in, 0, None)?;
    endpoint(buffer, &mut at, config.bulk_out, 0, None)?;
    if config.uas {
        let streams = config.max_streams_exponent;
        at += interface(1, 4, crate::uas::INTERFACE_PROTOCOL_UAS).emit(&mut buffer[at..])?;
        endpoint(
            buffer,
            &mut at,
            config.command_out,
            0,
            Some(PipeId::Command),
        )?;
        endpoint(
            buffer,
            &mut at,
            config.status_in,
            streams,
            Some(PipeId::Status),
        )?;
        endpoint(
            buffer,
            &mut at,
            config.bulk_in,
            streams,
            Some(PipeId::DataIn),
        )?;
        endpoint(
            buffer,
            &mut at,
            config.bulk_out,
            streams,
            Some(PipeId::DataOut),
        )?;
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_descriptor_golden() {
        let golden = [
            18, 1, 0x00, 0x03, 0, 0, 0, 9, 0x4c, 0x17, 0x51, 0x10, 0x01, 0x00, 1, 2, 3, 1,
        ];
        let repr = DeviceDescriptor {
            usb_version_bcd: BCD_USB_3_0,
            class: 0,
            subclass: 0,
            protocol: 0,
            max_packet_size0: SUPER_SPEED_EP0_MAX_PACKET_EXPONENT,
            vendor_id: 0x174c,
            product_id: 0x1051,
            device_version_bcd: 0x0001,
            manufacturer_index: 1,
            product_index: 2,
            serial_index: 3,
            num_configurations: 1,
        };
        assert_eq!(DeviceDescriptor::parse(&golden), Ok(repr));
        let mut buf = [0xA5u8; 18];
        repr.emit(&mut buf).unwrap();
        assert_eq!(buf, golden);
    }

    #[test]
    fn uas_super_speed_configuration_golden_and_walk() {
        let config = MassStorageConfig::new(true, true);
        let mut buf = [0xA5u8; 128];
        let n = emit_mass_storage_configuration(&config, &mut buf).unwrap();
        assert_eq!(n, 9 + 9 + 2 * 13 + 9 + 4 * 17);
        assert_eq!(&buf[..9], &[9, 2, n as u8, 0, 1, 1, 0, 0x80, 112]);
        // UAS interface, then the command endpoint with its companion and pipe usage.
        assert_eq!(&buf[44..53], &[9, 4, 0, 1, 4, 8, 6, 0x62, 0]);
        assert_eq!(
            &buf[53..70],
            &[7, 5, 0x04, 2, 0x00, 0x04, 0, 6, 0x30, 15, 0, 0, 0, 4, 0x24, 1, 0]
        );
        assert_eq!(buf[n], 0xA5);
        let walked: usize = descriptors(&buf[..n])
            .map(|d| d.unwrap())
            .filter(|d| matches!(d, Descriptor::PipeUsage(_)))
            .count();
        assert_eq!(walked, 4);
        let streams: u32 = descriptors(&buf[..n])
            .filter_map(|d| match d {
                Ok(Descriptor::SsEndpointCompanion(c)) => Some(c.max_streams()),
                _ => None,
            })
            .max()
            .unwrap();
        assert_eq!(streams, 32);
    }

    #[test]
    fn damaged_bundle_is_named() {
        let mut bad = [9u8, 4, 0, 0, 2, 8, 6, 0x50, 0, 7, 5, 0x81];
        assert!(matches!(
            descriptors(&bad).nth(1),
            Some(Err(Error::Truncated {
                what: "descriptor",
                ..
            }))
        ));
        bad[0] = 1;
        assert!(matches!(
            descriptors(&bad).next(),
            Some(Err(Error::BadField {
                field: "bLength",
                ..
            }))
        ));
        assert!(matches!(
            InterfaceDescriptor::parse(&[9, 5, 0, 0, 0, 0, 0, 0, 0]),
            Err(Error::BadField {
                field: "bDescriptorType",
                ..
            })
        ));
    }
}
