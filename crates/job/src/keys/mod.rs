//! The one key table shared by the fio job-file reader and the fio-style flags, and the
//! `JobDraft` builder the keys are applied to.
//!
//! A key is applied as text (`key=value`) to a draft that remembers what the user set and where
//! (file line or flag). `JobDraft::finish` fills the rest from `JobSpec::new`, resolves engine and
//! target (or takes the target the command line imposes, `JobDraft::override_target`), validates,
//! and points any validation error back at the line or flag that set the key.
//!
//! The keys live in files by fio's option groups (as fio's HOWTO groups them): each file holds
//! its group's rows of the table (`GROUP_KEYS`), the functions that read their values, the part
//! of `JobDraft::build` that turns them into the `JobSpec`, the checks made when the job is
//! finished, and their tests. [`KEYS`] gathers the groups' rows into one table.

mod block_size;
mod buffers;
mod build;
mod depth;
mod description;
mod engine;
mod errors;
mod io_size;
mod io_type;
mod latency;
mod logs;
mod random;
mod rate;
mod replay;
mod report;
mod steady_state;
mod sync;
mod table;
mod target;
mod threads;
mod time;
mod values;
mod verify;

pub(crate) use block_size::note_fio_differences;
pub(crate) use engine::{is_out_of_scope_engine, OUT_OF_SCOPE_HINT};
pub use table::{find_key, KEYS};
pub use target::SIM_TARGET_PREFIX;

