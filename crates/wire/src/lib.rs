//! Byte-exact codecs for every protocol message storlab's simulator speaks (see ARCHITECTURE.md).
//!
//! Each protocol module follows smoltcp's `wire` style: a zero-copy `…Packet<T>` view over a
//! byte buffer (getters on `AsRef<[u8]>`, setters on `AsMut<[u8]>`, `new_checked`/`check_len`)
//! and a `…Repr` with `parse`, `emit` and `buffer_len`. Code enums keep unknown values
//! (`Opcode::Unknown(u8)`), and every error names the field at fault. No parser panics on any
//! input.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;

mod bytes;
pub mod error;

pub mod ata;
pub mod ata_log;
pub mod bot;
pub mod pcap;
pub mod pretty;
pub mod sata;
pub mod scsi;
pub mod uas;
pub mod usb;

pub use bytes::InlineBytes;
pub use error::{Error, Result};

#[cfg(feature = "alloc")]
pub use pretty::decode_pcap;
