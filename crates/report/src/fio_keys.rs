//! fio's reporting keys as a job set them (`storlab_job::FioReport`, read from the job's
//! specification in the report), and the job's figures as fio would have measured them: what
//! `disable_lat`, `disable_clat` and `disable_slat` leave out is emptied (docs/decisions/0058;
//! `disable_bw_measurement` leaves fio 3.33's reports as they are: their bandwidth samples are
//! taken on the clock, not per I/O). The fio-shaped outputs ([`crate::fio`], [`crate::fio_normal`],
//! [`crate::fio_terse`]) print through these.

use std::borrow::Cow;

use serde_json::Value;
use storlab_stats::{DirectionSummary, LatencySummary, FIO_DEFAULT_PERCENTILES};

use crate::model::JobReport;

/// fio's `unified_rw_reporting`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unified {
    /// Each direction apart (fio's default).
    Split,
    /// One `mixed` direction instead of the others.
    Mixed,
    /// Each direction, then `mixed`.
    Both,
}

/// What fio's reporting keys ask of a job's fio-shaped report.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReportKeys {
    pub unified: Unified,
    /// `unit_base=1`: rates in bits in the human report.
    pub unit_bits: bool,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    /// Decimals of a percentile in the human report (`99.95th`).
    pub percentile_precision: usize,
    /// fio's `significant_figures`.
    pub significant_figures: usize,
    disable_lat: bool,
    disable_clat: bool,
    disable_slat: bool,
}

/// fio's defaults where a job (or a saved report) does not say.
const DEFAULT_PERCENTILE_PRECISION: u64 = 2;
const DEFAULT_SIGNIFICANT_FIGURES: u64 = 4;

impl ReportKeys {
    /// The keys of `job` (fio's defaults for a job without them, and for reports saved before
    /// they were kept).
    pub fn of(job: &JobReport) -> Self {
        let keys = &job.setup.job["fio_report"];
        let flag = |name: &str, default: bool| keys[name].as_bool().unwrap_or(default);
        let number = |name: &str, default: u64| {
            usize::try_from(keys[name].as_u64().unwrap_or(default)).unwrap_or(usize::MAX)
        };
        ReportKeys {
            unified: match keys["unified_rw_reporting"].as_str() {
                Some("mixed") => Unified::Mixed,
                Some("both") => Unified::Both,
                _ => Unified::Split,
            },
            unit_bits: flag("unit_bits", false),
            clat_percentiles: flag("clat_percentiles", true),
            lat_percentiles: flag("lat_percentiles", false),
            slat_percentiles: flag("slat_percentiles", false),
            percentile_precision: number("percentile_precision", DEFAULT_PERCENTILE_PRECISION),
            significant_figures: number("significant_figures", DEFAULT_SIGNIFICANT_FIGURES),
            disable_lat: flag("disable_lat", false),
            disable_clat: flag("disable_clat", false),
            disable_slat: flag("disable_slat", false),
        }
    }

    fn disables_any(&self) -> bool {
        self.disable_lat || self.disable_clat || self.disable_slat
    }

    /// Whether the job's `percentile_list` is other than fio's default.
    fn own_list(job: &JobReport) -> bool {
        job.setup.job["fio_report"].get("percentile_list").is_some()
    }

    /// Whether fio prints a direction's percentiles in its sync and per-priority latencies
    /// (stat.c: `clat_percentiles | lat_percentiles`).
    pub fn any_percentiles(&self) -> bool {
        self.clat_percentiles || self.lat_percentiles
    }
}

/// fio's `percentile_list` as the job specification `spec` keeps it (sorted, ended at its
/// first 0), else fio's default list.
pub(crate) fn percentile_list(spec: &Value) -> Vec<f64> {
    match spec["fio_report"]["percentile_list"].as_array() {
        Some(list) => list.iter().filter_map(Value::as_f64).collect(),
        None => FIO_DEFAULT_PERCENTILES.to_vec(),
    }
}

/// The read, write and trim figures fio reports for `job`: with `unified_rw_reporting=mixed`,
/// the summed direction in the read's place and nothing in the others (stat.c
/// `sum_thread_stats` sums into index 0).
pub(crate) fn fio_directions(job: &JobReport) -> [Option<&DirectionSummary>; 3] {
    match ReportKeys::of(job).unified {
        Unified::Mixed => [job.mixed.as_ref(), None, None],
        _ => [job.read.as_ref(), job.write.as_ref(), job.trim.as_ref()],
    }
}

/// A latency fio did not measure: no sample, every figure 0.
fn unmeasured() -> LatencySummary {
    LatencySummary {
        count: 0,
        min_ns: 0,
        max_ns: 0,
        mean_ns: 0.0,
        stddev_ns: 0.0,
        percentiles: Vec::new(),
    }
}

fn without_disabled(summary: &mut DirectionSummary, keys: &ReportKeys) {
    if keys.disable_slat {
        summary.slat = unmeasured();
    }
    if keys.disable_lat {
        summary.lat = unmeasured();
    }
    if keys.disable_clat {
        summary.clat = unmeasured();
        // fio's latency distribution and per-priority latencies are completion latencies.
        for bin in &mut summary.clat_distribution {
            bin.count = 0;
        }
        summary.clat_fio_bins.clear();
        summary.by_priority.clear();
    }
}

/// `latency`'s percentiles at `list` alone, in its order (the report summarised fio's default
/// list and the job's together).
fn at_list(latency: &mut LatencySummary, list: &[f64]) {
    latency.percentiles = list
        .iter()
        .map(|&percentile| (percentile, latency.percentile_ns(percentile).unwrap_or(0)))
        .collect();
}

/// `job` as fio would have measured it under its reporting keys: the figures its `disable_*`
/// keys turn off emptied (fio's JSON then prints them as 0 with `N` 0), the percentiles those
/// of its `percentile_list`. Borrowed unchanged when neither is set.
pub(crate) fn as_fio_measured(job: &JobReport) -> Cow<'_, JobReport> {
    let keys = ReportKeys::of(job);
    let own_list = ReportKeys::own_list(job);
    if !keys.disables_any() && !own_list {
        return Cow::Borrowed(job);
    }
    let list = percentile_list(&job.setup.job);
    let mut job = job.clone();
    for summary in [&mut job.read, &mut job.write, &mut job.trim, &mut job.mixed]
        .into_iter()
        .flatten()
    {
        if own_list {
            let priorities = summary.by_priority.iter_mut().map(|p| &mut p.clat);
            for latency in [&mut summary.slat, &mut summary.clat, &mut summary.lat]
                .into_iter()
                .chain(priorities)
            {
                at_list(latency, &list);
            }
        }
        without_disabled(summary, &keys);
    }
    if let (Some(sync), true) = (&mut job.sync, own_list) {
        at_list(sync, &list);
    }
    // fio records a sync's time as a completion latency (io_u.c, `add_sync_clat_sample`).
    if keys.disable_clat {
        if let Some(sync) = &mut job.sync {
            *sync = unmeasured();
        }
    }
    Cow::Owned(job)
}
