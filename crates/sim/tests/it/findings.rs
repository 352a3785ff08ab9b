//! The published findings (issue #7 item 4, DOMAIN.md §2–4) as deterministic tests on the shipped
//! stacks: each asserts a relation between two simulated scenarios the labs measured (never an
//! absolute figure fitted to one scenario), so a finding holds only if the shared, physical
//! profile parameters reproduce it. Run with `--nocapture` to see the measured figures.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Instant;

use storlab_sim::drive::hdd::{HddDrive, HddProfile};
use storlab_sim::drive::DriveModelReport;
use storlab_sim::profile::DriveProfile;
use storlab_sim::report::SimReport;
use storlab_sim::workload::{ClosedLoop, LoopResult};
use storlab_sim::{Op, ProfileSet, SimRequest, Simulator};

const SEED: u64 = 7;
const KIB: u32 = 1 << 10;
const MIB: u32 = 1 << 20;
/// The Windows 7 Microsoft BOT driver's largest transfer
/// (calibration.toml interface.windows7_bot_max_transfer_bytes).
const WINDOWS7_BOT_MAX_TRANSFER_BYTES: u32 = 65536;

/// Region the benchmarks run on: like IOMeter's test file it is written sequentially before the
/// measured run, so reads reach the flash instead of returning unmapped zeros from the
/// controller. Large enough that neither a 4 KiB random run nor a sequential run wraps around
/// onto a cached or just-written spot that would flatter it.
const TEST_REGION_BYTES: u64 = 128 << 20;
/// Block size and queue depth of the preparatory sequential fill.
const FILL_BLOCK_BYTES: u32 = MIB;
const FILL_QUEUE_DEPTH: u32 = 4;
/// Idle time after the fill and between measured runs on one prepared simulator.
const PAUSE_BETWEEN_RUNS_NS: u64 = 1_000_000_000;

/// One measured workload.
#[derive(Clone, Copy, Debug)]
struct Workload {
    op: Op,
    block_bytes: u32,
    queue_depth: u32,
    random: bool,
    ios: u64,
}

impl Workload {
    fn sequential_read(block_bytes: u32, queue_depth: u32, ios: u64) -> Workload {
        Workload {
            op: Op::Read,
            block_bytes,
            queue_depth,
            random: false,
            ios,
        }
    }
    fn random_read(block_bytes: u32, queue_depth: u32, ios: u64) -> Workload {
        Workload {
            random: true,
            ..Workload::sequential_read(block_bytes, queue_depth, ios)
        }
    }
}

/// What one measured run gave, with the report's counters for that run alone (the preparatory
/// fill subtracted).
struct Measured {
    result: LoopResult,
    report: SimReport,
    /// I/O sizes the drive saw during the measured run only.
    drive_io_sizes: BTreeMap<u32, u64>,
    merged_requests: u64,
    /// The busiest layer during the measured run only, and its utilisation (the report's own
    /// figure covers the whole session, preparatory fill included).
    bottleneck: String,
    bottleneck_utilisation: f64,
}

impl Measured {
    fn mb_per_s(&self) -> f64 {
        self.result.mb_per_s()
    }
    fn iops(&self) -> f64 {
        self.result.iops()
    }
    fn largest_drive_io_bytes(&self) -> u32 {
        self.drive_io_sizes.keys().next_back().copied().unwrap_or(0)
    }
}

fn sizes(report: &SimReport) -> BTreeMap<u32, u64> {
    report
        .drive_io_sizes
        .iter()
        .map(|s| (s.size_bytes, s.count))
        .collect()
}

fn simulator(stack: &str) -> Simulator {
    simulator_in(&ProfileSet::embedded(), stack)
}

fn simulator_in(profiles: &ProfileSet, stack: &str) -> Simulator {
    let mut sim = Simulator::from_profiles(profiles, stack, SEED)
        .unwrap_or_else(|e| panic!("stack {stack}: {e}"));
    // Timing only: nothing here reads data back, and a full-drive fill must not keep 64 GB.
    sim.set_store_payload(false);
    sim
}

/// Run `workload` on `sim` (slots resized to it) over `region_bytes` (0 = whole device).
fn run_loop(sim: &mut Simulator, workload: Workload, region_bytes: u64, seed: u64) -> LoopResult {
    sim.setup_slots(workload.queue_depth, workload.block_bytes as usize)
        .unwrap();
    ClosedLoop {
        op: workload.op,
        block_bytes: workload.block_bytes,
        queue_depth: workload.queue_depth,
        random: workload.random,
        region_bytes,
        ios: workload.ios,
        seed,
    }
    .run(sim)
}

/// Write the first `region_bytes` sequentially, as a benchmark creates its test file.
fn fill(sim: &mut Simulator, region_bytes: u64, block_bytes: u32, queue_depth: u32) {
    let fill = Workload {
        op: Op::Write,
        block_bytes,
        queue_depth,
        random: false,
        ios: region_bytes.div_ceil(u64::from(block_bytes)),
    };
    run_loop(sim, fill, region_bytes, SEED);
}

/// One stack with its test region prepared, on which workloads are measured one after another
/// (in a fixed order, so the results stay deterministic).
struct Bench {
    stack: String,
    sim: Simulator,
}

impl Bench {
    /// A fresh simulator of `stack` with the test region written and a pause after it, as a
    /// benchmark creates its test file and waits before the first measured run (the pause lets
    /// the drive finish programming what its write buffer still holds).
    fn new(stack: &str) -> Bench {
        Bench::new_in(&ProfileSet::embedded(), stack)
    }

    /// [`Bench::new`] on a stack of `profiles` (shipped profiles plus test-made stacks).
    fn new_in(profiles: &ProfileSet, stack: &str) -> Bench {
        let mut sim = simulator_in(profiles, stack);
        fill(
            &mut sim,
            TEST_REGION_BYTES,
            FILL_BLOCK_BYTES,
            FILL_QUEUE_DEPTH,
        );
        let settled_ns = sim.now_ns() + PAUSE_BETWEEN_RUNS_NS;
        sim.step_until(settled_ns);
        Bench {
            stack: stack.to_string(),
            sim,
        }
    }

