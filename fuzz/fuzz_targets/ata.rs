//! Fuzz target: ATA IDENTIFY DEVICE and DSM TRIM codecs. IDENTIFY data that emits must parse
//! back equal, and parsed sector sizes must keep their defined relation; TRIM entries must
//! re-emit to a payload that walks the same.
#![no_main]
use libfuzzer_sys::fuzz_target;
use storlab_wire::ata::{
    emit_trim_ranges, trim_payload_len, trim_ranges, IdentifyRepr, TrimRange, IDENTIFY_LEN,
    LBA48_MAX,
};

fuzz_target!(|data: &[u8]| {
    if let Ok(identify) = IdentifyRepr::parse(data) {
        check_identify(&identify);
    }
    let ranges: Vec<TrimRange> = trim_ranges(data).collect();
    for range in &ranges {
        assert_ne!(range.sectors, 0, "unused entries are skipped");
        assert!(range.lba <= LBA48_MAX);
    }
    let len = trim_payload_len(ranges.len());
    let mut payload = vec![0u8; len];
    assert_eq!(emit_trim_ranges(&ranges, &mut payload), Ok(len));
    assert!(trim_ranges(&payload).eq(ranges.iter().copied()));
});

fn check_identify(identify: &IdentifyRepr) {
    // IDENTIFY word 106: physical = logical × 2^n. A parser that lets this wrap would report a
    // physical sector smaller than (or not a multiple of) the logical one.
    let logical = identify.logical_sector_size_bytes;
    let physical = identify.physical_sector_size_bytes;
    assert!(
        logical > 0 && physical >= logical && physical.is_multiple_of(logical),
        "physical sector {physical} is not a multiple of logical sector {logical}"
    );
    assert!((1..=32).contains(&identify.queue_depth));
    // The emitter is stricter than the parser (it only writes what a drive may report), so
    // only emittable values must round-trip.
    let mut buf = [0u8; IDENTIFY_LEN];
    if let Ok(n) = identify.emit(&mut buf) {
        assert_eq!(n, IDENTIFY_LEN);
        assert_eq!(IdentifyRepr::parse(&buf).as_ref(), Ok(identify));
    }
}
