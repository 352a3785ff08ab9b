//! Fuzz target: SCSI CDB, sense, INQUIRY, VPD, capacity, mode, REPORT LUNS and UNMAP parsers.
#![no_main]
use libfuzzer_sys::fuzz_target;
use storlab_wire::scsi::vpd::{VpdPacket, VpdPage};
use storlab_wire::scsi::*;

fuzz_target!(|data: &[u8]| {
    if let Ok(cmd) = Command::parse(data) {
        let mut buf = [0u8; 16];
        let n = cmd.emit(&mut buf).unwrap();
        assert_eq!(Command::parse(&buf[..n]), Ok(cmd));
    }
    let _ = SenseRepr::parse(data);
    let _ = InquiryRepr::parse(data);
    let _ = VpdPage::parse(&VpdPacket::new_unchecked(data));
    let _ = Capacity16::parse(data);
    let _ = ModeSenseData::parse(data, data.first().is_some_and(|b| b & 1 == 1));
    let _ = parse_report_luns(data).map(|i| i.count());
    let _ = UnmapParameterList::parse(data).map(|l| l.descriptors().count());
});
