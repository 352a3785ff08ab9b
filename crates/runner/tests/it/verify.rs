//! Verify end to end through `run_jobs`, on an in-memory engine that can corrupt the stored data
//! between the write phase and the read-back, or drop a write: every corruption is caught, the
//! message says where and what, and only what was written is read back.

use proptest::prelude::*;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use storlab_engine::{
    Capabilities, EngineError, EngineSetup, IoCompletion, IoDirection, IoEngine, IoRequest,
};
use storlab_job::{BlockSizeShare, BlockSizeSpec, EngineKind, JobSet, JobSpec, Target};
use storlab_runner::{run_jobs, EngineProvider, JobOutcome, RunError, RunOptions};

/// Sector granularity at which the mock tracks which bytes were written.
const SECTOR_BYTES: usize = 512;
const TARGET_NAME: &str = "/mem/target";

/// The target's bytes, shared by every engine of a job, and what happened to them.
#[derive(Default)]
struct Store {
    data: Vec<u8>,
    written_sectors: Vec<bool>,
    read_bytes: u64,
    writes: u64,
    /// At the first read after writing, flip a bit of the n-th written sector (modulo the
    /// number written) at this byte within it: (n, byte).
    corrupt: Option<(u64, usize)>,
    /// Where the corruption went.
    corrupted_at: Option<u64>,
    /// Drop the n-th write (counting from 0): the drive acknowledges it and keeps the old data.
    drop_write: Option<u64>,
    dropped: Option<(u64, u32)>,
}

impl Store {
    fn shared(len_bytes: usize) -> Arc<Mutex<Store>> {
        Arc::new(Mutex::new(Store {
            data: vec![0; len_bytes],
            written_sectors: vec![false; len_bytes / SECTOR_BYTES],
            ..Store::default()
        }))
    }

    fn corrupt_now(&mut self) {
        let Some((n, byte)) = self.corrupt.take() else {
            return;
        };
        let written: Vec<usize> = (0..self.written_sectors.len())
            .filter(|s| self.written_sectors[*s])
            .collect();
        if written.is_empty() {
            return;
        }
        let sector = written[(n % written.len() as u64) as usize];
        let at = sector * SECTOR_BYTES + byte % SECTOR_BYTES;
        self.data[at] ^= 0x10;
        self.corrupted_at = Some(at as u64);
    }
}

/// A synchronous in-memory engine with queued semantics (requests complete at `reap`).
struct MemEngine {
    store: Arc<Mutex<Store>>,
    buffers: Vec<Vec<u8>>,
    queued: Vec<IoRequest>,
    done: Vec<IoCompletion>,
}

impl IoEngine for MemEngine {
    fn name(&self) -> &'static str {
        "mem"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            queued: true,
            moves_data: true,
            trim: false,
            shared_timeline: false,
            page_cache: false,
        }
    }
    fn target_size_bytes(&self) -> u64 {
        self.store.lock().unwrap().data.len() as u64
    }
    fn setup(&mut self, setup: &EngineSetup) -> Result<(), EngineError> {
        self.buffers = vec![vec![0; setup.slot_bytes]; setup.slots as usize];
        Ok(())
    }
    fn buffer(&self, slot: u32) -> &[u8] {
        &self.buffers[slot as usize]
    }
    fn buffer_mut(&mut self, slot: u32) -> &mut [u8] {
        &mut self.buffers[slot as usize]
    }
    fn queue(&mut self, request: IoRequest) -> Result<(), EngineError> {
        self.queued.push(request);
        Ok(())
    }
    fn submit(&mut self) -> Result<usize, EngineError> {
        let mut store = self.store.lock().unwrap();
        let n = self.queued.len();
        for r in self.queued.drain(..) {
            let range = r.offset_bytes as usize..(r.offset_bytes + u64::from(r.len_bytes)) as usize;
            let buf = &mut self.buffers[r.slot as usize][..r.len_bytes as usize];
            match r.direction {
                IoDirection::Write => {
                    let index = store.writes;
                    store.writes += 1;
                    if store.drop_write == Some(index) {
                        store.dropped = Some((r.offset_bytes, r.len_bytes));
                    } else {
                        store.data[range.clone()].copy_from_slice(buf);
                    }
                    for s in range.start / SECTOR_BYTES..range.end.div_ceil(SECTOR_BYTES) {
                        store.written_sectors[s] = true;
                    }
                }
                IoDirection::Read => {
                    store.corrupt_now();
                    store.read_bytes += u64::from(r.len_bytes);
                    buf.copy_from_slice(&store.data[range]);
                }
                IoDirection::Trim => {}
            }
            self.done.push(IoCompletion {
                slot: r.slot,
                result: Ok(r.len_bytes),
                done_ns: 0,
            });
        }
        Ok(n)
    }
    fn reap(&mut self, _min: usize, out: &mut Vec<IoCompletion>) -> Result<usize, EngineError> {
        let n = self.done.len();
        out.append(&mut self.done);
        Ok(n)
    }
    fn now_ns(&self) -> u64 {
        0
    }
    fn wait_until_ns(&mut self, _deadline_ns: u64) {}
}

