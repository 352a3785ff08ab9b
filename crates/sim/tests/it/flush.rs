//! Cache flush end to end: SYNCHRONIZE CACHE(10) over BOT and UAS, translated by the bridge to
//! FLUSH CACHE EXT, or FLUSH CACHE EXT straight from AHCI; the drive empties its volatile write
//! cache to the media and the flush completes when that is done, timed by the drive's model.

use storlab_sim::{Op, ProfileSet, SimRequest, Simulator};

const SEED: u64 = 5;
const BLOCK: u32 = 4096;
/// Random writes cached before the flush: fewer than the HDD's 64 write-cache entries.
const CACHED_WRITES: u64 = 32;

fn sim(set: &ProfileSet, stack: &str, slots: u32) -> Simulator {
    let mut sim = Simulator::from_profiles(set, stack, SEED).unwrap();
    sim.setup_slots(slots, BLOCK as usize).unwrap();
    sim
}

/// One request on `slot`, run to its completion; returns (result, completion time).
fn one(sim: &mut Simulator, slot: u32, op: Op, offset: u64, len: u32) -> (Result<u32, i32>, u64) {
    sim.submit(SimRequest {
        slot,
        op,
        offset_bytes: offset,
        len_bytes: len,
    })
    .unwrap();
    let c = sim
        .run_until_slot_completes(slot)
        .expect("simulator stalled");
    (c.result, c.done_ns)
}

/// A flush issued now: how long it took.
fn flush_ns(sim: &mut Simulator) -> u64 {
    let start = sim.now_ns();
    let (result, done) = one(sim, 0, Op::Flush, 0, 0);
    assert_eq!(result, Ok(0), "a flush moves no data");
    done - start
}

/// `n` 4 KiB writes at QD1 spread over the drive (a fixed stride, so no two are adjacent).
fn scattered_writes(sim: &mut Simulator, n: u64) {
    let stride = (sim.capacity_bytes() / (n + 1)) / u64::from(BLOCK) * u64::from(BLOCK);
    for i in 0..n {
        // Visit the places out of order so the write-back has positioning to do.
        let k = (i * 7) % n;
        let (result, _) = one(sim, 0, Op::Write, k * stride, BLOCK);
        assert_eq!(result, Ok(BLOCK));
    }
}

/// The shipped 7200 rpm HDD with its write cache switched off, on AHCI.
fn hdd_without_write_cache() -> ProfileSet {
    let mut set = ProfileSet::embedded();
    let drive = include_str!("../../../../profiles/drives/hdd-7200.toml")
        .replace("write_cache = true", "write_cache = false");
    assert!(drive.contains("write_cache = false"));
    set.insert_text(
        "drives",
        "hdd-7200-wc-off",
        "test:drives/hdd-7200-wc-off.toml",
        &drive,
    )
    .unwrap();
    set.insert_text(
        "stacks",
        "sata-ahci-hdd-wc-off",
        "test:stacks/sata-ahci-hdd-wc-off.toml",
        "description = \"test\"\nhost = \"ahci\"\ncontroller = \"ahci-chipset\"\n\
         sata_link = \"sata-3g\"\ndrive = \"hdd-7200-wc-off\"\n",
    )
    .unwrap();
    set
}

/// An HDD destages its cached writes with seeks and rotations: a flush after 32 scattered
/// writes takes at least a millisecond per write (a quarter of the 7200 rpm drive's average
/// rotational wait, well under any seek), while a flush of an empty cache costs the command's
/// round trip only. Over BOT, UAS and AHCI alike.
#[test]
fn an_hdd_flush_after_cached_writes_takes_their_write_back_time() {
    let set = ProfileSet::embedded();
    for stack in [
        "sata-ahci-hdd",
        "usb2-bot-hdd",
        "lucidport/caviarblack-uas-gen2",
    ] {
        let mut s = sim(&set, stack, 1);
        let empty = flush_ns(&mut s);
        scattered_writes(&mut s, CACHED_WRITES);
        let full = flush_ns(&mut s);
        let again = flush_ns(&mut s);
        let floor_ns = CACHED_WRITES * 1_000_000;
        assert!(
            full > empty + floor_ns,
            "{stack}: flush after {CACHED_WRITES} writes {full} ns, empty {empty} ns"
        );
        assert!(
            again < empty + 1_000_000,
            "{stack}: the flush emptied the cache: the next costs {again} ns, not {empty} ns"
        );
        assert_eq!(s.report().flushes_to_drive, 3, "{stack}");
    }
}

/// With the write cache off every write waits for the media, so a flush has nothing to write:
/// it takes the same time after 32 writes as on an idle drive.
#[test]
fn a_drive_without_a_write_cache_gains_nothing_from_a_flush() {
    let set = hdd_without_write_cache();
    let mut s = sim(&set, "sata-ahci-hdd-wc-off", 1);
    let empty = flush_ns(&mut s);
    scattered_writes(&mut s, CACHED_WRITES);
    let after = flush_ns(&mut s);
    assert_eq!(after, empty);
    // And its writes were the slow ones: each waited for the media.
    let mut cached = sim(&ProfileSet::embedded(), "sata-ahci-hdd", 1);
    let t0 = cached.now_ns();
    scattered_writes(&mut cached, CACHED_WRITES);
    let cached_ns = cached.now_ns() - t0;
    let t0 = s.now_ns();
    scattered_writes(&mut s, CACHED_WRITES);
    let uncached_ns = s.now_ns() - t0;
    assert!(uncached_ns > 10 * cached_ns, "{uncached_ns} vs {cached_ns}");
}

