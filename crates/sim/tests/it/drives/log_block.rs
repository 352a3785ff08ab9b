//! The hybrid (log-block) mapping: merges instead of greedy GC, its RAM against a page table,
//! and its speed after a fill and after TRIM.

use super::*;

/// A one-die hybrid map: 16 blocks of 8 pages, 10 data blocks of user pages, `logs` random
/// log blocks.
fn tiny_log_geometry(logs: u32) -> LogBlockGeometry {
    LogBlockGeometry {
        dies: 1,
        blocks_per_die: 16,
        pages_per_block: 8,
        logical_pages: 80,
        random_logs_per_die: logs,
    }
}

#[test]
fn a_sequential_fill_switch_merges_every_block_without_a_copy() {
    let mut ftl = LogBlockFtl::new(tiny_log_geometry(2));
    for lpn in 0..80 {
        let placed = ftl.write(lpn, lpn as u32);
        // Fresh blocks need no erase; the stream's own block becomes the data block.
        assert!(placed.work.is_empty(), "page {lpn}: {:?}", placed.work);
    }
    let m = ftl.merges();
    assert_eq!((m.switch, m.partial, m.full), (10, 0, 0));
    assert_eq!(ftl.copies(), 0);
    assert_eq!(ftl.mapped_pages(), 80);
    // Every page sits at its own offset of its data block.
    for lpn in 0..80 {
        assert_eq!(ftl.locate(lpn).map(|p| p % 8), Some(lpn % 8));
    }
    ftl.check_consistency().unwrap();
}

#[test]
fn a_random_write_into_a_full_data_block_costs_a_full_merge_when_its_log_is_reclaimed() {
    let mut ftl = LogBlockFtl::new(tiny_log_geometry(2));
    ftl.track_contents();
    for lpn in 0..80 {
        ftl.write(lpn, 0);
    }
    // One page of block 0 rewritten: it goes to a random log block, no merge yet.
    assert!(ftl.write(5, 1).work.is_empty());
    // Fill that log block and open the second with pages of other blocks at offset 3 (each
    // block's own sequential position is taken: offset 0 starts a stream).
    let others: Vec<u64> = (1..10).map(|b| b * 8 + 3).collect();
    for (i, &lpn) in others.iter().cycle().take(8).enumerate() {
        let w = ftl.write(lpn, 2 + i as u32).work;
        assert_eq!((w.reads, w.programs), (0, 0), "write {i}");
    }
    // The pool (2 blocks) is now in use: the next write first reclaims slot 0 of the oldest
    // log block, page 5's: every page of block 0 is copied into a new block (7 from the data
    // block, 1 from the log).
    let w = ftl.write(77, 99).work;
    assert_eq!((w.reads, w.programs), (8, 8), "{w:?}");
    assert!(w.erases <= 1, "{w:?}");
    assert_eq!(ftl.merges().full, 1);
    assert_eq!(ftl.content_of(5), Some(1));
    assert_eq!(ftl.content_of(4), Some(0));
    ftl.check_consistency().unwrap();
}

#[test]
fn a_trimmed_block_merges_without_copying_its_old_data_and_is_free_again() {
    let filled = || {
        let mut ftl = LogBlockFtl::new(tiny_log_geometry(2));
        for lpn in 0..80 {
            ftl.write(lpn, 0);
        }
        ftl
    };
    let (mut used, mut trimmed) = (filled(), filled());
    let free_before = trimmed.free_blocks(0);
    for lpn in 0..80 {
        assert!(trimmed.trim(lpn));
    }
    assert_eq!(trimmed.mapped_pages(), 0);
    assert_eq!(
        trimmed.free_blocks(0),
        free_before + 10,
        "every data block released"
    );
    // The same random writes (odd offsets: no stream starts) on both: merges on the trimmed
    // drive copy only what was written since, on the used one whole blocks.
    for ftl in [&mut used, &mut trimmed] {
        for i in 0..40u64 {
            ftl.write(((i * 37) % 80) | 1, i as u32);
        }
        ftl.check_consistency().unwrap();
    }
    assert!(used.merges().full > 0 && used.merges().full == trimmed.merges().full);
    eprintln!(
        "40 random writes: {} copies used, {} after TRIM",
        used.copies(),
        trimmed.copies()
    );
    assert!(
        trimmed.copies() * 3 < used.copies(),
        "after TRIM {} copies, used {}",
        trimmed.copies(),
        used.copies()
    );
}

