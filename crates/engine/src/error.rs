//! Typed errors of the engine crate.

use std::path::PathBuf;

/// Why an engine could not open its target or carry out I/O.
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
}
