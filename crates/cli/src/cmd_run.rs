//! `storlab run`: builds the job set (fio file, fio-style flags, or the built-in quick set), runs
//! it, and writes the results in the chosen format. Ctrl-C stops the run, keeps the finished jobs
//! and removes storlab's temporary files.

use crate::args::{OutputFormat, RunArgs};
use crate::clients::Clients;
use crate::exit::{bad_input, run_failed, Failure};
use crate::run_session::{arm_interrupt_handler, load_jobs, session, target_of, Finished, STOP};
use crate::run_sink::CliSink;
use crate::say::say;
use std::ffi::OsStr;
use std::path::Path;
use std::sync::atomic::Ordering;
use storlab_job::{EngineKind, Target};
use storlab_lab::classify;
use storlab_lab::provider::Provider;
use storlab_lab::run::JobSetRun;
use storlab_report::RunReport;

pub fn run(args: RunArgs, clients: Option<&Clients<'_>>) -> Result<(), Failure> {
    if !args.sections.is_empty() && args.job_file.is_none() {
        return Err(bad_input(
            "--section: selects sections of a job file; give one",
        ));
    }
    if let Some(clients) = clients {
        if args.showcmd || args.parse_only || single_process(&args)? {
            // Nothing to spread over the clients: rank 0 does it alone, as a run by hand.
            return match clients.reports() {
                true => run(args, None),
                false => Ok(()),
            };
        }
    }
    if args.showcmd {
        return showcmd(&args);
    }
    if args.parse_only {
        // fio's --parse-only: read and check the jobs on every target, run nothing.
        if args.preset.is_some() {
            return Err(bad_input(
                "--parse-only: reads a job file or job flags, not a preset",
            ));
        }
        for target in args
            .targets
            .iter()
            .map(Some)
            .chain(args.targets.is_empty().then_some(None))
        {
            let part = RunArgs {
                targets: target.into_iter().cloned().collect(),
                ..args.clone()
            };
            load_jobs(&part)?;
        }
        return Ok(());
    }
    crate::run_paths::check_run_outputs(&args)?;
    if args.targets.len() > 1 {
        return what_if(args, clients);
    }
    run_on_one_target(args, clients).map(|_| ())
}