    /// Measure `workload` on the test region; the report's counters are for this run alone.
    fn measure(&mut self, workload: Workload) -> Measured {
        let before = self.sim.report();
        let result = run_loop(&mut self.sim, workload, TEST_REGION_BYTES, SEED + 1);
        let report = self.sim.report();
        let settled_ns = self.sim.now_ns() + PAUSE_BETWEEN_RUNS_NS;
        self.sim.step_until(settled_ns);
        let mut drive_io_sizes = sizes(&report);
        for (size, count) in sizes(&before) {
            let left = drive_io_sizes.get(&size).copied().unwrap_or(0) - count;
            if left == 0 {
                drive_io_sizes.remove(&size);
            } else {
                drive_io_sizes.insert(size, left);
            }
        }
        let merged_requests = report.merged_requests - before.merged_requests;
        let elapsed_ns = (report.elapsed_ns - before.elapsed_ns).max(1) as f64;
        let (bottleneck, bottleneck_utilisation) = report
            .layers
            .iter()
            .zip(&before.layers)
            .map(|(after, before)| {
                assert_eq!(after.name, before.name);
                let busy_ns = after.busy_ns - before.busy_ns;
                (after.name.clone(), busy_ns as f64 / elapsed_ns)
            })
            .fold((String::new(), -1.0), |best, layer| {
                if layer.1 > best.1 {
                    layer
                } else {
                    best
                }
            });
        eprintln!(
            "{}: {:?} {} KiB QD{} {}: {:.1} MB/s, {:.0} IOPS, bottleneck {} ({:.0}%), drive I/O \
             sizes {drive_io_sizes:?}, merged {merged_requests}",
            self.stack,
            workload.op,
            workload.block_bytes / KIB,
            workload.queue_depth,
            if workload.random {
                "random"
            } else {
                "sequential"
            },
            result.mb_per_s(),
            result.iops(),
            bottleneck,
            bottleneck_utilisation * 100.0,
        );
        Measured {
            result,
            report,
            drive_io_sizes,
            merged_requests,
            bottleneck,
            bottleneck_utilisation,
        }
    }
}

/// Prepare the test region on a fresh simulator of `stack`, then measure `workload` on it.
fn measure(stack: &str, workload: Workload) -> Measured {
    Bench::new(stack).measure(workload)
}

/// HardWare.fr 2013 measured with IOMeter at 2 MiB and 4 KiB, queue depth 1 to 8 (DOMAIN.md §5).
const IOMETER_LARGE_BLOCK_BYTES: u32 = 2 * MIB;
const IOMETER_SMALL_BLOCK_BYTES: u32 = 4 * KIB;
const IOMETER_MAX_QUEUE_DEPTH: u32 = 8;
/// CrystalDiskMark 3.0's sequential test (the LucidPort note): 1 MiB blocks, one at a time.
const CRYSTALDISKMARK_SEQ_BLOCK_BYTES: u32 = MIB;
/// X-bit labs' IOMeter sequential runs used queue depth 4 (DOMAIN.md §5).
const XBIT_SEQ_QUEUE_DEPTH: u32 = 4;

/// The (UAS, BOT) pairs HardWare.fr 2013 measured on one port: MCCI's UAS driver ran on the
/// ASMedia port only (Asus USB Boost; the controller makers shipped no UAS driver for Windows 7),
/// under Windows 7 ("ASMedia UASP" against "ASMedia BOT") and under Windows 8 (against Microsoft's
/// BOT driver over ASMedia's xHCI driver). The same driver on the Intel, AMD and Etron ports is a
/// what-if (profiles/stacks/whatif/) and no finding rests on it.
const HWFR2013_UAS_BOT_PAIRS: [(&str, &str); 2] = [
    ("hwfr2013/asm1042-win7-uas", "hwfr2013/asm1042-win7-bot"),
    (
        "hwfr2013/asm1042-win8-mcci-uas",
        "hwfr2013/asm1042-win8-asmedia-xhci-bot",
    ),
];

/// BOT -> UAS at QD1 sequential reads on the same port: the gain is the per-command round trip
/// BOT pays (CBW, data, CSW, one command at a time) that UAS pipelines away.
fn assert_bot_to_uas_gain_is_tens_of_mb_s(bot_stack: &str, uas_stack: &str, block_bytes: u32) {
    let workload = Workload::sequential_read(block_bytes, 1, 48);
    let bot = measure(bot_stack, workload);
    let uas = measure(uas_stack, workload);
    let gain_mb_s = uas.mb_per_s() - bot.mb_per_s();
    eprintln!("  BOT -> UAS gain: {gain_mb_s:+.1} MB/s");
    assert!(
        (10.0..=150.0).contains(&gain_mb_s),
        "{bot_stack} {:.1} MB/s -> {uas_stack} {:.1} MB/s: gain {gain_mb_s:.1} MB/s",
        bot.mb_per_s(),
        uas.mb_per_s()
    );
}

#[test]
fn bot_to_uas_gains_tens_of_mb_s_on_the_lucidport_card() {
    // CrystalDiskMark's sequential test. Published: 197.9 -> 244.8 MB/s (+46.9). Measured:
    // 207.3 -> 259.1 MB/s (+51.8).
    assert_bot_to_uas_gain_is_tens_of_mb_s(
        "lucidport/x25e-bot-gen2",
        "lucidport/x25e-uas-gen2",
        CRYSTALDISKMARK_SEQ_BLOCK_BYTES,
    );
}

/// Random 4 KiB reads at QD1 and at IOMeter's QD8 on one HardWare.fr 2013 port, with MCCI's UAS
/// driver and with Microsoft's BOT driver.
struct PortAt4k {
    uas_stack: String,
    uas_transport: String,
    uas_fallback: Option<String>,
    uas_qd1_iops: f64,
    uas_qd8_iops: f64,
    bot_stack: String,
    bot_qd1_iops: f64,
    bot_qd8_iops: f64,
}

