//! Why the results database could not be opened, read or written: one line each, naming the file.

use std::path::PathBuf;

/// Errors of the results database.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The file exists but is not an SQLite database at all.
    #[error("{}: not a storlab results database (not an SQLite file); it was left untouched", .path.display())]
    NotSqlite { path: PathBuf },
    /// A FIFO, socket, device or directory: never handed to SQLite.
    #[error("{}: is {kind}, not a file; the results database must be a regular file (--db)", .path.display())]
    NotAFile { path: PathBuf, kind: &'static str },
    /// A new database cannot be created there: an ancestor is not a directory.
    #[error("{}: cannot create the results database there: {} is not a directory", .path.display(), .blocker.display())]
    NoRoom { path: PathBuf, blocker: PathBuf },
    /// An SQLite database that belongs to another program (or to nobody we know).
    #[error("{}: an SQLite database of another application ({detail}); it was left untouched, choose another file with --db", .path.display())]
    Foreign { path: PathBuf, detail: String },
    /// A storlab database whose schema is newer than this build knows.
    #[error("{}: results database schema version {found} is newer than this storlab ({this_version}) supports (up to {supported}); it needs storlab {needed} or newer", .path.display())]
    TooNew {
        path: PathBuf,
        found: u32,
        supported: u32,
        this_version: String,
        needed: String,
    },
    /// A database that was usable (or missing) when the run started and is not when a point is
    /// saved: something else wrote there during the run (storlab's own jobs and outputs never
    /// may, checked before the run), so "left untouched" would not be the whole truth.
    #[error("{}: changed during the run: it was usable when the run started and now is {detail}; the run's points are not saved there", .path.display())]
    ChangedDuringRun { path: PathBuf, detail: String },
    /// SQLite says the file is damaged.
    #[error("{}: results database is damaged ({detail}); it was left untouched", .path.display())]
    Corrupt { path: PathBuf, detail: String },
    /// Any other SQLite failure (locked, disk full, ...).
    #[error("{}: results database: {source}", .path.display())]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// Reading the file header or creating its directory failed.
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A read-only command found no database file.
    #[error("{}: no results database yet (runs are saved there by `storlab run`)", .path.display())]
    Missing { path: PathBuf },
    /// No run has that id.
    #[error("no run {id} in {} (see `storlab history`)", .path.display())]
    NoSuchRun { path: PathBuf, id: String },
    /// A run id that is not `rN`, `N` or `last`.
    #[error("run id '{text}': expected rN (as `storlab history` prints), N or last")]
    BadRunId { text: String },
    /// A date/time filter that could not be read.
    #[error("time '{text}': {detail}")]
    BadTime { text: String, detail: String },
    /// A stored report that no longer parses.
    #[error("{}: run r{run_id}, point {position}: stored report is not valid: {detail}", .path.display())]
    BadStoredReport {
        path: PathBuf,
        run_id: i64,
        position: i64,
        detail: String,
    },
}

impl DbError {
    /// Classifies an SQLite error: damage gets its own variant, the rest stays as it is.
    pub(crate) fn from_sqlite(path: &std::path::Path, source: rusqlite::Error) -> Self {
        use rusqlite::ffi::ErrorCode;
        match source.sqlite_error_code() {
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => DbError::Corrupt {
                path: path.to_owned(),
                detail: source.to_string(),
            },
            // SQLite reads past the end of a truncated file as a short read.
            _ if extended_code(&source) == Some(rusqlite::ffi::SQLITE_IOERR_SHORT_READ) => {
                DbError::Corrupt {
                    path: path.to_owned(),
                    detail: source.to_string(),
                }
            }
            _ => DbError::Sqlite {
                path: path.to_owned(),
                source,
            },
        }
    }
}

fn extended_code(error: &rusqlite::Error) -> Option<std::ffi::c_int> {
    match error {
        rusqlite::Error::SqliteFailure(failure, _) => Some(failure.extended_code),
        _ => None,
    }
}
