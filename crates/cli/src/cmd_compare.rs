//! `storlab compare RUN RUN…`: saved runs side by side — one row per configuration and
//! direction, IOPS, MB/s and p99 latency per run, and each run's ratio to the first (the
//! baseline), like the comparison charts of drive reviews. Real and simulated runs mix freely.

use crate::args::CompareArgs;
use crate::db_support::{db_failure, parse_runs};
use crate::exit::{bad_input, Failure};
use storlab_report::{
    escape_control, format_latency_ns, summarise_repeats, welch_differs, JobReport, RepeatSummary,
    RunReport, Spread,
};

const BYTES_PER_MB: f64 = 1e6;
const TAIL_PERCENTILE: f64 = 99.0;

pub fn run(args: CompareArgs) -> Result<(), Failure> {
    if args.runs.len() < 2 {
        return Err(bad_input("compare: give at least two runs"));
    }
    let references = parse_runs(&args.runs)?;
    let database = args.db.open_existing()?;
    let mut runs = Vec::new();
    for reference in references {
        let stored = database.load_run(reference).map_err(db_failure)?;
        runs.push((stored.summary.id.to_string(), stored.report));
    }
    crate::output::print(&render(&runs))
}

/// The comparison table as text: each run's targets, one row per (configuration, direction)
/// with every run's figures and its bandwidth ratio to the first, then every warning.
pub fn render(runs: &[(String, RunReport)]) -> String {
    let mut out = String::new();
    for (label, report) in runs {
        let mut targets: Vec<&str> = report
            .jobs
            .iter()
            .map(|j| j.setup.target.description.as_str())
            .collect();
        targets.dedup();
        let targets = storlab_report::escape_control(&targets.join(", ")).into_owned();
        out.push_str(&format!("{label}: {targets}\n"));
    }
    let table = comparison_cells(runs);
    push_aligned(&mut out, &table);
    if table
        .iter()
        .flatten()
        .any(|cell| cell.ends_with(NOISE_MARK))
    {
        out.push_str(
            "(noise): the MB/s differ by less than the runs' noise (Welch's t test at 5% over \
             their repeats, docs/decisions/0032-repeats.md)\n",
        );
    }
    for (label, report) in runs {
        let repeats = storlab_report::render_repeats(&report.jobs);
        if !repeats.is_empty() {
            out.push_str(&format!("\n{label}:"));
            out.push_str(&repeats);
        }
    }
    push_warnings(&mut out, runs);
    out
}

