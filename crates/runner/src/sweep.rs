//! Sweeps: runs preset points one after another on one target, puts the target in the state a
//! preset or the user asked for, records for every point the state it was measured in, and
//! checks each result for honesty (a figure the target cannot physically produce is flagged).

use crate::state::run_step;
use crate::{run_jobs, EngineProvider, JobOutcome, RunError, RunOptions};
use std::collections::BTreeMap;
use storlab_engine::EngineReport;
use storlab_job::preset::SweepPoint;
use storlab_job::steps::{DeviceState, Step};
use storlab_job::{EngineKind, JobSet, JobSpec};

/// Engine-report key: requests the simulated driver merged (cumulative over the session).
pub const DETAIL_MERGED_REQUESTS: &str = "sim.merged_requests";
/// Engine-report key: `COUNTxSIZE` pairs of the transfers that reached the drive (cumulative).
pub const DETAIL_DRIVE_IO_SIZES: &str = "sim.drive_io_sizes";
/// No storage device completes a read in less than this; a buffered run whose mean read
/// latency is lower was served from memory. (Fast NVMe flash needs tens of microseconds.)
pub const PAGE_CACHE_READ_LATENCY_NS: f64 = 5_000.0;

/// One measured sweep point.
#[derive(Debug)]
pub struct MeasuredPoint {
    pub point: SweepPoint,
    pub outcome: JobOutcome,
    /// The state the target was in when this point started (`fresh (trimmed before this
    /// step)`, `seq-filled`, `after previous step (...)`).
    pub device_state: String,
    /// Honesty warnings: results the target cannot physically produce, with the reason.
    pub warnings: Vec<String>,
}

/// Runs steps and points on one target, remembering what was done to it.
pub struct Sweeper<'p, 'o> {
    provider: &'p mut dyn EngineProvider,
    options: &'o RunOptions<'o>,
    /// What the target has been through, as results record it.
    state: String,
    /// The last engine report seen per target, to take differences of cumulative counters.
    last_reports: BTreeMap<String, EngineReport>,
}

impl<'p, 'o> Sweeper<'p, 'o> {
    pub fn new(provider: &'p mut dyn EngineProvider, options: &'o RunOptions<'o>) -> Self {
        Sweeper {
            provider,
            options,
            state: DeviceState::AsFound.label(),
            last_reports: BTreeMap::new(),
        }
    }

    /// The current device state label.
    pub fn state(&self) -> &str {
        &self.state
    }

    fn remember(&mut self, job: &JobSpec, report: Option<EngineReport>) {
        if let Some(report) = report {
            self.last_reports.insert(target_key(job), report);
        }
    }

    /// Run one step; returns whether it was interrupted.
    pub fn step(&mut self, step: &Step) -> Result<bool, RunError> {
        let outcome = run_step(step, self.provider, self.options)?;
        self.remember(step.job(), outcome.engine_report);
        if !outcome.interrupted {
            self.state = match step {
                Step::Trim { .. } => DeviceState::Fresh.label(),
                Step::Prepare { state_after, .. } => state_after.clone(),
            };
        }
        Ok(outcome.interrupted)
    }

