//! `storlab generate man` and `storlab generate complete SHELL`: the man page holds every
//! subcommand `storlab --help` lists and the job keys `run --help` lists, and renders without
//! warnings; the bash completion parses, completes `run --tar` to `--target`, and the zsh and
//! fish ones offer `--target` too.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn storlab(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_storlab"))
        .args(args)
        .output()
        .expect("storlab runs");
    assert!(
        out.status.success(),
        "storlab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(args: &[&str]) -> String {
    String::from_utf8(storlab(args).stdout).expect("UTF-8")
}

/// The subcommands `storlab --help` lists (its "Commands:" block), without `help`.
fn listed_subcommands() -> Vec<String> {
    stdout(&["--help"])
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The installed program `name`, if any.
fn tool(name: &str) -> Option<PathBuf> {
    ["/usr/bin", "/bin", "/usr/local/bin"]
        .into_iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|path| path.exists())
}

#[test]
fn man_page_has_every_subcommand_and_the_job_keys() {
    let page = stdout(&["generate", "man"]);
    assert!(page.contains("\n.TH storlab 1 "), "no .TH title");
    let subcommands = listed_subcommands();
    assert!(subcommands.len() >= 13, "{subcommands:?}");
    for name in &subcommands {
        assert!(
            page.contains(&format!(".SS \"storlab {name}\"\n")),
            "no section for storlab {name}"
        );
    }
    // Every job key of the key table `run --help` lists, one line each (kept in no-fill mode),
    // with its meaning; roff writes '-' as "\\-".
    let lines: Vec<String> = page.lines().map(|l| l.replace("\\-", "-")).collect();
    for key in storlab_job::keys::KEYS {
        assert!(
            lines.iter().any(|line| {
                line.split_whitespace().next() == Some(key.name) && line.contains(key.meaning)
            }),
            "job key {} missing from the man page",
            key.name
        );
    }
    // run's own options, with their help text.
    assert!(page.contains("\\-\\-target"), "--target missing");
    assert!(page.contains("\\-\\-preset"), "--preset missing");
}

#[test]
fn man_page_renders_without_warnings() {
    let Some(groff) = tool("groff") else {
        println!("skipped: groff is not installed (Debian package groff-base)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("storlab.1");
    std::fs::write(&file, storlab(&["generate", "man"]).stdout).unwrap();
    // -ww: every warning; text output to check what a reader sees.
    let out = Command::new(&groff)
        .args(["-man", "-Tutf8", "-ww"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(warnings.trim().is_empty(), "groff warnings: {warnings}");
    let text = String::from_utf8_lossy(&out.stdout);
    // groff may mark bold by overstriking: strip "X\bX" to plain text.
    let mut plain = String::new();
    for ch in text.chars() {
        if ch == '\u{8}' {
            plain.pop();
        } else {
            plain.push(ch);
        }
    }
    for heading in ["COMMANDS", "storlab run", "storlab compare", "Job keys"] {
        assert!(plain.contains(heading), "{heading} not rendered");
    }
    // The key table stays a table: each key starts its own rendered line.
    assert!(
        plain
            .lines()
            .any(|l| l.trim_start().starts_with("iodepth ")),
        "iodepth does not start a line"
    );
}

#[test]
fn bash_completion_parses_and_completes_target() {
    let script = stdout(&["generate", "complete", "bash"]);
    assert!(script.contains("--target"));
    let Some(bash) = tool("bash") else {
        println!("skipped: bash is not installed");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("storlab.bash");
    std::fs::write(&file, &script).unwrap();
    let syntax = Command::new(&bash).arg("-n").arg(&file).output().unwrap();
    assert!(
        syntax.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    // Complete `storlab run --tar` as bash's programmable completion would.
    let probe = format!(
        "source '{}'; COMP_WORDS=(storlab run --tar); COMP_CWORD=2; COMP_LINE='storlab run --tar'; COMP_POINT=${{#COMP_LINE}}; _storlab storlab --tar run; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file.display()
    );
    let out = Command::new(&bash).args(["-c", &probe]).output().unwrap();
    let offered = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        offered.trim(),
        "--target",
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn zsh_and_fish_completions_offer_target() {
    let zsh = stdout(&["generate", "complete", "zsh"]);
    assert!(zsh.starts_with("#compdef storlab"), "{}", &zsh[..40]);
    assert!(
        zsh.contains("'*--target=[Target for every job"),
        "zsh: no --target"
    );
    let fish = stdout(&["generate", "complete", "fish"]);
    assert!(
        fish.contains("__fish_storlab_using_subcommand run\" -l target"),
        "fish: no --target for run"
    );
}

#[test]
fn an_unknown_shell_is_one_line_and_exit_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_storlab"))
        .args(["generate", "complete", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("'tcsh'"), "{stderr}");
    assert!(out.stdout.is_empty());
}
