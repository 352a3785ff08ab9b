//! Runs planned scenarios in the simulator, each on a fresh stack through the same sweep
//! machinery as `storlab run --preset/--state`, and reduces the compared point to one figure.
//! Scenarios run in parallel on the available cores; results keep the file's order.

use super::plan::{PlannedEntry, PlannedScenario};
use super::reference::Metric;
use crate::error::{classify, run_failed, LabError};
use crate::provider::{Provider, ProviderOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use storlab_engine::{EngineReport, IoEngine};
use storlab_job::preset::COORD_ROUND;
use storlab_job::JobSpec;
use storlab_runner::sweep::MeasuredPoint;
use storlab_runner::{EngineProvider, LiveCounters, RunError, RunOptions, DEFAULT_INTERVAL_NS};
use storlab_stats::{LatencyHistogram, WorkerStats};

/// The simulator report's layer that models the host CPU running the driver.
pub const HOST_CPU_LAYER: &str = storlab_sim::report::LAYER_HOST_CPU;
/// Percentile of the `latency_p99_us` metric.
const P99_PERCENTILE: f64 = 99.0;
const NS_PER_US: f64 = 1_000.0;
const NS_PER_S: f64 = 1e9;
const BYTES_PER_MB: f64 = 1e6;

type Engine = Box<dyn IoEngine + Send>;

/// One entry's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryResult {
    pub id: String,
    pub source: String,
    pub stack: String,
    pub metric: Metric,
    pub published: f64,
    pub simulated: f64,
    /// (simulated − published) / published × 100.
    pub error_percent: f64,
    /// The reference file's reason the model misses this figure, if it gives one.
    pub known_gap: Option<String>,
    /// The measured points' warnings (a job's own, and the honesty check's: a driver that
    /// merged requests measures larger I/O than the entry names), the denominator's marked.
    pub warnings: Vec<String>,
}

/// Which scenario of an entry a work item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Scenario,
    Denominator,
}

/// How validation runs: extra profiles, parallelism, and the run's stop flag and live counters.
pub struct MeasureOptions<'a> {
    /// Directory of extra simulator profiles (`--profiles`).
    pub profiles: Option<&'a Path>,
    /// Scenarios measured at once.
    pub threads: usize,
    /// Set to stop issuing I/O (Ctrl-C).
    pub stop: &'a AtomicBool,
    /// Completions as they happen, for a live rate.
    pub live: Option<&'a LiveCounters>,
}

/// One scenario's outcome: its figure and the compared point's warnings.
pub type Measured = (f64, Vec<String>);

/// Run every entry, `options.threads` scenarios at a time; `on_scenario_done(label, metric,
/// value)` is called as each scenario finishes (for progress). The first failure, in file
/// order, is the error.
pub fn run_entries(
    entries: &[PlannedEntry],
    options: &MeasureOptions<'_>,
    on_scenario_done: &(dyn Fn(&str, Metric, f64) + Sync),
) -> Result<Vec<EntryResult>, LabError> {
    let measured = measure_scenarios(entries, &|_| true, options, on_scenario_done);
    assemble(
        entries,
        measured.into_iter().map(|slot| {
            slot.unwrap_or_else(|| Err(run_failed("a validation worker stopped unexpectedly")))
        }),
    )
}

/// The scenarios of `entries` in file order, each entry's own then its denominator's: what
/// [`measure_scenarios`] numbers and [`assemble`] reads back.
fn work_items(entries: &[PlannedEntry]) -> Vec<(usize, Part)> {
    entries
        .iter()
        .enumerate()
        .flat_map(|(i, e)| {
            std::iter::once((i, Part::Scenario))
                .chain(e.denominator.as_ref().map(|_| (i, Part::Denominator)))
        })
        .collect()
}

/// How many scenarios `entries` plan (an entry's own, and its denominator's if it has one).
pub fn scenario_count(entries: &[PlannedEntry]) -> usize {
    work_items(entries).len()
}

