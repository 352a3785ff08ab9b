//! The differential fuzzer against fio 3.33 (issue 34): random valid fio jobs over the keys
//! storlab accepts, each run by fio and by storlab on the same small file, compared through
//! what fio lets one compare (exit status, `write_iolog`, the JSON totals, the bytes written).
//!
//! - `a_fixed_seed_corpus_does_fios_io`: CI's corpus (`CORPUS_JOBS` jobs of `CORPUS_SEED`). It
//!   prints the pass rate, and fails on a silent difference not in `known::DIVERGENCES`, on a
//!   listed one that is gone (the list only shrinks), and below the ratchet `MIN_AGREE_PERCENT`.
//!   A job whose verdict is not the listed one is judged again (`RECHECKS`) first: some jobs'
//!   outcome depends on timing in fio itself, and only a verdict that holds counts.
//!   A new difference is shrunk (keys dropped while it persists) and printed as the fio and
//!   storlab command lines that show it.
//! - `jobs_the_soaks_found_stay_fixed`: the jobs of `found` (soak finds, shrunk) agree with fio (a
//!   verdict judged again as in the corpus)
//!   or are refused, as listed.
//! - `a_soak_of_thousands_of_jobs`: with `STORLAB_SOAK=1`, `STORLAB_FUZZ_JOBS` (3000) jobs of
//!   `STORLAB_FUZZ_SEED` (the time): fails on a hang or a class of difference not known;
//!   `STORLAB_FUZZ_LINES=FILE` judges the jobs of FILE (fio flags, one job a line) instead.
//!
//! Print the rate: `cargo test -p storlab --test it fio_diff -- --nocapture`.

mod compare;
mod found;
pub(crate) mod jobs;
mod known;
pub(crate) mod run;

use compare::{compare, Verdict};
use jobs::Job;
use run::{run, Ran, Tool};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

const CORPUS_SEED: u64 = 34;
const CORPUS_JOBS: u64 = 320;
const SOAK_JOBS: u64 = 3000;
/// The ratchet: the corpus's share agreeing with fio (same I/O, or refused by both) reached so
/// far. Raise it as divergences are fixed; never lower it for the same generator. (Session 20
/// widened the generator, `jobs.rs` `later_keys` and `report_keys`: the corpus that agreed at
/// 99.6% without those keys agrees at 97.5% with them, every other job refused in one line;
/// session 22 lifted refusals to 98.8%; session 25 drew the accepted keys no draw gave,
/// `jobs.rs` `undrawn_keys`, and the new corpus agrees at 98.4%; session 26, its spin stalls
/// made 1010 us long, at 315 or 316 of 320 from run to run: a refused job that fio itself
/// fails where its clones' timing decides counts as agreement in the runs where fio fails.)
const MIN_AGREE_PERCENT: f64 = 98.4;
/// Jobs run side by side (CI's two cores; each job is two or three processes one after another).
const PARALLEL_JOBS: usize = 2;
/// Rechecks of a job whose verdict is not the one listed, before it counts as new or gone.
const RECHECKS: usize = 2;
/// New differences shrunk and printed per run (each shrink runs the job a few dozen times).
const SHRINK_AT_MOST: usize = 5;

pub(crate) fn fio_present() -> bool {
    let found = std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var_os("CI").is_none(), "fio is required in CI");
        eprintln!("skipping: fio is not installed (Debian package fio)");
    }
    found
}

/// Runs `job` under both tools in a fresh directory; the verdict.
fn judge(job: &Job) -> Verdict {
    // In the build's own directory, not /tmp: the job's file system decides what `direct=1`,
    // `fallocate` and `mmap` do, and /tmp is a tmpfs on many machines.
    let scratch = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let fio = run(Tool::Fio, job, scratch.path());
    let storlab = run(Tool::Storlab, job, scratch.path());
    let fio_again = || match run(Tool::Fio, job, &scratch.path().join("again")) {
        Ran::Exited(exited) => Some(exited),
        Ran::Hung => None,
    };
    compare(job, &fio, &storlab, &fio_again)
}

/// Every job's verdict, `PARALLEL_JOBS` at a time.
fn judge_all(jobs: &[Job]) -> Vec<Verdict> {
    let next = AtomicUsize::new(0);
    let verdicts = Mutex::new(vec![Verdict::Same; jobs.len()]);
    std::thread::scope(|scope| {
        for _ in 0..PARALLEL_JOBS {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(index) else { break };
                let verdict = judge(job);
                verdicts.lock().unwrap()[index] = verdict;
            });
        }
    });
    verdicts.into_inner().unwrap()
}

