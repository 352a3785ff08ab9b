//! SATA Frame Information Structures (FISes) as they cross the link between a host (AHCI HBA
//! or a USB bridge) and a drive: Register H2D/D2H, DMA Activate, DMA Setup (first-party DMA,
//! used by NCQ), Data, Set Device Bits and PIO Setup, laid out as in SATA 3.x §10.5 and
//! AHCI 1.3 §4.2.1. All multi-byte fields are little-endian; 48-bit LBAs are split into a low
//! and a high three-byte half around the Device register.
//!
//! Also in this module: the ATA commands the simulator issues through a Register H2D FIS, so
//! the bridge and the drive agree byte for byte on where NCQ puts its tag (COUNT bits 7:3) and
//! its sector count (FEATURES).
//!
//! The Register FISes (H2D with those commands, D2H) live in `register.rs`; the other FIS types,
//! the zero-copy view and the dispatching `FisRepr` here.

mod register;
#[cfg(test)]
mod tests;

pub use register::{RegD2hRepr, RegH2dRepr};

use crate::bytes::{code_enum, le16, le32, le64, packet_view, put_le16, put_le32, put_le64};
use crate::error::{need, room, Error, Result};

/// FIS type of a Register – Host to Device FIS (a command or a control update).
pub const FIS_TYPE_REG_H2D: u8 = 0x27;
/// FIS type of a Register – Device to Host FIS (status of a non-queued command).
pub const FIS_TYPE_REG_D2H: u8 = 0x34;
/// FIS type of a DMA Activate FIS (device ready for host-to-device DMA data).
pub const FIS_TYPE_DMA_ACTIVATE: u8 = 0x39;
/// FIS type of a DMA Setup FIS (first-party DMA: the device picks the buffer, i.e. NCQ tag).
pub const FIS_TYPE_DMA_SETUP: u8 = 0x41;
/// FIS type of a Data FIS (payload, either direction).
pub const FIS_TYPE_DATA: u8 = 0x46;
/// FIS type of a Set Device Bits FIS (NCQ completions in SActive).
pub const FIS_TYPE_SET_DEVICE_BITS: u8 = 0xA1;
/// FIS type of a PIO Setup FIS.
pub const FIS_TYPE_PIO_SETUP: u8 = 0x5F;

/// Length of a Register H2D FIS.
pub const REG_H2D_LEN: usize = 20;
/// Length of a Register D2H FIS.
pub const REG_D2H_LEN: usize = 20;
/// Length of a DMA Activate FIS.
pub const DMA_ACTIVATE_LEN: usize = 4;
/// Length of a DMA Setup FIS.
pub const DMA_SETUP_LEN: usize = 28;
/// Length of a Set Device Bits FIS.
pub const SET_DEVICE_BITS_LEN: usize = 8;
/// Length of a PIO Setup FIS.
pub const PIO_SETUP_LEN: usize = 20;
/// Length of the Data FIS header (type, port, reserved) before its payload.
pub const DATA_HEADER_LEN: usize = 4;
/// Largest Data FIS payload: 2048 dwords (SATA 3.x §10.5.12).
pub const DATA_PAYLOAD_MAX: usize = 8192;
/// Longest FIS of any type (a full Data FIS).
pub const FIS_LEN_MAX: usize = DATA_HEADER_LEN + DATA_PAYLOAD_MAX;

/// ATA command READ DMA EXT (48-bit LBA, one command at a time).
pub const ATA_READ_DMA_EXT: u8 = 0x25;
/// ATA command WRITE DMA EXT.
pub const ATA_WRITE_DMA_EXT: u8 = 0x35;
/// ATA command READ FPDMA QUEUED (NCQ).
pub const ATA_READ_FPDMA_QUEUED: u8 = 0x60;
/// ATA command WRITE FPDMA QUEUED (NCQ).
pub const ATA_WRITE_FPDMA_QUEUED: u8 = 0x61;
/// ATA command DATA SET MANAGEMENT (TRIM with FEATURES bit 0).
pub const ATA_DATA_SET_MANAGEMENT: u8 = 0x06;
/// FLUSH CACHE EXT (ACS-3 §7.11): non-data, not queued; the drive writes its volatile cache
/// to the media before it reports status.
pub const ATA_FLUSH_CACHE_EXT: u8 = 0xEA;
/// IDENTIFY DEVICE (ACS-3 §7.12): PIO data-in of one 512-byte page.
pub const ATA_IDENTIFY_DEVICE: u8 = 0xEC;
/// SET FEATURES (ACS-3 §7.45): non-data; the subcommand is in FEATURES.
pub const ATA_SET_FEATURES: u8 = 0xEF;
/// SET FEATURES subcommand 03h: set the transfer mode given in COUNT (ACS-3 §7.45.5).
pub const SET_FEATURES_TRANSFER_MODE: u16 = 0x03;
/// SET FEATURES transfer mode value for Ultra DMA mode `n`: 40h | n (ACS-3 Table "Transfer
/// mode values").
pub const TRANSFER_MODE_UDMA_BASE: u16 = 0x40;
/// The signature an ATA device (not ATAPI) puts in its first Register D2H FIS after a reset:
/// COUNT 01h, LBA 000001h (ACS-3 §9.1 "Signature and persistence").
pub const ATA_DEVICE_SIGNATURE_COUNT: u16 = 0x01;
/// See [`ATA_DEVICE_SIGNATURE_COUNT`].
pub const ATA_DEVICE_SIGNATURE_LBA: u64 = 0x01;

