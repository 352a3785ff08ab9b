//! The HDD write-back cache findings: random writes acknowledged from the buffer and written
//! back in the drive's own order beat random reads at queue depth 1.

use super::*;

/// CrystalDiskMark 2.2's random 512 KiB test (the LucidPort note's section 5): one command at a
/// time over its 1000 MB test file.
const CDM_RANDOM_BLOCK_BYTES: u32 = 512 * KIB;
const CDM_TEST_FILE_BYTES: u64 = 1000 << 20;
/// Commands measured per direction: 100 MiB, three to six times the write cache of every
/// shipped HDD, so the write rate is the write-back's, not the cache's first absorption.
const MEASURED_IOS: u64 = 200;

/// Every shipped stack whose drive is a hard disk.
fn hdd_stacks(set: &ProfileSet) -> Vec<String> {
    set.stacks()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| matches!(set.resolve(name).unwrap().drive, DriveProfile::Hdd(_)))
        .collect()
}

/// Random 512 KiB at QD1 over the 1000 MB file: (read MB/s, write MB/s). The writes are
/// measured after as many again have filled the write cache, so the figure is the steady
/// rate at which the drive writes back, not the burst its buffer absorbs.
fn cdm_random_512k(set: &ProfileSet, stack: &str) -> (f64, f64) {
    let mut sim = simulator_in(set, stack);
    let run = |sim: &mut Simulator, op: Op, seed: u64| {
        let workload = Workload {
            op,
            ..Workload::random_read(CDM_RANDOM_BLOCK_BYTES, 1, MEASURED_IOS)
        };
        run_loop(sim, workload, CDM_TEST_FILE_BYTES, seed).mb_per_s()
    };
    let read = run(&mut sim, Op::Read, SEED);
    run(&mut sim, Op::Write, SEED + 1);
    // The reads' offsets again: the two directions pay the same seeks.
    let write = run(&mut sim, Op::Write, SEED);
    (read, write)
}

/// LucidPort's note, section 5 (CrystalDiskMark 2.2, random 512 KiB at QD1 on its 1000 MB
/// test file): on nearly every hard disk, in both PCIe slots, over BOT and UAS alike, the writes
/// beat the reads. A drive with its write cache on acknowledges a write once it is in the
/// buffer and writes its cached segments back in the order it reaches them soonest, so over a
/// 1000 MB span a write costs its transfer plus a short positioning, where a read waits half a
/// revolution on average. Checked on every shipped HDD stack; a host that sends a 512 KiB
/// write as 64 KiB pieces (Windows 7's BOT driver) or 128 KiB pieces (IDE) must keep the gain,
/// since the drive appends each piece to its predecessor's cache segment.
#[test]
fn random_512k_writes_beat_reads_at_qd1_on_every_hdd_stack() {
    let set = ProfileSet::embedded();
    let stacks = hdd_stacks(&set);
    assert!(stacks.len() >= 10, "HDD stacks found: {stacks:?}");
    let mut failures = Vec::new();
    for stack in &stacks {
        let (read, write) = cdm_random_512k(&set, stack);
        eprintln!(
            "{stack}: random 512 KiB QD1 over 1000 MB: read {read:.1} MB/s, write {write:.1} MB/s \
             ({:.2}x)",
            write / read
        );
        if write <= read {
            failures.push(format!("{stack}: read {read:.1}, write {write:.1} MB/s"));
        }
    }
    assert!(
        failures.is_empty(),
        "writes not above reads (reproduce: storlab run --target sim:STACK --rw=randwrite \
         --bs=512k --iodepth=1 --size=1000m --norandommap=1 --runtime=2s --time_based=1, and \
         --rw=randread):\n{}",
        failures.join("\n")
    );
}

/// The gain is the write cache's: with it turned off (`write_cache = false`, what SET FEATURES
/// 82h or `hdparm -W0` does to a real drive) a write completes only once it is on the media,
/// so the same test writes no faster than it reads.
#[test]
fn without_the_write_cache_random_512k_writes_do_not_beat_reads() {
    for stack in ["lucidport/caviarblack-uas-gen2", "xbit2010/sata300"] {
        let mut set = ProfileSet::embedded();
        let spec = set.resolve(stack).unwrap();
        let mut text = format!(
            "description = \"{stack} with the drive's write cache off\"\nhost = \"{}\"\n\
             controller = \"{}\"\nsata_link = \"{}\"\ndrive = \"{}\"\n",
            spec.host_name, spec.controller_name, spec.sata_link_name, spec.drive_name,
        );
        if let (Some(usb_link), Some(bridge)) = (&spec.usb_link_name, &spec.bridge_name) {
            text += &format!("usb_link = \"{usb_link}\"\nbridge = \"{bridge}\"\n");
        }
        text += "\n[overrides.drive]\nwrite_cache = false\n";
        let name = format!("{stack}-write-cache-off");
        set.insert_text("stacks", &name, "findings.rs", &text)
            .unwrap();
        let (read, write) = cdm_random_512k(&set, &name);
        eprintln!("{name}: read {read:.1} MB/s, write {write:.1} MB/s");
        assert!(
            write <= read * 1.02,
            "{name}: write {write:.1} MB/s above read {read:.1} without a write cache"
        );
    }
}

