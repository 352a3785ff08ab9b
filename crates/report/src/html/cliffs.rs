//! The write-cliff chart: for each job whose cliffs were searched (the `write-cliff` preset),
//! MB/s against the bytes written so far, a dashed marker at each cliff, and the cliffs' table.

use super::svg::{Axis, Figure, LineChart, Scale, Table};
use super::{format_mb_s, series_prefix, LabeledRun, BYTES_PER_MB};
use crate::model::JobReport;

const BYTES_PER_GB: f64 = 1e9;

/// One chart per run that has jobs with searched cliffs.
pub(super) fn write_cliff_charts(runs: &[LabeledRun<'_>]) -> Vec<Figure> {
    let mut figures = Vec::new();
    for run in runs {
        let jobs: Vec<&JobReport> = run
            .report
            .jobs
            .iter()
            .filter(|j| j.write_cliffs.is_some())
            .collect();
        if jobs.is_empty() {
            continue;
        }
        let mut lines = Vec::new();
        let mut markers = Vec::new();
        let mut rows = Vec::new();
        for job in jobs {
            lines.push((job.setup.name.clone(), rate_against_bytes(job)));
            let found = job.write_cliffs.as_ref().expect("filtered on it");
            for cliff in &found.cliffs {
                let at_gb = cliff.at_bytes as f64 / BYTES_PER_GB;
                markers.push((at_gb, format!("{at_gb:.2} GB")));
                rows.push(vec![
                    job.setup.name.clone(),
                    format!("{at_gb:.2}"),
                    format!("{:.1}", cliff.at_s),
                    format_mb_s(cliff.before_bytes_per_s / BYTES_PER_MB),
                    format_mb_s(cliff.after_bytes_per_s / BYTES_PER_MB),
                ]);
            }
            if found.cliffs.is_empty() {
                let none = "none".to_string();
                let noise = format!("σ {}", format_mb_s(found.noise_bytes_per_s / BYTES_PER_MB));
                rows.push(vec![
                    job.setup.name.clone(),
                    none,
                    "-".into(),
                    noise,
                    "-".into(),
                ]);
            }
        }
        figures.push(
            LineChart {
                title: format!(
                    "{}Write cliff (MB/s against GB written; dashed lines mark where the rate \
                     fell and stayed lower)",
                    series_prefix(runs, run)
                ),
                x: Axis {
                    label: "written (GB, 10^9 bytes)".into(),
                    scale: Scale::Linear,
                    format: format_gb,
                },
                y: Axis {
                    label: "MB/s".into(),
                    scale: Scale::Linear,
                    format: format_mb_s,
                },
                series: lines,
                markers,
                table: Table {
                    header: [
                        "job",
                        "cliff at (GB)",
                        "at (s)",
                        "MB/s before",
                        "MB/s after",
                    ]
                    .map(String::from)
                    .to_vec(),
                    rows,
                },
            }
            .render(),
        );
    }
    figures
}

/// (GB written by the interval's end, MB/s in the interval) for each interval of the series.
fn rate_against_bytes(job: &JobReport) -> Vec<(f64, f64)> {
    let mut written = 0.0;
    crate::cliff::write_intervals(&job.series)
        .iter()
        .zip(&job.series)
        .map(|(interval, point)| {
            written += interval.bytes;
            (
                written / BYTES_PER_GB,
                point.write_bw_bytes_per_s / BYTES_PER_MB,
            )
        })
        .collect()
}

fn format_gb(value: f64) -> String {
    if value >= 10.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}