struct MemProvider {
    store: Arc<Mutex<Store>>,
}

impl EngineProvider for MemProvider {
    fn open(&mut self, job: &JobSpec) -> Result<Vec<Box<dyn IoEngine + Send>>, RunError> {
        Ok((0..job.numjobs)
            .map(|_| {
                Box::new(MemEngine {
                    store: self.store.clone(),
                    buffers: Vec::new(),
                    queued: Vec::new(),
                    done: Vec::new(),
                }) as Box<dyn IoEngine + Send>
            })
            .collect())
    }
}

fn verify_job(rw_random_percent: u8, write: BlockSizeSpec, seed: u64) -> JobSpec {
    let mut job = JobSpec::new("vjob", EngineKind::Psync, Target::Path(TARGET_NAME.into()));
    job.read_percent = 0;
    job.random_percent = rw_random_percent;
    job.block_size_read = write.clone();
    job.block_size_write = write;
    job.seed = seed;
    job.verify = true;
    job
}

/// The outcomes of `job`, or the error that ended it: a verify failure too (the outcome then
/// carries it beside the job's figures; see `run_outcomes`).
fn run(job: JobSpec, store: &Arc<Mutex<Store>>) -> Result<Vec<JobOutcome>, RunError> {
    let mut outcomes = run_outcomes(job, store)?;
    match outcomes.iter_mut().find_map(|o| o.failure.take()) {
        Some(failure) => Err(failure),
        None => Ok(outcomes),
    }
}

/// The outcomes `run_jobs` hands back for `job` on `store`.
fn run_outcomes(job: JobSpec, store: &Arc<Mutex<Store>>) -> Result<Vec<JobOutcome>, RunError> {
    let stop = AtomicBool::new(false);
    let options = RunOptions {
        interval_ns: 1_000_000_000,
        stop: &stop,
        live: None,
    };
    let mut provider = MemProvider {
        store: store.clone(),
    };
    run_jobs(
        &JobSet { jobs: vec![job] },
        &mut provider,
        &options,
        &mut |_| {},
    )
}

/// As fio, a job verify stops is handed back with its figures (the reads up to and including
/// the bad block's) and the failure beside them, not as the run's error.
#[test]
fn a_verify_failure_keeps_the_jobs_figures() {
    let mut job = verify_job(0, BlockSizeSpec::Fixed(4096), 1);
    job.size_bytes = Some(64 << 10);
    let store = Store::shared(64 << 10);
    // The 17th sector's byte 100: in the third 4 KiB write (offset 8192).
    store.lock().unwrap().corrupt = Some((16, 100));
    let outcomes = run_outcomes(job, &store).expect("the job is handed back");
    let outcome = &outcomes[0];
    let failure = outcome.failure.as_ref().expect("verify failed");
    assert!(failure.is_verify_failure(), "{failure}");
    assert!(failure.to_string().contains("offset 8192"), "{failure}");
    let stats = &outcome.workers[0];
    assert_eq!(stats.write.ios, 16);
    // Blocks 0 and 1 pass, block 2 fails: three reads at queue depth 1.
    assert_eq!(stats.read.ios, 3);
}

