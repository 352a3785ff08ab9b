//! fio's verify family through the binary, with fio 3.33 as the independent oracle: files each
//! tool writes pass the other's `verify_only`, a flipped byte and a misplaced block fail both
//! at the same offset (with `verify_dump` files), `verify_backlog` interleaves reads as fio's,
//! and a simulated drive carries the blocks. Every test writes only files in its own temporary
//! directory.

use crate::common::{run_in, stderr};
use std::path::Path;
use std::process::{Command, Output};

/// Bytes of the test file and of each block.
const FILE_BYTES: u64 = 256 << 10;
const BLOCK_BYTES: u64 = 4096;

fn fio_present() -> bool {
    let found = Command::new("fio").arg("--version").output().is_ok();
    if !found {
        eprintln!("skipping: fio is not installed (Debian package fio)");
    }
    found
}

/// The job both tools run: `rw` over the file `data` in `dir`, fio verify kind `kind`.
fn job_flags(rw: &str, kind: &str, extra: &[&str]) -> Vec<String> {
    let mut flags: Vec<String> = [
        "--name=v".to_string(),
        "--filename=data".into(),
        format!("--size={FILE_BYTES}"),
        format!("--bs={BLOCK_BYTES}"),
        format!("--rw={rw}"),
        format!("--verify={kind}"),
    ]
    .into();
    flags.extend(extra.iter().map(|s| s.to_string()));
    flags
}

fn fio_in(dir: &Path, flags: &[String]) -> Output {
    Command::new("fio")
        .current_dir(dir)
        .arg("--output-format=json")
        .args(flags)
        .output()
        .expect("fio runs")
}

fn storlab_in(dir: &Path, flags: &[String]) -> Output {
    let mut args = vec![
        "run".to_string(),
        "--no-db".into(),
        "--output-format=fio-json".into(),
    ];
    args.extend(flags.iter().cloned());
    run_in(dir, &args)
}

/// A temporary directory whose `data` storlab wrote with `rw=write verify=crc32c`: the
/// directory, the job's flags and the file's bytes.
fn crc32c_file_written_by_storlab() -> (tempfile::TempDir, Vec<String>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let write = job_flags("write", "crc32c", &[]);
    let written = storlab_in(dir.path(), &write);
    assert!(written.status.success(), "{}", stderr(&written));
    let data = std::fs::read(dir.path().join("data")).unwrap();
    (dir, write, data)
}

/// The one job of a fio-shaped JSON document: (error, read I/Os, write I/Os).
fn counts(out: &Output) -> (u64, u64, u64) {
    let text = String::from_utf8_lossy(&out.stdout);
    let start = text.find('{').unwrap_or_else(|| panic!("no JSON: {text}"));
    let doc: serde_json::Value = serde_json::from_str(&text[start..]).unwrap();
    let job = &doc["jobs"][0];
    let ios = |dir: &str| job[dir]["total_ios"].as_u64().unwrap();
    (job["error"].as_u64().unwrap(), ios("read"), ios("write"))
}

