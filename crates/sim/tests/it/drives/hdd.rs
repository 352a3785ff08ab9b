//! The HDD model against its datasheet and theory: the seek curve, zoned media rates, access
//! time as seek plus half a revolution, NCQ gains, the read segments and the write-back cache.

use super::*;

#[test]
fn seek_curve_meets_the_datasheet_points() {
    let p = hdd_7200();
    let d = HddDrive::new(&p);
    let curve = d.seek_curve();
    assert_eq!(curve.seek_ns(0), 0);
    let close = |a: u64, b: u64| (a as f64 / b as f64 - 1.0).abs() < 0.01;
    assert!(close(curve.seek_ns(1), p.track_to_track_seek_ns));
    assert!(close(curve.seek_ns(p.cylinders - 1), p.full_stroke_seek_ns));
    // Mean over uniformly random cylinder pairs = the average seek.
    let c = f64::from(p.cylinders);
    let mean: f64 = (1..p.cylinders)
        .map(|dist| 2.0 * (c - f64::from(dist)) / (c * c) * curve.seek_ns(dist) as f64)
        .sum();
    assert!(
        (mean / p.average_seek_ns as f64 - 1.0).abs() < 0.01,
        "{mean}"
    );
    // Monotonic.
    let mut last = 0;
    for dist in (1..p.cylinders).step_by(97) {
        let t = curve.seek_ns(dist);
        assert!(t >= last, "seek({dist}) = {t} < {last}");
        last = t;
    }
}

#[test]
fn media_rate_falls_towards_the_inner_zones() {
    let p = hdd_7200();
    let mut d = HddDrive::new(&p);
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let sectors = 16u32 << 11; // 16 MiB
    let rate = |d: &mut HddDrive, lba: u64, rng: &mut ChaCha8Rng| {
        let f = d.read(
            d.read_ready_ns(0, &[]),
            &DriveCommand {
                write: false,
                lba,
                blocks: sectors,
            },
            rng,
        );
        f64::from(sectors) * 512.0 / ((f.end_ns - f.start_ns) as f64 / 1e9) / 1e6
    };
    let outer = rate(&mut d, 0, &mut rng);
    let last_lba = d.capacity_bytes() / 512 - u64::from(sectors) - 1;
    let inner = rate(&mut d, last_lba, &mut rng);
    let expected = f64::from(p.outer_sectors_per_track) / f64::from(p.inner_sectors_per_track);
    // Each track takes one revolution plus a head switch (track skew hides the rest).
    let revolution_s = 60.0 / f64::from(p.rpm);
    let outer_theory = f64::from(p.outer_sectors_per_track) * 512.0
        / (revolution_s + p.head_switch_ns as f64 / 1e9)
        / 1e6;
    assert!(
        (outer / outer_theory - 1.0).abs() < 0.03,
        "outer {outer:.1} MB/s vs {outer_theory:.1}"
    );
    assert!(
        (outer / inner / expected - 1.0).abs() < 0.05,
        "outer {outer:.1} inner {inner:.1}"
    );
}

fn hdd_random_reads(qd: u32, ios: usize) -> (f64, f64) {
    hdd_random_reads_in(qd, ios, None)
}

/// Random 4 KiB reads over the first `span_bytes` (all of the disk when None) at queue depth
/// `qd` through the AHCI stack: (IOPS, mean latency in ms).
fn hdd_random_reads_in(qd: u32, ios: usize, span_bytes: Option<u64>) -> (f64, f64) {
    let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), "sata-ahci-hdd", SEED).unwrap();
    let span = span_bytes.unwrap_or(sim.capacity_bytes());
    let offsets = random_page_offsets(span, ios, 11);
    let mb_s = run_requests(&mut sim, Op::Read, 4096, qd, &offsets);
    let iops = mb_s * 1e6 / 4096.0;
    (iops, 1e3 / iops * f64::from(qd))
}

