//! `storlab rm RUN…`: deletes saved runs and everything stored with them.

use crate::db_support::{db_failure, parse_runs, DbArgs};
use crate::exit::Failure;
use crate::output::say;
use clap::Args;

#[derive(Debug, Args)]
pub struct RmArgs {
    /// The runs to delete: rN, N, or last.
    #[arg(required = true)]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: RmArgs) -> Result<(), Failure> {
    let references = parse_runs(&args.runs)?;
    let mut database = args.db.open_existing()?;
    // Resolve every id first, so a typo in the last one deletes nothing.
    let ids = references
        .iter()
        .map(|r| database.resolve(*r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(db_failure)?;
    for id in ids {
        database
            .delete_run(storlab_db::RunRef::Id(id))
            .map_err(db_failure)?;
        say!("storlab: deleted run {id}");
    }
    Ok(())
}