/// The figures of pair `index` of [`HWFR2013_UAS_BOT_PAIRS`], measured once per test binary: two
/// findings read them, and each stack's simulator is expensive to build (its FTL maps 120 GB).
fn port_at_4k(index: usize) -> &'static PortAt4k {
    static MEASURED: [OnceLock<PortAt4k>; HWFR2013_UAS_BOT_PAIRS.len()] =
        [const { OnceLock::new() }; HWFR2013_UAS_BOT_PAIRS.len()];
    let (uas_stack, bot_stack) = HWFR2013_UAS_BOT_PAIRS[index];
    MEASURED[index].get_or_init(|| {
        let qd1 = Workload::random_read(IOMETER_SMALL_BLOCK_BYTES, 1, 400);
        let qd8 =
            |ios| Workload::random_read(IOMETER_SMALL_BLOCK_BYTES, IOMETER_MAX_QUEUE_DEPTH, ios);
        let mut uas = Bench::new(uas_stack);
        let uas1 = uas.measure(qd1);
        let uas8 = uas.measure(qd8(2000));
        let mut bot = Bench::new(bot_stack);
        let bot1 = bot.measure(qd1);
        let bot8 = bot.measure(qd8(400));
        PortAt4k {
            uas_stack: uas_stack.to_string(),
            uas_transport: uas8.report.transport.clone(),
            uas_fallback: uas8.report.fallback.clone(),
            uas_qd1_iops: uas1.iops(),
            uas_qd8_iops: uas8.iops(),
            bot_stack: bot_stack.to_string(),
            bot_qd1_iops: bot1.iops(),
            bot_qd8_iops: bot8.iops(),
        }
    })
}

/// The third-party UAS driver gains several-fold from QD1 to QD8 (tags reach the drive's dies);
/// BOT stays flat (one command at a time whatever the queue above it).
fn assert_uas_scales_with_depth_and_bot_does_not(index: usize) {
    let p = port_at_4k(index);
    let uas_gain = p.uas_qd8_iops / p.uas_qd1_iops;
    eprintln!(
        "  {} ({}): QD8/QD1 = {uas_gain:.2}",
        p.uas_stack, p.uas_transport
    );
    assert!(
        uas_gain >= 3.0,
        "{} ran {} ({:?}): QD1 {:.0} IOPS, QD8 {:.0} IOPS (x{uas_gain:.2})",
        p.uas_stack,
        p.uas_transport,
        p.uas_fallback,
        p.uas_qd1_iops,
        p.uas_qd8_iops
    );
    let bot_gain = p.bot_qd8_iops / p.bot_qd1_iops;
    eprintln!("  {}: QD8/QD1 = {bot_gain:.3}", p.bot_stack);
    assert!(
        (0.9..=1.15).contains(&bot_gain),
        "{}: QD1 {:.0} IOPS, QD8 {:.0} IOPS (x{bot_gain:.3})",
        p.bot_stack,
        p.bot_qd1_iops,
        p.bot_qd8_iops
    );
}

#[test]
fn third_party_uas_gains_several_fold_from_qd1_to_qd8_on_the_asmedia_port_under_windows_7() {
    assert_uas_scales_with_depth_and_bot_does_not(0);
}

#[test]
fn third_party_uas_gains_several_fold_from_qd1_to_qd8_on_the_asmedia_port_under_windows_8() {
    assert_uas_scales_with_depth_and_bot_does_not(1);
}

#[test]
fn uas_at_4k_qd1_is_no_faster_than_bot_on_the_same_port() {
    // With one command outstanding UAS has nothing to overlap; its extra IUs cost as much as
    // BOT's CBW/CSW.
    for index in 0..HWFR2013_UAS_BOT_PAIRS.len() {
        let p = port_at_4k(index);
        eprintln!(
            "  {} / {}: UAS/BOT at QD1 = {:.3}",
            p.uas_stack,
            p.bot_stack,
            p.uas_qd1_iops / p.bot_qd1_iops
        );
        assert!(
            p.uas_qd1_iops <= p.bot_qd1_iops * 1.1,
            "{}: UAS {:.0} IOPS vs {}: BOT {:.0} IOPS",
            p.uas_stack,
            p.uas_qd1_iops,
            p.bot_stack,
            p.bot_qd1_iops
        );
    }
}

/// IOMeter's queued 4 KiB run as a sequential stream at its deepest queue: the queued requests
/// continue each other, which is what the merging driver joins into larger commands.
fn queued_sequential_4k() -> Workload {
    Workload::sequential_read(IOMETER_SMALL_BLOCK_BYTES, IOMETER_MAX_QUEUE_DEPTH, 4000)
}

#[test]
fn the_merging_turbo_driver_inflates_queued_4k_results_and_storlab_flags_it() {
    let merging = measure("hwfr2013/amd-win7-turbo", queued_sequential_4k());
    let non_merging = measure("hwfr2013/intel-win7-turbo", queued_sequential_4k());
    let drive_alone = measure("hwfr2013/sata-ahci", queued_sequential_4k());
    assert!(
        merging.mb_per_s() > non_merging.mb_per_s(),
        "merging Turbo {:.1} MB/s vs non-merging Turbo {:.1} MB/s",
        merging.mb_per_s(),
        non_merging.mb_per_s()
    );
    assert!(merging.merged_requests > 0);
    assert!(
        merging.largest_drive_io_bytes() > IOMETER_SMALL_BLOCK_BYTES,
        "{:?}",
        merging.drive_io_sizes
    );
    assert!(
        merging.report.warnings.iter().any(|w| w.contains("merged")),
        "{:?}",
        merging.report.warnings
    );
    // The others pass 4 KiB through as asked and are not flagged.
    for other in [&drive_alone, &non_merging] {
        assert_eq!(other.merged_requests, 0);
        assert_eq!(other.largest_drive_io_bytes(), IOMETER_SMALL_BLOCK_BYTES);
        assert!(!other.report.warnings.iter().any(|w| w.contains("merged")));
    }
}

