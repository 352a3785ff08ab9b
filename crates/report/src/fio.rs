//! fio-shaped JSON: the report laid out like `fio --output-format=json` (fio 3.x), so scripts
//! and dashboards written for fio can read storlab results unchanged.
//!
//! Units follow fio: `bw*` in KiB/s (`bw_bytes` in bytes/s), `runtime` in ms, latencies in ns,
//! CPU in percent averaged over the job's workers. Each storlab job becomes one fio job (as with
//! fio's `group_reporting`), with its own `groupid`.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use storlab_stats::{DirectionSummary, LatencySummary};

use crate::fio_keys::{as_fio_measured, ReportKeys, Unified};
use crate::model::{DiskUtil, JobReport, RunReport};

const BYTES_PER_KIB: u64 = 1024;
const NS_PER_MS: f64 = 1e6;
const NS_PER_S: u64 = 1_000_000_000;
const MS_PER_S: u64 = 1_000;
const PERCENT: f64 = 100.0;
/// fio prints any non-zero share below this as this, so rare buckets do not read as 0.
const MIN_NONZERO_PERCENT: f64 = 0.01;
/// fio's `error` is an errno; storlab keeps only the first errno of the errors a job went on
/// past, so a job that failed otherwise reports the generic EIO.
const EIO: i32 = 5;
/// Keys of fio's `latency_ns` and `latency_us` maps: exclusive upper bounds in that unit.
pub(crate) const LATENCY_DECADE_KEYS: [&str; 10] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
];
/// Keys of fio's `latency_ms` map: the decade keys, then 2000 ms and the open bin.
pub(crate) const LATENCY_MS_EXTRA_KEYS: [&str; 2] = ["2000", ">=2000"];
/// fio prints a non-zero depth share below this as this (`stat_calc_dist`).
const MIN_NONZERO_DEPTH_PERCENT: f64 = 0.1;
const IODEPTH_LEVEL_KEYS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
const IODEPTH_SUBMIT_KEYS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// A JSON object that keeps insertion order (fio's maps are ordered numerically, which a
/// sorted string map would scramble: "10.000000" < "5.000000").
struct OrderedMap(Vec<(String, Value)>);

impl Serialize for OrderedMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

#[derive(serde::Serialize)]
struct FioOutput {
    #[serde(rename = "fio version")]
    fio_version: String,
    timestamp: u64,
    timestamp_ms: u64,
    time: String,
    /// Absent when the job set was written with no global option, as fio leaves it out.
    #[serde(rename = "global options", skip_serializing_if = "Option::is_none")]
    global_options: Option<OrderedMap>,
    jobs: Vec<FioJob>,
    disk_util: Vec<Value>,
    /// storlab's run-level warnings (fio has no such key; readers of fio's JSON ignore it).
    storlab_warnings: Vec<String>,
}

#[derive(serde::Serialize)]
struct FioJob {
    jobname: String,
    groupid: usize,
    error: i32,
    eta: u64,
    elapsed: u64,
    #[serde(rename = "job options")]
    job_options: OrderedMap,
    /// The directions and syncs, absent with `unified_rw_reporting=mixed` (fio 3.33 then
    /// prints `mixed` alone).
    #[serde(skip_serializing_if = "Option::is_none")]
    read: Option<FioDirection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    write: Option<FioDirection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trim: Option<FioDirection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sync: Option<FioSync>,
    /// fio's summed direction, with `unified_rw_reporting` `mixed` or `both`.
    #[serde(skip_serializing_if = "Option::is_none")]
    mixed: Option<FioDirection>,
    job_runtime: u64,
    usr_cpu: f64,
    sys_cpu: f64,
    ctx: u64,
    majf: u64,
    minf: u64,
    iodepth_level: OrderedMap,
    iodepth_submit: OrderedMap,
    iodepth_complete: OrderedMap,
    latency_ns: OrderedMap,
    latency_us: OrderedMap,
    latency_ms: OrderedMap,
    /// Failed I/Os the job went on past; present, with `first_error`, only when the job set
    /// `continue_on_error` (as fio's stat.c).
    #[serde(skip_serializing_if = "Option::is_none")]
    total_err: Option<u64>,
    /// errno of the first of them (0 when none failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    first_error: Option<i32>,
    /// fio's latency-target keys; absent for a `verify_only` job, as fio 3.33 leaves them out
    /// there (its `latency_depth` is 0 when the job only verified).
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_depth: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_target: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_percentile: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_window: Option<u64>,
    /// storlab's warnings about this job's figures (not a fio key).
    storlab_warnings: Vec<String>,
}