    /// Put `regions` of `template`'s target in `state` (`state::state_steps`: nothing outside
    /// them is written or discarded); returns whether it was interrupted.
    pub fn prepare(
        &mut self,
        state: DeviceState,
        template: &JobSpec,
        regions: &[crate::Region],
    ) -> Result<bool, RunError> {
        for step in crate::state::state_steps(state, template, regions) {
            if self.step(&step)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Measure one point, trimming its region first when `trim_before` is set.
    pub fn measure(
        &mut self,
        point: &SweepPoint,
        trim_before: bool,
    ) -> Result<Option<MeasuredPoint>, RunError> {
        let mut device_state = self.state.clone();
        if trim_before {
            let trim = DeviceState::Fresh.steps(&point.job);
            for step in &trim {
                if self.step(step)? {
                    return Ok(None);
                }
            }
            device_state = "fresh (trimmed before this step)".into();
        }
        let set = JobSet {
            jobs: vec![point.job.clone()],
        };
        let mut outcomes = run_jobs(&set, self.provider, self.options, &mut |_| {})?;
        let Some(outcome) = outcomes.pop() else {
            return Ok(None);
        };
        let before = self.last_reports.get(&target_key(&point.job));
        let warnings = honesty_warnings(&point.job, &outcome, before);
        self.remember(&point.job, outcome.engine_reports.first().cloned());
        let wrote = outcome.workers.iter().any(|w| w.write.bytes > 0);
        if wrote {
            self.state = format!("after previous step ({})", point.job.name);
        }
        Ok(Some(MeasuredPoint {
            point: point.clone(),
            outcome,
            device_state,
            warnings,
        }))
    }
}

fn target_key(job: &JobSpec) -> String {
    format!("{:?}", job.target)
}

/// Transfer sizes that reached the device (size → count) from a `COUNTxSIZE ...` detail.
fn parse_size_counts(text: &str) -> BTreeMap<u64, u64> {
    text.split_whitespace()
        .filter_map(|pair| {
            let (count, size) = pair.split_once('x')?;
            Some((size.parse().ok()?, count.parse().ok()?))
        })
        .collect()
}

/// Why a result may be faster than the target can physically be, given the engine report
/// before (`before`, for cumulative counters) and after the job.
///
/// Rules: (1) the device saw transfers larger than any the job issued (a driver merged
/// requests, so a small-block test measured large blocks); (2) a buffered (`direct=0`) job on
/// a real target read data, which the page cache may have served instead of the device.
pub fn honesty_warnings(
    job: &JobSpec,
    outcome: &JobOutcome,
    before: Option<&EngineReport>,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let issued_max_bytes = job.max_block_bytes();
    if let Some(after) = outcome.engine_reports.first() {
        let sizes_after = after.detail(DETAIL_DRIVE_IO_SIZES).map(parse_size_counts);
        if let Some(sizes_after) = sizes_after {
            let sizes_before = before
                .and_then(|b| b.detail(DETAIL_DRIVE_IO_SIZES))
                .map(parse_size_counts)
                .unwrap_or_default();
            let larger: Vec<(u64, u64)> = sizes_after
                .iter()
                .map(|(&size, &count)| {
                    (
                        size,
                        count.saturating_sub(sizes_before.get(&size).copied().unwrap_or(0)),
                    )
                })
                .filter(|&(size, count)| count > 0 && size > issued_max_bytes)
                .collect();
            if let Some(&(largest, _)) = larger.last() {
                let transfers: u64 = larger.iter().map(|(_, c)| c).sum();
                let merged = |report: &EngineReport| {
                    report
                        .detail(DETAIL_MERGED_REQUESTS)
                        .and_then(|v| v.parse::<u64>().ok())
                };
                let merged_now = merged(after)
                    .unwrap_or(0)
                    .saturating_sub(before.and_then(merged).unwrap_or(0));
                warnings.push(format!(
                    "device-side transfers larger than requested: the drive saw {transfers} transfers of up to {largest} bytes while this job issued at most {issued_max_bytes} bytes{}; the figures measure merged I/O, not the requested block size",
                    if merged_now > 0 {
                        format!(" (the driver merged {merged_now} requests)")
                    } else {
                        String::new()
                    }
                ));
            }
        }
    }
    let real_target = !matches!(job.engine, EngineKind::Sim | EngineKind::Null);
    let mut reads = storlab_stats::DirectionStats::new(crate::DEFAULT_INTERVAL_NS);
    for w in &outcome.workers {
        reads.merge(&w.read);
    }
    if real_target && !job.direct && reads.ios > 0 {
        let mean_ns = reads.clat.mean_ns();
        if mean_ns < PAGE_CACHE_READ_LATENCY_NS {
            warnings.push(format!(
                "page-cache served: buffered reads (direct=0) took {:.1} µs on average, faster than any storage device ({} µs); the figures measure memory, not the target",
                mean_ns / 1e3,
                PAGE_CACHE_READ_LATENCY_NS / 1e3
            ));
        } else {
            warnings.push(
                "buffered reads (direct=0): part of the data may have come from the page cache rather than the target; use direct=1 to measure the device".into(),
            );
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Region;
    use storlab_job::Target;
    use storlab_stats::WorkerStats;

    fn outcome(job: &JobSpec, details: Vec<(&str, &str)>, read_clat_ns: u64) -> JobOutcome {
        let mut stats = WorkerStats::new(crate::DEFAULT_INTERVAL_NS);
        stats.read.record(0, 4096, 0, read_clat_ns);
        JobOutcome {
            job: job.clone(),
            workers: vec![stats],
            regions: vec![Region {
                start_bytes: 0,
                len_bytes: 1 << 20,
            }],
            target_size_bytes: 1 << 20,
            engine_name: "x".into(),
            engine_reports: vec![EngineReport {
                details: details
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                sim_json: None,
            }],
            verified_bytes: 0,
            interrupted: false,
        }
    }

    #[test]
    fn merged_transfers_are_flagged_only_for_this_job() {
        let job = JobSpec::new("m", EngineKind::Sim, Target::Sim("s".into()));
        let before = EngineReport {
            details: vec![
                (DETAIL_DRIVE_IO_SIZES.into(), "10x131072".into()),
                (DETAIL_MERGED_REQUESTS.into(), "0".into()),
            ],
            sim_json: None,
        };
        // An earlier 128 KiB fill is not this job's doing.
        let clean = outcome(&job, vec![(DETAIL_DRIVE_IO_SIZES, "10x131072 50x4096")], 1);
        assert!(honesty_warnings(&job, &clean, Some(&before)).is_empty());
        let merged = outcome(
            &job,
            vec![
                (DETAIL_DRIVE_IO_SIZES, "10x4096 12x131072 5x65536"),
                (DETAIL_MERGED_REQUESTS, "70"),
            ],
            1,
        );
        let warnings = honesty_warnings(&job, &merged, Some(&before));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("device-side transfers larger than requested"));
        assert!(
            warnings[0].contains("7 transfers of up to 131072"),
            "{}",
            warnings[0]
        );
        assert!(
            warnings[0].contains("merged 70 requests"),
            "{}",
            warnings[0]
        );
    }

    #[test]
    fn buffered_reads_on_real_targets_are_flagged() {
        let mut job = JobSpec::new("b", EngineKind::Psync, Target::Path("/x".into()));
        let fast = honesty_warnings(&job, &outcome(&job, vec![], 800), None);
        assert!(fast[0].starts_with("page-cache served"), "{fast:?}");
        let slow = honesty_warnings(&job, &outcome(&job, vec![], 90_000), None);
        assert!(
            slow[0].contains("may have come from the page cache"),
            "{slow:?}"
        );
        job.direct = true;
        assert!(honesty_warnings(&job, &outcome(&job, vec![], 800), None).is_empty());
    }
}
