//! The Register FISes: Host to Device, which carries one ATA command (the constructors here
//! are the commands the simulator issues, so the bridge and the drive agree byte for byte on
//! where NCQ puts its tag and sector count), and Device to Host, which carries its status.

use super::*;

/// Register H2D FIS: one ATA command (or, without the C bit, a Device Control update).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RegH2dRepr {
    /// Port Multiplier port.
    pub pm_port: u8,
    /// C bit: the FIS updates the Command register (a new command), not Device Control.
    pub is_command: bool,
    /// COMMAND.
    pub command: u8,
    /// FEATURES 15:0 (NCQ: sector count).
    pub features: u16,
    /// LBA 47:0.
    pub lba: u64,
    /// DEVICE.
    pub device: u8,
    /// COUNT 15:0 (NCQ: tag in bits 7:3, priority in 15:14).
    pub count: u16,
    /// Isochronous Command Completion.
    pub icc: u8,
    /// CONTROL.
    pub control: u8,
    /// AUXILIARY (SATA 3.1; zero for the commands here).
    pub auxiliary: u32,
}

impl RegH2dRepr {
    fn command(command: u8, features: u16, lba: u64, count: u16) -> RegH2dRepr {
        RegH2dRepr {
            pm_port: 0,
            is_command: true,
            command,
            features,
            lba,
            device: DEVICE_LBA,
            count,
            icc: 0,
            control: 0,
            auxiliary: 0,
        }
    }

    /// READ/WRITE FPDMA QUEUED: `sectors` in FEATURES (0 means 65536), `tag` in COUNT 7:3.
    pub fn fpdma_queued(write: bool, tag: u8, lba: u64, sectors: u32) -> Result<RegH2dRepr> {
        let features = sector_count_field("FPDMA sector count", sectors)?;
        if tag > NCQ_TAG_MAX {
            return Err(Error::BadField {
                field: "NCQ TAG",
                value: tag.into(),
                reason: "must be 0..=31",
            });
        }
        let command = if write {
            ATA_WRITE_FPDMA_QUEUED
        } else {
            ATA_READ_FPDMA_QUEUED
        };
        check_lba48(lba)?;
        Ok(Self::command(
            command,
            features,
            lba,
            u16::from(tag) << NCQ_TAG_SHIFT,
        ))
    }

    /// READ/WRITE DMA EXT: `sectors` in COUNT (0 means 65536).
    pub fn dma_ext(write: bool, lba: u64, sectors: u32) -> Result<RegH2dRepr> {
        let count = sector_count_field("DMA EXT sector count", sectors)?;
        let command = if write {
            ATA_WRITE_DMA_EXT
        } else {
            ATA_READ_DMA_EXT
        };
        check_lba48(lba)?;
        Ok(Self::command(command, 0, lba, count))
    }

    /// DATA SET MANAGEMENT with the TRIM bit: `blocks` 512-byte blocks of range entries follow.
    pub fn dsm_trim(blocks: u16) -> RegH2dRepr {
        Self::command(
            ATA_DATA_SET_MANAGEMENT,
            crate::ata::DSM_FEATURE_TRIM,
            0,
            blocks,
        )
    }

    /// FLUSH CACHE EXT: no LBA, no count (ACS-3 §7.11: those fields are reserved), DEVICE
    /// with the LBA bit as libata sets it for every LBA48 command (`ata_tf_init`'s
    /// `ATA_LBA` for the taskfile of a flush).
    pub fn flush_cache_ext() -> RegH2dRepr {
        Self::command(ATA_FLUSH_CACHE_EXT, 0, 0, 0)
    }

    /// READ LOG EXT (2Fh) of `pages` 512-byte pages of the log at `log_address`, from page 0
    /// (ACS-3 §7.24: log address in LBA 7:0, page number in LBA 23:8, page count in COUNT).
    pub fn read_log_ext(log_address: u8, pages: u16) -> RegH2dRepr {
        Self::command(
            crate::ata_log::ATA_READ_LOG_EXT,
            0,
            u64::from(log_address),
            pages,
        )
    }

    /// IDENTIFY DEVICE: no LBA, no count.
    pub fn identify_device() -> RegH2dRepr {
        Self::command(ATA_IDENTIFY_DEVICE, 0, 0, 0)
    }

    /// SET FEATURES with `subcommand` in FEATURES and its value in COUNT.
    pub fn set_features(subcommand: u16, count: u16) -> RegH2dRepr {
        Self::command(ATA_SET_FEATURES, subcommand, 0, count)
    }

    /// NCQ tag of an FPDMA command (COUNT bits 7:3).
    pub const fn ncq_tag(&self) -> u8 {
        ((self.count >> NCQ_TAG_SHIFT) & NCQ_TAG_MAX as u16) as u8
    }

    /// Sectors an FPDMA command (in FEATURES) or a DMA EXT command (in COUNT) moves.
    pub fn sectors(&self) -> u32 {
        let field = match self.command {
            ATA_READ_FPDMA_QUEUED | ATA_WRITE_FPDMA_QUEUED => self.features,
            _ => self.count,
        };
        if field == 0 {
            1 << 16
        } else {
            field.into()
        }
    }

