//! `storlab validate REFERENCE.toml`: checks the whole reference file (stacks, presets, points,
//! keys) first, then runs every entry in the simulator and prints published vs simulated with
//! the signed error, and the share of entries within ±10% and ±15%. Exit 0 when it ran, 2 on
//! bad input, 1 when `--max-error-percent` is exceeded (or a simulation failed).

use crate::exit::{bad_input, run_failed, Failure};
use crate::output::print_or_write;
use crate::validation::{measure, output, plan, reference};
use clap::{Args, ValueEnum};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;

/// Output formats of `storlab validate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ValidateFormat {
    /// A readable table (default).
    Table,
    /// {"entries": [{id, source, stack, metric, published, simulated, error_percent}],
    /// "within_10_percent", "within_15_percent"} (shares as fractions 0..1).
    Json,
    /// One row per entry.
    Csv,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Reference file of published measurements and their scenarios (docs/validation.md).
    pub reference: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ValidateFormat::Table)]
    pub output_format: ValidateFormat,
    /// Write the output to FILE instead of stdout (written whole at the end, never half).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Directory of extra simulator profiles (added to, and overriding, the built-in ones).
    #[arg(long, value_name = "DIR")]
    pub profiles: Option<PathBuf>,
    /// Run only the entries whose id contains SUBSTRING (the whole file is still checked).
    #[arg(long, value_name = "SUBSTRING")]
    pub filter: Option<String>,
    /// Exit with code 1 when any entry's |error| exceeds X percent.
    #[arg(long, value_name = "X", value_parser = parse_percent)]
    pub max_error_percent: Option<f64>,
}

fn parse_percent(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        _ => Err(format!(
            "'{text}': give a percentage of 0 or more (e.g. 15)"
        )),
    }
}

pub fn run(args: ValidateArgs) -> Result<(), Failure> {
    if let Some(output) = &args.output {
        crate::output::check_output_path("--output", output)?;
    }
    let reference = reference::read(&args.reference).map_err(bad_input)?;
    let profiles_dir =
        crate::sim_support::profiles_dir(args.profiles.as_deref()).map_err(bad_input)?;
    let profiles = storlab_sim::ProfileSet::embedded_with_dir(&profiles_dir).map_err(bad_input)?;
    let mut planned = plan::plan(&reference, &profiles).map_err(bad_input)?;
    if let Some(filter) = &args.filter {
        planned.retain(|p| p.entry.id.contains(filter.as_str()));
        if planned.is_empty() {
            return Err(bad_input(format!(
                "{}: --filter {filter}: no entry id contains it",
                reference.file
            )));
        }
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let scenarios = planned
        .iter()
        .map(|p| 1 + usize::from(p.denominator.is_some()))
        .sum();
    // Progress only on a terminal: piped runs (CI, tests) keep stderr for warnings and errors.
    let progress = std::io::stderr()
        .is_terminal()
        .then(|| Mutex::new(crate::progress::Progress::new(scenarios)));
    let on_done = |label: &str, metric: reference::Metric, value: f64| {
        if let Some(progress) = &progress {
            if let Ok(mut progress) = progress.lock() {
                progress.point_done(label, &format!("{metric} = {value:.4}"));
            }
        }
    };
    let results = measure::run_entries(&planned, args.profiles.as_deref(), threads, &on_done);
    if let Some(progress) = &progress {
        if let Ok(progress) = progress.lock() {
            progress.finish();
        }
    }
    let results = results?;
    let rendered = match args.output_format {
        ValidateFormat::Table => output::to_table(&results),
        ValidateFormat::Json => output::to_json(&results),
        ValidateFormat::Csv => output::to_csv(&results),
    };
    print_or_write(args.output.as_deref(), &rendered, "--output")?;
    if let Some(limit) = args.max_error_percent {
        let over: Vec<String> = results
            .iter()
            .filter(|r| r.error_percent.abs() > limit)
            .map(|r| format!("{} ({:+.1}%)", r.id, r.error_percent))
            .collect();
        if !over.is_empty() {
            return Err(run_failed(format!(
                "{} of {} entries are off by more than {limit}%: {}",
                over.len(),
                results.len(),
                over.join(", ")
            )));
        }
    }
    Ok(())
}
