//! Fast state preparation (issue 21, item 5; ADR 0016): a device state prepared on a simulated
//! drive with the runner stamping through `buffer_head_mut` (the store skips comparing each
//! restamped slot buffer with its source) leaves the drive exactly as the byte-checked path
//! does. Each stack is prepared twice, once through an engine that hands the runner the whole
//! buffer (the store compares every write, as before the fast path) and once through the
//! simulator engine as shipped; the simulator's report (clock, drive and FTL or HDD figures,
//! every resource's busy time), the store's whole state and a following measured job must be
//! identical. The drives are shrunk (NAND blocks per plane) so a fill plus random writes reach
//! garbage collection and log-block merges within a debug-build test.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use storlab_engine::engines::sim::{load_profiles, SimEngine};
use storlab_engine::{
    Capabilities, EngineError, EngineReport, EngineSetup, IoCompletion, IoEngine, IoRequest,
};
use storlab_job::steps::DeviceState;
use storlab_job::{BlockSizeSpec, EngineKind, JobSet, JobSpec, Target, VerifyKind, VerifySpec};
use storlab_runner::state::covering_regions;
use storlab_runner::sweep::Sweeper;
use storlab_runner::{run_jobs, EngineProvider, RunError, RunOptions};
use storlab_sim::Simulator;

/// The simulator engine, either as shipped (`head_access`: the runner's stamp touches the
/// first bytes only) or as an engine without the fast path (every stamp borrows the whole
/// buffer, so the simulator forgets what it knew about it and the store compares every byte).
struct Probe {
    inner: SimEngine,
    head_access: bool,
}

impl IoEngine for Probe {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    fn target_size_bytes(&self) -> u64 {
        self.inner.target_size_bytes()
    }
    fn setup(&mut self, setup: &EngineSetup) -> Result<(), EngineError> {
        self.inner.setup(setup)
    }
    fn buffer(&self, slot: u32) -> &[u8] {
        self.inner.buffer(slot)
    }
    fn buffer_mut(&mut self, slot: u32) -> &mut [u8] {
        self.inner.buffer_mut(slot)
    }
    fn buffer_head_mut(&mut self, slot: u32, len: usize) -> &mut [u8] {
        if self.head_access {
            self.inner.buffer_head_mut(slot, len)
        } else {
            let buffer = self.inner.buffer_mut(slot);
            let len = len.min(buffer.len());
            &mut buffer[..len]
        }
    }
    fn queue(&mut self, request: IoRequest) -> Result<(), EngineError> {
        self.inner.queue(request)
    }
    fn submit(&mut self) -> Result<usize, EngineError> {
        self.inner.submit()
    }
    fn reap(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> Result<usize, EngineError> {
        self.inner.reap(min, out)
    }
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }
    fn wait_until_ns(&mut self, deadline_ns: u64) {
        self.inner.wait_until_ns(deadline_ns)
    }
    /// The simulator's report with the store's state digest and the count of skipped
    /// comparisons added (the latter differs between the two paths by design).
    fn report(&self) -> EngineReport {
        let mut report = self.inner.report();
        let store = self.inner.simulator().store();
        report
            .details
            .push(("test.store_digest".into(), store.state_digest().to_string()));
        report.details.push((
            "test.known_tail_writes".into(),
            store.known_tail_writes().to_string(),
        ));
        report.details.push((
            "test.reused_compression_estimates".into(),
            self.inner
                .simulator()
                .reused_compression_estimates()
                .to_string(),
        ));
        report
    }
}

/// Hands the one simulated drive to every job and takes it back, as the lab's provider does.
struct OneDrive {
    engine: Option<Box<dyn IoEngine + Send>>,
}

impl EngineProvider for OneDrive {
    fn open(&mut self, _job: &JobSpec) -> Result<Vec<Box<dyn IoEngine + Send>>, RunError> {
        Ok(vec![self.engine.take().expect("the drive was released")])
    }
    fn release(&mut self, _job: &JobSpec, mut engines: Vec<Box<dyn IoEngine + Send>>) {
        self.engine = engines.pop();
    }
}

