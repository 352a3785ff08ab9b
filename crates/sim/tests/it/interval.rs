//! A job's report is its own interval of the session (`SimReport::since`): after a fill, a read
//! job's report has the read's elapsed time, commands, bytes and bottleneck, not the fill's; and
//! its diagnosis calls it latency-bound only when no layer is near saturation.

use storlab_sim::report::SimReport;
use storlab_sim::workload::ClosedLoop;
use storlab_sim::{Op, ProfileSet, Simulator};

const SEED: u64 = 7;

fn phase(sim: &mut Simulator, op: Op, block_bytes: u32, queue_depth: u32, random: bool, ios: u64) {
    sim.setup_slots(queue_depth, block_bytes as usize).unwrap();
    ClosedLoop {
        op,
        block_bytes,
        queue_depth,
        random,
        region_bytes: 256 << 20,
        ios,
        seed: SEED,
    }
    .run(sim);
}

#[test]
fn a_reads_report_after_a_fill_is_the_reads_alone() {
    let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), "usb3-uas-ssd", SEED).unwrap();
    phase(&mut sim, Op::Write, 128 << 10, 1, false, 2048);
    let before = sim.report();
    phase(&mut sim, Op::Read, 4096, 32, true, 20_000);
    let after = sim.report();
    let job = after.since(Some(&before));

    assert_eq!(job.elapsed_ns, after.elapsed_ns - before.elapsed_ns);
    assert_eq!(job.bytes_written, 0, "the fill's writes are not the job's");
    assert_eq!(job.bytes_read, 20_000 * 4096);
    assert_eq!(job.commands, after.commands - before.commands);
    let sizes: Vec<(u32, u64)> = job
        .drive_io_sizes
        .iter()
        .map(|s| (s.size_bytes, s.count))
        .collect();
    assert_eq!(sizes, [(4096, 20_000)], "only the job's transfers");
    for layer in &job.layers {
        let whole = after.layer(&layer.name).unwrap();
        let then = before.layer(&layer.name).unwrap();
        assert_eq!(
            layer.busy_ns,
            whole.busy_ns - then.busy_ns,
            "{}",
            layer.name
        );
        let utilisation = layer.busy_ns as f64 / job.elapsed_ns as f64;
        assert!(
            (layer.utilisation - utilisation).abs() < 1e-12,
            "{}",
            layer.name
        );
    }
    let busiest = job.layers.iter().map(|l| l.utilisation).fold(0.0, f64::max);
    assert_eq!(job.bottleneck_utilisation, busiest);
    let host_pages = |r: &SimReport| match &r.drive {
        storlab_sim::drive::DriveModelReport::Ssd(ssd) => ssd.host_pages_written,
        other => panic!("an SSD expected, got {other:?}"),
    };
    assert_eq!(
        host_pages(&job),
        0,
        "the drive's counters are the job's too"
    );
    assert!(host_pages(&after) > 0);
    // Without a report from before, the interval is the whole session.
    assert_eq!(after.since(None), after);
}

/// The report of `ios` reads of `block_bytes` at `queue_depth` on a fresh `stack`.
fn reads(stack: &str, block_bytes: u32, queue_depth: u32, random: bool, ios: u64) -> SimReport {
    let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), stack, SEED).unwrap();
    phase(&mut sim, Op::Read, block_bytes, queue_depth, random, ios);
    sim.report()
}

fn latency_bound(report: &SimReport) -> bool {
    report
        .warnings_since(None)
        .iter()
        .any(|w| w.kind() == "latency-bound")
}

/// "Latency-bound" only when no layer is near saturation: an HDD streaming 128 KiB reads at
/// QD8 is bound by its media, which the read-ahead keeps busy though no command books the head
/// (its drive layer is near saturation); 4 KiB random reads at QD1 on an SSD behind USB wait on
/// round trips, every layer mostly idle.
#[test]
fn latency_bound_only_when_no_layer_is_near_saturation() {
    let stream = reads("sata-ahci-hdd", 128 << 10, 8, false, 2000);
    assert_eq!(stream.bottleneck, "drive", "{:?}", stream.layers);
    assert!(
        stream.bottleneck_utilisation >= storlab_sim::report::SATURATED_UTILISATION,
        "the media-bound stream's drive at {:.2}",
        stream.bottleneck_utilisation
    );
    assert!(!latency_bound(&stream), "{:?}", stream.warnings);
    assert!(stream.bottleneck_utilisation <= 1.0 + 1e-9);

    let qd1 = reads("usb3-uas-ssd", 4096, 1, true, 5000);
    assert!(
        qd1.bottleneck_utilisation < storlab_sim::report::SATURATED_UTILISATION,
        "{:?}",
        qd1.layers
    );
    assert!(latency_bound(&qd1), "{:?}", qd1.warnings);
}
