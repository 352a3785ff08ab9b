//! Runs the `storlab` binary as a user would, on what it prints: argument errors are one line;
//! control characters from names are escaped wherever people read them.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

fn storlab() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_storlab"));
    // Runs are saved to a results database: never the real one in the user's home.
    let db_dir = std::env::temp_dir().join(format!("storlab-output-test-{}", std::process::id()));
    command.env("STORLAB_DB", db_dir.join("results.sqlite"));
    command
}

fn run_in<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Output {
    storlab()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("storlab runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

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