/// An SSD's write buffer holds pages until a multi-plane program is full: a flush programs the
/// staged pages and waits for every buffered page, so after writes it takes most of a page
/// program (the staged program may start as its data is in, a command round trip before the
/// flush arrives) and on an empty buffer next to nothing.
#[test]
fn an_ssd_flush_programs_its_buffered_pages() {
    let set = ProfileSet::embedded();
    for stack in [
        "usb3-uas-ssd",
        "usb3-bot-ssd",
        "sata-ahci-ssd",
        "sata-ide-ssd",
    ] {
        let mut s = sim(&set, stack, 1);
        let empty = flush_ns(&mut s);
        for i in 0..3u64 {
            let (result, _) = one(&mut s, 0, Op::Write, i * 8 * u64::from(BLOCK), BLOCK);
            assert_eq!(result, Ok(BLOCK));
        }
        let full = flush_ns(&mut s);
        let program_ns = match &s.stack().drive {
            storlab_sim::profile::DriveProfile::Ssd(p) => p.page_program_ns,
            other => panic!("{stack}: not an SSD model: {other:?}"),
        };
        assert!(
            full > empty + program_ns / 2,
            "{stack}: flush after writes {full} ns, empty {empty} ns, program {program_ns} ns"
        );
    }
}

/// FLUSH CACHE EXT is not an NCQ command: with writes queued ahead of it, the flush goes to the
/// drive only once they completed, and the writes queued behind it wait for it (AHCI: the host
/// defers; UAS: the bridge does). What was written reads back.
#[test]
fn a_flush_drains_the_queue_and_holds_what_follows() {
    let set = ProfileSet::embedded();
    for stack in ["sata-ahci-hdd", "usb3-uas-ssd"] {
        let mut s = sim(&set, stack, 9);
        let stride = 1 << 24;
        // Slot n writes bytes n at n × stride.
        let write = |s: &mut Simulator, slot: u32| {
            s.slot_buffer_mut(slot).fill(slot as u8);
            s.submit(SimRequest {
                slot,
                op: Op::Write,
                offset_bytes: u64::from(slot) * stride,
                len_bytes: BLOCK,
            })
            .unwrap();
        };
        for slot in 1..=4u32 {
            write(&mut s, slot);
        }
        s.submit(SimRequest {
            slot: 0,
            op: Op::Flush,
            offset_bytes: 0,
            len_bytes: 0,
        })
        .unwrap();
        for slot in 5..=8u32 {
            write(&mut s, slot);
        }
        s.run();
        let mut done = [0u64; 9];
        while let Some(c) = s.pop_completion() {
            assert!(c.result.is_ok(), "{stack}: {c:?}");
            done[c.slot as usize] = c.done_ns;
        }
        let flush = done[0];
        assert!(done[1..=4].iter().all(|&t| t < flush), "{stack}: {done:?}");
        assert!(done[5..=8].iter().all(|&t| t > flush), "{stack}: {done:?}");
        for slot in 1..=8u32 {
            let (result, _) = one(&mut s, 0, Op::Read, u64::from(slot) * stride, BLOCK);
            assert_eq!(result, Ok(BLOCK));
            assert!(s.slot_buffer(0)[..BLOCK as usize]
                .iter()
                .all(|&b| b == slot as u8));
        }
    }
}

/// A flush names no range: anything else is refused as an invalid request.
#[test]
fn a_flush_with_a_range_is_refused() {
    let mut s = sim(&ProfileSet::embedded(), "usb3-uas-ssd", 1);
    let (result, _) = one(&mut s, 0, Op::Flush, 4096, 4096);
    assert_eq!(result, Err(storlab_sim::ERRNO_EINVAL));
}

/// The SCSI bytes of a flush are in the usbmon capture: tshark decodes SYNCHRONIZE CACHE(10)
/// in the CBW and in the UAS Command IU.
#[test]
fn tshark_decodes_the_synchronize_cache_command() {
    if !crate::common::tshark_available() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("storlab-sim-flush-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for stack in ["usb3-uas-ssd", "usb2-bot-hdd"] {
        let mut s = sim(&ProfileSet::embedded(), stack, 1);
        s.enable_pcap();
        assert_eq!(one(&mut s, 0, Op::Write, 0, BLOCK).0, Ok(BLOCK));
        assert_eq!(one(&mut s, 0, Op::Flush, 0, 0).0, Ok(0));
        let path = dir.join(format!("{}.pcap", stack.replace('/', "_")));
        std::fs::write(&path, s.take_pcap()).unwrap();
        let out = std::process::Command::new("tshark")
            .arg("-r")
            .arg(&path)
            .args([
                "-Y",
                "scsi_sbc.opcode == 0x35",
                "-T",
                "fields",
                "-e",
                "scsi_sbc.opcode",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{stack}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.lines().any(|l| l.contains("0x35") || l.trim() == "53"),
            "{stack}: no SYNCHRONIZE CACHE(10) decoded: {text:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
