//! Fuzz target: SCSI CDB, sense, INQUIRY, VPD, READ CAPACITY, MODE SENSE, REPORT LUNS and UNMAP
//! codecs. Each parser's output must emit (every parsed value is representable) into exactly
//! `buffer_len` bytes and parse back equal.
#![no_main]
use core::fmt::Debug;

use libfuzzer_sys::fuzz_target;
use storlab_wire::scsi::vpd::{designators, emit_designators, VpdPacket, VpdPage};
use storlab_wire::scsi::*;
use storlab_wire::Result;

/// A byte `emit` never writes on its own, to catch writes past `buffer_len`.
const CANARY: u8 = 0xA5;

/// Emits `repr` into a canary-filled buffer, requires success, the announced length and no
/// write past it, and parses the bytes back, requiring the same value.
fn round_trip<R: PartialEq + Debug>(
    repr: &R,
    buffer_len: usize,
    emit: impl FnOnce(&R, &mut [u8]) -> Result<usize>,
    parse: impl FnOnce(&[u8]) -> Result<R>,
) -> Vec<u8> {
    let mut buf = vec![CANARY; buffer_len + 1];
    let n = emit(repr, &mut buf).unwrap_or_else(|e| panic!("parsed {repr:?} does not emit: {e}"));
    assert_eq!(
        n, buffer_len,
        "emit length differs from buffer_len for {repr:?}"
    );
    assert_eq!(buf[n], CANARY, "emit wrote past buffer_len for {repr:?}");
    buf.truncate(n);
    assert_eq!(
        parse(&buf).as_ref(),
        Ok(repr),
        "re-parse differs, bytes {buf:02x?}"
    );
    buf
}

fuzz_target!(|data: &[u8]| {
    if let Ok(cmd) = Command::parse(data) {
        let cdb = round_trip(&cmd, cmd.buffer_len(), |c, b| c.emit(b), Command::parse);
        assert_eq!(cdb[0], u8::from(cmd.opcode()));
        assert_eq!(cdb_len_for(&cmd), cdb.len());
    }
    if let Ok(sense) = SenseRepr::parse(data) {
        round_trip(
            &sense,
            sense.buffer_len(),
            |s, b| s.emit(b),
            SenseRepr::parse,
        );
    }
    if let Ok(inquiry) = InquiryRepr::parse(data) {
        round_trip(
            &inquiry,
            inquiry.buffer_len(),
            |i, b| i.emit(b),
            InquiryRepr::parse,
        );
    }
    if let Ok(page) = VpdPage::parse(&VpdPacket::new_unchecked(data)) {
        round_trip(
            &page,
            page.buffer_len(),
            |p, b| p.emit(b),
            |b| VpdPage::parse(&VpdPacket::new_unchecked(b)),
        );
    }
    designator_list_round_trips(data);
    if let Ok(cap) = Capacity10::parse(data) {
        round_trip(&cap, cap.buffer_len(), |c, b| c.emit(b), Capacity10::parse);
    }
    if let Ok(cap) = Capacity16::parse(data) {
        round_trip(&cap, cap.buffer_len(), |c, b| c.emit(b), Capacity16::parse);
    }
    for ten in [false, true] {
        if let Ok(mode) = ModeSenseData::parse(data, ten) {
            assert_eq!(mode.ten, ten);
            round_trip(
                &mode,
                mode.buffer_len(),
                |m, b| m.emit(b),
                |b| ModeSenseData::parse(b, ten),
            );
        }
    }
    if let Ok(luns) = parse_report_luns(data) {
        let luns: Vec<Lun> = luns.collect();
        let len = report_luns::REPORT_LUNS_HEADER_LEN + luns.len() * report_luns::LUN_LEN;
        round_trip(
            &luns,
            len,
            |l, b| emit_report_luns(l, b),
            |b| parse_report_luns(b).map(Iterator::collect),
        );
    }
    if let Ok(list) = UnmapParameterList::parse(data) {
        let descriptors: Vec<UnmapDescriptor> = list.descriptors().collect();
        assert_eq!(descriptors.len(), list.len());
        let len = unmap::unmap_parameter_list_len(descriptors.len());
        round_trip(
            &descriptors,
            len,
            |d, b| emit_unmap_parameter_list(d, b),
            |b| UnmapParameterList::parse(b).map(|l| l.descriptors().collect()),
        );
    }
});

/// The CDB length SPC assigns to the command's opcode group, independent of `emit`.
fn cdb_len_for(cmd: &Command) -> usize {
    cdb::cdb_len_for_opcode(cmd.opcode().into()).expect("every decoded opcode has a group code")
}

/// Every well-formed designation descriptor list re-emits to a list that walks the same.
fn designator_list_round_trips(payload: &[u8]) {
    let Ok(list) = designators(payload).collect::<Result<Vec<_>>>() else {
        return;
    };
    let mut buf = vec![CANARY; payload.len() + 1];
    let n = emit_designators(&list, &mut buf).expect("parsed designators must emit");
    assert_eq!(n, payload.len(), "designators have no padding to drop");
    assert_eq!(buf[n], CANARY, "emit_designators wrote past its length");
    let again: Vec<_> = designators(&buf[..n]).collect::<Result<_>>().unwrap();
    assert_eq!(again, list);
}
