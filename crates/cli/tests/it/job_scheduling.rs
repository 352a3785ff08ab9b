//! fio's keys that place jobs in time and give their I/O a priority (issue 20): `startdelay`,
//! `wait_for`, `exitall` with `exit_what`, `prio` and `prioclass`. Each job file runs under fio
//! 3.33 and under storlab on files the test creates, and both must do the same thing: the
//! delayed job's runtime is its own (the delay is outside it), a waiting job starts when the
//! one it names ends, the jobs `exitall` names stop when it ends, and every per-I/O log line
//! carries the job's priority. Parts that need fio are skipped with a message where it is
//! missing.

use crate::common;

use common::{run_in, stderr};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn fio_present() -> bool {
    let found = Command::new("fio").arg("--version").output().is_ok();
    if !found {
        eprintln!("skipping the fio half: fio is not installed (Debian package fio)");
    }
    found
}

/// A scratch directory holding `job.fio`.
fn scratch(job: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("job.fio"), job).unwrap();
    dir
}

/// Each job's (name, job_runtime in ms, read I/Os) from a fio-shaped JSON, and the wall time.
type Jobs = Vec<(String, u64, u64)>;

fn jobs_of(json: &serde_json::Value) -> Jobs {
    json["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["job_runtime"].as_u64().unwrap(),
                j["read"]["total_ios"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn storlab_jobs(dir: &Path, extra: &[&str]) -> (Jobs, Duration) {
    let mut args = vec!["run", "--no-db", "--output-format=fio-json", "job.fio"];
    args.extend_from_slice(extra);
    let started = Instant::now();
    let out = run_in(dir, &args);
    let wall = started.elapsed();
    assert!(out.status.success(), "storlab: {}", stderr(&out));
    (jobs_of(&serde_json::from_slice(&out.stdout).unwrap()), wall)
}

/// The job file in `dir` run by storlab, and by fio when it is installed: each tool's jobs and
/// the run's wall time.
fn both_tools(dir: &Path) -> Vec<(&'static str, (Jobs, Duration))> {
    let mut runs = vec![("storlab", storlab_jobs(dir, &[]))];
    if fio_present() {
        runs.push(("fio", fio_jobs(dir)));
    }
    runs
}

/// Runs the job file in `dir` with both tools: each job of `names` ran its 1 s runtime, and
/// the whole run took about two seconds (`why`: what the two seconds are).
fn each_ran_its_second_in_two(dir: &Path, names: &[&str], why: &str) {
    for (tool, (jobs, wall)) in both_tools(dir) {
        for name in names {
            let runtime_ms = job(&jobs, name).1;
            assert!(
                (1000..1100).contains(&runtime_ms),
                "{tool}: job {name} ran {runtime_ms} ms, not its 1 s runtime: {jobs:?}"
            );
        }
        assert!(
            wall >= Duration::from_millis(1900) && wall < Duration::from_secs(4),
            "{tool}: the run took {wall:?}, not {why}"
        );
    }
}

fn fio_jobs(dir: &Path) -> (Jobs, Duration) {
    let started = Instant::now();
    let out = Command::new("fio")
        .current_dir(dir)
        .args(["--output-format=json", "job.fio"])
        .output()
        .unwrap();
    let wall = started.elapsed();
    assert!(out.status.success(), "fio: {}", stderr(&out));
    (jobs_of(&serde_json::from_slice(&out.stdout).unwrap()), wall)
}

fn job<'a>(jobs: &'a Jobs, name: &str) -> &'a (String, u64, u64) {
    jobs.iter().find(|j| j.0 == name).unwrap()
}

/// Two 1 s jobs side by side, one starting 1 s late: the run takes about 2 s, and the delayed
/// job still runs its whole second (the delay is no part of its runtime), in fio and storlab.
const START_DELAY_JOB: &str = "[global]
ioengine=psync
filename=data
size=1m
bs=4k
rw=randread
runtime=1
time_based
[late]
startdelay=1
[now]
";

#[test]
fn startdelay_waits_before_the_runtime_as_fio() {
    let dir = scratch(START_DELAY_JOB);
    each_ran_its_second_in_two(dir.path(), &["late", "now"], "the delay plus the runtime");
}

#[test]
fn startdelay_on_a_simulated_drive_passes_on_its_clock() {
    let dir = scratch(START_DELAY_JOB);
    let started = Instant::now();
    let (jobs, _) = storlab_jobs(dir.path(), &["--target", "sim:usb3-uas-ssd"]);
    // Simulated time: the delay and the runtime cost no wall time to speak of.
    assert!(started.elapsed() < Duration::from_secs(30));
    for name in ["late", "now"] {
        assert_eq!(job(&jobs, name).1, 1000, "{jobs:?}");
    }
    // The longest delay accepted passes in one step of simulated time, not in polls.
    let dir = scratch("[a]\nsize=1m\nrw=read\nstartdelay=3650d\n");
    let started = Instant::now();
    let (jobs, _) = storlab_jobs(dir.path(), &["--target", "sim:usb3-uas-ssd"]);
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(job(&jobs, "a").2, 256, "{jobs:?}");
}

/// `exitall` on a short job stops the long job of its reporting group when it ends, and not
/// the one of the next group (`new_group`, fio's default `exit_what=group`); `exit_what=all`
/// stops that too, and the stonewall group after it never starts.
fn exitall_job(exit_what: &str) -> String {
    format!(
        "[global]
ioengine=psync
filename=data
size=1m
bs=4k
rw=randread
[short]
exitall
exit_what={exit_what}
[same_group]
runtime=2
time_based
[other_group]
new_group
runtime=2
time_based
"
    )
}

#[test]
fn exitall_stops_the_jobs_exit_what_names_as_fio() {
    let have_fio = fio_present();
    for (exit_what, other_group_stops) in [("group", false), ("all", true)] {
        let dir = scratch(&exitall_job(exit_what));
        let mut runs = vec![("storlab", storlab_jobs(dir.path(), &[]).0)];
        if have_fio {
            runs.push(("fio", fio_jobs(dir.path()).0));
        }
        for (tool, jobs) in runs {
            // The short job reads its 1 MiB once, in well under a second.
            assert_eq!(job(&jobs, "short").2, 256, "{tool}: {jobs:?}");
            let same = job(&jobs, "same_group").1;
            assert!(same < 1000, "{tool} exit_what={exit_what}: {jobs:?}");
            let other = job(&jobs, "other_group").1;
            assert_eq!(
                other < 1000,
                other_group_stops,
                "{tool} exit_what={exit_what}: {jobs:?}"
            );
        }
    }
}

#[test]
fn exit_what_all_keeps_later_stonewall_groups_from_starting() {
    let text = exitall_job("all") + "[later]\nstonewall\nruntime=2\ntime_based\n";
    let dir = scratch(&text);
    let started = Instant::now();
    let (jobs, _) = storlab_jobs(dir.path(), &[]);
    assert!(started.elapsed() < Duration::from_millis(1500), "{jobs:?}");
    // fio lists the job that never started with zeros; storlab leaves it out.
    assert!(jobs.iter().all(|j| j.0 != "later"), "{jobs:?}");
}

/// `prio=5` (best-effort, as no `prioclass` is given) and `log_prio`: every line of the
/// completion-latency log ends in the job's priority value 0x4005, in both.
#[test]
fn prio_is_the_priority_every_io_logs_as_fio() {
    let dir = scratch(
        "[j]
ioengine=psync
filename=data
size=64k
bs=4k
rw=read
prio=5
write_lat_log=pr
log_prio=1
",
    );
    let mut tools = vec!["storlab"];
    if fio_present() {
        tools.push("fio");
    }
    for tool in tools {
        let log = dir.path().join("pr_clat.1.log");
        let _ = std::fs::remove_file(&log);
        if tool == "fio" {
            fio_jobs(dir.path());
        } else {
            storlab_jobs(dir.path(), &[]);
        }
        let text = std::fs::read_to_string(&log).unwrap();
        let priorities: Vec<&str> = text
            .lines()
            .map(|l| l.rsplit(", ").next().unwrap())
            .collect();
        assert_eq!(priorities.len(), 16, "{tool}: {text}");
        assert!(priorities.iter().all(|p| *p == "0x4005"), "{tool}: {text}");
    }
}

/// The job's thread really runs at its priority: `prioclass=3` (idle) is what the kernel
/// reports for storlab's process while a lone job runs on its main thread.
#[test]
fn prioclass_is_set_on_the_thread_that_does_the_io() {
    let available = Command::new("ionice").arg("-p").arg("1").output().is_ok();
    if !available {
        eprintln!("skipping: ionice is not installed (util-linux)");
        return;
    }
    let dir = scratch(
        "[idle]
ioengine=psync
filename=data
size=1m
bs=4k
rw=randread
runtime=3
time_based
prioclass=3
",
    );
    let child = common::storlab()
        .current_dir(dir.path())
        .args(["run", "--no-db", "--output-format=json", "job.fio"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_millis(2500);
    while Instant::now() < deadline {
        let out = Command::new("ionice").args(["-p", &pid]).output().unwrap();
        seen = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if seen == "idle" {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(seen, "idle");
}

/// `wait_for`: the second job starts once the first has finished while a third runs beside
/// the first, so three 1 s jobs take about 2 s, each its whole second, in fio and storlab.
#[test]
fn wait_for_starts_the_job_after_the_one_it_names_as_fio() {
    let dir = scratch(
        "[global]
ioengine=psync
filename=data
size=1m
bs=4k
rw=randread
runtime=1
time_based
[first]
[second]
new_group
wait_for=first
[beside]
",
    );
    each_ran_its_second_in_two(
        dir.path(),
        &["first", "second", "beside"],
        "two runtimes one after the other",
    );
}
