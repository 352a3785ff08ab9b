//! fio's human report (`--output-format=normal`, fio's default) under `storlab fio`, compared
//! with fio 3.33's on the same small jobs (issue 34 item 8, docs/decisions/0049): the same
//! lines in the same order with the same labels, exact where the I/O decides them (the jobs'
//! lines, `io=`, `issued rwts`, a depth-1 job's IO depths, the group totals' layout), masked
//! where the clock does (rates, latencies and their units, which latency buckets are filled).

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

/// A job both programs run, with what the comparison may not hold it to and why.
pub(crate) struct Case<'a> {
    /// fio's command line (`@DIR@` stands for the scratch directory).
    pub(crate) args: &'a [&'a str],
    /// The IO depths block must match digit for digit (a job at depth 1, no syncs).
    pub(crate) exact_depths: bool,
    /// `issued rwts` and the bytes moved (`io=`) must match digit for digit (not in a
    /// time-based job, whose amount is the clock's).
    pub(crate) exact_counts: bool,
    /// The job runs a sync engine (psync): storlab measures a submission latency there and
    /// prints its `slat` line, where fio records none (a difference in the measurement, not
    /// the layout; reported on issue 34). Those lines are left out of storlab's side.
    pub(crate) sync_engine: bool,
    /// The run is long enough for bandwidth and IOPS samples in both (fio samples every
    /// 500 ms, storlab every second): their lines must be there. Otherwise whether a run
    /// lasted long enough for one is the clock's, and the lines are left out of both sides.
    pub(crate) samples: bool,
}

/// Every report line reduced to what must match: see the module's comment.
pub(crate) fn structure(report: &str, case: &Case<'_>) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for line in report.lines() {
        // fio continues a percentile list on lines of their own: one logical line here.
        if let Some(rest) = line.strip_prefix("     |") {
            if let Some(last) = lines.last_mut() {
                last.push_str(rest);
                continue;
            }
        }
        if line == "storlab warnings:" {
            break;
        }
        lines.push(line.to_owned());
    }
    let mut shape: Vec<String> = Vec::new();
    for line in &lines {
        let reduced = reduce(line, case);
        // Which latency buckets are filled is the clock's: one line stands for them all.
        if reduced.starts_with("  lat (U)") && shape.last() == Some(&reduced) {
            continue;
        }
        if case.sync_engine && reduced.starts_with("    slat (U)") {
            continue;
        }
        // On the line as printed: masking squeezes the iops line's padding.
        let sample_line = ["   bw (", "   iops        :"]
            .iter()
            .any(|label| line.starts_with(label));
        if sample_line && !case.samples {
            continue;
        }
        shape.push(reduced);
    }
    // fio's version line is its own; the lines fio prints when it lays out a file depend on
    // whether the file was there (storlab's report does not say).
    shape.retain(|line| !line.contains("Laying out IO file"));
    while shape.last().is_some_and(String::is_empty) {
        shape.pop();
    }
    shape
}

