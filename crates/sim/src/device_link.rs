//! The link between the host side (the bridge's firmware, or an AHCI controller) and the drive:
//! what crosses it per command (the command, the data phase's setup, the status) and what it
//! costs on the link. One closed enum; SATA with its NCQ tags today, NVMe beside it later.
//! Every caller matches it whole, so a new link fails to compile until each step handles it.

use crate::command::Command;
use crate::cx::{layer, Cx};
use crate::drive::{DriveCommand, TrimRange};
use crate::event::CmdId;
use crate::link_sata::{
    check_status, decode_command, emit_dsm_command, emit_flush_command, emit_rw_command,
    emit_status, read_ncq_error_log, AtaCommand, NcqTags, SataLink, DSM_BLOCK_BYTES,
    FIS_DMA_ACTIVATE_BYTES, FIS_DMA_SETUP_BYTES, FIS_REG_H2D_BYTES, STATUS_FIS_BYTES_MAX,
};
use crate::profile::TRIM_RANGE_SECTORS_MAX;
use crate::resource::Flow;
use storlab_wire::ata::{
    emit_trim_ranges, trim_payload_len, trim_ranges, TrimRange as WireTrimRange,
};
use storlab_wire::sata::REG_H2D_LEN;

/// The drive's link, assembled once from the stack.
pub(crate) enum DeviceLink {
    Sata(SataPort),
}

/// A SATA port: the link's timing, and the NCQ tags of the commands at the drive.
pub(crate) struct SataPort {
    pub link: SataLink,
    pub ncq_tags: NcqTags,
    /// Commands the drive may hold at once (NCQ depth in use, or 1).
    pub slots: u32,
}

impl DeviceLink {
    /// Commands the drive may hold at once.
    #[inline]
    pub fn slots(&self) -> u32 {
        match self {
            DeviceLink::Sata(p) => p.slots,
        }
    }

    /// Encode `c`'s read/write as the link's command (SATA: a Register H2D FIS, READ/WRITE
    /// FPDMA QUEUED with a fresh NCQ tag when the drive queues, else DMA EXT) and send it from
    /// `from_ns`. The drive's decoding of those bytes replaces the command's `device` view.
    /// Returns when the drive has it.
    pub fn send_rw_command(
        &mut self,
        cx: &mut Cx,
        id: CmdId,
        c: &mut Command,
        from_ns: u64,
    ) -> u64 {
        match self {
            DeviceLink::Sata(p) => {
                let tag = (p.slots > 1).then(|| p.ncq_tags.acquire(id));
                let mut fis = [0u8; REG_H2D_LEN];
                emit_rw_command(&c.device, tag, &mut fis);
                let AtaCommand::ReadWrite {
                    command,
                    tag: decoded_tag,
                } = decode_command(&fis)
                else {
                    panic!("drive: a read/write FIS decoded as another command");
                };
                assert_eq!(decoded_tag, tag, "drive decoded another NCQ tag");
                c.device = command;
                let ns = p.link.fis_ns(FIS_REG_H2D_BYTES);
                cx.reserve(layer::SATA_LINK, from_ns, ns, 0)
            }
        }
    }

    /// Encode TRIM of `blocks` sectors at `lba` into the command's payload (SATA: DATA SET
    /// MANAGEMENT ranges); returns the payload's bytes.
    pub fn encode_trim(&self, c: &mut Command, lba: u64, blocks: u64) -> u64 {
        match self {
            DeviceLink::Sata(_) => {
                let mut ranges = Vec::new();
                let mut done = 0;
                while done < blocks {
                    let n = (blocks - done).min(TRIM_RANGE_SECTORS_MAX);
                    ranges.push(WireTrimRange {
                        lba: lba + done,
                        sectors: n as u16,
                    });
                    done += n;
                }
                c.dsm_payload.clear();
                c.dsm_payload.resize(trim_payload_len(ranges.len()), 0);
                let n = emit_trim_ranges(&ranges, &mut c.dsm_payload)
                    .expect("payload sized for ranges");
                debug_assert!((n as u64).is_multiple_of(DSM_BLOCK_BYTES));
                n as u64
            }
        }
    }

    /// Send the TRIM command for the payload already encoded in `c`; the drive checks the
    /// block count it decodes against the payload. Returns when it arrived.
    pub fn send_trim_command(&mut self, cx: &mut Cx, c: &Command, from_ns: u64) -> u64 {
        match self {
            DeviceLink::Sata(p) => {
                let payload_len = c.dsm_payload.len() as u64;
                let mut fis = [0u8; REG_H2D_LEN];
                emit_dsm_command(payload_len / DSM_BLOCK_BYTES, &mut fis);
                let AtaCommand::Trim { blocks } = decode_command(&fis) else {
                    panic!("drive: a DSM FIS decoded as another command");
                };
                assert_eq!(
                    u64::from(blocks) * DSM_BLOCK_BYTES,
                    payload_len,
                    "drive decoded another DSM block count"
                );
                let ns = p.link.fis_ns(FIS_REG_H2D_BYTES);
                cx.reserve(layer::SATA_LINK, from_ns, ns, 0)
            }
        }
    }

