//! The results database: opening with care (header, application id, schema version), saving a
//! run point by point as it finishes, and reading runs back as `RunReport`s.

use crate::error::DbError;
use crate::schema::{self, APPLICATION_ID, MIGRATIONS};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;
use storlab_report::{HostInfo, JobReport, RunReport, ToolInfo, SCHEMA_VERSION};

// Fields of the SQLite database header, from https://www.sqlite.org/fileformat2.html
// ("1.3. The Database Header"). Offsets are in bytes from the start of the file.
/// The first 16 bytes of every SQLite 3 database file.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";
/// Length of the database header at the start of page 1.
const HEADER_LEN: usize = 100;
/// Page size, 2 bytes big-endian.
const PAGE_SIZE_OFFSET: usize = 16;
/// The page-size value that stands for 65536 (which does not fit in 2 bytes).
const PAGE_SIZE_65536_MARK: u16 = 1;
/// Smallest and largest page sizes SQLite allows (powers of two).
const MIN_PAGE_SIZE_BYTES: u32 = 512;
const MAX_PAGE_SIZE_BYTES: u32 = 65536;
/// File format write version, 1 byte: 1 for a rollback journal, 2 for WAL.
const WRITE_VERSION_OFFSET: usize = 18;
const WAL_FORMAT_VERSION: u8 = 2;
/// `PRAGMA user_version`, 4 bytes big-endian.
const USER_VERSION_OFFSET: usize = 60;
/// `PRAGMA application_id`, 4 bytes big-endian.
const APPLICATION_ID_OFFSET: usize = 68;

/// How long SQLite itself waits for another storlab holding the write lock (runs at once).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// How many more times a write is tried when the busy timeout ran out anyway.
const BUSY_RETRIES: u32 = 3;
/// Pause before the first of those retries; doubled for each further one.
const FIRST_RETRY_PAUSE: Duration = Duration::from_millis(100);
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

    /// Checks, without creating or writing anything, that `path` can take a run: either nothing
    /// is there yet (and a directory could hold it), or it is a sound storlab database this
    /// build can write. `storlab run` calls this before measuring and opens the file only when
    /// the first point is ready, so a run refused for bad input leaves no new file behind.
    pub fn check_usable(path: &Path) -> Result<(), DbError> {
        match inspect_file(path)? {
            Some(file) => validate_existing(path, &file, MIGRATIONS).map(|_| ()),
            None => check_room_for(path),
        }
    }

    /// [`Database::open`] with an explicit migration list, so tests can prove the upgrade path.
    #[doc(hidden)]
    pub fn open_with(
        path: &Path,
        migrations: &[schema::Migration],
        create: bool,
    ) -> Result<Self, DbError> {
        let sqlite = |source| DbError::from_sqlite(path, source);
        let found = inspect_file(path)?;
        let checked = match &found {
            Some(file) => validate_existing(path, file, migrations)?,
            None if !create => {
                return Err(DbError::Missing {
                    path: path.to_owned(),
                })
            }
            None => {
                check_room_for(path)?;
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent).map_err(|source| DbError::Io {
                        path: parent.to_owned(),
                        source,
                    })?;
                }
                Validation::Done
            }
        };
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if found.is_none() {
            // Another storlab may create it at the same moment: both then open the same file,
            // and the schema transaction below lets only one of them build the tables.
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let mut connection = Connection::open_with_flags(path, flags).map_err(sqlite)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
        if checked == Validation::AfterRecovery {
            // The read-write connection has rolled the interrupted transaction back (SQLite's
            // own recovery); nothing of ours has been written yet.
            validate(path, &connection, migrations)?;
        }
        // WAL lets runs write while others read and queues writers instead of failing them.
        // The mode is stored in the file, so this is a no-op after the first time.
        retry_when_busy(|| {
            connection
                .pragma_update_and_check(None, "journal_mode", "wal", |row| row.get::<_, String>(0))
        })
        .map_err(sqlite)?;
        connection
            .pragma_update(None, "foreign_keys", true)
            .map_err(sqlite)?;
        retry_when_busy(|| bring_schema_up_to_date(path, &mut connection, migrations))?;
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
        let connection = &self.connection;
        retry_when_busy(|| {
            connection.execute(
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
            )?;
            Ok(RunId(connection.last_insert_rowid()))
        })
        .map_err(|e| self.error(e))
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
        let warnings_json =
            serde_json::to_string(&job.notes.warnings).unwrap_or_else(|_| "[]".into());
        retry_when_busy(|| {
            insert_point(&mut self.connection, run, job, &warnings_json, &report_json)
        })
        .map_err(sqlite)
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
        retry_when_busy(|| {
            self.connection.execute(
                "UPDATE runs SET status = ?2, warnings_json = ?3, finished_unix_ms = ?4 WHERE id = ?1",
                params![run.0, status.as_str(), warnings_json, to_sql_int(finished_unix_ms)],
            )
        })
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
        retry_when_busy(|| {
            self.connection
                .execute("DELETE FROM runs WHERE id = ?1", [id.0])
        })
        .map_err(|e| self.error(e))?;
        Ok(id)
    }

    /// The underlying connection, for tests and ad-hoc queries.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }
}

