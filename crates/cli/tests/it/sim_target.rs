//! Runs the `storlab` binary on simulated targets as a user would: the stacks it lists, pcap
//! capture, determinism, job sizes and shares on a drive without a file, rates in virtual
//! time, `--profiles` mistakes, and `--faults` parsed, refused, injected and reported.

use crate::cli::leftovers;
use crate::common;
use common::{run_in, stderr, storlab, tshark_fields};

use std::path::Path;
use std::process::{Command, Output};

/// `storlab run ARGS --no-db --output-format=json` in `dir`, which must succeed: its first job.
fn first_job(dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut full = vec!["run"];
    full.extend_from_slice(args);
    full.extend(["--no-db", "--output-format=json"]);
    let out = run_in(dir, &full);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["jobs"][0].clone()
}
#[test]
fn stacks_lists_the_generic_stacks() {
    let out = storlab().arg("stacks").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    for stack in [
        "usb2-bot-hdd",
        "usb3-bot-ssd",
        "usb3-uas-ssd",
        "sata-ahci-ssd",
        "sata-ide-ssd",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(stack)),
            "{stack} missing from:\n{text}"
        );
    }
}

#[test]
fn simulated_run_records_a_pcap_that_decode_reads() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--rw=randrw",
            "--bs=4k",
            "--iodepth=8",
            "--size=64m",
            "--number_ios=200",
            "--target",
            "sim:usb3-uas-ssd",
            "--pcap",
            "s.pcap",
            "--output-format=json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["jobs"][0]["engine"], "sim");
    assert!(
        doc["jobs"][0]["sim"].is_object(),
        "per-layer simulator report present"
    );
    let decoded = run_in(dir.path(), &["decode", "s.pcap"]);
    assert!(decoded.status.success(), "{}", stderr(&decoded));
    let text = String::from_utf8_lossy(&decoded.stdout);
    assert!(
        text.contains("protocol=0x62 (UAS)"),
        "enumeration shows the UAS interface"
    );
    assert!(
        text.contains("READ") && text.contains("WRITE"),
        "commands decoded"
    );

    // A damaged capture is refused with one line, exit 2.
    let bytes = std::fs::read(dir.path().join("s.pcap")).unwrap();
    std::fs::write(dir.path().join("cut.pcap"), &bytes[..bytes.len() / 2 + 3]).unwrap();
    let damaged = run_in(dir.path(), &["decode", "cut.pcap"]);
    assert_eq!(damaged.status.code(), Some(2), "{}", stderr(&damaged));
    assert_eq!(stderr(&damaged).trim_end().lines().count(), 1);
}

#[test]
fn same_simulated_job_and_seed_give_identical_results() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "--rw=randread",
        "--bs=4k",
        "--iodepth=32",
        "--size=256m",
        "--number_ios=3000",
        "--target",
        "sim:usb3-bot-ssd",
        "--output-format=json",
    ];
    let strip = |out: Output| {
        let mut doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        // Wall-clock facts differ between runs by nature; everything simulated must not.
        doc["started_unix_ms"] = serde_json::Value::Null;
        doc["jobs"][0]["cpu"] = serde_json::Value::Null;
        doc
    };
    let a = strip(run_in(dir.path(), &args));
    let b = strip(run_in(dir.path(), &args));
    assert_eq!(a, b);
}

#[test]
fn unknown_stack_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &["run", "--size=1m", "--target", "sim:no-such-stack"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no-such-stack"), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim_end().lines().count(),
        1,
        "{}",
        stderr(&out)
    );
}

