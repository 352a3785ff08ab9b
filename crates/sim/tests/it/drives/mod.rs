//! The SSD and HDD models checked against theory and published measurements, not against
//! themselves: write amplification of greedy GC under uniform random writes against the
//! Xiang–Kurkoski expression, fresh vs. sequentially filled vs. trimmed random-write speed,
//! misaligned writes, compression, HDD access time against seek + half a revolution, NCQ
//! gain at queue depth 32, and a full FTL consistency check over random workloads.
//!
//! One file per subject; the profiles, simulators and measurements they share are here.

use proptest::prelude::*;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use storlab_sim::drive::hdd::{HddDrive, HddProfile};
use storlab_sim::drive::ssd::ftl_log_block::{LogBlockFtl, LogBlockGeometry};
use storlab_sim::drive::ssd::{Mapping, SsdDrive, SsdProfile};
use storlab_sim::drive::{Drive, DriveCommand, DriveModelReport, SsdReport, TrimRange};
use storlab_sim::resource::Flow;
use storlab_sim::{Op, ProfileSet, SimRequest, Simulator};

mod controller;
mod hdd;
mod log_block;
mod profile_checks;
mod ssd;

const SEED: u64 = 7;
const PAGE: u64 = 4096;
const SECTOR: u64 = 512;

/// A small SSD: `blocks_per_plane` sets the size, `user_pages` the spare ratio.
fn ssd_profile(
    dies: u32,
    blocks_per_plane: u32,
    pages_per_block: u32,
    user_pages: u64,
) -> SsdProfile {
    SsdProfile {
        description: "test SSD".into(),
        channels: dies.min(2),
        dies_per_channel: dies / dies.min(2),
        planes_per_die: 1,
        blocks_per_plane,
        pages_per_block,
        page_bytes: 4096,
        user_capacity_bytes: user_pages * PAGE,
        page_read_ns: 50_000,
        page_program_ns: 900_000,
        block_erase_ns: 2_000_000,
        channel_rate_mb_s: 40,
        controller_cores: 1,
        command_cpu_ns: 30_000,
        read_cpu_ns: None,
        write_cpu_ns: None,
        command_latency_ns: 0,
        retired_command_ns: None,
        write_buffer_pages: 64,
        gc_free_blocks_threshold: 2,
        queue_depth: 32,
        trim_command_ns: 100_000,
        compression: false,
        compression_slot_bytes: 512,
        read_ahead_bytes: 0,
        read_ahead_streams: storlab_sim::drive::ssd::DEFAULT_READ_AHEAD_STREAMS,
        mapping: Mapping::Page,
        log_blocks: 0,
        partial_page_update: Default::default(),
        slc_cache: None,
    }
}

fn ssd_report(d: &dyn Drive) -> SsdReport {
    match d.model_report() {
        DriveModelReport::Ssd(r) => r,
        other => panic!("not an SSD: {other:?}"),
    }
}

fn write_pages(
    d: &mut SsdDrive,
    lpn: u64,
    pages: u32,
    payload: Option<&[u8]>,
    rng: &mut ChaCha8Rng,
) {
    let cmd = DriveCommand {
        write: true,
        lba: lpn * PAGE / SECTOR,
        blocks: pages * (PAGE / SECTOR) as u32,
    };
    d.write(Flow::ready_at(0), &cmd, payload, rng);
}

/// Principal branch of Lambert W for x in [−1/e, 0), by Newton's method.
fn lambert_w0(x: f64) -> f64 {
    let mut w = if x < -0.25 { -0.5 } else { x };
    for _ in 0..100 {
        let ew = w.exp();
        let step = (w * ew - x) / (ew * (w + 1.0));
        w -= step;
        if step.abs() < 1e-14 {
            break;
        }
    }
    w
}

/// A stack of the ahci host and SATA 3 Gb/s link around a test drive.
fn sim_with_drive(drive_toml: &str) -> Simulator {
    let mut set = ProfileSet::embedded();
    set.insert_text(
        "drives",
        "test-drive",
        "test:drives/test-drive.toml",
        drive_toml,
    )
    .unwrap();
    set.insert_text(
        "stacks",
        "test-stack",
        "test:stacks/test-stack.toml",
        "description = \"test\"\nhost = \"ahci\"\ncontroller = \"ahci-chipset\"\n\
         sata_link = \"sata-3g\"\ndrive = \"test-drive\"\n",
    )
    .unwrap();
    Simulator::from_profiles(&set, "test-stack", SEED).unwrap()
}

