//! Turns the runner's outcomes into the report model: one `JobReport` per job (workers merged
//! with `group_reporting` or when there is one worker), or one per worker otherwise, as fio does.

use crate::provider::Provider;
use std::collections::BTreeMap;
use storlab_engine::EngineReport;
use storlab_job::size::format_size;
use storlab_job::{BlockSizeSpec, DataPattern, JobSpec};
use storlab_report::{JobNotes, JobReport, JobSetup, TargetInfo};
use storlab_runner::live::LiveSnapshot;
use storlab_runner::warning::Warning;
use storlab_runner::JobOutcome;
use storlab_stats::WorkerStats;

/// The honesty check (`storlab_runner::sweep::honesty_warnings`, the rule presets and `--state`
/// apply) for jobs run one after another: a simulated stack is kept between jobs, so its counters
/// add up, and each job's figures are the difference from the report its target had before the
/// job's stonewall group started.
#[derive(Default)]
pub struct HonestyCheck {
    before_group: BTreeMap<String, EngineReport>,
    this_group: BTreeMap<String, EngineReport>,
}

impl HonestyCheck {
    /// The warnings of `outcome` and its first engine's report over the job's own interval
    /// (`EngineReport::since`: a kept simulated stack's report less what came before the job's
    /// group); call it for every finished job, in the order they finished.
    pub fn check(&mut self, outcome: &JobOutcome) -> (Vec<Warning>, Option<EngineReport>) {
        if outcome.job.stonewall || self.before_group.is_empty() {
            let finished_group = std::mem::take(&mut self.this_group);
            self.before_group.extend(finished_group);
        }
        let key = format!("{:?}", outcome.job.target);
        let after = outcome.engine_reports.first();
        // Commands the simulated stack has served (cumulative over its session).
        let commands = |report: &EngineReport| report.sim.as_ref().map(|sim| sim.commands);
        // A job that ran beside another on the same stack got a fresh one: nothing to subtract.
        let before = self.before_group.get(&key).filter(|before| {
            match (after.and_then(commands), commands(before)) {
                (Some(now), Some(then)) => now >= then,
                _ => true,
            }
        });
        let warnings = storlab_runner::sweep::honesty_warnings(&outcome.job, outcome, before);
        let interval = after.map(|after| after.since(before));
        if let Some(after) = after {
            self.this_group.insert(key, after.clone());
        }
        (warnings, interval)
    }
}

/// The data pattern as it appears in results (`random`, `zeros`, `compressible:50`).
pub fn pattern_name(pattern: DataPattern) -> String {
    match pattern {
        DataPattern::Random => "random".into(),
        DataPattern::Zeros => "zeros".into(),
        DataPattern::Compressible(p) => format!("compressible:{p}"),
    }
}

/// The access pattern, with the read share for mixes (`randrw:70`).
fn rw_label(job: &JobSpec) -> String {
    let name = job.rw_name();
    match job.read_percent {
        0 | 100 => name.to_string(),
        p => format!("{name}:{p}"),
    }
}

/// A block-size spec for people: `4 KiB`, `4 KiB-64 KiB`, `4 KiB/50:64 KiB/50`.
fn spec_label(spec: &BlockSizeSpec) -> String {
    match spec {
        BlockSizeSpec::Fixed(bytes) => format_size(*bytes),
        BlockSizeSpec::Range {
            min_bytes,
            max_bytes,
        } => {
            format!("{}-{}", format_size(*min_bytes), format_size(*max_bytes))
        }
        BlockSizeSpec::Split(shares) => shares
            .iter()
            .map(|s| format!("{}/{}", format_size(s.size_bytes), s.percent))
            .collect::<Vec<_>>()
            .join(":"),
    }
}

fn block_size_label(job: &JobSpec) -> String {
    let read = spec_label(&job.block_size_read);
    let write = spec_label(&job.block_size_write);
    match job.read_percent {
        100 => read,
        0 => write,
        _ if read == write => read,
        _ => format!("{read},{write}"),
    }
}

