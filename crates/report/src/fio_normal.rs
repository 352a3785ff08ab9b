//! fio's human report (`fio --output-format=normal`, fio's default): each job's block (header,
//! per-direction IOPS/BW, latency lines, clat percentiles, bandwidth and IOPS samples, the
//! latency distribution, syncs, CPU, IO depths), then each group's "Run status" totals and the
//! disks' counters, laid out line for line as fio 3.33 lays them out so that people and scripts
//! that read fio's report read storlab's (docs/decisions/0049). The jobs are split and grouped
//! as in the fio-shaped JSON ([`crate::fio`]); numbers use fio's formatting ([`crate::fio_units`]).

use std::fmt::Write as _;

use storlab_stats::{DirectionSummary, LatencySummary};

use crate::fio::{
    continues_on_error, ctime_utc, depth_percents, error_code, latency_option, latency_percents,
    place_jobs, verify_only, FioEcho, Placement, LATENCY_DECADE_KEYS, LATENCY_MS_EXTRA_KEYS,
};
use crate::fio_keys::{as_fio_measured, fio_directions, ReportKeys, Unified};
use crate::fio_normal_group::{disk_stats, group_runs, group_stats, GroupRun};
use crate::fio_units::{fio_runtime_ms, num2str, scale_latency, strerror, Unit, LATENCY_DIGITS};
use crate::model::{JobReport, RunReport};

const MS_PER_S: u64 = 1_000;
const BYTES_PER_KIB: f64 = 1024.0;
const PERCENT: f64 = 100.0;
/// linux/ioprio.h: a priority's class is the bits above 13; fio prints the level as `& 7`.
const IOPRIO_CLASS_SHIFT: u16 = 13;
const IOPRIO_LEVEL_MASK: u16 = 7;
/// The width fio fits its percentile lines in (80 columns less the `     |` margin and one).
const PERCENTILE_LINE_WIDTH: usize = 80 - 7;
/// Entries on one line of fio's latency distribution (`lat (usec)   : ...`).
const LATENCY_BUCKETS_PER_LINE: usize = 5;

/// The report as fio 3.33's normal output. `echo` (the job file as written) gives the jobs'
/// `description`; `pid` is printed in each job's header, where fio prints its job's process.
pub fn to_fio_normal(report: &RunReport, echo: Option<&FioEcho>, pid: u32) -> String {
    let placed = place_jobs(&report.jobs);
    let jobs: Vec<JobReport> = report
        .jobs
        .iter()
        .map(|job| as_fio_measured(job).into_owned())
        .collect();
    let groups = group_runs(&jobs, &placed);
    // fio's report starts with an empty line ("don't overwrite last signal output").
    let mut out = String::from("\n");
    let time = ctime_utc(report.started_unix_ms / MS_PER_S);
    for (job, place) in jobs.iter().zip(&placed) {
        let group = &groups[place.groupid];
        let description = written(echo, place, &["description"]);
        job_block(&mut out, job, place, group, pid, &time, description);
    }
    for group in &groups {
        group_stats(&mut out, group);
    }
    disk_stats(&mut out, &report.disk_util);
    storlab_warnings(&mut out, report, &placed);
    out
}

/// storlab's warnings about the run and its jobs, after fio's report (fio has no place for
/// them; `storlab fio` keeps them off stderr, as fio prints nothing there).
fn storlab_warnings(out: &mut String, report: &RunReport, placed: &[Placement]) {
    let jobs = report.jobs.iter().zip(placed).flat_map(|(job, place)| {
        job.notes
            .warnings
            .iter()
            .map(move |warning| format!("{}: {warning}", place.jobname))
    });
    let warnings: Vec<String> = report.warnings.iter().cloned().chain(jobs).collect();
    if warnings.is_empty() {
        return;
    }
    out.push_str("\nstorlab warnings:\n");
    for warning in warnings {
        let _ = writeln!(out, "  {warning}");
    }
}

