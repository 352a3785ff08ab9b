//! storlab-db: the results database. Every run is saved in an embedded SQLite file as it goes
//! (each finished point committed at once), listed, read back as a `RunReport`, and deleted.
//!
//! The file is opened with care: a file that is not SQLite, belongs to another application
//! (`PRAGMA application_id`), is damaged, or has a newer schema (`PRAGMA user_version`) than this
//! build knows is refused with one line and never written to. See `docs/results-db.md`.

#![forbid(unsafe_code)]

mod database;
mod error;
mod integrity;
pub mod schema;
pub mod time;

pub use database::{Database, NewRun, RunFilter, RunId, RunRef, RunStatus, RunSummary, StoredRun};
pub use error::DbError;

use std::path::PathBuf;

/// Environment variable naming the database file; overrides the per-user default.
pub const DB_ENV: &str = "STORLAB_DB";
/// File name of the database inside the per-user data directory.
pub const DB_FILE_NAME: &str = "results.sqlite";

/// The database path when `--db` is not given: `$STORLAB_DB`, else
/// `$XDG_DATA_HOME/storlab/results.sqlite`, else `~/.local/share/storlab/results.sqlite`.
/// `None` when none of the variables is set.
pub fn default_path() -> Option<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if let Some(path) = non_empty(DB_ENV) {
        return Some(PathBuf::from(path));
    }
    let data_home = non_empty("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| non_empty("HOME").map(|home| PathBuf::from(home).join(".local/share")))?;
    Some(data_home.join("storlab").join(DB_FILE_NAME))
}