/// One point in one write transaction (taken at once, `BEGIN IMMEDIATE`, so it waits for
/// another writer instead of failing when it finds it has read a stale snapshot).
fn insert_point(
    connection: &mut Connection,
    run: RunId,
    job: &JobReport,
    warnings_json: &str,
    report_json: &str,
) -> rusqlite::Result<()> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let position: i64 = transaction.query_row(
        "SELECT count(*) FROM points WHERE run_id = ?1",
        [run.0],
        |row| row.get(0),
    )?;
    let metric = |direction: Option<&storlab_stats::DirectionSummary>| {
        direction.map(|d| (d.iops, d.bw_bytes_per_s, d.clat.mean_ns))
    };
    let (read, write, trim) = (
        metric(job.read.as_ref()),
        metric(job.write.as_ref()),
        metric(job.trim.as_ref()),
    );
    transaction.execute(
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
            job.setup.name,
            job.setup.engine,
            job.setup.target.description,
            job.setup.target.kind,
            to_sql_int(job.setup.target.size_bytes),
            job.setup.device_state,
            job.setup.data_pattern,
            to_sql_int(job.setup.align_bytes),
            job.setup.seed.to_string(),
            job.setup.rw,
            job.setup.block_size,
            job.setup.iodepth,
            job.setup.numjobs,
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
    )?;
    let point_id = transaction.last_insert_rowid();
    {
        let mut percentile = transaction.prepare_cached(
            "INSERT INTO latency_percentiles (point_id, direction, kind, percentile, value_ns)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        let mut bin = transaction.prepare_cached(
            "INSERT INTO latency_bins (point_id, direction, bin_index, upper_ns, count)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for (direction, summary) in job.directions() {
            for (kind, latency) in [
                ("slat", &summary.slat),
                ("clat", &summary.clat),
                ("lat", &summary.lat),
            ] {
                for &(at, value_ns) in &latency.percentiles {
                    percentile.execute(params![
                        point_id,
                        direction,
                        kind,
                        at,
                        to_sql_int(value_ns)
                    ])?;
                }
            }
            for (index, bucket) in summary.clat_distribution.iter().enumerate() {
                bin.execute(params![
                    point_id,
                    direction,
                    index as i64,
                    bucket.upper_ns.map(to_sql_int),
                    to_sql_int(bucket.count)
                ])?;
            }
        }
    }
    transaction.commit()
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

/// What [`inspect_file`] learnt from an existing file without handing it to SQLite.
struct FileFacts {
    /// Zero bytes: SQLite's own way of starting a database.
    empty: bool,
    /// The header says the file is in WAL mode.
    wal_mode: bool,
}

