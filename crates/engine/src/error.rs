//! Typed errors of the engine crate.

use std::path::PathBuf;

/// Why an engine could not open its target or carry out I/O.
///
/// Errors of single I/Os are not `EngineError`s: they travel as `errno` in
/// [`crate::IoCompletion::result`] so that a run can count them and go on.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    Setup(String),
    /// The target cannot be used as asked (a directory, O_DIRECT refused, no size given...).
    #[error("{path}: {message}")]
    Target { path: PathBuf, message: String },
    /// The target is smaller than the job's regions need.
    #[error(
        "{path}: target holds {size_bytes} bytes but the job needs {needed_bytes} bytes; \
         shrink the job's size/offset or use a larger target"
    )]
    TargetTooSmall {
        path: PathBuf,
        size_bytes: u64,
        needed_bytes: u64,
    },
    /// Writing or trimming this block device could destroy data (see `safety`).
    #[error(
        "refusing to write to {path}: {reason}; if you really mean to overwrite it, \
         name exactly this device with --destructive {path}"
    )]
    Refused { path: PathBuf, reason: String },
    /// A Ctrl-C or SIGTERM stopped the layout of the target (what it had written is gone).
    #[error("{path}: interrupted while laying it out; the bytes it had written were removed")]
    Interrupted { path: PathBuf },
    /// The caller broke the engine contract (slot out of range or in flight, request larger
    /// than its slot, reap asking for more than is outstanding).
    #[error("invalid engine request: {0}")]
    InvalidRequest(String),
}
