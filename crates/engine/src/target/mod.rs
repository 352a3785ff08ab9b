//! Opening a job's target: regular files (created and laid out with real data; a file storlab
//! created is removed again if its layout fails), temporary files (deleted afterwards, even on
//! Ctrl-C) and block devices (size and block size by ioctl; for writing, claimed with O_EXCL and
//! checked by `safety`). Each target path is opened once: the checks and the I/O use that one
//! descriptor (engines get duplicates of it), so a path pointed elsewhere in between changes
//! nothing.
//!
//! Opening is here; `file_layout.rs` writes a new file's data, `device_ops.rs` holds the ioctls
//! and calls on an open descriptor (device size, block size, page-cache drop, discard).

mod device_ops;
mod file_layout;

pub use device_ops::{
    block_device_logical_block_bytes, block_device_size_bytes, discard, drop_cached_file_pages,
    drop_cached_pages,
};

use crate::safety;
use crate::{EngineError, FlushKind};
use file_layout::lay_out_file;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Files are laid out in chunks of this size (fio "Laying out IO file" writes in 1 MiB blocks).
pub const LAYOUT_CHUNK_BYTES: usize = 1 << 20;
/// Block size assumed for a regular file whose filesystem does not report its O_DIRECT
/// alignment (statx `STATX_DIOALIGN`, Linux 6.1): the historical sector size.
pub const FALLBACK_LOGICAL_BLOCK_BYTES: u32 = 512;
/// Temporary files are named `<TEMP_PREFIX><pid>-<n><TEMP_SUFFIX>`: hidden, and recognisable by
/// a human cleaning up after a killed run.
pub const TEMP_PREFIX: &str = ".storlab-";
pub const TEMP_SUFFIX: &str = ".storlab-tmp";

/// What kind of object the target path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    RegularFile,
    BlockDevice,
}

/// An opened target, ready to hand to an engine (engines clone `file`).
#[derive(Debug)]
pub struct OpenTarget {
    /// Opened read-only, or read-write for jobs that write or trim; with O_DIRECT if asked.
    pub file: File,
    pub path: PathBuf,
    pub kind: TargetKind,
    /// A block device's number (st_rdev of the open descriptor): what the guard checked.
    pub device: Option<safety::DeviceNumber>,
    pub size_bytes: u64,
    /// Offset and length granularity O_DIRECT needs on this target.
    pub logical_block_bytes: u32,
    /// Set for storlab's own temporary files: deletes the file when dropped.
    pub temp: Option<TempGuard>,
    /// For a device reopened from an exclusive (O_EXCL) opening: a descriptor of that opening.
    /// Trims go through it, because the kernel drops a device's cached pages for BLKDISCARD
    /// only under an exclusive claim; without one it fails with EBUSY while pages are dirty.
    claim: Option<File>,
}

impl OpenTarget {
    /// A second descriptor of the same open file, for one more engine (one per worker).
    pub fn try_clone_file(&self) -> Result<File, EngineError> {
        self.file.try_clone().map_err(|source| EngineError::Open {
            path: self.path.clone(),
            source,
        })
    }

    /// The descriptor an engine trims through (`discard`): the exclusive opening this one was
    /// reopened from, if any, else the same file as `try_clone_file`.
    pub fn try_clone_trim_file(&self) -> Result<File, EngineError> {
        self.claim
            .as_ref()
            .unwrap_or(&self.file)
            .try_clone()
            .map_err(|source| EngineError::Open {
                path: self.path.clone(),
                source,
            })
    }

    /// The descriptor's status flags (F_GETFL): access mode, O_DIRECT, O_SYNC...
    fn status_flags(&self) -> Result<libc::c_int, EngineError> {
        // SAFETY: F_GETFL on an open descriptor takes no pointer.
        let flags = unsafe { libc::fcntl(self.file.as_raw_fd(), libc::F_GETFL) };
        if flags < 0 {
            return Err(EngineError::Open {
                path: self.path.clone(),
                source: io::Error::last_os_error(),
            });
        }
        Ok(flags)
    }

