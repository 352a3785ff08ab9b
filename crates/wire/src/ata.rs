//! ATA structures a USB-to-SATA bridge exchanges with the drive: IDENTIFY DEVICE data (the
//! fields that matter here) and DATA SET MANAGEMENT (TRIM) range entries.
//!
//! Byte order: ATA data is an array of **little-endian** 16-bit words; strings are stored with
//! the two bytes of each word swapped.

use crate::bytes::{le16, le64, packet_view, put_le16, put_le64};
use crate::error::{need, room, Error, Result};

/// Largest LBA an ATA PASS-THROUGH(12) CDB can carry (24 bits).
pub const LBA24_MAX: u64 = (1 << 24) - 1;
/// Largest 48-bit LBA.
pub const LBA48_MAX: u64 = (1 << 48) - 1;
/// Length of IDENTIFY DEVICE data.
pub const IDENTIFY_LEN: usize = 512;
/// Length of one DSM TRIM range entry.
pub const TRIM_RANGE_LEN: usize = 8;
/// DSM payloads travel in 512-byte blocks of 64 entries.
pub const TRIM_BLOCK_LEN: usize = 512;
/// Largest sector count one TRIM range entry carries.
pub const TRIM_RANGE_SECTORS_MAX: u16 = u16::MAX;
/// DSM FEATURES bit 0: the TRIM function.
pub const DSM_FEATURE_TRIM: u16 = 0x0001;

crate::bytes::code_enum! {
    /// ATA command codes (ACS-3).
    pub enum AtaCommand: u8 {
        /// DATA SET MANAGEMENT (TRIM when FEATURES bit 0 is set).
        DataSetManagement = 0x06,
        /// READ DMA EXT.
        ReadDmaExt = 0x25,
        /// WRITE DMA EXT.
        WriteDmaExt = 0x35,
        /// READ FPDMA QUEUED (NCQ).
        ReadFpdmaQueued = 0x60,
        /// WRITE FPDMA QUEUED (NCQ).
        WriteFpdmaQueued = 0x61,
        /// SEND FPDMA QUEUED (queued TRIM).
        SendFpdmaQueued = 0x64,
        /// READ DMA.
        ReadDma = 0xC8,
        /// WRITE DMA.
        WriteDma = 0xCA,
        /// FLUSH CACHE EXT.
        FlushCacheExt = 0xEA,
        /// IDENTIFY DEVICE.
        IdentifyDevice = 0xEC,
    }
}

mod word {
    pub const SERIAL: core::ops::Range<usize> = 10..20;
    pub const FIRMWARE: core::ops::Range<usize> = 23..27;
    pub const MODEL: core::ops::Range<usize> = 27..47;
    pub const LBA28_SECTORS: usize = 60;
    pub const ADDITIONAL_SUPPORTED: usize = 69;
    pub const QUEUE_DEPTH: usize = 75;
    pub const SATA_CAPABILITIES: usize = 76;
    pub const COMMAND_SET_2: usize = 83;
    pub const LBA48_SECTORS: usize = 100;
    pub const DSM_MAX_BLOCKS: usize = 105;
    pub const SECTOR_SIZES: usize = 106;
    pub const LOGICAL_SECTOR_WORDS: usize = 117;
    pub const DSM_SUPPORT: usize = 169;
    pub const ROTATION_RATE: usize = 217;
    pub const INTEGRITY: usize = 255;
}
const DRAT_BIT: u16 = 1 << 14;
const RZAT_BIT: u16 = 1 << 5;
const QUEUE_DEPTH_MASK: u16 = 0x1F;
const NCQ_BIT: u16 = 1 << 8;
const LBA48_BIT: u16 = 1 << 10;
/// Words 83 and 106 are valid when bits 15:14 read 01.
const WORD_VALID_MASK: u16 = 0xC000;
const WORD_VALID: u16 = 0x4000;
const MULTIPLE_LOGICAL_PER_PHYSICAL_BIT: u16 = 1 << 13;
const LOGICAL_LONGER_THAN_256_WORDS_BIT: u16 = 1 << 12;
const LOG2_LOGICAL_PER_PHYSICAL_MASK: u16 = 0x0F;
const TRIM_SUPPORTED_BIT: u16 = 1;
const INTEGRITY_SIGNATURE: u8 = 0xA5;
const ROTATION_NOT_REPORTED: u16 = 0x0000;
const ROTATION_NON_ROTATING: u16 = 0x0001;
const ROTATION_RPM_MIN: u16 = 0x0401;
const ROTATION_RPM_MAX: u16 = 0xFFFE;
const DEFAULT_SECTOR_SIZE_BYTES: u32 = 512;
const LBA28_MAX_SECTORS: u64 = 0x0FFF_FFFF;

