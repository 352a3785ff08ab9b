//! Checks of where a job's I/O goes and what ends it: alignment, block sizes, the region on its target, and the size, time or count that bounds the run.

use super::{ALIGN_MAX_BYTES, BLOCK_SIZE_MAX_BYTES, SECTOR_BYTES, TIME_MAX_DAYS, TIME_MAX_NS};
use crate::error::{JobError, Location};
use crate::model::{format_share, BlockSizeSpec, JobSpec, Target, PPM_WHOLE};
use crate::size::{format_size, PERCENT_MAX};

pub(super) fn check_align(align_bytes: u64) -> Result<(), String> {
    if !align_bytes.is_power_of_two() {
        return Err("alignment must be a power of two".into());
    }
    if align_bytes < SECTOR_BYTES {
        return Err(format!(
            "alignment must be at least {SECTOR_BYTES} bytes (one sector)"
        ));
    }
    if align_bytes > ALIGN_MAX_BYTES {
        return Err(format!(
            "alignment is above the maximum of {}",
            format_size(ALIGN_MAX_BYTES)
        ));
    }
    Ok(())
}

fn check_block_size(size_bytes: u64) -> Result<(), String> {
    if size_bytes == 0 {
        return Err("block size must not be 0".into());
    }
    if !size_bytes.is_multiple_of(SECTOR_BYTES) {
        return Err(format!(
            "block size {} is not a multiple of {SECTOR_BYTES} bytes (one sector)",
            format_size(size_bytes)
        ));
    }
    if size_bytes > BLOCK_SIZE_MAX_BYTES {
        return Err(format!(
            "block size {} is above the maximum of {}",
            format_size(size_bytes),
            format_size(BLOCK_SIZE_MAX_BYTES)
        ));
    }
    Ok(())
}

pub(super) fn check_block_size_spec(spec: &BlockSizeSpec) -> Result<(), String> {
    match spec {
        BlockSizeSpec::Fixed(size_bytes) => check_block_size(*size_bytes),
        BlockSizeSpec::Range {
            min_bytes,
            max_bytes,
        } => {
            check_block_size(*min_bytes)?;
            check_block_size(*max_bytes)?;
            if min_bytes > max_bytes {
                return Err(format!(
                    "range minimum {} is above its maximum {}",
                    format_size(*min_bytes),
                    format_size(*max_bytes)
                ));
            }
            Ok(())
        }
        BlockSizeSpec::Split(shares) => {
            if shares.is_empty() {
                return Err("a bssplit needs at least one size".into());
            }
            for share in shares {
                check_block_size(share.size_bytes)?;
            }
            let total: u64 = shares.iter().map(|s| u64::from(s.percent)).sum();
            if total != PERCENT_MAX {
                return Err(format!("bssplit shares sum to {total}%, not 100%"));
            }
            Ok(())
        }
    }
}

/// Most `loops` a job may ask for: a million passes over any region is past any benchmark.
const LOOPS_MAX: u32 = 1_000_000;

/// `key`'s `value` refused for `detail`.
fn invalid_value(
    location: &Location,
    key: &str,
    value: u64,
    detail: String,
) -> Result<(), JobError> {
    Err(JobError::invalid(
        location.clone(),
        key,
        Some(value.to_string()),
        detail,
    ))
}

