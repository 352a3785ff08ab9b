//! `storlab generate man` and `storlab generate complete SHELL`: the man page and the shell
//! completions, generated from the same clap definitions as `--help` (clap_mangen,
//! clap_complete), so neither can drift from the options storlab takes.

use crate::args::{GenerateArgs, Generated};
use crate::exit::{run_failed, Failure};
use roff::{bold, roman, Roff};

pub fn run(args: GenerateArgs) -> Result<(), Failure> {
    let text = match args.what {
        Generated::Man => man_page()?,
        Generated::Complete { shell } => completion(shell)?,
    };
    crate::output::print(&text)
}

/// The man page: clap_mangen's title, name, synopsis, description and options of `storlab`,
/// then one section per subcommand (nested ones too) with its about text, synopsis, options
/// and its after-help text kept line by line (the job keys list of `run`), then the version.
pub fn man_page() -> Result<String, Failure> {
    let mut command = crate::args::command_with_job_keys();
    // Building sets every subcommand's bin name ("storlab run") for its synopsis.
    command.build();
    let man = clap_mangen::Man::new(command.clone());
    let mut page = Vec::new();
    let rendered = man
        .render_title(&mut page)
        .and_then(|()| man.render_name_section(&mut page))
        .and_then(|()| man.render_synopsis_section(&mut page))
        .and_then(|()| man.render_description_section(&mut page))
        .and_then(|()| man.render_options_section(&mut page));
    rendered.map_err(man_failure)?;
    let mut page = String::from_utf8_lossy(&page).into_owned();
    page.push_str(&Roff::new().control("SH", ["COMMANDS"]).to_roff());
    // In the order `storlab --help` lists them (adding the job keys moved `run` to the end).
    let help_order: Vec<String> = <crate::args::Cli as clap::CommandFactory>::command()
        .get_subcommands()
        .map(|sub| sub.get_name().to_string())
        .collect();
    let mut subcommands = visible_subcommands(&command);
    subcommands.sort_by_key(|sub| {
        let top = sub.get_bin_name().unwrap_or_default().split(' ').nth(1);
        help_order
            .iter()
            .position(|name| Some(name.as_str()) == top)
    });
    for sub in subcommands {
        page.push_str(&subcommand_section(sub)?);
    }
    let mut version = Vec::new();
    man.render_version_section(&mut version)
        .map_err(man_failure)?;
    page.push_str(&String::from_utf8_lossy(&version));
    Ok(page)
}

/// `command`'s subcommands and theirs, depth first, without clap's `help`.
fn visible_subcommands(command: &clap::Command) -> Vec<&clap::Command> {
    let mut found = Vec::new();
    for sub in command.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        found.push(sub);
        found.extend(visible_subcommands(sub));
    }
    found
}

/// One subcommand as a subsection: clap_mangen's synopsis and options renderers, whose own
/// `.SH` headings are dropped (they would start top-level sections in the middle of
/// COMMANDS), and the after-help in no-fill mode, where every line stays a line: clap_mangen
/// renders it as filled text, which runs the key table together into one paragraph.
fn subcommand_section(sub: &clap::Command) -> Result<String, Failure> {
    let name = sub.get_bin_name().unwrap_or_else(|| sub.get_name());
    let mut head = Roff::new();
    head.control("SS", [name]);
    if let Some(about) = sub.get_long_about().or_else(|| sub.get_about()) {
        head.text([roman(about.to_string())]);
    }
    // -h and -V are on every subcommand; the page says so once, under OPTIONS.
    let sub = sub
        .clone()
        .mut_arg("help", |arg| arg.hide(true))
        .mut_arg("version", |arg| arg.hide(true));
    let man = clap_mangen::Man::new(sub.clone());
    // The synopsis starts a paragraph of its own, not a continuation of the about text.
    let mut body = Roff::new().control("PP", []).to_roff().into_bytes();
    man.render_synopsis_section(&mut body)
        .map_err(man_failure)?;
    if sub.get_arguments().any(|arg| !arg.is_hide_set()) {
        Roff::new()
            .control("PP", [])
            .text([bold("Options:")])
            .to_writer(&mut body)
            .map_err(man_failure)?;
        man.render_options_section(&mut body).map_err(man_failure)?;
    }
    let body: String = String::from_utf8_lossy(&body)
        .lines()
        .filter(|line| !line.starts_with(".SH "))
        .map(|line| format!("{line}\n"))
        .collect();
    let mut after = Roff::new();
    if let Some(text) = sub.get_after_long_help().or_else(|| sub.get_after_help()) {
        after.control("PP", []).control("nf", []);
        for line in text.to_string().lines() {
            after.text([roman(line)]);
        }
        after.control("fi", []);
    }
    Ok(format!("{}{body}{}", head.to_roff(), after.to_roff()))
}

/// The completion script for `shell`.
pub fn completion(shell: clap_complete::Shell) -> Result<String, Failure> {
    let mut command = crate::args::command_with_job_keys();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "storlab", &mut script);
    String::from_utf8(script).map_err(|e| run_failed(format!("completion for {shell}: {e}")))
}

/// Rendering into memory fails only if clap_mangen's writer does: a failed command, not input.
fn man_failure(error: std::io::Error) -> Failure {
    run_failed(format!("man page: {error}"))
}
