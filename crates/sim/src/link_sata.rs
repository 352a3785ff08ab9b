//! SATA link: timing (8b/10b, FIS framing, Data FISes of at most 8 KiB, one FIS at a time)
//! and the FISes the host side (AHCI or a bridge) and the drive exchange, as real bytes through
//! `storlab_wire::sata`: the command (Register H2D: FPDMA QUEUED with the NCQ tag, DMA EXT,
//! DATA SET MANAGEMENT or FLUSH CACHE EXT), and status (Set Device Bits for NCQ, Register D2H otherwise).

use crate::drive::DriveCommand;
use crate::event::CmdId;
use crate::profile::SataLinkProfile;
use storlab_wire::ata_log::{
    NcqErrorLogPacket, NcqErrorLogRepr, ATA_READ_LOG_EXT, LOG_ADDRESS_NCQ_COMMAND_ERROR,
    NCQ_ERROR_LOG_LEN,
};
use storlab_wire::sata::{
    self as fis, FisPacket, RegD2hRepr, RegH2dRepr, SetDeviceBitsRepr, STATUS_BSY, STATUS_ERR,
};

/// Register Host-to-Device FIS (command) length in bytes.
pub const FIS_REG_H2D_BYTES: u64 = fis::REG_H2D_LEN as u64;
/// Register Device-to-Host FIS (status) length in bytes.
pub const FIS_REG_D2H_BYTES: u64 = fis::REG_D2H_LEN as u64;
/// DMA Setup FIS (NCQ: the drive picks which tag's data moves next).
pub const FIS_DMA_SETUP_BYTES: u64 = fis::DMA_SETUP_LEN as u64;
/// DMA Activate FIS (non-queued write: the drive is ready for data).
pub const FIS_DMA_ACTIVATE_BYTES: u64 = fis::DMA_ACTIVATE_LEN as u64;
/// Set Device Bits FIS (NCQ completion).
pub const FIS_SET_DEVICE_BITS_BYTES: u64 = fis::SET_DEVICE_BITS_LEN as u64;
/// Header dword in front of every Data FIS's payload.
pub const FIS_DATA_HEADER_BYTES: u64 = fis::DATA_HEADER_LEN as u64;
/// One DATA SET MANAGEMENT (TRIM) payload block.
pub const DSM_BLOCK_BYTES: u64 = 512;
const DWORD_BYTES: u64 = 4;
/// No NCQ tag (a non-queued command).
const NO_TAG: u8 = u8::MAX;

/// NCQ tags in use between the host side (AHCI HBA or bridge) and the drive. A tag is taken
/// when the command FIS goes out and given back when its Set Device Bits FIS is sent, so a tag
/// is never reused while the drive could still report it.
#[derive(Clone, Debug)]
pub struct NcqTags {
    /// Bit `t` set: tag `t` is free.
    free: u32,
    /// Tag of each command id ([`NO_TAG`] when it holds none).
    tag_of: Vec<u8>,
}

impl NcqTags {
    /// `slots` tags (the drive's queue depth in use; at most 32) for `commands` command ids.
    pub fn new(slots: u32, commands: usize) -> NcqTags {
        assert!(
            (1..=u32::from(fis::NCQ_TAG_MAX) + 1).contains(&slots),
            "NCQ depth"
        );
        NcqTags {
            free: u32::MAX >> (32 - slots),
            tag_of: vec![NO_TAG; commands],
        }
    }

    /// Take the lowest free tag for `id` (AHCI and bridges both hand out the lowest).
    #[inline]
    pub fn acquire(&mut self, id: CmdId) -> u8 {
        assert!(self.free != 0, "more NCQ commands at the drive than tags");
        let tag = self.free.trailing_zeros() as u8;
        self.free &= !(1 << tag);
        let i = id as usize;
        if i >= self.tag_of.len() {
            self.tag_of.resize(i + 1, NO_TAG);
        }
        self.tag_of[i] = tag;
        tag
    }

    /// Give back `id`'s tag, if it holds one; returns it.
    pub fn release(&mut self, id: CmdId) -> Option<u8> {
        let slot = self.tag_of.get_mut(id as usize)?;
        let tag = std::mem::replace(slot, NO_TAG);
        if tag == NO_TAG {
            return None;
        }
        debug_assert_eq!(self.free & (1 << tag), 0, "tag released twice");
        self.free |= 1 << tag;
        Some(tag)
    }
}