/// What fio prints before it starts the jobs, when its human report is among the outputs:
/// each job's line (`name: (g=0): rw=read, bs=(R) 4096B-4096B, (W) ..., ioengine=psync,
/// iodepth=1`, then `...` for its clones), the program's version, `Starting N processes`, and
/// a line for each job an error ended (fio's `fio: pid=N, err=84/...`, here `storlab: pid=N,
/// err=84/error=...`). fio's `Laying out IO file` lines are not printed: storlab's report does
/// not say which files it created (docs/decisions/0049).
pub fn to_fio_normal_preamble(report: &RunReport, echo: Option<&FioEcho>, pid: u32) -> String {
    let placed = place_jobs(&report.jobs);
    let mut out = String::new();
    let mut workers = 0u64;
    let mut threads = true;
    for (index, (job, place)) in report.jobs.iter().zip(&placed).enumerate() {
        if index > 0 && placed[index - 1].spec_index == place.spec_index {
            continue;
        }
        let spec = &job.setup.job;
        let numjobs = u64::from(job.setup.numjobs.max(1));
        workers += numjobs;
        // storlab always runs threads; fio says "threads" where the job asked for them.
        threads &= written(echo, place, &["thread", "threads"]).is_some_and(|value| value != "0");
        let figures = ReportKeys::of(job).significant_figures;
        let sizes = |key: &str| block_size_range(&spec[key], figures);
        let read = sizes("block_size_read");
        let write = sizes("block_size_write");
        let trim = spec
            .get("block_size_trim")
            .map_or(write.clone(), |_| sizes("block_size_trim"));
        // storlab writes a mix's share after the pattern (`randrw:70`); fio prints the pattern.
        let rw = job.setup.rw.split(':').next().unwrap_or_default();
        let _ = writeln!(
            out,
            "{}: (g={}): rw={rw}, bs=(R) {read}, (W) {write}, (T) {trim}, ioengine={}, iodepth={}",
            place.jobname, place.groupid, job.setup.engine, job.setup.iodepth
        );
        if numjobs > 1 {
            out.push_str("...\n");
        }
    }
    let kind = if threads { "thread" } else { "process" };
    let plural = match (workers, threads) {
        (1, _) => "",
        (_, true) => "s",
        (_, false) => "es",
    };
    let _ = writeln!(out, "{}-{}", report.tool.name, report.tool.version);
    let _ = writeln!(out, "Starting {workers} {kind}{plural}");
    for job in report.jobs.iter().filter(|job| job.error != 0) {
        let _ = writeln!(
            out,
            "{}: pid={pid}, err={}/error={}",
            report.tool.name,
            job.error,
            strerror(job.error)
        );
    }
    out
}

/// A direction's block sizes as fio prints them in a job's line: `4096B-64.0KiB`.
fn block_size_range(spec: &serde_json::Value, figures: usize) -> String {
    let sizes: Vec<u64> = if let Some(fixed) = spec["fixed"].as_u64() {
        vec![fixed]
    } else if let Some(split) = spec["split"].as_array() {
        split
            .iter()
            .filter_map(|share| share["size_bytes"].as_u64())
            .collect()
    } else {
        let range = &spec["range"];
        [&range["min_bytes"], &range["max_bytes"]]
            .iter()
            .filter_map(|bytes| bytes.as_u64())
            .collect()
    };
    let min = sizes.iter().copied().min().unwrap_or(0);
    let max = sizes.iter().copied().max().unwrap_or(0);
    format!(
        "{}-{}",
        num2str(min, figures, true, Unit::Byte),
        num2str(max, figures, true, Unit::Byte)
    )
}

/// The value of one of `keys` as the job file wrote it for the job (its own, else the global
/// one), for what the report prints but storlab's job model does not keep (fio's
/// `description`, `thread`).
fn written<'a>(echo: Option<&'a FioEcho>, place: &Placement, keys: &[&str]) -> Option<&'a str> {
    let echo = echo?;
    let find = |options: &'a [(String, String)]| {
        options
            .iter()
            .rev()
            .find(|(key, _)| keys.contains(&key.as_str()))
            .map(|(_, value)| value.as_str())
    };
    let own = echo
        .job_options
        .get(place.spec_index)
        .and_then(|options| find(options));
    own.or_else(|| echo.global_options.as_deref().and_then(find))
}

