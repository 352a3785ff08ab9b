//! Sweeps on one target: a preset's points (its series expanded, or FC-Test's file sets as
//! block-level streams) or a job set's jobs, run after the target is put in the requested device
//! state, point by point or in rounds until SNIA PTS steady state, each measured point with the
//! state it was measured in and its honesty warnings.

use crate::error::{bad_input, LabError};
use crate::outcome::job_reports;
use crate::provider::Provider;
use std::os::unix::fs::FileTypeExt;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use storlab_job::preset::{
    direction_label, FileSet, Preset, SteadyState, SweepPoint, COORD_DIRECTION, COORD_ROUND,
    COORD_SERIES,
};
use storlab_job::size::parse_size;
use storlab_job::steps::{DeviceState, Step, SEQ_FILL_BLOCK_BYTES};
use storlab_job::{JobSet, JobSpec, Target};
use storlab_report::JobReport;
use storlab_runner::sweep::{MeasuredPoint, Preparation, Sweeper};
use storlab_runner::{RunError, RunOptions, DEFAULT_INTERVAL_NS};

/// Largest transfer FC-Test's block-level streams use (a file copy's buffer).
const FILE_COPY_BLOCK_BYTES: u64 = 1 << 20;

/// Job flags as (key, value) overrides of a preset.
pub fn overrides_of(flags: &[String]) -> Result<Vec<(String, Option<String>)>, LabError> {
    flags
        .iter()
        .map(|flag| {
            let body = flag.strip_prefix("--").unwrap_or(flag);
            let (key, value) = match body.split_once('=') {
                Some((k, v)) => (k, Some(v.to_string())),
                None => (body, None),
            };
            if !storlab_job::flags::is_job_key(key) {
                return Err(bad_input(format!(
                    "{flag}: unknown job flag (see `storlab run --help`)"
                )));
            }
            if key == "name" {
                return Err(bad_input(
                    "--name: a preset names its own points; run a job file for custom jobs",
                ));
            }
            Ok((key.to_string(), value))
        })
        .collect()
}

/// The job the target is first opened with: large enough for every point given in bytes (a
/// temporary file is laid out at that size). No I/O runs on it; the state steps run on the
/// points' own regions, resolved once the target is open (`state_regions`).
fn opening_job(points: &[SweepPoint]) -> Option<JobSpec> {
    let first = points.first()?;
    let mut job = first.job.clone();
    job.name = "state".into();
    job.numjobs = 1;
    job.offset_increment_bytes = 0;
    job.offset_bytes = 0;
    job.target_shares = Default::default();
    // A point given in shares of the target (`offset=50%`) needs a target that exists.
    job.size_bytes = points
        .iter()
        .map(|p| {
            if !p.job.target_shares.is_unset() {
                return None;
            }
            p.job.size_bytes.map(|size| {
                p.job.offset_bytes
                    + u64::from(p.job.numjobs.saturating_sub(1)) * p.job.offset_increment_bytes
                    + size
            })
        })
        .collect::<Option<Vec<u64>>>()
        .and_then(|ends| ends.into_iter().max());
    Some(job)
}

/// Open the target for writing with `opener` and return its size. The provider keeps the target
/// open for the points; a target first opened by a read point would stay read-only.
fn open_for_writing(
    provider: &mut dyn storlab_runner::EngineProvider,
    opener: &JobSpec,
) -> Result<u64, RunError> {
    let mut writer = opener.clone();
    writer.read_percent = 0;
    let engines = storlab_runner::EngineProvider::open(provider, &writer)?;
    let target_size_bytes = engines.first().map(|e| e.target_size_bytes());
    storlab_runner::EngineProvider::release(provider, &writer, engines);
    target_size_bytes.ok_or_else(|| RunError::Protocol("provider opened no engine".into()))
}

