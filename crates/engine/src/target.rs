//! Opening a job's target: regular files (created and laid out with real data), temporary files
//! (deleted afterwards, even on Ctrl-C) and block devices (size and block size by ioctl, checked by
//! `safety` before any write).

use crate::safety;
use crate::EngineError;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
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
    pub size_bytes: u64,
    /// Offset and length granularity O_DIRECT needs on this target.
    pub logical_block_bytes: u32,
    /// Set for storlab's own temporary files: deletes the file when dropped.
    pub temp: Option<TempGuard>,
}

impl OpenTarget {
    /// A second descriptor of the same open file, for one more engine (one per worker).
    pub fn try_clone_file(&self) -> Result<File, EngineError> {
        self.file.try_clone().map_err(|source| EngineError::Open {
            path: self.path.clone(),
            source,
        })
    }
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
    fn register(path: PathBuf) -> Self {
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

fn open_path(
    path: &Path,
    needed_bytes: u64,
    direct: bool,
    writes: bool,
    destructive: Option<&Path>,
) -> Result<OpenTarget, EngineError> {
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
        existing => {
            let current_bytes = existing.as_ref().map_or(0, |m| m.len());
            if current_bytes == 0 && needed_bytes == 0 {
                return Err(target_error(
                    path,
                    "is empty or missing and the job gives no size in bytes; set one (e.g. \
                     size=1G) so storlab can lay the file out",
                ));
            }
            if needed_bytes > current_bytes {
                lay_out_file(path, current_bytes, needed_bytes, existing.is_none())?;
            }
            open_regular(path, direct, writes, None)
        }
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
    let (path, guard) = loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{TEMP_PREFIX}{pid}-{n}{TEMP_SUFFIX}"));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            // Registered before laying out, so an interrupted layout is cleaned up too.
            Ok(_) => break (path.clone(), TempGuard::register(path)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(open_error(&path, err, false, true)),
        }
    };
    lay_out_file(&path, 0, needed_bytes, false)?;
    open_regular(&path, direct, writes, Some(guard))
}

fn open_regular(
    path: &Path,
    direct: bool,
    writes: bool,
    temp: Option<TempGuard>,
) -> Result<OpenTarget, EngineError> {
    let file = open_with_flags(path, direct, writes)?;
    let size_bytes = file
        .metadata()
        .map_err(|err| open_error(path, err, direct, writes))?
        .len();
    Ok(OpenTarget {
        logical_block_bytes: file_dio_align_bytes(&file).unwrap_or(FALLBACK_LOGICAL_BLOCK_BYTES),
        file,
        path: path.to_path_buf(),
        kind: TargetKind::RegularFile,
        size_bytes,
        temp,
    })
}

fn open_block_device(
    path: &Path,
    needed_bytes: u64,
    direct: bool,
    writes: bool,
    destructive: Option<&Path>,
) -> Result<OpenTarget, EngineError> {
    if writes {
        safety::check_block_device_writable(path, destructive)?;
    }
    let file = open_with_flags(path, direct, writes)?;
    let size_bytes = block_device_size_bytes(&file).map_err(|source| EngineError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let logical_block_bytes =
        block_device_logical_block_bytes(&file).map_err(|source| EngineError::Open {
            path: path.to_path_buf(),
            source,
        })?;
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
        size_bytes,
        logical_block_bytes,
        temp: None,
    })
}