    /// A new open file description of the same object, with the same access mode and
    /// O_DIRECT/O_SYNC flags, made through this descriptor (`/proc/self/fd`), never through the
    /// path: for an engine that positions the file (`sync`: lseek then read), whose offset a
    /// duplicated descriptor would share with every other worker.
    pub fn try_open_own_position(&self) -> Result<File, EngineError> {
        let fd = self.file.as_raw_fd();
        let open_error = |source| EngineError::Open {
            path: self.path.clone(),
            source,
        };
        let flags = self.status_flags()?;
        let kept = flags & (libc::O_DIRECT | libc::O_SYNC | libc::O_DSYNC | libc::O_NOATIME);
        OpenOptions::new()
            .read(true)
            .write(flags & libc::O_ACCMODE == libc::O_RDWR)
            .custom_flags(kept)
            .open(format!("/proc/self/fd/{fd}"))
            .map_err(open_error)
    }

    /// A new open file description of the same file or device whose every write is stable
    /// before it returns, as fio opens a target for `sync=1` (`O_SYNC`, [`FlushKind::All`]) or
    /// `sync=dsync` (`O_DSYNC`, [`FlushKind::Data`]): same access mode and O_DIRECT, made
    /// through this descriptor (`/proc/self/fd`), never through the path, so the object checked
    /// (and, for a device written, claimed) is the object written. The flag has to be given at
    /// open: Linux's `fcntl(F_SETFL)` silently ignores O_SYNC and O_DSYNC. Trims keep going
    /// through this opening's claim on a device (see `try_clone_trim_file`); a temporary file
    /// stays owned (and deleted) by this opening.
    pub fn reopen_synchronous(&self, kind: FlushKind) -> Result<OpenTarget, EngineError> {
        let fd = self.file.as_raw_fd();
        let open_error = |source| EngineError::Open {
            path: self.path.clone(),
            source,
        };
        let flags = self.status_flags()?;
        let kept = flags & (libc::O_DIRECT | libc::O_NOATIME);
        let file = OpenOptions::new()
            .read(true)
            .write(flags & libc::O_ACCMODE == libc::O_RDWR)
            .custom_flags(kept | sync_open_flag(kind))
            .open(format!("/proc/self/fd/{fd}"))
            .map_err(open_error)?;
        if !writes_synchronously(&file, kind).map_err(open_error)? {
            return Err(target_error(
                &self.path,
                "the kernel did not keep O_SYNC / O_DSYNC on the reopened descriptor",
            ));
        }
        let same_object = match (self.file.metadata(), file.metadata()) {
            (Ok(ours), Ok(new)) => {
                ours.dev() == new.dev() && ours.ino() == new.ino() && ours.rdev() == new.rdev()
            }
            _ => false,
        };
        if !same_object {
            return Err(target_error(
                &self.path,
                "reopening an opened target with O_SYNC / O_DSYNC gave something else",
            ));
        }
        let claim = match self.kind {
            TargetKind::BlockDevice => Some(self.try_clone_trim_file()?),
            TargetKind::RegularFile => None,
        };
        Ok(OpenTarget {
            file,
            path: self.path.clone(),
            kind: self.kind,
            device: self.device,
            size_bytes: self.size_bytes,
            logical_block_bytes: self.logical_block_bytes,
            temp: None,
            claim,
        })
    }

    /// A new opening of the same block device with its own O_DIRECT setting, made through
    /// this descriptor (`/proc/self/fd`), never through the path: for a job that needs another
    /// setting on a device this run already opened, checked and, for writing, holds
    /// exclusively (a second exclusive open would be refused by the kernel as busy). The new
    /// opening is read-write exactly when this one is.
    pub fn reopen_device(&self, direct: bool) -> Result<OpenTarget, EngineError> {
        let fd = self.file.as_raw_fd();
        // SAFETY: F_GETFL on an open descriptor takes no pointer.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 {
            return Err(open_error(
                &self.path,
                io::Error::last_os_error(),
                direct,
                false,
            ));
        }
        let writes = flags & libc::O_ACCMODE == libc::O_RDWR;
        let through = PathBuf::from(format!("/proc/self/fd/{fd}"));
        let file =
            open_once(&through, OpenMode::new(writes), direct, writes).map_err(
                |error| match error {
                    EngineError::Open { source, .. } => EngineError::Open {
                        path: self.path.clone(),
                        source,
                    },
                    other => other,
                },
            )?;
        let same_device = file.metadata().is_ok_and(|m| {
            m.file_type().is_block_device() && Some(safety::device_number(m.rdev())) == self.device
        });
        if self.kind != TargetKind::BlockDevice || !same_device {
            return Err(target_error(
                &self.path,
                "reopening an opened block device gave something else",
            ));
        }
        finish_flags(&file, &self.path, direct, writes)?;
        skip_access_times(&file);
        let mut reopened = describe_block_device(file, &self.path, 0)?;
        reopened.claim = Some(self.try_clone_trim_file()?);
        Ok(reopened)
    }
}

