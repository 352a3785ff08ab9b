//! fio's I/O replay keys: recording a job's I/O (`write_iolog`) and replaying a trace (`read_iolog`, `replay_*`).

use super::values::to_u32;
use super::{ApplyError, JobDraft, KeyDef};
use crate::error::{JobError, Location};
use crate::iolog::{IoTrace, ReplaySpec};
use crate::model::{BlockSizeSpec, JobSpec};
use crate::paths::KeyPath;
use crate::size::{parse_bool, parse_count};
use std::path::{Path, PathBuf};

/// The I/O replay keys as set (`write_iolog`, `read_iolog`, `replay_*`).
#[derive(Clone, Debug, Default)]
pub(super) struct ReplayDraft {
    pub(super) write_iolog: Option<PathBuf>,
    /// fio's `read_iolog`: the trace, read when the key was applied.
    pub(super) read_iolog: Option<std::sync::Arc<IoTrace>>,
    /// fio's `replay_redirect`: every I/O of the trace goes to this file.
    pub(super) redirect: Option<String>,
    pub(super) no_stall: Option<bool>,
    pub(super) time_scale_percent: Option<u32>,
    /// fio's `replay_skip`: the trace's actions left out.
    pub(super) skip: Option<Vec<ReplaySkip>>,
}

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "write_iolog",
        aliases: &[],
        bare: false,
        meaning: "record every I/O issued in this file (fio's iolog format, version 2)",
        field: "write_iolog",
        path: KeyPath::Written,
        apply: |d, v| {
            d.replay.write_iolog = Some(PathBuf::from(v));
            Ok(())
        },
    },
    KeyDef {
        name: "read_iolog",
        aliases: &[],
        bare: false,
        meaning: "replay the I/O recorded in this trace (fio's iolog format, version 2 or 3)",
        field: "read_iolog",
        path: KeyPath::Target,
        apply: |d, v| {
            let trace = IoTrace::read(Path::new(v)).map_err(ApplyError::Invalid)?;
            d.replay.read_iolog = Some(std::sync::Arc::new(trace));
            Ok(())
        },
    },
    KeyDef {
        name: "replay_redirect",
        aliases: &[],
        bare: false,
        meaning: "send every I/O of the read_iolog trace to this file (or sim:STACK)",
        field: "replay_redirect",
        path: KeyPath::Target,
        apply: |d, v| {
            if v.is_empty() {
                return Err(ApplyError::Invalid("needs a file name".into()));
            }
            d.replay.redirect = Some(v.to_string());
            Ok(())
        },
    },
    KeyDef {
        name: "replay_skip",
        aliases: &[],
        bare: false,
        meaning: "leave these actions of the read_iolog trace out: read, write, trim, sync (comma-separated)",
        field: "replay_skip",
        path: KeyPath::None,
        apply: |d, v| {
            let skipped = v
                .split(',')
                .map(|name| match name.trim() {
                    "read" => Ok(ReplaySkip::Read),
                    "write" => Ok(ReplaySkip::Write),
                    "trim" => Ok(ReplaySkip::Trim),
                    "sync" => Ok(ReplaySkip::Sync),
                    other => Err(ApplyError::Invalid(format!(
                        "'{other}' is not read, write, trim or sync"
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?;
            d.replay.skip = Some(skipped);
            Ok(())
        },
    },
    KeyDef {
        name: "replay_no_stall",
        aliases: &[],
        bare: true,
        meaning: "replay the read_iolog trace as fast as the queue allows, not at its recorded pace",
        field: "replay_no_stall",
        path: KeyPath::None,
        apply: |d, v| {
            d.replay.no_stall = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "replay_time_scale",
        aliases: &[],
        bare: false,
        meaning: "replay the trace's recorded gaps at this percent of their speed (default 100)",
        field: "replay_time_scale",
        path: KeyPath::None,
        apply: |d, v| {
            let percent = parse_count(v)?;
            if percent == 0 {
                return Err(ApplyError::Invalid("must be at least 1 (percent)".into()));
            }
            d.replay.time_scale_percent = Some(to_u32(percent, v)?);
            Ok(())
        },
    },
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ReplaySkip {
    Read,
    Write,
    Trim,
    /// `sync` lines. fio 3.33 skips `sync` and keeps `datasync` (iolog.c checks the skip mask
    /// for `sync` only); so does storlab.
    Sync,
}

impl ReplaySkip {
    fn matches(self, action: crate::iolog::TraceAction) -> bool {
        use crate::iolog::TraceAction as A;
        matches!(
            (self, action),
            (ReplaySkip::Read, A::Read)
                | (ReplaySkip::Write, A::Write)
                | (ReplaySkip::Trim, A::Trim)
                | (ReplaySkip::Sync, A::Sync { data_only: false })
        )
    }
}

impl JobDraft {
    /// The file a replayed trace goes to: `replay_redirect`, or the one file its I/O names (fio
    /// adds the trace's files to the job, and its I/O goes there, whatever `filename` says).
    pub(super) fn replay_filename(&self) -> Option<String> {
        let trace = self.replay.read_iolog.as_ref()?;
        self.replay
            .redirect
            .clone()
            .or_else(|| trace.files.first().map(|(file, _)| file.clone()))
    }

    /// `write_iolog`, and the job as a replay of its `read_iolog` trace: the trace decides
    /// directions, sizes and offsets. Without `size` the region reaches the trace's furthest byte, or the bytes it
    /// moves if more (fio's `size` for a replay is the sum of the trace's lengths), rounded up
    /// to the alignment so the region holds it whole.
    pub(super) fn apply_replay(&self, spec: &mut JobSpec) {
        spec.write_iolog = self.replay.write_iolog.clone();
        let Some(trace) = &self.replay.read_iolog else {
            return;
        };
        let trace = match &self.replay.skip {
            Some(skipped) => std::sync::Arc::new(
                trace.without(|action| skipped.iter().any(|s| s.matches(action))),
            ),
            None => trace.clone(),
        };
        let (reads, writes, trims) = trace.counts();
        spec.read_percent = match (reads, writes + trims) {
            (_, 0) => 100,
            (0, _) => 0,
            (r, w) => (r * 100 / (r + w)).clamp(1, 99) as u8,
        };
        spec.random_percent = 0;
        spec.random_percent_write = None;
        // The buffers must hold the largest I/O of the trace; a block size only sizes them.
        let largest = trace
            .max_len_bytes()
            .next_multiple_of(crate::validate::SECTOR_BYTES)
            .max(crate::validate::SECTOR_BYTES);
        spec.block_size_read = BlockSizeSpec::Fixed(largest);
        spec.block_size_write = BlockSizeSpec::Fixed(largest);
        if self.size.is_none() && self.filesize_bytes.is_none() {
            let (end_bytes, moved_bytes) = trace.extent_bytes();
            let align = spec.align_bytes.max(1);
            spec.size_bytes = Some(end_bytes.max(moved_bytes).next_multiple_of(align));
        }
        spec.replay = Some(ReplaySpec {
            trace,
            no_stall: self.replay.no_stall.unwrap_or(false),
            time_scale_percent: self.replay.time_scale_percent.unwrap_or(100),
        });
    }

    pub(super) fn check_replay(&self, job_location: &Location) -> Result<(), JobError> {
        let Some(trace) = &self.replay.read_iolog else {
            return Ok(());
        };
        let setter = self
            .provenance
            .iter()
            .rev()
            .find(|p| p.field == "read_iolog");
        let refuse = |detail: String| {
            JobError::unsupported(
                setter.map_or_else(|| job_location.clone(), |p| p.location.clone()),
                setter.map_or("read_iolog", |p| p.key_as_written.as_str()),
                setter.and_then(|p| p.value.clone()),
                detail,
            )
        };
        let redirected = self.replay.redirect.is_some() || self.target_override.is_some();
        if let (false, Some((second, line))) = (redirected, trace.files.get(1)) {
            return Err(refuse(format!(
                "{}:{line}: a second file, {second}: storlab replays one file per job (replay_redirect=FILE sends every I/O to one)",
                trace.path.display()
            )));
        }
        if self.loops.is_some_and(|l| l > 1) {
            return Err(refuse(
                "storlab replays a trace once; loops above 1 are refused with it".into(),
            ));
        }
        if self.verify.enabled == Some(true) {
            return Err(refuse(
                "storlab's verify checks its own generated I/O, not a replayed trace; drop verify"
                    .into(),
            ));
        }
        Ok(())
    }
}