/// Drops keys from `job` one at a time while the same class of difference persists: the
/// smallest job that still shows it.
fn shrink(job: &Job, verdict: &Verdict) -> (Job, Verdict) {
    let (mut job, mut verdict) = (job.clone(), verdict.clone());
    let mut index = 0;
    while index < job.keys.len() {
        let candidate = job.without(index);
        let candidate_verdict = judge(&candidate);
        if candidate_verdict.class() == verdict.class() {
            (job, verdict) = (candidate, candidate_verdict);
        } else {
            index += 1;
        }
    }
    (job, verdict)
}

/// The job as commands anyone can paste: the same data file, then fio and storlab.
pub(crate) fn reproduction(job: &Job) -> String {
    let flags = job.line();
    format!(
        "truncate -s {} data && fio --name=fuzz --filename=data --write_iolog=io.log {flags}\n\
         truncate -s {} data && storlab run --name=fuzz --filename=data --write_iolog=io.log {flags}",
        jobs::FILE_BYTES,
        jobs::FILE_BYTES
    )
}

/// Prints the counts and the classes of difference; the share agreeing with fio, in percent.
fn summarize(label: &str, verdicts: &[Verdict]) -> f64 {
    // Each class with its count and its first instance.
    let mut classes: BTreeMap<String, (usize, &Verdict)> = BTreeMap::new();
    let count = |f: &dyn Fn(&Verdict) -> bool| verdicts.iter().filter(|v| f(v)).count();
    for verdict in verdicts.iter().filter(|v| !v.agrees()) {
        classes.entry(verdict.class()).or_insert((0, verdict)).0 += 1;
    }
    let agree = count(&Verdict::agrees);
    let percent = 100.0 * agree as f64 / verdicts.len().max(1) as f64;
    eprintln!(
        "fio_diff {label}: {} jobs: {agree} agree with fio ({percent:.1}%: {} same I/O, {} \
         failed or refused by both), {} refused with a reason, {} silent differences, {} hangs",
        verdicts.len(),
        count(&|v| *v == Verdict::Same),
        count(&|v| *v == Verdict::BothRefused),
        count(&|v| matches!(v, Verdict::Refused(_))),
        count(&|v| matches!(v, Verdict::Diverged(_))),
        count(&|v| matches!(v, Verdict::Hang(_))),
    );
    for (class, (n, first)) in classes {
        eprintln!("  {n:4}  {class}  (first: {first:?})");
    }
    percent
}

/// Shrinks and prints up to `SHRINK_AT_MOST` of `differences`.
fn report_new(differences: &[(&Job, &Verdict)]) {
    for (job, verdict) in differences.iter().take(SHRINK_AT_MOST) {
        let (small, small_verdict) = shrink(job, verdict);
        eprintln!(
            "new difference: {}\n  job: {}\n  shrunk: {small_verdict:?}\n{}",
            verdict.class(),
            job.line(),
            reproduction(&small)
        );
    }
}

/// Whether `verdict` is what the known list expects of `line`: no silent difference where none
/// is listed, the listed class where one is.
fn as_listed(known: &BTreeMap<&str, &str>, line: &str, verdict: &Verdict) -> bool {
    match known.get(line) {
        Some(class) => verdict.is_silent_difference() && verdict.class() == *class,
        None => !verdict.is_silent_difference(),
    }
}

/// Judges again, up to `RECHECKS` times, each job whose verdict is not what the known list
/// expects; a recheck that is, settles it there (fio's own result depends on timing in some
/// jobs: two clones racing on one file, a verify that reads what the other clone wrote, a
/// process slower than the timeout on a loaded machine). Returns the settled verdicts and the
/// jobs that changed verdict, for the report.
fn settle(
    jobs: &[Job],
    verdicts: Vec<Verdict>,
    known: &BTreeMap<&str, &str>,
) -> (Vec<Verdict>, Vec<String>) {
    let mut settled = verdicts;
    let mut unstable = Vec::new();
    for (job, verdict) in jobs.iter().zip(settled.iter_mut()) {
        let line = job.line();
        if as_listed(known, &line, verdict) {
            continue;
        }
        for _ in 0..RECHECKS {
            let again = judge(job);
            if as_listed(known, &line, &again) {
                unstable.push(format!("{line}: {verdict:?}, then {again:?}"));
                *verdict = again;
                break;
            }
        }
    }
    (settled, unstable)
}