/// What "the SSD itself can do at 4 KiB" means for a BOT result: the drive's 4 KiB figure with
/// one command at a time (CrystalDiskMark's "4K" row, the reviews' 4 KiB figure), measured on
/// the SATA port. A BOT driver gives the drive one command at a time whatever the benchmark's
/// queue depth, over a longer path than AHCI's, so an honest BOT result at 4 KiB stays below
/// it; only commands larger than 4 KiB can put it above.
fn drive_alone_at_4k() -> Workload {
    Workload::sequential_read(IOMETER_SMALL_BLOCK_BYTES, 1, 4000)
}

#[test]
fn the_merging_turbo_driver_reports_more_than_the_drive_itself_does_at_4k() {
    // How much the driver gathers: the second read of the stream goes as one 1 MiB read-ahead
    // command, and the 255 reads after it are copied from the driver's buffer (queued reads
    // that continue a read being sent are merged into it as well). Measured: 186 MB/s (the
    // drive saw 1 x 4 KiB and 16 x 1 MiB) against the drive's own 61.5 MB/s at 4 KiB on AHCI;
    // the same driver without merging (intel-win7-turbo) 28.2 MB/s. Before the driver's
    // read-ahead was modelled (block-layer merging only) it gave 72.1 MB/s here and nothing at
    // queue depth 1. (The drive on AHCI at queue depth 8, 255 MB/s, is out of reach of any BOT
    // path sending 4 KiB commands: 62 000 commands/s.)
    let merging = measure("hwfr2013/amd-win7-turbo", queued_sequential_4k());
    let non_merging = measure("hwfr2013/intel-win7-turbo", queued_sequential_4k());
    let drive_alone = measure("hwfr2013/sata-ahci", drive_alone_at_4k());
    assert!(
        merging.mb_per_s() > drive_alone.mb_per_s(),
        "merging Turbo {:.1} MB/s vs the drive on AHCI {:.1} MB/s",
        merging.mb_per_s(),
        drive_alone.mb_per_s()
    );
    assert!(
        non_merging.mb_per_s() < drive_alone.mb_per_s(),
        "non-merging Turbo {:.1} MB/s vs the drive on AHCI {:.1} MB/s",
        non_merging.mb_per_s(),
        drive_alone.mb_per_s()
    );
}

/// IOMeter's 4 KiB run one request at a time, in the direction `op`, sequential: what the
/// review's "concatenates consecutive accesses" needs (queue depth 1, where nothing queues for
/// the block layer to merge).
fn sequential_4k_qd1(op: Op) -> Workload {
    Workload {
        op,
        ..Workload::sequential_read(IOMETER_SMALL_BLOCK_BYTES, 1, 4000)
    }
}

#[test]
fn the_merging_turbo_driver_reads_ahead_and_coalesces_writes_at_qd1_above_the_drive() {
    // HardWare.fr 2013: the AMD port's Turbo driver (ASRock XFast USB) "regroups 4 KiB accesses
    // on the fly into larger ones", giving 4 KiB results above what the SSD itself can do, for
    // reads and for writes. With one request at a time nothing queues, so only the driver's own
    // read-ahead and write coalescing (driver_buffer.rs) can do it; the non-merging Turbo driver
    // on the Intel port stays below the drive, and storlab's merge warning names both.
    for op in [Op::Read, Op::Write] {
        let merging = measure("hwfr2013/amd-win7-turbo", sequential_4k_qd1(op));
        let non_merging = measure("hwfr2013/intel-win7-turbo", sequential_4k_qd1(op));
        let drive_alone = measure("hwfr2013/sata-ahci", sequential_4k_qd1(op));
        eprintln!(
            "  {op:?}: merging Turbo {:.1}, non-merging Turbo {:.1}, drive on AHCI {:.1} MB/s",
            merging.mb_per_s(),
            non_merging.mb_per_s(),
            drive_alone.mb_per_s()
        );
        assert!(
            merging.mb_per_s() > drive_alone.mb_per_s(),
            "{op:?}: merging Turbo {:.1} MB/s vs the drive on AHCI {:.1} MB/s",
            merging.mb_per_s(),
            drive_alone.mb_per_s()
        );
        assert!(non_merging.mb_per_s() < drive_alone.mb_per_s());
        assert!(
            merging.largest_drive_io_bytes() > IOMETER_SMALL_BLOCK_BYTES,
            "{:?}",
            merging.drive_io_sizes
        );
        let warning = merging
            .report
            .warnings
            .iter()
            .find(|w| w.contains("merged"))
            .unwrap_or_else(|| panic!("{op:?}: no merge warning: {:?}", merging.report.warnings));
        if op == Op::Read {
            assert!(warning.contains("read-ahead"), "{warning}");
        }
        assert!(!non_merging
            .report
            .warnings
            .iter()
            .any(|w| w.contains("merged")));
    }
}

#[test]
fn the_merging_turbo_driver_does_not_inflate_random_4k() {
    // Its read-ahead and write coalescing follow consecutive accesses only: random 4 KiB I/O
    // goes to the drive as asked, at the non-merging Turbo driver's rate.
    for op in [Op::Read, Op::Write] {
        let random = Workload {
            op,
            ..Workload::random_read(IOMETER_SMALL_BLOCK_BYTES, 1, 2000)
        };
        let merging = measure("hwfr2013/amd-win7-turbo", random);
        let non_merging = measure("hwfr2013/intel-win7-turbo", random);
        assert_eq!(merging.largest_drive_io_bytes(), IOMETER_SMALL_BLOCK_BYTES);
        assert_eq!(merging.report.driver_buffer_reads, 0);
        let ratio = merging.mb_per_s() / non_merging.mb_per_s();
        assert!(
            (0.8..1.25).contains(&ratio),
            "{op:?}: merging/non-merging = {ratio:.3}"
        );
    }
}