/// Host side: encode the ATA command for `cmd` (FPDMA QUEUED with `tag`, else DMA EXT).
pub fn emit_rw_command(cmd: &DriveCommand, tag: Option<u8>, out: &mut [u8; fis::REG_H2D_LEN]) {
    let repr = match tag {
        Some(tag) => RegH2dRepr::fpdma_queued(cmd.write, tag, cmd.lba, cmd.blocks),
        None => RegH2dRepr::dma_ext(cmd.write, cmd.lba, cmd.blocks),
    }
    .expect("validated transfers fit an ATA command (48-bit LBA, at most 65536 sectors)");
    repr.emit(out).expect("buffer is one Register H2D FIS");
}

/// Host side: encode DATA SET MANAGEMENT (TRIM) announcing `blocks` 512-byte range blocks.
pub fn emit_dsm_command(blocks: u64, out: &mut [u8; fis::REG_H2D_LEN]) {
    let blocks = u16::try_from(blocks).expect("DSM payload fits a 16-bit block count");
    RegH2dRepr::dsm_trim(blocks)
        .emit(out)
        .expect("buffer is one Register H2D FIS");
}

/// Host side: encode FLUSH CACHE EXT (non-data, never queued).
pub fn emit_flush_command(out: &mut [u8; fis::REG_H2D_LEN]) {
    RegH2dRepr::flush_cache_ext()
        .emit(out)
        .expect("buffer is one Register H2D FIS");
}

/// What the drive decoded from a command FIS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtaCommand {
    /// A read or write, with its NCQ tag if queued.
    ReadWrite {
        command: DriveCommand,
        tag: Option<u8>,
    },
    /// DATA SET MANAGEMENT TRIM with this many 512-byte blocks of ranges.
    Trim { blocks: u16 },
    /// FLUSH CACHE EXT.
    Flush,
}

/// Drive side: decode a command FIS. The host side only sends what [`emit_rw_command`],
/// [`emit_dsm_command`] and [`emit_flush_command`] encode, so anything else is a codec disagreement (a simulator bug).
pub fn decode_command(bytes: &[u8]) -> AtaCommand {
    let h2d = RegH2dRepr::parse(&FisPacket::new_unchecked(bytes))
        .expect("drive: the host sent a Register H2D FIS wire cannot parse");
    assert!(h2d.is_command, "drive: command FIS without the C bit");
    let read_write = |write: bool, tag: Option<u8>| AtaCommand::ReadWrite {
        command: DriveCommand {
            write,
            lba: h2d.lba,
            blocks: h2d.sectors(),
        },
        tag,
    };
    match h2d.command {
        fis::ATA_READ_FPDMA_QUEUED => read_write(false, Some(h2d.ncq_tag())),
        fis::ATA_WRITE_FPDMA_QUEUED => read_write(true, Some(h2d.ncq_tag())),
        fis::ATA_READ_DMA_EXT => read_write(false, None),
        fis::ATA_WRITE_DMA_EXT => read_write(true, None),
        _ => decode_non_data_command(&h2d),
    }
}

/// The commands off the read/write path (TRIM, FLUSH CACHE EXT), out of line so the read/write
/// decoding stays small enough to inline where commands are sent.
#[cold]
#[inline(never)]
fn decode_non_data_command(h2d: &RegH2dRepr) -> AtaCommand {
    match h2d.command {
        fis::ATA_DATA_SET_MANAGEMENT => {
            assert_eq!(
                h2d.features,
                storlab_wire::ata::DSM_FEATURE_TRIM,
                "drive: DSM without TRIM"
            );
            AtaCommand::Trim { blocks: h2d.count }
        }
        fis::ATA_FLUSH_CACHE_EXT => AtaCommand::Flush,
        other => panic!("drive: unexpected ATA command {other:#04x}"),
    }
}

/// Room for the longest status FIS.
pub const STATUS_FIS_BYTES_MAX: usize = fis::REG_D2H_LEN;

/// ATA ERROR register bit 6, UNC: uncorrectable data error (ACS-3, ERROR field).
const ERROR_UNC: u8 = 0x40;
/// Drive side: the status of a command, Set Device Bits with its tag's SActive bit for NCQ,
/// else Register D2H; `failed` sets ERR in STATUS and UNC in ERROR (an unreadable sector).
/// Returns the FIS length.
pub fn emit_status(tag: Option<u8>, failed: bool, out: &mut [u8; STATUS_FIS_BYTES_MAX]) -> usize {
    let (status_bits, error) = if failed {
        (STATUS_ERR, ERROR_UNC)
    } else {
        (0, 0)
    };
    match tag {
        Some(tag) => {
            let mut sdb = SetDeviceBitsRepr::completed(1 << tag);
            sdb.status |= status_bits;
            sdb.error = error;
            sdb.emit(out)
        }
        None => {
            let mut d2h = RegD2hRepr::success();
            d2h.status |= status_bits;
            d2h.error = error;
            d2h.emit(out)
        }
    }
    .expect("buffer holds a status FIS")
}

