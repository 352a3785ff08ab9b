//! Engine registry: the engine names storlab knows and `open_engine`, which builds a real engine
//! (null, psync, sync, pvsync2, libaio, posixaio, mmap, io_uring) for an opened target.
//!
//! The names themselves are one list, `storlab_job::EngineKind::ALL` (the job crate validates
//! `ioengine=` and this crate depends on it, so the list lives there and is re-exported here).

use crate::engines::io_uring::{IoUringEngine, IoUringOptions};
use crate::engines::libaio::{LibaioEngine, LibaioOptions};
use crate::engines::mmap::MmapEngine;
use crate::engines::null::{NullEngine, NULL_DEFAULT_SIZE_BYTES};
use crate::engines::posixaio::PosixAioEngine;
use crate::engines::psync::PsyncEngine;
use crate::engines::pvsync2::{Pvsync2Engine, Pvsync2Options};
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
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            null_size_bytes: NULL_DEFAULT_SIZE_BYTES,
            io_uring: IoUringOptions::default(),
            libaio: LibaioOptions::default(),
            pvsync2: Pvsync2Options::default(),
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
            ..defaults
        }
    }
}

/// Build one engine of `kind` on `target` (one call per worker: each engine gets its own
/// descriptor). `null` needs no target; with one, it reports that target's size.
///
/// Extension point: the simulator engine is built by its own constructor in `engines::sim`
/// (it needs a stack profile, not a file); the runner/CLI call that for `EngineKind::Sim`.
pub fn open_engine(
    kind: EngineKind,
    target: Option<&OpenTarget>,
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
        EngineKind::Sim => Err(EngineError::Unsupported(
            "the sim engine is built from a stack profile by its own constructor \
             (engines::sim), not by open_engine"
                .into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_names_are_the_job_crates_list() {
        let from_kinds: Vec<&str> = EngineKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(engine_names(), from_kinds.as_slice());
    }
}
