//! fio's `fill_device` and `ignore_error` where a file system fills: a small tmpfs each test
//! mounts for itself (root only; skipped otherwise, never this machine's own file systems), run
//! by storlab and, when it is installed, by fio 3.33 on the same file system, comparing bytes
//! written, the file left, errors counted and the exit; and `fill_device` on a simulated drive.

use crate::common::{run_in, stderr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The tmpfs's size: small, so a fill takes milliseconds.
const FS_BYTES: u64 = 4 << 20;
/// errno of a full file system, as fio's JSON gives it.
const ENOSPC: u64 = 28;

/// A tmpfs of `FS_BYTES` mounted on a temporary directory; unmounted on drop, however the test
/// ends.
struct SmallTmpfs(tempfile::TempDir);

impl SmallTmpfs {
    /// `None` (with a skip message) when this machine cannot mount one (not root, sandbox).
    fn mount() -> Option<SmallTmpfs> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: mounting a small tmpfs needs root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={FS_BYTES}")])
            .arg("tmpfs")
            .arg(dir.path())
            .status();
        if !mounted.is_ok_and(|s| s.success()) {
            eprintln!("skipped: cannot mount a tmpfs here");
            return None;
        }
        Some(SmallTmpfs(dir))
    }

    /// Empties the file system, then puts a file of `other_bytes` on it (so the fill ends
    /// inside a write, not at a block boundary). Returns the path the jobs fill.
    fn reset(&self, other_bytes: u64) -> PathBuf {
        for entry in std::fs::read_dir(self.0.path()).unwrap() {
            std::fs::remove_file(entry.unwrap().path()).unwrap();
        }
        std::fs::write(self.0.path().join("other"), vec![0u8; other_bytes as usize]).unwrap();
        self.0.path().join("data")
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

fn fio_present() -> bool {
    let found = Command::new("fio").arg("--version").output().is_ok();
    if !found {
        eprintln!("skipping the fio half: fio is not installed (Debian package fio)");
    }
    found
}

/// A tool's run of `job.fio` in `dir` with fio-shaped JSON (`extra` before the file).
fn run_tool(tool: &str, dir: &Path, extra: &[&str]) -> (Output, serde_json::Value) {
    let out = if tool == "fio" {
        Command::new("fio")
            .current_dir(dir)
            .arg("--output-format=json")
            .args(extra)
            .arg("job.fio")
            .output()
            .unwrap()
    } else {
        let mut args = vec!["run", "--no-db", "--output-format=fio-json"];
        args.extend_from_slice(extra);
        args.push("job.fio");
        run_in(dir, &args)
    };
    let json = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{tool}: no JSON: {}", stderr(&out)));
    (out, json)
}

fn tools() -> Vec<&'static str> {
    let mut tools = vec!["storlab"];
    if fio_present() {
        tools.push("fio");
    }
    tools
}

/// Our own write-then-check pair (after fio's idea of a surface scan): the first job writes
/// fio crc32c blocks until the file system is full, the second reads them back and checks
/// each header as it reads.
fn fill_then_check(data: &Path) -> String {
    format!(
        "[global]\nfilename={}\nioengine=psync\nbs=32k\nverify=crc32c\nverify_interval=4096\n\
         verify_state_save=0\n[fill]\nrw=write\nfill_fs=1\ndo_verify=0\n\
         [check]\nstonewall\nrw=read\ndo_verify=1\n",
        data.display()
    )
}

#[test]
fn a_fill_ends_at_enospc_as_a_success_and_its_file_reads_back_as_fios() {
    let Some(fs) = SmallTmpfs::mount() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    const OTHER_BYTES: u64 = 12 << 10;
    const BLOCK_BYTES: u64 = 32 << 10;
    // tmpfs counts pages exactly: the fill's file takes all that is free, its last write
    // comes back short (fio retries the rest, which fails with ENOSPC) and is in no figure.
    let free_bytes = FS_BYTES - OTHER_BYTES;
    let whole_writes_bytes = free_bytes / BLOCK_BYTES * BLOCK_BYTES;
    for tool in tools() {
        let data = fs.reset(OTHER_BYTES);
        std::fs::write(work.path().join("job.fio"), fill_then_check(&data)).unwrap();
        let (out, json) = run_tool(tool, work.path(), &["--section=fill"]);
        assert_eq!(out.status.code(), Some(0), "{tool}: {}", stderr(&out));
        let job = &json["jobs"][0];
        assert_eq!(job["error"], 0, "{tool}: a fill's ENOSPC is no error");
        assert_eq!(job["write"]["io_bytes"], whole_writes_bytes, "{tool}");
        assert_eq!(
            std::fs::metadata(&data).unwrap().len(),
            free_bytes,
            "{tool}: the short write's bytes are on the file system"
        );
    }

    // storlab runs both jobs: the check reads the filled file's whole blocks (its region is
    // the file's length, and the short tail is no whole block, as fio's) and finds every header.
    let data = fs.reset(OTHER_BYTES);
    std::fs::write(work.path().join("job.fio"), fill_then_check(&data)).unwrap();
    let (out, json) = run_tool("storlab", work.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let check = &json["jobs"][1];
    assert_eq!(check["error"], 0);
    assert_eq!(check["read"]["io_bytes"], whole_writes_bytes);
    // fio checks storlab's filled file with its own reader (whole blocks: fio stops before
    // the short tail, and so does storlab now).
    if fio_present() {
        let (out, json) = run_tool("fio", work.path(), &["--section=check"]);
        assert_eq!(out.status.code(), Some(0), "fio: {}", stderr(&out));
        assert_eq!(json["jobs"][0]["error"], 0);
        assert_eq!(json["jobs"][0]["read"]["io_bytes"], whole_writes_bytes);
    }
}

#[test]
fn enospc_passed_by_ignore_error_is_counted_as_fio_counts_it() {
    let Some(fs) = SmallTmpfs::mount() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    const OTHER_BYTES: u64 = 4 << 10;
    const BLOCK_BYTES: u64 = 64 << 10;
    // One MiB more than the file system holds: the writes past its end fail with ENOSPC,
    // which the write list passes; the one that comes back short counts as one of them.
    const SIZE_BYTES: u64 = FS_BYTES + (1 << 20);
    let whole_writes = (FS_BYTES - OTHER_BYTES) / BLOCK_BYTES;
    let failed_writes = SIZE_BYTES / BLOCK_BYTES - whole_writes;
    for tool in tools() {
        let data = fs.reset(OTHER_BYTES);
        let job = format!(
            "[enospc]\nfilename={}\nioengine=psync\nrw=write\nbs=64k\nsize={SIZE_BYTES}\n\
             continue_on_error=write\nignore_error=,ENOSPC\nerror_dump=0\n",
            data.display()
        );
        std::fs::write(work.path().join("job.fio"), job).unwrap();
        let (out, json) = run_tool(tool, work.path(), &[]);
        assert_eq!(out.status.code(), Some(0), "{tool}: {}", stderr(&out));
        let job = &json["jobs"][0];
        assert_eq!(job["total_err"], failed_writes, "{tool}");
        assert_eq!(job["first_error"], ENOSPC, "{tool}");
        assert_eq!(
            job["error"], ENOSPC,
            "{tool}: stat.c reports the first error"
        );
        assert_eq!(
            job["write"]["io_bytes"],
            whole_writes * BLOCK_BYTES,
            "{tool}"
        );
    }
}

#[test]
fn a_simulated_drive_has_no_enospc_and_fills_to_the_jobs_size() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--no-db",
            "--output-format=fio-json",
            "--target",
            "sim:usb3-uas-ssd",
            "--rw=write",
            "--bs=64k",
            "--size=1m",
            "--fill_device=1",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["jobs"][0]["error"], 0);
    assert_eq!(json["jobs"][0]["write"]["io_bytes"], 1 << 20);
}

#[test]
fn fill_device_and_error_keys_storlab_cannot_honour_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for (flags, says) in [
        (&["--rw=write", "--size=1m"][..], "needs filename="),
        (&["--filename=data", "--rw=read"][..], "does not write"),
        (
            &["--filename=data", "--rw=write", "--ioengine=mmap"][..],
            "ioengine=mmap",
        ),
    ] {
        let mut args = vec!["run", "--no-db", "--fill_device=1"];
        args.extend_from_slice(flags);
        let out = run_in(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let line = stderr(&out);
        assert!(line.contains(says), "{line}");
        assert_eq!(line.trim_end().lines().count(), 1, "{line}");
    }
    let out = run_in(
        dir.path(),
        &["run", "--no-db", "--size=1m", "--error_dump=1"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("error_dump"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
}