/// A profile in `--profiles DIR` is user input: an impossible value in an override of a shipped
/// part is one line naming the file and the key, exit 2, nothing on stdout, for `run` and for
/// `validate` alike (before the limits, a huge `write_buffer_pages` aborted on a 32 GiB
/// allocation, and a wrongly typed drive key was reported without its name).
#[test]
fn a_bad_profile_override_is_one_line_naming_file_and_key() {
    let shipped = |name: &str| {
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../profiles/drives/{name}")),
        )
        .unwrap()
    };
    let edit = |text: &str, line: &str, new: &str| {
        assert!(text.lines().any(|l| l == line), "{line} not in the profile");
        text.replace(&format!("\n{line}\n"), &format!("\n{new}\n"))
    };
    let ssd = shipped("ssd-sata2.toml");
    let hdd = shipped("hdd-7200.toml");
    let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/validate-small.toml");
    let run_ssd = [
        "run",
        "--target=sim:sata-ahci-ssd",
        "--rw=read",
        "--bs=4k",
        "--size=1m",
    ];
    let run_hdd = [
        "run",
        "--target=sim:sata-ahci-hdd",
        "--rw=read",
        "--bs=4k",
        "--size=1m",
    ];
    let validate = ["validate", reference.to_str().unwrap()];
    let stacks = ["stacks"];
    let cases: [(&str, String, &str, &[&str]); 5] = [
        (
            "ssd-sata2.toml",
            edit(&ssd, "channel_rate_mb_s = 40", "channel_rate_mb_s = 0"),
            "channel_rate_mb_s",
            &run_ssd,
        ),
        (
            "hdd-7200.toml",
            edit(&hdd, "rpm = 7200", "rpm = 0"),
            "rpm",
            &run_hdd,
        ),
        (
            "hdd-7200.toml",
            edit(&hdd, "rpm = 7200", "rpm = -1"),
            "rpm",
            &run_hdd,
        ),
        (
            "ssd-sata2.toml",
            edit(
                &ssd,
                "write_buffer_pages = 256",
                "write_buffer_pages = 4294967295",
            ),
            "write_buffer_pages",
            &validate,
        ),
        (
            "hdd-7200.toml",
            edit(&hdd, "rpm = 7200", "rpm = 0"),
            "rpm",
            &stacks,
        ),
    ];
    for (file, text, key, command) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("drives")).unwrap();
        let path = dir.path().join("drives").join(file);
        std::fs::write(&path, text).unwrap();
        let mut args = command.to_vec();
        let profiles = dir.path().to_str().unwrap();
        args.extend(["--profiles", profiles]);
        let out = run_in(dir.path(), &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{key} ({}): {err}", args[0]);
        assert!(out.stdout.is_empty(), "{key}: printed to stdout");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        let named = format!("{}: {key}: ", path.display());
        assert!(err.contains(&named), "'{named}' in: {err}");
    }
}

/// A target first opened for a read job must be reopened for writing when a later job writes
/// (regression: the provider once reused the read-only opening and the writes failed).
#[test]
fn a_read_job_then_a_write_job_on_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let job = "[global]\nfilename=data\nsize=4m\nioengine=psync\nnumber_ios=50\n[r]\nrw=randread\n[w]\nrw=randwrite\nstonewall\n";
    std::fs::write(dir.path().join("rw.fio"), job).unwrap();
    let out = run_in(dir.path(), &["run", "rw.fio", "--output-format=json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["jobs"][1]["write"]["ios"], 50);
}

/// The drive's capacity as the simulated stack's profile in the report gives it.
fn simulated_capacity(job: &serde_json::Value) -> u64 {
    job["sim"]["stack_profile"]["drive"]["user_capacity_bytes"]
        .as_u64()
        .expect("the report carries the stack profile")
}

/// A simulated drive has a size, so a job on `--target sim:STACK` needs none: without one it
/// covers the whole drive (minus its offset), as fio does on a block device. Regression: the job
/// was once validated as if it ran on a temporary file, before `--target` replaced its target.
#[test]
fn a_simulated_target_needs_no_size_and_covers_the_whole_drive() {
    let dir = tempfile::tempdir().unwrap();
    let plain = run_in(
        dir.path(),
        &[
            "run",
            "--target",
            "sim:usb3-uas-ssd",
            "--rw=randread",
            "--bs=4k",
            "--runtime=1",
            "--no-db",
        ],
    );
    assert!(plain.status.success(), "{}", stderr(&plain));
    assert!(String::from_utf8_lossy(&plain.stdout).contains("randread"));

    let json = |extra: &[&str]| {
        let base = [
            "--target=sim:usb3-uas-ssd",
            "--rw=randread",
            "--bs=4k",
            "--runtime=1",
        ];
        first_job(dir.path(), &[&base[..], extra].concat())
    };
    let job = json(&[]);
    assert_eq!(job["engine"], "sim");
    assert_eq!(job["job"]["size_bytes"], serde_json::Value::Null);
    let capacity = simulated_capacity(&job);
    assert!(capacity > 1 << 30, "a real drive's capacity: {capacity}");
    assert_eq!(job["target"]["size_bytes"], capacity, "the whole drive");
    assert!(job["read"]["ios"].as_u64().unwrap() > 0);

    let offset = json(&["--offset=1g"]);
    assert_eq!(
        offset["target"]["size_bytes"],
        capacity - (1 << 30),
        "from the offset to the end"
    );
    assert!(
        leftovers(dir.path()).is_empty(),
        "no file made for a simulated drive"
    );
}

/// The same for a fio job file without `size`, run with `--target sim:STACK`: every job covers
/// the drive, whatever `filename` the file names.
#[test]
fn a_job_file_without_size_runs_on_a_simulated_target() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("nosize.fio"),
        "[global]\nbs=4k\nruntime=1\n[seq]\nrw=read\n[rand]\nrw=randread\nfilename=data\nstonewall\n",
    )
    .unwrap();
    let out = run_in(
        dir.path(),
        &[
            "run",
            "nosize.fio",
            "--target",
            "sim:usb3-uas-ssd",
            "--db",
            "runs.sqlite",
            "--output-format=json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    for job in jobs {
        assert_eq!(job["engine"], "sim", "{}", job["name"]);
        assert_eq!(job["target"]["size_bytes"], simulated_capacity(job));
        assert!(job["read"]["ios"].as_u64().unwrap() > 0, "{}", job["name"]);
    }
    assert!(
        !dir.path().join("data").exists(),
        "--target replaced filename=data"
    );
    let history = run_in(dir.path(), &["history", "--db", "runs.sqlite"]);
    assert!(history.status.success(), "{}", stderr(&history));
    assert!(String::from_utf8_lossy(&history.stdout).contains("sim:usb3-uas-ssd"));
}

