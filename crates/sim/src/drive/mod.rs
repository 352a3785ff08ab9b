//! The drive interface every drive model implements (simple now; detailed SSD/HDD models later
//! sit behind the same trait), and the command it executes.

pub mod simple;

use crate::resource::Flow;
use rand_chacha::ChaCha8Rng;

/// What the drive is asked to do, as decoded from the ATA command the bridge (or host) sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DriveCommand {
    pub write: bool,
    pub lba: u64,
    pub blocks: u32,
}

/// One TRIM range: `blocks` logical blocks from `lba`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrimRange {
    pub lba: u64,
    pub blocks: u64,
}

/// Busy time and counters a drive reports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DriveStats {
    /// Busy time of the drive's most loaded part (model-specific; see each model).
    pub busy_ns: u64,
    pub commands: u64,
    pub bytes: u64,
    pub trims: u64,
    pub trimmed_bytes: u64,
}

/// A drive model. State persists between jobs (the same instance serves a whole session).
pub trait Drive: Send {
    fn capacity_bytes(&self) -> u64;
    fn logical_block_bytes(&self) -> u32;
    /// NCQ depth the drive advertises (1 = no queueing).
    fn queue_depth(&self) -> u32;
    /// A read arriving at `now_ns`: when its data leaves the media (start, end, first piece).
    fn read(&mut self, now_ns: u64, command: &DriveCommand, rng: &mut ChaCha8Rng) -> Flow;
    /// A write whose data arrives as `incoming`: when the drive has absorbed it; `end_ns` of
    /// the result is when the drive can report completion.
    fn write(&mut self, incoming: Flow, command: &DriveCommand, rng: &mut ChaCha8Rng) -> Flow;
    /// TRIM ranges arriving at `now_ns`; returns the completion time.
    fn trim(&mut self, now_ns: u64, ranges: &[TrimRange]) -> u64;
    fn stats(&self) -> DriveStats;
}