/// CrystalDiskMark 3.0's queued test (the LucidPort note's "4K QD32" rows): 4 KiB at 32
/// outstanding over its 1000 MB test file.
const CDM_QUEUED_BLOCK_BYTES: u32 = 4 * KIB;
const CDM_QUEUE_DEPTH: u32 = 32;
/// Writes run before the measured ones: four times the deepest shipped write-back (256
/// cached writes), so the measured rate is the drive's write-back, not its buffer filling.
const QUEUED_WRITES_WARM_UP: u64 = 1024;
const QUEUED_WRITES_MEASURED: u64 = 1500;
const QUEUED_READS_MEASURED: u64 = 400;

/// 4 KiB at QD32 over the 1000 MB file on `stack` of `set`: I/Os per second. Writes are
/// measured after a warm-up that fills the write cache.
fn cdm_4k_qd32_iops(set: &ProfileSet, stack: &str, op: Op) -> f64 {
    let mut sim = simulator_in(set, stack);
    let workload = |ios| Workload {
        op,
        ..Workload::random_read(CDM_QUEUED_BLOCK_BYTES, CDM_QUEUE_DEPTH, ios)
    };
    if op == Op::Write {
        run_loop(
            &mut sim,
            workload(QUEUED_WRITES_WARM_UP),
            CDM_TEST_FILE_BYTES,
            SEED,
        );
        run_loop(
            &mut sim,
            workload(QUEUED_WRITES_MEASURED),
            CDM_TEST_FILE_BYTES,
            SEED + 1,
        )
        .iops()
    } else {
        run_loop(
            &mut sim,
            workload(QUEUED_READS_MEASURED),
            CDM_TEST_FILE_BYTES,
            SEED,
        )
        .iops()
    }
}

/// LucidPort's note, CrystalDiskMark 4K QD32 on the WD Caviar Black 2 TB: the reads depend on
/// the host's queue (0.815 MB/s over BOT, one command at a time, 1.400 over UAS with NCQ:
/// 1.72x), the writes do not (2.954 IDE, 2.948 BOT, 3.082 UAS: within 5%). A drive with its
/// write cache on takes a write into its buffer and chooses its own write-back order among the
/// writes it holds, so the host's queue adds nothing to what the drive sorts; a read needs the
/// head now, and only a queue of reads gives the drive a choice.
#[test]
fn queued_4k_writes_run_at_the_drive_caches_rate_whatever_the_hosts_queue() {
    let set = ProfileSet::embedded();
    let stacks = [
        "lucidport/caviarblack-sata-ide",
        "lucidport/caviarblack-bot-gen2",
        "lucidport/caviarblack-uas-gen2",
    ];
    let writes: Vec<f64> = stacks
        .iter()
        .map(|s| cdm_4k_qd32_iops(&set, s, Op::Write))
        .collect();
    let read_bot = cdm_4k_qd32_iops(&set, stacks[1], Op::Read);
    let read_uas = cdm_4k_qd32_iops(&set, stacks[2], Op::Read);
    for (stack, w) in stacks.iter().zip(&writes) {
        eprintln!("{stack}: 4 KiB QD32 writes {w:.0}/s");
    }
    eprintln!("reads: BOT {read_bot:.0}/s, UAS {read_uas:.0}/s");
    let (low, high) = writes
        .iter()
        .fold((f64::MAX, 0.0_f64), |(l, h), &w| (l.min(w), h.max(w)));
    assert!(
        high <= low * 1.10,
        "writes differ by host: {writes:?} writes/s over IDE, BOT, UAS (published within 5%; \
         reproduce: storlab run --target sim:STACK --rw=randwrite --bs=4k --iodepth=32 \
         --size=1000m --norandommap=1 --runtime=5s --time_based=1)"
    );
    assert!(
        read_uas >= read_bot * 1.4,
        "reads: UAS {read_uas:.0}/s not 1.4x BOT {read_bot:.0}/s (published 1.72x)"
    );
}