/// A run on one target (or the default temporary file): writes its outputs unless it is part
/// of a what-if comparison (`args.compared`), then hands back its results. With `clients` (a
/// multi-client run under mpirun), every client runs the jobs on its own target, all start each
/// stonewall group together, and rank 0 writes the aggregate and saves the one run.
fn run_on_one_target(args: RunArgs, clients: Option<&Clients<'_>>) -> Result<Finished, Failure> {
    if crate::preset_run::wanted(&args) {
        return crate::preset_run::run(args);
    }
    let reports = clients.is_none_or(Clients::reports);
    let started_unix_ms = crate::db_support::now_unix_ms();
    let prepared = prepare_job_set(&args, reports, started_unix_ms);
    // Every client's bad input (a job file one host cannot read) stops all of them.
    if let Some(clients) = clients {
        clients.exchange(
            "jobs read",
            prepared
                .as_ref()
                .map(|_| serde_json::Value::Null)
                .map_err(Clone::clone),
        )?;
    }
    let (mut set, builtin, mut recorder) = prepared?;
    if let Some(clients) = clients {
        clients.localize(&mut set);
        if let Some(recorder) = &mut recorder {
            recorder.set_hostname(clients.hosts_label());
        }
    }
    arm_interrupt_handler();

    let mut session = session(&args, builtin);
    session.started_unix_ms = started_unix_ms;
    if let Some(clients) = clients {
        session.peers = Some(clients);
    }
    let mut sink = CliSink::new(recorder);
    let status = args
        .status_interval
        .map(crate::progress::StatusLines::start);
    let (run, handed_on) = match clients {
        Some(clients) => {
            let mut shared = crate::clients::ClientsSink {
                inner: &mut sink,
                clients,
                handed_on: Vec::new(),
            };
            let run = storlab_lab::run::run_job_set(&set, &session, &mut shared);
            (run, Some(shared.handed_on))
        }
        None => (
            storlab_lab::run::run_job_set(&set, &session, &mut sink),
            None,
        ),
    };
    drop(status);
    let JobSetRun {
        mut report,
        mut provider,
        error,
        interrupted,
        complete,
        unfired_faults,
    } = run;
    // A multi-client run's error is the first failing client's, named, on every client.
    let mut error: Option<Failure> = error.map(classify);
    if let Some(clients) = clients {
        let ended = match error.take() {
            Some(failure) => Err(failure),
            None => Ok(()),
        };
        error = clients.finish(ended).err();
        if let Some(handed_on) = handed_on.filter(|_| clients.reports()) {
            report.jobs = handed_on;
            report.host.hostname = clients.hosts_label();
        }
        if !clients.reports() {
            // Rank 0 writes the outputs; the others delete their temporary files and end.
            drop(provider);
            return match error {
                // Jobs finished before it: a failed run (exit 1), as rank 0 says.
                Some(failure) if !report.jobs.is_empty() => Err(run_failed(failure.to_string())),
                Some(failure) => Err(failure),
                None => Ok(Finished::complete(report, None)),
            };
        }
    }
    let total = set.jobs.len();
    if let Some(error) = error {
        if let Some(recorder) = &mut sink.recorder {
            if let Err(unsaved) =
                recorder.finish(storlab_db::RunStatus::Failed, &[error.to_string()])
            {
                say!("storlab: warning: {unsaved}");
            }
        }
        if report.jobs.is_empty() {
            return Err(error);
        }
        // The jobs that finished were measured: their results are written as a complete
        // run's would be, and the run failed (exit 1) whatever stopped it.
        let done = report.jobs.len();
        let written = write_outputs(&args, &report, sink.run_id(), &mut provider);
        drop(provider); // deletes temporary files
        if args.compared {
            // The comparison writes them with the other targets' and reports the failure.
            written?;
            let run_id = sink.run_id();
            return Finished::compared_part(report, run_id, run_failed(error.to_string()));
        }
        let failed =
            format!("{error} (the results of the {done} job(s) that ran are in the output)");
        return Err(match written {
            Ok(()) => run_failed(failed),
            Err(also) => run_failed(format!("{failed}; writing them failed: {also}")),
        });
    }
    // Saved as finished before the output is written, whatever becomes of stdout. Points
    // missing from the database fail the run (exit 1) once the results are out.
    let saved =
        crate::db_support::finish_run(&mut sink.recorder, false, interrupted, &report.warnings);
    let written = write_outputs(&args, &report, sink.run_id(), &mut provider);
    drop(provider); // deletes temporary files before we report success
    if let (Err(_), Err(unsaved)) = (&written, &saved) {
        // Only one error line ends the command; the missing points are still named.
        say!("storlab: warning: {unsaved}");
    }
    written?;
    saved?;
    if let Some(failure) = sink.log_failure.take() {
        return Err(failure);
    }
    if interrupted && STOP.load(Ordering::Relaxed) {
        let stopped = run_failed(format!(
            "interrupted: {complete} of {total} jobs finished and are reported above"
        ));
        return match args.compared {
            true => Finished::compared_part(report, sink.run_id(), stopped),
            false => Err(stopped),
        };
    }
    if !unfired_faults.is_empty() {
        // The results are out (and saved); the run did not test what its plan asked.
        let unfired = run_failed(format!(
            "{} placed fault(s) never fired: {}",
            unfired_faults.len(),
            unfired_faults.join(", ")
        ));
        return match args.compared {
            true => Finished::compared_part(report, sink.run_id(), unfired),
            false => Err(unfired),
        };
    }
    Ok(Finished::complete(report, sink.run_id()))
}

/// The job set of a run with its checks, and its recorder (`reports`: this process saves the
/// run; a multi-client run's other ranks do not).
fn prepare_job_set(
    args: &RunArgs,
    reports: bool,
    started_unix_ms: u64,
) -> Result<
    (
        storlab_job::JobSet,
        bool,
        Option<crate::db_support::RunRecorder>,
    ),
    Failure,
> {
    let (set, builtin) = load_jobs(args)?;
    if args.pcap.is_some() {
        check_pcap_has_usb(args, &set)?;
    }
    crate::run_paths::check_job_paths(args, &set)?;
    if let Some(plan) = args.faults.as_deref() {
        storlab_lab::fault_places::check_placed_faults(&set, plan).map_err(bad_input)?;
    }
    if reports {
        for job in &set.jobs {
            for warning in &job.warnings {
                say!("storlab: warning: job '{}': {warning}", job.name);
            }
        }
    }
    let recorder = crate::db_support::recorder_for_run(
        &args.db,
        args.no_db || !reports,
        None,
        started_unix_ms,
    )?;
    Ok((set, builtin, recorder))
}