/// Nominal media rotation rate (IDENTIFY word 217).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RotationRate {
    /// Not reported.
    NotReported,
    /// Non-rotating medium (SSD).
    NonRotating,
    /// Spindle speed in revolutions per minute.
    Rpm(u16),
    /// A reserved value, kept as found.
    Unknown(u16),
}

impl From<u16> for RotationRate {
    fn from(value: u16) -> Self {
        match value {
            ROTATION_NOT_REPORTED => RotationRate::NotReported,
            ROTATION_NON_ROTATING => RotationRate::NonRotating,
            ROTATION_RPM_MIN..=ROTATION_RPM_MAX => RotationRate::Rpm(value),
            other => RotationRate::Unknown(other),
        }
    }
}
impl From<RotationRate> for u16 {
    fn from(value: RotationRate) -> Self {
        match value {
            RotationRate::NotReported => ROTATION_NOT_REPORTED,
            RotationRate::NonRotating => ROTATION_NON_ROTATING,
            RotationRate::Rpm(rpm) | RotationRate::Unknown(rpm) => rpm,
        }
    }
}

/// The IDENTIFY DEVICE fields the simulator and the prober care about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IdentifyRepr {
    /// Serial number, ASCII, space padded.
    pub serial: [u8; 20],
    /// Firmware revision, ASCII, space padded.
    pub firmware: [u8; 8],
    /// Model number, ASCII, space padded.
    pub model: [u8; 40],
    /// Total user-addressable logical sectors (48-bit count when supported, else 28-bit).
    pub user_addressable_sectors: u64,
    /// 48-bit addressing supported.
    pub lba48_supported: bool,
    /// Native Command Queuing supported.
    pub ncq_supported: bool,
    /// Maximum NCQ queue depth, 1..=32.
    pub queue_depth: u8,
    /// DATA SET MANAGEMENT with TRIM supported.
    pub trim_supported: bool,
    /// Deterministic read after TRIM.
    pub deterministic_read_after_trim: bool,
    /// Read zeroes after TRIM.
    pub read_zeroes_after_trim: bool,
    /// Maximum 512-byte blocks of range entries per DSM command (0 = not reported).
    pub dsm_max_blocks: u16,
    /// Logical sector size in bytes.
    pub logical_sector_size_bytes: u32,
    /// Physical sector size in bytes.
    pub physical_sector_size_bytes: u32,
    /// Nominal media rotation rate.
    pub rotation_rate: RotationRate,
}

fn ata_string<const N: usize>(data: &[u8], words: core::ops::Range<usize>) -> [u8; N] {
    let mut out = [b' '; N];
    for (i, w) in words.enumerate() {
        let v = le16(&data[w * 2..]);
        out[2 * i] = (v >> 8) as u8;
        out[2 * i + 1] = v as u8;
    }
    out
}

fn put_ata_string(data: &mut [u8], words: core::ops::Range<usize>, text: &[u8]) {
    for (i, w) in words.enumerate() {
        let v = u16::from_be_bytes([text[2 * i], text[2 * i + 1]]);
        put_le16(&mut data[w * 2..], v);
    }
}

fn word_at(data: &[u8], w: usize) -> u16 {
    le16(&data[w * 2..])
}