/// The size of the points' target when it is fixed (a simulated drive, a block device), found by
/// opening it (for writing when a point writes, so the provider's opening serves every point);
/// `None` for a file, which is laid out to the size the points ask for.
fn fixed_target_size(
    provider: &mut dyn storlab_runner::EngineProvider,
    points: &[SweepPoint],
    writes: bool,
) -> Result<Option<u64>, RunError> {
    let Some(first) = points.first() else {
        return Ok(None);
    };
    let fixed = match &first.job.target {
        Target::Sim(_) => true,
        Target::Path(path) => {
            std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
        }
        Target::TempFileIn(_) | Target::None => false,
    };
    if !fixed {
        return Ok(None);
    }
    let mut probe = first.job.clone();
    probe.name = "target size".into();
    probe.numjobs = 1;
    probe.offset_bytes = 0;
    probe.offset_increment_bytes = 0;
    probe.size_bytes = None;
    probe.target_shares = Default::default();
    probe.read_percent = if writes { 0 } else { 100 };
    probe.verify = false;
    let engines = storlab_runner::EngineProvider::open(provider, &probe)?;
    let size = engines.first().map(|e| e.target_size_bytes());
    storlab_runner::EngineProvider::release(provider, &probe, engines);
    size.map(Some)
        .ok_or_else(|| RunError::Protocol("provider opened no engine".into()))
}

/// FC-Test file sets as block-level streams: create = sequential write of the set, read =
/// sequential read, copy within = interleaved read and write next to it, copy across = the same
/// in a second area of the target.
fn fileset_points(
    preset: &Preset,
    overrides: &[(String, Option<String>)],
    target: &Target,
) -> Result<Vec<SweepPoint>, LabError> {
    let cap_bytes = overrides
        .iter()
        .find(|(k, _)| k == "size")
        .and_then(|(_, v)| v.as_deref())
        .map(parse_size)
        .transpose()
        .map_err(|e| bad_input(format!("--size: {}", e.0)))?;
    // The streams lie side by side from `--offset` on (bytes: they are laid out before the
    // target is open), so they never write below the area asked for.
    let base_offset_bytes = match overrides
        .iter()
        .find(|(k, _)| k == "offset")
        .and_then(|(_, v)| v.as_deref())
    {
        None => 0,
        Some(text) if text.trim_end().ends_with('%') => {
            return Err(bad_input(format!(
                "--offset={text}: preset {} lays out its streams in bytes; give the offset in bytes (e.g. --offset=32m)",
                preset.name
            )))
        }
        Some(text) => parse_size(text).map_err(|e| bad_input(format!("--offset: {}", e.0)))?,
    };
    let mut rest: Vec<(String, Option<String>)> = overrides
        .iter()
        .filter(|(k, _)| k != "size")
        .cloned()
        .collect();
    rest.retain(|(k, _)| !matches!(k.as_str(), "rw" | "bs" | "offset" | "rwmixread"));
    let mut points = Vec::new();
    for set in &preset.filesets {
        let (files, file_bytes) = scaled_fileset(set, cap_bytes);
        let total = files * file_bytes;
        let bs = file_bytes.min(FILE_COPY_BLOCK_BYTES);
        let operations = [
            ("create", "write", 0, total),
            ("read", "read", 0, total),
            ("copy-within", "rw", 0, 2 * total),
            ("copy-across", "rw", 2 * total, 2 * total),
        ];
        for (operation, rw, relative_offset, size) in operations {
            let offset = base_offset_bytes
                .checked_add(relative_offset)
                .ok_or_else(|| {
                    bad_input(format!(
                        "--offset={base_offset_bytes}: preset {}'s streams would end past 16 EiB",
                        preset.name
                    ))
                })?;
            let mut flags = vec![
                format!("--name={}", set.name),
                format!("--rw={rw}"),
                format!("--bs={bs}"),
                format!("--offset={offset}"),
                format!("--size={size}"),
            ];
            for (key, _) in &preset.keys {
                if key != "bs" {
                    let value = preset
                        .keys
                        .iter()
                        .find(|(k, _)| k == key)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default();
                    flags.insert(1, format!("--{key}={value}"));
                }
            }
            flags.extend(rest.iter().map(|(k, v)| match v {
                Some(v) => format!("--{k}={v}"),
                None => format!("--{k}"),
            }));
            let mut set_jobs = storlab_job::parse_flags(&flags, Some(target))
                .map_err(|e| bad_input(format!("preset {}: {e}", preset.name)))?;
            let mut job = set_jobs.jobs.remove(0);
            // A preset's point keeps storlab's own generator (ADR 0021).
            job.fio_random = None;
            job.name = format!("{}/{}/{operation}", preset.name, set.name);
            job.group_reporting = true;
            job.stonewall = true;
            points.push(SweepPoint {
                coords: vec![
                    (COORD_SERIES.into(), set.name.clone()),
                    ("fileset".into(), set.name.clone()),
                    ("operation".into(), operation.into()),
                    ("direction".into(), direction_label(&job)),
                ],
                job,
            });
        }
    }
    Ok(points)
}

