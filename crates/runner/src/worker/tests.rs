//! Tests of the issue/reap loop on engines that stand in for devices: the null engine, a
//! burst device that completes several requests per reap, a file system that fills up.

use super::pacing::Gate;
use super::*;
use crate::offsets::Region;
use std::sync::atomic::AtomicBool;
use storlab_engine::observed::{EngineObserver, Observed};
use storlab_engine::registry::{open_engine, EngineOptions};
use storlab_engine::EngineSetup;
use storlab_engine::{IoCompletion, IoRequest};
use storlab_job::EngineKind;
use storlab_job::{SteadyStateSpec, Target, ERRNO_ENOSPC};

/// Counts the ranges the runner asks to invalidate, standing in for the page cache.
#[derive(Default)]
struct CountingInvalidations {
    invalidated: Vec<(u64, u64)>,
}

impl EngineObserver for CountingInvalidations {
    fn on_invalidate(&mut self, offset_bytes: u64, len_bytes: u64) -> bool {
        self.invalidated.push((offset_bytes, len_bytes));
        false
    }
}

/// The ranges a `loops=3` read job over 64 KiB asks to drop, buffered or direct.
fn invalidations(direct: bool) -> Vec<(u64, u64)> {
    let mut job = JobSpec::new("passes", EngineKind::Null, Target::None);
    job.random_percent = 0;
    job.loops = 3;
    job.direct = direct;
    let region = Region {
        start_bytes: 1 << 20,
        len_bytes: 64 << 10,
    };
    let mut engine = Observed::new(
        open_engine(EngineKind::Null, None, &EngineOptions::default()).unwrap(),
        CountingInvalidations::default(),
    );
    let worker = drive_one(&mut engine, &job, region, 1, NS_PER_S);
    assert_eq!(worker.stats.read.ios, 3 * 16);
    engine.observer.invalidated
}

/// Regression (issue 24): a buffered job dropped the page cache once, before it started,
/// and measured the cache on every later pass; fio drops it at every loop.
#[test]
fn each_completed_pass_drops_the_regions_cached_pages_as_fio_does() {
    let region = (1 << 20, 64 << 10);
    assert_eq!(invalidations(false), [region, region]);
    assert!(
        invalidations(true).is_empty(),
        "O_DIRECT has no cache to drop"
    );
}

/// A device that holds every request handed to it and, each time it is looked at, has
/// finished the oldest `burst` of them: several completions per reap, as a fast device or
/// a busy host gives. It notes each reap's count and each submit's (held, handed over).
struct BurstDevice {
    submit_each: bool,
    burst: usize,
    buffers: Vec<Vec<u8>>,
    queued: Vec<IoRequest>,
    held: std::collections::VecDeque<IoRequest>,
    events: Vec<DeviceEvent>,
    clock_ns: u64,
    /// Where a full file system's space ends: a write past it fails with ENOSPC, one
    /// across it comes back short, as a file system's `write` does. `u64::MAX`: no end.
    space_end_bytes: u64,
}

