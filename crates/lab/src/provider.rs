//! A session's `EngineProvider`: opens each job's target once (safety checks included), hands the
//! runner one engine per worker, and keeps simulated stacks alive between jobs so a simulated
//! drive remembers what earlier jobs did to it. It owns the session's temporary files (deleted
//! when it is dropped) and the pcap of a simulated stack that recorded one.

use crate::error::{bad_input, run_failed, LabError};
use std::collections::HashMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::PathBuf;
use storlab_engine::registry::{open_engine, EngineOptions};
use storlab_engine::target::{
    drop_cached_pages, open_target, open_target_to_fill, OpenTarget, TargetKind,
};
use storlab_engine::{EngineError, FlushKind, IoEngine};
use storlab_job::{EngineKind, JobSpec, OpenSync, Target};
use storlab_runner::{EngineProvider, RunError};

type Engine = Box<dyn IoEngine + Send>;

/// Options of a session's provider (the CLI fills them from its flags).
#[derive(Clone, Debug, Default)]
pub struct ProviderOptions {
    /// The device named with `--destructive`.
    pub destructive: Option<PathBuf>,
    /// Extra simulator profiles (`--profiles`).
    pub profiles: Option<PathBuf>,
    /// Fall back to buffered I/O (with a warning) when the filesystem refuses O_DIRECT. Only the
    /// built-in quick set does this; a user who asked for `direct=1` gets an error instead.
    pub direct_fallback: bool,
    /// Record simulated sessions as usbmon pcap.
    pub pcap: bool,
    /// Simulated stacks keep no written bytes (reads return zeros): for timing-only runs such
    /// as `storlab validate`, where a whole-drive fill would otherwise hold the drive's
    /// capacity in RAM. Drives still see every write's payload as it arrives (compression).
    pub sim_timing_only: bool,
    /// Faults injected into every simulated stack (`--faults`; `storlab_sim::fault`).
    pub sim_faults: Option<storlab_sim::FaultPlan>,
    /// The run's own arguments with its targets left out (`run --rw=read ...`), from which a
    /// real target's path verdict makes its what-if command (`storlab_engine::probe::verdict`);
    /// `None` when the front end has none to give.
    pub what_if_args: Option<Vec<String>>,
}

/// One opened target and what it was opened for.
struct CachedTarget {
    target: Target,
    /// The O_DIRECT setting jobs asked for (the opening may have fallen back to buffered).
    requested_direct: bool,
    /// Opened read-write: serves jobs that write as well as jobs that only read.
    writable: bool,
    /// `Some(plain)`: a reopening of `targets[plain]` with O_SYNC or O_DSYNC (`sync_writes`),
    /// serving only jobs with that `sync=`; `None`: an opening without either, serving only
    /// jobs without `sync=`.
    synchronous_from: Option<usize>,
    sync_writes: Option<FlushKind>,
    /// A regular file opened, not laid out, for a job that writes until its file system is
    /// full (`JobSpec::writes_until_full`): its size counts the free space of its file system,
    /// which the file does not hold, so it serves only such jobs.
    to_fill: bool,
    opened: OpenTarget,
}

/// What the provider opened, keyed so that later jobs on the same target reuse it.
pub struct Provider {
    options: ProviderOptions,
    /// Opened file and block-device targets, reused by later jobs on the same target.
    targets: Vec<CachedTarget>,
    /// Temporary files created for `Target::TempFileIn(dir)`, by directory: every job of a run
    /// shares one temporary file, as they share one target in fio.
    temp_paths: HashMap<PathBuf, PathBuf>,
    /// Simulated stacks between jobs, by stack name.
    idle_sims: HashMap<String, Engine>,
    /// Warnings found while opening targets, for the report.
    pub warnings: Vec<String>,
    /// Target descriptions by job name, for the report.
    pub target_descriptions: HashMap<String, (String, String)>,
}

impl Provider {
    /// The run's arguments without its targets, for a path verdict's what-if command.
    pub fn what_if_args(&self) -> Option<&[String]> {
        self.options.what_if_args.as_deref()
    }

    pub fn new(options: ProviderOptions) -> Self {
        Provider {
            options,
            targets: Vec::new(),
            temp_paths: HashMap::new(),
            idle_sims: HashMap::new(),
            warnings: Vec::new(),
            target_descriptions: HashMap::new(),
        }
    }

