//! fio as the oracle (issue 24), continued from `fio_oracle.rs`: a `read_iolog` trace replayed
//! as fio replays it, verify's read-back counted as fio counts it, `percentage_random`, fio's
//! command priorities, and the random streams of each clone and job of one file.

use crate::fio_oracle::{
    actions, both_logs, fio_log, fio_present, moved, parse_iolog, run_storlab, scratch,
    storlab_log, LoggedIo, MIB,
};
use std::path::Path;
use std::process::Command;

/// Runs a tool's replay of `trace` in `dir` with fio-shaped JSON; the job's JSON and the exit.
fn replay_json(tool: &str, dir: &Path, trace: &Path, flags: &[&str]) -> serde_json::Value {
    let out = dir.join(format!("{tool}-replay.json"));
    let mut command = if tool == "fio" {
        let mut c = Command::new("fio");
        c.args(["--name=replay", "--output-format=json"]);
        c
    } else {
        let mut c = Command::new(env!("CARGO_BIN_EXE_storlab"));
        c.args(["run", "--no-db", "--output-format=fio-json"]);
        c
    };
    let output = command
        .arg(format!("--read_iolog={}", trace.display()))
        .arg(format!("--output={}", out.display()))
        .args(flags)
        .output()
        .unwrap();
    assert!(output.status.success(), "{tool} {flags:?}: {output:?}");
    let text = std::fs::read_to_string(&out).unwrap();
    // fio may put notes before its JSON.
    let json = &text[text.find('{').unwrap()..];
    serde_json::from_str::<serde_json::Value>(json).unwrap()["jobs"][0].clone()
}

/// fio's `read_iolog`: fio records a trace (mixed directions and sizes, fsyncs); storlab replays
/// it, on psync and at queue depth 8 on libaio, and its own log of the replay is the trace's
/// sequence line for line; fio's replay of the same trace moves the same I/Os and bytes.
#[test]
fn read_iolog_replays_fios_trace_as_fio_does() {
    if !fio_present() {
        return;
    }
    let (dir, data) = scratch(MIB);
    let trace = dir.path().join("trace.log");
    let recorded = Command::new("fio")
        .args(["--name=record", "--output=/dev/null", "--rw=randrw"])
        .args(["--bsrange=1k-8k", "--size=256k", "--fsync=4"])
        .arg(format!("--filename={}", data.display()))
        .arg(format!("--write_iolog={}", trace.display()))
        .output()
        .unwrap();
    assert!(recorded.status.success(), "{recorded:?}");
    let recorded_actions = actions(&trace);
    assert!(recorded_actions.iter().any(|a| a.starts_with("sync")));
    let fio = replay_json("fio", dir.path(), &trace, &["--replay_no_stall=1"]);
    for engine in [
        &["--ioengine=psync"][..],
        &["--ioengine=libaio", "--iodepth=8"],
    ] {
        let log = dir.path().join("replayed.log");
        let log_flag = format!("--write_iolog={}", log.display());
        let flags: Vec<&str> = engine
            .iter()
            .copied()
            .chain(["--replay_no_stall=1", &log_flag])
            .collect();
        let storlab = replay_json("storlab", dir.path(), &trace, &flags);
        assert_eq!(actions(&log), recorded_actions, "{engine:?}");
        assert_eq!(moved(&storlab), moved(&fio), "{engine:?}");
    }
    assert_eq!(
        std::fs::metadata(&data).unwrap().len(),
        MIB,
        "a replay grew the file"
    );
}

