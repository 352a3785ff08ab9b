//! The results database through the binary: runs are saved and listed, shown, exported,
//! compared and deleted; a foreign or damaged file, a FIFO, socket or device is refused
//! untouched; runs writing to one file at once all keep every point; a point that cannot be
//! saved fails the run; bad input leaves no new file; and a run killed with SIGKILL mid-sweep
//! keeps every point it announced as finished.

use crate::common::{run_ok_with_db as run_ok, stdout, storlab_with_db as storlab};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn runs_are_saved_listed_shown_exported_compared_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    run_ok(
        &db,
        &[
            "run",
            "--target",
            "sim:usb3-uas-ssd",
            "--rw=randread",
            "--bs=4k",
            "--iodepth=8",
            "--size=16m",
            "--number_ios=500",
        ],
    );
    run_ok(
        &db,
        &[
            "run",
            "--ioengine=null",
            "--size=4m",
            "--rw=read",
            "--bs=64k",
        ],
    );
    run_ok(&db, &["run", "--no-db", "--ioengine=null", "--size=1m"]);

    let history = stdout(&run_ok(&db, &["history"]));
    let lines: Vec<&str> = history.lines().collect();
    assert_eq!(lines.len(), 3, "header and two runs:\n{history}");
    assert!(lines[1].starts_with("r2 "), "{history}");
    assert!(lines[2].contains("sim:usb3-uas-ssd"), "{history}");
    let filtered = stdout(&run_ok(&db, &["history", "--target", "sim:"]));
    assert_eq!(filtered.lines().count(), 2, "{filtered}");
    let none = stdout(&run_ok(&db, &["history", "--until", "2000-01-01"]));
    assert_eq!(none.lines().count(), 1, "{none}");

    let shown = stdout(&run_ok(&db, &["show", "r1"]));
    assert!(shown.contains("sim:usb3-uas-ssd"), "{shown}");
    assert!(shown.contains("status    complete"), "{shown}");

    let json = stdout(&run_ok(&db, &["export", "r1", "--format", "json"]));
    let doc: serde_json::Value = serde_json::from_str(&json).expect("export is JSON");
    assert_eq!(doc["jobs"][0]["read"]["ios"], 500);
    assert_eq!(doc["jobs"][0]["sim"]["stack"], "usb3-uas-ssd");
    let fio = stdout(&run_ok(&db, &["export", "1", "--format", "fio-json"]));
    assert!(serde_json::from_str::<serde_json::Value>(&fio).unwrap()["jobs"].is_array());
    let csv = stdout(&run_ok(&db, &["export", "last", "--format", "csv"]));
    assert_eq!(csv.lines().count(), 2, "{csv}");

    let compared = stdout(&run_ok(&db, &["compare", "r1", "r2"]));
    assert!(compared.contains("r1 IOPS"), "{compared}");
    assert!(compared.contains("r2/r1 MB/s"), "{compared}");

    run_ok(&db, &["rm", "r1"]);
    let after = stdout(&run_ok(&db, &["history"]));
    assert_eq!(after.lines().count(), 2, "{after}");
    let missing = storlab(&db).args(["show", "r1"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no run r1"));
}

#[test]
fn a_foreign_file_is_refused_with_exit_2_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.txt");
    std::fs::write(&db, "not a database\n").unwrap();
    for args in [vec!["run", "--ioengine=null", "--size=1m"], vec!["history"]] {
        let out = storlab(&db).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("not an SQLite file"), "{stderr}");
    }
    assert_eq!(std::fs::read(&db).unwrap(), b"not a database\n");
}

#[test]
fn a_killed_run_keeps_every_finished_point() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let mut args = vec![
        "run".to_string(),
        "--ioengine=null".into(),
        "--size=1m".into(),
    ];
    let points = 40;
    for index in 0..points {
        args.extend([
            format!("--name=p{index}"),
            "--time_based".into(),
            "--runtime=150ms".into(),
        ]);
    }
    let stderr_path = dir.path().join("stderr.txt");
    let mut child = storlab(&db)
        .args(&args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    let announced = |text: &str| text.lines().filter(|l| l.contains(" done")).count();
    let deadline = Instant::now() + Duration::from_secs(60);
    while announced(&std::fs::read_to_string(&stderr_path).unwrap_or_default()) < 3 {
        assert!(Instant::now() < deadline, "no progress within 60 s");
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before the kill"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL: no chance to finish the run record
    child.wait().unwrap();
    let finished = announced(&std::fs::read_to_string(&stderr_path).unwrap());
    assert!(finished < points, "the run must have been killed mid-sweep");

    let database = storlab_db::Database::open_existing(&db).unwrap();
    let runs = database.list_runs(&Default::default()).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, storlab_db::RunStatus::Running);
    let stored = database.load_run(storlab_db::RunRef::Last).unwrap();
    let names: Vec<&str> = stored
        .report
        .jobs
        .iter()
        .map(|j| j.setup.name.as_str())
        .collect();
    assert!(names.len() >= finished, "{names:?} vs {finished} announced");
    for (index, name) in names.iter().enumerate() {
        assert_eq!(*name, format!("p{index}"));
        assert!(stored.report.jobs[index].read.is_some());
    }
}

