//! What a caller hands the simulator and what it gets back: a request naming its slot buffer,
//! and the completion with the bytes moved or the errno Linux would return.

use crate::op::Op;

/// errno for a request outside the device or not aligned to its logical block.
pub const ERRNO_EINVAL: i32 = 22;
/// errno of a read the drive could not do (MEDIUM ERROR): Linux's SCSI midlayer fails it with
/// `BLK_STS_MEDIUM`, which the block layer returns as -ENODATA (block/blk-core.c
/// `blk_errors`).
pub const ERRNO_ENODATA: i32 = 61;
/// errno of a command that still failed after the host's retries (`BLK_STS_IOERR`).
pub const ERRNO_EIO: i32 = 5;
/// errno of a discard on a queue without discard (`HostProfile::discard = false`): Linux's
/// `blkdev_issue_discard` returns -EOPNOTSUPP when `bdev_max_discard_sectors` is 0.
pub const ERRNO_EOPNOTSUPP: i32 = 95;

/// A request handed to the simulator. `slot` names the slot buffer that holds write data or
/// receives read data, and identifies the request until its completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimRequest {
    pub slot: u32,
    pub op: Op,
    pub offset_bytes: u64,
    pub len_bytes: u32,
}

/// A finished request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimCompletion {
    pub slot: u32,
    /// Bytes transferred, or a positive errno.
    pub result: Result<u32, i32>,
    pub done_ns: u64,
}
