//! The HTML report: one self-contained file (inline CSS and SVG, no scripts, no network) with a
//! chart per view of one or more runs — grouped bars per configuration and direction, throughput
//! vs block size, IOPS vs queue depth, latency percentiles, the write-share × queue-depth grid,
//! state over time, write cliffs, and per-layer utilisation of simulated stacks — each with its
//! numbers below.

mod cliffs;
mod repeats;
mod svg;
mod verdict;

use crate::model::{JobReport, RunReport};
use crate::units::format_latency_ns;
use std::collections::BTreeSet;
use std::fmt::Write;
pub use svg::PLOT_BACKGROUND;
use svg::{escape, Axis, BarChart, Figure, HeatMap, HorizontalBarChart, LineChart, Scale, Table};

const BYTES_PER_MB: f64 = 1e6;
const PERCENT: f64 = 100.0;
const NS_PER_S: f64 = 1e9;
/// Above this many lines a latency chart is split by configuration so it stays readable.
const MAX_LINES_PER_CHART: usize = 10;
/// Percentiles of the latency curves: the tail is what differs between stacks.
const LATENCY_CURVE_MIN_PERCENTILE: f64 = 50.0;

/// A labelled line of (x, y) points.
type Line = (String, Vec<(f64, f64)>);

/// A run to put in the report and how to name it (`r12`, a file name).
pub struct LabeledRun<'a> {
    pub label: String,
    pub report: &'a RunReport,
}

