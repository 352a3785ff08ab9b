//! Engine registry: the engine names storlab knows and `open_engine`, which builds every engine:
//! a real one (null, psync, sync, pvsync, pvsync2, libaio, posixaio, mmap, io_uring) for an opened
//! target, and the simulator for a simulated stack ([`EngineTarget`]).
//!
//! The names themselves are one list, `storlab_job::EngineKind::ALL` (the job crate validates
//! `ioengine=` and this crate depends on it, so the list lives there and is re-exported here).

use crate::engines::io_uring::{IoUringEngine, IoUringOptions};
use crate::engines::libaio::{LibaioEngine, LibaioOptions};
use crate::engines::mmap::MmapEngine;
use crate::engines::null::{NullEngine, NULL_DEFAULT_SIZE_BYTES};
use crate::engines::posixaio::PosixAioEngine;
use crate::engines::psync::PsyncEngine;
use crate::engines::pvsync::PvsyncEngine;
use crate::engines::pvsync2::{Pvsync2Engine, Pvsync2Options};
use crate::engines::sim::{SimEngine, SimOpening};
use crate::engines::sync::SyncEngine;
use crate::target::OpenTarget;
use crate::{EngineError, IoEngine};
use storlab_job::JobSpec;
pub use storlab_job::{EngineKind, OUT_OF_SCOPE_ENGINES};

/// Every engine name, in the order help text lists them ([`EngineKind::ALL`]).
const ENGINE_NAMES: [&str; EngineKind::ALL.len()] = {
    let mut names = [""; EngineKind::ALL.len()];
    let mut index = 0;
    while index < names.len() {
        names[index] = EngineKind::ALL[index].as_str();
        index += 1;
    }
    names
};

/// Engine names accepted on the command line and in fio files (`ioengine=`).
pub fn engine_names() -> &'static [&'static str] {
    &ENGINE_NAMES
}

/// Per-engine knobs; `Default` is what a plain run uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineOptions {
    /// Size the null engine reports when it has no target.
    pub null_size_bytes: u64,
    pub io_uring: IoUringOptions,
    pub libaio: LibaioOptions,
    pub pvsync2: Pvsync2Options,
    /// A fio job's trims of a regular file fail as fio's do (`IoEngine::trim_files_as_fio`).
    pub fio_trims: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            null_size_bytes: NULL_DEFAULT_SIZE_BYTES,
            io_uring: IoUringOptions::default(),
            libaio: LibaioOptions::default(),
            pvsync2: Pvsync2Options::default(),
            fio_trims: false,
        }
    }
}

impl EngineOptions {
    /// The knobs `job`'s engine options (`hipri`, `fixedbufs`, `userspace_reap`, ...) ask for.
    pub fn for_job(job: &JobSpec) -> Self {
        let tuning = &job.engine_tuning;
        let defaults = EngineOptions::default();
        EngineOptions {
            io_uring: IoUringOptions {
                register_buffers: tuning
                    .fixedbufs
                    .unwrap_or(defaults.io_uring.register_buffers),
                require_registered_buffers: tuning.fixedbufs == Some(true),
                register_file: tuning
                    .registerfiles
                    .unwrap_or(defaults.io_uring.register_file),
                require_registered_file: tuning.registerfiles == Some(true),
                iopoll: tuning.hipri,
                sqpoll: tuning.sqthread_poll,
                vectored: tuning.vectored,
                nowait: tuning.nowait,
                default_ioprio: job.io_priority.map_or(0, |p| p.value()),
                sqpoll_cpu: tuning.sqthread_poll_cpu,
                ..defaults.io_uring
            },
            libaio: LibaioOptions {
                userspace_reap: tuning.userspace_reap,
            },
            pvsync2: Pvsync2Options {
                hipri: tuning.hipri,
                nowait: tuning.nowait,
            },
            fio_trims: job.fio_random.is_some(),
            ..defaults
        }
    }
}

/// What an engine runs against.
#[derive(Clone, Copy, Debug)]
pub enum EngineTarget<'a> {
    /// Nothing: only the null engine runs so, at its own size.
    None,
    /// A file or block device, opened and checked (`target::open_target`).
    Opened(&'a OpenTarget),
    /// A simulated stack, which the sim engine opens from its profiles.
    Sim(&'a SimOpening),
}

impl<'a> From<Option<&'a OpenTarget>> for EngineTarget<'a> {
    fn from(target: Option<&'a OpenTarget>) -> Self {
        target.map_or(EngineTarget::None, EngineTarget::Opened)
    }
}