#[test]
fn hdd_random_access_is_average_seek_plus_half_a_revolution_plus_overhead() {
    let p = hdd_7200();
    let (_, latency_ms) = hdd_random_reads(1, 600);
    let revolution_ms = 60_000.0 / f64::from(p.rpm);
    let theory_ms = (p.average_seek_ns + p.command_overhead_ns) as f64 / 1e6 + revolution_ms / 2.0;
    eprintln!("HDD QD1 random read {latency_ms:.2} ms, theory {theory_ms:.2} ms");
    assert!(
        (latency_ms / theory_ms - 1.0).abs() < 0.10,
        "QD1 random 4 KiB read: {latency_ms:.2} ms, seek + half a revolution + overhead = {theory_ms:.2} ms"
    );
}

/// DOMAIN.md §4: random reads at deep queues run about 1.5× faster than at QD1 — with the
/// firmware's limits (oldest `rpo_candidates` evaluated, settle margin); ideal shortest
/// positioning time first over all 32 would give over 2×.
#[test]
fn ncq_reordering_gains_about_half_again_at_qd32() {
    let (qd1, _) = hdd_random_reads(1, 600);
    let (qd32, _) = hdd_random_reads(32, 3000);
    let gain = qd32 / qd1;
    eprintln!("HDD random 4 KiB reads: QD1 {qd1:.0} IOPS, QD32 {qd32:.0} IOPS: ×{gain:.2}");
    assert!(
        (1.35..=1.7).contains(&gain),
        "QD1 {qd1:.0} IOPS, QD32 {qd32:.0} IOPS: ×{gain:.2}"
    );
}

/// A second published point, not fitted: CrystalDiskMark 4K over a 1000 MB test file on a WD
/// Caviar Black 2 TB gave 1.400 MB/s at QD32 with NCQ vs 0.815 MB/s at QD1, ×1.72
/// (calibration.toml `[lucidport.rand4k_queued_read]`). Short seeks make rotation a larger
/// share of the access, so reordering gains at least as much as over the full span.
#[test]
fn ncq_gain_over_a_1000_mb_span_is_near_the_published_ratio() {
    let span = Some(1_000_000_000);
    let (qd1, _) = hdd_random_reads_in(1, 600, span);
    let (qd32, _) = hdd_random_reads_in(32, 3000, span);
    let gain = qd32 / qd1;
    eprintln!(
        "HDD random 4 KiB reads over 1000 MB: QD1 {qd1:.0} IOPS, QD32 {qd32:.0} IOPS: ×{gain:.2}"
    );
    assert!(
        (1.45..=2.0).contains(&gain),
        "1000 MB span: QD1 {qd1:.0} IOPS, QD32 {qd32:.0} IOPS: ×{gain:.2} (published ×1.72)"
    );
}

/// The firmware limits are what holds the gain down: the same drive with ideal SPTF (every
/// queued command evaluated, exact seek times) gains clearly more.
#[test]
fn ideal_sptf_would_gain_more_than_the_firmware_limited_scheduler() {
    let gain = |p: &HddProfile| {
        let mut d = HddDrive::new(p);
        let mut rng = ChaCha8Rng::seed_from_u64(SEED);
        let sectors = d.capacity_bytes() / SECTOR;
        let mut next = || DriveCommand {
            write: false,
            lba: (rng.next_u64() % (sectors / 8)) * 8,
            blocks: 8,
        };
        let mut queue: Vec<DriveCommand> = (0..32).map(|_| next()).collect();
        let mut now = 0;
        let reads = 1500;
        for _ in 0..reads {
            let i = d.pick_read(now, &queue);
            let c = queue.remove(i);
            let mut r = ChaCha8Rng::seed_from_u64(SEED);
            now = d.read(d.read_ready_ns(now, &queue), &c, &mut r).end_ns;
            queue.push(next());
        }
        f64::from(reads) / (now as f64 / 1e9)
    };
    let real = hdd_7200();
    let ideal = HddProfile {
        rpo_candidates: None,
        rpo_settle_margin_ns: None,
        ..real.clone()
    };
    let (limited_iops, ideal_iops) = (gain(&real), gain(&ideal));
    eprintln!("HDD QD32 at the drive: firmware-limited {limited_iops:.0} IOPS, ideal SPTF {ideal_iops:.0} IOPS");
    assert!(real.rpo_candidates.is_some() && real.rpo_settle_margin_ns.is_some());
    assert!(
        ideal_iops > 1.2 * limited_iops,
        "limited {limited_iops:.0} vs ideal {ideal_iops:.0} IOPS"
    );
}

