//! The simulator's module graph has no import cycle (issue 36): every `crate::…` and `super::…`
//! path in crates/sim/src is an edge from the file that names it to the module it reaches, and
//! the graph of those edges must be acyclic, so a newcomer can read the modules bottom-up. The
//! simulator's core (`core/`, the one `impl Simulator`, split over private files that call
//! each other) counts as one module.
//!
//! A failure prints each cycle as `a → b → … → a`, with the line that makes each edge.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// The module whose files are one node of the graph (their cycles are the core's own business).
const CORE_MODULE: &str = "core";

pub(crate) fn sim_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

pub(crate) fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir)
        .expect("crates/sim/src is readable")
        .flatten()
    {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The module path of a source file: `drive/ssd/nand.rs` → `drive::ssd::nand`, `drive/mod.rs`
/// → `drive`, `lib.rs` → `` (the crate root).
fn module_of(relative: &Path) -> Vec<String> {
    let mut segments: Vec<String> = relative
        .with_extension("")
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    if segments.last().is_some_and(|s| s == "mod" || s == "lib") {
        segments.pop();
    }
    segments
}

/// The node a module belongs to: itself, or the core for anything under it.
fn node_of(module: &[String]) -> String {
    if module.first().is_some_and(|s| s == CORE_MODULE) {
        return CORE_MODULE.to_string();
    }
    module.join("::")
}

/// Every path the source names from `crate::` or `super::`, resolved to absolute segments
/// (`use` groups `{a, b::c}` expanded), with its line number. Comments are skipped: a doc
/// link is not an import.
fn named_paths(text: &str, module: &[String], is_mod_file: bool) -> Vec<(Vec<String>, usize)> {
    let mut found = Vec::new();
    // Brace depth, and the depths at which inline modules (`mod tests {`) opened.
    let mut depth = 0usize;
    let mut inline_modules: Vec<usize> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        let opens_module = code.trim_start().starts_with("mod ")
            || code.trim_start().starts_with("pub mod ")
            || code.trim_start().starts_with("pub(crate) mod ");
        if opens_module && code.trim_end().ends_with('{') {
            inline_modules.push(depth);
        }
        let in_inline_module = !inline_modules.is_empty();
        depth += code.matches('{').count();
        depth = depth.saturating_sub(code.matches('}').count());
        while inline_modules.last().is_some_and(|&opened| depth <= opened) {
            inline_modules.pop();
        }
        let mut rest = code;
        while let Some((at, root)) = next_root(rest) {
            let after = &rest[at + root.len()..];
            let base: Vec<String> = if root == "crate::" {
                Vec::new()
            } else if in_inline_module {
                // `super` of an inline module (`mod tests { use super::*; }`) is the file's.
                module.to_vec()
            } else {
                // `super` of a `mod.rs` file is its directory's parent; of `x.rs`, its directory.
                let mut parent = module.to_vec();
                if !is_mod_file || !parent.is_empty() {
                    parent.pop();
                }
                parent
            };
            let mut paths = Vec::new();
            expand_tree(after, base, &mut paths);
            found.extend(paths.into_iter().map(|p| (p, n + 1)));
            rest = after;
        }
    }
    found
}

/// The first `crate::` or `super::` in `code` that starts a path (not the tail of another
/// identifier), with its offset.
fn next_root(code: &str) -> Option<(usize, &'static str)> {
    ["crate::", "super::"]
        .into_iter()
        .filter_map(|root| {
            let mut from = 0;
            while let Some(i) = code[from..].find(root) {
                let at = from + i;
                let before = code[..at].chars().next_back();
                if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    return Some((at, root));
                }
                from = at + root.len();
            }
            None
        })
        .min()
}

/// Expand a path tree (`a::b`, `a::{b, c::d}`, `a::*`) that starts at `text` onto `prefix`.
fn expand_tree(text: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix;
    let mut i = 0;
    let bytes = text.as_bytes();
    loop {
        while i < bytes.len() && bytes[i] == b' ' {
            i += 1;
        }
        if i < bytes.len() && bytes[i] == b'{' {
            i += 1;
            loop {
                i += expand_tree(&text[i..], path.clone(), out);
                while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b',') {
                    i += 1;
                }
                if i >= bytes.len() || bytes[i] == b'}' {
                    return (i + 1).min(bytes.len());
                }
            }
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        if start < i {
            path.push(text[start..i].to_string());
        }
        if text[i..].starts_with("::") {
            i += 2;
            continue;
        }
        out.push(path);
        return i;
    }
}

