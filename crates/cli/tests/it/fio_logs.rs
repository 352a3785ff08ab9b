//! fio's per-I/O logs (issue 20, item 3): the same job runs under fio 3.33 and under storlab,
//! each writing `write_bw_log`, `write_iops_log`, `write_lat_log` and `write_hist_log`, and the
//! logs must agree in what does not depend on timing: file names, columns, line counts,
//! directions, block sizes and offsets of deterministic jobs. fio's own readers
//! (`fio2gnuplot`, `fiologparser.py`, `fiologparser_hist.py`) must read storlab's logs as they
//! read fio's. Also: simulated time as the time axis, and the safe-output rules for log files.
//! Parts that need fio or its scripts are skipped with a message where they are missing.

use crate::common;

use common::{run_in, stderr};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fio_present() -> bool {
    let found = Command::new("fio").arg("--version").output().is_ok();
    if !found {
        eprintln!("skipping: fio is not installed (Debian package fio)");
    }
    found
}

/// A directory holding `job.fio` (with `@DIR@` replaced by the directory) and a 1 MiB data
/// file the job names.
fn scratch(job: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data"), vec![0x5a; 1 << 20]).unwrap();
    let text = job.replace("@DIR@", &dir.path().display().to_string());
    std::fs::write(dir.path().join("job.fio"), text).unwrap();
    dir
}

fn run_fio(dir: &Path) {
    let out = Command::new("fio")
        .current_dir(dir)
        .args(["--output=/dev/null", "job.fio"])
        .output()
        .unwrap();
    assert!(out.status.success(), "fio: {}", stderr(&out));
}

fn run_storlab(dir: &Path, extra: &[&str]) {
    let mut args = vec!["run", "--no-db", "--output-format", "json", "job.fio"];
    args.extend_from_slice(extra);
    let out = run_in(dir, &args);
    assert!(out.status.success(), "storlab: {}", stderr(&out));
}

/// Every `*.log` file of `dir`, by name, as lines of comma-separated fields.
fn logs(dir: &Path) -> BTreeMap<String, Vec<Vec<u64>>> {
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".log") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines = text
            .lines()
            .map(|line| {
                line.split(", ")
                    .map(|field| match field.strip_prefix("0x") {
                        Some(hex) => u64::from_str_radix(hex, 16),
                        None => field.parse(),
                    })
                    .collect::<Result<Vec<u64>, _>>()
                    .unwrap_or_else(|e| panic!("{name}: line '{line}': {e}"))
            })
            .collect();
        found.insert(name, lines);
    }
    found
}

/// Times (the first column) never go back.
fn assert_monotone(name: &str, lines: &[Vec<u64>]) {
    for pair in lines.windows(2) {
        assert!(
            pair[0][0] <= pair[1][0],
            "{name}: time goes back: {:?} then {:?}",
            pair[0],
            pair[1]
        );
    }
}

/// Sequential jobs on psync: each I/O's direction, size and offset are fixed by the job, so
/// fio's and storlab's per-I/O lines must agree in them line by line.
const SEQUENTIAL: &str = "\
[global]
filename=@DIR@/data
ioengine=psync
bs=4k
size=64k
log_offset=1
[writer]
rw=write
numjobs=2
offset_increment=64k
write_bw_log=seq
write_iops_log=seq
write_lat_log=seq
[reader]
stonewall
rw=read
bs=8k
write_iops_log=shared
per_job_logs=0
log_prio=1
";