/// The open(2) flag that makes a descriptor's writes stable before they return: `O_SYNC`
/// (data and metadata, fio's `sync=1`) or `O_DSYNC` (data, fio's `sync=dsync`).
pub fn sync_open_flag(kind: FlushKind) -> libc::c_int {
    match kind {
        FlushKind::All => libc::O_SYNC,
        FlushKind::Data => libc::O_DSYNC,
    }
}

/// Whether every write through `file` is stable before it returns, at least as `kind` asks:
/// the descriptor carries `O_SYNC` (which on Linux holds the `O_DSYNC` bit too, so it also
/// answers `O_DSYNC`) or, for [`FlushKind::Data`], `O_DSYNC`.
pub fn writes_synchronously(file: &File, kind: FlushKind) -> io::Result<bool> {
    // SAFETY: F_GETFL on an open descriptor takes no pointer.
    let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    let wanted = sync_open_flag(kind);
    Ok(flags & wanted == wanted)
}

/// Every temporary file currently alive, so that a Ctrl-C handler can delete them even though
/// the guards' destructors will never run.
static TEMP_FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Makes temporary names unique within this process (the pid makes them unique across).
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn temp_registry() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    // A panic while holding the lock leaves a valid Vec; keep cleaning up regardless.
    TEMP_FILES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Deletes its temporary file when dropped and removes it from the global registry.
#[derive(Debug)]
pub struct TempGuard {
    path: PathBuf,
}

