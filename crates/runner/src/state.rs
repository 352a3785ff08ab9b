//! Device-state steps on any engine: discarding a region (TRIM: BLKDISCARD on block devices,
//! hole punching on files, SCSI UNMAP on simulated drives) as ordinary `IoDirection::Trim`
//! requests, and running preparation jobs whose results are not reported.
//!
//! A state acts on the measured regions only: `covering_regions` resolves every point's
//! regions (shares included) once the target is open, and `state_steps` builds one byte-exact
//! job per resulting region, so no fill, TRIM or fragmenting write touches a byte no point
//! measures.

use crate::{plan_regions, run_jobs, EngineProvider, JobOutcome, Region, RunError, RunOptions};
use std::sync::atomic::Ordering;
use storlab_engine::{EngineReport, EngineSetup, IoCompletion, IoDirection, IoRequest};
use storlab_job::steps::{DeviceState, Step, FRAGMENT_BLOCK_BYTES, SEQ_FILL_BLOCK_BYTES};
use storlab_job::{BlockSizeSpec, JobSet, JobSpec, TargetShares};

/// Length of one discard request. Large, so a whole drive takes few requests, yet far below
/// `u32::MAX` and a multiple of every erase-block size in use.
pub const TRIM_CHUNK_BYTES: u64 = 256 << 20;
/// Discards outstanding at once on engines that queue.
pub const TRIM_QUEUE_DEPTH: u32 = 4;
/// Trims carry no data; each slot still needs a minimal buffer.
const TRIM_SLOT_BYTES: usize = 4096;

/// What a step did.
#[derive(Debug)]
pub struct StepOutcome {
    /// Bytes discarded (trim) or written (preparation).
    pub bytes: u64,
    /// The engine's report after the step (the simulator's is cumulative).
    pub engine_report: Option<EngineReport>,
    /// Stopped by the stop flag before the end.
    pub interrupted: bool,
}

/// The bytes `jobs` measure on a target of `target_size_bytes`: every worker region of every
/// job (shares resolved against the size), sorted, with overlapping or touching regions merged.
/// Disjoint regions stay apart, so a state never touches the gap between two measured areas.
pub fn covering_regions<'a>(
    jobs: impl IntoIterator<Item = &'a JobSpec>,
    target_size_bytes: u64,
) -> Result<Vec<Region>, RunError> {
    let mut regions = Vec::new();
    for job in jobs {
        regions.extend(plan_regions(job, target_size_bytes)?);
    }
    regions.sort_by_key(|r| r.start_bytes);
    let mut merged: Vec<Region> = Vec::with_capacity(regions.len());
    for region in regions {
        let end = region.start_bytes + region.len_bytes;
        match merged.last_mut() {
            Some(last) if region.start_bytes <= last.start_bytes + last.len_bytes => {
                last.len_bytes = end.max(last.start_bytes + last.len_bytes) - last.start_bytes;
            }
            _ => merged.push(region),
        }
    }
    Ok(merged)
}

/// `template`'s target, engine and I/O settings on exactly `region`: one worker, bytes only,
/// aligned to the largest power of two (at most the template's alignment) that divides both
/// ends, so planning it neither moves its start nor shortens it.
pub fn region_job(template: &JobSpec, region: Region) -> JobSpec {
    let mut job = template.clone();
    job.numjobs = 1;
    job.offset_bytes = region.start_bytes;
    job.offset_increment_bytes = 0;
    job.size_bytes = Some(region.len_bytes);
    job.target_shares = TargetShares::default();
    let template_align = template.align_bytes.max(1);
    let mut align = 1u64 << template_align.ilog2();
    while align > 1
        && !(region.start_bytes.is_multiple_of(align) && region.len_bytes.is_multiple_of(align))
    {
        align /= 2;
    }
    job.align_bytes = align;
    job
}

