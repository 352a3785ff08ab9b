//! The USB findings: UAS against BOT, queue depth on third-party UAS ports, the merging turbo
//! driver, the Windows 7 64 KiB limit, USB 2 and Windows 7 BOT caps, and Windows 8's UAS
//! driver on xHCI 1.0 only.

use super::*;

/// HardWare.fr 2013 measured with IOMeter at 2 MiB and 4 KiB, queue depth 1 to 8 (DOMAIN.md §5).
const IOMETER_LARGE_BLOCK_BYTES: u32 = 2 * MIB;
const IOMETER_SMALL_BLOCK_BYTES: u32 = 4 * KIB;
const IOMETER_MAX_QUEUE_DEPTH: u32 = 8;
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

/// Windows 8 (HardWare.fr 2013 p. 3): its UAS driver loaded on the Intel and AMD/Renesas ports
/// and not on the ASMedia ASM1042 (xHCI 0.96) and Etron EJ168 (announced xHCI 1.0) ones, "pas de
/// lien logique" with the xHCI revision. The stacks of those ports ask for Windows 8's UAS
/// driver and resolve to its BOT driver.
#[test]
fn windows8_loads_its_uas_driver_only_on_the_controllers_the_review_saw_it_load_on() {
    let profiles = ProfileSet::embedded();
    for stack in ["hwfr2013/asm1042-win8-bot", "hwfr2013/etron-win8-bot"] {
        let sim = simulator_in(&profiles, stack);
        assert_eq!(sim.transport(), storlab_sim::Transport::Bot, "{stack}");
        assert_eq!(sim.stack().host_name, "win8-msft-bot", "{stack}");
        let why = sim.fallback().unwrap_or_default();
        assert!(
            why.contains("loads its UAS driver only on intel-7series-xhci, amd-renesas-xhci"),
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
