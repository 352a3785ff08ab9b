//! The one key table shared by the fio job-file reader and the fio-style flags, and the
//! `JobDraft` builder the keys are applied to.
//!
//! A key is applied as text (`key=value`) to a draft that remembers what the user set and where
//! (file line or flag). `JobDraft::finish` fills the rest from `JobSpec::new`, resolves engine and
//! target (or takes the target the command line imposes, `JobDraft::override_target`), validates,
//! and points any validation error back at the line or flag that set the key.

use crate::error::{JobError, Location};
use crate::iolog::{IoTrace, ReplaySpec};
use crate::model::{
    BlockSizeSpec, CmdPrioSplit, ContinueOnError, DataPattern, EngineKind, EngineTuning,
    FadviseHint, FioLogKind, FioLogs, FioRandom, FlowSpec, JobSpec, OpenSync, RandomDistribution,
    RwModifier, SteadyStateSpec, StridedZones, SyncSpec, Target, TargetShares, ThinkSpec, TrimMode,
    VerifyKind, VerifyPattern, VerifySpec, ZoneShare, FIO_LOG_HIST_COARSENESS_MAX, MICROS_PER_UNIT,
    OUT_OF_SCOPE_ENGINES,
};
use crate::model::{DedupeMode, DedupeSpec};
use crate::paths::KeyPath;
use crate::size::{
    parse_block_size_ranges, parse_block_size_splits, parse_block_sizes, parse_bool, parse_count,
    parse_percent, parse_share_ppm, parse_size, parse_time_ns, split_read_write, ValueError,
    NS_PER_S,
};
use crate::validate::validate;
use std::path::{Path, PathBuf};

/// `filename=sim:PROFILE` names a simulated drive instead of a file.
pub const SIM_TARGET_PREFIX: &str = "sim:";
/// `data_pattern=compressible:N`.
const COMPRESSIBLE_PREFIX: &str = "compressible:";

/// Why a value could not be applied.
enum ApplyError {
    /// The value is wrong.
    Invalid(String),
    /// fio would accept it, storlab deliberately does not.
    Unsupported(String),
}

impl From<ValueError> for ApplyError {
    fn from(error: ValueError) -> Self {
        ApplyError::Invalid(error.0)
    }
}

type Apply = fn(&mut JobDraft, &str) -> Result<(), ApplyError>;

/// One key of the job language.
pub struct KeyDef {
    /// The name in fio files and after `--` on the command line.
    pub name: &'static str,
    /// Other names fio accepts for the same key.
    pub aliases: &'static [&'static str],
    /// May be written without a value (`time_based`, `--direct`), meaning `1`.
    pub bare: bool,
    /// One line for help and docs.
    pub meaning: &'static str,
    /// The setting that validation errors about this key are reported under (several keys can
    /// set one setting: `bs`, `bsrange` and `bssplit` all set `bs`).
    field: &'static str,
    /// Whether the value names a file the job writes or its target, and how
    /// (`crate::paths`: storlab's guarded checks and their tests iterate over these).
    pub path: KeyPath,
    apply: Apply,
}

/// What the user set and where, so a later validation error can point at it.
#[derive(Clone, Debug)]
struct Provenance {
    field: &'static str,
    key_as_written: String,
    value: Option<String>,
    location: Location,
}

/// An action fio's `replay_skip` leaves out of a replay.
/// fio's `random_generator` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FioGenerator {
    Tausworthe,
    Tausworthe64,
    Lfsr,
}

/// fio's `randseed` when a job gives none (options.c, `rand_seed`: `.def = "0x89"`).
const FIO_DEFAULT_RANDSEED: u64 = 0x89;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReplaySkip {
    Read,
    Write,
    Trim,
    /// `sync` lines. fio 3.33 skips `sync` and keeps `datasync` (iolog.c checks the skip mask
    /// for `sync` only); so does storlab.
    Sync,
}

impl ReplaySkip {
    fn matches(self, action: crate::iolog::TraceAction) -> bool {
        use crate::iolog::TraceAction as A;
        matches!(
            (self, action),
            (ReplaySkip::Read, A::Read)
                | (ReplaySkip::Write, A::Write)
                | (ReplaySkip::Trim, A::Trim)
                | (ReplaySkip::Sync, A::Sync { data_only: false })
        )
    }
}

/// The direction/randomness mix named by fio's `rw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    Mixed,
    RandMixed,
    Trim,
    RandTrim,
    TrimWrite,
    RandTrimWrite,
}

impl RwMode {
    fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandMixed
                | RwMode::RandTrim
                | RwMode::RandTrimWrite
        )
    }

    fn trim(self) -> TrimMode {
        match self {
            RwMode::Trim | RwMode::RandTrim => TrimMode::Trim,
            RwMode::TrimWrite | RwMode::RandTrimWrite => TrimMode::TrimWrite,
            _ => TrimMode::None,
        }
    }
}

/// `offset`, `offset_increment` or `size` as written: bytes, or a share of the target (`N%`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Extent {
    Bytes(u64),
    SharePpm(u32),
}

impl Extent {
    fn parse(text: &str) -> Result<Extent, ValueError> {
        if text.trim().ends_with('%') {
            parse_share_ppm(text).map(Extent::SharePpm)
        } else {
            parse_size(text).map(Extent::Bytes)
        }
    }

    fn bytes(self) -> Option<u64> {
        match self {
            Extent::Bytes(bytes) => Some(bytes),
            Extent::SharePpm(_) => None,
        }
    }

    fn share_ppm(self) -> Option<u32> {
        match self {
            Extent::Bytes(_) => None,
            Extent::SharePpm(ppm) => Some(ppm),
        }
    }
}

/// An `ioengine=` value fio knows (or nobody knows) but storlab has no engine of that name for.
#[derive(Clone, Debug)]
struct ForeignEngine {
    /// The name as written (`libaio`).
    name: String,
    /// Why it is refused and what to use instead, as the refusal says it.
    hint: String,
    /// The storlab engine that does the same on a file or device, when a target given from
    /// outside the job (`--target FILE`) runs it anyway.
    equivalent: EngineKind,
    /// An engine of [`OUT_OF_SCOPE_ENGINES`]: refused on every target, since its job describes
    /// something other than I/O to a local file or device (a network peer, a GPU, file creation).
    out_of_scope: bool,
}

/// Share of reads in a mixed job when `rwmixread` is not given (fio's default).
const RWMIX_READ_DEFAULT_PERCENT: u8 = 50;
/// Share of random offsets in a random job when `percentage_random` is not given.
const RANDOM_DEFAULT_PERCENT: u8 = 100;

/// Everything a user can set for one job, each `None` until set. Later settings override earlier
/// ones, which is how `[global]` then the section (or flags before then after `--name`) combine.
#[derive(Clone, Debug, Default)]
pub struct JobDraft {
    name: Option<String>,
    engine: Option<EngineKind>,
    filename: Option<String>,
    directory: Option<PathBuf>,
    direct: Option<bool>,
    invalidate: Option<bool>,
    fadvise_hint: Option<FadviseHint>,
    rw: Option<RwMode>,
    /// The `:N` of `rw=MODE:N`, as written (read once the mode is known).
    rw_modifier: Option<RwModifier>,
    rwmixread: Option<u8>,
    /// `percentage_random` for reads and for writes (fio's `read,write[,trim]` form).
    percentage_random_read: Option<u8>,
    percentage_random_write: Option<u8>,
    norandommap: Option<bool>,
    block_size_read: Option<BlockSizeSpec>,
    /// The third (trim) value of `bs`, `bsrange` or `bssplit`.
    block_size_trim: Option<BlockSizeSpec>,
    block_size_write: Option<BlockSizeSpec>,
    align_bytes: Option<u64>,
    iodepth: Option<u32>,
    numjobs: Option<u32>,
    offset: Option<Extent>,
    offset_increment: Option<Extent>,
    size: Option<Extent>,
    number_ios: Option<u64>,
    io_size_bytes: Option<u64>,
    loops: Option<u32>,
    runtime_ns: Option<u64>,
    time_based: Option<bool>,
    ramp_time_ns: Option<u64>,
    rate_iops_read: Option<u64>,
    rate_iops_write: Option<u64>,
    rate_bytes_read: Option<u64>,
    rate_bytes_write: Option<u64>,
    data_pattern: Option<DataPattern>,
    seed: Option<u64>,
    /// fio's `randrepeat`.
    randrepeat: Option<bool>,
    /// fio's `random_generator`.
    random_generator: Option<FioGenerator>,
    verify: Option<bool>,
    stonewall: Option<bool>,
    new_group: Option<bool>,
    start_delay: Option<crate::StartDelay>,
    /// fio's `wait_for`: the name of an earlier job this one starts after.
    wait_for: Option<String>,
    exitall: Option<bool>,
    exitall_on_error: Option<bool>,
    exit_what: Option<crate::ExitWhat>,
    io_priority_class: Option<u8>,
    io_priority_level: Option<u8>,
    group_reporting: Option<bool>,
    /// An `ioengine` storlab has no engine of that name for (`libaio`): refused when the job is
    /// finished, unless a target imposed from outside decides the engine.
    foreign_engine: Option<ForeignEngine>,
    /// A target imposed from outside the job (the command line's `--target`), replacing what
    /// `filename`, `directory` and `ioengine` would give.
    target_override: Option<Target>,
    /// An unset `rw` means storlab's own default, random read (presets, which always meant it),
    /// instead of fio's `read` (job files and fio-style flags).
    storlab_rw_default: bool,
    write_iolog: Option<PathBuf>,
    /// fio's `read_iolog`: the trace, read when the key was applied.
    read_iolog: Option<std::sync::Arc<IoTrace>>,
    /// fio's `replay_redirect`: every I/O of the trace goes to this file.
    replay_redirect: Option<String>,
    replay_no_stall: Option<bool>,
    replay_time_scale_percent: Option<u32>,
    /// fio's `replay_skip`: the trace's actions left out.
    replay_skip: Option<Vec<ReplaySkip>>,
    /// fio's engine options, applied over the defaults (all off).
    engine_tuning: EngineTuning,
    fsync_every_writes: Option<u32>,
    fdatasync_every_writes: Option<u32>,
    end_fsync: Option<bool>,
    fsync_on_close: Option<bool>,
    open_sync: Option<OpenSync>,
    think_ns: Option<u64>,
    think_spin_ns: Option<u64>,
    think_every_ios: Option<u32>,
    think_count_issued: Option<bool>,
    think_every_io_ns: Option<u64>,
    flow_id: Option<u32>,
    flow_weight: Option<u32>,
    flow_sleep_ns: Option<u64>,
    /// fio's `latency_target` family (`latency_target` in ns, `latency_window` in µs).
    latency_target: Option<crate::LatencyTargetSpec>,
    numa_mem_policy: Option<crate::NumaMemPolicy>,
    serialize_overlap: Option<bool>,
    /// `iodepth_batch_submit`, `iodepth_batch_complete_min`, `_max`, `iodepth_low` as given.
    io_batch_submit: Option<u32>,
    io_batch_complete_min: Option<u32>,
    io_batch_complete_max: Option<u32>,
    io_depth_low: Option<u32>,
    cpus_allowed: Option<Vec<u32>>,
    /// `cpus_allowed_policy=split` (true) or `shared`.
    cpus_allowed_split: Option<bool>,
    submit_offload: Option<bool>,
    random_distribution: Option<RandomDistribution>,
    /// `zonemode=strided` (true) or `none` (false).
    zonemode_strided: Option<bool>,
    zone_size_bytes: Option<u64>,
    zone_range_bytes: Option<u64>,
    zone_skip_bytes: Option<u64>,
    allow_file_create: Option<bool>,
    /// `steadystate=CRITERION:LIMIT` as (bandwidth, slope, limit in millionths, percent).
    steadystate_criterion: Option<(bool, bool, u64, bool)>,
    steadystate_duration_ns: Option<u64>,
    steadystate_ramp_ns: Option<u64>,
    unlink: Option<bool>,
    rate_poisson: Option<bool>,
    rate_min: Option<(Option<u64>, Option<u64>)>,
    rate_iops_min: Option<(Option<u64>, Option<u64>)>,
    buffer_pattern: Option<Vec<u8>>,
    dedupe_percentage: Option<u8>,
    refill_buffers: Option<bool>,
    dedupe_mode: Option<DedupeMode>,
    dedupe_working_set_percentage: Option<u8>,
    dedupe_global: Option<bool>,
    /// `verify=` named a fio kind (`verify=1` is storlab's own check alone).
    verify_kind: Option<VerifyKind>,
    /// fio's `verify_pattern`: written and checked with `verify`, no effect without.
    verify_pattern: Option<VerifyPattern>,
    do_verify: Option<bool>,
    verify_only: Option<bool>,
    /// fio's `verify_state_save` (fio's default on; off in storlab's presets).
    verify_state_save: Option<bool>,
    /// fio's `verify_state_load`: read the clone's saved state before the job's verify pass.
    verify_state_load: Option<bool>,
    continue_on_error: Option<ContinueOnError>,
    fill_device: Option<bool>,
    verify_dump: Option<bool>,
    verify_interval_bytes: Option<u64>,
    verify_offset_bytes: Option<u64>,
    verify_backlog: Option<u64>,
    verify_backlog_batch: Option<u64>,
    /// fio's `filename_format`, used when no `filename` is given.
    filename_format: Option<String>,
    /// fio's `filesize`: the file's size, the job's `size` when that is not given.
    filesize_bytes: Option<u64>,
    /// fio's log settings; a prefix of `None` inside means the job's name (a bare key).
    fio_logs: FioLogs,
    /// `write_*_log` given bare: the log is named after the job, known once it is finished.
    log_named_by_job: Vec<FioLogKind>,
    /// The key being applied was written bare (no `=`).
    applying_bare: bool,
    /// Keys accepted whose fio effect storlab does not reproduce, for one warning each.
    no_effect: Vec<&'static str>,
    provenance: Vec<Provenance>,
}

impl JobDraft {
    /// An empty draft (everything at its default); an unset `rw` is fio's `read`.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty draft whose unset `rw` is storlab's own default, random read (the presets).
    pub fn with_storlab_defaults() -> Self {
        JobDraft {
            storlab_rw_default: true,
            ..Self::default()
        }
    }

    /// Applies `key=value` (`value` is `None` for a bare key) found at `location`.
    pub fn set(
        &mut self,
        key: &str,
        value: Option<&str>,
        location: &Location,
    ) -> Result<(), JobError> {
        let Some(def) = find_key(key) else {
            return Err(JobError::unknown_key(
                location.clone(),
                key,
                suggest_key(key),
            ));
        };
        let owned_value = value.map(str::to_string);
        let text = match value.map(str::trim) {
            Some(v) if !v.is_empty() => v,
            // Only a key with no '=' at all is bare: `direct=` is a value left out by mistake.
            None if def.bare => "1",
            _ => {
                return Err(JobError::invalid(
                    location.clone(),
                    key,
                    owned_value,
                    format!("{} needs a value", def.name),
                ))
            }
        };
        self.applying_bare = value.is_none();
        let applied = (def.apply)(self, text);
        self.applying_bare = false;
        applied.map_err(|error| match error {
            ApplyError::Invalid(detail) => {
                JobError::invalid(location.clone(), key, owned_value.clone(), detail)
            }
            ApplyError::Unsupported(detail) => {
                JobError::unsupported(location.clone(), key, owned_value.clone(), detail)
            }
        })?;
        self.provenance.retain(|p| p.field != def.field);
        self.provenance.push(Provenance {
            field: def.field,
            key_as_written: key.to_string(),
            value: value.map(str::to_string),
            location: location.clone(),
        });
        Ok(())
    }

    /// `write_*_log=PREFIX` (or bare: named after the job) for the logs of `kind`.
    fn log_prefix(&mut self, kind: FioLogKind, value: &str) {
        self.log_named_by_job.retain(|k| *k != kind);
        let prefix = if self.applying_bare {
            self.log_named_by_job.push(kind);
            None
        } else {
            Some(PathBuf::from(value))
        };
        let logs = &mut self.fio_logs;
        match kind {
            FioLogKind::Bandwidth => logs.bandwidth_prefix = prefix,
            FioLogKind::Iops => logs.iops_prefix = prefix,
            FioLogKind::CompletionHistogram => logs.histogram_prefix = prefix,
            _ => logs.latency_prefix = prefix,
        }
    }

    /// The name set with `name=`, if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Runs the job on `target` whatever `filename`, `directory` or `ioengine` say (the command
    /// line's `--target`), so that validation judges the job on the target it will run on: a
    /// simulated drive or an existing file has a size, a temporary file needs one. A simulated
    /// drive brings the `sim` engine and [`Target::None`] the `null` engine; a file or a temporary
    /// file keeps the engine the job names unless that is `sim` or `null`, which do no I/O on a
    /// file, and then gets fio's default, `psync`. A draft cloned from this one (a job from its
    /// `[global]` settings) keeps the override.
    pub fn override_target(&mut self, target: Target) {
        self.target_override = Some(target);
    }

    /// fio's verify family as set, when `verify=` named a fio kind.
    fn verify_spec(&self) -> Option<VerifySpec> {
        let kind = self.verify_kind.filter(|_| self.verify == Some(true))?;
        Some(VerifySpec {
            kind,
            pattern: self.verify_pattern.clone(),
            interval_bytes: self.verify_interval_bytes.filter(|b| *b > 0),
            header_offset_bytes: self.verify_offset_bytes.unwrap_or(0),
            only: self.verify_only == Some(true),
            dump: self.verify_dump == Some(true),
            backlog: self.verify_backlog.filter(|b| *b > 0),
            backlog_batch: self.verify_backlog_batch.filter(|b| *b > 0),
        })
    }

    /// fio's engines/cmdprio.c: `cmdprio_percentage` and `cmdprio_bssplit` are mutually
    /// exclusive, whichever directions they name.
    fn check_cmdprio(&self, job_location: &Location) -> Result<(), JobError> {
        let cmdprio = &self.engine_tuning.cmdprio;
        let percentage = cmdprio.read.percentage > 0 || cmdprio.write.percentage > 0;
        let bssplit = !cmdprio.read.bssplit.is_empty() || !cmdprio.write.bssplit.is_empty();
        if !(percentage && bssplit) {
            return Ok(());
        }
        let setter = self
            .provenance
            .iter()
            .rev()
            .find(|p| p.field == "cmdprio_percentage" || p.field == "cmdprio_bssplit");
        Err(JobError::invalid(
            setter.map_or_else(|| job_location.clone(), |p| p.location.clone()),
            setter.map_or("cmdprio_bssplit", |p| p.key_as_written.as_str()),
            setter.and_then(|p| p.value.clone()),
            "cmdprio_percentage and cmdprio_bssplit are mutually exclusive (as in fio); keep one",
        ))
    }

    /// Verify settings that only make sense together.
    fn check_verify(&self, job_location: &Location) -> Result<(), JobError> {
        let at = |field: &str| {
            let setter = self.provenance.iter().rev().find(|p| p.field == field);
            (
                setter.map_or_else(|| job_location.clone(), |p| p.location.clone()),
                setter.map_or(field.to_string(), |p| p.key_as_written.clone()),
                setter.and_then(|p| p.value.clone()),
            )
        };
        let fio_kind = self.verify_kind.filter(|_| self.verify == Some(true));
        if fio_kind == Some(VerifyKind::Pattern) && self.verify_pattern.is_none() {
            let (location, key, value) = at("verify");
            return Err(JobError::invalid(
                location,
                &key,
                value,
                "verify=pattern checks verify_pattern, which is not set",
            ));
        }
        let needs_fio_kind = [
            ("verify_only", self.verify_only == Some(true)),
            ("verify_backlog", self.verify_backlog.is_some_and(|b| b > 0)),
            (
                "verify_interval",
                self.verify_interval_bytes.is_some_and(|b| b > 0),
            ),
            (
                "verify_offset",
                self.verify_offset_bytes.is_some_and(|b| b > 0),
            ),
        ];
        if let (None, Some((field, _))) = (fio_kind, needs_fio_kind.iter().find(|(_, set)| *set)) {
            let (location, key, value) = at(field);
            return Err(JobError::invalid(
                location,
                &key,
                value,
                "needs verify= with a fio kind (md5, crc32c, meta, pattern...)",
            ));
        }
        if self.verify_only == Some(true) && self.time_based == Some(true) {
            let (location, key, value) = at("verify_only");
            return Err(JobError::invalid(
                location,
                &key,
                value,
                "verify_only replays the writes of a size-bounded job; a time_based job has no \
                 end to replay (drop time_based)",
            ));
        }
        let verifies = self.verify == Some(true)
            && (self.do_verify != Some(false) || self.verify_only == Some(true));
        if verifies
            && self
                .continue_on_error
                .as_ref()
                .is_some_and(|c| !c.is_none())
        {
            let (location, key, value) = at("continue_on_error");
            return Err(JobError::unsupported(
                location,
                &key,
                value,
                "going on past errors in a job that verifies is not supported (a failed write \
                 would leave a block the read-back cannot check); drop verify or \
                 continue_on_error",
            ));
        }
        if self.verify_only == Some(true) && self.verify_backlog.is_some_and(|b| b > 0) {
            let (location, key, value) = at("verify_backlog");
            return Err(JobError::invalid(
                location,
                &key,
                value,
                "verify_only writes nothing, so there is no backlog of writes to check",
            ));
        }
        if verifies && self.verify_state_load == Some(true) {
            let not_followed = if self.rw != Some(RwMode::Write) {
                Some(
                    "storlab stops the verify pass where fio's would for a sequential writing \
                     job (rw=write) only: fio reads a random job's writes back in offset order \
                     and a reading job checks as it reads, which storlab does not follow",
                )
            } else if self.loops.is_some_and(|l| l > 1) {
                Some(
                    "fio verifies after each loop and counts the reads of every loop against \
                     the saved state; storlab follows a single pass (drop loops)",
                )
            } else if self.time_based == Some(true) {
                Some(
                    "a time_based job's writes wrap over its region, and fio's stop within a \
                     wrapped log is not followed (drop time_based)",
                )
            } else if self.verify_backlog.is_some_and(|b| b > 0) {
                Some(
                    "fio stops the backlog's reads at the saved state too; storlab stops only \
                     the verify pass after the writes (drop verify_backlog)",
                )
            } else {
                None
            };
            if let Some(reason) = not_followed {
                let (location, key, value) = at("verify_state_load");
                return Err(JobError::unsupported(location, &key, value, reason));
            }
        }
        Ok(())
    }

    /// fio refuses zone sizes without `zonemode=strided` ("--zonemode=none and --zonesize are not
    /// compatible") and a strided mode needs its zone size.
    fn check_zones(&self, job_location: &Location) -> Result<(), JobError> {
        let strided = self.zonemode_strided == Some(true);
        let zone_key = ["zonesize", "zonerange", "zoneskip"]
            .into_iter()
            .find(|field| self.provenance.iter().any(|p| p.field == *field));
        let at = |field: &str| {
            let setter = self.provenance.iter().rev().find(|p| p.field == field);
            (
                setter.map_or_else(|| job_location.clone(), |p| p.location.clone()),
                setter.map_or(field.to_string(), |p| p.key_as_written.clone()),
                setter.and_then(|p| p.value.clone()),
            )
        };
        if let (false, Some(field)) = (strided, zone_key) {
            let (location, key, value) = at(field);
            return Err(JobError::invalid(
                location,
                &key,
                value,
                "zone sizes need zonemode=strided (as fio: zonemode=none and zonesize are not compatible)",
            ));
        }
        if strided && self.zone_size_bytes.unwrap_or(0) == 0 {
            let (location, key, value) = at("zonemode");
            return Err(JobError::invalid(
                location,
                &key,
                value,
                "zonemode=strided needs zonesize (the bytes done in each zone)",
            ));
        }
        Ok(())
    }

    /// fio's `fill_device` where storlab does what fio does: a job that writes, to a named file
    /// or block device or a simulated drive, through an engine that writes with system calls.
    fn check_fill_device(&self, spec: &JobSpec, job_location: &Location) -> Result<(), JobError> {
        if !spec.fill_device {
            return Ok(());
        }
        let refuse = |reason: &str| {
            let setter = self
                .provenance
                .iter()
                .rev()
                .find(|p| p.field == "fill_device");
            Err(JobError::unsupported(
                setter.map_or_else(|| job_location.clone(), |p| p.location.clone()),
                setter.map_or("fill_device", |p| p.key_as_written.as_str()),
                setter.and_then(|p| p.value.clone()),
                reason,
            ))
        };
        if spec.read_percent == 100 && spec.trim == TrimMode::None {
            return refuse(
                "in a job that does not write is not supported (fio lays the file out until \
                 ENOSPC and then reads it); write it in a job before, as fio's write-then-verify \
                 jobs do",
            );
        }
        if matches!(spec.target, Target::TempFileIn(_)) {
            return refuse(
                "needs filename= (the file or block device to fill) or a simulated target; \
                 storlab's temporary files are laid out to a size",
            );
        }
        if spec.engine == EngineKind::Mmap {
            return refuse(
                "with ioengine=mmap is not supported: stores into a mapping past the file's end \
                 fault (SIGBUS) instead of failing with ENOSPC",
            );
        }
        Ok(())
    }

    /// Builds and validates the job. `default_name` is used unless `name=` was set; errors about
    /// settings the user never made, or about the job as a whole, are reported at `job_location`.
    pub fn finish(&self, default_name: &str, job_location: &Location) -> Result<JobSpec, JobError> {
        if let Some(foreign) = &self.foreign_engine {
            // `--target` stands in for an engine storlab lacks under another name (`pvsync`,
            // `windowsaio`), not for one whose job is about something else: an RDMA or HTTP
            // job's I/O sent to a drive would measure nothing the file asked for.
            if foreign.out_of_scope || self.target_override.is_none() {
                return Err(self.engine_refusal(foreign, job_location));
            }
        }
        self.check_zones(job_location)?;
        self.check_replay(job_location)?;
        self.check_verify(job_location)?;
        self.check_cmdprio(job_location)?;
        if self.storlab_rw_default && self.randrepeat == Some(false) {
            return Err(JobError::unsupported(
                job_location.clone(),
                "randrepeat",
                Some("0".into()),
                "storlab's presets always repeat from their seed; change seed= for another sequence",
            ));
        }
        let name = self
            .name
            .clone()
            .unwrap_or_else(|| default_name.to_string());
        let mut spec = self.build(&name);
        self.check_fill_device(&spec, job_location)?;
        validate(&mut spec).map_err(|e| self.relocate(e, job_location))?;
        self.check_trim_on_a_file(&spec, job_location)?;
        self.check_mmap_pages(&spec, job_location)?;
        Ok(spec)
    }

