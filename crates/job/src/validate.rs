//! `validate`: checks a `JobSpec` for mistakes (one clear message each) and records warnings.
//!
//! Errors name the key the user would change (`iodepth`, `bs`, `size`...) and the offending value
//! as storlab holds it; the readers ([`crate::fio`], [`crate::flags`]) swap in the file line or
//! flag and the value as the user typed it. Warnings are non-fatal and go into `spec.warnings`.

use crate::error::{JobError, Location};
use crate::model::{
    format_share, BlockSizeSpec, DataPattern, EngineKind, JobSpec, OpenSync, RwModifier, Target,
    DEFAULT_ALIGN_BYTES, PPM_WHOLE,
};
use crate::size::{format_block_size_spec, format_size, NS_PER_S, PERCENT_MAX};

/// Deepest queue a worker may ask for; beyond this no device or engine does anything useful.
pub const IODEPTH_MAX: u32 = 65_536;
/// Most workers one job may start (each is a thread).
pub const NUMJOBS_MAX: u32 = 1_024;
/// Smallest unit of I/O: one legacy disk sector. Block sizes are multiples of it.
pub const SECTOR_BYTES: u64 = 512;
/// Largest single I/O storlab issues; engines size their buffers by it.
pub const BLOCK_SIZE_MAX_BYTES: u64 = 64 << 20;
/// Largest alignment accepted (a whole erase block of the largest SSDs is far smaller).
pub const ALIGN_MAX_BYTES: u64 = BLOCK_SIZE_MAX_BYTES;
/// Longest `runtime`, `ramp_time` and `startdelay` accepted: ten years, far beyond any measurement, and small
/// enough that the runner adds both to its clock without overflow.
pub const TIME_MAX_NS: u64 = TIME_MAX_DAYS * 24 * 3600 * NS_PER_S;
/// [`TIME_MAX_NS`] in days, the unit its message gives it in.
const TIME_MAX_DAYS: u64 = 3650;
/// Most blocks a dedupe working set may hold: one fio generator state (at most 40 bytes) per
/// block, so at most 640 MiB of states, where fio would allocate the same without a bound.
pub const DEDUPE_WORKING_SET_PAGES_MAX: u64 = 16 << 20;
/// The flash page size the alignment warning talks about.
const FLASH_PAGE_BYTES: u64 = DEFAULT_ALIGN_BYTES;

