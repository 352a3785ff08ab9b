//! fio as the oracle for issue 34's multi-file keys and holes: `nrfiles` with `filename` given
//! (fio 3.33 caps it at the files named, so the job keeps its one file, whole) and `rw=MODE:N`
//! holes after I/Os of several sizes (`bs=R,W`, `bsrange`, `bssplit`), each compared with fio
//! on the iolog, the JSON totals, the files left in the directory and the sectors written.
//! Hand-picked cases and cases drawn from a fixed seed; each failure prints its reproduction.

use crate::fio_oracle::{actions, fio_present, moved, MIB};
use std::path::Path;
use std::process::Command;

/// What one tool did with a job in its own directory.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// Every read, write and sync of every log, sorted when the job has clones (their logs
    /// interleave in fio's one file and are one file per clone in storlab's).
    actions: Vec<String>,
    /// Each job's (clone's) I/Os and bytes per direction, sorted.
    totals: Vec<[u64; 4]>,
    /// The directory's file names besides the logs and the report.
    files: Vec<String>,
    data: Vec<u8>,
}

/// The commands that run `flags` under both tools, for a failure message.
fn reproduction(flags: &[&str]) -> String {
    let flags = flags.join(" ");
    format!(
        "truncate -s 1M data && fio --name=oracle --filename=data --write_iolog=io.log \
         --output-format=json {flags}\n\
         truncate -s 1M data && storlab run --no-db --name=oracle --filename=data \
         --write_iolog=io.log --output-format=fio-json {flags}"
    )
}

/// Runs `tool` (`fio` or `storlab`) on a fresh 1 MiB `data` in a new directory under `root`.
fn run(tool: &str, root: &Path, flags: &[&str]) -> Outcome {
    let dir = root.join(tool);
    std::fs::create_dir(&dir).unwrap();
    std::fs::File::create(dir.join("data"))
        .unwrap()
        .set_len(MIB)
        .unwrap();
    let (mut command, format) = match tool {
        "fio" => (Command::new("fio"), "json"),
        _ => {
            let mut storlab = Command::new(env!("CARGO_BIN_EXE_storlab"));
            storlab.args(["run", "--no-db"]);
            (storlab, "fio-json")
        }
    };
    let output = command
        .current_dir(&dir)
        .args(["--name=oracle", "--filename=data", "--write_iolog=io.log"])
        .arg(format!("--output-format={format}"))
        .arg("--output=report.json")
        .args(flags)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{tool} failed: {output:?}\n{}",
        reproduction(flags)
    );
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut actions_done = Vec::new();
    for log in names.iter().filter(|name| name.starts_with("io.log")) {
        // fio's clones append to one log, each with its own header line.
        let logged = actions(&dir.join(log));
        actions_done.extend(logged.into_iter().filter(|a| !a.ends_with(" iolog")));
    }
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let mut totals: Vec<[u64; 4]> = report["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(moved)
        .collect();
    totals.sort();
    let clones = totals.len() > 1;
    if clones {
        actions_done.sort();
    }
    Outcome {
        actions: actions_done,
        totals,
        files: names
            .into_iter()
            .filter(|name| !name.starts_with("io.log") && name != "report.json")
            .collect(),
        data: std::fs::read(dir.join("data")).unwrap(),
    }
}

/// Both tools run `flags`; everything they did must agree.
fn assert_same_as_fio(flags: &[&str]) {
    let root = tempfile::tempdir().unwrap();
    let fio = run("fio", root.path(), flags);
    let storlab = run("storlab", root.path(), flags);
    let again = reproduction(flags);
    assert!(!fio.actions.is_empty(), "fio did no I/O:\n{again}");
    assert_eq!(storlab.actions, fio.actions, "iolog:\n{again}");
    assert_eq!(storlab.totals, fio.totals, "JSON totals:\n{again}");
    assert_eq!(storlab.files, fio.files, "files made:\n{again}");
    // fio stamps the time into every sector of its default buffers (scramble_buffers), so
    // the bytes differ run to run; the sectors written (no longer zero) must not.
    assert_eq!(storlab.data.len(), fio.data.len(), "file length:\n{again}");
    let first_sector_apart = written_sectors(&fio.data)
        .zip(written_sectors(&storlab.data))
        .position(|(fio, storlab)| fio != storlab);
    assert_eq!(first_sector_apart, None, "sectors written:\n{again}");
}