/// `storlab run` arguments for `points` null-engine jobs of `runtime` each, named p0, p1, ...
fn null_points(points: usize, runtime: &str) -> Vec<String> {
    let mut args = vec![
        "run".to_string(),
        "--ioengine=null".into(),
        "--size=1m".into(),
    ];
    for index in 0..points {
        args.extend([
            format!("--name=p{index}"),
            "--time_based".into(),
            format!("--runtime={runtime}"),
        ]);
    }
    args
}

/// Points stored per run, in run order.
fn points_per_run(db: &Path) -> Vec<(i64, String, i64)> {
    let connection = rusqlite::Connection::open(db).unwrap();
    let mut statement = connection
        .prepare(
            "SELECT r.id, r.status, (SELECT count(*) FROM points p WHERE p.run_id = r.id)
             FROM runs r ORDER BY r.id",
        )
        .unwrap();
    let rows = statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

#[test]
fn concurrent_runs_on_one_database_save_every_point() {
    const TRIALS: usize = 20;
    const RUNS: usize = 3;
    const POINTS: usize = 4;
    let dir = tempfile::tempdir().unwrap();
    let args = null_points(POINTS, "20ms");
    for trial in 0..TRIALS {
        // A new file each trial: the runs also race to create the schema.
        let db = dir.path().join(format!("trial{trial}.sqlite"));
        let children: Vec<_> = (0..RUNS)
            .map(|_| {
                storlab(&db)
                    .args(&args)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "trial {trial}: {:?}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let runs = points_per_run(&db);
        assert_eq!(runs.len(), RUNS, "trial {trial}: {runs:?}");
        for (id, status, points) in &runs {
            assert_eq!(*points, POINTS as i64, "trial {trial}: run r{id}: {runs:?}");
            assert_eq!(status, "complete", "trial {trial}: run r{id}");
        }
    }
}

#[test]
fn a_point_that_cannot_be_saved_fails_the_run_and_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    run_ok(&db, &["run", "--ioengine=null", "--size=1m"]);
    let before = points_per_run(&db);
    let data = dir.path().join("data");
    let mut child = storlab(&db)
        .args([
            "run",
            "--size=1m",
            "--rw=read",
            "--bs=4k",
            "--time_based",
            "--name=p0",
            "--runtime=1500ms",
            "--name=p1",
            "--runtime=50ms",
        ])
        .arg(format!("--filename={}", data.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The data file appears when the first job opens it, after the database was checked:
    // make the database unusable before the first point is saved.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !data.exists() {
        assert!(Instant::now() < deadline, "the run never opened its file");
        assert!(child.try_wait().unwrap().is_none(), "finished too early");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::fs::write(&db, b"overwritten by something else").unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let last = stderr.lines().last().unwrap();
    assert!(
        last.contains("2 of 2 finished points are missing from the results database ('p0', 'p1')"),
        "{stderr}"
    );
    assert!(last.contains("not an SQLite file"), "{stderr}");
    // The measurement itself is still reported.
    assert!(String::from_utf8_lossy(&out.stdout).contains("p1"));
    assert_eq!(before.len(), 1);
    assert_eq!(
        std::fs::read(&db).unwrap(),
        b"overwritten by something else"
    );
}

#[test]
fn a_non_utf8_path_is_recorded_not_a_panic() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let db = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"results-\xff\xfe.sqlite"));
    let out = storlab(&db)
        .args(["run", "--ioengine=null", "--size=1m", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = stdout(&run_ok(&db, &["show", "last"]));
    assert!(shown.contains("results-\u{fffd}\u{fffd}.sqlite"), "{shown}");
}

/// Every file next to `path` whose name starts with its name: the file and SQLite's side files.
fn side_files(path: &Path) -> Vec<String> {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut found: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|entry| entry.starts_with(&name) && *entry != name)
        .collect();
    found.sort();
    found
}

#[test]
fn damaged_databases_are_refused_with_exit_2_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.sqlite");
    run_ok(
        &good,
        &null_points(6, "5ms")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let bytes = std::fs::read(&good).unwrap();
    let page_size_bytes = 4096;
    assert!(bytes.len() >= 4 * page_size_bytes, "{} bytes", bytes.len());
    let noise = |range: std::ops::Range<usize>| {
        let mut damaged = bytes.clone();
        for (i, byte) in damaged[range].iter_mut().enumerate() {
            *byte = (i as u8).wrapping_mul(37) ^ 0x5a;
        }
        damaged
    };
    let mut bad_page_size = bytes.clone();
    bad_page_size[16..18].copy_from_slice(&3000u16.to_be_bytes());
    let kinds: Vec<(&str, Vec<u8>, &str)> = vec![
        ("bad-magic", noise(0..16), "not an SQLite file"),
        ("bad-page-size", bad_page_size, "damaged"),
        ("header-only", bytes[..60].to_vec(), "damaged"),
        ("truncated", bytes[..bytes.len() / 2].to_vec(), "damaged"),
        ("schema-page", noise(100..page_size_bytes), "damaged"),
        (
            "data-pages",
            noise(2 * page_size_bytes..bytes.len() - page_size_bytes),
            "damaged",
        ),
    ];
    for (kind, content, expected) in kinds {
        let db = dir.path().join(format!("{kind}.sqlite"));
        std::fs::write(&db, &content).unwrap();
        for args in [null_points(1, "5ms"), vec!["rm".into(), "r1".into()]] {
            let out = storlab(&db).args(&args).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{kind} {args:?}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{kind}: {stderr}");
            assert!(stderr.contains(expected), "{kind}: {stderr}");
            assert!(
                stderr.contains(&db.display().to_string()),
                "{kind}: {stderr}"
            );
            assert!(
                std::fs::read(&db).unwrap() == content,
                "{kind} {args:?}: the file was modified"
            );
            assert_eq!(side_files(&db), Vec::<String>::new(), "{kind} {args:?}");
        }
    }
}

#[test]
fn a_fifo_socket_or_device_is_refused_without_being_opened() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let socket = dir.path().join("socket");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    // A symlink to /dev/null: nothing may be created next to the device itself.
    let device = dir.path().join("null-device");
    std::os::unix::fs::symlink("/dev/null", &device).unwrap();
    for (path, kind) in [
        (&fifo, "a FIFO"),
        (&socket, "a socket"),
        (&device, "a character device"),
        (&dir.path().to_path_buf(), "a directory"),
    ] {
        for args in [null_points(1, "5ms"), vec!["history".to_string()]] {
            let mut child = storlab(path)
                .args(&args)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let deadline = Instant::now() + Duration::from_secs(20);
            while child.try_wait().unwrap().is_none() {
                if Instant::now() > deadline {
                    child.kill().unwrap();
                    child.wait().unwrap();
                    panic!("{kind}: storlab {args:?} hangs");
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{kind} {args:?}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
            assert!(
                stderr.contains(&format!("is {kind}, not a file")),
                "{stderr}"
            );
        }
    }
    assert!(!Path::new("/dev/null-journal").exists());
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["fifo", "null-device", "socket"]);
}

#[test]
fn bad_input_found_when_the_target_opens_leaves_no_new_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("new/results.sqlite");
    for args in [
        vec![
            "run",
            "--target",
            "/nonexistent/dir/file",
            "--size=1m",
            "--rw=read",
        ],
        vec![
            "run",
            "--target",
            "sim:usb3-uas-ssd",
            "--size=1m",
            "--offset=100t",
            "--rw=read",
        ],
    ] {
        let out = storlab(&db).args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!db.exists(), "{args:?} created the database");
        assert!(
            !db.parent().unwrap().exists(),
            "{args:?} created its directory"
        );
    }
    // The same runs with good input do create it.
    run_ok(
        &db,
        &[
            "run",
            "--target",
            "sim:usb3-uas-ssd",
            "--size=1m",
            "--rw=read",
        ],
    );
    assert_eq!(points_per_run(&db).len(), 1);
}
