//! The one guarded open of every file storlab writes that is not a job's target: `--output`,
//! `--report`, `--pcap`, fio's logs (`write_bw_log`...), `write_iolog`, `verify_state_save`,
//! `verify_dump`, `export -o`, `report -o`.
//!
//! Such a file is written whole: into a new temporary beside it (`O_CREAT | O_EXCL |
//! O_NOFOLLOW`, so never through a symbolic link nor onto a file someone else made), then
//! renamed over the name, which replaces a regular file or nothing. The name is checked before
//! any work ([`check_outputs`], by the front end, against the files it must not replace: the
//! results database and its journals, the job file, the targets, another output) and again just
//! before the rename ([`check_output`]): a device, FIFO, socket, directory or symbolic link is
//! refused, never opened, so a FIFO cannot block and a device cannot be overwritten (as root,
//! `write_iolog=/dev/sda` would otherwise replace the partition table). docs/decisions/0022.

use std::ffi::OsString;
use std::fs::File;
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::target::TempGuard;

/// Why an output was not written: refused before anything was written (bad input), or failed
/// while writing (a full disk). Each is one line naming the option and the path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutputError {
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Failed(String),
}

/// A file an output may not replace: (what it is, for the message; its path).
pub type Protected<'a> = (&'a str, &'a Path);

/// Refuses, before any work, output paths storlab must not write: one that exists and is not a
/// regular file, a symbolic link (the link would be replaced, not what it points to), a missing
/// directory, a `protected` file (by identity, so a hard link or another spelling is caught), or
/// two outputs naming the same file (the second would replace the first). `outputs` are
/// (option, path); the option names the key or flag in the message.
pub fn check_outputs(
    outputs: &[(&str, &Path)],
    protected: &[Protected<'_>],
) -> Result<(), OutputError> {
    for (i, &(option, path)) in outputs.iter().enumerate() {
        check_output(option, path)?;
        let Some(identity) = FileIdentity::of(path) else {
            continue;
        };
        for &(what, other) in protected {
            if FileIdentity::of(other).as_ref() == Some(&identity) {
                return Err(OutputError::Refused(format!(
                    "{option} {}: is {what} {}; writing there would replace it",
                    path.display(),
                    other.display()
                )));
            }
        }
        for &(earlier_option, earlier) in &outputs[..i] {
            if FileIdentity::of(earlier).as_ref() == Some(&identity) {
                return Err(OutputError::Refused(format!(
                    "{option} {}: is also {earlier_option}; give each output its own file",
                    path.display()
                )));
            }
        }
    }
    Ok(())
}

/// The results database at `db` and the journals SQLite keeps beside it (named by appending
/// these suffixes, sqlite.org/tempfiles.html), each with what it is for a message.
pub fn database_files(db: &Path) -> Vec<(&'static str, PathBuf)> {
    const SQLITE_SIDE_FILES: [&str; 3] = ["-journal", "-wal", "-shm"];
    let mut files = vec![("the results database", db.to_path_buf())];
    for suffix in SQLITE_SIDE_FILES {
        let mut side = db.as_os_str().to_os_string();
        side.push(suffix);
        files.push(("the results database's journal", side.into()));
    }
    files
}

/// Whether `a` and `b` name the same file: the same device and inode when both exist, else the
/// same canonical directory and name.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (FileIdentity::of(a), FileIdentity::of(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Whether `path` may be written as an output: a regular file or nothing yet, in a directory
/// that exists. Never opens it (a FIFO would block). `option` names the key or flag.
pub fn check_output(option: &str, path: &Path) -> Result<(), OutputError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => refuse_unless_regular(option, path, &meta),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let parent = parent_dir(path);
            if parent.is_dir() {
                Ok(())
            } else {
                Err(OutputError::Refused(format!(
                    "{option} {}: directory {} does not exist",
                    path.display(),
                    parent.display()
                )))
            }
        }
        Err(e) => Err(OutputError::Refused(format!(
            "{option} {}: {e}",
            path.display()
        ))),
    }
}

