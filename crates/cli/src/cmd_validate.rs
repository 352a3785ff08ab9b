//! `storlab validate REFERENCE.toml`: checks the whole reference file (stacks, presets, points,
//! keys) first, then runs every entry in the simulator and prints published vs simulated with
//! the signed error, and the share of entries within ±10% and ±15%. Exit 0 when it ran, 2 on
//! bad input, 1 when `--max-error-percent` is exceeded (or a simulation failed). `--check` stops
//! after the check: exit 0 and one line saying what would run, or the bad input's one line.
//! Under mpirun (`--features mpi`) the scenarios are dealt to the ranks in turn (scenario `i` to
//! rank `i mod size`), each measures its own, and rank 0 gathers the figures (their exact bits)
//! and prints what one process would have printed (docs/distributed.md).

use crate::args::{ValidateArgs, ValidateFormat};
use crate::clients::Clients;
use crate::exit::{run_failed, Failure};
use crate::output::print_or_write;
use crate::validate_output as output;
use std::io::IsTerminal;
use std::sync::Mutex;
use storlab_lab::validate::{measure, reference};

pub fn run(args: ValidateArgs, clients: Option<&Clients<'_>>) -> Result<(), Failure> {
    let planned = plan(&args);
    if let Some(clients) = clients {
        // A rank that cannot read the file (another host's copy) stops every rank.
        clients.exchange(
            "validation planned",
            planned
                .as_ref()
                .map(|_| serde_json::Value::Null)
                .map_err(Clone::clone),
        )?;
        if args.check {
            return match clients.reports() {
                true => run(args, None),
                false => Ok(()),
            };
        }
    }
    let planned = planned?;
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
    let results = match clients {
        None => measure::run_entries(&planned, &options, &on_done),
        Some(clients) => {
            let results = measure_share(&planned, clients, &options, &on_done)?;
            match results {
                Some(results) => results,
                // Another rank prints the results.
                None => return Ok(()),
            }
        }
    };
    if let Some(progress) = &progress {
        if let Ok(mut progress) = progress.lock() {
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

/// The reference file read and planned, after checking `--output`.
fn plan(args: &ValidateArgs) -> Result<Vec<storlab_lab::validate::plan::PlannedEntry>, Failure> {
    if let Some(output) = &args.output {
        // validate saves no run, but its output must not replace the default database either,
        // nor the reference file it reads (`validate ref.toml --output ref.toml`).
        crate::cmd_report::check_output_beside_database(output, &crate::args::DbArgs::default())?;
        crate::output::check_output_paths(
            &[("--output", output)],
            &[("the reference file", &args.reference)],
        )?;
    }
    storlab_lab::validate::load_plan(
        &args.reference,
        args.profiles.as_deref(),
        args.filter.as_deref(),
    )
}

/// One scenario's outcome as it travels to rank 0: the figure's IEEE-754 bits (so rank 0 prints
/// exactly what one process would) and warnings, or (bad input?, message).
type SharedOutcome = (usize, Result<(u64, Vec<String>), (bool, String)>);

/// This rank's share of the scenarios (scenario `i` to rank `i mod size`: a fixed deal, the
/// same on every run), measured and gathered: rank 0 gets every entry's result (or the first
/// failure in file order, as one process would), the others `None`.
fn measure_share(
    planned: &[storlab_lab::validate::plan::PlannedEntry],
    clients: &Clients<'_>,
    options: &measure::MeasureOptions<'_>,
    on_done: &(dyn Fn(&str, reference::Metric, f64) + Sync),
) -> Result<Option<Result<Vec<measure::EntryResult>, Failure>>, Failure> {
    let (rank, size) = (clients.rank() as usize, clients.size() as usize);
    let mine = measure::measure_scenarios(planned, &|item| item % size == rank, options, on_done);
    let shared: Vec<SharedOutcome> = mine
        .into_iter()
        .enumerate()
        .filter_map(|(item, outcome)| {
            let outcome = outcome?
                .map(|(value, warnings)| (value.to_bits(), warnings))
                .map_err(|failure| (matches!(failure, Failure::BadInput(_)), failure.to_string()));
            Some((item, outcome))
        })
        .collect();
    let part = serde_json::to_value(&shared)
        .map_err(|error| run_failed(format!("cannot encode this rank's results: {error}")));
    let heard = clients.exchange("validation measured", part)?;
    if !clients.reports() {
        return Ok(None);
    }
    let mut slots: Vec<Option<Result<measure::Measured, Failure>>> =
        (0..measure::scenario_count(planned))
            .map(|_| None)
            .collect();
    for (from_rank, value) in heard.into_iter().enumerate() {
        let outcomes: Vec<SharedOutcome> = serde_json::from_value(value).map_err(|error| {
            run_failed(format!(
                "rank {from_rank}: its results cannot be read: {error}"
            ))
        })?;
        for (item, outcome) in outcomes {
            let outcome = outcome
                .map(|(bits, warnings)| (f64::from_bits(bits), warnings))
                .map_err(|(bad, message)| match bad {
                    true => crate::exit::bad_input(message),
                    false => run_failed(message),
                });
            if let Some(slot) = slots.get_mut(item) {
                *slot = Some(outcome);
            }
        }
    }
    Ok(Some(measure::assemble(
        planned,
        slots.into_iter().map(|slot| {
            slot.unwrap_or_else(|| Err(run_failed("a scenario was measured by no rank")))
        }),
    )))
}