fn open_with_flags(path: &Path, direct: bool, writes: bool) -> Result<File, EngineError> {
    let mut options = OpenOptions::new();
    options.read(true).write(writes);
    if direct {
        options.custom_flags(libc::O_DIRECT);
    }
    options
        .open(path)
        .map_err(|err| open_error(path, err, direct, writes))
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

/// Extend `path` from `from_bytes` to `to_bytes` with incompressible, non-zero data, then
/// fsync, so that reads hit real blocks (not holes the filesystem answers from nothing) and no
/// compressing controller flatters the result. Buffered writes: this runs once, before timing.
fn lay_out_file(
    path: &Path,
    from_bytes: u64,
    to_bytes: u64,
    create: bool,
) -> Result<(), EngineError> {
    let file = OpenOptions::new()
        .write(true)
        .create(create)
        .open(path)
        .map_err(|err| open_error(path, err, false, true))?;
    let io_error = |source: io::Error| EngineError::Open {
        path: path.to_path_buf(),
        source,
    };
    let mut chunk = vec![0u8; LAYOUT_CHUNK_BYTES];
    let mut offset_bytes = from_bytes;
    while offset_bytes < to_bytes {
        let len = (to_bytes - offset_bytes).min(LAYOUT_CHUNK_BYTES as u64) as usize;
        fill_layout_data(&mut chunk[..len], offset_bytes);
        file.write_all_at(&chunk[..len], offset_bytes)
            .map_err(io_error)?;
        offset_bytes += len as u64;
    }
    file.sync_all().map_err(io_error)
}

/// Pseudo-random bytes that depend on the file offset (every chunk differs, so nothing
/// deduplicates), never an all-zero 8-byte word (so nothing looks like a hole).
fn fill_layout_data(buf: &mut [u8], offset_bytes: u64) {
    // SplitMix64: one multiply-xorshift step per word, fast enough that layout is disk-bound.
    const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut state = offset_bytes ^ 0x5354_4f52_4c41_4221;
    for word in buf.chunks_mut(8) {
        state = state.wrapping_add(GOLDEN_GAMMA);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let bytes = (z | 1).to_le_bytes();
        word.copy_from_slice(&bytes[..word.len()]);
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

// Block-layer ioctls from <linux/fs.h>: BLKSSZGET = _IO(0x12,104) (int), BLKGETSIZE64 =
// _IOR(0x12,114,size_t), BLKDISCARD = _IO(0x12,119) (uint64_t[2]: start, length).
const BLOCK_IOCTL_TYPE: u8 = 0x12;
const BLKSSZGET_NR: u8 = 104;
const BLKGETSIZE64_NR: u8 = 114;
const BLKDISCARD_NR: u8 = 119;
nix::ioctl_read_bad!(
    ioctl_blksszget,
    nix::request_code_none!(BLOCK_IOCTL_TYPE, BLKSSZGET_NR),
    libc::c_int
);
nix::ioctl_read!(ioctl_blkgetsize64, BLOCK_IOCTL_TYPE, BLKGETSIZE64_NR, u64);
nix::ioctl_write_ptr_bad!(
    ioctl_blkdiscard,
    nix::request_code_none!(BLOCK_IOCTL_TYPE, BLKDISCARD_NR),
    [u64; 2]
);

/// Size of a block device in bytes (BLKGETSIZE64).
pub fn block_device_size_bytes(file: &File) -> io::Result<u64> {
    let mut size_bytes = 0u64;
    // SAFETY: the fd is open and the kernel writes one u64 into `size_bytes`.
    unsafe { ioctl_blkgetsize64(file.as_raw_fd(), &mut size_bytes) }?;
    Ok(size_bytes)
}

/// Logical block size of a block device (BLKSSZGET): the O_DIRECT granularity.
pub fn block_device_logical_block_bytes(file: &File) -> io::Result<u32> {
    let mut block_bytes: libc::c_int = 0;
    // SAFETY: the fd is open and the kernel writes one int into `block_bytes`.
    unsafe { ioctl_blksszget(file.as_raw_fd(), &mut block_bytes) }?;
    u32::try_from(block_bytes)
        .map_err(|_| io::Error::other(format!("BLKSSZGET returned {block_bytes}")))
}

/// Drop the target's pages from the page cache (fio's `invalidate`): dirty pages are written
/// first, so nothing is lost, and the next buffered read comes from the device.
pub fn drop_cached_pages(target: &OpenTarget) -> Result<(), EngineError> {
    drop_cached_file_pages(&target.file).map_err(|source| EngineError::Open {
        path: target.path.clone(),
        source,
    })
}

/// Drop one open file's pages from the page cache, flushing dirty ones first (DONTNEED skips
/// dirty pages, so without the flush they would stay cached).
pub fn drop_cached_file_pages(file: &File) -> io::Result<()> {
    use nix::fcntl::{posix_fadvise, PosixFadviseAdvice};
    use std::os::fd::AsRawFd;
    file.sync_data()?;
    posix_fadvise(
        file.as_raw_fd(),
        0,
        0,
        PosixFadviseAdvice::POSIX_FADV_DONTNEED,
    )
    .map_err(|errno| io::Error::from_raw_os_error(errno as i32))
}

/// Discard a range: punch a hole in a file (keeping its size), or BLKDISCARD on a block device.
/// Synchronous. Returns the length discarded, or the errno.
pub fn discard(
    file: &File,
    kind: TargetKind,
    offset_bytes: u64,
    len_bytes: u32,
) -> Result<u32, i32> {
    match kind {
        TargetKind::RegularFile => {
            let offset = libc::off_t::try_from(offset_bytes).map_err(|_| libc::EINVAL)?;
            // SAFETY: fallocate takes plain integers; the fd is open.
            let rc = unsafe {
                libc::fallocate(
                    file.as_raw_fd(),
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    offset,
                    libc::off_t::from(len_bytes),
                )
            };
            if rc == 0 {
                Ok(len_bytes)
            } else {
                Err(io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO))
            }
        }
        TargetKind::BlockDevice => {
            let range = [offset_bytes, u64::from(len_bytes)];
            // SAFETY: the fd is open; the kernel reads two u64 from `range`.
            match unsafe { ioctl_blkdiscard(file.as_raw_fd(), &range) } {
                Ok(_) => Ok(len_bytes),
                Err(errno) => Err(errno as i32),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_data_is_nonzero_and_offset_dependent() {
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        fill_layout_data(&mut a, 0);
        fill_layout_data(&mut b, LAYOUT_CHUNK_BYTES as u64);
        assert_ne!(a, b);
        assert!(a.chunks(8).all(|w| w.iter().any(|&x| x != 0)));
    }

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