#[derive(serde::Serialize, Default)]
struct FioDirection {
    io_bytes: u64,
    io_kbytes: u64,
    bw_bytes: u64,
    bw: u64,
    iops: f64,
    runtime: u64,
    total_ios: u64,
    short_ios: u64,
    drop_ios: u64,
    slat_ns: FioLatency,
    clat_ns: FioLatency,
    lat_ns: FioLatency,
    /// fio's per-priority completion latencies (stat.c, `add_ddir_status_json`): only when
    /// the direction's I/Os carried two priorities or more.
    #[serde(skip_serializing_if = "Option::is_none")]
    prios: Option<Vec<FioPriority>>,
    bw_min: u64,
    bw_max: u64,
    bw_agg: f64,
    bw_mean: f64,
    bw_dev: f64,
    bw_samples: u64,
    iops_min: u64,
    iops_max: u64,
    iops_mean: f64,
    iops_stddev: f64,
    iops_samples: u64,
}

/// One entry of fio's `prios` array: the class and level, and the latencies of the I/Os that
/// carried them, named `lat_ns` with `lat_percentiles=1` (fio then keeps total latencies per
/// priority; storlab's are completion latencies, docs/decisions/0058), else `clat_ns`.
#[derive(serde::Serialize)]
struct FioPriority {
    prioclass: u16,
    prio: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    clat_ns: Option<FioLatency>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lat_ns: Option<FioLatency>,
}

#[derive(serde::Serialize, Default)]
struct FioLatency {
    min: u64,
    max: u64,
    mean: f64,
    stddev: f64,
    #[serde(rename = "N")]
    n: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    percentile: Option<OrderedMap>,
    /// json+ only: the samples per fio histogram bucket, keyed by the bucket's value in ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    bins: Option<OrderedMap>,
}

#[derive(serde::Serialize, Default)]
struct FioSync {
    total_ios: u64,
    lat_ns: FioLatency,
}

/// One option as the user wrote it: key and value.
pub type WrittenOption = (String, String);

/// The job set as the user wrote it, which fio's JSON echoes: its global options (`None` when
/// none was written: fio then prints no `global options`) and each job's own options, in the
/// job set's order (a job with `numjobs` clones reported apart has one entry for them all).
#[derive(Clone, Debug, Default)]
pub struct FioEcho {
    pub global_options: Option<Vec<WrittenOption>>,
    pub job_options: Vec<Vec<WrittenOption>>,
}

/// The report in the shape of fio 3.x `--output-format=json` (pretty, ends with a newline).
/// `time` is UTC (fio prints local time). Without the options as written (a saved run), the
/// `job options` list each job's resolved settings and `global options` is empty.
pub fn to_fio_json(report: &RunReport) -> String {
    render(report, None, false)
}

/// [`to_fio_json`] echoing the options as written in `echo`, as fio does.
pub fn to_fio_json_with(report: &RunReport, echo: &FioEcho) -> String {
    render(report, Some(echo), false)
}