    /// Parses a Register H2D FIS.
    pub fn parse<T: AsRef<[u8]>>(packet: &FisPacket<T>) -> Result<RegH2dRepr> {
        packet.check_len()?;
        expect_type(packet, FisType::RegH2d)?;
        let b = packet.buffer.as_ref();
        Ok(RegH2dRepr {
            pm_port: packet.pm_port(),
            is_command: packet.flags() & FLAG_COMMAND != 0,
            command: packet.command(),
            features: packet.features(),
            lba: packet.lba(),
            device: b[7],
            count: packet.count(),
            icc: b[14],
            control: b[15],
            auxiliary: le32(&b[16..20]),
        })
    }

    /// Bytes [`Self::emit`] writes.
    pub const fn buffer_len(&self) -> usize {
        REG_H2D_LEN
    }

    /// Writes the FIS; returns its length.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        room("Register H2D FIS", buffer, REG_H2D_LEN)?;
        check_pm_port(self.pm_port)?;
        check_lba48(self.lba)?;
        let mut p = FisPacket::new_unchecked(&mut buffer[..REG_H2D_LEN]);
        let [f_lo, f_hi] = self.features.to_le_bytes();
        {
            let b = &mut *p.buffer;
            b[0] = FIS_TYPE_REG_H2D;
            b[1] = self.pm_port | if self.is_command { FLAG_COMMAND } else { 0 };
            b[2] = self.command;
            b[3] = f_lo;
            b[7] = self.device;
            b[11] = f_hi;
            put_le16(&mut b[12..14], self.count);
            b[14] = self.icc;
            b[15] = self.control;
            put_le32(&mut b[16..20], self.auxiliary);
        }
        p.set_lba(self.lba);
        Ok(REG_H2D_LEN)
    }
}

/// Register D2H FIS: the status of a non-queued command (or NCQ acceptance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RegD2hRepr {
    /// Port Multiplier port.
    pub pm_port: u8,
    /// I bit: raise an interrupt.
    pub interrupt: bool,
    /// STATUS.
    pub status: u8,
    /// ERROR.
    pub error: u8,
    /// LBA 47:0.
    pub lba: u64,
    /// DEVICE.
    pub device: u8,
    /// COUNT 15:0.
    pub count: u16,
}

impl RegD2hRepr {
    /// Good status of a finished command: DRDY, no error, interrupt.
    pub const fn success() -> RegD2hRepr {
        RegD2hRepr {
            pm_port: 0,
            interrupt: true,
            status: STATUS_DRDY,
            error: 0,
            lba: 0,
            device: 0,
            count: 0,
        }
    }

    /// The first FIS a device sends after a reset: an ATA device's signature, DRDY, and ERROR
    /// 01h (the diagnostic code for "device passed").
    pub const fn ata_signature() -> RegD2hRepr {
        RegD2hRepr {
            pm_port: 0,
            interrupt: true,
            status: STATUS_DRDY,
            error: DIAGNOSTIC_PASSED,
            lba: ATA_DEVICE_SIGNATURE_LBA,
            device: 0,
            count: ATA_DEVICE_SIGNATURE_COUNT,
        }
    }

    /// The FIS carries an ATA device's signature (what libata's `ata_dev_classify` checks:
    /// LBA 23:8 zero; COUNT and LBA 7:0 01h).
    pub const fn is_ata_signature(&self) -> bool {
        self.count == ATA_DEVICE_SIGNATURE_COUNT && self.lba == ATA_DEVICE_SIGNATURE_LBA
    }

    /// Parses a Register D2H FIS; reserved bytes are ignored, as HBAs do.
    pub fn parse<T: AsRef<[u8]>>(packet: &FisPacket<T>) -> Result<RegD2hRepr> {
        packet.check_len()?;
        expect_type(packet, FisType::RegD2h)?;
        Ok(RegD2hRepr {
            pm_port: packet.pm_port(),
            interrupt: packet.flags() & FLAG_INTERRUPT != 0,
            status: packet.status(),
            error: packet.error(),
            lba: packet.lba(),
            device: packet.buffer.as_ref()[7],
            count: packet.count(),
        })
    }

    /// Bytes [`Self::emit`] writes.
    pub const fn buffer_len(&self) -> usize {
        REG_D2H_LEN
    }

    /// Writes the FIS (reserved bytes zero); returns its length.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        room("Register D2H FIS", buffer, REG_D2H_LEN)?;
        check_pm_port(self.pm_port)?;
        check_lba48(self.lba)?;
        let mut p = FisPacket::new_unchecked(&mut buffer[..REG_D2H_LEN]);
        {
            let b = &mut *p.buffer;
            b.fill(0);
            b[0] = FIS_TYPE_REG_D2H;
            b[1] = self.pm_port | if self.interrupt { FLAG_INTERRUPT } else { 0 };
            b[2] = self.status;
            b[3] = self.error;
            b[7] = self.device;
            put_le16(&mut b[12..14], self.count);
        }
        p.set_lba(self.lba);
        Ok(REG_D2H_LEN)
    }
}
