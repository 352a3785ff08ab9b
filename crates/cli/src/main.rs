//! The `storlab` binary: parses arguments, dispatches subcommands, and decides exit codes.
//!
//! Exit codes: 0 success, 1 the run failed (I/O error, verify mismatch), 2 bad input (arguments,
//! job files, targets, profiles). Diagnostics go to stderr; machine output goes to stdout or
//! `--output FILE` alone. Stdout is written only through `output`, where a closed pipe is the
//! reader being done (exit 0), not a panic: `print!`/`println!` are refused by clippy here, and
//! so are `eprint!`/`eprintln!` (diagnostics use `say::say!`, which loses a line rather than
//! panicking when stderr is closed).

#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod as_fio;
mod clients;
mod cmd_compare;
mod cmd_decode;
mod cmd_export;
mod cmd_generate;
mod cmd_history;
mod cmd_presets;
mod cmd_probe;
mod cmd_report;
mod cmd_rm;
mod cmd_run;
mod cmd_show;
mod cmd_stacks;
mod cmd_usbmon;
mod cmd_validate;
mod db_support;
mod exit;
mod fio_help;
mod fio_status;
mod live_chart;
mod live_view;
#[cfg(feature = "mpi")]
mod mpi_world;
mod output;
mod preset_run;
mod progress;
mod render;
mod run_paths;
mod run_plan;
mod run_session;
mod run_sink;
mod say;
mod sweep_table;
mod validate_output;

use clap::FromArgMatches;

fn main() {
    let argv = match as_fio::storlab_argv(std::env::args_os().collect()) {
        Ok(argv) => argv,
        Err(message) => std::process::exit(exit::report(&exit::bad_input(message))),
    };
    let (clap_args, job_flags) = match args::split_job_flags(argv) {
        Ok(split) => split,
        Err(message) => std::process::exit(exit::report(&exit::bad_input(message))),
    };
    let parsed = args::command_with_job_keys()
        .try_get_matches_from(&clap_args)
        .and_then(|matches| args::Cli::from_arg_matches(&matches));
    let mut cli = match parsed {
        Ok(cli) => cli,
        Err(error) => exit_on_clap_error(&error, &clap_args),
    };
    if let args::Command::Run(run) = &mut cli.command {
        run.job_flags = job_flags;
        progress::set_eta(run.eta);
        progress::set_quiet(run.as_fio);
        live_view::configure(run);
        // First, while only the standard streams are open (see the function).
        run_session::start_interrupt_thread();
    }
    // Under mpirun (`--features mpi`), the MPI world; a run by hand has none and behaves as
    // without the feature. MPI is finalized when `world` is dropped, before the exit.
    #[cfg(feature = "mpi")]
    let world = mpi_world::World::join();
    #[cfg(feature = "mpi")]
    let transport = world.as_ref().map(|world| world as &dyn clients::Transport);
    #[cfg(not(feature = "mpi"))]
    let transport: Option<&dyn clients::Transport> = None;
    let outcome = dispatch(cli.command, transport);
    let code = outcome.err().map(|failure| exit::report(&failure));
    #[cfg(feature = "mpi")]
    drop(world);
    if let Some(code) = code {
        std::process::exit(code);
    }
}

/// Runs the subcommand; `run` (a job set) and `validate` spread over the processes of an MPI
/// `transport`, every other subcommand runs in each process as it would alone.
fn dispatch(
    command: args::Command,
    transport: Option<&dyn clients::Transport>,
) -> Result<(), exit::Failure> {
    let clients = match (&command, transport) {
        (args::Command::Run(_) | args::Command::Validate(_), Some(transport)) => {
            Some(clients::Clients::join(transport)?)
        }
        _ => None,
    };
    match command {
        args::Command::Run(run) => cmd_run::run(run, clients.as_ref()),
        args::Command::Fio(_) => unreachable!("as_fio rewrites `storlab fio` into `storlab run`"),
        args::Command::Stacks(stacks) => cmd_stacks::run(stacks),
        args::Command::Engines => output::print(
            &storlab_engine::registry::engine_names()
                .iter()
                .map(|name| format!("{name}\n"))
                .collect::<String>(),
        ),
        args::Command::Decode(decode) => cmd_decode::run(decode),
        args::Command::History(history) => cmd_history::run(history),
        args::Command::Show(show) => cmd_show::run(show),
        args::Command::Compare(compare) => cmd_compare::run(compare),
        args::Command::Export(export) => cmd_export::run(export),
        args::Command::Rm(rm) => cmd_rm::run(rm),
        args::Command::Report(report) => cmd_report::run(report),
        args::Command::Presets => cmd_presets::run(),
        args::Command::Validate(validate) => cmd_validate::run(validate, clients.as_ref()),
        args::Command::Probe(probe) => cmd_probe::run(probe),
        args::Command::Generate(generate) => cmd_generate::run(generate),
        args::Command::UsbmonCapture(capture) => cmd_usbmon::run(capture),
    }
}

/// `--help` and `--version` print as clap prints them (exit 0), and so does the help shown for
/// a bare `storlab`; any other clap error is bad input: storlab's one line, exit 2.
fn exit_on_clap_error(error: &clap::Error, argv: &[std::ffi::OsString]) -> ! {
    use clap::error::ErrorKind;
    match error.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => error.exit(),
        _ => std::process::exit(exit::report(&exit::bad_input(args::clap_error_line(
            error, argv,
        )))),
    }
}