/// As fio, a verify failure belongs to the clone that read the bad block: with two workers on
/// their own regions, only the second (whose region holds the bad block) is marked, and the
/// first still reads back and checks all it wrote.
#[test]
fn a_verify_failure_marks_only_the_worker_that_read_the_bad_block() {
    const REGION_BYTES: u64 = 32 << 10;
    let mut job = verify_job(0, BlockSizeSpec::Fixed(4096), 1);
    job.numjobs = 2;
    job.size_bytes = Some(REGION_BYTES);
    job.offset_increment_bytes = REGION_BYTES;
    let store = Store::shared(2 * REGION_BYTES as usize);
    // The 81st written sector's byte 100: the second region's third 4 KiB block.
    let sectors_per_region = REGION_BYTES / SECTOR_BYTES as u64;
    store.lock().unwrap().corrupt = Some((sectors_per_region + 16, 100));
    let outcomes = run_outcomes(job, &store).expect("the job is handed back");
    let outcome = &outcomes[0];
    let failure = outcome.failure.as_ref().expect("verify failed");
    let bad_offset = REGION_BYTES + 2 * 4096;
    assert!(
        failure
            .to_string()
            .contains(&format!("offset {bad_offset}")),
        "{failure}"
    );
    assert_eq!(outcome.errno_by_worker, [0, storlab_job::ERRNO_EILSEQ]);
    let blocks_per_region = REGION_BYTES / 4096;
    let reads: Vec<u64> = outcome.workers.iter().map(|w| w.read.ios).collect();
    assert_eq!(reads, [blocks_per_region, 3]);
}

fn bssplit() -> BlockSizeSpec {
    BlockSizeSpec::Split(vec![
        BlockSizeShare {
            size_bytes: 512,
            percent: 30,
        },
        BlockSizeShare {
            size_bytes: 4096,
            percent: 40,
        },
        BlockSizeShare {
            size_bytes: 64 << 10,
            percent: 30,
        },
    ])
}