/// Whether each 512-byte sector of `data` holds anything but zeros.
fn written_sectors(data: &[u8]) -> impl Iterator<Item = bool> + '_ {
    data.chunks(512)
        .map(|sector| sector.iter().any(|byte| *byte != 0))
}

/// `nrfiles` with `filename` given: fio 3.33 caps it at the files named (init.c,
/// `fixup_options`), so the job does its I/O on `data` alone, over the whole `size` (not
/// `size / nrfiles`), and makes no `oracle.0.1`; with clones, `offset_increment`, split
/// sizes and the engines storlab runs.
#[test]
fn nrfiles_with_a_filename_keeps_fios_one_file() {
    if !fio_present() {
        return;
    }
    let cases: [&[&str]; 6] = [
        &["--rw=write", "--bs=16k", "--size=64k", "--nrfiles=2"],
        &[
            "--rw=randread",
            "--size=128k",
            "--nrfiles=3",
            "--offset=64k",
        ],
        &[
            "--rw=randwrite",
            "--bssplit=4k/50:16k/50",
            "--size=256k",
            "--nrfiles=2",
            "--ioengine=libaio",
            "--iodepth=4",
        ],
        &[
            "--rw=rw",
            "--bs=8k",
            "--size=128k",
            "--nrfiles=2",
            "--numjobs=2",
            "--offset_increment=256k",
            "--ioengine=sync",
        ],
        &[
            "--rw=randrw",
            "--bsrange=2k-16k",
            "--size=192k",
            "--nr_files=4",
            "--numjobs=2",
        ],
        &[
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--nrfiles=2",
            "--ioengine=io_uring",
            "--iodepth=8",
        ],
    ];
    for flags in cases {
        assert_same_as_fio(flags);
    }
}

/// `filesize` is the file's size and the job's region runs from `offset` to it
/// (filesetup.c, `setup_files`: `f->io_size = file_size_low - file_offset`); a smaller `size`
/// bounds the bytes while random offsets cover the whole file, a larger one is cut to it.
#[test]
fn filesize_bounds_the_region_and_size_the_bytes_as_fio() {
    if !fio_present() {
        return;
    }
    let cases: [&[&str]; 5] = [
        &[
            "--rw=randread",
            "--size=128k",
            "--nrfiles=3",
            "--filesize=256k",
        ],
        &["--rw=write", "--bs=64k", "--filesize=256k", "--offset=64k"],
        &[
            "--rw=randwrite",
            "--bs=16k",
            "--filesize=64k",
            "--size=128k",
        ],
        &[
            "--rw=randrw",
            "--bsrange=4k-16k",
            "--filesize=512k",
            "--offset=128k",
            "--size=96k",
            "--ioengine=libaio",
            "--iodepth=4",
        ],
        &[
            "--rw=write:8k",
            "--bs=8k,4k",
            "--filesize=384k",
            "--size=64k",
        ],
    ];
    for flags in cases {
        assert_same_as_fio(flags);
    }
}

/// `nrfiles` above one without `filename`: fio makes several files and spreads the I/O over
/// them, which storlab does not; refused in one line naming the key (exit 2), nothing made.
#[test]
fn nrfiles_without_a_filename_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_storlab"))
        .current_dir(dir.path())
        .args([
            "run",
            "--no-db",
            "--name=oracle",
            "--rw=write",
            "--size=64k",
        ])
        .arg("--nrfiles=2")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--nrfiles=2") && stderr.contains("filename="),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// `rw=MODE:N` with several block sizes: fio adds the hole after every I/O whatever its size
/// (io_u.c, `get_next_seq_offset`), each direction from where its own last I/O ended, and
/// wraps to the region's start past the file's end; the two corpus jobs first.
#[test]
fn holes_after_ios_of_several_sizes_are_fios() {
    if !fio_present() {
        return;
    }
    let cases: [&[&str]; 5] = [
        &["--rw=readwrite:4k", "--bs=16k,8k", "--size=256k"],
        &["--rw=rw:8k", "--bsrange=1k-64k"],
        &["--rw=write:12k", "--bssplit=4k/50:16k/50", "--size=512k"],
        &[
            "--rw=read:4k",
            "--bsrange=4k-32k",
            "--offset=64k",
            "--size=256k",
            "--loops=2",
        ],
        &[
            "--rw=rw:-8k",
            "--bsrange=4k-16k",
            "--size=256k",
            "--number_ios=40",
        ],
    ];
    for flags in cases {
        assert_same_as_fio(flags);
    }
}

