//! The counters the simulator keeps for its report (`report.rs` reads them, the core adds to
//! them): plain numbers, a leaf so the report needs nothing of the core.

use std::collections::BTreeMap;

/// Counters for the report.
#[derive(Clone, Debug, Default)]
pub(crate) struct Counters {
    pub host_requests: u64,
    pub host_request_bytes: u64,
    pub commands: u64,
    pub merged_requests: u64,
    /// Reads the host driver served from its own read-ahead.
    pub driver_buffer_reads: u64,
    pub rejected_requests: u64,
    pub trims_to_drive: u64,
    pub trims_not_translated: u64,
    /// Cache flushes the drive carried out.
    pub flushes_to_drive: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Size of each read/write that reached the drive → count.
    pub drive_io_sizes: BTreeMap<u32, u64>,
    /// Smallest and largest host request sizes seen (read/write).
    pub host_size_min: u32,
    pub host_size_max: u32,
}