/// Checks `spec`, returning the first mistake; on success, pushes warnings into `spec.warnings`
/// (each warning at most once, so validating twice is harmless). Normalises nothing else.
pub fn validate(spec: &mut JobSpec) -> Result<(), JobError> {
    let location = Location::Job(spec.name.clone());
    let invalid = |key: &str, value: String, detail: String| {
        Err(JobError::invalid(
            location.clone(),
            key,
            Some(value),
            detail,
        ))
    };

    if spec.name.trim().is_empty() {
        return Err(JobError::invalid(
            location,
            "name",
            None,
            "a job needs a name",
        ));
    }
    if spec.iodepth == 0 {
        return invalid(
            "iodepth",
            "0".into(),
            "queue depth must be at least 1".into(),
        );
    }
    if spec.iodepth > IODEPTH_MAX {
        return invalid(
            "iodepth",
            spec.iodepth.to_string(),
            format!("queue depth is above the maximum of {IODEPTH_MAX}"),
        );
    }
    if spec.numjobs == 0 {
        return invalid(
            "numjobs",
            "0".into(),
            "a job needs at least one worker".into(),
        );
    }
    if spec.numjobs > NUMJOBS_MAX {
        return invalid(
            "numjobs",
            spec.numjobs.to_string(),
            format!("worker count is above the maximum of {NUMJOBS_MAX}"),
        );
    }
    check_align(spec.align_bytes)
        .or_else(|detail| invalid("blockalign", spec.align_bytes.to_string(), detail))?;
    for spec_of_direction in [&spec.block_size_read, &spec.block_size_write] {
        check_block_size_spec(spec_of_direction)
            .or_else(|detail| invalid("bs", format_block_size_spec(spec_of_direction), detail))?;
    }
    if u64::from(spec.read_percent) > PERCENT_MAX {
        return invalid(
            "rwmixread",
            spec.read_percent.to_string(),
            "read share is above 100%".into(),
        );
    }
    let random_share_max = spec.random_percent.max(spec.random_percent_writes());
    if u64::from(random_share_max) > PERCENT_MAX {
        return invalid(
            "percentage_random",
            random_share_max.to_string(),
            "random share is above 100%".into(),
        );
    }
    if let DataPattern::Compressible(percent) = spec.data_pattern {
        if u64::from(percent) > PERCENT_MAX {
            return invalid(
                "data_pattern",
                format!("compressible:{percent}"),
                "compressible share is above 100%".into(),
            );
        }
    }
    check_region(spec, &location)?;
    check_bounds(spec, &location)?;
    for (rate, key, unit, direction) in [
        (spec.rate_iops.read, "rate_iops", "I/O", "read"),
        (spec.rate_iops.write, "rate_iops", "I/O", "write"),
        (spec.rate_bytes.read, "rate", "byte", "read"),
        (spec.rate_bytes.write, "rate", "byte", "write"),
    ] {
        if rate == Some(0) {
            return invalid(
                key,
                "0".into(),
                format!(
                    "the {direction} rate must be at least 1 {unit} per second (leave it empty for no limit)"
                ),
            );
        }
    }
    // fio refuses a minimum above the ceiling ("minimum rate exceeds rate").
    for (minimum, ceiling, direction) in [
        (spec.rate_iops_min.read, spec.rate_iops.read, "read"),
        (spec.rate_iops_min.write, spec.rate_iops.write, "write"),
    ] {
        if let (Some(minimum), Some(ceiling)) = (minimum, ceiling) {
            if minimum > ceiling {
                return invalid(
                    "rate_iops_min",
                    minimum.to_string(),
                    format!(
                        "the {direction} minimum exceeds rate_iops={ceiling}, as fio refuses it"
                    ),
                );
            }
        }
    }
    check_engine_and_target(spec, &location)?;
    check_sync_and_think(spec, &location)?;
    check_verify(spec, &location)?;
    check_dedupe(spec, &location)?;
    if spec.verify && spec.verify_spec.is_none() && spec.buffer_pattern.is_some() {
        return Err(JobError::unsupported(
            location,
            "buffer_pattern",
            None,
            "storlab's verify writes and checks its own data for every write (each rewrite \
             differs); a fixed pattern cannot be checked that way, so drop verify or the pattern",
        ));
    }
    if spec.trim != crate::model::TrimMode::None && (spec.verify || spec.verify_spec.is_some()) {
        return Err(JobError::unsupported(
            location,
            "verify",
            None,
            "verify with a trim workload (rw=trim, randtrim, trimwrite, randtrimwrite) is not \
             supported: storlab's read-back does not know which blocks a trim left undefined",
        ));
    }
    if spec.verify && spec.read_percent == 100 {
        return Err(JobError::invalid(
            location,
            "verify",
            Some("1".into()),
            "verify needs writes to check, but the job only reads",
        ));
    }
    push_warnings(spec);
    Ok(())
}