impl TempGuard {
    pub(crate) fn register(path: PathBuf) -> Self {
        temp_registry().push(path.clone());
        TempGuard { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        // NotFound is fine: `cleanup_temp_files` may have run first.
        let _ = fs::remove_file(&self.path);
        temp_registry().retain(|p| p != &self.path);
    }
}

/// Delete every temporary file storlab created and has not yet deleted (for a Ctrl-C handler;
/// safe to call from any thread, any number of times). Returns how many files were removed.
pub fn cleanup_temp_files() -> usize {
    let mut registry = temp_registry();
    let removed = registry
        .iter()
        .filter(|path| fs::remove_file(path).is_ok())
        .count();
    registry.clear();
    removed
}

/// Open the job's target. `needed_bytes` is the end of the furthest region the job touches
/// (0: "the whole target", only valid for targets that already have a size). `writes` is true
/// when the job writes or trims. `destructive` is the device the user named with
/// `--destructive`.
pub fn open_target(
    target: &storlab_job::Target,
    needed_bytes: u64,
    direct: bool,
    writes: bool,
    destructive: Option<&Path>,
) -> Result<OpenTarget, EngineError> {
    match target {
        storlab_job::Target::Path(path) => {
            open_path(path, needed_bytes, direct, writes, destructive)
        }
        storlab_job::Target::TempFileIn(dir) => open_temp_file(dir, needed_bytes, direct, writes),
        storlab_job::Target::Sim(profile) => Err(EngineError::Unsupported(format!(
            "sim:{profile} is a simulated target; it is opened by the sim engine, not as a file"
        ))),
        storlab_job::Target::None => Err(EngineError::Unsupported(
            "this job has no target; only the null engine runs without one".into(),
        )),
    }
}

/// Open the target of a job that writes until the file system is full (fio's `fill_device`,
/// or writes going on past ENOSPC).
/// A regular file (created if missing) is not laid out, and its size is what it holds plus its
/// file system's free bytes (`statfs`'s `f_bfree * f_bsize`, as fio's `get_fs_free_size`) plus
/// one write of `write_block_bytes`, or `needed_bytes` when the job's `size` asks for more. fio's
/// fill has no end but ENOSPC; the extra block makes the job's last write reach past the free
/// space, so it ends there too (ENOSPC or a short write), rather than at a region end short of
/// it or, as a sequential job does at its region's end, going round to offset 0. A block
/// device is opened as for any writing job (its end is the job's end).
pub fn open_target_to_fill(
    target: &storlab_job::Target,
    needed_bytes: u64,
    write_block_bytes: u64,
    direct: bool,
    destructive: Option<&Path>,
) -> Result<OpenTarget, EngineError> {
    let storlab_job::Target::Path(path) = target else {
        return open_target(target, needed_bytes, direct, true, destructive);
    };
    refuse_files_under_dev(path)?;
    match fs::metadata(path) {
        Ok(m) if !m.is_file() => return open_path(path, needed_bytes, direct, true, destructive),
        Ok(_) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(open_error(path, err, direct, true)),
    }
    let mut mode = OpenMode::new(true);
    mode.create_new = !path.exists();
    let file = open_once(path, mode, direct, true)?;
    expect_kind(&file, path, TargetKind::RegularFile)?;
    let free_bytes =
        file_system_free_bytes(&file).map_err(|err| open_error(path, err, direct, true))?;
    let mut opened = finish_regular(file, path, direct, true, None)?;
    opened.size_bytes = opened
        .size_bytes
        .saturating_add(free_bytes)
        .saturating_add(write_block_bytes)
        .max(needed_bytes);
    if opened.size_bytes == 0 {
        return Err(target_error(
            path,
            "is empty and its file system has no free space: there is nothing to fill",
        ));
    }
    Ok(opened)
}

/// Free bytes of the file system holding `file`, as fio's `get_fs_free_size` counts them.
fn file_system_free_bytes(file: &File) -> io::Result<u64> {
    // SAFETY: an all-zero statfs is a valid value of the plain C struct the kernel fills.
    let mut stats: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open and `stats` is a valid statfs for the kernel to write.
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut stats) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let block_bytes = u64::try_from(stats.f_bsize).unwrap_or(0);
    Ok(block_bytes.saturating_mul(stats.f_bfree))
}

fn open_path(
    path: &Path,
    needed_bytes: u64,
    direct: bool,
    writes: bool,
    destructive: Option<&Path>,
) -> Result<OpenTarget, EngineError> {
    refuse_files_under_dev(path)?;
    // The kind is read from the path only to choose how to open it (so that a pipe is never
    // opened); what was opened is then checked again on the descriptor itself.
    let metadata = match fs::metadata(path) {
        Ok(metadata) => Some(metadata),
        // fio creates a missing file even for a read job (and lays it out): so do we.
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(open_error(path, err, direct, writes)),
    };
    match metadata {
        Some(m) if m.is_dir() => Err(target_error(
            path,
            "is a directory; name a file inside it (storlab creates it) or ask for a temporary \
             file in it",
        )),
        Some(m) if m.file_type().is_block_device() => {
            open_block_device(path, needed_bytes, direct, writes, destructive)
        }
        Some(m) if !m.is_file() => Err(target_error(
            path,
            "is neither a regular file nor a block device (character devices, pipes and \
             sockets cannot be benchmarked)",
        )),
        Some(m) => open_existing_file(path, m.len(), needed_bytes, direct, writes),
        None => create_file(path, needed_bytes, direct, writes),
    }
}

/// The directory of device nodes: a job file's `filename=/dev/sdb` names a device.
const DEVICE_DIRECTORY: &str = "/dev";

