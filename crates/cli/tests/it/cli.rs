//! Runs the `storlab` binary as a user would: help snapshots, output formats, bad input (one
//! line, exit 2, nothing left behind), Ctrl-C, and the refusal to overwrite a device with data.

use crate::common;
use common::{run_in, stderr, storlab};

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Files storlab left in `dir` (its temporary files are hidden `.storlab-*`).
pub(crate) fn leftovers(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains("storlab"))
        .collect()
}

#[test]
fn help_texts_are_stable() {
    let top = storlab().arg("--help").output().unwrap();
    assert!(top.status.success());
    insta::assert_snapshot!("help", String::from_utf8_lossy(&top.stdout));
    let run = storlab().args(["run", "--help"]).output().unwrap();
    assert!(run.status.success());
    insta::assert_snapshot!("run_help", String::from_utf8_lossy(&run.stdout));
}

#[test]
fn flags_run_on_a_file_and_json_records_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data");
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--name=mix",
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=4k",
            "--iodepth=8",
            "--ioengine=io_uring",
            &format!("--filename={}", file.display()),
            "--size=8m",
            "--number_ios=2000",
            "--output-format=json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON alone");
    let job = &doc["jobs"][0];
    assert_eq!(job["name"], "mix");
    assert_eq!(job["engine"], "io_uring");
    assert_eq!(job["data_pattern"], "random");
    assert_eq!(job["align_bytes"], 4096);
    let reads = job["read"]["ios"].as_u64().unwrap();
    let writes = job["write"]["ios"].as_u64().unwrap();
    assert_eq!(reads + writes, 2000);
    let read_share = reads as f64 / 2000.0;
    assert!((0.6..0.8).contains(&read_share), "read share {read_share}");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 8 << 20);
}

#[test]
fn fio_json_is_shaped_like_fio() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--ioengine=null",
            "--rw=randread",
            "--bs=4k",
            "--iodepth=4",
            "--size=64m",
            "--output-format=fio-json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let read = &doc["jobs"][0]["read"];
    assert_eq!(read["total_ios"], 16384, "64 MiB of 4 KiB reads");
    assert!(read["iops"].as_f64().unwrap() > 0.0);
    let bw_kib = read["bw"].as_u64().unwrap() as f64;
    let bw_bytes = read["bw_bytes"].as_u64().unwrap() as f64;
    assert!(
        (bw_kib - bw_bytes / 1024.0).abs() <= 1.0,
        "bw is KiB/s: {bw_kib} vs {bw_bytes} B/s"
    );
    assert!(read["clat_ns"]["percentile"]["99.000000"]
        .as_u64()
        .is_some());
    assert!(doc["jobs"][0]["usr_cpu"].as_f64().is_some());
}

/// fio 3.33 ignores `number_ios` in a time-based job (`fio --time_based --runtime=1
/// --number_ios=12` issues I/O for the whole second): the runtime alone ends it.
#[test]
fn number_ios_does_not_end_a_time_based_job() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--ioengine=null",
            "--rw=randread",
            "--bs=4k",
            "--size=1m",
            "--time_based",
            "--runtime=1",
            "--number_ios=12",
            "--no-db",
            "--output-format=fio-json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ios = doc["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert!(
        ios > 12,
        "the time-based job stopped at number_ios: {ios} I/Os"
    );
}

#[test]
fn output_file_holds_the_machine_output_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--ioengine=null",
            "--size=4m",
            "--output-format=csv",
            "--output=result.csv",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        out.stdout.is_empty(),
        "nothing on stdout when --output is given"
    );
    let csv = std::fs::read_to_string(dir.path().join("result.csv")).unwrap();
    assert!(csv.lines().count() >= 2, "{csv}");
}

#[test]
fn verify_reads_back_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--rw=randwrite",
            "--bs=4k",
            "--iodepth=16",
            "--ioengine=io_uring",
            "--size=4m",
            "--number_ios=3000",
            "--verify=crc32c",
            "--output-format=json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let details = doc["jobs"][0]["engine_details"].as_array().unwrap();
    let verified = details
        .iter()
        .find(|d| d[0] == "verified_bytes")
        .and_then(|d| d[1].as_str()?.parse::<u64>().ok())
        .expect("verified_bytes recorded");
    assert!(verified >= 1 << 20, "verified only {verified} bytes");
    assert!(leftovers(dir.path()).is_empty(), "temporary file removed");
}

