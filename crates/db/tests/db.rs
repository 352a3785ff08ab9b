//! Schema, migration and safety tests of the results database: round trips of runs and points,
//! filters, deletion, upgrades from older schemas, refusal (file untouched) of foreign,
//! damaged, non-SQLite and newer-schema files and of FIFOs, and writers racing on one file.

use rusqlite::Connection;
use std::path::Path;
use storlab_db::schema::{latest_version, Migration, APPLICATION_ID, MIGRATIONS};
use storlab_db::{Database, DbError, NewRun, RunFilter, RunId, RunRef, RunStatus};
use storlab_report::{HostInfo, JobNotes, JobReport, JobSetup, TargetInfo, ToolInfo};
use storlab_stats::WorkerStats;

const MS: u64 = 1_000_000;
const DAY_MS: u64 = 86_400_000;

fn job(name: &str, target: &str, iodepth: u32) -> JobReport {
    let mut stats = WorkerStats::new(100 * MS);
    stats.elapsed_ns = 300 * MS;
    for i in 0..300 {
        stats.read.record(i * MS, 4096, 1_000, 50_000 + i * 100);
    }
    JobReport::new(
        JobSetup {
            name: name.into(),
            job: serde_json::json!({ "name": name }),
            engine: "sim".into(),
            target: TargetInfo {
                description: target.into(),
                kind: "sim".into(),
                size_bytes: 1 << 30,
                path: None,
            },
            device_state: "fresh".into(),
            data_pattern: "random".into(),
            align_bytes: 4096,
            seed: u64::MAX - 7,
            iodepth,
            numjobs: 1,
            rw: "randread".into(),
            block_size: "4 KiB".into(),
        },
        JobNotes {
            warnings: vec!["a job warning".into()],
            engine_details: vec![("k".into(), "v".into())],
            sim: Some(serde_json::json!({ "bottleneck": "drive" })),
        },
        &stats,
    )
}

fn new_run(started_unix_ms: u64, preset: Option<&str>) -> NewRun {
    NewRun {
        tool: ToolInfo::storlab(),
        host: HostInfo {
            hostname: "testhost".into(),
            kernel: "6.0".into(),
            cpus: 2,
        },
        started_unix_ms,
        command: "storlab run --test".into(),
        preset: preset.map(str::to_owned),
    }
}

fn assert_refused_untouched(path: &Path, check: impl Fn(&DbError) -> bool) -> String {
    let before = std::fs::read(path).unwrap();
    let error = Database::open(path).unwrap_err();
    assert!(check(&error), "unexpected error: {error:?}");
    assert_eq!(std::fs::read(path).unwrap(), before, "file was modified");
    for suffix in ["-journal", "-wal"] {
        let side = format!("{}{suffix}", path.display());
        assert!(!Path::new(&side).exists(), "{side} left behind");
    }
    let text = error.to_string();
    assert!(!text.contains('\n'), "one line: {text}");
    assert!(text.contains(&path.display().to_string()), "{text}");
    text
}

