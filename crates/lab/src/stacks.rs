//! The simulated stacks a session can open: where extra profiles come from, opening one stack,
//! listing them all.

use crate::error::{bad_input, LabError};
use std::path::{Path, PathBuf};
use storlab_engine::engines::sim::{default_profiles_dir, list_stacks, SimOpening};
use storlab_engine::registry::{open_engine, EngineKind, EngineOptions};
use storlab_runner::RunError;

type Engine = Box<dyn storlab_engine::IoEngine + Send>;

/// The profiles directory to add to the embedded profiles: `--profiles DIR` (which must exist),
/// else the workspace's `profiles/` when storlab runs from a checkout.
pub fn profiles_dir(requested: Option<&Path>) -> Result<PathBuf, String> {
    match requested {
        Some(dir) if dir.is_dir() => Ok(dir.to_path_buf()),
        Some(dir) => Err(format!("--profiles {}: not a directory", dir.display())),
        // A directory that does not exist adds nothing: the embedded profiles stand alone.
        None => Ok(default_profiles_dir().unwrap_or_else(|| PathBuf::from("profiles"))),
    }
}

/// Open the simulated stack `stack`, through the engine registry as every engine opens.
pub fn open_sim(
    stack: &str,
    profiles: Option<&Path>,
    seed: u64,
    pcap: bool,
    timing_only: bool,
    faults: Option<&storlab_sim::FaultPlan>,
) -> Result<Engine, RunError> {
    let plan_error = |reason: String| RunError::Plan {
        job: format!("sim:{stack}"),
        reason,
    };
    let opening = SimOpening {
        stack: stack.to_owned(),
        profiles_dir: profiles_dir(profiles).map_err(plan_error)?,
        seed,
        pcap,
        timing_only,
        faults: faults.cloned(),
    };
    open_engine(EngineKind::Sim, &opening, &EngineOptions::default())
        .map_err(|e| plan_error(e.to_string()))
}

/// Refuses, as bad input, a simulated target a run could not open: an unknown stack, broken
/// profiles, or a fault plan the stack cannot take (`Simulator::set_faults`'s refusals). It
/// opens the stack as a run does and drops it, so a check before the first of several targets
/// refuses exactly what the run would.
pub fn check_sim(
    stack: &str,
    profiles: Option<&Path>,
    faults: Option<&storlab_sim::FaultPlan>,
) -> Result<(), LabError> {
    match open_sim(
        stack,
        profiles,
        storlab_job::DEFAULT_SEED,
        false,
        false,
        faults,
    ) {
        Ok(_) => Ok(()),
        Err(RunError::Plan { reason, .. }) => Err(bad_input(reason)),
        Err(other) => Err(bad_input(other)),
    }
}

/// The simulated stacks: (name, description), sorted.
pub fn stacks(profiles: Option<&Path>) -> Result<Vec<(String, String)>, LabError> {
    let dir = profiles_dir(profiles).map_err(bad_input)?;
    if profiles.is_some() {
        // Listing silently without the user's directory would hide their mistake, and so
        // would listing a stack whose parts the user's files broke: resolve every stack.
        storlab_engine::engines::sim::load_profiles(&dir)
            .and_then(|set| set.validate_all())
            .map_err(bad_input)?;
    }
    Ok(list_stacks(&dir))
}