impl BurstDevice {
    /// A device that completes `burst` requests per reap (handing each over on submit
    /// when `submit_each`), whose space ends at `space_end_bytes`.
    fn new(submit_each: bool, burst: usize, space_end_bytes: u64) -> Self {
        BurstDevice {
            submit_each,
            burst,
            buffers: Vec::new(),
            queued: Vec::new(),
            held: Default::default(),
            events: Vec::new(),
            clock_ns: 0,
            space_end_bytes,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DeviceEvent {
    Reaped(usize),
    Submitted { held: usize, handed: usize },
}

/// Virtual time a reap takes on the burst device (any positive step: the job ends on
/// its I/O count).
const BURST_REAP_STEP_NS: u64 = 1000;

impl storlab_engine::IoEngine for BurstDevice {
    fn name(&self) -> &'static str {
        "burst"
    }
    fn capabilities(&self) -> storlab_engine::Capabilities {
        storlab_engine::Capabilities {
            queued: true,
            moves_data: false,
            trim: false,
            shared_timeline: false,
            page_cache: false,
        }
    }
    fn target_size_bytes(&self) -> u64 {
        1 << 30
    }
    fn setup(&mut self, setup: &EngineSetup) -> Result<(), storlab_engine::EngineError> {
        self.buffers = vec![vec![0; setup.slot_bytes]; setup.slots as usize];
        Ok(())
    }
    fn buffer(&self, slot: u32) -> &[u8] {
        &self.buffers[slot as usize]
    }
    fn buffer_mut(&mut self, slot: u32) -> &mut [u8] {
        &mut self.buffers[slot as usize]
    }
    fn queue(&mut self, request: IoRequest) -> Result<(), storlab_engine::EngineError> {
        self.queued.push(request);
        Ok(())
    }
    fn submit(&mut self) -> Result<usize, storlab_engine::EngineError> {
        let handed = self.queued.len();
        self.events.push(DeviceEvent::Submitted {
            held: self.held.len(),
            handed,
        });
        self.held.extend(self.queued.drain(..));
        Ok(handed)
    }
    fn submits_each_request(&self) -> bool {
        self.submit_each
    }
    fn reap(
        &mut self,
        min: usize,
        out: &mut Vec<IoCompletion>,
    ) -> Result<usize, storlab_engine::EngineError> {
        self.clock_ns += BURST_REAP_STEP_NS;
        let n = self.burst.max(min).min(self.held.len());
        for request in self.held.drain(..n) {
            let end_bytes = request.offset_bytes + u64::from(request.len_bytes);
            let result = match request.direction {
                IoDirection::Write if request.offset_bytes >= self.space_end_bytes => {
                    Err(ERRNO_ENOSPC)
                }
                IoDirection::Write if end_bytes > self.space_end_bytes => {
                    Ok((self.space_end_bytes - request.offset_bytes) as u32)
                }
                _ => Ok(request.len_bytes),
            };
            out.push(IoCompletion {
                slot: request.slot,
                result,
                done_ns: self.clock_ns,
            });
        }
        self.events.push(DeviceEvent::Reaped(n));
        Ok(n)
    }
    fn now_ns(&self) -> u64 {
        self.clock_ns
    }
    fn wait_until_ns(&mut self, deadline_ns: u64) {
        self.clock_ns = self.clock_ns.max(deadline_ns);
    }
}

/// 3200 sequential 4 KiB reads at QD32 on a device that completes 8 at a time; what it saw.
fn burst_run(submit_each: bool) -> (Worker, Vec<DeviceEvent>) {
    const QD: u32 = 32;
    const IOS: u64 = 3200;
    let mut job = JobSpec::new("burst", EngineKind::Null, Target::None);
    job.random_percent = 0;
    job.iodepth = QD;
    let region = Region {
        start_bytes: 0,
        len_bytes: IOS * 4096,
    };
    let mut engine = BurstDevice::new(submit_each, 8, u64::MAX);
    let worker = drive_one(&mut engine, &job, region, QD, NS_PER_S);
    assert_eq!(worker.stats.read.ios, IOS);
    (worker, engine.events)
}

/// A 1 MiB sequential write at QD4 in 4 KiB blocks on a device whose space ends half a
/// block after `WHOLE_WRITES` blocks, with `shape` applied to the job.
fn write_until_full(shape: impl Fn(&mut JobSpec)) -> Worker {
    const QD: u32 = 4;
    let mut job = JobSpec::new("fill", EngineKind::Null, Target::None);
    job.random_percent = 0;
    job.read_percent = 0;
    job.iodepth = QD;
    shape(&mut job);
    let mut engine = BurstDevice::new(true, 1, WHOLE_WRITES * 4096 + 2048);
    let region = Region {
        start_bytes: 0,
        len_bytes: FILL_REGION_BYTES,
    };
    drive_one(&mut engine, &job, region, QD, NS_PER_S)
}

const WHOLE_WRITES: u64 = 25;
const FILL_REGION_BYTES: u64 = 1 << 20;

#[test]
fn a_fill_ends_without_error_at_the_first_write_the_space_cannot_hold() {
    let worker = write_until_full(|job| job.fill_device = true);
    assert!(worker.error.is_none(), "{:?}", worker.error);
    assert!(worker.failures.filled);
    // The short write and the ENOSPC ones after it count in no figure, as fio's.
    assert_eq!(worker.stats.write.ios, WHOLE_WRITES);
    assert_eq!(worker.stats.write.bytes, WHOLE_WRITES * 4096);
    assert_eq!(worker.stats.write.errors, 0);
    // Without fill_device the short write is the job's error, as before.
    let plain = write_until_full(|_| {});
    assert!(matches!(plain.error, Some(RunError::ShortIo { .. })));
}

#[test]
fn enospc_passed_by_ignore_error_is_counted_and_the_writes_go_on() {
    let worker = write_until_full(|job| {
        job.continue_on_error.write = true;
        job.continue_on_error.ignored_write = Some(vec![ERRNO_ENOSPC]);
    });
    assert!(worker.error.is_none(), "{:?}", worker.error);
    let all_writes = FILL_REGION_BYTES / 4096;
    assert_eq!(worker.stats.write.ios, WHOLE_WRITES);
    // The short write counts as the ENOSPC fio's retry of its rest gets.
    assert_eq!(worker.stats.write.errors, all_writes - WHOLE_WRITES);
    assert_eq!(worker.stats.first_error_errno, ERRNO_ENOSPC);
}

/// Issue 20: with io_uring and libaio at QD32, storlab handled every completion of a reap
/// before submitting their refills together, so the device went short of requests for the
/// length of that batch; fio (`iodepth_batch_submit=1`) hands each refill over at once.
/// An engine that asks for it now gets each freed slot back before the next completion is
/// handled: a burst of 8 completions is followed by 8 submits of one request each.
#[test]
fn each_freed_slot_goes_back_to_the_device_before_the_next_completion_is_handled() {
    let (worker, events) = burst_run(true);
    assert_eq!(
        events[0],
        DeviceEvent::Submitted {
            held: 0,
            handed: 32
        }
    );
    let mut held_after_reap = 32;
    let mut submits_since_reap = 0;
    for (i, event) in events.iter().enumerate().skip(1) {
        match *event {
            DeviceEvent::Reaped(n) => {
                assert!(submits_since_reap == 0 || held_after_reap + submits_since_reap == 32);
                assert!(n <= 8);
                held_after_reap = 32 - n;
                submits_since_reap = 0;
            }
            DeviceEvent::Submitted { held, handed } => {
                assert_eq!(handed, 1, "one request per submit, as fio: event {i}");
                assert_eq!(held, held_after_reap + submits_since_reap);
                submits_since_reap += 1;
            }
        }
    }
    // As fio's JSON shows it: after the first fill, each submit passed one I/O
    // (`iodepth_submit` 1-4) and each I/O was queued with 32 in flight (`iodepth_level`).
    let depth = &worker.stats.depth;
    assert_eq!(depth.submit[4], 1, "the first fill: {depth:?}");
    assert_eq!(depth.submit[1], 3200 - 32, "{depth:?}");
    assert_eq!(depth.level[5], 3200 - 31, "{depth:?}");

    // Engines that complete inside submit or on a virtual clock keep the batch.
    let (_, events) = burst_run(false);
    assert!(events[1..].iter().all(|e| matches!(
        e,
        DeviceEvent::Reaped(8)
            | DeviceEvent::Submitted {
                held: 24,
                handed: 8
            }
    )));
}

/// 3200 sequential 4 KiB reads at `batch`'s settings on a burst device that finishes
/// `burst` requests (or the reap's minimum) each time it is looked at.
fn batched_burst_run(
    iodepth: u32,
    batch: storlab_job::IoBatch,
    burst: usize,
) -> (Worker, Vec<DeviceEvent>) {
    const IOS: u64 = 3200;
    let mut job = JobSpec::new("batched", EngineKind::Null, Target::None);
    job.random_percent = 0;
    job.iodepth = iodepth;
    job.io_batch = Some(batch);
    let region = Region {
        start_bytes: 0,
        len_bytes: IOS * 4096,
    };
    let mut engine = BurstDevice::new(true, burst, u64::MAX);
    let worker = drive_one(&mut engine, &job, region, iodepth, NS_PER_S);
    assert_eq!(worker.stats.read.ios, IOS);
    (worker, engine.events)
}

/// fio's `iodepth=32 iodepth_batch=8 iodepth_low=16` (backend.c `do_io`,
/// `wait_for_completions`): the queue fills in submits of 8; once full, completions are
/// reaped one at a time until 16 are in flight, and the 16 free slots go back in two
/// submits of 8. Each submit's I/Os count at the depth the queue has when they go
/// (`td_io_commit`): 8, 16, 24, 32 for the first fill, then 24 and 32 in turn.
#[test]
fn batched_submits_refill_from_the_low_water_mark_as_fio() {
    let batch = storlab_job::IoBatch::fio(32, Some(8), None, None, Some(16));
    let (worker, events) = batched_burst_run(32, batch, 1);
    let submits: Vec<(usize, usize)> = events
        .iter()
        .filter_map(|e| match *e {
            DeviceEvent::Submitted { held, handed } => Some((held, handed)),
            DeviceEvent::Reaped(_) => None,
        })
        .collect();
    assert_eq!(submits.len(), 3200 / 8);
    assert_eq!(submits[..4], [(0, 8), (8, 8), (16, 8), (24, 8)]);
    for (i, pair) in submits[4..].chunks(2).enumerate() {
        assert_eq!(pair, [(16, 8), (24, 8)], "refill {i}");
    }
    // One completion per reap, until the job's end waits for the last 16 at once.
    let (last, reaps) = events.split_last().unwrap();
    assert_eq!(*last, DeviceEvent::Reaped(16));
    assert!(reaps
        .iter()
        .all(|e| !matches!(e, DeviceEvent::Reaped(n) if *n != 1)));
    let depth = &worker.stats.depth;
    assert_eq!(depth.submit[2], 400, "{depth:?}");
    assert_eq!(
        depth.level[3..6],
        [8, 8 + 8 + 198 * 8, 8 + 198 * 8],
        "{depth:?}"
    );
    assert_eq!(depth.complete[1..4], [3200 - 16, 0, 1], "{depth:?}");
}

/// fio's `iodepth_batch_complete_max`: a reap takes no more than the maximum, even when
/// the device has finished more (they wait for the next reap, as in the kernel's ring);
/// and fio's polling (`iodepth_batch_complete_min=0` and `_max=0`) waits for a completion
/// after every I/O, so only one is ever in flight. (The job's end waits for what is left
/// in one reap, as fio's `do_io` ends.)
#[test]
fn reaps_take_at_most_the_batch_maximum_and_polling_keeps_one_in_flight() {
    let batch = storlab_job::IoBatch::fio(32, None, Some(2), Some(3), None);
    let (worker, events) = batched_burst_run(32, batch, 8);
    assert!(events.contains(&DeviceEvent::Reaped(8)));
    let depth = &worker.stats.depth;
    let above_four: u64 = depth.complete[2..].iter().sum();
    assert_eq!(above_four, 1, "only the end took more than 4: {depth:?}");
    // At most 3 per reap: 3200 I/Os, less the end's, take more than a third as many reaps.
    assert!(depth.complete[1] >= (3200 - 32) / 3, "{depth:?}");

    let polling = storlab_job::IoBatch::fio(8, None, Some(0), Some(0), None);
    assert!(polling.polls());
    let (worker, events) = batched_burst_run(8, polling, 8);
    assert_eq!(
        worker.stats.depth.level[0], 3200,
        "{:?}",
        worker.stats.depth
    );
    assert!(events.iter().all(|e| matches!(
        e,
        DeviceEvent::Reaped(1) | DeviceEvent::Submitted { held: 0, handed: 1 }
    )));
}

/// Drive one worker of `job` over `region` on a null engine with `job.iodepth` slots of
/// 4 KiB, intervals of `interval_ns`, until the job's own end; returns the worker and the
/// engine (for its report).
fn drive_on_null(
    job: &JobSpec,
    region: Region,
    interval_ns: u64,
) -> (Worker, Box<dyn storlab_engine::IoEngine>) {
    let mut engine = open_engine(EngineKind::Null, None, &EngineOptions::default()).unwrap();
    let worker = drive_one(engine.as_mut(), job, region, job.iodepth, interval_ns);
    (worker, engine)
}

/// Set `engine` up with `slots` slots of 4 KiB and drive one worker of `job` over `region`
/// (intervals of `interval_ns`) until the job's own end.
fn drive_one(
    engine: &mut dyn storlab_engine::IoEngine,
    job: &JobSpec,
    region: Region,
    slots: u32,
    interval_ns: u64,
) -> Worker {
    engine
        .setup(&EngineSetup {
            slots,
            slot_bytes: 4096,
            buffer_align_bytes: 4096,
        })
        .unwrap();
    let mut workers = vec![Worker::new(0, job, 0, region, 0, interval_ns)];
    let timing = Timing {
        ramp_ns: 0,
        runtime_ns: job.runtime_ns,
        start_delay_ns: 0,
    };
    drive(
        engine,
        &mut workers,
        timing,
        &AtomicBool::new(false),
        &AtomicBool::new(false),
        None,
    )
    .unwrap();
    workers.remove(0)
}

/// A sequential write job of `ios` 4 KiB I/Os on the null engine; what the engine reports
/// and how long the run took.
fn null_write_run(ios: u64, shape: impl Fn(&mut JobSpec)) -> (u64, u64) {
    let mut job = JobSpec::new("sync", EngineKind::Null, Target::None);
    job.read_percent = 0;
    job.random_percent = 0;
    shape(&mut job);
    let region = Region {
        start_bytes: 0,
        len_bytes: ios * 4096,
    };
    let started = std::time::Instant::now();
    let (worker, engine) = drive_on_null(&job, region, NS_PER_S);
    let elapsed_ns = started.elapsed().as_nanos() as u64;
    assert_eq!(worker.stats.write.ios, ios);
    let flushes = engine.report().detail("flushes").unwrap().parse().unwrap();
    (flushes, elapsed_ns)
}

/// fio's `fsync=N`: a sync after every N writes, before the next I/O (none after the last
/// write), and `end_fsync` one more at the end unless a sync was the last thing done.
#[test]
fn fsync_every_n_writes_and_at_the_end_as_fio() {
    let flushes = |fsync: u32, fdatasync: u32, end: bool, iodepth: u32| {
        null_write_run(16, |job| {
            job.sync.fsync_every_writes = fsync;
            job.sync.fdatasync_every_writes = fdatasync;
            job.sync.end_fsync = end;
            job.iodepth = iodepth;
        })
        .0
    };
    assert_eq!(flushes(0, 0, false, 1), 0);
    assert_eq!(flushes(3, 0, false, 1), 5);
    assert_eq!(flushes(3, 0, true, 1), 6);
    assert_eq!(
        flushes(4, 0, true, 1),
        4,
        "the 16th write was synced already"
    );
    assert_eq!(flushes(0, 2, false, 1), 7);
    assert_eq!(flushes(0, 0, true, 1), 1);
    // A deeper queue drains before each sync; the count is the same.
    assert_eq!(flushes(3, 0, true, 8), 6);
}

/// fio's `thinktime`: a stall after every `thinktime_blocks` I/Os, the queue drained first.
#[test]
fn thinktime_stalls_after_every_thinktime_blocks() {
    const THINK_NS: u64 = 3_000_000;
    let (_, plain_ns) = null_write_run(16, |_| {});
    let (_, think_ns) = null_write_run(16, |job| {
        job.think.think_ns = THINK_NS;
        job.think.every_ios = Some(4);
    });
    // Stalls after the 4th, 8th and 12th I/O (none after the last).
    assert!(think_ns >= 3 * THINK_NS, "{think_ns} ns");
    assert!(
        think_ns < 4 * THINK_NS + plain_ns + 50_000_000,
        "{think_ns} ns"
    );
    // Spinning is part of the stall, not added to it.
    let (_, spin_ns) = null_write_run(16, |job| {
        job.think.think_ns = THINK_NS;
        job.think.spin_ns = THINK_NS;
        job.think.every_ios = Some(8);
    });
    assert!(spin_ns >= THINK_NS, "{spin_ns} ns");
    assert!(
        spin_ns < 2 * THINK_NS + plain_ns + 50_000_000,
        "{spin_ns} ns"
    );
}

/// `rate_process=poisson`: the spacing of rated I/Os is exponential with the rate's mean
/// (standard deviation equal to the mean); linear keeps it constant.
#[test]
fn rate_process_poisson_spaces_rated_ios_exponentially() {
    const MEAN_NS: u64 = 1_000_000;
    const DRAWS: usize = 20_000;
    let spacing = |poisson: bool| {
        let mut job = JobSpec::new("rated", EngineKind::Null, Target::None);
        job.rate_poisson = poisson;
        let region = Region {
            start_bytes: 0,
            len_bytes: 1 << 20,
        };
        let mut worker = Worker::new(0, &job, 0, region, 0, NS_PER_S);
        let gaps: Vec<f64> = (0..DRAWS)
            .map(|_| worker.rate.spacing_ns(MEAN_NS) as f64)
            .collect();
        let mean = gaps.iter().sum::<f64>() / DRAWS as f64;
        let variance = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / DRAWS as f64;
        (mean, variance.sqrt())
    };
    assert_eq!(spacing(false), (MEAN_NS as f64, 0.0));
    let (mean, deviation) = spacing(true);
    assert!((mean / MEAN_NS as f64 - 1.0).abs() < 0.03, "{mean}");
    assert!((deviation / mean - 1.0).abs() < 0.05, "{deviation}");
}
/// A rated worker held back (by a flow, a stall, a slow device) catches up at once, as fio's
/// `usec_for_io` places each I/O at the time its rate gives the I/O issued so far: at 1000 IOPS
/// and held for 5 ms after its first I/O, the next five go together, then one a millisecond.
#[test]
fn a_rated_worker_held_back_catches_up_as_fio() {
    const MS: u64 = 1_000_000;
    let mut job = JobSpec::new("rated", EngineKind::Null, Target::None);
    job.read_percent = 100;
    job.rate_iops.read = Some(1000);
    let region = Region {
        start_bytes: 0,
        len_bytes: 1 << 20,
    };
    let mut worker = Worker::new(0, &job, 0, region, 0, NS_PER_S);
    let io = PlannedIo {
        direction: IoDirection::Read,
        offset_bytes: 0,
        len_bytes: 4096,
    };
    let start = 7 * MS;
    assert!(matches!(worker.pace(&io, start), Gate::Go));
    let later = start + 5 * MS;
    let went = (0..10)
        .take_while(|_| matches!(worker.pace(&io, later), Gate::Go))
        .count();
    assert_eq!(went, 5, "the 5 ms held back are made up at once");
    assert!(matches!(worker.pace(&io, later), Gate::Wait(Some(t)) if t == start + 6 * MS));
}

/// fio's `rate_min`: a job held to 100 IOPS of 4 KiB (400 KiB/s) fails a 1 MiB/s minimum
/// and passes a 100 KiB/s one.
#[test]
fn rate_min_fails_a_job_below_it() {
    const INTERVAL_NS: u64 = 100_000_000;
    let run = |minimum_bytes_per_s: u64| {
        let mut job = JobSpec::new("slow", EngineKind::Null, Target::None);
        job.random_percent = 0;
        job.rate_iops.read = Some(100);
        job.time_based = true;
        job.runtime_ns = Some(5 * INTERVAL_NS);
        job.rate_min.read = Some(minimum_bytes_per_s);
        job.rate_min.write = Some(minimum_bytes_per_s);
        let region = Region {
            start_bytes: 0,
            len_bytes: 1 << 20,
        };
        let (mut worker, _) = drive_on_null(&job, region, INTERVAL_NS);
        worker.error.take().map(|e| e.to_string())
    };
    let error = run(1 << 20).expect("below the minimum");
    assert!(error.contains("rate_min: read moved"), "{error}");
    assert_eq!(
        run(100 << 10),
        None,
        "writes were never asked for: not judged"
    );
}

/// fio's `rate_iops_min`: a job held to 100 IOPS fails a 150 IOPS minimum and passes a 50
/// IOPS one.
#[test]
fn rate_iops_min_fails_a_job_below_it() {
    const INTERVAL_NS: u64 = 100_000_000;
    let run = |minimum_ios_per_s: u64| {
        let mut job = JobSpec::new("slow", EngineKind::Null, Target::None);
        job.random_percent = 0;
        job.rate_iops.read = Some(100);
        job.time_based = true;
        job.runtime_ns = Some(5 * INTERVAL_NS);
        job.rate_iops_min.read = Some(minimum_ios_per_s);
        let region = Region {
            start_bytes: 0,
            len_bytes: 1 << 20,
        };
        let (mut worker, _) = drive_on_null(&job, region, INTERVAL_NS);
        worker.error.take().map(|e| e.to_string())
    };
    let error = run(150).expect("below the minimum");
    assert!(
        error.contains("rate_iops_min: read did 100 I/Os per second"),
        "{error}"
    );
    assert_eq!(run(50), None);
}

/// fio's `steadystate`: a rated job is steady at once and stops long before its runtime.
#[test]
fn a_steady_job_stops_before_its_runtime() {
    const INTERVAL_NS: u64 = 100_000_000;
    let mut job = JobSpec::new("steady", EngineKind::Null, Target::None);
    job.random_percent = 0;
    job.rate_iops.read = Some(2000);
    job.time_based = true;
    job.runtime_ns = Some(20 * NS_PER_S);
    job.steadystate = Some(SteadyStateSpec {
        bandwidth: false,
        slope: false,
        limit_micros: 20_000_000,
        percent: true,
        duration_ns: 5 * INTERVAL_NS,
        ramp_ns: INTERVAL_NS,
    });
    let region = Region {
        start_bytes: 0,
        len_bytes: 1 << 20,
    };
    let (worker, _) = drive_on_null(&job, region, INTERVAL_NS);
    let workers = [worker];
    assert!(workers[0].checks.steady_reached);
    // Ramp, then a window of five intervals: well under the 20 s runtime.
    assert!(
        workers[0].stats.elapsed_ns < 5 * NS_PER_S,
        "{}",
        workers[0].stats.elapsed_ns
    );
    // The window after the ramp is five intervals (0.5 s) at 2000 IOPS: about 1000 I/Os,
    // fewer when the machine is loaded (996 was seen); half of that says the job measured.
    assert!(
        workers[0].stats.read.ios >= 2000 / 4,
        "{}",
        workers[0].stats.read.ios
    );
}

/// fio's `--status-interval` snapshots (live.rs): while watched, a running drive publishes its
/// statistics so far with each period, cumulative and growing, and its last one is what the
/// drive's final statistics say (the same charging of elapsed time).
#[test]
fn snapshots_are_the_statistics_so_far_and_the_last_is_the_final() {
    let mut job = JobSpec::new("snap", EngineKind::Null, Target::None);
    job.runtime_ns = Some(60_000_000);
    job.time_based = true;
    let live = crate::LiveCounters::new();
    live.watch(10_000_000);
    live.watch_snapshots(true);
    let mut engine = open_engine(EngineKind::Null, None, &EngineOptions::default()).unwrap();
    engine
        .setup(&EngineSetup {
            slots: 1,
            slot_bytes: 4096,
            buffer_align_bytes: 4096,
        })
        .unwrap();
    let region = Region {
        start_bytes: 0,
        len_bytes: 1 << 20,
    };
    let mut workers = vec![Worker::new(0, &job, 0, region, 0, NS_PER_S)];
    let timing = Timing {
        ramp_ns: 0,
        runtime_ns: job.runtime_ns,
        start_delay_ns: 0,
    };
    let (stop, ended) = (AtomicBool::new(false), AtomicBool::new(false));
    drive(
        engine.as_mut(),
        &mut workers,
        timing,
        &stop,
        &ended,
        Some(&live),
    )
    .unwrap();
    let snapshots: Vec<crate::live::LiveSnapshot> = live
        .take_events()
        .into_iter()
        .filter_map(|event| match event {
            crate::live::LiveEvent::Snapshot(snapshot) => Some(*snapshot),
            _ => None,
        })
        .collect();
    assert!(snapshots.len() >= 3, "{} snapshots", snapshots.len());
    let figures: Vec<(u64, u64)> = snapshots
        .iter()
        .map(|s| (s.workers[0].2.elapsed_ns, s.workers[0].2.read.ios))
        .collect();
    // A drive that ends as a period closes repeats its last figures (time stops at the end).
    assert!(
        figures
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1),
        "{figures:?}"
    );
    assert!(figures[0].0 < figures[figures.len() - 1].0, "{figures:?}");
    let last = &snapshots.last().unwrap().workers[0].2;
    let done = &workers[0].stats;
    assert_eq!(
        (last.elapsed_ns, last.read.ios, last.read.bytes),
        (done.elapsed_ns, done.read.ios, done.read.bytes)
    );
    assert_eq!(snapshots[0].engine_name, "null");
    assert_eq!(snapshots[0].job_thread_number, 1);
}
