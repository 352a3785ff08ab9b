//! The result table of a sweep, laid out as the preset's source printed it: rows and columns
//! are point coordinates named by the preset (block size rows × queue-depth columns, write
//! share rows, ...), each cell the preset's figures, plus an optional per-row rating.

use std::fmt::Write as _;
use storlab_job::preset::{Metric, Rating, TableLayout, RATING_QUEUE_DEPTHS};
use storlab_report::JobReport;

const BYTES_PER_MB: f64 = 1e6;
const NS_PER_MS: f64 = 1e6;
const NS_PER_S: f64 = 1e9;
const MISSING: &str = "-";
const GAP: &str = "  ";

/// One measured point: its coordinates and its report.
pub struct TablePoint<'a> {
    pub coords: &'a [(String, String)],
    pub report: &'a JobReport,
}

fn coord<'a>(coords: &'a [(String, String)], name: &str) -> &'a str {
    coords
        .iter()
        .find(|(n, _)| n == name)
        .map_or(MISSING, |(_, v)| v.as_str())
}

fn key(coords: &[(String, String)], names: &[String]) -> Vec<String> {
    // Coordinates may be job names from the user: escaped, they cannot break a row.
    names
        .iter()
        .map(|n| storlab_report::escape_control(coord(coords, n)).into_owned())
        .collect()
}

/// A figure of one point's report.
pub fn metric_value(report: &JobReport, metric: Metric) -> f64 {
    match metric {
        Metric::Iops => report.directions().map(|(_, d)| d.iops).sum(),
        Metric::Mbps => {
            report
                .directions()
                .map(|(_, d)| d.bw_bytes_per_s)
                .sum::<f64>()
                / BYTES_PER_MB
        }
        Metric::LatMs => {
            let ios = report.total_ios();
            if ios == 0 {
                return 0.0;
            }
            report
                .directions()
                .map(|(_, d)| d.lat.mean_ns * d.ios as f64)
                .sum::<f64>()
                / ios as f64
                / NS_PER_MS
        }
        Metric::Seconds => report.elapsed_ns as f64 / NS_PER_S,
    }
}

fn format_metric(value: f64, metric: Metric) -> String {
    match metric {
        Metric::Iops if value < 100.0 => format!("{value:.1}"),
        Metric::Iops => format!("{value:.0}"),
        Metric::Mbps if value < 10.0 => format!("{value:.2}"),
        Metric::Mbps => format!("{value:.1}"),
        Metric::LatMs => format!("{value:.3}"),
        Metric::Seconds => format!("{value:.2}"),
    }
}

/// The rating of one row: Σ IOPS(q)/q over the row's points at the rating queue depths.
pub fn row_rating(points: &[&TablePoint<'_>], rating: Rating) -> f64 {
    match rating {
        Rating::IopsPerQueueDepth => points
            .iter()
            .filter_map(|p| {
                let q: u32 = coord(p.coords, "iodepth").parse().ok()?;
                RATING_QUEUE_DEPTHS
                    .contains(&q)
                    .then(|| metric_value(p.report, Metric::Iops) / f64::from(q))
            })
            .sum(),
    }
}

/// Render `points` in `layout`, titled `title`.
pub fn render(title: &str, layout: &TableLayout, points: &[TablePoint<'_>]) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut columns: Vec<Vec<String>> = Vec::new();
    for p in points {
        let r = key(p.coords, &layout.rows);
        if !rows.contains(&r) {
            rows.push(r);
        }
        let c = key(p.coords, &layout.columns);
        if !columns.contains(&c) {
            columns.push(c);
        }
    }
    let mut header: Vec<String> = vec![layout.rows.join(" / ")];
    for c in &columns {
        for m in &layout.metrics {
            let label = if layout.columns.is_empty() {
                m.unit().to_string()
            } else {
                let named: Vec<String> = layout
                    .columns
                    .iter()
                    .zip(c)
                    .map(|(n, v)| match n.as_str() {
                        "direction" | "series" => v.clone(),
                        _ => format!("{n}={v}"),
                    })
                    .collect();
                format!("{} {}", named.join(","), m.unit())
            };
            header.push(label);
        }
    }
    if layout.rating.is_some() {
        header.push(
            layout
                .rating_label
                .clone()
                .unwrap_or_else(|| "rating".into()),
        );
    }
    let mut body: Vec<Vec<String>> = Vec::new();
    for r in &rows {
        let in_row: Vec<&TablePoint<'_>> = points
            .iter()
            .filter(|p| &key(p.coords, &layout.rows) == r)
            .collect();
        let mut line = vec![r.join(" / ")];
        for c in &columns {
            // The last point wins when a cell was measured twice (rounds are separate rows).
            let cell = in_row
                .iter()
                .rev()
                .find(|p| &key(p.coords, &layout.columns) == c);
            for m in &layout.metrics {
                line.push(cell.map_or(MISSING.to_string(), |p| {
                    format_metric(metric_value(p.report, *m), *m)
                }));
            }
        }
        if let Some(rating) = layout.rating {
            line.push(format!("{:.1}", row_rating(&in_row, rating)));
        }
        body.push(line);
    }
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for line in &body {
        for (w, cell) in widths.iter_mut().zip(line) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, "{}", storlab_report::escape_control(title));
    let format_line = |cells: &[String]| {
        cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, &w))| {
                if i == 0 {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect::<Vec<_>>()
            .join(GAP)
            .trim_end()
            .to_string()
    };
    let _ = writeln!(out, "{}", format_line(&header));
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    let _ = writeln!(out, "{}", rule.join(GAP));
    for line in &body {
        let _ = writeln!(out, "{}", format_line(line));
    }
    out
}
