//! fio's `continue_on_error` on a simulated stack with injected faults: a failed I/O of a listed
//! kind with an error fio passes (EIO, EILSEQ) is counted and the job goes on, reported as fio
//! reports it (`total_err`, `first_error`, `error` the first error as fio 3.33's stat.c sets it,
//! exit 0); any other error still ends the job.

use crate::common::{run_in, stderr};

/// A 1 MiB sequential read in 4 KiB blocks on the UAS stack: 256 reads.
const READS: u64 = 256;
const BLOCK_BYTES: u64 = 4096;
/// Linux errno values the simulator reports (EIO after the host's retries, ENODATA for a
/// medium error).
const EIO: i64 = 5;
const ENODATA: i64 = 61;
/// Two commands the bridge drops; with no retries each fails its read with EIO.
const DROPS: &str = "seed=1,drop@cmd=3,drop@cmd=10,retries=0,timeout=1s";

fn run(faults: &str, extra: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run",
        "--target",
        "sim:usb3-uas-ssd",
        "--faults",
        faults,
        "--rw=read",
        "--bs=4k",
        "--size=1m",
        "--no-db",
    ];
    args.extend_from_slice(extra);
    run_in(dir.path(), &args)
}

#[test]
fn passed_errors_are_counted_as_fio_counts_them_and_the_job_goes_on() {
    let out = run(
        DROPS,
        &["--continue_on_error=read", "--output-format=fio-json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let job = &doc["jobs"][0];
    assert_eq!(
        job["error"], EIO,
        "fio's stat.c reports a continuing job's first error"
    );
    assert_eq!(job["total_err"], 2);
    assert_eq!(job["first_error"], EIO);
    // fio counts an I/O in total_ios when it is queued; the bytes are the ones that arrived.
    assert_eq!(job["read"]["total_ios"], READS);
    assert_eq!(job["read"]["io_bytes"], (READS - 2) * BLOCK_BYTES);

    let native = run(DROPS, &["--continue_on_error=io", "--output-format=json"]);
    assert_eq!(native.status.code(), Some(0), "{}", stderr(&native));
    let doc: serde_json::Value = serde_json::from_slice(&native.stdout).unwrap();
    let job = &doc["jobs"][0];
    assert_eq!(job["read"]["errors"], 2);
    assert_eq!(job["read"]["ios"], READS - 2);
    assert_eq!(job["read"]["bytes"], (READS - 2) * BLOCK_BYTES);
    assert_eq!(job["first_error"], EIO);

    // fio's terse line ends with the same two figures.
    let terse = run(
        DROPS,
        &["--continue_on_error=read", "--output-format=terse"],
    );
    assert_eq!(terse.status.code(), Some(0), "{}", stderr(&terse));
    let line = String::from_utf8_lossy(&terse.stdout);
    assert!(line.trim_end().ends_with(";2;5"), "{line}");

    let table = run(DROPS, &["--continue_on_error=1"]);
    assert_eq!(table.status.code(), Some(0), "{}", stderr(&table));
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("job: 2 failed I/Os passed (continue_on_error)")
            && text.contains("Input/output error (os error 5)"),
        "{text}"
    );
}

#[test]
fn errors_not_passed_end_the_job_as_before() {
    // Without the key, and with a kind that does not cover reads: the first failure ends it.
    for extra in [&[][..], &["--continue_on_error=write"][..]] {
        let out = run(DROPS, extra);
        assert_eq!(out.status.code(), Some(1), "{extra:?}");
        assert!(
            stderr(&out).contains("I/O error at offset 8192 (length 4096): Input/output error"),
            "{}",
            stderr(&out)
        );
        // As fio, the failed job is reported with its figures up to the failure.
        let table = String::from_utf8_lossy(&out.stdout);
        assert!(
            table.contains("job: ended by error 5: Input/output error"),
            "{table}"
        );
    }
    // A medium error is ENODATA on Linux, not in fio's default list of errors to pass (EIO,
    // EILSEQ; td_error.c): fio ends the job on it even with continue_on_error=read. LBA 100
    // (512-byte sectors) is in the read at offset 49152.
    let medium = run(
        "seed=1,media_error@lba=100",
        &["--continue_on_error=read", "--output-format=fio-json"],
    );
    assert_eq!(medium.status.code(), Some(1));
    assert!(
        stderr(&medium).contains("I/O error at offset 49152 (length 4096): No data available"),
        "{}",
        stderr(&medium)
    );
    let doc: serde_json::Value = serde_json::from_slice(&medium.stdout).unwrap();
    assert_eq!(doc["jobs"][0]["error"], ENODATA, "fio's error of the job");
    // ignore_error's read list names it (by number: fio knows no ENODATA name): passed.
    let listed = run(
        "seed=1,media_error@lba=100",
        &["--ignore_error=61", "--output-format=fio-json"],
    );
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    let doc: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(doc["jobs"][0]["total_err"], 1);
    assert_eq!(doc["jobs"][0]["first_error"], ENODATA);
}

#[test]
fn bad_or_unsupported_settings_are_refused_in_one_line() {
    for (extra, says) in [
        (
            &["--continue_on_error=sometimes"][..],
            "--continue_on_error=sometimes: 'sometimes' is not one of none",
        ),
        (
            &["--continue_on_error=read", "--ignore_error=EILSEQ"][..],
            "--ignore_error=EILSEQ: unknown error 'EILSEQ'",
        ),
    ] {
        let out = run(DROPS, extra);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let line = stderr(&out);
        assert!(line.contains(says), "{line}");
        assert_eq!(line.trim_end().lines().count(), 1, "{line}");
    }
}

/// A verify job going on past failed writes, as fio: each failed write leaves the verify log
/// (io_u.c `unlog_io_piece`), so the read-back checks every other block and passes; the two
/// failures are the job's `total_err`, and the run exits 0.
#[test]
fn a_verify_job_goes_on_past_failed_writes_and_checks_the_rest() {
    let out = run(
        DROPS,
        &[
            "--rw=write",
            "--verify=crc32c",
            "--continue_on_error=write",
            "--output-format=fio-json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let job = &doc["jobs"][0];
    assert_eq!(job["error"], EIO);
    assert_eq!(job["total_err"], 2);
    assert_eq!(job["write"]["io_bytes"], (READS - 2) * BLOCK_BYTES);
    // The read-back reads the blocks whose writes went through, and finds them good.
    assert_eq!(job["read"]["io_bytes"], (READS - 2) * BLOCK_BYTES);
}
