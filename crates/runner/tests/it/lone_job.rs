//! Which thread a job's I/O runs on: a group of one job with one engine on the caller's thread
//! (so a process whose other threads keep their own descriptor tables does its system calls on
//! the kernel's one-thread path), several jobs at once on threads of their own; a panic in the
//! lone job is its `RunError::Panic`, as from a thread.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use storlab_engine::engines::null::NullEngine;
use storlab_engine::observed::{EngineObserver, Observed};
use storlab_engine::{IoEngine, IoRequest};
use storlab_job::{EngineKind, JobSet, JobSpec, Target};
use storlab_runner::{run_jobs, EngineProvider, RunError, RunOptions};

const REGION_BYTES: u64 = 1 << 20;
const IOS: u64 = 64;

/// Writes down the thread each request is queued on (the worker's), or panics there.
struct ThreadNoting {
    threads: Arc<Mutex<Vec<ThreadId>>>,
    panics: bool,
}

impl EngineObserver for ThreadNoting {
    fn on_queue(&mut self, _request: &IoRequest) {
        assert!(!self.panics, "engine panics on purpose");
        self.threads
            .lock()
            .unwrap()
            .push(std::thread::current().id());
    }
}

struct Provider {
    threads: Arc<Mutex<Vec<ThreadId>>>,
    panics: bool,
}

impl EngineProvider for Provider {
    fn open(&mut self, _job: &JobSpec) -> Result<Vec<Box<dyn IoEngine + Send>>, RunError> {
        let noting = ThreadNoting {
            threads: Arc::clone(&self.threads),
            panics: self.panics,
        };
        let inner: Box<dyn IoEngine + Send> = Box::new(NullEngine::new(REGION_BYTES));
        Ok(vec![Box::new(Observed::new(inner, noting))])
    }
}

fn job(name: &str) -> JobSpec {
    let mut job = JobSpec::new(name, EngineKind::Null, Target::None);
    job.size_bytes = Some(REGION_BYTES);
    job.number_ios = Some(IOS);
    job
}

/// Run `jobs` (one group: no stonewall) and return the distinct threads their requests were queued on.
fn queue_threads(jobs: Vec<JobSpec>, panics: bool) -> (Result<usize, RunError>, Vec<ThreadId>) {
    let threads = Arc::new(Mutex::new(Vec::new()));
    let mut provider = Provider {
        threads: Arc::clone(&threads),
        panics,
    };
    let stop = AtomicBool::new(false);
    let options = RunOptions {
        interval_ns: storlab_runner::DEFAULT_INTERVAL_NS,
        stop: &stop,
        live: None,
    };
    let set = JobSet { jobs };
    let outcome = run_jobs(&set, &mut provider, &options, &mut |_| {}).map(|done| done.len());
    let mut seen = threads.lock().unwrap().clone();
    seen.sort_by_key(|id| format!("{id:?}"));
    seen.dedup();
    (outcome, seen)
}

#[test]
fn a_lone_job_runs_on_the_callers_thread() {
    let (outcome, threads) = queue_threads(vec![job("lone")], false);
    assert_eq!(outcome.unwrap(), 1);
    assert_eq!(threads, [std::thread::current().id()]);
}

#[test]
fn jobs_running_together_each_have_a_thread() {
    let (outcome, threads) = queue_threads(vec![job("a"), job("b")], false);
    assert_eq!(outcome.unwrap(), 2);
    assert_eq!(threads.len(), 2, "{threads:?}");
    assert!(!threads.contains(&std::thread::current().id()));
}

#[test]
fn a_panic_in_a_lone_job_is_its_error() {
    let (outcome, _) = queue_threads(vec![job("lone")], true);
    match outcome {
        Err(RunError::Panic(text)) => assert!(text.contains("on purpose"), "{text}"),
        other => panic!("expected RunError::Panic, got {:?}", other.map(|_| ())),
    }
}