/// Whether a run under mpirun is one for rank 0 alone: a sweep (`--preset`, `--state`, trims
/// between steps) on one simulated target, whose points follow one another on one simulated
/// stack's state and so cannot be split (docs/distributed.md). A what-if comparison of several
/// simulated targets is spread over the ranks, a target each (`what_if`). The same on a real
/// target is refused: every client would measure it, and none of that would be merged.
fn single_process(args: &RunArgs) -> Result<bool, Failure> {
    if !crate::preset_run::wanted(args) && args.targets.len() < 2 {
        return Ok(false);
    }
    let all_simulated = !args.targets.is_empty()
        && args
            .targets
            .iter()
            .all(|text| matches!(target_of(text), Ok(Target::Sim(_))));
    if all_simulated {
        Ok(args.targets.len() < 2)
    } else {
        Err(bad_input(
            "under mpirun, a multi-client run takes a job file or job flags on one --target; \
             --preset, --state and several --target run under mpirun only on simulated targets",
        ))
    }
}

/// The outputs of a run, finished or failed part-way: the warnings, then (unless the run is
/// one target's part of a what-if comparison, whose outputs are written together) the pcap,
/// the results in the chosen format (stdout or `--output`) and the `--report` HTML.
fn write_outputs(
    args: &RunArgs,
    report: &RunReport,
    run_id: Option<storlab_db::RunId>,
    provider: &mut Provider,
) -> Result<(), Failure> {
    for warning in &report.warnings {
        say!("storlab: warning: {warning}");
    }
    // The table lists the jobs' warnings under it; machine formats carry them in their data,
    // which a person may never read, so they are said on stderr as well.
    if args.output_format != OutputFormat::Table {
        for job in &report.jobs {
            for warning in &job.notes.warnings {
                say!("storlab: warning: job '{}': {warning}", job.setup.name);
            }
        }
    }
    if args.compared {
        return Ok(());
    }
    if let Some(pcap_path) = &args.pcap {
        crate::output::write_file(pcap_path, &provider.take_pcap()?, "--pcap")?;
    }
    let rendered = crate::render::render_report(
        args.output_format,
        report,
        fio_echo(args).as_ref(),
        crate::render::job_table,
    );
    crate::output::print_or_write(args.output.as_deref(), &rendered, "--output")?;
    if let Some(path) = &args.report {
        let label = run_id.map_or("this run".into(), |id| id.to_string());
        crate::cmd_report::write_report(path, "--report", &[(label, report.clone())])?;
    }
    Ok(())
}

/// fio's `--showcmd`: the job file (or flags) as one fio command line, after checking it.
fn showcmd(args: &RunArgs) -> Result<(), Failure> {
    if args.preset.is_some() {
        return Err(bad_input(
            "--showcmd: shows a job file or job flags, not a preset",
        ));
    }
    load_jobs(args)?;
    let written = crate::run_session::written_options(args)
        .ok_or_else(|| bad_input("--showcmd: the job file could not be read again"))?;
    let mut line = String::from("fio");
    for argument in &written.arguments {
        line.push(' ');
        line.push_str(argument);
    }
    line.push('\n');
    crate::output::print_or_write(args.output.as_deref(), &line, "--output")
}

/// The fio-shaped JSON (or json+) of a run of a job file, job flags or the quick set, echoing
/// the options as written as fio does.
/// The job file's options as written, for the fio-shaped JSON (none without a job file).
fn fio_echo(args: &RunArgs) -> Option<storlab_report::FioEcho> {
    crate::run_session::written_options(args).map(|written| storlab_report::FioEcho {
        global_options: written.global,
        job_options: written.jobs,
    })
}