/// (files, bytes per file) of a set, capped at `cap_bytes` in total: fewer files, and a single
/// file shrinks to the cap (rounded down to 4 KiB, at least 4 KiB).
pub fn scaled_fileset(set: &FileSet, cap_bytes: Option<u64>) -> (u64, u64) {
    let file_bytes = set.file_size_bytes();
    match cap_bytes {
        Some(cap) if set.files * file_bytes > cap => {
            if file_bytes > cap {
                (1, (cap / 4096).max(1) * 4096)
            } else {
                ((cap / file_bytes).max(1), file_bytes)
            }
        }
        _ => (set.files, file_bytes),
    }
}

/// Whether the tracked figure of the last `spec.window_rounds` rounds is steady: range within
/// `max_range_percent` of the mean and the least-squares slope's change over the window within
/// `max_slope_percent` of the mean (SNIA PTS).
pub fn is_steady(values: &[f64], spec: &SteadyState) -> bool {
    let n = spec.window_rounds;
    if n < 2 || values.len() < n {
        return false;
    }
    let window = &values[values.len() - n..];
    let mean = window.iter().sum::<f64>() / n as f64;
    if mean <= 0.0 {
        return false;
    }
    let (min, max) = window
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let x_mean = (n - 1) as f64 / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &v) in window.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxy += dx * (v - mean);
        sxx += dx * dx;
    }
    let slope_change = (sxy / sxx * (n - 1) as f64).abs();
    (max - min) <= spec.max_range_percent / 100.0 * mean
        && slope_change <= spec.max_slope_percent / 100.0 * mean
}

/// The sweep points of `preset` on `target` with `overrides` (key, value) applied: its series
/// expanded, or for a file-set preset (FC-Test) its block-level streams.
pub fn preset_points(
    preset: &Preset,
    overrides: &[(String, Option<String>)],
    target: &Target,
) -> Result<Vec<SweepPoint>, LabError> {
    if preset.filesets.is_empty() {
        preset.expand(overrides, target).map_err(bad_input)
    } else {
        fileset_points(preset, overrides, target)
    }
}

/// The jobs of a job set as sweep points, one per job, with the series and direction
/// coordinates a preset point has.
pub fn job_points(set: JobSet) -> Vec<SweepPoint> {
    set.jobs
        .into_iter()
        .map(|job| SweepPoint {
            coords: vec![
                (COORD_SERIES.into(), job.name.clone()),
                (COORD_DIRECTION.into(), direction_label(&job)),
            ],
            job,
        })
        .collect()
}

/// The reports of one measured point, with the device state it was measured in and its
/// honesty warnings.
pub fn point_reports(m: &MeasuredPoint, provider: &Provider) -> Vec<JobReport> {
    job_reports(
        &m.outcome,
        provider,
        &m.warnings,
        m.outcome.engine_reports.first(),
    )
    .into_iter()
    .map(|mut job_report| {
        job_report.setup.device_state = m.device_state.clone();
        job_report
    })
    .collect()
}