/// Refuses a path in the file system of /dev that is not a block device there: a missing one
/// (fio's example job files name `/dev/sdb`, `/dev/nvme0n1`, which a machine may not have)
/// would otherwise be created as a regular file in devtmpfs and laid out in memory, as fio 3.33
/// does, measuring RAM while looking like a device; an existing regular file there is such a
/// leftover. The parent directory is resolved, so `/dev/disk/by-id/...` links and a relative
/// path from /dev count too. File systems mounted below /dev (`/dev/shm`, a tmpfs for files,
/// `/dev/hugepages`) are other devices and stay usable. Character devices and pipes are refused
/// by the caller as before.
fn refuse_files_under_dev(path: &Path) -> Result<(), EngineError> {
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let (Ok(parent), Ok(dev)) = (fs::canonicalize(parent), fs::metadata(DEVICE_DIRECTORY)) else {
        // A missing parent directory is reported by the opening itself.
        return Ok(());
    };
    let on_dev_file_system = parent.starts_with(DEVICE_DIRECTORY)
        && fs::metadata(&parent).is_ok_and(|m| m.dev() == dev.dev());
    if !on_dev_file_system {
        return Ok(());
    }
    match fs::metadata(path) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => Err(target_error(
            path,
            "no such device: storlab creates no files under /dev (name a block device this \
             machine has, or a file elsewhere)",
        )),
        Ok(m) if m.is_file() => Err(target_error(
            path,
            "is a regular file under /dev, not a device: storlab runs no jobs on files there",
        )),
        _ => Ok(()),
    }
}

/// Open an existing regular file, extending it with real data when the job reaches past its
/// end. If that layout fails (ENOSPC), the file is cut back to the length it had.
fn open_existing_file(
    path: &Path,
    current_bytes: u64,
    needed_bytes: u64,
    direct: bool,
    writes: bool,
) -> Result<OpenTarget, EngineError> {
    if current_bytes == 0 && needed_bytes == 0 {
        return Err(target_error(
            path,
            "is empty or missing and the job gives no size in bytes; set one (e.g. size=1G) so \
             storlab can lay the file out",
        ));
    }
    let grows = needed_bytes > current_bytes;
    let file = open_once(path, OpenMode::new(writes || grows), direct, writes)?;
    expect_kind(&file, path, TargetKind::RegularFile)?;
    if grows {
        // Measured on the descriptor: the file may have changed since the path was looked at.
        let before_bytes = file
            .metadata()
            .map_err(|err| open_error(path, err, direct, writes))?
            .len();
        if let Err(error) = lay_out_file(&file, path, before_bytes, needed_bytes) {
            // Only the bytes storlab appended go; what the file held before stays.
            let _ = file.set_len(before_bytes);
            return Err(error);
        }
    }
    finish_regular(file, path, direct, writes, None)
}

/// Create a missing file and lay it out; if that fails (ENOSPC), the file storlab created is
/// removed again, so no partial file stays behind.
fn create_file(
    path: &Path,
    needed_bytes: u64,
    direct: bool,
    writes: bool,
) -> Result<OpenTarget, EngineError> {
    if needed_bytes == 0 {
        return Err(target_error(
            path,
            "is empty or missing and the job gives no size in bytes; set one (e.g. size=1G) so \
             storlab can lay the file out",
        ));
    }
    let mut mode = OpenMode::new(true);
    mode.create_new = true;
    let file = match open_once(path, mode, direct, writes) {
        Err(EngineError::Open { source, .. }) if source.kind() == io::ErrorKind::AlreadyExists => {
            return Err(target_error(
                path,
                "was created by another program while storlab was creating it; run again",
            ))
        }
        other => other?,
    };
    if let Err(error) = lay_out_file(&file, path, 0, needed_bytes) {
        remove_if_same_file(path, &file);
        return Err(error);
    }
    finish_regular(file, path, direct, writes, None)
}

/// Remove `path` if it is still the file `file` has open (not something put there since).
fn remove_if_same_file(path: &Path, file: &File) {
    let same = match (fs::symlink_metadata(path), file.metadata()) {
        (Ok(at_path), Ok(ours)) => at_path.dev() == ours.dev() && at_path.ino() == ours.ino(),
        _ => false,
    };
    if same {
        let _ = fs::remove_file(path);
    }
}

