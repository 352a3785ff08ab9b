//! The simulator's payload store end to end: verify jobs through `run_jobs` on simulated stacks
//! whose store budget is far below what they write pass, because storlab's own data is kept as
//! its generator's parameters and regenerated on read (the per-chunk byte store dropped what
//! came past its budget, and these verifies failed there). Normal (non-verify) writes from a
//! queue of slot buffers read back exactly through the simulator's protocol path too.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use storlab_engine::engines::sim::SimEngine;
use storlab_engine::{EngineSetup, IoDirection, IoEngine, IoRequest};
use storlab_job::{BlockSizeSpec, EngineKind, JobSet, JobSpec, Target};
use storlab_runner::{run_jobs, EngineProvider, JobOutcome, RunError, RunOptions};

/// The store's budget in these tests: room for a few slot buffers, not for the data written.
const BUDGET_BYTES: u64 = 1 << 20;
const MIB: u64 = 1 << 20;

/// Opens one simulated stack per job with the small budget.
struct SmallBudgetSims;

impl EngineProvider for SmallBudgetSims {
    fn open(&mut self, job: &JobSpec) -> Result<Vec<Box<dyn IoEngine + Send>>, RunError> {
        let Target::Sim(stack) = &job.target else {
            unreachable!("sim jobs only")
        };
        let mut engine = SimEngine::open(stack, Path::new("/nonexistent"), job.seed)
            .map_err(RunError::Engine)?;
        engine
            .simulator_mut()
            .set_payload_budget_bytes(BUDGET_BYTES);
        Ok(vec![Box::new(engine)])
    }
}

fn verify_job(stack: &str, random_percent: u8, block_bytes: u64, io_size_bytes: u64) -> JobSpec {
    let mut job = JobSpec::new("payload", EngineKind::Sim, Target::Sim(stack.into()));
    job.read_percent = 0;
    job.random_percent = random_percent;
    job.block_size_read = BlockSizeSpec::Fixed(block_bytes);
    job.block_size_write = BlockSizeSpec::Fixed(block_bytes);
    job.size_bytes = Some(64 * MIB);
    job.io_size_bytes = Some(io_size_bytes);
    job.iodepth = 4;
    job.seed = 11;
    job.verify = true;
    job
}

fn run(job: JobSpec) -> JobOutcome {
    let stop = AtomicBool::new(false);
    let options = RunOptions {
        interval_ns: 1_000_000_000,
        stop: &stop,
        live: None,
    };
    let mut outcomes = run_jobs(
        &JobSet { jobs: vec![job] },
        &mut SmallBudgetSims,
        &options,
        &mut |_| {},
    )
    .unwrap_or_else(|e| panic!("{e}"));
    outcomes.remove(0)
}

/// (written bytes the drive holds, bytes the store dropped) from the simulator's report.
fn store_figures(outcome: &JobOutcome) -> (u64, u64) {
    let report = outcome.engine_reports[0].sim.as_ref().expect("sim");
    (report.stored_bytes, report.payload_dropped_bytes)
}

#[test]
fn verify_passes_far_past_the_payload_budget() {
    // Random 4 KiB writes (UAS), and sequential 128 KiB writes a BOT driver splits at 64 KiB.
    for job in [
        verify_job("usb3-uas-ssd", 100, 4096, 16 * MIB),
        verify_job("hwfr2013/intel-win7-bot", 0, 128 * 1024, 48 * MIB),
    ] {
        let stack = format!("{:?}", job.target);
        let outcome = run(job);
        assert!(
            outcome.verified_bytes > 8 * BUDGET_BYTES,
            "{stack}: {}",
            outcome.verified_bytes
        );
        // Written far past the budget, nothing dropped: none of it was held as bytes.
        assert_eq!(store_figures(&outcome).1, 0, "{stack}: all regenerable");
    }
}