/// Whether the database was validated before opening it for writing, or can only be once
/// SQLite has recovered an interrupted transaction (a hot rollback journal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Validation {
    Done,
    AfterRecovery,
}

/// Looks at `path` before SQLite does: `None` when nothing is there. Anything but a regular
/// file (symlinks are followed) is refused without being opened — opening a FIFO blocks, and
/// SQLite would put a `-journal` next to a device. A regular file must be empty or carry an
/// SQLite header that is whole, has a valid page size and, when it names an application,
/// names storlab.
fn inspect_file(path: &Path) -> Result<Option<FileFacts>, DbError> {
    let io = |source| DbError::Io {
        path: path.to_owned(),
        source,
    };
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        // `notes.txt/results.sqlite`: nothing there; check_room_for says why it cannot be.
        Err(error) if is_absent(&error) => return Ok(None),
        Err(error) => return Err(io(error)),
    };
    if !metadata.is_file() {
        return Err(DbError::NotAFile {
            path: path.to_owned(),
            kind: file_kind(&metadata.file_type()),
        });
    }
    let mut header = Vec::with_capacity(HEADER_LEN);
    std::fs::File::open(path)
        .map_err(io)?
        .take(HEADER_LEN as u64)
        .read_to_end(&mut header)
        .map_err(io)?;
    if header.is_empty() {
        return Ok(Some(FileFacts {
            empty: true,
            wal_mode: false,
        }));
    }
    if !header.starts_with(SQLITE_HEADER) {
        return Err(DbError::NotSqlite {
            path: path.to_owned(),
        });
    }
    let corrupt = |detail: String| DbError::Corrupt {
        path: path.to_owned(),
        detail,
    };
    if header.len() < HEADER_LEN {
        return Err(corrupt(format!(
            "truncated: {} bytes, shorter than the {HEADER_LEN}-byte SQLite header",
            header.len()
        )));
    }
    let be_u16 = |at: usize| u16::from_be_bytes([header[at], header[at + 1]]);
    let page_size_bytes = match be_u16(PAGE_SIZE_OFFSET) {
        PAGE_SIZE_65536_MARK => MAX_PAGE_SIZE_BYTES,
        size => u32::from(size),
    };
    if !page_size_bytes.is_power_of_two()
        || !(MIN_PAGE_SIZE_BYTES..=MAX_PAGE_SIZE_BYTES).contains(&page_size_bytes)
    {
        return Err(corrupt(format!(
            "header gives page size {page_size_bytes}, not a power of two from {MIN_PAGE_SIZE_BYTES} to {MAX_PAGE_SIZE_BYTES}"
        )));
    }
    let be_i32 = |at: usize| {
        i32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let application_id = be_i32(APPLICATION_ID_OFFSET);
    if application_id != APPLICATION_ID && application_id != 0 {
        // Someone else's database: refused before SQLite touches it or its side files.
        return Err(DbError::Foreign {
            path: path.to_owned(),
            detail: format!(
                "application_id {application_id:#010x}, user_version {}",
                be_i32(USER_VERSION_OFFSET)
            ),
        });
    }
    let shape = crate::integrity::FileShape {
        page_size_bytes,
        len_bytes: metadata.len(),
        journal_beside: side_file(path, "-wal").exists() || side_file(path, "-journal").exists(),
        storlab: application_id == APPLICATION_ID,
    };
    if let Some(damage) = crate::integrity::check_header(&header, &shape) {
        return Err(corrupt(damage));
    }
    Ok(Some(FileFacts {
        empty: false,
        wal_mode: header[WRITE_VERSION_OFFSET] == WAL_FORMAT_VERSION,
    }))
}

/// Whether a failed lookup means "no such file" (also when a path component is a file).
fn is_absent(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// A word for a file type that cannot hold a database.
fn file_kind(file_type: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    }
}

