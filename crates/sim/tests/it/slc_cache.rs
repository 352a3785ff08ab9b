//! The SLC-mode write cache of the SSD model (`drive/ssd/slc_cache.rs`) against its own
//! physics: programs take the SLC time until the dies' shares are full and the native time
//! after; idle time long enough for whole fold steps drains the cache at one SLC read plus one
//! native program per step, and a gap shorter than a step folds nothing; the dynamic part
//! shrinks as the free space run one bit per cell stops holding it.

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use storlab_sim::drive::ssd::{Mapping, SlcCacheProfile, SlcCacheReport, SsdDrive, SsdProfile};
use storlab_sim::drive::{Drive, DriveCommand, DriveModelReport};
use storlab_sim::resource::Flow;

const PAGE: u64 = 4096;
const SECTOR: u64 = 512;
const DIES: u64 = 2;
const SLC_PROGRAM_NS: u64 = 200_000;
const SLC_READ_NS: u64 = 25_000;
const NATIVE_PROGRAM_NS: u64 = 1_000_000;
/// 64 pages of cache per die.
const CACHE_BYTES: u64 = DIES * 64 * PAGE;

fn drive() -> SsdDrive {
    drive_with_dynamic(0)
}

fn drive_with_dynamic(dynamic_bytes: u64) -> SsdDrive {
    let profile = SsdProfile {
        description: "test TLC SSD with an SLC cache".into(),
        channels: 2,
        dies_per_channel: 1,
        planes_per_die: 1,
        blocks_per_plane: 64,
        pages_per_block: 64,
        page_bytes: 4096,
        user_capacity_bytes: 3000 * PAGE,
        page_read_ns: 60_000,
        page_program_ns: NATIVE_PROGRAM_NS,
        block_erase_ns: 3_000_000,
        channel_rate_mb_s: 400,
        controller_cores: 1,
        command_cpu_ns: 10_000,
        read_cpu_ns: None,
        write_cpu_ns: None,
        command_latency_ns: 0,
        retired_command_ns: None,
        write_buffer_pages: 8,
        gc_free_blocks_threshold: 2,
        queue_depth: 32,
        trim_command_ns: 100_000,
        compression: false,
        compression_slot_bytes: 512,
        read_ahead_bytes: 0,
        read_ahead_streams: storlab_sim::drive::ssd::DEFAULT_READ_AHEAD_STREAMS,
        mapping: Mapping::Page,
        log_blocks: 0,
        partial_page_update: Default::default(),
        slc_cache: Some(SlcCacheProfile {
            static_bytes: CACHE_BYTES,
            dynamic_bytes,
            native_bits_per_cell: 3,
            page_program_ns: SLC_PROGRAM_NS,
            page_read_ns: SLC_READ_NS,
        }),
    };
    storlab_sim::drive::ssd::validate(&profile).expect("valid profile");
    SsdDrive::new(&profile)
}

fn cache(d: &SsdDrive) -> SlcCacheReport {
    match d.model_report() {
        DriveModelReport::Ssd(r) => r.slc_cache.expect("the profile has a cache"),
        other => panic!("not an SSD: {other:?}"),
    }
}

/// `pages` sequential pages from `lpn`, one write each, all arriving at `at_ns`; returns when
/// the last is programmed (a flush).
fn write_then_flush(d: &mut SsdDrive, lpn: u64, pages: u64, at_ns: u64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for page in lpn..lpn + pages {
        let command = DriveCommand {
            write: true,
            lba: page * PAGE / SECTOR,
            blocks: (PAGE / SECTOR) as u32,
        };
        d.write(Flow::ready_at(at_ns), &command, None, &mut rng);
    }
    d.flush(at_ns)
}

#[test]
fn programs_take_the_slc_time_until_the_cache_is_full_then_the_native_time() {
    let mut d = drive();
    let cache_pages = CACHE_BYTES / PAGE;
    let filled_ns = write_then_flush(&mut d, 0, cache_pages, 0);
    let report = cache(&d);
    assert_eq!(report.slc_programmed_bytes, CACHE_BYTES);
    assert_eq!(report.native_programmed_bytes, 0);
    assert_eq!(report.held_bytes, CACHE_BYTES);
    let beyond_ns = write_then_flush(&mut d, cache_pages, cache_pages, 0) - filled_ns;
    let report = cache(&d);
    assert_eq!(report.native_programmed_bytes, CACHE_BYTES);
    assert_eq!(report.held_bytes, CACHE_BYTES, "a full cache stays full");
    // Per die: 64 programs at each time; the channel and firmware add the same little to both.
    let expected = NATIVE_PROGRAM_NS as f64 / SLC_PROGRAM_NS as f64;
    let measured = beyond_ns as f64 / filled_ns as f64;
    assert!(
        (measured / expected - 1.0).abs() < 0.05,
        "native/SLC time {measured:.2}, program times {expected:.2}"
    );
}

#[test]
fn idle_time_folds_whole_steps_and_a_shorter_gap_folds_nothing() {
    let mut d = drive();
    let cache_pages = CACHE_BYTES / PAGE;
    let idle_from = write_then_flush(&mut d, 0, cache_pages, 0);
    let step_ns = SLC_READ_NS + NATIVE_PROGRAM_NS;
    // A gap shorter than one fold step: nothing folds, the next page goes to native blocks.
    let idle_from = write_then_flush(&mut d, cache_pages, 1, idle_from + step_ns - 1);
    let report = cache(&d);
    assert_eq!(report.folded_bytes, 0);
    assert_eq!(report.native_programmed_bytes, PAGE);
    // Ten steps of idle time on each die fold ten pages per die; the next pages go to SLC.
    write_then_flush(
        &mut d,
        cache_pages + 1,
        4,
        idle_from + 10 * step_ns + step_ns / 2,
    );
    let report = cache(&d);
    assert_eq!(report.folded_bytes, 10 * DIES * PAGE);
    assert_eq!(report.slc_programmed_bytes, CACHE_BYTES + 4 * PAGE);
    assert_eq!(report.held_bytes, CACHE_BYTES - 10 * DIES * PAGE + 4 * PAGE);
}

#[test]
fn the_dynamic_region_shrinks_with_the_free_space() {
    let user_bytes = 3000 * PAGE;
    let dynamic = 500 * PAGE;
    let mut d = drive_with_dynamic(dynamic);
    assert_eq!(
        cache(&d).capacity_bytes,
        CACHE_BYTES + dynamic,
        "empty: all of it"
    );
    // 1800 pages written: 1200 free, which one bit per cell turns into 400 pages of cache.
    let mut at_ns = 0;
    for first in (0..1800).step_by(100) {
        at_ns = write_then_flush(&mut d, first, 100, at_ns);
    }
    let free = user_bytes - 1800 * PAGE;
    assert_eq!(cache(&d).capacity_bytes, CACHE_BYTES + free / 3);
}