/// A version 3 trace's gaps are kept (here 300 ms between two reads) unless `replay_no_stall`,
/// in both tools.
#[test]
fn read_iolog_keeps_the_recorded_gaps_as_fio_does() {
    if !fio_present() {
        return;
    }
    let (dir, data) = scratch(MIB);
    let trace = dir.path().join("slow.log");
    let file = data.display();
    std::fs::write(
        &trace,
        format!(
            "fio version 3 iolog\n0 {file} add\n0 {file} open\n1000 {file} read 0 4096\n\
             301000 {file} read 4096 4096\n302000 {file} close\n"
        ),
    )
    .unwrap();
    let gap_ms = 300;
    for tool in ["fio", "storlab"] {
        let paced = replay_json(tool, dir.path(), &trace, &[]);
        let runtime_ms = |job: &serde_json::Value| job["read"]["runtime"].as_u64().unwrap();
        assert!(runtime_ms(&paced) >= gap_ms, "{tool}: {paced}");
        assert_eq!(moved(&paced), [2, 8192, 0, 0], "{tool}");
        let fast = replay_json(tool, dir.path(), &trace, &["--replay_no_stall=1"]);
        assert!(runtime_ms(&fast) < gap_ms / 2, "{tool}: {fast}");
    }
}

/// A trace replays on a simulated drive (`--target` as `replay_redirect`), its syncs as the
/// drive's cache flush, or left out with fio's `replay_skip=sync`; a bad trace line, or a line past the target's end, is refused with one line
/// naming the trace and the line, exit 2, and nothing runs.
#[test]
fn read_iolog_on_a_simulated_drive_and_bad_traces() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.log");
    std::fs::write(
        &trace,
        "fio version 2 iolog\n/x/f add\n/x/f open\n/x/f write 0 4096\n/x/f sync 0 0\n\
         /x/f read 0 4096\n/x/f read 65536 512\n/x/f close\n",
    )
    .unwrap();
    let storlab = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_storlab"))
            .args(["run", "--no-db", "--replay_no_stall=1"])
            .arg(format!("--read_iolog={}", trace.display()))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let refused = |output: &std::process::Output, wanted: &str| {
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(wanted), "{stderr}");
    };
    let sim = ["--target", "sim:usb3-uas-ssd"];
    let log = dir.path().join("sim.log");
    let log_flag = format!("--write_iolog={}", log.display());
    let output = storlab(&[sim[0], sim[1], &log_flag]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        actions(&log),
        ["write 0 4096", "sync 0 0", "read 0 4096", "read 65536 512"]
    );
    let output = storlab(&[sim[0], sim[1], "--replay_skip=sync", &log_flag]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        actions(&log),
        ["write 0 4096", "read 0 4096", "read 65536 512"]
    );
    let data = dir.path().join("small");
    std::fs::File::create(&data)
        .unwrap()
        .set_len(64 << 10)
        .unwrap();
    let redirect = format!("--replay_redirect={}", data.display());
    refused(&storlab(&[&redirect]), "trace.log:7:");
    assert_eq!(std::fs::metadata(&data).unwrap().len(), 64 << 10);
    std::fs::write(
        &trace,
        "fio version 2 iolog\nf add\nf read 0 4096\nf seek 0 1\n",
    )
    .unwrap();
    refused(&storlab(&[]), "trace.log:4: unknown action 'seek'");
    assert!(
        !dir.path().join("f").exists(),
        "a refused replay created its file"
    );
}

