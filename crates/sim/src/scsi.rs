//! SCSI commands as the USB class drivers send them and the bridge decodes them: READ/WRITE
//! and SYNCHRONIZE CACHE(10) CDBs and the UNMAP parameter list (SBC-3 §5.28.2), all through
//! the `wire` codecs.

use crate::command::UNMAP_LIST_BYTES;
use crate::op::Op;
use crate::profile::SECTOR_BYTES;
use storlab_wire::scsi::{emit_unmap_parameter_list, Command, UnmapDescriptor, UnmapParameterList};

/// Longest CDB the drivers send (READ/WRITE(16)).
pub const CDB_BYTES_MAX: usize = 16;
/// What the device decoded from a CDB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScsiOp {
    Read {
        lba: u64,
        blocks: u32,
    },
    Write {
        lba: u64,
        blocks: u32,
    },
    Unmap {
        parameter_list_length: u16,
    },
    /// SYNCHRONIZE CACHE(10) of the whole medium, status after the flush (IMMED clear).
    SynchronizeCache,
}

impl ScsiOp {
    pub fn op(self) -> Op {
        match self {
            ScsiOp::Read { .. } => Op::Read,
            ScsiOp::Write { .. } => Op::Write,
            ScsiOp::Unmap { .. } => Op::Trim,
            ScsiOp::SynchronizeCache => Op::Flush,
        }
    }
}

/// Encode the CDB for a host command into `out`; returns its length.
// Inlined into the event loop as before the flush arms grew it (ADR 0019).
#[inline]
pub fn emit_cdb(op: Op, offset_bytes: u64, len_bytes: u32, out: &mut [u8; CDB_BYTES_MAX]) -> usize {
    if op == Op::Flush {
        return emit_synchronize_cache(out);
    }
    let lba = offset_bytes / u64::from(SECTOR_BYTES);
    let blocks = len_bytes / SECTOR_BYTES;
    let command = match op {
        Op::Read => Command::read(lba, blocks),
        Op::Write => Command::write(lba, blocks),
        Op::Trim => Command::Unmap {
            anchor: false,
            group_number: 0,
            parameter_list_length: UNMAP_LIST_BYTES as u16,
        },
        Op::Flush => unreachable!("emitted above"),
    };
    command
        .emit(out)
        .expect("READ/WRITE/UNMAP CDBs fit 16 bytes and validated ranges")
}

/// Linux's sd sends SYNCHRONIZE CACHE(10) with LBA 0 and 0 blocks (the whole medium) and IMMED
/// clear (`sd_sync_cache`, `sd_setup_flush_cmnd`). Out of line, so the read/write CDB path
/// stays as small as it was and still inlines where commands are sent (ADR 0019).
#[cold]
#[inline(never)]
fn emit_synchronize_cache(out: &mut [u8; CDB_BYTES_MAX]) -> usize {
    Command::SynchronizeCache10 {
        lba: 0,
        blocks: 0,
        immediate: false,
    }
    .emit(out)
    .expect("SYNCHRONIZE CACHE(10) fits 16 bytes")
}

/// Decode a CDB the way the bridge firmware does. The simulator only sends READ, WRITE, UNMAP
/// and SYNCHRONIZE CACHE(10) of the whole medium, so anything else means a codec disagreement
/// and is a simulator bug.
// Inlined into the event loop as before the flush arms grew it (ADR 0019).
#[inline]
pub fn decode_cdb(cdb: &[u8]) -> ScsiOp {
    match Command::parse(cdb).expect("bridge: the host sent a CDB wire cannot parse") {
        Command::Read { lba, blocks, .. } => ScsiOp::Read { lba, blocks },
        Command::Write { lba, blocks, .. } => ScsiOp::Write { lba, blocks },
        Command::Unmap {
            parameter_list_length,
            ..
        } => ScsiOp::Unmap {
            parameter_list_length,
        },
        other => decode_other_cdb(other),
    }
}

/// The commands off the read/write path: SYNCHRONIZE CACHE(10) of the whole medium; anything
/// else is a codec disagreement.
#[cold]
#[inline(never)]
fn decode_other_cdb(command: Command) -> ScsiOp {
    match command {
        Command::SynchronizeCache10 {
            lba: 0,
            blocks: 0,
            immediate: false,
        } => ScsiOp::SynchronizeCache,
        other => panic!("bridge: unexpected SCSI command {other:?}"),
    }
}

/// The UNMAP parameter list for one range (the host's discard), encoded by `wire`.
pub fn emit_unmap_list(offset_bytes: u64, len_bytes: u32, out: &mut [u8; UNMAP_LIST_BYTES]) {
    let descriptor = UnmapDescriptor {
        lba: offset_bytes / u64::from(SECTOR_BYTES),
        blocks: len_bytes / SECTOR_BYTES,
    };
    let n = emit_unmap_parameter_list(&[descriptor], out)
        .expect("one descriptor fits the UNMAP list buffer");
    debug_assert_eq!(n, storlab_wire::scsi::unmap_parameter_list_len(1));
}

/// Decode an UNMAP parameter list the way the bridge firmware does (with `wire`). The host
/// only sends lists `wire` emitted, so a parse failure is a codec disagreement: a simulator bug.
pub fn parse_unmap_list(list: &[u8]) -> UnmapParameterList<'_> {
    UnmapParameterList::parse(list).expect("bridge: the host sent an UNMAP list wire cannot parse")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdbs_round_trip_through_wire() {
        let mut cdb = [0u8; CDB_BYTES_MAX];
        let n = emit_cdb(Op::Read, 4096 * 10, 8192, &mut cdb);
        assert_eq!(n, 10, "small LBAs use READ(10)");
        assert_eq!(
            decode_cdb(&cdb[..n]),
            ScsiOp::Read {
                lba: 80,
                blocks: 16
            }
        );
        let n = emit_cdb(Op::Write, 3 << 41, 512, &mut cdb);
        assert_eq!(n, 16, "LBAs beyond 32 bits use WRITE(16)");
        assert_eq!(
            decode_cdb(&cdb[..n]),
            ScsiOp::Write {
                lba: 3 << 32,
                blocks: 1
            }
        );
    }

    #[test]
    fn synchronize_cache_golden_bytes() {
        let mut cdb = [0xA5u8; CDB_BYTES_MAX];
        let n = emit_cdb(Op::Flush, 0, 0, &mut cdb);
        // Opcode 35h, IMMED clear, LBA 0, group 0, 0 blocks (the whole medium), control 0.
        assert_eq!(&cdb[..n], &[0x35, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(decode_cdb(&cdb[..n]), ScsiOp::SynchronizeCache);
        assert_eq!(ScsiOp::SynchronizeCache.op(), Op::Flush);
    }

    #[test]
    fn unmap_list_golden_bytes() {
        let mut list = [0xA5u8; UNMAP_LIST_BYTES];
        emit_unmap_list(512 * 0x0102, 512 * 3, &mut list);
        assert_eq!(
            list,
            [
                0, 22, 0, 16, 0, 0, 0, 0, // header
                0, 0, 0, 0, 0, 0, 1, 2, // LBA
                0, 0, 0, 3, 0, 0, 0, 0, // blocks, reserved
            ]
        );
        let seen: Vec<_> = parse_unmap_list(&list)
            .descriptors()
            .map(|d| (d.lba, d.blocks))
            .collect();
        assert_eq!(seen, vec![(0x0102, 3)]);
        assert_eq!(
            storlab_wire::scsi::unmap_parameter_list_len(1),
            UNMAP_LIST_BYTES
        );
    }
}
