//! Runs the `storlab` binary as a user would, on what it writes and prints: an output file only
//! ever replaces a regular file (never a device, FIFO, symbolic link, the results database or
//! another output of the same command), refused before any work; a run that fails part-way still
//! writes its finished jobs; argument errors are one line; control characters from names are
//! escaped wherever people read them; paths that are not UTF-8 work.

use crate::common;
use common::{run_in, stderr};

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::Output;

/// Bad input: exit 2, one line on stderr naming `needle`, nothing on stdout.
fn assert_one_line_bad_input(out: &Output, what: &str, needle: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what} must say one line: {err}");
    assert!(err.starts_with("storlab: error: "), "{what}: {err}");
    assert!(
        err.contains(needle),
        "{what}: '{err}' should name '{needle}'"
    );
    assert!(out.stdout.is_empty(), "{what} printed to stdout");
}

/// Temporary files an output write left behind.
fn partial_files(dir: &Path) -> Vec<OsString> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|name| name.to_string_lossy().contains("storlab-partial"))
        .collect()
}

const QUICK_RUN: [&str; 4] = ["run", "--ioengine=null", "--size=1m", "--no-db"];

/// A FIFO, a symbolic link and (as root) a character device named as an output stay what they
/// are: the command stops before running anything. Today's code renamed a regular file over
/// each (as root, `--output /dev/null` replaced /dev/null), and checked `--report` and `--pcap`
/// only after the whole run.
#[test]
fn outputs_that_are_not_regular_files_are_refused_before_the_run() {
    use nix::sys::stat::{makedev, mknod, Mode, SFlag};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    nix::unistd::mkfifo(&d.join("fifo"), Mode::S_IRUSR | Mode::S_IWUSR).unwrap();
    std::fs::write(d.join("kept.json"), "kept").unwrap();
    std::os::unix::fs::symlink("kept.json", d.join("link.json")).unwrap();
    let mut specials = vec!["fifo", "link.json"];
    if nix::unistd::geteuid().is_root() {
        // /dev/null's numbers (Linux devices.txt: char 1:3), made inside the temporary directory.
        mknod(
            &d.join("null"),
            SFlag::S_IFCHR,
            Mode::from_bits_truncate(0o666),
            makedev(1, 3),
        )
        .unwrap();
        specials.push("null");
    } else {
        eprintln!("skipped the character device case: mknod needs root");
    }
    for option in ["--output", "--report"] {
        for name in &specials {
            let mut args = QUICK_RUN.to_vec();
            args.extend([option, name]);
            let out = run_in(d, &args);
            assert_one_line_bad_input(&out, &format!("{option} {name}"), option);
            assert!(
                !stderr(&out).contains("[1/"),
                "{option} {name}: refused only after running: {}",
                stderr(&out)
            );
        }
    }
    let sim = [
        "run",
        "--target=sim:usb3-uas-ssd",
        "--rw=randread",
        "--size=16m",
        "--number_ios=20",
        "--no-db",
        "--pcap",
        "fifo",
    ];
    assert_one_line_bad_input(&run_in(d, &sim), "--pcap fifo", "--pcap");

    let kind = |name: &str| std::fs::symlink_metadata(d.join(name)).unwrap().file_type();
    assert!(kind("fifo").is_fifo(), "the FIFO was replaced");
    assert!(kind("link.json").is_symlink(), "the link was replaced");
    assert_eq!(
        std::fs::read_to_string(d.join("kept.json")).unwrap(),
        "kept"
    );
    if specials.contains(&"null") {
        assert!(kind("null").is_char_device(), "the device was replaced");
    }
    assert!(partial_files(d).is_empty(), "left {:?}", partial_files(d));
}