/// fio's `--output-format=json+`: [`to_fio_json`] with each direction's completion-latency
/// histogram as `clat_ns.bins` (fio's buckets, keyed by value in ns), which fio's own
/// `fio_jsonplus_clat2csv` reads. `echo` as in [`to_fio_json_with`].
pub fn to_fio_json_plus(report: &RunReport, echo: Option<&FioEcho>) -> String {
    render(report, echo, true)
}

fn render(report: &RunReport, echo: Option<&FioEcho>, plus: bool) -> String {
    let placed = place_jobs(&report.jobs);
    let jobs = report
        .jobs
        .iter()
        .zip(&placed)
        .map(|(job, place)| {
            let job = &*as_fio_measured(job);
            let written = echo.and_then(|echo| {
                echo.job_options
                    .get(place.spec_index.checked_rem(echo.job_options.len())?)
            });
            let options = match written {
                Some(written) => written_map(written),
                None => job_options(job),
            };
            fio_job(place, job, options, plus)
        })
        .collect();
    let global_options = match echo {
        Some(echo) => echo.global_options.as_deref().map(written_map),
        None => Some(OrderedMap(Vec::new())),
    };
    let output = FioOutput {
        fio_version: format!("{}-{}", report.tool.name, report.tool.version),
        timestamp: report.started_unix_ms / MS_PER_S,
        timestamp_ms: report.started_unix_ms,
        time: ctime_utc(report.started_unix_ms / MS_PER_S),
        global_options,
        jobs,
        disk_util: report.disk_util.iter().map(fio_disk_util).collect(),
        storlab_warnings: report.warnings.clone(),
    };
    let mut text = serde_json::to_string_pretty(&output)
        .unwrap_or_else(|error| serde_json::json!({ "error": error.to_string() }).to_string());
    text.push('\n');
    text
}

/// A `disk_util` entry with fio's key names (ticks and queue time in ms, util in percent).
/// A device with slaves (dm, md) adds fio's `aggr_*` keys, `aggr_write_merge` spelt as fio 3.33
/// spells it (stat.c, `json_array_add_disk_util`).
fn fio_disk_util(disk: &DiskUtil) -> Value {
    let mut entry = serde_json::json!({
        "name": disk.name,
        "read_ios": disk.read_ios,
        "write_ios": disk.write_ios,
        "read_merges": disk.read_merges,
        "write_merges": disk.write_merges,
        "read_ticks": disk.read_ticks_ms,
        "write_ticks": disk.write_ticks_ms,
        "in_queue": disk.in_queue_ms,
        "util": disk.util_percent,
    });
    if let (Some(slaves), Some(object)) = (&disk.slaves, entry.as_object_mut()) {
        for (key, value) in [
            ("aggr_read_ios", Value::from(slaves.read_ios)),
            ("aggr_write_ios", Value::from(slaves.write_ios)),
            ("aggr_read_merges", Value::from(slaves.read_merges)),
            ("aggr_write_merge", Value::from(slaves.write_merges)),
            ("aggr_read_ticks", Value::from(slaves.read_ticks_ms)),
            ("aggr_write_ticks", Value::from(slaves.write_ticks_ms)),
            ("aggr_in_queue", Value::from(slaves.in_queue_ms)),
            ("aggr_util", Value::from(slaves.util_percent)),
        ] {
            object.insert(key.to_string(), value);
        }
    }
    entry
}

fn written_map(written: &[WrittenOption]) -> OrderedMap {
    OrderedMap(
        written
            .iter()
            .map(|(key, value)| (key.clone(), Value::String(value.clone())))
            .collect(),
    )
}

/// Where a reported job sits in fio's terms: the job (section) it came from, the stonewall
/// group fio numbers it in, and the name fio prints (clones repeat their job's name).
pub(crate) struct Placement {
    pub spec_index: usize,
    pub groupid: usize,
    pub jobname: String,
}

