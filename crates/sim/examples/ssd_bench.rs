//! SSD model bench: the mapping state of a 128 GB drive against the smallest possible mapping
//! table, and the wall/CPU time of simulating 10 GB of 4 KiB random writes to it, fresh and
//! after a full sequential fill (so garbage collection runs), both at the drive alone and
//! through the whole SATA stack. Run with `bench/ssd-ftl.sh` (release build).
//!
//! Usage: ssd_bench [GB_OF_RANDOM_WRITES] [SCALE]   (SCALE multiplies the drive's blocks and
//! user capacity: 16 gives a 2 TB drive; the whole-stack part runs only at scale 1)

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use std::time::Instant;
use storlab_sim::drive::ssd::{SsdDrive, SsdProfile};
use storlab_sim::drive::{Drive, DriveCommand, DriveModelReport};
use storlab_sim::resource::Flow;
use storlab_sim::workload::ClosedLoop;
use storlab_sim::{Op, ProfileSet, Simulator};

const PAGE_BYTES: u64 = 4096;
const SECTORS_PER_PAGE: u32 = 8;
const FILL_PAGES_PER_COMMAND: u32 = 256;

/// A 128 GB drive of 2010-class MLC: 8 channels × 4 dies × 2 planes, 512 KiB blocks, 128 GiB
/// of NAND (the usual ~7% spare).
const DRIVE_TOML: &str = r#"
description = "bench: 128 GB MLC SSD"
model = "ssd"
channels = 8
dies_per_channel = 4
planes_per_die = 2
blocks_per_plane = 4096
pages_per_block = 128
page_bytes = 4096
user_capacity_bytes = 128000000000
page_read_ns = 50000
page_program_ns = 900000
block_erase_ns = 2000000
channel_rate_mb_s = 40
controller_cores = 1
command_cpu_ns = 30000
write_buffer_pages = 512
gc_free_blocks_threshold = 3
queue_depth = 32
trim_command_ns = 200000
"#;

fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rfind(')').map(|i| &stat[i + 2..]).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime, stime are fields 14, 15 (index 11, 12 after the command name).
    (ticks(11) + ticks(12)) / 100.0
}

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

fn timed<T>(label: &str, f: impl FnOnce() -> T) -> T {
    let (wall, cpu) = (Instant::now(), cpu_seconds());
    let out = f();
    println!(
        "{label:52} wall {:6.1} s  cpu {:6.1} s",
        wall.elapsed().as_secs_f64(),
        cpu_seconds() - cpu
    );
    out
}

fn fill(d: &mut SsdDrive, rng: &mut ChaCha8Rng) {
    let pages = d.capacity_bytes() / PAGE_BYTES;
    let mut lpn = 0;
    while lpn < pages {
        let n = (pages - lpn).min(FILL_PAGES_PER_COMMAND.into()) as u32;
        let cmd = DriveCommand {
            write: true,
            lba: lpn * 8,
            blocks: n * SECTORS_PER_PAGE,
        };
        d.write(Flow::ready_at(0), &cmd, None, rng);
        lpn += u64::from(n);
    }
}

fn random_writes(d: &mut SsdDrive, count: u64, rng: &mut ChaCha8Rng) {
    let pages = d.capacity_bytes() / PAGE_BYTES;
    for _ in 0..count {
        let cmd = DriveCommand {
            write: true,
            lba: (rng.next_u64() % pages) * 8,
            blocks: SECTORS_PER_PAGE,
        };
        d.write(Flow::ready_at(0), &cmd, None, rng);
    }
}

/// FTL figures, with write amplification over the window since `before`.
fn report(now: &DriveModelReport, before: &DriveModelReport) -> String {
    match (now, before) {
        (DriveModelReport::Ssd(r), DriveModelReport::Ssd(b)) => format!(
            "WA over this run {:.2}, GC copies {}, erases {} (max {} per block), free blocks {}",
            (r.nand_pages_programmed - b.nand_pages_programmed)
                / (r.host_pages_written - b.host_pages_written).max(1) as f64,
            r.gc_copies,
            r.erases_total,
            r.erases_max_per_block,
            r.free_blocks
        ),
        other => format!("{other:?}"),
    }
}