/// A file target without a size is sized by the file, as in fio; a file that does not exist yet
/// has no size to take, which is one line naming `size`, exit 2, and no file made.
#[test]
fn a_file_target_without_size_takes_the_files_size_or_asks_for_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data"), vec![7u8; 1 << 20]).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--target=data",
            "--rw=read",
            "--bs=64k",
            "--no-db",
            "--output-format=json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["jobs"][0]["target"]["size_bytes"], 1 << 20);
    assert_eq!(doc["jobs"][0]["read"]["bytes"], 1 << 20);

    std::fs::write(dir.path().join("nosize.fio"), "[j]\nrw=read\nruntime=1\n").unwrap();
    let cases: &[&[&str]] = &[
        &[
            "run",
            "--target=missing",
            "--rw=read",
            "--runtime=1",
            "--no-db",
        ],
        &["run", "nosize.fio", "--target", "missing", "--no-db"],
        &[
            "run",
            "--filename=missing",
            "--rw=read",
            "--runtime=1",
            "--no-db",
        ],
        // No target at all: a temporary file, which needs a size too.
        &["run", "--rw=read", "--runtime=1", "--no-db"],
    ];
    for args in cases {
        let out = run_in(dir.path(), args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("size"), "{args:?} should name size: {err}");
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    }
    assert!(!dir.path().join("missing").exists(), "no file laid out");
    assert!(leftovers(dir.path()).is_empty(), "no temporary file left");
}

/// fio's `N%` for `offset` and `size`: shares of the target's size, resolved when it is opened,
/// so one job covers "the last tenth" of a simulated drive or of a file alike; a share of a file
/// that does not exist yet is one line naming `size`.
#[test]
fn offsets_and_sizes_in_percent_are_shares_of_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let json = |target: &str, extra: &[&str]| {
        let base = ["--target", target, "--rw=read", "--bs=64k"];
        first_job(dir.path(), &[&base[..], extra].concat())
    };
    let tenth = ["--offset=90%", "--size=10%", "--number_ios=16"];
    let sim = json("sim:usb3-uas-ssd", &tenth);
    let capacity = simulated_capacity(&sim);
    let region = sim["target"]["size_bytes"].as_u64().unwrap();
    // The start is rounded up to the smallest block (64 KiB), as fio's `get_start_offset`.
    assert!(
        region <= capacity / 10 && capacity / 10 - region < 2 * 65536,
        "a tenth of {capacity}: {region}"
    );
    assert_eq!(sim["job"]["target_shares"]["offset_ppm"], 900_000);

    std::fs::write(dir.path().join("data"), vec![7u8; 4 << 20]).unwrap();
    let file = json("data", &["--offset=75%", "--size=100%"]);
    assert_eq!(
        file["read"]["bytes"],
        1 << 20,
        "the last quarter: a share stops at the end, as in fio"
    );

    let out = run_in(
        dir.path(),
        &[
            "run",
            "--target=missing",
            "--rw=read",
            "--size=50%",
            "--no-db",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("size in bytes"), "{err}");
    assert!(!dir.path().join("missing").exists(), "no file laid out");
}

