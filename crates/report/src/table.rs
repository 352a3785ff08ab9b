//! Human-readable summary table, one row per job, in the spirit of CrystalDiskMark's and
//! fio's short summaries.

use std::fmt::Write as _;

use crate::escape::escape_control;
use crate::model::{JobReport, RunReport};
use crate::units::{format_fixed, format_latency_ns};

const BYTES_PER_MB: f64 = 1e6;
const P99: f64 = 99.0;
const COLUMN_GAP: &str = "  ";
const NOT_APPLICABLE: &str = "-";
/// Marks a p99 taken as the worst of several directions.
const MIXED_MARK: &str = "*";

#[derive(Clone, Copy, PartialEq)]
enum Align {
    Left,
    Right,
}

const COLUMNS: [(&str, Align); 10] = [
    ("job", Align::Left),
    ("rw", Align::Left),
    ("bs", Align::Left),
    ("QDxJobs", Align::Right),
    ("read MB/s", Align::Right),
    ("read IOPS", Align::Right),
    ("write MB/s", Align::Right),
    ("write IOPS", Align::Right),
    ("mean lat", Align::Right),
    ("p99 clat", Align::Right),
];

/// Renders `report` as an aligned text table followed by the warnings.
/// MB/s are decimal (10^6 bytes per second), as CrystalDiskMark reports them. Text from the
/// report (job names, host, warnings) is printed with its control characters escaped, so a
/// name cannot break a row or drive the terminal.
pub fn render_table(report: &RunReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} on {} (kernel {}, {} CPUs)",
        report.tool.name,
        report.tool.version,
        escape_control(display_or_unknown(&report.host.hostname)),
        escape_control(display_or_unknown(&report.host.kernel)),
        report.host.cpus
    );
    let _ = writeln!(
        out,
        "MB/s = 10^6 bytes/s; mean lat = total latency (submission + completion) over all directions"
    );
    let _ = writeln!(out);

    let rows: Vec<[String; 10]> = report.jobs.iter().map(job_row).collect();
    let mut widths = COLUMNS.map(|(title, _)| title.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let header = COLUMNS.map(|(title, _)| title.to_owned());
    write_row(&mut out, &header, &widths);
    let rule: Vec<String> = widths.iter().map(|&width| "-".repeat(width)).collect();
    let _ = writeln!(out, "{}", rule.join(COLUMN_GAP));
    for row in &rows {
        write_row(&mut out, row, &widths);
    }
    if rows.iter().any(|row| row[9].ends_with(MIXED_MARK)) {
        let _ = writeln!(
            out,
            "{MIXED_MARK} mixed job: the higher p99 of its directions"
        );
    }
    // Failed I/Os a job went on past (`continue_on_error`) are in none of the rates above.
    for job in &report.jobs {
        let failed: u64 = job.directions().map(|(_, summary)| summary.failed()).sum();
        let ended_by_one = u64::from(job.error != 0 && job.first_error == 0);
        if failed > ended_by_one {
            let _ = writeln!(
                out,
                "{}: {failed} failed I/Os passed (continue_on_error), in no figure above; first error: {}",
                escape_control(&job.setup.name),
                std::io::Error::from_raw_os_error(job.first_error)
            );
        }
    }
    // A job an error ended (fio's job `error`): its figures are the part before it.
    for job in report.jobs.iter().filter(|job| job.error != 0) {
        let _ = writeln!(
            out,
            "{}: ended by error {}: {}; its figures cover what ran until then",
            escape_control(&job.setup.name),
            job.error,
            std::io::Error::from_raw_os_error(job.error)
        );
    }
    // fio's latency-target search: the depth it settled on, with the settings, as fio's
    // `latency   : target=..., window=..., percentile=..., depth=...` line.
    for job in report.jobs.iter().filter(|job| job.latency_depth > 0) {
        let target = &job.setup.job["latency_target"];
        let _ = writeln!(
            out,
            "{}: latency target {} ns over {} us windows at {:.2}%: queue depth {}",
            escape_control(&job.setup.name),
            target["target_ns"].as_u64().unwrap_or(0),
            target["window_us"].as_u64().unwrap_or(0),
            target["percentile"].as_f64().unwrap_or(0.0),
            job.latency_depth
        );
    }
    push_client_rates(&mut out, report);
    push_preparation(&mut out, report);
    crate::repeats_text::push_repeats(&mut out, &crate::repeats::summarise_repeats(&report.jobs));
    // What a real target's path implies is the same for every job on it: said once per target.
    // A simulated job's bottleneck is its own: said per job.
    let mut targets_said: Vec<&str> = Vec::new();
    let mut diagnosis: Vec<String> = Vec::new();
    for job in &report.jobs {
        let description = job.setup.target.description.as_str();
        if !targets_said.contains(&description) {
            targets_said.push(description);
            diagnosis.extend(
                target_diagnosis(job)
                    .into_iter()
                    .map(|line| format!("[{description}] {line}")),
            );
        }
        diagnosis.extend(verdict_lines(job));
        diagnosis.extend(sim_diagnosis(job));
    }
    if !diagnosis.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "diagnosis:");
        for line in diagnosis {
            let _ = writeln!(out, "  {}", escape_control(&line));
        }
    }

    let job_warnings = report.jobs.iter().flat_map(|job| {
        job.notes
            .warnings
            .iter()
            .map(move |w| (Some(&job.setup.name), w))
    });
    let all_warnings: Vec<_> = report
        .warnings
        .iter()
        .map(|w| (None, w))
        .chain(job_warnings)
        .collect();
    if !all_warnings.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "warnings:");
        for (job, warning) in all_warnings {
            let warning = escape_control(warning);
            match job {
                Some(job) => {
                    let _ = writeln!(out, "  [{}] {warning}", escape_control(job));
                }
                None => {
                    let _ = writeln!(out, "  {warning}");
                }
            }
        }
    }
    out
}

