//! USB framework codecs: standard descriptors (with the mass-storage and SuperSpeed parts)
//! and the 8-byte control SETUP packet.
//!
//! Byte order: every multi-byte USB field is **little-endian**.

pub mod descriptor;
pub mod request;

pub use descriptor::{
    descriptors, emit_mass_storage_configuration, ConfigurationDescriptor, Descriptor,
    DescriptorType, DeviceDescriptor, EndpointDescriptor, InterfaceDescriptor, MassStorageConfig,
    PipeId, PipeUsageDescriptor, SsEndpointCompanion,
};
pub use request::{Recipient, RequestKind, SetupPacket, StandardRequest};

/// Interface class code of mass storage.
pub const CLASS_MASS_STORAGE: u8 = 0x08;
/// Interface subclass code of the SCSI transparent command set.
pub const SUBCLASS_SCSI: u8 = 0x06;
/// Direction bit of an endpoint address: IN (device to host).
pub const ENDPOINT_DIR_IN: u8 = 0x80;
/// Endpoint number bits of an endpoint address.
pub const ENDPOINT_NUMBER_MASK: u8 = 0x0F;
