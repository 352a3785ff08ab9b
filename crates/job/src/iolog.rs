//! fio's `read_iolog`: a recorded I/O trace in fio's iolog format, version 2 or 3 (fio
//! iolog.c, `read_iolog`), read once when the job is built so that a bad line is refused before
//! anything runs, with the trace's file and line.
//!
//! Version 2 lines are `FILE add|open|close` or `FILE ACTION OFFSET LENGTH`, where ACTION is
//! `read`, `write`, `trim`, `sync`, `datasync` or `wait` (wait: OFFSET is the time since the job
//! started, in milliseconds, before which the next line may not go). Version 3 puts the time of
//! each line, in microseconds, in front; fio replays the gaps between those times and ignores
//! `wait`.

use std::path::{Path, PathBuf};

/// The first line of each format fio reads.
const HEADER_V2: &str = "fio version 2 iolog";
const HEADER_V3: &str = "fio version 3 iolog";

/// What one line of a trace asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceAction {
    Read,
    Write,
    Trim,
    /// `sync` (fsync) or `datasync` (fdatasync): once the worker's I/O has finished.
    Sync {
        data_only: bool,
    },
    /// Version 2's `wait`: not before this many microseconds after the job started.
    WaitUntil {
        since_start_us: u64,
    },
}

/// One replayed line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceEntry {
    /// The line of the trace, for messages.
    pub line: u32,
    pub action: TraceAction,
    pub offset_bytes: u64,
    pub len_bytes: u32,
    /// Version 3: the gap to the line before, in microseconds (file actions' gaps included, as
    /// fio waits on those too); 0 in version 2.
    pub delay_us: u64,
}

/// A trace, read whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoTrace {
    /// Where it was read from, as the job names it.
    pub path: PathBuf,
    /// The format version, 2 or 3.
    pub version: u8,
    /// The files the trace's I/O lines name, in order of first use, each with that line.
    pub files: Vec<(String, u32)>,
    pub entries: Vec<TraceEntry>,
}

impl IoTrace {
    /// Reads and checks the trace at `path`; the error is one line naming the file and line.
    pub fn read(path: &Path) -> Result<IoTrace, String> {
        let text = std::fs::read(path)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        let text = String::from_utf8(text).map_err(|_| {
            format!(
                "{}: not a text iolog (blktrace traces are not supported)",
                path.display()
            )
        })?;
        Self::parse(path, &text)
    }

    /// Reads a trace from `text`, naming it `path` in errors.
    pub fn parse(path: &Path, text: &str) -> Result<IoTrace, String> {
        let at = |line: usize, what: String| format!("{}:{line}: {what}", path.display());
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        let Some(version) = lines.next().and_then(|(_, l)| version_of(l.trim_end())) else {
            return Err(at(
                1,
                format!("not an iolog: the first line must be '{HEADER_V2}' or '{HEADER_V3}'"),
            ));
        };
        let mut trace = IoTrace {
            path: path.to_path_buf(),
            version,
            files: Vec::new(),
            entries: Vec::new(),
        };
        let mut last_time_us: Option<u64> = None;
        let mut pending_delay_us = 0u64;
        for (number, line) in lines {
            let mut fields: Vec<&str> = line.split_whitespace().collect();
            if fields.is_empty() {
                continue;
            }
            let line_u32 =
                u32::try_from(number).map_err(|_| at(number, "trace too long".into()))?;
            if version == 3 {
                let time_us: u64 = fields[0].parse().map_err(|_| {
                    at(
                        number,
                        format!("'{}' is not a time in microseconds", fields[0]),
                    )
                })?;
                // fio: no delay before the first line, nor when time goes backwards.
                if let Some(last) = last_time_us {
                    pending_delay_us += time_us.saturating_sub(last);
                }
                last_time_us = Some(time_us);
                fields.remove(0);
            }
            match fields.as_slice() {
                [_file, "add" | "open" | "close"] => {}
                [_file, other] => {
                    return Err(at(
                        number,
                        format!("unknown file action '{other}' (add, open or close)"),
                    ))
                }
                [file, action, offset, len] => {
                    let offset_bytes: u64 = offset
                        .parse()
                        .map_err(|_| at(number, format!("'{offset}' is not an offset in bytes")))?;
                    let len_bytes: u32 = len
                        .parse()
                        .map_err(|_| at(number, format!("'{len}' is not a length in bytes")))?;
                    let Some(action) = trace_action(action, offset_bytes, version)
                        .map_err(|what| at(number, what))?
                    else {
                        // fio ignores `wait` in version 3 (its timestamps do the waiting).
                        continue;
                    };
                    let moves_data = matches!(
                        action,
                        TraceAction::Read | TraceAction::Write | TraceAction::Trim
                    );
                    if moves_data && len_bytes == 0 {
                        return Err(at(number, format!("{} of 0 bytes", fields[1])));
                    }
                    if moves_data && offset_bytes.checked_add(u64::from(len_bytes)).is_none() {
                        return Err(at(number, "offset + length is past 2^64 bytes".into()));
                    }
                    if moves_data && !trace.files.iter().any(|(f, _)| f == file) {
                        trace.files.push((file.to_string(), line_u32));
                    }
                    trace.entries.push(TraceEntry {
                        line: line_u32,
                        action,
                        offset_bytes: if moves_data { offset_bytes } else { 0 },
                        len_bytes: if moves_data { len_bytes } else { 0 },
                        delay_us: std::mem::take(&mut pending_delay_us),
                    });
                }
                _ => {
                    return Err(at(
                        number,
                        format!(
                            "'{}' is not an iolog line (FILE ACTION [OFFSET LENGTH]{})",
                            line.trim(),
                            if version == 3 { " after the time" } else { "" }
                        ),
                    ))
                }
            }
        }
        if trace.files.is_empty() {
            return Err(format!(
                "{}: the trace has no read, write or trim",
                path.display()
            ));
        }
        Ok(trace)
    }

