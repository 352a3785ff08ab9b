//! `storlab show RUN`: one saved run — where and how it ran, then its results table. Saved text
//! (job names, targets, the command line) is printed with control characters escaped.

use crate::args::ShowArgs;
use crate::db_support::{db_failure, parse_runs};
use crate::exit::Failure;
use std::fmt::Write;
use storlab_db::time::format_utc;
use storlab_report::escape_control;

pub fn run(args: ShowArgs) -> Result<(), Failure> {
    let reference = parse_runs(std::slice::from_ref(&args.run))?[0];
    let database = args.db.open_existing()?;
    let stored = database.load_run(reference).map_err(db_failure)?;
    let summary = &stored.summary;
    let mut text = String::new();
    let _ = writeln!(text, "run       {}", summary.id);
    let _ = writeln!(text, "status    {}", summary.status.as_str());
    let _ = writeln!(
        text,
        "started   {} UTC",
        format_utc(summary.started_unix_ms)
    );
    if let Some(finished) = summary.finished_unix_ms {
        let _ = writeln!(text, "finished  {} UTC", format_utc(finished));
    }
    let _ = writeln!(
        text,
        "tool      {} {}",
        escape_control(&stored.report.tool.name),
        escape_control(&stored.report.tool.version)
    );
    let _ = writeln!(
        text,
        "host      {} (kernel {}, {} CPUs)",
        escape_control(&stored.report.host.hostname),
        escape_control(&stored.report.host.kernel),
        stored.report.host.cpus
    );
    if let Some(preset) = &summary.preset {
        let _ = writeln!(text, "preset    {}", escape_control(preset));
    }
    let _ = writeln!(text, "command   {}", escape_control(&summary.command));
    for job in &stored.report.jobs {
        let _ = writeln!(
            text,
            "point     {}: {} on {} ({}), state {}, data {}, align {} B, seed {}",
            escape_control(&job.setup.name),
            escape_control(&job.setup.engine),
            escape_control(&job.setup.target.description),
            escape_control(&job.setup.target.kind),
            escape_control(&job.setup.device_state),
            escape_control(&job.setup.data_pattern),
            job.setup.align_bytes,
            job.setup.seed
        );
    }
    text.push('\n');
    text.push_str(&storlab_report::render_table(&stored.report));
    for warning in &stored.report.warnings {
        let _ = writeln!(text, "warning: {}", escape_control(warning));
    }
    crate::output::print(&text)
}