/// Each mistake: one line on stderr naming what is wrong, exit code 2, nothing left behind.
#[test]
fn bad_input_is_one_line_exit_2_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("unknown.fio"),
        "[j]\nrw=read\nfrobnicate=3\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("adir")).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "unknown.fio"],
            "unknown.fio:3: unknown key 'frobnicate'",
        ),
        (&["run", "missing.fio"], "missing.fio"),
        (&["run", "--iodepth=0"], "--iodepth=0"),
        (&["run", "--size=12q"], "--size=12q"),
        (&["run", "--size=0"], "--size=0"),
        (&["run", "--filename=adir", "--size=1m"], "is a directory"),
        (&["run", "--filename=nodir/f", "--size=1m"], "nodir/f"),
        (&["run", "--size=1m", "--output=nodir/out.json"], "--output"),
        (&["run", "--target=sim:", "--size=1m"], "sim"),
        (&["decode", "unknown.fio"], "unknown.fio"),
        (&["decode", "adir"], "is a directory"),
    ];
    for (args, needle) in cases {
        let out = run_in(dir.path(), args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?} must say one line: {err}"
        );
        assert!(
            err.contains(needle),
            "{args:?}: '{err}' should name '{needle}'"
        );
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    }
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["adir", "unknown.fio"],
        "bad input left files behind"
    );
}

#[test]
fn ctrl_c_keeps_finished_jobs_and_removes_the_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let child = storlab()
        .current_dir(dir.path())
        .args([
            "run",
            "--ioengine=psync",
            "--size=8m",
            "--output-format=json",
            "--name=quick",
            "--number_ios=100",
            "--name=long",
            "--stonewall",
            "--time_based",
            "--runtime=60",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the long job runs (its temporary file exists and the quick job is done).
    let started = Instant::now();
    while leftovers(dir.path()).is_empty() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(700));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("finished results still printed");
    let names: Vec<_> = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names[0], "quick");
    assert!(stderr(&out).contains("interrupted"));
    assert!(
        leftovers(dir.path()).is_empty(),
        "left {:?}",
        leftovers(dir.path())
    );
}

/// Skips (or fails under CI) when this machine cannot set up loop devices.
fn loop_devices_available() -> bool {
    let ok = nix::unistd::geteuid().is_root()
        && Command::new("losetup").arg("--version").output().is_ok()
        && Command::new("mkfs.ext4").arg("-V").output().is_ok();
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run the loop-device test (root, losetup, mkfs.ext4)"
        );
        eprintln!("skipped: needs root, losetup and mkfs.ext4");
    }
    ok
}

/// Detaches the loop device however the test ends.
struct LoopDevice(String);
impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

#[test]
fn refuses_to_write_a_loop_device_carrying_ext4_unless_named_destructive() {
    if !loop_devices_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let backing = dir.path().join("backing.img");
    std::fs::File::create(&backing)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    let out = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&backing)
        .output()
        .unwrap();
    assert!(out.status.success(), "losetup: {}", stderr(&out));
    let device = LoopDevice(String::from_utf8(out.stdout).unwrap().trim().to_string());
    assert!(Command::new("mkfs.ext4")
        .args(["-q", &device.0])
        .status()
        .unwrap()
        .success());

    let filename = format!("--filename={}", device.0);
    let write = [
        "run",
        "--rw=randwrite",
        "--ioengine=psync",
        filename.as_str(),
        "--size=1m",
        "--number_ios=10",
    ];
    let refused = run_in(dir.path(), &write);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("ext4"), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("--destructive"),
        "{}",
        stderr(&refused)
    );

    let read = [
        "run",
        "--rw=randread",
        "--ioengine=psync",
        filename.as_str(),
        "--size=1m",
        "--number_ios=10",
    ];
    assert!(
        run_in(dir.path(), &read).status.success(),
        "reading is always allowed"
    );
    // Without a size, a job on a block device covers all of it, as in fio.
    let whole = run_in(
        dir.path(),
        &[
            "run",
            "--rw=read",
            "--bs=1m",
            "--target",
            device.0.as_str(),
            "--no-db",
            "--output-format=json",
        ],
    );
    assert!(whole.status.success(), "{}", stderr(&whole));
    let doc: serde_json::Value = serde_json::from_slice(&whole.stdout).unwrap();
    assert_eq!(doc["jobs"][0]["target"]["size_bytes"], 32 << 20);
    assert_eq!(doc["jobs"][0]["read"]["bytes"], 32 << 20);

    let mut allowed = write.to_vec();
    allowed.extend(["--destructive", device.0.as_str()]);
    let out = run_in(dir.path(), &allowed);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Runs storlab in `dir` with stdout a pipe whose reader is already gone, as in