#[test]
fn per_io_logs_have_fios_names_columns_and_lines() {
    if !fio_present() {
        return;
    }
    let fio_dir = scratch(SEQUENTIAL);
    run_fio(fio_dir.path());
    let ours_dir = scratch(SEQUENTIAL);
    run_storlab(ours_dir.path(), &[]);
    let (fio, ours) = (logs(fio_dir.path()), logs(ours_dir.path()));
    assert_eq!(
        fio.keys().collect::<Vec<_>>(),
        ours.keys().collect::<Vec<_>>(),
        "the same log files"
    );
    assert!(ours.contains_key("seq_bw.2.log") && ours.contains_key("shared_iops.log"));
    for (name, fio_lines) in &fio {
        let our_lines = &ours[name];
        assert_eq!(fio_lines.len(), our_lines.len(), "{name}: lines");
        for (theirs, mine) in fio_lines.iter().zip(our_lines) {
            assert_eq!(theirs.len(), mine.len(), "{name}: columns of {mine:?}");
            // Direction, block size, offset and priority; time and value are measurements.
            assert_eq!(
                theirs[2..],
                mine[2..],
                "{name}: {theirs:?} against {mine:?}"
            );
            if name.contains("_iops") {
                assert_eq!(mine[1], 1, "{name}: one I/O per line");
            }
        }
        if !name.contains("_slat") {
            assert_monotone(name, our_lines);
        }
    }
    // psync submits and completes in one call: fio logs no submission latency, nor do we.
    assert!(ours["seq_slat.1.log"].is_empty());
    assert_eq!(ours["seq_lat.1.log"].len(), 16);
}

/// Windowed logs on a rate-limited, time-based job: one line per window and direction.
const AVERAGED: &str = "\
[global]
filename=@DIR@/data
ioengine=libaio
direct=0
iodepth=2
bs=4k
[mixed]
rw=randrw
time_based
runtime=1
rate_iops=200
log_avg_msec=200
write_bw_log=avg
write_iops_log=avg
write_lat_log=avg
write_hist_log=avg
log_hist_msec=250
log_hist_coarseness=3
";

#[test]
fn averaged_logs_have_fios_windows() {
    if !fio_present() {
        return;
    }
    let fio_dir = scratch(AVERAGED);
    run_fio(fio_dir.path());
    let ours_dir = scratch(AVERAGED);
    run_storlab(ours_dir.path(), &[]);
    let (fio, ours) = (logs(fio_dir.path()), logs(ours_dir.path()));
    assert_eq!(
        fio.keys().collect::<Vec<_>>(),
        ours.keys().collect::<Vec<_>>()
    );
    for (name, fio_lines) in &fio {
        let our_lines = &ours[name];
        let rate_log = name.contains("_bw") || name.contains("_iops");
        if rate_log {
            // One line per whole window and direction: 1000 ms / 200 ms, reads and writes.
            // fio's helper thread writes these when it gets to run, at about each window's end
            // or later on a busy machine (every ~250 ms for 100 ms windows was seen here), so
            // fio has at most as many, give or take the last window.
            assert_eq!(our_lines.len(), 2 * 5, "{name}");
            assert!(
                fio_lines.len() <= our_lines.len() + 2,
                "{name}: fio {fio_lines:?}"
            );
        } else {
            // Latency windows close on completions, in both tools: a line or two per direction
            // either way at the edges.
            let slack = if name.contains("hist") { 2 } else { 4 };
            assert!(
                fio_lines.len().abs_diff(our_lines.len()) <= slack,
                "{name}: fio {} lines, storlab {}",
                fio_lines.len(),
                our_lines.len()
            );
        }
        assert!(!our_lines.is_empty(), "{name}: empty");
        assert_monotone(name, our_lines);
        for (theirs, mine) in fio_lines.iter().zip(our_lines) {
            assert_eq!(theirs.len(), mine.len(), "{name}: columns");
        }
        if name.contains("hist") {
            // time, direction, block size, then fio's 1856 bins summed by 2^3.
            assert_eq!(our_lines[0].len(), 3 + 1856 / 8);
        } else {
            for line in our_lines {
                assert!(line[2] <= 1, "{name}: direction of {line:?}");
                assert_eq!(line[3..], [0, 0], "{name}: windows carry bs 0 and prio 0");
            }
        }
    }
    // The rate: 200 I/Os per second per direction, as asked, over the run (the machine may
    // fall short; never above it by more than the windows' rounding). One window may be above:
    // a worker the machine held back catches up, as fio's `usec_for_io` makes it.
    let windows = &ours["avg_iops.1.log"];
    let mean = windows.iter().map(|line| line[1]).sum::<u64>() / windows.len().max(1) as u64;
    assert!(mean <= 210, "mean {mean} over {windows:?}");
}