/// ERROR after a reset: 01h, the device passed its diagnostics (ACS-3 Table "Diagnostic
/// codes").
pub const DIAGNOSTIC_PASSED: u8 = 0x01;

/// Device register bit 6: the LBA fields hold an LBA (always set for these commands).
pub const DEVICE_LBA: u8 = 0x40;
/// Device register bit 7 of an FPDMA command: Forced Unit Access.
pub const DEVICE_FUA: u8 = 0x80;
/// Status register bit 0: ERR.
pub const STATUS_ERR: u8 = 0x01;
/// Status register bit 6: DRDY (device ready).
pub const STATUS_DRDY: u8 = 0x40;
/// Status register bit 7: BSY.
pub const STATUS_BSY: u8 = 0x80;
/// Highest NCQ tag (32 queue slots).
pub const NCQ_TAG_MAX: u8 = 31;
/// The NCQ tag sits in COUNT bits 7:3.
const NCQ_TAG_SHIFT: u32 = 3;
/// Largest LBA a Register FIS carries (48 bits).
pub const LBA48_MAX: u64 = (1 << 48) - 1;

/// Byte 1 bits shared by several FIS types.
const PM_PORT_MASK: u8 = 0x0F;
const FLAG_COMMAND: u8 = 0x80;
const FLAG_DIRECTION_D2H: u8 = 0x20;
const FLAG_INTERRUPT: u8 = 0x40;
const FLAG_AUTO_ACTIVATE: u8 = 0x80;
const FLAG_NOTIFICATION: u8 = 0x80;
/// Set Device Bits byte 2: status bits 2:0 ("Status-Lo") and 6:4 ("Status-Hi").
const SDB_STATUS_MASK: u8 = 0x77;

code_enum! {
    /// The FIS type code (byte 0).
    pub enum FisType: u8 {
        /// Register – Host to Device.
        RegH2d = FIS_TYPE_REG_H2D,
        /// Register – Device to Host.
        RegD2h = FIS_TYPE_REG_D2H,
        /// DMA Activate.
        DmaActivate = FIS_TYPE_DMA_ACTIVATE,
        /// DMA Setup.
        DmaSetup = FIS_TYPE_DMA_SETUP,
        /// Data.
        Data = FIS_TYPE_DATA,
        /// Set Device Bits.
        SetDeviceBits = FIS_TYPE_SET_DEVICE_BITS,
        /// PIO Setup.
        PioSetup = FIS_TYPE_PIO_SETUP,
    }
}

impl FisType {
    /// Length of a FIS of this type; a Data FIS's is its header (the payload follows).
    pub const fn header_len(self) -> Option<usize> {
        match self {
            FisType::RegH2d => Some(REG_H2D_LEN),
            FisType::RegD2h => Some(REG_D2H_LEN),
            FisType::DmaActivate => Some(DMA_ACTIVATE_LEN),
            FisType::DmaSetup => Some(DMA_SETUP_LEN),
            FisType::Data => Some(DATA_HEADER_LEN),
            FisType::SetDeviceBits => Some(SET_DEVICE_BITS_LEN),
            FisType::PioSetup => Some(PIO_SETUP_LEN),
            FisType::Unknown(_) => None,
        }
    }
}

/// A zero-copy view of one FIS.
#[derive(Debug, Clone)]
pub struct FisPacket<T: AsRef<[u8]>> {
    buffer: T,
}