#[test]
fn fresh_database_gets_id_version_and_round_trips_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/results.sqlite");
    let mut db = Database::open(&path).unwrap();
    assert_eq!(db.schema_version().unwrap(), latest_version());
    let id: i32 = db
        .connection()
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .unwrap();
    assert_eq!(id, APPLICATION_ID);

    let run = db.begin_run(&new_run(5 * DAY_MS, Some("cdm"))).unwrap();
    let jobs = [
        job("a", "sim:usb3-uas-ssd", 1),
        job("b", "sim:usb3-uas-ssd", 32),
    ];
    for job in &jobs {
        db.add_point(run, job).unwrap();
    }
    db.finish_run(
        run,
        RunStatus::Complete,
        &["run warning".into()],
        6 * DAY_MS,
    )
    .unwrap();
    drop(db);

    let db = Database::open_existing(&path).unwrap();
    let stored = db.load_run(RunRef::Id(run)).unwrap();
    assert_eq!(stored.report.jobs, jobs);
    assert_eq!(stored.report.warnings, vec!["run warning".to_string()]);
    assert_eq!(stored.report.host.hostname, "testhost");
    assert_eq!(stored.summary.status, RunStatus::Complete);
    assert_eq!(stored.summary.points, 2);
    assert_eq!(stored.summary.targets, vec!["sim:usb3-uas-ssd".to_string()]);
    assert_eq!(stored.summary.preset.as_deref(), Some("cdm"));
    assert_eq!(stored.summary.finished_unix_ms, Some(6 * DAY_MS));

    // Percentiles and histogram bins are queryable without parsing JSON.
    let p99: i64 = db
        .connection()
        .query_row(
            "SELECT value_ns FROM latency_percentiles l JOIN points p ON p.id = l.point_id
             WHERE p.name = 'b' AND l.direction = 'read' AND l.kind = 'clat' AND l.percentile = 99.0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let expected = jobs[1]
        .read
        .as_ref()
        .unwrap()
        .clat
        .percentile_ns(99.0)
        .unwrap();
    assert_eq!(p99 as u64, expected);
    let binned: i64 = db
        .connection()
        .query_row(
            "SELECT sum(count) FROM latency_bins b JOIN points p ON p.id = b.point_id WHERE p.name = 'a'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(binned, 300);
}

#[test]
fn history_filters_by_target_preset_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Database::open(&dir.path().join("db.sqlite")).unwrap();
    let mut add = |day: u64, preset: Option<&str>, target: &str| {
        let run = db.begin_run(&new_run(day * DAY_MS, preset)).unwrap();
        db.add_point(run, &job("j", target, 1)).unwrap();
        run
    };
    let first = add(1, Some("cdm"), "sim:usb3-uas-ssd");
    let second = add(2, None, "/dev/sdb");
    let third = add(3, Some("cdm"), "/dev/sdb");
    let ids = |filter: RunFilter| -> Vec<RunId> {
        db.list_runs(&filter)
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect()
    };
    assert_eq!(ids(RunFilter::default()), vec![third, second, first]);
    let by_target = RunFilter {
        target: Some("sdb".into()),
        ..Default::default()
    };
    assert_eq!(ids(by_target), vec![third, second]);
    let by_preset = RunFilter {
        preset: Some("cdm".into()),
        ..Default::default()
    };
    assert_eq!(ids(by_preset), vec![third, first]);
    let window = RunFilter {
        since_unix_ms: Some(2 * DAY_MS),
        until_unix_ms: Some(3 * DAY_MS),
        ..Default::default()
    };
    assert_eq!(ids(window), vec![second]);
    let newest = RunFilter {
        limit: Some(1),
        ..Default::default()
    };
    assert_eq!(ids(newest), vec![third]);
    assert_eq!(db.resolve(RunRef::Last).unwrap(), third);
}

#[test]
fn deleting_a_run_removes_its_points_and_latencies() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Database::open(&dir.path().join("db.sqlite")).unwrap();
    let keep = db.begin_run(&new_run(DAY_MS, None)).unwrap();
    db.add_point(keep, &job("keep", "t", 1)).unwrap();
    let gone = db.begin_run(&new_run(2 * DAY_MS, None)).unwrap();
    db.add_point(gone, &job("gone", "t", 1)).unwrap();
    assert_eq!(db.delete_run(RunRef::Id(gone)).unwrap(), gone);
    let count = |table: &str| -> i64 {
        db.connection()
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(count("runs"), 1);
    assert_eq!(count("points"), 1);
    let per_point = count("latency_percentiles");
    let expected = job("keep", "t", 1).read.unwrap().clat.percentiles.len() as i64 * 3;
    assert_eq!(per_point, expected);
    let error = db.delete_run(RunRef::Id(gone)).unwrap_err().to_string();
    assert!(error.contains("no run r"), "{error}");
}

#[test]
fn run_ids_parse_as_printed() {
    assert_eq!("r42".parse::<RunRef>().unwrap(), RunRef::Id(RunId(42)));
    assert_eq!("7".parse::<RunRef>().unwrap(), RunRef::Id(RunId(7)));
    assert_eq!("last".parse::<RunRef>().unwrap(), RunRef::Last);
    for bad in ["", "r", "r-1", "0", "x1", "r1.5"] {
        let error = bad.parse::<RunRef>().unwrap_err().to_string();
        assert!(error.contains("expected rN"), "{bad}: {error}");
    }
    assert_eq!(RunId(3).to_string(), "r3");
}

