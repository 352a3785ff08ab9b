//! Several job files on one command line, a job file on stdin (`-`) and `include`, as fio 3.33
//! runs them
//! (init.c, `parse_options`): each file after the first starts from fio's defaults again
//! (`fill_def_thread`), so an earlier file's `[global]` and the command line's job options do
//! not reach it, and its first job comes after a stonewall (`parse_jobs_ini`'s
//! `stonewall_flag`); an `include FILE` line adds FILE's options to its section, FILE found as
//! written or beside the including file. Each case runs under fio and `storlab fio` in its own directory and
//! compares every job's `write_iolog` actions and fio-json group ids. Skipped where fio is
//! missing.

use crate::fio_oracle::{actions, fio_present};

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The first file: a `[global]` whose size, block size and direction its two jobs share.
const FIRST: &str = "[global]\nsize=64k\nbs=8k\nrw=randwrite\n\
                     [a]\nfilename=a.dat\nwrite_iolog=a.log\n\
                     [b]\nfilename=b.dat\nwrite_iolog=b.log\nrw=write\n";

/// The second file: no `[global]`, so its jobs take fio's defaults (4 KiB blocks, reads),
/// not the first file's; `c` reads what `a` wrote.
const SECOND: &str = "[c]\nfilename=a.dat\nwrite_iolog=c.log\nsize=32k\n\
                      [d]\nfilename=b.dat\nwrite_iolog=d.log\nsize=16k\nrw=randread\n";

/// A second file whose job names no size: fio fails it ("you need to specify size="), the first
/// file's `[global]` notwithstanding.
const SIZELESS: &str = "[e]\nfilename=e.dat\nrw=read\n";

