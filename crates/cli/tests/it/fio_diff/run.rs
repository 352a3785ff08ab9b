//! Runs one job under one tool in a directory of its own, on a fresh sparse data file, with a
//! hard timeout (a hang is a result, never a stuck suite), and collects what fio lets one
//! compare: exit status, the iolog, the JSON report and the bytes of the file.

use super::jobs::{Job, FILE_BYTES};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longer than any generated job takes under either tool (well under a second each on an idle
/// machine, a few seconds on a loaded one): a job still running then is a hang.
pub const PROCESS_TIMEOUT: Duration = Duration::from_secs(20);
/// How often a running process is polled for its end.
const POLL_INTERVAL: Duration = Duration::from_millis(10);
/// The data file's name; relative, so both tools' logs name it alike.
const DATA: &str = "data";
const IOLOG: &str = "io.log";
const REPORT: &str = "report.json";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    Fio,
    Storlab,
}

/// One logged action: `read`, `write`, `trim`, `sync`, `datasync`, with offset and length.
pub type Action = (String, u64, u64);

/// What one tool did with a job.
pub enum Ran {
    /// Still running after `PROCESS_TIMEOUT` (then killed, with its process group).
    Hung,
    Exited(Box<Exited>),
}

pub struct Exited {
    pub code: i32,
    pub stderr: String,
    /// Every iolog section (fio appends one per worker to one file, storlab writes
    /// `io.log.N` per worker), in order.
    pub actions: Vec<Action>,
    /// Lines of the log that are no action, header or file event: fio's `numjobs` clones
    /// append to one log through 8 KiB stdio buffers (iolog.c, `init_iolog_write`), so one
    /// clone's flush can land inside a line the other has only half flushed, tearing both.
    pub torn_lines: usize,
    /// The logs' bytes: how many buffer flushes, and so tears, there can have been.
    pub log_bytes: usize,
    pub report: Option<serde_json::Value>,
    pub data: Vec<u8>,
}

/// Runs `job` under `tool` in a new directory under `scratch`.
pub fn run(tool: Tool, job: &Job, scratch: &Path) -> Ran {
    let dir = scratch.join(match tool {
        Tool::Fio => "fio",
        Tool::Storlab => "storlab",
    });
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join(DATA);
    std::fs::File::create(&data)
        .unwrap()
        .set_len(FILE_BYTES)
        .unwrap();
    // storlab's `json` is its own richer report; `fio-json` is fio's layout.
    let (mut command, format) = match tool {
        Tool::Fio => (Command::new("fio"), "json"),
        Tool::Storlab => {
            // `STORLAB_FUZZ_BIN`: another build of storlab to judge (an A/B check of a change).
            let mut storlab = match std::env::var_os("STORLAB_FUZZ_BIN") {
                Some(bin) => Command::new(bin),
                None => crate::common::storlab(),
            };
            storlab.args(["run", "--no-db"]);
            (storlab, "fio-json")
        }
    };
    command
        .current_dir(&dir)
        .arg("--name=fuzz")
        .arg(format!("--filename={DATA}"))
        .arg(format!("--write_iolog={IOLOG}"))
        .arg(format!("--output-format={format}"))
        .arg(format!("--output={REPORT}"))
        .args(job.flags())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.join("stdout")).unwrap())
        .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
        // Its own process group, so a timeout kills fio's worker processes too.
        .process_group(0);
    let Some(code) = wait_with_timeout(&mut command) else {
        return Ran::Hung;
    };
    let (actions, torn_lines, log_bytes) = actions(&dir);
    Ran::Exited(Box::new(Exited {
        code,
        stderr: std::fs::read_to_string(dir.join("stderr")).unwrap_or_default(),
        actions,
        torn_lines,
        log_bytes,
        report: report(&dir.join(REPORT)),
        data: std::fs::read(&data).unwrap_or_default(),
    }))
}

/// The exit code (a signal's number above 128, as a shell shows it), or None after a timeout.
fn wait_with_timeout(command: &mut Command) -> Option<i32> {
    let mut child = command.spawn().expect("the tool starts");
    let deadline = Instant::now() + PROCESS_TIMEOUT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            use std::os::unix::process::ExitStatusExt;
            return Some(status.code().unwrap_or(128 + status.signal().unwrap_or(0)));
        }
        if Instant::now() > deadline {
            // fio's job processes may leave its process group (a soak once left five spinning
            // for half an hour): its children first, while they are still its children.
            let pid = child.id().to_string();
            let _ = Command::new("pkill").args(["-KILL", "-P", &pid]).status();
            let group = format!("-{pid}");
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// Every read, write, trim and sync in the iolog files of `dir`, fio's `io.log` or storlab's
/// `io.log.N` in worker order, the count of torn lines and the logs' bytes.
fn actions(dir: &Path) -> (Vec<Action>, usize, usize) {
    let mut logs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            let worker = match name.strip_prefix(IOLOG)? {
                "" => 0,
                suffix => suffix.strip_prefix('.')?.parse::<u64>().ok()?,
            };
            Some((worker, name))
        })
        .collect();
    logs.sort();
    let mut all = (Vec::new(), 0, 0);
    for (_, name) in &logs {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let (actions, torn) = parse_iolog(&text);
        all.0.extend(actions);
        all.1 += torn;
        all.2 += text.len();
    }
    all
}

/// The actions of fio's iolog format 2 (`FILE ACTION OFFSET LENGTH`) or 3 (after a
/// timestamp); several sections (one per worker) may follow each other. Also the lines that
/// are neither actions nor headers nor file events (`FILE add|open|close`): torn ones.
fn parse_iolog(text: &str) -> (Vec<Action>, usize) {
    let mut timestamped = false;
    let mut found = Vec::new();
    let mut torn = 0;
    for line in text.lines() {
        match line {
            "fio version 2 iolog" => timestamped = false,
            "fio version 3 iolog" => timestamped = true,
            _ => {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let fields = &fields[usize::from(timestamped).min(fields.len())..];
                let parsed = match fields {
                    [_, action, offset, len] => match (offset.parse(), len.parse()) {
                        (Ok(offset), Ok(len)) if ACTIONS.contains(action) => {
                            Some((action.to_string(), offset, len))
                        }
                        _ => None,
                    },
                    _ => None,
                };
                match parsed {
                    Some(action) => found.push(action),
                    None if !matches!(fields, [] | [_, "add" | "open" | "close"]) => torn += 1,
                    None => {}
                }
            }
        }
    }
    (found, torn)
}

/// The actions an iolog line may carry.
const ACTIONS: [&str; 5] = ["read", "write", "trim", "sync", "datasync"];

/// The JSON report, read from its first `{` (fio may put notes before it).
fn report(path: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text[text.find('{')?..]).ok()
}
