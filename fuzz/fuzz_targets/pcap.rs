//! Fuzz target: usbmon pcap reader and the whole-capture decoder.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = storlab_wire::decode_pcap(data);
});
