//! Tests of the write record and the read-back checks.
use super::*;
use crate::offsets::Region;
use storlab_job::{BlockSizeShare, BlockSizeSpec, DataPattern, EngineKind};

fn record(granule_bytes: u64, len_bytes: u64) -> WriteRecord {
    let region = Region {
        start_bytes: 1 << 20,
        len_bytes,
    };
    WriteRecord::new(0, 7, DataPattern::Random, granule_bytes, region)
}

#[test]
fn the_granule_divides_every_size_the_job_can_issue() {
    let mut job = JobSpec::new("g", EngineKind::Null, Target::None);
    assert_eq!(granule_bytes(&job), 4096);
    job.block_size_write = BlockSizeSpec::Split(vec![
        BlockSizeShare {
            size_bytes: 64 << 10,
            percent: 50,
        },
        BlockSizeShare {
            size_bytes: 1536,
            percent: 50,
        },
    ]);
    assert_eq!(granule_bytes(&job), 512);
    job.block_size_write = BlockSizeSpec::Range {
        min_bytes: 8192,
        max_bytes: 128 << 10,
    };
    assert_eq!(granule_bytes(&job), 4096);
    job.io_size_bytes = Some(4096 + 1024);
    assert_eq!(granule_bytes(&job), 1024);
    // A sequential writing job: its offsets follow its sizes, not the 4 KiB alignment, and
    // its read size does not count.
    let mut job = JobSpec::new("s", EngineKind::Null, Target::None);
    (job.read_percent, job.random_percent) = (0, 0);
    job.block_size_write = BlockSizeSpec::Fixed(64 << 10);
    job.block_size_read = BlockSizeSpec::Fixed(4096);
    assert_eq!(granule_bytes(&job), 64 << 10);
    job.rw_modifier = storlab_job::RwModifier::SkipBytes(16 << 10);
    assert_eq!(granule_bytes(&job), 16 << 10);
    job.rw_modifier = storlab_job::RwModifier::None;
    (job.numjobs, job.offset_increment_bytes) = (2, 8192);
    assert_eq!(granule_bytes(&job), 8192);
    // Random offsets keep the alignment.
    job.numjobs = 1;
    job.random_percent = 100;
    assert_eq!(granule_bytes(&job), 4096);
}

#[test]
fn extents_are_the_written_runs_cut_at_the_read_size() {
    let mut r = record(512, 64 << 20);
    let base = 1 << 20;
    r.record(base, 4096, 1, &[]);
    r.record(base + 8192, 512, 2, &[]);
    // Far away, in another page of the record; then a run longer than one read.
    r.record(base + (32 << 20), 3 * 65536, 3, &[]);
    let extents: Vec<_> = r.extents(65536).collect();
    assert_eq!(
        extents,
        [
            (base, 4096),
            (base + 8192, 512),
            (base + (32 << 20), 65536),
            (base + (32 << 20) + 65536, 65536),
            (base + (32 << 20) + 131072, 65536),
        ]
    );
    assert_eq!(r.written_bytes(), 4096 + 512 + 3 * 65536);
    // Only the touched pages hold memory.
    assert_eq!(r.generations.touched_pages(), 2);
}

/// A drive that drops a rewrite and keeps the older block: its fio header is intact (fio's
/// `verify_only` passes it), storlab's whole-block comparison names the stale generation.
#[test]
fn a_block_holding_an_older_write_with_a_valid_header_fails() {
    let mut job = JobSpec::new("s", EngineKind::Null, Target::None);
    job.verify = true;
    job.verify_spec = Some(storlab_job::VerifySpec::new(
        storlab_job::VerifyKind::Crc32c,
    ));
    let format = Arc::new(FioFormat::new(job.verify_spec.as_ref().unwrap(), &job));
    let mut r = record(4096, 1 << 20).with_format(Some(format.clone()));
    let at = 1 << 20;
    r.record(at, 4096, 1, &[]);
    let mut old = vec![0u8; 4096];
    r.fill_expected(&mut old, at, 1);
    r.record(at, 4096, 2, &[]);
    assert_eq!(format.check_granule(&old, at), Ok(()));
    let mut scratch = vec![0u8; 4096];
    let error = check_read(&job, &r, &[], at, &old, &mut scratch, None).unwrap_err();
    assert!(
        matches!(&error, RunError::VerifyMismatch(m) if m.generation == 2),
        "{error}"
    );
    let mut current = vec![0u8; 4096];
    r.fill_expected(&mut current, at, 2);
    assert_eq!(
        check_read(&job, &r, &[], at, &current, &mut scratch, None).unwrap(),
        4096
    );
    // A corrupt header is reported in fio's words instead.
    current[20] ^= 1;
    let error = check_read(&job, &r, &[], at, &current, &mut scratch, None).unwrap_err();
    assert!(error.to_string().contains("bad header offset"), "{error}");
    // Checked by a backlog read: the read-back after the writes skips it.
    r.forget(at, 4096);
    assert_eq!(r.extents(65536).count(), 0);
    assert_eq!(r.written_bytes(), 0);
}

#[test]
fn a_rewrite_racing_an_earlier_write_keeps_both_generations_until_settled() {
    let mut r = record(4096, 1 << 20);
    let at = 1 << 20;
    r.record(at, 8192, 1, &[]);
    // Generation 1 still in flight when 2 is issued: either may land.
    r.record(at, 4096, 2, &[1]);
    assert_eq!(r.candidates_at(at), [2, 1]);
    assert!(r.is_ambiguous(at));
    assert_eq!(r.candidates_at(at + 4096), [1]);
    // Generation 3 issued after both completed: only it can be there.
    r.record(at, 4096, 3, &[]);
    assert_eq!(r.candidates_at(at), [3]);
    assert!(!r.is_ambiguous(at));
}