    /// The job with every setting applied over storlab's defaults, not yet validated.
    fn build(&self, name: &str) -> JobSpec {
        let (engine, target, warnings) = self.engine_and_target(name);
        let mut spec = JobSpec::new(name, engine, target);
        spec.warnings = warnings;
        if let Some(rw) = self.rw {
            spec.read_percent = match rw {
                RwMode::Read | RwMode::RandRead => 100,
                // A trim changes the target as a write does: opened for writing, under the
                // same safety rules for block devices.
                RwMode::Write
                | RwMode::RandWrite
                | RwMode::Trim
                | RwMode::RandTrim
                | RwMode::TrimWrite
                | RwMode::RandTrimWrite => 0,
                RwMode::Mixed | RwMode::RandMixed => {
                    self.rwmixread.unwrap_or(RWMIX_READ_DEFAULT_PERCENT)
                }
            };
        }
        spec.trim = self.rw.map_or(TrimMode::None, RwMode::trim);
        let mixed = matches!(self.rw, Some(RwMode::Mixed | RwMode::RandMixed));
        if self.rwmixread.is_some() && !mixed {
            spec.warnings.push(format!(
                "rwmixread/rwmixwrite has no effect with rw={}; use rw=rw or rw=randrw for a mix",
                spec.rw_name()
            ));
        }
        // An unset `rw` is fio's `read` in a job file or flags, storlab's random read in a
        // preset.
        let random = match self.rw {
            Some(rw) => rw.is_random(),
            None => self.storlab_rw_default,
        };
        let given = self.percentage_random_read.is_some() || self.percentage_random_write.is_some();
        if random {
            let read_share = self
                .percentage_random_read
                .unwrap_or(RANDOM_DEFAULT_PERCENT);
            let write_share = self
                .percentage_random_write
                .unwrap_or(RANDOM_DEFAULT_PERCENT);
            // A job in one direction keeps that direction's share in `random_percent`; only a
            // mix with two different shares needs the writes' own.
            match spec.read_percent {
                0 => spec.random_percent = write_share,
                100 => spec.random_percent = read_share,
                _ => {
                    spec.random_percent = read_share;
                    spec.random_percent_write = (write_share != read_share).then_some(write_share);
                }
            }
        } else {
            if given {
                spec.warnings.push(format!(
                    "percentage_random has no effect with sequential rw={}; use a rand* mode",
                    spec.rw_name()
                ));
            }
            spec.random_percent = 0;
        }
        if let Some(bs) = &self.block_size_read {
            spec.block_size_read = bs.clone();
        }
        if let Some(bs) = &self.block_size_write {
            spec.block_size_write = bs.clone();
        }
        if let (TrimMode::Trim | TrimMode::TrimWrite, Some(trim_bs)) =
            (spec.trim, &self.block_size_trim)
        {
            // A trim job reads nothing: its trims take the read stream and its sizes.
            spec.block_size_read = trim_bs.clone();
        }
        // fio's LFSR generator (lib/lfsr.c) visits every block once per pass by construction,
        // random map or not, so a job naming it draws without repeats even with
        // `norandommap`: storlab's map is a permutation too (fio's t0021 checks exactly this).
        spec.random_map =
            !self.norandommap.unwrap_or(false) || self.random_generator == Some(FioGenerator::Lfsr);
        set_if(&mut spec.direct, self.direct);
        set_if(&mut spec.invalidate, self.invalidate);
        set_if(&mut spec.fadvise_hint, self.fadvise_hint);
        set_if(&mut spec.align_bytes, self.align_bytes);
        spec.align_given = self.align_bytes.is_some();
        self.fio_blockalign_rules(&mut spec, random);
        set_if(&mut spec.iodepth, self.iodepth);
        set_if(&mut spec.numjobs, self.numjobs);
        set_if(&mut spec.offset_bytes, self.offset.and_then(Extent::bytes));
        set_if(
            &mut spec.offset_increment_bytes,
            self.offset_increment.and_then(Extent::bytes),
        );
        spec.size_bytes = self.size.and_then(Extent::bytes);
        spec.target_shares = TargetShares {
            offset_ppm: self.offset.and_then(Extent::share_ppm),
            offset_increment_ppm: self.offset_increment.and_then(Extent::share_ppm),
            size_ppm: self.size.and_then(Extent::share_ppm),
        };
        spec.number_ios = self.number_ios;
        spec.io_size_bytes = self.io_size_bytes;
        set_if(&mut spec.loops, self.loops);
        spec.runtime_ns = self.runtime_ns;
        set_if(&mut spec.time_based, self.time_based);
        set_if(&mut spec.ramp_time_ns, self.ramp_time_ns);
        spec.rate_iops.read = self.rate_iops_read;
        spec.rate_iops.write = self.rate_iops_write;
        spec.rate_bytes.read = self.rate_bytes_read;
        spec.rate_bytes.write = self.rate_bytes_write;
        set_if(&mut spec.data_pattern, self.data_pattern);
        set_if(&mut spec.seed, self.seed);
        // `randrepeat=0` without `randseed`: a fresh seed every run, for storlab's own streams
        // (data, and the jobs below that keep them) as for fio's.
        if self.seed.is_none() && self.randrepeat == Some(false) {
            spec.seed = seed_from_os_entropy();
        }
        // A fio job draws from fio's own generators seeded as fio seeds them, its LFSR too.
        spec.fio_random = (!self.storlab_rw_default).then(|| FioRandom {
            randseed: self.seed.unwrap_or(FIO_DEFAULT_RANDSEED),
            randrepeat: self.randrepeat.unwrap_or(true),
            randseed_given: self.seed.is_some(),
            tausworthe64: self.random_generator == Some(FioGenerator::Tausworthe64),
            lfsr: self.random_generator == Some(FioGenerator::Lfsr),
        });
        set_if(&mut spec.verify, self.verify);
        spec.verify_spec = self.verify_spec();
        // fio saves the state of any job with `verify` set, `do_verify=0` included.
        spec.verify_state_save =
            self.verify == Some(true) && self.verify_state_save.unwrap_or(!self.storlab_rw_default);
        spec.verify_state_load = self.verify_state_load == Some(true);
        if spec.verify_spec.as_ref().is_some_and(|v| v.only) {
            spec.verify = true;
        } else if self.do_verify == Some(false) {
            spec.verify = false;
        }
        set_if(&mut spec.continue_on_error, self.continue_on_error.clone());
        set_if(&mut spec.fill_device, self.fill_device);
        set_if(&mut spec.stonewall, self.stonewall);
        set_if(&mut spec.new_group, self.new_group);
        set_if(&mut spec.start_delay, self.start_delay);
        spec.wait_for = self.wait_for.clone();
        spec.exit_all = crate::ExitAll {
            on_end: self.exitall.unwrap_or(false),
            on_error: self.exitall_on_error.unwrap_or(false),
            what: self.exit_what.unwrap_or_default(),
        };
        // fio sets the priority only when either key is set (backend.c, fio_option_is_set).
        if self.io_priority_class.is_some() || self.io_priority_level.is_some() {
            spec.io_priority = Some(crate::IoPriority {
                class: self.io_priority_class.unwrap_or(0),
                level: self.io_priority_level.unwrap_or(0),
            });
        }
        set_if(&mut spec.group_reporting, self.group_reporting);
        spec.write_iolog = self.write_iolog.clone();
        spec.engine_tuning = self.engine_tuning.clone();
        let ignored = self.engine_tuning.ignored_by(spec.engine);
        if !ignored.is_empty() {
            spec.warnings.push(format!(
                "{} has no effect with ioengine={}",
                ignored.join(", "),
                spec.engine.as_str()
            ));
        }
        spec.sync = SyncSpec {
            fsync_every_writes: self.fsync_every_writes.unwrap_or(0),
            fdatasync_every_writes: self.fdatasync_every_writes.unwrap_or(0),
            end_fsync: self.end_fsync.unwrap_or(false),
            fsync_on_close: self.fsync_on_close.unwrap_or(false),
            open_sync: self.open_sync.unwrap_or_default(),
        };
        spec.think = ThinkSpec {
            think_ns: self.think_ns.unwrap_or(0),
            spin_ns: self.think_spin_ns.unwrap_or(0),
            every_ios: self.think_every_ios,
            count_issued: self.think_count_issued.unwrap_or(false),
            every_io_ns: self.think_every_io_ns.unwrap_or(0),
        };
        // fio's flow.c: a job joins a flow only with a weight (`flow=0`, the default, is none).
        spec.flow = self.flow_weight.filter(|w| *w > 0).map(|weight| FlowSpec {
            id: self.flow_id.unwrap_or(0),
            weight,
            sleep_ns: self.flow_sleep_ns.unwrap_or(0),
        });
        set_if(&mut spec.submit_offload, self.submit_offload);
        spec.latency_target = self.latency_target;
        spec.numa_mem_policy = self.numa_mem_policy.clone();
        // `rw=write:0` and `rw=randread:1` change nothing, as in fio.
        spec.rw_modifier = match self.rw_modifier {
            Some(
                RwModifier::SkipBytes(0) | RwModifier::BackBytes(0) | RwModifier::RandomEveryIos(1),
            )
            | None => RwModifier::None,
            Some(modifier) => modifier,
        };
        set_if(&mut spec.allow_file_create, self.allow_file_create);
        // fio: steady state is judged only with a duration; its default criterion is
        // iops_slope:0.01%.
        spec.steadystate = self
            .steadystate_duration_ns
            .filter(|d| *d > 0)
            .map(|duration_ns| {
                let (bandwidth, slope, limit_micros, percent) = self
                    .steadystate_criterion
                    .unwrap_or((false, true, STEADYSTATE_DEFAULT_LIMIT_MICROS, true));
                SteadyStateSpec {
                    bandwidth,
                    slope,
                    limit_micros,
                    percent,
                    duration_ns,
                    ramp_ns: self.steadystate_ramp_ns.unwrap_or(0),
                }
            });
        spec.fio_logs = self.fio_logs.clone();
        for kind in &self.log_named_by_job {
            let prefix = Some(PathBuf::from(name));
            match kind {
                FioLogKind::Bandwidth => spec.fio_logs.bandwidth_prefix = prefix,
                FioLogKind::Iops => spec.fio_logs.iops_prefix = prefix,
                FioLogKind::CompletionHistogram => spec.fio_logs.histogram_prefix = prefix,
                _ => spec.fio_logs.latency_prefix = prefix,
            }
        }
        set_if(&mut spec.unlink, self.unlink);
        set_if(&mut spec.rate_poisson, self.rate_poisson);
        spec.buffer_pattern = self.buffer_pattern.clone();
        spec.dedupe = self
            .dedupe_percentage
            .filter(|percent| *percent > 0)
            .map(|percent| DedupeSpec {
                percent,
                mode: self.dedupe_mode.unwrap_or(DedupeMode::Repeat),
                // fio's default (options.c: `.def = "5"`).
                working_set_percent: self.dedupe_working_set_percentage.unwrap_or(5),
                global: self.dedupe_global.unwrap_or(false),
            });
        // fio's `refill_buffers`: every write refilled from the thread's buffer stream (io_u.c,
        // `fill_io_buffer`), which storlab's fio buffers do when no write is a repeat.
        if spec.dedupe.is_none() && self.refill_buffers == Some(true) && !self.storlab_rw_default {
            spec.dedupe = Some(DedupeSpec {
                percent: 0,
                mode: DedupeMode::Repeat,
                working_set_percent: 5,
                global: false,
            });
        }
        if let Some((read, write)) = self.rate_min {
            spec.rate_min.read = read;
            spec.rate_min.write = write;
        }
        if let Some((read, write)) = self.rate_iops_min {
            spec.rate_iops_min.read = read;
            spec.rate_iops_min.write = write;
        }
        if self.size.is_none() {
            if let Some(filesize) = self.filesize_bytes {
                spec.size_bytes = Some(filesize);
            }
        }
        for key in &self.no_effect {
            if *key == "verify_pattern" && spec.verify_spec.is_some() {
                continue;
            }
            spec.warnings
                .push(format!("{key}: {}", no_effect_reason(key)));
        }
        if self.zonemode_strided == Some(true) {
            let size_bytes = self.zone_size_bytes.unwrap_or(0);
            spec.strided_zones = Some(StridedZones {
                size_bytes,
                // fio: `zonerange` defaults to `zonesize`.
                range_bytes: self.zone_range_bytes.unwrap_or(size_bytes),
                skip_bytes: self.zone_skip_bytes.unwrap_or(0),
            });
        }
        if let Some(distribution) = &self.random_distribution {
            spec.random_distribution = distribution.clone();
        }
        let partly_random = [spec.random_percent, spec.random_percent_writes()]
            .iter()
            .find(|share| (1..100).contains(*share))
            .copied();
        if let (Some(share), false, None) = (partly_random, spec.time_based, &spec.fio_random) {
            // On a region that ends before its file, fio 3.33 ends a partly random job when a
            // sequential I/O would pass the region's end, at a point set by its own random
            // streams: a fio job draws from them (and matches), storlab's generator does not.
            spec.warnings.push(format!(
                "storlab differs from fio here: with percentage_random={} fio ends the job when \
                 a sequential I/O would pass the end of a region that ends before its file, \
                 storlab goes round to the region's start and moves all of its bytes",
                share
            ));
        }
        self.apply_replay(&mut spec);
        self.fio_verify_fixups(&mut spec);
        let on_a_file = on_a_file(&spec.target);
        if trims_a_file(&spec) {
            spec.warnings.push(
                "storlab differs from fio here: on a regular file storlab trims by punching a \
                 hole (fallocate PUNCH_HOLE|KEEP_SIZE), where fio 3.33 fails the trim (its \
                 os_trim is BLKDISCARD alone: error 25, ENOTTY); use a block device or \
                 ioengine=null for fio's behaviour"
                    .into(),
            );
        }
        if spec.dedupe.is_some() && on_a_file && (1..100).contains(&spec.read_percent) {
            spec.warnings.push(
                "storlab differs from fio here: a dedupe job that also reads repeats fio's share \
                 of its writes, not fio's bytes, and blocks it does not write stay unique: fio \
                 lays a new file out with the same dedupe buffers first (filesetup.c), storlab \
                 with its own layout data"
                    .into(),
            );
        }
        // fio's init.c: no overlap check where nothing can race (a job that does not change
        // data, or one I/O at a time), unless the I/O is a replay's or offloaded.
        spec.serialize_overlap = self.serialize_overlap == Some(true)
            && (spec.replay.is_some()
                || (spec.read_percent < 100 && spec.iodepth > 1)
                || spec.submit_offload);
        let io_batch = crate::IoBatch::fio(
            spec.iodepth,
            self.io_batch_submit,
            self.io_batch_complete_min,
            self.io_batch_complete_max,
            self.io_depth_low,
        );
        spec.io_batch = (!io_batch.is_fio_default(spec.iodepth)).then_some(io_batch);
        if spec.io_batch.is_some() && spec.numjobs > 1 && matches!(spec.target, Target::Sim(_)) {
            spec.warnings.push(
                "storlab differs from fio here: the clones of a job on a simulated drive share \
                 one issue loop, which keeps one I/O submitted and one completion reaped at a \
                 time; iodepth_batch*, iodepth_low apply with numjobs=1 (or on a real target)"
                    .into(),
            );
        }
        // fio's policy applies to a CPU set; without `cpus_allowed` it has nothing to split.
        spec.cpus_allowed = self.cpus_allowed.clone().map(|cpus| crate::CpuAffinity {
            cpus,
            split: self.cpus_allowed_split == Some(true),
        });
        spec
    }

    /// fio's verify settings as fio's `fixup_options` leaves them (a `verify_interval` fio
    /// would change is changed, with a warning, by `validate`): a job that only reads has no
    /// read-back phase: fio checks the
    /// headers of each block as it reads it (backend.c gives a read the `verify_io_u`
    /// completion when the job does not write), so the read-back (`verify`) is off and the
    /// worker checks every read against `verify_spec`.
    fn fio_verify_fixups(&self, spec: &mut JobSpec) {
        let reads_only = spec.read_percent == 100 && spec.replay.is_none();
        let Some(verify) = spec.verify_spec.as_mut() else {
            return;
        };
        if reads_only && !verify.only {
            spec.verify = false;
        }
    }

    /// The file a replayed trace goes to: `replay_redirect`, or the one file its I/O names (fio
    /// adds the trace's files to the job, and its I/O goes there, whatever `filename` says).
    fn replay_filename(&self) -> Option<String> {
        let trace = self.read_iolog.as_ref()?;
        self.replay_redirect
            .clone()
            .or_else(|| trace.files.first().map(|(file, _)| file.clone()))
    }

    /// The job as a replay of its `read_iolog` trace: the trace decides directions, sizes and
    /// offsets. Without `size` the region reaches the trace's furthest byte, or the bytes it
    /// moves if more (fio's `size` for a replay is the sum of the trace's lengths), rounded up
    /// to the alignment so the region holds it whole.
    fn apply_replay(&self, spec: &mut JobSpec) {
        let Some(trace) = &self.read_iolog else {
            return;
        };
        let trace = match &self.replay_skip {
            Some(skipped) => std::sync::Arc::new(
                trace.without(|action| skipped.iter().any(|s| s.matches(action))),
            ),
            None => trace.clone(),
        };
        let (reads, writes, trims) = trace.counts();
        spec.read_percent = match (reads, writes + trims) {
            (_, 0) => 100,
            (0, _) => 0,
            (r, w) => (r * 100 / (r + w)).clamp(1, 99) as u8,
        };
        spec.random_percent = 0;
        spec.random_percent_write = None;
        // The buffers must hold the largest I/O of the trace; a block size only sizes them.
        let largest = trace
            .max_len_bytes()
            .next_multiple_of(crate::validate::SECTOR_BYTES)
            .max(crate::validate::SECTOR_BYTES);
        spec.block_size_read = BlockSizeSpec::Fixed(largest);
        spec.block_size_write = BlockSizeSpec::Fixed(largest);
        if self.size.is_none() && self.filesize_bytes.is_none() {
            let (end_bytes, moved_bytes) = trace.extent_bytes();
            let align = spec.align_bytes.max(1);
            spec.size_bytes = Some(end_bytes.max(moved_bytes).next_multiple_of(align));
        }
        spec.replay = Some(ReplaySpec {
            trace,
            no_stall: self.replay_no_stall.unwrap_or(false),
            time_scale_percent: self.replay_time_scale_percent.unwrap_or(100),
        });
    }

    /// A replay the job cannot do as fio would: refused at the `read_iolog` key.
    /// fio's own `blockalign` rules (init.c, `fixup_options`), applied once the block sizes
    /// and the random map are known.
    fn fio_blockalign_rules(&self, spec: &mut JobSpec, random: bool) {
        // fio input means fio's semantics: `blockalign` defaults to each direction's smallest
        // block (init.c, `fixup_options`: `o->ba[ddir] = o->min_bs[ddir]`), so blocks under
        // 4 KiB go where fio puts them. A preset keeps storlab's 4 KiB.
        let smallest = spec
            .block_size_read
            .min_bytes()
            .min(spec.block_size_write.min_bytes());
        if !self.storlab_rw_default
            && self.align_bytes.is_none()
            && smallest.is_power_of_two()
            && (crate::validate::SECTOR_BYTES..spec.align_bytes).contains(&smallest)
        {
            spec.align_bytes = smallest;
        }
        // fio 3.33 turns the random map off when a random job's `blockalign` is not each
        // direction's smallest block (init.c, `fixup_options`: "Any use of blockalign= turns
        // off randommap"): its places would overlap, and a map over them never fills.
        if let (true, Some(align)) = (random, self.align_bytes) {
            let smallest = [&spec.block_size_read, &spec.block_size_write].map(|bs| bs.min_bytes());
            if smallest.iter().any(|&bs| bs != align) {
                spec.random_map = self.random_generator == Some(FioGenerator::Lfsr);
            }
        }
    }

    /// fio input means fio's semantics, and fio 3.33 fails every trim of a regular file (its
    /// `os_trim`, os/os-linux.h, is BLKDISCARD alone: error 25, ENOTTY) where storlab would
    /// punch holes: such a job is refused in one line rather than run differently. A preset
    /// (storlab's methodology) still trims a file by punching holes.
    fn check_trim_on_a_file(
        &self,
        spec: &JobSpec,
        job_location: &Location,
    ) -> Result<(), JobError> {
        if self.storlab_rw_default || !trims_a_file(spec) {
            return Ok(());
        }
        let setter = self.provenance.iter().rev().find(|p| p.field == "rw");
        Err(JobError::unsupported(
            setter.map_or_else(|| job_location.clone(), |p| p.location.clone()),
            setter.map_or("rw", |p| p.key_as_written.as_str()),
            setter.and_then(|p| p.value.clone()),
            "fio 3.33 fails a trim of a regular file (its os_trim is BLKDISCARD alone: error \
             25, ENOTTY) and storlab would punch holes instead; trim a block device, a \
             simulated drive (filename=sim:...) or ioengine=null",
        ))
    }

    /// fio 3.33's mmap engine refuses a smallest block that is not whole pages when the job
    /// syncs or asks for direct I/O (engines/mmap.c, `fio_mmapio_init`: msync works on whole
    /// pages), so a fio job is refused there as fio refuses it.
    fn check_mmap_pages(&self, spec: &JobSpec, job_location: &Location) -> Result<(), JobError> {
        /// x86-64's page size, fio's `page_size` there.
        const PAGE_BYTES: u64 = 4096;
        let smallest = spec
            .block_size_read
            .min_bytes()
            .min(spec.block_size_write.min_bytes());
        let syncs =
            spec.direct || spec.sync.fsync_every_writes > 0 || spec.sync.fdatasync_every_writes > 0;
        if self.storlab_rw_default
            || spec.engine != EngineKind::Mmap
            || !syncs
            || smallest.is_multiple_of(PAGE_BYTES)
        {
            return Ok(());
        }
        let setter = self.provenance.iter().rev().find(|p| p.field == "ioengine");
        Err(JobError::unsupported(
            setter.map_or_else(|| job_location.clone(), |p| p.location.clone()),
            setter.map_or("ioengine", |p| p.key_as_written.as_str()),
            setter.and_then(|p| p.value.clone()),
            format!(
                "with {smallest}-byte blocks and direct, fsync or fdatasync: fio 3.33 refuses \
                 blocks that are not whole {PAGE_BYTES}-byte pages there (engines/mmap.c)"
            ),
        ))
    }