/// A 2010-class MLC SSD, small: 4 dies × 256 blocks × 64 pages (256 MiB of NAND), 240 MB user.
const SMALL_SSD: &str = r#"
description = "small 2010-class MLC SSD"
model = "ssd"
channels = 2
dies_per_channel = 2
planes_per_die = 2
blocks_per_plane = 128
pages_per_block = 64
page_bytes = 4096
user_capacity_bytes = 240001024
page_read_ns = 50000
page_program_ns = 900000
block_erase_ns = 2000000
channel_rate_mb_s = 40
controller_cores = 1
command_cpu_ns = 30000
write_buffer_pages = 256
gc_free_blocks_threshold = 3
queue_depth = 32
trim_command_ns = 200000
"#;

/// Run `offsets` as `op` requests of `len` bytes at queue depth `qd`; returns MB/s.
fn run_requests(sim: &mut Simulator, op: Op, len: u32, qd: u32, offsets: &[u64]) -> f64 {
    sim.setup_slots(qd, len.max(4096) as usize).unwrap();
    let start = sim.now_ns();
    let mut next = 0;
    let mut done = 0;
    for slot in 0..qd.min(offsets.len() as u32) {
        sim.submit(SimRequest {
            slot,
            op,
            offset_bytes: offsets[next],
            len_bytes: len,
        })
        .unwrap();
        next += 1;
    }
    while done < offsets.len() {
        sim.run_until_completions(1);
        let c = sim.pop_completion().expect("simulator stalled");
        c.result.expect("request failed");
        done += 1;
        if next < offsets.len() {
            sim.submit(SimRequest {
                slot: c.slot,
                op,
                offset_bytes: offsets[next],
                len_bytes: len,
            })
            .unwrap();
            next += 1;
        }
    }
    let bytes = offsets.len() as f64 * f64::from(len);
    bytes / ((sim.now_ns() - start) as f64 / 1e9) / 1e6
}

fn random_page_offsets(capacity: u64, n: usize, seed: u64) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| (rng.next_u64() % (capacity / PAGE)) * PAGE)
        .collect()
}

/// A tiny drive for exhaustive checking.
fn tiny_ssd(compression: bool) -> SsdProfile {
    let mut p = ssd_profile(2, 12, 8, 120);
    p.write_buffer_pages = 8;
    p.compression = compression;
    p.compression_slot_bytes = 1024;
    p
}

#[derive(Clone, Debug)]
enum FtlOp {
    Write {
        sector: u64,
        sectors: u32,
        zero_bytes: usize,
    },
    Trim {
        sector: u64,
        sectors: u64,
    },
    Read {
        sector: u64,
        sectors: u32,
    },
}

fn ftl_op(capacity_sectors: u64) -> impl Strategy<Value = FtlOp> {
    prop_oneof![
        4 => (0..capacity_sectors, 1u32..40, 0usize..4096).prop_map(move |(s, n, z)| {
            let n = n.min((capacity_sectors - s) as u32);
            FtlOp::Write { sector: s, sectors: n, zero_bytes: z }
        }),
        1 => (0..capacity_sectors, 1u64..200).prop_map(move |(s, n)| FtlOp::Trim {
            sector: s,
            sectors: n.min(capacity_sectors - s)
        }),
        1 => (0..capacity_sectors, 1u32..40).prop_map(move |(s, n)| FtlOp::Read {
            sector: s,
            sectors: n.min((capacity_sectors - s) as u32)
        }),
    ]
}

fn hdd_7200() -> HddProfile {
    let set = ProfileSet::embedded();
    let spec = set.resolve("sata-ahci-hdd").unwrap();
    match spec.drive {
        storlab_sim::profile::DriveProfile::Hdd(p) => p,
        other => panic!("sata-ahci-hdd has no HDD: {other:?}"),
    }
}

/// The shipped M225 profile (hybrid map).
fn m225() -> SsdProfile {
    let storlab_sim::profile::DriveProfile::Ssd(p) = toml::from_str(include_str!(
        "../../../../../profiles/drives/crucial-m225-64gb.toml"
    ))
    .unwrap() else {
        panic!("not an SSD profile");
    };
    storlab_sim::drive::ssd::validate(&p).unwrap();
    assert_eq!(p.mapping, Mapping::LogBlock);
    p
}

/// The M225 with `cores` controller cores, through the SATA test stack.
fn m225_sim(cores: u32) -> Simulator {
    let mut p = m225();
    p.controller_cores = cores;
    let drive = toml::to_string(&storlab_sim::profile::DriveProfile::Ssd(p)).unwrap();
    let mut sim = sim_with_drive(&drive);
    sim.set_store_payload(false);
    sim
}
