//! Everything storlab writes to stdout, or to an output file in its place, goes through here.
//!
//! A reader that goes away early (`storlab stacks | head -1`) closes the pipe; that is the
//! reader saying it has enough, not a failure: the rest of the output is dropped without a
//! message and the command ends as it would have (exit 0 unless something else failed), like
//! ripgrep does. `println!` would panic instead. Any other write error (a full disk behind a
//! redirect) is a failed command, exit 1.

use crate::exit::{bad_input, run_failed, Failure};
use std::io::{ErrorKind, Write};
use std::path::Path;
use storlab_engine::output_file::{self, OutputError};

/// Writes `text` to stdout (locked, flushed). A closed pipe is success.
pub(crate) fn print(text: &str) -> Result<(), Failure> {
    write_all(&mut std::io::stdout().lock(), text)
}

/// Writes `text` to stdout, or whole to `path` (see [`write_file`]). `option` names the flag in
/// error messages.
pub(crate) fn print_or_write(path: Option<&Path>, text: &str, option: &str) -> Result<(), Failure> {
    match path {
        None => print(text),
        Some(path) => write_file(path, text.as_bytes(), option),
    }
}

/// The files an output may not replace: the results database (and its journals), a job file,
/// a target. Each is (what it is, for the message; its path).
pub(crate) use storlab_engine::output_file::Protected;

/// The guard's refusal is bad input (exit 2), a failed write a failed command (exit 1).
fn failure(error: OutputError) -> Failure {
    match error {
        OutputError::Refused(message) => bad_input(message),
        OutputError::Failed(message) => run_failed(message),
    }
}

/// Refuses, before any work, output paths storlab must not write
/// (`storlab_engine::output_file::check_outputs`: only a regular file or nothing, never a
/// `protected` file or another output's). `outputs` are (option, path).
pub(crate) fn check_output_paths(
    outputs: &[(&str, &Path)],
    protected: &[Protected<'_>],
) -> Result<(), Failure> {
    output_file::check_outputs(outputs, protected).map_err(failure)
}

/// The results database at `db` as protected files: the database and its journals.
pub(crate) fn database_files(db: &Path) -> Vec<(&'static str, std::path::PathBuf)> {
    output_file::database_files(db)
}

/// Writes `bytes` whole to `path` through the one guarded open
/// (`storlab_engine::output_file::write_whole`). `option` names the flag in error messages.
pub(crate) fn write_file(path: &Path, bytes: &[u8], option: &str) -> Result<(), Failure> {
    output_file::write_whole(option, path, bytes).map_err(failure)
}

/// Appends `bytes` to the regular file at `path` (or makes it), whole, for fio's logs with
/// `per_job_logs=0`, which fio appends to (`storlab_engine::output_file::append_whole`).
pub(crate) fn append_file(path: &Path, bytes: &[u8], option: &str) -> Result<(), Failure> {
    output_file::append_whole(option, path, bytes).map_err(failure)
}

fn write_all(out: &mut impl Write, text: &str) -> Result<(), Failure> {
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(run_failed(format!("stdout: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    /// Accepts `room` bytes, then fails every write with `kind`.
    struct Failing {
        room: usize,
        kind: ErrorKind,
        written: Vec<u8>,
    }

    impl Write for Failing {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::from(self.kind));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            self.written.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_ends_the_output_quietly() {
        let mut out = Failing {
            room: 3,
            kind: ErrorKind::BrokenPipe,
            written: Vec::new(),
        };
        assert!(write_all(&mut out, "one\ntwo\n").is_ok());
        assert_eq!(out.written, b"one");
    }

    #[test]
    fn other_write_errors_fail_the_command() {
        let mut out = Failing {
            room: 0,
            kind: ErrorKind::StorageFull,
            written: Vec::new(),
        };
        match write_all(&mut out, "text") {
            Err(Failure::RunFailed(message)) => assert!(message.starts_with("stdout: ")),
            other => panic!("expected a failed run, got {other:?}"),
        }
    }
}
