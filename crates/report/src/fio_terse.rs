//! fio's terse output, version 3 (`--output-format=terse`, `--minimal`): one `;`-separated
//! line per job, field for field as fio 3.33's `show_thread_status_terse_all` writes it, so
//! scripts that cut fio's terse lines by position read storlab's.
//!
//! Fields: `3;fio version;jobname;groupid;error`, then read and write (41 fields each: KiB,
//! KiB/s, IOPS, runtime ms; slat, clat in µs (min, max, mean, dev); 20 clat percentiles as
//! `P%=µs`, padded with `0%=0`; lat in µs; bandwidth min, max, share of the group, mean, dev in
//! KiB/s), CPU (`usr%`, `sys%`, ctx, majf, minf), 7 depth levels, 10 µs and 12 ms latency
//! buckets, then 9 fields per block device of `disk_util`: 121 fields plus 9 per disk.

use crate::fio::{latency_percents, place_jobs};
use crate::fio_keys::{as_fio_measured, percentile_list, ReportKeys, Unified};
use crate::model::{JobReport, RunReport};
use storlab_stats::{DirectionStats, DirectionSummary, LatencySummary};

/// fio's terse format version written (fio's default `--terse-version=3`).
const TERSE_VERSION: u32 = 3;
/// Percentile fields per direction (fio's `FIO_IO_U_LIST_MAX_LEN`).
const PERCENTILE_FIELDS: usize = 20;
const NS_PER_US: u64 = 1_000;
const MS_PER_S: u64 = 1_000;
const BYTES_PER_KIB: u64 = 1_024;
const PERCENT: f64 = 100.0;

/// The report as fio's terse v3 lines, one per job (fio's job split as in the fio JSON).
pub fn to_fio_terse(report: &RunReport) -> String {
    let places = place_jobs(&report.jobs);
    let mut out = String::new();
    for (job, place) in report.jobs.iter().zip(&places) {
        let job = &*as_fio_measured(job);
        let keys = ReportKeys::of(job);
        let list = percentile_list(&job.setup.job);
        let mut fields: Vec<String> = vec![
            TERSE_VERSION.to_string(),
            format!("{}-{}", report.tool.name, report.tool.version),
            place.jobname.clone(),
            place.groupid.to_string(),
            error_code(job).to_string(),
        ];
        // fio 3.33: `mixed` in the read's place, or after the write with `both`.
        let directions = match keys.unified {
            Unified::Split => vec![job.read.as_ref(), job.write.as_ref()],
            Unified::Mixed => vec![job.mixed.as_ref()],
            Unified::Both => vec![job.read.as_ref(), job.write.as_ref(), job.mixed.as_ref()],
        };
        for summary in directions {
            direction_fields(summary, &keys, &list, &mut fields);
        }
        let workers = f64::from(job.setup.numjobs.max(1));
        fields.push(format!("{:.6}%", job.cpu.user_percent / workers));
        fields.push(format!("{:.6}%", job.cpu.system_percent / workers));
        fields.push(job.cpu.context_switches.to_string());
        fields.push(job.cpu.major_faults.to_string());
        fields.push(job.cpu.minor_faults.to_string());
        for percent in crate::fio::level_percents(job) {
            fields.push(format!("{percent:.1}%"));
        }
        let (ns, mut us, ms) = latency_percents(job);
        // fio's stat_calc_lat_nu: sub-microsecond completions count in the first µs bucket.
        us[0] += ns.iter().sum::<f64>();
        for percent in us.iter().chain(&ms) {
            fields.push(format!("{percent:.2}%"));
        }
        for disk in &report.disk_util {
            fields.push(disk.name.clone());
            for count in [
                disk.read_ios,
                disk.write_ios,
                disk.read_merges,
                disk.write_merges,
                disk.read_ticks_ms,
                disk.write_ticks_ms,
                disk.in_queue_ms,
            ] {
                fields.push(count.to_string());
            }
            fields.push(format!("{:.2}%", disk.util_percent));
        }
        // fio's stat.c: with continue_on_error, the errors passed and the first one's errno
        // follow the disk figures.
        if crate::fio::continues_on_error(job) {
            let failed: u64 = job.directions().map(|(_, summary)| summary.failed()).sum();
            fields.push(failed.to_string());
            fields.push(job.first_error.to_string());
        }
        out.push_str(&fields.join(";"));
        out.push('\n');
    }
    out
}

