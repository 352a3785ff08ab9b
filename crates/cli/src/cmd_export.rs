//! `storlab export RUN --format json|fio-json|csv`: a saved run in the same formats `storlab run`
//! writes, to stdout or a file.

use crate::args::ExportArgs;
use crate::cmd_report::check_output_beside_database;
use crate::db_support::{db_failure, parse_runs};
use crate::exit::Failure;
use crate::output::print_or_write;
use crate::render::{job_table, render_report};

pub fn run(args: ExportArgs) -> Result<(), Failure> {
    let reference = parse_runs(std::slice::from_ref(&args.run))?[0];
    if let Some(output) = &args.output {
        check_output_beside_database(output, &args.db)?;
    }
    let database = args.db.open_existing()?;
    let stored = database.load_run(reference).map_err(db_failure)?;
    let text = render_report(args.format, &stored.report, None, job_table);
    print_or_write(args.output.as_deref(), &text, "--output")
}
