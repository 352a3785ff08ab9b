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

/// Every `.rs` file under `dir`, skipping build output (a `target` directory cargo made, which
/// it tags with `CACHEDIR.TAG`; a source module may be called `target` too).
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            let build_output = name == "target" && path.join("CACHEDIR.TAG").exists();
            if !build_output && name != "corpus" && name != "artifacts" {
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

/// The simulator's core: the one directory whose files may add methods to `Simulator` (split by
/// phase, docs/decisions/0026-simulator-core-floor-plan.md). Its protocol components
/// (transports, bridge, drive link, pcap recorder, report) work on a narrow context or
/// read-only parts, never on the whole simulator (docs/decisions/0012-sim-seams.md).
const SIMULATOR_CORE_DIR: &str = "crates/sim/src/core/";

#[test]
fn only_the_simulator_core_implements_simulator() {
    let offenders: Vec<String> = sources()
        .iter()
        .filter(|(path, _)| !relative(path).starts_with(SIMULATOR_CORE_DIR))
        .flat_map(|(path, text)| {
            text.lines()
                .enumerate()
                .filter(|(_, line)| {
                    let line = line.trim_start();
                    line.starts_with("impl Simulator")
                        || line.starts_with("impl crate::core::Simulator")
                })
                .map(move |(n, _)| format!("{}:{}", relative(path), n + 1))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "`impl Simulator` outside {SIMULATOR_CORE_DIR}: give the component its own type and a \
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

/// No source file may be longer than this (issue 36), except those on [`FILES_OVER_HARD_MAX`].
const FILE_LINES_HARD_MAX: usize = 1_500;
/// A source file longer than this must be named on [`LONG_FILES`].
const FILE_LINES_MAX: usize = 1_000;
/// A function longer than this must be named on [`LONG_FUNCTIONS`].
const FUNCTION_LINES_MAX: usize = 100;
/// Reported beside the ratchet's figures: the functions that will be next to cross it.
const FUNCTION_LINES_WATCH: usize = 70;

/// The files over [`FILE_LINES_MAX`] lines (TigerBeetle's "naughty list"; ADR 0028). The list
/// only shrinks: a file not on it may not grow past the limit, and a listed file that shrank
/// below it must come off. `STORLAB_TIDY_PRINT=1 cargo test -p storlab --test it tidy --
/// --nocapture` prints the list as it is now.
const LONG_FILES: &[&str] = &[];

/// The files over [`FILE_LINES_HARD_MAX`] lines: none since issue 36's splits, and none may
/// join.
const FILES_OVER_HARD_MAX: &[&str] = &[];

/// The functions over [`FUNCTION_LINES_MAX`] lines, as `path::Type::name` (the `impl`'s type,
/// trait or inline module between path and name), ratcheting as [`LONG_FILES`] does. Length
/// runs from the line of `fn` to the line of the closing brace (attributes and doc comments not
/// counted); a nested fn or closure counts as part of the function it is in. Functions inside a
/// macro call (`proptest! { .. }`) are not seen.
const LONG_FUNCTIONS: &[&str] = &[
    "crates/engine/src/probe/sysfs.rs::device_facts_below",
    "crates/report/src/html/svg.rs::HeatMap::render",
    "crates/report/src/html/svg.rs::HorizontalBarChart::render",
    "crates/report/src/table.rs::render_table",
    "crates/sim/src/drive/ssd/ftl_log_block.rs::LogBlockFtl::check_consistency",
    "crates/sim/src/drive/ssd/profile.rs::validate",
    "crates/sim/src/profile/stack.rs::ProfileSet::resolve",
    "crates/sim/src/profile/validate.rs::validate_link",
    "crates/sim/src/report.rs::build",
    "crates/sim/tests/it/swarm.rs::draw_scenario",
    "crates/sim/tests/it/swarm.rs::run_seed",
    "crates/sim/tests/profile_edge_values.rs::every_numeric_key_survives_edge_values",
    "crates/wire/src/pretty.rs::decode::decode_pcap",
    "crates/wire/src/pretty.rs::write_command",
    "crates/wire/src/scsi/cdb.rs::Command::emit",
    "crates/wire/src/scsi/cdb.rs::Command::parse",
    "crates/wire/src/scsi/cdb.rs::tests::golden_cdbs",
    "fuzz/fuzz_targets/common/sim_checks.rs::run_requests_at_depth",
];

/// One function's name as the lists spell it, and its length.
struct FunctionLength {
    name: String,
    lines: usize,
}

/// Walks a parsed file, recording each function's length under its scope (module, impl type or
/// trait); it does not descend into function bodies, so nested items count in their parent.
struct FunctionLengths {
    path: String,
    scope: Vec<String>,
    found: Vec<FunctionLength>,
}

impl FunctionLengths {
    fn record(&mut self, name: &syn::Ident, fn_token: &syn::token::Fn, body: &syn::Block) {
        let first_line = fn_token.span.start().line;
        let last_line = body.brace_token.span.close().end().line;
        let mut qualified = vec![self.path.clone()];
        qualified.extend(self.scope.iter().cloned());
        qualified.push(name.to_string());
        self.found.push(FunctionLength {
            name: qualified.join("::"),
            lines: last_line + 1 - first_line,
        });
    }
}

/// The name an `impl` block's functions are listed under: its type's last path segment.
fn impl_scope_name(item: &syn::ItemImpl) -> String {
    match &*item.self_ty {
        syn::Type::Path(type_path) => type_path
            .path
            .segments
            .last()
            .map_or_else(|| "impl".to_string(), |segment| segment.ident.to_string()),
        _ => "impl".to_string(),
    }
}

impl<'ast> syn::visit::Visit<'ast> for FunctionLengths {
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        self.scope.push(item.ident.to_string());
        syn::visit::visit_item_mod(self, item);
        self.scope.pop();
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        self.scope.push(impl_scope_name(item));
        syn::visit::visit_item_impl(self, item);
        self.scope.pop();
    }

    fn visit_item_trait(&mut self, item: &'ast syn::ItemTrait) {
        self.scope.push(item.ident.to_string());
        syn::visit::visit_item_trait(self, item);
        self.scope.pop();
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        self.record(&item.sig.ident, &item.sig.fn_token, &item.block);
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        self.record(&item.sig.ident, &item.sig.fn_token, &item.block);
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        if let Some(body) = &item.default {
            self.record(&item.sig.ident, &item.sig.fn_token, body);
        }
    }
}

/// The functions of one source file, with their lengths; a file `syn` cannot parse is an error.
fn function_lengths_in(path: &str, text: &str) -> Vec<FunctionLength> {
    let file =
        syn::parse_file(text).unwrap_or_else(|error| panic!("{path}: does not parse: {error}"));
    let mut lengths = FunctionLengths {
        path: path.to_string(),
        scope: Vec::new(),
        found: Vec::new(),
    };
    syn::visit::Visit::visit_file(&mut lengths, &file);
    lengths.found
}

/// Every function of every source, with its length.
fn function_lengths() -> Vec<FunctionLength> {
    sources()
        .iter()
        .flat_map(|(path, text)| function_lengths_in(&relative(path), text))
        .collect()
}

/// The count the ratchet relies on: `fn` line to closing-brace line, a nested fn and a closure
/// inside their parent, methods named by their type, inline modules by their name.
#[test]
fn tidy_function_lengths_count_from_fn_to_closing_brace() {
    let text = r#"
/// Doc lines and attributes are not counted.
#[inline]
fn outer(
    a: u32,
) -> u32 {
    fn nested() -> &'static str {
        "} braces in a string }"
    }
    let closure = |x: u32| {
        x + 1
    };
    closure(a) + nested().len() as u32
}

struct Thing;

impl Thing {
    fn method(&self) {}
}

mod inner {
    trait Shape {
        fn area(&self) -> u32 {
            1
        }
        fn sides(&self) -> u32;
    }
}
"#;
    let found: Vec<(String, usize)> = function_lengths_in("x.rs", text)
        .into_iter()
        .map(|function| (function.name, function.lines))
        .collect();
    let expected = [
        ("x.rs::outer", 11),
        ("x.rs::Thing::method", 1),
        ("x.rs::inner::Shape::area", 3),
    ];
    let expected: Vec<(String, usize)> = expected
        .iter()
        .map(|(name, lines)| (name.to_string(), *lines))
        .collect();
    assert_eq!(found, expected);
}

/// What a ratchet list should be now, against what it is: names to add (over the limit and
/// unlisted) and names to remove (listed, but no longer over it, or gone).
fn ratchet_faults(over_limit: &[String], listed: &[&str]) -> (Vec<String>, Vec<String>) {
    let to_add = over_limit
        .iter()
        .filter(|name| !listed.contains(&name.as_str()))
        .cloned()
        .collect();
    let to_remove = listed
        .iter()
        .filter(|name| !over_limit.iter().any(|over| over == *name))
        .map(|name| name.to_string())
        .collect();
    (to_add, to_remove)
}

/// A list as Rust source, ready to paste over the constant's definition.
fn list_source(constant: &str, names: &[String]) -> String {
    let mut source = format!("const {constant}: &[&str] = &[\n");
    for name in names {
        source.push_str(&format!("    {name:?},\n"));
    }
    source.push_str("];\n");
    source
}

/// The names in `lengths` over `limit`, sorted, each once.
fn over(lengths: &[(String, usize)], limit: usize) -> Vec<String> {
    let mut names: Vec<String> = lengths
        .iter()
        .filter(|(_, lines)| *lines > limit)
        .map(|(name, _)| name.clone())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Fails naming what a ratchet list lacks and what it holds that no longer belongs on it.
fn assert_ratchet(constant: &str, limit: &str, over_limit: &[String], listed: &[&str]) {
    let (to_add, to_remove) = ratchet_faults(over_limit, listed);
    assert!(
        to_add.is_empty(),
        "over {limit} and not on {constant}: split them (a file by concern, a function into leaf \
         functions that compute): {to_add:?}"
    );
    assert!(
        to_remove.is_empty(),
        "on {constant} but no longer over {limit} (or gone): remove them from the list in {}, so \
         it only shrinks: {to_remove:?}",
        file!()
    );
}

#[test]
fn tidy_sizes_ratchet_long_files_and_functions() {
    let files: Vec<(String, usize)> = sources()
        .iter()
        .map(|(path, text)| (relative(path), text.lines().count()))
        .collect();
    let functions: Vec<(String, usize)> = function_lengths()
        .into_iter()
        .map(|function| (function.name, function.lines))
        .collect();
    let too_long_files = over(&files, FILE_LINES_HARD_MAX);
    let long_files = over(&files, FILE_LINES_MAX);
    let long_functions = over(&functions, FUNCTION_LINES_MAX);
    if std::env::var_os("STORLAB_TIDY_PRINT").is_some() {
        let watched = functions
            .iter()
            .filter(|(_, lines)| *lines > FUNCTION_LINES_WATCH)
            .count();
        println!(
            "{} files over {FILE_LINES_MAX} lines ({} over {FILE_LINES_HARD_MAX}); {} functions \
             over {FUNCTION_LINES_MAX} lines, {watched} over {FUNCTION_LINES_WATCH}, of {}",
            long_files.len(),
            too_long_files.len(),
            long_functions.len(),
            functions.len()
        );
        print!("{}", list_source("FILES_OVER_HARD_MAX", &too_long_files));
        print!("{}", list_source("LONG_FILES", &long_files));
        print!("{}", list_source("LONG_FUNCTIONS", &long_functions));
    }
    assert_ratchet(
        "FILES_OVER_HARD_MAX",
        &format!("{FILE_LINES_HARD_MAX} lines"),
        &too_long_files,
        FILES_OVER_HARD_MAX,
    );
    assert_ratchet(
        "LONG_FILES",
        &format!("{FILE_LINES_MAX} lines"),
        &long_files,
        LONG_FILES,
    );
    assert_ratchet(
        "LONG_FUNCTIONS",
        &format!("{FUNCTION_LINES_MAX} lines"),
        &long_functions,
        LONG_FUNCTIONS,
    );
}