#[test]
fn the_windows7_64k_limit_caps_sequential_throughput_until_a_turbo_driver_lifts_it() {
    let workload = Workload::sequential_read(IOMETER_LARGE_BLOCK_BYTES, 1, 48);
    let microsoft = measure("hwfr2013/intel-win7-bot", workload);
    let turbo = measure("hwfr2013/intel-win7-turbo", workload);
    assert_eq!(
        microsoft.largest_drive_io_bytes(),
        WINDOWS7_BOT_MAX_TRANSFER_BYTES,
        "{:?}",
        microsoft.drive_io_sizes
    );
    assert!(turbo.largest_drive_io_bytes() > WINDOWS7_BOT_MAX_TRANSFER_BYTES);
    eprintln!(
        "  Microsoft/Turbo = {:.3}",
        microsoft.mb_per_s() / turbo.mb_per_s()
    );
    assert!(
        microsoft.mb_per_s() < 0.85 * turbo.mb_per_s(),
        "64 KiB {:.1} MB/s vs Turbo {:.1} MB/s",
        microsoft.mb_per_s(),
        turbo.mb_per_s()
    );
}

#[test]
fn usb2_caps_every_drive_near_33_to_35_mb_s() {
    // X-bit labs 2010: the HD103SJ on USB 2.0 and in the Vantec on USB 3.0, Windows XP SP2.
    let workload = Workload::sequential_read(MIB, XBIT_SEQ_QUEUE_DEPTH, 40);
    let xbit_usb2 = measure("xbit2010/vantec-usb2", workload);
    let other_hdd_usb2 = measure("usb2-bot-hdd", workload);
    for usb2 in [&xbit_usb2, &other_hdd_usb2] {
        assert!(
            (28.0..=40.0).contains(&usb2.mb_per_s()),
            "{}: {:.1} MB/s",
            usb2.report.stack,
            usb2.mb_per_s()
        );
    }
    let xbit_usb3 = measure("xbit2010/vantec-usb3", workload);
    assert!(
        xbit_usb3.mb_per_s() > 3.0 * xbit_usb2.mb_per_s(),
        "USB 3.0 {:.1} MB/s vs USB 2.0 {:.1} MB/s",
        xbit_usb3.mb_per_s(),
        xbit_usb2.mb_per_s()
    );
}

#[test]
fn windows7_bot_caps_the_ssd_well_below_its_sata_figure() {
    // HardWare.fr 2013's "Intel BOT" scenario against the same SSD on the chipset SATA port, both
    // measured by the review with IOMeter 2 MiB sequential reads. (This finding once ran on X-bit
    // labs' Vantec with an X25-M G2, a drive X-bit used in a couple of tests only; its data sets
    // are the HD103SJ's, a hard disk slower than any of these USB 3.0 paths.)
    let workload = Workload::sequential_read(IOMETER_LARGE_BLOCK_BYTES, 1, 48);
    let usb3 = measure("hwfr2013/intel-win7-bot", workload);
    let sata = measure("hwfr2013/sata-ahci", workload);
    eprintln!(
        "  USB 3.0 BOT/SATA = {:.3}",
        usb3.mb_per_s() / sata.mb_per_s()
    );
    assert!(
        usb3.mb_per_s() <= 0.85 * sata.mb_per_s(),
        "USB 3.0 BOT {:.1} MB/s vs SATA {:.1} MB/s",
        usb3.mb_per_s(),
        sata.mb_per_s()
    );
}

#[test]
fn a_gen1_pcie_slot_caps_the_uas_ssd_below_gen2() {
    let workload = Workload::sequential_read(CRYSTALDISKMARK_SEQ_BLOCK_BYTES, 1, 60);
    let gen1 = measure("lucidport/x25e-uas-gen1", workload);
    let gen2 = measure("lucidport/x25e-uas-gen2", workload);
    eprintln!("  Gen1/Gen2 = {:.3}", gen1.mb_per_s() / gen2.mb_per_s());
    assert!(
        gen1.mb_per_s() < 0.85 * gen2.mb_per_s(),
        "Gen1 {:.1} MB/s vs Gen2 {:.1} MB/s",
        gen1.mb_per_s(),
        gen2.mb_per_s()
    );
    assert!(
        gen1.bottleneck.starts_with("pcie"),
        "Gen1 bottleneck: {} at {:.0}%",
        gen1.bottleneck,
        gen1.bottleneck_utilisation * 100.0
    );
    assert!(!gen2.bottleneck.starts_with("pcie"));
}

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

// ------------------------------------------------ HDD buffer: segments, streams, re-reads

/// The HDD profile of `stack`.
fn hdd_profile(stack: &str) -> HddProfile {
    match ProfileSet::embedded().resolve(stack).unwrap().drive {
        DriveProfile::Hdd(p) => p,
        other => panic!("{stack} has no HDD: {other:?}"),
    }
}

/// Sustained media rate of the outermost zone (MB/s): a track per revolution plus a head
/// switch (track skew hides the rest of the switch).
fn outer_zone_media_mb_s(p: &HddProfile) -> f64 {
    let revolution_s = 60.0 / f64::from(p.rpm);
    f64::from(p.outer_sectors_per_track) * 512.0
        / (revolution_s + p.head_switch_ns as f64 / 1e9)
        / 1e6
}

/// `streams` sequential reads of `block_bytes` at queue depth 1 each, the k-th starting at
/// k × `spacing_bytes` (fio's numjobs with offset_increment; HD Speed's and IOMeter's
/// multi-worker tests), each reading `bytes_per_stream`: their total MB/s.
fn sequential_streams_mb_s(
    stack: &str,
    streams: u32,
    block_bytes: u32,
    bytes_per_stream: u64,
    spacing_bytes: u64,
) -> f64 {
    let mut sim = simulator(stack);
    streams_mb_s_on(
        &mut sim,
        streams,
        block_bytes,
        bytes_per_stream,
        spacing_bytes,
    )
}