#[test]
fn hdd_sequential_reads_stream_through_read_ahead() {
    let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), "sata-ahci-hdd", SEED).unwrap();
    let offsets: Vec<u64> = (0..2000).map(|i| i * 65536).collect();
    let mb_s = run_requests(&mut sim, Op::Read, 65536, 1, &offsets);
    let DriveModelReport::Hdd(r) = sim.report().drive else {
        panic!()
    };
    assert!(r.read_cache_hits > 1900, "{r:?}");
    assert!(mb_s > 120.0, "QD1 64 KiB sequential read: {mb_s:.1} MB/s");
}

/// A read segment is a ring of `read_ahead_sectors`: however long a stream runs through it,
/// it holds only the last segment's worth (the read-ahead beyond the host), not what the host
/// read before. (Before, a stream's segment grew with the stream and held all of it.)
#[test]
fn hdd_read_segment_never_holds_more_than_its_size() {
    let p = hdd_7200();
    let mut d = HddDrive::new(&p);
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let block = 128u64; // 64 KiB
    let segment = u64::from(p.read_ahead_sectors);
    let blocks = 256; // a 16 MiB stream
    let mut now = 0;
    for i in 0..blocks {
        let cmd = DriveCommand {
            write: false,
            lba: i * block,
            blocks: block as u32,
        };
        now = d.read(d.read_ready_ns(now, &[]), &cmd, &mut rng).end_ns;
        // While it streams, too.
        let held = (0..=i + segment / block)
            .filter(|&b| d.read_cache_holds(now, b * block, block))
            .count() as u64;
        assert!(
            held * block <= segment,
            "after {i} reads: {held} blocks held"
        );
    }
    // Once the read-ahead has filled the segment: exactly the segment beyond the stream.
    let later = now + 1_000_000_000;
    let held: Vec<u64> = (0..blocks + segment / block)
        .filter(|&b| d.read_cache_holds(later, b * block, block))
        .collect();
    assert_eq!(held.len() as u64 * block, segment, "held blocks {held:?}");
    assert_eq!(held[0], blocks, "held blocks {held:?}");
}

/// What the host has just read, within one segment, is read again from the buffer (no seek,
/// no rotation). The read-ahead then fills the ring with the segment beyond the read, and a
/// re-read after that goes to the media again.
#[test]
fn hdd_reread_within_a_segment_is_served_from_the_buffer() {
    let p = hdd_7200();
    let mut d = HddDrive::new(&p);
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let lba = d.capacity_bytes() / SECTOR / 2;
    let read = |d: &mut HddDrive, at: u64, lba: u64, blocks: u32, rng: &mut ChaCha8Rng| {
        let cmd = DriveCommand {
            write: false,
            lba,
            blocks,
        };
        d.read(d.read_ready_ns(at, &[]), &cmd, rng)
    };
    let first = read(&mut d, 0, lba, 512, &mut rng);
    assert!(
        first.start_ns > p.command_overhead_ns,
        "the first read positions"
    );
    let at = first.end_ns;
    for (offset, blocks) in [(0, 512), (0, 128), (384, 128)] {
        let again = read(&mut d, at, lba + offset, blocks, &mut rng);
        assert_eq!(
            again.start_ns,
            at + p.command_overhead_ns,
            "re-read of {blocks} sectors at +{offset} waited for the media"
        );
    }
    let DriveModelReport::Hdd(r) = d.model_report() else {
        panic!()
    };
    assert_eq!(r.read_cache_hits, 3);
    let later = at + 1_000_000_000;
    assert!(!d.read_cache_holds(later, lba, 512));
    assert!(d.read_cache_holds(later, lba + 512, u64::from(p.read_ahead_sectors)));
}

/// 64 KiB sequential QD1 reads from LBA 0 on `stack`, on a fresh drive or right after 64
/// cached 128 KiB writes far from the reads (what a benchmark's test-file preparation leaves).
fn hdd_read_stream_mb_s(stack: &str, dirty_first: bool) -> f64 {
    let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), stack, SEED).unwrap();
    if dirty_first {
        let writes: Vec<u64> = (0..64).map(|i| (512 << 20) + i * 131072).collect();
        run_requests(&mut sim, Op::Write, 131072, 4, &writes);
    }
    let reads: Vec<u64> = (0..2000).map(|i| i * 65536).collect();
    run_requests(&mut sim, Op::Read, 65536, 1, &reads)
}

