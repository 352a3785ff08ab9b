//! CSV output: one row per job and direction, for spreadsheets and plotting scripts; the last
//! column holds the run's and the job's warnings, so no result travels without them.

use std::fmt::Write as _;

use crate::model::RunReport;
use crate::repeats::{repeat_of, summarise_repeats, RepeatSummary, Spread};

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
    let repeats = summarise_repeats(&report.jobs);
    // A run with repeats has one more column: each row's repeat, and the statistics' rows.
    let repeat_column = if repeats.is_empty() { "" } else { ",repeat" };
    let _ = writeln!(out, "{}{repeat_column}", HEADER.join(","));
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
            let mut escaped: Vec<String> = fields.iter().map(|field| csv_field(field)).collect();
            if !repeats.is_empty() {
                escaped
                    .push(repeat_of(job).map_or_else(String::new, |(index, _)| index.to_string()));
            }
            let _ = writeln!(out, "{}", escaped.join(","));
        }
    }
    push_repeat_rows(&mut out, &repeats);
    out
}

/// One statistic of a spread (absent with a single repeat).
type Statistic = fn(&Spread) -> Option<f64>;

/// The repeats' statistics after the rows: for each job and direction, one row per statistic
/// (`mean`, `stddev`, `ci95_low`, `ci95_high`, named in the `repeat` column) with the headline
/// figures in their own columns (`iops`, `bw_bytes_per_s`, `lat_mean_ns`, `clat_p99_ns`) and
/// the others empty.
fn push_repeat_rows(out: &mut String, repeats: &[RepeatSummary]) {
    let column = |name: &str| HEADER.iter().position(|title| *title == name);
    let statistics: [(&str, Statistic); 4] = [
        ("mean", |spread| Some(spread.mean)),
        ("stddev", |spread| spread.stddev),
        ("ci95_low", |spread| spread.ci95_low),
        ("ci95_high", |spread| spread.ci95_high),
    ];
    for summary in repeats {
        for (statistic, value_of) in statistics {
            let mut fields = vec![String::new(); HEADER.len() + 1];
            let mut set = |name: &str, value: String| {
                if let Some(index) = column(name) {
                    fields[index] = value;
                }
            };
            set("job", summary.job.clone());
            set("direction", summary.direction.clone());
            set("target", summary.target.clone());
            let figure =
                |spread: &Spread| value_of(spread).map_or_else(String::new, |v| format!("{v:.3}"));
            set("iops", figure(&summary.iops));
            set("bw_bytes_per_s", figure(&summary.bw_bytes_per_s));
            set("lat_mean_ns", figure(&summary.lat_mean_ns));
            set("clat_p99_ns", figure(&summary.clat_p99_ns));
            fields[HEADER.len()] = statistic.to_owned();
            let escaped: Vec<String> = fields.iter().map(|field| csv_field(field)).collect();
            let _ = writeln!(out, "{}", escaped.join(","));
        }
    }
}

/// Characters that make a spreadsheet read a cell as a formula (OWASP's CSV injection list:
/// `=`, `+`, `-`, `@`, tab, carriage return) when they start a cell: a job name or path taken
/// from the user's input may start so.
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// One CSV field: a text that a spreadsheet would take for a formula gets a leading `'` (OWASP's
/// advice, so `=HYPERLINK(..)` shows as text) and is quoted; a negative number as Rust writes
/// one (`-3`, `-0.250`) stays as it is, as data; any other field is quoted when it holds a
/// separator, quote or line break (RFC 4180). Every CSV storlab writes goes through here.
pub fn csv_field(field: &str) -> String {
    let formula = field.starts_with(FORMULA_STARTS) && !is_negative_number(field);
    if formula {
        // OWASP: prefix with a quote and wrap the cell in double quotes.
        format!("\"'{}\"", field.replace('"', "\"\""))
    } else if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_owned()
    }
}

/// `-` then digits, with at most one `.` among them: the form of a negative number `Display`
/// gives (no exponent, no `+`, nothing else a formula could hide in).
fn is_negative_number(field: &str) -> bool {
    let Some(digits) = field.strip_prefix('-') else {
        return false;
    };
    let mut parts = digits.split('.');
    let whole = parts.next().unwrap_or_default();
    let all_digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    all_digits(whole) && parts.next().is_none_or(all_digits) && parts.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("4k:50,64k:50"), "\"4k:50,64k:50\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn a_text_a_spreadsheet_would_evaluate_is_kept_as_text() {
        for name in ["=1+2", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\rx"] {
            let field = csv_field(name);
            assert!(field.starts_with("\"'"), "{name:?} -> {field}");
        }
        assert_eq!(
            csv_field("=HYPERLINK(\"http://x\",\"y\")"),
            "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""
        );
        assert_eq!(csv_field("-3.5"), "-3.5");
        assert_eq!(csv_field("-12"), "-12");
        assert_eq!(csv_field("+1"), "\"'+1\"");
        assert_eq!(csv_field("-1e3"), "\"'-1e3\"");
        assert_eq!(csv_field("-1.2.3"), "\"'-1.2.3\"");
        assert_eq!(csv_field("a=b"), "a=b");
    }
}