/// [`sequential_streams_mb_s`] on a prepared simulator.
fn streams_mb_s_on(
    sim: &mut Simulator,
    streams: u32,
    block_bytes: u32,
    bytes_per_stream: u64,
    spacing_bytes: u64,
) -> f64 {
    sim.setup_slots(streams, block_bytes as usize).unwrap();
    let per_stream = bytes_per_stream / u64::from(block_bytes);
    let submit = |sim: &mut Simulator, slot: u32, i: u64| {
        sim.submit(SimRequest {
            slot,
            op: Op::Read,
            offset_bytes: u64::from(slot) * spacing_bytes + i * u64::from(block_bytes),
            len_bytes: block_bytes,
        })
        .expect("slot is free and sized")
    };
    let start_ns = sim.now_ns();
    let mut issued = vec![1u64; streams as usize];
    for slot in 0..streams {
        submit(sim, slot, 0);
    }
    let mut bytes = 0u64;
    for _ in 0..per_stream * u64::from(streams) {
        sim.run_until_completions(1);
        let c = sim.pop_completion().expect("simulator stalled");
        bytes += u64::from(c.result.expect("read failed"));
        let slot = c.slot as usize;
        if issued[slot] < per_stream {
            submit(sim, c.slot, issued[slot]);
            issued[slot] += 1;
        }
    }
    bytes as f64 / (sim.now_ns() - start_ns) as f64 * 1e3
}

/// A drive's buffer holds `cache_bytes`, so reading again a region twice that size finds none
/// of it there: the second pass comes from the media at the zone's rate, as the first did.
/// (Before the segment became a ring of its size, a stream's segment grew without bound and
/// the second pass ran at twice the media rate.)
#[test]
fn hdd_reread_of_a_region_larger_than_the_cache_runs_at_the_media_rate() {
    let stack = "sata-ahci-hdd";
    let p = hdd_profile(stack);
    let region = 2 * p.cache_bytes.expect("the profile gives its buffer");
    let media = outer_zone_media_mb_s(&p);
    let mut sim = simulator(stack);
    let pass = Workload::sequential_read(64 * KIB, 8, region / u64::from(64 * KIB));
    let first = run_loop(&mut sim, pass, region, SEED).mb_per_s();
    let second = run_loop(&mut sim, pass, region, SEED).mb_per_s();
    eprintln!(
        "{stack}: 64 KiB QD8 over {} MiB: {first:.1} then {second:.1} MB/s, outer zone media \
         {media:.1} MB/s",
        region >> 20
    );
    for rate in [first, second] {
        assert!(
            rate <= media * 1.005,
            "{first:.1} then {second:.1} MB/s from a {media:.1} MB/s zone"
        );
    }
    assert!(second > 0.9 * media, "re-read at {second:.1} MB/s");
}

/// Three sequential readers at QD1 each (HD Speed's three streams, IOMeter's multi-worker
/// runs): the drive keeps a segment per stream and fills it before it turns to another
/// stream (the minimum pre-fetch of a detected stream), so each stream switch — one seek and
/// the rotational wait — buys a command plus a segment of media reading. Expected share of the
/// one-stream rate: data / (data + command overhead + seek to the farthest stream + half a
/// revolution), half a revolution being the mean rotational wait at an unrelated target.
/// (Before, a command for another stream cut every read-ahead short: 64 KiB per seek, under a
/// tenth of one stream's rate.)
#[test]
fn three_sequential_streams_keep_a_large_share_of_one() {
    const STREAMS: u32 = 3;
    const SPACING_BYTES: u64 = 10_000_000_000;
    const STREAM_BYTES: u64 = 64 << 20;
    let block = 64 * KIB;
    for stack in ["sata-ahci-hdd", "lucidport/caviarblack-uas-gen2"] {
        let p = hdd_profile(stack);
        let revolution_ns = 60e9 / f64::from(p.rpm);
        let cylinder_bytes = u64::from(p.heads) * u64::from(p.outer_sectors_per_track) * 512;
        let farthest = (u64::from(STREAMS - 1) * SPACING_BYTES + STREAM_BYTES) / cylinder_bytes;
        assert!(
            farthest < u64::from(p.cylinders / p.zones),
            "{stack}: the streams stay in the outer zone"
        );
        let seek_ns = HddDrive::new(&p).seek_curve().seek_ns(farthest as u32) as f64;
        let sector_ns =
            (revolution_ns + p.head_switch_ns as f64) / f64::from(p.outer_sectors_per_track);
        let data_ns = f64::from(block / 512 + p.read_ahead_sectors) * sector_ns;
        let expected =
            data_ns / (data_ns + p.command_overhead_ns as f64 + seek_ns + revolution_ns / 2.0);
        let one = sequential_streams_mb_s(stack, 1, block, STREAM_BYTES, 0);
        let three = sequential_streams_mb_s(stack, STREAMS, block, STREAM_BYTES, SPACING_BYTES);
        let share = three / one;
        eprintln!(
            "{stack}: 64 KiB QD1 sequential reads: one stream {one:.1} MB/s, three {three:.1} MB/s \
             ({:.0}%; expected from a segment per seek {:.0}%)",
            share * 100.0,
            expected * 100.0
        );
        assert!(
            share >= expected,
            "{stack}: three streams {three:.1} MB/s = {:.0}% of one ({one:.1}), expected {:.0}%",
            share * 100.0,
            expected * 100.0
        );
    }
}

/// Issue 18 item 2: three sequential readers at QD1 each on an SSD that answers one command at
/// a time (the LucidPort X25-E behind the Windows 7 BOT driver, 64 KiB transfers). The
/// controller follows each stream with a detector of its own and the streams share its
/// read-ahead buffer evenly; while a stream's share holds at least one command, every command
/// after a stream's first two is served from the buffer as with one stream, so the three
/// together keep the one-stream rate (the link and bridge serve one command at a time either
/// way); 90 % allows for the streams' first commands, which wait for the NAND. (Before, every
/// read of another stream cleared the one read-ahead: each command waited for its NAND reads.)
#[test]
fn three_sequential_streams_on_an_ssd_keep_their_read_ahead() {
    const STREAMS: u32 = 3;
    const STREAM_BYTES: u64 = 16 << 20;
    const SPACING_BYTES: u64 = 2 * STREAM_BYTES;
    let stack = "lucidport/x25e-bot-gen2";
    let block = WINDOWS7_BOT_MAX_TRANSFER_BYTES;
    let spec = ProfileSet::embedded().resolve(stack).unwrap();
    let DriveProfile::Ssd(p) = &spec.drive else {
        panic!("{stack} has an SSD");
    };
    let share_bytes = p.read_ahead_bytes / STREAMS;
    assert!(
        STREAMS <= p.read_ahead_streams && share_bytes >= block,
        "{stack}: each stream's share ({share_bytes} bytes) holds a {block}-byte command"
    );
    let rate = |streams: u32| {
        let mut sim = simulator(stack);
        // Written first, so reads reach the NAND instead of unmapped zeros.
        fill(
            &mut sim,
            u64::from(STREAMS) * SPACING_BYTES,
            MIB,
            FILL_QUEUE_DEPTH,
        );
        let settled_ns = sim.now_ns() + PAUSE_BETWEEN_RUNS_NS;
        sim.step_until(settled_ns);
        streams_mb_s_on(&mut sim, streams, block, STREAM_BYTES, SPACING_BYTES)
    };
    let one = rate(1);
    let three = rate(STREAMS);
    eprintln!(
        "{stack}: 64 KiB QD1 sequential reads: one stream {one:.1} MB/s, three {three:.1} MB/s \
         ({:.0}%)",
        three / one * 100.0
    );
    assert!(
        three >= 0.9 * one,
        "{stack}: three streams {three:.1} MB/s, one {one:.1} MB/s: the streams lost their \
         read-ahead"
    );
}