/// Pads `text` with spaces to an ATA string field of `N` bytes (longer text is cut).
pub fn ata_text<const N: usize>(text: &str) -> [u8; N] {
    let mut out = [b' '; N];
    let n = text.len().min(N);
    out[..n].copy_from_slice(&text.as_bytes()[..n]);
    out
}

/// Logical and physical sector sizes in bytes from words 106 and 117..=118.
///
/// A logical sector shorter than the 256-word default, or sizes that do not fit in 32 bits,
/// are errors: wrapping or saturating them would report a physical sector that is not the
/// logical one times a power of two (even zero, which later divides).
fn sector_sizes(data: &[u8]) -> Result<(u32, u32)> {
    let sizes = word_at(data, word::SECTOR_SIZES);
    if sizes & WORD_VALID_MASK != WORD_VALID {
        return Ok((DEFAULT_SECTOR_SIZE_BYTES, DEFAULT_SECTOR_SIZE_BYTES));
    }
    let logical = if sizes & LOGICAL_LONGER_THAN_256_WORDS_BIT != 0 {
        let words = u32::from(word_at(data, word::LOGICAL_SECTOR_WORDS))
            | u32::from(word_at(data, word::LOGICAL_SECTOR_WORDS + 1)) << 16;
        words
            .checked_mul(2)
            .filter(|&bytes| bytes >= DEFAULT_SECTOR_SIZE_BYTES)
            .ok_or(Error::BadField {
                field: "IDENTIFY words 117-118 logical sector size",
                value: words.into(),
                reason: "must be 256 words or more and fit in 32 bits as bytes",
            })?
    } else {
        DEFAULT_SECTOR_SIZE_BYTES
    };
    let exponent = if sizes & MULTIPLE_LOGICAL_PER_PHYSICAL_BIT != 0 {
        u32::from(sizes & LOG2_LOGICAL_PER_PHYSICAL_MASK)
    } else {
        0
    };
    let physical = logical.checked_mul(1 << exponent).ok_or(Error::BadField {
        field: "IDENTIFY word 106 logical sectors per physical sector",
        value: sizes.into(),
        reason: "physical sector size in bytes exceeds 32 bits",
    })?;
    Ok((logical, physical))
}

