//! fio's command-line habits (issue 20 item 4): terse output (`--output-format=terse`,
//! `--minimal`) field for field as fio 3.33's version 3, `--section`, `--parse-only`,
//! `--showcmd`, `--eta` and `--status-interval`, compared with fio itself where it is
//! installed.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

const MIB: u64 = 1 << 20;

/// A scratch directory with a sparse 1 MiB `data` file and `job.fio` holding `job_text`
/// (`@DATA@` stands for the data file's path).
fn scratch(job_text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::File::create(&data).unwrap().set_len(MIB).unwrap();
    let text = job_text.replace("@DATA@", &data.display().to_string());
    std::fs::write(dir.path().join("job.fio"), text).unwrap();
    dir
}

fn storlab(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["run", "--no-db"];
    all.extend_from_slice(args);
    common::run_in(dir, &all)
}

fn stdout(out: &Output) -> String {
    assert!(out.status.success(), "{}", common::stderr(out));
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// fio's stdout for `args`, or `None` (with a note) where fio is not installed.
fn fio(dir: &Path, args: &[&str]) -> Option<String> {
    match Command::new("fio").current_dir(dir).args(args).output() {
        Ok(out) => {
            assert!(out.status.success(), "fio {args:?}: {out:?}");
            Some(String::from_utf8(out.stdout).unwrap())
        }
        Err(_) => {
            eprintln!("skipping the fio comparison: fio is not installed (Debian package fio)");
            None
        }
    }
}

const JOBS: &str = "\
[global]
ioengine=psync
filename=@DATA@
size=1m
[a]
rw=read
[b]
stonewall
rw=write
bs=8k
[c]
rw=randread
time_based
runtime=100ms
";

/// What a terse field holds, to compare fio's layout with storlab's position by position.
fn kind(field: &str) -> &'static str {
    if field.contains("%=") {
        "percentile"
    } else if field.ends_with('%') {
        "percent"
    } else if field.parse::<u64>().is_ok() {
        "integer"
    } else if field.parse::<f64>().is_ok() {
        "decimal"
    } else {
        "text"
    }
}

/// Regression: terse was not an output format. fio's version 3 line: 121 fields and 9 per
/// disk, each position holding the same kind of value as fio's.
#[test]
fn terse_lines_have_fios_fields_in_fios_places() {
    let dir = scratch("");
    let data = dir.path().join("data").display().to_string();
    let filename = format!("--filename={data}");
    let job = ["--name=t", filename.as_str(), "--size=1m", "--rw=randread"];
    let mut args = vec!["--output-format=terse"];
    args.extend_from_slice(&job);
    let ours = stdout(&storlab(dir.path(), &args));
    let line = ours.trim_end();
    assert_eq!(ours.lines().count(), 1);
    let fields: Vec<&str> = line.split(';').collect();
    let disks = (fields.len() - 121) / 9;
    assert_eq!(fields.len(), 121 + 9 * disks, "{line}");
    assert_eq!(fields[0], "3");
    assert_eq!(fields[2], "t");
    assert_eq!(fields[5], "1024", "KiB read");
    assert_eq!(
        fields[17],
        "1.000000%=".to_owned() + fields[17].split('=').nth(1).unwrap()
    );
    let mut minimal = vec!["--minimal"];
    minimal.extend_from_slice(&job);
    let again = stdout(&storlab(dir.path(), &minimal));
    assert_eq!(
        again.trim_end().split(';').count(),
        fields.len(),
        "--minimal is terse"
    );
    let mut fio_args = vec!["--minimal"];
    fio_args.extend_from_slice(&job);
    if let Some(theirs) = fio(dir.path(), &fio_args) {
        let theirs: Vec<&str> = theirs.trim_end().split(';').collect();
        assert_eq!(fields.len(), theirs.len(), "field count");
        // fio's version string and CPU/ctx counts differ in value, never in kind, except
        // where a value is 0 in one tool (an integer) and not in the other.
        let kinds =
            |fields: &[&str]| -> Vec<&'static str> { fields.iter().map(|f| kind(f)).collect() };
        for (position, (ours, theirs)) in kinds(&fields).iter().zip(kinds(&theirs)).enumerate() {
            let same = *ours == theirs
                || matches!(
                    (*ours, theirs),
                    ("integer", "decimal") | ("decimal", "integer")
                );
            assert!(same, "field {}: ours {ours}, fio's {theirs}", position + 1);
        }
    }
}

