//! `storlab export RUN --format json|fio-json|csv`: a saved run in the same formats `storlab run`
//! writes, to stdout or a file.

use crate::args::ExportArgs;
use crate::args::OutputFormat;
use crate::cmd_report::check_output_beside_database;
use crate::db_support::{db_failure, parse_runs};
use crate::exit::Failure;
use crate::output::print_or_write;

pub fn run(args: ExportArgs) -> Result<(), Failure> {
    let reference = parse_runs(std::slice::from_ref(&args.run))?[0];
    if let Some(output) = &args.output {
        check_output_beside_database(output, &args.db)?;
    }
    let database = args.db.open_existing()?;
    let stored = database.load_run(reference).map_err(db_failure)?;
    let text = match args.format {
        OutputFormat::Json => storlab_report::to_json(&stored.report),
        OutputFormat::FioJson => storlab_report::to_fio_json(&stored.report),
        OutputFormat::FioJsonPlus => storlab_report::to_fio_json_plus(&stored.report, None),
        OutputFormat::Terse => storlab_report::to_fio_terse(&stored.report),
        OutputFormat::Csv => storlab_report::to_csv(&stored.report),
        OutputFormat::Table => storlab_report::render_table(&stored.report),
    };
    print_or_write(args.output.as_deref(), &text, "--output")
}
