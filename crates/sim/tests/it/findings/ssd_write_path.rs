//! The Samsung 860 EVO 250 GB's sequential writes before its write cliff (issue 37, the 860 EVO
//! review finding): bound by its four 512 Gbit dies, not by the SATA link, and so within its
//! rating (the dies' bound is 0.8% over it; a run ends up to the DRAM buffer ahead of them).

use super::*;

const STACK: &str = "sata-ahci-860evo";
/// Samsung's rating: sequential write "up to 520 MB/s" (10^6 bytes), inside the SLC cache.
const RATED_WRITE_MB_S: f64 = 520.0;
/// The dies' SLC-mode bound: 4 dies x 2 planes x 16 KiB per 250 us program
/// (profiles/drives/samsung-860-evo-250gb.toml).
const SLC_DIES_MB_S: f64 = 4.0 * 2.0 * 16384.0 / 250e-6 / 1e6;
/// Its DRAM write buffer: 1024 pages of 4 KiB.
const WRITE_BUFFER_BYTES: f64 = 1024.0 * 4096.0;

#[test]
fn the_860_evo_writes_at_its_dies_slc_rate_inside_the_cache_not_above_its_rating() {
    // A rating-style workload: 128 KiB sequential writes at QD32 in IOmeter (Samsung's data-sheet
    // footnotes name IOmeter; the one read is the 970 EVO Plus's); 256 MiB stays far inside the
    // 12 GB cache.
    let writes = Workload {
        op: Op::Write,
        block_bytes: 128 * KIB,
        queue_depth: 32,
        random: false,
        ios: 2048,
    };
    let m = Bench::new(STACK).measure(writes);
    let mb_s = m.mb_per_s();
    // The host may finish ahead of the dies by what the DRAM write buffer holds (1024 pages of
    // 4 KiB): the run's bytes over its bytes less the buffer.
    let run_bytes = (writes.ios * u64::from(writes.block_bytes)) as f64;
    let ahead = run_bytes / (run_bytes - WRITE_BUFFER_BYTES);
    eprintln!(
        "{STACK}: 128 KiB QD32 sequential writes {mb_s:.1} MB/s (rated {RATED_WRITE_MB_S}, dies \
         {SLC_DIES_MB_S:.1}, with the buffer ahead {:.1}), bottleneck {}",
        SLC_DIES_MB_S * ahead,
        m.bottleneck,
    );
    assert_eq!(
        m.bottleneck, "drive",
        "the flash, not the link, bounds the writes"
    );
    assert!(
        mb_s <= SLC_DIES_MB_S * ahead && mb_s > 0.97 * SLC_DIES_MB_S,
        "{mb_s:.1} MB/s against the dies' {SLC_DIES_MB_S:.1}; reproduce: storlab run --target \
         sim:{STACK} --rw=write --bs=128k --iodepth=32 --size=1g"
    );
    // The dies' bound is the rating (MB = 10^6 bytes) within 1%: nothing caps it there.
    assert!(
        (SLC_DIES_MB_S / RATED_WRITE_MB_S - 1.0).abs() < 0.01,
        "the dies' {SLC_DIES_MB_S:.1} MB/s against the rated {RATED_WRITE_MB_S}"
    );
}
