//! Failure kinds and the exit codes they map to: bad input (2) versus a failed run (1).

use crate::say::say;

/// Exit code when the run itself failed (I/O error, verify mismatch, interrupted with nothing done).
pub const EXIT_RUN_FAILED: i32 = 1;
/// Exit code for bad input: arguments, job files, targets, profiles.
pub const EXIT_BAD_INPUT: i32 = 2;

/// Why a command did not succeed; the variant decides the exit code. The lab's error is the
/// CLI's: its two kinds are exactly the two failing exit codes.
pub use storlab_lab::LabError as Failure;
/// Shorthand constructors used across the CLI.
pub use storlab_lab::{bad_input, run_failed};

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