/// fio's verify blocks fit: each header interval divides every block the job writes (so a
/// header sits at every multiple of it), and holds its header. A `verify_interval` fio 3.33
/// would change (larger than the smallest write, or not dividing the smallest and largest) is
/// changed as fio does, with a warning; where storlab's headers cannot sit where fio's do, a
/// warning says the files are not interchangeable with fio's.
fn check_verify(spec: &mut JobSpec, location: &Location) -> Result<(), JobError> {
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
fn check_dedupe(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
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

fn check_align(align_bytes: u64) -> Result<(), String> {
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

fn check_block_size_spec(spec: &BlockSizeSpec) -> Result<(), String> {
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

/// Offsets and region length: aligned, non-zero, large enough for one block.
fn check_region(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
    let invalid = |key: &str, value: u64, detail: String| {
        Err(JobError::invalid(
            location.clone(),
            key,
            Some(value.to_string()),
            detail,
        ))
    };
    let align = format_size(spec.align_bytes);
    if !spec.offset_bytes.is_multiple_of(spec.align_bytes) {
        return invalid(
            "offset",
            spec.offset_bytes,
            format!("offset is not a multiple of the {align} alignment"),
        );
    }
    if !spec.offset_increment_bytes.is_multiple_of(spec.align_bytes) {
        return invalid(
            "offset_increment",
            spec.offset_increment_bytes,
            format!("offset increment is not a multiple of the {align} alignment"),
        );
    }
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
fn check_bounds(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
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

fn check_engine_and_target(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
    match (&spec.target, spec.engine) {
        (Target::Sim(_), EngineKind::Sim) => Ok(()),
        (Target::Sim(profile), engine) => Err(JobError::invalid(
            location.clone(),
            "ioengine",
            Some(engine.as_str().into()),
            format!("filename=sim:{profile} is a simulated drive and needs ioengine=sim"),
        )),
        (_, EngineKind::Sim) => Err(JobError::invalid(
            location.clone(),
            "ioengine",
            Some("sim".into()),
            "ioengine=sim needs a simulated drive: filename=sim:PROFILE",
        )),
        _ => Ok(()),
    }
}

/// `fsync` and friends run on every engine that can flush (the simulated stacks send SCSI
/// SYNCHRONIZE CACHE / ATA FLUSH CACHE EXT); `sync=1` / `sync=dsync` on every engine whose
/// writes go through the target's descriptor, which is opened with `O_SYNC` / `O_DSYNC` as fio
/// does (simulated drives flush after each write). Not `mmap`: stores into a mapping stay
/// asynchronous whatever the descriptor's flags (fio runs them so all the same).
/// `thinktime_spin` is part of `thinktime`.
fn check_sync_and_think(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
    let sync = &spec.sync;
    if let Some(replay) = &spec.replay {
        if replay.trace.counts() == (0, 0, 0) {
            return Err(JobError::invalid(
                location.clone(),
                "replay_skip",
                None,
                "leaves none of the trace's reads, writes and trims to replay",
            ));
        }
    }
    let unsynchronisable = match spec.engine {
        EngineKind::Mmap => Some(
            "ioengine=mmap writes by storing into a mapping, which O_SYNC / O_DSYNC do not make \
             synchronous (fio runs it, unsynchronised); fsync=1 (or direct=1, which msyncs each \
             I/O) makes every write stable before the next",
        ),
        EngineKind::Null => {
            Some("ioengine=null writes nothing that O_SYNC / O_DSYNC could make stable")
        }
        _ => None,
    };
    if let (Some(reason), true) = (unsynchronisable, sync.open_sync != OpenSync::None) {
        return Err(JobError::unsupported(
            location.clone(),
            "sync",
            Some(
                match sync.open_sync {
                    OpenSync::Dsync => "dsync",
                    _ => "sync",
                }
                .into(),
            ),
            reason,
        ));
    }
    let hole = match spec.rw_modifier {
        RwModifier::SkipBytes(skip) => Some((skip, format!("{}:{skip}", spec.rw_name()))),
        RwModifier::BackBytes(back) => Some((back, format!("{}:-{back}", spec.rw_name()))),
        _ => None,
    };
    if let Some((skip, shown)) = hole {
        if skip % SECTOR_BYTES != 0 {
            return Err(JobError::invalid(
                location.clone(),
                "rw",
                Some(shown),
                format!("the hole after each I/O must be a multiple of {SECTOR_BYTES} bytes (one sector)"),
            ));
        }
        let one_size = match (&spec.block_size_read, &spec.block_size_write) {
            (BlockSizeSpec::Fixed(read), BlockSizeSpec::Fixed(write)) => read == write,
            _ => false,
        };
        if !one_size {
            return Err(JobError::unsupported(
                location.clone(),
                "rw",
                Some(shown),
                "storlab skips holes between I/Os of one block size only",
            ));
        }
        if let RwModifier::BackBytes(_) = spec.rw_modifier {
            // Backward holes are drawn by fio's own sequence (io_u.c, `get_next_seq_offset`),
            // which storlab follows for plain sequential regions only.
            let unsupported = if spec.trim != crate::model::TrimMode::None {
                Some("storlab runs backward holes with reads and writes only, not trims")
            } else if spec.strided_zones.is_some() {
                Some("storlab runs backward holes over a whole region, not strided zones")
            } else if spec.verify && spec.loops > 1 {
                Some("storlab does not verify backward holes over several loops")
            } else {
                None
            };
            if let Some(reason) = unsupported {
                return Err(JobError::unsupported(
                    location.clone(),
                    "rw",
                    Some(shown),
                    reason,
                ));
            }
        }
    }
    let think = &spec.think;
    if think.spin_ns > think.think_ns && think.think_ns > 0 {
        return Err(JobError::invalid(
            location.clone(),
            "thinktime_spin",
            Some(format!("{}us", think.spin_ns / 1_000)),
            format!(
                "the spin is part of thinktime ({}us) and cannot be longer",
                think.think_ns / 1_000
            ),
        ));
    }
    Ok(())
}

fn push_warnings(spec: &mut JobSpec) {
    let mut warnings = Vec::new();
    if !spec.random_distribution.is_random()
        && spec.random_percent == 0
        && spec.random_percent_writes() == 0
    {
        warnings.push(format!(
            "random_distribution has no effect with sequential rw={}; use a rand* mode (fio \
             ignores it there too)",
            spec.rw_name()
        ));
    }
    let think = &spec.think;
    if think.think_ns == 0
        && (think.spin_ns > 0 || think.every_ios.is_some() || think.every_io_ns > 0)
    {
        warnings.push(
            "thinktime_spin, thinktime_blocks and thinktime_iotime have no effect without \
             thinktime (as in fio)"
                .to_string(),
        );
    }
    if spec.align_bytes < FLASH_PAGE_BYTES {
        warnings.push(format!(
            "alignment {}: a {page} write may straddle two {page} flash pages, costing a \
             read-modify-write on SSDs; storlab's default is {page}",
            format_size(spec.align_bytes),
            page = format_size(FLASH_PAGE_BYTES),
        ));
    }
    for (direction, sizes) in [
        ("read", &spec.block_size_read),
        ("write", &spec.block_size_write),
    ] {
        let off_grid: Vec<u64> = block_sizes_of(sizes)
            .into_iter()
            .filter(|size| size % spec.align_bytes != 0)
            .collect();
        if let Some(&first) = off_grid.first() {
            warnings.push(format!(
                "{direction} block size {} is not a multiple of the {} alignment, so such I/Os end \
                 part-way into a page",
                format_size(first),
                format_size(spec.align_bytes)
            ));
        }
    }
    if spec.dedupe.is_some() && spec.verify {
        warnings.push(
            "dedupe_percentage has no effect with verify: the verify data replaces each write \
             buffer (as in fio, whose populate_verify_io_u refills it)"
                .to_string(),
        );
    }
    if spec.iodepth > 1 && !spec.engine.queued() {
        warnings.push(format!(
            "iodepth={} has no effect with ioengine={}, which keeps one I/O in flight per \
             worker; use ioengine=io_uring or libaio, or numjobs, for concurrency",
            spec.iodepth,
            spec.engine.as_str()
        ));
    }
    for warning in warnings {
        push_once(&mut spec.warnings, warning);
    }
}

/// Adds `warning` unless the job already carries it: validating a job again (a preset
/// re-checked after overrides, a clone) must not repeat its warnings.
fn push_once(warnings: &mut Vec<String>, warning: String) {
    if !warnings.contains(&warning) {
        warnings.push(warning);
    }
}

fn block_sizes_of(spec: &BlockSizeSpec) -> Vec<u64> {
    match spec {
        BlockSizeSpec::Fixed(b) => vec![*b],
        BlockSizeSpec::Range {
            min_bytes,
            max_bytes,
        } => vec![*min_bytes, *max_bytes],
        BlockSizeSpec::Split(shares) => shares.iter().map(|s| s.size_bytes).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BlockSizeShare, RateIops};
    use std::path::PathBuf;

    fn sized_job() -> JobSpec {
        let mut spec = JobSpec::new(
            "t",
            EngineKind::Psync,
            Target::TempFileIn(PathBuf::from(".")),
        );
        spec.size_bytes = Some(1 << 20);
        spec
    }

    /// Applies `change` to a valid job and returns the one-line error text.
    fn error_of(change: impl FnOnce(&mut JobSpec)) -> String {
        let mut spec = sized_job();
        change(&mut spec);
        validate(&mut spec)
            .expect_err("job should be rejected")
            .to_string()
    }

    /// fio's dedupe checks (init.c) and storlab's bounds on the working set, each its own line
    /// (a working set without `size` is the CLI test's: a sized job cannot lose its size here).
    #[test]
    fn dedupe_working_sets_are_checked_as_fio_checks_them() {
        let working_set = |percent, working_set_percent| {
            move |spec: &mut JobSpec| {
                spec.dedupe = Some(crate::model::DedupeSpec {
                    percent,
                    mode: crate::model::DedupeMode::WorkingSet,
                    working_set_percent,
                    global: false,
                })
            }
        };
        let mut spec = sized_job();
        working_set(50, 50)(&mut spec);
        validate(&mut spec).unwrap();
        for (change, expected) in [
            (
                Box::new(working_set(60, 50)) as Box<dyn FnOnce(&mut JobSpec)>,
                "need more than 100% of size",
            ),
            (Box::new(working_set(50, 0)), "holds no whole 4 KiB block"),
            (
                Box::new(move |spec: &mut JobSpec| {
                    working_set(20, 80)(spec);
                    spec.size_bytes = Some(1 << 40);
                }),
                "refuses more than",
            ),
        ] {
            let text = error_of(change);
            assert!(text.contains(expected), "{text}");
        }
    }

    #[test]
    fn defaults_are_valid_without_warnings() {
        let mut spec = sized_job();
        validate(&mut spec).unwrap();
        assert!(spec.warnings.is_empty(), "{:?}", spec.warnings);
    }

    #[test]
    fn each_mistake_has_its_own_message() {
        let share = |size_bytes, percent| BlockSizeShare {
            size_bytes,
            percent,
        };
        type Change = Box<dyn FnOnce(&mut JobSpec)>;
        let cases: Vec<(Change, &str)> = vec![
            (Box::new(|s| s.iodepth = 0), "job [t]: iodepth=0: queue depth must be at least 1"),
            (Box::new(|s| s.iodepth = 65_537), "job [t]: iodepth=65537: queue depth is above the maximum of 65536"),
            (Box::new(|s| s.numjobs = 0), "job [t]: numjobs=0: a job needs at least one worker"),
            (Box::new(|s| s.numjobs = 2000), "job [t]: numjobs=2000: worker count is above the maximum of 1024"),
            (Box::new(|s| s.block_size_read = BlockSizeSpec::Fixed(0)), "job [t]: bs=0: block size must not be 0"),
            (Box::new(|s| s.block_size_write = BlockSizeSpec::Fixed(1000)), "job [t]: bs=1000: block size 1000 B is not a multiple of 512 bytes (one sector)"),
            (Box::new(|s| s.block_size_read = BlockSizeSpec::Fixed(128 << 20)), "job [t]: bs=134217728: block size 128 MiB is above the maximum of 64 MiB"),
            (Box::new(|s| s.align_bytes = 3000), "job [t]: blockalign=3000: alignment must be a power of two"),
            (Box::new(|s| s.align_bytes = 256), "job [t]: blockalign=256: alignment must be at least 512 bytes (one sector)"),
            (
                Box::new(|s| s.block_size_read = BlockSizeSpec::Range { min_bytes: 65536, max_bytes: 4096 }),
                "job [t]: bs=65536-4096: range minimum 64 KiB is above its maximum 4 KiB",
            ),
            (
                Box::new(move |s| s.block_size_read = BlockSizeSpec::Split(vec![share(4096, 50), share(65536, 40)])),
                "job [t]: bs=4096/50:65536/40: bssplit shares sum to 90%, not 100%",
            ),
            (Box::new(|s| s.read_percent = 101), "job [t]: rwmixread=101: read share is above 100%"),
            (Box::new(|s| s.random_percent = 200), "job [t]: percentage_random=200: random share is above 100%"),
            (
                Box::new(|s| s.data_pattern = DataPattern::Compressible(150)),
                "job [t]: data_pattern=compressible:150: compressible share is above 100%",
            ),
            (
                Box::new(|s| { s.time_based = true; s.runtime_ns = Some(0) }),
                "job [t]: runtime=0: runtime must be positive (leave it unset for no time limit)",
            ),
            (Box::new(|s| s.time_based = true), "job [t]: time_based=1: time_based needs a runtime (e.g. runtime=60)"),
            (Box::new(|s| s.size_bytes = Some(0)), "job [t]: size=0: size must not be 0 (leave it unset to use the whole target)"),
            (Box::new(|s| s.size_bytes = Some(2048)), "job [t]: size=2048: region of 2 KiB is smaller than the largest block (4 KiB)"),
            (
                Box::new(|s| s.size_bytes = None),
                "job [t]: size: a temporary test file needs a size (e.g. size=1G), or name an existing file with filename=",
            ),
            (
                Box::new(|s| { s.target = Target::None; s.engine = EngineKind::Null; s.size_bytes = None }),
                "job [t]: nothing bounds the run: set size, runtime or number_ios",
            ),
            (
                Box::new(|s| s.rate_iops = RateIops { read: None, write: Some(0) }),
                "job [t]: rate_iops=0: the write rate must be at least 1 I/O per second (leave it empty for no limit)",
            ),
            (Box::new(|s| s.offset_bytes = 1000), "job [t]: offset=1000: offset is not a multiple of the 4 KiB alignment"),
            (Box::new(|s| s.number_ios = Some(0)), "job [t]: number_ios=0: number_ios must be at least 1 (leave it unset for no limit)"),
            (
                Box::new(|s| s.target = Target::Sim("usb3-uas-ssd".into())),
                "job [t]: ioengine=psync: filename=sim:usb3-uas-ssd is a simulated drive and needs ioengine=sim",
            ),
            (Box::new(|s| s.engine = EngineKind::Sim), "job [t]: ioengine=sim: ioengine=sim needs a simulated drive: filename=sim:PROFILE"),
            (Box::new(|s| s.verify = true), "job [t]: verify=1: verify needs writes to check, but the job only reads"),
            (Box::new(|s| s.ramp_time_ns = TIME_MAX_NS + 1), "job [t]: ramp_time=315360000000000001: ramp_time is above the maximum of 3650d (ten years)"),
            (Box::new(|s| s.runtime_ns = Some(u64::MAX)), "job [t]: runtime=18446744073709551615: runtime is above the maximum of 3650d (ten years)"),
            (Box::new(|s| { s.numjobs = 2; s.offset_increment_bytes = 1 << 63; s.offset_bytes = 1 << 63 }), "job [t]: offset_increment=9223372036854775808: worker 1 would start beyond 16 EiB (offset + 1 * offset_increment), past any device"),
            (Box::new(|s| s.offset_bytes = u64::MAX - 4095), "job [t]: size=1048576: the last worker's region would end beyond 16 EiB (offset + (numjobs - 1) * offset_increment + size), past any device"),
            (Box::new(|s| s.name = " ".into()), "job [ ]: name: a job needs a name"),
        ];
        for (change, expected) in cases {
            assert_eq!(error_of(change), expected);
        }
    }

    #[test]
    fn small_alignment_warns_with_its_cost() {
        let mut spec = sized_job();
        spec.align_bytes = 512;
        validate(&mut spec).unwrap();
        assert_eq!(
            spec.warnings,
            vec![
                "alignment 512 B: a 4 KiB write may straddle two 4 KiB flash pages, costing a \
                  read-modify-write on SSDs; storlab's default is 4 KiB"
            ]
        );
        // Validating again must not repeat the warning.
        validate(&mut spec).unwrap();
        assert_eq!(spec.warnings.len(), 1);
    }

    #[test]
    fn block_sizes_off_the_alignment_grid_warn() {
        let mut spec = sized_job();
        spec.block_size_write = BlockSizeSpec::Fixed(6144);
        validate(&mut spec).unwrap();
        assert_eq!(
            spec.warnings,
            vec![
                "write block size 6 KiB is not a multiple of the 4 KiB alignment, so such I/Os \
                  end part-way into a page"
            ]
        );
    }

    #[test]
    fn queue_depth_with_psync_warns() {
        let mut spec = sized_job();
        spec.iodepth = 32;
        validate(&mut spec).unwrap();
        assert_eq!(spec.warnings.len(), 1);
        assert!(spec.warnings[0].starts_with("iodepth=32 has no effect with ioengine=psync"));
        spec.engine = EngineKind::IoUring;
        spec.warnings.clear();
        validate(&mut spec).unwrap();
        assert!(spec.warnings.is_empty());
    }

    #[test]
    fn bounded_null_and_sim_jobs_are_valid() {
        let mut null = JobSpec::new("n", EngineKind::Null, Target::None);
        null.number_ios = Some(1000);
        validate(&mut null).unwrap();
        let mut sim = JobSpec::new("s", EngineKind::Sim, Target::Sim("usb3-uas-ssd".into()));
        validate(&mut sim).unwrap();
        let mut path = JobSpec::new("p", EngineKind::IoUring, Target::Path("/dev/null".into()));
        validate(&mut path).unwrap();
    }
}