/// The uPD720200 card's Gen2 stacks of the LucidPort note, with the card moved to a Gen1 slot
/// (only `pcie.generation` differs, as in the shipped `lucidport/x25e-uas-gen1`) and with
/// `outstanding_read_requests` overridden when given.
fn lucidport_card_in_slot(
    gen2_stack: &str,
    generation: u32,
    outstanding_read_requests: Option<u32>,
) -> (ProfileSet, String) {
    let mut set = ProfileSet::embedded();
    let spec = set.resolve(gen2_stack).unwrap();
    let name = format!("{gen2_stack}-test-gen{generation}");
    let mut text = format!(
        "description = \"{gen2_stack} in a Gen{generation} slot\"\nhost = \"{}\"\n\
         controller = \"{}\"\nusb_link = \"usb3-ss\"\nbridge = \"{}\"\nsata_link = \"{}\"\n\
         drive = \"{}\"\n\n[overrides.controller.pcie]\ngeneration = {generation}\n",
        spec.host_name,
        spec.controller_name,
        spec.bridge_name.as_deref().unwrap(),
        spec.sata_link_name,
        spec.drive_name,
    );
    if let Some(tags) = outstanding_read_requests {
        text += &format!("outstanding_read_requests = {tags}\n");
    }
    set.insert_text("stacks", &name, "findings.rs", &text)
        .unwrap();
    (set, name)
}

/// CrystalDiskMark's sequential pair (1 MiB, QD1) on one prepared stack: (read, write).
fn crystaldiskmark_seq(set: &ProfileSet, stack: &str) -> (Measured, Measured) {
    let mut bench = Bench::new_in(set, stack);
    let read = bench.measure(Workload::sequential_read(
        CRYSTALDISKMARK_SEQ_BLOCK_BYTES,
        1,
        60,
    ));
    let write = bench.measure(Workload {
        op: Op::Write,
        ..Workload::sequential_read(CRYSTALDISKMARK_SEQ_BLOCK_BYTES, 1, 60)
    });
    (read, write)
}

/// Posted-write capacity of a PCIe x1 link of `generation` with the card's MPS and TLP
/// overhead: the most any transfer over it could carry (the "bandwidth cap").
fn posted_cap_mb_s(stack: &str, generation: u32) -> f64 {
    let p = ProfileSet::embedded()
        .resolve(stack)
        .unwrap()
        .controller
        .pcie;
    let efficiency = storlab_sim::pcie::payload_efficiency(
        p.max_payload_bytes.into(),
        p.tlp_overhead_bytes.into(),
    );
    storlab_sim::pcie::lane_bytes_per_second(generation) * f64::from(p.lanes) * efficiency
        / (1.0 + p.dllp_overhead_fraction)
        / 1e6
}

/// No datasheet gives the uPD720200's read tags, so the shipped profile lets the link's rate
/// bind (32 tags); these tests show what the mechanism does for a controller that keeps one
/// read in flight, the least a requester has.
const ONE_READ_IN_FLIGHT: u32 = 1;

#[test]
fn a_gen1_slot_cuts_hdd_writes_below_its_rate_and_leaves_hdd_reads() {
    // LucidPort's note: moving the uPD720200 card from a Gen2 to a Gen1 slot cut writes far
    // more than reads, HDD writes included, though they need well under Gen1's rate. Writes
    // are fetched by read requests whose round trip a slower link stretches; reads are
    // posted writes that only the rate bounds, and the HDD's reads stay under it.
    let stack = "lucidport/caviarblack-uas-gen2";
    let (set2, stack2) = lucidport_card_in_slot(stack, 2, Some(ONE_READ_IN_FLIGHT));
    let (set1, stack1) = lucidport_card_in_slot(stack, 1, Some(ONE_READ_IN_FLIGHT));
    let (read2, write2) = crystaldiskmark_seq(&set2, &stack2);
    let (read1, write1) = crystaldiskmark_seq(&set1, &stack1);
    let read_kept = read1.mb_per_s() / read2.mb_per_s();
    let write_kept = write1.mb_per_s() / write2.mb_per_s();
    let cap = posted_cap_mb_s(stack, 1);
    eprintln!(
        "  Gen1/Gen2 reads {read_kept:.3}, writes {write_kept:.3}; Gen1 x1 carries {cap:.1} MB/s"
    );
    assert!(
        write_kept < read_kept - 0.2,
        "writes keep {write_kept:.3} of Gen2, reads {read_kept:.3}"
    );
    assert!(read_kept > 0.97, "HDD reads lost {read_kept:.3}");
    assert!(
        write1.mb_per_s() < 0.75 * cap,
        "HDD writes {:.1} MB/s are not well below Gen1's {cap:.1} MB/s",
        write1.mb_per_s()
    );
}