/// Walks the reported jobs as fio walks its jobs: a job with `numjobs` clones reported apart
/// (no `group_reporting`) yields one report per clone, all of the same job; a job with
/// `stonewall` or `new_group` after the first opens the next group (fio's init.c `add_job`).
pub(crate) fn place_jobs(jobs: &[JobReport]) -> Vec<Placement> {
    let mut placements = Vec::with_capacity(jobs.len());
    let mut spec_index: Option<usize> = None;
    let mut clones_left = 0u64;
    let mut groupid = 0;
    for job in jobs {
        let spec = &job.setup.job;
        if clones_left == 0 {
            spec_index = Some(spec_index.map_or(0, |index| index + 1));
            let grouped = spec["group_reporting"].as_bool().unwrap_or(false);
            let numjobs = spec["numjobs"].as_u64().unwrap_or(1).max(1);
            clones_left = if grouped { 1 } else { numjobs };
            let opens_group = ["stonewall", "new_group"]
                .iter()
                .any(|key| spec[*key].as_bool().unwrap_or(false));
            if spec_index != Some(0) && opens_group {
                groupid += 1;
            }
        }
        clones_left -= 1;
        placements.push(Placement {
            spec_index: spec_index.unwrap_or(0),
            groupid,
            jobname: spec["name"]
                .as_str()
                .map_or_else(|| job.setup.name.clone(), str::to_owned),
        });
    }
    placements
}

fn fio_job(place: &Placement, job: &JobReport, job_options: OrderedMap, plus: bool) -> FioJob {
    let keys = ReportKeys::of(job);
    let fio_direction = |summary: &DirectionSummary| fio_direction(summary, plus, &keys);
    let apart = keys.unified != Unified::Mixed;
    let direction = |summary: Option<&DirectionSummary>| {
        apart.then(|| summary.map(fio_direction).unwrap_or_default())
    };
    let workers = f64::from(job.setup.numjobs.max(1));
    let (latency_ns, latency_us, latency_ms) = latency_maps(job);
    let continues = continues_on_error(job);
    // fio 3.33 writes no latency-target keys for a job that only verified.
    let latency_keys = !verify_only(job);
    let mut fio_job = FioJob {
        jobname: place.jobname.clone(),
        groupid: place.groupid,
        error: error_code(job),
        eta: 0,
        elapsed: job.elapsed_ns.div_ceil(NS_PER_S),
        job_options,
        read: direction(job.read.as_ref()),
        write: direction(job.write.as_ref()),
        trim: direction(job.trim.as_ref()),
        sync: apart.then(|| {
            job.sync
                .as_ref()
                .map(|summary| FioSync {
                    total_ios: job.fsyncs,
                    lat_ns: fio_latency(summary, keys.any_percentiles()),
                })
                .unwrap_or_default()
        }),
        mixed: (keys.unified != Unified::Split)
            .then(|| job.mixed.as_ref().map(fio_direction).unwrap_or_default()),
        job_runtime: ns_to_ms(job.elapsed_ns),
        usr_cpu: job.cpu.user_percent / workers,
        sys_cpu: job.cpu.system_percent / workers,
        ctx: job.cpu.context_switches,
        majf: job.cpu.major_faults,
        minf: job.cpu.minor_faults,
        iodepth_level: percent_map(&IODEPTH_LEVEL_KEYS, level_percents(job)),
        iodepth_submit: depth_map(&IODEPTH_SUBMIT_KEYS, &job.depth.submit),
        iodepth_complete: depth_map(&IODEPTH_SUBMIT_KEYS, &job.depth.complete),
        latency_ns,
        latency_us,
        latency_ms,
        total_err: continues.then(|| job.directions().map(|(_, s)| s.failed()).sum()),
        first_error: continues.then_some(job.first_error),
        // fio reports its search's depth, else `iodepth` (stat.c: `td->latency_qd`), and the
        // options as set: the target in ns, the window in µs.
        latency_depth: latency_keys.then_some(if job.latency_depth > 0 {
            job.latency_depth
        } else {
            job.setup.iodepth
        }),
        latency_target: latency_keys.then(|| latency_option(job, "target_ns").unwrap_or(0)),
        latency_percentile: latency_keys.then(|| {
            job.setup.job["latency_target"]["percentile"]
                .as_f64()
                .unwrap_or(PERCENT)
        }),
        latency_window: latency_keys.then(|| latency_option(job, "window_us").unwrap_or(0)),
        storlab_warnings: job.notes.warnings.clone(),
    };
    // fio 3.33 counts each fdatasync one past its `total_io_u` array, in `short_io_u[0]`
    // (stat.h), so its reports give them as the reads' short I/Os, and the mixed direction's.
    for direction in [fio_job.read.as_mut(), fio_job.mixed.as_mut()]
        .into_iter()
        .flatten()
    {
        direction.short_ios = job.fdatasyncs;
    }
    fio_job
}

