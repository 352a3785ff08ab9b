//! `storlab validate REFERENCE.toml`: checks the whole reference file (stacks, presets, points,
//! keys) first, then runs every entry in the simulator and prints published vs simulated with
//! the signed error, and the share of entries within ±10% and ±15%. Exit 0 when it ran, 2 on
//! bad input, 1 when `--max-error-percent` is exceeded (or a simulation failed). `--check` stops
//! after the check: exit 0 and one line saying what would run, or the bad input's one line.

use crate::args::{ValidateArgs, ValidateFormat};
use crate::exit::{run_failed, Failure};
use crate::output::print_or_write;
use crate::validate_output as output;
use std::io::IsTerminal;
use std::sync::Mutex;
use storlab_lab::validate::{measure, reference};

pub fn run(args: ValidateArgs) -> Result<(), Failure> {
    if let Some(output) = &args.output {
        crate::output::check_output_path("--output", output)?;
    }
    let planned = storlab_lab::validate::load_plan(
        &args.reference,
        args.profiles.as_deref(),
        args.filter.as_deref(),
    )?;
    if args.check {
        // Read and planned, nothing run: say what would run.
        let scenarios: usize = planned
            .iter()
            .map(|p| 1 + usize::from(p.denominator.is_some()))
            .sum();
        let text = format!(
            "{}: {} entries, {scenarios} scenarios planned; nothing run (--check)\n",
            args.reference.display(),
            planned.len()
        );
        return print_or_write(args.output.as_deref(), &text, "--output");
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
    let options = measure::MeasureOptions {
        profiles: args.profiles.as_deref(),
        threads,
        stop: &crate::run_session::STOP,
        live: Some(&crate::progress::LIVE),
    };
    let results = measure::run_entries(&planned, &options, &on_done);
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
