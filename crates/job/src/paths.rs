//! The files a job set writes besides its targets, and the targets it changes: what the front end
//! checks before the first I/O (the one guarded open, `storlab_engine::output_file`, and the
//! device guard, docs/decisions/0009 and 0022). Every key of the key table says which kind of
//! path its value is ([`KeyPath`], the `path` of each `keys::KEYS` row), so a new key that writes
//! a file cannot be added without saying so, and the tests that try every such key on every kind
//! of forbidden file (`crates/cli/tests/it/written_paths.rs`) cover it.

use crate::model::{JobSet, JobSpec, Target, TrimMode};
use std::path::PathBuf;

/// What the value of a key names, as far as writing goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyPath {
    /// No file storlab writes.
    None,
    /// The file the job writes (`write_iolog`; with `numjobs` above 1, worker `i` writes `FILE.i`).
    Written,
    /// The prefix of the files the job writes (fio's logs, `PREFIX_bw.N.log`).
    WrittenPrefix,
    /// A switch for a file the job writes, named after the job in the current directory
    /// (`verify_state_save`: `local-JOB-N-verify.state`).
    WrittenAfterJob,
    /// A switch for files written when verify fails, named after the target and the failing
    /// offset, so known only then (`verify_dump`); written through the same guarded open.
    WrittenOnFailure,
    /// Leads to the job's target, which a writing job writes: `filename`, `directory`,
    /// `filename_format`, the file names of a `read_iolog` trace, `replay_redirect`.
    Target,
    /// A switch that deletes the job's target after the job (`unlink`).
    DeletesTarget,
}

impl JobSpec {
    /// fio's `write_iolog` file of worker `worker_index` (from 0): the file itself, or `FILE.i`
    /// when the job has several workers (each logs its own I/O).
    pub fn write_iolog_file(&self, worker_index: u32) -> Option<PathBuf> {
        let path = self.write_iolog.as_ref()?;
        if self.numjobs > 1 {
            let mut name = path.clone().into_os_string();
            name.push(format!(".{worker_index}"));
            Some(PathBuf::from(name))
        } else {
            Some(path.clone())
        }
    }

    /// Whether the job saves fio's verify state at each clone's end: a writing job with
    /// `verify_state_save` (fio's backend.c saves it at the thread's end).
    pub fn saves_verify_state(&self) -> bool {
        self.verify_state_save && self.read_percent < 100
    }

    /// Whether the job changes its target: it writes, trims, deletes it afterwards, or replays
    /// a trace that writes or trims.
    pub fn changes_target(&self) -> bool {
        use crate::iolog::TraceAction;
        let replay_changes = self.replay.as_ref().is_some_and(|replay| {
            replay
                .trace
                .entries
                .iter()
                .any(|entry| matches!(entry.action, TraceAction::Write | TraceAction::Trim))
        });
        self.read_percent < 100 || self.trim != TrimMode::None || self.unlink || replay_changes
    }

    /// The furthest byte any worker of the job touches, to which its target file is laid out
    /// (0 when the job covers the whole target or a share of it: then the target's own size
    /// decides).
    pub fn laid_out_bytes(&self) -> u64 {
        if !self.target_shares.is_unset() {
            return 0;
        }
        // A replay lays out a missing file for its trace but never grows an existing one: a
        // trace line past its end is refused with its line (`storlab_runner::check_replay_fits`).
        if let (Some(_), Target::Path(path)) = (&self.replay, &self.target) {
            if path.exists() {
                return 0;
            }
        }
        // fio's `filesize` is the file's size, every clone's region ending there.
        if let Some(filesize) = self.filesize_bytes {
            return filesize;
        }
        match self.size_bytes {
            Some(size) => self
                .offset_bytes
                .saturating_add(
                    u64::from(self.numjobs.saturating_sub(1))
                        .saturating_mul(self.offset_increment_bytes),
                )
                .saturating_add(size),
            None => 0,
        }
    }

    /// Whether opening the job's target lays out (writes) bytes of it: a regular file shorter
    /// than the job's reach, even for a job that only reads (fio extends it the same way).
    pub fn grows_target(&self) -> bool {
        self.target_path()
            .and_then(|path| std::fs::metadata(path).ok())
            .is_some_and(|meta| meta.is_file() && self.laid_out_bytes() > meta.len())
    }