/// Where the tool said verification failed: (offset, length) from the "offset N, length L"
/// both tools end their line with (fio adds the file name before it).
fn failed_at(text: &str) -> (u64, u64) {
    let at = text
        .find(", length ")
        .unwrap_or_else(|| panic!("no length in: {text}"));
    let offset_digits: String = text[..at]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let length_digits: String = text[at + ", length ".len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    (
        offset_digits.parse().unwrap(),
        length_digits.parse().unwrap(),
    )
}

/// (a) A file storlab wrote passes fio's `verify_only` of the same job, and one fio wrote passes
/// storlab's, for several kinds (and `verify=pattern` with `%o`).
#[test]
fn files_each_tool_writes_pass_the_others_verify_only() {
    if !fio_present() {
        return;
    }
    let blocks = FILE_BYTES / BLOCK_BYTES;
    let kinds: [(&str, &[&str]); 11] = [
        ("md5", &[]),
        // fio's sha256/sha512 headers are its hashes' working buffers (`fio_verify.rs`),
        // including the tails a 1 KiB interval and a block 40 bytes short of a whole one leave.
        ("sha256", &[]),
        ("sha512", &[]),
        ("sha256", &["--verify_interval=1024"]),
        ("md5", &["--verify_pattern=0x0102030405"]),
        ("crc32c", &[]),
        ("crc64", &["--verify_interval=1024"]),
        ("sha1", &[]),
        ("xxhash", &["--verify_offset=512"]),
        ("meta", &[]),
        ("pattern", &["--verify_pattern=0xaabb%o\"xy\""]),
    ];
    for (kind, extra) in kinds {
        let dir = tempfile::tempdir().unwrap();
        let write = job_flags("randwrite", kind, extra);
        let mut check = write.clone();
        check.push("--verify_only=1".into());

        let written = storlab_in(dir.path(), &write);
        assert!(written.status.success(), "{kind}: {}", stderr(&written));
        assert_eq!(
            counts(&written),
            (0, blocks, blocks),
            "{kind}: storlab reads back"
        );
        let checked = fio_in(dir.path(), &check);
        assert!(checked.status.success(), "{kind}: fio: {checked:?}");
        assert_eq!(counts(&checked).0, 0, "{kind}");
        assert_eq!(counts(&checked).1, blocks, "{kind}: fio checks every block");

        std::fs::remove_file(dir.path().join("data")).unwrap();
        let mut fio_write = write.clone();
        fio_write.push("--do_verify=0".into());
        let by_fio = fio_in(dir.path(), &fio_write);
        assert!(by_fio.status.success(), "{kind}: {by_fio:?}");
        let checked = storlab_in(dir.path(), &check);
        assert!(checked.status.success(), "{kind}: {}", stderr(&checked));
        assert_eq!(
            counts(&checked),
            (0, blocks, 0),
            "{kind}: storlab checks every block"
        );
    }
}

/// (b) One flipped byte fails both tools' `verify_only` at the same block, each dumping the
/// block it read as fio names the files; (c) a block copied to another offset (a misplaced
/// write) fails both on the header's offset.
#[test]
fn a_flipped_byte_and_a_misplaced_block_fail_both_tools_at_the_same_offset() {
    if !fio_present() {
        return;
    }
    for kind in ["crc32c", "md5", "sha3-256"] {
        let dir = tempfile::tempdir().unwrap();
        let write = job_flags("write", kind, &[]);
        let written = storlab_in(dir.path(), &write);
        assert!(written.status.success(), "{kind}: {}", stderr(&written));
        let pristine = std::fs::read(dir.path().join("data")).unwrap();

        let bad_block = 5 * BLOCK_BYTES;
        let mut flipped = pristine.clone();
        flipped[(bad_block + 1000) as usize] ^= 0x10;
        let mut misplaced = pristine.clone();
        let (from, to) = (3 * BLOCK_BYTES as usize, 7 * BLOCK_BYTES as usize);
        misplaced.copy_within(from..from + BLOCK_BYTES as usize, to);

        for (case, data, at, says) in [
            ("flipped", &flipped, bad_block, "verify failed"),
            (
                "misplaced",
                &misplaced,
                to as u64,
                "bad header offset 12288",
            ),
        ] {
            std::fs::write(dir.path().join("data"), data).unwrap();
            let mut check = write.clone();
            check.extend(["--verify_only=1".into(), "--verify_dump=1".into()]);
            for tool in ["fio", "storlab"] {
                let cwd = dir.path().join(format!("{tool}-{case}"));
                std::fs::create_dir(&cwd).unwrap();
                // The file stays in the parent; each tool dumps into its own directory.
                let mut flags: Vec<String> = check
                    .iter()
                    .filter(|f| !f.starts_with("--filename="))
                    .cloned()
                    .collect();
                flags.push(format!("--filename={}", dir.path().join("data").display()));
                let out = if tool == "fio" {
                    fio_in(&cwd, &flags)
                } else {
                    storlab_in(&cwd, &flags)
                };
                let text = format!("{}{}", stderr(&out), String::from_utf8_lossy(&out.stdout));
                assert!(!out.status.success(), "{tool} {kind} {case} passed: {text}");
                let line = text
                    .lines()
                    .find(|l| l.contains(says))
                    .unwrap_or_else(|| panic!("{tool} {kind} {case}: no '{says}' in {text}"));
                assert_eq!(
                    failed_at(line),
                    (at, BLOCK_BYTES),
                    "{tool} {kind} {case}: {line}"
                );
                let dumped = |suffix: &str| cwd.join(format!("data.{at}.{suffix}"));
                if case == "flipped" {
                    let received = std::fs::read(dumped("received")).unwrap();
                    assert_eq!(received, &data[at as usize..(at + BLOCK_BYTES) as usize]);
                    assert!(dumped("expected").exists(), "{tool} {kind}");
                } else {
                    assert!(dumped("hdr_fail").exists(), "{tool} {kind}: {text}");
                }
            }
        }
    }
}

/// The kinds of an I/O log's I/O lines in order ("read"/"write"), either tool's log version.
fn iolog_directions(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|line| {
            line.split_whitespace()
                .find(|w| *w == "read" || *w == "write")
                .map(str::to_string)
        })
        .collect()
}

