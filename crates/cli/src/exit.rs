//! Failure kinds and the exit codes they map to: bad input (2) versus a failed run (1).

use crate::output::say;
use std::fmt;

/// Exit code when the run itself failed (I/O error, verify mismatch, interrupted with nothing done).
pub const EXIT_RUN_FAILED: i32 = 1;
/// Exit code for bad input: arguments, job files, targets, profiles.
pub const EXIT_BAD_INPUT: i32 = 2;

/// Why a command did not succeed; the variant decides the exit code.
#[derive(Debug)]
pub enum Failure {
    /// The user asked for something impossible or wrong: one line, exit 2.
    BadInput(String),
    /// The run started and failed: exit 1.
    RunFailed(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::BadInput(m) | Failure::RunFailed(m) => f.write_str(m),
        }
    }
}

/// Shorthand constructors used across the CLI.
pub fn bad_input(message: impl fmt::Display) -> Failure {
    Failure::BadInput(message.to_string())
}

pub fn run_failed(message: impl fmt::Display) -> Failure {
    Failure::RunFailed(message.to_string())
}

/// Print the failure as one line on stderr and return the exit code. `say!` escapes control
/// characters: a line break the message echoes from the input shows as `\n`, so the message
/// stays one line, and a terminal escape sequence is shown rather than obeyed.
pub fn report(failure: &Failure) -> i32 {
    say!("storlab: error: {}", failure.to_string().trim_end());
    match failure {
        Failure::BadInput(_) => EXIT_BAD_INPUT,
        Failure::RunFailed(_) => EXIT_RUN_FAILED,
    }
}
