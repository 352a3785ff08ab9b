//! The results database: opening with care (header, application id, schema version), saving a
//! run point by point as it finishes, and reading runs back as `RunReport`s.

use crate::error::DbError;
use crate::schema::{self, APPLICATION_ID, MIGRATIONS};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;
use storlab_report::{HostInfo, JobReport, RunReport, ToolInfo, SCHEMA_VERSION};

/// The first 16 bytes of every SQLite 3 database file.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";
/// How long a writer waits for another storlab holding the file (two runs at once).
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// Version of this build, recorded with the schema versions it writes.
const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A run's id in the database; shown to people as `r<id>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunId(pub i64);

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "r{}", self.0)
    }
}

/// What a user may type for a run: `r42`, `42`, or `last` (the most recent run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunRef {
    Id(RunId),
    Last,
}

impl std::str::FromStr for RunRef {
    type Err = DbError;

    fn from_str(text: &str) -> Result<Self, DbError> {
        let trimmed = text.trim();
        if trimmed.eq_ignore_ascii_case("last") {
            return Ok(RunRef::Last);
        }
        let digits = trimmed
            .strip_prefix('r')
            .or_else(|| trimmed.strip_prefix('R'))
            .unwrap_or(trimmed);
        digits
            .parse::<i64>()
            .ok()
            .filter(|id| *id > 0)
            .map(|id| RunRef::Id(RunId(id)))
            .ok_or_else(|| DbError::BadRunId {
                text: text.to_owned(),
            })
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunStatus {
    /// Still running, or killed before it could say otherwise.
    Running,
    /// Every point finished.
    Complete,
    /// Stopped by the user (Ctrl-C); the finished points are kept.
    Interrupted,
    /// Stopped by an error; the finished points are kept.
    Failed,
}

impl RunStatus {
    /// The word stored in the database and printed by `storlab history`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }

    fn parse(text: &str) -> Self {
        match text {
            "complete" => RunStatus::Complete,
            "interrupted" => RunStatus::Interrupted,
            "failed" => RunStatus::Failed,
            _ => RunStatus::Running,
        }
    }
}

/// What is known about a run when it starts.
#[derive(Clone, Debug)]
pub struct NewRun {
    pub tool: ToolInfo,
    pub host: HostInfo,
    pub started_unix_ms: u64,
    /// The command line, for reproduction.
    pub command: String,
    /// The preset the run came from, if any.
    pub preset: Option<String>,
}

/// One line of `storlab history`.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    pub id: RunId,
    pub started_unix_ms: u64,
    pub finished_unix_ms: Option<u64>,
    pub status: RunStatus,
    pub tool_version: String,
    pub hostname: String,
    pub command: String,
    pub preset: Option<String>,
    /// Distinct targets of the run's points, in first-use order.
    pub targets: Vec<String>,
    /// Points (finished jobs) stored.
    pub points: u64,
}

/// Which runs `storlab history` lists.
#[derive(Clone, Debug, Default)]
pub struct RunFilter {
    /// Keep runs with a point whose target contains this text (`sim:usb3`, `/dev/sdb`).
    pub target: Option<String>,
    /// Keep runs of this preset.
    pub preset: Option<String>,
    /// Keep runs started at or after this instant.
    pub since_unix_ms: Option<u64>,
    /// Keep runs started before this instant.
    pub until_unix_ms: Option<u64>,
    /// At most this many (the newest).
    pub limit: Option<u64>,
}

/// A run read back: its history line and its report.
#[derive(Clone, Debug)]
pub struct StoredRun {
    pub summary: RunSummary,
    pub report: RunReport,
}

/// An open results database.
pub struct Database {
    connection: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("path", &self.path)
            .finish()
    }
}

impl Database {
    /// Opens the database at `path`, creating it (and its directory) when missing and upgrading
    /// an older schema. A file that is not storlab's, is damaged or is newer than this build is
    /// refused and left byte-for-byte as it was.
    pub fn open(path: &Path) -> Result<Self, DbError> {
        Self::open_with(path, MIGRATIONS, true)
    }

    /// Like [`Database::open`], but a missing file is [`DbError::Missing`] rather than created:
    /// for commands that only read.
    pub fn open_existing(path: &Path) -> Result<Self, DbError> {
        Self::open_with(path, MIGRATIONS, false)
    }