/// (d) `verify_backlog` interleaves reads with the writes as fio's does: the same sequence of
/// reads and writes in both tools' I/O logs, and the same I/O counts in their JSON.
#[test]
fn verify_backlog_interleaves_reads_as_fio_does() {
    if !fio_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (backlog, batch) in [("16", "8"), ("8", "8")] {
        let mut logs = Vec::new();
        let mut totals = Vec::new();
        for tool in ["fio", "storlab"] {
            let log = dir.path().join(format!("{tool}.{backlog}.iolog"));
            let flags = job_flags(
                "randwrite",
                "crc32c",
                &[
                    &format!("--verify_backlog={backlog}"),
                    &format!("--verify_backlog_batch={batch}"),
                    &format!("--write_iolog={}", log.display()),
                ],
            );
            let out = if tool == "fio" {
                fio_in(dir.path(), &flags)
            } else {
                storlab_in(dir.path(), &flags)
            };
            assert!(out.status.success(), "{tool}: {}", stderr(&out));
            totals.push(counts(&out));
            logs.push(iolog_directions(&log));
        }
        assert_eq!(
            totals[0], totals[1],
            "backlog {backlog}/{batch}: fio, storlab"
        );
        // storlab's log ends with the job's last write: the read-back after it is not logged.
        let (fio_log, storlab_log) = (&logs[0], &logs[1]);
        assert!(storlab_log.len() > 64, "{storlab_log:?}");
        assert_eq!(&fio_log[..storlab_log.len()], &storlab_log[..]);
        assert!(fio_log[storlab_log.len()..].iter().all(|d| d == "read"));
    }
}

/// (e) A simulated drive carries the blocks' real bytes: md5 verify passes on it.
#[test]
fn md5_verify_passes_on_a_simulated_drive() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--no-db",
            "--output-format=fio-json",
            "--target=sim:usb3-uas-ssd",
            "--rw=randwrite",
            "--bs=4k",
            "--size=1m",
            "--verify=md5",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let (error, reads, writes) = counts(&out);
    assert_eq!((error, reads, writes), (0, 256, 256));
}