/// fio's `io_size` and `loops` bound the bytes a job moves: more than its region goes round it,
/// and loops multiply; a verify pass still reads the region once.
#[test]
fn io_size_and_loops_bound_the_bytes_moved() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data"), vec![0u8; 1 << 20]).unwrap();
    let bytes = |extra: &[&str]| {
        let job = first_job(
            dir.path(),
            &[&["--target=data", "--bs=64k"][..], extra].concat(),
        );
        (
            job["read"]["bytes"].as_u64().unwrap_or(0),
            job["write"]["bytes"].as_u64().unwrap_or(0),
        )
    };
    assert_eq!(bytes(&["--rw=read", "--loops=3"]), (3 << 20, 0));
    assert_eq!(
        bytes(&["--rw=randread", "--io_size=2560k"]),
        (2560 << 10, 0)
    );
    assert_eq!(
        bytes(&["--rw=read", "--io_size=512k", "--loops=2"]),
        (1 << 20, 0)
    );
    let (_, written) = bytes(&["--rw=randwrite", "--loops=2", "--verify=crc32c"]);
    assert_eq!(written, 2 << 20);
}

/// fio's `rate` caps bandwidth: on a simulated drive (virtual time, so the figure is exact) a
/// queue of 4 KiB reads that would run at over 100 MB/s moves 20 MiB per second.
#[test]
fn rate_caps_the_bandwidth_in_bytes_per_second() {
    let dir = tempfile::tempdir().unwrap();
    let job = first_job(
        dir.path(),
        &[
            "--target=sim:usb3-uas-ssd",
            "--rw=randread",
            "--bs=4k",
            "--iodepth=8",
            "--rate=20m",
            "--runtime=1",
            "--time_based",
        ],
    );
    let rate = job["read"]["bw_bytes_per_s"].as_f64().unwrap();
    let wanted = 20.0 * 1024.0 * 1024.0;
    assert!((rate - wanted).abs() / wanted < 0.01, "{rate} B/s");
}

/// In a mixed job each direction keeps its own rate, as fio's: a write held back by its ceiling
/// lets reads go (simulated drive, virtual time, so the rates are exact).
#[test]
fn each_direction_of_a_mixed_job_keeps_its_own_rate() {
    let dir = tempfile::tempdir().unwrap();
    let iops = |rates: &str| {
        let job = first_job(
            dir.path(),
            &[
                "--target=sim:usb3-uas-ssd",
                "--rw=randrw",
                "--bs=4k",
                "--iodepth=4",
                rates,
                "--runtime=1",
                "--time_based",
            ],
        );
        (
            job["read"]["iops"].as_f64().unwrap().round(),
            job["write"]["iops"].as_f64().unwrap().round(),
        )
    };
    assert_eq!(iops("--rate_iops=2000,1000"), (2000.0, 1000.0));
    let (reads, writes) = iops("--rate_iops=,1000");
    assert_eq!(writes, 1000.0);
    assert!(
        reads > 10_000.0,
        "reads are not held behind the writes: {reads}"
    );
}

/// 4 KiB blocks of `path` that hold anything but zeros.
fn written_blocks(path: &Path) -> usize {
    std::fs::read(path)
        .unwrap()
        .chunks(4096)
        .filter(|block| block.iter().any(|&b| b != 0))
        .count()
}

