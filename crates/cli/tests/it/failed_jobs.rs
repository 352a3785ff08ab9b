//! A job an I/O error ends, and what-if runs that fail or are interrupted part-way (issue 33
//! items 4 and 5, issue 34 item 2). As fio, a failed job is reported with its error (fio's JSON
//! `error`), its figures up to the failure and its fault counters, the jobs after it still run,
//! and the command exits 1; checked against fio 3.33 on a real failing device (a loop device
//! over a file on a small tmpfs this test mounts: writes past the tmpfs's size fail with
//! ENOSPC) and on a simulated stack with a medium error. A what-if run writes every finished
//! target's results to every output, the database included, when a later target fails or the
//! run is interrupted.

use crate::common::{self, run_in, stderr, storlab_with_db, LoopDevice};
use serde_json::Value;
use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const UAS: &str = "sim:usb3-uas-ssd";
/// A medium error on LBA 100 (byte 51 200): the 13th 4 KiB read from offset 0 fails with
/// ENODATA, as Linux reports an unrecovered read error.
const MEDIA_ERROR: &str = "media_error@lba=100";
const ENODATA: i64 = 61;
const ENOSPC: i64 = 28;
/// What Linux returns for a write to a read-only block device.
const EPERM: i64 = 1;
const BLOCK_BYTES: u64 = 4096;
/// 4 KiB reads from offset 0 before the one that fails on LBA 100.
const READS_BEFORE_THE_BAD_BLOCK: u64 = 100 * 512 / BLOCK_BYTES;

/// Three jobs in turn on one simulated stack; the middle one reads over the bad block.
const THREE_JOBS: &str = "[global]\nbs=4k\nrw=read\nsize=1m\n\
    [before]\noffset=1m\n\
    [failing]\nstonewall\noffset=0\n\
    [after]\nstonewall\nrw=write\noffset=2m\n";

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}: {text}", path.display()))
}

/// The error line that ends the command (the last line on stderr).
fn error_line(out: &Output) -> String {
    let text = stderr(out);
    text.lines()
        .rev()
        .find(|line| line.starts_with("storlab: error:"))
        .unwrap_or_else(|| panic!("no error line: {text}"))
        .to_string()
}