/// The spot checks of issue 24 on verify, side by side with fio: the read-back's reads count in
/// the read statistics (fio's own test suite relies on it), and a sequential write mixing 512 B
/// and larger blocks, and two clones without a file name, verify in both tools.
#[test]
fn verify_reads_count_and_pass_where_fios_do() {
    if !fio_present() {
        return;
    }
    let (dir, data) = scratch(MIB);
    let file = format!("--filename={}", data.display());
    let counted = [
        "--rw=write",
        "--bs=4k",
        "--size=1m",
        "--verify=crc32c",
        &file,
    ];
    let mixed = [
        "--rw=write",
        "--bssplit=512/50:4k/50",
        "--size=256k",
        "--verify=crc32c",
        &file,
    ];
    let clones = [
        "--rw=write",
        "--bs=4k",
        "--size=256k",
        "--numjobs=2",
        "--verify=crc32c",
    ];
    for (flags, same_reads) in [
        (&counted[..], true),
        (&mixed[..], false),
        (&clones[..], false),
    ] {
        let mut reads = Vec::new();
        for tool in ["fio", "storlab"] {
            let out = dir.path().join(format!("{tool}.json"));
            let mut command = if tool == "fio" {
                let mut c = Command::new("fio");
                c.args(["--name=v", "--output-format=json"]);
                c
            } else {
                let mut c = Command::new(env!("CARGO_BIN_EXE_storlab"));
                c.args(["run", "--no-db", "--name=v", "--output-format=fio-json"]);
                c
            };
            let output = command
                .current_dir(dir.path())
                .arg(format!("--output={}", out.display()))
                .args(flags)
                .output()
                .unwrap();
            assert!(output.status.success(), "{tool} {flags:?}: {output:?}");
            let text = std::fs::read_to_string(&out).unwrap();
            let json: serde_json::Value =
                serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
            let jobs = json["jobs"].as_array().unwrap();
            assert_eq!(
                jobs.len(),
                if flags.contains(&"--numjobs=2") { 2 } else { 1 }
            );
            for job in jobs {
                assert_eq!(job["error"], 0, "{tool} {flags:?}");
                let read = &job["read"];
                let written = job["write"]["io_bytes"].as_u64().unwrap();
                assert!(
                    read["io_bytes"].as_u64().unwrap() >= written / 2,
                    "{tool} {flags:?}: {job}"
                );
                reads.push((read["total_ios"].as_u64(), read["io_bytes"].as_u64()));
            }
        }
        if same_reads {
            assert_eq!(reads[0], reads[1], "{flags:?}");
            assert_eq!(reads[0], (Some(256), Some(MIB)));
        }
    }
}

/// fio's `percentage_random=READ,WRITE`: each direction draws random offsets at its own share.
/// With 0 for one direction and 100 for the other, both tools walk the first sequentially from
/// the region's start and scatter the second, and move the same I/Os in all.
#[test]
fn percentage_random_takes_a_share_per_direction_as_fio() {
    if !fio_present() {
        return;
    }
    for (shares, sequential_writes) in [("0,100", false), ("100,0,50", true)] {
        let flags = [
            "--rw=randrw",
            "--bs=4k",
            "--size=1m",
            &format!("--percentage_random={shares}"),
        ]
        .map(String::from);
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let (fio, storlab) = both_logs(MIB, &flags);
        assert_eq!(fio.len(), 256, "{shares}");
        assert_eq!(storlab, fio, "{shares}");
        for log in [&fio, &storlab] {
            let offsets = |write: bool| -> Vec<u64> {
                log.iter()
                    .filter(|io| io.write == write)
                    .map(|io| io.offset_bytes)
                    .collect()
            };
            let (sequential, random) = if sequential_writes {
                (offsets(true), offsets(false))
            } else {
                (offsets(false), offsets(true))
            };
            let expected: Vec<u64> = (0..sequential.len() as u64).map(|i| i * 4096).collect();
            assert_eq!(sequential, expected, "{shares}");
            let steps = random.windows(2).filter(|w| w[1] == w[0] + 4096).count();
            assert!(
                random.len() > 64 && steps < random.len() / 8,
                "{shares}: {steps} sequential steps in {} random I/Os",
                random.len()
            );
        }
    }
}

/// One I/O of fio's latency log with `log_prio=1`: write?, size, priority value.
fn prio_log(path: &Path) -> Vec<(bool, u64, u16)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|line| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let prio = fields[4].trim_start_matches("0x");
            (
                fields[2] == "1",
                fields[3].parse().unwrap(),
                u16::from_str_radix(prio, 16).unwrap(),
            )
        })
        .collect()
}