/// `storlab stacks | head -0`: the first write to stdout fails with a broken pipe, every time.
fn run_into_closed_pipe(dir: &Path, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    storlab()
        .current_dir(dir)
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("storlab runs")
}

/// A reader that stops early (`| head`) is the reader being done: every command that prints
/// to stdout stops quietly and exits 0 — no panic ("failed printing to stdout"), no error line.
#[test]
fn a_closed_stdout_pipe_ends_every_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let db = db.to_str().unwrap();
    let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/validate-small.toml");
    let sim_run = [
        "run",
        "--rw=randread",
        "--bs=4k",
        "--size=16m",
        "--number_ios=50",
        "--target",
        "sim:usb3-uas-ssd",
        "--db",
        db,
    ];
    // A first run, saved normally, records a small capture for `decode`.
    let mut first = sim_run.to_vec();
    first.extend(["--pcap", "s.pcap"]);
    let out = run_in(dir.path(), &first);
    assert!(out.status.success(), "{}", stderr(&out));

    let commands: Vec<Vec<&str>> = vec![
        vec!["stacks"],
        vec!["presets"],
        vec!["engines"],
        vec!["--help"],
        vec!["run", "--help"],
        vec!["--version"],
        sim_run.to_vec(),
        [&sim_run[..], &["--output-format=json"]].concat(),
        vec!["decode", "s.pcap"],
        vec!["history", "--db", db],
        vec!["show", "last", "--db", db],
        vec!["compare", "r1", "r2", "--db", db],
        vec!["export", "last", "--db", db],
        vec!["export", "r1", "--format", "csv", "--db", db],
        vec![
            "validate",
            reference.to_str().unwrap(),
            "--filter",
            "uas.seq_read",
        ],
    ];
    for args in &commands {
        let out = run_into_closed_pipe(dir.path(), args);
        let err = stderr(&out);
        assert!(
            !err.contains("panicked"),
            "storlab {args:?} panicked:\n{err}"
        );
        assert!(!err.contains("error"), "storlab {args:?} reported:\n{err}");
        assert_eq!(out.status.code(), Some(0), "storlab {args:?}:\n{err}");
    }
    // The runs whose output nobody read are saved, complete, all the same.
    let history = run_in(dir.path(), &["history", "--db", db]);
    assert!(history.status.success(), "{}", stderr(&history));
    let listed = String::from_utf8_lossy(&history.stdout);
    assert_eq!(
        listed.lines().count(),
        4,
        "header and three runs:\n{listed}"
    );
    assert!(
        listed.lines().skip(1).all(|l| l.contains(" complete ")),
        "{listed}"
    );
}

/// A closed stderr (its reader gone) loses the diagnostics, not the command: a run that warns
/// and reports progress still ends with its exit code instead of a panic (101), and bad input
/// still exits 2.
#[test]
fn a_closed_stderr_pipe_loses_the_diagnostics_not_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let closed_stderr = |args: &[&str]| {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        storlab()
            .current_dir(dir.path())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(writer)
            .output()
            .expect("storlab runs")
    };
    let warned = closed_stderr(&[
        "run",
        "--rw=randread",
        "--bs=512",
        "--size=16m",
        "--number_ios=50",
        "--target",
        "sim:usb3-uas-ssd",
        "--no-db",
    ]);
    assert_eq!(warned.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&warned.stdout).contains("randread"));
    let bad = closed_stderr(&["run", "--iodepth=0"]);
    assert_eq!(bad.status.code(), Some(2));
}
