//! The database schema as an ordered list of migrations, and the code that applies them.
//!
//! `PRAGMA user_version` holds the number of migrations applied; `PRAGMA application_id` marks
//! the file as storlab's so that a foreign SQLite file is never written to. Migrations are only
//! ever appended: a released one is never edited, so every older file upgrades the same way.

use rusqlite::{params, Transaction};

/// `PRAGMA application_id` of a storlab results database: ASCII "STLB".
pub const APPLICATION_ID: i32 = i32::from_be_bytes(*b"STLB");

/// One schema step: applied to a database at version `index`, it leaves it at `index + 1`.
pub struct Migration {
    /// What the step changes, for people reading the history.
    pub purpose: &'static str,
    /// The SQL of the step, run inside the migration transaction.
    pub sql: &'static str,
}

/// Every migration, oldest first. The schema version is `MIGRATIONS.len()`.
pub const MIGRATIONS: &[Migration] = &[Migration {
    purpose: "runs, their sweep points with indexed metrics, latency percentiles and bins",
    sql: r#"
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE runs (
    id                    INTEGER PRIMARY KEY,
    started_unix_ms       INTEGER NOT NULL,
    finished_unix_ms      INTEGER,
    status                TEXT NOT NULL,
    tool_name             TEXT NOT NULL,
    tool_version          TEXT NOT NULL,
    hostname              TEXT NOT NULL,
    kernel                TEXT NOT NULL,
    cpus                  INTEGER NOT NULL,
    report_schema_version INTEGER NOT NULL,
    command               TEXT NOT NULL,
    preset                TEXT,
    warnings_json         TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX runs_by_start ON runs (started_unix_ms);
CREATE INDEX runs_by_preset ON runs (preset);
CREATE TABLE points (
    id                    INTEGER PRIMARY KEY,
    run_id                INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position              INTEGER NOT NULL,
    name                  TEXT NOT NULL,
    engine                TEXT NOT NULL,
    target                TEXT NOT NULL,
    target_kind           TEXT NOT NULL,
    target_size_bytes     INTEGER NOT NULL,
    device_state          TEXT NOT NULL,
    data_pattern          TEXT NOT NULL,
    align_bytes           INTEGER NOT NULL,
    seed                  TEXT NOT NULL,
    rw                    TEXT NOT NULL,
    block_size            TEXT NOT NULL,
    iodepth               INTEGER NOT NULL,
    numjobs               INTEGER NOT NULL,
    elapsed_ns            INTEGER NOT NULL,
    read_iops             REAL,
    read_bw_bytes_per_s   REAL,
    read_clat_mean_ns     REAL,
    write_iops            REAL,
    write_bw_bytes_per_s  REAL,
    write_clat_mean_ns    REAL,
    trim_iops             REAL,
    trim_bw_bytes_per_s   REAL,
    warnings_json         TEXT NOT NULL,
    report_json           TEXT NOT NULL,
    UNIQUE (run_id, position)
);
CREATE INDEX points_by_target ON points (target);
CREATE TABLE latency_percentiles (
    point_id   INTEGER NOT NULL REFERENCES points (id) ON DELETE CASCADE,
    direction  TEXT NOT NULL,
    kind       TEXT NOT NULL,
    percentile REAL NOT NULL,
    value_ns   INTEGER NOT NULL,
    PRIMARY KEY (point_id, direction, kind, percentile)
) WITHOUT ROWID;
CREATE TABLE latency_bins (
    point_id   INTEGER NOT NULL REFERENCES points (id) ON DELETE CASCADE,
    direction  TEXT NOT NULL,
    bin_index  INTEGER NOT NULL,
    upper_ns   INTEGER,
    count      INTEGER NOT NULL,
    PRIMARY KEY (point_id, direction, bin_index)
) WITHOUT ROWID;
"#,
}];

/// The schema version this build writes and reads.
pub fn latest_version() -> u32 {
    MIGRATIONS.len() as u32
}

/// The `meta` key recording which storlab version wrote each schema version, so that an older
/// storlab can tell the user which version they need.
pub fn written_by_key(version: u32) -> String {
    format!("schema_{version}_written_by")
}

/// Applies `migrations[from..]` inside `transaction`, which the caller commits: a failure
/// leaves the file as it was. The caller reads `from` inside the same write transaction, so
/// two processes never apply the same step. `tool_version` is recorded for each version reached.
pub fn apply(
    transaction: &Transaction<'_>,
    migrations: &[Migration],
    from: u32,
    tool_version: &str,
) -> rusqlite::Result<()> {
    if from == 0 {
        transaction.pragma_update(None, "application_id", APPLICATION_ID)?;
    }
    for (index, migration) in migrations.iter().enumerate().skip(from as usize) {
        transaction.execute_batch(migration.sql)?;
        record_version(transaction, index as u32 + 1, tool_version)?;
    }
    Ok(())
}

fn record_version(
    transaction: &Transaction<'_>,
    version: u32,
    tool_version: &str,
) -> rusqlite::Result<()> {
    transaction.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
        params![written_by_key(version), tool_version],
    )?;
    transaction.pragma_update(None, "user_version", version)
}
