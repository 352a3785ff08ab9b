//! FC-Test on a real directory: for each file set, create the files, read them, copy them within
//! the directory and copy them to a second directory, timing each phase with the data on stable
//! storage (every file and directory fsynced before the clock stops) and the page cache emptied
//! of the source files before each phase that reads them. Everything it creates is deleted.

use crate::error::{bad_input, run_failed, LabError};
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use storlab_stats::WorkerStats;

/// Files are written and copied in chunks of this size (FC-Test's copies used large buffers).
const CHUNK_BYTES: usize = 1 << 20;
/// Where a stamp (file index, chunk index) goes in each chunk, so no two chunks repeat and a
/// deduplicating drive cannot flatter the result.
const STAMP_BYTES: usize = 16;

/// Work directories alive now, for the Ctrl-C handler (their guards' destructors may not run).
static WORK_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Delete every work directory still registered (safe to call from a signal-handler thread).
pub fn cleanup_work_dirs() {
    let mut dirs = WORK_DIRS.lock().unwrap_or_else(|p| p.into_inner());
    for dir in dirs.drain(..) {
        let _ = fs::remove_dir_all(dir);
    }
}

/// A hidden work directory that is removed with everything in it when dropped.
struct WorkDir(PathBuf);

impl WorkDir {
    fn create(parent: &Path, label: &str) -> Result<WorkDir, LabError> {
        if !parent.is_dir() {
            return Err(bad_input(format!("{}: not a directory", parent.display())));
        }
        let path = parent.join(format!(".storlab-fctest-{label}-{}", std::process::id()));
        fs::create_dir(&path).map_err(|e| bad_input(format!("{}: {e}", path.display())))?;
        WORK_DIRS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(path.clone());
        Ok(WorkDir(path))
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
        WORK_DIRS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|d| d != &self.0);
    }
}

/// One file set as it will run (already scaled by `--size`).
pub struct FileSetRun {
    pub name: String,
    pub files: u64,
    pub file_bytes: u64,
    pub files_per_dir: u64,
}

/// One timed phase of one file set.
pub struct PhaseResult {
    pub fileset: String,
    pub operation: &'static str,
    pub files: u64,
    pub bytes: u64,
    /// Per-file latencies (open to fsync) and totals; `elapsed_ns` is the phase's wall time.
    pub stats: WorkerStats,
}

/// The FC-Test phases, in the order it runs them.
pub const OPERATIONS: [&str; 4] = ["create", "read", "copy-within", "copy-across"];

fn io_failure(path: &Path, error: std::io::Error) -> LabError {
    run_failed(format!("{}: {error}", path.display()))
}

fn file_path(root: &Path, set: &FileSetRun, index: u64) -> PathBuf {
    root.join(format!("d{:05}", index / set.files_per_dir.max(1)))
        .join(format!("f{index:06}"))
}

fn sync_dir(dir: &Path) -> Result<(), LabError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_failure(dir, e))
}

/// Drop the page-cache pages of every file under `root` (dirty pages are flushed first), so the
/// next phase reads from the device.
fn drop_cache(root: &Path, set: &FileSetRun) -> Result<(), LabError> {
    for index in 0..set.files {
        let path = file_path(root, set, index);
        File::open(&path)
            .and_then(|file| storlab_engine::target::drop_cached_file_pages(&file))
            .map_err(|e| io_failure(&path, e))?;
    }
    Ok(())
}

/// Per-phase bookkeeping: wall clock from the phase start, per-file latencies.
struct Phase {
    start: Instant,
    stats: WorkerStats,
}

impl Phase {
    fn start() -> Phase {
        Phase {
            start: Instant::now(),
            stats: WorkerStats::new(storlab_runner::DEFAULT_INTERVAL_NS),
        }
    }
    fn file_done(&mut self, began: Instant, read_bytes: u64, written_bytes: u64) {
        let latency_ns = began.elapsed().as_nanos() as u64;
        let t_ns = self.start.elapsed().as_nanos() as u64;
        if read_bytes > 0 {
            self.stats.read.record(t_ns, read_bytes, 0, latency_ns);
        }
        if written_bytes > 0 {
            self.stats.write.record(t_ns, written_bytes, 0, latency_ns);
        }
    }
}

/// Write (or copy into) `dest` from `source` chunks, then fsync it.
fn write_file(
    dest: &Path,
    chunks: &mut dyn FnMut(&mut [u8]) -> Result<usize, LabError>,
    buf: &mut [u8],
) -> Result<u64, LabError> {
    let mut file = File::create(dest).map_err(|e| io_failure(dest, e))?;
    let mut written = 0u64;
    loop {
        let n = chunks(buf)?;
        if n == 0 {
            break;
        }
        file.write_all(&buf[..n]).map_err(|e| io_failure(dest, e))?;
        written += n as u64;
    }
    file.sync_all().map_err(|e| io_failure(dest, e))?;
    Ok(written)
}

/// Create the set's directories (not timed: FC-Test times the files, not mkdir).
fn make_dirs(root: &Path, set: &FileSetRun) -> Result<(), LabError> {
    let dirs = set.files.div_ceil(set.files_per_dir.max(1));
    for d in 0..dirs {
        let dir = root.join(format!("d{d:05}"));
        fs::create_dir_all(&dir).map_err(|e| io_failure(&dir, e))?;
    }
    Ok(())
}

