//! Checks the shipped job files and the key reference against the reader: every
//! `examples/jobs/*.fio` parses, the fio-compatible ones are accepted by fio itself and mean the
//! same to storlab as fio's own flag translation, and `docs/job-format.md` lists every key.

use std::path::{Path, PathBuf};
use std::process::Command;
use storlab_job::keys::KEYS;
use storlab_job::{parse_fio_file, parse_flags, EngineKind};

/// Marker a job file carries (in a comment) when it uses storlab extensions fio rejects.
const STORLAB_ONLY_MARKER: &str = "storlab-only";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example_files() -> Vec<PathBuf> {
    let dir = repo_root().join("examples/jobs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "fio"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .fio files in {}", dir.display());
    files
}

fn fio_compatible_examples() -> Vec<PathBuf> {
    example_files()
        .into_iter()
        .filter(|path| {
            !std::fs::read_to_string(path)
                .unwrap()
                .contains(STORLAB_ONLY_MARKER)
        })
        .collect()
}

/// Whether the external `fio` can run; when it cannot, CI fails and a developer sees a skip.
fn fio_available(test: &str) -> bool {
    let found = Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{test}: fio is required in CI but was not found"
        );
        eprintln!("skipped: {test}: fio is not installed");
    }
    found
}

#[test]
fn every_example_parses_and_every_engine_has_one() {
    let mut engines = Vec::new();
    for path in example_files() {
        let set = parse_fio_file(&path, None).unwrap_or_else(|e| panic!("{e}"));
        assert!(!set.jobs.is_empty());
        for job in &set.jobs {
            assert!(
                job.warnings.is_empty(),
                "{}: {:?}",
                path.display(),
                job.warnings
            );
            engines.push(job.engine);
        }
    }
    for engine in [
        EngineKind::Null,
        EngineKind::Psync,
        EngineKind::IoUring,
        EngineKind::Sim,
    ] {
        assert!(
            engines.contains(&engine),
            "no example job uses ioengine={}",
            engine.as_str()
        );
    }
}

#[test]
fn fio_compatible_examples_are_accepted_by_fio() {
    if !fio_available("fio_compatible_examples_are_accepted_by_fio") {
        return;
    }
    for path in fio_compatible_examples() {
        let output = Command::new("fio")
            .arg("--parse-only")
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "fio rejects {}: {}",
            path.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// fio's `--showcmd` turns a job file into its own command line; storlab's flag reader must read
/// that command line as the same jobs its file reader reads from the file.
#[test]
fn fio_translation_of_each_example_means_the_same_as_the_file() {
    if !fio_available("fio_translation_of_each_example_means_the_same_as_the_file") {
        return;
    }
    for path in fio_compatible_examples() {
        let output = Command::new("fio")
            .arg("--showcmd")
            .arg(&path)
            .output()
            .unwrap();
        assert!(output.status.success(), "fio --showcmd {}", path.display());
        let command = String::from_utf8(output.stdout).unwrap();
        let args: Vec<String> = command
            .split_whitespace()
            .skip(1)
            .map(str::to_string)
            .collect();
        let from_flags =
            parse_flags(&args, None).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let from_file = parse_fio_file(&path, None).unwrap();
        assert_eq!(from_flags, from_file, "{}: {command}", path.display());
    }
}

#[test]
fn the_key_reference_lists_every_key_and_alias() {
    let doc_path = repo_root().join("docs/job-format.md");
    let doc = std::fs::read_to_string(&doc_path)
        .unwrap_or_else(|e| panic!("{}: {e}", doc_path.display()));
    for key in KEYS {
        for name in std::iter::once(key.name).chain(key.aliases.iter().copied()) {
            assert!(
                doc.contains(&format!("`{name}`")),
                "docs/job-format.md does not mention `{name}`"
            );
        }
    }
}

/// Every engine out of scope is named in docs/job-format.md, so the page's list stays the
/// code's.
#[test]
fn the_key_reference_lists_every_out_of_scope_engine() {
    let doc_path = repo_root().join("docs/job-format.md");
    let doc = std::fs::read_to_string(&doc_path)
        .unwrap_or_else(|e| panic!("{}: {e}", doc_path.display()));
    for name in storlab_job::OUT_OF_SCOPE_ENGINES {
        assert!(
            doc.contains(&format!("`{name}`")),
            "docs/job-format.md does not mention `{name}`"
        );
    }
}

/// The engine table of docs/job-format.md lists every engine of the one list, `EngineKind::ALL`.
#[test]
fn the_engine_table_lists_every_engine() {
    let doc_path = repo_root().join("docs/job-format.md");
    let doc = std::fs::read_to_string(&doc_path)
        .unwrap_or_else(|e| panic!("{}: {e}", doc_path.display()));
    let table = doc
        .split("### Engines")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("docs/job-format.md has an `### Engines` section");
    for engine in EngineKind::ALL {
        assert!(
            table.contains(&format!("| `{}` |", engine.as_str())),
            "the engine table does not list `{}`",
            engine.as_str()
        );
    }
}