packet_view!(FisPacket, DMA_ACTIVATE_LEN);

impl<T: AsRef<[u8]>> FisPacket<T> {
    /// Checks the type is known and the buffer holds that type's fixed fields; a Data FIS
    /// must carry whole dwords, at most [`DATA_PAYLOAD_MAX`] of payload.
    pub fn check_len(&self) -> Result<()> {
        let data = self.buffer.as_ref();
        need("FIS type", data, 1)?;
        let fis_type = FisType::from(data[0]);
        let Some(len) = fis_type.header_len() else {
            return Err(Error::Unsupported {
                what: "FIS type",
                value: data[0].into(),
            });
        };
        need("FIS", data, len)?;
        if fis_type == FisType::Data {
            let payload = data.len() - DATA_HEADER_LEN;
            if payload > DATA_PAYLOAD_MAX || !payload.is_multiple_of(4) {
                return Err(Error::BadField {
                    field: "Data FIS length",
                    value: payload as u64,
                    reason: "payload must be whole dwords, at most 8192 bytes",
                });
            }
        }
        Ok(())
    }

    /// Byte 0.
    pub fn fis_type(&self) -> FisType {
        FisType::from(self.buffer.as_ref()[0])
    }

    /// Port Multiplier port (byte 1 bits 3:0).
    pub fn pm_port(&self) -> u8 {
        self.buffer.as_ref()[1] & PM_PORT_MASK
    }

    fn flags(&self) -> u8 {
        self.buffer.as_ref()[1]
    }

    /// Register FISes: the 48-bit LBA from bytes 4–6 and 8–10.
    pub fn lba(&self) -> u64 {
        let b = self.buffer.as_ref();
        u64::from(b[4])
            | u64::from(b[5]) << 8
            | u64::from(b[6]) << 16
            | u64::from(b[8]) << 24
            | u64::from(b[9]) << 32
            | u64::from(b[10]) << 40
    }

    /// Register H2D: COMMAND (byte 2).
    pub fn command(&self) -> u8 {
        self.buffer.as_ref()[2]
    }

    /// Register H2D: FEATURES 15:0 (bytes 3 and 11).
    pub fn features(&self) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_le_bytes([b[3], b[11]])
    }

    /// Register FISes: COUNT 15:0 (bytes 12–13).
    pub fn count(&self) -> u16 {
        le16(&self.buffer.as_ref()[12..14])
    }

    /// Register D2H / PIO Setup: STATUS (byte 2).
    pub fn status(&self) -> u8 {
        self.buffer.as_ref()[2]
    }

    /// Register D2H / PIO Setup / Set Device Bits: ERROR (byte 3).
    pub fn error(&self) -> u8 {
        self.buffer.as_ref()[3]
    }

    /// Set Device Bits: SActive bits of the commands it completes (bytes 4–7).
    pub fn sactive(&self) -> u32 {
        le32(&self.buffer.as_ref()[4..8])
    }

    /// Data: the payload after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[DATA_HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> FisPacket<T> {
    fn set_lba(&mut self, lba: u64) {
        let b = self.buffer.as_mut();
        let l = lba.to_le_bytes();
        b[4..7].copy_from_slice(&l[0..3]);
        b[8..11].copy_from_slice(&l[3..6]);
    }
}

/// DMA Setup FIS: the device selects the host buffer (NCQ: the tag) for the next data phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DmaSetupRepr {
    /// Port Multiplier port.
    pub pm_port: u8,
    /// D bit: data moves device to host (a read).
    pub device_to_host: bool,
    /// I bit.
    pub interrupt: bool,
    /// A bit: the host may send write data without waiting for DMA Activate.
    pub auto_activate: bool,
    /// DMA Buffer Identifier (NCQ: the tag in bits 4:0).
    pub buffer_id: u64,
    /// Byte offset into the buffer.
    pub buffer_offset: u32,
    /// Bytes the following data phase moves.
    pub transfer_count: u32,
}

impl DmaSetupRepr {
    /// The NCQ data phase of `tag`: `bytes` from offset 0, auto-activated for writes (the
    /// drive only sends DMA Setup for a write when it can take the data).
    pub const fn ncq(tag: u8, device_to_host: bool, bytes: u32) -> DmaSetupRepr {
        DmaSetupRepr {
            pm_port: 0,
            device_to_host,
            interrupt: false,
            auto_activate: !device_to_host,
            buffer_id: tag as u64,
            buffer_offset: 0,
            transfer_count: bytes,
        }
    }