/// A verify failure is reported as fio 3.33 reports it: the job is in the JSON with `error` 84
/// (EILSEQ) and the figures of what it did until the bad block, and the run exits 1, fio's
/// status. The failing job's object has fio's keys.
#[test]
fn a_verify_failure_is_the_jobs_error_84_in_the_json_as_in_fio() {
    if !fio_present() {
        return;
    }
    let (dir, write, mut data) = crc32c_file_written_by_storlab();
    let bad_block = 2 * BLOCK_BYTES;
    data[(bad_block + 100) as usize] ^= 0xff;
    std::fs::write(dir.path().join("data"), &data).unwrap();
    let mut check = write.clone();
    check.push("--verify_only=1".into());
    let mut jobs = Vec::new();
    for tool in ["fio", "storlab"] {
        let out = if tool == "fio" {
            fio_in(dir.path(), &check)
        } else {
            storlab_in(dir.path(), &check)
        };
        assert_eq!(out.status.code(), Some(1), "{tool}: {}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        let start = text
            .find('{')
            .unwrap_or_else(|| panic!("{tool}: no JSON: {text}"));
        let doc: serde_json::Value = serde_json::from_str(&text[start..]).unwrap();
        let job = doc["jobs"][0].clone();
        assert_eq!(job["error"], 84, "{tool}: {job}");
        // The reads up to the bad block, which is counted: blocks 0, 1 and 2.
        assert_eq!(job["read"]["total_ios"], 3, "{tool}: {}", job["read"]);
        assert_eq!(
            job["read"]["io_bytes"],
            3 * BLOCK_BYTES,
            "{tool}: {}",
            job["read"]
        );
        let mut keys: Vec<String> = job.as_object().unwrap().keys().cloned().collect();
        keys.retain(|key| key != "storlab_warnings");
        keys.sort();
        jobs.push(keys);
        // The error line names the bad block.
        let line = stderr(&out);
        let line = line
            .lines()
            .find(|l| l.contains("verify failed"))
            .unwrap_or_else(|| panic!("{tool}: {line}"));
        assert_eq!(failed_at(line), (bad_block, BLOCK_BYTES), "{tool}: {line}");
    }
    assert_eq!(jobs[0], jobs[1]);
}

/// With `numjobs=2` each clone checks its own region (`offset_increment`) and only the clone
/// whose region holds the bad block fails, as fio 3.33 reports it: reported apart, that clone
/// alone carries `error` 84 with its reads up to the bad block while the other reports all its
/// reads and error 0; with `group_reporting` the group's one entry takes the error and both
/// clones' reads. Both runs exit 1.
#[test]
fn a_verify_failure_marks_only_the_clone_that_read_the_bad_block_as_in_fio() {
    if !fio_present() {
        return;
    }
    const CLONE_BYTES: u64 = 64 << 10;
    let dir = tempfile::tempdir().unwrap();
    let clones = [
        "--numjobs=2".to_string(),
        format!("--size={CLONE_BYTES}"),
        format!("--offset_increment={CLONE_BYTES}"),
    ];
    let clones: Vec<&str> = clones.iter().map(String::as_str).collect();
    let write = job_flags("write", "crc32c", &clones);
    let written = storlab_in(dir.path(), &write);
    assert!(written.status.success(), "{}", stderr(&written));
    // Block 2 of the second clone's region.
    let bad_block = CLONE_BYTES + 2 * BLOCK_BYTES;
    let mut data = std::fs::read(dir.path().join("data")).unwrap();
    assert_eq!(data.len() as u64, 2 * CLONE_BYTES);
    data[(bad_block + 100) as usize] ^= 0xff;
    std::fs::write(dir.path().join("data"), &data).unwrap();
    let blocks_per_clone = CLONE_BYTES / BLOCK_BYTES;
    // (jobname, error, read I/Os) of each reported job; the failing clone's reads count
    // blocks 0, 1 and 2.
    let apart = [
        ("v".to_string(), 0, blocks_per_clone),
        ("v".to_string(), 84, 3),
    ];
    let grouped = [("v".to_string(), 84, blocks_per_clone + 3)];
    for (group_reporting, expected) in [("0", &apart[..]), ("1", &grouped[..])] {
        let mut check = write.clone();
        check.push("--verify_only=1".into());
        check.push(format!("--group_reporting={group_reporting}"));
        for tool in ["fio", "storlab"] {
            let out = if tool == "fio" {
                fio_in(dir.path(), &check)
            } else {
                storlab_in(dir.path(), &check)
            };
            let context = format!("{tool} group_reporting={group_reporting}");
            assert_eq!(out.status.code(), Some(1), "{context}: {}", stderr(&out));
            let text = String::from_utf8_lossy(&out.stdout);
            let start = text
                .find('{')
                .unwrap_or_else(|| panic!("{context}: no JSON: {text}"));
            let doc: serde_json::Value = serde_json::from_str(&text[start..]).unwrap();
            let jobs: Vec<(String, u64, u64)> = doc["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|job| {
                    (
                        job["jobname"].as_str().unwrap().to_string(),
                        job["error"].as_u64().unwrap(),
                        job["read"]["total_ios"].as_u64().unwrap(),
                    )
                })
                .collect();
            assert_eq!(jobs, expected, "{context}");
        }
    }
}