fn error_code(job: &JobReport) -> i32 {
    crate::fio::error_code(job)
}

/// One direction's 41 fields (zeros for a direction that did not run, as fio writes them).
fn direction_fields(
    summary: Option<&DirectionSummary>,
    keys: &ReportKeys,
    list: &[f64],
    fields: &mut Vec<String>,
) {
    let empty = DirectionSummary::from_stats(&DirectionStats::new(0), 0);
    let summary = summary.unwrap_or(&empty);
    // fio's whole milliseconds, rounded up, as in its JSON and human report.
    let runtime_ms = crate::fio_units::fio_runtime_ms(summary.runtime_ns);
    // fio: KiB/s and IOPS in whole units over the runtime in ms, 0 without a runtime.
    let bw_kib = (MS_PER_S * summary.bytes)
        .checked_div(runtime_ms)
        .map_or(0, |bytes_per_s| bytes_per_s / BYTES_PER_KIB);
    let iops = (MS_PER_S * summary.ios)
        .checked_div(runtime_ms)
        .unwrap_or(0);
    fields.push((summary.bytes / BYTES_PER_KIB).to_string());
    fields.push(bw_kib.to_string());
    fields.push(iops.to_string());
    fields.push(runtime_ms.to_string());
    latency_fields(&summary.slat, fields);
    latency_fields(&summary.clat, fields);
    // fio's percentiles of total latency with `lat_percentiles`, else of completion latency
    // with `clat_percentiles`, else none; the list's entries even without samples (then 0).
    let reported = if keys.lat_percentiles {
        Some(&summary.lat)
    } else {
        keys.clat_percentiles.then_some(&summary.clat)
    };
    for index in 0..PERCENTILE_FIELDS {
        let entry = reported.and_then(|latency| {
            let percentile = *list.get(index)?;
            let value_ns = match latency.count {
                0 => 0,
                _ => latency
                    .percentiles
                    .get(index)
                    .map_or(0, |&(_, value)| value),
            };
            Some((percentile, value_ns))
        });
        match entry {
            Some((percentile, value_ns)) => {
                fields.push(format!("{percentile:.6}%={}", value_ns / NS_PER_US));
            }
            None => fields.push("0%=0".to_owned()),
        }
    }
    latency_fields(&summary.lat, fields);
    let rates = &summary.per_interval;
    if rates.samples > 0 {
        let kib = |bytes_per_s: f64| bytes_per_s / BYTES_PER_KIB as f64;
        fields.push(format!("{}", kib(rates.bw_min_bytes_per_s).round() as u64));
        fields.push(format!("{}", kib(rates.bw_max_bytes_per_s).round() as u64));
        // Each storlab job is its own group: it has the group's whole bandwidth.
        fields.push(format!("{PERCENT:.6}%"));
        fields.push(format!("{:.6}", kib(rates.bw_mean_bytes_per_s)));
        fields.push(format!("{:.6}", kib(rates.bw_stddev_bytes_per_s)));
    } else {
        fields.extend(["0", "0", "0.000000%", "0.000000", "0.000000"].map(String::from));
    }
}

/// min and max in whole µs, mean and deviation in µs with fio's six decimals.
fn latency_fields(latency: &LatencySummary, fields: &mut Vec<String>) {
    if latency.count == 0 {
        fields.extend(["0", "0", "0.000000", "0.000000"].map(String::from));
        return;
    }
    fields.push((latency.min_ns / NS_PER_US).to_string());
    fields.push((latency.max_ns / NS_PER_US).to_string());
    fields.push(format!("{:.6}", latency.mean_ns / NS_PER_US as f64));
    fields.push(format!("{:.6}", latency.stddev_ns / NS_PER_US as f64));
}
