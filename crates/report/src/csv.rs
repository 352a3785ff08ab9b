//! CSV output: one row per job and direction, for spreadsheets and plotting scripts; the last
//! column holds the run's and the job's warnings, so no result travels without them.

use std::fmt::Write as _;

use crate::model::RunReport;

const HEADER: [&str; 28] = [
    "job",
    "direction",
    "rw",
    "block_size",
    "iodepth",
    "numjobs",
    "engine",
    "target",
    "device_state",
    "data_pattern",
    "align_bytes",
    "seed",
    "ios",
    "bytes",
    "errors",
    "runtime_ns",
    "iops",
    "bw_bytes_per_s",
    "lat_min_ns",
    "lat_mean_ns",
    "lat_stddev_ns",
    "lat_max_ns",
    "slat_mean_ns",
    "clat_mean_ns",
    "clat_p50_ns",
    "clat_p99_ns",
    "clat_p99_9_ns",
    "warnings",
];

/// Separates the warnings in the `warnings` column.
const WARNING_SEPARATOR: &str = " | ";

/// The report as CSV (RFC 4180 quoting, `\n` line ends) with a header row.
pub fn to_csv(report: &RunReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", HEADER.join(","));
    for job in &report.jobs {
        for (direction, summary) in job.directions() {
            let percentile = |p: f64| {
                summary
                    .clat
                    .percentile_ns(p)
                    .map_or_else(String::new, |value| value.to_string())
            };
            // Typed by HEADER's length, so a column added to one but not the other fails to build.
            let fields: [String; HEADER.len()] = [
                job.setup.name.clone(),
                direction.to_owned(),
                job.setup.rw.clone(),
                job.setup.block_size.clone(),
                job.setup.iodepth.to_string(),
                job.setup.numjobs.to_string(),
                job.setup.engine.clone(),
                job.setup.target.description.clone(),
                job.setup.device_state.clone(),
                job.setup.data_pattern.clone(),
                job.setup.align_bytes.to_string(),
                job.setup.seed.to_string(),
                summary.ios.to_string(),
                summary.bytes.to_string(),
                summary.errors.to_string(),
                summary.runtime_ns.to_string(),
                format!("{:.3}", summary.iops),
                format!("{:.3}", summary.bw_bytes_per_s),
                summary.lat.min_ns.to_string(),
                format!("{:.3}", summary.lat.mean_ns),
                format!("{:.3}", summary.lat.stddev_ns),
                summary.lat.max_ns.to_string(),
                format!("{:.3}", summary.slat.mean_ns),
                format!("{:.3}", summary.clat.mean_ns),
                percentile(50.0),
                percentile(99.0),
                percentile(99.9),
                // The run's warnings concern every job; each row carries them with its job's.
                report
                    .warnings
                    .iter()
                    .chain(&job.notes.warnings)
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(WARNING_SEPARATOR),
            ];
            let escaped: Vec<String> = fields.iter().map(|field| escape(field)).collect();
            let _ = writeln!(out, "{}", escaped.join(","));
        }
    }
    out
}

/// Quotes a field when it contains a separator, quote or line break (RFC 4180).
fn escape(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(escape("plain"), "plain");
        assert_eq!(escape("4k:50,64k:50"), "\"4k:50,64k:50\"");
        assert_eq!(escape("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
