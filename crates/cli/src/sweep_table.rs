//! The result table of a sweep, laid out as the preset's source printed it: rows and columns
//! are point coordinates named by the preset (block size rows × queue-depth columns, write
//! share rows, ...), each cell the preset's figures, plus an optional per-row rating.

use std::fmt::Write as _;
use storlab_job::preset::{Metric, Rating, TableLayout, RATING_QUEUE_DEPTHS};
use storlab_report::{format_fixed, JobReport};

const BYTES_PER_MB: f64 = 1e6;
const NS_PER_MS: f64 = 1e6;
const NS_PER_S: f64 = 1e9;
const MISSING: &str = "-";
/// A cell of a point that completed no I/O.
const NO_IO: &str = "no I/O";
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
    let decimals = match metric {
        Metric::Iops if value < 100.0 => 1,
        Metric::Iops => 0,
        Metric::Mbps if value < 10.0 => 2,
        Metric::Mbps => 1,
        Metric::LatMs => 3,
        Metric::Seconds => 2,
    };
    format_fixed(value, decimals)
}

/// One cell: the figure, or [`NO_IO`] for a point that completed no I/O (its rates and latency
/// are not zero but unmeasured; a file-set operation's time is measured without I/O counts).
fn cell_text(report: &JobReport, metric: Metric) -> String {
    if report.total_ios() == 0 && metric != Metric::Seconds {
        return NO_IO.to_string();
    }
    format_metric(metric_value(report, metric), metric)
}

/// The cell of the points measured at one row and column: the last point wins when a cell
/// was measured twice (rounds are separate rows), except `--repeat`'s repeats of a point,
/// whose cell is their mean and the half-width of its 95% interval (`mean ±half`).
fn cell_of(measured: &[&TablePoint<'_>], metric: Metric) -> String {
    let Some(last) = measured.last() else {
        return MISSING.to_string();
    };
    if storlab_report::repeat_of(last.report).is_none() {
        return cell_text(last.report, metric);
    }
    let values: Vec<f64> = measured
        .iter()
        .filter(|p| storlab_report::repeat_of(p.report).is_some())
        .filter(|p| p.report.total_ios() > 0 || metric == Metric::Seconds)
        .map(|p| metric_value(p.report, metric))
        .collect();
    if values.is_empty() {
        return NO_IO.to_string();
    }
    let spread = storlab_report::Spread::of(&values);
    match spread.stddev {
        Some(_) => format!(
            "{} ±{}",
            format_metric(spread.mean, metric),
            format_metric(spread.half_width(), metric)
        ),
        None => format_metric(spread.mean, metric),
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
            let measured: Vec<&TablePoint<'_>> = in_row
                .iter()
                .copied()
                .filter(|p| &key(p.coords, &layout.columns) == c)
                .collect();
            line.extend(layout.metrics.iter().map(|m| cell_of(&measured, *m)));
        }
        if let Some(rating) = layout.rating {
            line.push(format_fixed(row_rating(&in_row, rating), 1));
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

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_job::preset::Rating;
    use storlab_report::{JobNotes, JobSetup, TargetInfo};
    use storlab_stats::WorkerStats;

    fn report_with_reads(reads: u64) -> JobReport {
        let setup = JobSetup {
            name: "p".into(),
            job: serde_json::json!({}),
            engine: "sim".into(),
            target: TargetInfo {
                description: "sim:s".into(),
                kind: "sim".into(),
                size_bytes: 1 << 30,
                path: None,
            },
            device_state: "as-found".into(),
            data_pattern: "random".into(),
            align_bytes: 4096,
            seed: 1,
            iodepth: 1,
            numjobs: 1,
            rw: "randread".into(),
            block_size: "4 KiB".into(),
        };
        let mut stats = WorkerStats::new(1_000_000_000);
        stats.elapsed_ns = 1_000_000_000;
        for t in 0..reads {
            stats.read.record(t, 4096, 0, 1_000);
        }
        JobReport::new(setup, JobNotes::default(), &stats)
    }

    /// A point that completed no I/O has no directions, and the sum of no rates is negative
    /// zero: the table printed `-0.00`. It says `no I/O` instead, and its rating is zero.
    #[test]
    fn a_point_without_io_says_so_and_nothing_prints_negative_zero() {
        let idle = report_with_reads(0);
        let busy = report_with_reads(500);
        let coords_idle = vec![
            ("series".to_string(), "a".to_string()),
            ("iodepth".to_string(), "1".to_string()),
        ];
        let coords_busy = vec![
            ("series".to_string(), "a".to_string()),
            ("iodepth".to_string(), "2".to_string()),
        ];
        let layout = TableLayout {
            rows: vec!["series".into()],
            columns: vec!["iodepth".into()],
            metrics: vec![Metric::Iops, Metric::Mbps, Metric::LatMs],
            rating: Some(Rating::IopsPerQueueDepth),
            rating_label: None,
            cliffs: false,
        };
        let points = [
            TablePoint {
                coords: &coords_idle,
                report: &idle,
            },
            TablePoint {
                coords: &coords_busy,
                report: &busy,
            },
        ];
        let text = render("t", &layout, &points);
        assert!(!text.contains("-0"), "{text}");
        let row = text.lines().last().unwrap();
        assert_eq!(row.matches(NO_IO).count(), 3, "{row}");
        assert!(row.ends_with("250.0"), "rating Σ IOPS(q)/q: {row}");
        let only_idle = render("t", &layout, &points[..1]);
        assert!(!only_idle.contains("-0"), "{only_idle}");
        assert!(only_idle.trim_end().ends_with("0.0"), "{only_idle}");
    }
}