    /// The files `unlink=1` deletes at the job's end, if they are regular files then: the
    /// target named, or on the null engine (which opens none) the name fio still gives each
    /// clone's file, `filename` or `NAME.SUBJOB.0` (filesetup.c `close_and_free_files` unlinks
    /// each file of type "file", which a name that is no device, pipe or directory is).
    pub fn unlinked_files(&self) -> Vec<PathBuf> {
        if !self.unlink {
            return Vec::new();
        }
        match &self.target {
            Target::Path(path) => vec![path.clone()],
            Target::None => match &self.fio_file_name {
                Some(name) => vec![PathBuf::from(name)],
                None => (0..self.numjobs)
                    .map(|clone| PathBuf::from(format!("{}.{clone}.0", self.name)))
                    .collect(),
            },
            Target::TempFileIn(_) | Target::Sim(_) => Vec::new(),
        }
    }

    /// The job's target file or device, when it has one by name.
    pub fn target_path(&self) -> Option<&std::path::Path> {
        match &self.target {
            Target::Path(path) => Some(path),
            _ => None,
        }
    }
}

/// fio's name for the verify state file of clone `thread_index` of job `name`, in the current
/// directory (verify.c `verify_state_gen_name` with its "local" prefix).
pub fn verify_state_file(name: &str, thread_index: u32) -> PathBuf {
    PathBuf::from(format!("local-{name}-{thread_index}-verify.state"))
}

impl JobSet {
    /// Every file the set's jobs write besides their targets, with the key that asks for it:
    /// fio's logs (each once: `per_job_logs=0` clones share one), `write_iolog` files and verify
    /// state files, each as often as it is written, so that two writers of one file can be
    /// refused. Not `verify_dump`'s, which are named only when verify fails.
    pub fn written_paths(&self) -> Vec<(&'static str, PathBuf)> {
        let mut paths = self.fio_log_paths();
        let mut add = |key: &'static str, path: PathBuf| paths.push((key, path));
        for (index, job) in self.jobs.iter().enumerate() {
            let first_thread_index = self.first_thread_number(index).saturating_sub(1);
            for clone in 0..job.numjobs {
                if let Some(path) = job.write_iolog_file(clone) {
                    add("write_iolog", path);
                }
                if job.saves_verify_state() {
                    let thread_index = first_thread_index.saturating_add(clone);
                    add(
                        "verify_state_save",
                        verify_state_file(&job.name, thread_index),
                    );
                }
            }
        }
        paths
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KEYS;

    /// The keys marked as writing a file are the ones `written_paths` names a file for: a key
    /// marked without its file listed (or listed without its mark) fails here.
    #[test]
    fn every_key_marked_as_writing_names_a_written_path() {
        for key in KEYS {
            let value = match key.path {
                KeyPath::Written | KeyPath::WrittenPrefix => "out/f",
                KeyPath::WrittenAfterJob => "1",
                _ => continue,
            };
            let flags: Vec<String> = [
                "--name=j",
                "--rw=write",
                "--size=64k",
                "--filename=sim:usb3-uas-ssd",
                "--verify=crc32c",
            ]
            .iter()
            .map(|s| s.to_string())
            .chain([format!("--{}={value}", key.name)])
            .collect();
            let set =
                crate::parse_flags(&flags, None).unwrap_or_else(|e| panic!("{}: {e}", key.name));
            let written = set.written_paths();
            assert!(
                written.iter().any(|(k, _)| *k == key.name),
                "{} is marked as writing a file but the job set names none for it: {written:?}",
                key.name
            );
        }
    }

    #[test]
    fn each_clone_logs_and_saves_its_own_file() {
        let flags: Vec<String> = [
            "--name=j",
            "--rw=write",
            "--size=64k",
            "--numjobs=2",
            "--filename=sim:usb3-uas-ssd",
            "--verify=crc32c",
            "--write_iolog=io.log",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let set = crate::parse_flags(&flags, None).unwrap();
        let written: Vec<PathBuf> = set.written_paths().into_iter().map(|(_, p)| p).collect();
        for expected in [
            "io.log.0",
            "io.log.1",
            "local-j-0-verify.state",
            "local-j-1-verify.state",
        ] {
            assert!(written.contains(&PathBuf::from(expected)), "{written:?}");
        }
    }
}