/// What-if: the same jobs or preset on each `--target` in turn (one saved run each), then one
/// comparison of them all: the `compare` table with ratios to the first target, the JSON of
/// every run, and one `--report` charting them together. Every target is checked before the
/// first runs (bad input: one line, exit 2, nothing run). A target whose jobs fail, or an
/// interruption, still writes every finished target's results to every output, then fails
/// the command (exit 1) with the first error, naming its target.
fn what_if(args: RunArgs, clients: Option<&Clients<'_>>) -> Result<(), Failure> {
    if args.pcap.is_some() {
        return Err(bad_input(
            "--pcap: a capture holds one simulated target's USB session; give one --target",
        ));
    }
    // The failing target's error, naming the target once (a path error starts with the path).
    let named = |text: &OsStr, failure: Failure| {
        let shown = Path::new(text).display().to_string();
        let name = |message: String| {
            if message.starts_with("--target ") || message.contains(&format!(" on {shown}: ")) {
                // Already named (a job's failure names its target).
                message
            } else if message.starts_with(&format!("{shown}: ")) {
                format!("--target {message}")
            } else {
                format!("--target {shown}: {message}")
            }
        };
        match failure {
            Failure::BadInput(message) => Failure::BadInput(name(message)),
            Failure::RunFailed(message) => Failure::RunFailed(name(message)),
        }
    };
    let parts: Vec<RunArgs> = args
        .targets
        .iter()
        .map(|text| RunArgs {
            targets: vec![text.clone()],
            compared: true,
            ..args.clone()
        })
        .collect();
    // Bad input on the last target must not cost the runs on the first ones.
    let checked = parts
        .iter()
        .zip(&args.targets)
        .try_for_each(|(part, text)| check_target(part).map_err(|failure| named(text, failure)));
    if let Some(clients) = clients {
        clients.exchange(
            "targets checked",
            checked
                .as_ref()
                .map(|()| serde_json::Value::Null)
                .map_err(Clone::clone),
        )?;
    }
    checked?;
    let (runs, failure) = match clients {
        Some(clients) => match spread_targets(&args, parts, clients, &named)? {
            Some(runs) => (runs, None),
            // Rank 0 writes the comparison.
            None => return Ok(()),
        },
        None => run_targets_in_turn(&args, parts, &named),
    };
    if runs.is_empty() {
        return Err(failure.unwrap_or_else(|| run_failed("no target ran")));
    }
    // Every finished target's results reach every output, also when a later one failed or
    // the run was interrupted; then the command fails with the first failure, naming it.
    let written = write_what_if(&args, &runs);
    match (failure, written) {
        (None, written) => written,
        (Some(failure), Ok(())) => Err(run_failed(format!(
            "{failure} (the results of the {} target(s) that ran are in the output)",
            runs.len()
        ))),
        (Some(failure), Err(also)) => Err(run_failed(format!(
            "{failure}; writing the results of the targets that ran failed: {also}"
        ))),
    }
}

/// The targets of a what-if comparison one after another in this process: every run that
/// finished or failed part-way with results, labelled, and the first failure, named with its
/// target. A target whose jobs failed does not stop the next (as fio runs the jobs after a
/// failed one); a target that failed without results, or an interruption, does.
fn run_targets_in_turn(
    args: &RunArgs,
    parts: Vec<RunArgs>,
    named: &dyn Fn(&OsStr, Failure) -> Failure,
) -> (Vec<(String, Finished)>, Option<Failure>) {
    let mut runs: Vec<(String, Finished)> = Vec::new();
    let mut first_failure = None;
    for (index, (part, text)) in parts.into_iter().zip(&args.targets).enumerate() {
        if STOP.load(Ordering::Relaxed) {
            break;
        }
        say!(
            "storlab: target {} of {}: {}",
            index + 1,
            args.targets.len(),
            Path::new(text).display()
        );
        match run_on_one_target(part, None) {
            Ok(mut finished) => {
                let failure = finished.failure.take();
                runs.push((run_label(index, &finished), finished));
                if let Some(failure) = failure {
                    first_failure.get_or_insert(named(text, failure));
                }
            }
            Err(failure) => {
                first_failure.get_or_insert(named(text, failure));
                break;
            }
        }
    }
    // Stopped between two targets: the ones that did not run are the failure.
    if first_failure.is_none() && runs.len() < args.targets.len() {
        first_failure = Some(run_failed(format!(
            "interrupted: {} of {} targets ran",
            runs.len(),
            args.targets.len()
        )));
    }
    (runs, first_failure)
}

/// A what-if comparison's outputs: the `compare` table (or the chosen format) on stdout or
/// `--output`, and one `--report` of every run.
fn write_what_if(args: &RunArgs, runs: &[(String, Finished)]) -> Result<(), Failure> {
    let labelled: Vec<(String, RunReport)> = runs
        .iter()
        .map(|(label, finished)| (label.clone(), finished.report.clone()))
        .collect();
    let rendered = match args.output_format {
        OutputFormat::Table => crate::cmd_compare::render(&labelled),
        OutputFormat::Json => what_if_json(&args.targets, runs),
        // One document of every target's jobs in target order: each job names its target.
        OutputFormat::FioJson
        | OutputFormat::FioJsonPlus
        | OutputFormat::Terse
        | OutputFormat::Csv => {
            let mut merged = labelled[0].1.clone();
            for (_, report) in &labelled[1..] {
                merged.jobs.extend(report.jobs.iter().cloned());
                merged.warnings.extend(report.warnings.iter().cloned());
            }
            crate::render::render_report(
                args.output_format,
                &merged,
                fio_echo(args).as_ref(),
                crate::render::job_table,
            )
        }
    };
    crate::output::print_or_write(args.output.as_deref(), &rendered, "--output")?;
    if let Some(path) = &args.report {
        crate::cmd_report::write_report(path, "--report", &labelled)?;
    }
    Ok(())
}

