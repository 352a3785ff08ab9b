//! `storlab show RUN`: one saved run — where and how it ran, then its results table.

use crate::db_support::{db_failure, parse_runs, DbArgs};
use crate::exit::Failure;
use clap::Args;
use std::fmt::Write;
use storlab_db::time::format_utc;

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run: rN as `storlab history` prints it, N, or last.
    pub run: String,
    #[command(flatten)]
    pub db: DbArgs,
}

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
        stored.report.tool.name, stored.report.tool.version
    );
    let _ = writeln!(
        text,
        "host      {} (kernel {}, {} CPUs)",
        stored.report.host.hostname, stored.report.host.kernel, stored.report.host.cpus
    );
    if let Some(preset) = &summary.preset {
        let _ = writeln!(text, "preset    {preset}");
    }
    let _ = writeln!(text, "command   {}", summary.command);
    for job in &stored.report.jobs {
        let _ = writeln!(
            text,
            "point     {}: {} on {} ({}), state {}, data {}, align {} B, seed {}",
            job.name,
            job.engine,
            job.target.description,
            job.target.kind,
            job.device_state,
            job.data_pattern,
            job.align_bytes,
            job.seed
        );
    }
    text.push('\n');
    text.push_str(&storlab_report::render_table(&stored.report));
    for warning in &stored.report.warnings {
        let _ = writeln!(text, "warning: {warning}");
    }
    crate::output::print(&text)
}
