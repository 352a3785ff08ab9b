//! Sweeps: runs preset points one after another on one target, puts the target in the state a
//! preset or the user asked for, records for every point the state it was measured in, and
//! checks each result for honesty (a figure the target cannot physically produce is flagged).

use crate::state::run_step;
use crate::warning::Warning;
use crate::{run_jobs, EngineProvider, JobOutcome, RunError, RunOptions};
use std::collections::BTreeMap;
use storlab_engine::device_stats::{DETAIL_DEVICE, DETAIL_DEVICE_READ_BYTES};
use storlab_engine::SimWarning;
use storlab_engine::{EngineReport, SimReport};
use storlab_job::preset::SweepPoint;
use storlab_job::steps::{DeviceState, Step};
use storlab_job::{JobSet, JobSpec};

/// A buffered job whose device read less than this share of the bytes the job read was served
/// by the page cache (docs/methodology.md): well below what readahead or a busy device blur.
pub const PAGE_CACHE_DEVICE_SHARE_PERCENT: u64 = 50;
/// Below this many bytes read, the counters of a device others use say nothing about one job.
pub const PAGE_CACHE_CHECK_MIN_BYTES: u64 = 1 << 20;
/// Bytes in a decimal megabyte and gigabyte, as the tables print rates.
const BYTES_PER_MB: f64 = 1e6;
const BYTES_PER_GB: f64 = 1e9;

/// [`Preparation::purpose`] of the TRIMs `--trim-between-steps` runs before each point.
pub const TRIM_BEFORE_EACH_POINT: &str = "trim before each point";

/// One measured sweep point.
#[derive(Debug)]
pub struct MeasuredPoint {
    pub point: SweepPoint,
    /// What the point did; its first engine report is of the point's own interval
    /// (`EngineReport::since`), not the kept simulated stack's whole session.
    pub outcome: JobOutcome,
    /// The state the target was in when this point started (`fresh (trimmed before this
    /// step)`, `seq-filled`, `after previous step (...)`).
    pub device_state: String,
    /// Honesty warnings: results the target cannot physically produce, with the reason, and
    /// what the simulator raised about this point.
    pub warnings: Vec<Warning>,
}

/// What putting a target in its state took: the steps' own figures, reported apart from the
/// points measured after them (whose figures, simulator report included, are their own).
pub use storlab_stats::StatePreparation as Preparation;

/// Runs steps and points on one target, remembering what was done to it.
pub struct Sweeper<'p, 'o> {
    provider: &'p mut dyn EngineProvider,
    options: &'o RunOptions<'o>,
    /// What the target has been through, as results record it.
    state: String,
    /// The last engine report seen per target, to take differences of cumulative counters.
    last_reports: BTreeMap<String, EngineReport>,
    /// Per target, what went wrong while steps put it in its state (a bridge that dropped the
    /// TRIM step's UNMAPs), for the next point measured there: its state is not what it says.
    step_warnings: BTreeMap<String, Vec<Warning>>,
    /// What the steps run so far took, one entry per target and purpose.
    preparations: Vec<Preparation>,
    /// The purpose the next steps are accounted under ([`Preparation::purpose`]).
    purpose: String,
}

impl<'p, 'o> Sweeper<'p, 'o> {
    pub fn new(provider: &'p mut dyn EngineProvider, options: &'o RunOptions<'o>) -> Self {
        Sweeper {
            provider,
            options,
            state: DeviceState::AsFound.label(),
            last_reports: BTreeMap::new(),
            step_warnings: BTreeMap::new(),
            preparations: Vec::new(),
            purpose: DeviceState::AsFound.label(),
        }
    }

    /// Account the next steps under `purpose` (`preconditioning`): [`Sweeper::preparations`].
    pub fn preparing(&mut self, purpose: &str) {
        self.purpose = purpose.to_string();
    }

