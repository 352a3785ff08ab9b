//! `storlab run`: resolves its arguments once into a [`RunPlan`], builds the job set (fio file,
//! fio-style flags, or the built-in quick set), runs it, and writes the results in the chosen
//! format. Ctrl-C stops the run, keeps the finished jobs and removes storlab's temporary files.

use crate::args::{OutputFormat, RunArgs};
use crate::clients::Clients;
use crate::db_support::RunRecorder;
use crate::exit::{bad_input, run_failed, Failure};
use crate::run_plan::{RunKind, RunPlan, TargetRun, Work};
use crate::run_session::{arm_interrupt_handler, session, target_of, Finished, STOP};
use crate::run_sink::CliSink;
use crate::say::say;
use std::path::Path;
use std::sync::atomic::Ordering;
use storlab_job::{EngineKind, JobSet, Target};
use storlab_lab::classify;
use storlab_lab::provider::Provider;
use storlab_lab::run::JobSetRun;
use storlab_lab::what_if::{conclude, name_failure, run_label};
use storlab_report::{JobReport, RunReport};

pub fn run(args: RunArgs, clients: Option<&Clients<'_>>) -> Result<(), Failure> {
    // fio's help switches print and exit before anything else is looked at, as fio's do.
    if let Some(key) = &args.cmdhelp {
        return crate::output::print(&crate::fio_help::cmdhelp(key.as_deref())?);
    }
    if let Some(engine) = &args.enghelp {
        return crate::output::print(&crate::fio_help::enghelp(engine.as_deref())?);
    }
    let plan = RunPlan::resolve(args)?;
    run_plan(&plan, clients)
}

/// The resolved run, by kind.
fn run_plan(plan: &RunPlan, clients: Option<&Clients<'_>>) -> Result<(), Failure> {
    if let Some(clients) = clients {
        let checks_only = matches!(plan.kind, RunKind::ShowCommand | RunKind::ParseOnly);
        if checks_only || single_process(plan)? {
            // Nothing to spread over the clients: rank 0 does it alone, as a run by hand.
            return match clients.reports() {
                true => run_plan(plan, None),
                false => Ok(()),
            };
        }
    }
    match plan.kind {
        RunKind::ShowCommand => showcmd(plan),
        RunKind::ParseOnly => parse_only(plan),
        RunKind::OneTarget => {
            crate::run_paths::check_run_outputs(plan)?;
            run_on_one_target(plan.only_target(), clients).map(|_| ())
        }
        RunKind::WhatIf => {
            crate::run_paths::check_run_outputs(plan)?;
            what_if(plan, clients)
        }
    }
}

/// fio's `--parse-only`: read and check the jobs on every target, run nothing.
fn parse_only(plan: &RunPlan) -> Result<(), Failure> {
    if plan.preset().is_some() {
        return Err(bad_input(
            "--parse-only: reads a job file or job flags, not a preset",
        ));
    }
    if plan.targets.is_empty() {
        return plan.only_target().load_jobs().map(|_| ());
    }
    for target in &plan.targets {
        plan.part(Some(target)).load_jobs()?;
    }
    Ok(())
}

/// A run on one target (or the default temporary file): writes its outputs unless it is part
/// of a what-if comparison ([`TargetRun::compared`]), then hands back its results. With
/// `clients` (a multi-client run under mpirun), every client runs the jobs on its own target,
/// all start each stonewall group together, and rank 0 writes the aggregate and saves the one
/// run.
fn run_on_one_target(
    mut part: TargetRun<'_>,
    clients: Option<&Clients<'_>>,
) -> Result<Finished, Failure> {
    if let Work::Sweep(sweep) = &part.plan.work {
        return crate::preset_run::run(&part, sweep);
    }
    let reports = clients.is_none_or(Clients::reports);
    let started_unix_ms = crate::db_support::now_unix_ms();
    let prepared = prepare_job_set(&mut part, reports, started_unix_ms);
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
    let PreparedSet {
        mut set,
        builtin,
        mut recorder,
    } = prepared?;
    if let Some(clients) = clients {
        clients.localize(&mut set);
        if let Some(recorder) = &mut recorder {
            recorder.set_hostname(clients.hosts_label());
        }
    }
    arm_interrupt_handler();
    let mut session = session(part.plan, builtin);
    session.started_unix_ms = started_unix_ms;
    if let Some(clients) = clients {
        session.peers = Some(clients);
    }
    let mut sink = CliSink::new(recorder);
    // Only the client that writes the outputs prints fio's reports.
    let mut status = match reports {
        true => fio_status(part.plan, &set, started_unix_ms),
        false => None,
    };
    let (run, handed_on) = run_job_set(&set, &session, &mut sink, clients);
    if let Some(status) = status.as_mut() {
        status.finish();
    }
    let mut ended = SetEnd::from(run, set.jobs.len());
    if let Some(clients) = clients {
        ended.finish_clients(clients, handed_on);
        if !clients.reports() {
            // Rank 0 writes the outputs; the others end here.
            return ended.end_on_other_rank();
        }
    }
    match ended.error.take() {
        Some(error) => ended.failed(&part, &mut sink, error),
        None => ended.succeeded(&part, &mut sink),
    }
}