#[test]
fn hdd_read_stream_keeps_the_head_while_cached_writes_wait() {
    // Firmware serves reads before background write-back: dirty data left by a preparation is
    // not destaged between the commands of a read stream, neither when the host is faster than
    // the media (AHCI: the read-ahead never finishes) nor when it is slower (BOT's 64 KiB
    // commands: the read-ahead finishes between commands, and the write-back waits for reads
    // to pause).
    for stack in ["sata-ahci-hdd", "lucidport/caviarblack-bot-gen2"] {
        let clean = hdd_read_stream_mb_s(stack, false);
        let after_writes = hdd_read_stream_mb_s(stack, true);
        eprintln!("{stack}: 64 KiB QD1 reads {clean:.1} MB/s clean, {after_writes:.1} MB/s with 8 MiB cached writes");
        assert!(
            after_writes > 0.97 * clean,
            "{stack}: {after_writes:.1} MB/s after writes vs {clean:.1} clean"
        );
    }
}

#[test]
fn hdd_write_cache_holds_what_the_read_segments_leave_of_the_buffer() {
    // hdd-7200: a 32 MiB buffer with 16 read segments of 1 MiB leaves 16 MiB for writes, so of
    // 1 MiB writes arriving together only 16 complete without waiting for the media, though
    // the cache takes 64 commands.
    let p = hdd_7200();
    assert_eq!(p.cache_bytes, Some(32 << 20));
    let mut d = HddDrive::new(&p);
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let sectors = d.capacity_bytes() / SECTOR;
    let cached = (0..40)
        .filter(|_| {
            let lba = (rng.next_u64() % (sectors / 2048 - 1)) * 2048;
            let cmd = DriveCommand {
                write: true,
                lba,
                blocks: 2048,
            };
            let f = d.write(Flow::ready_at(0), &cmd, None, &mut rng);
            f.end_ns <= p.command_overhead_ns
        })
        .count();
    assert_eq!(cached, 16);
}

#[test]
fn hdd_sustained_write_rate_pays_the_write_head_switch_per_track() {
    let mut p = hdd_7200();
    p.write_cache = false;
    p.write_head_switch_ns = Some(3_000_000);
    let mut d = HddDrive::new(&p);
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let sectors = 128u32 << 11; // 128 MiB in one command: positioning is under 2% of it
    let f = d.write(
        Flow::ready_at(0),
        &DriveCommand {
            write: true,
            lba: 0,
            blocks: sectors,
        },
        None,
        &mut rng,
    );
    let mb_s = f64::from(sectors) * 512.0 / (f.end_ns as f64 / 1e9) / 1e6;
    let revolution_s = 60.0 / f64::from(p.rpm);
    let theory = f64::from(p.outer_sectors_per_track) * 512.0 / (revolution_s + 3e-3) / 1e6;
    assert!(
        (mb_s / theory - 1.0).abs() < 0.03,
        "sustained write {mb_s:.1} MB/s vs {theory:.1}"
    );
    // Reads keep the read head switch.
    let read = d.read(
        d.read_ready_ns(f.end_ns, &[]),
        &DriveCommand {
            write: false,
            lba: 0,
            blocks: sectors,
        },
        &mut rng,
    );
    let read_mb_s = f64::from(sectors) * 512.0 / ((read.end_ns - read.start_ns) as f64 / 1e9) / 1e6;
    assert!(
        read_mb_s > 1.2 * mb_s,
        "read {read_mb_s:.1} vs write {mb_s:.1} MB/s"
    );
}

