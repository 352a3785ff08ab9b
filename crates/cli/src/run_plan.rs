//! `storlab run`'s arguments resolved once, before anything runs (ripgrep's `LowArgs → HiArgs`;
//! docs/decisions/0027): what kind of run it is, where its jobs come from (the job file is read
//! once, the first time a step needs it, and kept), what it measures (a job set or a sweep), its
//! outputs and the session's options. Everything below `cmd_run::run` takes the plan, or one
//! target's part of it ([`TargetRun`]), never clap's `RunArgs`.

use crate::args::{DbArgs, OutputFormat, RunArgs};
use crate::exit::{bad_input, Failure};
use crate::run_session::target_of;
use std::cell::OnceCell;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use storlab_job::{JobSet, Target};

/// The built-in quick set, a real fio job file parsed like any other.
const DEFAULT_JOB_FILE: &str = include_str!("default.fio");
const DEFAULT_JOB_FILE_NAME: &str = "<built-in quick set>";

/// `storlab run`, resolved.
pub(crate) struct RunPlan {
    pub kind: RunKind,
    pub jobs: JobSource,
    pub work: Work,
    pub outputs: Outputs,
    pub targets: Vec<OsString>,
    pub db: DbArgs,
    pub no_db: bool,
    /// The device named with `--destructive`.
    pub destructive: Option<PathBuf>,
    /// `--profiles`.
    pub profiles: Option<PathBuf>,
    /// `--faults`.
    pub faults: Option<Box<storlab_sim::FaultPlan>>,
    /// `--repeat`: how many times each job runs (1: once, as written).
    pub repeat: u32,
    /// fio's switches of the whole command line.
    pub fio: FioSwitches,
}

/// fio's command-line switches over every job: `--readonly`, `--warnings-fatal`, and fio's
/// conventions as a whole (`storlab fio`).
pub(crate) struct FioSwitches {
    /// `storlab fio`: fio's quiet stderr; storlab's advice stays in the output.
    pub as_fio: bool,
    pub readonly: bool,
    pub warnings_fatal: bool,
    /// `--status-interval`: with fio's formats, fio's report of the running jobs every
    /// interval (`fio_status.rs`); otherwise the live view's status line.
    pub status_interval: Option<std::time::Duration>,
}

impl FioSwitches {
    /// Refuses what the switches forbid, as fio refuses it before running anything: a job that
    /// writes or trims under `--readonly`, a job with a warning under `--warnings-fatal`.
    fn check(&self, set: &JobSet) -> Result<(), Failure> {
        for job in &set.jobs {
            if self.readonly && job.read_percent < 100 {
                return Err(bad_input(format!(
                    "--readonly: job '{}' writes or trims (rw={}); fio refuses trim and write operations with --readonly",
                    job.name,
                    job.rw_name()
                )));
            }
            if let Some(warning) = job.warnings.first().filter(|_| self.warnings_fatal) {
                return Err(bad_input(format!(
                    "--warnings-fatal: job '{}': {warning}",
                    job.name
                )));
            }
        }
        Ok(())
    }
}

/// What `run` does with its jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RunKind {
    /// fio's `--showcmd`: the jobs as one fio command line, nothing run.
    ShowCommand,
    /// fio's `--parse-only`: the jobs read and checked on every target, nothing run.
    ParseOnly,
    /// One target (or the default temporary file): its run writes the outputs.
    OneTarget,
    /// Several `--target`s: each target's run hands its results back, and one comparison of
    /// them all writes the outputs.
    WhatIf,
}

/// What a run on one target measures.
pub(crate) enum Work {
    /// The job set (a job file, job flags or the built-in quick set), as written.
    Jobs,
    /// A sweep: a preset (FC-Test when its target is a directory), a device state or trims
    /// between steps.
    Sweep(SweepRequest),
}

/// A sweep's flags as given (each checked where the sweep starts, in the order it always was).
pub(crate) struct SweepRequest {
    pub preset: Option<String>,
    pub state: Option<String>,
    pub trim_between_steps: bool,
    /// FC-Test on a directory: where the copy-across phase copies to.
    pub second_dir: Option<PathBuf>,
}