/// fio's reports of the running jobs every `--status-interval`, when the output is one of
/// fio's formats (`fio_status.rs`).
fn fio_status(
    plan: &RunPlan,
    set: &JobSet,
    started_unix_ms: u64,
) -> Option<crate::fio_status::FioStatus> {
    let outputs = &plan.outputs;
    let interval = plan.fio.status_interval?;
    let one_job_set = matches!(plan.work, Work::Jobs) && matches!(plan.kind, RunKind::OneTarget);
    if !one_job_set || !crate::fio_status::wanted(outputs.format, Some(interval)) {
        return None;
    }
    crate::fio_status::FioStatus::start(crate::fio_status::Reporting {
        set: set.clone(),
        formats: std::iter::once(outputs.format)
            .chain(outputs.also.iter().copied())
            .collect(),
        echo: fio_echo(plan),
        output: outputs.output.clone(),
        started_unix_ms,
        interval,
    })
}

/// A job set read and checked, ready to run, with its recorder (none when unsaved).
struct PreparedSet {
    set: JobSet,
    /// Whether it is the built-in quick set.
    builtin: bool,
    recorder: Option<RunRecorder>,
}

/// The job set of a run with its checks, and its recorder (`reports`: this process saves the
/// run; a multi-client run's other ranks do not). A what-if target's set was read and checked
/// before the first target ran, and is taken as it is.
fn prepare_job_set(
    part: &mut TargetRun<'_>,
    reports: bool,
    started_unix_ms: u64,
) -> Result<PreparedSet, Failure> {
    let checked = part.checked_jobs.take();
    let paths_checked = checked.is_some();
    let (set, builtin) = match checked {
        Some(checked) => checked,
        None => part.load_jobs()?,
    };
    let plan = part.plan;
    if plan.outputs.pcap.is_some() {
        check_pcap_has_usb(plan, &set)?;
    }
    if !paths_checked {
        crate::run_paths::check_job_paths(part, &set)?;
    }
    if let Some(faults) = plan.faults.as_deref() {
        storlab_lab::fault_places::check_placed_faults(&set, faults).map_err(bad_input)?;
    }
    // fio's conventions keep storlab's advice out of stderr: it stays in the output.
    if reports && !plan.fio.as_fio {
        for job in &set.jobs {
            for warning in &job.warnings {
                say!("storlab: warning: job '{}': {warning}", job.name);
            }
        }
    }
    let recorder = crate::db_support::recorder_for_run(
        &plan.db,
        part.no_db || !reports,
        None,
        started_unix_ms,
    )?;
    Ok(PreparedSet {
        set,
        builtin,
        recorder,
    })
}

/// Runs `set` on `session`; with `clients`, through the multi-client sink, whose aggregates
/// (rank 0's) come back beside the run.
fn run_job_set(
    set: &JobSet,
    session: &storlab_lab::run::Session<'_>,
    sink: &mut CliSink,
    clients: Option<&Clients<'_>>,
) -> (JobSetRun, Option<Vec<JobReport>>) {
    match clients {
        Some(clients) => {
            let mut shared = crate::clients::ClientsSink {
                inner: sink,
                clients,
                handed_on: Vec::new(),
            };
            let run = storlab_lab::run::run_job_set(set, session, &mut shared);
            (run, Some(shared.handed_on))
        }
        None => (storlab_lab::run::run_job_set(set, session, sink), None),
    }
}