fn reduce(line: &str, case: &Case<'_>) -> String {
    if line.starts_with("fio-") || line.starts_with("storlab-") {
        return "VERSION".into();
    }
    // The line each program prints when a job fails (fio names its source file and function).
    if let Some(tail) = ["fio: pid=", "storlab: pid="]
        .iter()
        .find_map(|program| line.strip_prefix(program))
    {
        let errno = tail.split("err=").nth(1).and_then(|e| e.split('/').next());
        return format!("PROGRAM: pid=N, err={}", errno.unwrap_or("?"));
    }
    if let Some(pid_at) = line.find(" pid=").filter(|_| line.contains(": (groupid=")) {
        // `name: (groupid=0, jobs=1): err=84 (why): pid=N: date`: exact up to the pid, less
        // the error's text (fio names its source file and function there).
        let head = &line[..pid_at];
        let head = match head.find("err=") {
            Some(at) => match head[at..].find(" (") {
                Some(open) => format!("{}:", &head[..at + open]),
                None => head.to_owned(),
            },
            None => head.to_owned(),
        };
        return format!("{head} pid=N: DATE");
    }
    if line.starts_with("  lat (") {
        return "  lat (U)   : buckets".into();
    }
    if line.contains(" percentiles (") {
        let (head, entries) = line.split_once("):").unwrap_or((line, ""));
        let labels: Vec<&str> = entries
            .split(']')
            .filter_map(|entry| entry.split_once("th=[").map(|(label, _)| label))
            .map(|label| label.trim_matches(|c: char| c == ',' || c == ' '))
            .collect();
        let name = head.split(" (").next().unwrap_or(head);
        return format!("{name} (U): {}", labels.join(" "));
    }
    let exact = line.contains("issued rwts") && case.exact_counts
        || line.contains("Run status group")
        || (case.exact_depths
            && ["IO depths", "submit    :", "complete  :"]
                .iter()
                .any(|label| line.contains(label)));
    if exact || !line.chars().any(|c| c.is_ascii_digit()) {
        return line.to_owned();
    }
    let mut reduced = mask_numbers(line);
    // The bytes moved are the I/O's, not the clock's: a direction's `(1024KiB/9msec)` and a
    // group's `io=1024KiB (1049kB)` stay exact.
    if !case.exact_counts {
        return reduced;
    }
    if let Some(io) = line
        .split(")(")
        .nth(1)
        .and_then(|tail| tail.split('/').next())
    {
        reduced.push_str(&format!(" [io {io}]"));
    }
    if let Some(io) = line
        .split(" io=")
        .nth(1)
        .and_then(|tail| tail.split("),").next())
    {
        reduced.push_str(&format!(" [io {io})]"));
    }
    reduced
}

/// Every number (with the unit prefix fio's num2str puts after it) as `N`, latency units as
/// `U`, and padding gone.
fn mask_numbers(line: &str) -> String {
    let indent = line.len() - line.trim_start().len();
    let mut out = String::from(&line[..indent]);
    let mut chars = line[indent..].chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars
                .peek()
                .is_some_and(|&next| next.is_ascii_digit() || next == '.')
            {
                chars.next();
            }
            while chars.peek().is_some_and(|next| "kKMGTPEi".contains(*next)) {
                chars.next();
            }
            out.push('N');
        } else if c == ' ' && (out.ends_with(' ') || out.ends_with('=') || out.ends_with('[')) {
            continue;
        } else {
            out.push(c);
        }
    }
    for unit in [
        "(nsec)",
        "(usec)",
        "(msec)",
        "(KiB/s)",
        "(MiB/s)",
        "( KiB/s)",
        "( MiB/s)",
        "(Kibit/s)",
        "(Mibit/s)",
    ] {
        out = out.replace(unit, "(U)");
    }
    out
}

/// fio's stdout and exit status for `args` in `dir`, or `None` where fio is not installed.
pub(crate) fn fio(dir: &Path, args: &[String]) -> Option<Output> {
    match Command::new("fio").current_dir(dir).args(args).output() {
        Ok(out) => Some(out),
        Err(_) => {
            eprintln!("skipping the fio comparison: fio is not installed (Debian package fio)");
            None
        }
    }
}

pub(crate) fn args_in(dir: &Path, args: &[&str]) -> Vec<String> {
    args.iter()
        .map(|arg| arg.replace("@DIR@", &dir.display().to_string()))
        .collect()
}