/// `--output` naming the results database (by any spelling, or a hard link to it, or before it
/// exists) or another output of the same command is refused, and the database is left byte
/// for byte. Today's code replaced the database with the run's JSON and exited 0.
#[test]
fn outputs_naming_the_database_or_each_other_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let first = run_in(
        d,
        &[
            "run",
            "--ioengine=null",
            "--size=1m",
            "--db",
            "results.sqlite",
        ],
    );
    assert!(first.status.success(), "{}", stderr(&first));
    let saved = std::fs::read(d.join("results.sqlite")).unwrap();
    std::fs::hard_link(d.join("results.sqlite"), d.join("alias.sqlite")).unwrap();

    let run = [
        "run",
        "--ioengine=null",
        "--size=1m",
        "--db",
        "results.sqlite",
    ];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            [&run[..], &["--output", "results.sqlite"]].concat(),
            "results database",
        ),
        (
            [&run[..], &["--report", "./results.sqlite"]].concat(),
            "results database",
        ),
        (
            [&run[..], &["--output", "alias.sqlite"]].concat(),
            "results database",
        ),
        (
            [&run[..], &["--output", "results.sqlite-wal"]].concat(),
            "journal",
        ),
        (
            vec![
                "export",
                "last",
                "--db",
                "results.sqlite",
                "-o",
                "results.sqlite",
            ],
            "results database",
        ),
        (
            vec![
                "report",
                "last",
                "--db",
                "results.sqlite",
                "-o",
                "alias.sqlite",
            ],
            "results database",
        ),
        (
            [
                &QUICK_RUN[..],
                &["--output", "same.json", "--report", "same.json"],
            ]
            .concat(),
            "also --output",
        ),
        (
            vec![
                "run",
                "--ioengine=null",
                "--size=1m",
                "--db",
                "new.sqlite",
                "--output",
                "./new.sqlite",
            ],
            "results database",
        ),
    ];
    for (args, needle) in &cases {
        assert_one_line_bad_input(&run_in(d, args), &format!("{args:?}"), needle);
    }
    assert_eq!(
        std::fs::read(d.join("results.sqlite")).unwrap(),
        saved,
        "the results database changed"
    );
    assert!(!d.join("same.json").exists());
    assert!(!d.join("new.sqlite").exists());
    assert!(!d.join("results.sqlite-wal").exists());
}

/// A regular file is replaced whole and keeps its permissions.
#[test]
fn an_existing_output_file_is_replaced_whole_keeping_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("out.json"), "old contents, longer than nothing").unwrap();
    std::fs::set_permissions(d.join("out.json"), std::fs::Permissions::from_mode(0o640)).unwrap();
    let mut args = QUICK_RUN.to_vec();
    args.extend(["--output-format=json", "--output", "out.json"]);
    let out = run_in(d, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("out.json")).unwrap()).unwrap();
    assert_eq!(doc["jobs"].as_array().unwrap().len(), 1);
    let mode = std::fs::metadata(d.join("out.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
    assert!(partial_files(d).is_empty(), "left {:?}", partial_files(d));
}

/// The second job fails (its file's directory is missing) after the first finished: the first
/// job's results are still written, to `--output` or stdout, and the run exits 1. Today's code
/// wrote nothing and exited 2.
#[test]
fn a_run_that_fails_part_way_still_writes_its_finished_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let failing = [
        "run",
        "--ioengine=psync",
        "--size=1m",
        "--no-db",
        "--output-format=json",
        "--name=first",
        "--name=second",
        "--stonewall",
        "--filename=missing-dir/f",
    ];
    let job_names = |json: &[u8]| -> Vec<String> {
        let doc: serde_json::Value = serde_json::from_slice(json).expect("the output is JSON");
        doc["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["name"].as_str().unwrap().to_string())
            .collect()
    };

    let to_file = run_in(d, &[&failing[..], &["--output", "out.json"]].concat());
    assert_eq!(to_file.status.code(), Some(1), "{}", stderr(&to_file));
    assert!(
        stderr(&to_file).contains("missing-dir/f"),
        "{}",
        stderr(&to_file)
    );
    assert_eq!(
        job_names(&std::fs::read(d.join("out.json")).unwrap()),
        ["first"]
    );

    let to_stdout = run_in(d, &failing);
    assert_eq!(to_stdout.status.code(), Some(1), "{}", stderr(&to_stdout));
    assert_eq!(job_names(&to_stdout.stdout), ["first"]);
}

/// clap's own errors (unknown option, bad value, missing value, unknown subcommand) are
/// storlab's one line naming the argument, exit 2, instead of clap's four or five lines of
/// usage; `--help` and `--version` still print, exit 0.
#[test]
fn argument_errors_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["history", "--foo"], "'--foo'"),
        (&["show", "last", "--foo"], "storlab show --help"),
        (&["run", "--output-format", "xml"], "fio-json"),
        (&["run", "--destructive"], "--destructive"),
        (&["frobnicate"], "'frobnicate'"),
        (&["histroy"], "did you mean 'history'"),
        (&["export"], "<RUN>"),
        (&["history", "--limit", "many"], "--limit"),
        (
            &["export", "last", "--outptu", "x"],
            "did you mean '--output'",
        ),
    ];
    for (args, needle) in cases {
        assert_one_line_bad_input(&run_in(dir.path(), args), &format!("{args:?}"), needle);
    }
    for args in [
        &["--version"][..],
        &["run", "--help"],
        &["history", "--help"],
    ] {
        let out = run_in(dir.path(), args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(!out.stdout.is_empty(), "{args:?} printed nothing");
    }
}

