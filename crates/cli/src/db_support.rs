//! Glue between the CLI and the results database: the `--db` option, opening with exit codes
//! (a refused file is bad input, exit 2), and the recorder `storlab run` saves points through.

use crate::args::DbArgs;
use crate::exit::{bad_input, run_failed, Failure};
use crate::say::say;
use std::path::PathBuf;
use storlab_db::{Database, DbError, NewRun, RunId, RunRef, RunStatus};
use storlab_report::{HostInfo, JobReport, ToolInfo};

impl DbArgs {
    /// The database file to use.
    pub fn path(&self) -> Result<PathBuf, Failure> {
        match &self.db {
            Some(path) => Ok(path.clone()),
            None => storlab_db::default_path().ok_or_else(|| {
                bad_input("--db: no default location (none of STORLAB_DB, XDG_DATA_HOME, HOME is set); give --db PATH")
            }),
        }
    }

    /// Opens an existing database for reading.
    pub fn open_existing(&self) -> Result<Database, Failure> {
        Database::open_existing(&self.path()?).map_err(db_failure)
    }
}

/// Exit codes of database errors: a file we refuse or a bad id is the user's input (2); a
/// failure of a good file (disk full, locked) is a failed command (1).
pub fn db_failure(error: DbError) -> Failure {
    match error {
        DbError::Sqlite { .. } | DbError::Io { .. } => run_failed(error),
        _ => bad_input(error),
    }
}

/// A database refused at the first save, after [`RunRecorder::start`] found it usable: it
/// changed during the run, which its plain refusal ("left untouched") would not say.
fn changed_during_run(error: DbError) -> DbError {
    let (path, detail) = match error {
        DbError::NotSqlite { path } => (path, "not an SQLite file".to_string()),
        DbError::Foreign { path, detail } => (
            path,
            format!("an SQLite database of another application ({detail})"),
        ),
        DbError::Corrupt { path, detail } => (path, format!("damaged ({detail})")),
        DbError::NotAFile { path, kind } => (path, kind.to_string()),
        other => return other,
    };
    DbError::ChangedDuringRun { path, detail }
}

/// Parses run references as the user typed them.
pub fn parse_runs(texts: &[String]) -> Result<Vec<RunRef>, Failure> {
    texts
        .iter()
        .map(|text| text.parse::<RunRef>().map_err(db_failure))
        .collect()
}

/// Saves a run point by point while it runs. The database is checked when the run starts (a
/// refused `--db` stops the command before any I/O) but opened — and created when new — only
/// when the first point is ready, with the run row, so a command that fails before measuring
/// anything leaves neither an empty run nor a new empty file behind. A point that cannot be
/// saved (after the database's own waiting and retries) does not stop the measurement, which is
/// worth more than its record, but the run then fails (exit 1) naming the points missing from
/// the database.
pub struct RunRecorder {
    path: PathBuf,
    database: Option<Database>,
    new_run: NewRun,
    run: Option<RunId>,
    saved_points: usize,
    /// The first saving error, once one happened; nothing more is written after it.
    save_error: Option<DbError>,
    /// Names of the finished points that are not in the database, in run order.
    unsaved: Vec<String>,
}

/// How many names of unsaved points the failure line lists before "and N more".
const UNSAVED_NAMES_SHOWN: usize = 10;

impl RunRecorder {
    /// Checks the database (refusing a file that is not ours before anything runs).
    pub fn start(
        db: &DbArgs,
        preset: Option<String>,
        started_unix_ms: u64,
    ) -> Result<Self, Failure> {
        let path = db.path()?;
        Database::check_usable(&path).map_err(db_failure)?;
        Ok(Self {
            path,
            database: None,
            new_run: NewRun {
                tool: ToolInfo::storlab(),
                host: HostInfo::detect(),
                started_unix_ms,
                command: command_line(),
                preset,
            },
            run: None,
            saved_points: 0,
            save_error: None,
            unsaved: Vec::new(),
        })
    }

    /// Records the run as made on `hostname` (a multi-client run: every client's host).
    pub fn set_hostname(&mut self, hostname: String) {
        self.new_run.host.hostname = hostname;
    }

    /// The id of the run, once its first point is saved.
    pub fn run_id(&self) -> Option<RunId> {
        self.run
    }

