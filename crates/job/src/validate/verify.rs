//! Checks of what a job writes and checks: fio's verify settings and dedupe.

use super::{push_once, DEDUPE_WORKING_SET_PAGES_MAX};
use crate::error::{JobError, Location};
use crate::model::{EngineKind, JobSpec};
use crate::size::PERCENT_MAX;

/// fio's `struct verify_header` (verify.h), the least `verify_offset` fio takes.
const FIO_COMMON_HEADER_BYTES: u64 = 40;

/// fio's verify blocks fit: each header interval divides every block the job writes (so a
/// header sits at every multiple of it), and holds its header. A `verify_interval` fio 3.33
/// would change (larger than the smallest write, or not dividing the smallest and largest) is
/// changed as fio does, with a warning. Headers sit where fio's do, one interval spanning
/// several of storlab's granules where the job's offsets are finer than its writes.
pub(super) fn check_verify(spec: &mut JobSpec, location: &Location) -> Result<(), JobError> {
    let Some(set_bytes) = spec.verify_spec.as_ref().map(|v| v.interval_bytes) else {
        return Ok(());
    };
    let fio_interval_bytes = spec.fio_verify_interval_bytes(set_bytes);
    let granule_bytes = spec.verify_granule_bytes();
    if let Some(set) = set_bytes.filter(|set| *set != fio_interval_bytes) {
        push_once(
            &mut spec.warnings,
            format!(
                "verify_interval={set}: fio 3.33 uses {fio_interval_bytes} for these block sizes \
             (no larger than the smallest write, dividing the smallest and the largest), and so \
             does storlab"
            ),
        );
        if let Some(verify) = spec.verify_spec.as_mut() {
            verify.interval_bytes = Some(fio_interval_bytes);
        }
    }
    let Some(verify) = &spec.verify_spec else {
        return Ok(());
    };
    let interval_bytes = verify.interval_bytes.unwrap_or(fio_interval_bytes);
    let (key, value) = match verify.interval_bytes {
        // As the user wrote it, before fio's change.
        Some(bytes) => ("verify_interval", set_bytes.unwrap_or(bytes).to_string()),
        None => ("bs", granule_bytes.to_string()),
    };
    // An interval longer than the granule spans several, each header where fio puts it: every
    // interval from the write's start (storlab's runner, `FioFormat::fill_across_granules`),
    // so it must divide every write (fio's last header would check past a write's end).
    let spans = interval_bytes.is_multiple_of(granule_bytes)
        && write_sizes_gcd_bytes(spec).is_multiple_of(interval_bytes);
    if !granule_bytes.is_multiple_of(interval_bytes) && !spans {
        return Err(JobError::invalid(
            location.clone(),
            key,
            Some(value),
            format!(
                "verify_interval must divide every block size and the alignment \
                 ({granule_bytes} bytes here), as fio's blocksize must divide it evenly"
            ),
        ));
    }
    let offset_bytes = verify.header_offset_bytes;
    // fio's own floor is its common header (options.c `minval`); above it, a swap that overlaps
    // the header's checksum part loses data bytes (verify.c `memswp`), and every block then
    // fails fio's verify (error 84) — except on the null engine, which reads back nothing.
    let swap_overlaps =
        offset_bytes < verify.kind.header_bytes() && spec.engine != EngineKind::Null;
    if offset_bytes > 0 && (offset_bytes < FIO_COMMON_HEADER_BYTES || swap_overlaps) {
        return Err(JobError::invalid(
            location.clone(),
            "verify_offset",
            Some(offset_bytes.to_string()),
            format!(
                "the header is swapped with the bytes at verify_offset, so it must be at least \
                 the header's {} bytes (fio's swap of an overlapping one loses data and fails \
                 every block)",
                verify.kind.header_bytes()
            ),
        ));
    }
    let header_bytes = verify.kind.header_bytes() + offset_bytes;
    if header_bytes > interval_bytes {
        return Err(JobError::invalid(
            location.clone(),
            key,
            Some(value),
            format!(
                "verify={} needs {header_bytes} bytes of header (with verify_offset) in each \
                 {interval_bytes}-byte block",
                verify.kind.fio_name()
            ),
        ));
    }
    Ok(())
}

