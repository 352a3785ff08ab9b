//! `validate`: checks a `JobSpec` for mistakes (one clear message each) and records warnings.
//!
//! Errors name the key the user would change (`iodepth`, `bs`, `size`...) and the offending value
//! as storlab holds it; the readers ([`crate::fio`], [`crate::flags`]) swap in the file line or
//! flag and the value as the user typed it. Warnings are non-fatal and go into `spec.warnings`.

mod io;
mod region;
mod verify;

use crate::error::{JobError, Location};
use crate::model::{BlockSizeSpec, DataPattern, JobSpec, DEFAULT_ALIGN_BYTES};
use crate::size::{format_block_size_spec, format_size, NS_PER_S, PERCENT_MAX};
use io::{check_engine_and_target, check_sync_and_think};
use region::{check_align, check_block_size_spec, check_bounds, check_region};
use verify::{check_dedupe, check_verify, check_verify_combinations};

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
    check_counts_and_shares(spec, &location)?;
    check_region(spec, &location)?;
    check_bounds(spec, &location)?;
    check_rates(spec, &location)?;
    check_engine_and_target(spec, &location)?;
    check_sync_and_think(spec, &location)?;
    check_verify(spec, &location)?;
    check_dedupe(spec, &location)?;
    check_verify_combinations(spec, &location)?;
    push_warnings(spec);
    Ok(())
}

/// An `invalid` error at `location`, for the key and value given to it.
fn invalid_at(location: &Location) -> impl Fn(&str, String, String) -> Result<(), JobError> + '_ {
    |key, value, detail| {
        Err(JobError::invalid(
            location.clone(),
            key,
            Some(value),
            detail,
        ))
    }
}

/// The name, queue depth, worker count, alignment, block sizes and shares (each within its
/// range).
fn check_counts_and_shares(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
    let invalid = invalid_at(location);
    if spec.name.trim().is_empty() {
        return Err(JobError::invalid(
            location.clone(),
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
    Ok(())
}

/// Rates: none of 0, and no minimum above its ceiling.
fn check_rates(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
    let invalid = invalid_at(location);
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
    use crate::model::{BlockSizeShare, EngineKind, RateIops, Target};
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
        // A writing job: one that writes nothing never draws from its working set.
        let working_set = |percent, working_set_percent| {
            move |spec: &mut JobSpec| {
                spec.read_percent = 0;
                spec.dedupe = Some(crate::model::DedupeSpec {
                    percent,
                    mode: crate::model::DedupeMode::WorkingSet,
                    working_set_percent,
                    global: false,
                    size_as_written_bytes: spec.size_bytes,
                })
            }
        };
        let mut spec = sized_job();
        working_set(50, 50)(&mut spec);
        validate(&mut spec).unwrap();
        // No whole block in the set: fio's set of one (its first state).
        let mut spec = sized_job();
        working_set(50, 0)(&mut spec);
        validate(&mut spec).unwrap();
        for (change, expected) in [
            (
                Box::new(working_set(60, 50)) as Box<dyn FnOnce(&mut JobSpec)>,
                "need more than 100% of size",
            ),
            (
                Box::new(move |spec: &mut JobSpec| {
                    spec.size_bytes = Some(1 << 40);
                    working_set(20, 80)(spec);
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
