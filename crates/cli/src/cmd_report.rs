//! `storlab report RUN… -o report.html`: one self-contained HTML file with the charts and
//! tables of saved runs (no network needed to open it).

use crate::args::{DbArgs, ReportArgs};
use crate::db_support::{db_failure, parse_runs};
use crate::exit::Failure;
use crate::output::{check_output_paths, database_files, print_or_write, Protected};
use crate::say::say;
use std::path::Path;
use storlab_report::{LabeledRun, RunReport};

pub fn run(args: ReportArgs) -> Result<(), Failure> {
    let references = parse_runs(&args.runs)?;
    check_output_beside_database(&args.output, &args.db)?;
    let database = args.db.open_existing()?;
    let mut loaded = Vec::new();
    for reference in references {
        let stored = database.load_run(reference).map_err(db_failure)?;
        loaded.push((stored.summary.id.to_string(), stored.report));
    }
    write_report(&args.output, "--output", &loaded)?;
    say!("storlab: wrote {}", args.output.display());
    Ok(())
}

/// Refuses, before the database is read, an `--output` that is not a regular file or nothing,
/// or that is the results database itself (export and report read it, and would replace it).
pub fn check_output_beside_database(output: &Path, db: &DbArgs) -> Result<(), Failure> {
    let database = db
        .path()
        .ok()
        .map(|db| database_files(&db))
        .unwrap_or_default();
    let protected: Vec<Protected<'_>> = database
        .iter()
        .map(|(what, path)| (*what, path.as_path()))
        .collect();
    check_output_paths(&[("--output", output)], &protected)
}

/// Renders and writes the report of `(label, report)` pairs; `option` is the flag that named
/// `path` (`report --output`, `run --report`), for error messages.
pub fn write_report(
    path: &Path,
    option: &str,
    runs: &[(String, RunReport)],
) -> Result<(), Failure> {
    let labeled: Vec<LabeledRun<'_>> = runs
        .iter()
        .map(|(label, report)| LabeledRun {
            label: label.clone(),
            report,
        })
        .collect();
    let labels: Vec<&str> = runs.iter().map(|(l, _)| l.as_str()).collect();
    let title = format!("storlab report: {}", labels.join(", "));
    print_or_write(
        Some(path),
        &storlab_report::to_html(&title, &labeled),
        option,
    )
}