impl<'a> From<&'a SimOpening> for EngineTarget<'a> {
    fn from(opening: &'a SimOpening) -> Self {
        EngineTarget::Sim(opening)
    }
}

/// Build one engine of `kind` on `target` (one call per worker: each engine gets its own
/// descriptor). `null` needs no target; with an opened one, it reports that target's size.
/// `sim` needs a simulated stack, every other engine an opened file or block device.
pub fn open_engine<'a>(
    kind: EngineKind,
    target: impl Into<EngineTarget<'a>>,
    options: &EngineOptions,
) -> Result<Box<dyn IoEngine + Send>, EngineError> {
    let (target, sim) = match target.into() {
        EngineTarget::None => (None, None),
        EngineTarget::Opened(opened) => (Some(opened), None),
        EngineTarget::Sim(opening) => (None, Some(opening)),
    };
    let mut engine = open_engine_of(kind, target, sim, options)?;
    if options.fio_trims {
        engine.trim_files_as_fio();
    }
    Ok(engine)
}

fn open_engine_of(
    kind: EngineKind,
    target: Option<&OpenTarget>,
    sim: Option<&SimOpening>,
    options: &EngineOptions,
) -> Result<Box<dyn IoEngine + Send>, EngineError> {
    let needs_target = || {
        target.ok_or_else(|| {
            EngineError::Unsupported(format!(
                "the {} engine needs a file or block device target",
                kind.as_str()
            ))
        })
    };
    match kind {
        EngineKind::Null => Ok(Box::new(NullEngine::new(
            target.map_or(options.null_size_bytes, |t| t.size_bytes),
        ))),
        EngineKind::Psync => Ok(Box::new(PsyncEngine::new(needs_target()?)?)),
        EngineKind::Sync => Ok(Box::new(SyncEngine::new(needs_target()?)?)),
        EngineKind::Pvsync => Ok(Box::new(PvsyncEngine::new(needs_target()?)?)),
        EngineKind::Pvsync2 => Ok(Box::new(Pvsync2Engine::new(
            needs_target()?,
            options.pvsync2,
        )?)),
        EngineKind::Libaio => Ok(Box::new(LibaioEngine::new(
            needs_target()?,
            options.libaio.clone(),
        )?)),
        EngineKind::Posixaio => Ok(Box::new(PosixAioEngine::new(needs_target()?)?)),
        EngineKind::Mmap => Ok(Box::new(MmapEngine::new(needs_target()?)?)),
        EngineKind::IoUring => Ok(Box::new(IoUringEngine::new(
            needs_target()?,
            options.io_uring.clone(),
        )?)),
        EngineKind::Sim => match sim {
            Some(opening) => Ok(Box::new(SimEngine::open_as(opening)?)),
            None => Err(EngineError::Unsupported(
                "the sim engine needs a simulated stack target (sim:STACK)".into(),
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The simulator opens through the registry like every engine: on a simulated stack, set up
    /// as the opening asks, and not without one; a real engine refuses a simulated stack.
    #[test]
    fn the_registry_opens_the_simulator_on_a_simulated_stack() {
        let opening = SimOpening {
            stack: "usb3-uas-ssd".into(),
            profiles_dir: std::path::PathBuf::from("/nonexistent"),
            seed: 7,
            pcap: true,
            timing_only: false,
            faults: None,
        };
        let options = EngineOptions::default();
        let mut engine = open_engine(EngineKind::Sim, &opening, &options).unwrap();
        assert_eq!(engine.name(), "sim");
        assert!(engine.target_size_bytes() > 0);
        assert!(
            engine.take_pcap().is_some(),
            "the opening asked for a capture"
        );
        assert!(open_engine(EngineKind::Sim, None, &options).is_err());
        assert!(open_engine(EngineKind::Psync, &opening, &options).is_err());
        let unknown = SimOpening {
            stack: "no-such-stack".into(),
            ..opening
        };
        let refused = open_engine(EngineKind::Sim, &unknown, &options)
            .err()
            .unwrap();
        assert!(refused.to_string().contains("no-such-stack"), "{refused}");
    }

    #[test]
    fn engine_names_are_the_job_crates_list() {
        let from_kinds: Vec<&str> = EngineKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(engine_names(), from_kinds.as_slice());
    }
}