/// Reports for one finished job; `honesty` are its [`HonestyCheck`] (or sweep point's)
/// warnings, the simulator's among them; `first_report` its first engine's report over the
/// job's own interval (the outcome's own when its engines served only this job).
pub fn job_reports(
    outcome: &JobOutcome,
    provider: &Provider,
    honesty: &[Warning],
    first_report: Option<&EngineReport>,
) -> Vec<JobReport> {
    let job = &outcome.job;
    let (description, kind) = provider
        .target_descriptions
        .get(&job.name)
        .cloned()
        .unwrap_or_else(|| ("unknown".into(), "unknown".into()));
    let mut warnings = job.warnings.clone();
    if outcome.interrupted {
        warnings.push(
            "interrupted: this job was stopped early; its figures cover the part that ran".into(),
        );
    }
    if let Some(failure) = &outcome.failure {
        // Said in every output beside the figures, which cover what ran until the failure
        // (fio's verify message names the target already).
        let on_target = match failure.is_verify_failure() {
            true => String::new(),
            false => format!(" on {description}"),
        };
        warnings.push(format!(
            "failed{on_target}: {failure}; its figures cover what ran until then"
        ));
    }
    warnings.extend(honesty.iter().map(Warning::to_string));
    warnings.extend(storlab_runner::sweep::page_cache_warning(job, outcome));
    let dropped_bytes = first_report
        .and_then(|r| r.detail(storlab_sim::report::DETAIL_PAYLOAD_DROPPED_BYTES))
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    if dropped_bytes > 0 {
        warnings.push(format!(
            "the simulated drive keeps at most {} MiB of written data in memory: {} MiB written \
             past that (this session) were not kept and read back as zeros, so verify fails \
             there; timing is unaffected",
            storlab_sim::store::DEFAULT_BUDGET_BYTES >> 20,
            dropped_bytes >> 20
        ));
    }
    let mut engine_details = first_report.map(|r| r.details.clone()).unwrap_or_default();
    if job.verify {
        engine_details.push(("verified_bytes".into(), outcome.verified_bytes.to_string()));
    }
    let probed = probe_target(&kind, &description);
    let path = probed.as_ref().and_then(|p| serde_json::to_value(p).ok());
    let target = TargetInfo {
        description,
        kind,
        size_bytes: 0,
        path,
    };
    let setup = |name: String, size_bytes: u64| job_setup(outcome, &target, name, size_bytes);
    let notes = JobNotes {
        warnings,
        engine_details,
        sim: first_report
            .and_then(|r| r.sim.as_deref())
            .and_then(|sim| serde_json::to_value(sim).ok()),
    };
    let region_bytes: u64 = outcome.regions.iter().map(|r| r.len_bytes).sum();
    let mut reports = reports_of_workers(outcome, region_bytes, &setup, notes);
    // A job with its own steadystate ran until it held still (or said it did not); an engine
    // that moves no data (null) measures this machine's CPU, whose rate moves with its load.
    if job.steadystate.is_none() && outcome.capabilities.moves_data {
        for report in &mut reports {
            let unsettled = crate::settled::unsettled_warning(&report.series);
            report.notes.warnings.extend(unsettled);
        }
    }
    if let Some(device) = probed.as_ref().and_then(|p| p.device.as_ref()) {
        for report in &mut reports {
            report.path_verdict = path_verdict(device, job, report, provider.what_if_args());
        }
    }
    reports
}

/// The setup of a report named `name` of `outcome`'s job on `target`, over `size_bytes`.
fn job_setup(outcome: &JobOutcome, target: &TargetInfo, name: String, size_bytes: u64) -> JobSetup {
    let job = &outcome.job;
    JobSetup {
        name,
        job: serde_json::to_value(job).unwrap_or(serde_json::Value::Null),
        engine: outcome.engine_name.clone(),
        target: TargetInfo {
            size_bytes,
            ..target.clone()
        },
        device_state: "as-found".into(),
        data_pattern: pattern_name(job.data_pattern),
        align_bytes: job.align_bytes,
        seed: job.seed,
        iodepth: job.iodepth,
        numjobs: job.numjobs,
        rw: rw_label(job),
        block_size: block_size_label(job),
    }
}

/// Reports of a job still running, for fio's `--status-interval` reports: the latest
/// [`LiveSnapshot`] of each of its drives (its statistics since it started), split or merged
/// as its final reports will be. The target is named from the job (the provider that opened
/// it belongs to the run's thread); the job's warnings are the final report's to give.
pub fn running_job_reports(job: &JobSpec, snapshots: &[&LiveSnapshot]) -> Vec<JobReport> {
    let Some(first) = snapshots.first() else {
        return Vec::new();
    };
    let mut workers: Vec<&(u32, storlab_runner::Region, WorkerStats)> =
        snapshots.iter().flat_map(|s| &s.workers).collect();
    workers.sort_by_key(|(index, _, _)| *index);
    let outcome = JobOutcome {
        job: job.clone(),
        workers: workers.iter().map(|(_, _, stats)| stats.clone()).collect(),
        regions: workers.iter().map(|(_, region, _)| *region).collect(),
        target_size_bytes: 0,
        engine_name: first.engine_name.clone(),
        capabilities: first.capabilities,
        engine_reports: Vec::new(),
        verified_bytes: 0,
        interrupted: false,
        fio_logs: Vec::new(),
        failure: None,
        errno_by_worker: vec![0; workers.len()],
    };
    let (description, kind) = match &job.target {
        storlab_job::Target::Path(path) => (path.display().to_string(), "file".to_string()),
        storlab_job::Target::TempFileIn(dir) => (dir.display().to_string(), "file".into()),
        storlab_job::Target::Sim(stack) => (format!("sim:{stack}"), "sim".into()),
        storlab_job::Target::None => ("none".into(), "none".into()),
    };
    let target = TargetInfo {
        description,
        kind,
        size_bytes: 0,
        path: None,
    };
    let region_bytes: u64 = outcome.regions.iter().map(|r| r.len_bytes).sum();
    let setup = |name: String, size_bytes: u64| job_setup(&outcome, &target, name, size_bytes);
    reports_of_workers(&outcome, region_bytes, &setup, JobNotes::default())
}