fn main() {
    let gb: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10);
    let writes = gb * 1_000_000_000 / PAGE_BYTES;
    let scale: u32 = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1);
    let mut profile: SsdProfile =
        match toml::from_str::<storlab_sim::profile::DriveProfile>(DRIVE_TOML) {
            Ok(storlab_sim::profile::DriveProfile::Ssd(p)) => p,
            other => panic!("bench profile: {other:?}"),
        };
    profile.blocks_per_plane *= scale;
    profile.user_capacity_bytes *= u64::from(scale);
    let gb_user = profile.user_capacity_bytes / 1_000_000_000;
    storlab_sim::drive::ssd::validate(&profile).expect("bench profile is valid");
    let rss_before = rss_mib();
    let mut d = timed(&format!("build {gb_user} GB drive"), || {
        SsdDrive::new(&profile)
    });
    print_mapping_state(&d, rss_before);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let before = d.model_report();
    timed(
        &format!("drive alone: {gb} GB of 4 KiB random writes, fresh"),
        || random_writes(&mut d, writes, &mut rng),
    );
    println!("  {}", report(&d.model_report(), &before));
    print_mapping_state(&d, rss_before);
    timed(
        &format!("drive alone: sequential fill of {gb_user} GB"),
        || fill(&mut d, &mut rng),
    );
    print_mapping_state(&d, rss_before);
    let before = d.model_report();
    timed(
        &format!("drive alone: {gb} GB of 4 KiB random writes, filled"),
        || random_writes(&mut d, writes, &mut rng),
    );
    println!("  {}", report(&d.model_report(), &before));
    print_mapping_state(&d, rss_before);
    d.check_consistency()
        .expect("FTL consistent after the bench");
    drop(d);
    if scale != 1 {
        return;
    }
    whole_stack(gb, writes);
}

/// The FTL's RAM, its simulated out-of-band areas and the process's resident memory now.
fn print_mapping_state(d: &SsdDrive, rss_before: f64) {
    println!(
        "  mapping state in RAM {:.1} MiB; 4-byte-entry table {:.1} MiB ({:.3}x); bit-packed \
         minimum {:.1} MiB ({:.3}x); reverse map (NAND OOB) {:.1} MiB; process RSS +{:.0} MiB",
        d.mapping_ram_bytes() as f64 / 1048576.0,
        (d.capacity_bytes() / PAGE_BYTES * 4) as f64 / 1048576.0,
        d.mapping_ram_bytes() as f64 / (d.capacity_bytes() / PAGE_BYTES * 4) as f64,
        d.minimum_map_bytes() as f64 / 1048576.0,
        d.mapping_ram_bytes() as f64 / d.minimum_map_bytes() as f64,
        match d.model_report() {
            DriveModelReport::Ssd(r) => r.reverse_map_bytes as f64 / 1048576.0,
            _ => 0.0,
        },
        rss_mib() - rss_before
    );
}

/// `gb` GB of 4 KiB random writes after a sequential fill through the whole SATA stack.
fn whole_stack(gb: u64, writes: u64) {
    // The whole stack (AHCI, SATA 3 Gb/s link, NCQ 32), payload store off.
    let mut set = ProfileSet::embedded();
    set.insert_text(
        "drives",
        "bench-ssd",
        "bench:drives/bench-ssd.toml",
        DRIVE_TOML,
    )
    .unwrap();
    set.insert_text(
        "stacks",
        "bench-stack",
        "bench:stacks/bench-stack.toml",
        "description = \"bench\"\nhost = \"ahci\"\ncontroller = \"ahci-chipset\"\n\
         sata_link = \"sata-3g\"\ndrive = \"bench-ssd\"\n",
    )
    .unwrap();
    let mut sim = Simulator::from_profiles(&set, "bench-stack", 1).unwrap();
    sim.set_store_payload(false);
    let fill_bytes = 1u32 << 20;
    sim.setup_slots(4, fill_bytes as usize).unwrap();
    let fill_ios = sim.capacity_bytes() / u64::from(fill_bytes);
    timed("whole SATA stack: sequential fill, 1 MiB QD4", || {
        ClosedLoop {
            op: Op::Write,
            block_bytes: fill_bytes,
            queue_depth: 4,
            random: false,
            region_bytes: 0,
            ios: fill_ios,
            seed: 1,
        }
        .run(&mut sim)
    });
    sim.setup_slots(32, PAGE_BYTES as usize).unwrap();
    let before = sim.report().drive;
    let result = timed(
        &format!("whole SATA stack: {gb} GB of 4 KiB random writes, QD32, filled"),
        || {
            ClosedLoop {
                op: Op::Write,
                block_bytes: PAGE_BYTES as u32,
                queue_depth: 32,
                random: true,
                region_bytes: 0,
                ios: writes,
                seed: 1,
            }
            .run(&mut sim)
        },
    );
    println!(
        "  simulated {:.1} s at {:.1} MB/s; {}",
        result.elapsed_ns as f64 / 1e9,
        result.mb_per_s(),
        report(&sim.report().drive, &before)
    );
}
