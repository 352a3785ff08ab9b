//! fio's command priorities with fio's logs and JSON: the same job file run by fio 3.33 and by
//! storlab on a temporary file (libaio and io_uring, `direct=1`) gives each I/O the same
//! priority (fio's `prio_state` stream, bit for bit), logs it in the same columns, and reports
//! the same per-priority I/O counts in fio's `prios` arrays; on a simulated drive the job runs
//! and logs the priorities it drew.

use crate::common::{run_in, stderr};
use std::path::Path;
use std::process::Command;

/// fio 3.33 is the oracle; without it the comparisons are skipped (CI installs it).
fn fio_present() -> bool {
    let found = Command::new("fio").arg("--version").output().is_ok();
    if !found {
        eprintln!("skipping: fio is not installed (Debian package fio)");
    }
    found
}

/// A 4 MiB data file in a scratch directory.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::File::create(dir.path().join("data"))
        .unwrap()
        .set_len(4 << 20)
        .unwrap();
    dir
}

/// A job file of our own: a mixed random job whose sizes and directions come from fio's
/// streams, with the command priority keys in `cmdprio` and the job's own `prio`/`prioclass`
/// (best-effort 5: the priority the I/Os cmdprio does not pick carry).
fn job_file(engine: &str, iodepth: u32, cmdprio: &str, filename: &str, log: bool) -> String {
    let logs = if log {
        "write_lat_log=prio\nlog_prio=1\nlog_offset=1\n"
    } else {
        ""
    };
    format!(
        "[global]\nioengine={engine}\ndirect=1\nrw=randrw\nrwmixread=60\nbssplit=4k/50:16k/30:64k/20\n\
         size=1m\nio_size=2m\niodepth={iodepth}\nprioclass=2\nprio=5\n{logs}\n\
         [cmdprio]\nfilename={filename}\n{cmdprio}\n"
    )
}

/// The two forms of the keys: per-direction percentages with their classes and levels, and
/// `cmdprio_bssplit`'s advanced form (several priorities per size) beside its simple form.
const CMDPRIO_CASES: [&str; 2] = [
    "cmdprio_percentage=30,60\ncmdprio_class=2,3\ncmdprio=1,6",
    "cmdprio_bssplit=4k/20/2/0:4k/30/3/7:64k/100,16k/50/2/2:64k/0\ncmdprio_class=2\ncmdprio=4",
];

/// One line of a latency log: direction, size, offset, priority (fio's `log_prio=1` value).
fn log_lines(path: &Path) -> Vec<(u8, u64, u64, u16)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|line| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            assert_eq!(fields.len(), 6, "{line}");
            (
                fields[2].parse().unwrap(),
                fields[3].parse().unwrap(),
                fields[4].parse().unwrap(),
                u16::from_str_radix(fields[5].trim_start_matches("0x"), 16).unwrap(),
            )
        })
        .collect()
}

fn run_fio(dir: &Path, job: &str, args: &[&str]) {
    std::fs::write(dir.join("job.fio"), job).unwrap();
    let out = Command::new("fio")
        .current_dir(dir)
        .args(args)
        .arg("job.fio")
        .output()
        .unwrap();
    assert!(out.status.success(), "fio: {out:?}");
}

fn run_storlab(dir: &Path, job: &str, args: &[&str]) -> std::process::Output {
    std::fs::write(dir.join("job.fio"), job).unwrap();
    let mut all = vec!["run", "--no-db"];
    all.extend_from_slice(args);
    all.push("job.fio");
    let out = run_in(dir, &all);
    assert!(out.status.success(), "storlab: {}", stderr(&out));
    out
}

#[test]
fn each_io_carries_the_priority_fio_gives_it_in_the_latency_logs() {
    if !fio_present() {
        return;
    }
    for engine in ["libaio", "io_uring"] {
        for cmdprio in CMDPRIO_CASES {
            // Depth 1: both tools complete the I/Os in the order they issue them, so the logs
            // are the same I/Os line for line.
            let dir = scratch();
            let job = job_file(engine, 1, cmdprio, "data", true);
            run_fio(dir.path(), &job, &["--output=/dev/null"]);
            let fio: Vec<_> = ["clat", "slat", "lat"]
                .iter()
                .map(|kind| log_lines(&dir.path().join(format!("prio_{kind}.1.log"))))
                .collect();
            for kind in ["clat", "slat", "lat"] {
                std::fs::remove_file(dir.path().join(format!("prio_{kind}.1.log"))).unwrap();
            }
            run_storlab(dir.path(), &job, &[]);
            for (index, kind) in ["clat", "slat", "lat"].iter().enumerate() {
                let ours = log_lines(&dir.path().join(format!("prio_{kind}.1.log")));
                assert_eq!(ours, fio[index], "{engine} {cmdprio:?} {kind}");
            }
            // The draw decides: some I/Os of each direction carry the job's priority
            // (best-effort 5) and some another.
            let clat = &fio[0];
            for direction in [0, 1] {
                let prios: std::collections::BTreeSet<u16> = clat
                    .iter()
                    .filter(|line| line.0 == direction)
                    .map(|line| line.3)
                    .collect();
                assert!(
                    prios.len() >= 2 && prios.contains(&(2 << 13 | 5)),
                    "{engine} {cmdprio:?} direction {direction}: {prios:?}"
                );
            }
        }
    }
}