fn open_temp_file(
    dir: &Path,
    needed_bytes: u64,
    direct: bool,
    writes: bool,
) -> Result<OpenTarget, EngineError> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(target_error(
                dir,
                "is not a directory; temporary files need one",
            ))
        }
        Err(err) => return Err(open_error(dir, err, false, true)),
    }
    if needed_bytes == 0 {
        return Err(target_error(
            dir,
            "a temporary file needs a size; set the job's size",
        ));
    }
    let pid = std::process::id();
    let mut mode = OpenMode::new(true);
    mode.create_new = true;
    let (path, file, guard) = loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{TEMP_PREFIX}{pid}-{n}{TEMP_SUFFIX}"));
        match open_once(&path, mode, direct, writes) {
            // Registered before laying out, so an interrupted or failed layout is cleaned up
            // too (the guard deletes the file when an error drops it).
            Ok(file) => break (path.clone(), file, TempGuard::register(path)),
            Err(EngineError::Open { source, .. })
                if source.kind() == io::ErrorKind::AlreadyExists =>
            {
                continue
            }
            Err(error) => return Err(error),
        }
    };
    lay_out_file(&file, &path, 0, needed_bytes)?;
    finish_regular(file, &path, direct, writes, Some(guard))
}

/// Set the descriptor's final flags (see `finish_flags`) and describe the regular file.
fn finish_regular(
    file: File,
    path: &Path,
    direct: bool,
    writes: bool,
    temp: Option<TempGuard>,
) -> Result<OpenTarget, EngineError> {
    finish_flags(&file, path, direct, writes)?;
    let size_bytes = file
        .metadata()
        .map_err(|err| open_error(path, err, direct, writes))?
        .len();
    Ok(OpenTarget {
        logical_block_bytes: file_dio_align_bytes(&file).unwrap_or(FALLBACK_LOGICAL_BLOCK_BYTES),
        file,
        path: path.to_path_buf(),
        kind: TargetKind::RegularFile,
        device: None,
        size_bytes,
        temp,
        claim: None,
    })
}

fn open_block_device(
    path: &Path,
    needed_bytes: u64,
    direct: bool,
    writes: bool,
    destructive: Option<&Path>,
) -> Result<OpenTarget, EngineError> {
    let mut mode = OpenMode::new(writes);
    // O_EXCL on a block device: the kernel refuses (EBUSY) a device that is mounted, held by
    // md/dm/LVM or opened exclusively by another program, and keeps anyone from claiming it
    // while storlab has it open. Readers need no claim: reading never destroys anything.
    mode.exclusive = writes;
    let file = match open_once(path, mode, direct, writes) {
        Err(EngineError::Open { source, .. }) if source.raw_os_error() == Some(libc::EBUSY) => {
            return Err(busy_error(path))
        }
        other => other?,
    };
    expect_kind(&file, path, TargetKind::BlockDevice)?;
    if writes {
        // The same descriptor the I/O will use: whatever the path points to by now, the
        // device checked is the device written.
        safety::check_writable(&file, path, destructive)?;
    }
    finish_flags(&file, path, direct, writes)?;
    skip_access_times(&file);
    describe_block_device(file, path, needed_bytes)
}

/// Size, block size and number of an opened block device, checked against the job's needs.
fn describe_block_device(
    file: File,
    path: &Path,
    needed_bytes: u64,
) -> Result<OpenTarget, EngineError> {
    let io_error = |source: io::Error| EngineError::Open {
        path: path.to_path_buf(),
        source,
    };
    let size_bytes = block_device_size_bytes(&file).map_err(io_error)?;
    let logical_block_bytes = block_device_logical_block_bytes(&file).map_err(io_error)?;
    let device = safety::device_number(file.metadata().map_err(io_error)?.rdev());
    if needed_bytes > size_bytes {
        return Err(EngineError::TargetTooSmall {
            path: path.to_path_buf(),
            size_bytes,
            needed_bytes,
        });
    }
    Ok(OpenTarget {
        file,
        path: path.to_path_buf(),
        kind: TargetKind::BlockDevice,
        device: Some(device),
        size_bytes,
        logical_block_bytes,
        temp: None,
        claim: None,
    })
}

