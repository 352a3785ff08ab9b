//! `--output-format` / `--format`: the one place a run report becomes text, so `run`, the preset
//! and FC-Test runs and `export` write each format the same way.

use crate::args::OutputFormat;
use storlab_report::{FioEcho, RunReport};

/// `report` as `format`. The machine formats are the report's alone; the human table is what
/// `table` renders (a preset run puts its own table of points before, or instead of, the job
/// table; [`job_table`] is the plain one). `echo` is the job file's options as written, for
/// fio's `global options` and `job options` (none for presets and saved runs, whose fio-shaped
/// JSON lists the resolved options).
pub(crate) fn render_report(
    format: OutputFormat,
    report: &RunReport,
    echo: Option<&FioEcho>,
    table: impl FnOnce(&RunReport) -> String,
) -> String {
    match format {
        OutputFormat::Table => table(report),
        OutputFormat::Json => storlab_report::to_json(report),
        OutputFormat::FioJson => match echo {
            Some(echo) => storlab_report::to_fio_json_with(report, echo),
            None => storlab_report::to_fio_json(report),
        },
        OutputFormat::FioJsonPlus => storlab_report::to_fio_json_plus(report, echo),
        // fio prints its job's process; storlab's jobs are this process's threads.
        OutputFormat::FioNormal => storlab_report::to_fio_normal(report, echo, std::process::id()),
        OutputFormat::Terse => storlab_report::to_fio_terse(report),
        OutputFormat::Csv => storlab_report::to_csv(report),
    }
}

/// The table of a run's jobs, for [`render_report`] when nothing goes before it.
pub(crate) fn job_table(report: &RunReport) -> String {
    storlab_report::render_table(report)
}
