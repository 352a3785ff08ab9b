//! `storlab export RUN --format json|fio-json|csv`: a saved run in the same formats `storlab run`
//! writes, to stdout or a file.

use crate::args::OutputFormat;
use crate::db_support::{db_failure, parse_runs, DbArgs};
use crate::exit::{bad_input, run_failed, Failure};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The run: rN, N, or last.
    pub run: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Json)]
    pub format: OutputFormat,
    /// Write to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: ExportArgs) -> Result<(), Failure> {
    let reference = parse_runs(std::slice::from_ref(&args.run))?[0];
    let database = args.db.open_existing()?;
    let stored = database.load_run(reference).map_err(db_failure)?;
    let text = match args.format {
        OutputFormat::Json => storlab_report::to_json(&stored.report),
        OutputFormat::FioJson => storlab_report::to_fio_json(&stored.report),
        OutputFormat::Csv => storlab_report::to_csv(&stored.report),
        OutputFormat::Table => storlab_report::render_table(&stored.report),
    };
    write_text(args.output.as_ref(), &text, "--output")
}

/// Writes `text` to stdout, or whole to `path` through a temporary file and a rename.
pub fn write_text(path: Option<&PathBuf>, text: &str, option: &str) -> Result<(), Failure> {
    match path {
        None => {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout
                .write_all(text.as_bytes())
                .and_then(|_| stdout.flush());
            Ok(())
        }
        Some(path) => {
            if path.is_dir() {
                return Err(bad_input(format!(
                    "{option} {}: is a directory",
                    path.display()
                )));
            }
            let tmp = path.with_extension(format!("storlab-partial-{}", std::process::id()));
            std::fs::write(&tmp, text)
                .and_then(|_| std::fs::rename(&tmp, path))
                .map_err(|e| {
                    let _ = std::fs::remove_file(&tmp);
                    run_failed(format!("{option} {}: {e}", path.display()))
                })
        }
    }
}
