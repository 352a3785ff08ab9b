//! `storlab stacks`: lists the simulated stacks (embedded ones plus a profiles directory).

use crate::args::StacksArgs;
use crate::exit::Failure;
use std::fmt::Write;

pub fn run(args: StacksArgs) -> Result<(), Failure> {
    let stacks = storlab_lab::stacks::stacks(args.profiles.as_deref())?;
    let width = stacks.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    let mut text = String::new();
    for (name, description) in stacks {
        let _ = writeln!(text, "{name:<width$}  {description}");
    }
    crate::output::print(&text)
}
