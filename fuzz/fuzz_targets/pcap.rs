//! Fuzz target: usbmon pcap reader, usbmon header codec, pcap writer and the whole-capture
//! decoder. Records the reader accepts (in either byte order) must survive being rewritten by
//! `PcapWriter` and read back; every usbmon header that parses must re-emit and parse equal.
#![no_main]
use libfuzzer_sys::fuzz_target;
use storlab_wire::pcap::{
    PcapReader, PcapWriter, UsbmonPacket, UsbmonRepr, SNAPLEN, USBMON_HEADER_LEN,
};

/// Microseconds the rewriting `PcapWriter` advances per record, so record `i` has ts `i` µs.
const REWRITE_STEP_US: u64 = 1;
const MICROS_PER_SECOND: u64 = 1_000_000;

fuzz_target!(|data: &[u8]| {
    let decoded = storlab_wire::decode_pcap(data);

    if let Ok(header) = UsbmonRepr::parse(&UsbmonPacket::new_unchecked(data)) {
        let mut buf = [0u8; USBMON_HEADER_LEN];
        assert_eq!(header.emit(&mut buf), Ok(USBMON_HEADER_LEN));
        assert_eq!(
            UsbmonRepr::parse(&UsbmonPacket::new_unchecked(&buf[..])),
            Ok(header)
        );
    }

    let Ok(reader) = PcapReader::new(data) else {
        assert!(
            decoded.is_err(),
            "decoder accepted a capture the reader rejects"
        );
        return;
    };
    let mut writer = PcapWriter::new(0, 0, REWRITE_STEP_US);
    let mut written = Vec::new();
    let mut reader_failed = false;
    for record in reader.records() {
        let Ok(record) = record else {
            reader_failed = true;
            break;
        };
        // The writer's captures use its own snapshot length; longer records cannot be rewritten.
        if USBMON_HEADER_LEN + record.data.len() > SNAPLEN as usize {
            break;
        }
        writer.record(&record.usbmon, record.data);
        written.push(record);
    }
    if reader_failed {
        assert!(
            decoded.is_err(),
            "decoder accepted a capture the reader rejects"
        );
    }

    let rewritten = writer.into_bytes();
    let again = PcapReader::new(&rewritten).expect("the writer's global header must read");
    let mut count = 0usize;
    for (i, (record, original)) in again.records().zip(&written).enumerate() {
        let record = record.unwrap_or_else(|e| panic!("rewritten record {i} fails: {e}"));
        let time_us = i as u64 * REWRITE_STEP_US;
        let expected = UsbmonRepr {
            ts_sec: (time_us / MICROS_PER_SECOND) as i64,
            ts_usec: (time_us % MICROS_PER_SECOND) as i32,
            ..original.usbmon
        };
        assert_eq!(record.index, i);
        assert_eq!(
            record.usbmon, expected,
            "rewritten record {i} header differs"
        );
        assert_eq!(
            record.data, original.data,
            "rewritten record {i} data differs"
        );
        count += 1;
    }
    assert_eq!(count, written.len(), "rewritten capture lost records");
});