    /// Parses a DMA Setup FIS.
    pub fn parse<T: AsRef<[u8]>>(packet: &FisPacket<T>) -> Result<DmaSetupRepr> {
        packet.check_len()?;
        expect_type(packet, FisType::DmaSetup)?;
        let b = packet.buffer.as_ref();
        let flags = packet.flags();
        Ok(DmaSetupRepr {
            pm_port: packet.pm_port(),
            device_to_host: flags & FLAG_DIRECTION_D2H != 0,
            interrupt: flags & FLAG_INTERRUPT != 0,
            auto_activate: flags & FLAG_AUTO_ACTIVATE != 0,
            buffer_id: le64(&b[4..12]),
            buffer_offset: le32(&b[16..20]),
            transfer_count: le32(&b[20..24]),
        })
    }

    /// Bytes [`Self::emit`] writes.
    pub const fn buffer_len(&self) -> usize {
        DMA_SETUP_LEN
    }

    /// Writes the FIS; returns its length.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        room("DMA Setup FIS", buffer, DMA_SETUP_LEN)?;
        check_pm_port(self.pm_port)?;
        let b = &mut buffer[..DMA_SETUP_LEN];
        b.fill(0);
        b[0] = FIS_TYPE_DMA_SETUP;
        b[1] = self.pm_port
            | if self.device_to_host {
                FLAG_DIRECTION_D2H
            } else {
                0
            }
            | if self.interrupt { FLAG_INTERRUPT } else { 0 }
            | if self.auto_activate {
                FLAG_AUTO_ACTIVATE
            } else {
                0
            };
        put_le64(&mut b[4..12], self.buffer_id);
        put_le32(&mut b[16..20], self.buffer_offset);
        put_le32(&mut b[20..24], self.transfer_count);
        Ok(DMA_SETUP_LEN)
    }
}

/// Set Device Bits FIS: NCQ completions (one bit per finished tag in SActive) and status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SetDeviceBitsRepr {
    /// Port Multiplier port.
    pub pm_port: u8,
    /// I bit.
    pub interrupt: bool,
    /// N bit: asynchronous notification.
    pub notification: bool,
    /// STATUS bits 6:4 and 2:0 (bits 7 and 3 are not carried).
    pub status: u8,
    /// ERROR.
    pub error: u8,
    /// SActive bits the device clears (NCQ: the finished tags).
    pub sactive: u32,
}

impl SetDeviceBitsRepr {
    /// Successful completion of the NCQ commands whose tags are set in `tags`.
    pub const fn completed(tags: u32) -> SetDeviceBitsRepr {
        SetDeviceBitsRepr {
            pm_port: 0,
            interrupt: true,
            notification: false,
            status: STATUS_DRDY,
            error: 0,
            sactive: tags,
        }
    }

    /// Parses a Set Device Bits FIS; the status bits it cannot carry read as zero.
    pub fn parse<T: AsRef<[u8]>>(packet: &FisPacket<T>) -> Result<SetDeviceBitsRepr> {
        packet.check_len()?;
        expect_type(packet, FisType::SetDeviceBits)?;
        let flags = packet.flags();
        Ok(SetDeviceBitsRepr {
            pm_port: packet.pm_port(),
            interrupt: flags & FLAG_INTERRUPT != 0,
            notification: flags & FLAG_NOTIFICATION != 0,
            status: packet.status() & SDB_STATUS_MASK,
            error: packet.error(),
            sactive: packet.sactive(),
        })
    }

    /// Bytes [`Self::emit`] writes.
    pub const fn buffer_len(&self) -> usize {
        SET_DEVICE_BITS_LEN
    }

    /// Writes the FIS; a status with bit 7 (BSY) or bit 3 (DRQ) set cannot be carried.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        room("Set Device Bits FIS", buffer, SET_DEVICE_BITS_LEN)?;
        check_pm_port(self.pm_port)?;
        if self.status & !SDB_STATUS_MASK != 0 {
            return Err(Error::BadField {
                field: "Set Device Bits STATUS",
                value: self.status.into(),
                reason: "bits 7 and 3 are not carried",
            });
        }
        let b = &mut buffer[..SET_DEVICE_BITS_LEN];
        b[0] = FIS_TYPE_SET_DEVICE_BITS;
        b[1] = self.pm_port
            | if self.interrupt { FLAG_INTERRUPT } else { 0 }
            | if self.notification {
                FLAG_NOTIFICATION
            } else {
                0
            };
        b[2] = self.status;
        b[3] = self.error;
        put_le32(&mut b[4..8], self.sactive);
        Ok(SET_DEVICE_BITS_LEN)
    }
}