impl IdentifyRepr {
    /// Parses 512 bytes of IDENTIFY DEVICE data, verifying the integrity word when present.
    pub fn parse(data: &[u8]) -> Result<Self> {
        need("IDENTIFY DEVICE data", data, IDENTIFY_LEN)?;
        let data = &data[..IDENTIFY_LEN];
        let integrity = word_at(data, word::INTEGRITY);
        if integrity as u8 == INTEGRITY_SIGNATURE {
            let sum = data.iter().fold(0u8, |acc, b| acc.wrapping_add(*b));
            if sum != 0 {
                return Err(Error::BadField {
                    field: "IDENTIFY word 255 checksum",
                    value: integrity.into(),
                    reason: "bytes 0..511 must sum to zero",
                });
            }
        }
        let cmd_set_2 = word_at(data, word::COMMAND_SET_2);
        let lba48_supported =
            cmd_set_2 & WORD_VALID_MASK == WORD_VALID && cmd_set_2 & LBA48_BIT != 0;
        let lba28 = u64::from(word_at(data, word::LBA28_SECTORS))
            | u64::from(word_at(data, word::LBA28_SECTORS + 1)) << 16;
        let lba48 = le64(&data[word::LBA48_SECTORS * 2..]);
        let ncq_supported = word_at(data, word::SATA_CAPABILITIES) & NCQ_BIT != 0;
        let (logical, physical) = sector_sizes(data)?;
        let additional = word_at(data, word::ADDITIONAL_SUPPORTED);
        Ok(IdentifyRepr {
            serial: ata_string(data, word::SERIAL),
            firmware: ata_string(data, word::FIRMWARE),
            model: ata_string(data, word::MODEL),
            user_addressable_sectors: if lba48_supported { lba48 } else { lba28 },
            lba48_supported,
            ncq_supported,
            queue_depth: (word_at(data, word::QUEUE_DEPTH) & QUEUE_DEPTH_MASK) as u8 + 1,
            trim_supported: word_at(data, word::DSM_SUPPORT) & TRIM_SUPPORTED_BIT != 0,
            deterministic_read_after_trim: additional & DRAT_BIT != 0,
            read_zeroes_after_trim: additional & RZAT_BIT != 0,
            dsm_max_blocks: word_at(data, word::DSM_MAX_BLOCKS),
            logical_sector_size_bytes: logical,
            physical_sector_size_bytes: physical,
            rotation_rate: word_at(data, word::ROTATION_RATE).into(),
        })
    }

    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        IDENTIFY_LEN
    }

    /// Writes 512 bytes of IDENTIFY DEVICE data (every other word zero) with a valid integrity
    /// word; fails if a field cannot be represented.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        room("IDENTIFY DEVICE data", buffer, IDENTIFY_LEN)?;
        if !(1..=32).contains(&self.queue_depth) {
            return Err(Error::BadField {
                field: "IDENTIFY queue depth",
                value: self.queue_depth.into(),
                reason: "must be 1..=32",
            });
        }
        let valid_logical = self.logical_sector_size_bytes >= DEFAULT_SECTOR_SIZE_BYTES
            && self.logical_sector_size_bytes & 1 == 0;
        let ratio = self.physical_sector_size_bytes / self.logical_sector_size_bytes.max(1);
        if !valid_logical
            || !ratio.is_power_of_two()
            || ratio.trailing_zeros() > u32::from(LOG2_LOGICAL_PER_PHYSICAL_MASK)
            || self.physical_sector_size_bytes != ratio * self.logical_sector_size_bytes
        {
            return Err(Error::BadField {
                field: "IDENTIFY sector sizes",
                value: self.physical_sector_size_bytes.into(),
                reason: "physical must be logical times a power of two, logical ≥ 512 and even",
            });
        }
        if self.user_addressable_sectors > LBA48_MAX
            || (!self.lba48_supported && self.user_addressable_sectors > LBA28_MAX_SECTORS)
        {
            return Err(Error::BadField {
                field: "IDENTIFY user addressable sectors",
                value: self.user_addressable_sectors,
                reason: "exceeds the addressing mode",
            });
        }
        let data = &mut buffer[..IDENTIFY_LEN];
        data.fill(0);
        let mut put = |w: usize, v: u16| put_le16(&mut data[w * 2..], v);
        put(word::QUEUE_DEPTH, u16::from(self.queue_depth - 1));
        put(
            word::SATA_CAPABILITIES,
            if self.ncq_supported { NCQ_BIT } else { 0 },
        );
        put(
            word::COMMAND_SET_2,
            WORD_VALID | if self.lba48_supported { LBA48_BIT } else { 0 },
        );
        put(
            word::ADDITIONAL_SUPPORTED,
            if self.deterministic_read_after_trim {
                DRAT_BIT
            } else {
                0
            } | if self.read_zeroes_after_trim {
                RZAT_BIT
            } else {
                0
            },
        );
        let lba28 = self.user_addressable_sectors.min(LBA28_MAX_SECTORS);
        put(word::LBA28_SECTORS, lba28 as u16);
        put(word::LBA28_SECTORS + 1, (lba28 >> 16) as u16);
        put(word::DSM_MAX_BLOCKS, self.dsm_max_blocks);
        let mut sizes = WORD_VALID;
        if ratio > 1 {
            sizes |= MULTIPLE_LOGICAL_PER_PHYSICAL_BIT | ratio.trailing_zeros() as u16;
        }
        if self.logical_sector_size_bytes != DEFAULT_SECTOR_SIZE_BYTES {
            sizes |= LOGICAL_LONGER_THAN_256_WORDS_BIT;
            let words = self.logical_sector_size_bytes / 2;
            put(word::LOGICAL_SECTOR_WORDS, words as u16);
            put(word::LOGICAL_SECTOR_WORDS + 1, (words >> 16) as u16);
        }
        put(word::SECTOR_SIZES, sizes);
        put(
            word::DSM_SUPPORT,
            if self.trim_supported {
                TRIM_SUPPORTED_BIT
            } else {
                0
            },
        );
        put(word::ROTATION_RATE, self.rotation_rate.into());
        if self.lba48_supported {
            put_le64(
                &mut data[word::LBA48_SECTORS * 2..],
                self.user_addressable_sectors,
            );
        }
        put_ata_string(data, word::SERIAL, &self.serial);
        put_ata_string(data, word::FIRMWARE, &self.firmware);
        put_ata_string(data, word::MODEL, &self.model);
        data[word::INTEGRITY * 2] = INTEGRITY_SIGNATURE;
        let sum = data[..IDENTIFY_LEN - 1]
            .iter()
            .fold(0u8, |acc, b| acc.wrapping_add(*b));
        data[IDENTIFY_LEN - 1] = sum.wrapping_neg();
        Ok(IDENTIFY_LEN)
    }
}