    /// Send the cache flush (SATA: FLUSH CACHE EXT, a non-queued command: it takes no NCQ tag
    /// and its status is a Register D2H FIS) from `from_ns`; the drive decodes it. Returns when
    /// the drive has it. The caller sends it only once no queued command is at the drive
    /// (ACS-3 §4.19.1: a non-queued command while NCQ commands are outstanding aborts them).
    pub fn send_flush_command(&mut self, cx: &mut Cx, from_ns: u64) -> u64 {
        match self {
            DeviceLink::Sata(p) => {
                let mut fis = [0u8; REG_H2D_LEN];
                emit_flush_command(&mut fis);
                assert_eq!(
                    decode_command(&fis),
                    AtaCommand::Flush,
                    "drive: a flush FIS decoded as another command"
                );
                let ns = p.link.fis_ns(FIS_REG_H2D_BYTES);
                cx.reserve(layer::SATA_LINK, from_ns, ns, 0)
            }
        }
    }

    /// The drive's decoding of the TRIM payload in `c`.
    pub fn decode_trim(&self, c: &Command) -> Vec<TrimRange> {
        match self {
            DeviceLink::Sata(_) => trim_ranges(&c.dsm_payload)
                .map(|r| TrimRange {
                    lba: r.lba,
                    blocks: r.sectors.into(),
                })
                .collect(),
        }
    }

    /// The drive asks for a write's data (SATA: DMA Setup naming the tag with NCQ, else DMA
    /// Activate); returns when the host side has the request.
    pub fn request_write_data(&mut self, cx: &mut Cx, now_ns: u64) -> u64 {
        match self {
            DeviceLink::Sata(p) => {
                let fis = if p.slots > 1 {
                    FIS_DMA_SETUP_BYTES
                } else {
                    FIS_DMA_ACTIVATE_BYTES
                };
                let ns = p.link.fis_ns(fis);
                cx.reserve(layer::SATA_LINK, now_ns, ns, 0)
            }
        }
    }

    /// Host-to-drive data (write data, TRIM payload) on the link.
    #[inline]
    pub fn data_out(&mut self, cx: &mut Cx, upstream: Flow, len: u64) -> Flow {
        match self {
            DeviceLink::Sata(p) => {
                let (d, f) = (p.link.data_ns(len), p.link.first_piece_ns(len));
                cx.pass(layer::SATA_LINK, upstream, d, f, len)
            }
        }
    }

    /// A read's data on the link. SATA with NCQ: the drive first sends a DMA Setup FIS naming
    /// the tag, in the same link booking (the FIS and the data follow back to back).
    #[inline]
    pub fn data_in(&mut self, cx: &mut Cx, upstream: Flow, len: u64) -> Flow {
        match self {
            DeviceLink::Sata(p) => {
                let setup_ns = if p.slots > 1 {
                    p.link.fis_ns(FIS_DMA_SETUP_BYTES)
                } else {
                    0
                };
                let d = setup_ns + p.link.data_ns(len);
                let f = setup_ns + p.link.first_piece_ns(len);
                cx.pass(layer::SATA_LINK, upstream, d, f, len)
            }
        }
    }

    /// The drive's status for `id` (SATA: Set Device Bits naming the NCQ tag, which gives the
    /// tag back, or Register D2H), parsed and checked by the receiver. `failed`: the drive
    /// could not read the sectors of `device` (the command as it decoded it): ERR, UNC; a
    /// queued command's receiver then reads the NCQ Command Error log to learn which tag failed
    /// (`read_ncq_error_log`, naming the command), a non-queued one has it all in the Register
    /// D2H FIS. Returns when the host side has it, and the status message's bytes.
    pub fn send_status(
        &mut self,
        cx: &mut Cx,
        id: CmdId,
        from_ns: u64,
        failed: bool,
        device: &DriveCommand,
    ) -> (u64, u64) {
        match self {
            DeviceLink::Sata(p) => {
                let tag = p.ncq_tags.release(id);
                let mut bytes = [0u8; STATUS_FIS_BYTES_MAX];
                let len = emit_status(tag, failed, &mut bytes);
                let error = check_status(&bytes[..len], tag);
                assert_eq!(
                    error, failed,
                    "host side read another outcome than the drive sent"
                );
                let fis = len as u64;
                let ns = p.link.fis_ns(fis);
                let mut at = cx.reserve(layer::SATA_LINK, from_ns, ns, 0);
                if let (true, Some(tag)) = (failed, tag) {
                    at = Self::ncq_error_recovery(cx, &p.link, tag, device, at);
                }
                (at, fis)
            }
        }
    }

    /// READ LOG EXT 10h after a queued command failed (see `send_status`).
    #[cold]
    fn ncq_error_recovery(
        cx: &mut Cx,
        link: &SataLink,
        tag: u8,
        device: &DriveCommand,
        at_ns: u64,
    ) -> u64 {
        let (log, ns) = read_ncq_error_log(link, tag, device);
        assert_eq!(log.tag, Some(tag), "NCQ error log names another tag");
        assert_eq!(log.lba, device.lba, "NCQ error log names another LBA");
        if let Some(f) = cx.faults.as_mut() {
            f.counts.read_log_exts += 1;
        }
        cx.reserve(layer::SATA_LINK, at_ns, ns, 0)
    }
}