/// A test stack: `base`'s parts with the drive's keys overridden by `drive_overrides`.
fn stack_text(host: &str, controller: &str, links: &str, drive: &str, overrides: &str) -> String {
    format!(
        "description = \"fast-state test stack\"\nhost = \"{host}\"\ncontroller = \"{controller}\"\n\
         {links}drive = \"{drive}\"\n{overrides}"
    )
}

/// Everything a run leaves that must not depend on the path: the simulator's report after the
/// state and after the measured job (JSON, details but the skip count), and the measured job's
/// statistics except CPU and wall-clock figures.
#[derive(Debug, PartialEq)]
struct Observed {
    state_label: String,
    after_state: Vec<(String, String)>,
    sim_json_after_state: String,
    after_job: Vec<(String, String)>,
    sim_json_after_job: String,
    job_stats: Vec<String>,
}

/// The work the fast path skipped while preparing a state (zero on the checked path).
#[derive(Default)]
struct Skipped {
    /// The store's comparisons of a restamped write with its source.
    comparisons: u64,
    /// Compression estimates of pieces of slots a write left unchanged.
    compression_estimates: u64,
}

/// Prepare `state` over `size_bytes` (whole drive when None) of `stack`, then run a mixed
/// random job; return what was observed and the store's skipped comparisons. `verify` is the
/// measured job's fio verify format (its template's, which the state steps are made from).
fn prepare_and_measure(
    profiles_stack: &str,
    state: &str,
    size_bytes: Option<u64>,
    head_access: bool,
    verify: Option<VerifyKind>,
) -> (Observed, Skipped) {
    let mut profiles = load_profiles(Path::new("/nonexistent")).expect("embedded profiles");
    profiles
        .insert_text("stacks", "fast-state-test", "test", profiles_stack)
        .expect("test stack parses");
    let sim = Simulator::from_profiles(&profiles, "fast-state-test", 7).expect("stack builds");
    let mut provider = OneDrive {
        engine: Some(Box::new(Probe {
            inner: SimEngine::from_simulator(sim),
            head_access,
        })),
    };
    let stop = AtomicBool::new(false);
    let options = RunOptions {
        interval_ns: storlab_runner::DEFAULT_INTERVAL_NS,
        stop: &stop,
        live: None,
    };
    let target = Target::Sim("fast-state-test".into());
    let mut template = JobSpec::new("measured", EngineKind::Sim, target);
    template.size_bytes = size_bytes;
    if let Some(kind) = verify {
        template.verify = true;
        template.verify_spec = Some(VerifySpec::new(kind));
    }
    let target_bytes = provider.engine.as_ref().unwrap().target_size_bytes();
    let regions = covering_regions([&template], target_bytes).unwrap();
    let state = DeviceState::parse(state).unwrap();
    let after_state = {
        let mut sweeper = Sweeper::new(&mut provider, &options);
        assert!(!sweeper.prepare(state, &template, &regions).unwrap());
        sweeper.state().to_string()
    };
    let report_now = |provider: &OneDrive| provider.engine.as_ref().unwrap().report();
    let split = |report: EngineReport| -> (Vec<(String, String)>, Skipped) {
        let mut skipped = Skipped::default();
        let details = report
            .details
            .into_iter()
            .filter(|(key, value)| {
                let count = match key.as_str() {
                    "test.known_tail_writes" => &mut skipped.comparisons,
                    "test.reused_compression_estimates" => &mut skipped.compression_estimates,
                    _ => return true,
                };
                *count = value.parse().unwrap();
                false
            })
            .collect();
        (details, skipped)
    };
    let state_report = report_now(&provider);
    let sim_json_after_state = state_report.sim.as_ref().unwrap().to_json();
    let (state_details, skipped_in_state) = split(state_report);

    let job_stats = run_mixed_random_job(&template, &mut provider, &options);
    let final_report = report_now(&provider);
    let sim_json_after_job = final_report.sim.as_ref().unwrap().to_json();
    let (job_details, _) = split(final_report);
    (
        Observed {
            state_label: after_state,
            after_state: state_details,
            sim_json_after_state,
            after_job: job_details,
            sim_json_after_job,
            job_stats,
        },
        skipped_in_state,
    )
}