    /// The placed faults of each simulated stack's plan that never fired, as
    /// `sim:STACK: `SPEC`` lines, sorted (issue 33: a fault that silently does not happen
    /// would let a test pass that never tested anything).
    pub fn unfired_faults(&self) -> Vec<String> {
        let mut unfired: Vec<String> = self
            .idle_sims
            .iter()
            .flat_map(|(stack, engine)| {
                let faults = engine.report().sim.map_or(Vec::new(), |s| s.unfired_faults);
                faults
                    .into_iter()
                    .map(move |fault| format!("sim:{stack}: `{fault}`"))
            })
            .collect();
        unfired.sort();
        unfired
    }

    /// The pcap of every simulated stack that recorded one.
    pub fn take_pcaps(&mut self) -> Vec<Vec<u8>> {
        self.idle_sims
            .values_mut()
            .filter_map(|engine| engine.take_pcap())
            .collect()
    }

    /// The one usbmon pcap of the run (`--pcap`): an error when no stack recorded USB traffic
    /// or when several did (a capture holds one USB session).
    pub fn take_pcap(&mut self) -> Result<Vec<u8>, LabError> {
        let captures = self.take_pcaps();
        match captures.len() {
            0 => Err(run_failed("--pcap: the simulated stack recorded no USB traffic (SATA stacks have no USB session)")),
            1 => Ok(captures.into_iter().next().unwrap_or_default()),
            n => Err(bad_input(format!(
                "--pcap: the run used {n} simulated stacks; a capture holds one USB session, run them separately"
            ))),
        }
    }

    /// Open (or reuse) the target of `job` with its O_DIRECT setting and, for `sync=1` /
    /// `sync=dsync`, with O_SYNC / O_DSYNC, as fio opens it: a reopening of the plain opening
    /// through its descriptor (never through the path), cached apart from it so that jobs
    /// without `sync=` never write through a synchronous descriptor, nor the other way round.
    fn target_for(&mut self, job: &JobSpec) -> Result<usize, EngineError> {
        let plain = self.plain_target_for(job)?;
        let Some(kind) = sync_writes(job) else {
            return Ok(plain);
        };
        let reusable = self
            .targets
            .iter()
            .position(|c| c.synchronous_from == Some(plain) && c.sync_writes == Some(kind));
        if let Some(i) = reusable {
            return Ok(i);
        }
        let base = &self.targets[plain];
        let cached = CachedTarget {
            target: base.target.clone(),
            requested_direct: base.requested_direct,
            writable: base.writable,
            synchronous_from: Some(plain),
            sync_writes: Some(kind),
            to_fill: base.to_fill,
            opened: base.opened.reopen_synchronous(kind)?,
        };
        self.targets.push(cached);
        Ok(self.targets.len() - 1)
    }