/// Runs `case` with fio and with `storlab fio`, and compares their reports' structure line by
/// line; on a difference prints both reports and the first line that differs.
pub(crate) fn compare(case: &Case<'_>) {
    let dir = tempfile::tempdir().unwrap();
    let args = args_in(dir.path(), case.args);
    let Some(fio_out) = fio(dir.path(), &args) else {
        return;
    };
    let mut storlab_args = vec!["fio".to_owned()];
    storlab_args.extend(args.iter().cloned());
    let storlab_out = common::run_in(dir.path(), &storlab_args);
    assert_eq!(
        fio_out.status.code(),
        storlab_out.status.code(),
        "exit status of fio {args:?}: {}",
        common::stderr(&storlab_out)
    );
    let fio_text = String::from_utf8_lossy(&fio_out.stdout).into_owned();
    let storlab_text = common::stdout(&storlab_out);
    let expected = structure(&fio_text, case);
    let got = structure(&storlab_text, case);
    assert_same_structure(&expected, &got, &args, (&fio_text, &storlab_text));
}

/// Fails, with both reports (`texts`: fio's, storlab's) and the first structure line that
/// differs, where `expected` (fio's) and `got` differ; `args` reproduce the run.
pub(crate) fn assert_same_structure(
    expected: &[String],
    got: &[String],
    args: &[String],
    texts: (&str, &str),
) {
    let first_difference = expected
        .iter()
        .zip(got)
        .position(|(fio, storlab)| fio != storlab)
        .or_else(|| (expected.len() != got.len()).then(|| expected.len().min(got.len())));
    if let Some(line) = first_difference {
        let (fio_text, storlab_text) = texts;
        panic!(
            "the reports differ at structure line {line}\n  fio:     {:?}\n  storlab: {:?}\n\
             reproduce: fio {}  vs  storlab fio (same arguments)\n\
             ---- fio ----\n{fio_text}\n---- storlab ----\n{storlab_text}",
            expected.get(line),
            got.get(line),
            args.join(" ")
        );
    }
}

#[test]
fn a_psync_read_reports_as_fio() {
    compare(&Case {
        args: &[
            "--name=job1",
            "--filename=@DIR@/data",
            "--size=1m",
            "--rw=read",
            "--bs=4k",
            "--ioengine=psync",
            // fio's `errors` line under `issued rwts`.
            "--continue_on_error=all",
        ],
        exact_depths: true,
        exact_counts: true,
        sync_engine: true,
        samples: false,
    });
}

#[test]
fn clones_of_a_libaio_mix_report_apart_and_grouped_as_fio() {
    let mut args = vec![
        "--name=mix",
        "--filename=@DIR@/data",
        "--size=2m",
        "--rw=randrw",
        "--bs=4k",
        "--ioengine=libaio",
        "--iodepth=8",
        "--numjobs=2",
    ];
    let case = |args: &[&str]| {
        compare(&Case {
            args,
            exact_depths: false,
            exact_counts: true,
            sync_engine: false,
            samples: false,
        })
    };
    case(&args);
    args.push("--group_reporting");
    case(&args);
}

/// Two stonewall groups, one with fsync: the `fsync/fdatasync/sync_file_range` block, one
/// `Run status group` per group, the sync count in `issued rwts`.
#[test]
fn groups_and_syncs_report_as_fio() {
    let dir = tempfile::tempdir().unwrap();
    let job = "[global]\nfilename=@DIR@/data\nsize=512k\nbs=4k\nioengine=psync\n\
               [r]\nrw=read\n[w]\nstonewall\nrw=write\nfsync=4\n[x]\nrw=randread\n";
    let job_path = dir.path().join("groups.fio");
    std::fs::write(
        &job_path,
        job.replace("@DIR@", &dir.path().display().to_string()),
    )
    .unwrap();
    let job_arg = job_path.display().to_string();
    compare(&Case {
        args: &[&job_arg],
        exact_depths: false,
        exact_counts: true,
        sync_engine: true,
        samples: false,
    });
}

/// A run long enough for bandwidth and IOPS samples, and a write with its verify read-back.
#[test]
fn samples_and_verify_report_as_fio() {
    compare(&Case {
        args: &[
            "--name=timed",
            "--filename=@DIR@/data",
            "--size=1m",
            "--rw=randwrite",
            "--ioengine=psync",
            "--time_based",
            "--runtime=2",
        ],
        exact_depths: true,
        exact_counts: false,
        sync_engine: true,
        samples: true,
    });
    compare(&Case {
        args: &[
            "--name=checked",
            "--filename=@DIR@/data",
            "--size=256k",
            "--rw=write",
            "--verify=crc32c",
        ],
        exact_depths: true,
        exact_counts: true,
        sync_engine: true,
        samples: false,
    });
}