#[test]
fn older_schema_is_upgraded_keeping_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let mut db = Database::open(&path).unwrap();
    let run = db.begin_run(&new_run(DAY_MS, None)).unwrap();
    db.add_point(run, &job("kept", "t", 1)).unwrap();
    drop(db);

    // A later build adds a migration; the file written by this one must upgrade to it.
    let next = Migration {
        purpose: "test: a column added later",
        sql: "ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT 'none';",
    };
    let mut extended: Vec<Migration> = MIGRATIONS
        .iter()
        .map(|m| Migration {
            purpose: m.purpose,
            sql: m.sql,
        })
        .collect();
    extended.push(next);
    let db = Database::open_with(&path, &extended, false).unwrap();
    assert_eq!(db.schema_version().unwrap(), latest_version() + 1);
    let note: String = db
        .connection()
        .query_row("SELECT note FROM runs WHERE id = ?1", [run.0], |r| r.get(0))
        .unwrap();
    assert_eq!(note, "none");
    assert_eq!(db.load_run(RunRef::Id(run)).unwrap().report.jobs.len(), 1);
    drop(db);

    // ...and this build now refuses that file, naming the version that wrote it.
    let text = assert_refused_untouched(&path, |e| matches!(e, DbError::TooNew { .. }));
    assert!(
        text.contains(&format!("schema version {}", latest_version() + 1)),
        "{text}"
    );
    assert!(
        text.contains(&format!("needs storlab {}", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
}

#[test]
fn failed_migration_leaves_the_file_at_its_old_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    drop(Database::open(&path).unwrap());
    let broken = [
        Migration {
            purpose: MIGRATIONS[0].purpose,
            sql: MIGRATIONS[0].sql,
        },
        Migration {
            purpose: "test: valid step",
            sql: "CREATE TABLE extra (x INTEGER);",
        },
        Migration {
            purpose: "test: invalid step",
            sql: "THIS IS NOT SQL;",
        },
    ];
    assert!(Database::open_with(&path, &broken, false).is_err());
    let db = Database::open(&path).unwrap();
    assert_eq!(db.schema_version().unwrap(), latest_version());
    let extra: i64 = db
        .connection()
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name = 'extra'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        extra, 0,
        "the valid step was rolled back with the invalid one"
    );
}

#[test]
fn non_sqlite_file_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "my precious notes, not a database\n".repeat(100)).unwrap();
    let text = assert_refused_untouched(&path, |e| matches!(e, DbError::NotSqlite { .. }));
    assert!(text.contains("not an SQLite file"), "{text}");
}

#[test]
fn foreign_sqlite_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.sqlite");
    {
        let other = Connection::open(&path).unwrap();
        other
            .execute_batch("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('x');")
            .unwrap();
    }
    let text = assert_refused_untouched(&path, |e| matches!(e, DbError::Foreign { .. }));
    assert!(text.contains("another application"), "{text}");

    let tagged = dir.path().join("tagged.sqlite");
    {
        let other = Connection::open(&tagged).unwrap();
        other
            .pragma_update(None, "application_id", 0x0f05_5112)
            .unwrap();
        other.execute_batch("CREATE TABLE t (x);").unwrap();
    }
    let text = assert_refused_untouched(&tagged, |e| matches!(e, DbError::Foreign { .. }));
    assert!(text.contains("0x0f055112"), "{text}");
}

#[test]
fn damaged_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let mut db = Database::open(&path).unwrap();
    let run = db.begin_run(&new_run(DAY_MS, None)).unwrap();
    db.add_point(run, &job("j", "t", 1)).unwrap();
    drop(db);
    // Keep the 100-byte file header, overwrite the schema table on page 1 with noise.
    let mut bytes = std::fs::read(&path).unwrap();
    for (i, byte) in bytes.iter_mut().enumerate().take(4096).skip(100) {
        *byte = (i as u8).wrapping_mul(37) ^ 0x5a;
    }
    std::fs::write(&path, &bytes).unwrap();
    let text = assert_refused_untouched(&path, |e| matches!(e, DbError::Corrupt { .. }));
    assert!(text.contains("damaged"), "{text}");
}

#[test]
fn read_only_open_does_not_create_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.sqlite");
    let error = Database::open_existing(&path).unwrap_err();
    assert!(matches!(error, DbError::Missing { .. }), "{error:?}");
    assert!(!path.exists());
}

#[test]
fn an_empty_file_becomes_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.sqlite");
    std::fs::write(&path, b"").unwrap();
    let db = Database::open(&path).unwrap();
    assert_eq!(db.schema_version().unwrap(), latest_version());
}