/// The keys of `value` and of everything under it, as paths (arrays by their first element).
fn key_tree(value: &serde_json::Value, prefix: &str, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, inner) in map {
                let path = format!("{prefix}/{key}");
                out.push(path.clone());
                key_tree(inner, &path, out);
            }
        }
        serde_json::Value::Array(items) => {
            if let Some(first) = items.first() {
                key_tree(first, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

/// (class, level, I/Os) of each entry of a direction's `prios` array.
fn prio_counts(direction: &serde_json::Value) -> Vec<(u64, u64, u64)> {
    direction["prios"]
        .as_array()
        .unwrap_or_else(|| panic!("no prios in {direction}"))
        .iter()
        .map(|p| {
            (
                p["prioclass"].as_u64().unwrap(),
                p["prio"].as_u64().unwrap(),
                p["clat_ns"]["N"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_json_prios_arrays_count_what_fio_counts_with_fios_keys() {
    if !fio_present() {
        return;
    }
    for engine in ["libaio", "io_uring"] {
        for cmdprio in CMDPRIO_CASES {
            // Depth 8: completions come in another order than issues, but each I/O's draw is
            // made as it is issued, so every priority's count is fio's.
            let dir = scratch();
            let job = job_file(engine, 8, cmdprio, "data", false);
            run_fio(
                dir.path(),
                &job,
                &["--output-format=json", "--output=fio.json"],
            );
            let fio: serde_json::Value =
                serde_json::from_slice(&std::fs::read(dir.path().join("fio.json")).unwrap())
                    .unwrap();
            let out = run_storlab(dir.path(), &job, &["--output-format=fio-json"]);
            let ours: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            for direction in ["read", "write"] {
                let (theirs, mine) = (&fio["jobs"][0][direction], &ours["jobs"][0][direction]);
                assert_eq!(
                    prio_counts(mine),
                    prio_counts(theirs),
                    "{engine} {cmdprio:?} {direction}"
                );
                let (mut fio_keys, mut our_keys) = (Vec::new(), Vec::new());
                key_tree(&theirs["prios"], "", &mut fio_keys);
                key_tree(&mine["prios"], "", &mut our_keys);
                assert_eq!(our_keys, fio_keys, "{engine} {cmdprio:?} {direction}");
            }
            // No priority for trims, and a job without cmdprio has no `prios` (fio prints them
            // only for two priorities or more).
            assert!(ours["jobs"][0]["trim"].get("prios").is_none());
        }
    }
}

#[test]
fn a_simulated_drive_runs_the_job_and_logs_the_priorities_drawn() {
    // The simulated USB stacks carry no priority to the drive (Linux's uas sends every command
    // IU with task priority 0; a BOT CBW and the SCSI and ATA commands the bridges send have no
    // field for one), so the priorities are drawn, logged and reported, and change no timing.
    let dir = tempfile::tempdir().unwrap();
    for (index, cmdprio) in CMDPRIO_CASES.iter().enumerate() {
        let job = job_file("libaio", 4, cmdprio, "data", true);
        let out = run_storlab(
            dir.path(),
            &job,
            &["--target", "sim:usb3-uas-ssd", "--output-format=fio-json"],
        );
        assert!(
            !stderr(&out).contains("no effect"),
            "{cmdprio:?}: {}",
            stderr(&out)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let lines = log_lines(&dir.path().join("prio_clat.1.log"));
        for (direction, name) in [(0, "read"), (1, "write")] {
            let counts = prio_counts(&json["jobs"][0][name]);
            assert!(counts.len() >= 2, "{cmdprio:?} {name}: {counts:?}");
            // What the log says each I/O carried adds up to the JSON's counts.
            for (class, level, ios) in counts {
                let logged = lines
                    .iter()
                    .filter(|l| l.0 == direction && u64::from(l.3) == (class << 13 | level))
                    .count() as u64;
                assert_eq!(logged, ios, "case {index} {name} {class}/{level}");
            }
        }
    }
}

#[test]
fn a_group_of_clones_adds_up_each_priority_as_fio() {
    if !fio_present() {
        return;
    }
    // Two clones (their own threads, so their own `prio_state` seeds) reported as one group:
    // fio sums each priority's samples over the clones (`sum_clat_prio_stats`).
    let dir = scratch();
    let cmdprio = format!("{}\nnumjobs=2\ngroup_reporting=1", CMDPRIO_CASES[0]);
    let job = job_file("io_uring", 4, &cmdprio, "data", false);
    run_fio(
        dir.path(),
        &job,
        &["--output-format=json", "--output=fio.json"],
    );
    let fio: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("fio.json")).unwrap()).unwrap();
    let out = run_storlab(dir.path(), &job, &["--output-format=fio-json"]);
    let ours: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for direction in ["read", "write"] {
        assert_eq!(
            prio_counts(&ours["jobs"][0][direction]),
            prio_counts(&fio["jobs"][0][direction]),
            "{direction}"
        );
    }
}