/// The NCQ error recovery a host side runs after a queued command's status reports ERR: READ
/// LOG EXT of the NCQ Command Error log (ACS-3 log 10h; SATA 3.x NCQ error handling: the drive
/// takes no command until the log is read; Linux libata's `ata_eh_read_log_10h`), as real
/// bytes: the command FIS, the drive's PIO Setup FIS and the 512-byte page naming the failed
/// tag with the command's LBA and COUNT, encoded and checked by `storlab_wire::ata_log`.
/// Returns what the host read, and the link time of the exchange: command FIS, PIO Setup FIS,
/// one Data FIS.
pub fn read_ncq_error_log(
    link: &SataLink,
    failed_tag: u8,
    failed: &DriveCommand,
) -> (NcqErrorLogRepr, u64) {
    let command = RegH2dRepr::read_log_ext(LOG_ADDRESS_NCQ_COMMAND_ERROR, 1);
    let mut fis_bytes = [0u8; fis::REG_H2D_LEN];
    command.emit(&mut fis_bytes).expect("one Register H2D FIS");
    // Drive: decode the request, fill the page from the failed command.
    let asked = RegH2dRepr::parse(&FisPacket::new_unchecked(&fis_bytes[..]))
        .expect("drive: READ LOG EXT FIS");
    assert_eq!(
        (asked.command, asked.lba, asked.count),
        (
            ATA_READ_LOG_EXT,
            u64::from(LOG_ADDRESS_NCQ_COMMAND_ERROR),
            1
        ),
        "drive: expected READ LOG EXT of log 10h, one page"
    );
    let mut page = [0u8; NCQ_ERROR_LOG_LEN];
    NcqErrorLogRepr {
        tag: Some(failed_tag),
        status: fis::STATUS_DRDY | STATUS_ERR,
        error: ERROR_UNC,
        lba: failed.lba,
        device: fis::DEVICE_LBA,
        // COUNT as the command carried it: 0 stands for 65536 sectors.
        count: failed.blocks as u16,
        ..NcqErrorLogRepr::default()
    }
    .emit(&mut page)
    .expect("the failed command fits the log page");
    // Host: check the page and read the tag.
    let log = NcqErrorLogRepr::parse(&NcqErrorLogPacket::new_unchecked(&page[..]))
        .expect("host: NCQ Command Error log");
    assert_eq!(log.error, ERROR_UNC, "host: NCQ error log ERROR");
    let ns = link.fis_ns(FIS_REG_H2D_BYTES)
        + link.fis_ns(fis::PIO_SETUP_LEN as u64)
        + link.data_ns(NCQ_ERROR_LOG_LEN as u64);
    (log, ns)
}

/// Host side: parse a status FIS for `tag` (or, without a tag, the non-queued command).
/// Returns whether it reports an error (ERR with UNC); BSY is never set on a status.
pub fn check_status(bytes: &[u8], tag: Option<u8>) -> bool {
    let packet = FisPacket::new_unchecked(bytes);
    let status = match tag {
        Some(tag) => {
            let sdb = SetDeviceBitsRepr::parse(&packet)
                .expect("host: status FIS is not a Set Device Bits FIS");
            assert_eq!(sdb.sactive, 1 << tag, "host: SActive names another tag");
            sdb.status
        }
        None => {
            RegD2hRepr::parse(&packet)
                .expect("host: status FIS is not a Register D2H FIS")
                .status
        }
    };
    assert_eq!(status & STATUS_BSY, 0, "host: status with BSY");
    status & STATUS_ERR != 0
}

/// Precomputed timing of one SATA link.
#[derive(Clone, Debug)]
pub struct SataLink {
    max_data_fis_bytes: u64,
    /// Link-layer bytes around every FIS: SOF/CRC/EOF framing plus handshake primitives.
    per_fis_bytes: u64,
    byte_ps: u64,
}

impl SataLink {
    pub fn new(p: &SataLinkProfile) -> SataLink {
        let byte_ps = f64::from(p.line_bits_per_byte) * 1e12 / p.line_rate_bps as f64;
        SataLink {
            max_data_fis_bytes: p.max_data_fis_bytes.into(),
            per_fis_bytes: u64::from(p.fis_framing_bytes)
                + u64::from(p.fis_handshake_dwords) * DWORD_BYTES,
            byte_ps: byte_ps.round() as u64,
        }
    }

