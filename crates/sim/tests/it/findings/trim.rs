//! A used SSD at 4 KiB random writes against the same drive after TRIM (HardWare.fr 2010).

use super::*;

/// HardWare.fr 2010's TRIM article: IOMeter 4 KiB random writes at QD1 over the whole drive.
const TRIM_STACK: &str = "hwfr2010/m225-sata-ahci";
/// The fill the article's "used" state came from: one full sequential pass.
const USED_FILL_BLOCK_BYTES: u32 = 128 * KIB;
/// The article's IOMeter run: 12 minutes of random writes in each state, averaged.
const RANDOM_WRITE_RUN_NS: u64 = 720_000_000_000;
/// The run goes in batches of this many writes until its time is up.
const RANDOM_WRITE_BATCH: u64 = 20_000;
/// The host splits larger discards; one request per TRIM chunk keeps the count small.
const TRIM_CHUNK_BYTES: u64 = 32 << 20;

/// 4 KiB random writes at QD1 over the whole drive for the article's 12 minutes: MB/s.
fn random_writes_4k(sim: &mut Simulator, seed: u64) -> f64 {
    let workload = Workload {
        op: Op::Write,
        block_bytes: 4 * KIB,
        queue_depth: 1,
        random: true,
        ios: RANDOM_WRITE_BATCH,
    };
    let start_ns = sim.now_ns();
    let mut bytes = 0;
    let mut batch = 0;
    while sim.now_ns() - start_ns < RANDOM_WRITE_RUN_NS {
        run_loop(sim, workload, 0, seed * 1000 + batch);
        bytes += RANDOM_WRITE_BATCH * u64::from(4 * KIB);
        batch += 1;
    }
    bytes as f64 / ((sim.now_ns() - start_ns) as f64 / 1e9) / 1e6
}

fn trim_everything(sim: &mut Simulator) {
    let capacity = sim.capacity_bytes();
    sim.setup_slots(1, 4096).unwrap();
    for offset_bytes in (0..capacity).step_by(TRIM_CHUNK_BYTES as usize) {
        let len_bytes = TRIM_CHUNK_BYTES.min(capacity - offset_bytes) as u32;
        sim.submit(SimRequest {
            slot: 0,
            op: Op::Trim,
            offset_bytes,
            len_bytes,
        })
        .unwrap();
        sim.run_until_completions(1);
        sim.pop_completion().unwrap().result.unwrap();
    }
}

#[test]
fn a_used_ssd_is_several_times_slower_at_4k_random_writes_until_trim() {
    // Published (calibration.toml [ssd_trim.crucial_m225]): 11.8 MB/s fresh, 2.5 MB/s after one
    // full sequential fill, each the average of a 12-minute IOMeter run started right after
    // the state was made. The M225's Indilinx firmware maps data blocks whole (hybrid
    // log-block FTL): after a full fill every data block is full, so once its small pool of
    // log blocks is in use, each reclaimed log page costs a full merge of a 128-page block.
    // The 12-minute run wrote under 2 GB, less than the ~4.7 GB of spare a page-mapped FTL
    // would have had to use up first: the slowness is the merges, not the spare running out.
    let started = Instant::now();
    let mut fresh = simulator(TRIM_STACK);
    let fresh_mb_s = random_writes_4k(&mut fresh, 1);

    let mut used = simulator(TRIM_STACK);
    let capacity = used.capacity_bytes();
    fill(&mut used, capacity, USED_FILL_BLOCK_BYTES, 1);
    let settled_ns = used.now_ns() + PAUSE_BETWEEN_RUNS_NS;
    used.step_until(settled_ns);
    let fill_s = started.elapsed().as_secs_f64();
    let used_mb_s = random_writes_4k(&mut used, 2);

    trim_everything(&mut used);
    let DriveModelReport::Ssd(ftl) = used.report().drive else {
        panic!("{TRIM_STACK} does not have an SSD model");
    };
    assert_eq!(ftl.mapped_pages, 0, "TRIM of everything unmaps every page");
    let trimmed_mb_s = random_writes_4k(&mut used, 3);
    eprintln!(
        "{TRIM_STACK}: 4 KiB random writes QD1: fresh {fresh_mb_s:.2} MB/s, used {used_mb_s:.2} \
         MB/s (x{:.2} slower), after TRIM {trimmed_mb_s:.2} MB/s; fill took {fill_s:.1} s wall, \
         all {:.1} s",
        fresh_mb_s / used_mb_s,
        started.elapsed().as_secs_f64()
    );
    assert!(
        fresh_mb_s / used_mb_s >= 3.0,
        "fresh {fresh_mb_s:.2} MB/s vs used {used_mb_s:.2} MB/s"
    );
    assert!(
        (trimmed_mb_s / fresh_mb_s - 1.0).abs() <= 0.2,
        "after TRIM {trimmed_mb_s:.2} MB/s vs fresh {fresh_mb_s:.2} MB/s"
    );
}
