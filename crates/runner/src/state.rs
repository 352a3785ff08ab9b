//! Device-state steps on any engine: discarding a region (TRIM: BLKDISCARD on block devices,
//! hole punching on files, SCSI UNMAP on simulated drives) as ordinary `IoDirection::Trim`
//! requests, and running preparation jobs whose results are not reported.

use crate::{plan_regions, run_jobs, EngineProvider, JobOutcome, RunError, RunOptions};
use std::sync::atomic::Ordering;
use storlab_engine::{EngineReport, EngineSetup, IoCompletion, IoDirection, IoRequest};
use storlab_job::steps::Step;
use storlab_job::{JobSet, JobSpec};

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
            let outcomes: Vec<JobOutcome> = run_jobs(&set, provider, options, &mut |_| {})?;
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
}