/// A job name holding a terminal escape sequence and a line break: the table, the progress
/// lines, `history`, `show` and error messages show them escaped (`\x1b`, `\n`), never raw;
/// JSON keeps the name exact and CSV quotes it. Today's code printed them raw.
#[test]
fn control_characters_in_names_are_escaped_where_people_read_them() {
    const ESC: u8 = 0x1b;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let name = "red\x1b[31mname\nnext";
    let escaped = "red\\x1b[31mname\\nnext";
    let name_flag = format!("--name={name}");
    let db = ["--db", "results.sqlite"];
    let run = run_in(
        d,
        &[
            &["run", "--ioengine=null", "--size=1m", &name_flag][..],
            &db,
        ]
        .concat(),
    );
    assert!(run.status.success(), "{}", stderr(&run));
    for (what, out) in [
        ("run", &run),
        ("history", &run_in(d, &[&["history"][..], &db].concat())),
        ("show", &run_in(d, &[&["show", "last"][..], &db].concat())),
    ] {
        assert!(out.status.success(), "{what}: {}", stderr(out));
        let printed = [&out.stdout[..], &out.stderr[..]].concat();
        assert!(
            !printed.contains(&ESC),
            "{what} printed a raw escape:\n{}",
            String::from_utf8_lossy(&printed)
        );
        if what != "history" {
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains(escaped), "{what}:\n{text}");
            assert!(
                !text.lines().any(|l| l.starts_with("next")),
                "{what}:\n{text}"
            );
        }
    }

    let json = run_in(d, &[&["export", "last"][..], &db].concat());
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["jobs"][0]["name"], name, "JSON keeps the name exact");
    let csv = run_in(
        d,
        &[&["export", "last", "--format", "csv"][..], &db].concat(),
    );
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert!(
        csv.contains(&format!("\n\"{name}\",")),
        "CSV quotes it:\n{csv}"
    );

    let bad_run = run_in(d, &[&["show", "r\x1b[2J"][..], &db].concat());
    assert_one_line_bad_input(&bad_run, "show r ESC[2J", "r\\x1b[2J");
    assert!(!bad_run.stderr.contains(&ESC));
    let bad_preset = run_in(d, &["run", "--no-db", "--preset", "two\nlines"]);
    assert_one_line_bad_input(&bad_preset, "--preset with a line break", "two\\nlines");
}

/// Paths are bytes on Linux: a target, an output and a job file whose names are not UTF-8 run
/// like any other (today's `--target` was a String: clap refused it), and where text is needed
/// (a stack name, a job flag) the error is one line, never a panic.
#[test]
fn paths_that_are_not_utf8_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let target = d.join(OsStr::from_bytes(b"target-\xff"));
    std::fs::write(&target, vec![0u8; 1 << 20]).unwrap();
    let output = OsStr::from_bytes(b"out-\xff.json");
    let job_file = OsStr::from_bytes(b"job-\xfe.fio");
    std::fs::write(
        d.join(job_file),
        "[reader]\nrw=read\nbs=4k\nioengine=psync\n",
    )
    .unwrap();
    let args = |extra: &[&OsStr]| -> Vec<OsString> {
        let mut args: Vec<OsString> = ["run", "--no-db", "--output-format=json", "--target"]
            .iter()
            .map(OsString::from)
            .collect();
        args.push(target.clone().into_os_string());
        args.extend(extra.iter().map(|a| a.to_os_string()));
        args
    };

    let flags = run_in(
        d,
        &args(&[
            OsStr::new("--rw=read"),
            OsStr::new("--ioengine=psync"),
            OsStr::new("--output"),
            output,
        ]),
    );
    assert!(flags.status.success(), "{}", stderr(&flags));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join(output)).unwrap())
        .expect("the output file holds JSON");
    assert_eq!(doc["jobs"][0]["read"]["bytes"], 1 << 20);

    let from_file = run_in(d, &args(&[job_file]));
    assert!(from_file.status.success(), "{}", stderr(&from_file));
    let doc: serde_json::Value = serde_json::from_slice(&from_file.stdout).unwrap();
    assert_eq!(doc["jobs"][0]["name"], "reader");

    let sim = run_in(
        d,
        &[
            OsStr::new("run"),
            OsStr::new("--size=1m"),
            OsStr::new("--target"),
            OsStr::from_bytes(b"sim:\xff"),
        ],
    );
    assert_one_line_bad_input(&sim, "--target sim:\\xff", "--target sim:");
    let flag = run_in(
        d,
        &[
            OsStr::new("run"),
            OsStr::new("--size=1m"),
            OsStr::from_bytes(b"--filename=\xff"),
        ],
    );
    assert_one_line_bad_input(&flag, "--filename=\\xff", "--filename");
}
