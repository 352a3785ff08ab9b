//! The results database through the binary: runs are saved and listed, shown, exported,
//! compared and deleted; a foreign file is refused untouched; and a run killed with SIGKILL
//! mid-sweep keeps every point it announced as finished.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn storlab(db: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_storlab"));
    command.env("STORLAB_DB", db);
    command
}

fn run_ok(db: &Path, args: &[&str]) -> Output {
    let out = storlab(db).args(args).output().expect("storlab runs");
    assert!(
        out.status.success(),
        "storlab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

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
    let names: Vec<&str> = stored.report.jobs.iter().map(|j| j.name.as_str()).collect();
    assert!(names.len() >= finished, "{names:?} vs {finished} announced");
    for (index, name) in names.iter().enumerate() {
        assert_eq!(*name, format!("p{index}"));
        assert!(stored.report.jobs[index].read.is_some());
    }
}
