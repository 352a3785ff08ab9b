//! Reads of LBAs never written (issue 37 item 2): the SSD controllers of the era answer them
//! from their map (zeroes) without a flash read, so a fresh drive reads sequentially at its
//! link's rate, not its flash's.

use super::*;

/// A page-mapped SSD (the generic 2010 MLC drive) and a hybrid-mapped one (the Crucial M225's
/// Indilinx Barefoot): both FTLs look the page up and find nothing to read.
const STACKS: [&str; 2] = ["sata-ahci-ssd", "hwfr2010/m225-sata-ahci"];
/// CrystalDiskMark's sequential test: 1 MiB reads one at a time, over the test region.
const READS: u64 = (TEST_REGION_BYTES / MIB as u64) / 2;

/// The `drive` layer's busy time (its dies and channels: the flash) in a report; its operations
/// count the commands, which every read is.
fn flash_busy_ns(report: &SimReport) -> u64 {
    report.layer("drive").expect("a drive layer").busy_ns
}

#[test]
fn a_fresh_ssd_reads_unwritten_lbas_at_the_link_rate_without_a_flash_read() {
    for stack in STACKS {
        let workload = Workload::sequential_read(CRYSTALDISKMARK_SEQ_BLOCK_BYTES, 1, READS);
        let mut fresh = simulator(stack);
        let before = flash_busy_ns(&fresh.report());
        let unwritten = run_loop(&mut fresh, workload, TEST_REGION_BYTES, SEED);
        let report = fresh.report();
        let after = flash_busy_ns(&report);
        let written = Bench::new(stack).measure(workload);
        eprintln!(
            "{stack}: 1 MiB QD1 reads, never written {:.1} MB/s (flash busy {} ns), written {:.1} \
             MB/s (bottleneck {})",
            unwritten.mb_per_s(),
            after - before,
            written.mb_per_s(),
            written.bottleneck,
        );
        assert_eq!(
            after, before,
            "{stack}: reads of never-written LBAs used the flash; reproduce: storlab run --target \
             sim:{stack} --state fresh --rw=read --bs=1m --size=128m"
        );
        assert_ne!(
            report.bottleneck, "drive",
            "{stack}: the flash bound reads it never did"
        );
        assert!(
            unwritten.mb_per_s() >= written.mb_per_s(),
            "{stack}: never written {:.1} MB/s below written {:.1} MB/s",
            unwritten.mb_per_s(),
            written.mb_per_s()
        );
    }
}

#[test]
fn unwritten_and_trimmed_lbas_read_back_as_zeroes() {
    for stack in STACKS {
        let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), stack, SEED).unwrap();
        sim.setup_slots(1, MIB as usize).unwrap();
        let io = |sim: &mut Simulator, op: Op, offset_bytes: u64| {
            sim.submit(SimRequest {
                slot: 0,
                op,
                offset_bytes,
                len_bytes: MIB,
            })
            .unwrap();
            sim.run_until_completions(1);
            assert_eq!(
                sim.pop_completion().unwrap().result,
                Ok(MIB),
                "{stack} {op:?}"
            );
        };
        sim.slot_buffer_mut(0).fill(0xA5);
        io(&mut sim, Op::Read, 4 * u64::from(MIB));
        assert!(
            sim.slot_buffer_mut(0).iter().all(|&b| b == 0),
            "{stack}: a never-written MiB does not read as zeroes"
        );
        sim.slot_buffer_mut(0).fill(0xA5);
        io(&mut sim, Op::Write, 0);
        io(&mut sim, Op::Trim, 0);
        io(&mut sim, Op::Read, 0);
        assert!(
            sim.slot_buffer_mut(0).iter().all(|&b| b == 0),
            "{stack}: a trimmed MiB does not read as zeroes"
        );
    }
}