#[test]
fn a_fixed_seed_corpus_does_fios_io() {
    if !fio_present() {
        return;
    }
    let jobs: Vec<Job> = (0..CORPUS_JOBS)
        .map(|i| jobs::job(CORPUS_SEED, i))
        .collect();
    let known: BTreeMap<&str, &str> = known::DIVERGENCES.iter().copied().collect();
    let (verdicts, unstable) = settle(&jobs, judge_all(&jobs), &known);
    let percent = summarize("corpus", &verdicts);
    for line in &unstable {
        eprintln!("unstable (settled on a recheck): {line}");
    }
    // Each refusal with its job: what a user of these keys meets, and what is left to run.
    for (job, verdict) in jobs.iter().zip(&verdicts) {
        if let Verdict::Refused(reason) = verdict {
            eprintln!("refused: {}\n  job: {}", reason.trim(), job.line());
        }
    }
    let mut unexpected = Vec::new();
    let mut listed_now = Vec::new();
    for (job, verdict) in jobs.iter().zip(&verdicts) {
        let line = job.line();
        let class = verdict.class();
        if verdict.is_silent_difference() {
            listed_now.push(format!("    ({line:?}, {class:?}),"));
            if known.get(line.as_str()) != Some(&class.as_str()) {
                unexpected.push((job, verdict));
            }
        }
    }
    let gone = known.len() + unexpected.len() - listed_now.len();
    if !unexpected.is_empty() || gone > 0 {
        report_new(&unexpected);
        eprintln!(
            "known::DIVERGENCES as this run found them:\n{}",
            listed_now.join("\n")
        );
    }
    assert!(
        unexpected.is_empty(),
        "{} new differences from fio (above)",
        unexpected.len()
    );
    assert_eq!(gone, 0, "listed differences now gone: shrink known::DIVERGENCES (above) and raise MIN_AGREE_PERCENT");
    assert!(
        percent >= MIN_AGREE_PERCENT,
        "{percent:.1}% agree with fio, below the ratchet {MIN_AGREE_PERCENT}%"
    );
}

/// A job of `found` as the generator would have made it.
fn job_of_line(line: &str) -> Job {
    let keys = line
        .split_whitespace()
        .map(|flag| {
            let flag = flag.trim_start_matches("--");
            let (key, value) = flag.split_once('=').unwrap_or((flag, ""));
            (key.to_owned(), value.to_owned())
        })
        .collect();
    Job { keys }
}

#[test]
fn jobs_the_soaks_found_stay_fixed() {
    if !fio_present() {
        return;
    }
    let lines: Vec<&str> = found::AGREE.iter().chain(found::REFUSED).copied().collect();
    let jobs: Vec<Job> = lines.iter().map(|line| job_of_line(line)).collect();
    let verdicts = judge_all(&jobs);
    let as_listed = |i: usize, verdict: &Verdict| {
        if i >= found::AGREE.len() {
            // A refused job whose fio run fails or passes by timing may meet fio's failure.
            matches!(verdict, Verdict::Refused(_) | Verdict::BothRefused)
        } else {
            verdict.agrees()
        }
    };
    let mut wrong = Vec::new();
    for (i, (job, verdict)) in jobs.iter().zip(&verdicts).enumerate() {
        // As the corpus: a verdict counts when it holds (a loaded machine can starve a run).
        let holds = !as_listed(i, verdict)
            && (0..RECHECKS).all(|_| !as_listed(i, &judge_all(std::slice::from_ref(job))[0]));
        if holds {
            eprintln!("{verdict:?}\n{}", reproduction(job));
            wrong.push(job.line());
        }
    }
    assert!(
        wrong.is_empty(),
        "{} found jobs no longer as listed (above): {wrong:?}",
        wrong.len()
    );
}

#[test]
fn a_soak_of_thousands_of_jobs() {
    if std::env::var_os("STORLAB_SOAK").is_none() || !fio_present() {
        return;
    }
    let number = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let seed = number("STORLAB_FUZZ_SEED", now);
    // `STORLAB_FUZZ_LINES=FILE`: the jobs of FILE (fio flags, one job a line) instead, to judge
    // hand-made variants as the soak judges its own.
    let jobs: Vec<Job> = match std::env::var_os("STORLAB_FUZZ_LINES") {
        Some(path) => std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("STORLAB_FUZZ_LINES: {e}"))
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(job_of_line)
            .collect(),
        None => (0..number("STORLAB_FUZZ_JOBS", SOAK_JOBS))
            .map(|i| jobs::job(seed, i))
            .collect(),
    };
    let verdicts = judge_all(&jobs);
    summarize(&format!("soak (STORLAB_FUZZ_SEED={seed})"), &verdicts);
    // Every job that does not agree, one line each: what a run of thousands leaves to fix.
    for (job, verdict) in jobs.iter().zip(&verdicts).filter(|(_, v)| !v.agrees()) {
        eprintln!("disagrees: {verdict:?}\n  job: {}", job.line());
    }
    let known_classes: Vec<&str> = known::DIVERGENCES.iter().map(|(_, class)| *class).collect();
    let unknown: Vec<(&Job, &Verdict)> = jobs
        .iter()
        .zip(&verdicts)
        .filter(|(_, v)| {
            matches!(v, Verdict::Hang(_))
                || (v.is_silent_difference() && !known_classes.contains(&v.class().as_str()))
        })
        .collect();
    report_new(&unknown);
    assert!(
        unknown.is_empty(),
        "{} hangs or unknown classes of difference",
        unknown.len()
    );
}
