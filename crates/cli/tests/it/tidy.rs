//! Tidy checks over the whole workspace's sources (rust-analyzer's and TigerBeetle's habit): the
//! conventions ARCHITECTURE.md promises, checked by `cargo test` so they cannot drift.
//!
//! Each check names the file and line at fault, so a failure says what to fix.

use std::path::{Path, PathBuf};

/// The one crate allowed `unsafe` (io_uring, ioctls, aligned buffers: ARCHITECTURE.md).
const UNSAFE_ALLOWED_CRATE: &str = "engine";

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/cli sits two levels below the workspace root")
        .to_path_buf()
}

/// Every `.rs` file under `dir`, skipping build output.
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != "corpus" && name != "artifacts" {
                rust_files(&path, found);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

fn sources() -> Vec<(PathBuf, String)> {
    let root = workspace_root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("fuzz"), &mut files);
    files.sort();
    assert!(files.len() > 100, "found only {} sources", files.len());
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("sources are UTF-8");
            (path, text)
        })
        .collect()
}

fn relative(path: &Path) -> String {
    path.strip_prefix(workspace_root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn every_source_file_opens_with_a_module_comment() {
    let missing: Vec<String> = sources()
        .iter()
        .filter(|(_, text)| {
            !text
                .lines()
                .find(|line| !line.trim().is_empty())
                .is_some_and(|line| line.starts_with("//!"))
        })
        .map(|(path, _)| relative(path))
        .collect();
    assert!(
        missing.is_empty(),
        "these files do not open with a `//!` line saying what they are: {missing:?}"
    );
}

#[test]
fn only_the_engine_crate_may_use_unsafe() {
    let crates = workspace_root().join("crates");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name == UNSAFE_ALLOWED_CRATE {
            continue;
        }
        for root_file in ["src/lib.rs", "src/main.rs"] {
            let path = entry.path().join(root_file);
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            if !text.lines().any(|l| l.trim() == "#![forbid(unsafe_code)]") {
                missing.push(relative(&path));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "crate roots without #![forbid(unsafe_code)] (only crates/{UNSAFE_ALLOWED_CRATE} may use unsafe): {missing:?}"
    );
}

/// `std::env::args()` panics on an argument that is not UTF-8 (a file name is any bytes):
/// the binary reads `args_os` only.
#[test]
fn the_binary_never_reads_arguments_as_utf8() {
    let offenders: Vec<String> = sources()
        .iter()
        .filter(|(path, _)| relative(path).starts_with("crates/cli/src"))
        .flat_map(|(path, text)| {
            text.lines()
                .enumerate()
                .filter(|(_, line)| line.contains("env::args()"))
                .map(move |(n, _)| format!("{}:{}", relative(path), n + 1))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "std::env::args() panics on non-UTF-8 arguments; use args_os: {offenders:?}"
    );
}

/// A comment that states the MSRV must state the one `Cargo.toml` declares.
#[test]
fn msrv_comments_agree_with_rust_version() {
    let manifest = std::fs::read_to_string(workspace_root().join("Cargo.toml")).unwrap();
    let declared = manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("rust-version = "))
        .map(|v| v.trim_matches('"').to_string())
        .expect("the workspace declares rust-version");
    let mut wrong = Vec::new();
    for (path, text) in sources() {
        if path.ends_with(file!().rsplit('/').next().unwrap_or_default()) {
            continue; // this file names the pattern it looks for
        }
        for (n, line) in text.lines().enumerate() {
            let Some(at) = line.find("MSRV (") else {
                continue;
            };
            let stated = line[at + "MSRV (".len()..]
                .split(')')
                .next()
                .unwrap_or_default();
            if stated != declared {
                wrong.push(format!(
                    "{}:{}: says {stated}, Cargo.toml {declared}",
                    relative(&path),
                    n + 1
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "MSRV comments out of date: {wrong:?}");
}

/// The simulator's core: the one file that may add methods to `Simulator`. Its protocol
/// components (transports, bridge, drive link, pcap recorder, report) work on a narrow context
/// or read-only parts, never on the whole simulator (docs/decisions/0012-sim-seams.md).
const SIMULATOR_CORE_FILE: &str = "crates/sim/src/sim.rs";

#[test]
fn only_the_simulator_core_implements_simulator() {
    let offenders: Vec<String> = sources()
        .iter()
        .filter(|(path, _)| relative(path) != SIMULATOR_CORE_FILE)
        .flat_map(|(path, text)| {
            text.lines()
                .enumerate()
                .filter(|(_, line)| {
                    let line = line.trim_start();
                    line.starts_with("impl Simulator")
                        || line.starts_with("impl crate::sim::Simulator")
                })
                .map(move |(n, _)| format!("{}:{}", relative(path), n + 1))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "`impl Simulator` outside {SIMULATOR_CORE_FILE}: give the component its own type and a \
         narrow context (`Cx`) instead: {offenders:?}"
    );
}

/// The runner drives every engine through [`storlab_engine::Capabilities`]: a check that
/// depends on what an engine can do reads a flag (`queued`, `shared_timeline`, `page_cache`...),
/// so a new engine is described by its flags, not by a list of kinds in the runner. Tests may
/// name a kind to build a job (below a `#[cfg(test)]`, or in a module's `tests.rs`); the
/// runner's code above its tests may not.
#[test]
fn the_runner_reads_capabilities_not_engine_kinds() {
    let offenders: Vec<String> = sources()
        .iter()
        .filter(|(path, _)| relative(path).starts_with("crates/runner/src"))
        .filter(|(path, _)| !path.ends_with("tests.rs"))
        .flat_map(|(path, text)| {
            text.lines()
                .enumerate()
                .take_while(|(_, line)| line.trim() != "#[cfg(test)]")
                .filter(|(_, line)| line.contains("EngineKind") || line.contains(".engine =="))
                .map(move |(n, _)| format!("{}:{}", relative(path), n + 1))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "the runner asks an engine's kind; give storlab_engine::Capabilities a flag and read \
         it instead: {offenders:?}"
    );
}

/// The simulator does no file I/O (ARCHITECTURE.md, invariants): it parses profile text it
/// is given and runs in memory, so the same inputs give the same bytes on any machine. Reading a
/// profiles directory is the engine's (`load_profiles`), writing a pcap the caller's.
#[test]
fn the_simulator_does_no_file_io() {
    let offenders: Vec<String> = sources()
        .iter()
        .filter(|(path, _)| relative(path).starts_with("crates/sim/src"))
        .flat_map(|(path, text)| {
            text.lines()
                .enumerate()
                .filter(|(_, line)| {
                    let code = line.split("//").next().unwrap_or_default();
                    code.contains("std::fs") || code.contains("fs::read") || code.contains("File::")
                })
                .map(move |(n, _)| format!("{}:{}", relative(path), n + 1))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "file I/O in crates/sim/src: read files in the caller and pass the simulator their \
         text or bytes: {offenders:?}"
    );
}

/// Test files that are test binaries of their own, each because a test in it needs a process to
/// itself (the reason is in the file's header). Every other integration test is a module of its
/// crate's one binary, `tests/it/main.rs` (docs/decisions/0015).
const OWN_PROCESS_TEST_FILES: &[&str] = &[
    "crates/cli/tests/page_cache.rs",
    "crates/engine/tests/temp_cleanup.rs",
    "crates/sim/tests/profile_edge_values.rs",
    "crates/stats/tests/no_allocation.rs",
];

/// One integration-test binary per crate: a `tests/*.rs` file beside `tests/it/` (or a second
/// one where there is no `it/`) is another binary to link on every test build.
#[test]
fn integration_tests_are_one_binary_per_crate() {
    let mut extra = Vec::new();
    for entry in std::fs::read_dir(workspace_root().join("crates"))
        .unwrap()
        .flatten()
    {
        let tests = entry.path().join("tests");
        let mut binaries: Vec<String> = std::fs::read_dir(&tests)
            .into_iter()
            .flatten()
            .flatten()
            .map(|file| file.path())
            .filter(|path| path.extension().is_some_and(|e| e == "rs"))
            .map(|path| relative(&path))
            .filter(|path| !OWN_PROCESS_TEST_FILES.contains(&path.as_str()))
            .collect();
        if tests.join("it/main.rs").is_file() {
            binaries.push(relative(&tests.join("it/main.rs")));
        }
        binaries.sort();
        if binaries.len() > 1 {
            extra.push(binaries);
        }
    }
    let root = workspace_root();
    let stale: Vec<_> = OWN_PROCESS_TEST_FILES
        .iter()
        .filter(|path| !root.join(path).is_file())
        .collect();
    assert!(
        stale.is_empty(),
        "listed test binaries that no longer exist: {stale:?}"
    );
    assert!(
        extra.is_empty(),
        "more than one integration-test binary in a crate (move each file into its crate's \
         tests/it/ and add `mod NAME;` to tests/it/main.rs): {extra:?}"
    );
}