/// A small xorshift generator: the drawn cases are the same on every run.
struct Draws(u64);

impl Draws {
    fn pick<'a>(&mut self, choices: &[&'a str]) -> &'a str {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        choices[(self.0 % choices.len() as u64) as usize]
    }
}

/// Holes and `nrfiles` drawn at random over the sizes, modes and engines fio's users combine:
/// every draw agrees with fio.
#[test]
fn drawn_hole_and_nrfiles_jobs_agree_with_fio() {
    if !fio_present() {
        return;
    }
    let mut draws = Draws(0x5eed_f11e);
    for _ in 0..12 {
        let mode = draws.pick(&["read", "write", "rw", "readwrite"]);
        let hole = draws.pick(&["512", "4k", "8k", "12k", "-4k"]);
        let flags = [
            format!("--rw={mode}:{hole}"),
            draws
                .pick(&[
                    "--bs=8k,4k",
                    "--bs=4k,16k",
                    "--bsrange=1k-16k",
                    "--bsrange=4k-64k",
                    "--bssplit=4k/70:32k/30",
                ])
                .to_owned(),
            draws
                .pick(&["--size=128k", "--size=512k", "--offset=128k", "--size=1m"])
                .to_owned(),
            draws
                .pick(&["--nrfiles=1", "--nrfiles=2", "--nrfiles=3"])
                .to_owned(),
            draws
                .pick(&["--ioengine=psync", "--ioengine=libaio", "--ioengine=sync"])
                .to_owned(),
            draws
                .pick(&["--loops=1", "--loops=2", "--number_ios=25"])
                .to_owned(),
        ];
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        assert_same_as_fio(&flags);
    }
}

/// `file_service_type` on the job's one file: a uniform choice (random, roundrobin,
/// sequential) changes nothing, and a non-uniform one (zipf, pareto, normal) makes fio start
/// the file over where no I/O finds room (io_u.c `set_io_u_file`; `get_next_rand_block` for a
/// full random map, its direction kept), so a job with holes past the file's end or an
/// `io_size` beyond its region goes on in the same loop.
#[test]
fn file_service_types_on_one_file_are_fios() {
    if !fio_present() {
        return;
    }
    let cases: [&[&str]; 5] = [
        &["--rw=write:8k", "--file_service_type=normal:20:0.5"],
        &["--rw=write:8k", "--file_service_type=random"],
        &[
            "--rw=randrw",
            "--bsrange=512-8k",
            "--offset=128k",
            "--size=256k",
            "--io_size=512k",
            "--loops=2",
            "--file_service_type=zipf:1.2",
        ],
        &[
            "--rw=readwrite",
            "--bs=8k",
            "--size=100k",
            "--io_size=400k",
            "--file_service_type=gauss:3",
        ],
        &[
            "--rw=randwrite",
            "--bssplit=4k/50:16k/50",
            "--size=128k",
            "--io_size=1m",
            "--ioengine=libaio",
            "--iodepth=4",
            "--file_service_type=pareto:0.3",
        ],
    ];
    for flags in cases {
        assert_same_as_fio(flags);
    }
}

/// Where that reset comes with a queueing engine's I/Os in flight, fio 3.33 closes the file
/// they hold and waits for a file forever (`--rw=write:8k --ioengine=posixaio --iodepth=2
/// --file_service_type=zipf:1.2` hung until fio's own 300 s watchdog; null at depth 4 and
/// libaio at 4 too): storlab stops the job there in one line, the results before it kept.
#[test]
fn a_file_service_reset_fio_never_ends_stops_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data"), vec![0u8; 1 << 20]).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_storlab"))
        .current_dir(dir.path())
        .args([
            "run",
            "--no-db",
            "--name=j",
            "--filename=data",
            "--rw=write:8k",
        ])
        .args([
            "--ioengine=posixaio",
            "--iodepth=2",
            "--file_service_type=zipf:1.2",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains("fio 3.33 never ends this job")
            && last.contains("storlab stops the job there"),
        "{stderr}"
    );
}