/// On a simulated drive the time axis is simulated time: the logs are the same on every run,
/// and a rate-limited job's windows hold exactly its rate.
#[test]
fn simulated_targets_log_in_simulated_time() {
    const JOB: &str = "\
[sim]
rw=randwrite
bs=16k
iodepth=4
time_based
runtime=2
rate_iops=500
log_avg_msec=500
write_iops_log=s
write_lat_log=s
";
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let dir = scratch(JOB);
            run_storlab(dir.path(), &["--target", "sim:usb3-uas-ssd"]);
            logs(dir.path())
        })
        .collect();
    assert_eq!(runs[0], runs[1], "deterministic");
    let iops = &runs[0]["s_iops.1.log"];
    assert_eq!(
        iops.iter().map(|l| l[..3].to_vec()).collect::<Vec<_>>(),
        [
            vec![500, 500, 1],
            vec![1000, 500, 1],
            vec![1500, 500, 1],
            vec![2000, 500, 1]
        ]
    );
    // A queued engine: submission latencies are logged.
    assert!(!runs[0]["s_slat.1.log"].is_empty());
    for line in &runs[0]["s_clat.1.log"] {
        assert!(line[0] <= 2000 && line[1] > 0, "{line:?}");
    }
}

/// fio's own readers of these logs, run on fio's and on storlab's: what reads one reads the
/// other. (fio 3.33's `fiologparser.py` expects 4 columns and fails on fio 3.33's own 5-column
/// logs; it must then fail on storlab's the same way.)
#[test]
fn fios_log_readers_read_storlabs_logs() {
    if !fio_present() {
        return;
    }
    const JOB: &str = "\
[global]
filename=@DIR@/data
ioengine=psync
bs=4k
[reader]
rw=randread
time_based
runtime=1
rate_iops=300
log_avg_msec=250
write_bw_log=r
write_hist_log=r
log_hist_msec=250
";
    let fio_dir = scratch(JOB);
    run_fio(fio_dir.path());
    let ours_dir = scratch(JOB);
    run_storlab(ours_dir.path(), &[]);

    match Command::new("fio2gnuplot").arg("-h").output() {
        Err(_) => eprintln!("skipping fio2gnuplot: not installed"),
        Ok(_) => {
            let dir = ours_dir.path();
            let out_dir = dir.join("plots");
            std::fs::create_dir(&out_dir).unwrap();
            let out = Command::new("fio2gnuplot")
                .current_dir(dir)
                .args(["-b", "-d"])
                .arg(&out_dir)
                .output()
                .unwrap();
            assert!(out.status.success(), "fio2gnuplot: {}", stderr(&out));
            let global = std::fs::read_to_string(out_dir.join("result.global"))
                .expect("fio2gnuplot wrote its summary");
            let lines = &logs(dir)["r_bw.1.log"];
            assert!(
                global.contains(&format!("values_count={}", lines.len())),
                "{global}"
            );
            let max = lines.iter().map(|l| l[1]).max().unwrap();
            assert!(global.contains(&format!("max={max}.00")), "{global}");
        }
    }

    let parser = python_script(ours_dir.path(), "fiologparser.py");
    match parser {
        None => eprintln!("skipping fiologparser.py: not found under /usr/share/doc/fio"),
        Some(script) => {
            let status = |dir: &Path| {
                Command::new("python3")
                    .current_dir(dir)
                    .arg(&script)
                    .args(["-s", "r_bw.1.log"])
                    .output()
                    .unwrap()
                    .status
                    .success()
            };
            assert_eq!(
                status(fio_dir.path()),
                status(ours_dir.path()),
                "fiologparser.py reads storlab's log as it reads fio's"
            );
        }
    }

    let pandas = Command::new("python3")
        .args(["-c", "import pandas"])
        .output()
        .is_ok_and(|o| o.status.success());
    match python_script(ours_dir.path(), "fiologparser_hist.py") {
        Some(script) if pandas => {
            let out = Command::new("python3")
                .current_dir(ours_dir.path())
                .arg(&script)
                .arg("r_clat_hist.1.log")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "fiologparser_hist.py: {}",
                stderr(&out)
            );
            assert!(!out.stdout.is_empty());
        }
        _ => eprintln!("skipping fiologparser_hist.py: it or python3's pandas is missing"),
    }
}

