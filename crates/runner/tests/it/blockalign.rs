//! `blockalign` reaches the engine: a random job on a real file, with the random map on (the
//! default) and off, issues I/O at the alignment asked for, not only on the block-size grid. The
//! engine records every request it is given, then passes it to psync on a temporary file.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use storlab_engine::observed::{EngineObserver, Observed};
use storlab_engine::registry::{open_engine, EngineOptions};
use storlab_engine::target::{open_target, OpenTarget};
use storlab_engine::{IoEngine, IoRequest};
use storlab_job::{EngineKind, JobSet, JobSpec, Target};
use storlab_runner::{run_jobs, EngineProvider, RunError, RunOptions};

/// Writes down the offset of every request queued on the psync engine it watches.
struct Recording {
    offsets: Arc<Mutex<Vec<u64>>>,
}

impl EngineObserver for Recording {
    fn on_queue(&mut self, request: &IoRequest) {
        self.offsets.lock().unwrap().push(request.offset_bytes);
    }
}

/// One recording engine on one opened file (the jobs here have one worker).
struct RecordingProvider {
    target: OpenTarget,
    offsets: Arc<Mutex<Vec<u64>>>,
}

impl EngineProvider for RecordingProvider {
    fn open(&mut self, _job: &JobSpec) -> Result<Vec<Box<dyn IoEngine + Send>>, RunError> {
        let inner = open_engine(
            EngineKind::Psync,
            Some(&self.target),
            &EngineOptions::default(),
        )?;
        let recording = Recording {
            offsets: Arc::clone(&self.offsets),
        };
        Ok(vec![Box::new(Observed::new(inner, recording))])
    }
}

const FILE_BYTES: u64 = 4 << 20;
const IOS: u64 = 2000;

/// Offsets a 4 KiB random write job with `blockalign=align_bytes` issues on a file.
fn issued_offsets(align_bytes: u64, random_map: bool) -> Vec<u64> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    let target = open_target(&Target::Path(path.clone()), FILE_BYTES, false, true, None).unwrap();
    let offsets = Arc::new(Mutex::new(Vec::new()));
    let mut provider = RecordingProvider {
        target,
        offsets: Arc::clone(&offsets),
    };
    let mut job = JobSpec::new("aligned", EngineKind::Psync, Target::Path(path));
    job.read_percent = 0;
    job.align_bytes = align_bytes;
    job.align_given = true;
    job.random_map = random_map;
    job.size_bytes = Some(FILE_BYTES);
    job.number_ios = Some(IOS);
    // More I/Os than one pass over the file holds: `number_ios` alone stops at one pass.
    job.io_size_bytes = Some(IOS * 4096);
    let stop = AtomicBool::new(false);
    let options = RunOptions {
        interval_ns: storlab_runner::DEFAULT_INTERVAL_NS,
        stop: &stop,
        live: None,
    };
    let set = JobSet { jobs: vec![job] };
    let outcomes = run_jobs(&set, &mut provider, &options, &mut |_| {}).unwrap();
    assert_eq!(outcomes[0].workers[0].write.ios, IOS);
    let recorded = offsets.lock().unwrap().clone();
    recorded
}

#[test]
fn blockalign_512_issues_offsets_off_the_4k_grid_with_and_without_the_random_map() {
    for random_map in [true, false] {
        let offsets = issued_offsets(512, random_map);
        assert_eq!(offsets.len() as u64, IOS);
        assert!(offsets
            .iter()
            .all(|o| o % 512 == 0 && o + 4096 <= FILE_BYTES));
        let misaligned = offsets.iter().filter(|&&o| o % 4096 != 0).count();
        // Seven of every eight 512-byte places are not 4 KiB places.
        assert!(
            misaligned as u64 > IOS * 3 / 4,
            "random map {random_map}: {misaligned} of {IOS} off the 4 KiB grid"
        );
    }
}

#[test]
fn the_default_alignment_keeps_every_offset_on_the_4k_grid() {
    let offsets = issued_offsets(4096, true);
    assert!(offsets.iter().all(|o| o % 4096 == 0));
}
