//! Validation of the simulator against published measurements (`storlab validate`): the
//! reference file reader, the planner that resolves every entry before anything runs, and the
//! runner that measures each scenario on a fresh simulated stack. Rendering the results is the
//! front end's.

pub mod measure;
pub mod plan;
pub mod reference;

use crate::error::{bad_input, LabError};
use std::path::Path;

/// Read the reference file at `path` and plan every entry against the embedded profiles plus
/// `profiles` (`--profiles DIR`), keeping the entries whose id contains `filter`. Any mistake
/// in the file is bad input here, before anything runs.
pub fn load_plan(
    path: &Path,
    profiles: Option<&Path>,
    filter: Option<&str>,
) -> Result<Vec<plan::PlannedEntry>, LabError> {
    let reference = reference::read(path).map_err(bad_input)?;
    let profiles_dir = crate::stacks::profiles_dir(profiles).map_err(bad_input)?;
    let profiles = storlab_engine::engines::sim::load_profiles(&profiles_dir).map_err(bad_input)?;
    let mut planned = plan::plan(&reference, &profiles).map_err(bad_input)?;
    if let Some(filter) = filter {
        planned.retain(|p| p.entry.id.contains(filter));
        if planned.is_empty() {
            return Err(bad_input(format!(
                "{}: --filter {filter}: no entry id contains it",
                reference.file
            )));
        }
    }
    Ok(planned)
}