#[test]
fn hdd_write_back_cache_hides_media_time_and_without_it_writes_pay_the_access() {
    let mean_write_ms = |write_cache: bool, writes: u64| {
        let mut p = hdd_7200();
        p.write_cache = write_cache;
        let mut d = HddDrive::new(&p);
        let mut rng = ChaCha8Rng::seed_from_u64(SEED);
        let sectors = d.capacity_bytes() / SECTOR;
        let mut now = 0;
        for _ in 0..writes {
            let lba = (rng.next_u64() % (sectors / 8)) * 8;
            let cmd = DriveCommand {
                write: true,
                lba,
                blocks: 8,
            };
            now = d.write(Flow::ready_at(now), &cmd, None, &mut rng).end_ns;
        }
        now as f64 / writes as f64 / 1e6
    };
    let p = hdd_7200();
    let access_ms =
        (p.average_seek_ns + p.command_overhead_ns) as f64 / 1e6 + 30_000.0 / f64::from(p.rpm);
    // Fewer writes than the cache's 64 entries: none waits for the media.
    let cached = mean_write_ms(true, 40);
    let uncached = mean_write_ms(false, 40);
    // Many more: the cache fills and the host waits for destaging, which writes the entry the
    // scheduler expects to reach soonest among the oldest `rpo_candidates` (the same firmware
    // limits as NCQ reads, which gain ~1.5×), so a write costs well under a random access.
    let cached_long = mean_write_ms(true, 2000);
    eprintln!("HDD random 4 KiB writes QD1: cached {cached:.3} ms (short), {cached_long:.2} ms (long), uncached {uncached:.2} ms");
    assert!(
        cached_long < 0.7 * access_ms,
        "cached long run: {cached_long:.2} ms per write vs access {access_ms:.2} ms"
    );
    assert!(cached < 0.2, "write-back cache: {cached:.3} ms per write");
    assert!(
        (uncached / access_ms - 1.0).abs() < 0.15,
        "no write cache: {uncached:.2} ms per write vs access {access_ms:.2} ms"
    );
}

/// Destaging is the firmware's background work with its own window (`write_back_candidates`),
/// not the NCQ scheduler's (`rpo_candidates`): with NCQ limited to arrival order, a wider
/// write-back window still reorders the cached writes and drains them faster; absent, the
/// write-back window is the NCQ one.
#[test]
fn write_back_orders_over_its_own_window_not_the_ncq_one() {
    let drain = |write_back_candidates: Option<u32>| {
        let p = HddProfile {
            rpo_candidates: Some(1),
            write_back_candidates,
            ..hdd_7200()
        };
        let mut d = HddDrive::new(&p);
        let mut rng = ChaCha8Rng::seed_from_u64(SEED);
        let span_sectors = 1_000_000_000 / SECTOR;
        let mut now = 0;
        let writes = 1500;
        for _ in 0..writes {
            let cmd = DriveCommand {
                write: true,
                lba: (rng.next_u64() % (span_sectors / 8)) * 8,
                blocks: 8,
            };
            now = d.write(Flow::ready_at(now), &cmd, None, &mut rng).end_ns;
        }
        let DriveModelReport::Hdd(r) = d.model_report() else {
            panic!("not an HDD report")
        };
        (now as f64 / f64::from(writes) / 1e6, r.reordered_destages)
    };
    let (in_order_ms, in_order_reordered) = drain(None);
    let (windowed_ms, windowed_reordered) = drain(Some(8));
    eprintln!("cached random 4 KiB writes over 1000 MB: {in_order_ms:.2} ms each in arrival order, {windowed_ms:.2} ms with an 8-write window");
    assert_eq!(in_order_reordered, 0, "absent = the NCQ window of 1");
    assert!(windowed_reordered > 0);
    assert!(
        windowed_ms < 0.8 * in_order_ms,
        "window of 8: {windowed_ms:.2} ms vs arrival order {in_order_ms:.2} ms per write"
    );
}

#[test]
fn the_report_carries_the_drive_models_figures() {
    let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), "sata-ahci-ssd", SEED).unwrap();
    let offsets = random_page_offsets(1 << 30, 200, 5);
    run_requests(&mut sim, Op::Write, 4096, 4, &offsets);
    let report = sim.report();
    let DriveModelReport::Ssd(r) = &report.drive else {
        panic!("{:?}", report.drive)
    };
    assert_eq!(r.host_pages_written, 200);
    assert!(report.to_json().contains("\"write_amplification\""));
    let details = report.details();
    assert!(
        details
            .iter()
            .any(|(k, v)| k == "sim.drive.model" && v == "ssd"),
        "{details:?}"
    );

    let mut hdd = Simulator::from_profiles(&ProfileSet::embedded(), "sata-ahci-hdd", SEED).unwrap();
    run_requests(
        &mut hdd,
        Op::Read,
        4096,
        8,
        &random_page_offsets(1 << 30, 50, 6),
    );
    let DriveModelReport::Hdd(h) = hdd.report().drive else {
        panic!()
    };
    assert!(h.seeks > 0 && h.reordered_reads > 0, "{h:?}");
}

