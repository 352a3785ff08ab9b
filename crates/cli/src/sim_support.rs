//! Glue between the CLI and the simulator engine: opening stacks, listing them, writing pcaps.

use crate::exit::Failure;
use crate::provider::Provider;
use std::path::Path;
use storlab_runner::RunError;

type Engine = Box<dyn storlab_engine::IoEngine + Send>;

/// Open the simulated stack `stack`.
pub fn open_sim(
    stack: &str,
    _profiles: Option<&Path>,
    _seed: u64,
    _pcap: bool,
) -> Result<Engine, RunError> {
    Err(RunError::Plan {
        job: format!("sim:{stack}"),
        reason: "the simulator engine is not part of this build yet".into(),
    })
}

/// Write the pcap of every simulated stack used in the run to `path`.
pub fn write_pcap(_provider: &mut Provider, _path: &Path) -> Result<(), Failure> {
    Ok(())
}