/// Fsync every directory of the set (so new entries are durable before the clock stops).
fn sync_dirs(root: &Path, set: &FileSetRun) -> Result<(), LabError> {
    let dirs = set.files.div_ceil(set.files_per_dir.max(1));
    for d in 0..dirs {
        sync_dir(&root.join(format!("d{d:05}")))?;
    }
    sync_dir(root)
}

/// Copy every file of the set from `from` to `to` with explicit reads and writes (no
/// copy_file_range or reflink: the drive must move the bytes).
fn copy_set(
    from: &Path,
    to: &Path,
    set: &FileSetRun,
    stop: &AtomicBool,
    buf: &mut [u8],
) -> Result<Phase, LabError> {
    make_dirs(to, set)?;
    drop_cache(from, set)?;
    let mut phase = Phase::start();
    for index in 0..set.files {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let began = Instant::now();
        let source_path = file_path(from, set, index);
        let mut source = File::open(&source_path).map_err(|e| io_failure(&source_path, e))?;
        let written = write_file(
            &file_path(to, set, index),
            &mut |chunk| source.read(chunk).map_err(|e| io_failure(&source_path, e)),
            buf,
        )?;
        // FC-Test rates a copy by the size of the file set over the time: count the bytes
        // once (as written), not once read and once written.
        phase.file_done(began, 0, written);
    }
    sync_dirs(to, set)?;
    phase.stats.elapsed_ns = phase.start.elapsed().as_nanos() as u64;
    Ok(phase)
}

/// FC-Test's create phase: every file of `set` written under `source` from `pattern`, each
/// chunk stamped with its file and chunk number, then synced. Stops between files at `stop`.
fn create_set(
    source: &Path,
    set: &FileSetRun,
    pattern: &[u8],
    stop: &AtomicBool,
    buf: &mut [u8],
) -> Result<Phase, LabError> {
    make_dirs(source, set)?;
    let mut phase = Phase::start();
    for index in 0..set.files {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let began = Instant::now();
        let mut remaining = set.file_bytes;
        let mut chunk_index = 0u64;
        let written = write_file(
            &file_path(source, set, index),
            &mut |chunk| {
                let n = remaining.min(chunk.len() as u64) as usize;
                chunk[..n].copy_from_slice(&pattern[..n]);
                if n >= STAMP_BYTES {
                    chunk[..8].copy_from_slice(&index.to_le_bytes());
                    chunk[8..STAMP_BYTES].copy_from_slice(&chunk_index.to_le_bytes());
                }
                remaining -= n as u64;
                chunk_index += 1;
                Ok(n)
            },
            buf,
        )?;
        phase.file_done(began, 0, written);
    }
    sync_dirs(source, set)?;
    phase.stats.elapsed_ns = phase.start.elapsed().as_nanos() as u64;
    Ok(phase)
}

/// FC-Test's read phase: every file of `set` under `source` read whole, from the drive (the
/// page cache dropped first). Stops between files at `stop`.
fn read_set(
    source: &Path,
    set: &FileSetRun,
    stop: &AtomicBool,
    buf: &mut [u8],
) -> Result<Phase, LabError> {
    drop_cache(source, set)?;
    let mut phase = Phase::start();
    for index in 0..set.files {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let began = Instant::now();
        let path = file_path(source, set, index);
        let mut file = File::open(&path).map_err(|e| io_failure(&path, e))?;
        let mut read_total = 0u64;
        loop {
            let n = file.read(buf).map_err(|e| io_failure(&path, e))?;
            if n == 0 {
                break;
            }
            read_total += n as u64;
        }
        phase.file_done(began, read_total, 0);
    }
    phase.stats.elapsed_ns = phase.start.elapsed().as_nanos() as u64;
    Ok(phase)
}

/// Run FC-Test's four phases for every set under `dir` (copy-across goes to `second_dir`),
/// calling `on_phase` as each finishes. Stops between files when `stop` is set.
pub fn run(
    dir: &Path,
    second_dir: &Path,
    sets: &[FileSetRun],
    seed: u64,
    stop: &AtomicBool,
    on_phase: &mut dyn FnMut(PhaseResult),
) -> Result<(), LabError> {
    let work = WorkDir::create(dir, "a")?;
    let across = WorkDir::create(second_dir, "b")?;
    let mut pattern = vec![0u8; CHUNK_BYTES];
    storlab_runner::pattern::fill(&mut pattern, storlab_job::DataPattern::Random, seed);
    let mut buf = vec![0u8; CHUNK_BYTES];
    for set in sets {
        let source = work.0.join(format!("{}-src", set.name));
        let within = work.0.join(format!("{}-copy", set.name));
        let across_root = across.0.join(&set.name);
        let mut finish = |operation: &'static str, phase: Phase| {
            let bytes = phase.stats.read.bytes.max(phase.stats.write.bytes);
            let files = phase.stats.read.ios.max(phase.stats.write.ios);
            on_phase(PhaseResult {
                fileset: set.name.clone(),
                operation,
                files,
                bytes,
                stats: phase.stats,
            });
        };

        finish(
            "create",
            create_set(&source, set, &pattern, stop, &mut buf)?,
        );
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }

        finish("read", read_set(&source, set, stop, &mut buf)?);

        for (operation, to) in [("copy-within", &within), ("copy-across", &across_root)] {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            let phase = copy_set(&source, to, set, stop, &mut buf)?;
            finish(operation, phase);
            // The copy is measured; keep only the source for the next phase.
            let _ = fs::remove_dir_all(to);
        }
        let _ = fs::remove_dir_all(&source);
    }
    drop(across);
    drop(work);
    Ok(())
}