    /// [`Database::open`] with an explicit migration list, so tests can prove the upgrade path.
    #[doc(hidden)]
    pub fn open_with(
        path: &Path,
        migrations: &[schema::Migration],
        create: bool,
    ) -> Result<Self, DbError> {
        let exists = check_header(path)?;
        if !exists {
            if !create {
                return Err(DbError::Missing {
                    path: path.to_owned(),
                });
            }
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|source| DbError::Io {
                    path: parent.to_owned(),
                    source,
                })?;
            }
        }
        let sqlite = |source| DbError::from_sqlite(path, source);
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if !exists {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let mut connection = Connection::open_with_flags(path, flags).map_err(sqlite)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
        let application_id: i32 = connection
            .pragma_query_value(None, "application_id", |row| row.get(0))
            .map_err(sqlite)?;
        let version: u32 = connection
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(sqlite)?;
        let objects: i64 = connection
            .query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))
            .map_err(sqlite)?;
        if application_id != APPLICATION_ID {
            // An empty SQLite file with no id is fair game (e.g. made by `sqlite3 FILE ''`);
            // anything with content is someone else's.
            if application_id != 0 || version != 0 || objects != 0 {
                return Err(DbError::Foreign {
                    path: path.to_owned(),
                    detail: format!(
                        "application_id {application_id:#010x}, user_version {version}, {objects} schema objects"
                    ),
                });
            }
        }
        let supported = migrations.len() as u32;
        if version > supported {
            let needed = connection
                .query_row(
                    "SELECT value FROM meta WHERE key = ?1",
                    [schema::written_by_key(version)],
                    |row| row.get::<_, String>(0),
                )
                .optional()
                .ok()
                .flatten()
                .unwrap_or_else(|| format!("with schema version {version}"));
            return Err(DbError::TooNew {
                path: path.to_owned(),
                found: version,
                supported,
                this_version: TOOL_VERSION.to_owned(),
                needed,
            });
        }
        connection
            .pragma_update(None, "foreign_keys", true)
            .map_err(sqlite)?;
        if version < supported {
            schema::migrate(&mut connection, migrations, version, TOOL_VERSION).map_err(sqlite)?;
        }
        Ok(Self {
            connection,
            path: path.to_owned(),
        })
    }

    /// Where the database lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Schema version of the open file.
    pub fn schema_version(&self) -> Result<u32, DbError> {
        self.connection
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(|e| self.error(e))
    }

    fn error(&self, source: rusqlite::Error) -> DbError {
        DbError::from_sqlite(&self.path, source)
    }

    /// Records the start of a run (status `running`) and returns its id.
    pub fn begin_run(&mut self, run: &NewRun) -> Result<RunId, DbError> {
        self.connection
            .execute(
                "INSERT INTO runs (started_unix_ms, status, tool_name, tool_version, hostname,
                                   kernel, cpus, report_schema_version, command, preset)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    to_sql_int(run.started_unix_ms),
                    RunStatus::Running.as_str(),
                    run.tool.name,
                    run.tool.version,
                    run.host.hostname,
                    run.host.kernel,
                    run.host.cpus,
                    SCHEMA_VERSION,
                    run.command,
                    run.preset,
                ],
            )
            .map_err(|e| self.error(e))?;
        Ok(RunId(self.connection.last_insert_rowid()))
    }

    /// Saves one finished point (job) of a run, committed before returning, so a run killed
    /// later keeps it. Points are numbered in the order they are added.
    pub fn add_point(&mut self, run: RunId, job: &JobReport) -> Result<(), DbError> {
        let path = self.path.clone();
        let sqlite = |source| DbError::from_sqlite(&path, source);
        let report_json = serde_json::to_string(job).map_err(|e| DbError::BadStoredReport {
            path: path.clone(),
            run_id: run.0,
            position: -1,
            detail: e.to_string(),
        })?;
        let warnings_json = serde_json::to_string(&job.warnings).unwrap_or_else(|_| "[]".into());
        let transaction = self.connection.transaction().map_err(sqlite)?;
        let position: i64 = transaction
            .query_row(
                "SELECT count(*) FROM points WHERE run_id = ?1",
                [run.0],
                |row| row.get(0),
            )
            .map_err(sqlite)?;
        let metric = |direction: Option<&storlab_stats::DirectionSummary>| {
            direction.map(|d| (d.iops, d.bw_bytes_per_s, d.clat.mean_ns))
        };
        let (read, write, trim) = (
            metric(job.read.as_ref()),
            metric(job.write.as_ref()),
            metric(job.trim.as_ref()),
        );
        transaction
            .execute(
                "INSERT INTO points (run_id, position, name, engine, target, target_kind,
                    target_size_bytes, device_state, data_pattern, align_bytes, seed, rw,
                    block_size, iodepth, numjobs, elapsed_ns,
                    read_iops, read_bw_bytes_per_s, read_clat_mean_ns,
                    write_iops, write_bw_bytes_per_s, write_clat_mean_ns,
                    trim_iops, trim_bw_bytes_per_s, warnings_json, report_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                         ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26)",
                params![
                    run.0,
                    position,
                    job.name,
                    job.engine,
                    job.target.description,
                    job.target.kind,
                    to_sql_int(job.target.size_bytes),
                    job.device_state,
                    job.data_pattern,
                    to_sql_int(job.align_bytes),
                    job.seed.to_string(),
                    job.rw,
                    job.block_size,
                    job.iodepth,
                    job.numjobs,
                    to_sql_int(job.elapsed_ns),
                    read.map(|m| m.0),
                    read.map(|m| m.1),
                    read.map(|m| m.2),
                    write.map(|m| m.0),
                    write.map(|m| m.1),
                    write.map(|m| m.2),
                    trim.map(|m| m.0),
                    trim.map(|m| m.1),
                    warnings_json,
                    report_json,
                ],
            )
            .map_err(sqlite)?;
        let point_id = transaction.last_insert_rowid();
        {
            let mut percentile = transaction
                .prepare_cached(
                    "INSERT INTO latency_percentiles (point_id, direction, kind, percentile, value_ns)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(sqlite)?;
            let mut bin = transaction
                .prepare_cached(
                    "INSERT INTO latency_bins (point_id, direction, bin_index, upper_ns, count)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(sqlite)?;
            for (direction, summary) in job.directions() {
                for (kind, latency) in [
                    ("slat", &summary.slat),
                    ("clat", &summary.clat),
                    ("lat", &summary.lat),
                ] {
                    for &(at, value_ns) in &latency.percentiles {
                        percentile
                            .execute(params![point_id, direction, kind, at, to_sql_int(value_ns)])
                            .map_err(sqlite)?;
                    }
                }
                for (index, bucket) in summary.clat_distribution.iter().enumerate() {
                    bin.execute(params![
                        point_id,
                        direction,
                        index as i64,
                        bucket.upper_ns.map(to_sql_int),
                        to_sql_int(bucket.count)
                    ])
                    .map_err(sqlite)?;
                }
            }
        }
        transaction.commit().map_err(sqlite)
    }

    /// Marks a run finished with its run-level warnings.
    pub fn finish_run(
        &mut self,
        run: RunId,
        status: RunStatus,
        warnings: &[String],
        finished_unix_ms: u64,
    ) -> Result<(), DbError> {
        let warnings_json = serde_json::to_string(warnings).unwrap_or_else(|_| "[]".into());
        self.connection
            .execute(
                "UPDATE runs SET status = ?2, warnings_json = ?3, finished_unix_ms = ?4 WHERE id = ?1",
                params![run.0, status.as_str(), warnings_json, to_sql_int(finished_unix_ms)],
            )
            .map_err(|e| self.error(e))?;
        Ok(())
    }

    /// Runs matching `filter`, newest first.
    pub fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, DbError> {
        let mut sql = String::from(SUMMARY_SELECT);
        sql.push_str(" WHERE 1 = 1");
        let mut values: Vec<rusqlite::types::Value> = Vec::new();
        if let Some(target) = &filter.target {
            values.push(target.clone().into());
            sql.push_str(&format!(
                " AND EXISTS (SELECT 1 FROM points p WHERE p.run_id = runs.id AND instr(p.target, ?{}) > 0)",
                values.len()
            ));
        }
        if let Some(preset) = &filter.preset {
            values.push(preset.clone().into());
            sql.push_str(&format!(" AND runs.preset = ?{}", values.len()));
        }
        if let Some(since) = filter.since_unix_ms {
            values.push(to_sql_int(since).into());
            sql.push_str(&format!(" AND runs.started_unix_ms >= ?{}", values.len()));
        }
        if let Some(until) = filter.until_unix_ms {
            values.push(to_sql_int(until).into());
            sql.push_str(&format!(" AND runs.started_unix_ms < ?{}", values.len()));
        }
        sql.push_str(" ORDER BY runs.started_unix_ms DESC, runs.id DESC");
        if let Some(limit) = filter.limit {
            sql.push_str(&format!(" LIMIT {limit}"));
        }
        let mut statement = self.connection.prepare(&sql).map_err(|e| self.error(e))?;
        let rows = statement
            .query_map(rusqlite::params_from_iter(values), summary_from_row)
            .map_err(|e| self.error(e))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.error(e))
    }

    /// The id `reference` names.
    pub fn resolve(&self, reference: RunRef) -> Result<RunId, DbError> {
        let found: Option<i64> = match reference {
            RunRef::Id(id) => self
                .connection
                .query_row("SELECT id FROM runs WHERE id = ?1", [id.0], |row| {
                    row.get(0)
                })
                .optional(),
            RunRef::Last => self
                .connection
                .query_row(
                    "SELECT id FROM runs ORDER BY started_unix_ms DESC, id DESC LIMIT 1",
                    [],
                    |row| row.get(0),
                )
                .optional(),
        }
        .map_err(|e| self.error(e))?;
        found.map(RunId).ok_or_else(|| DbError::NoSuchRun {
            path: self.path.clone(),
            id: match reference {
                RunRef::Id(id) => id.to_string(),
                RunRef::Last => "(the database has no runs)".into(),
            },
        })
    }

    /// A run and everything stored about it, as a report.
    pub fn load_run(&self, reference: RunRef) -> Result<StoredRun, DbError> {
        let id = self.resolve(reference)?;
        let sql = format!("{SUMMARY_SELECT} WHERE runs.id = ?1");
        let (summary, detail) = self
            .connection
            .query_row(&sql, [id.0], |row| {
                let summary = summary_from_row(row)?;
                let detail = (
                    row.get::<_, String>("tool_name")?,
                    row.get::<_, String>("kernel")?,
                    row.get::<_, u32>("cpus")?,
                    row.get::<_, String>("warnings_json")?,
                );
                Ok((summary, detail))
            })
            .map_err(|e| self.error(e))?;
        let (tool_name, kernel, cpus, warnings_json) = detail;
        let mut statement = self
            .connection
            .prepare("SELECT position, report_json FROM points WHERE run_id = ?1 ORDER BY position")
            .map_err(|e| self.error(e))?;
        let rows = statement
            .query_map([id.0], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(|e| self.error(e))?;
        let mut jobs = Vec::new();
        for row in rows {
            let (position, json) = row.map_err(|e| self.error(e))?;
            let job: JobReport =
                serde_json::from_str(&json).map_err(|e| DbError::BadStoredReport {
                    path: self.path.clone(),
                    run_id: id.0,
                    position,
                    detail: e.to_string(),
                })?;
            jobs.push(job);
        }
        let mut report = RunReport::new(
            ToolInfo {
                name: tool_name,
                version: summary.tool_version.clone(),
            },
            summary.started_unix_ms,
            HostInfo {
                hostname: summary.hostname.clone(),
                kernel,
                cpus,
            },
        );
        report.jobs = jobs;
        report.warnings = serde_json::from_str(&warnings_json).unwrap_or_default();
        Ok(StoredRun { summary, report })
    }

    /// Deletes a run and its points; returns the id it deleted.
    pub fn delete_run(&mut self, reference: RunRef) -> Result<RunId, DbError> {
        let id = self.resolve(reference)?;
        self.connection
            .execute("DELETE FROM runs WHERE id = ?1", [id.0])
            .map_err(|e| self.error(e))?;
        Ok(id)
    }

    /// The underlying connection, for tests and ad-hoc queries.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }
}