/// The kernel refused exclusive access: say what holds the device, as far as a look without
/// a claim (read-only, nothing written) can tell.
fn busy_error(path: &Path) -> EngineError {
    let seen = File::open(path)
        .ok()
        .and_then(|file| safety::findings(&file, path).ok())
        .filter(|findings| !findings.is_empty())
        .map(|findings| format!(": {}", findings.join("; ")))
        .unwrap_or_default();
    EngineError::Target {
        path: path.to_path_buf(),
        message: format!(
            "is in use, the kernel refuses storlab exclusive access (EBUSY){seen}; storlab \
             never writes to a device in use, even with --destructive: unmount it or stop what \
             holds it first"
        ),
    }
}

/// How long an exclusive open waits for a claim the kernel is still releasing (see
/// `open_once`), and how often it tries again meanwhile.
const EXCLUSIVE_CLAIM_GRACE: std::time::Duration = std::time::Duration::from_secs(2);
const EXCLUSIVE_CLAIM_RETRY: std::time::Duration = std::time::Duration::from_millis(10);

/// How `open_once` opens a path.
#[derive(Clone, Copy)]
struct OpenMode {
    writes: bool,
    /// O_EXCL on a block device (claim it).
    exclusive: bool,
    /// Create the file; fail if it exists.
    create_new: bool,
}

impl OpenMode {
    fn new(writes: bool) -> Self {
        OpenMode {
            writes,
            exclusive: false,
            create_new: false,
        }
    }
}

/// The one `open` of a target path. Always without O_DIRECT (libblkid and the layout read and
/// write unaligned buffers; `finish_flags` sets it afterwards) and with O_NONBLOCK (a path
/// swapped for a FIFO after it was looked at must not hang the open; cleared at once).
/// `direct` and `job_writes` only shape the error message.
fn open_once(
    path: &Path,
    mode: OpenMode,
    direct: bool,
    job_writes: bool,
) -> Result<File, EngineError> {
    let mut flags = libc::O_NONBLOCK;
    if mode.exclusive {
        flags |= libc::O_EXCL;
    }
    let mut options = OpenOptions::new();
    options
        .read(true)
        .write(mode.writes)
        .create_new(mode.create_new)
        .custom_flags(flags);
    let mut opened = options.open(path);
    if mode.exclusive {
        // The kernel drops an exclusive claim when the last reference to the file goes, and
        // an io_uring ring's references (its registered files, its requests) go in the ring's
        // teardown, which the kernel runs later, in a workqueue (`io_ring_exit_work`): a run
        // that follows one with io_uring on the same device finds it claimed for a moment
        // (seen here: every other preset run in a row on one loop device). A device really in
        // use stays busy past the grace period and is refused as before.
        let deadline = std::time::Instant::now() + EXCLUSIVE_CLAIM_GRACE;
        while opened
            .as_ref()
            .is_err_and(|e| e.raw_os_error() == Some(libc::EBUSY))
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(EXCLUSIVE_CLAIM_RETRY);
            opened = options.open(path);
        }
    }
    let file = opened.map_err(|err| match err.kind() {
        io::ErrorKind::AlreadyExists => EngineError::Open {
            path: path.to_path_buf(),
            source: err,
        },
        _ if err.raw_os_error() == Some(libc::EBUSY) => EngineError::Open {
            path: path.to_path_buf(),
            source: err,
        },
        _ => open_error(path, err, direct, job_writes),
    })?;
    // Blocking again before anything reads or writes through it (io_uring would otherwise
    // answer EAGAIN instead of waiting).
    set_status_flags(
        &file,
        path,
        |flags| flags & !libc::O_NONBLOCK,
        direct,
        job_writes,
    )?;
    Ok(file)
}

/// Refuse a descriptor that is not the kind of object the path was a moment ago (a path
/// pointed elsewhere in between).
fn expect_kind(file: &File, path: &Path, kind: TargetKind) -> Result<(), EngineError> {
    let file_type = file
        .metadata()
        .map_err(|source| EngineError::Open {
            path: path.to_path_buf(),
            source,
        })?
        .file_type();
    let matches = match kind {
        TargetKind::RegularFile => file_type.is_file(),
        TargetKind::BlockDevice => file_type.is_block_device(),
    };
    if matches {
        Ok(())
    } else {
        Err(target_error(
            path,
            "changed while storlab opened it (it is no longer what it was a moment before); run \
             again",
        ))
    }
}