/// A job that fails (verify finds no header in a file never written): `err=84` in the header,
/// the figures of what ran, exit status 1. fio counts the writes a verify-only job skips as
/// issued, so `issued rwts` is not held to it.
#[test]
fn a_failed_job_reports_as_fio() {
    compare(&Case {
        args: &[
            "--name=unwritten",
            "--filename=@DIR@/data",
            "--size=64k",
            "--rw=write",
            "--verify=crc32c",
            "--verify_only",
        ],
        exact_depths: false,
        exact_counts: false,
        sync_engine: true,
        samples: false,
    });
}

/// fio's comma list: the jobs' lines first, then the JSON document, then the human report.
#[test]
fn normal_and_json_come_in_fios_order() {
    let dir = tempfile::tempdir().unwrap();
    let args = args_in(
        dir.path(),
        &[
            "--output-format=normal,json",
            "--name=both",
            "--filename=@DIR@/data",
            "--size=64k",
            "--rw=read",
        ],
    );
    let mut storlab_args = vec!["fio".to_owned()];
    storlab_args.extend(args.iter().cloned());
    let out = common::run_in(dir.path(), &storlab_args);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let text = common::stdout(&out);
    let json_start = text.find("\n{\n").expect("a JSON document") + 1;
    let json_end = text.find("\n}\n").expect("the document's end") + 3;
    assert!(
        text[..json_start].starts_with("both: (g=0): rw=read,"),
        "{text}"
    );
    let document: serde_json::Value = serde_json::from_str(&text[json_start..json_end])
        .unwrap_or_else(|error| panic!("{error}: {text}"));
    assert_eq!(document["jobs"][0]["jobname"], "both");
    assert!(
        text[json_end..].starts_with("\nboth: (groupid=0, jobs=1): err= 0: pid="),
        "{text}"
    );
    if let Some(fio_out) = fio(dir.path(), &args) {
        let fio_text = String::from_utf8_lossy(&fio_out.stdout).into_owned();
        let fio_start = fio_text.find("\n{\n").expect("fio's JSON") + 1;
        let fio_end = fio_text.find("\n}\n").expect("fio's JSON end") + 3;
        assert!(
            fio_text[fio_end..].starts_with("\nboth: (groupid=0"),
            "{fio_text}"
        );
        assert_eq!(
            fio_text[..fio_start].lines().count(),
            text[..json_start].lines().count(),
            "the lines before the JSON:\n{fio_text}\n{text}"
        );
    }
}

/// `storlab fio` prints fio's report by default; `storlab run` keeps its table.
#[test]
fn fios_report_is_the_default_of_storlab_fio_only() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data").display().to_string();
    let job = [
        "--name=plain".to_owned(),
        format!("--filename={data}"),
        "--size=64k".to_owned(),
    ];
    let mut as_fio = vec!["fio".to_owned()];
    as_fio.extend(job.iter().cloned());
    let text = common::stdout(&common::run_in(dir.path(), &as_fio));
    assert!(
        text.contains("\nplain: (groupid=0, jobs=1): err= 0: pid="),
        "{text}"
    );
    assert!(
        text.contains("\nRun status group 0 (all jobs):\n   READ: bw="),
        "{text}"
    );
    let mut run = vec!["run".to_owned(), "--no-db".to_owned()];
    run.extend(job.iter().cloned());
    let table = common::stdout(&common::run_in(dir.path(), &run));
    assert!(!table.contains("Run status group"), "{table}");
    run.push("--output-format=fio-normal".to_owned());
    let normal = common::stdout(&common::run_in(dir.path(), &run));
    assert!(normal.contains("Run status group 0"), "{normal}");
}
