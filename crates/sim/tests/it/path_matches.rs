//! The path type is matched whole (issue 36): `Endpoints` (a bridged path or a direct one) and
//! `Bridged` (BOT or UAS) are tested for one variant only in the two central matches, the one
//! on events (`core/mod.rs`'s `handle`) and the one on (path, fault) (`core/recovery/mod.rs`).
//! Everywhere else a phase matches the path whole, with no catch-all arm, or takes the variant
//! the dispatch handed it, so a new transport fails to compile where it must be handled
//! instead of falling through an `if let`. A one-variant test (`if let`, `while let`,
//! `let … else`, `matches!`) or an arm that calls a variant impossible (`=> unreachable!`)
//! outside those two files fails, naming the file and line.

use crate::module_graph::{rust_files, sim_src};

/// The files that hold the two central matches, relative to crates/sim/src.
const CENTRAL_FILES: [&str; 2] = ["core/mod.rs", "core/recovery/mod.rs"];
/// The path type's names, as a pattern names them.
const PATH_TYPES: [&str; 2] = ["Endpoints::", "Bridged::"];

/// The code of `text` without `//` comments (doc links and prose may name a variant), one
/// entry per line so a finding keeps its line number.
fn code_lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(|line| line.find("//").map_or(line, |i| &line[..i]))
        .collect()
}

fn names_path_type(code: &str) -> bool {
    PATH_TYPES.iter().any(|t| code.contains(t))
}

/// Every one-variant test of the path type in `text`: (line number, what it is).
fn one_variant_tests(text: &str) -> Vec<(usize, &'static str)> {
    let lines = code_lines(text);
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        // `if let`, `while let` and `let … else` all bind with `let`.
        for (at, _) in line.match_indices("let ") {
            let word_start = line[..at]
                .chars()
                .last()
                .is_none_or(|c| !c.is_alphanumeric() && c != '_');
            let rest = line[at + "let ".len()..].trim_start();
            if word_start && PATH_TYPES.iter().any(|t| rest.starts_with(t)) {
                found.push((i + 1, "a one-variant `let` pattern"));
            }
        }
        if line.contains("matches!(") {
            // rustfmt may break a `matches!` over lines: read on to its closing parenthesis.
            let mut call = String::new();
            let mut depth = 0i32;
            let start = line.find("matches!(").expect("found above");
            'lines: for next in
                std::iter::once(&line[start..]).chain(lines[i + 1..].iter().copied())
            {
                for ch in next.chars() {
                    call.push(ch);
                    match ch {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break 'lines;
                            }
                        }
                        _ => {}
                    }
                }
            }
            if names_path_type(&call) {
                found.push((i + 1, "a `matches!` on one variant"));
            }
        }
        // An arm `Variant => unreachable!(…)`, or `=> {` with `unreachable!` on the next line:
        // the pattern is on the arm's line or the line before (rustfmt's layout).
        if trimmed.starts_with("unreachable!") || line.contains("=> unreachable!") {
            let arm_line = if line.contains("=>") {
                i
            } else {
                i.saturating_sub(1)
            };
            let pattern = lines[arm_line.saturating_sub(1)..=arm_line].concat();
            if names_path_type(&pattern) && pattern.contains("=>") {
                found.push((arm_line + 1, "an arm that calls a variant impossible"));
            }
        }
    }
    found
}

#[test]
fn the_path_type_is_tested_for_one_variant_only_in_the_two_central_matches() {
    let src = sim_src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut failures = Vec::new();
    for path in &files {
        let relative = path.strip_prefix(&src).expect("under crates/sim/src");
        let relative = relative.to_string_lossy().replace('\\', "/");
        if CENTRAL_FILES.contains(&relative.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(path).expect("a source file is readable");
        for (line, what) in one_variant_tests(&text) {
            failures.push(format!("crates/sim/src/{relative}:{line}: {what}"));
        }
    }
    assert!(
        failures.is_empty(),
        "one-variant tests of the path type outside the two central matches (match it whole, \
         or hand the variant down from the match that has it):\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_detector_finds_each_kind_of_one_variant_test() {
    let sample = "\
fn f(e: &Endpoints) {
    if let Endpoints::Direct(a) = e {}
    let Endpoints::Bridged(usb) = e else { return };
    let bot = matches!(
        e,
        Endpoints::Bridged(Bridged::Bot(_))
    );
    match e {
        Endpoints::Direct(_) => unreachable!(\"no\"),
        Endpoints::Bridged(Bridged::Uas(_)) => {
            unreachable!(\"no\")
        }
        Endpoints::Bridged(Bridged::Bot(_)) => {}
    }
    // if let Endpoints::Direct(_) = e: a comment, not code
    match op { Op::Flush => unreachable!(\"none\"), _ => {} }
    let kind = matches!(t, Transport::Bot);
}
";
    let found: Vec<usize> = one_variant_tests(sample).iter().map(|f| f.0).collect();
    assert_eq!(
        found,
        vec![2, 3, 4, 9, 10],
        "{:?}",
        one_variant_tests(sample)
    );
}