    /// Open (or reuse) the target of `job` with its O_DIRECT setting, without O_SYNC/O_DSYNC.
    fn plain_target_for(&mut self, job: &JobSpec) -> Result<usize, EngineError> {
        let writes = job.read_percent < 100 || job.verify;
        let needed = job.laid_out_bytes();
        // A temporary file becomes a path after its first opening, so later jobs share it.
        let resolved = match &job.target {
            Target::TempFileIn(dir) => match self.temp_paths.get(dir) {
                Some(path) => Target::Path(path.clone()),
                None => job.target.clone(),
            },
            other => other.clone(),
        };
        let reusable = self.targets.iter().position(|c| {
            c.target == resolved
                && c.synchronous_from.is_none()
                && c.requested_direct == job.direct
                && (c.writable || !writes)
                && c.opened.size_bytes >= needed
                && c.to_fill
                    == (job.writes_until_full() && c.opened.kind == TargetKind::RegularFile)
        });
        if let Some(i) = reusable {
            return Ok(i);
        }
        let requested_direct = job.direct;
        if writes {
            if let Some(opened) = self.reopen_claimed_device(&resolved, requested_direct)? {
                self.targets.push(CachedTarget {
                    target: resolved,
                    requested_direct,
                    writable: true,
                    synchronous_from: None,
                    sync_writes: None,
                    to_fill: false,
                    opened,
                });
                return Ok(self.targets.len() - 1);
            }
        }
        // storlab's own temporary file is always opened read-write: every job of the run uses it.
        let writable = writes || matches!(resolved, Target::TempFileIn(_));
        let first_opening = if job.writes_until_full() {
            open_target_to_fill(
                &resolved,
                needed,
                job.block_size_write.max_bytes(),
                requested_direct,
                self.options.destructive.as_deref(),
            )
        } else {
            open_target(
                &resolved,
                needed,
                requested_direct,
                writable,
                self.options.destructive.as_deref(),
            )
        };
        let opened = match first_opening {
            Err(error)
                if requested_direct && self.options.direct_fallback && refused_direct(&error) =>
            {
                self.warnings.push(format!(
                    "{error}; the quick set falls back to buffered I/O here, so results include the page cache"
                ));
                open_target(
                    &resolved,
                    needed,
                    false,
                    writable,
                    self.options.destructive.as_deref(),
                )?
            }
            other => other?,
        };
        if let (Target::TempFileIn(dir), Some(temp)) = (&resolved, opened.temp.as_ref()) {
            self.temp_paths
                .insert(dir.clone(), temp.path().to_path_buf());
        }
        self.targets.push(CachedTarget {
            target: resolved,
            requested_direct,
            writable,
            synchronous_from: None,
            sync_writes: None,
            to_fill: job.writes_until_full() && opened.kind == TargetKind::RegularFile,
            opened,
        });
        Ok(self.targets.len() - 1)
    }
}

impl Provider {
    /// A block device this run already opened for writing is claimed (O_EXCL) by that opening
    /// until the run ends, so opening it again by path would be refused as busy: a job that
    /// writes it with another O_DIRECT setting, or names it by another path, gets a reopening
    /// of the checked descriptor instead. `None` when `target` is no such device.
    fn reopen_claimed_device(
        &self,
        target: &Target,
        direct: bool,
    ) -> Result<Option<OpenTarget>, EngineError> {
        let Target::Path(path) = target else {
            return Ok(None);
        };
        // The path only picks which of our descriptors to reopen; the device is the one that
        // descriptor was checked on, whatever the path points to later.
        let Ok(metadata) = std::fs::metadata(path) else {
            return Ok(None);
        };
        if !metadata.file_type().is_block_device() {
            return Ok(None);
        }
        let device = Some(storlab_engine::safety::device_number(metadata.rdev()));
        self.targets
            .iter()
            .find(|c| {
                c.writable
                    && c.synchronous_from.is_none()
                    && c.opened.device.is_some()
                    && c.opened.device == device
            })
            .map(|c| c.opened.reopen_device(direct))
            .transpose()
    }
}

/// What fio's `sync=` asks of the target's descriptor: O_SYNC (`FlushKind::All`), O_DSYNC
/// (`FlushKind::Data`) or neither.
fn sync_writes(job: &JobSpec) -> Option<FlushKind> {
    match job.sync.open_sync {
        OpenSync::None => None,
        OpenSync::Sync => Some(FlushKind::All),
        OpenSync::Dsync => Some(FlushKind::Data),
    }
}

/// Whether opening failed only because the filesystem refuses O_DIRECT (tmpfs, some FUSE).
fn refused_direct(error: &EngineError) -> bool {
    error.to_string().contains("O_DIRECT")
}

fn describe(target: &OpenTarget) -> (String, String) {
    let kind = match target.kind {
        storlab_engine::target::TargetKind::RegularFile => "file",
        storlab_engine::target::TargetKind::BlockDevice => "block",
    };
    let description = if target.temp.is_some() {
        format!("temporary file {}", target.path.display())
    } else {
        target.path.display().to_string()
    };
    (description, kind.to_string())
}