    /// Commits one finished point.
    pub fn record(&mut self, job: &JobReport) {
        if self.save_error.is_some() {
            self.unsaved.push(job.setup.name.clone());
            return;
        }
        match self.save(job) {
            Ok(()) => self.saved_points += 1,
            Err(error) => {
                say!(
                    "storlab: warning: point '{}' not saved, nor will the rest of this run be: {error}",
                    job.setup.name
                );
                self.save_error = Some(error);
                self.unsaved.push(job.setup.name.clone());
            }
        }
    }

    fn save(&mut self, job: &JobReport) -> Result<(), DbError> {
        let database = match &mut self.database {
            Some(database) => database,
            None => self
                .database
                .insert(Database::open(&self.path).map_err(changed_during_run)?),
        };
        let run = match self.run {
            Some(run) => run,
            None => *self.run.insert(database.begin_run(&self.new_run)?),
        };
        database.add_point(run, job)
    }

    /// Marks the run finished (nothing to do when no point was saved). Fails when a finished
    /// point is missing from the database or the run could not be marked finished: the caller
    /// still writes the results, then exits 1 with this failure.
    pub fn finish(&mut self, status: RunStatus, warnings: &[String]) -> Result<(), Failure> {
        let (Some(database), Some(run)) = (&mut self.database, self.run) else {
            return self.unsaved_failure(None);
        };
        let mut warnings = warnings.to_vec();
        let status = if self.save_error.is_some() {
            warnings.push(format!(
                "{} finished points were not saved: {}",
                self.unsaved.len(),
                self.unsaved.join(", ")
            ));
            RunStatus::Failed
        } else {
            status
        };
        match database.finish_run(run, status, &warnings, now_unix_ms()) {
            Ok(()) if self.save_error.is_none() => {
                say!(
                    "storlab: saved as run {run} in {}",
                    database.path().display()
                );
                Ok(())
            }
            Ok(()) => self.unsaved_failure(Some(run)),
            Err(error) if self.save_error.is_none() => Err(run_failed(format!(
                "run {run}: all {} points saved, but the run could not be marked finished (it shows as running): {error}",
                self.saved_points
            ))),
            Err(_) => self.unsaved_failure(Some(run)),
        }
    }

    fn unsaved_failure(&self, run: Option<RunId>) -> Result<(), Failure> {
        let Some(error) = &self.save_error else {
            return Ok(());
        };
        let mut names = self
            .unsaved
            .iter()
            .take(UNSAVED_NAMES_SHOWN)
            .map(|name| format!("'{name}'"))
            .collect::<Vec<_>>()
            .join(", ");
        if self.unsaved.len() > UNSAVED_NAMES_SHOWN {
            names.push_str(&format!(
                " and {} more",
                self.unsaved.len() - UNSAVED_NAMES_SHOWN
            ));
        }
        let kept = match run {
            Some(run) => format!("run {run} keeps the {} saved before", self.saved_points),
            None => "no point of this run was saved".into(),
        };
        Err(run_failed(format!(
            "{} of {} finished points are missing from the results database ({names}); {kept}; first error: {error}",
            self.unsaved.len(),
            self.unsaved.len() + self.saved_points,
        )))
    }
}

/// The command line as typed, for `storlab show`. Arguments that are not UTF-8 (file names
/// are bytes on Unix) are kept with U+FFFD in place of the bytes that are not.
fn command_line() -> String {
    std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Marks the run of `recorder` (if the run is saved at all) failed, interrupted or complete, in
/// that order of precedence: see [`RunRecorder::finish`].
pub fn finish_run(
    recorder: &mut Option<RunRecorder>,
    failed: bool,
    interrupted: bool,
    warnings: &[String],
) -> Result<(), Failure> {
    let Some(recorder) = recorder else {
        return Ok(());
    };
    let status = if failed {
        RunStatus::Failed
    } else if interrupted {
        RunStatus::Interrupted
    } else {
        RunStatus::Complete
    };
    recorder.finish(status, warnings)
}

pub fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The recorder for `storlab run`, or `None` with `--no-db`.
pub fn recorder_for_run(
    db: &DbArgs,
    no_db: bool,
    preset: Option<String>,
    started_unix_ms: u64,
) -> Result<Option<RunRecorder>, Failure> {
    if no_db {
        return Ok(None);
    }
    RunRecorder::start(db, preset, started_unix_ms).map(Some)
}