/// The largest size that divides every write `spec` can issue (`bsrange` draws multiples of
/// its smallest).
fn write_sizes_gcd_bytes(spec: &JobSpec) -> u64 {
    match &spec.block_size_write {
        crate::model::BlockSizeSpec::Fixed(size) => *size,
        crate::model::BlockSizeSpec::Range { min_bytes, .. } => *min_bytes,
        crate::model::BlockSizeSpec::Split(shares) => shares
            .iter()
            .fold(0, |g, s| crate::model::gcd(g, s.size_bytes)),
    }
}

/// fio's dedupe checks (init.c, `fixup_options`), and storlab's own where fio would divide by
/// zero or exhaust memory: the working set needs `size`, at least one whole block and room
/// next to the repeats.
pub(super) fn check_dedupe(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
    let Some(dedupe) = spec.dedupe else {
        return Ok(());
    };
    if dedupe.mode != crate::model::DedupeMode::WorkingSet {
        return Ok(());
    }
    let invalid = |key: &str, value: String, detail: String| {
        Err(JobError::invalid(
            location.clone(),
            key,
            Some(value),
            detail,
        ))
    };
    // fio's `o->size` as written (`filesize` alone leaves it 0 there: no working set).
    let Some(size_bytes) = dedupe.size_as_written_bytes else {
        return invalid(
            "dedupe_mode",
            "working_set".into(),
            "the dedupe working set is a share of size, so the job needs size in bytes (as fio \
             requires)"
                .into(),
        );
    };
    if u64::from(dedupe.working_set_percent) + u64::from(dedupe.percent) > PERCENT_MAX {
        return invalid(
            "dedupe_working_set_percentage",
            dedupe.working_set_percent.to_string(),
            format!(
                "with dedupe_percentage={} the repeats and the working set (unique buffers) \
                 need more than 100% of size, as fio refuses",
                dedupe.percent
            ),
        );
    }
    let block_bytes = spec.block_size_write.min_bytes().max(1);
    // A working set of no whole block is fio's set of one: dedupe.c writes its first state
    // whatever the count, and `rand_between(0, count - 1)` over 32 bits wraps to draw index 0
    // (with `tausworthe64` fio aborts instead: `keys/buffers.rs` refuses that).
    let pages = dedupe.working_set_blocks(size_bytes, block_bytes);
    if pages > DEDUPE_WORKING_SET_PAGES_MAX {
        return invalid(
            "dedupe_working_set_percentage",
            dedupe.working_set_percent.to_string(),
            format!(
                "the working set holds {pages} blocks; storlab keeps one generator state per \
                 block (as fio) and refuses more than {DEDUPE_WORKING_SET_PAGES_MAX}"
            ),
        );
    }
    Ok(())
}

/// Verify with what it cannot check: a fixed `buffer_pattern` (storlab's own check), a trim
/// workload, or a job that only reads.
pub(super) fn check_verify_combinations(
    spec: &JobSpec,
    location: &Location,
) -> Result<(), JobError> {
    if spec.verify && spec.verify_spec.is_none() && spec.buffer_pattern.is_some() {
        return Err(JobError::unsupported(
            location.clone(),
            "buffer_pattern",
            None,
            "storlab's verify writes and checks its own data for every write (each rewrite \
             differs); a fixed pattern cannot be checked that way, so drop verify or the pattern",
        ));
    }
    // fio's null engine fakes its I/O (FIO_FAKEIO): its verify checks nothing, so a trim
    // leaves no block undefined there, and the read-back is fio's whatever was trimmed.
    let checks_data = spec.engine != crate::model::EngineKind::Null;
    if spec.trim != crate::model::TrimMode::None
        && (spec.verify || spec.verify_spec.is_some())
        && checks_data
    {
        return Err(JobError::unsupported(
            location.clone(),
            "verify",
            None,
            "verify with a trim workload (rw=trim, randtrim, trimwrite, randtrimwrite) is not \
             supported: storlab's read-back does not know which blocks a trim left undefined",
        ));
    }
    if spec.verify && spec.read_percent == 100 {
        return Err(JobError::invalid(
            location.clone(),
            "verify",
            Some("1".into()),
            "verify needs writes to check, but the job only reads",
        ));
    }
    Ok(())
}