/// Edges of the graph: node → node → where (file:line), no self edges.
type Graph = BTreeMap<String, BTreeMap<String, String>>;

fn module_graph() -> Graph {
    let src = sim_src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<Vec<String>> = files
        .iter()
        .map(|f| module_of(f.strip_prefix(&src).expect("under src")))
        .collect();
    let mut graph = Graph::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        let module = module_of(relative);
        let is_mod_file = relative
            .file_name()
            .is_some_and(|n| n == "mod.rs" || n == "lib.rs");
        let from = node_of(&module);
        graph.entry(from.clone()).or_default();
        let text = std::fs::read_to_string(file).expect("sources are UTF-8");
        for (path, line) in named_paths(&text, &module, is_mod_file) {
            // The longest prefix of the path that is a module: the file it reaches.
            let target = (0..=path.len())
                .rev()
                .map(|n| &path[..n])
                .find(|prefix| modules.contains(*prefix))
                .expect("the crate root is a module");
            let to = node_of(target);
            if to != from {
                let at = format!("crates/sim/src/{}:{line}", relative.display());
                graph
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_insert(at);
            }
        }
    }
    graph
}

/// Strongly connected components of more than one node (Tarjan's algorithm would do; the
/// graph has a few dozen nodes, so reachability both ways is enough).
fn cycles(graph: &Graph) -> Vec<BTreeSet<String>> {
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut queue = VecDeque::from([from.clone()]);
        while let Some(n) = queue.pop_front() {
            for next in graph.get(&n).into_iter().flat_map(BTreeMap::keys) {
                if seen.insert(next.clone()) {
                    queue.push_back(next.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|n| (n, reach(n))).collect();
    let mut components: Vec<BTreeSet<String>> = Vec::new();
    for node in graph.keys() {
        if !reachable[node].contains(node) || components.iter().any(|c| c.contains(node)) {
            continue;
        }
        let component = graph
            .keys()
            .filter(|other| reachable[node].contains(*other) && reachable[*other].contains(node))
            .cloned()
            .collect();
        components.push(component);
    }
    components
}

/// The shortest cycle through `start` inside `component`, each edge with the line making it.
fn shortest_cycle(graph: &Graph, component: &BTreeSet<String>, start: &String) -> String {
    let mut came_from: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = VecDeque::from([start.clone()]);
    while let Some(n) = queue.pop_front() {
        for next in graph[&n].keys().filter(|k| component.contains(*k)) {
            if next == start {
                let mut hops = vec![(n.clone(), next.clone())];
                let mut at = n.clone();
                while at != *start {
                    let before = came_from[&at].clone();
                    hops.push((before.clone(), at));
                    at = before;
                }
                hops.reverse();
                return hops
                    .iter()
                    .map(|(a, b)| format!("  {a} → {b}  ({})", graph[a][b]))
                    .collect::<Vec<_>>()
                    .join("\n");
            }
            if !came_from.contains_key(next) {
                came_from.insert(next.clone(), n.clone());
                queue.push_back(next.clone());
            }
        }
    }
    unreachable!("a component's nodes reach each other")
}

#[test]
fn the_simulator_modules_import_each_other_without_cycles() {
    let graph = module_graph();
    assert!(graph.len() > 30, "found only {} modules", graph.len());
    let found = cycles(&graph);
    let report: Vec<String> = found
        .iter()
        .map(|component| {
            let start = component.first().expect("a component has a node");
            format!(
                "{} modules in a cycle: {component:?}\n{}",
                component.len(),
                shortest_cycle(&graph, component, start)
            )
        })
        .collect();
    assert!(
        found.is_empty(),
        "import cycles in crates/sim/src (move the shared type to a leaf file, or import it \
         from the module that defines it rather than through a re-export):\n{}",
        report.join("\n")
    );
}

#[test]
fn the_path_parser_expands_use_groups() {
    let module = vec!["drive".to_string(), "hdd".to_string()];
    let paths = named_paths(
        "use crate::{a::{b, c::D}, e};\nuse super::Drive; // crate::not::this\nmod tests {\n    use super::*;\n}\nuse super::X;\n",
        &module,
        false,
    );
    let got: Vec<String> = paths
        .iter()
        .map(|(p, n)| format!("{}@{n}", p.join("::")))
        .collect();
    assert_eq!(
        got,
        [
            "a::b@1",
            "a::c::D@1",
            "e@1",
            "drive::Drive@2",
            "drive::hdd@4",
            "drive::X@6"
        ]
    );
}