/// Where the results go.
pub(crate) struct Outputs {
    pub format: OutputFormat,
    /// Formats written after `format` into the same output (fio's comma list).
    pub also: Vec<OutputFormat>,
    /// `--output` (stdout without it).
    pub output: Option<PathBuf>,
    /// `--report`: the HTML report.
    pub report: Option<PathBuf>,
    /// `--pcap`: the simulated USB session.
    pub pcap: Option<PathBuf>,
}

impl RunPlan {
    /// Resolves clap's arguments (with the job flags `main` split off). `--section` without a
    /// job file is refused here, before anything else is looked at.
    pub(crate) fn resolve(args: RunArgs) -> Result<RunPlan, Failure> {
        if !args.sections.is_empty() && args.job_file.is_none() {
            return Err(bad_input(
                "--section: selects sections of a job file; give one",
            ));
        }
        let kind = if args.showcmd {
            RunKind::ShowCommand
        } else if args.parse_only {
            RunKind::ParseOnly
        } else if args.targets.len() > 1 {
            RunKind::WhatIf
        } else {
            RunKind::OneTarget
        };
        let sweep = args.preset.is_some() || args.state.is_some() || args.trim_between_steps;
        let work = match sweep {
            true => Work::Sweep(SweepRequest {
                preset: args.preset,
                state: args.state,
                trim_between_steps: args.trim_between_steps,
                second_dir: args.second_dir,
            }),
            false => Work::Jobs,
        };
        Ok(RunPlan {
            kind,
            jobs: JobSource {
                file: args.job_file,
                more_files: args.more_job_files,
                flags: args.job_flags,
                sections: args.sections,
                text: OnceCell::new(),
            },
            work,
            outputs: Outputs {
                // fio's --minimal is its terse output; --append-terse writes it first, then
                // the rest, in fio's print order.
                format: match args.minimal || args.append_terse.is_some() {
                    true => OutputFormat::Terse,
                    false => args.output_format,
                },
                also: match args.append_terse.is_some() && !args.minimal {
                    true => std::iter::once(args.output_format)
                        .chain(args.also_output_format)
                        .filter(|format| *format != OutputFormat::Terse)
                        .collect(),
                    false => args.also_output_format,
                },
                output: args.output,
                report: args.report,
                pcap: args.pcap,
            },
            targets: args.targets,
            db: args.db,
            no_db: args.no_db,
            destructive: args.destructive,
            profiles: args.profiles,
            faults: args.faults,
            repeat: args.repeat,
            fio: FioSwitches {
                as_fio: args.as_fio,
                readonly: args.readonly,
                warnings_fatal: args.warnings_fatal,
                status_interval: args.status_interval,
            },
        })
    }

    /// The preset's name, when the run is one.
    pub(crate) fn preset(&self) -> Option<&str> {
        match &self.work {
            Work::Sweep(sweep) => sweep.preset.as_deref(),
            Work::Jobs => None,
        }
    }

    /// The run on one target: the only one, or the default temporary file without any.
    pub(crate) fn only_target(&self) -> TargetRun<'_> {
        self.part(self.targets.first().map(OsString::as_os_str))
    }

    /// `target`'s part of this plan.
    pub(crate) fn part<'p>(&'p self, target: Option<&'p OsStr>) -> TargetRun<'p> {
        TargetRun {
            plan: self,
            target,
            no_db: self.no_db,
            checked_jobs: None,
        }
    }
}

/// One target's run of a plan: the plan's only target, or one of a what-if comparison's.
pub(crate) struct TargetRun<'p> {
    pub plan: &'p RunPlan,
    /// `None`: the default temporary file.
    pub target: Option<&'p OsStr>,
    /// Runs unsaved (a comparison spread over MPI ranks: rank 0 saves every target's run).
    pub no_db: bool,
    /// The job set already read and checked on this target before the first target ran (a
    /// what-if comparison checks every target first), with whether it is the quick set.
    pub checked_jobs: Option<(JobSet, bool)>,
}

