//! Engine registry: the engine names storlab knows and `open_engine`, which builds a real engine
//! (null, psync, io_uring) for an opened target.

use crate::engines::io_uring::{IoUringEngine, IoUringOptions};
use crate::engines::null::{NullEngine, NULL_DEFAULT_SIZE_BYTES};
use crate::engines::psync::PsyncEngine;
use crate::target::OpenTarget;
use crate::{EngineError, IoEngine};
use storlab_job::EngineKind;

/// Every engine name, in the order help text lists them.
const ENGINE_NAMES: &[&str] = &["null", "psync", "io_uring", "sim"];

/// Engine names accepted on the command line and in fio files (`ioengine=`).
pub fn engine_names() -> &'static [&'static str] {
    ENGINE_NAMES
}

/// Per-engine knobs; `Default` is what a plain run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineOptions {
    /// Size the null engine reports when it has no target.
    pub null_size_bytes: u64,
    pub io_uring: IoUringOptions,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            null_size_bytes: NULL_DEFAULT_SIZE_BYTES,
            io_uring: IoUringOptions::default(),
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
    let needs_target = |name: &str| {
        target.ok_or_else(|| {
            EngineError::Unsupported(format!(
                "the {name} engine needs a file or block device target"
            ))
        })
    };
    match kind {
        EngineKind::Null => Ok(Box::new(NullEngine::new(
            target.map_or(options.null_size_bytes, |t| t.size_bytes),
        ))),
        EngineKind::Psync => Ok(Box::new(PsyncEngine::new(needs_target("psync")?)?)),
        EngineKind::IoUring => Ok(Box::new(IoUringEngine::new(
            needs_target("io_uring")?,
            options.io_uring,
        )?)),
        EngineKind::Sim => Err(EngineError::Unsupported(
            "the sim engine is built from a stack profile by its own constructor \
             (engines::sim), not by open_engine"
                .into(),
        )),
    }
}