    /// The trace without the lines whose action `skip` says (fio's `replay_skip`); their
    /// recorded gaps go to the next line kept.
    pub fn without(&self, skip: impl Fn(TraceAction) -> bool) -> IoTrace {
        let mut carried_us = 0u64;
        let mut entries = Vec::with_capacity(self.entries.len());
        for entry in &self.entries {
            if skip(entry.action) {
                carried_us += entry.delay_us;
                continue;
            }
            entries.push(TraceEntry {
                delay_us: entry.delay_us + std::mem::take(&mut carried_us),
                ..*entry
            });
        }
        IoTrace {
            path: self.path.clone(),
            version: self.version,
            files: self.files.clone(),
            entries,
        }
    }

    /// Reads, writes and trims in the trace.
    pub fn counts(&self) -> (u64, u64, u64) {
        let count =
            |wanted: TraceAction| self.entries.iter().filter(|e| e.action == wanted).count() as u64;
        (
            count(TraceAction::Read),
            count(TraceAction::Write),
            count(TraceAction::Trim),
        )
    }

    /// The largest read, write or trim, bytes.
    pub fn max_len_bytes(&self) -> u64 {
        self.entries
            .iter()
            .map(|e| u64::from(e.len_bytes))
            .max()
            .unwrap_or(0)
    }

    /// The furthest byte the trace touches, and the bytes it moves in all.
    pub fn extent_bytes(&self) -> (u64, u64) {
        self.entries.iter().fold((0, 0), |(end, sum), e| {
            let len = u64::from(e.len_bytes);
            (end.max(e.offset_bytes + len), sum + len)
        })
    }
}

/// A trace to replay and how (fio's `read_iolog`, `replay_no_stall`, `replay_time_scale`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplaySpec {
    pub trace: std::sync::Arc<IoTrace>,
    /// fio's `replay_no_stall`: as fast as the queue allows, ignoring the recorded timing.
    pub no_stall: bool,
    /// fio's `replay_time_scale`: the recorded gaps scaled by 100 / this percent.
    pub time_scale_percent: u32,
}

impl ReplaySpec {
    /// The wait before `entry`, ns, under this replay's timing.
    pub fn delay_ns(&self, entry: &TraceEntry) -> u64 {
        if self.no_stall {
            return 0;
        }
        let scaled_us =
            u128::from(entry.delay_us) * 100 / u128::from(self.time_scale_percent.max(1));
        u64::try_from(scaled_us * 1000).unwrap_or(u64::MAX)
    }
}