mod trim_field {
    pub const ENTRY: core::ops::Range<usize> = 0..8;
}
const TRIM_LBA_MASK: u64 = LBA48_MAX;
const TRIM_COUNT_SHIFT: u32 = 48;

/// Zero-copy view of one DSM TRIM range entry: LBA in bits 47:0, sector count in bits 63:48.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrimRangePacket<T: AsRef<[u8]>> {
    buffer: T,
}
packet_view!(TrimRangePacket, TRIM_RANGE_LEN);

impl<T: AsRef<[u8]>> TrimRangePacket<T> {
    /// Fails unless the buffer holds one entry.
    pub fn check_len(&self) -> Result<()> {
        need("TRIM range entry", self.buffer.as_ref(), TRIM_RANGE_LEN)
    }
    /// Starting LBA (48 bits).
    pub fn lba(&self) -> u64 {
        le64(&self.buffer.as_ref()[trim_field::ENTRY]) & TRIM_LBA_MASK
    }
    /// Number of sectors (0 = entry unused).
    pub fn sectors(&self) -> u16 {
        (le64(&self.buffer.as_ref()[trim_field::ENTRY]) >> TRIM_COUNT_SHIFT) as u16
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> TrimRangePacket<T> {
    /// Sets LBA and sector count together (they share one 64-bit word).
    pub fn set_range(&mut self, lba: u64, sectors: u16) {
        let entry = (lba & TRIM_LBA_MASK) | u64::from(sectors) << TRIM_COUNT_SHIFT;
        put_le64(&mut self.buffer.as_mut()[trim_field::ENTRY], entry)
    }
}

/// One TRIM range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TrimRange {
    /// First sector.
    pub lba: u64,
    /// Number of sectors, 1..=65535 (0 marks an unused entry).
    pub sectors: u16,
}

impl TrimRange {
    /// Parses one entry.
    pub fn parse<T: AsRef<[u8]>>(packet: &TrimRangePacket<T>) -> Result<Self> {
        packet.check_len()?;
        Ok(TrimRange {
            lba: packet.lba(),
            sectors: packet.sectors(),
        })
    }
    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        TRIM_RANGE_LEN
    }
    /// Writes one entry; fails if the LBA exceeds 48 bits.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        packet: &mut TrimRangePacket<T>,
    ) -> Result<()> {
        if self.lba > LBA48_MAX {
            return Err(Error::BadField {
                field: "TRIM range LBA",
                value: self.lba,
                reason: "LBA is 48 bits",
            });
        }
        packet.set_range(self.lba, self.sectors);
        Ok(())
    }
}

/// Iterates the used (non-zero count) entries of a DSM TRIM payload; a trailing partial entry
/// is ignored, as a drive would.
pub fn trim_ranges(payload: &[u8]) -> impl Iterator<Item = TrimRange> + '_ {
    payload
        .chunks_exact(TRIM_RANGE_LEN)
        .map(|entry| {
            let packet = TrimRangePacket::new_unchecked(entry);
            TrimRange {
                lba: packet.lba(),
                sectors: packet.sectors(),
            }
        })
        .filter(|range| range.sectors != 0)
}