const SUMMARY_SELECT: &str = "SELECT runs.id, runs.started_unix_ms, runs.finished_unix_ms,
    runs.status, runs.tool_name, runs.tool_version, runs.hostname, runs.kernel, runs.cpus,
    runs.command, runs.preset, runs.warnings_json,
    (SELECT count(*) FROM points p WHERE p.run_id = runs.id) AS point_count,
    (SELECT group_concat(target, char(10)) FROM
        (SELECT target, min(position) AS first FROM points p WHERE p.run_id = runs.id
         GROUP BY target ORDER BY first)) AS targets
    FROM runs";

fn summary_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RunSummary> {
    let targets: Option<String> = row.get("targets")?;
    Ok(RunSummary {
        id: RunId(row.get("id")?),
        started_unix_ms: from_sql_int(row.get("started_unix_ms")?),
        finished_unix_ms: row
            .get::<_, Option<i64>>("finished_unix_ms")?
            .map(from_sql_int),
        status: RunStatus::parse(&row.get::<_, String>("status")?),
        tool_version: row.get("tool_version")?,
        hostname: row.get("hostname")?,
        command: row.get("command")?,
        preset: row.get("preset")?,
        targets: targets
            .map(|t| t.split('\n').map(str::to_owned).collect())
            .unwrap_or_default(),
        points: from_sql_int(row.get("point_count")?),
    })
}

/// SQLite integers are signed 64-bit; storlab's counters never come near 2^63.
fn to_sql_int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn from_sql_int(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// Whether `path` exists; if it does and has content, it must start like an SQLite file.
fn check_header(path: &Path) -> Result<bool, DbError> {
    let io = |source| DbError::Io {
        path: path.to_owned(),
        source,
    };
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(io(error)),
    };
    if file.metadata().map_err(io)?.is_dir() {
        return Err(DbError::NotSqlite {
            path: path.to_owned(),
        });
    }
    let mut header = Vec::with_capacity(SQLITE_HEADER.len());
    file.by_ref()
        .take(SQLITE_HEADER.len() as u64)
        .read_to_end(&mut header)
        .map_err(io)?;
    // An empty file is how SQLite itself starts a database; anything else must be one.
    if !header.is_empty() && header.as_slice() != SQLITE_HEADER {
        return Err(DbError::NotSqlite {
            path: path.to_owned(),
        });
    }
    Ok(true)
}