/// Measure the scenarios numbered `0..scenario_count(entries)` that `selected` picks,
/// `options.threads` at a time; the others stay `None`. A distributed run gives each process
/// its share and [`assemble`]s everyone's results, in the same numbering, on one of them.
pub fn measure_scenarios(
    entries: &[PlannedEntry],
    selected: &(dyn Fn(usize) -> bool + Sync),
    options: &MeasureOptions<'_>,
    on_scenario_done: &(dyn Fn(&str, Metric, f64) + Sync),
) -> Vec<Option<Result<Measured, LabError>>> {
    let threads = options.threads;
    let work = work_items(entries);
    let chosen: Vec<usize> = (0..work.len()).filter(|&item| selected(item)).collect();
    let values: Vec<Mutex<Option<Result<Measured, LabError>>>> =
        work.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let worker = || {
        while let Some(&item) = chosen.get(next.fetch_add(1, Ordering::Relaxed)) {
            let (entry_index, part) = work[item];
            let planned = &entries[entry_index];
            let (scenario, label) = match part {
                Part::Scenario => (&planned.scenario, planned.entry.id.clone()),
                Part::Denominator => match &planned.denominator {
                    Some(d) => (d, format!("{} (denominator)", planned.entry.id)),
                    None => continue,
                },
            };
            let value = measure(scenario, planned.entry.measured, options).map_err(|failure| {
                failure.with_message(|message| format!("entry '{}': {message}", planned.entry.id))
            });
            if let Ok((v, _)) = &value {
                on_scenario_done(&label, planned.entry.measured, *v);
            }
            if let Ok(mut slot) = values[item].lock() {
                *slot = Some(value);
            }
        }
    };
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, chosen.len().max(1)) {
            scope.spawn(worker);
        }
    });
    values
        .into_iter()
        .map(|slot| slot.into_inner().ok().flatten())
        .collect()
}

/// Every entry's result from its scenarios' outcomes, given in [`measure_scenarios`]'
/// numbering. The first failure, in file order, is the error.
pub fn assemble(
    entries: &[PlannedEntry],
    measured: impl IntoIterator<Item = Result<Measured, LabError>>,
) -> Result<Vec<EntryResult>, LabError> {
    let mut measured = measured.into_iter();
    let mut results = Vec::with_capacity(entries.len());
    for planned in entries {
        let entry = &planned.entry;
        let (numerator, mut warnings) = measured
            .next()
            .unwrap_or_else(|| Err(run_failed("missing result")))?;
        let simulated = match &planned.denominator {
            None => numerator,
            Some(_) => {
                let (denominator, denominator_warnings) = measured
                    .next()
                    .unwrap_or_else(|| Err(run_failed("missing result")))?;
                warnings.extend(
                    denominator_warnings
                        .into_iter()
                        .map(|w| format!("denominator: {w}")),
                );
                if denominator <= 0.0 {
                    return Err(run_failed(format!(
                        "entry '{}': the denominator scenario measured {} = {denominator}; a ratio needs it above 0",
                        entry.id, entry.measured
                    )));
                }
                numerator / denominator
            }
        };
        results.push(EntryResult {
            id: entry.id.clone(),
            source: entry.source.clone(),
            stack: entry.scenario.stack.clone(),
            metric: entry.metric,
            published: entry.published,
            simulated,
            error_percent: (simulated - entry.published) / entry.published * 100.0,
            known_gap: entry.known_gap.clone(),
            warnings,
        });
    }
    Ok(results)
}

/// Lends the provider to the sweep and keeps every simulator report handed back, in order,
/// so a figure can be taken over the measured job alone (the simulator's counters run from the
/// start of the session, state preparation included).
struct ReportTrail<'a> {
    provider: &'a mut Provider,
    /// (job name, the simulator's report when the job handed the stack back).
    released: Vec<(String, EngineReport)>,
}