/// Prepare the target, then measure every point (or rounds of them until steady state);
/// `preparations` gets what the state steps took (`Sweeper::preparations`).
#[allow(clippy::too_many_arguments)]
pub fn sweep(
    provider: &mut dyn storlab_runner::EngineProvider,
    options: &RunOptions<'_>,
    preset: Option<&Preset>,
    points: &[SweepPoint],
    state: DeviceState,
    trim_between_steps: bool,
    point_done: &mut dyn FnMut(&MeasuredPoint),
    measured: &mut Vec<MeasuredPoint>,
    notes: &mut Vec<String>,
    preparations: &mut Vec<Preparation>,
) -> Result<(), RunError> {
    let writes = points.iter().any(|p| p.job.read_percent < 100);
    let fitted = fit_to_fixed_target(provider, preset, points, writes, notes)?;
    let points = fitted.as_deref().unwrap_or(points);
    let Some(opener) = opening_job(points) else {
        return Ok(());
    };
    let steady = preset.and_then(|p| p.steady_state.as_ref());
    let preconditions = steady.map_or(0, |s| s.precondition_passes);
    let prepares = state != DeviceState::AsFound || preconditions > 0;
    // The provider opens a target once and reuses it for later jobs; open it for writing first
    // when anything will write, or a leading read point would leave it read-only.
    let target_size_bytes = if prepares || writes {
        Some(open_for_writing(provider, &opener)?)
    } else {
        None
    };
    // The state and the preconditioning act on the bytes the points measure and nothing else:
    // every point's worker regions, shares resolved against the open target's size, overlapping
    // ones merged and disjoint ones kept apart (the gap between two areas is not touched).
    let regions = match target_size_bytes {
        Some(size) if prepares => {
            storlab_runner::state::covering_regions(points.iter().map(|p| &p.job), size)?
        }
        _ => Vec::new(),
    };
    // The state's jobs take the first point's target, engine and O_DIRECT setting.
    let mut template = opener;
    template.read_percent = 0;
    let mut sweeper = Sweeper::new(provider, options);
    let result = (|| {
        if sweeper.prepare(state, &template, &regions)? {
            return Ok(());
        }
        let mut on_point = |m: MeasuredPoint| {
            point_done(&m);
            measured.push(m);
        };
        let Some(steady) = steady else {
            for point in points {
                if options.stop.load(Ordering::Relaxed) {
                    break;
                }
                if let Some(m) = sweeper.measure(point, trim_between_steps)? {
                    on_point(m);
                }
            }
            return Ok(());
        };
        if precondition(&mut sweeper, preconditions, &template, &regions)? {
            return Ok(());
        }
        let rounds = Rounds {
            points,
            steady,
            trim_between_steps,
            stop: options.stop,
        };
        notes.extend(rounds.measure_until_steady(&mut sweeper, &mut on_point)?);
        Ok(())
    })();
    // What the state took is reported whether or not every point ran.
    preparations.extend_from_slice(sweeper.preparations());
    result
}

/// A preset's test areas fitted to a target of fixed size (they shrink, or the preset is
/// refused with one line) before anything runs on it, with a note of each change; `None` when
/// nothing needs fitting (no preset, or a target that grows to fit).
fn fit_to_fixed_target(
    provider: &mut dyn storlab_runner::EngineProvider,
    preset: Option<&Preset>,
    points: &[SweepPoint],
    writes: bool,
    notes: &mut Vec<String>,
) -> Result<Option<Vec<SweepPoint>>, RunError> {
    let (Some(preset), Some(target_size_bytes)) =
        (preset, fixed_target_size(provider, points, writes)?)
    else {
        return Ok(None);
    };
    let mut copy = points.to_vec();
    let fit_notes = storlab_job::preset::fit_points_to_target(&mut copy, target_size_bytes)
        .map_err(|reason| RunError::Plan {
            job: preset.name.clone(),
            reason,
        })?;
    notes.extend(
        fit_notes
            .into_iter()
            .map(|n| format!("{}: {n}", preset.name)),
    );
    Ok(Some(copy))
}

