//! `storlab presets`: lists the shipped presets with a one-line description each.

use crate::exit::{bad_input, Failure};

pub fn run() -> Result<(), Failure> {
    let mut rows = Vec::new();
    for name in storlab_job::preset::names() {
        let preset = storlab_job::preset::load(name).map_err(bad_input)?;
        rows.push((preset.name, preset.description));
    }
    let width = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    for (name, description) in rows {
        println!("{name:<width$}  {description}");
    }
    Ok(())
}
