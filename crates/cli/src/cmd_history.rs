//! `storlab history`: the saved runs, newest first, filtered by target, preset and date. Text
//! saved from the user's input (targets, command line) is printed with control characters
//! escaped.

use crate::args::HistoryArgs;
use crate::db_support::{db_failure, now_unix_ms};
use crate::exit::Failure;
use crate::say::say;
use std::fmt::Write;
use storlab_db::time::{format_utc, parse_time, Bound};
use storlab_db::RunFilter;
use storlab_report::escape_control;

pub fn run(args: HistoryArgs) -> Result<(), Failure> {
    let path = args.db.path()?;
    let now = now_unix_ms();
    let time = |text: &Option<String>, bound| {
        text.as_deref()
            .map(|t| parse_time(t, bound, now))
            .transpose()
            .map_err(|e| {
                crate::exit::bad_input(format!(
                    "--{}: {e}",
                    if bound == Bound::Since {
                        "since"
                    } else {
                        "until"
                    }
                ))
            })
    };
    let filter = RunFilter {
        target: args.target,
        preset: args.preset,
        since_unix_ms: time(&args.since, Bound::Since)?,
        until_unix_ms: time(&args.until, Bound::Until)?,
        limit: args.limit,
    };
    let database = match args.db.open_existing() {
        Ok(database) => database,
        Err(_) if !path.exists() => {
            say!(
                "storlab: no runs saved yet ({} does not exist)",
                path.display()
            );
            return Ok(());
        }
        Err(failure) => return Err(failure),
    };
    let runs = database.list_runs(&filter).map_err(db_failure)?;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{:<6} {:<16} {:<11} {:>6}  {:<16} {:<28} command",
        "run", "started (UTC)", "status", "points", "preset", "target"
    );
    for run in &runs {
        let _ = writeln!(
            text,
            "{:<6} {:<16} {:<11} {:>6}  {:<16} {:<28} {}",
            run.id.to_string(),
            format_utc(run.started_unix_ms),
            run.status.as_str(),
            run.points,
            escape_control(run.preset.as_deref().unwrap_or("-")),
            escape_control(&run.targets.join(", ")),
            escape_control(&run.command)
        );
    }
    crate::output::print(&text)?;
    if runs.is_empty() {
        say!("storlab: no runs match in {}", database.path().display());
    }
    Ok(())
}