#[test]
fn every_shipped_hdd_profile_accesses_in_seek_plus_half_a_revolution() {
    let shipped = [
        include_str!("../../../../../profiles/drives/hdd-7200.toml"),
        include_str!("../../../../../profiles/drives/hdd-10k.toml"),
        include_str!("../../../../../profiles/drives/hdd-5400-laptop.toml"),
    ];
    for text in shipped {
        let storlab_sim::profile::DriveProfile::Hdd(p) = toml::from_str(text).unwrap() else {
            panic!("not an HDD profile");
        };
        storlab_sim::drive::hdd::validate(&p).unwrap();
        let mut d = HddDrive::new(&p);
        let mut rng = ChaCha8Rng::seed_from_u64(SEED);
        let sectors = d.capacity_bytes() / SECTOR;
        let reads = 800u64;
        let mut now = 0;
        let mut total_ns = 0;
        for _ in 0..reads {
            let lba = (rng.next_u64() % (sectors / 8)) * 8;
            let f = d.read(
                now,
                &DriveCommand {
                    write: false,
                    lba,
                    blocks: 8,
                },
                &mut rng,
            );
            total_ns += f.end_ns - now;
            now = f.end_ns;
        }
        let mean_ms = total_ns as f64 / reads as f64 / 1e6;
        let theory_ms =
            (p.average_seek_ns + p.command_overhead_ns) as f64 / 1e6 + 30_000.0 / f64::from(p.rpm);
        eprintln!("{}: {mean_ms:.2} ms vs {theory_ms:.2} ms", p.description);
        assert!(
            (mean_ms / theory_ms - 1.0).abs() < 0.10,
            "{}: {mean_ms:.2} ms vs seek + half a revolution + overhead {theory_ms:.2} ms",
            p.description
        );
    }
}

/// Long random sessions on tight drives (little spare, compression, partial writes, trims),
/// checked every few hundred operations. Opt-in: `STORLAB_SOAK=1`.
#[test]
fn ftl_soak_on_tight_drives() {
    if std::env::var_os("STORLAB_SOAK").is_none() {
        eprintln!("skipped: set STORLAB_SOAK=1 to run the FTL soak");
        return;
    }
    for seed in 0..20u64 {
        let mut p = tiny_ssd(seed % 2 == 0);
        // 24 blocks of 8 pages = 192 pages of NAND, 8 blocks of them reserved (GC threshold
        // and two frontiers per die): user data fills 100-120 of the 128 pages left.
        p.user_capacity_bytes = (120 - (seed % 3) * 10) * PAGE;
        storlab_sim::drive::ssd::validate(&p).unwrap();
        let mut d = SsdDrive::new(&p);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let sectors = p.user_capacity_bytes / SECTOR;
        let mut payload = vec![0u8; 64 * 512];
        let mut now = 0;
        for op in 0..30_000u64 {
            let lba = rng.next_u64() % sectors;
            let n = (1 + rng.next_u64() % 64).min(sectors - lba);
            if rng.next_u64() % 10 == 0 {
                now = d.trim(now, &[TrimRange { lba, blocks: n }]);
            } else {
                let bytes = n as usize * 512;
                rng.fill_bytes(&mut payload[..bytes]);
                let zeros = (rng.next_u64() % 4096) as usize;
                payload[..zeros.min(bytes)].fill(0);
                let cmd = DriveCommand {
                    write: true,
                    lba,
                    blocks: n as u32,
                };
                now = d
                    .write(Flow::ready_at(now), &cmd, Some(&payload[..bytes]), &mut rng)
                    .end_ns;
            }
            if op % 500 == 0 {
                d.check_consistency()
                    .unwrap_or_else(|e| panic!("seed {seed} op {op}: {e}"));
            }
        }
        d.check_consistency().unwrap();
    }
}
