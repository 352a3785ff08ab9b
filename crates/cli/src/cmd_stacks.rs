//! `storlab stacks`: lists the simulated stacks.

use crate::args::StacksArgs;
use crate::exit::Failure;

pub fn run(_args: StacksArgs) -> Result<(), Failure> {
    Ok(())
}