/// The hybrid mapping on the tiny drive: 2 dies × 12 blocks × 8 pages, 120 user pages (8 data
/// blocks per die), 2 random log blocks per die.
fn tiny_log_block_ssd() -> SsdProfile {
    let mut p = tiny_ssd(false);
    p.mapping = Mapping::LogBlock;
    p.log_blocks = 4;
    storlab_sim::drive::ssd::validate(&p).unwrap();
    p
}

/// Apply `ops` to a hybrid-mapped drive with content tracking, checking after each that every
/// logical page maps to the data last written to it (or to nothing after a TRIM) and that the
/// maps are consistent.
fn log_block_ops_keep_data(ops: &[FtlOp]) -> Result<(), String> {
    let p = tiny_log_block_ssd();
    let mut d = SsdDrive::new(&p);
    d.log_block_ftl_mut().unwrap().track_contents();
    let pages = p.user_capacity_bytes / PAGE;
    let mut shadow: Vec<Option<u32>> = vec![None; pages as usize];
    let mut tag = 0u32;
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut now = 0;
    for (i, op) in ops.iter().enumerate() {
        match *op {
            FtlOp::Write {
                sector, sectors, ..
            } => {
                let cmd = DriveCommand {
                    write: true,
                    lba: sector,
                    blocks: sectors,
                };
                now = d.write(Flow::ready_at(now), &cmd, None, &mut rng).end_ns;
                let first = sector * SECTOR / PAGE;
                let end = ((sector + u64::from(sectors)) * SECTOR).div_ceil(PAGE);
                for lpn in first..end {
                    tag += 1;
                    shadow[lpn as usize] = Some(tag);
                }
            }
            FtlOp::Trim { sector, sectors } => {
                now = d.trim(
                    now,
                    &[TrimRange {
                        lba: sector,
                        blocks: sectors,
                    }],
                );
                let first = (sector * SECTOR).div_ceil(PAGE);
                let end = (sector + sectors) * SECTOR / PAGE;
                for lpn in first..end.min(pages) {
                    shadow[lpn as usize] = None;
                }
            }
            FtlOp::Read { sector, sectors } => {
                let cmd = DriveCommand {
                    write: false,
                    lba: sector,
                    blocks: sectors,
                };
                let f = d.read(now, &cmd, &mut rng);
                if f.end_ns < f.start_ns || f.start_ns < now {
                    return Err(format!("op {i}: read flow {f:?} before {now}"));
                }
            }
        }
        let ftl = d.log_block_ftl().unwrap();
        for (lpn, want) in shadow.iter().enumerate() {
            let got = ftl.content_of(lpn as u64);
            if got != *want {
                return Err(format!(
                    "op {i} ({op:?}): page {lpn} holds {got:?}, wrote {want:?}"
                ));
            }
        }
        d.check_consistency()
            .map_err(|e| format!("op {i} ({op:?}): {e}"))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Under random writes (partial pages included), trims and reads, the hybrid map always
    /// points each logical page at the data last written to it.
    #[test]
    fn log_block_mapping_keeps_the_data_under_random_workloads(
        ops in prop::collection::vec(ftl_op(120 * 8), 1..400),
    ) {
        prop_assert_eq!(log_block_ops_keep_data(&ops), Ok(()));
    }
}

/// Long random sessions on the hybrid map, opt-in like the page-mapped soak.
#[test]
fn log_block_soak() {
    if std::env::var_os("STORLAB_SOAK").is_none() {
        eprintln!("skipped: set STORLAB_SOAK=1 to run the FTL soak");
        return;
    }
    let sectors = 120 * 8;
    for seed in 0..20u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ops: Vec<FtlOp> = (0..20_000)
            .map(|_| {
                let sector = rng.next_u64() % sectors;
                let n = (1 + rng.next_u64() % 64).min(sectors - sector);
                match rng.next_u64() % 10 {
                    0 => FtlOp::Trim { sector, sectors: n },
                    1 => FtlOp::Read {
                        sector,
                        sectors: n as u32,
                    },
                    _ => FtlOp::Write {
                        sector,
                        sectors: n as u32,
                        zero_bytes: 0,
                    },
                }
            })
            .collect();
        log_block_ops_keep_data(&ops).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    }
}