/// The steps that put every one of `regions` in `state`, through `template`'s target and
/// engine: each kind of step over all regions before the next kind (all TRIMs, then all
/// fills, then the fragmenting writes), the fragmenting writes shared among the regions in
/// proportion to their sizes. Transfers larger than a region shrink to it, and a region whose
/// length is not a whole number of fill transfers gets its tail as a region of its own, so the
/// fill writes every byte once instead of wrapping round to the region's start.
pub fn state_steps(state: DeviceState, template: &JobSpec, regions: &[Region]) -> Vec<Step> {
    let regions: Vec<Region> = regions
        .iter()
        .flat_map(|region| {
            let body_bytes = region.len_bytes / SEQ_FILL_BLOCK_BYTES * SEQ_FILL_BLOCK_BYTES;
            let tail_bytes = region.len_bytes - body_bytes;
            [
                Region {
                    start_bytes: region.start_bytes,
                    len_bytes: body_bytes,
                },
                Region {
                    start_bytes: region.start_bytes + body_bytes,
                    len_bytes: tail_bytes,
                },
            ]
        })
        .filter(|region| region.len_bytes > 0)
        .collect();
    let total_bytes: u64 = regions.iter().map(|r| r.len_bytes).sum();
    let mut per_region: Vec<Vec<Step>> = Vec::with_capacity(regions.len());
    let mut before_bytes = 0u64;
    for region in &regions {
        let job = region_job(template, *region);
        let after_bytes = before_bytes + region.len_bytes;
        // Each random-write total is shared among the regions by size, with cumulative
        // rounding: the regions' shares add up to exactly the blocks asked.
        let share = |bytes: u64| {
            let blocks = u128::from(bytes / FRAGMENT_BLOCK_BYTES);
            let share_end =
                |end: u64| (blocks * u128::from(end) / u128::from(total_bytes.max(1))) as u64;
            (share_end(after_bytes) - share_end(before_bytes)) * FRAGMENT_BLOCK_BYTES
        };
        let region_state = match state {
            DeviceState::Fragmented { bytes } => DeviceState::Fragmented {
                bytes: share(bytes),
            },
            DeviceState::Chain(chain) => DeviceState::Chain(chain.map_random_bytes(share)),
            other => other,
        };
        before_bytes = after_bytes;
        let steps = region_state
            .steps(&job)
            .into_iter()
            .map(|step| fit_to_region(step, state, region_state, region.len_bytes))
            .collect();
        per_region.push(steps);
    }
    // Every region has the same steps in the same order, so step `kind` of each is the same
    // kind; a region's share of random writes may be none, and that step is dropped only now,
    // so it cannot shift a later step (a chain's TRIM after its writes) into the wrong kind.
    let kinds = per_region.iter().map(Vec::len).max().unwrap_or(0);
    (0..kinds)
        .flat_map(|kind| {
            per_region
                .iter()
                .filter_map(move |steps| steps.get(kind).cloned())
        })
        .filter(|step| step.job().number_ios != Some(0))
        .collect()
}

/// `step` with transfers no larger than its region and the whole state's labels: a region's
/// share of the random writes (`region_state`) is not the state the target ends in (`state`).
fn fit_to_region(
    step: Step,
    state: DeviceState,
    region_state: DeviceState,
    region_len_bytes: u64,
) -> Step {
    let fit = |spec: &mut BlockSizeSpec| {
        if let BlockSizeSpec::Fixed(bytes) = spec {
            *bytes = (*bytes).min(region_len_bytes);
        }
    };
    match step {
        Step::Trim { mut job } => {
            fit(&mut job.block_size_read);
            fit(&mut job.block_size_write);
            Step::Trim { job }
        }
        Step::Prepare {
            mut job,
            state_after,
        } => {
            fit(&mut job.block_size_read);
            fit(&mut job.block_size_write);
            let state_after = whole_state_label(&state_after, state, region_state);
            Step::Prepare { job, state_after }
        }
    }
}