#[test]
fn a_failed_job_is_in_every_output_with_its_error_and_the_later_jobs_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    std::fs::write(dir.path().join("jobs.fio"), THREE_JOBS).unwrap();
    let out = storlab_with_db(&db)
        .current_dir(dir.path())
        .args(["run", "jobs.fio", "--target", UAS, "--faults", MEDIA_ERROR])
        .args(["--output-format=fio-json", "--output=out.json"])
        .args(["--report=report.html", "--pcap=usb.pcap"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        error_line(&out).starts_with(&format!("storlab: error: job 'failing' on {UAS}: ")),
        "the error names the job and the target: {}",
        stderr(&out)
    );
    // fio-json: every job, the failed one with fio's error and its reads up to the failure
    // (fio counts the failed I/O in total_ios, not its bytes).
    let doc = json(&dir.path().join("out.json"));
    let jobs = doc["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["before", "failing", "after"]);
    let errors: Vec<i64> = jobs.iter().map(|j| j["error"].as_i64().unwrap()).collect();
    assert_eq!(errors, [0, ENODATA, 0]);
    assert_eq!(
        jobs[1]["read"]["io_bytes"],
        READS_BEFORE_THE_BAD_BLOCK * BLOCK_BYTES
    );
    assert_eq!(jobs[1]["read"]["total_ios"], READS_BEFORE_THE_BAD_BLOCK + 1);
    assert_eq!(
        jobs[2]["write"]["io_bytes"],
        1 << 20,
        "the job after it ran"
    );
    // The database: one failed run with all three jobs, the failed one with its error, its
    // target and the simulator's fault counters.
    let history = storlab_with_db(&db).arg("history").output().unwrap();
    let history = String::from_utf8_lossy(&history.stdout).into_owned();
    assert!(
        history.lines().nth(1).is_some_and(|l| l.contains("failed")),
        "{history}"
    );
    let export = storlab_with_db(&db)
        .args(["export", "r1", "--format=json"])
        .output()
        .unwrap();
    assert!(export.status.success(), "{}", stderr(&export));
    let saved: Value = serde_json::from_slice(&export.stdout).unwrap();
    let failing = &saved["jobs"][1];
    assert_eq!(saved["jobs"].as_array().unwrap().len(), 3);
    assert_eq!(failing["name"], "failing");
    assert_eq!(failing["error"], ENODATA);
    assert_eq!(failing["target"]["description"], UAS);
    assert_eq!(failing["sim"]["faults"]["injected"], 1);
    assert_eq!(failing["sim"]["faults"]["reported"], 1);
    // The report and the capture are written too.
    let report = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(report.contains(&format!("failed on {UAS}")), "{report}");
    // The capture holds the whole session, read by tshark: the one read that ended with
    // CHECK CONDITION (the medium error), and the later job's writes.
    let pcap = dir.path().join("usb.pcap");
    let check_conditions = common::tshark_fields(&pcap, "scsi.status == 0x02", &["scsi.status"]);
    if let Some(check_conditions) = check_conditions {
        assert_eq!(check_conditions, ["0x02"]);
        let writes =
            common::tshark_fields(&pcap, "scsi_sbc.opcode == 0x2a", &["frame.number"]).unwrap();
        assert!(
            !writes.is_empty(),
            "the job after the failed one is in the capture"
        );
    }

    // The table names the job's error under the figures.
    let table = run_in(
        dir.path(),
        &[
            "run",
            "jobs.fio",
            "--no-db",
            "--target",
            UAS,
            "--faults",
            MEDIA_ERROR,
        ],
    );
    assert_eq!(table.status.code(), Some(1), "{}", stderr(&table));
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("failing: ended by error 61: No data available"),
        "{text}"
    );
    for name in ["before", "after"] {
        assert!(text.lines().any(|l| l.starts_with(name)), "{name}: {text}");
    }
}

/// Whether this machine can run the fio comparison, with the reason when it cannot.
fn fio_comparison_unavailable() -> Option<&'static str> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("mounting a tmpfs and attaching a loop device need root");
    }
    for tool in ["fio", "losetup"] {
        if Command::new(tool).arg("--version").output().is_err() {
            return Some(if tool == "fio" {
                "fio is not installed (Debian package fio)"
            } else {
                "losetup is not installed"
            });
        }
    }
    None
}

/// A tmpfs of `bytes` on a directory of its own, unmounted on drop.
struct SmallTmpfs(tempfile::TempDir);

impl SmallTmpfs {
    fn mount(bytes: u64) -> Option<SmallTmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(dir.path())
            .status();
        mounted
            .is_ok_and(|s| s.success())
            .then_some(SmallTmpfs(dir))
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        // A loop device lets go of its backing file a moment after `losetup -d`: until then
        // the file system is busy.
        for _ in 0..50 {
            let unmounted = Command::new("umount")
                .arg(self.0.path())
                .stderr(Stdio::null())
                .status();
            if unmounted.is_ok_and(|s| s.success()) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = Command::new("umount")
            .arg("--lazy")
            .arg(self.0.path())
            .status();
    }
}

/// Per job: (name, error, read bytes, read I/Os, write bytes, write I/Os) from fio's JSON.
fn job_rows(doc: &Value) -> Vec<(String, i64, u64, u64, u64, u64)> {
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|job| {
            let figure = |dir: &str, key: &str| job[dir][key].as_u64().unwrap_or(0);
            (
                job["jobname"].as_str().unwrap().to_string(),
                job["error"].as_i64().unwrap(),
                figure("read", "io_bytes"),
                figure("read", "total_ios"),
                figure("write", "io_bytes"),
                figure("write", "total_ios"),
            )
        })
        .collect()
}

