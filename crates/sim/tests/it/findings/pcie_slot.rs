//! A USB 3 card in a Gen1 PCIe slot: which writes and reads it caps, and how read tags lift
//! the cap.

use super::*;

/// The uPD720200 card's Gen2 stacks of the LucidPort note, with the card moved to a Gen1 slot
/// (only `pcie.generation` differs: the longer round trip of the shipped `lucidport/*-gen1`
/// stacks' PCH port is left out, so the slot's rate alone shows) and with
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

/// One read in flight, the least a requester has: the shipped uPD720200's calibrated value (no
/// datasheet gives its tags; ADR 0051), given explicitly so these tests keep showing the
/// mechanism whatever the profile says.
const ONE_READ_IN_FLIGHT: u32 = 1;

/// CrystalDiskMark 2.2's random 512K test (the note's random table): QD1.
const CRYSTALDISKMARK_512K_BYTES: u32 = 512 * KIB;

/// Random 512 KiB reads and writes at QD1 on a shipped stack: (read, write).
fn crystaldiskmark_512k(stack: &str) -> (Measured, Measured) {
    let mut bench = Bench::new(stack);
    let read = bench.measure(Workload::random_read(CRYSTALDISKMARK_512K_BYTES, 1, 60));
    let write = bench.measure(Workload {
        op: Op::Write,
        ..Workload::random_read(CRYSTALDISKMARK_512K_BYTES, 1, 60)
    });
    (read, write)
}

#[test]
fn the_shipped_gen1_slot_cuts_writes_over_both_protocols_and_bot_writes_beat_bot_reads_at_gen2() {
    // The LucidPort note's random 512K table (X25-E, both slots): moving the card to the Gen1
    // slot (a PCH root port) cut UAS writes to 0.57 of Gen2 and UAS reads only to 0.66; at
    // Gen1 BOT and UAS writes came out alike (101.1 and 107.1 MB/s), both held by the card's
    // one read in flight; at Gen2 BOT writes beat BOT reads (167.5 against 142.9), since they
    // stream to the drive as UAS writes do.
    let (uas_read2, uas_write2) = crystaldiskmark_512k("lucidport/x25e-uas-gen2");
    let (uas_read1, uas_write1) = crystaldiskmark_512k("lucidport/x25e-uas-gen1");
    let (bot_read2, bot_write2) = crystaldiskmark_512k("lucidport/x25e-bot-gen2");
    let (_, bot_write1) = crystaldiskmark_512k("lucidport/x25e-bot-gen1");
    let read_kept = uas_read1.mb_per_s() / uas_read2.mb_per_s();
    let write_kept = uas_write1.mb_per_s() / uas_write2.mb_per_s();
    eprintln!(
        "  UAS Gen1/Gen2 reads {read_kept:.3}, writes {write_kept:.3}; Gen1 writes BOT {:.1}, \
         UAS {:.1} MB/s; Gen2 BOT reads {:.1}, writes {:.1} MB/s",
        bot_write1.mb_per_s(),
        uas_write1.mb_per_s(),
        bot_read2.mb_per_s(),
        bot_write2.mb_per_s()
    );
    assert!(write_kept < 0.75, "UAS writes keep {write_kept:.3} of Gen2");
    assert!(
        write_kept < read_kept - 0.05,
        "writes keep {write_kept:.3}, reads {read_kept:.3}"
    );
    assert_eq!(uas_write1.bottleneck, "pcie_downstream");
    let bot_over_uas = bot_write1.mb_per_s() / uas_write1.mb_per_s();
    assert!(
        (0.8..=1.0).contains(&bot_over_uas),
        "Gen1 BOT writes {bot_over_uas:.3} of UAS writes"
    );
    assert!(
        bot_write2.mb_per_s() > bot_read2.mb_per_s(),
        "Gen2 BOT writes {:.1} not above reads {:.1}",
        bot_write2.mb_per_s(),
        bot_read2.mb_per_s()
    );
}

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