impl TargetRun<'_> {
    /// Whether this run is one target's part of a what-if comparison, which writes the outputs
    /// of every target together: the run hands its results back instead.
    pub(crate) fn compared(&self) -> bool {
        self.plan.kind == RunKind::WhatIf
    }

    /// The job set on this target (see [`JobSource::load`]).
    /// Each job is there `--repeat` times over (`storlab_job::repeat_set`), so every check of
    /// the set sees what runs.
    pub(crate) fn load_jobs(&self) -> Result<(JobSet, bool), Failure> {
        let (set, builtin) = self.plan.jobs.load(self.target)?;
        self.plan.fio.check(&set)?;
        Ok((storlab_job::repeat_set(set, self.plan.repeat), builtin))
    }
}

/// Where a run's jobs come from: a job file (with job flags beside it as global options, and
/// `--section`), job flags alone, or the built-in quick set.
pub(crate) struct JobSource {
    pub file: Option<PathBuf>,
    /// Job files after the first: fio runs each with only its own `[global]`.
    pub more_files: Vec<PathBuf>,
    pub flags: Vec<String>,
    pub sections: Vec<String>,
    /// The job file's text, read the first time a step needs it and kept: one read per run,
    /// however many targets parse it.
    text: OnceCell<Result<String, Failure>>,
}

impl JobSource {
    /// The job file's text (read once), or why it cannot be read, as the job reader says it.
    fn text(&self, path: &Path) -> Result<&str, Failure> {
        let read = self.text.get_or_init(|| read_job_file(path));
        read.as_deref().map_err(Clone::clone)
    }

    /// The job files after the first, each parsed as fio 3.33 parses several (init.c,
    /// `parse_options`): `fill_def_thread` resets the default options before each file after
    /// the first, so neither an earlier file's `[global]` nor the command line's job options
    /// reach it, and `parse_jobs_ini`'s `stonewall_flag` puts its first job after a stonewall.
    /// `--section` selects among the first file's sections alone: fio 3.33 runs every section
    /// of a later file whatever `--section` says (`fio --section=a one.fio two.fio` runs `a`
    /// and all of `two.fio`).
    fn load_more_files(&self, target: Option<&Target>, set: &mut JobSet) -> Result<(), Failure> {
        for path in &self.more_files {
            let text = read_job_file(path)?;
            let file_name = path.display().to_string();
            let more = storlab_job::parse_fio_str_with_flags(&text, &file_name, target, &[])
                .map_err(bad_input)?;
            let mut jobs = more.jobs.into_iter();
            if let Some(mut first) = jobs.next() {
                first.stonewall = true;
                set.jobs.push(first);
            }
            set.jobs.extend(jobs);
        }
        Ok(())
    }

    /// The job set: a job file, job flags, or the built-in quick set when neither is given,
    /// each job on `target` if one was given (read and validated on it: a simulated drive or an
    /// existing file needs no `size`, a temporary file does). `true` for the quick set.
    pub(crate) fn load(&self, target: Option<&OsStr>) -> Result<(JobSet, bool), Failure> {
        let target = target.map(target_of).transpose()?;
        match (&self.file, self.flags.is_empty()) {
            // Job flags beside a job file are global options for it, as on fio's command line.
            (Some(path), _) => {
                let text = self.text(path)?;
                let file_name = path.display().to_string();
                let mut set = storlab_job::parse_fio_str_with_flags(
                    text,
                    &file_name,
                    target.as_ref(),
                    &self.flags,
                )
                .map_err(bad_input)?;
                self.check_sections_exist(path)?;
                self.select_sections(text, &mut set);
                self.load_more_files(target.as_ref(), &mut set)?;
                Ok((set, false))
            }
            (None, false) => Ok((
                storlab_job::parse_flags(&self.flags, target.as_ref()).map_err(bad_input)?,
                false,
            )),
            (None, true) => {
                let target = match target {
                    Some(target) => target,
                    None => Target::TempFileIn(
                        std::env::current_dir()
                            .map_err(|e| bad_input(format!("current directory: {e}")))?,
                    ),
                };
                let mut set = storlab_job::parse_fio_str(
                    DEFAULT_JOB_FILE,
                    DEFAULT_JOB_FILE_NAME,
                    Some(&target),
                )
                .map_err(bad_input)?;
                // The quick set is storlab's own, written in fio's language: it keeps storlab's
                // generator (ADR 0021).
                set.jobs.iter_mut().for_each(|job| job.fio_random = None);
                Ok((set, true))
            }
        }
    }