/// fio's script `name` as a file in `dir` (Debian ships them gzipped under the docs).
fn python_script(dir: &Path, name: &str) -> Option<PathBuf> {
    let docs = Path::new("/usr/share/doc/fio");
    let target = dir.join(name);
    if docs.join(name).is_file() {
        std::fs::copy(docs.join(name), &target).ok()?;
        return Some(target);
    }
    let gz = docs.join(format!("{name}.gz"));
    let out = Command::new("zcat").arg(&gz).output().ok()?;
    if !out.status.success() {
        return None;
    }
    std::fs::write(&target, out.stdout).ok()?;
    Some(target)
}

#[test]
fn log_files_keep_the_safe_output_rules() {
    const JOB: &str = "\
[global]
filename=@DIR@/data
ioengine=psync
bs=4k
size=16k
[one]
rw=write
write_iops_log=l
";
    // A link where the log goes is refused before anything runs; what it points to stays.
    let dir = scratch(JOB);
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("l_iops.1.log")).unwrap();
    let before = std::fs::read(dir.path().join("data")).unwrap();
    let out = run_in(dir.path(), &["run", "--no-db", "job.fio"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(
        message.contains("write_iops_log") && message.contains("symbolic link"),
        "{message}"
    );
    assert_eq!(message.trim().lines().count(), 1, "{message}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert_eq!(std::fs::read(dir.path().join("data")).unwrap(), before);

    // A log naming the job's own target is refused.
    let dir = scratch(
        &JOB.replace("write_iops_log=l", "write_iops_log=@DIR@/target")
            .replace("filename=@DIR@/data", "filename=@DIR@/target_iops.1.log"),
    );
    let target = dir.path().join("target_iops.1.log");
    std::fs::write(&target, vec![0x5a; 1 << 20]).unwrap();
    let out = run_in(dir.path(), &["run", "--no-db", "job.fio"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("target"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&target).unwrap(), vec![0x5a; 1 << 20]);

    // per_job_logs=0 appends to what the file held, as fio does.
    let dir = scratch(&JOB.replace("[one]", "[one]\nper_job_logs=0"));
    std::fs::write(dir.path().join("l_iops.log"), "0, 1, 1, 4096, 0\n").unwrap();
    run_storlab(dir.path(), &[]);
    let lines = &logs(dir.path())["l_iops.log"];
    assert_eq!(lines.len(), 1 + 4, "{lines:?}");

    // Compressed logs are refused in one line naming the key.
    let dir = scratch(&JOB.replace("[one]", "[one]\nlog_compression=1m"));
    let out = run_in(dir.path(), &["run", "--no-db", "job.fio"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("log_compression"), "{}", stderr(&out));
}

/// `buffer_pattern` of several elements (issue 20's leftovers): the file storlab writes is
/// fio's byte for byte.
#[test]
fn multi_element_buffer_patterns_write_fios_bytes() {
    if !fio_present() {
        return;
    }
    for pattern in [
        "0xdeadface\"abcd\"-12",
        "\"ab\"0x1234",
        "4660",
        "0xff0x14\"z\"0",
    ] {
        let job = format!(
            "[p]\nfilename=@DIR@/out\nsize=8k\nbs=4k\nrw=write\nbuffer_pattern={pattern}\n"
        );
        let fio_dir = scratch(&job);
        run_fio(fio_dir.path());
        let ours_dir = scratch(&job);
        run_storlab(ours_dir.path(), &[]);
        let theirs = std::fs::read(fio_dir.path().join("out")).unwrap();
        let ours = std::fs::read(ours_dir.path().join("out")).unwrap();
        assert_eq!(theirs.len(), 8192, "{pattern}");
        assert!(theirs == ours, "{pattern}: the files differ");
    }
}