/// A size-bounded random write job writes every block of its region once, as fio's random map
/// makes it (so `rw=randwrite` over a drive really fills it); `--norandommap` draws with
/// repeats and leaves about a third of the blocks untouched. fio, when installed, is the
/// reference for the first.
#[test]
fn random_writes_cover_every_block_once_unless_norandommap() {
    let dir = tempfile::tempdir().unwrap();
    let blocks = 256;
    let run = |name: &str, extra: &[&str]| {
        std::fs::write(dir.path().join(name), vec![0u8; blocks * 4096]).unwrap();
        let base = ["--target", name, "--rw=randwrite", "--bs=4k"];
        let job = first_job(dir.path(), &[&base[..], extra].concat());
        assert_eq!(job["write"]["ios"], blocks);
        written_blocks(&dir.path().join(name))
    };
    assert_eq!(run("mapped", &[]), blocks);
    let repeats = run("unmapped", &["--norandommap"]);
    assert!((140..=190).contains(&repeats), "{repeats} of {blocks}");

    // fio on a zeroed file of the job's size (so it writes into it rather than laying it out
    // first): every block with its map, the same share as storlab's without.
    let fio = |name: &str, extra: &[&str]| {
        std::fs::write(dir.path().join(name), vec![0u8; blocks * 4096]).unwrap();
        let size = format!("--size={}", blocks * 4096);
        let mut args = vec![
            "--name=reference",
            "--rw=randwrite",
            "--bs=4k",
            "--ioengine=psync",
            size.as_str(),
        ];
        let filename = format!("--filename={name}");
        args.push(&filename);
        args.extend_from_slice(extra);
        let out = Command::new("fio")
            .current_dir(dir.path())
            .args(&args)
            .output();
        match out {
            Ok(out) if out.status.success() => Some(written_blocks(&dir.path().join(name))),
            _ => {
                assert!(
                    std::env::var_os("CI").is_none(),
                    "fio is required in CI as the reference"
                );
                None
            }
        }
    };
    if let Some(mapped) = fio("fio-mapped", &[]) {
        assert_eq!(mapped, blocks, "fio's random map");
        let unmapped = fio("fio-unmapped", &["--norandommap"]).unwrap();
        assert!(
            (140..=190).contains(&unmapped),
            "fio: {unmapped} of {blocks}"
        );
    }
}

/// `--faults`: a bad spec is one line naming the item (exit 2); a plan for a fault the stack
/// cannot have is refused (exit 2); a media error fails the job with fio's one-line I/O error
/// (exit 1); recovered faults show in the simulator's report.
#[test]
fn faults_are_parsed_refused_injected_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let job = [
        "run",
        "--rw=randread",
        "--bs=4k",
        "--size=1m",
        "--no-db",
        "--output-format=json",
    ];
    let with = |extra: &[&str]| {
        let mut args: Vec<&str> = job.to_vec();
        args.extend_from_slice(extra);
        run_in(dir.path(), &args)
    };
    let bad = with(&["--target=sim:usb3-uas-ssd", "--faults", "drop=2"]);
    assert_eq!(bad.status.code(), Some(2));
    let line = stderr(&bad);
    assert!(
        line.contains("`drop=2`") && line.contains("probability"),
        "{line}"
    );
    assert_eq!(line.trim_end().lines().count(), 1, "{line}");

    let refused = with(&["--target=sim:sata-ahci-ssd", "--faults", "usb_crc=1e-3"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("usb_crc does not happen on a sata-ncq stack"));

    let failed = with(&["--target=sim:usb3-bot-ssd", "--faults", "media_error@lba=0"]);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    assert!(
        stderr(&failed).contains("No data available"),
        "{}",
        stderr(&failed)
    );

    let recovered = with(&[
        "--target=sim:usb3-uas-ssd",
        "--faults",
        "seed=1,drop@cmd=3,usb_crc=1e-2,timeout=2s",
    ]);
    assert!(recovered.status.success(), "{}", stderr(&recovered));
    let doc: serde_json::Value = serde_json::from_slice(&recovered.stdout).unwrap();
    let faults = &doc["jobs"][0]["sim"]["faults"];
    assert_eq!(faults["uas_aborts"], 1, "{faults}");
    assert_eq!(faults["retried"], 1, "{faults}");
    assert!(faults["usb_crc_retries"].as_u64().unwrap() > 0, "{faults}");
}

/// SATA error recovery end to end: a command the drive loses on an AHCI HDD costs the
/// timeout and a COMRESET, and the job succeeds with every I/O; a media error under NCQ fails
/// the job with fio's one-line ENODATA error after the drive aborted the other queued reads.
#[test]
fn sata_faults_recover_with_a_comreset_and_report_media_errors() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--rw=randread",
            "--bs=4k",
            "--size=1m",
            "--no-db",
            "--output-format=json",
        ];
        args.extend_from_slice(extra);
        run_in(dir.path(), &args)
    };
    let recovered = run(&[
        "--target=sim:sata-ahci-hdd",
        "--iodepth=4",
        "--faults",
        "drop@cmd=3,timeout=2s",
    ]);
    assert!(recovered.status.success(), "{}", stderr(&recovered));
    let doc: serde_json::Value = serde_json::from_slice(&recovered.stdout).unwrap();
    let job = &doc["jobs"][0];
    let faults = &job["sim"]["faults"];
    assert_eq!(faults["comresets"], 1, "{faults}");
    assert_eq!(faults["retried"], 1, "{faults}");
    assert_eq!(faults["reported"], 0, "{faults}");
    assert_eq!(job["read"]["ios"], 256, "{job}");

    let failed = run(&[
        "--target=sim:sata-ahci-ssd",
        "--iodepth=8",
        "--faults",
        "media_error@cmd=5",
    ]);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    let line = stderr(&failed);
    assert!(line.contains("No data available"), "{line}");
}