/// Where the regions start (`offset`, `offset_increment`): whole sectors in a fio job, whole
/// alignments in a preset's.
fn check_region_start(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
    let invalid =
        |key: &str, value: u64, detail: String| invalid_value(location, key, value, detail);
    // fio input means fio's semantics: fio starts a region at any `offset` and places its
    // I/O from there (io_u.c: `file_offset` plus whole blocks), so a fio job's region needs
    // whole sectors only (every target storlab drives, a simulated drive included, is
    // addressed in them). A preset keeps its regions on its own alignment.
    let region_align_bytes = if spec.fio_random.is_some() {
        SECTOR_BYTES
    } else {
        spec.align_bytes
    };
    let align = format_size(region_align_bytes);
    let whole = if region_align_bytes == SECTOR_BYTES {
        "whole 512-byte sectors (storlab addresses every target in them)".to_owned()
    } else {
        format!("the {align} alignment")
    };
    if !spec.offset_bytes.is_multiple_of(region_align_bytes) {
        return invalid(
            "offset",
            spec.offset_bytes,
            format!("offset is not a multiple of {whole}"),
        );
    }
    if !spec
        .offset_increment_bytes
        .is_multiple_of(region_align_bytes)
    {
        return invalid(
            "offset_increment",
            spec.offset_increment_bytes,
            format!("offset increment is not a multiple of {whole}"),
        );
    }
    Ok(())
}

/// Offsets and region length: aligned, non-zero, large enough for one block.
pub(super) fn check_region(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
    let invalid =
        |key: &str, value: u64, detail: String| invalid_value(location, key, value, detail);
    check_region_start(spec, location)?;
    if let Some(size_bytes) = spec.size_bytes {
        if size_bytes == 0 {
            return invalid(
                "size",
                0,
                "size must not be 0 (leave it unset to use the whole target)".into(),
            );
        }
        let largest = spec.max_block_bytes();
        if size_bytes < largest {
            return invalid(
                "size",
                size_bytes,
                format!(
                    "region of {} is smaller than the largest block ({})",
                    format_size(size_bytes),
                    format_size(largest)
                ),
            );
        }
    }
    if spec.target_shares.size_ppm == Some(0) {
        return Err(JobError::invalid(
            location.clone(),
            "size",
            Some("0%".into()),
            "size must not be 0% (leave it unset to use the whole target)",
        ));
    }
    if let Some(ppm) = spec
        .target_shares
        .offset_ppm
        .filter(|&ppm| ppm >= PPM_WHOLE)
    {
        return Err(JobError::invalid(
            location.clone(),
            "offset",
            Some(format_share(ppm)),
            "an offset of 100% is the end of the target: nothing is left to run on",
        ));
    }
    // Worker regions are laid out by adding these; a job whose sum passes 2^64 bytes (16 EiB)
    // fits on no device and would overflow the layout arithmetic.
    let Some(last_offset) = spec.last_worker_offset_bytes() else {
        return invalid(
            "offset_increment",
            spec.offset_increment_bytes,
            format!(
                "worker {last} would start beyond 16 EiB (offset + {last} * offset_increment), \
                 past any device",
                last = spec.numjobs - 1
            ),
        );
    };
    if let Some(size_bytes) = spec.size_bytes {
        if last_offset.checked_add(size_bytes).is_none() {
            return invalid(
                "size",
                size_bytes,
                "the last worker's region would end beyond 16 EiB \
                 (offset + (numjobs - 1) * offset_increment + size), past any device"
                    .into(),
            );
        }
    }
    Ok(())
}