impl EngineProvider for ReportTrail<'_> {
    fn open(&mut self, job: &JobSpec) -> Result<Vec<Engine>, RunError> {
        self.provider.open(job)
    }

    fn release(&mut self, job: &JobSpec, engines: Vec<Engine>) {
        if let Some(engine) = engines.first() {
            self.released.push((job.name.clone(), engine.report()));
        }
        self.provider.release(job, engines);
    }
}

/// Run one scenario on a fresh simulated stack and return its `metric` and the compared point's
/// warnings.
pub fn measure(
    scenario: &PlannedScenario,
    metric: Metric,
    options: &MeasureOptions<'_>,
) -> Result<(f64, Vec<String>), LabError> {
    // Validation measures timing only: keeping written bytes would hold a whole-drive fill
    // (the M225's 64 GB) in RAM.
    let mut provider = Provider::new(ProviderOptions {
        profiles: options.profiles.map(PathBuf::from),
        sim_timing_only: true,
        sim_faults: scenario.faults.clone(),
        ..ProviderOptions::default()
    });
    let mut trail = ReportTrail {
        provider: &mut provider,
        released: Vec::new(),
    };
    let run_options = RunOptions {
        interval_ns: DEFAULT_INTERVAL_NS,
        stop: options.stop,
        live: options.live,
    };
    let mut measured: Vec<MeasuredPoint> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    crate::sweep::sweep(
        &mut trail,
        &run_options,
        scenario.preset.as_ref(),
        &scenario.points,
        scenario.state,
        false,
        &mut |_| {},
        &mut measured,
        &mut notes,
        &mut Vec::new(),
    )
    .map_err(classify)?;
    // The compared point's last measurement (steady-state presets measure it once per round).
    let point = measured
        .iter()
        .rev()
        .find(|m| same_point(&m.point.coords, &scenario.selected.coords))
        .ok_or_else(|| {
            run_failed(format!(
                "point {} was not measured (interrupted?)",
                scenario.selected.job.name
            ))
        })?;
    let warnings = point
        .point
        .job
        .warnings
        .iter()
        .cloned()
        .chain(point.warnings.iter().map(ToString::to_string))
        .collect();
    Ok((value_of(point, metric, &trail.released)?, warnings))
}

/// Whether two points have the same coordinates, ignoring the round a steady-state sweep adds.
fn same_point(measured: &[(String, String)], selected: &[(String, String)]) -> bool {
    let without_round = |coords: &[(String, String)]| -> Vec<(String, String)> {
        coords
            .iter()
            .filter(|(name, _)| name != COORD_ROUND)
            .cloned()
            .collect()
    };
    without_round(measured) == without_round(selected)
}

/// `metric` of a measured point over its measured window. `released` is the trail of
/// simulator reports, the point's own among them.
fn value_of(
    point: &MeasuredPoint,
    metric: Metric,
    released: &[(String, EngineReport)],
) -> Result<f64, LabError> {
    let mut merged = WorkerStats::new(DEFAULT_INTERVAL_NS);
    for worker in &point.outcome.workers {
        merged.merge(worker);
    }
    let seconds = merged.elapsed_ns as f64 / NS_PER_S;
    let per_second = |amount: u64| {
        if seconds > 0.0 {
            amount as f64 / seconds
        } else {
            0.0
        }
    };
    let completion_latency = || {
        let mut histogram: LatencyHistogram = merged.read.clat.clone();
        histogram.merge(&merged.write.clat);
        histogram
    };
    match metric {
        Metric::Mbps => Ok(per_second(merged.read.bytes + merged.write.bytes) / BYTES_PER_MB),
        Metric::Iops => Ok(per_second(merged.read.ios + merged.write.ios)),
        Metric::LatencyMeanUs => Ok(completion_latency().mean_ns() / NS_PER_US),
        Metric::LatencyP99Us => {
            Ok(completion_latency().percentile_ns(P99_PERCENTILE) as f64 / NS_PER_US)
        }
        Metric::CpuPercent => host_cpu_percent(&point.outcome.job.name, released),
        Metric::Ratio => Err(run_failed(
            "a ratio is measured as two figures, not one (internal error)",
        )),
    }
}

