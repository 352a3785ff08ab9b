//! The warnings the runner derives from a job's outcome, typed: a kind for code and tests, a
//! message (`Display`) for every output, which carries them as text.

use std::fmt;
use storlab_engine::SimWarning;

/// A warning about one job's figures.
#[derive(Clone, Debug, PartialEq)]
pub enum Warning {
    /// The device saw transfers larger than any the job issued: a driver merged requests, so a
    /// small-block test measured large blocks.
    LargerTransfers {
        /// This job's transfers above `issued_max_bytes`.
        transfers: u64,
        largest_bytes: u64,
        issued_max_bytes: u64,
        /// Requests the simulated driver merged during the job (0 when unknown).
        merged_requests: u64,
        /// Reads the simulated driver answered from its own read-ahead during the job.
        driver_buffer_reads: u64,
    },
    /// What the simulator raised about the job (see [`SimWarning`]).
    Simulator(SimWarning),
    /// What the simulator raised while steps put the target in the state the job was measured
    /// in (UNMAPs a bridge dropped: the drive was not trimmed).
    DuringPreparation(SimWarning),
}

impl Warning {
    /// A stable name for the warning's kind (`larger-transfers`, or the simulator's kinds).
    pub fn kind(&self) -> &'static str {
        match self {
            Warning::LargerTransfers { .. } => "larger-transfers",
            Warning::Simulator(warning) | Warning::DuringPreparation(warning) => warning.kind(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::LargerTransfers {
                transfers,
                largest_bytes,
                issued_max_bytes,
                merged_requests,
                driver_buffer_reads,
            } => {
                write!(
                    f,
                    "device-side transfers larger than requested: the drive saw {transfers} \
                     transfers of up to {largest_bytes} bytes while this job issued at most \
                     {issued_max_bytes} bytes"
                )?;
                match (*merged_requests, *driver_buffer_reads) {
                    (0, 0) => {}
                    (merged, 0) => write!(f, " (the driver merged {merged} requests)")?,
                    (0, reads) => write!(
                        f,
                        " (the driver served {reads} reads from its own read-ahead)"
                    )?,
                    (merged, reads) => write!(
                        f,
                        " (the driver merged {merged} requests and served {reads} reads from \
                         its own read-ahead)"
                    )?,
                }
                write!(
                    f,
                    "; the figures measure merged I/O, not the requested block size"
                )
            }
            Warning::Simulator(warning) => warning.fmt(f),
            Warning::DuringPreparation(warning) => {
                write!(f, "while the target was put in its state: {warning}")
            }
        }
    }
}