/// Without the options as written: fio-named options first (what fio itself would list), then
/// storlab's own job fields.
fn job_options(job: &JobReport) -> OrderedMap {
    let mut options: Vec<(String, Value)> = [
        ("name", job.setup.name.clone()),
        ("ioengine", job.setup.engine.clone()),
        ("rw", job.setup.rw.clone()),
        ("bs", job.setup.block_size.clone()),
        ("iodepth", job.setup.iodepth.to_string()),
        ("numjobs", job.setup.numjobs.to_string()),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), Value::String(value)))
    .collect();
    if let Value::Object(spec) = &job.setup.job {
        for (key, value) in spec {
            if options.iter().any(|(existing, _)| existing == key) {
                continue;
            }
            // fio's job options are all strings.
            let text = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            options.push((key.clone(), Value::String(text)));
        }
    }
    OrderedMap(options)
}

/// fio's json+ `bins`: samples per fio histogram bucket, keyed by the bucket's value in ns.
fn fio_bins(bins: &[(u64, u64)]) -> OrderedMap {
    OrderedMap(
        bins.iter()
            .map(|&(value_ns, count)| (value_ns.to_string(), Value::from(count)))
            .collect(),
    )
}

fn fio_direction(summary: &DirectionSummary, plus: bool, keys: &ReportKeys) -> FioDirection {
    /// linux/ioprio.h: the class is the bits above `IOPRIO_CLASS_SHIFT` (13); fio prints the
    /// level as `ioprio & 7`.
    const IOPRIO_CLASS_SHIFT: u16 = 13;
    const IOPRIO_LEVEL_MASK: u16 = 7;
    let mut clat_ns = fio_latency(&summary.clat, keys.clat_percentiles);
    // fio's json+ bins go with the percentiles they were computed for (stat.c).
    if plus && keys.clat_percentiles {
        clat_ns.bins = Some(fio_bins(&summary.clat_fio_bins));
    }
    // fio: "Only include per prio stats if there are >= 2 prios with samples".
    let prios = (summary.by_priority.len() >= 2).then(|| {
        summary
            .by_priority
            .iter()
            .map(|p| {
                let mut latency = fio_latency(&p.clat, keys.any_percentiles());
                if plus && keys.any_percentiles() {
                    latency.bins = Some(fio_bins(&p.clat_fio_bins));
                }
                let (clat_ns, lat_ns) = match keys.lat_percentiles {
                    true => (None, Some(latency)),
                    false => (Some(latency), None),
                };
                FioPriority {
                    prioclass: p.ioprio >> IOPRIO_CLASS_SHIFT,
                    prio: p.ioprio & IOPRIO_LEVEL_MASK,
                    clat_ns,
                    lat_ns,
                }
            })
            .collect()
    });
    let kib = |bytes_per_s: f64| (bytes_per_s / BYTES_PER_KIB as f64).round() as u64;
    let rates = &summary.per_interval;
    FioDirection {
        io_bytes: summary.bytes,
        io_kbytes: summary.bytes / BYTES_PER_KIB,
        bw_bytes: summary.bw_bytes_per_s.round() as u64,
        bw: kib(summary.bw_bytes_per_s),
        iops: summary.iops,
        // fio's whole milliseconds, rounded up (the same figure its human report prints).
        runtime: crate::fio_units::fio_runtime_ms(summary.runtime_ns),
        // fio counts an I/O here when it is queued (ioengines.c, td_io_queue), so the failed
        // ones a job went on past are in it, though not in the bytes or latencies.
        total_ios: summary.ios + summary.errors,
        short_ios: 0,
        drop_ios: 0,
        slat_ns: fio_latency(&summary.slat, keys.slat_percentiles),
        clat_ns,
        lat_ns: fio_latency(&summary.lat, keys.lat_percentiles),
        prios,
        bw_min: kib(rates.bw_min_bytes_per_s),
        bw_max: kib(rates.bw_max_bytes_per_s),
        // Each storlab job is its own fio group, so it has the whole group's bandwidth.
        bw_agg: if rates.samples > 0 { PERCENT } else { 0.0 },
        bw_mean: rates.bw_mean_bytes_per_s / BYTES_PER_KIB as f64,
        bw_dev: rates.bw_stddev_bytes_per_s / BYTES_PER_KIB as f64,
        bw_samples: rates.samples,
        iops_min: rates.iops_min.round() as u64,
        iops_max: rates.iops_max.round() as u64,
        iops_mean: rates.iops_mean,
        iops_stddev: rates.iops_stddev,
        iops_samples: rates.samples,
    }
}

