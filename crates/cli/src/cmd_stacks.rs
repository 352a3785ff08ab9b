//! `storlab stacks`: lists the simulated stacks (embedded ones plus a profiles directory).

use crate::args::StacksArgs;
use crate::exit::Failure;

pub fn run(args: StacksArgs) -> Result<(), Failure> {
    let stacks = crate::sim_support::stacks(args.profiles.as_deref())?;
    let width = stacks.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    for (name, description) in stacks {
        println!("{name:<width$}  {description}");
    }
    Ok(())
}