/// For a database that does not exist yet: the nearest existing ancestor must be a directory,
/// or creating the file will fail (`--db notes.txt/results.sqlite`).
fn check_room_for(path: &Path) -> Result<(), DbError> {
    let mut ancestor = path.parent();
    while let Some(dir) = ancestor.filter(|dir| !dir.as_os_str().is_empty()) {
        match std::fs::metadata(dir) {
            Ok(metadata) if metadata.is_dir() => return Ok(()),
            Ok(_) => {
                return Err(DbError::NoRoom {
                    path: path.to_owned(),
                    blocker: dir.to_owned(),
                })
            }
            Err(error) if is_absent(&error) => {
                ancestor = dir.parent();
            }
            Err(source) => {
                return Err(DbError::Io {
                    path: dir.to_owned(),
                    source,
                })
            }
        }
    }
    Ok(())
}

/// Checks an existing file as SQLite sees it, through a connection that writes nothing to it:
/// read-only, or — for a WAL file nobody has open, where a read-only connection would leave
/// empty `-wal`/`-shm` files behind — read-write with no WAL frames it could ever copy back.
fn validate_existing(
    path: &Path,
    file: &FileFacts,
    migrations: &[schema::Migration],
) -> Result<Validation, DbError> {
    if file.empty {
        return Ok(Validation::Done);
    }
    let sqlite = |source| DbError::from_sqlite(path, source);
    let wal_path = side_file(path, "-wal");
    let mut flags = OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if file.wal_mode && !wal_path.exists() {
        flags |= OpenFlags::SQLITE_OPEN_READ_WRITE;
    } else {
        flags |= OpenFlags::SQLITE_OPEN_READ_ONLY;
    }
    let connection = Connection::open_with_flags(path, flags).map_err(sqlite)?;
    connection.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
    connection
        .pragma_update(None, "query_only", true)
        .map_err(sqlite)?;
    match validate(path, &connection, migrations) {
        Err(DbError::Sqlite {
            source: rusqlite::Error::SqliteFailure(error, _),
            ..
        }) if error.extended_code == rusqlite::ffi::SQLITE_READONLY_ROLLBACK => {
            Ok(Validation::AfterRecovery)
        }
        other => other.map(|()| Validation::Done),
    }
}

/// The file must be storlab's (or an empty database), not newer than this build, and pass
/// SQLite's `quick_check` — a read of every page that finds damaged pages and truncation.
fn validate(
    path: &Path,
    connection: &Connection,
    migrations: &[schema::Migration],
) -> Result<(), DbError> {
    let sqlite = |source| DbError::from_sqlite(path, source);
    let identity = read_identity(connection).map_err(sqlite)?;
    identity.check(path)?;
    if identity.version > migrations.len() as u32 {
        let needed = connection
            .query_row(
                "SELECT value FROM meta WHERE key = ?1",
                [schema::written_by_key(identity.version)],
                |row| row.get::<_, String>(0),
            )
            .optional()
            .ok()
            .flatten()
            .unwrap_or_else(|| format!("with schema version {}", identity.version));
        return Err(DbError::TooNew {
            path: path.to_owned(),
            found: identity.version,
            supported: migrations.len() as u32,
            this_version: TOOL_VERSION.to_owned(),
            needed,
        });
    }
    let verdict: String = connection
        .query_row("PRAGMA quick_check(1)", [], |row| row.get(0))
        .map_err(sqlite)?;
    if verdict != "ok" {
        return Err(DbError::Corrupt {
            path: path.to_owned(),
            // quick_check lists one problem a line; the error stays on one.
            detail: format!("quick_check: {}", verdict.replace('\n', "; ")),
        });
    }
    if identity.application_id == APPLICATION_ID {
        let difference =
            crate::integrity::schema_difference(connection, migrations, identity.version)
                .map_err(sqlite)?;
        if let Some(difference) = difference {
            return Err(DbError::Corrupt {
                path: path.to_owned(),
                detail: format!(
                    "its schema is not storlab's schema version {}: {difference}",
                    identity.version
                ),
            });
        }
    }
    Ok(())
}

/// Whose database a file is and how far its schema has come.
struct Identity {
    application_id: i32,
    version: u32,
    objects: i64,
}