/// A latency's figures, with its percentiles when the job's keys ask for them (fio's default:
/// completion latencies only) and there were samples.
fn fio_latency(summary: &LatencySummary, with_percentiles: bool) -> FioLatency {
    let percentile = (with_percentiles && summary.count > 0).then(|| {
        OrderedMap(
            summary
                .percentiles
                .iter()
                .map(|&(percentile, value_ns)| (format!("{percentile:.6}"), Value::from(value_ns)))
                .collect(),
        )
    });
    FioLatency {
        min: summary.min_ns,
        max: summary.max_ns,
        mean: summary.mean_ns,
        stddev: summary.stddev_ns,
        n: summary.count,
        percentile,
        bins: None,
    }
}

/// Whether the job only verified (fio's `verify_only`): read back what it would have written.
pub(crate) fn verify_only(job: &JobReport) -> bool {
    job.setup.job["verify_spec"]["only"] == serde_json::Value::Bool(true)
}

/// Whether the job set fio's `continue_on_error` (the job specification carries the key only
/// when it is not `none`).
/// One of the job's latency-target settings (`storlab_job::LatencyTargetSpec`), when set.
pub(crate) fn latency_option(job: &JobReport, field: &str) -> Option<u64> {
    job.setup.job["latency_target"][field].as_u64()
}

pub(crate) fn continues_on_error(job: &JobReport) -> bool {
    job.setup.job.get("continue_on_error").is_some()
}

/// fio's errno of a job: the error that ended it (EILSEQ for a verify failure), else, in a job
/// that went on past errors, the first of them (fio 3.33's stat.c: `ts->error` is the
/// thread's `first_error` when `continue_on_error` is set and the thread's own error was
/// cleared), else 0, or EIO when any I/O failed.
pub(crate) fn error_code(job: &JobReport) -> i32 {
    if job.error != 0 {
        job.error
    } else if continues_on_error(job) {
        job.first_error
    } else if !continues_on_error(job) && job.directions().any(|(_, summary)| summary.errors > 0) {
        EIO
    } else {
        0
    }
}