/// Runs `program` (`fio`, or storlab as `storlab fio`) in `dir` with `args`, `stdin` piped in.
fn run(program: &str, dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut command = match program {
        "fio" => Command::new("fio"),
        _ => {
            let mut storlab = Command::new(env!("CARGO_BIN_EXE_storlab"));
            storlab.arg("fio");
            storlab
        }
    };
    let mut child = command
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// A scratch directory holding `files` (name, text), subdirectories made as needed.
fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// Each job's name, group id and logged actions (in `dir`) after `program` ran `args`.
fn jobs_and_actions(
    program: &str,
    files: &[(&str, &str)],
    args: &[&str],
    stdin: &str,
) -> Vec<(String, u64, Vec<String>)> {
    let dir = dir_with(files);
    let mut all = vec!["--output-format=json", "--output=out.json"];
    all.extend_from_slice(args);
    let out = run(program, dir.path(), &all, stdin);
    assert!(out.status.success(), "{program} {all:?}: {out:?}");
    let json = std::fs::read_to_string(dir.path().join("out.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|job| {
            let name = job["jobname"].as_str().unwrap().to_string();
            let log = dir.path().join(format!("{name}.log"));
            (name, job["groupid"].as_u64().unwrap(), actions(&log))
        })
        .collect()
}

/// The fio-json `global options` after `program` ran the job `files` in `order`.
fn global_options(program: &str, files: &[(&str, &str)], order: &[&str]) -> serde_json::Value {
    let dir = dir_with(files);
    let mut args = vec!["--output-format=json"];
    args.extend_from_slice(order);
    let out = run(program, dir.path(), &args, "");
    assert!(out.status.success(), "{program} {args:?}: {out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["global options"].clone()
}

/// Two job files: the second's jobs keep fio's defaults, not the first file's `[global]` nor
/// the command line's `--bs`, and start a new group; the same I/O, job for job, as fio's, and
/// fio-json's `global options` are the last file's, as fio's.
#[test]
fn several_job_files_run_as_fios() {
    if !fio_present() {
        return;
    }
    let files = [("one.fio", FIRST), ("two.fio", SECOND)];
    for order in [["one.fio", "two.fio"], ["two.fio", "one.fio"]] {
        let fio = global_options("fio", &files, &order);
        assert_eq!(global_options("storlab", &files, &order), fio, "{order:?}");
    }
    for args in [
        &["one.fio", "two.fio"][..],
        &["--bs=16k", "one.fio", "two.fio"],
    ] {
        let fio = jobs_and_actions("fio", &files, args, "");
        let storlab = jobs_and_actions("storlab", &files, args, "");
        let groups: Vec<(&str, u64)> = fio.iter().map(|(n, g, _)| (n.as_str(), *g)).collect();
        assert_eq!(
            groups,
            [("a", 0), ("b", 0), ("c", 1), ("d", 1)],
            "fio changed"
        );
        let c_reads = &fio[2].2;
        assert!(
            c_reads.len() == 8 && c_reads.iter().all(|a| a.starts_with("read")),
            "fio's c read 32 KiB in its default 4 KiB blocks: {c_reads:?}"
        );
        assert_eq!(storlab, fio, "{args:?}");
    }
}

/// `--section` picks among the first file's sections only: fio runs every section of a later
/// file (its first after a stonewall only when the first file kept a job).
#[test]
fn sections_select_in_the_first_job_file_as_fios() {
    if !fio_present() {
        return;
    }
    let files = [("one.fio", FIRST), ("two.fio", SECOND)];
    for (args, jobs) in [
        (&["--section=c", "one.fio", "two.fio"][..], &["c", "d"][..]),
        (
            &["--section=a", "--section=d", "one.fio", "two.fio"],
            &["a", "c", "d"],
        ),
    ] {
        let fio = jobs_and_actions("fio", &files, args, "");
        let storlab = jobs_and_actions("storlab", &files, args, "");
        let names: Vec<&str> = fio.iter().map(|(name, _, _)| name.as_str()).collect();
        assert_eq!(names, jobs, "fio changed: {args:?}");
        assert_eq!(storlab, fio, "{args:?}");
    }
}

/// A later file does not inherit a size: fio and storlab both fail its job, after running the
/// first file's.
#[test]
fn a_later_job_file_does_not_inherit_the_first_files_global() {
    if !fio_present() {
        return;
    }
    for program in ["fio", "storlab"] {
        let dir = dir_with(&[("one.fio", FIRST), ("three.fio", SIZELESS)]);
        let args = ["--output-format=json", "one.fio", "three.fio"];
        let out = run(program, dir.path(), &args, "");
        assert!(!out.status.success(), "{program} ran e without a size");
        assert!(
            dir.path().join("a.log").exists(),
            "{program}: the first file's jobs ran"
        );
    }
}

/// `-` reads a job file from stdin, alone or before another file.
#[test]
fn a_job_file_on_stdin_runs_as_fios() {
    if !fio_present() {
        return;
    }
    for (files, args) in [
        (&[][..], &["-"][..]),
        (&[("two.fio", SECOND)][..], &["-", "two.fio"][..]),
    ] {
        let fio = jobs_and_actions("fio", files, args, FIRST);
        let storlab = jobs_and_actions("storlab", files, args, FIRST);
        assert!(fio.len() >= 2 && !fio[0].2.is_empty(), "fio ran nothing");
        assert_eq!(storlab, fio, "{args:?}");
    }
}

/// `include` adds a file's options to the section it is in, in `[global]` or a job, nested,
/// found beside the including file when the path as written is not there (the job file is in
/// `jobs/`, run from the directory above).
#[test]
fn included_options_run_as_fios() {
    if !fio_present() {
        return;
    }
    let files = [
        (
            "jobs/job.fio",
            "[global]\ninclude common.inc\n[a]\nfilename=a.dat\nwrite_iolog=a.log\n\
             include writes.inc\n[b]\nfilename=a.dat\nwrite_iolog=b.log\n",
        ),
        ("jobs/common.inc", "size=64k\nbs=8k   ; every job\n"),
        ("jobs/writes.inc", "rw=randwrite\ninclude depth.inc\n"),
        ("jobs/depth.inc", "iodepth=2\n"),
    ];
    let args = ["jobs/job.fio"];
    let fio = jobs_and_actions("fio", &files, &args, "");
    let storlab = jobs_and_actions("storlab", &files, &args, "");
    assert_eq!(
        fio[0].2.len(),
        8,
        "fio's a: 8 writes of 8 KiB: {:?}",
        fio[0].2
    );
    assert!(
        fio[1].2.iter().all(|a| a.starts_with("read")),
        "fio's b reads"
    );
    assert_eq!(storlab, fio);
}

/// An included file holds options only: fio prints "No new sections in included files" and
/// runs the job without the file's options (exit 0); storlab refuses the job file in one line
/// (exit 2, nothing run) rather than run other I/O than the file asks for.
#[test]
fn a_section_in_an_included_file_is_refused() {
    if !fio_present() {
        return;
    }
    for program in ["fio", "storlab"] {
        let dir = dir_with(&[
            (
                "job.fio",
                "[a]\nfilename=a.dat\nsize=64k\ninclude more.inc\n",
            ),
            ("more.inc", "[b]\nrw=write\n"),
        ]);
        let out = run(program, dir.path(), &["job.fio"], "");
        let stderr = String::from_utf8_lossy(&out.stderr).to_lowercase();
        assert!(stderr.contains("no new sections"), "{program}: {stderr}");
        if program == "storlab" {
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(stderr.contains("more.inc:1"), "names the line: {stderr}");
            assert!(!dir.path().join("a.dat").exists(), "storlab ran a job");
        }
    }
}
