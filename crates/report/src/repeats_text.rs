//! The text table's part for a run with repeats (`run --repeat N`): each job's headline figures
//! over its repeats, one line per figure with its mean, standard deviation and 95% interval.

use crate::escape::escape_control;
use crate::repeats::{signed, Formatter, RepeatSummary};
use crate::units::format_latency_ns;
use std::fmt::Write as _;

const BYTES_PER_MB: f64 = 1e6;

/// Bytes per second as MB/s, with more decimals for slow figures so their spread shows.
fn format_mb_s(bytes_per_s: f64) -> String {
    let mb_s = bytes_per_s / BYTES_PER_MB;
    match mb_s.abs() {
        x if x < 1.0 => format!("{mb_s:.3}"),
        x if x < 10.0 => format!("{mb_s:.2}"),
        _ => format!("{mb_s:.1}"),
    }
}

/// The `repeats:` section of `jobs`, as under the table (empty for jobs without repeats): for
/// front ends that print several runs, each with its own.
pub fn render_repeats(jobs: &[crate::JobReport]) -> String {
    let mut out = String::new();
    push_repeats(&mut out, &crate::repeats::summarise_repeats(jobs));
    out
}

/// The `repeats:` section under the table (nothing for a run without repeats).
pub(crate) fn push_repeats(out: &mut String, repeats: &[RepeatSummary]) {
    if repeats.is_empty() {
        return;
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "repeats: mean, standard deviation and 95% interval of the mean (Student's t) over each job's repeats"
    );
    let mut rows = vec![[
        "job".to_owned(),
        "dir".to_owned(),
        "n".to_owned(),
        "figure".to_owned(),
        "mean".to_owned(),
        "sd".to_owned(),
        "95% interval".to_owned(),
    ]];
    for summary in repeats {
        for (position, (name, spread)) in summary.figures().into_iter().enumerate() {
            let format: Formatter = match position {
                0 => format_mb_s,
                1 => |v| format!("{v:.0}"),
                _ => format_latency_ns,
            };
            let (job, direction, n) = match position {
                0 => (
                    escape_control(&summary.job).into_owned(),
                    summary.direction.clone(),
                    format!("{}/{}", spread.n, summary.repeats),
                ),
                _ => Default::default(),
            };
            let interval = match (spread.ci95_low, spread.ci95_high) {
                (Some(low), Some(high)) => {
                    format!("{} to {}", signed(low, format), signed(high, format))
                }
                _ => "-".to_owned(),
            };
            rows.push([
                job,
                direction,
                n,
                name.to_owned(),
                format(spread.mean),
                spread.stddev.map_or_else(|| "-".to_owned(), format),
                interval,
            ]);
        }
    }
    let mut widths = [0usize; 7];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(column, (cell, width))| match column {
                0 | 1 | 3 => format!("{cell:<width$}"),
                _ => format!("{cell:>width$}"),
            })
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
    }
}
