//! fio as the oracle for what issue 34's fuzzer found in `numjobs` clones and in exit statuses:
//! a given `randseed` seeds a job's clones (and its loops) as fio 3.33 does, a job that reads
//! and writes fails fio's check of its verify headers' seeds exactly where fio's does, and the
//! null engine without `size` is refused as fio refuses it. Each case prints the commands that
//! reproduce it.

use crate::fio_oracle::{fio_present, parse_iolog, run_storlab, scratch, MIB};
use crate::fio_oracle_replay::fio_log_sections;
use std::path::Path;
use std::process::{Command, Output};

/// The commands that run `flags` under both tools, for a failure message.
fn reproduction(flags: &[&str]) -> String {
    let flags = flags.join(" ");
    format!(
        "truncate -s 1M data && fio --name=oracle --filename=data --write_iolog=fio.log {flags}\n\
         truncate -s 1M data && storlab run --no-db --name=oracle --filename=data \
         --write_iolog=storlab.log {flags}"
    )
}

/// Runs `tool` (`fio` or storlab) on a fresh 1 MiB file in `dir` with `flags`.
fn run(tool: &str, dir: &Path, flags: &[&str]) -> Output {
    let data = dir.join(format!("{tool}.data"));
    std::fs::File::create(&data).unwrap().set_len(MIB).unwrap();
    let mut command = match tool {
        "fio" => Command::new("fio"),
        _ => {
            let mut storlab = Command::new(env!("CARGO_BIN_EXE_storlab"));
            storlab.args(["run", "--no-db"]);
            storlab
        }
    };
    command
        .current_dir(dir)
        .arg("--name=oracle")
        .arg(format!("--filename={}", data.display()))
        .arg(format!("--output={tool}.out"))
        .args(flags)
        .output()
        .unwrap()
}

/// fio's `fixup_options` turns `randrepeat` off once a job's first thread is seeded when
/// `randseed` is given; its clones, copied after, take their offset seed from `randseed`
/// (not `FIO_RANDSEED` × thread number), and no thread re-seeds at a loop. Clone N of
/// storlab's draws fio thread N's sequence, and a loop goes on in the streams.
#[test]
fn a_given_randseed_seeds_clones_and_loops_as_fio_does() {
    if !fio_present() {
        return;
    }
    let flags = [
        "--rw=randread",
        "--bsrange=2k-4k",
        "--size=64k",
        "--randseed=62390",
        "--numjobs=3",
        "--offset_increment=256k",
    ];
    let (dir, data) = scratch(MIB);
    let fio_path = dir.path().join("fio.log");
    let output = Command::new("fio")
        .arg("--name=oracle")
        .arg(format!("--filename={}", data.display()))
        .arg(format!("--write_iolog={}", fio_path.display()))
        .arg("--output=/dev/null")
        .args(flags)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    run_storlab(dir.path(), &data, &flags);
    // Each clone's log is under fio's 8 KiB log buffer, so its section comes whole; the
    // sections come in the order the clones ended, each in its own region.
    let mut fio = fio_log_sections(&fio_path);
    assert_eq!(fio.len(), 3);
    fio.sort_by_key(|log| log[0].offset_bytes / (256 << 10));
    for (clone, fio_clone) in fio.iter().enumerate() {
        let storlab = parse_iolog(&dir.path().join(format!("storlab.log.{clone}")));
        assert_eq!(
            &storlab,
            fio_clone,
            "clone {clone}:\n{}",
            reproduction(&flags)
        );
    }

    let flags = [
        "--rw=randread",
        "--bs=4k",
        "--size=64k",
        "--loops=2",
        "--norandommap",
        "--randseed=5",
    ];
    let (fio, storlab) = crate::fio_oracle::both_logs(MIB, &flags);
    assert_eq!(fio.len(), 32);
    assert_ne!(fio[..16], fio[16..], "fio's second loop repeats the first");
    assert_eq!(storlab, fio, "\n{}", reproduction(&flags));
}

/// The seeds a `bad header rand_seed` message names and the offset it fails at.
fn seed_failure(stderr: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(stderr);
    let line = text.lines().find(|l| l.contains("bad header rand_seed"))?;
    let seeds = line.split("rand_seed ").nth(1)?.split(" at ").next()?;
    let offset = line.split("offset ").nth(1)?.split(',').next()?;
    Some(format!("rand_seed {seeds} at offset {offset}"))
}

/// fio checks each verify header's seed against its verify pass's own draw when the job both
/// reads and writes: without its random map (`norandommap`, `lfsr`, sequential) the pass reads
/// back in offset order, so a job that did not write in that order fails (exit 1, error 84)
/// with the seeds fio names, and one that did, or that keeps the map, passes.
#[test]
fn a_mixed_verify_job_fails_fios_seed_check_where_fio_does() {
    if !fio_present() {
        return;
    }
    let cases: [(&[&str], bool); 4] = [
        (
            &[
                "--rw=randrw",
                "--bs=4k",
                "--size=64k",
                "--norandommap",
                "--verify=crc32c",
            ],
            true,
        ),
        (
            &[
                "--rw=randrw",
                "--size=256k",
                "--random_generator=lfsr",
                "--verify=md5",
            ],
            true,
        ),
        (
            &["--rw=randrw", "--bs=4k", "--size=64k", "--verify=crc32c"],
            false,
        ),
        (
            &["--rw=rw", "--bs=4k", "--size=64k", "--verify=crc32c"],
            false,
        ),
    ];
    for (flags, fails) in cases {
        let dir = tempfile::tempdir().unwrap();
        let fio = run("fio", dir.path(), flags);
        let storlab = run("storlab", dir.path(), flags);
        let context = format!("fio {fio:?}\nstorlab {storlab:?}\n{}", reproduction(flags));
        assert_eq!(fio.status.code(), Some(i32::from(fails)), "{context}");
        assert_eq!(storlab.status.code(), fio.status.code(), "{context}");
        let (fio_failure, storlab_failure) =
            (seed_failure(&fio.stderr), seed_failure(&storlab.stderr));
        assert_eq!(fio_failure.is_some(), fails, "{context}");
        assert_eq!(storlab_failure, fio_failure, "{context}");
    }
}

/// fio's null engine opens no file, so without `size` fio fails the job ("you need to specify
/// size=", exit 1) whatever else bounds it; storlab refuses it in one line naming `size`.
#[test]
fn the_null_engine_without_size_is_refused_as_fio_refuses_it() {
    if !fio_present() {
        return;
    }
    for flags in [
        &["--ioengine=null", "--rw=read", "--io_size=64k"][..],
        &["--ioengine=null", "--rw=read", "--number_ios=10"],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let fio = run("fio", dir.path(), flags);
        let storlab = run("storlab", dir.path(), flags);
        let said = String::from_utf8_lossy(&storlab.stderr);
        let context = format!("fio {fio:?}\nstorlab {said}\n{}", reproduction(flags));
        assert_eq!(fio.status.code(), Some(1), "{context}");
        assert!(String::from_utf8_lossy(&fio.stderr).contains("you need to specify size="));
        assert_eq!(storlab.status.code(), Some(2), "{context}");
        assert_eq!(said.lines().count(), 1, "{context}");
        assert!(said.contains("size"), "{context}");
    }
}
