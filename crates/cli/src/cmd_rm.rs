//! `storlab rm RUN…`: deletes saved runs and everything stored with them.

use crate::args::RmArgs;
use crate::db_support::{db_failure, parse_runs};
use crate::exit::Failure;
use crate::say::say;

pub fn run(args: RmArgs) -> Result<(), Failure> {
    let references = parse_runs(&args.runs)?;
    let mut database = args.db.open_existing()?;
    // Resolve every id first, so a typo in the last one deletes nothing.
    let mut ids = references
        .iter()
        .map(|r| database.resolve(*r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(db_failure)?;
    // The same run named twice (`rm r1 r1`, or an id and a reference to it) is deleted once:
    // its second deletion would find nothing and fail after the first had happened.
    let mut seen = std::collections::HashSet::new();
    ids.retain(|id| seen.insert(*id));
    for id in ids {
        database
            .delete_run(storlab_db::RunRef::Id(id))
            .map_err(db_failure)?;
        say!("storlab: deleted run {id}");
    }
    Ok(())
}