use crate::error::{JobError, Location};
use crate::model::{
    BlockSizeSpec, ContinueOnError, EngineKind, EngineTuning, FadviseHint, JobSpec,
    RandomDistribution, RwModifier, Target,
};
use crate::paths::KeyPath;
use crate::size::ValueError;
use crate::validate::validate;
use engine::ForeignEngine;
use io_size::Extent;
use io_type::RwMode;
use random::FioGenerator;
use std::path::PathBuf;
use table::suggest_key;

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
#[derive(Clone, Copy)]
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
    /// fio's `rw_sequencer`: true for `identical`.
    rw_sequencer_identical: Option<bool>,
    /// fio's `allrandrepeat`.
    allrandrepeat: Option<bool>,
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
    /// fio's `bs_is_seq_rand` and `bs_unaligned`.
    bs_is_seq_rand: Option<bool>,
    bs_unaligned: Option<bool>,
    iodepth: Option<u32>,
    numjobs: Option<u32>,
    offset: Option<Extent>,
    offset_increment: Option<Extent>,
    /// fio's `offset_align` (0: not given).
    offset_align_bytes: Option<u64>,
    size: Option<Extent>,
    number_ios: Option<u64>,
    io_size_bytes: Option<u64>,
    loops: Option<u32>,
    runtime_ns: Option<u64>,
    time_based: Option<bool>,
    ramp_time_ns: Option<u64>,
    /// The rate and think time keys as set.
    rate: rate::RateDraft,
    /// The buffer keys as set: what the writes hold.
    buffers: buffers::BuffersDraft,
    seed: Option<u64>,
    /// fio's `randrepeat`.
    randrepeat: Option<bool>,
    /// fio's `random_generator`.
    random_generator: Option<FioGenerator>,
    /// The verification keys as set (`verify` and its family).
    verify: verify::VerifyDraft,
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
    /// The log keys as set.
    logs: logs::LogsDraft,
    /// fio's reporting keys as set.
    report: report::ReportDraft,
    /// An `ioengine` storlab has no engine of that name for (`libaio`): refused when the job is
    /// finished, unless a target imposed from outside decides the engine.
    foreign_engine: Option<ForeignEngine>,
    /// A target imposed from outside the job (the command line's `--target`), replacing what
    /// `filename`, `directory` and `ioengine` would give.
    target_override: Option<Target>,
    /// An unset `rw` means storlab's own default, random read (presets, which always meant it),
    /// instead of fio's `read` (job files and fio-style flags).
    storlab_rw_default: bool,
    /// The I/O replay keys as set (`write_iolog`, `read_iolog`, `replay_*`).
    replay: replay::ReplayDraft,
    /// fio's engine options, applied over the defaults (all off).
    engine_tuning: EngineTuning,
    /// The sync keys as set.
    sync: sync::SyncDraft,
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
    /// The zone keys as set (`zonemode`, `zonesize`, `zonerange`, `zoneskip`).
    zones: target::ZonesDraft,
    allow_file_create: Option<bool>,
    /// The steady state keys as set.
    steady_state: steady_state::SteadyStateDraft,
    unlink: Option<bool>,
    continue_on_error: Option<ContinueOnError>,
    fill_device: Option<bool>,
    /// fio's `filename_format`, used when no `filename` is given.
    filename_format: Option<String>,
    /// fio's `nrfiles` as given (`check_nrfiles`).
    nrfiles: Option<u64>,
    /// fio's `file_service_type` is zipf, pareto or normal (`JobSpec::fio_file_service_resets`).
    file_service_resets: bool,
    /// fio's `filesize`: the file's size, where the job's region ends (`build_filesize_region`).
    filesize_bytes: Option<u64>,
    /// fio's `kb_base` as given: the units of the sizes read after it (`size::with_fio_kb_base`).
    kb_base: Option<u64>,
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
        let kb_base = self.kb_base.unwrap_or(crate::size::FIO_KB_BASE_DEFAULT);
        let applied = crate::size::with_fio_kb_base(kb_base, || (def.apply)(self, text));
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

    /// Where `field` was last set, as an error about it names it: the line or flag, the key as
    /// written and its value; `job_location` and the field's own name if it was never set.
    fn setter(&self, field: &str, job_location: &Location) -> (Location, String, Option<String>) {
        let setter = self.provenance.iter().rev().find(|p| p.field == field);
        (
            setter.map_or_else(|| job_location.clone(), |p| p.location.clone()),
            setter.map_or(field.to_string(), |p| p.key_as_written.clone()),
            setter.and_then(|p| p.value.clone()),
        )
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

    /// Builds and validates the job. `default_name` is used unless `name=` was set; errors about
    /// settings the user never made, or about the job as a whole, are reported at `job_location`.
    pub fn finish(&self, default_name: &str, job_location: &Location) -> Result<JobSpec, JobError> {
        if let Some(foreign) = &self.foreign_engine {
            // `--target` stands in for an engine storlab lacks under another name (`vsync`,
            // `windowsaio`), not for one whose job is about something else: an RDMA or HTTP
            // job's I/O sent to a drive would measure nothing the file asked for.
            if foreign.out_of_scope || self.target_override.is_none() {
                return Err(self.engine_refusal(foreign, job_location));
            }
        }
        self.check_zones(job_location)?;
        self.check_nrfiles(job_location)?;
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
        self.check_filesize_region(&spec, job_location)?;
        validate(&mut spec).map_err(|e| self.relocate(e, job_location))?;
        self.check_mmap_pages(&spec, job_location)?;
        self.check_mmap_region(&mut spec, job_location)?;
        self.check_null_queue_pacing(&spec, job_location)?;
        self.check_batched_sync_log(&spec, job_location)?;
        self.check_submit_offload(&spec, job_location)?;
        self.check_engine_options(&spec, job_location)?;
        self.check_unlink(&spec, job_location)?;
        self.check_spin_overrun(&spec, job_location)?;
        self.check_poisson_syncs(&spec, job_location)?;
        self.check_dedupe_generator(&spec, job_location)?;
        self.fit_experimental_verify(&mut spec, job_location)?;
        self.check_time_based_read_back(&spec, job_location)?;
        self.check_null_async_checks(&spec, job_location)?;
        self.check_clones_verify_shared_bytes(&spec, job_location)?;
        Ok(spec)
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

/// A job made of `settings` applied as flags, finished (the tests' common start).
#[cfg(test)]
fn draft(settings: &[(&str, Option<&str>)]) -> Result<JobSpec, JobError> {
    let mut d = JobDraft::new();
    for (key, value) in settings {
        d.set(key, *value, &Location::Flag)?;
    }
    d.finish("job", &Location::Job("job".into()))
}

#[cfg(test)]
mod tests {
    use super::draft;
    use super::random::FIO_DEFAULT_RANDSEED;
    use crate::model::{EngineKind, FioRandom, JobSpec, Target, DEFAULT_SEED};

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
            allrandrepeat: false,
            rand_mode: false,
        });
        assert_eq!(spec, expected);
        assert_eq!(spec.seed, DEFAULT_SEED);
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
            "job [job]: size: ioengine=null has no file to take a size from: give size= (fio 3.33 \
             refuses the job too: \"you need to specify size=\")"
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
}
