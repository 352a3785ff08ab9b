//! A job a failed I/O ends (issue 33 item 5): as fio, `run_jobs` hands it back with its figures
//! up to the failure, the failure itself and the errno of the clone that saw it (fio's job
//! `error`), and runs the jobs after it; `exitall_on_error` still ends the run there. On a
//! simulated stack with a medium error placed on one LBA.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use storlab_engine::engines::sim::{load_profiles, SimEngine};
use storlab_engine::IoEngine;
use storlab_job::{BlockSizeSpec, EngineKind, JobSet, JobSpec, Target};
use storlab_runner::{run_jobs, EngineProvider, JobOutcome, RunError, RunOptions};
use storlab_sim::{FaultPlan, Simulator};

const STACK: &str = "usb3-uas-ssd";
/// LBA 100 (512-byte sectors) is in the 4 KiB read at offset 49 152, the 13th from offset 0.
const FAULTS: &str = "media_error@lba=100";
const READS_BEFORE_THE_BAD_BLOCK: u64 = 12;
/// Linux's errno for an unrecovered read error.
const ENODATA: i32 = 61;
const REGION_BYTES: u64 = 1 << 20;

/// One simulated drive with the fault plan, handed to every job and taken back.
struct OneDrive {
    engine: Option<Box<dyn IoEngine + Send>>,
}

impl OneDrive {
    fn new() -> OneDrive {
        let profiles = load_profiles(Path::new("/nonexistent")).expect("embedded profiles");
        let mut sim = Simulator::from_profiles(&profiles, STACK, 1).expect("stack builds");
        sim.set_faults(FaultPlan::parse(FAULTS).unwrap())
            .expect("the stack takes the plan");
        OneDrive {
            engine: Some(Box::new(SimEngine::from_simulator(sim))),
        }
    }
}

impl EngineProvider for OneDrive {
    fn open(&mut self, _job: &JobSpec) -> Result<Vec<Box<dyn IoEngine + Send>>, RunError> {
        Ok(vec![self.engine.take().expect("the drive was released")])
    }
    fn release(&mut self, _job: &JobSpec, mut engines: Vec<Box<dyn IoEngine + Send>>) {
        self.engine = engines.pop();
    }
}

/// A 4 KiB sequential read of 1 MiB at `offset_bytes`, in a stonewall group of its own.
fn read_job(name: &str, offset_bytes: u64) -> JobSpec {
    let mut job = JobSpec::new(name, EngineKind::Sim, Target::Sim(STACK.into()));
    job.random_percent = 0;
    job.read_percent = 100;
    job.block_size_read = BlockSizeSpec::Fixed(4096);
    job.block_size_write = BlockSizeSpec::Fixed(4096);
    job.offset_bytes = offset_bytes;
    job.size_bytes = Some(REGION_BYTES);
    job.stonewall = true;
    job
}

fn run(jobs: Vec<JobSpec>) -> Result<Vec<JobOutcome>, RunError> {
    let stop = AtomicBool::new(false);
    let options = RunOptions {
        interval_ns: 1_000_000_000,
        stop: &stop,
        live: None,
    };
    run_jobs(
        &JobSet { jobs },
        &mut OneDrive::new(),
        &options,
        &mut |_| {},
    )
}

#[test]
fn a_failed_job_keeps_its_figures_and_error_and_the_next_job_runs() {
    let outcomes = run(vec![
        read_job("failing", 0),
        read_job("after", 2 * REGION_BYTES),
    ])
    .expect("a failed I/O ends its job, not the run");
    let names: Vec<&str> = outcomes.iter().map(|o| o.job.name.as_str()).collect();
    assert_eq!(names, ["failing", "after"]);
    let failing = &outcomes[0];
    let failure = failing.failure.as_ref().expect("the job failed");
    assert_eq!(failure.job_errno(), Some(ENODATA), "{failure}");
    assert!(failure.to_string().contains("offset 49152"), "{failure}");
    assert_eq!(failing.errno_by_worker, [ENODATA]);
    assert_eq!(failing.workers[0].read.ios, READS_BEFORE_THE_BAD_BLOCK);
    assert_eq!(failing.workers[0].read.errors, 1);
    let after = &outcomes[1];
    assert!(after.failure.is_none());
    assert_eq!(after.errno_by_worker, [0]);
    assert_eq!(after.workers[0].read.ios, REGION_BYTES / 4096);
}

#[test]
fn exitall_on_error_still_ends_the_run_at_the_failed_job() {
    let mut failing = read_job("failing", 0);
    failing.exit_all.on_error = true;
    let outcomes = run(vec![failing, read_job("after", 2 * REGION_BYTES)]).unwrap();
    let names: Vec<&str> = outcomes.iter().map(|o| o.job.name.as_str()).collect();
    assert_eq!(names, ["failing"], "no later group starts");
    assert!(outcomes[0].failure.is_some());
}