impl Identity {
    /// Foreign unless it carries storlab's id or is an empty database with no id at all
    /// (e.g. made by `sqlite3 FILE ''`).
    fn check(&self, path: &Path) -> Result<(), DbError> {
        let Identity {
            application_id,
            version,
            objects,
        } = *self;
        if application_id != APPLICATION_ID && (application_id != 0 || version != 0 || objects != 0)
        {
            return Err(DbError::Foreign {
                path: path.to_owned(),
                detail: format!(
                    "application_id {application_id:#010x}, user_version {version}, {objects} schema objects"
                ),
            });
        }
        Ok(())
    }
}

/// The three facts in one statement, so one read snapshot: read one by one outside a
/// transaction, they could straddle another storlab's commit of a new file's schema and show
/// its tables without its id ("another application's database", seen in a CI run).
fn read_identity(connection: &Connection) -> rusqlite::Result<Identity> {
    connection.query_row(
        "SELECT (SELECT application_id FROM pragma_application_id()), \
                (SELECT user_version FROM pragma_user_version()), \
                (SELECT count(*) FROM sqlite_schema)",
        [],
        |row| {
            Ok(Identity {
                application_id: row.get(0)?,
                version: row.get(1)?,
                objects: row.get(2)?,
            })
        },
    )
}

/// Applies the migrations the file lacks, deciding what it lacks inside the same write
/// transaction (`BEGIN IMMEDIATE`), so two storlabs opening a new file at once cannot both
/// create the tables: the second waits, then finds the schema already there.
fn bring_schema_up_to_date(
    path: &Path,
    connection: &mut Connection,
    migrations: &[schema::Migration],
) -> Result<(), DbError> {
    let sqlite = |source| DbError::from_sqlite(path, source);
    // The usual case, decided without taking the write lock: a version only ever grows.
    let seen = read_identity(connection).map_err(sqlite)?;
    if seen.application_id == APPLICATION_ID && seen.version == migrations.len() as u32 {
        return Ok(());
    }
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sqlite)?;
    let identity = read_identity(&transaction).map_err(sqlite)?;
    identity.check(path)?;
    if identity.version >= migrations.len() as u32 {
        // Up to date (or newer, which validation refused unless another storlab upgraded the
        // file a moment ago: then the newer build's schema stays as it is).
        if identity.version > migrations.len() as u32 {
            return Err(DbError::TooNew {
                path: path.to_owned(),
                found: identity.version,
                supported: migrations.len() as u32,
                this_version: TOOL_VERSION.to_owned(),
                needed: format!("with schema version {}", identity.version),
            });
        }
        return Ok(());
    }
    schema::apply(&transaction, migrations, identity.version, TOOL_VERSION).map_err(sqlite)?;
    transaction.commit().map_err(sqlite)
}

/// `path` with `suffix` appended, as SQLite names its side files (`-wal`, `-journal`).
fn side_file(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// An error that may mean "another storlab holds the write lock; try again".
trait MaybeBusy {
    fn is_busy(&self) -> bool;
}

impl MaybeBusy for rusqlite::Error {
    fn is_busy(&self) -> bool {
        use rusqlite::ffi::ErrorCode;
        matches!(
            self.sqlite_error_code(),
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
        )
    }
}

impl MaybeBusy for DbError {
    fn is_busy(&self) -> bool {
        matches!(self, DbError::Sqlite { source, .. } if source.is_busy())
    }
}

/// Runs `attempt` (a whole transaction), trying again a bounded number of times with a growing
/// pause when the database stayed busy beyond the busy timeout.
fn retry_when_busy<T, E: MaybeBusy>(mut attempt: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    let mut pause = FIRST_RETRY_PAUSE;
    for _ in 0..BUSY_RETRIES {
        match attempt() {
            Err(error) if error.is_busy() => {
                std::thread::sleep(pause);
                pause *= 2;
            }
            done => return done,
        }
    }
    attempt()
}
