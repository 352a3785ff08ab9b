//! fio's file keys run end to end (issue 20): `filename_format`, `filesize`, `unlink`,
//! `allow_file_create`, compared with what fio 3.33 does with the same flags where fio is
//! installed: the files each tool leaves behind, their sizes, and the bytes moved.

use std::path::Path;
use std::process::{Command, Output};

fn storlab(dir: &Path, flags: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_storlab"))
        .args(["run", "--no-db", "--name=j"])
        .arg(format!("--directory={}", dir.display()))
        .args(flags)
        .output()
        .unwrap()
}

fn fio(dir: &Path, flags: &[&str]) -> Option<Output> {
    let output = Command::new("fio")
        .args(["--name=j", "--output=/dev/null"])
        .arg(format!("--directory={}", dir.display()))
        .args(flags)
        .output();
    match output {
        Ok(output) => Some(output),
        Err(_) => {
            eprintln!("skipping the fio half: fio is not installed (Debian package fio)");
            None
        }
    }
}

/// The files a tool left in `dir`, with their sizes, sorted.
fn files(dir: &Path) -> Vec<(String, u64)> {
    let mut found: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    found.sort();
    found
}

/// `filename_format` names the job's file, which stays after the run; `filesize` is its size
/// and, without `size`, the job's; `unlink=1` deletes it afterwards. fio does the same.
#[test]
fn filename_format_filesize_and_unlink_leave_fios_files() {
    let flags = [
        "--rw=write",
        "--bs=4k",
        "--filesize=256k",
        "--filename_format=$jobname.$jobnum.$filenum",
    ];
    let storlab_dir = tempfile::tempdir().unwrap();
    let output = storlab(storlab_dir.path(), &flags);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        files(storlab_dir.path()),
        [("j.0.0".to_string(), 256 << 10)]
    );
    let unlinked = tempfile::tempdir().unwrap();
    let with_unlink: Vec<&str> = flags.iter().copied().chain(["--unlink=1"]).collect();
    assert!(storlab(unlinked.path(), &with_unlink).status.success());
    assert_eq!(files(unlinked.path()), []);

    let fio_dir = tempfile::tempdir().unwrap();
    if let Some(output) = fio(fio_dir.path(), &flags) {
        assert!(output.status.success(), "{output:?}");
        assert_eq!(files(fio_dir.path()), files(storlab_dir.path()));
        let fio_unlinked = tempfile::tempdir().unwrap();
        assert!(fio(fio_unlinked.path(), &with_unlink)
            .unwrap()
            .status
            .success());
        assert_eq!(files(fio_unlinked.path()), []);
    }
}

/// `allow_file_create=0`: a job whose file does not exist fails with one line and creates
/// nothing, as fio's does.
#[test]
fn allow_file_create_0_refuses_a_missing_file() {
    let flags = [
        "--rw=read",
        "--size=64k",
        "--filename=missing",
        "--allow_file_create=0",
    ];
    let dir = tempfile::tempdir().unwrap();
    let output = storlab(dir.path(), &flags);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("allow_file_create=0") && stderr.contains("missing"),
        "{stderr}"
    );
    assert_eq!(files(dir.path()), []);
    let fio_dir = tempfile::tempdir().unwrap();
    if let Some(output) = fio(fio_dir.path(), &flags) {
        assert!(!output.status.success(), "{output:?}");
        assert_eq!(files(fio_dir.path()), []);
    }
}

/// `buffer_pattern`: every byte written is the pattern repeated, unstamped; the file each tool
/// leaves is the same, byte for byte.
#[test]
fn buffer_pattern_writes_fios_bytes() {
    for pattern in ["0xdeadbeef", "\"ab\""] {
        {
            let key = "buffer_pattern";
            let setting = format!("--{key}={pattern}");
            let flags = [
                "--rw=write",
                "--bs=4k",
                "--size=64k",
                "--filename=data",
                setting.as_str(),
            ];
            let storlab_dir = tempfile::tempdir().unwrap();
            let output = storlab(storlab_dir.path(), &flags);
            assert!(output.status.success(), "{output:?}");
            let written = std::fs::read(storlab_dir.path().join("data")).unwrap();
            let expected: Vec<u8> = match pattern {
                "0xdeadbeef" => [0xde, 0xad, 0xbe, 0xef].repeat(16 << 10),
                _ => b"ab".repeat(32 << 10),
            };
            assert!(written == expected, "{key}={pattern}");
            let fio_dir = tempfile::tempdir().unwrap();
            if let Some(output) = fio(fio_dir.path(), &flags) {
                assert!(output.status.success(), "{output:?}");
                let fio_written = std::fs::read(fio_dir.path().join("data")).unwrap();
                assert!(
                    fio_written == written,
                    "{key}={pattern}: fio wrote other bytes"
                );
            }
        }
    }
}