/// I/Os fio counts as issued in a direction: the completed ones and the failed ones a job
/// went on past (fio counts an I/O when it queues it).
fn issued(summary: Option<&DirectionSummary>) -> u64 {
    summary.map_or(0, |summary| summary.ios + summary.errors)
}

fn job_block(
    out: &mut String,
    job: &JobReport,
    place: &Placement,
    group: &GroupRun,
    pid: u32,
    time: &str,
    description: Option<&str>,
) {
    let keys = ReportKeys::of(job);
    let [read, write, trim] = fio_directions(job);
    let names = match keys.unified {
        Unified::Mixed => ["mixed", "write", "trim"],
        _ => ["read", "write", "trim"],
    };
    let directions = [(names[0], read), (names[1], write), (names[2], trim)];
    let bytes: u64 = directions
        .iter()
        .map(|(_, s)| s.map_or(0, |s| s.bytes))
        .sum();
    let ios: u64 = directions.iter().map(|(_, s)| issued(*s)).sum();
    // fio leaves out a job that moved nothing and issued nothing.
    if bytes == 0 && ios == 0 {
        return;
    }
    let grouped = job.setup.job["group_reporting"].as_bool().unwrap_or(false);
    let members = if grouped { job.setup.numjobs.max(1) } else { 1 };
    let error = error_code(job);
    let error_text = match error {
        0 => String::new(),
        errno => format!(" (error={})", strerror(errno)),
    };
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={members}): err={error:2}{error_text}: pid={pid}: {time}",
        place.jobname, place.groupid
    );
    if let Some(description) = description {
        let _ = writeln!(out, "  Description  : [{description}]");
    }
    for (index, (name, summary)) in directions.iter().enumerate() {
        if let Some(summary) = summary.filter(|summary| summary.bytes > 0) {
            let block = Block {
                name,
                figures: keys.significant_figures,
                rate: Unit::rate(keys.unit_bits),
            };
            direction_block(out, &block, summary, group, index, &keys);
        }
    }
    // fio 3.33 prints `both`'s mixed block from a summary whose figures and unit it never set
    // (stat.c `gen_mixed_ddir_stats_from_ts`): its counts print in 0 digits, its rate unitless
    // ("mixed: IOPS=0, BW=0 (0)(0B/2msec)"); its group share is the read's.
    if let Some(mixed) = job.mixed.as_ref().filter(|_| keys.unified == Unified::Both) {
        let block = Block {
            name: "mixed",
            figures: 0,
            rate: Unit::None,
        };
        direction_block(out, &block, mixed, group, 0, &keys);
    }
    latency_distribution(out, job);
    if let Some(sync) = job.sync.as_ref().filter(|sync| sync.count > 0) {
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        latency_line(out, "sync", sync);
        percentiles(out, "sync", sync, keys.percentile_precision);
    }
    usage_and_depths(out, job, [issued(read), issued(write), issued(trim)]);
}

/// How a direction's first line prints: its name, fio's significant figures, its rate unit.
struct Block<'a> {
    name: &'a str,
    figures: usize,
    rate: Unit,
}