/// Saved runs are labelled by their id, as `compare` labels them; unsaved by position.
fn run_label(index: usize, finished: &Finished) -> String {
    finished
        .run_id
        .map_or_else(|| format!("t{}", index + 1), |id| id.to_string())
}

/// One target's run as it travels to rank 0: its target's index and its report, or (bad
/// input?, message).
type SpreadRun = (usize, Result<RunReport, (bool, String)>);

/// A what-if comparison of simulated targets under mpirun: target `i` runs on rank
/// `i mod size` (unsaved there), every report goes to rank 0, which saves one run per target
/// in target order, as one process would, and returns them all; the other ranks get `None`.
/// The first failing target in order fails the command, with the runs before it saved.
fn spread_targets(
    args: &RunArgs,
    parts: Vec<RunArgs>,
    clients: &Clients<'_>,
    named: &dyn Fn(&OsStr, Failure) -> Failure,
) -> Result<Option<Vec<(String, Finished)>>, Failure> {
    let (rank, size) = (clients.rank() as usize, clients.size() as usize);
    let mine: Vec<SpreadRun> = parts
        .into_iter()
        .zip(&args.targets)
        .enumerate()
        .filter(|(index, _)| index % size == rank)
        .map(|(index, (part, text))| {
            say!(
                "storlab: target {} of {}: {} (rank {rank})",
                index + 1,
                args.targets.len(),
                Path::new(text).display()
            );
            let part = RunArgs {
                no_db: true,
                ..part
            };
            let outcome = run_on_one_target(part, None)
                .and_then(|finished| match finished.failure {
                    Some(failure) => Err(failure),
                    None => Ok(finished.report),
                })
                .map_err(|failure| {
                    let failure = named(text, failure);
                    (matches!(failure, Failure::BadInput(_)), failure.to_string())
                });
            (index, outcome)
        })
        .collect();
    let part = serde_json::to_value(&mine)
        .map_err(|error| run_failed(format!("cannot encode this rank's runs: {error}")));
    let heard = clients.exchange("targets run", part)?;
    if !clients.reports() {
        return Ok(None);
    }
    let mut outcomes: Vec<Option<Result<RunReport, Failure>>> =
        args.targets.iter().map(|_| None).collect();
    for (from_rank, value) in heard.into_iter().enumerate() {
        let runs: Vec<SpreadRun> = serde_json::from_value(value).map_err(|error| {
            run_failed(format!(
                "rank {from_rank}: its runs cannot be read: {error}"
            ))
        })?;
        for (index, outcome) in runs {
            if let Some(slot) = outcomes.get_mut(index) {
                *slot = Some(outcome.map_err(|(bad, message)| match bad {
                    true => bad_input(message),
                    false => run_failed(message),
                }));
            }
        }
    }
    let preset = args
        .preset
        .as_deref()
        .and_then(|name| storlab_job::preset::load(name).ok())
        .map(|preset| preset.name);
    let mut runs = Vec::with_capacity(outcomes.len());
    for (index, outcome) in outcomes.into_iter().enumerate() {
        let report = outcome.unwrap_or_else(|| Err(run_failed("a target was run by no rank")))?;
        let mut recorder = crate::db_support::recorder_for_run(
            &args.db,
            args.no_db,
            preset.clone(),
            report.started_unix_ms,
        )?;
        if let Some(recorder) = &mut recorder {
            for job in &report.jobs {
                recorder.record(job);
            }
        }
        crate::db_support::finish_run(&mut recorder, false, false, &report.warnings)?;
        let finished = Finished::complete(report, recorder.as_ref().and_then(|r| r.run_id()));
        runs.push((run_label(index, &finished), finished));
    }
    Ok(Some(runs))
}