    fn check_replay(&self, job_location: &Location) -> Result<(), JobError> {
        let Some(trace) = &self.read_iolog else {
            return Ok(());
        };
        let setter = self
            .provenance
            .iter()
            .rev()
            .find(|p| p.field == "read_iolog");
        let refuse = |detail: String| {
            JobError::unsupported(
                setter.map_or_else(|| job_location.clone(), |p| p.location.clone()),
                setter.map_or("read_iolog", |p| p.key_as_written.as_str()),
                setter.and_then(|p| p.value.clone()),
                detail,
            )
        };
        let redirected = self.replay_redirect.is_some() || self.target_override.is_some();
        if let (false, Some((second, line))) = (redirected, trace.files.get(1)) {
            return Err(refuse(format!(
                "{}:{line}: a second file, {second}: storlab replays one file per job (replay_redirect=FILE sends every I/O to one)",
                trace.path.display()
            )));
        }
        if self.loops.is_some_and(|l| l > 1) {
            return Err(refuse(
                "storlab replays a trace once; loops above 1 are refused with it".into(),
            ));
        }
        if self.verify == Some(true) {
            return Err(refuse(
                "storlab's verify checks its own generated I/O, not a replayed trace; drop verify"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The engine and target the job runs on, with a warning when settings are ignored.
    fn engine_and_target(&self, job_name: &str) -> (EngineKind, Target, Vec<String>) {
        let filename = self.replay_filename().or_else(|| self.filename.clone());
        let sim_profile = filename
            .as_deref()
            .and_then(|f| f.strip_prefix(SIM_TARGET_PREFIX));
        let engine = self.engine.unwrap_or(if sim_profile.is_some() {
            EngineKind::Sim
        } else {
            // fio's default engine.
            EngineKind::Psync
        });
        if let Some(target) = &self.target_override {
            let asked = self
                .foreign_engine
                .as_ref()
                .map_or(engine, |f| f.equivalent);
            let engine = match (target, asked) {
                (Target::Sim(_), _) => EngineKind::Sim,
                (Target::None, _) => EngineKind::Null,
                (_, EngineKind::Sim | EngineKind::Null) => EngineKind::Psync,
                (_, engine) => engine,
            };
            // A known engine the target replaces is the point of `--target` and goes unsaid
            // (presets name io_uring and run on simulated drives); a name storlab has no engine
            // for would have been refused without the target, so the note says what ran instead.
            let warnings = self
                .foreign_engine
                .iter()
                .map(|foreign| {
                    format!(
                        "ioengine={} replaced by {}: storlab has no {} engine and the target {} decides the engine",
                        foreign.name,
                        engine.as_str(),
                        foreign.name,
                        target_label(target)
                    )
                })
                .collect();
            return (engine, target.clone(), warnings);
        }
        let mut warnings = Vec::new();
        let target = match (engine, sim_profile, &filename, &self.directory) {
            (_, Some(profile), _, _) => Target::Sim(profile.to_string()),
            (EngineKind::Null, _, filename, directory) => {
                if filename.is_some() || directory.is_some() {
                    warnings.push(
                        "ioengine=null does no I/O: filename and directory are ignored".to_string(),
                    );
                }
                Target::None
            }
            (_, None, Some(filename), directory) => {
                let path = Path::new(filename);
                match directory {
                    Some(dir) if path.is_relative() => Target::Path(dir.join(path)),
                    _ => Target::Path(path.to_path_buf()),
                }
            }
            (_, None, None, directory) if self.filename_format.is_some() => {
                let format = self.filename_format.as_deref().expect("checked");
                let name = expand_filename_format(format, job_name);
                let path = Path::new(&name);
                match directory {
                    Some(dir) if path.is_relative() => Target::Path(dir.join(path)),
                    _ => Target::Path(path.to_path_buf()),
                }
            }
            (_, None, None, Some(directory)) => Target::TempFileIn(directory.clone()),
            (_, None, None, None) => Target::TempFileIn(PathBuf::from(".")),
        };

        (engine, target, warnings)
    }

    /// The one-line refusal of an `ioengine` storlab has no engine for, at the line or flag that
    /// named it.
    fn engine_refusal(&self, foreign: &ForeignEngine, job_location: &Location) -> JobError {
        let setter = self.provenance.iter().rev().find(|p| p.field == "ioengine");
        JobError::unsupported(
            setter.map_or_else(|| job_location.clone(), |p| p.location.clone()),
            setter.map_or("ioengine", |p| p.key_as_written.as_str()),
            setter
                .and_then(|p| p.value.clone())
                .or_else(|| Some(foreign.name.clone())),
            foreign.hint.clone(),
        )
    }

    /// Points a validation error at the line or flag that set the offending key, with the value
    /// as the user wrote it; errors about unset keys or the whole job go to `job_location`.
    /// fio's `wait_for` checks (init.c, `wait_for_ok`), against the jobs before this one: the
    /// named job exists among them, once, and is not this job.
    pub(crate) fn check_wait_for(
        &self,
        spec: &JobSpec,
        earlier: &[JobSpec],
        job_location: &Location,
    ) -> Result<(), JobError> {
        let Some(waitee) = &spec.wait_for else {
            return Ok(());
        };
        let named = earlier.iter().filter(|job| &job.name == waitee).count();
        let problem = if waitee == &spec.name {
            "a job cannot wait for itself".to_string()
        } else if named == 0 {
            format!(
                "no job named '{waitee}' comes before this one (fio waits only for an earlier job)"
            )
        } else if named > 1 {
            format!("{named} jobs before this one are named '{waitee}'; fio refuses a name that is not unique")
        } else {
            return Ok(());
        };
        let error = JobError::invalid(
            job_location.clone(),
            "wait_for",
            Some(waitee.clone()),
            problem,
        );
        Err(self.relocate(error, job_location))
    }

    fn relocate(&self, mut error: JobError, job_location: &Location) -> JobError {
        let setter = error
            .key
            .as_deref()
            .and_then(|field| self.provenance.iter().rev().find(|p| p.field == field));
        match setter {
            Some(p) => {
                error.location = p.location.clone();
                error.key = Some(p.key_as_written.as_str().into());
                error.value = p.value.as_deref().map(Into::into);
            }
            None => error.location = job_location.clone(),
        }
        error
    }
}

/// Whether `target` is a regular file (or one still to be made).
fn on_a_file(target: &Target) -> bool {
    match target {
        Target::TempFileIn(_) => true,
        Target::Path(path) => std::fs::metadata(path).map_or(true, |m| m.is_file()),
        Target::Sim(_) | Target::None => false,
    }
}

/// Whether `spec` trims a regular file through a real engine (storlab punches holes there).
fn trims_a_file(spec: &JobSpec) -> bool {
    spec.trim != TrimMode::None && on_a_file(&spec.target) && spec.engine != EngineKind::Null
}

/// Where a job of a fio file or fio-style flags relies on a storlab default that makes its I/O
/// differ from fio's, the first such job gets one note saying so and how to get fio's
/// behaviour: the run prints it once, not once per job. The one such default is the 4 KiB
/// alignment of random offsets: fio's `blockalign` defaults to the smallest block size (fio
/// HOWTO, `blockalign`). (storlab's other deliberate default, incompressible data, is fio's
/// default too: fio fills its buffers with random bytes unless asked otherwise.)
pub(crate) fn note_fio_differences(jobs: &mut [JobSpec]) {
    let differing = jobs.iter().position(|job| fio_alignment(job).is_some());
    if let Some(index) = differing {
        let job = &mut jobs[index];
        let fio_align = fio_alignment(job).expect("found above");
        let size = crate::size::format_size(fio_align);
        job.warnings.push(format!(
            "storlab differs from fio here: random offsets are multiples of storlab's {} \
             alignment, where fio aligns them to the smallest block size ({size}); set \
             blockalign={fio_align} for fio's offsets",
            crate::size::format_size(job.align_bytes),
        ));
    }
}

/// fio's alignment of `job`'s random offsets (`blockalign`, by default the smallest block
/// size), when storlab's default alignment puts them elsewhere.
fn fio_alignment(job: &JobSpec) -> Option<u64> {
    if job.align_given || (job.random_percent == 0 && job.random_percent_writes() == 0) {
        return None;
    }
    let smallest = job
        .block_size_read
        .min_bytes()
        .min(job.block_size_write.min_bytes());
    let one_size = match (&job.block_size_read, &job.block_size_write) {
        (BlockSizeSpec::Fixed(read), BlockSizeSpec::Fixed(write)) => read == write,
        _ => false,
    };
    // The random map spaces one fixed size a block apart, rounded up to the alignment
    // (`storlab_runner::offsets`); every other random offset is a multiple of the alignment.
    let storlab_spacing = if one_size && job.random_map && job.fully_random() {
        smallest.next_multiple_of(job.align_bytes.max(1))
    } else {
        job.align_bytes
    };
    (smallest > 0 && storlab_spacing != smallest).then_some(smallest)
}

/// A target as the command line names it, for notes.
fn target_label(target: &Target) -> String {
    match target {
        Target::Path(path) => path.display().to_string(),
        Target::TempFileIn(dir) => format!("a temporary file in {}", dir.display()),
        Target::Sim(stack) => format!("{SIM_TARGET_PREFIX}{stack}"),
        Target::None => "none".to_string(),
    }
}

fn set_if<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

fn to_u32(value: u64, text: &str) -> Result<u32, ApplyError> {
    u32::try_from(value).map_err(|_| ApplyError::Invalid(format!("'{text}' is too large")))
}

/// Both directions of a read,write pair must agree for settings storlab keeps once per job.
fn single_for_both<T: PartialEq + Copy>(
    text: &str,
    parse: impl Fn(&str) -> Result<T, ValueError>,
) -> Result<T, ApplyError> {
    let (read, write) = split_read_write(text)?;
    let read = read.map(&parse).transpose()?;
    let write = write.map(&parse).transpose()?;
    match (read, write) {
        (Some(r), Some(w)) if r == w => Ok(r),
        (Some(_), Some(_)) => Err(ApplyError::Unsupported(
            "storlab takes one value for both directions here".into(),
        )),
        (Some(v), None) | (None, Some(v)) => Ok(v),
        (None, None) => Err(ApplyError::Invalid("a value is needed".into())),
    }
}

/// `rw=MODE[:N]`: fio's offset modifier is a size for a sequential mode (a hole after each
/// I/O) and a count for a random one (a new random offset every N I/Os).
fn apply_rw(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    let (v, modifier) = match v.split_once(':') {
        Some((mode, n)) => (mode, Some(n)),
        None => (v, None),
    };
    let mode =
        match v {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "rw" | "readwrite" => RwMode::Mixed,
            "randrw" => RwMode::RandMixed,
            "trim" => RwMode::Trim,
            "randtrim" => RwMode::RandTrim,
            "trimwrite" => RwMode::TrimWrite,
            "randtrimwrite" => RwMode::RandTrimWrite,
            _ => return Err(ApplyError::Invalid(
                "unknown mode; use read, write, randread, randwrite, rw, randrw, trim, randtrim, \
                 trimwrite or randtrimwrite"
                    .into(),
            )),
        };
    d.rw_modifier = match modifier {
        None => None,
        // fio (options.c, `str_rw_cb`) reads a sequential mode's `:N` as a signed size.
        Some(n) if !mode.is_random() && n.trim_start().starts_with('-') => Some(
            RwModifier::BackBytes(parse_size(n.trim_start()[1..].trim_start())?),
        ),
        Some(n) if mode.is_random() => {
            let every = to_u32(parse_count(n)?, n)?;
            if every == 0 {
                return Err(ApplyError::Invalid(
                    "':N' of a random mode counts I/Os per random offset: at least 1".into(),
                ));
            }
            Some(RwModifier::RandomEveryIos(every))
        }
        Some(n) => Some(RwModifier::SkipBytes(parse_size(n)?)),
    };
    d.rw = Some(mode);
    Ok(())
}

/// A seed no earlier run had, for `randrepeat=0`: std's `RandomState` keys its hashers from the
/// operating system's randomness, so hashing nothing with a new one gives a fresh 64-bit value.
/// The run records the seed it used like any other, so the run can still be repeated with
/// `randseed=`.
fn seed_from_os_entropy() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}

/// What the refusal of an engine of [`OUT_OF_SCOPE_ENGINES`] says after naming it.
pub(crate) const OUT_OF_SCOPE_HINT: &str =
    "out of scope: storlab measures local files, block devices and its simulated stacks";

/// Whether `ioengine=NAME` names an engine storlab refuses by design: one of
/// [`OUT_OF_SCOPE_ENGINES`], or an external engine loaded from a shared object
/// (`external:PATH`, fio's form; `cpp_null` is fio's example of one).
pub(crate) fn is_out_of_scope_engine(name: &str) -> bool {
    OUT_OF_SCOPE_ENGINES.contains(&name) || name.starts_with("external:")
}

/// `ioengine=`: a storlab engine (from the one list, [`EngineKind::ALL`]), or a name storlab has
/// no engine for, remembered and refused when the job is finished unless the command line's
/// target decides the engine ([`JobDraft::override_target`]): a job file written for fio still
/// runs on `--target`. Engines outside storlab's scope ([`OUT_OF_SCOPE_ENGINES`]) say so.
fn apply_ioengine(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    let foreign = |hint: String, equivalent: EngineKind| ForeignEngine {
        name: v.to_string(),
        hint,
        equivalent,
        out_of_scope: false,
    };
    let (engine, foreign) = match EngineKind::from_name(v) {
        Some(engine) => (Some(engine), None),
        None if is_out_of_scope_engine(v) => (
            None,
            Some(ForeignEngine {
                out_of_scope: true,
                ..foreign(OUT_OF_SCOPE_HINT.to_string(), EngineKind::Psync)
            }),
        ),
        None => match v {
            "windowsaio" | "solarisaio" => (
                None,
                Some(foreign(
                    "that engine is for another OS; use ioengine=libaio or io_uring".into(),
                    EngineKind::Libaio,
                )),
            ),
            "pvsync" | "vsync" => (
                None,
                Some(foreign(
                    "use ioengine=pvsync2 (preadv2/pwritev2) or psync".into(),
                    EngineKind::Pvsync2,
                )),
            ),
            _ => (
                None,
                Some(foreign(
                    format!(
                        "unknown engine; storlab's engines are {}",
                        EngineKind::names_joined()
                    ),
                    EngineKind::Psync,
                )),
            ),
        },
    };
    d.engine = engine;
    d.foreign_engine = foreign;
    Ok(())
}

fn apply_filename(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    if let Some(profile) = v.strip_prefix(SIM_TARGET_PREFIX) {
        if profile.is_empty() {
            return Err(ApplyError::Invalid(
                "sim: needs a profile name (e.g. sim:usb3-uas-ssd)".into(),
            ));
        }
    } else if v.contains(':') {
        return Err(ApplyError::Unsupported(
            "storlab runs one file per job; fio's ':'-separated file list is not supported".into(),
        ));
    }
    d.filename = Some(v.to_string());
    Ok(())
}

/// The errno names fio 3.33's `ignore_error` knows (options.c, `str2error`), each the Linux
/// errno one more than its index: any other error must be given by number.
const FIO_ERRNO_NAMES: [&str; 34] = [
    "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD",
    "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV",
    "ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC",
    "ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE",
];

/// C's `atoi` as fio uses it: leading blanks, a sign, then as many digits as there are; 0 when
/// there are none (and on overflow, where C's is undefined).
fn c_atoi(text: &str) -> i32 {
    let text = text.trim_start();
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let end = digits
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    let value = digits[..end].parse::<i32>().unwrap_or(0);
    if negative {
        -value
    } else {
        value
    }
}

/// fio's `ignore_error` (options.c, `str_ignore_error_cb`): up to three lists separated by
/// ',' for read, write and verify errors, each of errors separated by ':', an `E` name fio
/// knows or a number (its sign dropped). A list replaces fio's default (EIO, EILSEQ) for its
/// kind and turns `continue_on_error` on for it; an empty list (`ignore_error=,ENOSPC`) leaves
/// the kind as it was, and an empty entry ends its list, as fio's `strsep` loop.
fn apply_ignore_error(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    const KINDS: usize = 3;
    let parts: Vec<&str> = v.trim().split(',').collect();
    if parts.len() > KINDS {
        return Err(ApplyError::Invalid(
            "at most three lists (read,write,verify); errors within a list are separated by ':'"
                .into(),
        ));
    }
    let mut on_error = d.continue_on_error.clone().unwrap_or_default();
    for (kind, part) in parts.into_iter().enumerate() {
        let mut errnos = Vec::new();
        for name in part.split(':') {
            if name.is_empty() {
                break;
            }
            let errno = if name.starts_with('E') {
                FIO_ERRNO_NAMES
                    .iter()
                    .position(|known| *known == name)
                    .map_or(0, |index| index as i32 + 1)
            } else {
                c_atoi(name).saturating_abs()
            };
            if errno == 0 {
                return Err(ApplyError::Invalid(format!(
                    "unknown error '{name}': fio knows EPERM to ERANGE by name, give others by number"
                )));
            }
            errnos.push(errno);
        }
        if errnos.is_empty() {
            continue;
        }
        let (passes, list) = match kind {
            0 => (&mut on_error.read, &mut on_error.ignored_read),
            1 => (&mut on_error.write, &mut on_error.ignored_write),
            _ => (&mut on_error.verify, &mut on_error.ignored_verify),
        };
        *passes = true;
        *list = Some(errnos);
    }
    d.continue_on_error = Some(on_error);
    Ok(())
}

/// fio's `continue_on_error` values (options.c): a kind, a pair of them, or all.
fn apply_continue_on_error(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    let (read, write, verify) = match v.trim().to_ascii_lowercase().as_str() {
        "none" | "0" => (false, false, false),
        "read" => (true, false, false),
        "write" => (false, true, false),
        "io" => (true, true, false),
        "verify" => (false, false, true),
        "all" | "1" => (true, true, true),
        other => {
            return Err(ApplyError::Invalid(format!(
                "'{other}' is not one of none, read, write, io, verify, all, 0, 1"
            )))
        }
    };
    // fio's continue_on_error sets the kinds alone; lists an ignore_error gave stay.
    let mut on_error = d.continue_on_error.clone().unwrap_or_default();
    on_error.read = read;
    on_error.write = write;
    on_error.verify = verify;
    d.continue_on_error = Some(on_error);
    Ok(())
}

fn apply_verify(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    let (verify, kind) =
        match v {
            "0" | "none" => (false, None),
            // storlab's own check alone: per-write data compared byte for byte, no fio header.
            "1" => (true, None),
            // fio 3.33 never finalises these two digests (verify.c fills the header with the hash's
            // working buffer), so its blocks cannot be written or checked by another tool: the job
            // runs with storlab's own check, and says so.
            "sha256" | "sha512" => {
                accept_without_effect(d, "verify=sha256|sha512");
                (true, None)
            }
            _ => match VerifyKind::from_fio_name(v) {
                Some(kind) => (true, Some(kind)),
                None => return Err(ApplyError::Invalid(
                    "unknown verify kind; use a fio checksum name (md5, crc32c, sha1, xxhash...), \
                     meta, pattern, null or 0"
                        .into(),
                )),
            },
        };
    d.verify = Some(verify);
    d.verify_kind = kind;
    Ok(())
}

fn apply_data_pattern(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    d.data_pattern = Some(match v {
        "random" => DataPattern::Random,
        "zeros" | "zero" => DataPattern::Zeros,
        _ => match v.strip_prefix(COMPRESSIBLE_PREFIX) {
            Some(percent) => DataPattern::Compressible(parse_percent(percent)?),
            None => {
                return Err(ApplyError::Invalid(
                    "unknown pattern; use random, zeros or compressible:PERCENT".into(),
                ))
            }
        },
    });
    Ok(())
}

fn apply_rate_iops(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    (d.rate_iops_read, d.rate_iops_write) = parse_rate_pair(v, parse_count, "500 or 500,200")?;
    Ok(())
}

/// A rate for both directions or `read,write` (either may be left out), each read by `parse`.
/// fio's `read,write[,trim]` rate: the trim value is checked and has no effect, since storlab
/// does not pace trims (a trim mode of `rw` issues them unpaced); fio's exitwhat.fio gives `rate=300,300,300`.
fn parse_rate_pair(
    v: &str,
    parse: fn(&str) -> Result<u64, ValueError>,
    example: &str,
) -> Result<(Option<u64>, Option<u64>), ApplyError> {
    let v = match v.split(',').collect::<Vec<_>>().as_slice() {
        [read, write, trim] => {
            if !trim.trim().is_empty() {
                parse(trim.trim())?;
            }
            &v[..read.len() + 1 + write.len()]
        }
        _ => v,
    };
    let (read, write) = split_read_write(v)?;
    if read.is_none() && write.is_none() {
        return Err(ApplyError::Invalid(format!(
            "a rate is needed (e.g. {example})"
        )));
    }
    Ok((read.map(parse).transpose()?, write.map(parse).transpose()?))
}

fn apply_block_sizes(
    d: &mut JobDraft,
    pair: (Option<BlockSizeSpec>, Option<BlockSizeSpec>),
) -> Result<(), ApplyError> {
    if let Some(read) = pair.0 {
        d.block_size_read = Some(read);
    }
    if let Some(write) = pair.1 {
        d.block_size_write = Some(write);
    }
    Ok(())
}

/// A block-size key's read and write specs, as `crate::size` parses them.
type ReadWriteSizes = (Option<BlockSizeSpec>, Option<BlockSizeSpec>);

/// A block-size key in fio's `read,write,trim` form: the first two values as `read,write`, the
/// third the trims' (fio's parse.c: the first value sets all three directions, the second the
/// writes, the third the trims). Trims are issued only by the trim modes of `rw`; elsewhere the
/// trim value has no use, as in fio.
fn apply_block_sizes_with_trim(
    d: &mut JobDraft,
    v: &str,
    parse: fn(&str) -> Result<ReadWriteSizes, ValueError>,
) -> Result<(), ApplyError> {
    let parts: Vec<&str> = v.splitn(3, ',').collect();
    if let [read, write, trim] = parts.as_slice() {
        apply_block_sizes(d, parse(&format!("{read},{write}"))?)?;
        if !trim.trim().is_empty() {
            d.block_size_trim = parse(trim)?.0;
        }
        return Ok(());
    }
    let pair = parse(v)?;
    if parts.len() == 1 {
        // One value: every direction, trims included.
        d.block_size_trim = pair.0.clone();
    }
    apply_block_sizes(d, pair)
}

/// Why a `bssplit` list given to `bsrange` is refused, with what fio makes of it: fio 3.33's
/// range parser (parse.c, `FIO_OPT_RANGE`) cuts the value at its first `-` (else `:`) and reads
/// each side with `str_to_decimal`, which keeps the leading number and its unit letters and
/// drops the rest unread. fio's own t0023 has `bsrange=512/25:1k:25:2k:25:4k/25` in a section
/// named `bssplit`, which fio runs as the range 512-1k: a split mistyped, read by accident.
fn split_given_as_range(value: &str) -> String {
    let first = value.split(',').next().unwrap_or(value);
    let cut = first.find('-').or_else(|| first.find(':'));
    let leading = |side: &str| -> String {
        let digits = side.len() - side.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let unit = side[digits..]
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .count();
        side[..digits + unit].to_string()
    };
    let fio_reads = match cut {
        Some(at) => format!(
            "fio 3.33 reads it as the range {}-{} and drops the rest unread",
            leading(&first[..at]),
            leading(&first[at + 1..])
        ),
        None => "fio 3.33 refuses it too".to_string(),
    };
    format!(
        "SIZE/PERCENT is bssplit's form, not a range; {fio_reads} (its number parser stops at \
         the first character after a unit); write bsrange=MIN-MAX, or bssplit={value} for a split"
    )
}

/// fio's `filename_format` with its variables filled in: `$jobname`, and `$jobnum` and
/// `$filenum` as 0 (storlab's job has one file, which its workers share).
fn expand_filename_format(format: &str, job_name: &str) -> String {
    format
        .replace("$jobname", job_name)
        .replace("$jobnum", "0")
        .replace("$filenum", "0")
}

/// What an accepted key does in fio that storlab does not, for its warning.
fn no_effect_reason(key: &str) -> &'static str {
    match key {
        "verify_pattern" => "accepted, no effect: fio writes and checks it only when verifying",
        "verify=sha256|sha512" => {
            "checked with storlab's own per-write data, without fio's header: fio 3.33's sha256 \
             and sha512 headers hold the hash's unfinished working buffer, not a digest, so no \
             other tool can write or check them (sha1 and sha3-* are fio's, byte for byte)"
        }
        "verify_async" => {
            "accepted, no effect on what is checked: fio hands checks to helper threads, storlab \
             checks in the thread that reaps the read"
        }
        "numa_cpu_nodes" => {
            "accepted, no effect: storlab does not bind its worker threads to NUMA nodes"
        }
        "fallocate" => {
            "accepted, no effect: storlab writes every block of a file it lays out before the \
             job starts (it measures no sparse or preallocated-unwritten file), which allocates \
             the file whatever the mode; fio's first writes into a file it left sparse \
             (none, truncate) or preallocated (native, posix, keep) also allocate or convert \
             extents, which storlab's overwrites do not"
        }
        _ => "accepted, no effect",
    }
}

/// fio 3.33's `FLOW_MAX_WEIGHT` (flow.h): the largest `flow` weight its option parser takes.
const FLOW_MAX_WEIGHT: u32 = 1000;

/// linux/ioprio.h: `IOPRIO_CLASS_RT` to `IOPRIO_CLASS_IDLE`, the classes fio's `cmdprio_class`
/// takes.
const IOPRIO_CLASS_FIRST: u64 = 1;
const IOPRIO_CLASS_LAST: u64 = 3;
/// linux/ioprio.h: levels `0..IOPRIO_NR_LEVELS` (8) within the real-time and best-effort
/// classes, the values fio's `cmdprio` takes.
const IOPRIO_LEVEL_LAST: u64 = 7;

/// `cmdprio_class`: a class of linux/ioprio.h that carries a level.
fn parse_ioprio_class(text: &str) -> Result<u8, ApplyError> {
    match parse_count(text)? {
        class @ IOPRIO_CLASS_FIRST..=IOPRIO_CLASS_LAST => Ok(class as u8),
        _ => Err(ApplyError::Invalid(
            "use 1 (real-time), 2 (best-effort) or 3 (idle)".into(),
        )),
    }
}

/// `cmdprio`: a level within a class.
fn parse_ioprio_level(text: &str) -> Result<u8, ApplyError> {
    match parse_count(text)? {
        level @ 0..=IOPRIO_LEVEL_LAST => Ok(level as u8),
        _ => Err(ApplyError::Invalid(format!(
            "a priority level is 0 (highest) to {IOPRIO_LEVEL_LAST}"
        ))),
    }
}

/// fio's `read,write[,trim]` form of a cmdprio key (one value: every direction). fio gives
/// trims no command priority (engines/cmdprio.h: reads and writes only) and storlab's jobs
/// issue none, so a trim value is checked with `parse` and has no use. An empty value leaves
/// its direction unset.
fn read_write_dropping_trim<T: Clone>(
    text: &str,
    parse: impl Fn(&str) -> Result<T, ApplyError>,
) -> Result<(Option<T>, Option<T>), ApplyError> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let parse_part = |part: &str| -> Result<Option<T>, ApplyError> {
        if part.is_empty() {
            Ok(None)
        } else {
            parse(part).map(Some)
        }
    };
    match parts.as_slice() {
        [both] => match parse_part(both)? {
            Some(value) => Ok((Some(value.clone()), Some(value))),
            None => Err(ApplyError::Invalid("a value is needed".into())),
        },
        [read, write] => Ok((parse_part(read)?, parse_part(write)?)),
        [read, write, trim] => {
            parse_part(trim)?;
            Ok((parse_part(read)?, parse_part(write)?))
        }
        _ => Err(ApplyError::Invalid(format!(
            "'{text}' has more than three values (read,write,trim)"
        ))),
    }
}

/// fio's limit on `cmdprio_bssplit` entries per direction (BSSPLIT_MAX).
const CMDPRIO_BSSPLIT_ENTRIES_MAX: usize = 64;

/// `cmdprio_bssplit` as fio 3.33 reads it (options.c, `split_parse_prio_ddir`): per direction
/// (`READ,WRITE[,TRIM]`, one list for all; the trim list is checked and has no use) a
/// `:`-separated list of `SIZE/PERCENT` or `SIZE/PERCENT/CLASS/LEVEL`, at most 64, sorted by
/// size with 0% entries dropped; the entries of one size may not add up past 100%.
fn parse_cmdprio_bssplit(text: &str) -> Result<(Vec<CmdPrioSplit>, Vec<CmdPrioSplit>), ApplyError> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let (read, write) = match parts.as_slice() {
        [all] => (*all, *all),
        [read, write] => (*read, *write),
        [read, write, trim] => {
            parse_cmdprio_bssplit_list(trim)?;
            (*read, *write)
        }
        _ => {
            return Err(ApplyError::Invalid(format!(
                "'{text}' has more than three lists (read,write,trim)"
            )))
        }
    };
    let (read, write) = (
        parse_cmdprio_bssplit_list(read)?,
        parse_cmdprio_bssplit_list(write)?,
    );
    if read.is_empty() && write.is_empty() {
        return Err(ApplyError::Invalid(
            "a list SIZE/PERCENT[/CLASS/LEVEL]:... is needed".into(),
        ));
    }
    Ok((read, write))
}

/// One direction's `cmdprio_bssplit` list (see [`parse_cmdprio_bssplit`]).
fn parse_cmdprio_bssplit_list(list: &str) -> Result<Vec<CmdPrioSplit>, ApplyError> {
    let mut entries = Vec::new();
    // fio stops at the first empty entry (`4k/10::8k/20` is `4k/10`).
    for entry in list.split(':').take_while(|e| !e.trim().is_empty()) {
        let fields: Vec<&str> = entry.split('/').map(str::trim).collect();
        let invalid = || {
            ApplyError::Invalid(format!(
                "'{entry}' is not SIZE/PERCENT or SIZE/PERCENT/CLASS/LEVEL"
            ))
        };
        let (size, percent, class_level) = match fields.as_slice() {
            [size] => (*size, None, None),
            [size, percent] => (*size, Some(*percent), None),
            [size, percent, class, level] => (
                *size,
                Some(*percent),
                Some((parse_ioprio_class(class)?, parse_ioprio_level(level)?)),
            ),
            _ => return Err(invalid()),
        };
        let block_size_bytes = parse_size(size)?;
        // fio: a missing percentage is 0, one above 100 is 100.
        let percent = match percent {
            Some(p) => parse_count(p)?.min(100) as u8,
            None => 0,
        };
        if percent > 0 {
            entries.push(CmdPrioSplit {
                block_size_bytes,
                percent,
                class_level,
            });
        }
    }
    if entries.len() > CMDPRIO_BSSPLIT_ENTRIES_MAX {
        return Err(ApplyError::Invalid(format!(
            "more than {CMDPRIO_BSSPLIT_ENTRIES_MAX} entries (fio's limit)"
        )));
    }
    // Stable, as fio's qsort keeps equal sizes in no promised order; the order within one
    // size only decides which priority a draw lands on, not how many I/Os get one.
    entries.sort_by_key(|e| e.block_size_bytes);
    for size in entries.iter().map(|e| e.block_size_bytes) {
        let total: u32 = entries
            .iter()
            .filter(|e| e.block_size_bytes == size)
            .map(|e| u32::from(e.percent))
            .sum();
        if total > 100 {
            return Err(ApplyError::Invalid(format!(
                "the entries for {} add up to {total}%, above 100%",
                crate::size::format_size(size)
            )));
        }
    }
    Ok(entries)
}

/// A size of `0` is accepted (fio's default); anything else is refused with `why`.
fn refuse_unless_zero(value: &str, why: &str) -> Result<(), ApplyError> {
    match parse_size(value)? {
        0 => Ok(()),
        _ => Err(ApplyError::Unsupported(why.into())),
    }
}

