//! The BOT enclosure's own cap: a bridge that stages each USB burst in its buffer caps an SSD's
//! 64 KiB BOT reads below what cut-through forwarding gives, and leaves a disk slower than the
//! staging as it was (ADR 0056).

use super::*;

/// X-bit labs 2010's Vantec NextStar 3 (ASMedia ASM1051, BOT only) on the uPD720200 card under
/// Windows XP's BOT driver, with `drive` inside and, when given, the bridge's staging piece
/// (`forward_chunk_bytes`) overridden. X-bit put an Intel X25-M G2 in it "in a couple of tests".
fn vantec_with(drive: &str, forward_chunk_bytes: Option<u32>) -> (ProfileSet, String) {
    let base = "xbit2010/vantec-usb3";
    let mut set = ProfileSet::embedded();
    let spec = set.resolve(base).unwrap();
    let piece = forward_chunk_bytes.map_or("shipped".to_string(), |b| b.to_string());
    let name = format!("{base}-test-{drive}-{piece}");
    let mut text = format!(
        "description = \"{base} with {drive}\"\nhost = \"{}\"\ncontroller = \"{}\"\n\
         usb_link = \"usb3-ss\"\nbridge = \"{}\"\nsata_link = \"{}\"\ndrive = \"{drive}\"\n\n\
         [overrides.controller.pcie]\nlanes = 4\n",
        spec.host_name,
        spec.controller_name,
        spec.bridge_name.as_deref().unwrap(),
        spec.sata_link_name,
    );
    if let Some(bytes) = forward_chunk_bytes {
        text += &format!("\n[overrides.bridge]\nforward_chunk_bytes = {bytes}\n");
    }
    set.insert_text("stacks", &name, "findings.rs", &text)
        .unwrap();
    (set, name)
}

/// CrystalDiskMark's sequential read (1 MiB, QD1; XP's driver splits it into 64 KiB commands).
fn sequential_read_mb_s(drive: &str, forward_chunk_bytes: Option<u32>) -> f64 {
    let (set, stack) = vantec_with(drive, forward_chunk_bytes);
    let mut bench = Bench::new_in(&set, &stack);
    bench
        .measure(Workload::sequential_read(
            CRYSTALDISKMARK_SEQ_BLOCK_BYTES,
            1,
            60,
        ))
        .mb_per_s()
}

/// One USB 3.0 packet: a bridge forwarding each packet as it arrives (cut-through).
const ONE_PACKET_BYTES: u32 = 1024;
/// The ASM1051's burst: bMaxBurst 15 (16 packets of 1024 bytes), from its endpoint descriptors.
const ASM1051_BURST_BYTES: u32 = 16 * KIB;

#[test]
fn an_ssd_in_a_bot_enclosure_is_capped_by_the_bridges_burst_staging_and_a_slow_disk_is_not() {
    let shipped = ProfileSet::embedded()
        .resolve("xbit2010/vantec-usb3")
        .unwrap();
    let bridge = shipped.bridge.as_ref().unwrap();
    assert_eq!(
        bridge.forward_chunk_bytes, ASM1051_BURST_BYTES,
        "the ASM1051 stages one burst (its endpoints' bMaxBurst 15)"
    );
    let ssd = "intel-x25m-g2-160gb";
    let staged = sequential_read_mb_s(ssd, None);
    let cut_through = sequential_read_mb_s(ssd, Some(ONE_PACKET_BYTES));
    // The last burst of each 64 KiB command leaves on USB only once all of it has crossed the
    // bridge's data path, a burst's time there instead of a packet's: the least the staging
    // adds to every command, whatever the links on either side do.
    let command_bytes = f64::from(WINDOWS7_BOT_MAX_TRANSFER_BYTES);
    let staging_bytes = f64::from(ASM1051_BURST_BYTES - ONE_PACKET_BYTES);
    let fill_ns = staging_bytes / (bridge.data_rate_mb_s as f64 * 1e6) * 1e9;
    let cut_through_command_ns = command_bytes / (cut_through * 1e6) * 1e9;
    let cap = command_bytes / ((cut_through_command_ns + fill_ns) / 1e9) / 1e6;
    println!(
        "X25-M G2 in the Vantec (ASM1051), 64 KiB BOT reads: staged per burst {staged:.1} MB/s, \
         cut-through {cut_through:.1}, the staging's cap {cap:.1}"
    );
    assert!(
        staged < cut_through && staged <= cap * 1.005,
        "the SSD reads at {staged:.1} MB/s, above the bridge's cap {cap:.1} (cut-through \
         {cut_through:.1} plus a burst through the bridge per command); reproduce: storlab run \
         --target sim:xbit2010/vantec-usb3-x25m --state seq-filled --rw=read --bs=1m --iodepth=1"
    );
    // A 5400 rpm disk delivers a 64 KiB command's data slower than the bridge stages it: its
    // rate is the platter's, whatever the staging.
    let disk = "hdd-5400-laptop";
    let disk_staged = sequential_read_mb_s(disk, None);
    let disk_cut_through = sequential_read_mb_s(disk, Some(ONE_PACKET_BYTES));
    println!("5400 rpm disk in the Vantec: staged {disk_staged:.1} MB/s, cut-through {disk_cut_through:.1}");
    assert!(
        (disk_staged / disk_cut_through - 1.0).abs() < 0.01,
        "a slow disk's sequential reads moved with the bridge's staging: {disk_staged:.1} against \
         {disk_cut_through:.1} MB/s"
    );
}