/// Bytes a DSM payload of `ranges` entries occupies: whole 512-byte blocks.
pub fn trim_payload_len(ranges: usize) -> usize {
    (ranges * TRIM_RANGE_LEN).div_ceil(TRIM_BLOCK_LEN).max(1) * TRIM_BLOCK_LEN
}

/// Writes `ranges` as a DSM TRIM payload padded with unused entries to whole 512-byte blocks;
/// returns the payload length.
pub fn emit_trim_ranges(ranges: &[TrimRange], buffer: &mut [u8]) -> Result<usize> {
    let len = trim_payload_len(ranges.len());
    room("DSM TRIM payload", buffer, len)?;
    buffer[..len].fill(0);
    for (range, entry) in ranges.iter().zip(buffer.chunks_exact_mut(TRIM_RANGE_LEN)) {
        range.emit(&mut TrimRangePacket::new_unchecked(entry))?;
    }
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_entry_golden() {
        let golden = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x08, 0x00];
        let range = TrimRange {
            lba: 0x0605_0403_0201,
            sectors: 8,
        };
        assert_eq!(
            TrimRange::parse(&TrimRangePacket::new_checked(&golden[..]).unwrap()),
            Ok(range)
        );
        let mut buf = [0xA5u8; 8];
        range
            .emit(&mut TrimRangePacket::new_unchecked(&mut buf[..]))
            .unwrap();
        assert_eq!(buf, golden);
        let too_big = TrimRange {
            lba: 1 << 48,
            sectors: 1,
        };
        assert!(too_big
            .emit(&mut TrimRangePacket::new_unchecked(&mut buf[..]))
            .is_err());
    }

    #[test]
    fn trim_payload_pads_to_blocks_and_skips_unused() {
        let ranges = [
            TrimRange {
                lba: 0,
                sectors: 0xffff,
            },
            TrimRange {
                lba: 0xffff,
                sectors: 1,
            },
        ];
        let mut buf = [0xA5u8; 1024];
        assert_eq!(emit_trim_ranges(&ranges, &mut buf), Ok(512));
        assert!(buf[16..512].iter().all(|&b| b == 0));
        assert_eq!(buf[512], 0xA5);
        let back: [TrimRange; 2] = {
            let mut it = trim_ranges(&buf[..512]);
            [it.next().unwrap(), it.next().unwrap()]
        };
        assert_eq!(back, ranges);
        assert_eq!(trim_ranges(&buf[..512]).count(), 2);
        assert_eq!(trim_payload_len(65), 1024);
    }

    fn ssd() -> IdentifyRepr {
        IdentifyRepr {
            serial: ata_text("S1234"),
            firmware: ata_text("FW01"),
            model: ata_text("storlab SSD"),
            user_addressable_sectors: 250_069_680,
            lba48_supported: true,
            ncq_supported: true,
            queue_depth: 32,
            trim_supported: true,
            deterministic_read_after_trim: true,
            read_zeroes_after_trim: false,
            dsm_max_blocks: 8,
            logical_sector_size_bytes: 512,
            physical_sector_size_bytes: 4096,
            rotation_rate: RotationRate::NonRotating,
        }
    }

    #[test]
    fn identify_golden_words_and_round_trip() {
        let repr = ssd();
        let mut buf = [0xA5u8; 512];
        assert_eq!(repr.emit(&mut buf), Ok(512));
        // Word 75 = depth-1, word 76 bit 8, word 169 bit 0, word 217 = 1, word 106 = 0x6003.
        assert_eq!(&buf[150..154], &[31, 0, 0x00, 0x01]);
        assert_eq!(&buf[338..340], &[0x01, 0x00]);
        assert_eq!(&buf[434..436], &[0x01, 0x00]);
        assert_eq!(&buf[212..214], &[0x03, 0x60]);
        // Model string is byte-swapped per word: "st" is stored as 't','s'.
        assert_eq!(&buf[54..56], b"ts");
        assert_eq!(buf[510], 0xA5);
        assert_eq!(buf.iter().fold(0u8, |a, b| a.wrapping_add(*b)), 0);
        assert_eq!(IdentifyRepr::parse(&buf), Ok(repr));

        let mut hdd = repr;
        hdd.rotation_rate = RotationRate::Rpm(7200);
        hdd.trim_supported = false;
        hdd.logical_sector_size_bytes = 4096;
        hdd.physical_sector_size_bytes = 4096;
        hdd.emit(&mut buf).unwrap();
        assert_eq!(IdentifyRepr::parse(&buf), Ok(hdd));
    }

    /// IDENTIFY data that is all zero except word 106 (bytes 212..214) and words 117..=118
    /// (bytes 234..238), without an integrity word, so no checksum applies.
    fn identify_with_sector_words(word_106: [u8; 2], words_117_118: [u8; 4]) -> [u8; 512] {
        let mut data = [0u8; 512];
        data[212..214].copy_from_slice(&word_106);
        data[234..238].copy_from_slice(&words_117_118);
        data
    }

    /// Found by `cargo fuzz run ata`: word 106 = 0x5b00 (valid, logical sector longer than 256
    /// words) with words 117..=118 zero parsed as a 0-byte logical and physical sector.
    #[test]
    fn identify_zero_logical_sector_size_is_rejected() {
        let data = identify_with_sector_words([0x00, 0x5b], [0, 0, 0, 0]);
        assert_eq!(
            IdentifyRepr::parse(&data),
            Err(Error::BadField {
                field: "IDENTIFY words 117-118 logical sector size",
                value: 0,
                reason: "must be 256 words or more and fit in 32 bits as bytes",
            })
        );
        // 255 words is still too short; 2048 words (4 KiB) is the common large size.
        let short = identify_with_sector_words([0x00, 0x50], [0xff, 0x00, 0x00, 0x00]);
        assert!(IdentifyRepr::parse(&short).is_err());
        let four_k = identify_with_sector_words([0x00, 0x50], [0x00, 0x08, 0x00, 0x00]);
        let repr = IdentifyRepr::parse(&four_k).unwrap();
        assert_eq!(repr.logical_sector_size_bytes, 4096);
        assert_eq!(repr.physical_sector_size_bytes, 4096);
    }

    /// Sizes that overflow 32 bits used to wrap (physical 0) or saturate (an odd logical size).
    #[test]
    fn identify_sector_sizes_beyond_32_bits_are_rejected() {
        // Logical 2^30 bytes (words 0x2000_0000), 4 logical per physical: physical 2^32.
        let wraps = identify_with_sector_words([0x02, 0x70], [0x00, 0x00, 0x00, 0x20]);
        assert!(matches!(
            IdentifyRepr::parse(&wraps),
            Err(Error::BadField {
                field: "IDENTIFY word 106 logical sectors per physical sector",
                value: 0x7002,
                ..
            })
        ));
        // Words 0x8000_0000: the logical size in bytes alone needs 33 bits.
        let saturates = identify_with_sector_words([0x00, 0x50], [0x00, 0x00, 0x00, 0x80]);
        assert!(matches!(
            IdentifyRepr::parse(&saturates),
            Err(Error::BadField {
                field: "IDENTIFY words 117-118 logical sector size",
                value: 0x8000_0000,
                ..
            })
        ));
        // The largest representable pair still parses: 2^30-byte logical, 2 per physical.
        let largest = identify_with_sector_words([0x01, 0x70], [0x00, 0x00, 0x00, 0x20]);
        let repr = IdentifyRepr::parse(&largest).unwrap();
        assert_eq!(repr.logical_sector_size_bytes, 1 << 30);
        assert_eq!(repr.physical_sector_size_bytes, 1 << 31);
    }

    #[test]
    fn identify_checksum_damage_is_named() {
        let mut buf = [0u8; 512];
        ssd().emit(&mut buf).unwrap();
        buf[100] ^= 1;
        assert!(matches!(
            IdentifyRepr::parse(&buf),
            Err(Error::BadField {
                field: "IDENTIFY word 255 checksum",
                ..
            })
        ));
        assert!(matches!(
            IdentifyRepr::parse(&buf[..511]),
            Err(Error::Truncated { .. })
        ));
    }
}
