//! Properties every job the readers accept must have, shared by the `jobfile` and `flags`
//! targets: what `validate` promises (so the runner can rely on it), idempotent validation, the
//! imposed target reaching every job, and one-line errors.

use storlab_job::model::{BlockSizeSpec, DataPattern, EngineKind, JobSet, JobSpec, Target};
use storlab_job::validate::{
    validate, ALIGN_MAX_BYTES, BLOCK_SIZE_MAX_BYTES, IODEPTH_MAX, NUMJOBS_MAX, SECTOR_BYTES,
};
use storlab_job::JobError;

/// The simulated drive the targets impose as `--target` (any profile name will do: the job
/// crate does not look profiles up).
pub const SIM_PROFILE: &str = "usb3-uas-ssd";

/// Checks what a reader returned for `target` (the imposed target, if any).
pub fn check_result(result: &Result<JobSet, JobError>, target: Option<&Target>) {
    match result {
        Ok(set) => {
            assert!(!set.jobs.is_empty(), "an accepted job set has jobs");
            for job in &set.jobs {
                check_job(job, target);
            }
        }
        Err(error) => check_error(error),
    }
}

fn check_error(error: &JobError) {
    let text = error.to_string();
    assert!(!text.is_empty());
    assert!(
        !text.contains(['\n', '\r']),
        "an error must render on one line: {text:?}"
    );
}

fn check_block_size(size: u64) {
    assert!(
        size > 0 && size <= BLOCK_SIZE_MAX_BYTES,
        "block size {size}"
    );
    assert_eq!(size % SECTOR_BYTES, 0, "block size {size}");
}

fn check_block_sizes(spec: &BlockSizeSpec) {
    match spec {
        BlockSizeSpec::Fixed(size) => check_block_size(*size),
        BlockSizeSpec::Range {
            min_bytes,
            max_bytes,
        } => {
            check_block_size(*min_bytes);
            check_block_size(*max_bytes);
            assert!(min_bytes <= max_bytes);
        }
        BlockSizeSpec::Split(shares) => {
            assert!(!shares.is_empty());
            shares.iter().for_each(|s| check_block_size(s.size_bytes));
            let total: u64 = shares.iter().map(|s| u64::from(s.percent)).sum();
            assert_eq!(total, 100, "bssplit shares {shares:?}");
        }
    }
}

fn check_job(job: &JobSpec, target: Option<&Target>) {
    assert!(!job.name.trim().is_empty());
    assert!((1..=IODEPTH_MAX).contains(&job.iodepth));
    assert!((1..=NUMJOBS_MAX).contains(&job.numjobs));
    let align = job.align_bytes;
    assert!(align.is_power_of_two() && (SECTOR_BYTES..=ALIGN_MAX_BYTES).contains(&align));
    check_block_sizes(&job.block_size_read);
    check_block_sizes(&job.block_size_write);
    assert!(job.read_percent <= 100 && job.random_percent <= 100);
    if let DataPattern::Compressible(percent) = job.data_pattern {
        assert!(percent <= 100);
    }
    assert_eq!(job.offset_bytes % align, 0);
    assert_eq!(job.offset_increment_bytes % align, 0);
    if let Some(size) = job.size_bytes {
        assert!(size >= job.max_block_bytes());
    }
    assert_ne!(job.number_ios, Some(0));
    assert_ne!(job.runtime_ns, Some(0));
    assert!(!job.time_based || job.runtime_ns.is_some());
    assert_ne!(job.rate_iops.read, Some(0));
    assert_ne!(job.rate_iops.write, Some(0));
    assert!(!job.verify || job.read_percent < 100);
    assert_eq!(
        matches!(job.target, Target::Sim(_)),
        job.engine == EngineKind::Sim,
        "a simulated drive goes with the sim engine and only with it"
    );
    match &job.target {
        Target::TempFileIn(_) => assert!(job.size_bytes.is_some()),
        Target::None => assert!(
            job.size_bytes.is_some() || job.runtime_ns.is_some() || job.number_ios.is_some()
        ),
        _ => {}
    }
    if let Some(target) = target {
        assert_eq!(&job.target, target, "the imposed target replaces the job's");
    }
    // The runner adds these without checking: the last worker's region end, and ramp plus
    // runtime on top of the engine clock. A valid job must not overflow them.
    let last_start = u64::from(job.numjobs - 1)
        .checked_mul(job.offset_increment_bytes)
        .and_then(|span| span.checked_add(job.offset_bytes));
    assert!(last_start.is_some(), "worker offsets overflow: {job:?}");
    if let (Some(start), Some(size)) = (last_start, job.size_bytes) {
        assert!(
            start.checked_add(size).is_some(),
            "region end overflows: {job:?}"
        );
    }
    let run = job.runtime_ns.unwrap_or(0).checked_add(job.ramp_time_ns);
    assert!(
        run.is_some_and(|ns| ns <= u64::MAX / 2),
        "ramp_time + runtime leaves no room for the clock: {job:?}"
    );
    // Validation is idempotent: a valid job stays valid and gains no warning twice.
    let mut again = job.clone();
    validate(&mut again).expect("an accepted job validates again");
    assert_eq!(&again, job);
}