/// One direction's lines: totals, latencies, the percentiles the job's keys ask for,
/// bandwidth and IOPS samples.
fn direction_block(
    out: &mut String,
    block: &Block,
    summary: &DirectionSummary,
    group: &GroupRun,
    direction: usize,
    keys: &ReportKeys,
) {
    let runtime_ms = fio_runtime_ms(summary.runtime_ns);
    if runtime_ms == 0 {
        return;
    }
    let bw = MS_PER_S * summary.bytes / runtime_ms;
    let iops = MS_PER_S * issued(Some(summary)) / runtime_ms;
    let (name, figures, rate) = (block.name, block.figures, block.rate);
    // fio notes zoned-device resets after every write line; storlab drives no zoned devices.
    let zone_resets = if name == "write" {
        "; 0 zone resets"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "  {name}: IOPS={}, BW={} ({})({}/{runtime_ms}msec){zone_resets}",
        num2str(iops, figures, false, Unit::None),
        num2str(bw, figures, true, rate),
        num2str(bw, figures, false, rate),
        num2str(summary.bytes, figures, true, Unit::Byte),
    );
    latency_line(out, "slat", &summary.slat);
    latency_line(out, "clat", &summary.clat);
    latency_line(out, " lat", &summary.lat);
    // fio names the per-priority latencies after the percentiles it keeps for them.
    let kind = if keys.lat_percentiles { "lat" } else { "clat" };
    // fio: per-priority lines only when two priorities or more had samples.
    let priorities = summary.by_priority.len() >= 2;
    for priority in summary.by_priority.iter().filter(|_| priorities) {
        latency_line(out, &priority_name(kind, priority.ioprio), &priority.clat);
    }
    let precision = keys.percentile_precision;
    for (shown, name, latency) in [
        (keys.slat_percentiles, "slat", &summary.slat),
        (keys.clat_percentiles, "clat", &summary.clat),
        (keys.lat_percentiles, "lat", &summary.lat),
    ] {
        if shown {
            percentiles(out, name, latency, precision);
        }
    }
    let prio_percentiles = priorities && keys.any_percentiles();
    for priority in summary.by_priority.iter().filter(|_| prio_percentiles) {
        let share = PERCENT * priority.clat.count as f64 / summary.clat.count.max(1) as f64;
        let name = format!(
            "{} ({share:.2}% of IOs)",
            priority_name(kind, priority.ioprio)
        );
        percentiles(out, &name, &priority.clat, precision);
    }
    samples(out, summary, group, direction);
}

fn priority_name(kind: &str, ioprio: u16) -> String {
    format!(
        "{kind} prio {}/{}",
        ioprio >> IOPRIO_CLASS_SHIFT,
        ioprio & IOPRIO_LEVEL_MASK
    )
}

/// `    clat (usec): min=25, max=5445, avg=298.01, stdev=698.40`; nothing without samples.
fn latency_line(out: &mut String, name: &str, latency: &LatencySummary) {
    if latency.count == 0 {
        return;
    }
    let scaled = scale_latency(
        latency.min_ns,
        latency.max_ns,
        latency.mean_ns,
        latency.stddev_ns,
    );
    let _ = writeln!(
        out,
        "    {name} ({}): min={}, max={}, avg={:5.2}, stdev={:5.2}",
        scaled.unit,
        num2str(scaled.min, LATENCY_DIGITS, false, Unit::None),
        num2str(scaled.max, LATENCY_DIGITS, false, Unit::None),
        scaled.mean,
        scaled.stddev
    );
}

