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

/// The files an output may not replace: the results database (and its journals), a job file,
/// a target. Each is (what it is, for the message; its path).
pub(crate) type Protected<'a> = (&'a str, &'a Path);

/// Refuses, before any work, output paths storlab must not write: one that exists and is not a
/// regular file (a device, FIFO or socket would become a regular file: as root, `--output
/// /dev/null` would replace /dev/null), a symbolic link (the link would be replaced, not what it
/// points to), a missing directory, a `protected` file, or two outputs naming the same file
/// (the second would replace the first). `outputs` are (option, path).
pub(crate) fn check_output_paths(
    outputs: &[(&str, &Path)],
    protected: &[Protected<'_>],
) -> Result<(), Failure> {
    for (i, &(option, path)) in outputs.iter().enumerate() {
        check_output_path(option, path)?;
        let Some(identity) = FileIdentity::of(path) else {
            continue;
        };
        for &(what, other) in protected {
            if FileIdentity::of(other).as_ref() == Some(&identity) {
                return Err(bad_input(format!(
                    "{option} {}: is {what} {}; writing the output there would replace it",
                    path.display(),
                    other.display()
                )));
            }
        }
        for &(earlier_option, earlier) in &outputs[..i] {
            if FileIdentity::of(earlier).as_ref() == Some(&identity) {
                return Err(bad_input(format!(
                    "{option} {}: is also {earlier_option}; give each output its own file",
                    path.display()
                )));
            }
        }
    }
    Ok(())
}

/// The results database at `db` as protected files: the database and the journals SQLite keeps
/// beside it (named by appending these suffixes, sqlite.org/tempfiles.html).
pub(crate) fn database_files(db: &Path) -> Vec<(&'static str, std::path::PathBuf)> {
    const SQLITE_SIDE_FILES: [&str; 3] = ["-journal", "-wal", "-shm"];
    let mut files = vec![("the results database", db.to_path_buf())];
    for suffix in SQLITE_SIDE_FILES {
        let mut side = db.as_os_str().to_os_string();
        side.push(suffix);
        files.push(("the results database's journal", side.into()));
    }
    files
}

/// Whether `path` may be written as an output: a regular file or nothing yet, in a directory
/// that exists. `option` names the flag in the message.
pub(crate) fn check_output_path(option: &str, path: &Path) -> Result<(), Failure> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => refuse_unless_regular(option, path, &meta),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let parent = parent_dir(path);
            if parent.is_dir() {
                Ok(())
            } else {
                Err(bad_input(format!(
                    "{option} {}: directory {} does not exist",
                    path.display(),
                    parent.display()
                )))
            }
        }
        Err(e) => Err(bad_input(format!("{option} {}: {e}", path.display()))),
    }
}

fn refuse_unless_regular(
    option: &str,
    path: &Path,
    meta: &std::fs::Metadata,
) -> Result<(), Failure> {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    let special = if kind.is_file() {
        return Ok(());
    } else if kind.is_symlink() {
        return Err(bad_input(format!(
            "{option} {}: is a symbolic link; storlab replaces an output file whole and would replace the link, not what it points to: name the file itself",
            path.display()
        )));
    } else if kind.is_dir() {
        return Err(bad_input(format!(
            "{option} {}: is a directory",
            path.display()
        )));
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(bad_input(format!(
        "{option} {}: is {special}; storlab writes an output file whole and replaces it, so it writes only regular files (leave out {option} for stdout)",
        path.display()
    )))
}

/// The directory `path` is in (`.` for a bare name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Which file a path names: its device and inode when it exists (so a hard link or another
/// spelling is the same file), else its canonical directory and name.
#[derive(Debug, PartialEq, Eq)]
enum FileIdentity {
    Inode { device: u64, inode: u64 },
    Missing(std::path::PathBuf),
}

impl FileIdentity {
    fn of(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        match std::fs::metadata(path) {
            Ok(meta) => Some(Self::Inode {
                device: meta.dev(),
                inode: meta.ino(),
            }),
            Err(_) => {
                let name = path.file_name()?;
                let directory = std::fs::canonicalize(parent_dir(path)).ok()?;
                Some(Self::Missing(directory.join(name)))
            }
        }
    }
}

/// Writes `bytes` whole to `path` through a temporary file beside it and a rename, so an
/// interrupted write never leaves half a file. The temporary is created new and not through a
/// symbolic link (`O_EXCL | O_NOFOLLOW`), and the rename replaces only a regular file or
/// nothing: `path` is checked again just before, as it may have changed during a long run. A
/// file replaced keeps its permissions. `option` names the flag in error messages.
pub(crate) fn write_file(path: &Path, bytes: &[u8], option: &str) -> Result<(), Failure> {
    check_output_path(option, path)?;
    let (temporary, mut file) = create_temporary_beside(path)
        .map_err(|e| run_failed(format!("{option} {}: {e}", path.display())))?;
    let written = (|| {
        file.write_all(bytes)?;
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            if meta.file_type().is_file() {
                file.set_permissions(meta.permissions())?;
            }
        }
        // On disk before the rename makes it the output: a crash then leaves the old file or
        // the new one, never an empty one.
        file.sync_all()
    })();
    drop(file);
    let renamed = written
        .map_err(|e| run_failed(format!("{option} {}: {e}", path.display())))
        .and_then(|()| {
            // Between the check before the run and now, the path may have become a device,
            // FIFO or link: rename would replace it.
            check_output_path(option, path)?;
            std::fs::rename(&temporary, path)
                .map_err(|e| run_failed(format!("{option} {}: {e}", path.display())))
        });
    if renamed.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    renamed
}

/// Appends `bytes` to the regular file at `path` (or makes it): the old content and the new are
/// written whole through a temporary file and a rename, as [`write_file`] does, so the file is
/// never half-written and never reached through a symbolic link. For fio's logs with
/// `per_job_logs=0`, which fio appends to.
pub(crate) fn append_file(path: &Path, bytes: &[u8], option: &str) -> Result<(), Failure> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    check_output_path(option, path)?;
    let mut whole = Vec::new();
    match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(mut file) => {
            let meta = file
                .metadata()
                .map_err(|e| run_failed(format!("{option} {}: {e}", path.display())))?;
            refuse_unless_regular(option, path, &meta)?;
            file.read_to_end(&mut whole)
                .map_err(|e| run_failed(format!("{option} {}: {e}", path.display())))?;
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(run_failed(format!("{option} {}: {e}", path.display()))),
    }
    whole.extend_from_slice(bytes);
    write_file(path, &whole, option)
}

/// A new hidden file in `path`'s directory (so the rename stays on one filesystem), created
/// exclusively and refusing a symbolic link in its place.
fn create_temporary_beside(path: &Path) -> std::io::Result<(std::path::PathBuf, std::fs::File)> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::sync::atomic::{AtomicU32, Ordering};
    /// Tries before giving up when names are taken (left by a killed run with the same pid).
    const ATTEMPTS: u32 = 100;
    static SEQUENCE: AtomicU32 = AtomicU32::new(0);
    let name = path
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_os_string());
    let mut last_error = None;
    for _ in 0..ATTEMPTS {
        let mut temporary_name = std::ffi::OsString::from(".");
        temporary_name.push(&name);
        temporary_name.push(format!(
            ".storlab-partial-{}-{}",
            std::process::id(),
            SEQUENCE.fetch_add(1, Ordering::Relaxed)
        ));
        let temporary = parent_dir(path).join(temporary_name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&temporary)
        {
            Ok(file) => return Ok((temporary, file)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => last_error = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_error.unwrap_or_else(|| std::io::Error::from(ErrorKind::AlreadyExists)))
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