    /// One non-data FIS of `fis_bytes` (its own length as emitted, type dword included), with
    /// framing and handshake.
    #[inline]
    pub fn fis_ns(&self, fis_bytes: u64) -> u64 {
        ((fis_bytes + self.per_fis_bytes) * self.byte_ps).div_ceil(1000)
    }

    /// A data phase of `bytes`: ceil(bytes / 8 KiB) Data FISes, each a header dword plus its
    /// payload, with framing and handshake.
    #[inline]
    pub fn data_ns(&self, bytes: u64) -> u64 {
        let fises = bytes.div_ceil(self.max_data_fis_bytes).max(1);
        ((bytes + fises * (FIS_DATA_HEADER_BYTES + self.per_fis_bytes)) * self.byte_ps)
            .div_ceil(1000)
    }

    /// Time of the first Data FIS (the pipelining piece).
    #[inline]
    pub fn first_piece_ns(&self, bytes: u64) -> u64 {
        self.data_ns(bytes.min(self.max_data_fis_bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sata_3g_data_ceiling_is_just_under_300_mb_s() {
        let link = SataLink::new(&SataLinkProfile {
            description: String::new(),
            line_rate_bps: 3_000_000_000,
            line_bits_per_byte: 10,
            max_data_fis_bytes: 8192,
            fis_framing_bytes: 12,
            fis_handshake_dwords: 10,
        });
        let bytes = 1 << 20;
        let mb_s = bytes as f64 / link.data_ns(bytes) as f64 * 1000.0;
        assert!((290.0..300.0).contains(&mb_s), "{mb_s}");
    }

    #[test]
    fn commands_cross_as_bytes_and_decode_back() {
        let cmd = DriveCommand {
            write: true,
            lba: 0x1234_5678,
            blocks: 256,
        };
        let mut h2d = [0xA5; fis::REG_H2D_LEN];
        emit_rw_command(&cmd, Some(9), &mut h2d);
        assert_eq!(h2d[2], fis::ATA_WRITE_FPDMA_QUEUED);
        assert_eq!(
            decode_command(&h2d),
            AtaCommand::ReadWrite {
                command: cmd,
                tag: Some(9)
            }
        );
        emit_rw_command(&cmd, None, &mut h2d);
        assert_eq!(h2d[2], fis::ATA_WRITE_DMA_EXT);
        emit_dsm_command(3, &mut h2d);
        assert_eq!(decode_command(&h2d), AtaCommand::Trim { blocks: 3 });
    }

    #[test]
    fn status_names_the_tag() {
        let mut out = [0; STATUS_FIS_BYTES_MAX];
        let n = emit_status(Some(4), false, &mut out);
        assert_eq!(n as u64, FIS_SET_DEVICE_BITS_BYTES);
        assert!(!check_status(&out[..n], Some(4)));
        let n = emit_status(None, false, &mut out);
        assert_eq!(n as u64, FIS_REG_D2H_BYTES);
        assert!(!check_status(&out[..n], None));
        let n = emit_status(Some(4), true, &mut out);
        assert!(check_status(&out[..n], Some(4)), "ERR reaches the host");
        let n = emit_status(None, true, &mut out);
        assert!(check_status(&out[..n], None), "ERR reaches the host");
    }

    #[test]
    fn the_ncq_error_log_names_the_failed_tag() {
        let link = SataLink::new(&SataLinkProfile {
            description: String::new(),
            line_rate_bps: 3_000_000_000,
            line_bits_per_byte: 10,
            max_data_fis_bytes: 8192,
            fis_framing_bytes: 12,
            fis_handshake_dwords: 10,
        });
        let failed = DriveCommand {
            write: false,
            lba: 0x1234_5678,
            blocks: 8,
        };
        let (log, ns) = read_ncq_error_log(&link, 17, &failed);
        assert_eq!((log.tag, log.lba, log.count), (Some(17), 0x1234_5678, 8));
        assert!(ns > link.data_ns(512), "{ns}");
    }

    #[test]
    #[should_panic(expected = "SActive")]
    fn status_for_another_tag_is_caught() {
        let mut out = [0; STATUS_FIS_BYTES_MAX];
        let n = emit_status(Some(4), false, &mut out);
        check_status(&out[..n], Some(5));
    }

    #[test]
    fn ncq_tags_hand_out_lowest_free_and_come_back() {
        let mut tags = NcqTags::new(2, 4);
        assert_eq!((tags.acquire(0), tags.acquire(3)), (0, 1));
        assert_eq!(tags.release(0), Some(0));
        assert_eq!(tags.release(0), None);
        assert_eq!(tags.acquire(2), 0);
    }
}
