//! fio's `write_iolog` for one worker: every I/O it issues, its syncs and its read-back, in
//! fio's iolog format version 2, written through the one guarded open.

use crate::RunError;
use std::io::Write;
use std::path::PathBuf;
use storlab_engine::output_file::{OutputError, OutputFile};
use storlab_engine::{FlushKind, IoDirection};
use storlab_job::{JobSpec, Target};

/// First line of an I/O log in fio's format version 2 (fio iolog.c, `iolog_ver2`): then one
/// line per file action (`FILE add`, `FILE open`, `FILE close`) or I/O (`FILE read OFFSET LEN`).
const IOLOG_V2_HEADER: &str = "fio version 2 iolog";
/// Log lines kept in memory before they are written out.
const IOLOG_BUFFER_BYTES: usize = 64 * 1024;

/// How often fio logs a request: twice where its null engine refused it once, else once.
fn times_logged(refused_once: bool) -> usize {
    if refused_once {
        2
    } else {
        1
    }
}

/// fio's `write_iolog`: every I/O this worker issues, in issue order. Written through the one
/// guarded open (`storlab_engine::output_file`): into a temporary beside the name, renamed over
/// it when the worker ends, so a device, FIFO, link or another file's name is never written.
pub(super) struct IoLog {
    path: PathBuf,
    /// The target as the log names it.
    file_label: String,
    file: Option<OutputFile>,
    pending: Vec<u8>,
}

impl IoLog {
    /// The log `job` asks its worker `worker_index` to write, if any (opened when it starts).
    pub(super) fn for_job(job: &JobSpec, worker_index: u32) -> Option<IoLog> {
        let path = job.write_iolog_file(worker_index)?;
        Some(IoLog {
            path,
            file_label: match &job.target {
                Target::Path(path) => path.display().to_string(),
                Target::Sim(stack) => format!("sim:{stack}"),
                Target::TempFileIn(_) | Target::None => job.name.clone(),
            },
            file: None,
            pending: Vec::with_capacity(IOLOG_BUFFER_BYTES),
        })
    }

    /// Logs one issued I/O, writing the lines out once enough are kept. `refused_once`: fio's
    /// null engine refuses it once (FIO_Q_BUSY, `batched.rs` `requeue_after_busy`), and fio,
    /// having logged it, logs it again when it queues it anew (backend.c `io_queue_event`,
    /// `requeue_io_u`).
    pub(super) fn record_issued(
        &mut self,
        direction: IoDirection,
        offset_bytes: u64,
        len_bytes: u32,
        refused_once: bool,
        job: &str,
    ) -> Result<(), RunError> {
        self.record(direction, offset_bytes, len_bytes, refused_once);
        if self.pending.len() >= IOLOG_BUFFER_BYTES {
            self.flush(job)?;
        }
        Ok(())
    }

    fn error(&self, error: OutputError, job: &str) -> RunError {
        RunError::Plan {
            job: job.to_string(),
            reason: error.to_string(),
        }
    }

    pub(super) fn open(&mut self, job: &str) -> Result<(), RunError> {
        let file = OutputFile::create("write_iolog", &self.path).map_err(|e| self.error(e, job))?;
        self.file = Some(file);
        let label = self.file_label.clone();
        writeln!(self.pending, "{IOLOG_V2_HEADER}\n{label} add\n{label} open")
            .expect("writing to memory");
        Ok(())
    }

    fn record(
        &mut self,
        direction: IoDirection,
        offset_bytes: u64,
        len_bytes: u32,
        refused_once: bool,
    ) {
        let action = match direction {
            IoDirection::Read => "read",
            IoDirection::Write => "write",
            IoDirection::Trim => "trim",
        };
        for _ in 0..times_logged(refused_once) {
            writeln!(
                self.pending,
                "{} {action} {offset_bytes} {len_bytes}",
                self.file_label
            )
            .expect("writing to memory");
        }
    }

    /// A sync as fio logs it: `FILE sync OFFSET 0` (`datasync` for fdatasync), where fio's offset
    /// is whatever its request last carried; with one request in flight, the last I/O's. A
    /// sync queued as a request is `refused_once` by fio's busy null engine as an I/O is.
    pub(super) fn record_sync(
        &mut self,
        kind: FlushKind,
        last_offset_bytes: u64,
        refused_once: bool,
    ) {
        let action = match kind {
            FlushKind::All => "sync",
            FlushKind::Data => "datasync",
        };
        for _ in 0..times_logged(refused_once) {
            writeln!(
                self.pending,
                "{} {action} {last_offset_bytes} 0",
                self.file_label
            )
            .expect("writing to memory");
        }
    }

    fn flush(&mut self, job: &str) -> Result<(), RunError> {
        if let Some(file) = self.file.as_mut() {
            let written = file.write_all(&self.pending);
            self.pending.clear();
            written.map_err(|e| self.error(e, job))?;
        }
        Ok(())
    }

    /// fio logs its verify reads too (backend.c, `do_verify`, after reopening the file): the
    /// read-back's `extents` appended to the closed log, between an `open` and a `close`.
    /// `null_busy`: fio's null engine above depth 1 refuses each read after the first once
    /// (the one before it is unreaped), so fio logs those twice.
    pub(super) fn append_read_back(
        &mut self,
        extents: impl Iterator<Item = (u64, u64)>,
        null_busy: bool,
        job: &str,
    ) -> Result<(), RunError> {
        // The writes' log was committed when they ended; the read-back is appended through
        // the guarded append (a temporary and a rename, as every file storlab writes).
        self.close(job)?;
        for (index, (offset_bytes, len_bytes)) in extents.enumerate() {
            let refused_once = null_busy && index > 0;
            self.record(
                IoDirection::Read,
                offset_bytes,
                len_bytes as u32,
                refused_once,
            );
        }
        self.append_pending(job)
    }

    /// The lines recorded since the log was closed (a sync after the read-back), appended
    /// between an `open` and a `close` as fio logs a loop's.
    pub(super) fn append_after_close(&mut self, job: &str) -> Result<(), RunError> {
        if self.file.is_some() || self.pending.is_empty() {
            return Ok(());
        }
        self.append_pending(job)
    }

    /// The pending lines appended to the closed log between an `open` and a `close`, through
    /// the guarded append.
    fn append_pending(&mut self, job: &str) -> Result<(), RunError> {
        let label = &self.file_label;
        let lines = std::mem::take(&mut self.pending);
        let mut text = format!("{label} open\n").into_bytes();
        text.extend_from_slice(&lines);
        text.extend_from_slice(format!("{label} close\n").as_bytes());
        storlab_engine::output_file::append_whole("write_iolog", &self.path, &text)
            .map_err(|e| self.error(e, job))
    }

    pub(super) fn close(&mut self, job: &str) -> Result<(), RunError> {
        if self.file.is_none() {
            return Ok(());
        }
        let label = self.file_label.clone();
        writeln!(self.pending, "{label} close").expect("writing to memory");
        self.flush(job)?;
        match self.file.take() {
            Some(file) => file.commit().map_err(|e| self.error(e, job)),
            None => Ok(()),
        }
    }
}

impl Drop for IoLog {
    /// A worker that failed part-way keeps the log of what it issued, as fio's log written as
    /// it goes does; an error here has no one left to report to, the path was checked at open.
    fn drop(&mut self) {
        let _ = self.close("");
    }
}