#[test]
fn a_gen1_slot_makes_the_ssd_writes_wait_on_read_round_trips() {
    // The SSD both ways at Gen1: reads fill the link with posted writes, writes are held by
    // the read requests' round trips before the link is full.
    let (set1, stack1) =
        lucidport_card_in_slot("lucidport/x25e-uas-gen2", 1, Some(ONE_READ_IN_FLIGHT));
    let (read1, write1) = crystaldiskmark_seq(&set1, &stack1);
    assert_eq!(read1.bottleneck, "pcie_upstream");
    assert_eq!(write1.bottleneck, "pcie_downstream");
    let p = ProfileSet::embedded()
        .resolve("lucidport/x25e-uas-gen2")
        .unwrap()
        .controller
        .pcie;
    assert!(
        write1.mb_per_s() < 0.85 * completion_cap_mb_s(&p, 1),
        "{:.1} MB/s",
        write1.mb_per_s()
    );
}

/// Capacity of a Gen-`generation` x1 link for read completions split at the root complex's
/// completion boundary.
fn completion_cap_mb_s(p: &storlab_sim::profile::PcieProfile, generation: u32) -> f64 {
    storlab_sim::pcie::lane_bytes_per_second(generation)
        * f64::from(p.lanes)
        * storlab_sim::pcie::payload_efficiency(
            p.read_completion_boundary_bytes.into(),
            storlab_sim::pcie::COMPLETION_OVERHEAD_BYTES,
        )
        / (1.0 + p.dllp_overhead_fraction)
        / 1e6
}

#[test]
fn writes_over_a_gen1_slot_scale_with_read_tags_until_the_link_is_full() {
    let stack = "lucidport/x25e-uas-gen2";
    let write = |tags| {
        let (set, name) = lucidport_card_in_slot(stack, 1, Some(tags));
        let mut bench = Bench::new_in(&set, &name);
        bench.measure(Workload {
            op: Op::Write,
            ..Workload::sequential_read(CRYSTALDISKMARK_SEQ_BLOCK_BYTES, 1, 40)
        })
    };
    let rates: Vec<(u32, Measured)> = [1, 2, 4, 8, 16].map(|tags| (tags, write(tags))).into();
    let p = ProfileSet::embedded()
        .resolve(stack)
        .unwrap()
        .controller
        .pcie;
    let completion_cap = completion_cap_mb_s(&p, 1);
    for pair in rates.windows(2) {
        let ((fewer, a), (more, b)) = (&pair[0], &pair[1]);
        eprintln!(
            "  {fewer} tags {:.1} MB/s ({}), {more} tags {:.1} MB/s ({}); link {completion_cap:.1}",
            a.mb_per_s(),
            a.bottleneck,
            b.mb_per_s(),
            b.bottleneck
        );
        assert!(
            b.mb_per_s() >= a.mb_per_s(),
            "{more} tags slower than {fewer}"
        );
    }
    let one = &rates[0].1;
    let most = &rates[rates.len() - 1].1;
    assert!(most.mb_per_s() > 1.15 * one.mb_per_s());
    assert_eq!(one.bottleneck, "pcie_downstream");
    assert!(most.mb_per_s() <= completion_cap);
    assert!(most.mb_per_s() > 0.85 * completion_cap);
    // Past the round trip more tags buy nothing: the link is full.
    assert!(most.mb_per_s() < 1.01 * rates[rates.len() - 2].1.mb_per_s());
}

/// Windows 8 (HardWare.fr 2013 p. 3): its UAS driver loads only on xHCI 1.0 controllers (Intel,
/// AMD/Renesas); on the ASMedia ASM1042 and Etron EJ168 ports (xHCI 0.96) it fell back to BOT.
/// The stacks of those ports ask for Windows 8's UAS driver and resolve to its BOT driver.
#[test]
fn windows8_loads_its_uas_driver_only_on_xhci_1_0_controllers() {
    let profiles = ProfileSet::embedded();
    for stack in ["hwfr2013/asm1042-win8-bot", "hwfr2013/etron-win8-bot"] {
        let sim = simulator_in(&profiles, stack);
        assert_eq!(sim.transport(), storlab_sim::Transport::Bot, "{stack}");
        assert_eq!(sim.stack().host_name, "win8-msft-bot", "{stack}");
        let why = sim.fallback().unwrap_or_default();
        assert!(
            why.contains("xHCI 1.0") && why.contains("0.96"),
            "{stack}: {why}"
        );
        assert!(sim.report().fallback.is_some());
    }
    for stack in ["hwfr2013/intel-win8-uas", "hwfr2013/amd-win8-uas"] {
        let sim = simulator_in(&profiles, stack);
        assert_eq!(
            sim.transport(),
            storlab_sim::Transport::Uas { streams: true },
            "{stack}"
        );
        assert_eq!(sim.fallback(), None, "{stack}");
    }
}

/// HardWare.fr 2013: at 4 KiB every Windows 8 native path (its BOT driver on the xHCI 0.96
/// ports, its UAS driver on the xHCI 1.0 ones) was slower than Windows 7's BOT driver on the
/// same port. The model's reason is the in-box xHCI stack's per-I/O CPU cost (win8-msft-bot,
/// win8-msft-uas) against Windows 7's vendor stacks; the other Windows 8 comparisons of item 4
/// are not reproduced (docs/simulator.md, "Windows 8").
#[test]
fn every_windows8_native_path_is_slower_than_windows7_bot_at_4k() {
    let small = Workload::sequential_read(IOMETER_SMALL_BLOCK_BYTES, 1, 4000);
    for (win8, win7) in [
        ("hwfr2013/asm1042-win8-bot", "hwfr2013/asm1042-win7-bot"),
        ("hwfr2013/etron-win8-bot", "hwfr2013/etron-win7-bot"),
        ("hwfr2013/intel-win8-uas", "hwfr2013/intel-win7-bot"),
        ("hwfr2013/amd-win8-uas", "hwfr2013/amd-win7-bot"),
    ] {
        let a = measure(win8, small);
        let b = measure(win7, small);
        assert!(
            a.mb_per_s() < b.mb_per_s(),
            "{win8} {:.1} MB/s vs {win7} {:.1} MB/s",
            a.mb_per_s(),
            b.mb_per_s()
        );
    }
}