/// fio's job-wide completion-latency distribution (all directions together), as percentages
/// of the ns, µs and ms buckets.
pub(crate) fn latency_percents(job: &JobReport) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let bin_count = LATENCY_DECADE_KEYS.len() * 3 + LATENCY_MS_EXTRA_KEYS.len();
    let mut counts = vec![0u64; bin_count];
    for (_, summary) in job.directions() {
        for (total, bin) in counts.iter_mut().zip(&summary.clat_distribution) {
            *total += bin.count;
        }
    }
    let total: u64 = counts.iter().sum();
    let percent = |count: &u64| {
        if *count == 0 || total == 0 {
            0.0
        } else {
            (*count as f64 / total as f64 * PERCENT).max(MIN_NONZERO_PERCENT)
        }
    };
    let decade = LATENCY_DECADE_KEYS.len();
    (
        counts[..decade].iter().map(percent).collect(),
        counts[decade..2 * decade].iter().map(percent).collect(),
        counts[2 * decade..].iter().map(percent).collect(),
    )
}

fn latency_maps(job: &JobReport) -> (OrderedMap, OrderedMap, OrderedMap) {
    let (ns, us, ms) = latency_percents(job);
    let map_of = |keys: &[&str], percents: &[f64]| {
        OrderedMap(
            keys.iter()
                .zip(percents)
                .map(|(key, &percent)| ((*key).to_owned(), Value::from(percent)))
                .collect(),
        )
    };
    let ms_keys: Vec<&str> = LATENCY_DECADE_KEYS
        .iter()
        .chain(&LATENCY_MS_EXTRA_KEYS)
        .copied()
        .collect();
    (
        map_of(&LATENCY_DECADE_KEYS, &ns),
        map_of(&LATENCY_DECADE_KEYS, &us),
        map_of(&ms_keys, &ms),
    )
}

/// A depth distribution in percent of its total, as fio's `stat_calc_dist`: a non-zero share
/// below 0.1 % is printed as 0.1 %.
pub(crate) fn depth_percents(counts: &[u64]) -> Vec<f64> {
    shares(counts, counts.iter().sum())
}

/// fio's `iodepth_level` shares: each level's count over the reads, writes and trims issued
/// (stat.c, `stat_calc_dist(ts->io_u_map, ddir_rw_sum(ts->total_io_u), ...)`), where the
/// levels count the syncs too (`io_u_mark_depth` for each unit queued outside TD_FSYNCING):
/// with `fsync=3` over 256 writes fio prints `1=133.2%`.
pub(crate) fn level_percents(job: &JobReport) -> Vec<f64> {
    let issued = job.directions().map(|(_, s)| s.ios + s.errors).sum();
    shares(&job.depth.level, issued)
}

/// Each of `counts` as a percentage of `total`, as fio's `stat_calc_dist`.
fn shares(counts: &[u64], total: u64) -> Vec<f64> {
    counts
        .iter()
        .map(|&count| {
            if total == 0 {
                0.0
            } else if count > 0 {
                (count as f64 / total as f64 * PERCENT).max(MIN_NONZERO_DEPTH_PERCENT)
            } else {
                0.0
            }
        })
        .collect()
}

fn depth_map(keys: &[&str], counts: &[u64]) -> OrderedMap {
    percent_map(keys, depth_percents(counts))
}

fn percent_map(keys: &[&str], percents: Vec<f64>) -> OrderedMap {
    OrderedMap(
        keys.iter()
            .zip(percents)
            .map(|(key, percent)| ((*key).to_owned(), Value::from(percent)))
            .collect(),
    )
}

fn ns_to_ms(ns: u64) -> u64 {
    (ns as f64 / NS_PER_MS).round() as u64
}

