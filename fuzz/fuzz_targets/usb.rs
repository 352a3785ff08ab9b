//! Fuzz target: USB descriptor walker and SETUP packet parser.
#![no_main]
use libfuzzer_sys::fuzz_target;
use storlab_wire::usb::{descriptors, SetupPacket};

fuzz_target!(|data: &[u8]| {
    let _ = descriptors(data).count();
    let _ = SetupPacket::parse_bytes(data);
});
