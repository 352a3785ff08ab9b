//! SCSI (SPC/SBC/SAT) codecs: CDBs, status, sense data and the data-in/parameter structures
//! a USB disk exchanges.
//!
//! Byte order: every multi-byte SCSI field is **big-endian**.

pub mod ata_passthrough;
pub mod capacity;
pub mod cdb;
pub mod inquiry;
pub mod mode;
pub mod report_luns;
pub mod sense;
pub mod unmap;
pub mod vpd;

pub use ata_passthrough::{AtaPassThrough, AtaProtocol, TransferLengthField};
pub use capacity::{Capacity10, Capacity16};
pub use cdb::{CdbPacket, CdbSize, Command, DataDirection, Opcode, PageControl};
pub use inquiry::{DeviceType, InquiryRepr};
pub use mode::{BlockDescriptor, CachingPage, ModeSenseData};
pub use report_luns::{emit_report_luns, parse_report_luns};
pub use sense::{AdditionalSense, SenseFormat, SenseKey, SenseRepr, Status};
pub use unmap::{
    emit_unmap_parameter_list, unmap_parameter_list_len, UnmapDescriptor, UnmapParameterList,
};
pub use vpd::{VpdPacket, VpdPage, VpdPageCode};

/// An 8-byte SAM logical unit number, as carried in UAS IUs and REPORT LUNS data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Lun(pub [u8; 8]);

impl Lun {
    /// The single-level LUN for index `index` (peripheral/flat addressing as Linux's
    /// `int_to_scsilun` writes it: the index big-endian in the first two bytes).
    pub fn from_index(index: u16) -> Self {
        let [hi, lo] = index.to_be_bytes();
        Lun([hi, lo, 0, 0, 0, 0, 0, 0])
    }
    /// The index of a single-level LUN (first two bytes, big-endian).
    pub fn index(&self) -> u16 {
        u16::from_be_bytes([self.0[0], self.0[1]])
    }
}
