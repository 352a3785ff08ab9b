//! REPORT LUNS parameter data: a length-prefixed list of 8-byte LUNs.

use super::Lun;
use crate::bytes::{be32, put_be32};
use crate::error::{need, room, Error, Result};

/// Length of the REPORT LUNS header.
pub const REPORT_LUNS_HEADER_LEN: usize = 8;
/// Length of one LUN entry.
pub const LUN_LEN: usize = 8;

/// Parses REPORT LUNS data; LUNs beyond the buffer (a short allocation length) are omitted,
/// as SPC allows.
pub fn parse_report_luns(data: &[u8]) -> Result<impl Iterator<Item = Lun> + '_> {
    need("REPORT LUNS header", data, REPORT_LUNS_HEADER_LEN)?;
    let list_len = be32(&data[0..4]) as usize;
    if !list_len.is_multiple_of(LUN_LEN) {
        return Err(Error::BadField {
            field: "LUN LIST LENGTH",
            value: list_len as u64,
            reason: "must be a multiple of 8",
        });
    }
    let end = (REPORT_LUNS_HEADER_LEN.saturating_add(list_len)).min(data.len());
    Ok(data[REPORT_LUNS_HEADER_LEN..end]
        .chunks_exact(LUN_LEN)
        .map(|c| {
            let mut lun = [0u8; LUN_LEN];
            lun.copy_from_slice(c);
            Lun(lun)
        }))
}

/// Writes REPORT LUNS data for `luns`; returns its length.
pub fn emit_report_luns(luns: &[Lun], buffer: &mut [u8]) -> Result<usize> {
    let len = REPORT_LUNS_HEADER_LEN + luns.len() * LUN_LEN;
    room("REPORT LUNS data", buffer, len)?;
    let out = &mut buffer[..len];
    out.fill(0);
    put_be32(&mut out[0..4], (luns.len() * LUN_LEN) as u32);
    for (lun, chunk) in luns
        .iter()
        .zip(out[REPORT_LUNS_HEADER_LEN..].chunks_exact_mut(LUN_LEN))
    {
        chunk.copy_from_slice(&lun.0);
    }
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_single_lun() {
        let golden = [
            0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
        ];
        let luns = [Lun::from_index(0), Lun::from_index(1)];
        assert!(parse_report_luns(&golden).unwrap().eq(luns.iter().copied()));
        let mut buf = [0xA5u8; 24];
        assert_eq!(emit_report_luns(&luns, &mut buf), Ok(24));
        assert_eq!(buf, golden);
        assert!(parse_report_luns(&[0, 0, 0, 3, 0, 0, 0, 0]).is_err());
    }
}
