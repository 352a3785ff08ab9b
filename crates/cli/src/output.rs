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

/// Writes `bytes` whole to `path` through a temporary file and a rename, so an interrupted
/// write never leaves half a file. `option` names the flag in error messages.
pub(crate) fn write_file(path: &Path, bytes: &[u8], option: &str) -> Result<(), Failure> {
    if path.is_dir() {
        return Err(bad_input(format!(
            "{option} {}: is a directory",
            path.display()
        )));
    }
    let tmp = path.with_extension(format!("storlab-partial-{}", std::process::id()));
    std::fs::write(&tmp, bytes)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            run_failed(format!("{option} {}: {e}", path.display()))
        })
}

/// `eprintln!` that cannot panic: a diagnostic line for stderr. When stderr is gone (its reader
/// closed), the line is lost and the command goes on; `eprintln!` would panic instead. Control
/// characters (a line break or terminal escape from a job name or path) are escaped, so the
/// line stays one line and cannot drive the terminal.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let line = format!($($arg)*);
        let _ = writeln!(std::io::stderr(), "{}", storlab_report::escape_control(&line));
    }};
}
pub(crate) use say;

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