/// fio's command priorities per direction and per block size (`cmdprio_bssplit` in both of
/// fio 3.33's forms, `cmdprio_percentage=READ,WRITE` with `cmdprio_class` and `cmdprio` per
/// direction), on io_uring and libaio. fio's latency log with `log_prio=1` shows the priority
/// each I/O carried; the shares chosen are 0 or 100 so the rule decides every I/O, and
/// storlab's engine must give a priority to exactly the I/Os fio gave one: as many as its own
/// log holds of those sizes and directions.
#[test]
fn cmdprio_marks_the_ios_fio_marks() {
    if !fio_present() {
        return;
    }
    // (flags, which I/Os get which priority: (write, size) -> class << 13 | level)
    type Rule = fn(bool, u64) -> u16;
    let cases: [(&[&str], Rule); 2] = [
        (
            &[
                "--bssplit=4k/50:64k/50",
                "--cmdprio_bssplit=4k/100/2/3:64k/0,64k/100",
            ],
            |write, size| match (write, size) {
                (false, 4096) => 2 << 13 | 3,
                // An entry without class and level takes fio's defaults: real-time, 0.
                (true, 65536) => 1 << 13,
                _ => 0,
            },
        ),
        (
            &[
                "--bs=4k",
                "--cmdprio_percentage=100,0",
                "--cmdprio_class=2,3",
                "--cmdprio=6,0",
            ],
            |write, _| if write { 0 } else { 2 << 13 | 6 },
        ),
    ];
    for engine in ["io_uring", "libaio"] {
        for (flags_of_case, rule) in cases {
            let (dir, data) = scratch(4 * MIB);
            // fio reads an engine's options only after the engine is chosen.
            let engine_flag = format!("--ioengine={engine}");
            let mut flags: Vec<&str> =
                vec![&engine_flag, "--rw=randrw", "--size=1m", "--norandommap"];
            flags.extend_from_slice(flags_of_case);
            let prefix = dir.path().join("lat");
            let output = Command::new("fio")
                .arg("--name=oracle")
                .arg(format!("--filename={}", data.display()))
                .arg(format!("--write_lat_log={}", prefix.display()))
                .args(["--log_prio=1", "--output=/dev/null"])
                .args(&flags)
                .output()
                .unwrap();
            assert!(output.status.success(), "fio {flags:?}: {output:?}");
            let fio = prio_log(&dir.path().join("lat_clat.1.log"));
            assert!(fio.len() > 16, "{flags:?}");
            for (write, size, prio) in &fio {
                assert_eq!(*prio, rule(*write, *size), "fio {flags:?}: {write} {size}");
            }
            // storlab: its own log for the I/Os, its engine's count of prioritized ones.
            let log = dir.path().join("storlab.log");
            let out = dir.path().join("storlab.json");
            let output = Command::new(env!("CARGO_BIN_EXE_storlab"))
                .args(["run", "--no-db", "--output-format=json"])
                .arg(format!("--filename={}", data.display()))
                .arg(format!("--write_iolog={}", log.display()))
                .arg(format!("--output={}", out.display()))
                .args(&flags)
                .output()
                .unwrap();
            assert!(output.status.success(), "storlab {flags:?}: {output:?}");
            let ios = parse_iolog(&log);
            let expected = ios
                .iter()
                .filter(|io| rule(io.write, io.len_bytes) != 0)
                .count();
            assert!(expected > 0 && expected < ios.len(), "{flags:?}");
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
            let details = json["jobs"][0]["engine_details"].as_array().unwrap();
            let marked = details
                .iter()
                .find(|pair| pair[0] == "prioritized_ios")
                .unwrap_or_else(|| panic!("{engine} {flags:?}: {details:?}"))[1]
                .as_str()
                .unwrap()
                .parse::<usize>()
                .unwrap();
            assert_eq!(marked, expected, "{engine} {flags:?}");
        }
    }
}

/// fio's log of a job with clones holds one section per clone (each from its `add` line),
/// written as each clone ends; storlab writes one log per clone (`LOG.N`).
pub(crate) fn fio_log_sections(path: &Path) -> Vec<Vec<LoggedIo>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut sections: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.ends_with(" add") || sections.is_empty() {
            sections.push(String::from("fio version 3 iolog\n"));
        }
        if !line.starts_with("fio version") {
            let last = sections.last_mut().unwrap();
            last.push_str(line);
            last.push('\n');
        }
    }
    let dir = tempfile::tempdir().unwrap();
    sections
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let part = dir.path().join(format!("part{i}"));
            std::fs::write(&part, text).unwrap();
            parse_iolog(&part)
        })
        .filter(|log| !log.is_empty())
        .collect()
}