/// `unix_s` as C's `ctime` does, in UTC: `Sun Nov 22 11:02:04 2026`.
pub(crate) fn ctime_utc(unix_s: u64) -> String {
    const SECONDS_PER_DAY: u64 = 86_400;
    /// 1970-01-01 was a Thursday.
    const EPOCH_WEEKDAY: u64 = 4;
    let days = unix_s / SECONDS_PER_DAY;
    let second_of_day = unix_s % SECONDS_PER_DAY;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        WEEKDAYS[((days + EPOCH_WEEKDAY) % 7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        second_of_day / 3_600,
        second_of_day % 3_600 / 60,
        second_of_day % 60,
        year
    )
}

/// Gregorian (year, month 1..=12, day 1..=31) of a day count since 1970-01-01
/// (Howard Hinnant's `civil_from_days`, restricted to non-negative days).
fn civil_from_days(days_since_epoch: u64) -> (u64, u64, u64) {
    const DAYS_FROM_0000_03_01_TO_EPOCH: u64 = 719_468;
    const DAYS_PER_ERA: u64 = 146_097;
    let z = days_since_epoch + DAYS_FROM_0000_03_01_TO_EPOCH;
    let era = z / DAYS_PER_ERA;
    let day_of_era = z % DAYS_PER_ERA;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SlavesAggregate;

    #[test]
    fn ctime_matches_known_dates() {
        assert_eq!(ctime_utc(0), "Thu Jan  1 00:00:00 1970");
        // The timestamp fio 3.33 printed as "Sun Nov 22 11:02:04 2026" on a UTC machine.
        assert_eq!(ctime_utc(1_795_345_324), "Sun Nov 22 11:02:04 2026");
        assert_eq!(ctime_utc(951_782_400), "Tue Feb 29 00:00:00 2000");
    }

    #[test]
    fn percentile_keys_are_formatted_like_fio() {
        let summary = LatencySummary {
            count: 1,
            min_ns: 1,
            max_ns: 1,
            mean_ns: 1.0,
            stddev_ns: 0.0,
            percentiles: vec![(99.0, 1), (99.95, 1)],
        };
        let latency = fio_latency(&summary, true);
        let keys: Vec<&str> = latency
            .percentile
            .as_ref()
            .unwrap()
            .0
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(keys, vec!["99.000000", "99.950000"]);
    }

    /// A plain disk has fio's nine keys; a dm or md device also its `aggr_*` keys, spelt as
    /// fio 3.33 writes them (one of them `aggr_write_merge`).
    #[test]
    fn a_device_with_slaves_gets_fios_aggr_keys() {
        let mut disk = DiskUtil {
            name: "dm-0".into(),
            read_ios: 1,
            write_ios: 2,
            read_merges: 0,
            write_merges: 0,
            read_ticks_ms: 3,
            write_ticks_ms: 4,
            in_queue_ms: 5,
            util_percent: 10.0,
            slaves: None,
        };
        let plain = fio_disk_util(&disk);
        assert_eq!(plain.as_object().unwrap().len(), 9);
        assert!(plain.get("aggr_util").is_none());
        disk.slaves = Some(SlavesAggregate {
            read_ios: 7,
            write_ios: 15,
            read_merges: 0,
            write_merges: 1,
            read_ticks_ms: 3,
            write_ticks_ms: 10,
            in_queue_ms: 15,
            util_percent: 40.0,
        });
        let stacked = fio_disk_util(&disk);
        let aggr: Vec<(&str, &Value)> = stacked
            .as_object()
            .unwrap()
            .iter()
            .filter(|(key, _)| key.starts_with("aggr_"))
            .map(|(key, value)| (key.as_str(), value))
            .collect();
        let expected = [
            ("aggr_in_queue", Value::from(15)),
            ("aggr_read_ios", Value::from(7)),
            ("aggr_read_merges", Value::from(0)),
            ("aggr_read_ticks", Value::from(3)),
            ("aggr_util", Value::from(40.0)),
            ("aggr_write_ios", Value::from(15)),
            ("aggr_write_merge", Value::from(1)),
            ("aggr_write_ticks", Value::from(10)),
        ];
        assert_eq!(
            aggr,
            expected.iter().map(|(k, v)| (*k, v)).collect::<Vec<_>>()
        );
        assert_eq!(stacked["util"], Value::from(10.0));
    }
}