/// Steady state's preconditioning passes over `regions`: each the sequential fill of a
/// seq-filled state, without its TRIM. `true` when stopped.
fn precondition(
    sweeper: &mut Sweeper<'_, '_>,
    passes: u32,
    template: &JobSpec,
    regions: &[storlab_runner::Region],
) -> Result<bool, RunError> {
    sweeper.preparing("preconditioning");
    for pass in 0..passes {
        let fills = storlab_runner::state::state_steps(DeviceState::SeqFilled, template, regions)
            .into_iter()
            .filter_map(|step| match step {
                Step::Prepare { job, .. } => Some(job),
                Step::Trim { .. } => None,
            });
        for mut job in fills {
            job.name = format!("precondition-{}", pass + 1);
            let step = Step::Prepare {
                job,
                state_after: format!(
                    "preconditioned ({}x sequential {} KiB writes)",
                    pass + 1,
                    SEQ_FILL_BLOCK_BYTES / 1024
                ),
            };
            if sweeper.step(&step)? {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// A steady-state sweep's rounds: every point once a round, until the tracked points' IOPS
/// hold still (SNIA PTS) or the rounds run out.
struct Rounds<'a> {
    points: &'a [SweepPoint],
    steady: &'a SteadyState,
    trim_between_steps: bool,
    stop: &'a std::sync::atomic::AtomicBool,
}

impl Rounds<'_> {
    /// Measures round after round; the note says whether and when steady state was reached
    /// (none when an interruption or a stopped point ended the rounds).
    fn measure_until_steady(
        &self,
        sweeper: &mut Sweeper<'_, '_>,
        on_point: &mut dyn FnMut(MeasuredPoint),
    ) -> Result<Option<String>, RunError> {
        let steady = self.steady;
        let mut tracked: Vec<f64> = Vec::new();
        for round in 1..=steady.max_rounds {
            for point in self.points {
                if self.stop.load(Ordering::Relaxed) {
                    return Ok(None);
                }
                let mut point = point.clone();
                point.coords.push((COORD_ROUND.into(), round.to_string()));
                point.job.name = format!("{} round={round}", point.job.name);
                let Some(m) = sweeper.measure(&point, self.trim_between_steps)? else {
                    return Ok(None);
                };
                let is_tracked = steady
                    .track
                    .iter()
                    .all(|(k, v)| m.point.coord(k) == Some(v.as_str()));
                if is_tracked {
                    tracked.push(metric_value_of(&m, storlab_job::preset::Metric::Iops));
                }
                on_point(m);
            }
            if is_steady(&tracked, steady) {
                return Ok(Some(format!(
                    "steady state reached in round {round}: the tracked IOPS of rounds {}..={round} stay within {}% (range) and {}% (slope) of their mean",
                    round + 1 - steady.window_rounds,
                    steady.max_range_percent,
                    steady.max_slope_percent
                )));
            }
        }
        Ok(Some(format!(
            "steady state NOT reached within {} rounds; the figures are of a drive still changing",
            steady.max_rounds
        )))
    }
}

pub fn metric_value_of(m: &MeasuredPoint, metric: storlab_job::preset::Metric) -> f64 {
    let mut merged = storlab_stats::WorkerStats::new(DEFAULT_INTERVAL_NS);
    for w in &m.outcome.workers {
        merged.merge(w);
    }
    let seconds = merged.elapsed_ns as f64 / 1e9;
    if seconds <= 0.0 {
        return 0.0;
    }
    match metric {
        storlab_job::preset::Metric::Iops => merged.total_ios() as f64 / seconds,
        _ => (merged.read.bytes + merged.write.bytes) as f64 / seconds / 1e6,
    }
}

/// The directory a file-set preset (fctest) runs in with real files: a directory target, or the
/// current directory when no target was named. Simulated and block targets get block streams.
pub fn fctest_directory(preset: &Preset, target: &Target) -> Option<PathBuf> {
    if preset.filesets.is_empty() {
        return None;
    }
    match target {
        Target::TempFileIn(dir) => Some(dir.clone()),
        Target::Path(path) if path.is_dir() => Some(path.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn spec() -> SteadyState {
        SteadyState {
            track: BTreeMap::new(),
            window_rounds: 5,
            max_range_percent: 20.0,
            max_slope_percent: 10.0,
            max_rounds: 25,
            precondition_passes: 2,
        }
    }

    #[test]
    fn steady_state_needs_a_full_flat_window() {
        assert!(!is_steady(&[100.0; 4], &spec()), "window not full");
        assert!(is_steady(
            &[500.0, 300.0, 100.0, 102.0, 98.0, 101.0, 99.0],
            &spec()
        ));
        // Within range but drifting: 0.8 + 0.8 + ... slope change 16% of the mean > 10%.
        assert!(!is_steady(&[92.0, 96.0, 100.0, 104.0, 108.0], &spec()));
        // Flat trend but a 30% spread.
        assert!(!is_steady(&[85.0, 115.0, 85.0, 115.0, 100.0], &spec()));
    }

    #[test]
    fn filesets_scale_to_the_cap() {
        let set = |files, size: &str| FileSet {
            name: "x".into(),
            files,
            file_size: size.into(),
            files_per_dir: 1,
        };
        assert_eq!(
            scaled_fileset(&set(1000, "128k"), Some(1 << 20)),
            (8, 128 << 10)
        );
        assert_eq!(scaled_fileset(&set(3, "512m"), Some(8 << 20)), (1, 8 << 20));
        assert_eq!(scaled_fileset(&set(3, "4k"), None), (3, 4096));
    }

    /// Regression: FC-Test's block streams dropped `--offset` and wrote from byte 0.
    #[test]
    fn fctest_streams_start_at_the_offset_asked_for() {
        let preset = storlab_job::preset::load("fctest").unwrap();
        let target = Target::Sim("usb3-uas-ssd".into());
        let overrides = |offset: &str| {
            vec![
                ("size".to_string(), Some("4m".to_string())),
                ("offset".to_string(), Some(offset.to_string())),
            ]
        };
        let points = preset_points(&preset, &overrides("32m"), &target).unwrap();
        assert!(!points.is_empty());
        for point in &points {
            assert!(point.job.offset_bytes >= 32 << 20, "{}", point.job.name);
        }
        assert_eq!(points[0].job.offset_bytes, 32 << 20);
        let Err(share) = preset_points(&preset, &overrides("50%"), &target) else {
            panic!("a share offset is refused");
        };
        let crate::error::LabError::BadInput(message) = share else {
            panic!("bad input expected");
        };
        assert!(message.contains("--offset=50%"), "{message}");
    }

    /// The bytes state steps and points touch, recorded by engines the sweep runs on.
    mod regions {
        use super::super::sweep;
        use proptest::prelude::*;
        use std::sync::{Arc, Mutex};
        use storlab_engine::engines::null::NullEngine;
        use storlab_engine::observed::{EngineObserver, Observed};
        use storlab_engine::{IoDirection, IoEngine, IoRequest};
        use storlab_job::preset::SweepPoint;
        use storlab_job::steps::DeviceState;
        use storlab_job::{EngineKind, JobSpec, Target};
        use storlab_runner::{plan_regions, EngineProvider, RunError, RunOptions};

        /// Every write and discard an engine received: (job name, direction, offset, length).
        type Log = Arc<Mutex<Vec<(String, IoDirection, u64, u32)>>>;

        /// Remembers every request the null engine it watches is given, with its job.
        struct Recording {
            job: String,
            log: Log,
        }

        impl EngineObserver for Recording {
            fn on_queue(&mut self, request: &IoRequest) {
                self.log.lock().unwrap().push((
                    self.job.clone(),
                    request.direction,
                    request.offset_bytes,
                    request.len_bytes,
                ));
            }
        }

        /// Never set: these sweeps run to the end.
        static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

        struct RecordingProvider {
            target_size_bytes: u64,
            log: Log,
        }

        impl EngineProvider for RecordingProvider {
            fn open(&mut self, job: &JobSpec) -> Result<Vec<Box<dyn IoEngine + Send>>, RunError> {
                Ok((0..job.numjobs)
                    .map(|_| {
                        let recording = Recording {
                            job: job.name.clone(),
                            log: self.log.clone(),
                        };
                        let inner: Box<dyn IoEngine + Send> =
                            Box::new(NullEngine::new(self.target_size_bytes));
                        Box::new(Observed::new(inner, recording)) as Box<dyn IoEngine + Send>
                    })
                    .collect())
            }
        }

        const BLOCK_BYTES: u64 = 4096;

        /// 4 KiB blocks marked by `ranges` on a target of `blocks` blocks.
        fn block_map(blocks: u64, ranges: impl IntoIterator<Item = (u64, u64)>) -> Vec<bool> {
            let mut map = vec![false; blocks as usize];
            for (start, len) in ranges {
                assert_eq!((start % BLOCK_BYTES, len % BLOCK_BYTES), (0, 0));
                for block in start / BLOCK_BYTES..(start + len) / BLOCK_BYTES {
                    map[block as usize] = true;
                }
            }
            map
        }

        /// What a sweep of `jobs` in `state` on a null target of `target_bytes` did: the blocks
        /// the points measure, and the state steps' trims, fill writes (with their byte count)
        /// and fragmenting write bytes.
        struct Touched {
            measured: Vec<bool>,
            trimmed: Vec<bool>,
            filled: Vec<bool>,
            filled_bytes: u64,
            fragment_bytes: u64,
            outside: Vec<(String, IoDirection, u64, u32)>,
        }

        fn sweep_on_null(jobs: &[JobSpec], state: DeviceState, target_bytes: u64) -> Touched {
            let log = Log::default();
            let mut provider = RecordingProvider {
                target_size_bytes: target_bytes,
                log: log.clone(),
            };
            let options = RunOptions {
                interval_ns: storlab_runner::DEFAULT_INTERVAL_NS,
                stop: &STOP,
                live: None,
            };
            let points: Vec<SweepPoint> = jobs
                .iter()
                .map(|job| SweepPoint {
                    coords: Vec::new(),
                    job: job.clone(),
                })
                .collect();
            sweep(
                &mut provider,
                &options,
                None,
                &points,
                state,
                false,
                &mut |_| {},
                &mut Vec::new(),
                &mut Vec::new(),
                &mut Vec::new(),
            )
            .expect("sweep runs");
            let blocks = target_bytes / BLOCK_BYTES;
            let measured = block_map(
                blocks,
                jobs.iter()
                    .flat_map(|job| plan_regions(job, target_bytes).unwrap())
                    .map(|r| (r.start_bytes, r.len_bytes)),
            );
            let log = log.lock().unwrap().clone();
            let state_io = |name: &'static str, direction: IoDirection| {
                log.iter()
                    .filter(move |(job, d, _, _)| job.ends_with(name) && *d == direction)
                    .map(|(_, _, offset, len)| (*offset, u64::from(*len)))
            };
            let outside = log
                .iter()
                .filter(|(_, direction, offset, len)| {
                    *direction != IoDirection::Read
                        && (offset / BLOCK_BYTES..(offset + u64::from(*len)).div_ceil(BLOCK_BYTES))
                            .any(|block| !measured[block as usize])
                })
                .cloned()
                .collect();
            Touched {
                trimmed: block_map(blocks, state_io(":trim", IoDirection::Trim)),
                filled: block_map(blocks, state_io(":seq-fill", IoDirection::Write)),
                filled_bytes: state_io(":seq-fill", IoDirection::Write)
                    .map(|(_, len)| len)
                    .sum(),
                fragment_bytes: state_io(":fragment", IoDirection::Write)
                    .map(|(_, len)| len)
                    .sum(),
                measured,
                outside,
            }
        }

        fn reader(offset_bytes: u64, size_bytes: u64) -> JobSpec {
            let mut job = JobSpec::new("point", EngineKind::Null, Target::None);
            job.offset_bytes = offset_bytes;
            job.size_bytes = Some(size_bytes);
            job.number_ios = Some(2);
            job
        }

        const MIB: u64 = 1 << 20;

        /// The cases on a 64 MiB target: `--size=10% --offset=50%` discarded all of it,
        /// `--size=6m --offset=32m` wrote MiB 0-38.
        #[test]
        fn a_state_keeps_to_the_measured_region() {
            let mut shares = reader(0, 0);
            shares.size_bytes = None;
            shares.target_shares.offset_ppm = Some(500_000);
            shares.target_shares.size_ppm = Some(100_000);
            for job in [shares, reader(32 * MIB, 6 * MIB)] {
                for state in [
                    DeviceState::Fresh,
                    DeviceState::SeqFilled,
                    DeviceState::Fragmented { bytes: MIB },
                ] {
                    let touched = sweep_on_null(std::slice::from_ref(&job), state, 64 * MIB);
                    assert!(touched.outside.is_empty(), "{state}: {:?}", touched.outside);
                    assert_eq!(touched.trimmed, touched.measured, "{state}: trims");
                }
            }
        }

        /// Workers apart (`offset_increment` larger than `size`) keep the gap between them.
        #[test]
        fn a_state_leaves_the_gaps_between_disjoint_workers() {
            let mut job = reader(8 * MIB, MIB);
            job.numjobs = 2;
            job.offset_increment_bytes = 4 * MIB;
            let touched =
                sweep_on_null(&[job], DeviceState::Fragmented { bytes: 4 * MIB }, 64 * MIB);
            assert!(touched.outside.is_empty(), "{:?}", touched.outside);
            assert_eq!(touched.trimmed, touched.measured);
            assert_eq!(touched.filled, touched.measured);
            assert_eq!(touched.filled_bytes, 2 * MIB);
            assert_eq!(touched.fragment_bytes, 4 * MIB);
        }

        /// A point's offset, size and worker spacing: bytes (4 KiB blocks) or shares (ppm).
        #[derive(Clone, Debug)]
        enum Amount {
            Blocks(u64),
            Share(u32),
        }

        fn amount(max_blocks: u64) -> impl Strategy<Value = Amount> {
            prop_oneof![
                (0..max_blocks).prop_map(Amount::Blocks),
                (0u32..=1_000_000).prop_map(Amount::Share),
            ]
        }

        fn point() -> impl Strategy<Value = JobSpec> {
            (amount(8192), amount(4096), amount(4096), 1u32..=4).prop_map(
                |(offset, size, increment, numjobs)| {
                    let mut job = reader(0, 0);
                    job.numjobs = numjobs;
                    match offset {
                        Amount::Blocks(b) => job.offset_bytes = b * BLOCK_BYTES,
                        Amount::Share(ppm) => job.target_shares.offset_ppm = Some(ppm),
                    }
                    match size {
                        Amount::Blocks(b) => job.size_bytes = Some((b + 1) * BLOCK_BYTES),
                        Amount::Share(ppm) => {
                            job.size_bytes = None;
                            job.target_shares.size_ppm = Some(ppm.max(1));
                        }
                    }
                    match increment {
                        Amount::Blocks(b) => job.offset_increment_bytes = b * BLOCK_BYTES,
                        Amount::Share(ppm) => job.target_shares.offset_increment_ppm = Some(ppm),
                    }
                    job
                },
            )
        }

        fn state() -> impl Strategy<Value = DeviceState> {
            prop_oneof![
                Just(DeviceState::Fresh),
                Just(DeviceState::SeqFilled),
                (1u64..4096).prop_map(|blocks| DeviceState::Fragmented {
                    bytes: blocks * BLOCK_BYTES
                }),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]

            /// Bytes and shares, one worker or several spaced by `offset_increment`: the state
            /// steps discard and fill exactly the union of the measured regions, each byte
            /// once, and write nothing else.
            #[test]
            fn state_steps_cover_exactly_the_measured_regions(
                jobs in prop::collection::vec(point(), 1..4),
                state in state(),
                target_blocks in 4096u64..16384,
            ) {
                let target_bytes = target_blocks * BLOCK_BYTES;
                prop_assume!(jobs.iter().all(|job| plan_regions(job, target_bytes).is_ok()));
                let touched = sweep_on_null(&jobs, state, target_bytes);
                prop_assert!(touched.outside.is_empty(), "{:?}", touched.outside);
                prop_assert_eq!(&touched.trimmed, &touched.measured);
                if state != DeviceState::Fresh {
                    let measured_bytes =
                        touched.measured.iter().filter(|&&b| b).count() as u64 * BLOCK_BYTES;
                    prop_assert_eq!(&touched.filled, &touched.measured);
                    prop_assert_eq!(touched.filled_bytes, measured_bytes);
                }
                if let DeviceState::Fragmented { bytes } = state {
                    prop_assert_eq!(touched.fragment_bytes, bytes);
                }
            }
        }
    }
}