/// What putting the targets in their state took: apart from the jobs, whose figures (and
/// simulator diagnosis) cover their own measured interval only.
fn push_preparation(out: &mut String, report: &RunReport) {
    if report.preparation.is_empty() {
        return;
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "state preparation (in no job's figures):");
    for p in &report.preparation {
        let mb = |bytes: u64| format!("{:.1} MB", bytes as f64 / BYTES_PER_MB);
        let mut line = format!(
            "  [{}] {}: {} step{}, {} written, {} trimmed",
            escape_control(&p.target),
            escape_control(&p.purpose),
            p.steps,
            if p.steps == 1 { "" } else { "s" },
            mb(p.bytes_written),
            mb(p.bytes_trimmed)
        );
        if let Some(commands) = p.sim_commands {
            let _ = write!(line, ", {commands} commands");
        }
        if let Some(elapsed_ns) = p.sim_elapsed_ns {
            let _ = write!(line, ", {:.2} s simulated", elapsed_ns as f64 / 1e9);
        }
        let _ = writeln!(out, "{line} ({:.2} s wall)", p.wall_ns as f64 / 1e9);
    }
}

/// A multi-client run's rows are the clients' aggregate: each client's own rates follow.
fn push_client_rates(out: &mut String, report: &RunReport) {
    for job in report.jobs.iter().filter(|job| !job.ranks.is_empty()) {
        let _ = writeln!(
            out,
            "{}: {} clients; IOPS and MB/s above are their sum, latencies from their merged histograms",
            escape_control(&job.setup.name),
            job.ranks.len()
        );
        for row in &job.ranks {
            let rates: Vec<String> = row
                .directions()
                .map(|(name, summary)| {
                    format!(
                        "{name} {:.0} IOPS {:.1} MB/s",
                        summary.iops,
                        summary.bw_bytes_per_s / 1e6
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "  rank {} on {}: {}",
                row.rank,
                escape_control(display_or_unknown(&row.host)),
                rates.join(", ")
            );
        }
    }
}

/// What limits a job's figures: for a real target, the path `storlab probe` found (one line
/// naming it, then its diagnosis); for a simulated stack, the bottleneck layer and its
/// utilisation, the next busiest layer, and the transport fallback if one happened.
pub fn job_diagnosis(job: &JobReport) -> Vec<String> {
    let name = &job.setup.name;
    let mut lines: Vec<String> = target_diagnosis(job)
        .into_iter()
        .map(|line| format!("[{name}] {line}"))
        .collect();
    lines.extend(verdict_lines(job));
    lines.extend(sim_diagnosis(job));
    lines
}

/// The verdict on a real target's path for this job's measured rate (`path_verdict`), each
/// line prefixed with the job's name.
fn verdict_lines(job: &JobReport) -> Vec<String> {
    let name = &job.setup.name;
    let Some(verdict) = &job.path_verdict else {
        return Vec::new();
    };
    verdict["lines"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|line| line.as_str())
        .map(|line| format!("[{name}] verdict: {line}"))
        .collect()
}

/// What the probed path of a real target (`target.path`) implies, without a prefix.
fn target_diagnosis(job: &JobReport) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(path) = &job.setup.target.path {
        let device = &path["device"];
        if let Some(transport) = device["transport"].as_str() {
            let chain: Vec<&str> = device["driver_chain"]
                .as_array()
                .map(|links| links.iter().filter_map(|l| l["driver"].as_str()).collect())
                .unwrap_or_default();
            let chain = if chain.is_empty() {
                String::new()
            } else {
                format!(" ({})", chain.join(" → "))
            };
            lines.push(format!(
                "{} is {transport}{chain}",
                device["node"].as_str().unwrap_or("the target")
            ));
        }
        for line in path["diagnosis"].as_array().into_iter().flatten() {
            if let Some(line) = line.as_str() {
                lines.push(line.to_string());
            }
        }
    }
    lines
}

/// A simulated job's bottleneck, the next busiest layer, any transport fallback and the faults
/// the stack met and recovered from, each line prefixed with the job's name.
fn sim_diagnosis(job: &JobReport) -> Vec<String> {
    let name = &job.setup.name;
    let mut lines = Vec::new();
    if let Some(sim) = &job.notes.sim {
        if let (Some(bottleneck), Some(utilisation)) = (
            sim["bottleneck"].as_str(),
            sim["bottleneck_utilisation"].as_f64(),
        ) {
            let mut line = format!(
                "[{name}] bottleneck: {bottleneck} at {:.0}% utilisation",
                utilisation * 100.0
            );
            let next = sim["layers"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|l| l["name"].as_str() != Some(bottleneck))
                .filter_map(|l| Some((l["name"].as_str()?, l["utilisation"].as_f64()?)))
                .max_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((next, next_utilisation)) = next {
                line.push_str(&format!(
                    "; next: {next} at {:.0}%",
                    next_utilisation * 100.0
                ));
            }
            lines.push(line);
        }
        if let Some(fallback) = sim["fallback"].as_str() {
            lines.push(format!(
                "[{name}] transport {}: {fallback}",
                sim["transport"].as_str().unwrap_or("-")
            ));
        }
    }
    if let Some(faults) = crate::faults::fault_summary(job) {
        lines.push(format!("[{name}] faults and recovery: {faults}"));
    }
    lines
}

fn display_or_unknown(text: &str) -> &str {
    if text.is_empty() {
        "unknown"
    } else {
        text
    }
}

fn write_row(out: &mut String, cells: &[String; 10], widths: &[usize; 10]) {
    let formatted: Vec<String> = cells
        .iter()
        .zip(widths)
        .zip(COLUMNS)
        .map(|((cell, &width), (_, align))| match align {
            Align::Left => format!("{cell:<width$}"),
            Align::Right => format!("{cell:>width$}"),
        })
        .collect();
    let _ = writeln!(out, "{}", formatted.join(COLUMN_GAP).trim_end());
}

fn job_row(job: &JobReport) -> [String; 10] {
    let mb_per_s = |bw_bytes_per_s: f64| format_fixed(bw_bytes_per_s / BYTES_PER_MB, 2);
    let iops = |iops: f64| format_fixed(iops, 1);
    let (read_mb, read_iops) = job.read.as_ref().map_or_else(
        || (NOT_APPLICABLE.to_owned(), NOT_APPLICABLE.to_owned()),
        |read| (mb_per_s(read.bw_bytes_per_s), iops(read.iops)),
    );
    let (write_mb, write_iops) = job.write.as_ref().map_or_else(
        || (NOT_APPLICABLE.to_owned(), NOT_APPLICABLE.to_owned()),
        |write| (mb_per_s(write.bw_bytes_per_s), iops(write.iops)),
    );

    // Weighted by I/O count, the mean over directions is exact.
    let total_ios = job.total_ios();
    let mean_lat = if total_ios == 0 {
        NOT_APPLICABLE.to_owned()
    } else {
        let weighted_sum: f64 = job
            .directions()
            .map(|(_, summary)| summary.lat.mean_ns * summary.ios as f64)
            .sum();
        format_latency_ns(weighted_sum / total_ios as f64)
    };

    // Percentiles do not combine across directions; show the worst and mark it.
    let p99s: Vec<u64> = job
        .directions()
        .filter(|(_, summary)| summary.ios > 0)
        .filter_map(|(_, summary)| summary.clat.percentile_ns(P99))
        .collect();
    let p99_clat = match p99s.iter().max() {
        None => NOT_APPLICABLE.to_owned(),
        Some(&worst) if p99s.len() > 1 => {
            format!("{}{MIXED_MARK}", format_latency_ns(worst as f64))
        }
        Some(&only) => format_latency_ns(only as f64),
    };

    [
        escape_control(&job.setup.name).into_owned(),
        escape_control(&job.setup.rw).into_owned(),
        escape_control(&job.setup.block_size).into_owned(),
        format!("{}x{}", job.setup.iodepth, job.setup.numjobs),
        read_mb,
        read_iops,
        write_mb,
        write_iops,
        mean_lat,
        p99_clat,
    ]
}
