//! The published findings (issue #7 item 4, DOMAIN.md §2–4) as deterministic tests on the shipped
//! stacks: each asserts a relation between two simulated scenarios the labs measured (never an
//! absolute figure fitted to one scenario), so a finding holds only if the shared, physical
//! profile parameters reproduce it. Run with `--nocapture` to see the measured figures.
//!
//! One file per subject; the profiles, simulators and measurements they share are here.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Instant;
use storlab_sim::drive::hdd::{HddDrive, HddProfile};
use storlab_sim::drive::DriveModelReport;
use storlab_sim::profile::DriveProfile;
use storlab_sim::report::SimReport;
use storlab_sim::workload::{ClosedLoop, LoopResult};
use storlab_sim::{Op, ProfileSet, SimRequest, Simulator};

mod bot_enclosure_cap;
mod hdd_buffer;
mod hdd_write_cache;
mod misaligned_writes;
mod pcie_slot;
mod ssd_write_path;
mod trim;
mod unmapped;
mod usb;
mod windows8;

const SEED: u64 = 7;
const KIB: u32 = 1 << 10;
const MIB: u32 = 1 << 20;
/// The Windows 7 Microsoft BOT driver's largest transfer
/// (calibration.toml interface.windows7_bot_max_transfer_bytes).
const WINDOWS7_BOT_MAX_TRANSFER_BYTES: u32 = 65536;

/// Region the benchmarks run on: like IOMeter's test file it is written sequentially before the
/// measured run, so reads reach the flash instead of returning unmapped zeros from the
/// controller. Large enough that neither a 4 KiB random run nor a sequential run wraps around
/// onto a cached or just-written spot that would flatter it.
const TEST_REGION_BYTES: u64 = 128 << 20;
/// Block size and queue depth of the preparatory sequential fill.
const FILL_BLOCK_BYTES: u32 = MIB;
const FILL_QUEUE_DEPTH: u32 = 4;
/// Idle time after the fill and between measured runs on one prepared simulator.
const PAUSE_BETWEEN_RUNS_NS: u64 = 1_000_000_000;

/// CrystalDiskMark 3.0's sequential test (the LucidPort note): 1 MiB blocks, one at a time.
const CRYSTALDISKMARK_SEQ_BLOCK_BYTES: u32 = MIB;

/// One measured workload.
#[derive(Clone, Copy, Debug)]
struct Workload {
    op: Op,
    block_bytes: u32,
    queue_depth: u32,
    random: bool,
    ios: u64,
}

impl Workload {
    fn sequential_read(block_bytes: u32, queue_depth: u32, ios: u64) -> Workload {
        Workload {
            op: Op::Read,
            block_bytes,
            queue_depth,
            random: false,
            ios,
        }
    }
    fn random_read(block_bytes: u32, queue_depth: u32, ios: u64) -> Workload {
        Workload {
            random: true,
            ..Workload::sequential_read(block_bytes, queue_depth, ios)
        }
    }
}

/// What one measured run gave, with the report's counters for that run alone (the preparatory
/// fill subtracted).
struct Measured {
    result: LoopResult,
    report: SimReport,
    /// I/O sizes the drive saw during the measured run only.
    drive_io_sizes: BTreeMap<u32, u64>,
    merged_requests: u64,
    /// The busiest layer during the measured run only, and its utilisation (the report's own
    /// figure covers the whole session, preparatory fill included).
    bottleneck: String,
    bottleneck_utilisation: f64,
}

impl Measured {
    fn mb_per_s(&self) -> f64 {
        self.result.mb_per_s()
    }
    fn iops(&self) -> f64 {
        self.result.iops()
    }
    fn largest_drive_io_bytes(&self) -> u32 {
        self.drive_io_sizes.keys().next_back().copied().unwrap_or(0)
    }
}

fn sizes(report: &SimReport) -> BTreeMap<u32, u64> {
    report
        .drive_io_sizes
        .iter()
        .map(|s| (s.size_bytes, s.count))
        .collect()
}

fn simulator(stack: &str) -> Simulator {
    simulator_in(&ProfileSet::embedded(), stack)
}

fn simulator_in(profiles: &ProfileSet, stack: &str) -> Simulator {
    let mut sim = Simulator::from_profiles(profiles, stack, SEED)
        .unwrap_or_else(|e| panic!("stack {stack}: {e}"));
    // Timing only: nothing here reads data back, and a full-drive fill must not keep 64 GB.
    sim.set_store_payload(false);
    sim
}

