//! Glue between the CLI and the results database: the `--db` option, opening with exit codes
//! (a refused file is bad input, exit 2), and the recorder `storlab run` saves points through.

use crate::exit::{bad_input, run_failed, Failure};
use crate::output::say;
use clap::Args;
use std::path::PathBuf;
use storlab_db::{Database, DbError, NewRun, RunId, RunRef, RunStatus};
use storlab_report::{HostInfo, JobReport, ToolInfo};

/// `--db PATH`, shared by every command that uses the database.
#[derive(Clone, Debug, Default, Args)]
pub struct DbArgs {
    /// Results database (default: $STORLAB_DB, else $XDG_DATA_HOME/storlab/results.sqlite,
    /// else ~/.local/share/storlab/results.sqlite).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

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

    /// Opens (creating if needed) the database for writing.
    pub fn open(&self) -> Result<Database, Failure> {
        Database::open(&self.path()?).map_err(db_failure)
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

/// Parses run references as the user typed them.
pub fn parse_runs(texts: &[String]) -> Result<Vec<RunRef>, Failure> {
    texts
        .iter()
        .map(|text| text.parse::<RunRef>().map_err(db_failure))
        .collect()
}

/// Saves a run point by point while it runs. The run row is written with the first finished
/// point, so a command that fails before measuring anything leaves no empty run behind. A
/// database failure mid-run is reported once and ends the saving, not the run: the measurement
/// is worth more than its record.
pub struct RunRecorder {
    database: Option<Database>,
    new_run: NewRun,
    run: Option<RunId>,
}

impl RunRecorder {
    /// Opens the database (refusing a file that is not ours before anything runs).
    pub fn start(
        db: &DbArgs,
        preset: Option<String>,
        started_unix_ms: u64,
    ) -> Result<Self, Failure> {
        let database = db.open()?;
        let command = std::env::args().collect::<Vec<_>>().join(" ");
        Ok(Self {
            database: Some(database),
            new_run: NewRun {
                tool: ToolInfo::storlab(),
                host: HostInfo::detect(),
                started_unix_ms,
                command,
                preset,
            },
            run: None,
        })
    }

    /// The id of the run, once its first point is saved.
    pub fn run_id(&self) -> Option<RunId> {
        self.run
    }

    /// Commits one finished point.
    pub fn record(&mut self, job: &JobReport) {
        let Some(database) = &mut self.database else {
            return;
        };
        let saved = match self.run {
            Some(run) => database.add_point(run, job),
            None => database.begin_run(&self.new_run).and_then(|run| {
                self.run = Some(run);
                database.add_point(run, job)
            }),
        };
        if let Err(error) = saved {
            say!("storlab: warning: not saving the rest of this run: {error}");
            self.database = None;
        }
    }

    /// Marks the run finished (nothing to do when no point was saved).
    pub fn finish(&mut self, status: RunStatus, warnings: &[String]) {
        let (Some(database), Some(run)) = (&mut self.database, self.run) else {
            return;
        };
        match database.finish_run(run, status, warnings, now_unix_ms()) {
            Ok(()) => say!(
                "storlab: saved as run {run} in {}",
                database.path().display()
            ),
            Err(error) => say!("storlab: warning: run {run} not marked finished: {error}"),
        }
    }
}

pub fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Lends the CLI's provider to the runner through a `RefCell`, so the per-job callback can
/// read the target descriptions it collected and save each point the moment it finishes.
pub struct SharedProvider<'a>(pub &'a std::cell::RefCell<crate::provider::Provider>);

impl storlab_runner::EngineProvider for SharedProvider<'_> {
    fn open(
        &mut self,
        job: &storlab_job::JobSpec,
    ) -> Result<Vec<Box<dyn storlab_engine::IoEngine + Send>>, storlab_runner::RunError> {
        self.0.borrow_mut().open(job)
    }

    fn release(
        &mut self,
        job: &storlab_job::JobSpec,
        engines: Vec<Box<dyn storlab_engine::IoEngine + Send>>,
    ) {
        self.0.borrow_mut().release(job, engines);
    }
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