    /// The jobs of `set`, read from job-file `text`, whose sections `--section` names (fio's
    /// `--section`: the file's `[global]` still applies).
    fn select_sections(&self, text: &str, set: &mut JobSet) {
        if self.sections.is_empty() {
            return;
        }
        let names = storlab_job::written::of_fio_text(text, &[]).names;
        let mut index = 0..;
        set.jobs.retain(|_| {
            let name = &names[index.next().unwrap_or(0)];
            self.sections.contains(name)
        });
    }

    /// Every `--section` name must be a section of one of the job files (the first at `path`):
    /// a name in none is a mistake fio would pass over in silence.
    fn check_sections_exist(&self, path: &Path) -> Result<(), Failure> {
        if self.sections.is_empty() {
            return Ok(());
        }
        let mut names = storlab_job::written::of_fio_text(self.text(path)?, &[]).names;
        for more in &self.more_files {
            names.extend(storlab_job::written::of_fio_text(&read_job_file(more)?, &[]).names);
        }
        if let Some(missing) = self.sections.iter().find(|s| !names.contains(s)) {
            let files: Vec<String> = std::iter::once(path)
                .chain(self.more_files.iter().map(PathBuf::as_path))
                .map(|p| p.display().to_string())
                .collect();
            return Err(bad_input(format!(
                "--section {missing}: {} has no such section (it has {})",
                files.join(", "),
                names.join(", ")
            )));
        }
        Ok(())
    }

    /// The options of the job set as written (fio-shaped JSON echoes them): the job file after
    /// the flags beside it, the flags alone, or the built-in quick set. `None` for a file that
    /// cannot be read (its jobs were then never read either).
    pub(crate) fn written_options(&self) -> Option<storlab_job::written::WrittenOptions> {
        use storlab_job::written;
        let mut written = match &self.file {
            Some(path) => {
                let mut first = written::of_fio_text(self.text(path).ok()?, &self.flags);
                // fio's JSON echoes the last file's `[global]` (fio 3.33 resets its default
                // options before each file: none when the last file has none).
                for more in &self.more_files {
                    let next = written::of_fio_text(&read_job_file(more).ok()?, &[]);
                    first.global = next.global;
                    first.jobs.extend(next.jobs);
                    first.names.extend(next.names);
                    first.arguments.extend(next.arguments);
                }
                first
            }
            None if !self.flags.is_empty() => written::of_flags(&self.flags),
            None => written::of_fio_text(DEFAULT_JOB_FILE, &[]),
        };
        if !self.sections.is_empty() {
            let keep: Vec<bool> = written
                .names
                .iter()
                .map(|name| self.sections.contains(name))
                .collect();
            let mut index = 0..;
            written.jobs.retain(|_| keep[index.next().unwrap_or(0)]);
            written.names.retain(|name| self.sections.contains(name));
        }
        Some(written)
    }
}

/// A job file's text, or why it cannot be read, as the job reader says it; `-` is stdin, as
/// fio reads it (init.c, `__parse_jobs_ini`).
fn read_job_file(path: &Path) -> Result<String, Failure> {
    let read = if path == Path::new("-") {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(path)
    };
    read.map_err(|e| {
        bad_input(storlab_job::JobError::io(
            &path.display().to_string(),
            e.to_string(),
        ))
    })
}