impl EngineProvider for Provider {
    fn open(&mut self, job: &JobSpec) -> Result<Vec<Engine>, RunError> {
        let engine_options = EngineOptions::for_job(job);
        match job.engine {
            EngineKind::Sim => {
                let Target::Sim(stack) = &job.target else {
                    return Err(RunError::Plan {
                        job: job.name.clone(),
                        reason: "the sim engine needs a target sim:STACK (see `storlab stacks`)"
                            .into(),
                    });
                };
                let engine = match self.idle_sims.remove(stack) {
                    Some(engine) => engine,
                    None => crate::stacks::open_sim(
                        stack,
                        self.options.profiles.as_deref(),
                        job.seed,
                        self.options.pcap,
                        self.options.sim_timing_only,
                        self.options.sim_faults.as_ref(),
                    )?,
                };
                self.target_descriptions
                    .insert(job.name.clone(), (format!("sim:{stack}"), "sim".into()));
                Ok(vec![engine])
            }
            EngineKind::Null if job.target == Target::None => {
                self.target_descriptions
                    .insert(job.name.clone(), ("none".into(), "none".into()));
                (0..job.numjobs)
                    .map(|_| {
                        open_engine(EngineKind::Null, None, &engine_options)
                            .map_err(RunError::Engine)
                    })
                    .collect()
            }
            kind => {
                let index = self.target_for(job)?;
                let target = &self.targets[index].opened;
                if job.invalidate && !job.direct {
                    drop_cached_pages(target)?;
                }
                // A synchronous reopening is described as the opening it came from (which
                // knows whether the file is storlab's temporary one).
                let described = self.targets[index].synchronous_from.unwrap_or(index);
                self.target_descriptions
                    .insert(job.name.clone(), describe(&self.targets[described].opened));
                (0..job.numjobs)
                    .map(|_| {
                        open_engine(kind, Some(target), &engine_options).map_err(RunError::Engine)
                    })
                    .collect()
            }
        }
    }

    fn release(&mut self, job: &JobSpec, mut engines: Vec<Engine>) {
        if let (Target::Sim(stack), Some(engine)) = (&job.target, engines.pop()) {
            self.idle_sims.insert(stack.clone(), engine);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_engine::target::writes_synchronously;

    fn write_job(path: &std::path::Path, sync: OpenSync) -> JobSpec {
        let mut job = JobSpec::new("w", EngineKind::Psync, Target::Path(path.to_path_buf()));
        job.read_percent = 0;
        job.size_bytes = Some(1 << 20);
        job.sync.open_sync = sync;
        job
    }

    /// A `sync=` job's target is a reopening with O_SYNC / O_DSYNC of the plain opening, each
    /// cached under its own mode: a job without `sync=` never gets a synchronous descriptor,
    /// and the engines of a `sync=` job accept synchronous writes because theirs is one.
    #[test]
    fn sync_jobs_get_their_own_synchronous_opening_and_plain_jobs_never_share_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        let mut provider = Provider::new(ProviderOptions::default());
        let synced = provider
            .target_for(&write_job(&path, OpenSync::Sync))
            .unwrap();
        let plain = provider
            .target_for(&write_job(&path, OpenSync::None))
            .unwrap();
        let dsynced = provider
            .target_for(&write_job(&path, OpenSync::Dsync))
            .unwrap();
        let carries =
            |i: usize, kind| writes_synchronously(&provider.targets[i].opened.file, kind).unwrap();
        assert!(carries(synced, FlushKind::All));
        assert!(carries(dsynced, FlushKind::Data) && !carries(dsynced, FlushKind::All));
        assert!(!carries(plain, FlushKind::Data));
        assert_eq!(provider.targets[synced].synchronous_from, Some(plain));
        assert_eq!(
            provider
                .target_for(&write_job(&path, OpenSync::Sync))
                .unwrap(),
            synced
        );
        assert_eq!(
            provider
                .target_for(&write_job(&path, OpenSync::None))
                .unwrap(),
            plain
        );
        assert_eq!(provider.targets.len(), 3);

        let mut engines = provider.open(&write_job(&path, OpenSync::Sync)).unwrap();
        engines[0].set_sync_writes(Some(FlushKind::All)).unwrap();
        let mut engines = provider.open(&write_job(&path, OpenSync::None)).unwrap();
        assert!(engines[0].set_sync_writes(Some(FlushKind::Data)).is_err());

        // storlab's temporary file keeps its description under a synchronous job.
        let mut temp_job = write_job(&path, OpenSync::Dsync);
        temp_job.target = Target::TempFileIn(dir.path().to_path_buf());
        provider.open(&temp_job).unwrap();
        let (description, kind) = &provider.target_descriptions["w"];
        assert!(description.starts_with("temporary file"), "{description}");
        assert_eq!(kind, "file");
    }
}