/// `--section` runs only the named sections (with the file's [global]), numbered in groups as
/// fio numbers them; a name that is no section is refused in one line.
#[test]
fn section_runs_only_the_named_sections() {
    let dir = scratch(JOBS);
    let out = storlab(
        dir.path(),
        &[
            "--section=b",
            "--section=c",
            "--output-format=fio-json",
            "job.fio",
        ],
    );
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let jobs: Vec<(String, u64)> = json["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["groupid"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(jobs, vec![("b".to_string(), 0), ("c".to_string(), 0)]);
    assert_eq!(json["jobs"][0]["write"]["io_bytes"], MIB);
    let bad = storlab(dir.path(), &["--section=z", "job.fio"]);
    assert_eq!(bad.status.code(), Some(2));
    let stderr = common::stderr(&bad);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--section z"), "{stderr}");
}

/// `--parse-only` checks the jobs and runs nothing: a job's new file is not created, and a
/// mistake is still refused.
#[test]
fn parse_only_checks_without_running() {
    let dir = scratch("[a]\nfilename=@DATA@.new\nsize=1m\nrw=write\n");
    let out = storlab(dir.path(), &["--parse-only", "job.fio"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(out.stdout.is_empty());
    assert!(!dir.path().join("data.new").exists(), "nothing ran");
    std::fs::write(dir.path().join("bad.fio"), "[a]\nsize=1m\niodepht=2\n").unwrap();
    let bad = storlab(dir.path(), &["--parse-only", "bad.fio"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(common::stderr(&bad).contains("iodepht"));
}

/// `--showcmd` prints the file as fio's one command line: the same arguments as fio's own
/// `--showcmd` (fio moves `filename` to the end of its section; compared as sets per job).
#[test]
fn showcmd_prints_fios_command_line() {
    let dir = scratch(JOBS);
    let ours = stdout(&storlab(dir.path(), &["--showcmd", "job.fio"]));
    assert!(ours.starts_with("fio --ioengine=psync "), "{ours}");
    assert!(ours.contains(" --name=c --rw=randread --time_based --runtime=100ms"));
    if let Some(theirs) = fio(dir.path(), &["--showcmd", "job.fio"]) {
        let per_job = |line: &str| -> Vec<Vec<String>> {
            line.split(" --name=")
                .map(|part| {
                    let mut arguments: Vec<String> =
                        part.split_whitespace().map(str::to_string).collect();
                    arguments.sort();
                    arguments
                })
                .collect()
        };
        assert_eq!(per_job(ours.trim()), per_job(theirs.trim()));
    }
}

/// `--eta` takes fio's values; `--status-interval` prints status lines while jobs run.
#[test]
fn eta_is_accepted_and_status_interval_prints_status_lines() {
    let dir = scratch("");
    let data = dir.path().join("data").display().to_string();
    let filename = format!("--filename={data}");
    let out = storlab(
        dir.path(),
        &[
            "--eta=never",
            "--status-interval=100ms",
            "--name=s",
            filename.as_str(),
            "--size=1m",
            "--rw=randread",
            "--time_based",
            "--runtime=500ms",
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let stderr = common::stderr(&out);
    let status_lines = stderr
        .lines()
        .filter(|l| l.starts_with("storlab: status at "))
        .count();
    assert!(status_lines >= 2, "{stderr}");
    let bad = storlab(dir.path(), &["--eta=sometimes", "--name=s", "--size=1m"]);
    assert_eq!(bad.status.code(), Some(2));
    let bad = storlab(
        dir.path(),
        &["--status-interval=0", "--name=s", "--size=1m"],
    );
    assert_eq!(bad.status.code(), Some(2));
}

/// `storlab fio` (and storlab started as `fio`): fio's output-format names, nothing on stderr
/// where fio prints nothing (storlab's advice then in the output), fio's switches as fio takes
/// them, and fio's options storlab does not have refused by name. Compared with fio's exit
/// status where fio is installed.
#[test]
fn storlab_fio_takes_fios_command_line_as_fio() {
    let dir = scratch("[j]\nfilename=@DATA@\nrw=randread\nbs=1k\nsize=64k\n");
    let path = dir.path();
    let fio_run = |args: &[&str]| {
        let mut all = vec!["fio"];
        all.extend_from_slice(args);
        common::run_in(path, &all)
    };
    // The 1 KiB alignment notice `storlab run` prints stays out of stderr.
    let args = [
        "--max-jobs=16",
        "--output-format=json",
        "--output=o.json",
        "job.fio",
    ];
    let out = fio_run(&args);
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(common::stderr(&out), "");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path.join("o.json")).unwrap()).unwrap();
    assert_eq!(json["jobs"][0]["read"]["io_kbytes"], 64, "fio's JSON");
    // Named `fio`, the binary is `storlab fio`.
    let named_fio = path.join("fio");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_storlab"), &named_fio).unwrap();
    let out = Command::new(&named_fio)
        .current_dir(path)
        .args(["--output-format=terse", "--output=o.terse", "job.fio"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(common::stderr(&out), "");
    assert!(std::fs::read_to_string(path.join("o.terse"))
        .unwrap()
        .starts_with("3;"));

    // --readonly refuses a writing job (fio fails it too) and runs a reading one.
    let writing = [
        "--readonly",
        "--name=w",
        "--filename=data",
        "--rw=write",
        "--size=64k",
    ];
    let out = fio_run(&writing);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        common::stderr(&out).contains("--readonly: job 'w' writes or trims"),
        "{}",
        common::stderr(&out)
    );
    if let Ok(fio) = Command::new("fio").current_dir(path).args(writing).output() {
        assert!(!fio.status.success(), "fio refuses it as well");
    }
    assert!(fio_run(&["--readonly", "--output=r.json", "job.fio"])
        .status
        .success());
    // --warnings-fatal: a job with a warning is refused (storlab run warns about 1 KiB blocks).
    let out = common::run_in(path, &["run", "--no-db", "--warnings-fatal", "job.fio"]);
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
    assert!(common::stderr(&out).contains("--warnings-fatal: job 'j'"));
    for refused in ["--crctest", "--debug=io", "--inflate-log=x.log"] {
        let out = fio_run(&[refused, "job.fio"]);
        assert_eq!(out.status.code(), Some(2), "{refused}");
        let stderr = common::stderr(&out);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("not supported by storlab ("), "{stderr}");
    }
    let out = fio_run(&["--output-format=xml", "job.fio"]);
    assert!(common::stderr(&out).contains("fio's formats are normal, json, json+, terse"));
}

/// fio's switches that print help, add terse lines or size fio's own memory: `--cmdhelp`,
/// `--enghelp`, `--append-terse`, `--alloc-size` and the format names `minimal` and `csv`, each
/// laid out as fio 3.33 lays it out where fio is installed.
#[test]
fn fios_help_and_format_switches_run_as_fios() {
    let dir = scratch("[j]\nfilename=@DATA@\nrw=read\nsize=64k\n");
    let path = dir.path();
    let both = |args: &[&str]| {
        let mut all = vec!["fio"];
        all.extend_from_slice(args);
        let ours = stdout(&common::run_in(path, &all));
        (ours, fio(path, args))
    };
    // One key: its name right-aligned before its meaning, then its aliases.
    let (ours, fios) = both(&["--cmdhelp=blocksize"]);
    assert_eq!(
        ours.lines().next().unwrap().find("bs: "),
        Some(18),
        "{ours}"
    );
    assert!(ours.contains("               alias: blocksize\n"), "{ours}");
    if let Some(fios) = fios {
        assert!(fios.starts_with("                  bs: "), "{fios}");
        assert!(fios.contains("               alias: blocksize\n"), "{fios}");
    }
    let (ours, _) = both(&["--cmdhelp"]);
    assert!(ours
        .lines()
        .any(|l| l.starts_with("iodepth                 : ")));
    let (ours, fios) = both(&["--enghelp"]);
    assert!(ours.starts_with("Available IO engines:\n\t"), "{ours}");
    if let Some(fios) = fios {
        assert!(fios.starts_with("Available IO engines:\n\t"), "{fios}");
    }
    let (ours, fios) = both(&["--enghelp=libaio"]);
    let key_names = |text: &str| -> BTreeSet<String> {
        let names = text.lines().filter_map(|l| l.split(" : ").next());
        names.map(|n| n.trim().to_string()).collect()
    };
    if let Some(fios) = fios {
        let missing: Vec<_> = key_names(&ours)
            .difference(&key_names(&fios))
            .cloned()
            .collect();
        assert!(
            missing.is_empty(),
            "storlab lists keys fio's libaio has not: {missing:?}"
        );
    }
    let out = common::run_in(path, &["fio", "--cmdhelp=no_such_key"]);
    assert_eq!(out.status.code(), Some(2));
    // --append-terse: the terse line, then fio's report; --alloc-size changes nothing.
    for args in [
        &["--append-terse", "--alloc-size=1024", "job.fio"][..],
        &["--output-format=csv,normal", "job.fio"][..],
    ] {
        let (ours, fios) = both(args);
        let shape = |text: &str| -> Vec<&'static str> {
            let kinds = text.lines().filter_map(|line| match line {
                l if l.starts_with("3;") => Some("terse"),
                l if l.starts_with("j: (groupid=0") => Some("report"),
                _ => None,
            });
            kinds.collect()
        };
        assert_eq!(shape(&ours), ["terse", "report"], "{args:?}: {ours}");
        if let Some(fios) = fios {
            assert_eq!(shape(&fios), shape(&ours), "{args:?}: {fios}");
        }
    }
    let (ours, _) = both(&["--output-format=minimal", "job.fio"]);
    assert!(ours.starts_with("3;"), "{ours}");
}