/// The write-back depth is the drive's firmware: LucidPort's note has the Samsung HD103SJ
/// writing CrystalDiskMark's 4K QD32 at 3.41 MB/s (830 writes/s) and the Seagate Barracuda
/// 7200.12 at 1.806 (440), with the same 500 GB platters, spindle speed and 32 MB buffer. The
/// HD103SJ's profile holds and sorts 256 cached writes (calibrated on that row), the
/// Barracuda's the shared 8 of 64: a write-back that chooses among more cached writes reaches
/// the next one sooner. Checked as a relation: the HD103SJ at least 1.5x the Barracuda, and
/// the same HD103SJ with the shared depth no faster than 1.2x the Barracuda (the depth, not
/// the geometry, makes the difference).
#[test]
fn a_drive_sorting_more_cached_writes_writes_back_random_writes_faster() {
    let mut set = ProfileSet::embedded();
    let stack = "lucidport/hd103sj-sata-ide";
    let spec = set.resolve(stack).unwrap();
    let text = format!(
        "description = \"{stack} with the shared write-back depth\"\nhost = \"{}\"\n\
         controller = \"{}\"\nsata_link = \"{}\"\ndrive = \"{}\"\n\n[overrides.drive]\n\
         write_cache_entries = 64\nwrite_back_candidates = 8\n",
        spec.host_name, spec.controller_name, spec.sata_link_name, spec.drive_name,
    );
    let shared = format!("{stack}-shared-write-back");
    set.insert_text("stacks", &shared, "findings.rs", &text)
        .unwrap();
    let hd103sj = cdm_4k_qd32_iops(&set, stack, Op::Write);
    let hd103sj_shared = cdm_4k_qd32_iops(&set, &shared, Op::Write);
    let barracuda = cdm_4k_qd32_iops(&set, "lucidport/barracuda-sata-ide", Op::Write);
    eprintln!(
        "4 KiB QD32 writes/s: HD103SJ {hd103sj:.0}, with the shared depth {hd103sj_shared:.0}, \
         Barracuda {barracuda:.0} (published 830 / 440)"
    );
    assert!(
        hd103sj >= barracuda * 1.5,
        "HD103SJ {hd103sj:.0}/s not 1.5x the Barracuda's {barracuda:.0}/s (published 1.89x)"
    );
    assert!(
        hd103sj_shared <= barracuda * 1.2,
        "with the Barracuda's write-back depth the HD103SJ still writes {hd103sj_shared:.0}/s \
         against {barracuda:.0}/s: something other than the depth makes the difference"
    );
}

/// Interleaved sequential write streams on a cached drive (X-bit labs' multi-worker writes:
/// IOMeter, 64 KiB, workers on disjoint ranges of the HD103SJ on SATA): the firmware keeps one
/// cache segment per write stream and writes a segment back in one pass, so interleaving costs
/// a seek per segment, not per piece. Until session 19 a piece joined a segment only when it was
/// the very next write the drive took, so with several workers every piece was a write-back of
/// its own: four workers at four per worker wrote 128.0 MB/s against one stream's 151.1 (85%);
/// now each piece joins the segment it continues (139.1, 92%). Checked as relations: 2-4 streams at 1, 4 and
/// 8 per worker keep at least 90% of one stream's rate, and more outstanding per worker never
/// costs more than 10% (ADR 0055).
#[test]
fn interleaved_write_streams_keep_the_cached_drives_rate() {
    use super::hdd_buffer::{
        assert_streams_keep_their_rate_with_more_outstanding, interleaved_streams, XBIT_SATA,
    };
    // 390 MB: the write cache's first absorption (16 MiB on the HD103SJ) is 4% of it.
    const COMMANDS: u64 = 6000;
    let (one_stream, _) = interleaved_streams(Op::Write, 1, 1, COMMANDS);
    let mut failures = Vec::new();
    for workers in [2, 3, 4] {
        for per_worker in [1, 4, 8] {
            let (total, _) = interleaved_streams(Op::Write, workers, per_worker, COMMANDS);
            let line = format!(
                "{XBIT_SATA}: {workers} write streams at {per_worker} per worker {total:.1} MB/s, \
                 one stream {one_stream:.1}"
            );
            eprintln!("{line}");
            if total < 0.9 * one_stream {
                failures.push(line);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_streams_keep_their_rate_with_more_outstanding(Op::Write, COMMANDS);
}