/// `label` (a state after a step of `region_state`'s steps) with the region's random-write
/// totals replaced by the whole state's: the label after the same step of `state`'s steps.
fn whole_state_label(label: &str, state: DeviceState, region_state: DeviceState) -> String {
    let region_labels: Vec<String> = region_state.label().split(',').map(String::from).collect();
    let whole_labels: Vec<String> = state.label().split(',').map(String::from).collect();
    let links: Vec<&str> = label.split(',').collect();
    // A step's label is the chain up to its link, so link i of the label is link i of the
    // state, except a fill inside `fragmented:SIZE`, labelled `seq-filled` where the state
    // has `fragmented:SIZE`.
    links
        .iter()
        .enumerate()
        .map(
            |(i, link)| match (region_labels.get(i), whole_labels.get(i)) {
                (Some(region), Some(whole)) if region == link => whole.clone(),
                _ => (*link).to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join(",")
}

/// Run one step on the target of its job.
pub fn run_step(
    step: &Step,
    provider: &mut dyn EngineProvider,
    options: &RunOptions<'_>,
) -> Result<StepOutcome, RunError> {
    match step {
        Step::Trim { job } => trim_regions(job, provider, options),
        Step::Prepare { job, .. } => {
            let set = JobSet {
                jobs: vec![job.clone()],
            };
            let outcomes = run_jobs(&set, provider, options, &mut |_| {})?;
            let outcomes: Vec<JobOutcome> = crate::io_failure_ends_the_run(outcomes)?;
            let interrupted = outcomes.iter().any(|o| o.interrupted);
            let bytes = outcomes
                .iter()
                .flat_map(|o| &o.workers)
                .map(|w| w.write.bytes)
                .sum();
            Ok(StepOutcome {
                bytes,
                engine_report: outcomes
                    .last()
                    .and_then(|o| o.engine_reports.first().cloned()),
                interrupted,
            })
        }
    }
}

/// Discard every worker region of `job` through the first engine the provider opens for it.
pub fn trim_regions(
    job: &JobSpec,
    provider: &mut dyn EngineProvider,
    options: &RunOptions<'_>,
) -> Result<StepOutcome, RunError> {
    let mut engines = provider.open(job)?;
    let result = (|| {
        let engine = engines
            .first_mut()
            .ok_or_else(|| RunError::Protocol("provider opened no engine".into()))?;
        if !engine.capabilities().trim {
            return Err(RunError::Plan {
                job: job.name.clone(),
                reason: format!(
                    "the {} engine cannot discard, so the device state cannot be reset",
                    engine.name()
                ),
            });
        }
        let regions = plan_regions(job, engine.target_size_bytes())?;
        let depth = if engine.capabilities().queued {
            TRIM_QUEUE_DEPTH
        } else {
            1
        };
        engine.setup(&EngineSetup {
            slots: depth,
            slot_bytes: TRIM_SLOT_BYTES,
            buffer_align_bytes: crate::BUFFER_ALIGN_BYTES,
        })?;
        let mut chunks = regions.iter().flat_map(|region| {
            let end = region.start_bytes + region.len_bytes;
            (region.start_bytes..end)
                .step_by(TRIM_CHUNK_BYTES as usize)
                .map(move |start| (start, (end - start).min(TRIM_CHUNK_BYTES) as u32))
        });
        let mut free_slots: Vec<u32> = (0..depth).rev().collect();
        let mut offsets = vec![0u64; depth as usize];
        let mut outstanding = 0usize;
        let mut trimmed_bytes = 0u64;
        let mut interrupted = false;
        let mut completions: Vec<IoCompletion> = Vec::with_capacity(depth as usize);
        loop {
            interrupted |= options.stop.load(Ordering::Relaxed);
            let mut queued = 0;
            while !interrupted && !free_slots.is_empty() {
                let Some((offset_bytes, len_bytes)) = chunks.next() else {
                    break;
                };
                let slot = free_slots.pop().expect("checked non-empty");
                offsets[slot as usize] = offset_bytes;
                engine.queue(IoRequest {
                    slot,
                    direction: IoDirection::Trim,
                    offset_bytes,
                    len_bytes,
                    ioprio: None,
                })?;
                queued += 1;
            }
            if queued > 0 {
                engine.submit()?;
                outstanding += queued;
            }
            if outstanding == 0 {
                break;
            }
            completions.clear();
            engine.reap(1, &mut completions)?;
            for c in &completions {
                outstanding -= 1;
                free_slots.push(c.slot);
                match c.result {
                    Ok(n) => trimmed_bytes += u64::from(n),
                    Err(errno) => {
                        return Err(RunError::Io {
                            offset_bytes: offsets.get(c.slot as usize).copied().unwrap_or(0),
                            len_bytes: 0,
                            source: std::io::Error::from_raw_os_error(errno),
                        })
                    }
                }
            }
        }
        Ok(StepOutcome {
            bytes: trimmed_bytes,
            engine_report: Some(engine.report()),
            interrupted,
        })
    })();
    provider.release(job, engines);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;
    use std::sync::atomic::AtomicBool;
    use storlab_engine::registry::{open_engine, EngineOptions};
    use storlab_engine::target::{open_target, OpenTarget};
    use storlab_engine::IoEngine;
    use storlab_job::steps::DeviceState;
    use storlab_job::{EngineKind, Target};

    /// Opens psync engines on one file, as the CLI's provider does.
    struct FileProvider {
        target: OpenTarget,
    }

    impl EngineProvider for FileProvider {
        fn open(&mut self, job: &JobSpec) -> Result<Vec<Box<dyn IoEngine + Send>>, RunError> {
            (0..job.numjobs)
                .map(|_| {
                    open_engine(
                        EngineKind::Psync,
                        Some(&self.target),
                        &EngineOptions::default(),
                    )
                    .map_err(RunError::Engine)
                })
                .collect()
        }
    }

    const FILE_BYTES: u64 = 8 << 20;

    #[test]
    fn fresh_punches_the_whole_region_and_seq_filled_writes_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        let target = open_target(&Target::Path(path.clone()), FILE_BYTES, false, true, None)
            .expect("temp file opens");
        let allocated = || std::fs::metadata(&path).unwrap().blocks() * 512;
        assert!(allocated() >= FILE_BYTES, "laid out before the test");
        let mut provider = FileProvider { target };
        let stop = AtomicBool::new(false);
        let options = RunOptions {
            interval_ns: crate::DEFAULT_INTERVAL_NS,
            stop: &stop,
            live: None,
        };
        let mut template = JobSpec::new("t", EngineKind::Psync, Target::Path(path.clone()));
        template.size_bytes = Some(FILE_BYTES);
        let steps = DeviceState::SeqFilled.steps(&template);
        let trimmed = run_step(&steps[0], &mut provider, &options).unwrap();
        assert_eq!(trimmed.bytes, FILE_BYTES);
        assert!(
            allocated() < FILE_BYTES / 8,
            "holes punched: {} bytes still allocated",
            allocated()
        );
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            FILE_BYTES,
            "size kept"
        );
        let filled = run_step(&steps[1], &mut provider, &options).unwrap();
        assert_eq!(filled.bytes, FILE_BYTES);
        assert!(allocated() >= FILE_BYTES);
    }

    /// Regression: a trim planned its region with the fill's 128 KiB block, so
    /// `--trim-between-steps` refused h2benchw's 64 KiB point.
    #[test]
    fn a_region_smaller_than_a_fill_block_is_trimmed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        let target =
            open_target(&Target::Path(path.clone()), FILE_BYTES, false, true, None).unwrap();
        let mut provider = FileProvider { target };
        let stop = AtomicBool::new(false);
        let options = RunOptions {
            interval_ns: crate::DEFAULT_INTERVAL_NS,
            stop: &stop,
            live: None,
        };
        let mut job = JobSpec::new("t", EngineKind::Psync, Target::Path(path));
        job.offset_bytes = 1 << 20;
        job.size_bytes = Some(64 << 10);
        let steps = DeviceState::Fresh.steps(&job);
        let trimmed = run_step(&steps[0], &mut provider, &options).unwrap();
        assert_eq!(trimmed.bytes, 64 << 10);
    }

    #[test]
    fn a_stop_request_ends_a_trim_early_without_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        let target =
            open_target(&Target::Path(path.clone()), FILE_BYTES, false, true, None).unwrap();
        let mut provider = FileProvider { target };
        let stop = AtomicBool::new(true);
        let options = RunOptions {
            interval_ns: crate::DEFAULT_INTERVAL_NS,
            stop: &stop,
            live: None,
        };
        let mut job = JobSpec::new("t", EngineKind::Psync, Target::Path(path));
        job.size_bytes = Some(FILE_BYTES);
        let outcome = trim_regions(&job, &mut provider, &options).unwrap();
        assert!(outcome.interrupted);
        assert_eq!(outcome.bytes, 0);
    }

    /// The reviews' states as chains (issue 18, item 8), on a file: a fill then a TRIM of
    /// everything leaves the region discarded, and the sweeper records the chain, not the
    /// `fresh` its last TRIM alone would say; a virgin region then random writes is not filled.
    #[test]
    fn a_chain_runs_its_links_in_order_and_records_the_whole_chain() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        let target =
            open_target(&Target::Path(path.clone()), FILE_BYTES, false, true, None).unwrap();
        let allocated = || std::fs::metadata(&path).unwrap().blocks() * 512;
        let mut provider = FileProvider { target };
        let stop = AtomicBool::new(false);
        let options = RunOptions {
            interval_ns: crate::DEFAULT_INTERVAL_NS,
            stop: &stop,
            live: None,
        };
        let mut template = JobSpec::new("t", EngineKind::Psync, Target::Path(path.clone()));
        template.size_bytes = Some(FILE_BYTES);
        let regions = covering_regions([&template], FILE_BYTES).unwrap();

        let filled_then_trimmed = DeviceState::parse("seq-filled,trim-all").unwrap();
        let kinds: Vec<&str> = state_steps(filled_then_trimmed, &template, &regions)
            .iter()
            .map(|step| match step {
                Step::Trim { .. } => "trim",
                Step::Prepare { .. } => "write",
            })
            .collect();
        assert_eq!(kinds, ["trim", "write", "trim"]);
        let mut sweeper = crate::sweep::Sweeper::new(&mut provider, &options);
        assert!(!sweeper
            .prepare(filled_then_trimmed, &template, &regions)
            .unwrap());
        assert_eq!(sweeper.state(), "seq-filled,trim-all");
        assert!(
            allocated() < FILE_BYTES / 8,
            "the last TRIM discarded the fill: {} bytes still allocated",
            allocated()
        );

        let randwrite_bytes = 1 << 20;
        let virgin_then_written = DeviceState::parse("fresh,randwrite:1m").unwrap();
        assert!(!sweeper
            .prepare(virgin_then_written, &template, &regions)
            .unwrap());
        assert_eq!(sweeper.state(), "fresh,randwrite:1MiB");
        // 256 random 4 KiB writes, repeats allowed: at most 1 MiB allocated, no fill.
        assert!(
            allocated() <= randwrite_bytes + FILE_BYTES / 16 && allocated() > 0,
            "{} bytes allocated",
            allocated()
        );
    }

    /// Random writes shared among disjoint regions leave a small region none; its share is
    /// dropped without moving the chain's later TRIM ahead of the other regions' writes.
    #[test]
    fn a_chains_steps_keep_their_order_over_disjoint_regions() {
        let template = JobSpec::new("t", EngineKind::Sim, Target::Sim("x".into()));
        let regions = [
            Region {
                start_bytes: 0,
                len_bytes: 4096,
            },
            Region {
                start_bytes: 128 << 20,
                len_bytes: 64 << 20,
            },
        ];
        let state = DeviceState::parse("fresh,randwrite:16k,trim-all").unwrap();
        let steps = state_steps(state, &template, &regions);
        let kinds: Vec<(&str, u64)> = steps
            .iter()
            .map(|step| {
                let kind = match step {
                    Step::Trim { .. } => "trim",
                    Step::Prepare { .. } => "write",
                };
                (kind, step.job().offset_bytes)
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("trim", 0),
                ("trim", 128 << 20),
                ("write", 128 << 20),
                ("trim", 0),
                ("trim", 128 << 20)
            ]
        );
        let Step::Prepare { job, state_after } = &steps[2] else {
            panic!("random writes expected")
        };
        assert_eq!(job.number_ios, Some(4), "all 16 KiB fell to the big region");
        assert_eq!(state_after, "fresh,randwrite:16KiB");
    }
}
