//! Fuzz target: UAS IU parser. Whatever parses must emit (into exactly `buffer_len` bytes)
//! and parse back equal; emitting the reparsed IU must give the same bytes again.
#![no_main]
use libfuzzer_sys::fuzz_target;
use storlab_wire::uas::{IuPacket, IuRepr, CDB_MAX_LEN, COMMAND_IU_CDB_LEN, COMMAND_IU_LEN};

/// Longest IU this crate emits: a Command IU with the largest additional CDB.
const IU_MAX_LEN: usize = COMMAND_IU_LEN - COMMAND_IU_CDB_LEN + CDB_MAX_LEN;
/// A byte `emit` never writes on its own, to catch writes past `buffer_len`.
const CANARY: u8 = 0xA5;

fuzz_target!(|data: &[u8]| {
    let Ok(iu) = IuRepr::parse_bytes(data) else {
        return;
    };
    // Whatever parses also passes the length check and reports its own id and tag.
    let packet = IuPacket::new_unchecked(data);
    assert_eq!(packet.check_len(), Ok(()));
    assert_eq!(packet.iu_id(), iu.iu_id());
    assert_eq!(packet.tag(), iu.tag());

    let mut buf = [CANARY; IU_MAX_LEN + 1];
    let n = iu.emit_into(&mut buf).expect("a parsed IU must emit");
    assert_eq!(n, iu.buffer_len());
    assert!(n <= IU_MAX_LEN);
    assert_eq!(buf[n], CANARY, "emit wrote past buffer_len");
    let again = IuRepr::parse_bytes(&buf[..n]);
    assert_eq!(again, Ok(iu));

    let mut buf2 = [0u8; IU_MAX_LEN];
    let n2 = again.unwrap().emit_into(&mut buf2).unwrap();
    assert_eq!(&buf[..n], &buf2[..n2], "emit is not deterministic");
});
