//! The live view (issue 38, docs/decisions/0037-live-view.md): a terminal gets the moving chart
//! once a second and has it erased at the end (also after Ctrl-C, with the finished results
//! still written); a pipe gets plain status lines at `--status-interval`; JSON on stdout with
//! stderr redirected gets nothing besides the finished job's line. The terminal is a
//! pseudo-terminal made by util-linux's `script`.

use crate::common;
use std::path::Path;
use std::process::Command;

/// A time-based null job of `runtime` (no file, no device).
fn null_job(runtime: &str) -> Vec<String> {
    [
        "run",
        "--no-db",
        "--name=live",
        "--ioengine=null",
        "--rw=randread",
        "--bs=4k",
        "--size=64m",
        "--time_based",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("--runtime={runtime}")])
    .collect()
}

/// Runs `shell_command` under `script`, stderr and stdout on a pseudo-terminal; returns what
/// the terminal received.
fn on_a_terminal(dir: &Path, shell_command: &str) -> String {
    let out = Command::new("script")
        .args(["-qec", shell_command, "/dev/null"])
        .current_dir(dir)
        .env("STORLAB_DB", dir.join("results.sqlite"))
        .output()
        .expect("script (util-linux) runs: apt-get install bsdutils");
    assert!(
        out.status.success(),
        "{shell_command}: {}",
        common::stderr(&out)
    );
    common::stdout(&out)
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_storlab")
}

/// How many times the chart was drawn: each draw starts with its heading.
fn chart_draws(terminal: &str) -> usize {
    terminal.matches("storlab  job 'live'").count()
}

#[test]
fn a_terminal_gets_the_chart_every_second_then_erased() {
    let dir = tempfile::tempdir().unwrap();
    let command = format!(
        "{} {} --output-format=json > out.json",
        bin(),
        null_job("3500ms").join(" ")
    );
    let terminal = on_a_terminal(dir.path(), &command);
    let draws = chart_draws(&terminal);
    // Once a second over 3.5 s: 3 draws, give or take one for the start-up of a loaded machine.
    assert!((2..=4).contains(&draws), "{draws} draws:\n{terminal:?}");
    for figure in [" MB/s ", " IOPS ", " p50 ", " p99 ", "ETA "] {
        assert!(terminal.contains(figure), "{figure}:\n{terminal:?}");
    }
    // A sparkline of the seconds measured, and redraws in place (cursor up over the chart).
    assert!(
        terminal.contains(['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█']),
        "{terminal:?}"
    );
    assert!(terminal.contains("\x1b[5A"), "{terminal:?}");
    // At the end the chart is erased; the finished job's line stays.
    assert!(terminal.trim_end().ends_with("\x1b[J"), "{terminal:?}");
    assert!(
        terminal.contains("storlab: [1/1] live done: "),
        "{terminal:?}"
    );
    let json = std::fs::read_to_string(dir.path().join("out.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&json).expect("JSON results on stdout");
    assert_eq!(doc["jobs"][0]["name"], "live", "{json}");
}

#[test]
fn ctrl_c_erases_the_chart_and_keeps_the_results() {
    let dir = tempfile::tempdir().unwrap();
    // `timeout -s INT` is the Ctrl-C, 2.5 s into a 60 s job. `--foreground`: without it
    // timeout signals the child and then its own process group, the child in it, so storlab
    // could take the second SIGINT as a second Ctrl-C and abort before erasing the chart (a
    // terminal's Ctrl-C is one signal to the foreground group).
    let command = format!(
        "timeout --foreground -s INT 2.5 {} {} --output-format=json > out.json; true",
        bin(),
        null_job("60").join(" ")
    );
    let terminal = on_a_terminal(dir.path(), &command);
    assert!(chart_draws(&terminal) >= 1, "{terminal:?}");
    assert!(
        terminal.contains("stopping after the I/O in flight"),
        "no Ctrl-C message:\n{terminal:?}"
    );
    // The chart is erased once the run stops, and not drawn again; the run's warnings follow.
    // (The Ctrl-C line comes before or after the erase: the handler's thread prints it while
    // the run winds down.)
    let (_, after_erase) = terminal
        .rsplit_once("\x1b[J")
        .unwrap_or_else(|| panic!("chart not erased:\n{terminal:?}"));
    assert!(!after_erase.contains("\x1b["), "{after_erase:?}");
    assert!(!after_erase.contains("storlab  "), "{after_erase:?}");
    let json = std::fs::read_to_string(dir.path().join("out.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&json).expect("results after Ctrl-C");
    let ios = doc["jobs"][0]["read"]["ios"].as_u64().unwrap_or(0);
    assert!(ios > 0, "{json}");
}

#[test]
fn a_pipe_gets_plain_status_lines_at_the_interval() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = null_job("2300ms");
    args.push("--status-interval=500ms".into());
    let out = common::run_in(dir.path(), &args);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let stderr = common::stderr(&out);
    assert!(
        !stderr.contains('\x1b'),
        "no escape sequences on a pipe: {stderr:?}"
    );
    let times: Vec<f64> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("storlab: status at "))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    // Every 0.5 s while the 2.3 s job runs: at 0.5, 1.0, 1.5, 2.0 s (one more or less when
    // the job starts late or ends late on a loaded machine).
    assert!((3..=5).contains(&times.len()), "{stderr}");
    for pair in times.windows(2) {
        let step = pair[1] - pair[0];
        assert!((0.4..=0.65).contains(&step), "{times:?}\n{stderr}");
    }
    // fio's status figures: totals since the start, then the latest second.
    let last = stderr
        .lines()
        .rfind(|l| l.starts_with("storlab: status at "))
        .unwrap();
    assert!(last.contains(" MB since start ("), "{last}");
    assert!(
        last.contains("; last second ") && last.contains("clat p50 "),
        "{last}"
    );
}

#[test]
fn json_on_stdout_with_stderr_redirected_gets_nothing_extra() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = null_job("2500ms");
    args.push("--output-format=json".into());
    let out = common::run_in(dir.path(), &args);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let stderr = common::stderr(&out);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with("storlab: [1/1] live done: "),
        "{stderr}"
    );
    let doc: serde_json::Value = serde_json::from_str(&common::stdout(&out)).unwrap();
    assert_eq!(doc["jobs"][0]["name"], "live");
    // The same job with the table on stdout gets the plain lines, once a second.
    let table = common::run_in(dir.path(), &null_job("2500ms"));
    let stderr = common::stderr(&table);
    let status_lines = stderr
        .lines()
        .filter(|l| l.starts_with("storlab: status at "))
        .count();
    assert!((1..=3).contains(&status_lines), "{stderr}");
}
