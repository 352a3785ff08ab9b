//! Checks of what a job writes and checks: fio's verify settings and dedupe.

use super::{push_once, DEDUPE_WORKING_SET_PAGES_MAX};
use crate::error::{JobError, Location};
use crate::model::JobSpec;
use crate::size::{format_size, PERCENT_MAX};

/// fio's verify blocks fit: each header interval divides every block the job writes (so a
/// header sits at every multiple of it), and holds its header. A `verify_interval` fio 3.33
/// would change (larger than the smallest write, or not dividing the smallest and largest) is
/// changed as fio does, with a warning; where storlab's headers cannot sit where fio's do, a
/// warning says the files are not interchangeable with fio's.
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
    } else if set_bytes.is_none() && granule_bytes != fio_interval_bytes {
        let min_write_bytes = spec.block_size_write.min_bytes();
        // Random offsets at storlab's default alignment, finer than fio's (the smallest block).
        let alignment_hint = if !spec.align_given && spec.align_bytes < min_write_bytes {
            format!(", as does blockalign={min_write_bytes} (fio's default) in storlab's job")
        } else {
            String::new()
        };
        push_once(
            &mut spec.warnings,
            format!(
                "verify headers every {granule_bytes} bytes (what divides every offset and length \
             of this job), where fio 3.33 writes one every {fio_interval_bytes} bytes of each \
             block: fio's verify_only cannot check these files, nor storlab's fio's; \
             verify_interval={granule_bytes} in both jobs makes them the same{alignment_hint}"
            ),
        );
    }
    let Some(verify) = &spec.verify_spec else {
        return Ok(());
    };
    let interval_bytes = verify.interval_bytes.unwrap_or(granule_bytes);
    let (key, value) = match verify.interval_bytes {
        // As the user wrote it, before fio's change.
        Some(bytes) => ("verify_interval", set_bytes.unwrap_or(bytes).to_string()),
        None => ("bs", granule_bytes.to_string()),
    };
    if !granule_bytes.is_multiple_of(interval_bytes) {
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
    if offset_bytes > 0 && offset_bytes < verify.kind.header_bytes() {
        return Err(JobError::invalid(
            location.clone(),
            "verify_offset",
            Some(offset_bytes.to_string()),
            format!(
                "the header is swapped with the bytes at verify_offset, so it must be at least \
                 the header's {} bytes",
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
    let Some(size_bytes) = spec.size_bytes else {
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
    let pages = dedupe.working_set_blocks(size_bytes, block_bytes);
    if pages == 0 {
        return invalid(
            "dedupe_working_set_percentage",
            dedupe.working_set_percent.to_string(),
            format!(
                "the working set ({}% of size {}) holds no whole {} block",
                dedupe.working_set_percent,
                format_size(size_bytes),
                format_size(block_bytes)
            ),
        );
    }
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