/// The iolog version a trace's first line names, if it is an iolog header.
fn version_of(first_line: &str) -> Option<u8> {
    match first_line {
        HEADER_V2 => Some(2),
        HEADER_V3 => Some(3),
        _ => None,
    }
}

/// The action an I/O line names (its `offset_bytes` is a `wait`'s time in milliseconds), `None`
/// for a `wait` of a `version` 3 trace, or what is wrong with it.
fn trace_action(
    action: &str,
    offset_bytes: u64,
    version: u8,
) -> Result<Option<TraceAction>, String> {
    Ok(Some(match action {
        "read" => TraceAction::Read,
        "write" => TraceAction::Write,
        "trim" => TraceAction::Trim,
        "sync" => TraceAction::Sync { data_only: false },
        "datasync" => TraceAction::Sync { data_only: true },
        // fio ignores `wait` in version 3 (its timestamps do the waiting).
        "wait" if version == 3 => return Ok(None),
        "wait" => TraceAction::WaitUntil {
            since_start_us: offset_bytes.saturating_mul(1000),
        },
        other => {
            return Err(format!(
                "unknown action '{other}' (read, write, trim, sync, datasync, wait)"
            ))
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<IoTrace, String> {
        IoTrace::parse(Path::new("t.log"), text)
    }

    #[test]
    fn version_2_lines_become_entries() {
        let trace = parse(
            "fio version 2 iolog\n/f add\n/f open\n/f write 0 4096\n/f wait 5 0\n/f sync 0 0\n/f read 4096 512\n/f trim 8192 4096\n/f close\n",
        )
        .unwrap();
        assert_eq!(trace.version, 2);
        assert_eq!(trace.files, vec![("/f".to_string(), 4)]);
        let actions: Vec<TraceAction> = trace.entries.iter().map(|e| e.action).collect();
        assert_eq!(
            actions,
            vec![
                TraceAction::Write,
                TraceAction::WaitUntil {
                    since_start_us: 5000
                },
                TraceAction::Sync { data_only: false },
                TraceAction::Read,
                TraceAction::Trim
            ]
        );
        assert_eq!(trace.counts(), (1, 1, 1));
        assert_eq!(trace.extent_bytes(), (12288, 8704));
        assert_eq!(trace.max_len_bytes(), 4096);
    }

    #[test]
    fn version_3_gaps_are_the_delays_and_wait_is_ignored() {
        let trace = parse(
            "fio version 3 iolog\n100 /f add\n150 /f open\n1000 /f read 0 4096\n1000 /f wait 9 0\n3500 /f read 4096 4096\n",
        )
        .unwrap();
        let delays: Vec<u64> = trace.entries.iter().map(|e| e.delay_us).collect();
        assert_eq!(delays, vec![900, 2500]);
        let replay = ReplaySpec {
            trace: std::sync::Arc::new(trace),
            no_stall: false,
            time_scale_percent: 200,
        };
        assert_eq!(replay.delay_ns(&replay.trace.entries[1]), 1_250_000);
    }

    #[test]
    fn bad_lines_name_the_file_and_line() {
        let cases = [
            ("fio version 1 iolog\n", "t.log:1: not an iolog"),
            (
                "fio version 2 iolog\n/f add\n/f frob 0 1\n",
                "t.log:3: unknown action 'frob'",
            ),
            (
                "fio version 2 iolog\n/f read 0\n",
                "t.log:2: '/f read 0' is not an iolog line",
            ),
            (
                "fio version 2 iolog\n/f read x 1\n",
                "t.log:2: 'x' is not an offset",
            ),
            (
                "fio version 2 iolog\n/f read 0 -1\n",
                "t.log:2: '-1' is not a length",
            ),
            (
                "fio version 2 iolog\n/f read 0 0\n",
                "t.log:2: read of 0 bytes",
            ),
            (
                "fio version 2 iolog\n/f shut\n",
                "t.log:2: unknown file action 'shut'",
            ),
            (
                "fio version 3 iolog\nsoon /f read 0 1\n",
                "t.log:2: 'soon' is not a time",
            ),
            (
                "fio version 2 iolog\n/f add\n",
                "t.log: the trace has no read, write or trim",
            ),
        ];
        for (text, expected) in cases {
            let error = parse(text).unwrap_err();
            assert!(error.starts_with(expected), "{error}");
            assert!(!error.contains('\n'));
        }
    }
}