/// A boolean key accepted off (fio's default) and refused on, with `why`.
fn refuse_if_set(value: &str, why: &str) -> Result<(), ApplyError> {
    match parse_bool(value)? {
        false => Ok(()),
        true => Err(ApplyError::Unsupported(why.into())),
    }
}

/// A key storlab accepts without reproducing what it does in fio: checked like fio checks it,
/// then remembered for a warning when it asks for something.
/// fio's `startdelay`: one time, or a range `LOW-HIGH` (also `LOW:HIGH` or `LOW,HIGH`, as fio's
/// parser splits a two-value option), each in seconds unless a unit is given.
fn parse_start_delay(v: &str) -> Result<crate::StartDelay, ApplyError> {
    let v = v.trim();
    let (low, high) = match v.find(['-', ':', ',']) {
        // A leading '-' is a negative time, which parse_time_ns names.
        Some(at) if at > 0 => (&v[..at], &v[at + 1..]),
        _ => (v, v),
    };
    let low_ns = parse_time_ns(low, NS_PER_S)?;
    let high_ns = parse_time_ns(high, NS_PER_S)?;
    if low_ns > high_ns {
        return Err(ApplyError::Invalid(format!(
            "the range's low end {low} is above its high end {high}"
        )));
    }
    Ok(crate::StartDelay { low_ns, high_ns })
}

/// A whole number from 0 to `max` (fio's `minval`/`maxval` check of an integer option).
fn parse_small_int(v: &str, max: u8) -> Result<u8, ApplyError> {
    match v.trim().parse::<u8>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(ApplyError::Invalid(format!(
            "a whole number from 0 to {max} is needed"
        ))),
    }
}

fn accept_without_effect(d: &mut JobDraft, key: &'static str) {
    if !d.no_effect.contains(&key) {
        d.no_effect.push(key);
    }
}

/// fio's largest pattern (lib/pattern.h, `MAX_PATTERN_SIZE`).
const PATTERN_MAX_BYTES: usize = 512;

/// A fio data pattern (lib/pattern.c, `parse_and_fill_pattern`): elements written one after
/// another without separators, each `0x` hex bytes (`0xabc` is `0a bc`; `0xff0x14` is two
/// elements), a `"string"`, or a decimal number (fio's `strtol`: the value's low 32 bits as
/// little-endian bytes without the high zero bytes, `0` one zero byte, `-12` `f4 ff ff ff`).
/// fio's `'file'` (the pattern read from a file) and `%o` (the offset) are refused.
fn parse_pattern(text: &str) -> Result<Vec<u8>, ApplyError> {
    Ok(parse_pattern_elements(text, false)?.0)
}

/// Bytes of fio's `%o` in a pattern: the block's offset as a 64-bit number.
const PATTERN_OFFSET_BYTES: usize = 8;

/// [`parse_pattern`], and with `offsets` fio's `%o`: 8 bytes where each block's offset goes
/// (little-endian), returned as their positions.
fn parse_pattern_elements(text: &str, offsets: bool) -> Result<(Vec<u8>, Vec<usize>), ApplyError> {
    let text = text.trim();
    let mut offset_positions = Vec::new();
    let mut bytes = Vec::new();
    let mut rest = text;
    while let Some(first) = rest.chars().next() {
        rest = match first {
            '"' => {
                let Some(end) = rest[1..].find('"') else {
                    return Err(ApplyError::Invalid(format!(
                        "'{rest}': the string has no closing quote"
                    )));
                };
                bytes.extend_from_slice(&rest.as_bytes()[1..1 + end]);
                &rest[end + 2..]
            }
            '\'' => {
                return Err(ApplyError::Unsupported(format!(
                    "'{rest}': fio reads a pattern in single quotes from that file; storlab does \
                     not read pattern files: give the bytes as 0x hex or a \"string\""
                )))
            }
            '%' if offsets && rest.starts_with("%o") => {
                offset_positions.push(bytes.len());
                bytes.extend([0; PATTERN_OFFSET_BYTES]);
                &rest[2..]
            }
            '%' => {
                return Err(ApplyError::Unsupported(format!(
                    "'{rest}': fio's %o (each block's offset) is supported in verify_pattern only"
                )))
            }
            _ => match hex_element(rest) {
                Some((element, after)) => {
                    bytes.extend(element);
                    after
                }
                None => {
                    let (element, after) = decimal_element(rest)?;
                    bytes.extend(element);
                    after
                }
            },
        };
        if bytes.len() > PATTERN_MAX_BYTES {
            break;
        }
    }
    if bytes.is_empty() || bytes.len() > PATTERN_MAX_BYTES {
        return Err(ApplyError::Invalid(format!(
            "a pattern has 1 to {PATTERN_MAX_BYTES} bytes"
        )));
    }
    Ok((bytes, offset_positions))
}

/// A `0x` element at the start of `text` and what follows it (fio's `parse_number`, hex part),
/// or `None` when `text` does not start with `0x` and a hex digit.
fn hex_element(text: &str) -> Option<(Vec<u8>, &str)> {
    let digits_and_rest = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))?;
    let mut len = digits_and_rest
        .bytes()
        .take_while(u8::is_ascii_hexdigit)
        .count();
    if len == 0 {
        return None;
    }
    // fio looks back: in `0xff0x14` the `0` before `x14` starts the next element.
    let after = &digits_and_rest.as_bytes()[len..];
    if len > 1 && matches!(after.first(), Some(b'x' | b'X')) {
        len -= 1;
    }
    let digits = &digits_and_rest[..len];
    // An odd number of digits: the first byte is the first digit alone.
    let padded = if len % 2 == 1 {
        format!("0{digits}")
    } else {
        digits.to_string()
    };
    let element = padded
        .as_bytes()
        .chunks(2)
        .map(|pair| {
            let pair = std::str::from_utf8(pair).expect("ASCII hex digits");
            u8::from_str_radix(pair, 16).expect("checked hex digits")
        })
        .collect();
    Some((element, &digits_and_rest[len..]))
}

/// A decimal element at the start of `text` and what follows it (fio's `parse_number`,
/// decimal part).
fn decimal_element(text: &str) -> Result<(Vec<u8>, &str), ApplyError> {
    let sign_len = usize::from(text.starts_with('-'));
    let digits_len = text[sign_len..]
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    let end = sign_len + digits_len;
    if digits_len == 0 {
        return Err(ApplyError::Invalid(format!(
            "'{text}' is not a pattern element: 0x hex bytes, a \"string\" or a decimal number"
        )));
    }
    let value: i64 = text[..end]
        .parse()
        .map_err(|_| ApplyError::Invalid(format!("'{}' is out of range", &text[..end])))?;
    let mut element = Vec::new();
    if value == 0 {
        element.push(0);
    } else {
        // fio keeps the value's low 32 bits (`(unsigned int)lval`).
        let mut low = value as u32;
        while low != 0 {
            element.push((low & 0xff) as u8);
            low >>= 8;
        }
    }
    Ok((element, &text[end..]))
}

/// fio's default steady-state limit, 0.01% (of the mean), in millionths of a percent.
const STEADYSTATE_DEFAULT_LIMIT_MICROS: u64 = 10_000;

/// `steadystate=iops|iops_slope|bw|bw_slope:LIMIT[%]` (fio 3.33, options.c `str_steadystate_cb`).
fn apply_steadystate(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    let Some((criterion, limit)) = v.split_once(':') else {
        return Err(ApplyError::Invalid(
            "use CRITERION:LIMIT, e.g. iops_slope:0.1% (criteria: iops, iops_slope, bw, bw_slope)"
                .into(),
        ));
    };
    let (bandwidth, slope) = match criterion {
        "iops" => (false, false),
        "iops_slope" => (false, true),
        "bw" => (true, false),
        "bw_slope" => (true, true),
        _ => {
            return Err(ApplyError::Invalid(
                "criteria are iops, iops_slope, bw and bw_slope".into(),
            ))
        }
    };
    let (number, percent) = match limit.strip_suffix('%') {
        Some(number) => (number, true),
        None => (limit, false),
    };
    // fio reads an absolute bandwidth limit as a size (`bw:10m`).
    let limit_micros = if bandwidth && !percent {
        parse_size(number)?
            .checked_mul(MICROS_PER_UNIT)
            .ok_or_else(|| ApplyError::Invalid(format!("'{number}' is too large")))?
    } else {
        parse_micros(number)?
    };
    d.steadystate_criterion = Some((bandwidth, slope, limit_micros, percent));
    Ok(())
}

/// fio reads `thinktime` and `thinktime_spin` without a unit as microseconds.
const NS_PER_US: u64 = 1_000;

/// `sync=`: fio 3.33's `none`/`0`, `sync`/`1` (O_SYNC) or `dsync` (O_DSYNC).
fn apply_open_sync(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    d.open_sync = Some(match v.to_ascii_lowercase().as_str() {
        "0" | "none" | "false" | "no" | "off" => OpenSync::None,
        "1" | "sync" | "true" | "yes" | "on" => OpenSync::Sync,
        "dsync" => OpenSync::Dsync,
        _ => {
            return Err(ApplyError::Invalid(
                "use none (or 0), sync (or 1, O_SYNC) or dsync (O_DSYNC)".into(),
            ))
        }
    });
    Ok(())
}

/// A count of writes between two syncs (`fsync=N`, `fdatasync=N`): 0 turns them off.
fn parse_sync_every(v: &str) -> Result<u32, ApplyError> {
    to_u32(parse_count(v)?, v)
}

/// A non-negative decimal (`1.2`, `0.25`, `90`) in millionths; at most six decimals.
fn parse_micros(text: &str) -> Result<u64, ApplyError> {
    const DECIMALS_MAX: usize = 6;
    let invalid = || ApplyError::Invalid(format!("'{text}' is not a number such as 1.2"));
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty()
        || !digits(whole)
        || !digits(fraction)
        || fraction.len() > DECIMALS_MAX
    {
        return Err(invalid());
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| invalid())?
    };
    let scaled_fraction: u64 = format!("{fraction:0<DECIMALS_MAX$}")
        .parse()
        .map_err(|_| invalid())?;
    whole
        .checked_mul(MICROS_PER_UNIT)
        .and_then(|w| w.checked_add(scaled_fraction))
        .ok_or_else(invalid)
}

/// `random_distribution=`: fio 3.33's `random`, `zipf:THETA[:CENTER]`, `pareto:H[:CENTER]`,
/// `normal:DEV[:CENTER]` (`gauss` too), `zoned:A/S:...` and `zoned_abs:A/SIZE:...`, with fio's
/// range checks (options.c, `str_random_distribution_cb`).
fn apply_random_distribution(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    let invalid = |detail: &str| Err(ApplyError::Invalid(detail.to_string()));
    let (kind, params) = v.split_once(':').unwrap_or((v, ""));
    let center = |text: Option<&str>| -> Result<Option<u64>, ApplyError> {
        let Some(text) = text else { return Ok(None) };
        let center = parse_micros(text)?;
        if center > MICROS_PER_UNIT {
            return Err(ApplyError::Invalid(
                "the center must be between 0 and 1 (a share of the region)".into(),
            ));
        }
        Ok(Some(center))
    };
    let mut numbers = params.split(':');
    let first = numbers.next().filter(|t| !t.is_empty());
    let second = numbers.next();
    if numbers.next().is_some() && !kind.starts_with("zoned") {
        return invalid("at most two parameters: VALUE[:CENTER]");
    }
    let distribution = match kind {
        "random" if params.is_empty() => RandomDistribution::Random,
        "zipf" => {
            let Some(theta) = first else {
                return invalid("zipf needs its theta (e.g. zipf:1.2)");
            };
            let theta_micros = parse_micros(theta)?;
            if theta_micros == MICROS_PER_UNIT {
                return invalid("zipf's theta must differ from 1.0 (as in fio)");
            }
            RandomDistribution::Zipf {
                theta_micros,
                center_micros: center(second)?,
            }
        }
        "pareto" => {
            let Some(h) = first else {
                return invalid("pareto needs its h (e.g. pareto:0.9)");
            };
            let h_micros = parse_micros(h)?;
            if h_micros == 0 || h_micros >= MICROS_PER_UNIT {
                return invalid("pareto's h must be above 0 and below 1 (as in fio)");
            }
            RandomDistribution::Pareto {
                h_micros,
                center_micros: center(second)?,
            }
        }
        "normal" | "gauss" => {
            let dev_percent_micros = first.map(parse_micros).transpose()?.unwrap_or(0);
            if dev_percent_micros >= 100 * MICROS_PER_UNIT {
                return invalid("normal's deviation must be below 100 (percent of the region)");
            }
            RandomDistribution::Normal {
                dev_percent_micros,
                center_micros: center(second)?,
            }
        }
        "zoned" | "zoned_abs" => {
            if params.contains(',') {
                return Err(ApplyError::Unsupported(
                    "storlab takes one zone list for both directions".into(),
                ));
            }
            let absolute = kind == "zoned_abs";
            let mut zones = Vec::new();
            // Relative zones whose size is left out (`20/`, `20`, or fio's `20/0`) share what
            // the others leave of 100%, as fio's zone_split_ddir divides it (integer division).
            let mut zones_without_size = Vec::new();
            for zone in params.split(':') {
                let (access, size) = match zone.split_once('/') {
                    Some(pair) => pair,
                    None if !absolute => (zone, ""),
                    None => return invalid("zones are ACCESS/SIZE (e.g. zoned_abs:60/16k:40/48k)"),
                };
                let access_percent = parse_percent(access)?;
                let size = if absolute {
                    parse_size(size)?
                } else if size.is_empty() {
                    0
                } else {
                    u64::from(parse_percent(size)?)
                };
                if size == 0 {
                    if absolute {
                        return invalid("a zone needs a size above 0");
                    }
                    zones_without_size.push(zones.len());
                }
                zones.push(ZoneShare {
                    access_percent,
                    size,
                });
            }
            if !zones_without_size.is_empty() {
                let given: u64 = zones.iter().map(|z| z.size).sum();
                let share = 100u64.saturating_sub(given) / zones_without_size.len() as u64;
                if share == 0 {
                    return invalid("the zones given a size leave no share for those without one");
                }
                for index in zones_without_size {
                    zones[index].size = share;
                }
            }
            let access: u32 = zones.iter().map(|z| u32::from(z.access_percent)).sum();
            if access != 100 {
                return Err(ApplyError::Invalid(format!(
                    "zone access shares sum to {access}%, not 100% (as fio requires)"
                )));
            }
            if absolute {
                RandomDistribution::ZonedAbs { zones }
            } else {
                if zones.iter().map(|z| z.size).sum::<u64>() > 100 {
                    return invalid("zone sizes add up to more than 100% of the region");
                }
                RandomDistribution::Zoned { zones }
            }
        }
        _ => {
            return invalid(
                "use random, zipf:THETA, pareto:H, normal:DEV, zoned:ACCESS/SIZE:... or zoned_abs:ACCESS/SIZE:...",
            )
        }
    };
    d.random_distribution = Some(distribution);
    Ok(())
}

