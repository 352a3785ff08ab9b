//! Fuzz target: the value parsers shared by every job reader (`size.rs`: sizes, counts, times,
//! percentages, shares of the target, booleans, ranges, `bssplit`, read,write pairs) and
//! `--state` (`steps.rs`).
//! None may panic; sizes and states must read back what storlab prints for them.
#![no_main]
use libfuzzer_sys::fuzz_target;
use storlab_job::size::{
    format_size, parse_block_size_ranges, parse_block_size_splits, parse_block_sizes, parse_bool,
    parse_bssplit, parse_count, parse_percent, parse_share_ppm, parse_size, parse_size_range,
    parse_time_ns,
    split_read_write, NS_PER_S,
};
use storlab_job::steps::DeviceState;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let text = text.as_ref();

    if let Ok(bytes) = parse_size(text) {
        // What storlab prints for a size (in messages, labels) reads back as that size.
        let printed = format_size(bytes).replace(' ', "");
        assert_eq!(parse_size(&printed), Ok(bytes), "{printed}");
        assert_eq!(parse_count(text), Ok(bytes));
    }
    let _ = parse_count(text);
    for unit in [1, 1_000, NS_PER_S] {
        let _ = parse_time_ns(text, unit);
    }
    if let Ok(percent) = parse_percent(text) {
        assert!(percent <= 100);
    }
    if let Ok(ppm) = parse_share_ppm(text) {
        // A share is at most the whole target, and what storlab prints for it reads back.
        assert!(ppm <= storlab_job::PPM_WHOLE);
        assert_eq!(parse_share_ppm(&storlab_job::format_share(ppm)), Ok(ppm));
    }
    let _ = parse_bool(text);
    if let Ok((low, high)) = parse_size_range(text) {
        let _ = (low, high);
    }
    if let Ok(shares) = parse_bssplit(text) {
        assert_eq!(shares.len(), text.trim().split(':').count());
        // Entries without a share take what the others leave, so whenever one is open and the
        // given shares leave something, the total is exactly 100.
        let open = text.trim().split(':').any(|e| !e.contains('/'));
        let total: u64 = shares.iter().map(|s| u64::from(s.percent)).sum();
        if open && total <= 100 {
            assert_eq!(total, 100, "{shares:?}");
        }
    }
    let _ = split_read_write(text);
    let _ = parse_block_sizes(text);
    let _ = parse_block_size_ranges(text);
    let _ = parse_block_size_splits(text);

    match DeviceState::parse(text) {
        // A state reads back from the label results record for it.
        Ok(state) => assert_eq!(DeviceState::parse(&state.label()), Ok(state)),
        Err(error) => {
            let line = error.to_string();
            assert!(!line.contains(['\n', '\r']), "one line: {line:?}");
        }
    }
});