/// fio's verify state file (`verify_state_save`, on by default): the same writing job leaves
/// the same `local-v-N-verify.state` bytes from both tools (sequential jobs, where fio's random
/// state is zeros: psync at depth 1, libaio at depth 4 with its last four writes newest first,
/// two clones each with its own region; random jobs, holding fio's Tausworthe state as re-seeded
/// for the read-back, or as the writes left it with `do_verify=0`), and none with
/// `verify_state_save=0`.
#[test]
fn the_verify_state_file_is_fios_byte_for_byte() {
    if !fio_present() {
        return;
    }
    let cases: [(&str, &[&str], &[&str]); 5] = [
        ("write", &["--ioengine=psync"], &["local-v-0-verify.state"]),
        (
            "write",
            &["--ioengine=libaio", "--iodepth=4"],
            &["local-v-0-verify.state"],
        ),
        (
            "write",
            // Each clone its own bytes: clones writing the same ones tear each other's blocks
            // as their timing decides, and fio's read-back then fails (CI saw it once).
            &["--numjobs=2", "--size=64k", "--offset_increment=64k"],
            &["local-v-0-verify.state", "local-v-1-verify.state"],
        ),
        (
            "randwrite",
            &["--ioengine=psync"],
            &["local-v-0-verify.state"],
        ),
        (
            "randwrite",
            &["--do_verify=0", "--randseed=9"],
            &["local-v-0-verify.state"],
        ),
    ];
    for (rw, extra, files) in cases {
        let flags = job_flags(rw, "crc32c", extra);
        let mut states = Vec::new();
        for tool in ["fio", "storlab"] {
            let dir = tempfile::tempdir().unwrap();
            let out = if tool == "fio" {
                fio_in(dir.path(), &flags)
            } else {
                storlab_in(dir.path(), &flags)
            };
            assert!(out.status.success(), "{tool} {extra:?}: {}", stderr(&out));
            let found: Vec<Vec<u8>> = files
                .iter()
                .map(|name| {
                    std::fs::read(dir.path().join(name))
                        .unwrap_or_else(|e| panic!("{tool} {extra:?}: {name}: {e}"))
                })
                .collect();
            states.push(found);
        }
        assert_eq!(states[0], states[1], "{extra:?}");
    }
    {
        let flags = job_flags("write", "crc32c", &["--verify_state_save=0"]);
        let dir = tempfile::tempdir().unwrap();
        let out = storlab_in(dir.path(), &flags);
        assert!(out.status.success(), "{}", stderr(&out));
        let states: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with("verify.state"))
            .collect();
        assert!(states.is_empty(), "{flags:?}");
    }
}