/// Run a mixed random job over `template`'s region; its workers' statistics but CPU and
/// wall-clock figures.
fn run_mixed_random_job(
    template: &JobSpec,
    provider: &mut OneDrive,
    options: &RunOptions,
) -> Vec<String> {
    let mut measured = template.clone();
    measured.read_percent = 30;
    measured.iodepth = 4;
    measured.block_size_read = BlockSizeSpec::Fixed(4096);
    measured.block_size_write = BlockSizeSpec::Fixed(4096);
    measured.number_ios = Some(1500);
    let outcomes = run_jobs(
        &JobSet {
            jobs: vec![measured],
        },
        provider,
        options,
        &mut |_| {},
    )
    .unwrap();
    outcomes
        .iter()
        .flat_map(|o| &o.workers)
        .map(|w| {
            format!(
                "{:?} {:?} {:?} {} {:?}",
                w.read, w.write, w.trim, w.elapsed_ns, w.depth
            )
        })
        .collect()
}

/// The number after `"key":` in `json` (the first occurrence), so a test can say the state
/// reached what it is meant to exercise.
fn json_number(json: &str, key: &str) -> u64 {
    let pattern = format!("\"{key}\":");
    let at = json
        .find(&pattern)
        .unwrap_or_else(|| panic!("{key} missing from {json}"))
        + pattern.len();
    let digits: String = json[at..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap()
}

/// Both paths on one stack: identical observations, and the fast one skipped comparisons.
/// Returns the simulator's report (JSON) after the state.
fn assert_same_both_ways(stack: &str, state: &str, size_bytes: Option<u64>) -> String {
    assert_same_both_ways_estimating(stack, state, size_bytes, false)
}

/// [`assert_same_both_ways`]; with `reuses_estimates`, the drive compresses and the fast path
/// must also have reused compression estimates of unchanged slot pieces.
fn assert_same_both_ways_estimating(
    stack: &str,
    state: &str,
    size_bytes: Option<u64>,
    reuses_estimates: bool,
) -> String {
    let (checked, skipped_checked) = prepare_and_measure(stack, state, size_bytes, false, None);
    let (fast, skipped_fast) = prepare_and_measure(stack, state, size_bytes, true, None);
    assert_eq!(
        skipped_checked.comparisons, 0,
        "the checked path compares every write"
    );
    assert_eq!(
        skipped_checked.compression_estimates, 0,
        "the checked path estimates every piece"
    );
    assert!(
        skipped_fast.comparisons > 0,
        "the fast path skipped no comparison on {stack}"
    );
    if reuses_estimates {
        assert!(
            skipped_fast.compression_estimates > 0,
            "the fast path reused no compression estimate on {stack}"
        );
    }
    assert_eq!(checked, fast, "state {state} on stack:\n{stack}");
    fast.sim_json_after_state
}

/// Overrides shrinking an SSD to `blocks` NAND blocks per plane and `user_bytes` of user space.
fn small_ssd(blocks: u32, user_bytes: u64, extra: &str) -> String {
    format!(
        "\n[overrides.drive]\nblocks_per_plane = {blocks}\nuser_capacity_bytes = {user_bytes}\n{extra}"
    )
}

const USB3_UAS: &str = "usb_link = \"usb3-ss\"\nbridge = \"uas-bridge\"\nsata_link = \"sata-3g\"\n";
const SATA_ONLY: &str = "sata_link = \"sata-3g\"\n";

/// Page-mapped FTL behind USB 3 UAS: fill, random writes past the spare area (GC), TRIM,
/// refill; then the chains the reviews used.
#[test]
fn page_map_ssd_over_uas() {
    let stack = stack_text(
        "vendor-uas",
        "xhci-gen2-x1",
        USB3_UAS,
        "ssd-sata2",
        // 16 dies x 2 planes x 16 blocks x 128 pages x 4 KiB = 256 MiB of NAND, 7% spare.
        &small_ssd(16, 209_715_200, ""),
    );
    let fragmented = assert_same_both_ways(&stack, "fragmented:48m", None);
    assert!(json_number(&fragmented, "gc_copies") > 0, "{fragmented}");
    assert_same_both_ways(&stack, "seq-filled,trim-all", None);
    assert_same_both_ways(&stack, "fresh,randwrite:24m,seq-filled", None);
}

/// Hybrid (log-block) FTL on AHCI: merges after a full fill.
#[test]
fn log_block_ssd_on_ahci() {
    let stack = stack_text(
        "win7-ahci",
        "intel-5series-sata",
        SATA_ONLY,
        "crucial-m225-64gb",
        // 32 dies x 32 blocks x 128 pages x 4 KiB = 512 MiB of NAND; 2 log blocks per die.
        &small_ssd(32, 419_999_744, "log_blocks = 64\n"),
    );
    let fragmented = assert_same_both_ways(&stack, "fragmented:16m", None);
    assert!(json_number(&fragmented, "full") > 0, "{fragmented}");
}

/// A compressing SSD (whose timing reads the payload) behind a merging Turbo BOT driver (whose
/// buffer copies writes between slots).
#[test]
fn compressing_ssd_behind_a_merging_driver() {
    let stack = stack_text(
        "win7-turbo-bot-merging",
        "amd-renesas-xhci",
        "usb_link = \"usb3-ss\"\nbridge = \"asmedia-asm1051e\"\nsata_link = \"sata-6g\"\n",
        "ssd-sandforce",
        // 16 dies x 2 planes x 6 blocks x 256 pages x 8 KiB: 384 MiB of NAND, 208 MiB of user
        // space.
        &small_ssd(6, 218_103_808, ""),
    );
    let fragmented = assert_same_both_ways(&stack, "fragmented:96m", None);
    assert!(json_number(&fragmented, "gc_copies") > 0, "{fragmented}");
}

/// A compressing SSD behind Windows 8's UAS driver (the slot buffers go to the drive as they
/// are, so the fast path reuses the compression estimates of the pieces the stamp missed).
#[test]
fn compressing_ssd_over_uas() {
    let stack = stack_text(
        "win8-msft-uas",
        "intel-7series-xhci",
        "usb_link = \"usb3-ss\"\nbridge = \"asmedia-asm1051e\"\nsata_link = \"sata-6g\"\n",
        "ssd-sandforce",
        // As above: 384 MiB of NAND, 208 MiB of user space.
        &small_ssd(6, 218_103_808, ""),
    );
    let fragmented = assert_same_both_ways_estimating(&stack, "fragmented:96m", None, true);
    assert!(json_number(&fragmented, "gc_copies") > 0, "{fragmented}");
    assert_same_both_ways_estimating(&stack, "seq-filled,trim-all", None, true);
}

/// An HDD behind UAS: write cache, head position and rotation after a fill of a region.
#[test]
fn hdd_over_uas() {
    let stack = stack_text(
        "win7-mcci-uas",
        "renesas-upd720200",
        "usb_link = \"usb3-ss\"\nbridge = \"lucidport-usb300\"\nsata_link = \"sata-3g\"\n",
        "wd-caviar-black-2tb",
        "",
    );
    let fragmented = assert_same_both_ways(&stack, "fragmented:4m", Some(96 << 20));
    assert!(json_number(&fragmented, "write_cache_absorbed") > 0);
    assert_same_both_ways(&stack, "seq-filled,trim-all", Some(64 << 20));
}

/// A state prepared for a job with fio's verify format (`verify=crc32c`) is the state prepared
/// for the same job without it (ADR 0047): the steps write storlab's restamped fill, not
/// fio-format blocks the simulator must regenerate to recognise and keep one by one (the 2 TB
/// fill of issue 37). Same clock, FTL, every layer's figures and the store's whole state.
#[test]
fn a_jobs_verify_format_does_not_reach_its_state() {
    let stack = stack_text(
        "vendor-uas",
        "xhci-gen2-x1",
        USB3_UAS,
        "ssd-sata2",
        &small_ssd(16, 209_715_200, ""),
    );
    for state in ["seq-filled", "fragmented:48m"] {
        let (plain, _) = prepare_and_measure(&stack, state, None, true, None);
        let (verifying, _) =
            prepare_and_measure(&stack, state, None, true, Some(VerifyKind::Crc32c));
        assert_eq!(
            (
                &plain.state_label,
                &plain.after_state,
                &plain.sim_json_after_state
            ),
            (
                &verifying.state_label,
                &verifying.after_state,
                &verifying.sim_json_after_state
            ),
            "state {state} differs when the measured job has verify=crc32c"
        );
        // The measured job then writes fio-format blocks, so the two runs part there: the
        // test is of the state alone (its later results are the same job's on the same state).
        assert_ne!(plain.after_job, verifying.after_job);
    }
}