/// The verdict on a real target's path for one report's measured rates (docs/probe.md).
fn path_verdict(
    device: &storlab_engine::probe::DeviceFacts,
    job: &JobSpec,
    report: &JobReport,
    what_if_args: Option<&[String]>,
) -> Option<serde_json::Value> {
    use storlab_engine::probe::verdict::{verdict, Measured};
    let mbs = |summary: Option<&storlab_stats::DirectionSummary>| {
        summary.map_or(0.0, |s| s.bw_bytes_per_s / 1e6)
    };
    let measured = Measured {
        read_mbs: mbs(report.read.as_ref()),
        write_mbs: mbs(report.write.as_ref()),
        block_bytes: match job.read_percent {
            0 => job.block_size_write.max_bytes(),
            100 => job.block_size_read.max_bytes(),
            _ => job
                .block_size_read
                .max_bytes()
                .max(job.block_size_write.max_bytes()),
        },
        iodepth: job.iodepth,
    };
    if measured.read_mbs + measured.write_mbs <= 0.0 {
        return None;
    }
    serde_json::to_value(verdict(device, &measured, what_if_args)?).ok()
}

/// Mark `report` with the error that ended any of the workers it covers (fio's job `error`:
/// EILSEQ for a verify failure, the failed I/O's errno otherwise): fio marks the clone that
/// failed alone, and a `group_reporting` group takes its members' first error.
fn mark_failure(report: &mut JobReport, errno_by_worker: &[i32]) {
    if let Some(&errno) = errno_by_worker.iter().find(|&&errno| errno != 0) {
        report.error = errno;
    }
}

/// One report for the job (`group_reporting`, or one worker), or one per worker.
fn reports_of_workers(
    outcome: &JobOutcome,
    region_bytes: u64,
    setup: &dyn Fn(String, u64) -> JobSetup,
    notes: JobNotes,
) -> Vec<JobReport> {
    let job = &outcome.job;
    if job.group_reporting || outcome.workers.len() == 1 {
        let mut merged = WorkerStats::new(storlab_runner::DEFAULT_INTERVAL_NS);
        for w in &outcome.workers {
            merged.merge(w);
        }
        let mut report = JobReport::new(setup(job.name.clone(), region_bytes), notes, &merged);
        mark_failure(&mut report, &outcome.errno_by_worker);
        vec![report]
    } else {
        outcome
            .workers
            .iter()
            .zip(&outcome.regions)
            .enumerate()
            .map(|(i, (stats, region))| {
                let mut report = JobReport::new(
                    setup(format!("{}.{i}", job.name), region.len_bytes),
                    notes.clone(),
                    stats,
                );
                let failed = outcome.errno_by_worker.get(i..=i).unwrap_or_default();
                mark_failure(&mut report, failed);
                report
            })
            .collect()
    }
}

/// A recorded sysfs tree that tests put in the place of this machine's (with
/// [`PROBE_DEVICE_ENV`]): a run's real target is then described as that tree's block device,
/// so a run on a temporary file is judged as if it ran over a USB or SATA path.
pub const PROBE_SYS_ROOT_ENV: &str = "STORLAB_PROBE_SYS_ROOT";
/// The block device of [`PROBE_SYS_ROOT_ENV`]'s tree that describes every real target.
pub const PROBE_DEVICE_ENV: &str = "STORLAB_PROBE_DEVICE";

/// The probe facts of a real target (sysfs and mountinfo only: the device under test is not
/// sent further commands), as recorded in `target.path`.
fn probe_target(kind: &str, description: &str) -> Option<storlab_engine::probe::ProbeReport> {
    use storlab_engine::probe::{Prober, SysRoot};
    if kind != "file" && kind != "block" {
        return None;
    }
    let mut prober = Prober {
        query_device: false,
        ..Default::default()
    };
    if let (Some(root), Some(name)) = (
        std::env::var_os(PROBE_SYS_ROOT_ENV),
        std::env::var(PROBE_DEVICE_ENV).ok(),
    ) {
        prober.sys = SysRoot::new(root);
        return prober.probe_block_name(&name).ok();
    }
    prober.probe_path(std::path::Path::new(description)).ok()
}
