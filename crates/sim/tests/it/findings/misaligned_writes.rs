//! The Crucial C300's 4 KiB writes at IOMeter's default 512-byte alignment (issue 37 item 3):
//! each covers two 4 KiB mapping units partly, and the controller merges each with its old data
//! by NAND copy-back (sense, new sectors in, program), one merge at a time per channel. The
//! bound follows from the data sheet's times and the channel count, not from the article's
//! figure, which the test prints beside it.

use super::*;

const STACK: &str = "hwfr2010/c300-sata-ahci";
/// HardWare.fr, "SSD, TRIM et IOMeter" (2010), page 5: IOMeter 4 KiB random writes, three
/// commands in flight, on the written test file.
const QUEUE_DEPTH: u32 = 3;
const WRITES: u64 = 6000;
const PAGE_BYTES: u64 = 4096;
/// The article's figures, printed for comparison only (MB/s).
const PUBLISHED_ALIGNED_MB_S: f64 = 129.2;
const PUBLISHED_MISALIGNED_MB_S: f64 = 16.0;

/// 4 KiB random writes at QD3 over the test region, `shift_bytes` past 4 KiB boundaries (0 or
/// 512), on a bench whose region was written first. Returns MB/s and the drive's
/// read-modify-writes during the run.
fn random_writes(bench: &mut Bench, shift_bytes: u64, seed: u64) -> (f64, u64) {
    let sim = &mut bench.sim;
    let rmw = |sim: &Simulator| match sim.report().drive {
        DriveModelReport::Ssd(r) => r.read_modify_writes,
        _ => panic!("{STACK} has an SSD"),
    };
    let rmw_before = rmw(sim);
    sim.setup_slots(QUEUE_DEPTH, PAGE_BYTES as usize).unwrap();
    // A fixed sequence of page numbers (SplitMix64), the last page left out so a shifted write
    // stays inside the region.
    let mut state = seed;
    let mut next_offset = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z % (TEST_REGION_BYTES / PAGE_BYTES - 1)) * PAGE_BYTES + shift_bytes
    };
    let start_ns = sim.now_ns();
    let mut submitted = 0;
    let mut submit = |sim: &mut Simulator, slot: u32| {
        sim.submit(SimRequest {
            slot,
            op: Op::Write,
            offset_bytes: next_offset(),
            len_bytes: PAGE_BYTES as u32,
        })
        .unwrap();
    };
    for slot in 0..QUEUE_DEPTH {
        submit(sim, slot);
        submitted += 1;
    }
    for _ in 0..WRITES {
        sim.run_until_completions(1);
        let done = sim.pop_completion().expect("a completion");
        assert_eq!(done.result, Ok(PAGE_BYTES as u32));
        if submitted < WRITES {
            submit(sim, done.slot);
            submitted += 1;
        }
    }
    let elapsed_ns = (sim.now_ns() - start_ns) as f64;
    let mb_s = (WRITES * PAGE_BYTES) as f64 / elapsed_ns * 1e3;
    let rmw_after = rmw(sim);
    let settled_ns = sim.now_ns() + PAUSE_BETWEEN_RUNS_NS;
    sim.step_until(settled_ns);
    (mb_s, rmw_after - rmw_before)
}

#[test]
fn a_512_byte_aligned_4k_write_costs_the_c300_two_copy_back_merges_one_per_channel_at_a_time() {
    let spec = ProfileSet::embedded().resolve(STACK).unwrap();
    let DriveProfile::Ssd(p) = &spec.drive else {
        panic!("{STACK} has an SSD");
    };
    // A merge holds its channel for the sense, the new sectors' transfer and the program; two
    // merges per write.
    let transfer_ns = PAGE_BYTES as f64 / (p.channel_rate_mb_s as f64 * 1e6) * 1e9;
    let merge_ns = p.page_read_ns as f64 + transfer_ns + p.page_program_ns as f64;
    let merges_bound_mb_s = f64::from(p.channels) / merge_ns * 1e9 / 2.0 * PAGE_BYTES as f64 / 1e6;
    // Aligned writes are combined in the buffer and programmed a page per die at a time, and
    // each takes its firmware time on the controller's cores.
    let dies = f64::from(p.channels * p.dies_per_channel * p.planes_per_die);
    let dies_bound_mb_s = dies * PAGE_BYTES as f64 / p.page_program_ns as f64 * 1e3;
    let write_cpu_ns = p.write_cpu_ns.unwrap_or(p.command_cpu_ns) as f64;
    let cpu_bound_mb_s = f64::from(p.controller_cores) / write_cpu_ns * PAGE_BYTES as f64 * 1e3;

    // The host may finish ahead of the NAND by what the write buffer holds: a page of each
    // aligned write, two pages (two merges) of each shifted one. Not ahead of the firmware,
    // which a write's completion waits for.
    let buffer_pages = f64::from(p.write_buffer_pages);
    let ahead = |pages: f64| pages / (pages - buffer_pages);
    let aligned_bound_mb_s = dies_bound_mb_s.min(cpu_bound_mb_s);
    let aligned_most_mb_s = (dies_bound_mb_s * ahead(WRITES as f64)).min(cpu_bound_mb_s);
    let misaligned_ahead = ahead(2.0 * WRITES as f64);

    let mut bench = Bench::new(STACK);
    let (aligned, aligned_rmw) = random_writes(&mut bench, 0, SEED);
    let (misaligned, rmw) = random_writes(&mut bench, 512, SEED + 1);
    eprintln!(
        "{STACK}: 4 KiB random writes QD{QUEUE_DEPTH}: aligned {aligned:.1} MB/s (dies' bound \
         {dies_bound_mb_s:.1}, firmware's {cpu_bound_mb_s:.1}, published \
         {PUBLISHED_ALIGNED_MB_S}), 512-byte-aligned \
         {misaligned:.1} MB/s (channels' bound {merges_bound_mb_s:.1}, published \
         {PUBLISHED_MISALIGNED_MB_S}), {rmw} read-modify-writes"
    );
    let reproduce = format!(
        "reproduce: storlab run --target sim:{STACK} --state seq-filled --rw=randwrite --bs=4k \
         --iodepth=3 --size=128m --offset=512"
    );
    assert_eq!(aligned_rmw, 0, "aligned writes cover whole pages");
    assert_eq!(
        rmw,
        2 * WRITES,
        "each shifted write covers two pages partly"
    );
    // The channels, not the dies or the link, bound the merges: within the bound (with the
    // buffer ahead), and close to it (a channel idles when no write in flight has a page on it).
    assert!(
        misaligned <= merges_bound_mb_s * misaligned_ahead && misaligned >= merges_bound_mb_s * 0.8,
        "512-byte-aligned {misaligned:.1} MB/s against the channels' {merges_bound_mb_s:.1}; \
         {reproduce}"
    );
    // Aligned writes keep the rate of the dies or the firmware, whichever is lower: the
    // merges' cost is theirs alone.
    assert!(
        aligned <= aligned_most_mb_s * 1.01 && aligned >= aligned_bound_mb_s * 0.95,
        "aligned {aligned:.1} MB/s against the dies' {dies_bound_mb_s:.1} and the firmware's \
         {cpu_bound_mb_s:.1}"
    );
    // Several-fold, not the halving two programs per write would give.
    assert!(
        aligned / misaligned > 4.0,
        "aligned {aligned:.1} vs 512-byte-aligned {misaligned:.1} MB/s; {reproduce}"
    );
}