/// fio's percentile block: nsec unless the smallest and largest percentile values call for
/// usec or msec (values then rounded up to the unit), as many ` 99.95th=[ 5473]` entries per
/// line as fit fio's width, each value as wide as the largest.
fn percentiles(out: &mut String, name: &str, latency: &LatencySummary, precision: usize) {
    if latency.count == 0 || latency.percentiles.is_empty() {
        return;
    }
    let values = latency.percentiles.iter().map(|&(_, value_ns)| value_ns);
    let min_ns = values.clone().min().unwrap_or(0);
    let max_ns = values.max().unwrap_or(0);
    let (unit, divisor) = if min_ns > 2_000_000 && max_ns >= 100_000_000 {
        ("msec", 1_000_000)
    } else if min_ns > 2_000 && max_ns >= 100_000 {
        ("usec", 1_000)
    } else {
        ("nsec", 1)
    };
    let value_width = (max_ns / divisor)
        .checked_ilog10()
        .map_or(0, |log| log as usize + 1)
        .max(5);
    let per_line = PERCENTILE_LINE_WIDTH / (precision + 10 + value_width);
    let _ = write!(out, "    {name} percentiles ({unit}):\n     |");
    let last = latency.percentiles.len() - 1;
    for (index, &(percentile, value_ns)) in latency.percentiles.iter().enumerate() {
        if index != 0 && index % per_line == 0 {
            out.push_str("     |");
        }
        // fio rounds up at each step of a thousand.
        let mut value = value_ns;
        let mut scale = divisor;
        while scale > 1 {
            value = value.div_ceil(1_000);
            scale /= 1_000;
        }
        let end = if index == last { '\n' } else { ',' };
        let _ = write!(
            out,
            " {percentile:width$.precision$}th=[{value:value_width$}]{end}",
            width = precision + 3,
            precision = precision
        );
        if index != last && index % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

/// `   bw (  KiB/s): ...` and `   iops        : ...` from the per-interval samples; nothing
/// when the run was too short for one.
fn samples(out: &mut String, summary: &DirectionSummary, group: &GroupRun, direction: usize) {
    let rates = &summary.per_interval;
    if rates.samples == 0 {
        return;
    }
    bandwidth_samples(out, rates, group, direction);
    let _ = writeln!(
        out,
        "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
        rates.iops_min.round() as u64,
        rates.iops_max.round() as u64,
        rates.iops_mean,
        rates.iops_stddev,
        rates.samples
    );
}

/// `   bw (  KiB/s): min=..., per=...%, ...`: in bits (`Kibit`) with `unit_base=1`, as fio
/// multiplies the KiB figures by 8 before it picks `Mi`.
fn bandwidth_samples(
    out: &mut String,
    rates: &storlab_stats::IntervalRateSummary,
    group: &GroupRun,
    direction: usize,
) {
    const BITS_PER_BYTE: u64 = 8;
    let mut min = (rates.bw_min_bytes_per_s / BYTES_PER_KIB).round() as u64;
    let mut max = (rates.bw_max_bytes_per_s / BYTES_PER_KIB).round() as u64;
    let mut mean = rates.bw_mean_bytes_per_s / BYTES_PER_KIB;
    let mut stddev = rates.bw_stddev_bytes_per_s / BYTES_PER_KIB;
    // fio's share of the group: the job's mean (whole KiB/s) over the group's bandwidth.
    let group_kib = group.directions[direction].aggregate_bytes_per_s as f64 / BYTES_PER_KIB;
    let share = if group_kib > 1.0 {
        (mean.trunc() * PERCENT / group_kib).min(PERCENT)
    } else {
        PERCENT
    };
    let mut unit = if group.unit_bits { "Kibit" } else { "KiB" };
    if group.unit_bits {
        min *= BITS_PER_BYTE;
        max *= BITS_PER_BYTE;
        mean *= BITS_PER_BYTE as f64;
        stddev *= BITS_PER_BYTE as f64;
    }
    if mean > BYTES_PER_KIB * BYTES_PER_KIB {
        min = (min as f64 / BYTES_PER_KIB) as u64;
        max = (max as f64 / BYTES_PER_KIB) as u64;
        mean /= BYTES_PER_KIB;
        stddev /= BYTES_PER_KIB;
        unit = if group.unit_bits { "Mibit" } else { "MiB" };
    }
    let _ = writeln!(
        out,
        "   bw ({unit:>5}/s): min={min:5}, max={max:5}, per={share:3.2}%, avg={mean:5.2}, \
         stdev={stddev:5.2}, samples={}",
        rates.samples
    );
}

/// `  lat (usec)   : 50=2.44%, 100=38.67%, ...`: the job's completion latencies over all
/// directions, the non-empty buckets only, five to a line.
fn latency_distribution(out: &mut String, job: &JobReport) {
    let (ns, us, ms) = latency_percents(job);
    let ms_keys: Vec<&str> = LATENCY_DECADE_KEYS
        .iter()
        .chain(&LATENCY_MS_EXTRA_KEYS)
        .copied()
        .collect();
    for (unit, keys, percents) in [
        ("nsec", &LATENCY_DECADE_KEYS[..], ns),
        ("usec", &LATENCY_DECADE_KEYS[..], us),
        ("msec", &ms_keys[..], ms),
    ] {
        let shown: Vec<String> = keys
            .iter()
            .zip(&percents)
            .filter(|(_, &percent)| percent > 0.0)
            .map(|(key, percent)| format!("{key}={percent:3.2}%"))
            .collect();
        for line in shown.chunks(LATENCY_BUCKETS_PER_LINE) {
            let _ = writeln!(out, "  lat ({unit})   : {}", line.join(", "));
        }
    }
}

/// The CPU line, the IO depths block, the issued counts, and fio's error and latency-target
/// lines where they apply.
fn usage_and_depths(out: &mut String, job: &JobReport, issued: [u64; 3]) {
    let workers = f64::from(job.setup.numjobs.max(1));
    let _ = writeln!(
        out,
        "  cpu          : usr={:3.2}%, sys={:3.2}%, ctx={}, majf={}, minf={}",
        job.cpu.user_percent / workers,
        job.cpu.system_percent / workers,
        job.cpu.context_switches,
        job.cpu.major_faults,
        job.cpu.minor_faults
    );
    let depth_line = |label: &str, keys: [&str; 7], percents: Vec<f64>| {
        let shares: Vec<String> = keys
            .iter()
            .zip(percents)
            .map(|(key, percent)| format!("{key}={percent:3.1}%"))
            .collect();
        format!("  {label}: {}\n", shares.join(", "))
    };
    const LEVELS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
    const BATCHES: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
    // As fio: over the I/Os issued, the syncs counted in a level but not in the total
    // (`1=124.6%` with `fsync=4`; `level_percents`).
    out.push_str(&depth_line(
        "IO depths    ",
        LEVELS,
        crate::fio::level_percents(job),
    ));
    out.push_str(&depth_line(
        "   submit    ",
        BATCHES,
        depth_percents(&job.depth.submit),
    ));
    out.push_str(&depth_line(
        "   complete  ",
        BATCHES,
        depth_percents(&job.depth.complete),
    ));
    let [read, write, trim] = issued;
    let _ = writeln!(
        out,
        "     issued rwts: total={read},{write},{trim},{} short={},0,0,0 dropped=0,0,0,0",
        job.fsyncs,
        // fio 3.33 counts each fdatasync in the reads' short I/Os (`WorkerStats::fdatasyncs`).
        job.fdatasyncs
    );
    if continues_on_error(job) {
        let failed: u64 = job.directions().map(|(_, summary)| summary.failed()).sum();
        let _ = writeln!(
            out,
            "     errors    : total={failed}, first_error={}/<{}>",
            job.first_error,
            strerror(job.first_error)
        );
    }
    // fio 3.33 prints the latency-target line for every job but one that only verified.
    if !verify_only(job) {
        let depth = match job.latency_depth {
            0 => job.setup.iodepth,
            searched => searched,
        };
        let percentile = job.setup.job["latency_target"]["percentile"]
            .as_f64()
            .unwrap_or(PERCENT);
        let _ = writeln!(
            out,
            "     latency   : target={}, window={}, percentile={percentile:.2}%, depth={depth}",
            latency_option(job, "target_ns").unwrap_or(0),
            latency_option(job, "window_us").unwrap_or(0),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{HostInfo, JobNotes, JobSetup, TargetInfo, ToolInfo};
    use storlab_stats::WorkerStats;

    const MS: u64 = 1_000_000;

    /// A job of `numjobs` workers that read (or wrote) 64 KiB in 4 KiB I/Os of 20 µs each
    /// over 8 ms.
    fn job(name: &str, spec: serde_json::Value, numjobs: u32, write: bool) -> JobReport {
        let mut stats = WorkerStats::new(1_000 * MS);
        stats.elapsed_ns = 8 * MS;
        let direction = if write {
            &mut stats.write
        } else {
            &mut stats.read
        };
        for index in 0..16 {
            direction.record(index * MS / 2, 4096, 1_000, 20_000);
        }
        stats.depth.level[0] = 16;
        let setup = JobSetup {
            name: name.into(),
            job: spec,
            engine: "psync".into(),
            target: TargetInfo {
                description: "f".into(),
                kind: "file".into(),
                size_bytes: 65_536,
                path: None,
            },
            device_state: "as-found".into(),
            data_pattern: "random".into(),
            align_bytes: 4096,
            seed: 1,
            iodepth: 1,
            numjobs,
            rw: if write {
                "write".into()
            } else {
                "randrw:70".into()
            },
            block_size: "4KiB".into(),
        };
        JobReport::new(setup, JobNotes::default(), &stats)
    }

    fn two_group_report() -> RunReport {
        let tool = ToolInfo {
            name: "storlab".into(),
            version: "9.9.9".into(),
        };
        let host = HostInfo {
            hostname: "h".into(),
            kernel: "k".into(),
            cpus: 2,
        };
        let mut report = RunReport::new(tool, 1_795_345_324_000, host);
        let split = serde_json::json!({"name": "a", "numjobs": 2, "group_reporting": true,
            "block_size_read": {"fixed": 4096},
            "block_size_write": {"split": [{"size_bytes": 4096, "percent": 50},
                                           {"size_bytes": 65536, "percent": 50}]}});
        report.jobs.push(job("a", split, 2, false));
        let fixed = serde_json::json!({"fixed": 8192});
        let spec = serde_json::json!({"name": "b", "stonewall": true,
            "block_size_read": fixed, "block_size_write": fixed});
        let mut failed = job("b", spec, 1, true);
        failed.error = 84;
        failed.notes.warnings.push("verify failed".into());
        report.jobs.push(failed);
        report
    }

    /// The lines before the report: each job once (its clones as `...`), the version, the
    /// workers started, and the job an error ended.
    #[test]
    fn the_preamble_names_each_job_its_workers_and_its_failure() {
        let preamble = to_fio_normal_preamble(&two_group_report(), None, 7);
        assert_eq!(
            preamble,
            "a: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-64.0KiB, (T) 4096B-64.0KiB, \
             ioengine=psync, iodepth=1\n...\n\
             b: (g=1): rw=write, bs=(R) 8192B-8192B, (W) 8192B-8192B, (T) 8192B-8192B, ioengine=psync, iodepth=1\n\
             storlab-9.9.9\nStarting 3 processes\n\
             storlab: pid=7, err=84/error=Invalid or incomplete multibyte or wide character\n"
        );
    }

    #[test]
    fn each_group_has_its_jobs_and_its_run_status() {
        let text = to_fio_normal(&two_group_report(), None, 7);
        assert!(
            text.starts_with(
                "\na: (groupid=0, jobs=2): err= 0: pid=7: Sun Nov 22 11:02:04 2026\n\
             \x20 read: IOPS=2000, BW=8000KiB/s (8192kB/s)(64.0KiB/8msec)\n\
             \x20   slat (nsec): min=1000, max=1000, avg=1000.00, stdev= 0.00\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "\nb: (groupid=1, jobs=1): err=84 (error=Invalid or incomplete multibyte or wide \
             character): pid=7: Sun Nov 22 11:02:04 2026\n  write: IOPS=2000"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "  lat (usec)   : 50=100.00%\n\
             \x20 cpu          : usr=0.00%, sys=0.00%, ctx=0, majf=0, minf=0\n\
             \x20 IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "     issued rwts: total=0,16,0,0 short=0,0,0,0 dropped=0,0,0,0\n\
             \x20    latency   : target=0, window=0, percentile=100.00%, depth=1\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "\nRun status group 0 (all jobs):\n   READ: bw=8000KiB/s (8192kB/s), \
             8000KiB/s-8000KiB/s (8192kB/s-8192kB/s), io=64.0KiB (65.5kB), run=8-8msec\n\
             \nRun status group 1 (all jobs):\n  WRITE: bw=8000KiB/s"
            ),
            "{text}"
        );
        assert!(
            !text.contains("Disk stats"),
            "no block device, no disk block"
        );
        assert!(
            text.ends_with("\nstorlab warnings:\n  b: verify failed\n"),
            "{text}"
        );
    }

    fn summary(percentile_values_ns: &[u64], min_ns: u64, max_ns: u64) -> LatencySummary {
        LatencySummary {
            count: 256,
            min_ns,
            max_ns,
            mean_ns: 31_536.63,
            stddev_ns: 279_714.62,
            percentiles: storlab_stats::FIO_DEFAULT_PERCENTILES
                .iter()
                .copied()
                .zip(percentile_values_ns.iter().copied())
                .collect(),
        }
    }

    /// fio 3.33's block for a cached psync read: nsec, values seven wide, three a line.
    #[test]
    fn percentiles_lay_out_as_fios() {
        let values = [
            532, 532, 540, 540, 548, 548, 564, 724, 812, 876, 6944, 7392, 1_744_896, 2_867_200,
            2_998_272, 2_998_272, 2_998_272,
        ];
        let mut out = String::new();
        percentiles(&mut out, "clat", &summary(&values, 521, 2_985_300), 2);
        assert_eq!(
            out,
            "    clat percentiles (nsec):
     |  1.00th=[    532],  5.00th=[    532], 10.00th=[    540],
     | 20.00th=[    540], 30.00th=[    548], 40.00th=[    548],
     | 50.00th=[    564], 60.00th=[    724], 70.00th=[    812],
     | 80.00th=[    876], 90.00th=[   6944], 95.00th=[   7392],
     | 99.00th=[1744896], 99.50th=[2867200], 99.90th=[2998272],
     | 99.95th=[2998272], 99.99th=[2998272]
"
        );
    }

    /// fio rounds each value up to the unit: 5_472_256 ns prints as 5473 usec.
    #[test]
    fn percentiles_in_usec_round_up() {
        let values = [
            40_192, 60_672, 70_144, 78_336, 85_504, 88_576, 95_744, 107_008, 128_512, 144_384,
            317_440, 2_146_304, 3_588_096, 3_620_864, 5_472_256, 5_472_256, 5_472_256,
        ];
        let mut out = String::new();
        percentiles(&mut out, "clat", &summary(&values, 25_000, 5_445_000), 2);
        assert_eq!(
            out,
            "    clat percentiles (usec):
     |  1.00th=[   41],  5.00th=[   61], 10.00th=[   71], 20.00th=[   79],
     | 30.00th=[   86], 40.00th=[   89], 50.00th=[   96], 60.00th=[  108],
     | 70.00th=[  129], 80.00th=[  145], 90.00th=[  318], 95.00th=[ 2147],
     | 99.00th=[ 3589], 99.50th=[ 3621], 99.90th=[ 5473], 99.95th=[ 5473],
     | 99.99th=[ 5473]
"
        );
    }

    #[test]
    fn latency_lines_are_fios() {
        let mut out = String::new();
        let slat = LatencySummary {
            count: 496,
            min_ns: 3696,
            max_ns: 43_074,
            mean_ns: 6156.40,
            stddev_ns: 4716.01,
            percentiles: Vec::new(),
        };
        latency_line(&mut out, "slat", &slat);
        let lat = LatencySummary {
            min_ns: 3_400,
            max_ns: 221_500,
            mean_ns: 5_830.0,
            stddev_ns: 9_120.0,
            ..slat.clone()
        };
        latency_line(&mut out, " lat", &lat);
        latency_line(&mut out, "clat", &LatencySummary { count: 0, ..lat });
        assert_eq!(
            out,
            "    slat (nsec): min=3696, max=43074, avg=6156.40, stdev=4716.01\n     \
             lat (usec): min=3, max=221, avg= 5.83, stdev= 9.12\n"
        );
    }
}