/// Every key of the job language, in the order the docs list them.
pub static KEYS: &[KeyDef] = &[
    KeyDef {
        name: "name",
        aliases: &[],
        bare: false,
        meaning: "job name (on the command line, starts a new job)",
        field: "name",
        path: KeyPath::None,
        apply: |d, v| {
            d.name = Some(v.to_string());
            Ok(())
        },
    },
    KeyDef {
        name: "description",
        aliases: &[],
        bare: false,
        meaning: "free text, ignored",
        field: "description",
        path: KeyPath::None,
        apply: |_, _| Ok(()),
    },
    KeyDef {
        name: "ioengine",
        aliases: &[],
        bare: false,
        meaning: "how I/O is issued (psync by default; `storlab engines` lists them)",
        field: "ioengine",
        path: KeyPath::None,
        apply: apply_ioengine,
    },
    KeyDef {
        name: "filename",
        aliases: &[],
        bare: false,
        meaning: "file or block device to test, or sim:PROFILE for a simulated drive",
        field: "filename",
        path: KeyPath::Target,
        apply: apply_filename,
    },
    KeyDef {
        name: "directory",
        aliases: &[],
        bare: false,
        meaning: "directory for a temporary test file (or prefix of a relative filename)",
        field: "directory",
        path: KeyPath::Target,
        apply: |d, v| {
            d.directory = Some(PathBuf::from(v));
            Ok(())
        },
    },
    KeyDef {
        name: "direct",
        aliases: &[],
        bare: true,
        meaning: "open with O_DIRECT, bypassing the page cache",
        field: "direct",
        path: KeyPath::None,
        apply: |d, v| {
            d.direct = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "invalidate",
        aliases: &[],
        bare: true,
        meaning: "drop the target's cached pages before the job (default 1, as in fio)",
        field: "invalidate",
        path: KeyPath::None,
        apply: |d, v| {
            d.invalidate = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "fadvise_hint",
        aliases: &[],
        bare: false,
        meaning: "advise the kernel of the access pattern: 1 (the job's: random or sequential, default), random, sequential, 0 (none)",
        field: "fadvise_hint",
        path: KeyPath::None,
        apply: |d, v| {
            d.fadvise_hint = Some(match v {
                "1" => FadviseHint::JobType,
                "0" => FadviseHint::Off,
                "random" => FadviseHint::Random,
                "sequential" => FadviseHint::Sequential,
                _ => {
                    return Err(ApplyError::Invalid(
                        "use 1 (the job's pattern), 0 (no hint), random or sequential".into(),
                    ))
                }
            });
            Ok(())
        },
    },
    KeyDef {
        name: "buffered",
        aliases: &[],
        bare: true,
        meaning: "the opposite of direct",
        field: "direct",
        path: KeyPath::None,
        apply: |d, v| {
            d.direct = Some(!parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "rw",
        aliases: &["readwrite"],
        bare: false,
        meaning: "read, write, randread, randwrite, rw (readwrite), randrw, trim, randtrim, trimwrite, randtrimwrite",
        field: "rw",
        path: KeyPath::None,
        apply: apply_rw,
    },
    KeyDef {
        name: "rwmixread",
        aliases: &[],
        bare: false,
        meaning: "percent of reads in a rw/randrw job (default 50)",
        field: "rwmixread",
        path: KeyPath::None,
        apply: |d, v| {
            d.rwmixread = Some(parse_percent(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "rwmixwrite",
        aliases: &[],
        bare: false,
        meaning: "percent of writes in a rw/randrw job",
        field: "rwmixread",
        path: KeyPath::None,
        apply: |d, v| {
            d.rwmixread = Some(100 - parse_percent(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "percentage_random",
        aliases: &[],
        bare: false,
        meaning: "percent of random offsets in a rand* job (default 100); or read,write percents",
        field: "percentage_random",
        path: KeyPath::None,
        apply: |d, v| {
            // fio's `read,write,trim` form; the trim share is checked and unused (trim modes
            // of `rw` draw at the write share).
            let (read, write) =
                read_write_dropping_trim(v, |t| parse_percent(t).map_err(ApplyError::from))?;
            d.percentage_random_read = read;
            d.percentage_random_write = write;
            Ok(())
        },
    },
    KeyDef {
        name: "norandommap",
        aliases: &[],
        bare: true,
        meaning: "draw random offsets with repeats (default: every block once per pass)",
        field: "norandommap",
        path: KeyPath::None,
        apply: |d, v| {
            d.norandommap = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "bs",
        aliases: &["blocksize"],
        bare: false,
        meaning: "block size, or read,write block sizes",
        field: "bs",
        path: KeyPath::None,
        apply: |d, v| apply_block_sizes_with_trim(d, v, parse_block_sizes),
    },
    KeyDef {
        name: "bsrange",
        aliases: &["blocksize_range"],
        bare: false,
        meaning: "block size range MIN-MAX (uniform, in alignment steps), or read,write ranges",
        field: "bs",
        path: KeyPath::None,
        apply: |d, v| {
            if v.contains('/') {
                return Err(ApplyError::Invalid(split_given_as_range(v)));
            }
            apply_block_sizes_with_trim(d, v, parse_block_size_ranges)
        },
    },
    KeyDef {
        name: "bssplit",
        aliases: &[],
        bare: false,
        meaning: "weighted block sizes SIZE/PERCENT:..., or read,write splits",
        field: "bs",
        path: KeyPath::None,
        apply: |d, v| apply_block_sizes_with_trim(d, v, parse_block_size_splits),
    },
    KeyDef {
        name: "blockalign",
        aliases: &["ba"],
        bare: false,
        meaning: "offset alignment (default 4k)",
        field: "blockalign",
        path: KeyPath::None,
        apply: |d, v| {
            d.align_bytes = Some(single_for_both(v, parse_size)?);
            Ok(())
        },
    },
    KeyDef {
        name: "hipri",
        aliases: &[],
        bare: true,
        meaning: "io_uring: poll for completions (IOPOLL); pvsync2: RWF_HIPRI",
        field: "hipri",
        path: KeyPath::None,
        apply: |d, v| {
            d.engine_tuning.hipri = parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "nowait",
        aliases: &[],
        bare: true,
        meaning: "io_uring, pvsync2: RWF_NOWAIT (EAGAIN instead of blocking)",
        field: "nowait",
        path: KeyPath::None,
        apply: |d, v| {
            d.engine_tuning.nowait = parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "fixedbufs",
        aliases: &[],
        bare: true,
        meaning: "io_uring: registered buffers, required (unset: used when the kernel allows)",
        field: "fixedbufs",
        path: KeyPath::None,
        apply: |d, v| {
            d.engine_tuning.fixedbufs = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "registerfiles",
        aliases: &[],
        bare: true,
        meaning: "io_uring: registered file, required (unset: used when the kernel allows)",
        field: "registerfiles",
        path: KeyPath::None,
        apply: |d, v| {
            d.engine_tuning.registerfiles = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "sqthread_poll",
        aliases: &[],
        bare: true,
        meaning: "io_uring: a kernel thread polls the submission queue (SQPOLL)",
        field: "sqthread_poll",
        path: KeyPath::None,
        apply: |d, v| {
            d.engine_tuning.sqthread_poll = parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "nonvectored",
        aliases: &[],
        bare: true,
        meaning: "io_uring: READ/WRITE (default) or, with 0, READV/WRITEV",
        field: "nonvectored",
        path: KeyPath::None,
        apply: |d, v| {
            // fio's default is -1, "non-vectored when the kernel has it": any non-zero value.
            let value: i64 = v.trim().parse().map_err(|_| {
                ApplyError::Invalid(format!(
                    "'{v}' is not an integer (0: vectored; 1 or -1: non-vectored)"
                ))
            })?;
            d.engine_tuning.vectored = value == 0;
            Ok(())
        },
    },
    KeyDef {
        name: "cmdprio_class",
        aliases: &[],
        bare: false,
        meaning: "io_uring, libaio: priority class of the I/Os cmdprio_percentage or cmdprio_bssplit picks: 1 real-time (default), 2 best-effort, 3 idle; or read,write classes",
        field: "cmdprio_class",
        path: KeyPath::None,
        apply: |d, v| {
            let (read, write) = read_write_dropping_trim(v, parse_ioprio_class)?;
            d.engine_tuning.cmdprio.read.class = read;
            d.engine_tuning.cmdprio.write.class = write;
            Ok(())
        },
    },
    KeyDef {
        name: "cmdprio",
        aliases: &[],
        bare: false,
        meaning: "io_uring, libaio: priority level (0 highest to 7) of the I/Os cmdprio_percentage or cmdprio_bssplit picks; or read,write levels",
        field: "cmdprio_level",
        path: KeyPath::None,
        apply: |d, v| {
            let (read, write) = read_write_dropping_trim(v, parse_ioprio_level)?;
            d.engine_tuning.cmdprio.read.level = read;
            d.engine_tuning.cmdprio.write.level = write;
            Ok(())
        },
    },
    KeyDef {
        name: "sqthread_poll_cpu",
        aliases: &[],
        bare: false,
        meaning: "io_uring: bind the sqthread_poll kernel thread to this CPU",
        field: "sqthread_poll_cpu",
        path: KeyPath::None,
        apply: |d, v| {
            d.engine_tuning.sqthread_poll_cpu = Some(to_u32(parse_count(v)?, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "cmdprio_percentage",
        aliases: &[],
        bare: false,
        meaning: "io_uring, libaio: percent of I/Os issued with an I/O priority (cmdprio_class, cmdprio); or read,write percents",
        field: "cmdprio_percentage",
        path: KeyPath::None,
        apply: |d, v| {
            let (read, write) =
                read_write_dropping_trim(v, |t| parse_percent(t).map_err(ApplyError::from))?;
            d.engine_tuning.cmdprio.read.percentage = read.unwrap_or(0);
            d.engine_tuning.cmdprio.write.percentage = write.unwrap_or(0);
            Ok(())
        },
    },
    KeyDef {
        name: "cmdprio_bssplit",
        aliases: &[],
        bare: false,
        meaning: "io_uring, libaio: percent of the I/Os of each block size issued with an I/O priority, SIZE/PERCENT[/CLASS/LEVEL]:...; or read,write lists",
        field: "cmdprio_bssplit",
        path: KeyPath::None,
        apply: |d, v| {
            let (read, write) = parse_cmdprio_bssplit(v)?;
            d.engine_tuning.cmdprio.read.bssplit = read;
            d.engine_tuning.cmdprio.write.bssplit = write;
            Ok(())
        },
    },
    KeyDef {
        name: "userspace_reap",
        aliases: &[],
        bare: true,
        meaning: "libaio: read completions from the AIO ring in user space",
        field: "userspace_reap",
        path: KeyPath::None,
        apply: |d, v| {
            d.engine_tuning.userspace_reap = parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "iodepth",
        aliases: &[],
        bare: false,
        meaning: "outstanding I/Os per worker",
        field: "iodepth",
        path: KeyPath::None,
        apply: |d, v| {
            d.iodepth = Some(to_u32(parse_count(v)?, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "iodepth_batch_submit",
        aliases: &["iodepth_batch"],
        bare: false,
        meaning: "queueing engines: I/Os queued before they are submitted together (default 1; 0: iodepth)",
        field: "iodepth_batch_submit",
        path: KeyPath::None,
        apply: |d, v| {
            d.io_batch_submit = Some(to_u32(parse_count(v)?, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "iodepth_batch_complete_min",
        aliases: &["iodepth_batch_complete"],
        bare: false,
        meaning: "queueing engines: completions a reap waits for (default 1; 0 with iodepth_batch_complete_max=0: poll after every I/O)",
        field: "iodepth_batch_complete_min",
        path: KeyPath::None,
        apply: |d, v| {
            d.io_batch_complete_min = Some(to_u32(parse_count(v)?, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "iodepth_batch_complete_max",
        aliases: &[],
        bare: false,
        meaning: "queueing engines: most completions one reap takes (default and at least iodepth_batch_complete_min)",
        field: "iodepth_batch_complete_max",
        path: KeyPath::None,
        apply: |d, v| {
            d.io_batch_complete_max = Some(to_u32(parse_count(v)?, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "iodepth_low",
        aliases: &[],
        bare: false,
        meaning: "queueing engines: once the queue is full, reap until this many I/Os are in flight (default iodepth)",
        field: "iodepth_low",
        path: KeyPath::None,
        apply: |d, v| {
            d.io_depth_low = Some(to_u32(parse_count(v)?, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "numjobs",
        aliases: &[],
        bare: false,
        meaning: "workers (threads) running this job",
        field: "numjobs",
        path: KeyPath::None,
        apply: |d, v| {
            d.numjobs = Some(to_u32(parse_count(v)?, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "offset",
        aliases: &[],
        bare: false,
        meaning: "start of worker 0's region (bytes or N% of the target)",
        field: "offset",
        path: KeyPath::None,
        apply: |d, v| {
            d.offset = Some(Extent::parse(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "offset_increment",
        aliases: &[],
        bare: false,
        meaning: "worker i starts at offset + i * offset_increment (bytes or N%)",
        field: "offset_increment",
        path: KeyPath::None,
        apply: |d, v| {
            d.offset_increment = Some(Extent::parse(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "size",
        aliases: &[],
        bare: false,
        meaning: "each worker's region: bytes or N% of the target (default: to its end)",
        field: "size",
        path: KeyPath::None,
        apply: |d, v| {
            d.size = Some(Extent::parse(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "number_ios",
        aliases: &[],
        bare: false,
        meaning: "stop each worker after this many I/Os",
        field: "number_ios",
        path: KeyPath::None,
        apply: |d, v| {
            d.number_ios = Some(parse_count(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "io_size",
        aliases: &["io_limit"],
        bare: false,
        meaning: "bytes each worker moves before it stops (default: its region's size)",
        field: "io_size",
        path: KeyPath::None,
        apply: |d, v| {
            d.io_size_bytes = Some(parse_size(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "loops",
        aliases: &[],
        bare: false,
        meaning: "repeat the job's I/O this many times (default 1)",
        field: "loops",
        path: KeyPath::None,
        apply: |d, v| {
            d.loops = Some(to_u32(parse_count(v)?, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "runtime",
        aliases: &["timeout"],
        bare: false,
        meaning: "time limit after ramp (seconds unless a unit is given)",
        field: "runtime",
        path: KeyPath::None,
        apply: |d, v| {
            d.runtime_ns = Some(parse_time_ns(v, NS_PER_S)?);
            Ok(())
        },
    },
    KeyDef {
        name: "write_iolog",
        aliases: &[],
        bare: false,
        meaning: "record every I/O issued in this file (fio's iolog format, version 2)",
        field: "write_iolog",
        path: KeyPath::Written,
        apply: |d, v| {
            d.write_iolog = Some(PathBuf::from(v));
            Ok(())
        },
    },
    KeyDef {
        name: "read_iolog",
        aliases: &[],
        bare: false,
        meaning: "replay the I/O recorded in this trace (fio's iolog format, version 2 or 3)",
        field: "read_iolog",
        path: KeyPath::Target,
        apply: |d, v| {
            let trace = IoTrace::read(Path::new(v)).map_err(ApplyError::Invalid)?;
            d.read_iolog = Some(std::sync::Arc::new(trace));
            Ok(())
        },
    },
    KeyDef {
        name: "replay_redirect",
        aliases: &[],
        bare: false,
        meaning: "send every I/O of the read_iolog trace to this file (or sim:STACK)",
        field: "replay_redirect",
        path: KeyPath::Target,
        apply: |d, v| {
            if v.is_empty() {
                return Err(ApplyError::Invalid("needs a file name".into()));
            }
            d.replay_redirect = Some(v.to_string());
            Ok(())
        },
    },
    KeyDef {
        name: "replay_skip",
        aliases: &[],
        bare: false,
        meaning: "leave these actions of the read_iolog trace out: read, write, trim, sync (comma-separated)",
        field: "replay_skip",
        path: KeyPath::None,
        apply: |d, v| {
            let skipped = v
                .split(',')
                .map(|name| match name.trim() {
                    "read" => Ok(ReplaySkip::Read),
                    "write" => Ok(ReplaySkip::Write),
                    "trim" => Ok(ReplaySkip::Trim),
                    "sync" => Ok(ReplaySkip::Sync),
                    other => Err(ApplyError::Invalid(format!(
                        "'{other}' is not read, write, trim or sync"
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?;
            d.replay_skip = Some(skipped);
            Ok(())
        },
    },
    KeyDef {
        name: "replay_no_stall",
        aliases: &[],
        bare: true,
        meaning: "replay the read_iolog trace as fast as the queue allows, not at its recorded pace",
        field: "replay_no_stall",
        path: KeyPath::None,
        apply: |d, v| {
            d.replay_no_stall = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "replay_time_scale",
        aliases: &[],
        bare: false,
        meaning: "replay the trace's recorded gaps at this percent of their speed (default 100)",
        field: "replay_time_scale",
        path: KeyPath::None,
        apply: |d, v| {
            let percent = parse_count(v)?;
            if percent == 0 {
                return Err(ApplyError::Invalid("must be at least 1 (percent)".into()));
            }
            d.replay_time_scale_percent = Some(to_u32(percent, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "write_bw_log",
        aliases: &[],
        bare: true,
        meaning: "bandwidth log PREFIX_bw.N.log in fio's format (bare: the job's name)",
        field: "write_bw_log",
        path: KeyPath::WrittenPrefix,
        apply: |d, v| {
            d.log_prefix(FioLogKind::Bandwidth, v);
            Ok(())
        },
    },
    KeyDef {
        name: "write_iops_log",
        aliases: &[],
        bare: true,
        meaning: "IOPS log PREFIX_iops.N.log in fio's format (bare: the job's name)",
        field: "write_iops_log",
        path: KeyPath::WrittenPrefix,
        apply: |d, v| {
            d.log_prefix(FioLogKind::Iops, v);
            Ok(())
        },
    },
    KeyDef {
        name: "write_lat_log",
        aliases: &[],
        bare: true,
        meaning: "latency logs PREFIX_lat.N.log, _clat and _slat in fio's format (bare: the job's name)",
        field: "write_lat_log",
        path: KeyPath::WrittenPrefix,
        apply: |d, v| {
            d.log_prefix(FioLogKind::Latency, v);
            Ok(())
        },
    },
    KeyDef {
        name: "write_hist_log",
        aliases: &[],
        bare: true,
        meaning: "completion latency histogram log PREFIX_clat_hist.N.log, lines every log_hist_msec",
        field: "write_hist_log",
        path: KeyPath::WrittenPrefix,
        apply: |d, v| {
            d.log_prefix(FioLogKind::CompletionHistogram, v);
            Ok(())
        },
    },
    KeyDef {
        name: "log_avg_msec",
        aliases: &[],
        bare: false,
        meaning: "one averaged log entry per window of this many ms and direction (0: one per I/O)",
        field: "log_avg_msec",
        path: KeyPath::None,
        apply: |d, v| {
            d.fio_logs.average_ms = parse_count(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "log_hist_msec",
        aliases: &[],
        bare: false,
        meaning: "one histogram log line per window of this many ms and direction",
        field: "log_hist_msec",
        path: KeyPath::None,
        apply: |d, v| {
            d.fio_logs.histogram_ms = parse_count(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "log_hist_coarseness",
        aliases: &[],
        bare: false,
        meaning: "0 to 6: each step halves the histogram log's 1856 bins, as fio",
        field: "log_hist_coarseness",
        path: KeyPath::None,
        apply: |d, v| {
            let coarseness = parse_count(v)?;
            if coarseness > u64::from(FIO_LOG_HIST_COARSENESS_MAX) {
                return Err(ApplyError::Invalid(format!(
                    "use 0 to {FIO_LOG_HIST_COARSENESS_MAX}"
                )));
            }
            d.fio_logs.histogram_coarseness = coarseness as u8;
            Ok(())
        },
    },
    KeyDef {
        name: "log_max_value",
        aliases: &[],
        bare: true,
        meaning: "with log_avg_msec, log each window's maximum instead of its mean",
        field: "log_max_value",
        path: KeyPath::None,
        apply: |d, v| {
            d.fio_logs.max_value = parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "log_offset",
        aliases: &[],
        bare: true,
        meaning: "log lines carry the I/O's offset",
        field: "log_offset",
        path: KeyPath::None,
        apply: |d, v| {
            d.fio_logs.offset = parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "log_prio",
        aliases: &[],
        bare: true,
        meaning: "log lines end in the I/O's priority value (hex) instead of 0/1",
        field: "log_prio",
        path: KeyPath::None,
        apply: |d, v| {
            d.fio_logs.priority = parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "per_job_logs",
        aliases: &[],
        bare: true,
        meaning: "1 (default): one log file per job clone (.N); 0: one file per prefix, appended to",
        field: "per_job_logs",
        path: KeyPath::None,
        apply: |d, v| {
            d.fio_logs.shared_file = !parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "log_entries",
        aliases: &[],
        bare: false,
        meaning: "accepted: fio's initial log allocation; storlab's logs grow as needed",
        field: "log_entries",
        path: KeyPath::None,
        apply: |_, v| {
            parse_count(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "log_compression",
        aliases: &[],
        bare: false,
        meaning: "0 accepted; compressing logs in memory refused",
        field: "log_compression",
        path: KeyPath::None,
        apply: |_, v| refuse_unless_zero(v, "storlab keeps logs uncompressed in memory and writes them as text; leave out log_compression"),
    },
    KeyDef {
        name: "log_store_compressed",
        aliases: &[],
        bare: true,
        meaning: "0 accepted; compressed .fz log files refused",
        field: "log_store_compressed",
        path: KeyPath::None,
        apply: |_, v| refuse_if_set(v, "storlab writes logs as text, which fio's plotting tools read; leave out log_store_compressed"),
    },
    KeyDef {
        name: "log_unix_epoch",
        aliases: &["log_alternate_epoch"],
        bare: true,
        meaning: "0 accepted; Unix-time log timestamps refused",
        field: "log_unix_epoch",
        path: KeyPath::None,
        apply: |_, v| refuse_if_set(v, "storlab's log times are ms since the job's measurement began (fio's default), also for simulated time"),
    },
    KeyDef {
        name: "fsync",
        aliases: &[],
        bare: false,
        meaning: "fsync after every N writes, once the worker's I/O has finished (0 = never)",
        field: "fsync",
        path: KeyPath::None,
        apply: |d, v| {
            d.fsync_every_writes = Some(parse_sync_every(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "fdatasync",
        aliases: &[],
        bare: false,
        meaning: "fdatasync after every N writes, once the worker's I/O has finished (0 = never)",
        field: "fdatasync",
        path: KeyPath::None,
        apply: |d, v| {
            d.fdatasync_every_writes = Some(parse_sync_every(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "end_fsync",
        aliases: &[],
        bare: true,
        meaning: "fsync once when the job's writes are done",
        field: "end_fsync",
        path: KeyPath::None,
        apply: |d, v| {
            d.end_fsync = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "fsync_on_close",
        aliases: &[],
        bare: true,
        meaning: "fsync when the worker closes the target",
        field: "fsync_on_close",
        path: KeyPath::None,
        apply: |d, v| {
            d.fsync_on_close = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "sync",
        aliases: &[],
        bare: true,
        meaning: "open the target with O_SYNC (sync or 1) or O_DSYNC (dsync); none or 0 = neither",
        field: "sync",
        path: KeyPath::None,
        apply: apply_open_sync,
    },
    KeyDef {
        name: "thinktime",
        aliases: &[],
        bare: false,
        meaning: "stall this long between batches of I/O (microseconds unless a unit is given)",
        field: "thinktime",
        path: KeyPath::None,
        apply: |d, v| {
            d.think_ns = Some(parse_time_ns(v, NS_PER_US)?);
            Ok(())
        },
    },
    KeyDef {
        name: "thinktime_spin",
        aliases: &[],
        bare: false,
        meaning: "spend this part of each thinktime stall spinning on the CPU (microseconds unless a unit is given)",
        field: "thinktime_spin",
        path: KeyPath::None,
        apply: |d, v| {
            d.think_spin_ns = Some(parse_time_ns(v, NS_PER_US)?);
            Ok(())
        },
    },
    KeyDef {
        name: "thinktime_blocks",
        aliases: &[],
        bare: false,
        meaning: "stall for thinktime after this many I/Os (default 1)",
        field: "thinktime_blocks",
        path: KeyPath::None,
        apply: |d, v| {
            let every = to_u32(parse_count(v)?, v)?;
            if every == 0 {
                return Err(ApplyError::Invalid("at least 1 I/O between stalls".into()));
            }
            d.think_every_ios = Some(every);
            Ok(())
        },
    },
    KeyDef {
        name: "thinktime_blocks_type",
        aliases: &[],
        bare: false,
        meaning: "count thinktime_blocks as I/Os completed (complete, the default) or issued (issue)",
        field: "thinktime_blocks_type",
        path: KeyPath::None,
        apply: |d, v| {
            d.think_count_issued = Some(match v {
                "complete" => false,
                "issue" => true,
                _ => return Err(ApplyError::Invalid("use complete or issue".into())),
            });
            Ok(())
        },
    },
    KeyDef {
        name: "thinktime_iotime",
        aliases: &[],
        bare: false,
        meaning: "stall for thinktime after this long of I/O (seconds unless a unit is given)",
        field: "thinktime_iotime",
        path: KeyPath::None,
        apply: |d, v| {
            d.think_every_io_ns = Some(parse_time_ns(v, NS_PER_S)?);
            Ok(())
        },
    },
    KeyDef {
        name: "random_distribution",
        aliases: &[],
        bare: false,
        meaning: "where random offsets fall: random, zipf:THETA, pareto:H, normal:DEV (each [:CENTER]), zoned:A/S:..., zoned_abs:A/SIZE:...",
        field: "random_distribution",
        path: KeyPath::None,
        apply: apply_random_distribution,
    },
    KeyDef {
        name: "random_generator",
        aliases: &[],
        bare: false,
        meaning: "fio's tausworthe (default), tausworthe64 or lfsr, drawn as fio draws them in a fio job",
        field: "random_generator",
        path: KeyPath::None,
        apply: |d, v| {
            d.random_generator = Some(match v {
                "tausworthe" => FioGenerator::Tausworthe,
                "tausworthe64" => FioGenerator::Tausworthe64,
                "lfsr" => FioGenerator::Lfsr,
                _ => {
                    return Err(ApplyError::Invalid(
                        "use tausworthe, lfsr or tausworthe64".into(),
                    ))
                }
            });
            Ok(())
        },
    },
    KeyDef {
        name: "zonemode",
        aliases: &[],
        bare: false,
        meaning: "none, or strided: zonesize bytes in each zone of zonerange, zoneskip between zones (zbd refused)",
        field: "zonemode",
        path: KeyPath::None,
        apply: |d, v| {
            d.zonemode_strided = Some(match v {
                "none" => false,
                "strided" => true,
                "zbd" => {
                    return Err(ApplyError::Unsupported(
                        "zoned block devices (ZBD) are out of scope: storlab measures \
                         conventional files and block devices and its simulated stacks"
                            .into(),
                    ))
                }
                _ => return Err(ApplyError::Invalid("use none or strided".into())),
            });
            Ok(())
        },
    },
    KeyDef {
        name: "zonesize",
        aliases: &[],
        bare: false,
        meaning: "bytes of I/O in each zone before moving on (zonemode=strided)",
        field: "zonesize",
        path: KeyPath::None,
        apply: |d, v| {
            d.zone_size_bytes = Some(parse_size(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "zonerange",
        aliases: &[],
        bare: false,
        meaning: "size of each zone (default zonesize; zonemode=strided)",
        field: "zonerange",
        path: KeyPath::None,
        apply: |d, v| {
            d.zone_range_bytes = Some(parse_size(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "zoneskip",
        aliases: &[],
        bare: false,
        meaning: "bytes skipped between two zones (zonemode=strided)",
        field: "zoneskip",
        path: KeyPath::None,
        apply: |d, v| {
            d.zone_skip_bytes = Some(parse_size(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "time_based",
        aliases: &[],
        bare: true,
        meaning: "keep going over the region until runtime ends",
        field: "time_based",
        path: KeyPath::None,
        apply: |d, v| {
            d.time_based = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "ramp_time",
        aliases: &[],
        bare: false,
        meaning: "run this long before statistics count (seconds unless a unit is given)",
        field: "ramp_time",
        path: KeyPath::None,
        apply: |d, v| {
            d.ramp_time_ns = Some(parse_time_ns(v, NS_PER_S)?);
            Ok(())
        },
    },
    KeyDef {
        name: "rate",
        aliases: &[],
        bare: false,
        meaning: "bytes per second ceiling (e.g. 50m), for both or read,write",
        field: "rate",
        path: KeyPath::None,
        apply: |d, v| {
            (d.rate_bytes_read, d.rate_bytes_write) =
                parse_rate_pair(v, parse_size, "50m or 50m,20m")?;
            Ok(())
        },
    },
    KeyDef {
        name: "rate_iops",
        aliases: &[],
        bare: false,
        meaning: "I/Os per second ceiling, for both or read,write",
        field: "rate_iops",
        path: KeyPath::None,
        apply: apply_rate_iops,
    },
    KeyDef {
        name: "data_pattern",
        aliases: &[],
        bare: false,
        meaning: "storlab: data written: random, zeros or compressible:PERCENT",
        field: "data_pattern",
        path: KeyPath::None,
        apply: apply_data_pattern,
    },
    KeyDef {
        name: "buffer_compress_percentage",
        aliases: &[],
        bare: false,
        meaning: "make written data this percent compressible (0 = random)",
        field: "data_pattern",
        path: KeyPath::None,
        apply: |d, v| {
            let percent = parse_percent(v)?;
            d.data_pattern = Some(if percent == 0 {
                DataPattern::Random
            } else {
                DataPattern::Compressible(percent)
            });
            Ok(())
        },
    },
    KeyDef {
        name: "zero_buffers",
        aliases: &[],
        bare: true,
        meaning: "write zeros",
        field: "data_pattern",
        path: KeyPath::None,
        apply: |d, v| {
            if parse_bool(v)? {
                d.data_pattern = Some(DataPattern::Zeros);
            }
            Ok(())
        },
    },
    KeyDef {
        name: "refill_buffers",
        aliases: &[],
        bare: true,
        meaning: "refill every write's buffer from fio's buffer stream, as fio (a fio job)",
        field: "refill_buffers",
        path: KeyPath::None,
        apply: |d, v| {
            d.refill_buffers = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "dedupe_percentage",
        aliases: &[],
        bare: false,
        meaning: "this percent of write buffers repeat earlier content, as fio's buffers do",
        field: "dedupe_percentage",
        path: KeyPath::None,
        apply: |d, v| {
            d.dedupe_percentage = Some(parse_percent(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "dedupe_mode",
        aliases: &[],
        bare: false,
        meaning: "what a dedupe buffer repeats: repeat (the stream's saved state) or working_set",
        field: "dedupe_mode",
        path: KeyPath::None,
        apply: |d, v| {
            d.dedupe_mode = Some(match v {
                "repeat" => DedupeMode::Repeat,
                "working_set" => DedupeMode::WorkingSet,
                _ => return Err(ApplyError::Invalid("use repeat or working_set".into())),
            });
            Ok(())
        },
    },
    KeyDef {
        name: "dedupe_working_set_percentage",
        aliases: &[],
        bare: false,
        meaning: "dedupe_mode=working_set: the percent of size whose buffers repeats come from",
        field: "dedupe_working_set_percentage",
        path: KeyPath::None,
        apply: |d, v| {
            d.dedupe_working_set_percentage = Some(parse_percent(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "dedupe_global",
        aliases: &[],
        bare: true,
        meaning: "dedupe_mode=working_set: jobs repeat each other's buffers",
        field: "dedupe_global",
        path: KeyPath::None,
        apply: |d, v| {
            d.dedupe_global = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "seed",
        aliases: &["randseed"],
        bare: false,
        meaning: "seed for offsets, sizes, directions and data",
        field: "seed",
        path: KeyPath::None,
        apply: |d, v| {
            d.seed = Some(parse_count(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "randrepeat",
        aliases: &[],
        bare: true,
        meaning: "1 (default): the same sequence every run; 0 in a fio job: seeds from the system's entropy unless randseed is given (refused in a preset)",
        field: "randrepeat",
        path: KeyPath::None,
        apply: |d, v| {
            d.randrepeat = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify",
        aliases: &[],
        bare: false,
        meaning: "fio's verify: a header with a checksum in each block, checked on read-back (md5, crc32c, crc64, sha1, sha3-*, xxhash, meta, pattern, null; 1: storlab's own check alone)",
        field: "verify",
        path: KeyPath::None,
        apply: apply_verify,
    },
    KeyDef {
        name: "do_verify",
        aliases: &[],
        bare: true,
        meaning: "read back and check after writing (default 1); 0 writes verify headers without checking",
        field: "do_verify",
        path: KeyPath::None,
        apply: |d, v| {
            d.do_verify = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_only",
        aliases: &[],
        bare: true,
        meaning: "write nothing: read back what the job would write and check the headers a previous run left",
        field: "verify_only",
        path: KeyPath::None,
        apply: |d, v| {
            d.verify_only = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_fatal",
        aliases: &[],
        bare: true,
        meaning: "stop at the first bad header of a block (storlab always stops the job at its first bad block, as fio)",
        field: "verify_fatal",
        path: KeyPath::None,
        apply: |_, v| {
            parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "verify_dump",
        aliases: &[],
        bare: true,
        meaning: "write a failed block to FILE.OFFSET.received and .expected (.hdr_fail for a bad header) in the current directory",
        field: "verify_dump",
        path: KeyPath::WrittenOnFailure,
        apply: |d, v| {
            d.verify_dump = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_interval",
        aliases: &[],
        bare: false,
        meaning: "a verify header every this many bytes instead of one per block",
        field: "verify_interval",
        path: KeyPath::None,
        apply: |d, v| {
            d.verify_interval_bytes = Some(parse_size(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_offset",
        aliases: &[],
        bare: false,
        meaning: "swap the verify header with the bytes this far into its block",
        field: "verify_offset",
        path: KeyPath::None,
        apply: |d, v| {
            d.verify_offset_bytes = Some(parse_size(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_backlog",
        aliases: &[],
        bare: false,
        meaning: "check written blocks after every this many writes instead of after all of them",
        field: "verify_backlog",
        path: KeyPath::None,
        apply: |d, v| {
            d.verify_backlog = Some(parse_count(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_backlog_batch",
        aliases: &[],
        bare: false,
        meaning: "blocks checked each time verify_backlog is reached (default: verify_backlog)",
        field: "verify_backlog_batch",
        path: KeyPath::None,
        apply: |d, v| {
            d.verify_backlog_batch = Some(parse_count(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_async",
        aliases: &[],
        bare: false,
        meaning: "fio's helper threads for checks: accepted, storlab checks in the reaping thread",
        field: "verify_async",
        path: KeyPath::None,
        apply: |d, v| {
            if parse_count(v)? > 0 {
                accept_without_effect(d, "verify_async");
            }
            Ok(())
        },
    },
    KeyDef {
        name: "verify_async_cpus",
        aliases: &[],
        bare: false,
        meaning: "CPUs of fio's verify_async threads: accepted, storlab checks in the reaping thread",
        field: "verify_async_cpus",
        path: KeyPath::None,
        apply: |d, v| {
            crate::queueing::parse_cpu_list(v).map_err(ApplyError::Invalid)?;
            accept_without_effect(d, "verify_async");
            Ok(())
        },
    },
    KeyDef {
        name: "verify_state_save",
        aliases: &[],
        bare: true,
        meaning: "write fio's verify state file local-JOB-N-verify.state at a writing verify job's end (default 1, as fio)",
        field: "verify_state_save",
        path: KeyPath::WrittenAfterJob,
        apply: |d, v| {
            d.verify_state_save = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_state_load",
        aliases: &[],
        bare: true,
        meaning: "read fio's verify state file local-JOB-N-verify.state first; the verify pass stops where fio's would (writes the saved run had not completed are not checked)",
        field: "verify_state_load",
        path: KeyPath::None,
        apply: |d, v| {
            d.verify_state_load = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "experimental_verify",
        aliases: &[],
        bare: true,
        meaning: "fio's replay-based verify: refused when on",
        field: "experimental_verify",
        path: KeyPath::None,
        apply: |_, v| {
            refuse_if_set(
                v,
                "fio's experimental_verify (regenerating the workload instead of logging writes) \
                 is not supported; storlab's verify reads back what it logged, as fio's default",
            )
        },
    },
    KeyDef {
        name: "continue_on_error",
        aliases: &[],
        bare: false,
        meaning: "count failed I/Os of these kinds and go on (none, read, write, io, verify, all; 0/1 as none/all): EIO and EILSEQ unless ignore_error lists others",
        field: "continue_on_error",
        path: KeyPath::None,
        apply: apply_continue_on_error,
    },
    KeyDef {
        name: "ignore_error",
        aliases: &[],
        bare: false,
        meaning: "the errors continue_on_error passes, per kind: READ,WRITE,VERIFY lists of errno names or numbers joined by ':' (ignore_error=,ENOSPC:EIO); a list turns its kind on",
        field: "ignore_error",
        path: KeyPath::None,
        apply: apply_ignore_error,
    },
    KeyDef {
        name: "error_dump",
        aliases: &[],
        bare: true,
        meaning: "fio's dump of each error continue_on_error passes: only 0, fio's default, is accepted (the count and the first error are in the outputs)",
        field: "error_dump",
        path: KeyPath::None,
        apply: |_, v| {
            if parse_bool(v)? {
                return Err(ApplyError::Unsupported(
                    "telling each passed error on stderr is not supported; the outputs give \
                     their count and the first one (total_err, first_error)"
                        .into(),
                ));
            }
            Ok(())
        },
    },
    KeyDef {
        name: "fill_device",
        aliases: &["fill_fs"],
        bare: true,
        meaning: "write until ENOSPC and end there as a success; a file is not laid out and without size may grow by its file system's free space (a device or simulated drive: to its end)",
        field: "fill_device",
        path: KeyPath::None,
        apply: |d, v| {
            d.fill_device = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "create_serialize",
        aliases: &[],
        bare: true,
        meaning: "fio: lay out every job's files before any job runs (1, fio's default) or each job's when it starts (0); storlab always does the latter",
        field: "create_serialize",
        path: KeyPath::None,
        apply: |_, v| {
            // storlab opens and lays out a job's target when the job starts, which is fio's
            // create_serialize=0 (docs/job-format.md says what 1 changes in fio).
            parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "stonewall",
        aliases: &["wait_for_previous"],
        bare: true,
        meaning: "wait for earlier jobs to finish before starting",
        field: "stonewall",
        path: KeyPath::None,
        apply: |d, v| {
            d.stonewall = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "new_group",
        aliases: &[],
        bare: true,
        meaning: "start a new reporting group (the next groupid) without waiting",
        field: "new_group",
        path: KeyPath::None,
        apply: |d, v| {
            d.new_group = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "startdelay",
        aliases: &[],
        bare: false,
        meaning: "start the job this long after the run starts, or a time drawn per job from LOW-HIGH (seconds unless a unit is given); not part of runtime",
        field: "startdelay",
        path: KeyPath::None,
        apply: |d, v| {
            d.start_delay = Some(parse_start_delay(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "wait_for",
        aliases: &[],
        bare: false,
        meaning: "start the job once the earlier job of this name has finished (every clone of it)",
        field: "wait_for",
        path: KeyPath::None,
        apply: |d, v| {
            let v = v.trim();
            if v.is_empty() {
                return Err(ApplyError::Invalid("the name of an earlier job is needed".into()));
            }
            d.wait_for = Some(v.to_string());
            Ok(())
        },
    },
    KeyDef {
        name: "exitall",
        aliases: &[],
        bare: true,
        meaning: "when this job ends, stop the jobs exit_what names",
        field: "exitall",
        path: KeyPath::None,
        apply: |d, v| {
            d.exitall = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "exit_what",
        aliases: &[],
        bare: false,
        meaning: "what exitall stops: group (the job's reporting group, default), stonewall (every job running beside it) or all (every job, running or still to come)",
        field: "exit_what",
        path: KeyPath::None,
        apply: |d, v| {
            d.exit_what = Some(match v.trim().to_ascii_lowercase().as_str() {
                "group" => crate::ExitWhat::Group,
                "stonewall" => crate::ExitWhat::Stonewall,
                "all" => crate::ExitWhat::All,
                _ => {
                    return Err(ApplyError::Invalid(
                        "use group, stonewall or all".into(),
                    ))
                }
            });
            Ok(())
        },
    },
    KeyDef {
        name: "exitall_on_error",
        aliases: &[],
        bare: true,
        meaning: "when this job fails, stop every job",
        field: "exitall_on_error",
        path: KeyPath::None,
        apply: |d, v| {
            d.exitall_on_error = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "prio",
        aliases: &[],
        bare: false,
        meaning: "I/O priority level 0 (highest) to 7 of the job's threads (ioprio_set), in prioclass (best-effort unless set)",
        field: "prio",
        path: KeyPath::None,
        apply: |d, v| {
            d.io_priority_level = Some(parse_small_int(v, crate::scheduling::IOPRIO_LEVEL_MAX)?);
            Ok(())
        },
    },
    KeyDef {
        name: "prioclass",
        aliases: &[],
        bare: false,
        meaning: "I/O priority class of the job's threads (ioprio_set): 1 real-time, 2 best-effort, 3 idle, 0 none (best-effort)",
        field: "prioclass",
        path: KeyPath::None,
        apply: |d, v| {
            d.io_priority_class = Some(parse_small_int(v, crate::scheduling::IOPRIO_CLASS_MAX)?);
            Ok(())
        },
    },
    KeyDef {
        name: "group_reporting",
        aliases: &[],
        bare: true,
        meaning: "report all workers of the job as one",
        field: "group_reporting",
        path: KeyPath::None,
        apply: |d, v| {
            d.group_reporting = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "allow_file_create",
        aliases: &[],
        bare: true,
        meaning: "create the job's file when it does not exist (default 1); 0 refuses the job instead",
        field: "allow_file_create",
        path: KeyPath::None,
        apply: |d, v| {
            d.allow_file_create = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "create_on_open",
        aliases: &[],
        bare: true,
        meaning: "accepted: storlab creates and lays out a job's file when the job's target is opened",
        field: "create_on_open",
        path: KeyPath::None,
        apply: |_, v| {
            parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "steadystate",
        aliases: &["ss"],
        bare: false,
        meaning: "stop once steady: iops, iops_slope, bw or bw_slope:LIMIT[%] over steadystate_duration",
        field: "steadystate",
        path: KeyPath::None,
        apply: apply_steadystate,
    },
    KeyDef {
        name: "steadystate_duration",
        aliases: &["ss_dur"],
        bare: false,
        meaning: "the window steady state is judged over (seconds unless a unit is given; 0 = off)",
        field: "steadystate_duration",
        path: KeyPath::None,
        apply: |d, v| {
            d.steadystate_duration_ns = Some(parse_time_ns(v, NS_PER_S)?);
            Ok(())
        },
    },
    KeyDef {
        name: "steadystate_ramp_time",
        aliases: &["ss_ramp"],
        bare: false,
        meaning: "run this long before steady-state samples are taken (seconds unless a unit is given)",
        field: "steadystate_ramp_time",
        path: KeyPath::None,
        apply: |d, v| {
            d.steadystate_ramp_ns = Some(parse_time_ns(v, NS_PER_S)?);
            Ok(())
        },
    },
    KeyDef {
        name: "unlink",
        aliases: &[],
        bare: true,
        meaning: "delete the job's file (a regular file, never a device) after the job",
        field: "unlink",
        path: KeyPath::DeletesTarget,
        apply: |d, v| {
            d.unlink = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "filename_format",
        aliases: &[],
        bare: false,
        meaning: "name of the job's file when filename is not given ($jobname, $jobnum, $filenum); kept after the run",
        field: "filename_format",
        path: KeyPath::Target,
        apply: |d, v| {
            d.filename_format = Some(v.to_string());
            Ok(())
        },
    },
    KeyDef {
        name: "filesize",
        aliases: &[],
        bare: false,
        meaning: "size of the job's file; the job's size when size is not given",
        field: "size",
        path: KeyPath::None,
        apply: |d, v| {
            if v.contains('-') || v.contains(':') {
                return Err(ApplyError::Unsupported(
                    "storlab takes one file size, not a range".into(),
                ));
            }
            d.filesize_bytes = Some(parse_size(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "nrfiles",
        aliases: &["nr_files"],
        bare: false,
        meaning: "files per job: 1 (storlab runs one file per job)",
        field: "nrfiles",
        path: KeyPath::None,
        apply: |_, v| match parse_count(v)? {
            1 => Ok(()),
            _ => Err(ApplyError::Unsupported(
                "storlab runs one file per job; split the job into one job per file".into(),
            )),
        },
    },
    KeyDef {
        name: "buffer_pattern",
        aliases: &[],
        bare: false,
        meaning: "write these bytes repeated: 0x hex, \"string\" and decimal elements, as fio",
        field: "buffer_pattern",
        path: KeyPath::None,
        apply: |d, v| {
            d.buffer_pattern = Some(parse_pattern(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_pattern",
        aliases: &[],
        bare: false,
        meaning: "the data verify writes under its headers and checks (verify=pattern: with no header); %o is the block's offset",
        field: "verify_pattern",
        path: KeyPath::None,
        apply: |d, v| {
            let (bytes, offset_positions) = parse_pattern_elements(v, true)?;
            d.verify_pattern = Some(VerifyPattern {
                bytes,
                offset_positions,
            });
            // Dropped again when the job verifies (`finish`).
            accept_without_effect(d, "verify_pattern");
            Ok(())
        },
    },
    KeyDef {
        name: "rate_min",
        aliases: &["ratemin"],
        bare: false,
        meaning: "bandwidth a job must keep (e.g. 10m), for both or read,write: below it over an interval, the job fails",
        field: "rate_min",
        path: KeyPath::None,
        apply: |d, v| {
            d.rate_min = Some(parse_rate_pair(v, parse_size, "10m or 10m,5m")?);
            Ok(())
        },
    },
    KeyDef {
        name: "rate_iops_min",
        aliases: &[],
        bare: false,
        meaning: "I/Os per second a job must keep, for both or read,write: below it over an interval, the job fails",
        field: "rate_iops_min",
        path: KeyPath::None,
        apply: |d, v| {
            d.rate_iops_min = Some(parse_rate_pair(v, parse_count, "100 or 100,50")?);
            Ok(())
        },
    },
    KeyDef {
        name: "rate_process",
        aliases: &[],
        bare: false,
        meaning: "linear (evenly spaced rated I/O, the default) or poisson (exponential intervals)",
        field: "rate_process",
        path: KeyPath::None,
        apply: |d, v| {
            d.rate_poisson = Some(match v {
                "linear" => false,
                "poisson" => true,
                _ => return Err(ApplyError::Invalid("use linear or poisson".into())),
            });
            Ok(())
        },
    },
    KeyDef {
        name: "io_submit_mode",
        aliases: &[],
        bare: false,
        meaning: "inline or offload: storlab's worker submits and reaps its own I/O either way; \
                  offload makes serialize_overlap look across every offload job",
        field: "io_submit_mode",
        path: KeyPath::None,
        apply: |d, v| {
            d.submit_offload = Some(match v {
                "inline" => false,
                "offload" => true,
                _ => return Err(ApplyError::Invalid("use inline or offload".into())),
            });
            Ok(())
        },
    },
    KeyDef {
        name: "serialize_overlap",
        aliases: &[],
        bare: true,
        meaning: "issue no I/O while one that overlaps it is in flight (of the job; with \
                  io_submit_mode=offload, of every offload job that sets it)",
        field: "serialize_overlap",
        path: KeyPath::None,
        apply: |d, v| {
            d.serialize_overlap = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "gtod_reduce",
        aliases: &[],
        bare: true,
        meaning: "accepted: storlab's clock reads cost tens of nanoseconds and every latency is kept",
        field: "gtod_reduce",
        path: KeyPath::None,
        apply: |_, v| {
            parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "clocksource",
        aliases: &[],
        bare: false,
        meaning: "gettimeofday, clock_gettime or cpu accepted: storlab always times with CLOCK_MONOTONIC",
        field: "clocksource",
        path: KeyPath::None,
        apply: |_, v| match v {
            "gettimeofday" | "clock_gettime" | "cpu" => Ok(()),
            _ => Err(ApplyError::Invalid(
                "use gettimeofday, clock_gettime or cpu".into(),
            )),
        },
    },
    KeyDef {
        name: "fallocate",
        aliases: &[],
        bare: false,
        meaning: "none, native, posix, keep, truncate, 0 or 1 accepted with a warning: storlab \
                  writes every block of a file it lays out, which allocates it whatever the mode",
        field: "fallocate",
        path: KeyPath::None,
        apply: |d, v| match v {
            // fio 3.33 options.c: "0" is `none` and "1" is `posix`, kept for old job files.
            "none" | "native" | "posix" | "keep" | "truncate" | "0" | "1" => {
                accept_without_effect(d, "fallocate");
                Ok(())
            }
            _ => Err(ApplyError::Invalid(
                "use none, native, posix, keep, truncate, 0 or 1".into(),
            )),
        },
    },
    KeyDef {
        name: "flow",
        aliases: &[],
        bare: false,
        meaning: "this job's weight in its flow (flow_id): jobs of one flow issue I/O in the \
                  ratio of their weights (0, the default: in no flow; at most 1000)",
        field: "flow",
        path: KeyPath::None,
        apply: |d, v| {
            let weight: u32 = v
                .parse()
                .ok()
                .filter(|w| *w <= FLOW_MAX_WEIGHT)
                .ok_or_else(|| {
                    ApplyError::Invalid(format!("a weight from 0 to {FLOW_MAX_WEIGHT} is needed"))
                })?;
            d.flow_weight = Some(weight);
            Ok(())
        },
    },
    KeyDef {
        name: "flow_id",
        aliases: &[],
        bare: false,
        meaning: "the flow this job's flow weight counts in (default 0): jobs with the same \
                  flow_id share one",
        field: "flow_id",
        path: KeyPath::None,
        apply: |d, v| {
            d.flow_id = Some(
                v.parse()
                    .map_err(|_| ApplyError::Invalid("a whole number is needed".into()))?,
            );
            Ok(())
        },
    },
    KeyDef {
        name: "flow_sleep",
        aliases: &[],
        bare: false,
        meaning: "how long a job ahead of its flow share waits before it looks again \
                  (microseconds by default; 0: it looks again at once)",
        field: "flow_sleep",
        path: KeyPath::None,
        apply: |d, v| {
            d.flow_sleep_ns = Some(parse_time_ns(v, NS_PER_US)?);
            Ok(())
        },
    },
    KeyDef {
        name: "cpus_allowed",
        aliases: &[],
        bare: false,
        meaning: "CPUs the job's threads run on, such as 0-3,6 (each must exist on this machine)",
        field: "cpus_allowed",
        path: KeyPath::None,
        apply: |d, v| {
            d.cpus_allowed = Some(crate::queueing::parse_cpu_list(v).map_err(ApplyError::Invalid)?);
            Ok(())
        },
    },
    KeyDef {
        name: "cpus_allowed_policy",
        aliases: &[],
        bare: false,
        meaning: "shared: every thread of the job may use all of cpus_allowed; split: each thread (clone) gets one CPU of it in turn",
        field: "cpus_allowed_policy",
        path: KeyPath::None,
        apply: |d, v| {
            d.cpus_allowed_split = Some(match v.trim() {
                "shared" => false,
                "split" => true,
                _ => return Err(ApplyError::Invalid("use shared or split".into())),
            });
            Ok(())
        },
    },
    KeyDef {
        name: "numa_cpu_nodes",
        aliases: &[],
        bare: false,
        meaning: "accepted with a warning: storlab does not bind worker threads to NUMA nodes",
        field: "numa_cpu_nodes",
        path: KeyPath::None,
        apply: |d, v| {
            if !v.bytes().all(|b| b.is_ascii_digit() || b"-,".contains(&b)) && v != "all" {
                return Err(ApplyError::Invalid("a node list such as 0-1 or all is needed".into()));
            }
            accept_without_effect(d, "numa_cpu_nodes");
            Ok(())
        },
    },
    KeyDef {
        name: "latency_target",
        aliases: &[],
        bare: false,
        meaning: "search for the deepest queue (up to iodepth) whose I/Os meet this latency \
                  (microseconds by default), as fio's latency profile",
        field: "latency_target",
        path: KeyPath::None,
        apply: |d, v| {
            let target = d.latency_target.get_or_insert_with(Default::default);
            target.target_ns = parse_time_ns(v, NS_PER_US)?;
            Ok(())
        },
    },
    KeyDef {
        name: "latency_window",
        aliases: &[],
        bare: false,
        meaning: "how long each queue depth of the latency_target search runs before it is \
                  judged (microseconds by default)",
        field: "latency_window",
        path: KeyPath::None,
        apply: |d, v| {
            let target = d.latency_target.get_or_insert_with(Default::default);
            // fio keeps the window in whole µs (its option is a time in µs).
            target.window_us = parse_time_ns(v, NS_PER_US)? / NS_PER_US;
            Ok(())
        },
    },
    KeyDef {
        name: "latency_percentile",
        aliases: &[],
        bare: false,
        meaning: "percentage of I/Os in a latency_window that must meet latency_target \
                  (default 100)",
        field: "latency_percentile",
        path: KeyPath::None,
        apply: |d, v| {
            let target = d.latency_target.get_or_insert_with(Default::default);
            target.percentile =
                crate::latency_numa::parse_latency_percentile(v).map_err(ApplyError::Invalid)?;
            Ok(())
        },
    },
    KeyDef {
        name: "latency_run",
        aliases: &[],
        bare: true,
        meaning: "keep adjusting the queue depth to latency_target for the whole job instead \
                  of stopping once the search settles",
        field: "latency_run",
        path: KeyPath::None,
        apply: |d, v| {
            let target = d.latency_target.get_or_insert_with(Default::default);
            target.run = parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "numa_mem_policy",
        aliases: &[],
        bare: false,
        meaning: "NUMA placement of the job's I/O buffers: default, prefer:N, bind:NODES, \
                  interleave[:NODES] or local (mbind on the buffers)",
        field: "numa_mem_policy",
        path: KeyPath::None,
        apply: |d, v| {
            let online = crate::latency_numa::online_numa_nodes();
            d.numa_mem_policy =
                Some(crate::NumaMemPolicy::parse(v, &online).map_err(ApplyError::Invalid)?);
            Ok(())
        },
    },
    KeyDef {
        name: "thread",
        aliases: &["threads"],
        bare: true,
        meaning: "accepted for fio compatibility; storlab always runs workers as threads",
        field: "thread",
        path: KeyPath::None,
        apply: |_, v| {
            parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "kb_base",
        aliases: &[],
        bare: false,
        meaning: "1024 accepted (storlab's only unit base); 1000 refused",
        field: "kb_base",
        path: KeyPath::None,
        apply: |_, v| match v {
            "1024" => Ok(()),
            _ => Err(ApplyError::Unsupported(
                "storlab reads k, M, G as powers of 1024 only (fio's default kb_base=1024)".into(),
            )),
        },
    },
];

/// The key definition for `name` or one of its aliases (case-insensitive, as fio).
pub fn find_key(name: &str) -> Option<&'static KeyDef> {
    let lower = name.to_ascii_lowercase();
    KEYS.iter()
        .find(|k| k.name == lower || k.aliases.contains(&lower.as_str()))
}

/// A known key within two edits of `name`, to suggest for a typo.
fn suggest_key(name: &str) -> Option<&'static str> {
    const EDITS_MAX: usize = 2;
    let lower = name.to_ascii_lowercase();
    KEYS.iter()
        .flat_map(|k| std::iter::once(k.name).chain(k.aliases.iter().copied()))
        .map(|candidate| (edit_distance(&lower, candidate), candidate))
        .filter(|&(distance, candidate)| distance <= EDITS_MAX && distance * 2 < candidate.len())
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance between two short ASCII strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CmdPrio, CmdPrioDirection, RateIops, DEFAULT_SEED};

    fn draft(settings: &[(&str, Option<&str>)]) -> Result<JobSpec, JobError> {
        let mut d = JobDraft::new();
        for (key, value) in settings {
            d.set(key, *value, &Location::Flag)?;
        }
        d.finish("job", &Location::Job("job".into()))
    }

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for key in KEYS {
            for name in std::iter::once(key.name).chain(key.aliases.iter().copied()) {
                assert!(seen.insert(name), "duplicate key {name}");
                assert_eq!(name, name.to_ascii_lowercase());
            }
        }
    }

    #[test]
    fn unset_keys_keep_storlab_defaults() {
        let spec = draft(&[("size", Some("1M"))]).unwrap();
        let mut expected = JobSpec::new("job", EngineKind::Psync, Target::TempFileIn(".".into()));
        expected.size_bytes = Some(1 << 20);
        // Except `rw`: fio's sequential read in a job file or flags, and the random streams:
        // fio's.
        expected.random_percent = 0;
        expected.fio_random = Some(FioRandom {
            randseed: FIO_DEFAULT_RANDSEED,
            randrepeat: true,
            randseed_given: false,
            tausworthe64: false,
            lfsr: false,
        });
        assert_eq!(spec, expected);
        assert_eq!(spec.seed, DEFAULT_SEED);
    }

    #[test]
    fn rw_modes_set_read_and_random_shares() {
        let cases = [
            ("read", 100, 0),
            ("write", 0, 0),
            ("randread", 100, 100),
            ("randwrite", 0, 100),
            ("rw", 50, 0),
            ("readwrite", 50, 0),
            ("randrw", 50, 100),
        ];
        for (mode, read, random) in cases {
            let spec = draft(&[("rw", Some(mode)), ("size", Some("1M"))]).unwrap();
            assert_eq!(
                (spec.read_percent, spec.random_percent),
                (read, random),
                "{mode}"
            );
        }
        let spec = draft(&[
            ("rw", Some("randrw")),
            ("rwmixwrite", Some("30")),
            ("percentage_random", Some("80")),
            ("size", Some("1M")),
        ])
        .unwrap();
        assert_eq!((spec.read_percent, spec.random_percent), (70, 80));
        // A fio job draws fio's own streams: a partly random job ends where fio's does, and
        // nothing is said.
        assert!(spec.warnings.is_empty(), "{:?}", spec.warnings);
    }

    #[test]
    fn ignored_mix_settings_warn() {
        let spec = draft(&[
            ("rw", Some("read")),
            ("rwmixread", Some("70")),
            ("percentage_random", Some("50")),
            ("size", Some("1M")),
        ])
        .unwrap();
        assert_eq!(spec.warnings.len(), 2, "{:?}", spec.warnings);
        assert_eq!((spec.read_percent, spec.random_percent), (100, 0));
    }

    #[test]
    fn targets_follow_filename_directory_and_engine() {
        let target = |settings: &[(&str, Option<&str>)]| {
            let mut all = settings.to_vec();
            all.push(("size", Some("1M")));
            draft(&all).map(|s| (s.engine, s.target))
        };
        assert_eq!(
            target(&[("filename", Some("sim:usb3-uas-ssd"))]),
            Ok((EngineKind::Sim, Target::Sim("usb3-uas-ssd".into())))
        );
        assert_eq!(
            target(&[
                ("filename", Some("data.bin")),
                ("directory", Some("/mnt/t"))
            ]),
            Ok((EngineKind::Psync, Target::Path("/mnt/t/data.bin".into())))
        );
        assert_eq!(
            target(&[
                ("filename", Some("/dev/sdz")),
                ("directory", Some("/mnt/t"))
            ]),
            Ok((EngineKind::Psync, Target::Path("/dev/sdz".into())))
        );
        assert_eq!(
            target(&[
                ("directory", Some("/mnt/t")),
                ("ioengine", Some("io_uring"))
            ]),
            Ok((EngineKind::IoUring, Target::TempFileIn("/mnt/t".into())))
        );
        assert_eq!(
            target(&[("ioengine", Some("null"))]),
            Ok((EngineKind::Null, Target::None))
        );
        assert_eq!(
            target(&[("ioengine", Some("sync"))]),
            Ok((EngineKind::Sync, Target::TempFileIn(".".into())))
        );
    }

    /// One refusal line per `ioengine` storlab has no engine for: out-of-scope engines say why
    /// (issue #20), unknown names list storlab's engines from the one list.
    #[test]
    fn engines_storlab_lacks_are_refused_in_one_line() {
        let refusal = |engine: &str| {
            let mut d = JobDraft::new();
            d.set("ioengine", Some(engine), &Location::Flag).unwrap();
            d.set("size", Some("1M"), &Location::Flag).unwrap();
            d.finish("job", &Location::Job("job".into()))
                .unwrap_err()
                .to_string()
        };
        for engine in crate::model::OUT_OF_SCOPE_ENGINES {
            assert_eq!(
                refusal(engine),
                format!(
                    "--ioengine={engine}: out of scope: storlab measures local files, block \
                     devices and its simulated stacks"
                )
            );
        }
        assert_eq!(
            refusal("warp_drive"),
            "--ioengine=warp_drive: unknown engine; storlab's engines are null, psync, sync, \
             pvsync2, libaio, posixaio, mmap, io_uring, sim"
        );
        for kind in EngineKind::ALL {
            assert_eq!(EngineKind::from_name(kind.as_str()), Some(kind));
            assert!(!crate::model::OUT_OF_SCOPE_ENGINES.contains(&kind.as_str()));
        }
    }

    #[test]
    fn engine_options_reach_the_job_and_warn_on_an_engine_without_them() {
        let job = |settings: &[(&str, Option<&str>)]| {
            let mut d = JobDraft::new();
            d.set("size", Some("1M"), &Location::Flag).unwrap();
            for (key, value) in settings {
                d.set(key, *value, &Location::Flag).unwrap();
            }
            d.finish("job", &Location::Job("job".into())).unwrap()
        };
        let uring = job(&[
            ("ioengine", Some("io_uring")),
            ("hipri", None),
            ("fixedbufs", None),
            ("registerfiles", Some("0")),
            ("sqthread_poll", Some("1")),
            ("nonvectored", Some("0")),
            ("cmdprio_percentage", Some("30")),
        ]);
        assert_eq!(
            uring.engine_tuning,
            EngineTuning {
                hipri: true,
                fixedbufs: Some(true),
                registerfiles: Some(false),
                sqthread_poll: true,
                vectored: true,
                cmdprio: CmdPrio {
                    read: CmdPrioDirection {
                        percentage: 30,
                        ..CmdPrioDirection::default()
                    },
                    write: CmdPrioDirection {
                        percentage: 30,
                        ..CmdPrioDirection::default()
                    },
                },
                ..EngineTuning::default()
            }
        );
        assert!(uring.warnings.is_empty(), "{:?}", uring.warnings);
        // fio's default `nonvectored=-1` means non-vectored, like 1.
        assert!(!job(&[("nonvectored", Some("-1"))]).engine_tuning.vectored);
        let libaio = job(&[("ioengine", Some("libaio")), ("userspace_reap", None)]);
        assert!(libaio.engine_tuning.userspace_reap && libaio.warnings.is_empty());
        let psync = job(&[("userspace_reap", None), ("hipri", None)]);
        assert_eq!(
            psync.warnings,
            ["hipri, userspace_reap has no effect with ioengine=psync"]
        );
        let sync = job(&[("ioengine", Some("sync")), ("iodepth", Some("8"))]);
        assert!(sync.warnings[0].starts_with("iodepth=8 has no effect with ioengine=sync"));
    }

    #[test]
    fn an_override_target_replaces_filename_directory_and_engine_before_validation() {
        let on = |target: Target, settings: &[(&str, Option<&str>)]| {
            let mut d = JobDraft::new();
            d.override_target(target);
            for (key, value) in settings {
                d.set(key, *value, &Location::Flag)?;
            }
            d.finish("job", &Location::Job("job".into()))
                .map(|s| (s.engine, s.target, s.size_bytes))
        };
        // A simulated drive has a size: no `size` needed, the job covers the whole drive.
        let sim = Target::Sim("usb3-uas-ssd".into());
        assert_eq!(
            on(sim.clone(), &[("bs", Some("4k"))]),
            Ok((EngineKind::Sim, sim.clone(), None))
        );
        assert_eq!(
            on(
                sim.clone(),
                &[("filename", Some("data")), ("ioengine", Some("io_uring"))]
            ),
            Ok((EngineKind::Sim, sim, None))
        );
        // So has a file or device, once opened; the engine stays unless it cannot do file I/O.
        let path = Target::Path("/dev/sdz".into());
        assert_eq!(
            on(path.clone(), &[("ioengine", Some("io_uring"))]),
            Ok((EngineKind::IoUring, path.clone(), None))
        );
        assert_eq!(
            on(path.clone(), &[("filename", Some("sim:usb3-uas-ssd"))]),
            Ok((EngineKind::Psync, path.clone(), None))
        );
        assert_eq!(
            on(path.clone(), &[("ioengine", Some("null"))]),
            Ok((EngineKind::Psync, path, None))
        );
        // A temporary file still needs one, even when the job names a file.
        let temp = Target::TempFileIn("/tmp".into());
        assert_eq!(
            on(temp.clone(), &[("filename", Some("/dev/sdz"))])
                .unwrap_err()
                .key
                .as_deref(),
            Some("size")
        );
        assert_eq!(
            on(temp.clone(), &[("size", Some("1M"))]),
            Ok((EngineKind::Psync, temp, Some(1 << 20)))
        );
    }

    #[test]
    fn an_override_target_replaces_an_engine_storlab_does_not_have_with_a_note() {
        let on = |target: Option<Target>, engine: &str| {
            let mut d = JobDraft::new();
            if let Some(target) = target {
                d.override_target(target);
            }
            d.set("ioengine", Some(engine), &Location::Flag)?;
            d.set("size", Some("1M"), &Location::Flag)?;
            d.finish("job", &Location::Job("job".into()))
        };
        let sim = Target::Sim("usb3-uas-ssd".into());
        let spec = on(Some(sim.clone()), "windowsaio").unwrap();
        assert_eq!((spec.engine, spec.target), (EngineKind::Sim, sim.clone()));
        assert_eq!(
            spec.warnings,
            ["ioengine=windowsaio replaced by sim: storlab has no windowsaio engine and the target sim:usb3-uas-ssd decides the engine"]
        );
        // On a file the storlab engine that does the same runs it.
        let path = Target::Path("/dev/sdz".into());
        assert_eq!(
            on(Some(path.clone()), "windowsaio").unwrap().engine,
            EngineKind::Libaio
        );
        assert_eq!(
            on(Some(path.clone()), "vsync").unwrap().engine,
            EngineKind::Pvsync2
        );
        // A known engine the target replaces goes unsaid, as before.
        assert!(on(Some(path), "io_uring").unwrap().warnings.is_empty());
        // Without a target from outside, the job is refused at the key that named the engine.
        assert_eq!(
            on(None, "rdma").unwrap_err().to_string(),
            "--ioengine=rdma: out of scope: storlab measures local files, block devices and its simulated stacks"
        );
        // An engine out of scope is refused on a target from outside too (issue 20): the target
        // stands in for an engine under another name, not for a network or GPU job.
        for engine in ["rdma", "cpuio", "filecreate", "libpmem"] {
            assert_eq!(
                on(Some(sim.clone()), engine).unwrap_err().to_string(),
                format!("--ioengine={engine}: out of scope: storlab measures local files, block devices and its simulated stacks")
            );
        }
        // A later known engine clears the refusal (a section over its `[global]`).
        let mut d = JobDraft::new();
        d.set("ioengine", Some("rdma"), &Location::Flag).unwrap();
        d.set("ioengine", Some("psync"), &Location::Flag).unwrap();
        d.set("size", Some("1M"), &Location::Flag).unwrap();
        assert!(d.finish("job", &Location::Job("job".into())).is_ok());
    }

    #[test]
    fn a_draft_cloned_from_an_overridden_one_keeps_the_override() {
        let mut global = JobDraft::new();
        global.override_target(Target::Sim("s".into()));
        let job = global.clone();
        let spec = job.finish("a", &Location::Job("a".into())).unwrap();
        assert_eq!(spec.target, Target::Sim("s".into()));
    }

    #[test]
    fn fadvise_hint_follows_the_job_unless_set() {
        use crate::model::AccessAdvice;
        let advice = |settings: &[(&str, Option<&str>)]| {
            let mut all = settings.to_vec();
            all.push(("size", Some("1M")));
            draft(&all).map(|s| s.access_advice())
        };
        assert_eq!(
            advice(&[("rw", Some("randread"))]),
            Ok(AccessAdvice::Random)
        );
        assert_eq!(
            advice(&[("rw", Some("read"))]),
            Ok(AccessAdvice::Sequential)
        );
        assert_eq!(
            advice(&[("rw", Some("randread")), ("fadvise_hint", Some("0"))]),
            Ok(AccessAdvice::Normal)
        );
        assert_eq!(
            advice(&[("rw", Some("read")), ("fadvise_hint", Some("random"))]),
            Ok(AccessAdvice::Random)
        );
        assert_eq!(
            advice(&[("rw", Some("randrw")), ("fadvise_hint", Some("sequential"))]),
            Ok(AccessAdvice::Sequential)
        );
        assert_eq!(
            draft(&[("fadvise_hint", Some("noreuse"))])
                .unwrap_err()
                .to_string(),
            "--fadvise_hint=noreuse: use 1 (the job's pattern), 0 (no hint), random or sequential"
        );
    }

    #[test]
    fn data_pattern_keys_share_one_setting() {
        let pattern = |key, value| {
            draft(&[(key, Some(value)), ("size", Some("1M"))])
                .unwrap()
                .data_pattern
        };
        assert_eq!(
            pattern("data_pattern", "compressible:40"),
            DataPattern::Compressible(40)
        );
        assert_eq!(pattern("data_pattern", "zeros"), DataPattern::Zeros);
        assert_eq!(
            pattern("buffer_compress_percentage", "60"),
            DataPattern::Compressible(60)
        );
        assert_eq!(
            pattern("buffer_compress_percentage", "0"),
            DataPattern::Random
        );
        assert_eq!(pattern("zero_buffers", "1"), DataPattern::Zeros);
    }

    #[test]
    fn rate_iops_takes_one_or_two_values() {
        let rate =
            |value| draft(&[("rate_iops", Some(value)), ("size", Some("1M"))]).map(|s| s.rate_iops);
        assert_eq!(
            rate("500"),
            Ok(RateIops {
                read: Some(500),
                write: Some(500)
            })
        );
        assert_eq!(
            rate("500,200"),
            Ok(RateIops {
                read: Some(500),
                write: Some(200)
            })
        );
        assert_eq!(
            rate(",200"),
            Ok(RateIops {
                read: None,
                write: Some(200)
            })
        );
    }

    #[test]
    fn validation_errors_point_at_the_setting_flag() {
        let error = draft(&[("blocksize", Some("1000")), ("size", Some("1M"))]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "--blocksize=1000: block size 1000 B is not a multiple of 512 bytes (one sector)"
        );
        let error = draft(&[("ioengine", Some("null"))]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "job [job]: nothing bounds the run: set size, runtime or number_ios"
        );
    }

    #[test]
    fn bare_keys_need_no_value_but_an_empty_value_is_a_mistake() {
        assert!(
            draft(&[("direct", None), ("size", Some("1M"))])
                .unwrap()
                .direct
        );
        assert_eq!(
            draft(&[("direct", Some(""))]).unwrap_err().to_string(),
            "--direct=: direct needs a value"
        );
    }

    #[test]
    fn typos_get_a_suggestion() {
        assert_eq!(suggest_key("iodeph"), Some("iodepth"));
        assert_eq!(suggest_key("bsplit"), Some("bssplit"));
        assert_eq!(suggest_key("foo"), None);
        assert_eq!(suggest_key("xyz"), None);
    }

    /// Regression (issue 24): a job without `rw` did random reads; fio reads sequentially.
    /// A preset keeps storlab's own default, random read.
    #[test]
    fn unset_rw_is_fios_sequential_read_except_in_presets() {
        let spec = draft(&[("size", Some("1M"))]).unwrap();
        assert_eq!((spec.read_percent, spec.random_percent), (100, 0));
        let mut preset = JobDraft::with_storlab_defaults();
        preset.set("size", Some("1M"), &Location::Flag).unwrap();
        let spec = preset.finish("p", &Location::Flag).unwrap();
        assert_eq!((spec.read_percent, spec.random_percent), (100, 100));
    }

    /// `randrepeat=0` (fio example jesd219.fio) takes a new seed each run, as fio; `randseed`
    /// still wins over it, and the default repeats storlab's fixed seed.
    #[test]
    fn randrepeat_0_draws_a_new_seed_unless_randseed_is_set() {
        let seed = |keys: &[(&str, &str)]| {
            let mut d = JobDraft::new();
            d.set("size", Some("1M"), &Location::Flag).unwrap();
            for (key, value) in keys {
                d.set(key, Some(value), &Location::Flag).unwrap();
            }
            d.finish("job", &Location::Job("job".into())).unwrap().seed
        };
        let fixed = seed(&[]);
        assert_eq!(seed(&[("randrepeat", "1")]), fixed);
        let fresh: Vec<u64> = (0..4).map(|_| seed(&[("randrepeat", "0")])).collect();
        assert!(fresh.iter().all(|&s| s != fixed), "{fresh:?}");
        assert!(fresh.windows(2).all(|pair| pair[0] != pair[1]), "{fresh:?}");
        assert_eq!(seed(&[("randrepeat", "0"), ("randseed", "77")]), 77);
        assert_eq!(seed(&[("randseed", "77"), ("randrepeat", "0")]), 77);
    }

    /// `new_group` (fio examples steadystate.fio, waitfor.fio) is a boolean key kept on the
    /// job for the fio-shaped reports' `groupid`; it does not make the job wait.
    #[test]
    fn new_group_is_kept_without_stonewall() {
        let mut d = JobDraft::new();
        d.set("size", Some("1M"), &Location::Flag).unwrap();
        d.set("new_group", None, &Location::Flag).unwrap();
        let spec = d.finish("job", &Location::Job("job".into())).unwrap();
        assert!(spec.new_group);
        assert!(!spec.stonewall);
    }

    /// Regression (issue 24): `timeout`, fio's alias of `runtime`, was an unknown key.
    #[test]
    fn timeout_is_runtime() {
        let spec = draft(&[("size", Some("1M")), ("timeout", Some("2"))]).unwrap();
        assert_eq!(spec.runtime_ns, Some(2 * NS_PER_S));
    }

    #[test]
    fn storlab_alignment_that_moves_offsets_off_fios_is_noted_once() {
        // fio's alignment is the smallest block; storlab's default is fio's under 4 KiB, and
        // 4 KiB steps above: a 6 KiB block is where they part.
        let file = "[global]\nsize=1M\nrw=randread\nbs=6k\n[a]\n[b]\n[c]\nblockalign=2k\n";
        let set = crate::fio::parse_fio_str(file, "j.fio", None).unwrap();
        let noted: Vec<usize> = set
            .jobs
            .iter()
            .map(|j| {
                j.warnings
                    .iter()
                    .filter(|w| w.contains("differs from fio"))
                    .count()
            })
            .collect();
        assert_eq!(noted, [1, 0, 0]);
        assert!(set.jobs[0]
            .warnings
            .iter()
            .any(|w| w.contains("blockalign=6144")));
        // 4 KiB random reads land where fio's would, and so do blocks under 4 KiB.
        let file = "[a]\nsize=1M\nrw=randread\nbsrange=1k-4k\n";
        let set = crate::fio::parse_fio_str(file, "j.fio", None).unwrap();
        assert!(set.jobs[0]
            .warnings
            .iter()
            .all(|w| !w.contains("differs from fio")));
    }

    #[test]
    fn sync_keys_follow_fio() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("fsync", Some("32")),
            ("fdatasync", Some("8")),
            ("end_fsync", None),
            ("fsync_on_close", Some("1")),
            ("sync", Some("none")),
        ])
        .unwrap();
        assert_eq!(
            spec.sync,
            SyncSpec {
                fsync_every_writes: 32,
                fdatasync_every_writes: 8,
                end_fsync: true,
                fsync_on_close: true,
                open_sync: OpenSync::None,
            }
        );
        assert_eq!(
            draft(&[("fsync", Some("x"))]).unwrap_err().key.as_deref(),
            Some("fsync")
        );
        assert_eq!(
            draft(&[("sync", Some("maybe"))]).unwrap_err().to_string(),
            "--sync=maybe: use none (or 0), sync (or 1, O_SYNC) or dsync (O_DSYNC)"
        );
        // Files and devices are opened with O_DSYNC; only mmap's stores cannot be made so.
        let spec = draft(&[("size", Some("1M")), ("sync", Some("dsync"))]).unwrap();
        assert_eq!(spec.sync.open_sync, OpenSync::Dsync);
        let refused = draft(&[
            ("size", Some("1M")),
            ("ioengine", Some("mmap")),
            ("sync", Some("dsync")),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            refused.starts_with("--sync=dsync: ioengine=mmap writes by storing into a mapping"),
            "{refused}"
        );
        // The simulated stacks flush their drive's cache, and make writes synchronous.
        let spec = draft(&[
            ("filename", Some("sim:usb3-uas-ssd")),
            ("end_fsync", None),
            ("fsync", Some("4")),
            ("sync", Some("1")),
        ])
        .unwrap();
        assert!(spec.sync.end_fsync && spec.sync.open_sync == OpenSync::Sync);
    }

    #[test]
    fn thinktime_keys_follow_fio_units() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("thinktime", Some("500")),
            ("thinktime_spin", Some("100")),
            ("thinktime_blocks", Some("16")),
            ("thinktime_blocks_type", Some("issue")),
            ("thinktime_iotime", Some("2")),
        ])
        .unwrap();
        assert_eq!(
            spec.think,
            ThinkSpec {
                think_ns: 500_000,
                spin_ns: 100_000,
                every_ios: Some(16),
                count_issued: true,
                every_io_ns: 2 * NS_PER_S,
            }
        );
        assert_eq!(
            draft(&[("thinktime_blocks", Some("0"))])
                .unwrap_err()
                .to_string(),
            "--thinktime_blocks=0: at least 1 I/O between stalls"
        );
        let spec = draft(&[("size", Some("1M")), ("thinktime_blocks", Some("4"))]).unwrap();
        assert!(spec
            .warnings
            .iter()
            .any(|w| w.contains("without thinktime")));
    }

    #[test]
    fn random_distribution_takes_fios_forms_and_ranges() {
        let parse = |value: &str| {
            draft(&[
                ("size", Some("1M")),
                ("rw", Some("randread")),
                ("random_distribution", Some(value)),
            ])
            .map(|s| s.random_distribution)
            .map_err(|e| e.to_string())
        };
        assert_eq!(
            parse("zipf:1.2"),
            Ok(RandomDistribution::Zipf {
                theta_micros: 1_200_000,
                center_micros: None
            })
        );
        assert_eq!(
            parse("pareto:0.9:0.25"),
            Ok(RandomDistribution::Pareto {
                h_micros: 900_000,
                center_micros: Some(250_000)
            })
        );
        assert_eq!(parse("gauss:5"), parse("normal:5"));
        assert_eq!(
            parse("zoned_abs:60/16k:40/48k"),
            Ok(RandomDistribution::ZonedAbs {
                zones: vec![
                    ZoneShare {
                        access_percent: 60,
                        size: 16 << 10
                    },
                    ZoneShare {
                        access_percent: 40,
                        size: 48 << 10
                    }
                ]
            })
        );
        // A relative zone without a size shares what the others leave, as fio's
        // zone_split_ddir: `20/`, `20` and `20/0` alike (fio example rand-zones.fio's form).
        let zones = |shares: &[(u8, u64)]| {
            Ok(RandomDistribution::Zoned {
                zones: shares
                    .iter()
                    .map(|&(access_percent, size)| ZoneShare {
                        access_percent,
                        size,
                    })
                    .collect(),
            })
        };
        assert_eq!(
            parse("zoned:50/5:30/15:20/"),
            zones(&[(50, 5), (30, 15), (20, 80)])
        );
        assert_eq!(
            parse("zoned:50/5:30:20/0"),
            zones(&[(50, 5), (30, 47), (20, 47)])
        );
        // fio's own refusals (fio 3.33 --parse-only), one line each.
        for (value, message) in [
            ("zipf:1.0", "zipf's theta must differ from 1.0"),
            ("pareto:1.5", "pareto's h must be above 0 and below 1"),
            ("normal:200", "normal's deviation must be below 100"),
            ("zipf:1.2:1.5", "the center must be between 0 and 1"),
            (
                "zoned:60/10:30/90",
                "zone access shares sum to 90%, not 100%",
            ),
            ("zoned:60/60:40/60", "zone sizes add up to more than 100%"),
            ("zoned:60/100:40/", "the zones given a size leave no share"),
            ("uniform", "use random, zipf:THETA"),
        ] {
            let error = parse(value).unwrap_err();
            assert!(
                error.starts_with(&format!("--random_distribution={value}: {message}")),
                "{error}"
            );
        }
        let spec = draft(&[
            ("size", Some("1M")),
            ("random_distribution", Some("zipf:2")),
        ])
        .unwrap();
        assert!(spec
            .warnings
            .iter()
            .any(|w| w.contains("random_distribution has no effect")));
        assert!(draft(&[("size", Some("1M")), ("random_generator", Some("lfsr"))]).is_ok());
        // fio's LFSR never repeats a block in a pass: with it, norandommap keeps the map.
        let lfsr = |generator: &str| {
            draft(&[
                ("size", Some("1M")),
                ("rw", Some("randread")),
                ("norandommap", None),
                ("random_generator", Some(generator)),
            ])
            .unwrap()
            .random_map
        };
        assert!(lfsr("lfsr"));
        assert!(!lfsr("tausworthe"));
        assert!(draft(&[("random_generator", Some("mt"))]).is_err());
    }

    #[test]
    fn the_rw_modifier_is_a_size_for_sequential_modes_and_a_count_for_random_ones() {
        let modifier = |rw: &str| {
            draft(&[("size", Some("1M")), ("rw", Some(rw))])
                .map(|s| s.rw_modifier)
                .map_err(|e| e.to_string())
        };
        assert_eq!(modifier("write:112k"), Ok(RwModifier::SkipBytes(112 << 10)));
        assert_eq!(modifier("randread:8"), Ok(RwModifier::RandomEveryIos(8)));
        assert_eq!(modifier("read:0"), Ok(RwModifier::None));
        assert_eq!(modifier("randrw:1"), Ok(RwModifier::None));
        assert_eq!(modifier("write:-4k"), Ok(RwModifier::BackBytes(4 << 10)));
        assert_eq!(modifier("read:-0"), Ok(RwModifier::None));
        assert_eq!(
            modifier("read:-100").unwrap_err(),
            "--rw=read:-100: the hole after each I/O must be a multiple of 512 bytes (one sector)"
        );
        assert!(modifier("randread:-8").is_err());
        assert_eq!(
            modifier("write:100").unwrap_err(),
            "--rw=write:100: the hole after each I/O must be a multiple of 512 bytes (one sector)"
        );
        assert!(modifier("randread:0").is_err());
    }

    #[test]
    fn strided_zones_follow_fio_and_zbd_is_out_of_scope() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("zonemode", Some("strided")),
            ("zonesize", Some("16k")),
            ("zoneskip", Some("48k")),
        ])
        .unwrap();
        assert_eq!(
            spec.strided_zones,
            Some(StridedZones {
                size_bytes: 16 << 10,
                range_bytes: 16 << 10,
                skip_bytes: 48 << 10,
            })
        );
        assert_eq!(
            draft(&[("size", Some("1M")), ("zonesize", Some("16k"))])
                .unwrap_err()
                .to_string(),
            "--zonesize=16k: zone sizes need zonemode=strided (as fio: zonemode=none and zonesize are not compatible)"
        );
        assert_eq!(
            draft(&[("size", Some("1M")), ("zonemode", Some("strided"))])
                .unwrap_err()
                .to_string(),
            "--zonemode=strided: zonemode=strided needs zonesize (the bytes done in each zone)"
        );
        assert!(draft(&[("zonemode", Some("zbd"))])
            .unwrap_err()
            .to_string()
            .starts_with("--zonemode=zbd: zoned block devices (ZBD) are out of scope"));
    }

    #[test]
    fn a_split_given_to_bsrange_is_refused_with_fios_accidental_reading() {
        let error = draft(&[("bsrange", Some("512/25:1k:25:2k:25:4k/25"))])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("fio 3.33 reads it as the range 512-1k and drops the rest unread"),
            "{error}"
        );
        assert!(
            error.contains("bssplit=512/25:1k:25:2k:25:4k/25"),
            "{error}"
        );
        assert_eq!(error.lines().count(), 1);
        let error = draft(&[("bsrange", Some("4k/50-8k"))])
            .unwrap_err()
            .to_string();
        assert!(error.contains("range 4k-8k"), "{error}");
    }

    #[test]
    fn batching_and_cpu_keys_reach_the_spec_as_fio_leaves_them() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("ioengine", Some("io_uring")),
            ("iodepth", Some("16")),
            ("iodepth_batch", Some("4")),
            ("iodepth_batch_complete", Some("2")),
            ("iodepth_low", Some("8")),
            ("cpus_allowed", Some("1,0")),
            ("cpus_allowed_policy", Some("split")),
        ])
        .unwrap();
        assert_eq!(
            spec.io_batch,
            Some(crate::IoBatch {
                submit: 4,
                complete_min: 2,
                complete_max: 2,
                depth_low: 8
            })
        );
        assert_eq!(
            spec.cpus_allowed,
            Some(crate::CpuAffinity {
                cpus: vec![0, 1],
                split: true
            })
        );
        assert!(spec.warnings.is_empty(), "{:?}", spec.warnings);
        // fio's defaults spelled out are no batching at all.
        let spec = draft(&[
            ("size", Some("1M")),
            ("iodepth", Some("8")),
            ("iodepth_batch_submit", Some("1")),
            ("iodepth_batch_complete_max", Some("1")),
            ("iodepth_low", Some("8")),
            ("cpus_allowed_policy", Some("split")),
        ])
        .unwrap();
        assert_eq!((spec.io_batch, spec.cpus_allowed), (None, None));
        let bad = draft(&[("cpus_allowed_policy", Some("spread"))]).unwrap_err();
        assert!(bad.to_string().contains("use shared or split"), "{bad}");
        let bad = draft(&[("verify_async_cpus", Some("0-x"))]).unwrap_err();
        assert!(bad.to_string().contains("verify_async_cpus"), "{bad}");
    }

    #[test]
    fn accepted_keys_say_what_they_do_not_change() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("flow", Some("2")),
            ("numa_cpu_nodes", Some("0")),
            ("gtod_reduce", None),
            ("clocksource", Some("cpu")),
            ("io_submit_mode", Some("offload")),
        ])
        .unwrap();
        assert_eq!(spec.warnings.len(), 1, "{:?}", spec.warnings);
        assert!(spec.warnings[0].starts_with("numa_cpu_nodes: accepted, no effect"));
        assert_eq!(
            spec.flow,
            Some(FlowSpec {
                id: 0,
                weight: 2,
                sleep_ns: 0
            })
        );
        let spec = draft(&[
            ("size", Some("1M")),
            ("flow_id", Some("3")),
            ("flow", Some("5")),
            ("flow_sleep", Some("100")),
        ])
        .unwrap();
        assert_eq!(
            spec.flow,
            Some(FlowSpec {
                id: 3,
                weight: 5,
                sleep_ns: 100_000
            })
        );
        assert_eq!(
            draft(&[("size", Some("1M")), ("flow", Some("0"))])
                .unwrap()
                .flow,
            None
        );
        assert_eq!(
            draft(&[("flow", Some("1001"))]).unwrap_err().to_string(),
            "--flow=1001: a weight from 0 to 1000 is needed"
        );
        assert_eq!(
            draft(&[("nrfiles", Some("4"))]).unwrap_err().to_string(),
            "--nrfiles=4: storlab runs one file per job; split the job into one job per file"
        );
        assert!(draft(&[("clocksource", Some("tsc"))]).is_err());
        assert!(draft(&[("fallocate", Some("yes"))]).is_err());
        for mode in ["none", "native", "posix", "keep", "truncate", "0", "1"] {
            let spec = draft(&[("size", Some("1M")), ("fallocate", Some(mode))]).unwrap();
            assert!(
                spec.warnings.len() == 1 && spec.warnings[0].starts_with("fallocate: accepted"),
                "{mode}: {:?}",
                spec.warnings
            );
        }
        let spec = draft(&[("filesize", Some("64k")), ("rate_process", Some("poisson"))]).unwrap();
        assert_eq!(spec.size_bytes, Some(64 << 10));
        assert!(spec.rate_poisson);
        let spec = draft(&[
            ("size", Some("1M")),
            ("directory", Some("/tmp/d")),
            ("filename_format", Some("$jobname.$jobnum.$filenum")),
        ])
        .unwrap();
        assert_eq!(spec.target, Target::Path("/tmp/d/job.0.0".into()));
    }

    #[test]
    fn steadystate_needs_a_duration_and_reads_fios_limits() {
        let spec = draft(&[("size", Some("1M")), ("ss", Some("iops:5%"))]).unwrap();
        assert_eq!(spec.steadystate, None, "no duration: not judged (as fio)");
        let spec = draft(&[("size", Some("1M")), ("ss_dur", Some("30"))]).unwrap();
        assert_eq!(
            spec.steadystate,
            Some(SteadyStateSpec {
                bandwidth: false,
                slope: true,
                limit_micros: 10_000,
                percent: true,
                duration_ns: 30 * NS_PER_S,
                ramp_ns: 0,
            })
        );
        let spec = draft(&[
            ("size", Some("1M")),
            ("steadystate", Some("bw:10m")),
            ("steadystate_duration", Some("20s")),
            ("steadystate_ramp_time", Some("5")),
        ])
        .unwrap()
        .steadystate
        .unwrap();
        assert_eq!(
            (
                spec.bandwidth,
                spec.slope,
                spec.percent,
                spec.limit_micros,
                spec.ramp_ns
            ),
            (
                true,
                false,
                false,
                (10 << 20) * MICROS_PER_UNIT,
                5 * NS_PER_S
            )
        );
        assert!(draft(&[("ss", Some("latency:5%"))]).is_err());
        assert!(draft(&[("ss", Some("iops"))]).is_err());
    }

    #[test]
    fn patterns_are_fios_hex_and_strings() {
        let pattern = |v: &str| {
            draft(&[("size", Some("1M")), ("buffer_pattern", Some(v))])
                .map(|s| s.buffer_pattern.unwrap())
                .map_err(|e| e.to_string())
        };
        assert_eq!(pattern("0xdeadbeef"), Ok(vec![0xde, 0xad, 0xbe, 0xef]));
        assert_eq!(pattern("0xabc"), Ok(vec![0x0a, 0xbc]));
        assert_eq!(pattern("\"ab\""), Ok(b"ab".to_vec()));
        assert!(pattern("0xzz").is_err());
        // Several elements and decimal numbers, as fio 3.33 writes them (checked with fio on a
        // file and xxd): `0xdeadface"abcd"-12` is `de ad fa ce 61 62 63 64 f4 ff ff ff`.
        assert_eq!(
            pattern("0xdeadface\"abcd\"-12"),
            Ok(vec![
                0xde, 0xad, 0xfa, 0xce, b'a', b'b', b'c', b'd', 0xf4, 0xff, 0xff, 0xff
            ])
        );
        assert_eq!(pattern("4660"), Ok(vec![0x34, 0x12]));
        assert_eq!(pattern("0"), Ok(vec![0]));
        assert_eq!(pattern("0xff0x14"), Ok(vec![0xff, 0x14]));
        assert_eq!(pattern("\"ab\"0x1234"), Ok(vec![b'a', b'b', 0x12, 0x34]));
        // fio refuses these too.
        assert!(pattern("-0x12").is_err());
        assert!(pattern("0x12 \"a\"").is_err());
        assert!(pattern("'file'").unwrap_err().contains("pattern files"));
        assert!(pattern("%o").unwrap_err().contains("%o"));
        let spec = draft(&[
            ("size", Some("1M")),
            ("rw", Some("write")),
            ("verify", Some("crc32c")),
            ("verify_pattern", Some("0xff%o\"ab\"")),
        ])
        .unwrap();
        let verify = spec.verify_spec.unwrap();
        assert_eq!(verify.kind, VerifyKind::Crc32c);
        let pattern = verify.pattern.unwrap();
        assert_eq!(pattern.bytes, [0xff, 0, 0, 0, 0, 0, 0, 0, 0, b'a', b'b']);
        assert_eq!(pattern.offset_positions, [1]);
        assert!(spec.warnings.is_empty(), "{:?}", spec.warnings);
    }

    #[test]
    fn continue_on_error_takes_fios_values_and_passes_fios_errors() {
        use crate::model::{ERRNO_EILSEQ, ERRNO_EIO};
        const ERRNO_ENODATA: i32 = 61;
        let of = |value: &str| {
            draft(&[("size", Some("1M")), ("continue_on_error", Some(value))])
                .map(|spec| spec.continue_on_error)
        };
        let none = ContinueOnError::default();
        assert_eq!(of("none").unwrap(), none);
        assert_eq!(of("0").unwrap(), none);
        assert_eq!(of("1").unwrap(), of("all").unwrap());
        assert_eq!(of("IO").unwrap(), of("io").unwrap());
        assert!(of("sometimes").is_err());
        let read = of("read").unwrap();
        assert!(read.passes(true, ERRNO_EIO));
        assert!(
            !read.passes(false, ERRNO_EIO),
            "a write error is not a read error"
        );
        assert!(
            !read.passes(true, ERRNO_ENODATA),
            "not in fio's default list"
        );
        assert!(!read.passes(true, ERRNO_EILSEQ), "EILSEQ is a verify error");
        let write = of("write").unwrap();
        assert!(write.passes(false, ERRNO_EIO) && !write.passes(true, ERRNO_EIO));
        let verify = of("verify").unwrap();
        assert!(verify.passes(true, ERRNO_EILSEQ) && !verify.passes(true, ERRNO_EIO));
        // Refused with verify, accepted when nothing is read back.
        let verifying = [("size", Some("1M")), ("rw", Some("write"))];
        let with = |extra: &[(&str, Option<&str>)]| {
            let mut all = verifying.to_vec();
            all.extend_from_slice(extra);
            draft(&all)
        };
        assert!(with(&[("verify", Some("md5")), ("continue_on_error", Some("all"))]).is_err());
        assert!(with(&[
            ("verify", Some("md5")),
            ("do_verify", Some("0")),
            ("continue_on_error", Some("all"))
        ])
        .is_ok());
        assert!(with(&[("ignore_error", Some("EIO"))]).is_ok());
    }

    #[test]
    fn ignore_error_reads_fios_lists_per_kind() {
        use crate::model::{ERRNO_EIO, ERRNO_ENOSPC};
        let of = |settings: &[(&str, Option<&str>)]| {
            let mut all = vec![("size", Some("1M"))];
            all.extend_from_slice(settings);
            draft(&all).map(|spec| spec.continue_on_error)
        };
        // fio's enospc-pressure example: the write list alone, which turns writes on.
        let write_enospc = of(&[("ignore_error", Some(",ENOSPC"))]).unwrap();
        assert!(write_enospc.write && !write_enospc.read && !write_enospc.verify);
        assert!(write_enospc.passes(false, ERRNO_ENOSPC));
        assert!(
            !write_enospc.passes(false, ERRNO_EIO),
            "a list replaces fio's default"
        );
        assert!(!write_enospc.passes(true, ERRNO_ENOSPC));
        // Names and numbers, ':' within a list, a negative number's sign dropped, as fio.
        let mixed = of(&[("ignore_error", Some("EIO:-61:28x,,84"))]).unwrap();
        assert_eq!(mixed.ignored_read, Some(vec![ERRNO_EIO, 61, ERRNO_ENOSPC]));
        assert_eq!(mixed.ignored_write, None);
        assert_eq!(mixed.ignored_verify, Some(vec![84]));
        // An empty entry ends its list (fio's strsep loop).
        let cut = of(&[("ignore_error", Some("EIO::ENOSPC"))]).unwrap();
        assert_eq!(cut.ignored_read, Some(vec![ERRNO_EIO]));
        // continue_on_error after it sets the kinds and keeps the lists, as fio's two fields.
        let none = of(&[
            ("ignore_error", Some(",ENOSPC")),
            ("continue_on_error", Some("none")),
        ])
        .unwrap();
        assert!(!none.passes(false, ERRNO_ENOSPC));
        assert_eq!(none.ignored_write, Some(vec![ERRNO_ENOSPC]));
        // fio knows 34 names (EILSEQ is not one of them) and at most three kinds.
        assert!(of(&[("ignore_error", Some("EILSEQ"))]).is_err());
        assert!(of(&[("ignore_error", Some("eio"))]).is_err());
        assert!(of(&[("ignore_error", Some("EIO,EIO,EIO,EIO"))]).is_err());
        // fio's default error_dump=0 changes nothing; dumping each passed error is refused.
        assert!(of(&[("error_dump", Some("0"))]).is_ok());
        assert!(of(&[("error_dump", Some("1"))]).is_err());
    }

    #[test]
    fn fill_device_needs_a_writing_job_on_a_named_target() {
        let of = |settings: &[(&str, Option<&str>)]| {
            let mut all = vec![("fill_fs", None)];
            all.extend_from_slice(settings);
            draft(&all)
        };
        let spec = of(&[("filename", Some("/tmp/f")), ("rw", Some("write"))]).unwrap();
        assert!(spec.fill_device && spec.size_bytes.is_none());
        assert!(of(&[
            ("filename", Some("sim:usb3-uas-ssd")),
            ("rw", Some("write"))
        ])
        .is_ok());
        let reading = of(&[("filename", Some("/tmp/f"))]).unwrap_err().to_string();
        assert!(reading.contains("does not write"), "{reading}");
        let temporary = of(&[("rw", Some("write"))]).unwrap_err().to_string();
        assert!(temporary.contains("needs filename="), "{temporary}");
        let mapped = of(&[
            ("filename", Some("/tmp/f")),
            ("rw", Some("write")),
            ("ioengine", Some("mmap")),
        ])
        .unwrap_err()
        .to_string();
        assert!(mapped.contains("mmap"), "{mapped}");
    }

    #[test]
    fn a_reading_job_with_verify_checks_its_reads_and_has_no_read_back() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("rw", Some("read")),
            ("verify", Some("md5")),
        ])
        .unwrap();
        assert!(!spec.verify, "nothing written, so no read-back phase");
        assert_eq!(spec.verify_spec.unwrap().kind, VerifyKind::Md5);
        // storlab's own check compares with what the job wrote: a reading job has nothing.
        assert!(draft(&[
            ("size", Some("1M")),
            ("rw", Some("read")),
            ("verify", Some("1"))
        ])
        .is_err());
    }

    #[test]
    fn trim_modes_write_as_fio_and_take_the_third_block_size() {
        let job = |rw: &str, bs: &str| {
            // ioengine=null: fio fails a trim of a regular file, so storlab refuses one.
            let keys = [("size", Some("1M")), ("rw", Some(rw)), ("bs", Some(bs))];
            draft(&[&keys[..], &[("ioengine", Some("null"))]].concat()).unwrap()
        };
        for (rw, trim, random) in [
            ("trim", TrimMode::Trim, false),
            ("randtrim", TrimMode::Trim, true),
            ("trimwrite", TrimMode::TrimWrite, false),
            ("randtrimwrite", TrimMode::TrimWrite, true),
        ] {
            let spec = job(rw, "4k");
            assert_eq!(
                (spec.trim, spec.random_percent == 100),
                (trim, random),
                "{rw}"
            );
            assert_eq!(spec.read_percent, 0, "{rw}: opened for writing");
            assert_eq!(spec.rw_name(), rw);
        }
        // fio's `bs=READ,WRITE,TRIM`: the trims take the third.
        let spec = job("trimwrite", "4k,4k,8k");
        assert_eq!(spec.block_size_read, BlockSizeSpec::Fixed(8192));
        assert_eq!(spec.block_size_write, BlockSizeSpec::Fixed(4096));
        // Elsewhere it has no use, as in fio; one value is every direction's.
        assert_eq!(
            job("read", "4k,8k,16k").block_size_read,
            BlockSizeSpec::Fixed(4096)
        );
        assert_eq!(
            job("trim", "16k").block_size_read,
            BlockSizeSpec::Fixed(16384)
        );
        assert_eq!(job("write", "4k").trim, TrimMode::None);
    }

    #[test]
    fn serialize_overlap_is_on_only_where_io_can_race_as_fio_leaves_it() {
        let with = |extra: &[(&str, Option<&str>)]| {
            let mut all = vec![("size", Some("1M")), ("serialize_overlap", None)];
            all.extend_from_slice(extra);
            draft(&all).unwrap().serialize_overlap
        };
        assert!(with(&[("rw", Some("randwrite")), ("iodepth", Some("8"))]));
        assert!(!with(&[("rw", Some("randwrite")), ("iodepth", Some("1"))]));
        assert!(!with(&[("rw", Some("randread")), ("iodepth", Some("8"))]));
        assert!(with(&[
            ("rw", Some("read")),
            ("io_submit_mode", Some("offload"))
        ]));
    }

    #[test]
    fn verify_keys_follow_fio() {
        let base = [("size", Some("1M")), ("rw", Some("write"))];
        let with = |extra: &[(&str, Option<&str>)]| {
            let mut all = base.to_vec();
            all.extend_from_slice(extra);
            draft(&all)
        };
        // do_verify=0: headers written, nothing read back.
        let spec = with(&[("verify", Some("md5")), ("do_verify", Some("0"))]).unwrap();
        assert!(!spec.verify);
        assert_eq!(spec.verify_spec.unwrap().kind, VerifyKind::Md5);
        // verify_only reads back whatever do_verify says.
        let spec = with(&[
            ("verify", Some("crc32c-intel")),
            ("do_verify", Some("0")),
            ("verify_only", None),
        ])
        .unwrap();
        assert!(spec.verify);
        let verify = spec.verify_spec.unwrap();
        assert!(verify.only);
        assert_eq!(verify.kind, VerifyKind::Crc32c);
        // sha256/sha512: storlab's own check, with a warning why.
        let spec = with(&[("verify", Some("sha256"))]).unwrap();
        assert!(spec.verify && spec.verify_spec.is_none());
        assert!(
            spec.warnings[0].contains("unfinished working buffer"),
            "{:?}",
            spec.warnings
        );
        // verify=1 is storlab's own check alone.
        let spec = with(&[("verify", Some("1"))]).unwrap();
        assert!(spec.verify && spec.verify_spec.is_none());
        for (keys, wanted) in [
            (
                &[("verify", Some("pattern"))][..],
                "verify_pattern, which is not set",
            ),
            (
                &[
                    ("verify", Some("md5")),
                    ("bssplit", Some("4k/50:6k/25:8k/25")),
                    ("verify_interval", Some("3000")),
                ][..],
                "must divide every block size",
            ),
            (
                &[("verify", Some("md5")), ("verify_offset", Some("10"))][..],
                "at least the header's 56 bytes",
            ),
            (
                &[
                    ("verify", Some("sha3-512")),
                    ("verify_interval", Some("64")),
                ][..],
                "needs 104 bytes of header",
            ),
            (
                &[("verify_only", None)][..],
                "needs verify= with a fio kind",
            ),
            (
                &[
                    ("verify", Some("md5")),
                    ("verify_only", None),
                    ("time_based", None),
                    ("runtime", Some("1")),
                ][..],
                "no end to replay",
            ),
            (
                &[
                    ("verify", Some("crc32c")),
                    ("verify_state_load", Some("1")),
                    ("rw", Some("randwrite")),
                ][..],
                "sequential writing job (rw=write) only",
            ),
            (
                &[
                    ("verify", Some("crc32c")),
                    ("verify_state_load", Some("1")),
                    ("loops", Some("2")),
                ][..],
                "drop loops",
            ),
            (
                &[
                    ("verify", Some("crc32c")),
                    ("verify_state_load", Some("1")),
                    ("verify_backlog", Some("4")),
                ][..],
                "drop verify_backlog",
            ),
            (
                &[("experimental_verify", Some("1"))][..],
                "experimental_verify",
            ),
            (&[("buffer_pattern", Some("%o"))][..], "verify_pattern only"),
        ] {
            let error = with(keys).unwrap_err().to_string();
            assert!(error.contains(wanted), "{keys:?}: {error}");
        }
        // fio 3.33 changes a verify_interval it cannot use (init.c): larger than the smallest
        // write, it is that write size; not dividing the smallest and largest, their gcd.
        for (keys, interval, changed) in [
            (&[("verify_interval", Some("3000"))][..], 4096, true),
            (
                &[
                    ("bsrange", Some("4k-64k")),
                    ("verify_interval", Some("64k")),
                ][..],
                4096,
                true,
            ),
            (&[("bsrange", Some("512-64k"))][..], 512, false),
            (&[("bs", Some("4k,16k"))][..], 16384, false),
            (
                &[("bs", Some("16k")), ("verify_interval", Some("1k"))][..],
                1024,
                false,
            ),
        ] {
            let mut all = vec![("verify", Some("crc32c"))];
            all.extend_from_slice(keys);
            let spec = with(&all).unwrap();
            let verify = spec.verify_spec.as_ref().unwrap();
            assert_eq!(
                verify.interval_bytes.unwrap_or(spec.verify_granule_bytes()),
                interval,
                "{keys:?}"
            );
            assert_eq!(
                spec.warnings.iter().any(|w| w.contains("fio 3.33 uses")),
                changed,
                "{keys:?}: {:?}",
                spec.warnings
            );
            assert!(
                !spec
                    .warnings
                    .iter()
                    .any(|w| w.contains("verify headers every")),
                "{keys:?}: {:?}",
                spec.warnings
            );
        }
        // Where storlab's headers cannot sit where fio's do, it says so: random 16 KiB writes
        // at storlab's 4 KiB alignment (fio aligns them at the block size). A sequential job's
        // headers are fio's whatever its blockalign.
        let spec = with(&[
            ("verify", Some("crc32c")),
            ("rw", Some("randwrite")),
            ("bs", Some("16k")),
        ])
        .unwrap();
        assert!(
            spec.warnings
                .iter()
                .any(|w| w.contains("verify_interval=4096 in both")),
            "{:?}",
            spec.warnings
        );
        let spec = with(&[
            ("verify", Some("crc32c")),
            ("bs", Some("16k")),
            ("blockalign", Some("4k")),
        ])
        .unwrap();
        assert_eq!(spec.verify_granule_bytes(), 16384);
        assert!(spec.warnings.is_empty(), "{:?}", spec.warnings);
        // A sequential writing job loads fio's state, with verify_only or without.
        for only in ["0", "1"] {
            let spec = with(&[
                ("verify", Some("crc32c")),
                ("verify_only", Some(only)),
                ("verify_state_load", Some("1")),
            ])
            .unwrap();
            assert!(spec.verify_state_load);
        }
        // fio's fixup_options: an interval that does not divide the block becomes the block
        // (gcd of the smallest and largest write), one above the block is lowered to it.
        for (interval, bs, wanted) in [("3000", "4k", 4096), ("1M", "512", 512), ("512", "1M", 512)]
        {
            let spec = with(&[
                ("verify", Some("md5")),
                ("bs", Some(bs)),
                ("verify_interval", Some(interval)),
            ])
            .unwrap();
            let set = spec.verify_spec.unwrap().interval_bytes;
            assert_eq!(set, Some(wanted), "verify_interval={interval} bs={bs}");
        }
        for keys in [
            &[("verify_state_save", Some("0"))][..],
            &[("verify_async", Some("2")), ("verify", Some("md5"))][..],
            &[("experimental_verify", Some("0"))][..],
            &[("verify_fatal", Some("1")), ("verify", Some("md5"))][..],
        ] {
            with(keys).unwrap();
        }
    }

    #[test]
    fn log_keys_name_fios_files() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("numjobs", Some("2")),
            ("write_bw_log", None),
            ("write_lat_log", Some("out/lat")),
            ("log_avg_msec", Some("500")),
            ("log_offset", None),
        ])
        .unwrap();
        let logs = &spec.fio_logs;
        // A bare key names the log after the job, as fio.
        assert_eq!(
            logs.path(FioLogKind::Bandwidth, 2),
            Some(PathBuf::from("job_bw.2.log"))
        );
        assert_eq!(
            logs.path(FioLogKind::SubmissionLatency, 1),
            Some(PathBuf::from("out/lat_slat.1.log"))
        );
        assert_eq!(logs.path(FioLogKind::Iops, 1), None);
        assert_eq!((logs.average_ms, logs.offset), (500, true));
        let shared = draft(&[
            ("size", Some("1M")),
            ("write_iops_log", Some("x")),
            ("per_job_logs", Some("0")),
        ])
        .unwrap();
        assert_eq!(
            shared.fio_logs.path(FioLogKind::Iops, 7),
            Some(PathBuf::from("x_iops.log"))
        );
    }

    #[test]
    fn log_features_storlab_lacks_are_refused_in_one_line() {
        for (key, value) in [
            ("log_compression", "4m"),
            ("log_store_compressed", "1"),
            ("log_unix_epoch", "1"),
            ("log_hist_coarseness", "7"),
        ] {
            let error = draft(&[
                ("size", Some("1M")),
                ("write_bw_log", None),
                (key, Some(value)),
            ])
            .unwrap_err()
            .to_string();
            assert!(error.starts_with(&format!("--{key}={value}: ")), "{error}");
            assert!(!error.contains('\n'), "{error}");
        }
        assert!(draft(&[("size", Some("1M")), ("log_compression", Some("0"))]).is_ok());
        // fio's logs show which I/Os cmdprio gave a priority (`log_prio`): both together run.
        let spec = draft(&[
            ("size", Some("1M")),
            ("ioengine", Some("io_uring")),
            ("cmdprio_percentage", Some("20")),
            ("write_lat_log", None),
        ])
        .unwrap();
        assert!(spec.uses_cmdprio());
    }

    #[test]
    fn cmdprio_class_and_sqthread_poll_cpu_reach_the_engine_tuning() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("ioengine", Some("io_uring")),
            ("cmdprio_percentage", Some("10")),
            ("cmdprio_class", Some("2")),
            ("sqthread_poll", None),
            ("sqthread_poll_cpu", Some("3")),
        ])
        .unwrap();
        assert_eq!(spec.engine_tuning.cmdprio.read.class, Some(2));
        assert_eq!(spec.engine_tuning.cmdprio.write.class, Some(2));
        assert_eq!(spec.engine_tuning.sqthread_poll_cpu, Some(3));
        assert!(spec.warnings.is_empty(), "{:?}", spec.warnings);
        let class = |v: &str| {
            draft(&[
                ("size", Some("1M")),
                ("ioengine", Some("io_uring")),
                ("cmdprio_class", Some(v)),
            ])
            .map_err(|e| e.to_string())
        };
        assert!(class("4").unwrap_err().contains("use 1 (real-time)"));
        // fio's read,write[,trim] form: each direction its own class (trims carry none).
        let both = class("1,2").unwrap().engine_tuning.cmdprio;
        assert_eq!((both.read.class, both.write.class), (Some(1), Some(2)));
        let only_writes = class(",3,1").unwrap().engine_tuning.cmdprio;
        assert_eq!(
            (only_writes.read.class, only_writes.write.class),
            (None, Some(3))
        );
        assert!(class("1,2,4").unwrap_err().contains("use 1 (real-time)"));
        assert!(class("1,2,3,1").unwrap_err().contains("more than three"));
        // Without cmdprio_percentage the class changes nothing, as in fio: a warning.
        let warnings = class("2").unwrap().warnings;
        assert!(
            warnings.iter().any(|w| w.contains("cmdprio_class")),
            "{warnings:?}"
        );
    }

    #[test]
    fn cmdprio_sets_the_level_of_the_prioritized_ios() {
        let level = |v: &str, percentage: bool| {
            let mut pairs = vec![
                ("size", Some("1M")),
                ("ioengine", Some("io_uring")),
                ("cmdprio", Some(v)),
            ];
            if percentage {
                pairs.push(("cmdprio_percentage", Some("10")));
            }
            draft(&pairs).map_err(|e| e.to_string())
        };
        let spec = level("5", true).unwrap();
        assert_eq!(spec.engine_tuning.cmdprio.read.level, Some(5));
        assert_eq!(spec.engine_tuning.cmdprio.write.level, Some(5));
        assert!(spec.warnings.is_empty(), "{:?}", spec.warnings);
        let two = level("1,2", true).unwrap().engine_tuning.cmdprio;
        assert_eq!((two.read.level, two.write.level), (Some(1), Some(2)));
        assert!(level("8", true).unwrap_err().contains("0 (highest) to 7"));
        // Without cmdprio_percentage the level changes nothing, as in fio: a warning.
        let warnings = level("3", false).unwrap().warnings;
        assert!(
            warnings.iter().any(|w| w.contains("cmdprio")),
            "{warnings:?}"
        );
    }

    #[test]
    fn cmdprio_percentage_takes_a_share_per_direction() {
        let percentage = |v: &str| {
            draft(&[
                ("size", Some("1M")),
                ("ioengine", Some("libaio")),
                ("cmdprio_percentage", Some(v)),
            ])
            .map(|spec| {
                let cmdprio = spec.engine_tuning.cmdprio;
                (cmdprio.read.percentage, cmdprio.write.percentage)
            })
            .map_err(|e| e.to_string())
        };
        assert_eq!(percentage("20"), Ok((20, 20)));
        assert_eq!(percentage("20,70"), Ok((20, 70)));
        assert_eq!(percentage("0,70,50"), Ok((0, 70)));
        assert_eq!(percentage(",40"), Ok((0, 40)));
        assert!(percentage("20,101").unwrap_err().contains("101"));
    }

    #[test]
    fn cmdprio_bssplit_reads_both_of_fios_forms() {
        let bssplit = |v: &str| {
            draft(&[
                ("size", Some("1M")),
                ("ioengine", Some("io_uring")),
                ("cmdprio_bssplit", Some(v)),
            ])
            .map(|spec| spec.engine_tuning.cmdprio)
            .map_err(|e| e.to_string())
        };
        let split = |block_size_bytes, percent, class_level| CmdPrioSplit {
            block_size_bytes,
            percent,
            class_level,
        };
        // One list for both directions, sorted by size, 0% entries dropped.
        let both = bssplit("64k/50:4k/10:8k/0").unwrap();
        let expected = vec![split(4096, 10, None), split(65536, 50, None)];
        assert_eq!(both.read.bssplit, expected);
        assert_eq!(both.write.bssplit, expected);
        // The second form, per direction; a trim list is checked and has no use.
        let apart = bssplit("4k/30/2/7:4k/20/1/0,16k/100,4k/5").unwrap();
        assert_eq!(
            apart.read.bssplit,
            vec![split(4096, 30, Some((2, 7))), split(4096, 20, Some((1, 0)))]
        );
        assert_eq!(apart.write.bssplit, vec![split(16384, 100, None)]);
        // fio: a share above 100 is 100.
        assert_eq!(
            bssplit("4k/150").unwrap().read.bssplit,
            vec![split(4096, 100, None)]
        );
        for (bad, why) in [
            ("4k/60:4k/50", "above 100%"),
            ("4k/10/1", "SIZE/PERCENT/CLASS/LEVEL"),
            ("4k/10/4/0", "use 1 (real-time)"),
            ("4k/10/1/8", "0 (highest) to 7"),
            ("4k/0", "is needed"),
        ] {
            let error = bssplit(bad).unwrap_err();
            assert!(error.contains(why), "{bad}: {error}");
            assert!(!error.contains('\n'), "{error}");
        }
        // fio: mutually exclusive with cmdprio_percentage.
        let error = draft(&[
            ("size", Some("1M")),
            ("ioengine", Some("io_uring")),
            ("cmdprio_bssplit", Some("4k/10")),
            ("cmdprio_percentage", Some("5")),
        ])
        .unwrap_err()
        .to_string();
        assert!(error.contains("mutually exclusive"), "{error}");
        // On an engine without command priorities: a warning, as for cmdprio_percentage.
        let psync = draft(&[("size", Some("1M")), ("cmdprio_bssplit", Some("4k/10"))]).unwrap();
        assert!(
            psync.warnings.iter().any(|w| w.contains("cmdprio_bssplit")),
            "{:?}",
            psync.warnings
        );
    }

    #[test]
    fn percentage_random_takes_a_share_per_direction() {
        let shares = |rw: &str, v: &str| {
            draft(&[
                ("size", Some("1M")),
                ("rw", Some(rw)),
                ("percentage_random", Some(v)),
            ])
            .map(|spec| (spec.random_percent, spec.random_percent_write))
            .map_err(|e| e.to_string())
        };
        assert_eq!(shares("randrw", "30,70"), Ok((30, Some(70))));
        assert_eq!(shares("randrw", "40"), Ok((40, None)));
        // A trim share is checked and has no use (trim modes draw at the write share).
        assert_eq!(shares("randrw", "50,50,10"), Ok((50, None)));
        // A job in one direction keeps that direction's share.
        assert_eq!(shares("randwrite", "30,70"), Ok((70, None)));
        assert_eq!(shares("randread", "30,70"), Ok((30, None)));
        assert_eq!(shares("randrw", ",70"), Ok((100, Some(70))));
        assert!(shares("randrw", "30,170").unwrap_err().contains("170"));
        assert!(shares("randrw", "1,2,3,4")
            .unwrap_err()
            .contains("more than three"));
        // Without fio's streams (a preset draws from storlab's own), the run-time note on
        // fio's early end names the partly random share.
        let mut preset = JobDraft::with_storlab_defaults();
        for (key, value) in [
            ("size", "1M"),
            ("rw", "randrw"),
            ("percentage_random", "100,60"),
        ] {
            preset.set(key, Some(value), &Location::Flag).unwrap();
        }
        let spec = preset.finish("p", &Location::Job("p".into())).unwrap();
        assert!(
            spec.warnings
                .iter()
                .any(|w| w.contains("percentage_random=60")),
            "{:?}",
            spec.warnings
        );
    }

    #[test]
    fn fio_jobs_draw_from_fios_streams_and_presets_from_storlabs() {
        let fio = |settings: &[(&str, Option<&str>)]| {
            let mut all = settings.to_vec();
            all.extend([("size", Some("1M")), ("rw", Some("randread"))]);
            draft(&all).unwrap().fio_random
        };
        assert_eq!(
            fio(&[]),
            Some(FioRandom {
                randseed: FIO_DEFAULT_RANDSEED,
                randrepeat: true,
                randseed_given: false,
                tausworthe64: false,
                lfsr: false,
            })
        );
        let given = fio(&[("randseed", Some("12")), ("randrepeat", Some("0"))]).unwrap();
        assert_eq!(
            (given.randseed, given.randrepeat, given.randseed_given),
            (12, false, true)
        );
        assert!(
            fio(&[("random_generator", Some("tausworthe64"))])
                .unwrap()
                .tausworthe64
        );
        assert!(fio(&[("random_generator", Some("lfsr"))]).unwrap().lfsr);
        let mut preset = JobDraft::with_storlab_defaults();
        preset.set("size", Some("1M"), &Location::Flag).unwrap();
        assert_eq!(
            preset
                .clone()
                .finish("p", &Location::Job("p".into()))
                .unwrap()
                .fio_random,
            None
        );
        preset
            .set("randrepeat", Some("0"), &Location::Flag)
            .unwrap();
        let refused = preset.finish("p", &Location::Job("p".into())).unwrap_err();
        assert!(refused.to_string().contains("randrepeat"), "{refused}");
    }
}
