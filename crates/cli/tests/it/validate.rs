//! Runs `storlab validate` as a user would on small reference files against the generic
//! simulated stacks: the table, the JSON shape, ratios, determinism, `--filter`, `--output`,
//! and the exit codes (1 over `--max-error-percent`, 2 on bad input with nothing run).

use crate::common::stdout;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SMALL: &str = "validate-small.toml";

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn storlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_storlab"))
        .args(args)
        .output()
        .expect("storlab runs")
}

fn validate(file: &Path, extra: &[&str]) -> Output {
    let file = file.to_str().unwrap();
    let mut args = vec!["validate", file];
    args.extend_from_slice(extra);
    storlab(&args)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json_of(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", stderr(out));
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// The ids of the small reference file, in file order.
const SMALL_IDS: [&str; 6] = [
    "uas.seq_read",
    "bot.seq_read",
    "uas_over_bot.seq_read",
    "ide.rand4k_write.iops",
    "ide.rand4k_read.latency",
    "bot.seq_write.cpu",
];

#[test]
fn help_is_stable() {
    let out = storlab(&["validate", "--help"]);
    assert!(out.status.success());
    insta::assert_snapshot!("validate_help", stdout(&out));
}

#[test]
fn json_has_the_documented_shape_and_is_deterministic() {
    let file = data(SMALL);
    let first = validate(&file, &["--output-format", "json"]);
    let second = validate(&file, &["--output-format", "json"]);
    assert_eq!(
        first.stdout, second.stdout,
        "the simulator is deterministic: two runs give the same JSON"
    );
    let json = json_of(&first);
    let top: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(top, ["entries", "within_10_percent", "within_15_percent"]);
    let entries = json["entries"].as_array().unwrap();
    let ids: Vec<&str> = entries.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(ids, SMALL_IDS, "file order");
    let mut within_10 = 0;
    let mut within_15 = 0;
    for entry in entries {
        let mut keys: Vec<&str> = entry
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "error_percent",
                "id",
                "metric",
                "published",
                "simulated",
                "source",
                "stack",
                "warnings"
            ]
        );
        let published = entry["published"].as_f64().unwrap();
        let simulated = entry["simulated"].as_f64().unwrap();
        let error = entry["error_percent"].as_f64().unwrap();
        assert!(simulated > 0.0, "{entry}");
        let expected = (simulated - published) / published * 100.0;
        assert!((error - expected).abs() < 1e-9, "{entry}");
        within_10 += usize::from(error.abs() <= 10.0);
        within_15 += usize::from(error.abs() <= 15.0);
    }
    let share = |n: usize| n as f64 / entries.len() as f64;
    assert_eq!(
        json["within_10_percent"].as_f64().unwrap(),
        share(within_10)
    );
    assert_eq!(
        json["within_15_percent"].as_f64().unwrap(),
        share(within_15)
    );
    let metrics: Vec<&str> = entries
        .iter()
        .map(|e| e["metric"].as_str().unwrap())
        .collect();
    assert_eq!(
        metrics,
        [
            "mbps",
            "mbps",
            "ratio",
            "iops",
            "latency_mean_us",
            "cpu_percent"
        ]
    );
}

