//! `storlab presets`: lists the shipped presets with a one-line description each.

use crate::exit::{bad_input, Failure};
use std::fmt::Write;

pub fn run() -> Result<(), Failure> {
    let mut rows = Vec::new();
    for name in storlab_job::preset::names() {
        let preset = storlab_job::preset::load(name).map_err(bad_input)?;
        rows.push((preset.name, preset.description));
    }
    let width = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    let mut text = String::new();
    for (name, description) in rows {
        let _ = writeln!(text, "{name:<width$}  {description}");
    }
    crate::output::print(&text)
}