/// Run `workload` on `sim` (slots resized to it) over `region_bytes` (0 = whole device).
fn run_loop(sim: &mut Simulator, workload: Workload, region_bytes: u64, seed: u64) -> LoopResult {
    sim.setup_slots(workload.queue_depth, workload.block_bytes as usize)
        .unwrap();
    ClosedLoop {
        op: workload.op,
        block_bytes: workload.block_bytes,
        queue_depth: workload.queue_depth,
        random: workload.random,
        region_bytes,
        ios: workload.ios,
        seed,
    }
    .run(sim)
}

/// Write the first `region_bytes` sequentially, as a benchmark creates its test file.
fn fill(sim: &mut Simulator, region_bytes: u64, block_bytes: u32, queue_depth: u32) {
    let fill = Workload {
        op: Op::Write,
        block_bytes,
        queue_depth,
        random: false,
        ios: region_bytes.div_ceil(u64::from(block_bytes)),
    };
    run_loop(sim, fill, region_bytes, SEED);
}

/// One stack with its test region prepared, on which workloads are measured one after another
/// (in a fixed order, so the results stay deterministic).
struct Bench {
    stack: String,
    sim: Simulator,
}

impl Bench {
    /// A fresh simulator of `stack` with the test region written and a pause after it, as a
    /// benchmark creates its test file and waits before the first measured run (the pause lets
    /// the drive finish programming what its write buffer still holds).
    fn new(stack: &str) -> Bench {
        Bench::new_in(&ProfileSet::embedded(), stack)
    }

    /// [`Bench::new`] on a stack of `profiles` (shipped profiles plus test-made stacks).
    fn new_in(profiles: &ProfileSet, stack: &str) -> Bench {
        let mut sim = simulator_in(profiles, stack);
        fill(
            &mut sim,
            TEST_REGION_BYTES,
            FILL_BLOCK_BYTES,
            FILL_QUEUE_DEPTH,
        );
        let settled_ns = sim.now_ns() + PAUSE_BETWEEN_RUNS_NS;
        sim.step_until(settled_ns);
        Bench {
            stack: stack.to_string(),
            sim,
        }
    }

    /// Measure `workload` on the test region; the report's counters are for this run alone.
    fn measure(&mut self, workload: Workload) -> Measured {
        let before = self.sim.report();
        let result = run_loop(&mut self.sim, workload, TEST_REGION_BYTES, SEED + 1);
        let report = self.sim.report();
        let settled_ns = self.sim.now_ns() + PAUSE_BETWEEN_RUNS_NS;
        self.sim.step_until(settled_ns);
        let mut drive_io_sizes = sizes(&report);
        for (size, count) in sizes(&before) {
            let left = drive_io_sizes.get(&size).copied().unwrap_or(0) - count;
            if left == 0 {
                drive_io_sizes.remove(&size);
            } else {
                drive_io_sizes.insert(size, left);
            }
        }
        let merged_requests = report.merged_requests - before.merged_requests;
        let elapsed_ns = (report.elapsed_ns - before.elapsed_ns).max(1) as f64;
        let (bottleneck, bottleneck_utilisation) = report
            .layers
            .iter()
            .zip(&before.layers)
            .map(|(after, before)| {
                assert_eq!(after.name, before.name);
                let busy_ns = after.busy_ns - before.busy_ns;
                (after.name.clone(), busy_ns as f64 / elapsed_ns)
            })
            .fold((String::new(), -1.0), |best, layer| {
                if layer.1 > best.1 {
                    layer
                } else {
                    best
                }
            });
        eprintln!(
            "{}: {:?} {} KiB QD{} {}: {:.1} MB/s, {:.0} IOPS, bottleneck {} ({:.0}%), drive I/O \
             sizes {drive_io_sizes:?}, merged {merged_requests}",
            self.stack,
            workload.op,
            workload.block_bytes / KIB,
            workload.queue_depth,
            if workload.random {
                "random"
            } else {
                "sequential"
            },
            result.mb_per_s(),
            result.iops(),
            bottleneck,
            bottleneck_utilisation * 100.0,
        );
        Measured {
            result,
            report,
            drive_io_sizes,
            merged_requests,
            bottleneck,
            bottleneck_utilisation,
        }
    }
}

/// Prepare the test region on a fresh simulator of `stack`, then measure `workload` on it.
fn measure(stack: &str, workload: Workload) -> Measured {
    Bench::new(stack).measure(workload)
}