#[test]
fn a_ratio_divides_the_figures_of_its_two_scenarios() {
    let json = json_of(&validate(
        &data(SMALL),
        &["--output-format", "json", "--filter", "seq_read"],
    ));
    let simulated = |id: &str| {
        json["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == id)
            .and_then(|e| e["simulated"].as_f64())
            .unwrap_or_else(|| panic!("{id} in {json}"))
    };
    let (uas, bot) = (simulated("uas.seq_read"), simulated("bot.seq_read"));
    let ratio = simulated("uas_over_bot.seq_read");
    assert!(
        (ratio - uas / bot).abs() < 1e-9 * ratio,
        "{ratio} vs {uas}/{bot}"
    );
    // Each scenario runs on its own fresh stack: UAS beats BOT on sequential reads.
    assert!(uas > bot, "{uas} vs {bot}");
}

#[test]
fn table_lists_entries_and_the_shares() {
    let out = validate(&data(SMALL), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    for heading in ["id", "stack", "metric", "published", "simulated", "error %"] {
        assert!(lines[0].contains(heading), "{text}");
    }
    for (line, id) in lines[1..].iter().zip(SMALL_IDS) {
        assert!(line.starts_with(id), "{line}");
        let error = line.split_whitespace().last().unwrap();
        assert!(
            error.starts_with('+') || error.starts_with('-'),
            "signed error: {line}"
        );
        assert_eq!(
            error.split_once('.').map(|(_, d)| d.len()),
            Some(1),
            "{line}"
        );
    }
    assert!(
        lines.iter().any(|l| l.starts_with("within ±10%: ")),
        "{text}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("within ±15%: ") && l.contains("/6 (")),
        "{text}"
    );
    assert!(
        stderr(&out).is_empty(),
        "no progress off a terminal: {}",
        stderr(&out)
    );
}

#[test]
fn max_error_percent_decides_exit_code_1() {
    let file = data(SMALL);
    let strict = validate(
        &file,
        &["--filter", "bot.seq_read", "--max-error-percent", "0"],
    );
    assert_eq!(strict.status.code(), Some(1), "{}", stderr(&strict));
    // The results are printed all the same, and the failing entries are named.
    assert!(stdout(&strict).contains("bot.seq_read"));
    let message = stderr(&strict);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("bot.seq_read ("), "{message}");
    let loose = validate(
        &file,
        &["--filter", "bot.seq_read", "--max-error-percent", "1000"],
    );
    assert_eq!(loose.status.code(), Some(0), "{}", stderr(&loose));
}

#[test]
fn output_goes_to_the_file_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.json");
    let out = validate(
        &data(SMALL),
        &[
            "--filter",
            "ide.rand4k_read",
            "--output-format",
            "json",
            "--output",
            path.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(json["entries"].as_array().unwrap().len(), 1);
}

/// A copy of the small file with `edit` applied, in a temporary directory.
fn edited(edit: impl Fn(String) -> String) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reference.toml");
    let text = std::fs::read_to_string(data(SMALL)).unwrap();
    std::fs::write(&path, edit(text)).unwrap();
    (dir, path)
}

fn assert_bad_input(out: &Output, needles: &[&str]) {
    assert_eq!(out.status.code(), Some(2), "{}", stderr(out));
    assert!(out.stdout.is_empty(), "nothing ran: {}", stdout(out));
    let message = stderr(out);
    assert_eq!(message.lines().count(), 1, "one line: {message}");
    assert!(
        message.contains("reference.toml: "),
        "names the file: {message}"
    );
    for needle in needles {
        assert!(message.contains(needle), "'{needle}' in: {message}");
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2_before_anything_runs() {
    // The mistake is in the last entry: the earlier ones must not have run.
    let (_dir, path) = edited(|t| t.replace("published = 7\n", "published = 7\nrunime = \"1s\"\n"));
    assert_bad_input(
        &validate(&path, &[]),
        &["entry 'bot.seq_write.cpu'", "runime"],
    );
    let (_dir, path) =
        edited(|t| t.replace("stack = \"sata-ide-ssd\"", "stack = \"sata-ide-sdd\""));
    assert_bad_input(
        &validate(&path, &[]),
        &["entry 'ide.rand4k_write.iops'", "stack: unknown stack"],
    );
    let (_dir, path) = edited(|t| t.replace("id = \"bot.seq_read\"", "id = \"uas.seq_read\""));
    assert_bad_input(
        &validate(&path, &[]),
        &["entry 'uas.seq_read'", "id: duplicate"],
    );
    let (_dir, path) = edited(|t| {
        t.replace(
            "series = \"Seq\", direction = \"write\"",
            "series = \"Seq\"",
        )
    });
    assert_bad_input(
        &validate(&path, &[]),
        &["entry 'bot.seq_write.cpu'", "point: matches 2 points"],
    );
    let (_dir, path) = edited(|t| t.replace("ratio_of = \"mbps\"\n", ""));
    assert_bad_input(
        &validate(&path, &[]),
        &["entry 'uas_over_bot.seq_read'", "ratio_of"],
    );
    let (_dir, path) = edited(|t| {
        t.replace(
            "iodepth = 1 }\nstate",
            "iodepth = 1 }\npreset = \"cdm\"\nstate",
        )
    });
    assert_bad_input(
        &validate(&path, &[]),
        &["entry 'ide.rand4k_write.iops'", "not both"],
    );
    let (_dir, path) = edited(|t| t);
    assert_bad_input(
        &validate(&path, &["--filter", "no-such-entry"]),
        &["--filter no-such-entry"],
    );
}

#[test]
fn a_missing_reference_file_is_bad_input() {
    let out = storlab(&["validate", "/nonexistent/reference.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/nonexistent/reference.toml"));
}

/// `--check` reads and plans the whole file and runs nothing: exit 0 with one line saying what
/// would run; a mistake is bad input (exit 2, one line), as without it.
#[test]
fn check_plans_the_file_without_running_it() {
    let out = validate(&data(SMALL), &["--check"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    // Six entries, one of them a ratio with a denominator scenario.
    assert!(text.contains("6 entries, 7 scenarios planned"), "{text}");
    assert!(!text.contains("within ±10%"), "nothing ran: {text}");
    // `--filter` applies: bot.seq_read, uas_over_bot.seq_read (a ratio) and bot.seq_write.cpu.
    let out = validate(&data(SMALL), &["--check", "--filter", "bot."]);
    assert!(
        stdout(&out).contains("3 entries, 4 scenarios planned"),
        "{}",
        stdout(&out)
    );
    let (_dir, path) =
        edited(|t| t.replace("stack = \"sata-ide-ssd\"", "stack = \"sata-ide-sdd\""));
    assert_bad_input(
        &validate(&path, &["--check"]),
        &["entry 'ide.rand4k_write.iops'", "stack: unknown stack"],
    );
}

/// Each entry keeps its measured job's warnings (here the misalignment one the run path gives):
/// a `warnings` list per entry in the JSON, and lines naming the entry under the table.
#[test]
fn an_entrys_job_warnings_are_kept_in_json_and_table() {
    let (_dir, path) = edited(|t| {
        t.replace(
            "job = { rw = \"randread\", bs = \"4k\", iodepth = 1 }",
            "job = { rw = \"randread\", bs = \"4k\", iodepth = 1, blockalign = \"512\" }",
        )
    });
    let only = ["--filter", "ide.rand4k_read"];
    let json = json_of(&validate(
        &path,
        &[&only[..], &["--output-format", "json"]].concat(),
    ));
    let warnings = json["entries"][0]["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().starts_with("alignment 512")),
        "{warnings:?}"
    );
    let table = stdout(&validate(&path, &only));
    assert!(
        table.contains("warnings:\n  [ide.rand4k_read.latency] alignment 512"),
        "{table}"
    );
}