/// The report of `runs` as one HTML document.
pub fn to_html(title: &str, runs: &[LabeledRun<'_>]) -> String {
    let figures = figures(runs);
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        escape(title),
        escape(title)
    );
    runs_table(&mut out, runs);
    probed_targets(&mut out, runs);
    verdict::verdict_table(&mut out, runs);
    recovered_faults(&mut out, runs);
    repeats::repeats_table(&mut out, runs);
    for figure in &figures {
        figure.to_html(&mut out);
    }
    out.push_str("</body></html>\n");
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:24px;color:#1b1f24;background:#fff}\
h1{font-size:22px}figure{margin:0 0 36px 0}figcaption{font-weight:600;font-size:16px;margin:0 0 6px 0}\
table{border-collapse:collapse;font-size:12px;margin-top:6px}th,td{border:1px solid #d0d7de;padding:2px 8px;text-align:right}\
thead th{background:#eef1f5}tbody th{text-align:left;font-weight:500}\
svg.chart{display:block}.tick{font-size:11px;fill:#444}.axis{font-size:12px;fill:#222}.legend{font-size:12px;fill:#222}\
.grid{stroke:#d8dde5;stroke-width:1}.marker{stroke:#888;stroke-dasharray:4 3}.mark{font-size:11px}.cellv{font-size:11px}";

fn runs_table(out: &mut String, runs: &[LabeledRun<'_>]) {
    out.push_str("<table class=\"runs\"><thead><tr><th>run</th><th>tool</th><th>host</th><th>started</th><th>jobs</th><th>targets</th><th>warnings</th></tr></thead><tbody>\n");
    for run in runs {
        let targets: BTreeSet<&str> = run
            .report
            .jobs
            .iter()
            .map(|j| j.setup.target.description.as_str())
            .collect();
        let warnings: Vec<&str> = run
            .report
            .warnings
            .iter()
            .chain(run.report.jobs.iter().flat_map(|j| j.notes.warnings.iter()))
            .map(String::as_str)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let _ = writeln!(
            out,
            "<tr><th>{}</th><td>{} {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&run.label),
            escape(&run.report.tool.name),
            escape(&run.report.tool.version),
            escape(&run.report.host.hostname),
            escape(&format_local_time(run.report.started_unix_ms)),
            run.report.jobs.len(),
            escape(&targets.into_iter().collect::<Vec<_>>().join(", ")),
            escape(&warnings.join("; "))
        );
    }
    out.push_str("</tbody></table>\n");
}

/// What each real target was, as `storlab probe` found it when the run opened it (the
/// `target.path` of its jobs): the diagnosis lines, and every fact behind them on demand.
fn probed_targets(out: &mut String, runs: &[LabeledRun<'_>]) {
    let mut seen = BTreeSet::new();
    let probed: Vec<(&str, &str, &serde_json::Value)> = runs
        .iter()
        .flat_map(|run| run.report.jobs.iter().map(move |job| (run, job)))
        .filter_map(|(run, job)| {
            let path = job.setup.target.path.as_ref()?;
            seen.insert((run.label.as_str(), job.setup.target.description.as_str()))
                .then_some((
                    run.label.as_str(),
                    job.setup.target.description.as_str(),
                    path,
                ))
        })
        .collect();
    if probed.is_empty() {
        return;
    }
    out.push_str("<h2>Targets as probed</h2>\n<table class=\"probed\"><thead><tr><th>run</th><th>target</th><th>what it implies</th><th>facts</th></tr></thead><tbody>\n");
    for (label, description, path) in probed {
        let diagnosis: Vec<String> = path["diagnosis"]
            .as_array()
            .map(|lines| {
                lines
                    .iter()
                    .filter_map(|line| line.as_str().map(escape))
                    .collect()
            })
            .unwrap_or_default();
        let facts = serde_json::to_string_pretty(path).unwrap_or_default();
        let _ = writeln!(
            out,
            "<tr><th>{}</th><td>{}</td><td style=\"text-align:left\">{}</td><td style=\"text-align:left\"><details><summary>sysfs, mount, device</summary><pre>{}</pre></details></td></tr>",
            escape(label),
            escape(description),
            diagnosis.join("<br>"),
            escape(&facts)
        );
    }
    out.push_str("</tbody></table>\n");
}

/// The faults each simulated job met and what its stack did to recover (`sim.faults`), one row
/// a job; nothing when no job met one.
fn recovered_faults(out: &mut String, runs: &[LabeledRun<'_>]) {
    let rows: Vec<(&str, &JobReport, String)> = runs
        .iter()
        .flat_map(|run| run.report.jobs.iter().map(move |job| (run, job)))
        .filter_map(|(run, job)| Some((run.label.as_str(), job, crate::fault_summary(job)?)))
        .collect();
    if rows.is_empty() {
        return;
    }
    out.push_str("<h2>Faults and recovery</h2>\n<table class=\"faults\"><thead><tr><th>run</th><th>job</th><th>target</th><th>faults and recovery</th></tr></thead><tbody>\n");
    for (label, job, faults) in rows {
        let _ = writeln!(
            out,
            "<tr><th>{}</th><td>{}</td><td>{}</td><td style=\"text-align:left\">{}</td></tr>",
            escape(label),
            escape(&job.setup.name),
            escape(&job.setup.target.description),
            escape(&faults)
        );
    }
    out.push_str("</tbody></table>\n");
}

/// `unix_ms` as this machine's local date and time with its UTC offset, ISO 8601 style
/// (`2026-11-24 23:40:12 +00:00`): the time zone of whoever writes the report, stated, so it
/// reads as a time of day anywhere.
fn format_local_time(unix_ms: u64) -> String {
    use chrono::TimeZone;
    let local = i64::try_from(unix_ms)
        .ok()
        .and_then(|ms| chrono::Local.timestamp_millis_opt(ms).single());
    match local {
        Some(time) => format_with_offset(&time),
        // Beyond chrono's range (about 262,000 years): the number, with its unit.
        None => format!("{unix_ms} ms since 1970 (UTC)"),
    }
}

fn format_with_offset<Tz: chrono::TimeZone>(time: &chrono::DateTime<Tz>) -> String
where
    Tz::Offset: std::fmt::Display,
{
    time.format("%Y-%m-%d %H:%M:%S %:z").to_string()
}

fn format_mb_s(value: f64) -> String {
    if value >= 100.0 || value == 0.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

fn format_count(value: f64) -> String {
    if value >= 1e6 {
        format!("{:.2}M", value / 1e6)
    } else if value >= 1e4 {
        format!("{:.1}k", value / 1e3)
    } else {
        format!("{value:.0}")
    }
}

fn format_bytes(value: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = value;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.0} {}", UNITS[unit])
}

fn format_latency(value_ns: f64) -> String {
    format_latency_ns(value_ns.max(0.0))
}

fn format_percent(value: f64) -> String {
    format!("{value:.1}")
}

fn format_seconds(value: f64) -> String {
    format!("{value:.0}")
}

/// Latency percentile on the "nines" axis: 90 → 1, 99 → 2, 99.9 → 3.
fn nines(percentile: f64) -> f64 {
    -(1.0 - percentile / PERCENT).max(1e-9).log10()
}

fn format_nines(x: f64) -> String {
    let percentile = PERCENT * (1.0 - 10f64.powf(-x));
    let text = format!("{percentile:.4}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Label of a job within the report: its name, prefixed by the run when several runs are shown.
fn series_prefix(runs: &[LabeledRun<'_>], run: &LabeledRun<'_>) -> String {
    if runs.len() > 1 {
        format!("{} ", run.label)
    } else {
        String::new()
    }
}

/// Fixed block size of a job in bytes (`None` for ranges and splits), from the job JSON.
fn fixed_block_bytes(job: &JobReport) -> Option<u64> {
    let read_percent = read_percent(job)?;
    let key = if read_percent == 0 {
        "block_size_write"
    } else {
        "block_size_read"
    };
    job.setup.job.get(key)?.get("fixed")?.as_u64()
}

fn read_percent(job: &JobReport) -> Option<u64> {
    job.setup.job.get("read_percent")?.as_u64()
}

fn figures(runs: &[LabeledRun<'_>]) -> Vec<Figure> {
    let mut figures = vec![
        grouped_bars(runs, "Throughput", "MB/s", |d| {
            d.bw_bytes_per_s / BYTES_PER_MB
        }),
        grouped_bars(runs, "IOPS", "IOPS", |d| d.iops),
    ];
    figures.extend(throughput_vs_block_size(runs));
    figures.extend(throughput_across_the_target(runs));
    figures.extend(iops_vs_queue_depth(runs));
    figures.extend(latency_curves(runs));
    figures.extend(write_share_grids(runs));
    figures.extend(state_over_time(runs));
    figures.extend(cliffs::write_cliff_charts(runs));
    figures.extend(sim_utilisation(runs));
    figures
}

/// Grouped bars: one group per configuration (job name), one bar per run and direction.
fn grouped_bars(
    runs: &[LabeledRun<'_>],
    what: &str,
    unit: &str,
    metric: fn(&storlab_stats::DirectionSummary) -> f64,
) -> Figure {
    let mut categories: Vec<String> = Vec::new();
    for run in runs {
        for job in &run.report.jobs {
            if !categories.contains(&job.setup.name) {
                categories.push(job.setup.name.clone());
            }
        }
    }
    let mut series = Vec::new();
    for run in runs {
        for direction in ["read", "write", "trim"] {
            let values: Vec<Option<f64>> = categories
                .iter()
                .map(|name| {
                    let job = run.report.jobs.iter().find(|j| &j.setup.name == name)?;
                    job.directions()
                        .find(|(d, _)| *d == direction)
                        .map(|(_, summary)| metric(summary))
                })
                .collect();
            if values.iter().any(Option::is_some) {
                series.push((format!("{}{direction}", series_prefix(runs, run)), values));
            }
        }
    }
    BarChart {
        title: format!("{what} per configuration and direction"),
        category_label: "configuration (job)".into(),
        y: Axis {
            label: unit.into(),
            scale: Scale::Linear,
            format: if unit == "MB/s" {
                format_mb_s
            } else {
                format_count
            },
        },
        categories,
        series,
    }
    .render()
}

/// Lines of one metric against one job parameter, keyed by everything else that identifies a
/// configuration; only lines with at least two distinct x values are kept.
#[allow(clippy::type_complexity)]
fn sweep_lines(
    runs: &[LabeledRun<'_>],
    x_of: impl Fn(&JobReport) -> Option<f64>,
    key_of: impl Fn(&JobReport) -> String,
    metric: fn(&storlab_stats::DirectionSummary) -> f64,
) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for run in runs {
        for job in &run.report.jobs {
            let Some(x) = x_of(job) else { continue };
            for (direction, summary) in job.directions() {
                let label = format!("{}{} {direction}", series_prefix(runs, run), key_of(job));
                let point = (x, metric(summary));
                match lines.iter_mut().find(|(l, _)| *l == label) {
                    Some((_, points)) => points.push(point),
                    None => lines.push((label, vec![point])),
                }
            }
        }
    }
    for (_, points) in &mut lines {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    lines.retain(|(_, points)| points.windows(2).any(|pair| pair[0].0 != pair[1].0));
    lines
}

fn sweep_table(
    x_label: &str,
    y_label: &str,
    lines: &[(String, Vec<(f64, f64)>)],
    x_format: fn(f64) -> String,
    y_format: fn(f64) -> String,
) -> Table {
    Table {
        header: vec!["series".into(), x_label.into(), y_label.into()],
        rows: lines
            .iter()
            .flat_map(|(label, points)| {
                points
                    .iter()
                    .map(move |&(x, y)| vec![label.clone(), x_format(x), y_format(y)])
            })
            .collect(),
    }
}

fn throughput_vs_block_size(runs: &[LabeledRun<'_>]) -> Option<Figure> {
    let lines = sweep_lines(
        runs,
        |job| fixed_block_bytes(job).map(|b| b as f64),
        |job| format!("{} QD{}", job.setup.rw, job.setup.iodepth),
        |d| d.bw_bytes_per_s / BYTES_PER_MB,
    );
    if lines.is_empty() {
        return None;
    }
    let x = Axis {
        label: "block size (bytes, log scale)".into(),
        scale: Scale::Log { base: 2.0 },
        format: format_bytes,
    };
    Some(mb_s_lines(
        "Throughput vs block size",
        "block size",
        x,
        lines,
    ))
}

/// A line chart of MB/s against `x`, with the table of its points under it.
fn mb_s_lines(title: &str, x_name: &str, x: Axis, lines: Vec<(String, Vec<(f64, f64)>)>) -> Figure {
    let table = sweep_table(x_name, "MB/s", &lines, x.format, format_mb_s);
    LineChart {
        title: title.into(),
        x,
        y: Axis {
            label: "MB/s".into(),
            scale: Scale::Linear,
            format: format_mb_s,
        },
        series: lines,
        markers: Vec::new(),
        table,
    }
    .render()
}

/// Sequential jobs only: where a job's region starts, in percent of the target when it was
/// given as a share of it (h2benchw's zones on a whole drive).
fn sequential_position_percent(job: &JobReport) -> Option<f64> {
    let random = job.setup.job.get("random_percent")?.as_u64()?;
    let ppm = job
        .setup
        .job
        .get("target_shares")?
        .get("offset_ppm")?
        .as_u64()?;
    (random == 0).then_some(ppm as f64 / 10_000.0)
}

/// Sequential jobs only: where a job's region starts, in bytes (zones of a `--size` area).
fn sequential_position_bytes(job: &JobReport) -> Option<f64> {
    let random = job.setup.job.get("random_percent")?.as_u64()?;
    let shares = job.setup.job.get("target_shares");
    let offset = job.setup.job.get("offset_bytes")?.as_u64()?;
    (random == 0 && shares.is_none()).then_some(offset as f64)
}

fn format_position_percent(value: f64) -> String {
    format!("{value:.0}%")
}

/// The zone curve reviewers drew from h2benchw and HD Tune: sequential MB/s against where on
/// the target it was measured (an HDD's outer tracks first), from jobs that step their offset.
fn throughput_across_the_target(runs: &[LabeledRun<'_>]) -> Vec<Figure> {
    let mut figures = Vec::new();
    // Jobs of one curve share block size (each direction is a line); zones in bytes also their
    // length, so another job that starts at 0 (h2benchw's one-block interface read) is not taken
    // for one.
    let axes = [
        ZoneAxis {
            position: sequential_position_percent,
            key: |job| job.setup.block_size.clone(),
            label: "position (% of the target)",
            format: format_position_percent,
        },
        ZoneAxis {
            position: sequential_position_bytes,
            key: |job| {
                format!(
                    "{} over {}",
                    job.setup.block_size,
                    format_bytes(job.setup.target.size_bytes as f64)
                )
            },
            label: "position (bytes from the start)",
            format: format_bytes,
        },
    ];
    for ZoneAxis {
        position,
        key,
        label: x_label,
        format: x_format,
    } in axes
    {
        let lines = sweep_lines(runs, position, key, |d| d.bw_bytes_per_s / BYTES_PER_MB);
        // A curve, not two points: zones are many.
        let lines: Vec<_> = lines
            .into_iter()
            .filter(|(_, points)| points.len() >= MIN_ZONE_POINTS)
            .collect();
        if lines.is_empty() {
            continue;
        }
        let x = Axis {
            label: x_label.into(),
            scale: Scale::Linear,
            format: x_format,
        };
        figures.push(mb_s_lines(
            "Sequential throughput across the target (zones)",
            x_label,
            x,
            lines,
        ));
    }
    figures
}

/// How one zone chart places and groups its jobs.
struct ZoneAxis {
    position: fn(&JobReport) -> Option<f64>,
    key: fn(&JobReport) -> String,
    label: &'static str,
    format: fn(f64) -> String,
}

/// Fewest positions that make a zone curve.
const MIN_ZONE_POINTS: usize = 3;

fn iops_vs_queue_depth(runs: &[LabeledRun<'_>]) -> Option<Figure> {
    let lines = sweep_lines(
        runs,
        |job| Some(f64::from(job.setup.iodepth)),
        |job| format!("{} {}", job.setup.rw, job.setup.block_size),
        |d| d.iops,
    );
    if lines.is_empty() {
        return None;
    }
    let table = sweep_table("queue depth", "IOPS", &lines, format_seconds, format_count);
    Some(
        LineChart {
            title: "IOPS vs queue depth".into(),
            x: Axis {
                label: "queue depth (outstanding I/Os per worker, log scale)".into(),
                scale: Scale::Log { base: 2.0 },
                format: format_seconds,
            },
            y: Axis {
                label: "IOPS".into(),
                scale: Scale::Linear,
                format: format_count,
            },
            series: lines,
            markers: Vec::new(),
            table,
        }
        .render(),
    )
}

/// Completion-latency percentile curves; split per configuration when there are many lines.
fn latency_curves(runs: &[LabeledRun<'_>]) -> Vec<Figure> {
    let mut curves: Vec<(String, Line)> = Vec::new();
    for run in runs {
        for job in &run.report.jobs {
            for (direction, summary) in job.directions() {
                let points: Vec<(f64, f64)> = summary
                    .clat
                    .percentiles
                    .iter()
                    .filter(|(p, _)| *p >= LATENCY_CURVE_MIN_PERCENTILE)
                    .map(|&(p, ns)| (nines(p), ns as f64))
                    .collect();
                if points.len() >= 2 {
                    let label =
                        format!("{}{} {direction}", series_prefix(runs, run), job.setup.name);
                    curves.push((job.setup.name.clone(), (label, points)));
                }
            }
        }
    }
    let groups: Vec<(String, Vec<Line>)> = if curves.len() <= MAX_LINES_PER_CHART {
        vec![(
            String::new(),
            curves.into_iter().map(|(_, line)| line).collect(),
        )]
    } else {
        let mut groups: Vec<(String, Vec<Line>)> = Vec::new();
        for (config, line) in curves {
            match groups.iter_mut().find(|(c, _)| *c == config) {
                Some((_, lines)) => lines.push(line),
                None => groups.push((config, vec![line])),
            }
        }
        groups
    };
    groups
        .into_iter()
        .filter(|(_, lines)| !lines.is_empty())
        .map(|(config, lines)| {
            let title = if config.is_empty() {
                "Completion latency percentiles".to_owned()
            } else {
                format!("Completion latency percentiles: {config}")
            };
            let percentiles: Vec<f64> = lines
                .first()
                .map(|(_, p)| p.iter().map(|(x, _)| *x).collect())
                .unwrap_or_default();
            let mut header = vec!["series".to_owned()];
            header.extend(percentiles.iter().map(|x| format!("p{}", format_nines(*x))));
            let rows = lines
                .iter()
                .map(|(label, points)| {
                    let mut row = vec![label.clone()];
                    row.extend(points.iter().map(|(_, ns)| format_latency(*ns)));
                    row
                })
                .collect();
            LineChart {
                title,
                x: Axis {
                    label: "percentile (nines scale: 90, 99, 99.9, ...)".into(),
                    scale: Scale::Linear,
                    format: format_nines,
                },
                y: Axis {
                    label: "completion latency (log scale)".into(),
                    scale: Scale::Log { base: 10.0 },
                    format: format_latency,
                },
                series: lines,
                markers: Vec::new(),
                table: Table { header, rows },
            }
            .render()
        })
        .collect()
}

/// The Database-style grid: rows are write shares, columns queue depths, cells total IOPS;
/// one grid per run and block size that sweeps both.
fn write_share_grids(runs: &[LabeledRun<'_>]) -> Vec<Figure> {
    let mut figures = Vec::new();
    for run in runs {
        let block_sizes: BTreeSet<&str> = run
            .report
            .jobs
            .iter()
            .map(|j| j.setup.block_size.as_str())
            .collect();
        for block_size in block_sizes {
            let jobs: Vec<(u64, u32, f64)> = run
                .report
                .jobs
                .iter()
                .filter(|j| j.setup.block_size == block_size)
                .filter_map(|j| {
                    let write_share = PERCENT as u64 - read_percent(j)?.min(PERCENT as u64);
                    let iops = j.directions().map(|(_, d)| d.iops).sum();
                    Some((write_share, j.setup.iodepth, iops))
                })
                .collect();
            let shares: BTreeSet<u64> = jobs.iter().map(|j| j.0).collect();
            let depths: BTreeSet<u32> = jobs.iter().map(|j| j.1).collect();
            if shares.len() < 2 || depths.len() < 2 {
                continue;
            }
            let shares: Vec<u64> = shares.into_iter().collect();
            let depths: Vec<u32> = depths.into_iter().collect();
            let values = shares
                .iter()
                .map(|share| {
                    depths
                        .iter()
                        .map(|depth| {
                            jobs.iter()
                                .find(|j| j.0 == *share && j.1 == *depth)
                                .map(|j| j.2)
                        })
                        .collect()
                })
                .collect();
            figures.push(
                HeatMap {
                    title: format!(
                        "{}IOPS by write share and queue depth, {block_size}",
                        series_prefix(runs, run)
                    ),
                    row_label: "write share (%)".into(),
                    column_label: "queue depth".into(),
                    value_label: "IOPS (read + write)".into(),
                    rows: shares.iter().map(|s| format!("{s}%")).collect(),
                    columns: depths.iter().map(|d| format!("QD{d}")).collect(),
                    values,
                    format: format_count,
                }
                .render(),
            );
        }
    }
    figures
}

/// State over time: the per-interval IOPS of every point of a run laid end to end, for runs
/// that prepared the device (`--state`) or repeat a configuration (rounds, e.g. SNIA PTS).
fn state_over_time(runs: &[LabeledRun<'_>]) -> Vec<Figure> {
    let mut figures = Vec::new();
    for run in runs {
        let config = |j: &JobReport| {
            format!(
                "{} {} QD{}",
                j.setup.rw, j.setup.block_size, j.setup.iodepth
            )
        };
        let configs: Vec<String> = run.report.jobs.iter().map(config).collect();
        let repeats = configs
            .iter()
            .enumerate()
            .any(|(i, c)| configs[..i].contains(c));
        let prepared = run
            .report
            .jobs
            .iter()
            .any(|j| j.setup.device_state != "as-found" && j.series.len() > 1);
        if !(repeats || prepared) {
            continue;
        }
        let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        let mut markers = Vec::new();
        let mut rows = Vec::new();
        let mut offset_s = 0.0;
        for (index, job) in run.report.jobs.iter().enumerate() {
            let label = config(job);
            let points: Vec<(f64, f64)> = job
                .series
                .iter()
                .map(|p| (offset_s + p.t_s, p.read_iops + p.write_iops + p.trim_iops))
                .collect();
            let total_iops: f64 = job.directions().map(|(_, d)| d.iops).sum();
            rows.push(vec![
                format!("{}", index + 1),
                job.setup.name.clone(),
                label.clone(),
                job.setup.device_state.clone(),
                format_seconds(offset_s),
                format_count(total_iops),
            ]);
            if index > 0 {
                markers.push((offset_s, format!("{}", index + 1)));
            }
            match lines.iter_mut().find(|(l, _)| *l == label) {
                Some((_, existing)) => existing.extend(points),
                None => lines.push((label, points)),
            }
            offset_s += job.elapsed_ns as f64 / NS_PER_S;
        }
        lines.retain(|(_, points)| !points.is_empty());
        if lines.is_empty() {
            continue;
        }
        figures.push(
            LineChart {
                title: format!(
                    "{}Device state over time (IOPS per interval; dashed lines start each point)",
                    series_prefix(runs, run)
                ),
                x: Axis {
                    label: "measured time since the first point (s)".into(),
                    scale: Scale::Linear,
                    format: format_seconds,
                },
                y: Axis {
                    label: "IOPS".into(),
                    scale: Scale::Linear,
                    format: format_count,
                },
                series: lines,
                markers,
                table: Table {
                    header: vec![
                        "point".into(),
                        "job".into(),
                        "configuration".into(),
                        "device state".into(),
                        "starts at (s)".into(),
                        "IOPS".into(),
                    ],
                    rows,
                },
            }
            .render(),
        );
    }
    figures
}

/// Per-layer utilisation of simulated stacks, one chart per run, bottleneck outlined.
fn sim_utilisation(runs: &[LabeledRun<'_>]) -> Vec<Figure> {
    let mut figures = Vec::new();
    for run in runs {
        let simulated: Vec<(&JobReport, &serde_json::Value)> = run
            .report
            .jobs
            .iter()
            .filter_map(|j| j.notes.sim.as_ref().map(|sim| (j, sim)))
            .collect();
        let mut layers: Vec<String> = Vec::new();
        for (_, sim) in &simulated {
            for layer in sim_layers(sim) {
                if !layers.contains(&layer.0) {
                    layers.push(layer.0);
                }
            }
        }
        if layers.is_empty() {
            continue;
        }
        let mut series = Vec::new();
        let mut highlighted = Vec::new();
        for (index, (job, sim)) in simulated.iter().enumerate() {
            let values: Vec<(String, f64)> = sim_layers(sim);
            series.push((
                job.setup.name.clone(),
                layers
                    .iter()
                    .map(|name| {
                        values
                            .iter()
                            .find(|(n, _)| n == name)
                            .map(|(_, u)| u * PERCENT)
                    })
                    .collect(),
            ));
            let bottleneck = sim.get("bottleneck").and_then(|b| b.as_str());
            if let Some(row) = bottleneck.and_then(|b| layers.iter().position(|l| l == b)) {
                highlighted.push((row, index));
            }
        }
        let stacks: BTreeSet<&str> = simulated
            .iter()
            .filter_map(|(_, sim)| sim.get("stack").and_then(|s| s.as_str()))
            .collect();
        figures.push(
            HorizontalBarChart {
                title: format!(
                    "{}Simulated stack {}: utilisation per layer",
                    series_prefix(runs, run),
                    stacks.into_iter().collect::<Vec<_>>().join(", ")
                ),
                category_label: "layer".into(),
                x: Axis {
                    label: "busy share of the run (%)".into(),
                    scale: Scale::Linear,
                    format: format_percent,
                },
                categories: layers,
                series,
                highlighted,
                highlight_meaning: "bottleneck".into(),
            }
            .render(),
        );
    }
    figures
}

/// (layer name, utilisation 0..1) of a simulator report.
fn sim_layers(sim: &serde_json::Value) -> Vec<(String, f64)> {
    sim.get("layers")
        .and_then(|l| l.as_array())
        .map(|layers| {
            layers
                .iter()
                .filter_map(|layer| {
                    Some((
                        layer.get("name")?.as_str()?.to_owned(),
                        layer.get("utilisation")?.as_f64()?,
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nines_axis_maps_tail_percentiles_to_whole_numbers() {
        assert!((nines(90.0) - 1.0).abs() < 1e-9);
        assert!((nines(99.9) - 3.0).abs() < 1e-9);
        assert_eq!(format_nines(2.0), "99");
        assert_eq!(format_nines(4.0), "99.99");
    }

    #[test]
    fn start_times_are_date_time_with_offset() {
        use chrono::TimeZone;
        let unix_ms = 1_795_564_125_301; // 2026-11-24 23:48:45.301 UTC
        let utc = chrono::FixedOffset::east_opt(0).unwrap();
        let india = chrono::FixedOffset::east_opt(5 * 3600 + 1800).unwrap();
        let at = |zone: chrono::FixedOffset| {
            format_with_offset(&zone.timestamp_millis_opt(unix_ms).unwrap())
        };
        assert_eq!(at(utc), "2026-11-24 23:48:45 +00:00");
        assert_eq!(at(india), "2026-11-25 05:18:45 +05:30");
        // The machine's own zone: whatever it is, the same shape.
        let local = format_local_time(unix_ms as u64);
        assert_eq!(local.len(), "2026-11-24 23:48:45 +00:00".len(), "{local}");
        assert!(local.starts_with("2026-11-2"), "{local}");
    }

    #[test]
    fn units_read_naturally() {
        assert_eq!(format_bytes(4096.0), "4 KiB");
        assert_eq!(format_bytes(1_048_576.0), "1 MiB");
        assert_eq!(format_count(38_451.0), "38.5k");
        assert_eq!(format_mb_s(257.3), "257");
        assert_eq!(format_mb_s(19.93), "19.9");
    }
}