/// fio's `verify_state_load` both ways: a writing run cut short by `number_ios` (10 of the 64
/// blocks) leaves its state file, written by fio or by storlab; a `verify_only=1
/// verify_state_load=1` run of the whole job by either tool then checks exactly the 10 blocks
/// that were written (at depth 1 and at libaio depth 4) and passes, where without the state
/// it would fail at the first block never written, and saves the same state as the other. A
/// byte flipped inside those blocks fails both at the same offset; a missing state file is one line and exit 2 before any I/O (fio
/// fails the job).
#[test]
fn a_loaded_verify_state_stops_both_tools_at_the_same_write() {
    if !fio_present() {
        return;
    }
    let written_blocks = 10;
    let state_name = "local-v-0-verify.state";
    for extra in [
        &["--ioengine=psync"][..],
        &["--ioengine=libaio", "--iodepth=4"],
    ] {
        for writer in ["fio", "storlab"] {
            let context = format!("{writer} wrote, {extra:?}");
            let dir = tempfile::tempdir().unwrap();
            let mut write = job_flags("write", "crc32c", extra);
            write.extend([
                format!("--number_ios={written_blocks}"),
                "--do_verify=0".into(),
            ]);
            let out = if writer == "fio" {
                fio_in(dir.path(), &write)
            } else {
                storlab_in(dir.path(), &write)
            };
            assert!(out.status.success(), "{context}: {}", stderr(&out));
            let state = std::fs::read(dir.path().join(state_name)).unwrap();
            let data = std::fs::read(dir.path().join("data")).unwrap();

            let check = job_flags("write", "crc32c", extra);
            let mut check_loaded = check.clone();
            check_loaded.extend(["--verify_only=1".into(), "--verify_state_load=1".into()]);
            let mut check_all = check.clone();
            check_all.push("--verify_only=1".into());
            let mut flipped = data.clone();
            flipped[(3 * BLOCK_BYTES + 700) as usize] ^= 0x01;
            let mut saved_after = Vec::new();
            for reader in ["fio", "storlab"] {
                let context = format!("{context}, {reader} verified");
                let run = |flags: &[String], data: &[u8]| {
                    // Each reader's verify_only saves its own (complete) state: put the
                    // writing run's state and data back first.
                    std::fs::write(dir.path().join(state_name), &state).unwrap();
                    std::fs::write(dir.path().join("data"), data).unwrap();
                    if reader == "fio" {
                        fio_in(dir.path(), flags)
                    } else {
                        storlab_in(dir.path(), flags)
                    }
                };
                let out = run(&check_loaded, &data);
                assert!(out.status.success(), "{context}: {}", stderr(&out));
                assert_eq!(counts(&out).0, 0, "{context}");
                assert_eq!(counts(&out).1, written_blocks, "{context}: blocks read");
                saved_after.push(std::fs::read(dir.path().join(state_name)).unwrap());

                let out = run(&check_all, &data);
                assert!(!out.status.success(), "{context}: whole verify passed");
                let text = format!("{}{}", stderr(&out), String::from_utf8_lossy(&out.stdout));
                assert!(text.contains("bad magic header"), "{context}: {text}");

                let out = run(&check_loaded, &flipped);
                assert!(!out.status.success(), "{context}: flipped byte passed");
                let text = format!("{}{}", stderr(&out), String::from_utf8_lossy(&out.stdout));
                let line = text
                    .lines()
                    .find(|l| l.contains("verify failed"))
                    .unwrap_or_else(|| panic!("{context}: no failure line in {text}"));
                assert_eq!(failed_at(line), (3 * BLOCK_BYTES, BLOCK_BYTES), "{context}");
            }
            // The verify_only run saves the whole job's state, the same bytes from both.
            assert_eq!(saved_after[0], saved_after[1], "{context}: saved state");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let mut flags = job_flags("write", "crc32c", &["--verify_only=1"]);
    flags.push("--verify_state_load=1".into());
    let out = storlab_in(dir.path(), &flags);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stderr(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.contains("verify_state_load") && text.contains(state_name),
        "{text}"
    );
    assert!(!dir.path().join("data").exists(), "a file was created");
}

/// Headers per block as fio 3.33 places them, for blocks above 4 KiB and for mixed and
/// per-direction block sizes (a header every `verify_interval`, by default each block, or the
/// smallest write size when sizes vary; a `verify_interval` fio changes is changed as fio
/// does): a sequential file written by either tool passes the other's `verify_only`, which
/// reads it in its own block sizes, the same bytes as when it checks its own file.
#[test]
fn mixed_block_sizes_carry_fios_headers_both_ways() {
    if !fio_present() {
        return;
    }
    let cases: [&[&str]; 6] = [
        // One header per 64 KiB block (storlab put one every 4 KiB, its default alignment).
        &["--bs=64k"],
        // Sizes from a range or split: the two tools draw different sizes (fio's generator is
        // not storlab's), so these keep a smallest size that each pass can end with; with
        // `bsrange=512-64k` storlab's pass can end short of the file's end, which fio's
        // `verify_only` then finds unwritten (fio's file passes storlab's).
        &["--bsrange=4k-64k"],
        &["--bssplit=4k/50:64k/30:16k/20"],
        // Reads of 4 KiB, writes of 16 KiB: one header per 16 KiB write.
        &["--bs=4k,16k"],
        // fio uses 4096 for an interval of 3000 with 4 KiB blocks.
        &["--verify_interval=3000"],
        // 8 KiB writes 2 KiB apart: storlab records 2 KiB granules, and fio's header still
        // sits at each write's start, its checksum over the four.
        &["--bs=8k", "--rw=write:2k"],
    ];
    // The job's bytes in `direction` as the fio-shaped JSON of `out` reports them.
    let io_bytes = |out: &Output, direction: &str| -> u64 {
        let text = String::from_utf8_lossy(&out.stdout);
        let doc: serde_json::Value =
            serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
        assert_eq!(doc["jobs"][0]["error"].as_u64(), Some(0), "{text}");
        doc["jobs"][0][direction]["io_bytes"].as_u64().unwrap()
    };
    let tools = ["fio", "storlab"];
    for extra in cases {
        // Each tool writes the sequential file in its own directory and checks it itself...
        let dirs = tools.map(|_| tempfile::tempdir().unwrap());
        let mut own_read = [0; 2];
        let mut check = job_flags("write", "crc32c", extra);
        check.push("--verify_only=1".into());
        for (i, writer) in tools.into_iter().enumerate() {
            let mut write = job_flags("write", "crc32c", extra);
            write.push("--do_verify=0".into());
            let run = |flags: &[String]| {
                if writer == "fio" {
                    fio_in(dirs[i].path(), flags)
                } else {
                    storlab_in(dirs[i].path(), flags)
                }
            };
            let out = run(&write);
            assert!(out.status.success(), "{writer} {extra:?}: {}", stderr(&out));
            let out = run(&check);
            assert!(out.status.success(), "{writer} {extra:?}: {}", stderr(&out));
            own_read[i] = io_bytes(&out, "read");
            // A pass ends where the smallest block no longer fits, so a size range may leave
            // less than a block unwritten.
            assert!(own_read[i] + (64 << 10) > FILE_BYTES, "{writer} {extra:?}");
        }
        // ...and the other's verify_only checks it in its own block sizes, the same bytes.
        for (i, writer) in tools.into_iter().enumerate() {
            let reader = tools[1 - i];
            let context = format!("{writer} wrote, {reader} verified {extra:?}");
            let out = if reader == "fio" {
                fio_in(dirs[i].path(), &check)
            } else {
                storlab_in(dirs[i].path(), &check)
            };
            assert!(out.status.success(), "{context}: {}", stderr(&out));
            assert_eq!(io_bytes(&out, "read"), own_read[1 - i], "{context}");
        }
    }
}

/// fio's `continue_on_error=verify`: two bad blocks are counted and the read-back goes on, in
/// both tools alike: error 84 (fio's first error), `total_err` 2, every read counted, exit 0.
#[test]
fn continue_on_error_verify_counts_bad_blocks_and_reads_on_as_fio() {
    if !fio_present() {
        return;
    }
    let (dir, write, mut data) = crc32c_file_written_by_storlab();
    for block in [3, 9] {
        data[(block * BLOCK_BYTES + 100) as usize] ^= 0xff;
    }
    std::fs::write(dir.path().join("data"), &data).unwrap();
    let mut check = write.clone();
    check.extend([
        "--verify_only=1".into(),
        "--continue_on_error=verify".into(),
    ]);
    let figures = |out: &Output| {
        let text = String::from_utf8_lossy(&out.stdout);
        let start = text.find('{').unwrap_or_else(|| panic!("no JSON: {text}"));
        let doc: serde_json::Value = serde_json::from_str(&text[start..]).unwrap();
        let job = &doc["jobs"][0];
        (
            out.status.code(),
            job["error"].as_u64(),
            job["total_err"].as_u64(),
            job["first_error"].as_u64(),
            job["read"]["total_ios"].as_u64(),
            job["read"]["io_bytes"].as_u64(),
        )
    };
    let fio = figures(&fio_in(dir.path(), &check));
    let storlab = figures(&storlab_in(dir.path(), &check));
    let reads = FILE_BYTES / BLOCK_BYTES;
    assert_eq!(
        fio,
        (
            Some(0),
            Some(84),
            Some(2),
            Some(84),
            Some(reads),
            Some(FILE_BYTES)
        ),
        "fio"
    );
    assert_eq!(
        storlab, fio,
        "storlab against fio (exit, error, total_err, first_error, reads, bytes)"
    );
}
