//! Fuzz target: BOT CBW/CSW parsers; whatever parses must re-emit to bytes that parse equal.
#![no_main]
use libfuzzer_sys::fuzz_target;
use storlab_wire::bot::{CbwPacket, CbwRepr, CswPacket, CswRepr};

fuzz_target!(|data: &[u8]| {
    if let Ok(cbw) = CbwRepr::parse(&CbwPacket::new_unchecked(data)) {
        let mut buf = [0u8; 31];
        cbw.emit_into(&mut buf).unwrap();
        assert_eq!(CbwRepr::parse(&CbwPacket::new_unchecked(&buf[..])), Ok(cbw));
    }
    if let Ok(csw) = CswRepr::parse(&CswPacket::new_unchecked(data)) {
        let mut buf = [0u8; 13];
        csw.emit_into(&mut buf).unwrap();
        assert_eq!(CswRepr::parse(&CswPacket::new_unchecked(&buf[..])), Ok(csw));
    }
});