/// One tool's run of the write-then-read pair with `engine` on a fresh failing device: a loop
/// device over a 4 MiB sparse file on a 1 MiB tmpfs. `None` when no tmpfs can be mounted.
fn run_on_failing_device(tool: &str, engine: &str) -> Option<(Option<i32>, Value, String)> {
    const TMPFS_BYTES: u64 = 1 << 20;
    let fs = SmallTmpfs::mount(TMPFS_BYTES)?;
    let backing = fs.0.path().join("backing.img");
    std::fs::File::create(&backing)
        .unwrap()
        .set_len(4 * TMPFS_BYTES)
        .unwrap();
    let device = LoopDevice::over(&backing);
    Some(run_write_then_read(tool, engine, &device.path))
}

/// One tool's run of a write job, then (its own stonewall group) a 512 KiB read job, on
/// `device` with `engine`: (exit status, JSON, stderr).
fn run_write_then_read(tool: &str, engine: &str, device: &Path) -> (Option<i32>, Value, String) {
    let work = tempfile::tempdir().unwrap();
    let job = format!(
        "[global]\nfilename={}\nbs=64k\ndirect=1\nioengine={engine}\n\
         [w]\nrw=write\n[r]\nstonewall\nrw=read\nsize=512k\n",
        device.display()
    );
    std::fs::write(work.path().join("job.fio"), job).unwrap();
    let out = if tool == "fio" {
        Command::new("fio")
            .current_dir(work.path())
            .args(["--output-format=json", "job.fio"])
            .output()
            .unwrap()
    } else {
        run_in(
            work.path(),
            &["run", "--no-db", "--output-format=fio-json", "job.fio"],
        )
    };
    // fio prints its error summary on stdout before the JSON.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let start = stdout
        .find('{')
        .unwrap_or_else(|| panic!("{tool}: no JSON: {stdout}{}", stderr(&out)));
    let doc: Value = serde_json::from_str(&stdout[start..]).unwrap();
    (out.status.code(), doc, stderr(&out))
}

/// fio 3.33 and storlab on the same failing device, through a synchronous and two queued
/// engines: the write job's 17th 64 KiB direct write fails with ENOSPC (the tmpfs under the
/// loop device is full), and the read job after it (its own stonewall group) still runs. Both
/// exit 1 with the same JSON errors and totals.
#[test]
fn a_failed_job_reports_the_error_and_totals_fio_reports_and_the_next_job_runs() {
    if let Some(reason) = fio_comparison_unavailable() {
        eprintln!("skipped: {reason}");
        return;
    }
    for engine in ["psync", "libaio", "io_uring"] {
        let (Some(fio), Some(storlab)) = (
            run_on_failing_device("fio", engine),
            run_on_failing_device("storlab", engine),
        ) else {
            eprintln!("skipped: cannot mount a tmpfs here");
            return;
        };
        let reproduce = format!(
            "fio --name=w --filename=LOOP --ioengine={engine} --rw=write --bs=64k --direct=1 \
             --name=r --stonewall --filename=LOOP --ioengine={engine} --rw=read --bs=64k \
             --direct=1 --size=512k (LOOP over a 4 MiB file on a 1 MiB tmpfs)"
        );
        let (fio_rows, storlab_rows) = (job_rows(&fio.1), job_rows(&storlab.1));
        assert_eq!(fio_rows[0].1, ENOSPC, "fio itself: {reproduce}: {}", fio.2);
        assert_eq!(
            storlab_rows, fio_rows,
            "{reproduce}\nstorlab stderr: {}",
            storlab.2
        );
        assert_eq!(storlab.0, fio.0, "exit status: {reproduce}");
        assert!(
            storlab.2.contains("storlab: error: job 'w' on /dev/loop"),
            "{}",
            storlab.2
        );
    }
}