/// O_DIRECT on the descriptor if the job asks for it, once storlab's own unaligned reads and
/// writes (signature probe, layout) are done. EINVAL: the filesystem refuses O_DIRECT, reported
/// as such.
fn finish_flags(file: &File, path: &Path, direct: bool, writes: bool) -> Result<(), EngineError> {
    if !direct {
        return Ok(());
    }
    set_status_flags(file, path, |flags| flags | libc::O_DIRECT, direct, writes)
}

/// Ask the kernel not to update the device node's access time on every read (O_NOATIME), as
/// fio opens every target that is not a regular file: without it each read of a block device
/// also goes through `touch_atime` on the device inode (seen in `perf record` of a sync QD1
/// O_DIRECT run on a loop device, absent from fio's). Only the inode's owner (or CAP_FOWNER)
/// may set it; fio then opens without it, and so does storlab: the flag changes no data.
fn skip_access_times(file: &File) {
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL on an open descriptor takes no pointer.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags >= 0 {
        // SAFETY: F_SETFL on an open descriptor takes an int. EPERM (not the owner) is the
        // only expected failure and leaves the flags as they were.
        unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NOATIME) };
    }
}

/// Change the descriptor's status flags (F_GETFL/F_SETFL) with `change`.
fn set_status_flags(
    file: &File,
    path: &Path,
    change: impl Fn(libc::c_int) -> libc::c_int,
    direct: bool,
    writes: bool,
) -> Result<(), EngineError> {
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL on an open descriptor takes no pointer.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(open_error(path, io::Error::last_os_error(), direct, writes));
    }
    // SAFETY: F_SETFL on an open descriptor takes an int.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, change(flags)) } < 0 {
        return Err(open_error(path, io::Error::last_os_error(), direct, writes));
    }
    Ok(())
}

/// Turn an `open`/`stat` failure into one clear line naming the path.
fn open_error(path: &Path, err: io::Error, direct: bool, writes: bool) -> EngineError {
    match err.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => target_error(
            path,
            if writes {
                "permission denied: storlab needs read and write access to this target"
            } else {
                "permission denied: storlab needs read access to this target"
            },
        ),
        Some(libc::EINVAL) if direct => target_error(
            path,
            "the filesystem refuses O_DIRECT (direct=1); some filesystems (FUSE, older tmpfs) \
             cannot bypass the page cache: use direct=0 or a target on a disk-backed filesystem",
        ),
        Some(libc::EISDIR) => target_error(path, "is a directory; name a file inside it"),
        Some(libc::EROFS) => target_error(
            path,
            "is on a read-only filesystem and the job writes; use a read-only job or another \
             target",
        ),
        _ => EngineError::Open {
            path: path.to_path_buf(),
            source: err,
        },
    }
}

fn target_error(path: &Path, message: &str) -> EngineError {
    EngineError::Target {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

/// O_DIRECT offset alignment the filesystem reports for this file (statx `STATX_DIOALIGN`).
fn file_dio_align_bytes(file: &File) -> Option<u32> {
    // SAFETY: `statx` is plain old data; all-zero is a valid value to be overwritten.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: valid fd, empty path with AT_EMPTY_PATH (stat the fd itself), and `stx` is a
    // writable statx the kernel fills.
    let rc = unsafe {
        libc::statx(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    let reported = rc == 0 && stx.stx_mask & libc::STATX_DIOALIGN != 0;
    (reported && stx.stx_dio_offset_align != 0).then_some(stx.stx_dio_offset_align)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_errors_say_what_went_wrong_and_where() {
        let path = Path::new("/srv/bench/data");
        let said = |errno, direct, writes| {
            open_error(path, io::Error::from_raw_os_error(errno), direct, writes).to_string()
        };
        let denied = said(libc::EACCES, false, true);
        assert!(
            denied.starts_with("/srv/bench/data: permission denied"),
            "{denied}"
        );
        assert!(denied.contains("write"), "{denied}");
        assert!(said(libc::EINVAL, true, false).contains("refuses O_DIRECT"));
        assert!(!said(libc::EINVAL, false, false).contains("O_DIRECT"));
        assert!(said(libc::EROFS, false, true).contains("read-only filesystem"));
    }
}