#[test]
fn new_databases_are_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(&dir.path().join("db.sqlite")).unwrap();
    let mode: String = db
        .connection()
        .pragma_query_value(None, "journal_mode", |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn writers_racing_on_a_new_file_build_the_schema_once_and_lose_nothing() {
    const TRIALS: usize = 20;
    const WRITERS: usize = 3;
    const POINTS: usize = 3;
    let dir = tempfile::tempdir().unwrap();
    for trial in 0..TRIALS {
        let path = dir.path().join(format!("trial{trial}.sqlite"));
        let start = std::sync::Barrier::new(WRITERS);
        std::thread::scope(|scope| {
            for writer in 0..WRITERS {
                let (path, start) = (&path, &start);
                scope.spawn(move || {
                    start.wait();
                    let mut db = Database::open(path)
                        .unwrap_or_else(|e| panic!("trial {trial} writer {writer}: {e}"));
                    let run = db.begin_run(&new_run(DAY_MS, None)).unwrap();
                    for point in 0..POINTS {
                        db.add_point(run, &job(&format!("p{point}"), "t", 1))
                            .unwrap_or_else(|e| panic!("trial {trial} writer {writer}: {e}"));
                    }
                    db.finish_run(run, RunStatus::Complete, &[], DAY_MS)
                        .unwrap();
                });
            }
        });
        let db = Database::open_existing(&path).unwrap();
        let runs = db.list_runs(&RunFilter::default()).unwrap();
        assert_eq!(runs.len(), WRITERS, "trial {trial}");
        assert!(
            runs.iter().all(|r| r.points == POINTS as u64),
            "trial {trial}: {runs:?}"
        );
    }
}

#[test]
fn check_usable_creates_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let absent = dir.path().join("new/dir/results.sqlite");
    Database::check_usable(&absent).unwrap();
    assert!(!dir.path().join("new").exists());

    let path = dir.path().join("db.sqlite");
    let mut db = Database::open(&path).unwrap();
    let run = db.begin_run(&new_run(DAY_MS, None)).unwrap();
    db.add_point(run, &job("j", "t", 1)).unwrap();
    drop(db);
    let before = std::fs::read(&path).unwrap();
    Database::check_usable(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), before);
    for suffix in ["-journal", "-wal", "-shm"] {
        let side = format!("{}{suffix}", path.display());
        assert!(!Path::new(&side).exists(), "{side} left behind");
    }

    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "text").unwrap();
    let error = Database::check_usable(&notes.join("results.sqlite")).unwrap_err();
    assert!(matches!(error, DbError::NoRoom { .. }), "{error:?}");
    assert!(
        error.to_string().contains("notes.txt is not a directory"),
        "{error}"
    );
    let error = Database::check_usable(&notes).unwrap_err();
    assert!(matches!(error, DbError::NotSqlite { .. }), "{error:?}");
}

#[test]
fn damaged_wal_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let mut db = Database::open(&path).unwrap();
    let run = db.begin_run(&new_run(DAY_MS, None)).unwrap();
    for index in 0..20 {
        db.add_point(run, &job(&format!("j{index}"), "t", 1))
            .unwrap();
    }
    drop(db);
    // Noise over the data pages only: page 1 (header and schema) still reads fine, so only a
    // check of every page finds the damage.
    let page_size_bytes = 4096;
    let mut bytes = std::fs::read(&path).unwrap();
    let end = bytes.len() - page_size_bytes;
    for (i, byte) in bytes[2 * page_size_bytes..end].iter_mut().enumerate() {
        *byte = (i as u8).wrapping_mul(37) ^ 0x5a;
    }
    std::fs::write(&path, &bytes).unwrap();
    let text = assert_refused_untouched(&path, |e| matches!(e, DbError::Corrupt { .. }));
    assert!(text.contains("quick_check"), "{text}");
    assert!(!Path::new(&format!("{}-shm", path.display())).exists());
}

#[test]
fn a_fifo_is_refused_without_being_opened() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // Opening a FIFO for reading would block this test forever.
    let error = Database::open(&fifo).unwrap_err();
    assert!(matches!(error, DbError::NotAFile { .. }), "{error:?}");
    assert!(error.to_string().contains("is a FIFO"), "{error}");
    let error = Database::check_usable(&fifo).unwrap_err();
    assert!(matches!(error, DbError::NotAFile { .. }), "{error:?}");
}