/// A job set's run as it ended: its results, the provider (dropped to delete the temporary
/// files), and what stopped it.
struct SetEnd {
    report: RunReport,
    provider: Provider,
    error: Option<Failure>,
    interrupted: bool,
    /// Jobs finished, of `total`.
    complete: usize,
    total: usize,
    unfired_faults: Vec<String>,
}

impl SetEnd {
    fn from(run: JobSetRun, total: usize) -> SetEnd {
        SetEnd {
            report: run.report,
            provider: run.provider,
            error: run.error.map(classify),
            interrupted: run.interrupted,
            complete: run.complete,
            total,
            unfired_faults: run.unfired_faults,
        }
    }

    /// A multi-client run's end: every client's error is the first failing client's, named;
    /// rank 0 takes the aggregates (`handed_on`) as its jobs, to write the outputs.
    fn finish_clients(&mut self, clients: &Clients<'_>, handed_on: Option<Vec<JobReport>>) {
        let ended = match self.error.take() {
            Some(failure) => Err(failure),
            None => Ok(()),
        };
        self.error = clients.finish(ended).err();
        if let Some(handed_on) = handed_on.filter(|_| clients.reports()) {
            self.report.jobs = handed_on;
            self.report.host.hostname = clients.hosts_label();
        }
    }

    /// A multi-client run's end on a rank other than 0, which writes nothing: its temporary
    /// files deleted, its run ends as rank 0 says it did.
    fn end_on_other_rank(self) -> Result<Finished, Failure> {
        let SetEnd {
            report,
            provider,
            error,
            ..
        } = self;
        drop(provider);
        match error {
            // Jobs finished before it: a failed run (exit 1), as rank 0 says.
            Some(failure) if !report.jobs.is_empty() => Err(run_failed(failure.to_string())),
            Some(failure) => Err(failure),
            None => Ok(Finished::complete(report, None)),
        }
    }

    /// A run that `error` stopped: the jobs that finished were measured, so their results are
    /// written as a complete run's would be, and the run failed (exit 1) whatever stopped it.
    fn failed(
        self,
        part: &TargetRun<'_>,
        sink: &mut CliSink,
        error: Failure,
    ) -> Result<Finished, Failure> {
        let SetEnd {
            report,
            mut provider,
            ..
        } = self;
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
        let done = report.jobs.len();
        let run_id = sink.run_id();
        let written = write_outputs(part, &report, run_id, &mut provider);
        drop(provider); // deletes temporary files
        if part.compared() {
            // The comparison writes them with the other targets' and reports the failure.
            written?;
            let run_id = run_id.map(|id| id.to_string());
            return Finished::compared_part(report, run_id, run_failed(error.to_string()));
        }
        let failed =
            format!("{error} (the results of the {done} job(s) that ran are in the output)");
        Err(match written {
            Ok(()) => run_failed(failed),
            Err(also) => run_failed(format!("{failed}; writing them failed: {also}")),
        })
    }

    /// A run that ended without an error: saved as finished before the output is written,
    /// whatever becomes of stdout; then what still fails it (exit 1) once the results are out:
    /// points missing from the database, a log that could not be written, an interruption, a
    /// placed fault that never fired.
    fn succeeded(self, part: &TargetRun<'_>, sink: &mut CliSink) -> Result<Finished, Failure> {
        let SetEnd {
            report,
            mut provider,
            interrupted,
            complete,
            total,
            unfired_faults,
            ..
        } = self;
        let saved =
            crate::db_support::finish_run(&mut sink.recorder, false, interrupted, &report.warnings);
        let written = write_outputs(part, &report, sink.run_id(), &mut provider);
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
        let run_id = sink.run_id().map(|id| id.to_string());
        let cut_short = if interrupted && STOP.load(Ordering::Relaxed) {
            Some(run_failed(format!(
                "interrupted: {complete} of {total} jobs finished and are reported above"
            )))
        } else if !unfired_faults.is_empty() {
            // The results are out (and saved); the run did not test what its plan asked.
            Some(run_failed(format!(
                "{} placed fault(s) never fired: {}",
                unfired_faults.len(),
                unfired_faults.join(", ")
            )))
        } else {
            None
        };
        match cut_short {
            Some(failure) if part.compared() => Finished::compared_part(report, run_id, failure),
            Some(failure) => Err(failure),
            None => Ok(Finished::complete(report, run_id)),
        }
    }
}