/// `--faults` with `--pcap`: the capture of a real run holds the recovery as the host saw it
/// on the wire, and tshark (an independent decoder) reads the Bulk-Only Mass Storage Resets
/// and CLEAR_FEATURE(ENDPOINT_HALT)s of a BOT run and the Task Management IU (ABORT TASK) and
/// its Response IU of a UAS run; `storlab decode` shows them. (The stalled data phase and
/// REQUEST SENSE of a media error, which fails the job, are checked on the simulator's
/// capture in the sim crate's trace tests.)
#[test]
fn fault_recovery_is_in_the_pcap_and_tshark_decodes_it() {
    let dir = tempfile::tempdir().unwrap();
    let capture = |stack: &str, faults: &str| {
        let pcap = dir.path().join(format!("{stack}.pcap"));
        let out = run_in(
            dir.path(),
            &[
                "run",
                "--rw=read",
                "--bs=4k",
                "--size=64k",
                "--no-db",
                &format!("--target=sim:{stack}"),
                "--faults",
                faults,
                "--pcap",
                pcap.to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{stack}: {}", stderr(&out));
        let decoded = run_in(dir.path(), &["decode", pcap.to_str().unwrap()]);
        assert!(decoded.status.success(), "{}", stderr(&decoded));
        (pcap, String::from_utf8_lossy(&decoded.stdout).into_owned())
    };
    // BOT: a phase error at the 2nd command, a lost 4th command.
    let (bot, text) = capture(
        "usb3-bot-ssd",
        "phase_error@cmd=2,drop@cmd=4,timeout=1s,reset_delay=10ms",
    );
    for needle in [
        "Bulk-Only Mass Storage Reset",
        "CLEAR_FEATURE ENDPOINT_HALT endpoint=0x81",
        "CLEAR_FEATURE ENDPOINT_HALT endpoint=0x02",
        "status=-104 (ECONNRESET: unlinked)",
        "status=PhaseError",
    ] {
        assert!(text.contains(needle), "no {needle} in\n{text}");
    }
    // UAS: a lost 3rd command: ABORT TASK, Response IU.
    let (uas, text) = capture("usb3-uas-ssd", "drop@cmd=3,timeout=1s");
    for needle in [
        "UAS Task Management IU",
        "function=AbortTask",
        "UAS Response IU",
        "status=-2 (ENOENT: killed)",
    ] {
        assert!(text.contains(needle), "no {needle} in\n{text}");
    }

    let Some(resets) = tshark_fields(
        &bot,
        "usbms.setup.bRequest == 0xff",
        &["usb.bmRequestType", "usbms.setup.wIndex"],
    ) else {
        return;
    };
    // Two resets (the phase error's, the lost command's): class request to interface 0.
    assert_eq!(resets, vec!["0x21\t0"; 2], "{resets:?}");
    let clears = tshark_fields(
        &bot,
        "usb.setup.bRequest == 1 && usb.setup.wFeatureSelector == 0",
        &["usb.setup.wEndpoint"],
    )
    .unwrap();
    // Each reset clears bulk-in (0x81 = 129), then bulk-out (0x02).
    assert_eq!(clears, ["129", "2", "129", "2"], "{clears:?}");
    let phase = tshark_fields(&bot, "usbms.dCSWStatus == 2", &["usbms.dCSWStatus"]).unwrap();
    assert_eq!(phase.len(), 1, "one Phase Error CSW: {phase:?}");

    let tm = tshark_fields(
        &uas,
        "uasp.iu_id == 5",
        &["uasp.task_mgmt.function", "uasp.task_mgmt.managed_tag"],
    )
    .unwrap();
    // ABORT TASK (01h) for the lost command's tag (one command at a time: tag 1).
    assert_eq!(tm, ["0x01\t0x0001"], "{tm:?}");
    let response = tshark_fields(&uas, "uasp.iu_id == 4", &["uasp.response.code"]).unwrap();
    // FUNCTION COMPLETE (00h).
    assert_eq!(response, ["0x00"], "{response:?}");
}