fn refuse_unless_regular(
    option: &str,
    path: &Path,
    meta: &std::fs::Metadata,
) -> Result<(), OutputError> {
    let kind = meta.file_type();
    let special = if kind.is_file() {
        return Ok(());
    } else if kind.is_symlink() {
        return Err(OutputError::Refused(format!(
            "{option} {}: is a symbolic link; storlab replaces an output file whole and would replace the link, not what it points to: name the file itself",
            path.display()
        )));
    } else if kind.is_dir() {
        return Err(OutputError::Refused(format!(
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
    Err(OutputError::Refused(format!(
        "{option} {}: is {special}; storlab writes an output file whole and replaces it, so it writes only regular files",
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
    Missing(PathBuf),
}

impl FileIdentity {
    fn of(path: &Path) -> Option<Self> {
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

/// An output being written: a new temporary beside its name, which [`OutputFile::commit`]
/// renames over it. Dropped uncommitted, the temporary is deleted and the name left as it was;
/// the temporary is among the files a second Ctrl-C deletes (`target::cleanup_temp_files`).
pub struct OutputFile {
    option: String,
    path: PathBuf,
    temporary: TempGuard,
    file: Option<File>,
}

impl OutputFile {
    /// Checks `path` ([`check_output`]) and creates the temporary. `option` names the key or
    /// flag in messages.
    pub fn create(option: &str, path: &Path) -> Result<Self, OutputError> {
        check_output(option, path)?;
        let (temporary, file) =
            create_temporary_beside(path).map_err(|e| failed(option, path, &e))?;
        Ok(Self {
            option: option.to_string(),
            path: path.to_path_buf(),
            temporary: TempGuard::register(temporary),
            file: Some(file),
        })
    }

    /// The name this output will have.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `bytes` to the temporary.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), OutputError> {
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        file.write_all(bytes)
            .map_err(|e| failed(&self.option, &self.path, &e))
    }

    /// Makes the output the file at its name: on disk first (a crash then leaves the old file or
    /// the new one, never an empty one), with a replaced file's permissions, then renamed over
    /// the name once it is checked again (it may have become a device, FIFO or link during a
    /// long run; rename would replace it).
    pub fn commit(mut self) -> Result<(), OutputError> {
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        let synced = (|| {
            if let Ok(meta) = std::fs::symlink_metadata(&self.path) {
                if meta.file_type().is_file() {
                    file.set_permissions(meta.permissions())?;
                }
            }
            file.sync_all()
        })();
        drop(file);
        synced.map_err(|e| failed(&self.option, &self.path, &e))?;
        check_output(&self.option, &self.path)?;
        // Renamed, the temporary's name is gone: dropping its guard then deletes nothing.
        std::fs::rename(self.temporary.path(), &self.path)
            .map_err(|e| failed(&self.option, &self.path, &e))
    }
}

fn failed(option: &str, path: &Path, error: &std::io::Error) -> OutputError {
    OutputError::Failed(format!("{option} {}: {error}", path.display()))
}

/// Writes `bytes` whole to `path` through [`OutputFile`]: never half a file, never through a
/// link, never over anything but a regular file.
pub fn write_whole(option: &str, path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let mut file = OutputFile::create(option, path)?;
    file.write_all(bytes)?;
    file.commit()
}

/// Appends `bytes` to the regular file at `path` (or makes it): the old content and the new are
/// written whole, as [`write_whole`] does. For fio's logs with `per_job_logs=0`, which fio
/// appends to.
pub fn append_whole(option: &str, path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    use std::io::Read;
    check_output(option, path)?;
    let mut whole = Vec::new();
    // O_NONBLOCK: a FIFO put in its place since the check must not block the open.
    match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(mut file) => {
            let meta = file.metadata().map_err(|e| failed(option, path, &e))?;
            refuse_unless_regular(option, path, &meta)?;
            file.read_to_end(&mut whole)
                .map_err(|e| failed(option, path, &e))?;
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(failed(option, path, &e)),
    }
    whole.extend_from_slice(bytes);
    write_whole(option, path, &whole)
}

/// A new hidden file in `path`'s directory (so the rename stays on one filesystem), created
/// exclusively and refusing a symbolic link in its place.
fn create_temporary_beside(path: &Path) -> std::io::Result<(PathBuf, File)> {
    use std::sync::atomic::{AtomicU32, Ordering};
    /// Tries before giving up when names are taken (left by a killed run with the same pid).
    const ATTEMPTS: u32 = 100;
    static SEQUENCE: AtomicU32 = AtomicU32::new(0);
    let name = path
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_os_string());
    let mut last_error = None;
    for _ in 0..ATTEMPTS {
        let mut temporary_name = OsString::from(".");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_being_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        // No reader: an open for writing would block, a check must not.
        let refused = write_whole("write_iolog", &fifo, b"x").unwrap_err();
        assert!(matches!(&refused, OutputError::Refused(m) if m.contains("is a FIFO")));
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
    }

    #[test]
    fn an_uncommitted_output_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, "old").unwrap();
        let mut file = OutputFile::create("write_iolog", &path).unwrap();
        file.write_all(b"new").unwrap();
        drop(file);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_committed_output_replaces_the_file_and_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_whole("write_iolog", &path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_protected_file_is_refused_by_identity() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.sqlite");
        std::fs::write(&db, "db").unwrap();
        let other_spelling = dir.path().join(".").join("r.sqlite");
        let refused = check_outputs(
            &[("write_iolog", other_spelling.as_path())],
            &[("the results database", db.as_path())],
        )
        .unwrap_err();
        assert!(matches!(refused, OutputError::Refused(m) if m.contains("the results database")));
    }
}