fn bsrange() -> BlockSizeSpec {
    BlockSizeSpec::Range {
        min_bytes: 4096,
        max_bytes: 64 << 10,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever the seed, block sizes and queue depth, a flipped bit anywhere in the written
    /// bytes fails the job with a message naming the bytes around it.
    #[test]
    fn every_injected_corruption_is_caught(
        seed: u64,
        sizes in prop_oneof![Just(bssplit()), Just(bsrange())],
        random in prop_oneof![Just(0u8), Just(100u8)],
        iodepth in 1u32..8,
        which: u64,
        byte in 0usize..SECTOR_BYTES,
    ) {
        let mut job = verify_job(random, sizes, seed);
        job.iodepth = iodepth;
        job.size_bytes = Some(1 << 20);
        // Partly covered region, so unwritten gaps sit between written extents.
        job.io_size_bytes = Some(256 << 10);
        let store = Store::shared(1 << 20);
        store.lock().unwrap().corrupt = Some((which, byte));
        let error = match run(job, &store) {
            Err(error) => error,
            Ok(outcome) => panic!("corruption missed; {} bytes verified", outcome[0].verified_bytes),
        };
        let corrupted_at = store.lock().unwrap().corrupted_at.expect("a byte was corrupted");
        let text = error.to_string();
        prop_assert!(text.starts_with("verify failed"), "{}", text);
        prop_assert!(
            text.contains(&format!("from offset {corrupted_at}:")),
            "corrupted byte {} but: {}", corrupted_at, text
        );
    }
}

/// The message names job, worker, target, offset, length, write generation, and the differing
/// bytes in hex.
#[test]
fn a_mismatch_names_where_and_what() {
    let mut job = verify_job(0, BlockSizeSpec::Fixed(4096), 1);
    job.size_bytes = Some(64 << 10);
    let store = Store::shared(64 << 10);
    // The third written sector's byte 100: offset 1124, in the first 4 KiB write.
    store.lock().unwrap().corrupt = Some((2, 100));
    let text = run(job, &store).unwrap_err().to_string();
    let expected_byte = {
        let store = store.lock().unwrap();
        store.data[1124] ^ 0x10
    };
    for part in [
        "job 'vjob'",
        TARGET_NAME,
        "the 4096 bytes at offset 0,",
        "last written by worker 0 in its write generation 1,",
        "from offset 1124:",
        &format!("expected {expected_byte:02x} "),
        &format!("found {:02x} ", expected_byte ^ 0x10),
    ] {
        assert!(text.contains(part), "{part:?} missing from: {text}");
    }
}

/// A drive that acknowledges a rewrite and keeps the older data fails verify (the data of each
/// write generation differs).
#[test]
fn a_dropped_rewrite_is_caught() {
    let mut job = verify_job(0, BlockSizeSpec::Fixed(4096), 3);
    job.size_bytes = Some(64 << 10);
    job.loops = 2;
    let store = Store::shared(64 << 10);
    // The 20th write is the second pass's 5th block.
    store.lock().unwrap().drop_write = Some(20);
    let text = run(job, &store).unwrap_err().to_string();
    let (offset, _) = store.lock().unwrap().dropped.expect("a write was dropped");
    assert_eq!(offset, 4 * 4096);
    assert!(
        text.contains(&format!(
            "at offset {offset}, last written by worker 0 in its write generation 21,"
        )),
        "{text}"
    );
}

/// Sequential writes mixing 512 B and larger blocks read back intact (fio passes them too).
#[test]
fn mixed_sequential_sizes_pass_and_every_written_byte_is_checked() {
    for sizes in [bssplit(), bsrange()] {
        let mut job = verify_job(0, sizes, 5);
        job.size_bytes = Some(1 << 20);
        let store = Store::shared(1 << 20);
        let outcome = run(job, &store).expect("verify passes");
        let written = store
            .lock()
            .unwrap()
            .written_sectors
            .iter()
            .filter(|w| **w)
            .count();
        assert_eq!(outcome[0].verified_bytes, (written * SECTOR_BYTES) as u64);
    }
}

/// 100 random writes over a large region read back 100 blocks, not the region.
#[test]
fn the_read_back_reads_only_what_was_written() {
    let mut job = verify_job(100, BlockSizeSpec::Fixed(4096), 9);
    job.size_bytes = Some(64 << 20);
    job.number_ios = Some(100);
    let store = Store::shared(64 << 20);
    let outcome = run(job, &store).expect("verify passes");
    let read = store.lock().unwrap().read_bytes;
    assert_eq!(read, 100 * 4096);
    assert_eq!(outcome[0].verified_bytes, 100 * 4096);
}

/// Two workers writing the same region: each checks its own writes, and bytes the other wrote
/// later are not a mismatch (fio's behaviour). A corruption is still caught.
#[test]
fn overlapping_workers_pass_and_still_catch_corruption() {
    let overlapping = |seed| {
        let mut job = verify_job(100, bssplit(), seed);
        job.numjobs = 2;
        job.iodepth = 4;
        job.size_bytes = Some(1 << 20);
        job
    };
    for seed in 0..4 {
        let store = Store::shared(1 << 20);
        run(overlapping(seed), &store).expect("overlapping workers verify");
        let store = Store::shared(1 << 20);
        store.lock().unwrap().corrupt = Some((seed * 7919, 33));
        let text = run(overlapping(seed), &store).unwrap_err().to_string();
        let at = store.lock().unwrap().corrupted_at.unwrap();
        assert!(
            text.contains(&format!("from offset {at}:")),
            "seed {seed} at {at}: {text}"
        );
    }
}
