//! storlab-sim: a deterministic discrete-event simulator of the USB/SATA storage stack
//! (host block layer and class driver, xHCI/AHCI controller and its PCIe attachment, USB 2.0 /
//! USB 3.0 link, USB-to-SATA bridge, SATA link, drive), driven by TOML hardware profiles.
//!
//! One thread, one closed [`event::Event`] enum, a queue ordered by (time, sequence), virtual
//! time in nanoseconds, a seeded RNG: the same stack, requests and seed give byte-identical
//! results. Protocol messages between layers are real bytes encoded and decoded by
//! `storlab-wire`; payload is carried in slot buffers and stored, so reads return what was
//! written. See `docs/simulator.md` for the model and every timing formula.
#![forbid(unsafe_code)]

mod bridge;
pub mod command;
mod core;
mod counters;
mod cx;
mod device_link;
pub mod drive;
mod driver_bot;
mod driver_buffer;
mod driver_sata;
mod driver_uas;
mod endpoints;
pub mod error;
pub mod event;
pub mod fault;
pub mod host;
pub mod link_sata;
pub mod link_usb2;
pub mod link_usb3;
pub mod op;
pub mod pcie;
mod power;
pub mod profile;
pub mod profiles;
pub mod report;
pub mod request;
pub mod resource;
mod sata_recovery;
pub mod scsi;
pub mod store;
pub mod trace;
pub mod transport;
pub mod usb_reset;
pub mod workload;
pub mod xhci;

pub use crate::core::{Simulator, CLOCK_LIMIT_NS};
pub use error::SimError;
pub use fault::{FaultKind, FaultPlan, PowerLossRecord};
pub use op::Op;
pub use profile::{ProfileSet, StackSpec};
pub use report::{SimReport, SimWarning};
pub use request::{
    SimCompletion, SimRequest, ERRNO_EINVAL, ERRNO_EIO, ERRNO_ENODATA, ERRNO_EOPNOTSUPP,
};
pub use transport::Transport;