/// fio-format verify (`verify=crc32c`, `md5`, ...: fio's headers over storlab's data) keeps
/// each block as its header's bytes and its data's generator: past the budget nothing is
/// dropped and the verify passes (every block was a source of its own, and the verify failed
/// falsely once the data written passed the budget: issue 33), also when a driver splits a
/// block between commands.
#[test]
fn fio_format_verify_passes_far_past_the_payload_budget() {
    // The BOT stack's driver splits each 128 KiB block into 64 KiB commands.
    for (kind, block, stack) in [
        ("crc32c", "4k", "usb3-uas-ssd"),
        ("md5", "64k", "usb3-uas-ssd"),
        ("sha3-512", "4k", "usb3-uas-ssd"),
        ("crc32c", "128k", "hwfr2013/intel-win7-bot"),
    ] {
        let flags: Vec<String> = [
            "--name=fio-verify",
            "--rw=randwrite",
            &format!("--bs={block}"),
            "--size=64m",
            "--io_size=16m",
            "--iodepth=4",
            &format!("--verify={kind}"),
            "--buffer_compress_percentage=30",
            // fio's verify state file would land in the current directory, the source tree.
            "--verify_state_save=0",
        ]
        .iter()
        .map(|f| f.to_string())
        .collect();
        let set = storlab_job::parse_flags(&flags, Some(&Target::Sim(stack.into())))
            .unwrap_or_else(|e| panic!("{e}"));
        let job = set.jobs.into_iter().next().unwrap();
        assert!(job.verify_spec.is_some(), "{kind}: fio's verify format");
        let outcome = run(job);
        assert!(
            outcome.verified_bytes >= 16 * BUDGET_BYTES,
            "{kind}: {} {:?}",
            outcome.verified_bytes,
            outcome.failure
        );
        assert_eq!(store_figures(&outcome).1, 0, "{kind}: nothing dropped");
    }
}

#[test]
fn normal_writes_from_a_queue_of_slots_read_back_exactly() {
    const SLOTS: u32 = 4;
    const WRITE_BYTES: usize = 128 * 1024;
    const WRITES: u64 = 256; // 32 MiB, 32 times the budget
    let mut engine = SimEngine::open("usb3-uas-ssd", Path::new("/nonexistent"), 1).unwrap();
    engine
        .simulator_mut()
        .set_payload_budget_bytes(BUDGET_BYTES);
    engine
        .setup(&EngineSetup {
            slots: SLOTS + 1,
            slot_bytes: WRITE_BYTES,
            buffer_align_bytes: 4096,
        })
        .unwrap();
    let pattern = storlab_job::DataPattern::Random;
    for slot in 0..SLOTS {
        storlab_runner::pattern::fill(engine.buffer_mut(slot), pattern, u64::from(slot) << 32);
    }
    let expected = |write: u64, buf: &mut [u8]| {
        storlab_runner::pattern::fill(buf, pattern, (write % u64::from(SLOTS)) << 32);
        storlab_runner::pattern::stamp(buf, pattern, write * WRITE_BYTES as u64, write);
    };
    let mut done = Vec::new();
    for batch in 0..WRITES / u64::from(SLOTS) {
        for slot in 0..SLOTS {
            let write = batch * u64::from(SLOTS) + u64::from(slot);
            let offset = write * WRITE_BYTES as u64;
            storlab_runner::pattern::stamp(engine.buffer_mut(slot), pattern, offset, write);
            engine
                .queue(IoRequest {
                    slot,
                    direction: IoDirection::Write,
                    offset_bytes: offset,
                    len_bytes: WRITE_BYTES as u32,
                    ioprio: None,
                })
                .unwrap();
        }
        engine.submit().unwrap();
        engine.reap(SLOTS as usize, &mut done).unwrap();
    }
    let mut want = vec![0u8; WRITE_BYTES];
    for write in (0..WRITES).step_by(37) {
        engine
            .queue(IoRequest {
                slot: SLOTS,
                direction: IoDirection::Read,
                offset_bytes: write * WRITE_BYTES as u64,
                len_bytes: WRITE_BYTES as u32,
                ioprio: None,
            })
            .unwrap();
        engine.submit().unwrap();
        engine.reap(1, &mut done).unwrap();
        expected(write, &mut want);
        assert!(engine.buffer(SLOTS) == &want[..], "write {write} read back");
    }
    let report = engine.simulator().report();
    assert_eq!(report.payload_dropped_bytes, 0);
    assert_eq!(report.stored_bytes, WRITES * WRITE_BYTES as u64);
}