/// Block-level maps are small: the M225's whole hybrid map (block map, per-page current bits,
/// free lists, erase counts, the log blocks' page maps) stays a fraction of a 4-byte-per-page
/// table, also once the log pool is in use.
#[test]
fn the_hybrid_map_of_a_64_gb_drive_is_a_fraction_of_a_page_table() {
    let p = m225();
    let mut d = SsdDrive::new(&p);
    let table = d.four_byte_map_bytes();
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let pages = d.capacity_bytes() / PAGE;
    // More random pages than the log pool holds (1024 blocks × 128 pages), so it cycles.
    for _ in 0..200_000 {
        let lba = (rng.next_u64() % pages) * 8;
        let cmd = DriveCommand {
            write: true,
            lba,
            blocks: 8,
        };
        d.write(Flow::ready_at(0), &cmd, None, &mut rng);
    }
    let ram = d.mapping_ram_bytes();
    eprintln!(
        "M225 hybrid map: {:.1} MiB = {:.3}x a 4-byte page table of {:.1} MiB",
        ram as f64 / 1048576.0,
        ram as f64 / table as f64,
        table as f64 / 1048576.0
    );
    assert!(
        ram * 5 <= table,
        "hybrid map {ram} B vs page table {table} B"
    );
    assert!(
        ssd_report(&d).merges.unwrap().full > 0,
        "the log pool was reclaimed"
    );
    assert_eq!(d.nand_oob_bytes(), 0, "no per-page reverse map");
}

/// The M225 profile through a SATA stack: fresh random 4 KiB writes are bound by the firmware's
/// time per command; right after a sequential fill, once the log pool is in use, every
/// reclaimed log page costs a full merge of a 128-page block; TRIM of everything makes it
/// fast again.
#[test]
fn log_block_drive_is_slow_after_a_fill_and_fast_again_after_trim() {
    let drive = toml::to_string(&storlab_sim::profile::DriveProfile::Ssd(m225())).unwrap();
    let mut sim = sim_with_drive(&drive);
    sim.set_store_payload(false);
    let capacity = sim.capacity_bytes();
    // Fill sequentially; the fill is switch merges only.
    let chunk = 1u64 << 20;
    let offsets: Vec<u64> = (0..capacity / chunk).map(|i| i * chunk).collect();
    run_requests(&mut sim, Op::Write, chunk as u32, 4, &offsets);
    let DriveModelReport::Ssd(r) = sim.report().drive else {
        panic!()
    };
    let m = r.merges.clone().unwrap();
    assert_eq!((m.partial, m.full, r.gc_copies), (0, 0, 0), "{r:?}");
    // Each die's last logical block is partial and stays in its sequential log block.
    assert!(m.switch >= capacity / (512 << 10) - 32, "{m:?}");
    // Past the log pool (1024 × 128 pages), then the measured window.
    run_requests(
        &mut sim,
        Op::Write,
        4096,
        1,
        &random_page_offsets(capacity, 140_000, 21),
    );
    let used = run_requests(
        &mut sim,
        Op::Write,
        4096,
        1,
        &random_page_offsets(capacity, 20_000, 22),
    );
    let trims: Vec<u64> = (0..capacity.div_ceil(64 << 20))
        .map(|i| i * (64 << 20))
        .collect();
    sim.setup_slots(1, 4096).unwrap();
    for &offset in &trims {
        let len = (64u64 << 20).min(capacity - offset) as u32;
        sim.submit(SimRequest {
            slot: 0,
            op: Op::Trim,
            offset_bytes: offset,
            len_bytes: len,
        })
        .unwrap();
        sim.run_until_completions(1);
        sim.pop_completion().unwrap().result.unwrap();
    }
    let trimmed = run_requests(
        &mut sim,
        Op::Write,
        4096,
        1,
        &random_page_offsets(capacity, 20_000, 23),
    );
    eprintln!("M225 4 KiB random writes QD1: used {used:.2} MB/s, after TRIM {trimmed:.2} MB/s");
    assert!(
        trimmed / used >= 3.0,
        "used {used:.2} vs trimmed {trimmed:.2} MB/s"
    );
    assert!(
        (trimmed / 11.8 - 1.0).abs() < 0.1,
        "after TRIM {trimmed:.2} MB/s vs 11.8 fresh"
    );
}