/// fio numbers its threads over the whole run, clones included, and seeds each from its
/// number: every clone of `numjobs=3`, and the second job of a file, draws its own sequence,
/// and storlab's clone N draws fio's thread N's.
#[test]
fn clones_and_jobs_of_one_file_draw_fios_sequences_per_thread() {
    if !fio_present() {
        return;
    }
    let flags = [
        "--rw=randrw",
        "--bsrange=4k-16k",
        "--size=256k",
        "--numjobs=3",
        "--offset_increment=256k",
        "--percentage_random=80",
    ];
    let (dir, data) = scratch(MIB);
    let fio_path = dir.path().join("fio.log");
    let output = Command::new("fio")
        .arg("--name=oracle")
        .arg(format!("--filename={}", data.display()))
        .arg(format!("--write_iolog={}", fio_path.display()))
        .args(["--output=/dev/null", "--thread"])
        .args(flags)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    run_storlab(dir.path(), &data, &flags);
    let mut fio = fio_log_sections(&fio_path);
    assert_eq!(fio.len(), 3);
    // The sections come in the order the clones ended; each starts in its own region.
    fio.sort_by_key(|log| log[0].offset_bytes / (256 << 10));
    for (clone, fio_clone) in fio.iter().enumerate() {
        let storlab = parse_iolog(&dir.path().join(format!("storlab.log.{clone}")));
        assert_eq!(&storlab, fio_clone, "clone {clone}");
    }
    assert_ne!(fio[0].len(), 0);

    // Two jobs in one file, the second with its own randseed: threads 1 and 2.
    let job_file = dir.path().join("two.fio");
    let logs = ["one.log", "two.log"].map(|name| dir.path().join(name));
    std::fs::write(
        &job_file,
        format!(
            "[global]\nfilename={}\nbs=4k\nsize=256k\n\n\
             [one]\nrw=randread\nwrite_iolog={}\n\n\
             [two]\nrw=randwrite\noffset=512k\nrandseed=7\nwrite_iolog={}\n",
            data.display(),
            logs[0].display(),
            logs[1].display()
        ),
    )
    .unwrap();
    let run = |tool: &str| {
        let mut command = if tool == "fio" {
            let mut c = Command::new("fio");
            c.arg("--output=/dev/null");
            c
        } else {
            let mut c = Command::new(env!("CARGO_BIN_EXE_storlab"));
            c.args(["run", "--no-db"]);
            c
        };
        let output = command.arg(&job_file).output().unwrap();
        assert!(output.status.success(), "{tool}: {output:?}");
        logs.iter().map(|log| parse_iolog(log)).collect::<Vec<_>>()
    };
    let fio = run("fio");
    let storlab = run("storlab");
    assert_eq!(fio[0].len(), 64);
    assert_eq!(storlab, fio);
}

/// `randrepeat=0` without `randseed`: fio seeds from the system's entropy, so two runs differ;
/// storlab does the same, and each run still visits every block once, as fio's does.
#[test]
fn randrepeat_off_differs_run_to_run_and_keeps_the_map() {
    if !fio_present() {
        return;
    }
    let flags = ["--rw=randread", "--bs=4k", "--size=256k", "--randrepeat=0"];
    let (dir, data) = scratch(MIB);
    let fio = fio_log(dir.path(), &data, &flags);
    let first = storlab_log(dir.path(), &data, &flags);
    let second = storlab_log(dir.path(), &data, &flags);
    assert_ne!(first, second, "two runs drew the same sequence");
    let set = |log: &[LoggedIo]| {
        let mut offsets: Vec<u64> = log.iter().map(|io| io.offset_bytes).collect();
        offsets.sort_unstable();
        offsets
    };
    assert_eq!(set(&first), set(&fio));
    assert_eq!(set(&second), set(&fio));
    // Given a randseed, randrepeat=0 repeats it, in both tools.
    let seeded = [
        "--rw=randread",
        "--bs=4k",
        "--size=256k",
        "--randrepeat=0",
        "--randseed=5",
    ];
    let (fio, storlab) = both_logs(MIB, &seeded);
    assert_eq!(storlab, fio);
}
