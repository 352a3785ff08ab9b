//! Fuzz target: SATA FIS parsers. Whatever parses must re-emit into exactly `buffer_len()`
//! bytes without writing past them, parse back equal, and (for the fields a FIS keeps) give
//! the input's bytes back; NCQ tag and sector count must survive an FPDMA round trip.
#![no_main]
use libfuzzer_sys::fuzz_target;
use storlab_wire::sata::{
    FisPacket, FisRepr, RegH2dRepr, DATA_HEADER_LEN, FIS_LEN_MAX, REG_H2D_LEN,
};

/// Canary written after the emitted FIS to catch out-of-bounds writes.
const CANARY: u8 = 0xA5;

fuzz_target!(|data: &[u8]| {
    let Ok(repr) = FisRepr::parse(&FisPacket::new_unchecked(data)) else {
        return;
    };
    let len = repr.buffer_len();
    assert!(len <= data.len() && len <= FIS_LEN_MAX);
    let mut buf = [CANARY; FIS_LEN_MAX + 1];
    let written = repr
        .emit(&mut buf[..len + 1])
        .expect("a parsed FIS re-emits");
    assert_eq!(buf[len], CANARY, "emit wrote past buffer_len");
    if let FisRepr::Data { .. } = repr {
        assert_eq!(written, DATA_HEADER_LEN);
        buf[DATA_HEADER_LEN..len].copy_from_slice(&data[DATA_HEADER_LEN..len]);
    } else {
        assert_eq!(written, len);
    }
    assert_eq!(FisRepr::parse_bytes(&buf[..len]), Ok(repr));
    // A Register H2D FIS keeps every byte (bits 6:4 of byte 1 are reserved and dropped).
    if let FisRepr::RegH2d(h2d) = repr {
        let mut expected = [0u8; REG_H2D_LEN];
        expected.copy_from_slice(&data[..REG_H2D_LEN]);
        expected[1] &= 0x8F;
        assert_eq!(&buf[..REG_H2D_LEN], &expected[..]);
        if let Ok(ncq) =
            RegH2dRepr::fpdma_queued(h2d.command & 1 == 1, h2d.ncq_tag(), h2d.lba, h2d.sectors())
        {
            assert_eq!(
                (ncq.ncq_tag(), ncq.sectors()),
                (h2d.ncq_tag(), h2d.sectors())
            );
        }
    }
});