/// The table's cells: the header, then one row per (configuration, direction) of any run,
/// in first-seen order.
fn comparison_cells(runs: &[(String, RunReport)]) -> Vec<Vec<String>> {
    // Rows: every (configuration, direction) of any run, in first-seen order.
    let mut rows: Vec<(String, &'static str)> = Vec::new();
    for (_, report) in runs {
        for job in &report.jobs {
            for (direction, _) in job.directions() {
                let key = (job.setup.name.clone(), direction);
                if !rows.contains(&key) {
                    rows.push(key);
                }
            }
        }
    }
    let mut header = vec!["configuration".to_string(), "dir".to_string()];
    for (index, (label, _)) in runs.iter().enumerate() {
        header.push(format!("{label} IOPS"));
        header.push(format!("{label} MB/s"));
        header.push(format!("{label} p99"));
        if index > 0 {
            header.push(format!("{label}/{} MB/s", runs[0].0));
        }
    }
    let mut table = vec![header];
    let repeats: Vec<Vec<RepeatSummary>> = runs
        .iter()
        .map(|(_, report)| summarise_repeats(&report.jobs))
        .collect();
    for (name, direction) in &rows {
        // A job name from the user's input: escaped, it cannot break the row.
        let printed_name = storlab_report::escape_control(name).into_owned();
        let mut cells = vec![printed_name, (*direction).to_string()];
        let figures: Vec<Option<Figures>> = runs
            .iter()
            .zip(&repeats)
            .map(|((_, report), repeats)| Figures::of(report, repeats, name, direction))
            .collect();
        for (index, figure) in figures.iter().enumerate() {
            match figure {
                Some(figure) => {
                    cells.push(format!("{:.0}", figure.iops));
                    cells.push(format!("{:.1}", figure.bw_bytes_per_s / BYTES_PER_MB));
                    cells.push(figure.p99_ns.map_or_else(|| "-".into(), format_latency_ns));
                }
                None => cells.extend(["-".to_string(), "-".to_string(), "-".to_string()]),
            }
            if index > 0 {
                cells.push(ratio_cell(figures[0].as_ref(), figure.as_ref()));
            }
        }
        table.push(cells);
    }
    table
}

/// Marks a ratio whose difference is inside the two runs' noise.
const NOISE_MARK: &str = "(noise)";

/// A run's figures for one job and direction: the job's, or with `--repeat` the means over
/// its repeats, with the spread of its MB/s.
struct Figures {
    iops: f64,
    bw_bytes_per_s: f64,
    p99_ns: Option<f64>,
    bw_spread: Option<Spread>,
}

impl Figures {
    fn of(
        report: &RunReport,
        repeats: &[RepeatSummary],
        name: &str,
        direction: &str,
    ) -> Option<Figures> {
        if let Some(summary) = repeats
            .iter()
            .find(|s| s.job == name && s.direction == direction)
        {
            return Some(Figures {
                iops: summary.iops.mean,
                bw_bytes_per_s: summary.bw_bytes_per_s.mean,
                p99_ns: Some(summary.clat_p99_ns.mean),
                bw_spread: Some(summary.bw_bytes_per_s.clone()),
            });
        }
        let summary = find(report, name, direction)?;
        Some(Figures {
            iops: summary.iops,
            bw_bytes_per_s: summary.bw_bytes_per_s,
            p99_ns: summary
                .clat
                .percentile_ns(TAIL_PERCENTILE)
                .map(|ns| ns as f64),
            bw_spread: None,
        })
    }
}

/// A run's MB/s over the baseline's, marked [`NOISE_MARK`] when both ran with repeats and
/// Welch's t test finds no difference beyond their noise.
fn ratio_cell(baseline: Option<&Figures>, this: Option<&Figures>) -> String {
    let (Some(base), Some(this)) = (baseline, this) else {
        return "-".into();
    };
    if base.bw_bytes_per_s <= 0.0 {
        return "-".into();
    }
    let ratio = format!("x{:.2}", this.bw_bytes_per_s / base.bw_bytes_per_s);
    match (&base.bw_spread, &this.bw_spread) {
        (Some(a), Some(b)) if welch_differs(a, b) == Some(false) => {
            format!("{ratio} {NOISE_MARK}")
        }
        _ => ratio,
    }
}

/// `table` as aligned text: the first two columns to the left, the figures to the right.
fn push_aligned(out: &mut String, table: &[Vec<String>]) {
    let widths: Vec<usize> = (0..table[0].len())
        .map(|column| {
            table
                .iter()
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in table {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(column, (cell, width))| {
                if column < 2 {
                    format!("{cell:<width$}")
                } else {
                    format!("{cell:>width$}")
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
}

/// A compared figure is only as good as its warnings: each run's, and its jobs', under the
/// table as `storlab run` prints them, led by the run's label.
fn push_warnings(out: &mut String, runs: &[(String, RunReport)]) {
    let mut warnings = Vec::new();
    for (label, report) in runs {
        for warning in &report.warnings {
            warnings.push(format!("  [{label}] {}", escape_control(warning)));
        }
        for job in &report.jobs {
            for warning in &job.notes.warnings {
                warnings.push(format!(
                    "  [{label} {}] {}",
                    escape_control(&job.setup.name),
                    escape_control(warning)
                ));
            }
        }
    }
    if !warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for line in warnings {
            out.push_str(&line);
            out.push('\n');
        }
    }
}

fn find<'a>(
    report: &'a RunReport,
    name: &str,
    direction: &str,
) -> Option<&'a storlab_stats::DirectionSummary> {
    report
        .jobs
        .iter()
        .find(|job: &&JobReport| job.setup.name == name)
        .and_then(|job| job.directions().find(|(d, _)| *d == direction))
        .map(|(_, summary)| summary)
}
