//! Fuzz target: BOT CBW/CSW parsers. Whatever parses must re-emit to bytes that parse equal,
//! and those bytes must be the input itself except for what the parser documents it drops.
#![no_main]
use libfuzzer_sys::fuzz_target;
use storlab_wire::bot::{CbwPacket, CbwRepr, CswPacket, CswRepr, CBW_LEN, CB_MAX_LEN, CSW_LEN};

/// Offset of CBWCB inside a CBW; bytes past bCBWCBLength there are padding the parser zeroes.
const CBW_CB_OFFSET: usize = CBW_LEN - CB_MAX_LEN;

fuzz_target!(|data: &[u8]| {
    if let Ok(cbw) = CbwRepr::parse(&CbwPacket::new_unchecked(data)) {
        let mut buf = [0u8; CBW_LEN];
        assert_eq!(cbw.emit_into(&mut buf), Ok(CBW_LEN));
        assert_eq!(CbwRepr::parse(&CbwPacket::new_unchecked(&buf[..])), Ok(cbw));
        // The parser rejects every reserved bit, so only the CB padding may differ.
        let mut expected = [0u8; CBW_LEN];
        expected.copy_from_slice(&data[..CBW_LEN]);
        expected[CBW_CB_OFFSET + cbw.cdb().len()..].fill(0);
        assert_eq!(buf, expected, "CBW re-emit differs from its input");
        assert!((1..=CB_MAX_LEN).contains(&cbw.cdb().len()));
    }
    if let Ok(csw) = CswRepr::parse(&CswPacket::new_unchecked(data)) {
        let mut buf = [0u8; CSW_LEN];
        assert_eq!(csw.emit_into(&mut buf), Ok(CSW_LEN));
        assert_eq!(CswRepr::parse(&CswPacket::new_unchecked(&buf[..])), Ok(csw));
        // Every CSW field is kept (unknown statuses too), so the bytes must match exactly.
        assert_eq!(
            &buf[..],
            &data[..CSW_LEN],
            "CSW re-emit differs from its input"
        );
    }
});
