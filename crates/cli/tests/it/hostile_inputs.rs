//! Inputs a careless or hostile user may give, each answered with a result or one line and
//! exit 2, never an abort, a hang or a wrong file: a `--sys-root` whose `slaves/` loop or whose
//! attribute is a FIFO, a verify state that is a link to `/dev/zero`, job names a spreadsheet
//! would run as formulas, a run named twice to `rm`, a `verify_dump` of a stack whose name holds
//! `/`, and `--pcap` on a stack without USB.

use crate::common::{run_in, stderr, stdout, storlab_with_db};
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

/// `storlab ARGS` in `dir`, killed (and the test failed) if it runs past 20 s.
fn run_briefly(dir: &Path, args: &[&str]) -> Output {
    let mut child = crate::common::storlab()
        .current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("storlab {args:?} still running after 20 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

/// A recorded sysfs tree with two device-mapper devices under `root/sys`: `dm-0` on `dm-1`,
/// and, with `cycle`, `dm-1` on `dm-0` again.
fn dm_sys_root(root: &Path, cycle: bool) -> std::path::PathBuf {
    let sys = root.join("sys");
    let virtual_block = sys.join("devices/virtual/block");
    for (name, below) in [("dm-0", Some("dm-1")), ("dm-1", cycle.then_some("dm-0"))] {
        let dir = virtual_block.join(name);
        std::fs::create_dir_all(dir.join("dm")).unwrap();
        std::fs::create_dir_all(dir.join("slaves")).unwrap();
        std::fs::write(dir.join("dm/name"), format!("vg-{name}\n")).unwrap();
        std::fs::write(dir.join("size"), "2048\n").unwrap();
        if let Some(below) = below {
            symlink(format!("../../{below}"), dir.join("slaves").join(below)).unwrap();
        }
    }
    std::fs::create_dir_all(sys.join("block")).unwrap();
    for name in ["dm-0", "dm-1"] {
        symlink(
            format!("../devices/virtual/block/{name}"),
            sys.join("block").join(name),
        )
        .unwrap();
    }
    sys
}

#[test]
fn probe_refuses_a_slaves_cycle_and_never_blocks_on_a_fifo_attribute() {
    let dir = tempfile::tempdir().unwrap();
    let sys = dm_sys_root(&dir.path().join("cycle"), true);
    for name in [vec!["dm-0"], vec![]] {
        let mut args = vec!["probe", "--sys-root", sys.to_str().unwrap()];
        args.extend(&name);
        let out = run_briefly(dir.path(), &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("slaves/"), "{args:?}: {err}");
    }

    let sys = dm_sys_root(&dir.path().join("fifo"), false);
    let size = sys.join("devices/virtual/block/dm-1/size");
    std::fs::remove_file(&size).unwrap();
    let mode = nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR;
    nix::unistd::mkfifo(&size, mode).unwrap();
    let sys = sys.to_str().unwrap();
    let out = run_briefly(
        dir.path(),
        &[
            "probe",
            "--sys-root",
            sys,
            "dm-0",
            "--output-format",
            "json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let device = &doc["probes"][0]["device"];
    assert_eq!(device["size_bytes"], 1024 * 1024, "{device}");
    assert_eq!(device["members"][0]["size_bytes"], serde_json::Value::Null);
}

#[test]
fn a_verify_state_linked_to_dev_zero_is_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    symlink("/dev/zero", dir.path().join("local-job-0-verify.state")).unwrap();
    let out = run_briefly(
        dir.path(),
        &[
            "run",
            "--no-db",
            "--ioengine=psync",
            "--filename=data",
            "--size=64k",
            "--rw=write",
            "--verify=crc32c",
            "--verify_state_load=1",
            // The load is what this case reads; with saving on, the written-path guard refuses
            // the link first (written_paths.rs).
            "--verify_state_save=0",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("character device, not a regular file"),
        "{err}"
    );
}

#[test]
fn csv_keeps_job_names_that_look_like_formulas_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["=HYPERLINK(\"http://x\")", "+1", "-2+3", "@SUM(A1)"];
    let mut args = vec!["run", "--no-db", "--ioengine=null", "--size=64k"];
    let flags: Vec<String> = names.iter().map(|n| format!("--name={n}")).collect();
    args.extend(flags.iter().map(String::as_str));
    args.push("--output-format=csv");
    let out = run_in(dir.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = stdout(&out);
    let cells: Vec<String> = csv.lines().skip(1).map(first_cell).collect();
    assert_eq!(cells.len(), names.len(), "{csv}");
    for (cell, name) in cells.iter().zip(names) {
        // A spreadsheet shows a cell starting with ' as the text after it.
        assert_eq!(*cell, format!("'{name}"), "{csv}");
    }
}

/// The first cell of a CSV row, unquoted (RFC 4180).
fn first_cell(row: &str) -> String {
    let Some(quoted) = row.strip_prefix('"') else {
        return row.split(',').next().unwrap().to_string();
    };
    let mut cell = String::new();
    let mut chars = quoted.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('"', Some('"')) => {
                cell.push('"');
                chars.next();
            }
            ('"', _) => break,
            (c, _) => cell.push(c),
        }
    }
    cell
}

#[test]
fn rm_of_a_run_named_twice_deletes_it_once_and_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let storlab = |args: &[&str]| storlab_with_db(&db).args(args).output().unwrap();
    assert!(storlab(&["run", "--ioengine=null", "--size=64k"])
        .status
        .success());
    let out = storlab(&["rm", "r1", "r1", "last"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let history = stdout(&storlab(&["history"]));
    assert_eq!(history.lines().count(), 1, "only the header: {history}");
}

#[test]
fn verify_dump_of_a_stack_named_with_a_slash_writes_its_files() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing was written: every block fails its header check and is dumped.
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--no-db",
            "--target=sim:hwfr2013/amd-win8-uas",
            "--rw=write",
            "--size=8k",
            "--verify=crc32c",
            "--verify_only=1",
            "--verify_dump=1",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let dumped = dir.path().join("sim-hwfr2013_amd-win8-uas.0.hdr_fail");
    assert!(dumped.is_file(), "{}", stderr(&out));
    assert!(stderr(&out).contains("dumped as"), "{}", stderr(&out));
}

#[test]
fn pcap_on_a_sata_stack_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--no-db",
            "--target=sim:hwfr2010/m225-sata-ahci",
            "--pcap=trace.pcap",
            "--size=64k",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "nothing ran first: {err}");
    assert!(err.contains("SATA"), "{err}");
    assert!(!dir.path().join("trace.pcap").exists());
}