/// A write job on a read-only block device (a loop device attached with `losetup -r`): every
/// write fails with EPERM, so fio and storlab both end the job at its first write, report
/// error 1 with the failed write in `total_ios`, run the read job after it and exit 1.
#[test]
fn a_write_to_a_read_only_device_fails_the_job_as_in_fio() {
    if let Some(reason) = fio_comparison_unavailable() {
        eprintln!("skipped: {reason}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let backing = dir.path().join("backing.img");
    std::fs::File::create(&backing)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let attached = Command::new("losetup")
        .args(["--read-only", "--find", "--show"])
        .arg(&backing)
        .output()
        .unwrap();
    assert!(attached.status.success(), "losetup: {}", stderr(&attached));
    let device = LoopDevice {
        path: String::from_utf8(attached.stdout).unwrap().trim().into(),
        dir,
    };
    let fio = run_write_then_read("fio", "psync", &device.path);
    let storlab = run_write_then_read("storlab", "psync", &device.path);
    let reproduce = "fio --name=w --filename=LOOP --rw=write --bs=64k --direct=1 --name=r \
        --stonewall --filename=LOOP --rw=read --bs=64k --direct=1 --size=512k \
        (LOOP attached with losetup --read-only)";
    let (fio_rows, storlab_rows) = (job_rows(&fio.1), job_rows(&storlab.1));
    assert_eq!(fio_rows[0].1, EPERM, "fio itself: {reproduce}: {}", fio.2);
    assert_eq!(
        storlab_rows, fio_rows,
        "{reproduce}\nstorlab stderr: {}",
        storlab.2
    );
    assert_eq!(storlab.0, fio.0, "exit status: {reproduce}");
}

/// A what-if run whose second target's job fails (a medium error on the simulated stack)
/// still writes the first target's results, and the failed one's, to the JSON, the report and
/// the database (with `--no-db`, to the outputs), and exits 1 naming the failed target.
#[test]
fn a_later_target_failing_keeps_the_earlier_targets_results_in_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("first.img");
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    for saved in [true, false] {
        let db = dir.path().join(format!("results-{saved}.sqlite"));
        let mut command = storlab_with_db(&db);
        command
            .current_dir(dir.path())
            .args(["run", "--rw=read", "--bs=4k", "--size=1m"])
            .arg("--target")
            .arg(&file)
            .args(["--target", UAS, "--faults", MEDIA_ERROR])
            .args([
                "--output-format=json",
                "--output=out.json",
                "--report=r.html",
            ]);
        if !saved {
            command.arg("--no-db");
        }
        let out = command.output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            error_line(&out).starts_with(&format!("storlab: error: job 'job' on {UAS}: ")),
            "{}",
            stderr(&out)
        );
        let doc = json(&dir.path().join("out.json"));
        let entries = doc["what_if"].as_array().unwrap();
        assert_eq!(entries.len(), 2, "{doc}");
        assert_eq!(entries[0]["target"], file.to_str().unwrap());
        assert_eq!(entries[0]["report"]["jobs"][0]["read"]["ios"], 256);
        assert_eq!(entries[1]["target"], UAS);
        assert_eq!(entries[1]["report"]["jobs"][0]["error"], ENODATA);
        let report = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
        assert!(report.contains("first.img"), "the first target is charted");
        let history = storlab_with_db(&db).arg("history").output().unwrap();
        let rows = String::from_utf8_lossy(&history.stdout).lines().count();
        // A header and one row per target; with --no-db no database at all.
        match saved {
            true => assert_eq!(rows, 3, "{}", String::from_utf8_lossy(&history.stdout)),
            false => assert!(!db.exists(), "--no-db saved something"),
        }
    }
    // The comparison table holds both targets, the failed one's error under it.
    let table = run_in(
        dir.path(),
        &[
            "run",
            "--no-db",
            "--rw=read",
            "--bs=4k",
            "--size=1m",
            "--target",
            file.to_str().unwrap(),
            "--target",
            UAS,
            "--faults",
            MEDIA_ERROR,
        ],
    );
    assert_eq!(table.status.code(), Some(1), "{}", stderr(&table));
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains(&format!("t1: {}\n", file.display()))
            && text.contains(&format!("t2: {UAS}\n")),
        "{text}"
    );
    assert!(
        text.contains(&format!("[t2 job] failed on {UAS}")),
        "{text}"
    );
}

