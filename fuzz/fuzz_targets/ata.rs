//! Fuzz target: ATA IDENTIFY DEVICE and DSM TRIM range parsers.
#![no_main]
use libfuzzer_sys::fuzz_target;
use storlab_wire::ata::{trim_ranges, IdentifyRepr};

fuzz_target!(|data: &[u8]| {
    let _ = IdentifyRepr::parse(data);
    let _ = trim_ranges(data).count();
});