/// Whether a run under mpirun is one for rank 0 alone: a sweep (`--preset`, `--state`, trims
/// between steps) on one simulated target, whose points follow one another on one simulated
/// stack's state and so cannot be split (docs/distributed.md). A what-if comparison of several
/// simulated targets is spread over the ranks, a target each (`what_if`). The same on a real
/// target is refused: every client would measure it, and none of that would be merged.
fn single_process(plan: &RunPlan) -> Result<bool, Failure> {
    let sweep = matches!(plan.work, Work::Sweep(_));
    if !sweep && plan.targets.len() < 2 {
        return Ok(false);
    }
    let all_simulated = !plan.targets.is_empty()
        && plan
            .targets
            .iter()
            .all(|text| matches!(target_of(text), Ok(Target::Sim(_))));
    if all_simulated {
        Ok(plan.targets.len() < 2)
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
    part: &TargetRun<'_>,
    report: &RunReport,
    run_id: Option<storlab_db::RunId>,
    provider: &mut Provider,
) -> Result<(), Failure> {
    let outputs = &part.plan.outputs;
    // Under fio's conventions (`storlab fio`) stderr stays as quiet as fio's: every warning is
    // in the output (the table's notes, fio-json's `storlab_warnings`).
    let quiet = part.plan.fio.as_fio;
    for warning in report.warnings.iter().filter(|_| !quiet) {
        say!("storlab: warning: {warning}");
    }
    // The table lists the jobs' warnings under it; machine formats carry them in their data,
    // which a person may never read, so they are said on stderr as well.
    if outputs.format != OutputFormat::Table && !quiet {
        for job in &report.jobs {
            for warning in &job.notes.warnings {
                say!("storlab: warning: job '{}': {warning}", job.setup.name);
            }
        }
    }
    if part.compared() {
        return Ok(());
    }
    if let Some(pcap_path) = &outputs.pcap {
        crate::output::write_file(pcap_path, &provider.take_pcap()?, "--pcap")?;
    }
    let echo = fio_echo(part.plan);
    let formats: Vec<OutputFormat> = std::iter::once(outputs.format)
        .chain(outputs.also.iter().copied())
        .collect();
    // fio prints its jobs' lines and "Starting N processes" first when its human report is
    // among the outputs, before any other format (before the first interim report, if any).
    let interim_written = crate::fio_status::written();
    let mut rendered = match formats.contains(&OutputFormat::FioNormal) && !interim_written {
        true => storlab_report::to_fio_normal_preamble(report, echo.as_ref(), std::process::id()),
        false => String::new(),
    };
    for format in formats {
        rendered.push_str(&crate::render::render_report(
            format,
            report,
            echo.as_ref(),
            crate::render::job_table,
        ));
    }
    match outputs.output.as_deref() {
        // The final report follows the interim ones in the file, as fio's.
        Some(path) if interim_written => {
            crate::output::append_file(path, rendered.as_bytes(), "--output")?
        }
        path => crate::output::print_or_write(path, &rendered, "--output")?,
    }
    if let Some(path) = &outputs.report {
        let label = run_id.map_or("this run".into(), |id| id.to_string());
        crate::cmd_report::write_report(path, "--report", &[(label, report.clone())])?;
    }
    Ok(())
}

/// fio's `--showcmd`: the job file (or flags) as one fio command line, after checking it.
fn showcmd(plan: &RunPlan) -> Result<(), Failure> {
    if plan.preset().is_some() {
        return Err(bad_input(
            "--showcmd: shows a job file or job flags, not a preset",
        ));
    }
    plan.only_target().load_jobs()?;
    let written = plan
        .jobs
        .written_options()
        .ok_or_else(|| bad_input("--showcmd: the job file could not be read"))?;
    let mut line = String::from("fio");
    for argument in &written.arguments {
        line.push(' ');
        line.push_str(argument);
    }
    line.push('\n');
    crate::output::print_or_write(plan.outputs.output.as_deref(), &line, "--output")
}

/// The job file's options as written, for the fio-shaped JSON (none without a job file, and
/// none for a preset, whose points are not written options of a job set).
fn fio_echo(plan: &RunPlan) -> Option<storlab_report::FioEcho> {
    if plan.preset().is_some() {
        return None;
    }
    plan.jobs
        .written_options()
        .map(|written| storlab_report::FioEcho {
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
fn what_if(plan: &RunPlan, clients: Option<&Clients<'_>>) -> Result<(), Failure> {
    if plan.outputs.pcap.is_some() {
        return Err(bad_input(
            "--pcap: a capture holds one simulated target's USB session; give one --target",
        ));
    }
    let mut parts: Vec<TargetRun<'_>> = plan
        .targets
        .iter()
        .map(|text| plan.part(Some(text)))
        .collect();
    // Bad input on the last target must not cost the runs on the first ones.
    let checked = parts.iter_mut().try_for_each(|part| {
        part.checked_jobs = check_target(part)
            .map_err(|failure| name_failure(part.target.unwrap_or_default(), failure))?;
        Ok(())
    });
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
        Some(clients) => match spread_targets(plan, parts, clients)? {
            Some(runs) => (runs, None),
            // Rank 0 writes the comparison.
            None => return Ok(()),
        },
        None => run_targets_in_turn(plan, parts),
    };
    if runs.is_empty() {
        return Err(failure.unwrap_or_else(|| run_failed("no target ran")));
    }
    // Every finished target's results reach every output, also when a later one failed or
    // the run was interrupted; then the command fails with the first failure, naming it.
    let written = write_what_if(plan, &runs);
    conclude(runs.len(), failure, written)
}

/// The targets of a what-if comparison one after another in this process
/// (`storlab_lab::what_if::run_in_turn`), each announced as it starts.
fn run_targets_in_turn(
    plan: &RunPlan,
    parts: Vec<TargetRun<'_>>,
) -> (Vec<(String, Finished)>, Option<Failure>) {
    let mut parts = parts.into_iter();
    storlab_lab::what_if::run_in_turn(&plan.targets, &STOP, |index, text| {
        say!(
            "storlab: target {} of {}: {}",
            index + 1,
            plan.targets.len(),
            Path::new(text).display()
        );
        let part = parts.next().ok_or_else(|| run_failed("no target ran"))?;
        run_on_one_target(part, None)
    })
}

/// A what-if comparison's outputs: the `compare` table (or the chosen format) on stdout or
/// `--output`, and one `--report` of every run.
fn write_what_if(plan: &RunPlan, runs: &[(String, Finished)]) -> Result<(), Failure> {
    let outputs = &plan.outputs;
    let labelled: Vec<(String, RunReport)> = runs
        .iter()
        .map(|(label, finished)| (label.clone(), finished.report.clone()))
        .collect();
    let rendered = match outputs.format {
        OutputFormat::Table => crate::cmd_compare::render(&labelled),
        OutputFormat::Json => what_if_json(&plan.targets, runs),
        // One document of every target's jobs in target order: each job names its target.
        OutputFormat::FioJson
        | OutputFormat::FioJsonPlus
        | OutputFormat::FioNormal
        | OutputFormat::Terse
        | OutputFormat::Csv => {
            let mut merged = labelled[0].1.clone();
            for (_, report) in &labelled[1..] {
                merged.jobs.extend(report.jobs.iter().cloned());
                merged.warnings.extend(report.warnings.iter().cloned());
            }
            crate::render::render_report(
                outputs.format,
                &merged,
                fio_echo(plan).as_ref(),
                crate::render::job_table,
            )
        }
    };
    crate::output::print_or_write(outputs.output.as_deref(), &rendered, "--output")?;
    if let Some(path) = &outputs.report {
        crate::cmd_report::write_report(path, "--report", &labelled)?;
    }
    Ok(())
}

/// A what-if comparison of simulated targets under mpirun: each rank runs its share of the
/// targets (`storlab_lab::what_if::spread_share`, unsaved there), every report goes to rank 0,
/// which saves one run per target in target order, as one process would, and returns them
/// all; the other ranks get `None`. The first failing target in order fails the command, with
/// the runs before it saved.
fn spread_targets(
    plan: &RunPlan,
    parts: Vec<TargetRun<'_>>,
    clients: &Clients<'_>,
) -> Result<Option<Vec<(String, Finished)>>, Failure> {
    use storlab_lab::what_if::{encode_share, gather_shares, spread_share};
    let (rank, size) = (clients.rank() as usize, clients.size() as usize);
    let share = spread_share(parts.len(), rank, size);
    let mine = parts
        .into_iter()
        .enumerate()
        .filter(|(index, _)| share.contains(index))
        .map(|(index, part)| {
            say!(
                "storlab: target {} of {}: {} (rank {rank})",
                index + 1,
                plan.targets.len(),
                Path::new(part.target.unwrap_or_default()).display()
            );
            let part = TargetRun {
                no_db: true,
                ..part
            };
            let outcome =
                run_on_one_target(part, None).and_then(|finished| match finished.failure {
                    Some(failure) => Err(failure),
                    None => Ok(finished.report),
                });
            (index, outcome)
        })
        .collect();
    let heard = clients.exchange("targets run", encode_share(&plan.targets, mine))?;
    if !clients.reports() {
        return Ok(None);
    }
    let outcomes = gather_shares(heard, plan.targets.len())?;
    let mut runs = Vec::with_capacity(outcomes.len());
    for (index, outcome) in outcomes.into_iter().enumerate() {
        let finished = save_spread_run(plan, outcome?)?;
        runs.push((run_label(index, &finished), finished));
    }
    Ok(Some(runs))
}

/// Rank 0 saves one target's run of a spread comparison, as one process would have.
fn save_spread_run(plan: &RunPlan, report: RunReport) -> Result<Finished, Failure> {
    let preset = plan
        .preset()
        .and_then(|name| storlab_job::preset::load(name).ok())
        .map(|preset| preset.name);
    let mut recorder =
        crate::db_support::recorder_for_run(&plan.db, plan.no_db, preset, report.started_unix_ms)?;
    if let Some(recorder) = &mut recorder {
        for job in &report.jobs {
            recorder.record(job);
        }
    }
    crate::db_support::finish_run(&mut recorder, false, false, &report.warnings)?;
    let run_id = recorder
        .as_ref()
        .and_then(|r| r.run_id())
        .map(|id| id.to_string());
    Ok(Finished::complete(report, run_id))
}

/// `--pcap` records a simulated USB session: refused before anything runs when no job runs on
/// a simulated stack, or every simulated stack is SATA (no USB link to capture), rather than
/// after the run has been measured.
fn check_pcap_has_usb(plan: &RunPlan, set: &JobSet) -> Result<(), Failure> {
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
    let dir = storlab_lab::stacks::profiles_dir(plan.profiles.as_deref()).map_err(bad_input)?;
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
/// each job's file target and the device guard of a block device a job writes. The job set
/// read is handed to the target's run (`None` for a preset).
fn check_target(part: &TargetRun<'_>) -> Result<Option<(JobSet, bool)>, Failure> {
    let plan = part.plan;
    let target = part.target.map(target_of).transpose()?;
    match &target {
        // Opened as the run will open it: an unknown stack, one whose profiles are broken, or
        // one that cannot take the `--faults` plan (a kind its transport does not have).
        Some(Target::Sim(stack)) => {
            storlab_lab::stacks::check_sim(stack, plan.profiles.as_deref(), plan.faults.as_deref())?
        }
        Some(Target::Path(path)) => check_target_path(path, true)?,
        _ => {}
    }
    if plan.preset().is_some() {
        return Ok(None);
    }
    let (set, builtin) = part.load_jobs()?;
    crate::run_paths::check_job_paths(part, &set)?;
    for job in &set.jobs {
        if let Target::Path(path) = &job.target {
            check_target_path(path, job.allow_file_create)?;
            // As the provider decides whether the job writes its target.
            if job.read_percent < 100 || job.verify {
                check_device_guard(path, plan.destructive.as_deref())?;
            }
        }
    }
    Ok(Some((set, builtin)))
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
            let mut entry = serde_json::json!({
                "target": text.to_string_lossy(),
                "run": finished.run_id,
                "report": finished.report,
            });
            // With `--repeat`, each target's report carries its repeats' statistics, as a
            // single run's JSON does.
            let repeats = storlab_report::summarise_repeats(&finished.report.jobs);
            if !repeats.is_empty() {
                entry["report"]["repeats"] = serde_json::to_value(repeats).unwrap_or_default();
            }
            entry
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&serde_json::json!({ "what_if": entries }))
        .unwrap_or_default();
    text.push('\n');
    text
}