/// `--pcap` records a simulated USB session: refused before anything runs when no job runs on
/// a simulated stack, or every simulated stack is SATA (no USB link to capture), rather than
/// after the run has been measured.
fn check_pcap_has_usb(args: &RunArgs, set: &storlab_job::JobSet) -> Result<(), Failure> {
    let stacks: Vec<&str> = set
        .jobs
        .iter()
        .filter(|j| j.engine == EngineKind::Sim)
        .filter_map(|j| match &j.target {
            Target::Sim(stack) => Some(stack.as_str()),
            _ => None,
        })
        .collect();
    if stacks.is_empty() {
        return Err(bad_input(
            "--pcap: only simulated targets (sim:STACK) have a USB session to record",
        ));
    }
    let dir = storlab_lab::stacks::profiles_dir(args.profiles.as_deref()).map_err(bad_input)?;
    let profiles = storlab_engine::engines::sim::load_profiles(&dir).map_err(bad_input)?;
    let mut sata_only = None;
    for stack in stacks {
        // A stack that does not resolve is refused, with its own message, when it is opened.
        match profiles.resolve(stack) {
            Ok(spec) if spec.usb_link.is_none() => sata_only = Some(stack),
            _ => return Ok(()),
        }
    }
    match sata_only {
        Some(stack) => Err(bad_input(format!(
            "--pcap: sim:{stack} is a SATA stack, with no USB session to record; drop --pcap \
             or run a USB stack"
        ))),
        None => Ok(()),
    }
}

/// A what-if target's bad input, found before anything runs: the target itself (a stack that
/// cannot open or take the fault plan, a file that cannot be created), and the job set read
/// against it (a job file or flags; a preset's points are checked as its run starts) with
/// each job's file target and the device guard of a block device a job writes.
fn check_target(part: &RunArgs) -> Result<(), Failure> {
    let target = part.target().map(target_of).transpose()?;
    match &target {
        // Opened as the run will open it: an unknown stack, one whose profiles are broken, or
        // one that cannot take the `--faults` plan (a kind its transport does not have).
        Some(Target::Sim(stack)) => {
            storlab_lab::stacks::check_sim(stack, part.profiles.as_deref(), part.faults.as_deref())?
        }
        Some(Target::Path(path)) => check_target_path(path, true)?,
        _ => {}
    }
    if part.preset.is_none() {
        let (set, _) = load_jobs(part)?;
        crate::run_paths::check_job_paths(part, &set)?;
        for job in &set.jobs {
            if let Target::Path(path) = &job.target {
                check_target_path(path, job.allow_file_create)?;
                // As the provider decides whether the job writes its target.
                if job.read_percent < 100 || job.verify {
                    check_device_guard(path, part.destructive.as_deref())?;
                }
            }
        }
    }
    Ok(())
}

/// The device guard's refusal of a block device a job would write (a signature, partitions,
/// a mount or a holder, unless `--destructive` names it), found before the first target runs
/// with a read-only look; the run checks it again on the descriptor it writes through.
fn check_device_guard(path: &Path, destructive: Option<&Path>) -> Result<(), Failure> {
    use std::os::unix::fs::FileTypeExt;
    let is_block_device = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device());
    if !is_block_device {
        return Ok(());
    }
    let file = std::fs::File::open(path)
        .map_err(|error| bad_input(format!("{}: {error}", path.display())))?;
    storlab_engine::safety::check_writable(&file, path, destructive).map_err(bad_input)
}

/// A file target that the run could not open, found before the first target runs: a missing
/// file in a directory that does not exist, or one the job may not create
/// (`allow_file_create=0`). Sizes are checked as each target opens.
fn check_target_path(path: &Path, may_create: bool) -> Result<(), Failure> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Ok(());
    }
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(bad_input(format!(
            "{}: no such file, and its directory {} does not exist",
            path.display(),
            parent.display()
        )));
    }
    if !may_create {
        return Err(bad_input(format!(
            "{}: no such file, and allow_file_create=0 forbids creating it",
            path.display()
        )));
    }
    Ok(())
}

/// The native JSON of a what-if run: `{"what_if": [{"target", "run", "report"}, ...]}`, one
/// entry per `--target` in the order given, each `report` a whole native report
/// (docs/json-output.md).
fn what_if_json(targets: &[std::ffi::OsString], runs: &[(String, Finished)]) -> String {
    let entries: Vec<serde_json::Value> = targets
        .iter()
        .zip(runs)
        .map(|(text, (_, finished))| {
            serde_json::json!({
                "target": text.to_string_lossy(),
                "run": finished.run_id.map(|id| id.to_string()),
                "report": finished.report,
            })
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&serde_json::json!({ "what_if": entries }))
        .unwrap_or_default();
    text.push('\n');
    text
}
