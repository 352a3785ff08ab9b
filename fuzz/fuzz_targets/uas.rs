//! Fuzz target: UAS IU parser with emit/parse round trip.
#![no_main]
use libfuzzer_sys::fuzz_target;
use storlab_wire::uas::IuRepr;

fuzz_target!(|data: &[u8]| {
    if let Ok(iu) = IuRepr::parse_bytes(data) {
        let mut buf = [0u8; 300];
        let n = iu.emit_into(&mut buf).unwrap();
        assert_eq!(IuRepr::parse_bytes(&buf[..n]), Ok(iu));
    }
});