/// A what-if run interrupted (SIGINT or SIGTERM) while its second target runs writes the first
/// target's results to the JSON, the report and the database, and exits 1.
#[test]
fn an_interrupted_what_if_run_keeps_the_finished_targets_results() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("first.img");
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let db = dir.path().join(format!("results-{signal}.sqlite"));
        let out_json = dir.path().join(format!("out-{signal}.json"));
        let report = dir.path().join(format!("report-{signal}.html"));
        // No size: the 1 MiB file is read in a moment, the simulated drive's whole
        // capacity would take minutes.
        let mut child = storlab_with_db(&db)
            .args(["run", "--rw=read", "--bs=4k", "--output-format=json"])
            .arg("--target")
            .arg(&file)
            .args(["--target", UAS, "--output"])
            .arg(&out_json)
            .arg("--report")
            .arg(&report)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let mut seen = Vec::new();
        for line in lines.by_ref() {
            let line = line.unwrap();
            let second = line.contains("target 2 of 2");
            seen.push(line);
            if second {
                break;
            }
        }
        // Give the second target a moment to start its job, then interrupt it.
        std::thread::sleep(std::time::Duration::from_millis(300));
        // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        seen.extend(lines.map(Result::unwrap));
        let status = child.wait().unwrap();
        let seen = seen.join("\n");
        assert_eq!(status.code(), Some(1), "signal {signal}: {seen}");
        let doc = json(&out_json);
        let entries = doc["what_if"].as_array().unwrap();
        assert!(!entries.is_empty(), "{doc}");
        assert_eq!(entries[0]["target"], file.to_str().unwrap());
        assert_eq!(entries[0]["report"]["jobs"][0]["read"]["ios"], 256);
        let charted = std::fs::read_to_string(&report).unwrap();
        assert!(charted.contains("first.img"), "the first target is charted");
        let history = storlab_with_db(&db).arg("history").output().unwrap();
        let history = String::from_utf8_lossy(&history.stdout).into_owned();
        assert!(history.contains("first.img"), "{history}");
    }
}

/// A fio job where fio 3.33 itself loops forever (a normal distribution over two 64 KiB
/// blocks: lib/gauss.c's `gauss_next` spins once the mean of its draws lands on the last
/// block, the first draw here) stops with one line that says so, exit 1; the job before it
/// is in the output. fio's own run of the second job never ends (checked by hand: killed after
/// 8 s, with the distribution's spin rate checked in `distribution::tests`).
#[test]
fn a_job_fio_would_never_end_stops_with_a_line_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data"), vec![0u8; 1 << 20]).unwrap();
    let jobs = "[global]\nfilename=data\nbs=64k\nsize=128k\n\
        [first]\nrw=read\n\
        [endless]\nstonewall\nrw=randread\nrandom_distribution=normal:30\n";
    std::fs::write(dir.path().join("jobs.fio"), jobs).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--no-db",
            "jobs.fio",
            "--output-format=fio-json",
            "--output=out.json",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let line = error_line(&out);
    assert!(
        line.contains("'endless'") && line.contains("fio 3.33 never ends this job"),
        "{line}"
    );
    let report = json(&dir.path().join("out.json"));
    let names: Vec<&str> = report["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|job| job["jobname"].as_str())
        .collect();
    assert_eq!(names, ["first"]);
}
