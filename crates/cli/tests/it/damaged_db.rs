//! Damaged results databases, generated from a sound one: truncated, with a flipped byte in a
//! header field SQLite's file format fixes or in a b-tree page's header, with a table or index
//! dropped, a column added, renamed or dropped, an object added. Each is refused by `storlab
//! run` (and `history`) with one line and exit 2, and left byte for byte as it was, with no
//! side file (`-wal`, `-shm`, `-journal`) made beside it.

use crate::common::{stderr, storlab_with_db};
use rusqlite::Connection;
use std::path::Path;

/// SQLite file header fields (sqlite.org/fileformat2.html, 1.3) that have one valid value or a
/// small set of them, with a bit that makes them invalid when flipped: (offset, field).
const HEADER_FIELDS: [(usize, &str); 16] = [
    (0, "magic string"),
    (15, "magic string's NUL"),
    (16, "page size"),
    (17, "page size (low byte)"),
    (18, "file format write version"),
    (19, "file format read version"),
    (21, "maximum embedded payload fraction"),
    (22, "minimum embedded payload fraction"),
    (23, "leaf payload fraction"),
    (35, "first freelist trunk page"),
    (39, "freelist pages"),
    (47, "schema format number"),
    (59, "text encoding"),
    (63, "user_version"),
    (71, "application_id"),
    (72, "reserved for expansion"),
];

/// A change to the sound file's bytes.
type ByteDamage = Box<dyn Fn(&mut Vec<u8>)>;

/// One damaged copy: how to make it from the sound file's bytes or through SQLite.
enum Damage {
    Bytes(ByteDamage),
    Sql(&'static str),
}

/// A sound database with two saved runs, as `storlab run` leaves it (WAL checkpointed away).
fn sound_database(dir: &Path) -> Vec<u8> {
    let path = dir.join("sound.sqlite");
    for size in ["--size=64k", "--size=128k"] {
        let out = storlab_with_db(&path)
            .args(["run", "--ioengine=null", size])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert!(!dir.join("sound.sqlite-wal").exists());
    std::fs::read(&path).unwrap()
}

/// Every damage the generator makes of a `len`-byte database of `page_bytes` pages.
fn damages(len: usize, page_bytes: usize) -> Vec<(String, Damage)> {
    let mut all: Vec<(String, Damage)> = Vec::new();
    let truncations = [16, 99, 100, 101, 1024, page_bytes, page_bytes + 1, len / 2];
    for at in truncations.into_iter().chain([len - page_bytes, len - 1]) {
        all.push((
            format!("truncated to {at} bytes"),
            Damage::Bytes(Box::new(move |b| b.truncate(at))),
        ));
    }
    for (at, field) in HEADER_FIELDS {
        all.push((
            format!("header byte {at} ({field}) flipped"),
            Damage::Bytes(Box::new(move |b| b[at] ^= 0x01)),
        ));
    }
    // Each b-tree page's type byte (page 1's header follows the file header) and cell count.
    for page in 0..len / page_bytes {
        let header = if page == 0 { 100 } else { page * page_bytes };
        for (offset, what) in [(0, "type"), (4, "cell count")] {
            all.push((
                format!("page {} {what} flipped", page + 1),
                Damage::Bytes(Box::new(move |b| b[header + offset] ^= 0x40)),
            ));
        }
    }
    for sql in [
        "DROP TABLE meta",
        "DROP TABLE latency_bins",
        "DROP TABLE latency_percentiles",
        "DROP INDEX runs_by_start",
        "DROP INDEX points_by_target",
        "ALTER TABLE runs ADD COLUMN extra TEXT",
        "ALTER TABLE points RENAME COLUMN report_json TO report",
        "ALTER TABLE runs DROP COLUMN warnings_json",
        "ALTER TABLE points RENAME TO points_old",
        "CREATE TABLE extra (x)",
        "CREATE TRIGGER wipe AFTER INSERT ON runs BEGIN DELETE FROM points; END",
        "CREATE VIEW v AS SELECT 1",
        "PRAGMA user_version = 0",
    ] {
        all.push((sql.to_string(), Damage::Sql(sql)));
    }
    all
}

#[test]
fn every_damaged_database_is_refused_with_exit_2_and_left_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let sound = sound_database(dir.path());
    let page_bytes = usize::from(u16::from_be_bytes([sound[16], sound[17]]));
    let mut passed = Vec::new();
    for (index, (case, damage)) in damages(sound.len(), page_bytes).into_iter().enumerate() {
        let case_dir = dir.path().join(format!("case{index}"));
        std::fs::create_dir(&case_dir).unwrap();
        let path = case_dir.join("results.sqlite");
        std::fs::write(&path, &sound).unwrap();
        match damage {
            Damage::Bytes(change) => {
                let mut bytes = sound.clone();
                change(&mut bytes);
                std::fs::write(&path, &bytes).unwrap();
            }
            Damage::Sql(sql) => {
                let connection = Connection::open(&path).unwrap();
                connection.execute_batch(sql).unwrap();
                drop(connection);
            }
        }
        let before = std::fs::read(&path).unwrap();
        for args in [
            vec!["run", "--ioengine=null", "--size=64k"],
            vec!["history"],
        ] {
            let out = storlab_with_db(&path).args(&args).output().unwrap();
            let err = stderr(&out);
            let refused = out.status.code() == Some(2) && err.lines().count() == 1;
            let untouched = std::fs::read(&path).unwrap() == before;
            let alone = std::fs::read_dir(&case_dir).unwrap().count() == 1;
            if !(refused && untouched && alone) {
                passed.push(format!(
                    "{case}: `storlab {}` exit {:?}, untouched {untouched}, no side file \
                     {alone}: {}",
                    args.join(" "),
                    out.status.code(),
                    err.trim()
                ));
            }
        }
    }
    assert!(
        passed.is_empty(),
        "not refused untouched (make the sound database with two `storlab run --ioengine=null`, \
         damage it as named):\n{}",
        passed.join("\n")
    );
}
