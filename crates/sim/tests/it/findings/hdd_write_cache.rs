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