/// PIO Setup FIS: the device announces a PIO data phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PioSetupRepr {
    /// Port Multiplier port.
    pub pm_port: u8,
    /// D bit: data moves device to host.
    pub device_to_host: bool,
    /// I bit.
    pub interrupt: bool,
    /// STATUS before the transfer.
    pub status: u8,
    /// ERROR.
    pub error: u8,
    /// LBA 47:0.
    pub lba: u64,
    /// DEVICE.
    pub device: u8,
    /// COUNT 15:0.
    pub count: u16,
    /// E_Status: STATUS after the transfer.
    pub end_status: u8,
    /// Bytes of the data phase.
    pub transfer_count: u16,
}

impl PioSetupRepr {
    /// Parses a PIO Setup FIS.
    pub fn parse<T: AsRef<[u8]>>(packet: &FisPacket<T>) -> Result<PioSetupRepr> {
        packet.check_len()?;
        expect_type(packet, FisType::PioSetup)?;
        let b = packet.buffer.as_ref();
        let flags = packet.flags();
        Ok(PioSetupRepr {
            pm_port: packet.pm_port(),
            device_to_host: flags & FLAG_DIRECTION_D2H != 0,
            interrupt: flags & FLAG_INTERRUPT != 0,
            status: packet.status(),
            error: packet.error(),
            lba: packet.lba(),
            device: b[7],
            count: packet.count(),
            end_status: b[15],
            transfer_count: le16(&b[16..18]),
        })
    }

    /// Bytes [`Self::emit`] writes.
    pub const fn buffer_len(&self) -> usize {
        PIO_SETUP_LEN
    }

    /// Writes the FIS; returns its length.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        room("PIO Setup FIS", buffer, PIO_SETUP_LEN)?;
        check_pm_port(self.pm_port)?;
        check_lba48(self.lba)?;
        let mut p = FisPacket::new_unchecked(&mut buffer[..PIO_SETUP_LEN]);
        {
            let b = &mut *p.buffer;
            b.fill(0);
            b[0] = FIS_TYPE_PIO_SETUP;
            b[1] = self.pm_port
                | if self.device_to_host {
                    FLAG_DIRECTION_D2H
                } else {
                    0
                }
                | if self.interrupt { FLAG_INTERRUPT } else { 0 };
            b[2] = self.status;
            b[3] = self.error;
            b[7] = self.device;
            put_le16(&mut b[12..14], self.count);
            b[15] = self.end_status;
            put_le16(&mut b[16..18], self.transfer_count);
        }
        p.set_lba(self.lba);
        Ok(PIO_SETUP_LEN)
    }
}

/// Any FIS; a Data FIS is described by its payload length (the payload stays in the buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FisRepr {
    /// Register – Host to Device.
    RegH2d(RegH2dRepr),
    /// Register – Device to Host.
    RegD2h(RegD2hRepr),
    /// DMA Activate.
    DmaActivate {
        /// Port Multiplier port.
        pm_port: u8,
    },
    /// DMA Setup.
    DmaSetup(DmaSetupRepr),
    /// Data header of a FIS carrying `payload_len` bytes.
    Data {
        /// Port Multiplier port.
        pm_port: u8,
        /// Payload bytes after the header.
        payload_len: usize,
    },
    /// Set Device Bits.
    SetDeviceBits(SetDeviceBitsRepr),
    /// PIO Setup.
    PioSetup(PioSetupRepr),
}

impl FisRepr {
    /// Parses any FIS by its type byte.
    pub fn parse<T: AsRef<[u8]>>(packet: &FisPacket<T>) -> Result<FisRepr> {
        packet.check_len()?;
        Ok(match packet.fis_type() {
            FisType::RegH2d => FisRepr::RegH2d(RegH2dRepr::parse(packet)?),
            FisType::RegD2h => FisRepr::RegD2h(RegD2hRepr::parse(packet)?),
            FisType::DmaActivate => FisRepr::DmaActivate {
                pm_port: packet.pm_port(),
            },
            FisType::DmaSetup => FisRepr::DmaSetup(DmaSetupRepr::parse(packet)?),
            FisType::Data => FisRepr::Data {
                pm_port: packet.pm_port(),
                payload_len: packet.payload().len(),
            },
            FisType::SetDeviceBits => FisRepr::SetDeviceBits(SetDeviceBitsRepr::parse(packet)?),
            FisType::PioSetup => FisRepr::PioSetup(PioSetupRepr::parse(packet)?),
            FisType::Unknown(t) => {
                return Err(Error::Unsupported {
                    what: "FIS type",
                    value: t.into(),
                })
            }
        })
    }

