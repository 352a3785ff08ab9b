//! What putting a target in its device state took (`--state`, preconditioning, TRIMs between
//! points): recorded by the runner's sweeper, kept by the report apart from every job's figures.

use serde::{Deserialize, Serialize};

/// The figures of one target's state preparation for one purpose: in no job's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatePreparation {
    /// The target (`sim:usb3-uas-ssd`, a path).
    pub target: String,
    /// What the steps were for: the state (`seq-filled`), `preconditioning` or `trim before
    /// each point`.
    pub purpose: String,
    pub steps: u32,
    pub bytes_written: u64,
    pub bytes_trimmed: u64,
    /// Wall-clock time the steps took.
    pub wall_ns: u64,
    /// Simulated targets: commands the stack served for the steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim_commands: Option<u64>,
    /// Simulated targets: the simulated time the steps took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim_elapsed_ns: Option<u64>,
}