/// (busy ns of the host CPU layer over the host's hardware threads, elapsed ns) of the
/// simulator session so far: CPU use is a share of the whole CPU, as the reviews print it.
fn host_cpu_counters(report: &EngineReport) -> Option<(u64, u64)> {
    let sim = report.sim.as_deref()?;
    let threads = u64::from(sim.host_cpu_threads.max(1));
    let busy_ns = sim.layer(HOST_CPU_LAYER)?.busy_ns;
    Some((busy_ns / threads, sim.elapsed_ns))
}

/// The host CPU busy share, in percent, while the job `job_name` ran: the difference of the
/// simulator's cumulative counters between the report before the job and the job's own.
fn host_cpu_percent(job_name: &str, released: &[(String, EngineReport)]) -> Result<f64, LabError> {
    let missing = || {
        run_failed(format!(
            "job {job_name}: the simulator reported no {HOST_CPU_LAYER} figures"
        ))
    };
    let position = released
        .iter()
        .rposition(|(name, _)| name == job_name)
        .ok_or_else(missing)?;
    let (busy_after, elapsed_after) =
        host_cpu_counters(&released[position].1).ok_or_else(missing)?;
    let (busy_before, elapsed_before) = match position.checked_sub(1) {
        Some(before) => host_cpu_counters(&released[before].1).ok_or_else(missing)?,
        None => (0, 0),
    };
    let elapsed_ns = elapsed_after.saturating_sub(elapsed_before);
    if elapsed_ns == 0 {
        return Ok(0.0);
    }
    Ok(busy_after.saturating_sub(busy_before) as f64 / elapsed_ns as f64 * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(busy_ns: u64, elapsed_ns: u64) -> EngineReport {
        let profiles = storlab_sim::ProfileSet::embedded();
        let mut sim = storlab_sim::Simulator::from_profiles(&profiles, "usb3-uas-ssd", 1)
            .expect("shipped stack")
            .report();
        sim.elapsed_ns = elapsed_ns;
        sim.host_cpu_threads = 1;
        for layer in &mut sim.layers {
            layer.busy_ns = if layer.name == HOST_CPU_LAYER {
                busy_ns
            } else {
                1
            };
        }
        EngineReport {
            details: Vec::new(),
            sim: Some(Box::new(sim)),
        }
    }

    #[test]
    fn host_cpu_is_taken_over_the_job_alone() {
        // A preparation step kept the CPU 50% busy for 10 s; the job then added 1 s busy in 20 s.
        let trail = vec![
            ("trim".to_string(), report(5_000_000_000, 10_000_000_000)),
            ("point".to_string(), report(6_000_000_000, 30_000_000_000)),
        ];
        let percent = host_cpu_percent("point", &trail).unwrap();
        assert!((percent - 5.0).abs() < 1e-9, "{percent}");
        // With nothing before, the whole session is the job.
        let percent = host_cpu_percent("trim", &trail).unwrap();
        assert!((percent - 50.0).abs() < 1e-9, "{percent}");
        assert!(host_cpu_percent("other", &trail).is_err());
    }

    #[test]
    fn points_compare_without_their_round() {
        let coords = |round: Option<&str>| {
            let mut c = vec![("series".to_string(), "x".to_string())];
            if let Some(r) = round {
                c.push((COORD_ROUND.to_string(), r.to_string()));
            }
            c
        };
        assert!(same_point(&coords(Some("3")), &coords(None)));
        assert!(!same_point(
            &[("series".to_string(), "y".to_string())],
            &coords(None)
        ));
    }
}