    /// Parses a FIS from bytes.
    pub fn parse_bytes(data: &[u8]) -> Result<FisRepr> {
        Self::parse(&FisPacket::new_unchecked(data))
    }

    /// Bytes the whole FIS occupies (a Data FIS: header plus payload).
    pub const fn buffer_len(&self) -> usize {
        match self {
            FisRepr::RegH2d(_) => REG_H2D_LEN,
            FisRepr::RegD2h(_) => REG_D2H_LEN,
            FisRepr::DmaActivate { .. } => DMA_ACTIVATE_LEN,
            FisRepr::DmaSetup(_) => DMA_SETUP_LEN,
            FisRepr::Data { payload_len, .. } => DATA_HEADER_LEN + *payload_len,
            FisRepr::SetDeviceBits(_) => SET_DEVICE_BITS_LEN,
            FisRepr::PioSetup(_) => PIO_SETUP_LEN,
        }
    }

    /// Writes the FIS; for a Data FIS only the header (the caller places the payload after
    /// it). Returns the bytes written.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        match self {
            FisRepr::RegH2d(r) => r.emit(buffer),
            FisRepr::RegD2h(r) => r.emit(buffer),
            FisRepr::DmaActivate { pm_port } => {
                emit_header("DMA Activate FIS", FIS_TYPE_DMA_ACTIVATE, *pm_port, buffer)
            }
            FisRepr::DmaSetup(r) => r.emit(buffer),
            FisRepr::Data {
                pm_port,
                payload_len,
            } => {
                if *payload_len > DATA_PAYLOAD_MAX || payload_len % 4 != 0 {
                    return Err(Error::BadField {
                        field: "Data FIS length",
                        value: *payload_len as u64,
                        reason: "payload must be whole dwords, at most 8192 bytes",
                    });
                }
                emit_header("Data FIS", FIS_TYPE_DATA, *pm_port, buffer)
            }
            FisRepr::SetDeviceBits(r) => r.emit(buffer),
            FisRepr::PioSetup(r) => r.emit(buffer),
        }
    }
}

/// Data FISes a data phase of `bytes` needs (at least one: a zero-length phase still has a FIS).
pub const fn data_fis_count(bytes: u64) -> u64 {
    let n = bytes.div_ceil(DATA_PAYLOAD_MAX as u64);
    if n == 0 {
        1
    } else {
        n
    }
}

fn emit_header(what: &'static str, fis_type: u8, pm_port: u8, buffer: &mut [u8]) -> Result<usize> {
    room(what, buffer, DMA_ACTIVATE_LEN)?;
    check_pm_port(pm_port)?;
    buffer[..DMA_ACTIVATE_LEN].copy_from_slice(&[fis_type, pm_port, 0, 0]);
    Ok(DMA_ACTIVATE_LEN)
}

fn expect_type<T: AsRef<[u8]>>(packet: &FisPacket<T>, want: FisType) -> Result<()> {
    let found = packet.fis_type();
    if found == want {
        Ok(())
    } else {
        Err(Error::BadField {
            field: "FIS type",
            value: u8::from(found).into(),
            reason: "not the FIS type this parser reads",
        })
    }
}

fn check_pm_port(pm_port: u8) -> Result<()> {
    if pm_port > PM_PORT_MASK {
        return Err(Error::BadField {
            field: "PM Port",
            value: pm_port.into(),
            reason: "must be 0..=15",
        });
    }
    Ok(())
}

fn check_lba48(lba: u64) -> Result<()> {
    if lba > LBA48_MAX {
        return Err(Error::BadField {
            field: "LBA",
            value: lba,
            reason: "beyond 48 bits",
        });
    }
    Ok(())
}

/// A 16-bit sector count field where 0 encodes 65536.
fn sector_count_field(field: &'static str, sectors: u32) -> Result<u16> {
    match sectors {
        1..=0xFFFF => Ok(sectors as u16),
        0x1_0000 => Ok(0),
        _ => Err(Error::BadField {
            field,
            value: sectors.into(),
            reason: "must be 1..=65536",
        }),
    }
}