/// What ends the run: a size, a time or a count, whichever the target allows.
pub(super) fn check_bounds(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
    if spec.number_ios == Some(0) {
        return Err(JobError::invalid(
            location.clone(),
            "number_ios",
            Some("0".into()),
            "number_ios must be at least 1 (leave it unset for no limit)",
        ));
    }
    if spec.io_size_bytes == Some(0) {
        return Err(JobError::invalid(
            location.clone(),
            "io_size",
            Some("0".into()),
            "io_size must be at least one block (leave it unset to move the region's size)",
        ));
    }
    if !(1..=LOOPS_MAX).contains(&spec.loops) {
        return Err(JobError::invalid(
            location.clone(),
            "loops",
            Some(spec.loops.to_string()),
            format!("loops must be 1 to {LOOPS_MAX}"),
        ));
    }
    if let Some(io_size) = spec.io_size_bytes {
        if io_size.checked_mul(u64::from(spec.loops)).is_none() {
            return Err(JobError::invalid(
                location.clone(),
                "loops",
                Some(spec.loops.to_string()),
                "io_size x loops is beyond 16 EiB",
            ));
        }
    }
    if spec.runtime_ns == Some(0) {
        return Err(JobError::invalid(
            location.clone(),
            "runtime",
            Some("0".into()),
            "runtime must be positive (leave it unset for no time limit)",
        ));
    }
    for (key, time_ns) in [
        ("runtime", spec.runtime_ns.unwrap_or(0)),
        ("ramp_time", spec.ramp_time_ns),
        ("startdelay", spec.start_delay.high_ns),
    ] {
        if time_ns > TIME_MAX_NS {
            return Err(JobError::invalid(
                location.clone(),
                key,
                Some(time_ns.to_string()),
                format!("{key} is above the maximum of {TIME_MAX_DAYS}d (ten years)"),
            ));
        }
    }
    if spec.time_based && spec.runtime_ns.is_none() {
        return Err(JobError::invalid(
            location.clone(),
            "time_based",
            Some("1".into()),
            "time_based needs a runtime (e.g. runtime=60)",
        ));
    }
    check_target_bounds(spec, location)
}

/// What the target bounds: a temporary file needs a size in bytes, and a job without a target
/// needs some other limit.
fn check_target_bounds(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
    if matches!(spec.target, Target::TempFileIn(_)) && spec.size_bytes.is_some() {
        let shares = &spec.target_shares;
        let share = [
            ("offset", shares.offset_ppm),
            ("offset_increment", shares.offset_increment_ppm),
        ]
        .into_iter()
        .find_map(|(key, ppm)| ppm.map(|ppm| (key, ppm)));
        if let Some((key, ppm)) = share {
            return Err(JobError::invalid(
                location.clone(),
                key,
                Some(format_share(ppm)),
                "a share (%) is of a target that exists; a temporary test file is made to the \
                 job's size, so give this in bytes, or name a target with filename=",
            ));
        }
    }
    match &spec.target {
        // A temporary file does not exist yet: only `size` says how large to make it.
        Target::TempFileIn(_) if spec.size_bytes.is_none() => Err(JobError::invalid(
            location.clone(),
            "size",
            spec.target_shares.size_ppm.map(format_share),
            if spec.target_shares.size_ppm.is_some() {
                "a temporary test file needs a size in bytes (e.g. size=1G): a share (%) is of a \
                 target that exists, so name one with filename="
            } else {
                "a temporary test file needs a size (e.g. size=1G), or name an existing file with filename="
            },
        )),
        // fio's null engine opens no file, so a fio job on it has no size but `size` (or
        // `filesize`): fio 3.33 fails it whatever else bounds the run (filesetup.c,
        // `setup_files`: "you need to specify size=", exit 1), `io_size`, `runtime` and
        // `number_ios` included. storlab's presets keep the wider rule below.
        Target::None
            if spec.fio_random.is_some()
                && spec.size_bytes.is_none()
                && spec.target_shares.size_ppm.is_none()
                && !spec.fill_device =>
        {
            Err(JobError::invalid(
                location.clone(),
                "size",
                None,
                "ioengine=null has no file to take a size from: give size= (fio 3.33 refuses \
                 the job too: \"you need to specify size=\")",
            ))
        }
        // Nothing to run out of: without a limit the job would never end.
        Target::None
            if spec.size_bytes.is_none()
                && spec.target_shares.size_ppm.is_none()
                && spec.io_size_bytes.is_none()
                && spec.runtime_ns.is_none()
                && spec.number_ios.is_none() =>
        {
            Err(JobError::whole_job(
                location.clone(),
                "nothing bounds the run: set size, runtime or number_ios",
            ))
        }
        // Paths and simulated drives have a size, known only when they are opened.
        _ => Ok(()),
    }
}
