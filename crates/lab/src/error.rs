//! The lab's one error type: what went wrong, sorted by whose it is. Bad input (the user asked
//! for something impossible: a job file, a target, a profile) or a failed run (the run started
//! and an I/O error, a verify mismatch or an interruption stopped it). A front end maps the two
//! kinds to its own outcome (the CLI: exit 2 and exit 1).

use storlab_runner::RunError;

/// Why a lab call did not succeed. The message is one line, ready to show.
#[derive(Clone, Debug, thiserror::Error)]
pub enum LabError {
    /// The user asked for something impossible or wrong.
    #[error("{0}")]
    BadInput(String),
    /// The run started and failed.
    #[error("{0}")]
    RunFailed(String),
}

impl LabError {
    /// The same kind of error with another message (to name the entry or target it concerns).
    pub fn with_message(self, message: impl FnOnce(String) -> String) -> LabError {
        match self {
            LabError::BadInput(m) => LabError::BadInput(message(m)),
            LabError::RunFailed(m) => LabError::RunFailed(message(m)),
        }
    }
}

/// Bad input with `message`.
pub fn bad_input(message: impl std::fmt::Display) -> LabError {
    LabError::BadInput(message.to_string())
}

/// A failed run with `message`.
pub fn run_failed(message: impl std::fmt::Display) -> LabError {
    LabError::RunFailed(message.to_string())
}

/// Bad input found while opening targets or planning; anything that failed mid-run is a failed
/// run.
pub fn classify(error: RunError) -> LabError {
    match error {
        RunError::Engine(e) => match e {
            storlab_engine::EngineError::Io(_)
            | storlab_engine::EngineError::Interrupted { .. } => run_failed(e),
            other => bad_input(other),
        },
        RunError::Plan { .. } => bad_input(error),
        other => run_failed(other),
    }
}

impl From<RunError> for LabError {
    fn from(error: RunError) -> Self {
        classify(error)
    }
}
