//! SCSI commands as the USB class drivers send them and the bridge decodes them: READ/WRITE
//! CDBs through the `wire` codecs, and the UNMAP parameter list (SBC-3 §5.28.2, big-endian).

use crate::command::{Op, UNMAP_LIST_BYTES};
use crate::profile::SECTOR_BYTES;
use storlab_wire::scsi::Command;

/// Longest CDB the drivers send (READ/WRITE(16)).
pub const CDB_BYTES_MAX: usize = 16;
/// UNMAP parameter list header: UNMAP DATA LENGTH (2), BLOCK DESCRIPTOR DATA LENGTH (2), reserved (4).
const UNMAP_HEADER_BYTES: usize = 8;
/// One UNMAP block descriptor: LBA (8), NUMBER OF LOGICAL BLOCKS (4), reserved (4).
const UNMAP_DESCRIPTOR_BYTES: usize = 16;
/// Bytes of UNMAP DATA LENGTH itself, which it does not count.
const UNMAP_DATA_LENGTH_FIELD_BYTES: usize = 2;

/// What the device decoded from a CDB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScsiOp {
    Read { lba: u64, blocks: u32 },
    Write { lba: u64, blocks: u32 },
    Unmap { parameter_list_length: u16 },
}

impl ScsiOp {
    pub fn op(self) -> Op {
        match self {
            ScsiOp::Read { .. } => Op::Read,
            ScsiOp::Write { .. } => Op::Write,
            ScsiOp::Unmap { .. } => Op::Trim,
        }
    }
}

/// Encode the CDB for a host command into `out`; returns its length.
pub fn emit_cdb(op: Op, offset_bytes: u64, len_bytes: u32, out: &mut [u8; CDB_BYTES_MAX]) -> usize {
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
    };
    command
        .emit(out)
        .expect("READ/WRITE/UNMAP CDBs fit 16 bytes and validated ranges")
}

/// Decode a CDB the way the bridge firmware does. The simulator only sends READ, WRITE and
/// UNMAP, so anything else means a codec disagreement and is a simulator bug.
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
        other => panic!("bridge: unexpected SCSI command {other:?}"),
    }
}

/// The UNMAP parameter list for one range (the host's discard).
pub fn emit_unmap_list(offset_bytes: u64, len_bytes: u32, out: &mut [u8; UNMAP_LIST_BYTES]) {
    let lba = offset_bytes / u64::from(SECTOR_BYTES);
    let blocks = len_bytes / SECTOR_BYTES;
    out.fill(0);
    let data_len = (UNMAP_LIST_BYTES - UNMAP_DATA_LENGTH_FIELD_BYTES) as u16;
    out[0..2].copy_from_slice(&data_len.to_be_bytes());
    out[2..4].copy_from_slice(&(UNMAP_DESCRIPTOR_BYTES as u16).to_be_bytes());
    let d = UNMAP_HEADER_BYTES;
    out[d..d + 8].copy_from_slice(&lba.to_be_bytes());
    out[d + 8..d + 12].copy_from_slice(&blocks.to_be_bytes());
}

/// Decode an UNMAP parameter list into (lba, blocks) descriptors, calling `each` per descriptor.
pub fn parse_unmap_list(list: &[u8], mut each: impl FnMut(u64, u32)) {
    assert!(
        list.len() >= UNMAP_HEADER_BYTES,
        "UNMAP list shorter than its header"
    );
    let descriptors_len = usize::from(u16::from_be_bytes([list[2], list[3]]));
    let end = (UNMAP_HEADER_BYTES + descriptors_len).min(list.len());
    for d in list[UNMAP_HEADER_BYTES..end].chunks_exact(UNMAP_DESCRIPTOR_BYTES) {
        let lba = u64::from_be_bytes(d[0..8].try_into().expect("8 bytes"));
        let blocks = u32::from_be_bytes(d[8..12].try_into().expect("4 bytes"));
        each(lba, blocks);
    }
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
        let mut seen = Vec::new();
        parse_unmap_list(&list, |lba, blocks| seen.push((lba, blocks)));
        assert_eq!(seen, vec![(0x0102, 3)]);
    }
}