    /// What the steps run so far took, per target and purpose, in the order first run.
    pub fn preparations(&self) -> &[Preparation] {
        &self.preparations
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
        let started = std::time::Instant::now();
        let outcome = run_step(step, self.provider, self.options)?;
        let key = target_key(step.job());
        let sim_before = self.last_reports.get(&key).and_then(|b| b.sim.as_deref());
        let sim_after = outcome
            .engine_report
            .as_ref()
            .and_then(|r| r.sim.as_deref());
        let figures = StepFigures {
            step,
            bytes: outcome.bytes,
            wall: started.elapsed(),
            sim_before,
            sim_after,
        };
        account(&mut self.preparations, &self.purpose, &figures);
        if let Some(sim_after) = sim_after {
            let dropped = sim_after
                .warnings_since(sim_before)
                .into_iter()
                .filter(|w| matches!(w, SimWarning::TrimsNotTranslated { .. }))
                .map(Warning::DuringPreparation);
            self.step_warnings.entry(key).or_default().extend(dropped);
        }
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
        self.preparing(&state.label());
        let steps = crate::state::state_steps(state, template, regions);
        for step in &steps {
            if self.step(step)? {
                return Ok(true);
            }
        }
        // The target is in `state` once all its steps ran: a chain may end with a TRIM
        // (`seq-filled,trim-all`), which on its own would read `fresh`.
        if !steps.is_empty() {
            self.state = state.label();
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
            self.preparing(TRIM_BEFORE_EACH_POINT);
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
        let outcomes = run_jobs(&set, self.provider, self.options, &mut |_| {})?;
        let mut outcomes = crate::io_failure_ends_the_run(outcomes)?;
        let Some(outcome) = outcomes.pop() else {
            return Ok(None);
        };
        let before = self.last_reports.get(&target_key(&point.job));
        let mut warnings = self
            .step_warnings
            .remove(&target_key(&point.job))
            .unwrap_or_default();
        warnings.extend(honesty_warnings(&point.job, &outcome, before));
        let mut outcome = outcome;
        if let Some(after) = outcome.engine_reports.first_mut() {
            // The point's report is of its own interval: a kept simulated stack's session
            // report covers the state preparation and earlier points too.
            let interval = after.since(before);
            let session = std::mem::replace(after, interval);
            self.remember(&point.job, Some(session));
        }
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

/// What one step did, for its [`Preparation`].
struct StepFigures<'a> {
    step: &'a Step,
    /// Bytes it wrote or discarded.
    bytes: u64,
    wall: std::time::Duration,
    /// Its target's simulator report before and after it (simulated targets).
    sim_before: Option<&'a SimReport>,
    sim_after: Option<&'a SimReport>,
}

/// Add what a step did to its target's entry for `purpose` in `preparations`.
fn account(preparations: &mut Vec<Preparation>, purpose: &str, figures: &StepFigures<'_>) {
    let target = target_name(&figures.step.job().target);
    let index = match preparations
        .iter()
        .position(|p| p.target == target && p.purpose == purpose)
    {
        Some(index) => index,
        None => {
            preparations.push(Preparation {
                target,
                purpose: purpose.to_string(),
                ..Preparation::default()
            });
            preparations.len() - 1
        }
    };
    let entry = &mut preparations[index];
    entry.steps += 1;
    match figures.step {
        Step::Trim { .. } => entry.bytes_trimmed += figures.bytes,
        Step::Prepare { .. } => entry.bytes_written += figures.bytes,
    }
    entry.wall_ns += u64::try_from(figures.wall.as_nanos()).unwrap_or(u64::MAX);
    if let Some(after) = figures.sim_after {
        let then = |field: fn(&SimReport) -> u64| figures.sim_before.map_or(0, field);
        *entry.sim_commands.get_or_insert(0) += after.commands.saturating_sub(then(|b| b.commands));
        *entry.sim_elapsed_ns.get_or_insert(0) +=
            after.elapsed_ns.saturating_sub(then(|b| b.elapsed_ns));
    }
}

/// A target as the preparation's figures name it: `sim:STACK`, a path, `a temporary file in DIR`.
fn target_name(target: &storlab_job::Target) -> String {
    use storlab_job::Target;
    match target {
        Target::Sim(stack) => format!("sim:{stack}"),
        Target::Path(path) => path.display().to_string(),
        Target::TempFileIn(dir) => format!("a temporary file in {}", dir.display()),
        Target::None => "no target".into(),
    }
}

fn target_key(job: &JobSpec) -> String {
    format!("{:?}", job.target)
}

/// Transfer sizes that reached the simulated drive (size → count, cumulative over the session).
fn drive_io_sizes(report: &SimReport) -> BTreeMap<u64, u64> {
    report
        .drive_io_sizes
        .iter()
        .map(|s| (u64::from(s.size_bytes), s.count))
        .collect()
}

/// Why a result may not be what the target does for the job as written, given the engine
/// report before (`before`, for cumulative counters) and after the job.
///
/// The rule: the device saw transfers larger than any the job issued (a driver merged
/// requests, so a small-block test measured large blocks). On a simulated target, the
/// simulator's own warnings for the part of its session the job ran
/// ([`SimReport::warnings_since`]) follow; its merge warning only when the rule did not already
/// say it. Reads the page cache served are measured for every job, not only sweeps:
/// [`page_cache_warning`].
pub fn honesty_warnings(
    job: &JobSpec,
    outcome: &JobOutcome,
    before: Option<&EngineReport>,
) -> Vec<Warning> {
    let mut warnings = Vec::new();
    let issued_max_bytes = job.max_block_bytes();
    let sim_before = before.and_then(|b| b.sim.as_deref());
    let Some(sim_after) = outcome
        .engine_reports
        .first()
        .and_then(|after| after.sim.as_deref())
    else {
        return warnings;
    };
    let sizes_after = drive_io_sizes(sim_after);
    let sizes_before = sim_before.map(drive_io_sizes).unwrap_or_default();
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
    let since =
        |now: u64, then: fn(&SimReport) -> u64| now.saturating_sub(sim_before.map_or(0, then));
    if let Some(&(largest_bytes, _)) = larger.last() {
        warnings.push(Warning::LargerTransfers {
            transfers: larger.iter().map(|(_, c)| c).sum(),
            largest_bytes,
            issued_max_bytes,
            merged_requests: since(sim_after.merged_requests, |b| b.merged_requests),
            driver_buffer_reads: since(sim_after.driver_buffer_reads, |b| b.driver_buffer_reads),
        });
    }
    let said_larger = !warnings.is_empty();
    warnings.extend(
        sim_after
            .warnings_since(sim_before)
            .into_iter()
            .filter(|w| !(said_larger && matches!(w, SimWarning::MergedRequests { .. })))
            .map(Warning::Simulator),
    );
    warnings
}

/// Whether the page cache, not the device, served a buffered read job on a real target,
/// measured: the bytes the device under the target read while the job ran (the engines'
/// [`DETAIL_DEVICE_READ_BYTES`], from the kernel's block-device counters) against the bytes the
/// job read. Below [`PAGE_CACHE_DEVICE_SHARE_PERCENT`] the figures are memory's. Without
/// counters (no block device behind the target) it says that it cannot tell. The counters
/// include other readers of the device, which can hide a cached job, never accuse a cold one.
pub fn page_cache_warning(job: &JobSpec, outcome: &JobOutcome) -> Option<String> {
    if job.direct || !outcome.capabilities.page_cache {
        return None;
    }
    let delivered_bytes: u64 = outcome.workers.iter().map(|w| w.read.bytes).sum();
    if delivered_bytes == 0 {
        return None;
    }
    // Every engine of the job watched the same device over about the same time: the largest
    // count is the device's reads during the job, not a sum of overlapping windows.
    let device_read_bytes = outcome
        .engine_reports
        .iter()
        .filter_map(|r| r.detail(DETAIL_DEVICE_READ_BYTES)?.parse::<u64>().ok())
        .max();
    let Some(device_read_bytes) = device_read_bytes else {
        return Some(
            "buffered reads (direct=0) on a target with no block-device statistics (tmpfs, \
             overlay or network filesystem): what the device read cannot be measured, so part \
             may have come from the page cache; use --direct=1 to measure the device"
                .into(),
        );
    };
    let threshold = u128::from(delivered_bytes) * u128::from(PAGE_CACHE_DEVICE_SHARE_PERCENT);
    if delivered_bytes < PAGE_CACHE_CHECK_MIN_BYTES
        || u128::from(device_read_bytes) * 100 >= threshold
    {
        return None;
    }
    let device = outcome
        .engine_reports
        .iter()
        .find_map(|r| r.detail(DETAIL_DEVICE))
        .unwrap_or("the device");
    Some(format!(
        "reads were served from the page cache: the device ({device}) read {:.0}% of the {} \
         delivered; use --direct=1 or drop caches",
        device_read_bytes as f64 * 100.0 / delivered_bytes as f64,
        decimal_bytes(delivered_bytes)
    ))
}

/// `2.1 GB`, `350.0 MB`: bytes as the tables count them (powers of ten).
fn decimal_bytes(bytes: u64) -> String {
    let bytes = bytes as f64;
    if bytes >= BYTES_PER_GB {
        format!("{:.1} GB", bytes / BYTES_PER_GB)
    } else {
        format!("{:.1} MB", bytes / BYTES_PER_MB)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Region;
    use storlab_engine::Capabilities;
    use storlab_job::steps::SEQ_FILL_BLOCK_BYTES;
    use storlab_job::EngineKind;
    use storlab_job::Target;
    use storlab_stats::WorkerStats;

    fn outcome(job: &JobSpec, details: Vec<(&str, &str)>, read_clat_ns: u64) -> JobOutcome {
        let mut stats = WorkerStats::new(crate::DEFAULT_INTERVAL_NS);
        stats.read.record(0, 4096, 0, read_clat_ns);
        JobOutcome {
            failure: None,
            errno_by_worker: vec![0],
            job: job.clone(),
            workers: vec![stats],
            regions: vec![Region {
                start_bytes: 0,
                len_bytes: 1 << 20,
            }],
            target_size_bytes: 1 << 20,
            engine_name: "x".into(),
            fio_logs: Vec::new(),
            capabilities: Capabilities {
                page_cache: true,
                ..Capabilities::default()
            },
            engine_reports: vec![EngineReport {
                details: details
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                sim: None,
            }],
            verified_bytes: 0,
            interrupted: false,
        }
    }

    /// A simulator's engine report whose drive saw `sizes` (count, bytes) after `merged` merges.
    fn sim_report(sizes: &[(u64, u32)], merged: u64) -> EngineReport {
        let profiles = storlab_sim::ProfileSet::embedded();
        let mut report = storlab_sim::Simulator::from_profiles(&profiles, "usb3-uas-ssd", 1)
            .expect("shipped stack")
            .report();
        report.drive_io_sizes = sizes
            .iter()
            .map(|&(count, size_bytes)| storlab_sim::report::SizeCount { size_bytes, count })
            .collect();
        report.merged_requests = merged;
        EngineReport {
            details: Vec::new(),
            sim: Some(Box::new(report)),
        }
    }

    #[test]
    fn merged_transfers_are_flagged_only_for_this_job() {
        let job = JobSpec::new("m", EngineKind::Sim, Target::Sim("s".into()));
        let before = sim_report(&[(10, 131072)], 0);
        // An earlier 128 KiB fill is not this job's doing.
        let mut clean = outcome(&job, Vec::new(), 1);
        clean.engine_reports = vec![sim_report(&[(50, 4096), (10, 131072)], 0)];
        assert!(honesty_warnings(&job, &clean, Some(&before)).is_empty());
        let mut merged = outcome(&job, Vec::new(), 1);
        merged.engine_reports = vec![sim_report(&[(10, 4096), (5, 65536), (12, 131072)], 70)];
        let warnings = honesty_warnings(&job, &merged, Some(&before));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].kind(), "larger-transfers");
        let warnings: Vec<String> = warnings.iter().map(Warning::to_string).collect();
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

    /// The simulator's warnings are this job's: counters an earlier job on the kept stack
    /// raised are subtracted, the fallback (every job ran over it) is not.
    #[test]
    fn simulator_warnings_count_only_this_jobs_share() {
        let job = JobSpec::new("t", EngineKind::Sim, Target::Sim("s".into()));
        let mut before = sim_report(&[], 0);
        let with = |report: &mut EngineReport, dropped: u64, fallback: Option<&str>| {
            let sim = report.sim.as_mut().expect("a sim report");
            sim.trims_not_translated = dropped;
            sim.fallback = fallback.map(str::to_string);
        };
        with(&mut before, 2, Some("no streams"));
        let mut same = outcome(&job, Vec::new(), 1);
        same.engine_reports = vec![before.clone()];
        let kinds = |warnings: &[Warning]| -> Vec<&'static str> {
            warnings.iter().map(Warning::kind).collect()
        };
        assert_eq!(
            kinds(&honesty_warnings(&job, &same, Some(&before))),
            ["transport-fallback"]
        );
        let mut more = outcome(&job, Vec::new(), 1);
        let mut after = before.clone();
        with(&mut after, 5, Some("no streams"));
        more.engine_reports = vec![after];
        let warnings = honesty_warnings(&job, &more, Some(&before));
        assert_eq!(
            kinds(&warnings),
            ["transport-fallback", "trims-not-translated"]
        );
        assert!(
            warnings[1].to_string().starts_with("3 UNMAP commands"),
            "{}",
            warnings[1]
        );
        // Without a report from before, the session is the job's.
        let warnings = honesty_warnings(&job, &more, None);
        assert!(warnings[1].to_string().starts_with("5 UNMAP commands"));
    }

    /// One simulated stack kept between jobs, as the lab's provider keeps it.
    struct KeptStack {
        kept: Option<Box<dyn storlab_engine::IoEngine + Send>>,
    }

    impl EngineProvider for KeptStack {
        fn open(
            &mut self,
            _job: &JobSpec,
        ) -> Result<Vec<Box<dyn storlab_engine::IoEngine + Send>>, RunError> {
            let engine = match self.kept.take() {
                Some(engine) => engine,
                None => Box::new(
                    storlab_engine::engines::sim::SimEngine::open(
                        "usb3-uas-ssd",
                        std::path::Path::new("/nonexistent"),
                        1,
                    )
                    .map_err(RunError::Engine)?,
                ),
            };
            Ok(vec![engine])
        }

        fn release(
            &mut self,
            _job: &JobSpec,
            mut engines: Vec<Box<dyn storlab_engine::IoEngine + Send>>,
        ) {
            self.kept = engines.pop();
        }
    }

    /// A read measured after a fill: the point's simulator report is its own interval, and
    /// the fill's bytes, commands and simulated time are the sweeper's preparation.
    #[test]
    fn a_point_after_a_fill_reports_its_own_interval_and_the_fill_apart() {
        let region_bytes = 16u64 << 20;
        let mut job = JobSpec::new("read", EngineKind::Sim, Target::Sim("usb3-uas-ssd".into()));
        job.size_bytes = Some(region_bytes);
        let mut template = job.clone();
        template.read_percent = 0;
        let regions = [Region {
            start_bytes: 0,
            len_bytes: region_bytes,
        }];
        let mut provider = KeptStack { kept: None };
        let stop = std::sync::atomic::AtomicBool::new(false);
        let options = RunOptions {
            interval_ns: crate::DEFAULT_INTERVAL_NS,
            stop: &stop,
            live: None,
        };
        let mut sweeper = Sweeper::new(&mut provider, &options);
        assert!(!sweeper
            .prepare(DeviceState::SeqFilled, &template, &regions)
            .unwrap());
        let point = SweepPoint {
            coords: Vec::new(),
            job,
        };
        let measured = sweeper.measure(&point, false).unwrap().expect("measured");
        let sim = measured.outcome.engine_reports[0].sim.as_deref().unwrap();
        assert_eq!(sim.bytes_written, 0, "the fill is not the point's");
        assert_eq!(sim.bytes_read, region_bytes);
        let job_elapsed_ns = measured.outcome.workers[0].elapsed_ns;
        assert!(
            sim.elapsed_ns.abs_diff(job_elapsed_ns) <= job_elapsed_ns / 100,
            "the point's simulated time is its own: {} ns against the job's {job_elapsed_ns} ns",
            sim.elapsed_ns
        );
        let preparations = sweeper.preparations();
        assert_eq!(preparations.len(), 1, "{preparations:?}");
        let fill = &preparations[0];
        assert_eq!(
            (fill.target.as_str(), fill.purpose.as_str()),
            ("sim:usb3-uas-ssd", "seq-filled")
        );
        assert_eq!(
            (fill.bytes_written, fill.bytes_trimmed),
            (region_bytes, region_bytes)
        );
        assert_eq!(
            fill.sim_commands,
            Some(1 + region_bytes / SEQ_FILL_BLOCK_BYTES)
        );
        assert!(fill.sim_elapsed_ns.is_some_and(|ns| ns > 0));
    }

    /// A buffered job of `delivered` bytes read, whose engines saw the device read `device`.
    fn buffered(delivered: u64, device: Option<&str>) -> (JobSpec, JobOutcome) {
        let job = JobSpec::new("b", EngineKind::Psync, Target::Path("/x".into()));
        let details = device
            .map(|d| vec![(DETAIL_DEVICE, "vda"), (DETAIL_DEVICE_READ_BYTES, d)])
            .unwrap_or_default();
        let mut done = outcome(&job, details, 50_000);
        done.workers[0].read.bytes = delivered;
        (job, done)
    }

    #[test]
    fn reads_the_device_did_not_make_are_flagged_as_page_cache_hits() {
        let gb = 2_100_000_000;
        let (job, cached) = buffered(gb, Some("63000000"));
        assert_eq!(
            page_cache_warning(&job, &cached).as_deref(),
            Some("reads were served from the page cache: the device (vda) read 3% of the 2.1 GB delivered; use --direct=1 or drop caches")
        );
        // The device read what was delivered, or more (readahead): measured, so nothing to say.
        let (job, cold) = buffered(gb, Some("2000000000"));
        assert_eq!(page_cache_warning(&job, &cold), None);
        // Too little read to judge on a shared device.
        let (job, tiny) = buffered(64 << 10, Some("0"));
        assert_eq!(page_cache_warning(&job, &tiny), None);
        // No counters: it cannot tell, and says so.
        let (job, unknown) = buffered(gb, None);
        assert!(page_cache_warning(&job, &unknown)
            .unwrap()
            .contains("cannot be measured"));
        // O_DIRECT reads bypass the cache.
        let (mut job, cached) = buffered(gb, Some("0"));
        job.direct = true;
        assert_eq!(page_cache_warning(&job, &cached), None);
        // An engine with no page cache (null, the simulator) reaches its device every time,
        // whatever the job's engine is called.
        let (job, mut uncached) = buffered(gb, Some("0"));
        uncached.capabilities.page_cache = false;
        assert_eq!(page_cache_warning(&job, &uncached), None);
    }
}
