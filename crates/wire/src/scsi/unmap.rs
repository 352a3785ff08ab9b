//! UNMAP parameter list: the header and 16-byte block descriptors a host sends after the
//! UNMAP CDB.

use crate::bytes::{be16, be32, be64, put_be16, put_be32, put_be64};
use crate::error::{need, room, Error, Result};

/// Length of the parameter list header.
pub const UNMAP_HEADER_LEN: usize = 8;
/// Length of one block descriptor.
pub const UNMAP_DESCRIPTOR_LEN: usize = 16;
/// Bytes the UNMAP DATA LENGTH field does not count (itself).
const DATA_LENGTH_FIELD_LEN: usize = 2;

/// One UNMAP block descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UnmapDescriptor {
    /// First logical block.
    pub lba: u64,
    /// Number of logical blocks.
    pub blocks: u32,
}

/// A validated UNMAP parameter list; iterate its descriptors with [`Self::descriptors`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnmapParameterList<'a> {
    descriptors: &'a [u8],
}

impl<'a> UnmapParameterList<'a> {
    /// Validates the header against the buffer; a buffer shorter than 8 bytes is an empty
    /// list only when it is empty (SBC allows a parameter list length of zero).
    pub fn parse(data: &'a [u8]) -> Result<Self> {
        if data.is_empty() {
            return Ok(UnmapParameterList { descriptors: &[] });
        }
        need("UNMAP parameter list header", data, UNMAP_HEADER_LEN)?;
        let data_length = usize::from(be16(&data[0..2]));
        let descriptor_length = usize::from(be16(&data[2..4]));
        if descriptor_length % UNMAP_DESCRIPTOR_LEN != 0 {
            return Err(Error::BadField {
                field: "UNMAP BLOCK DESCRIPTOR DATA LENGTH",
                value: descriptor_length as u64,
                reason: "must be a multiple of 16",
            });
        }
        if data_length + DATA_LENGTH_FIELD_LEN < UNMAP_HEADER_LEN + descriptor_length {
            return Err(Error::BadField {
                field: "UNMAP DATA LENGTH",
                value: data_length as u64,
                reason: "smaller than header plus block descriptors",
            });
        }
        let end = UNMAP_HEADER_LEN + descriptor_length;
        need("UNMAP block descriptors", data, end)?;
        Ok(UnmapParameterList {
            descriptors: &data[UNMAP_HEADER_LEN..end],
        })
    }

    /// The block descriptors.
    pub fn descriptors(&self) -> impl Iterator<Item = UnmapDescriptor> + 'a {
        self.descriptors
            .chunks_exact(UNMAP_DESCRIPTOR_LEN)
            .map(|d| UnmapDescriptor {
                lba: be64(&d[0..8]),
                blocks: be32(&d[8..12]),
            })
    }

    /// Number of block descriptors.
    pub fn len(&self) -> usize {
        self.descriptors.len() / UNMAP_DESCRIPTOR_LEN
    }

    /// True when the list names no blocks.
    pub fn is_empty(&self) -> bool {
        self.descriptors.is_empty()
    }
}

/// Bytes a parameter list of `count` descriptors occupies.
pub fn unmap_parameter_list_len(count: usize) -> usize {
    UNMAP_HEADER_LEN + count * UNMAP_DESCRIPTOR_LEN
}

/// Writes an UNMAP parameter list; returns its length (the CDB's PARAMETER LIST LENGTH).
pub fn emit_unmap_parameter_list(
    descriptors: &[UnmapDescriptor],
    buffer: &mut [u8],
) -> Result<usize> {
    let len = unmap_parameter_list_len(descriptors.len());
    let too_many = Error::BadField {
        field: "UNMAP BLOCK DESCRIPTOR DATA LENGTH",
        value: descriptors.len() as u64,
        reason: "too many descriptors for a 16-bit length",
    };
    let data_length = u16::try_from(len - DATA_LENGTH_FIELD_LEN).map_err(|_| too_many)?;
    room("UNMAP parameter list", buffer, len)?;
    let out = &mut buffer[..len];
    out.fill(0);
    put_be16(&mut out[0..2], data_length);
    put_be16(&mut out[2..4], (len - UNMAP_HEADER_LEN) as u16);
    for (d, chunk) in descriptors
        .iter()
        .zip(out[UNMAP_HEADER_LEN..].chunks_exact_mut(UNMAP_DESCRIPTOR_LEN))
    {
        put_be64(&mut chunk[0..8], d.lba);
        put_be32(&mut chunk[8..12], d.blocks);
    }
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_two_descriptors() {
        let golden: [u8; 40] = [
            0x00, 0x26, 0x00, 0x20, 0, 0, 0, 0, //
            0, 0, 0, 0, 0, 0, 0x10, 0x00, 0, 0, 0x01, 0x00, 0, 0, 0, 0, //
            0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0,
        ];
        let descs = [
            UnmapDescriptor {
                lba: 0x1000,
                blocks: 256,
            },
            UnmapDescriptor {
                lba: 1 << 32,
                blocks: 8,
            },
        ];
        let list = UnmapParameterList::parse(&golden).unwrap();
        assert_eq!(list.len(), 2);
        assert!(list.descriptors().eq(descs.iter().copied()));
        let mut buf = [0xA5u8; 41];
        assert_eq!(emit_unmap_parameter_list(&descs, &mut buf), Ok(40));
        assert_eq!(&buf[..40], &golden);
        assert_eq!(buf[40], 0xA5);
    }

    #[test]
    fn damaged_lists_name_the_field() {
        let mut bad = [0u8; 24];
        bad[3] = 15;
        assert!(matches!(
            UnmapParameterList::parse(&bad),
            Err(Error::BadField {
                field: "UNMAP BLOCK DESCRIPTOR DATA LENGTH",
                ..
            })
        ));
        bad[1] = 0x26;
        bad[3] = 32;
        assert!(matches!(
            UnmapParameterList::parse(&bad),
            Err(Error::Truncated {
                what: "UNMAP block descriptors",
                ..
            })
        ));
        assert!(UnmapParameterList::parse(&[]).unwrap().is_empty());
    }
}
