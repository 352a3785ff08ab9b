//! Limits every profile value must keep (physical ranges, and what keeps the simulator's clock
//! and maps in range) and the checks that name the offending key.

use crate::error::SimError;

/// Largest UAS tag (tags are 16-bit, UAS 2.0 §6.2.2).
pub const UAS_TAG_MAX: u32 = 65_535;
/// SATA NCQ carries at most 32 tags (SATA 2.6 §13.6).
pub const NCQ_TAGS_MAX: u32 = 32;
/// Logical block size every shipped drive exposes; the SCSI/ATA codecs count in these.
pub const SECTOR_BYTES: u32 = 512;
/// An ATA TRIM range entry counts at most this many sectors (ACS-2 §7.10.3.2).
pub const TRIM_RANGE_SECTORS_MAX: u64 = 65_535;
/// Range entries in one 512-byte DATA SET MANAGEMENT block.
pub const TRIM_RANGES_PER_BLOCK: u64 = 64;
/// Most bytes one ATA READ/WRITE DMA EXT or FPDMA QUEUED command moves: 65536 sectors
/// (ACS-2 §7.22, a count of 0 means 65536).
pub const ATA_TRANSFER_BYTES_MAX: u32 = 65_536 * SECTOR_BYTES;
/// Sectors a 48-bit LBA addresses: the largest drive ATA can reach.
pub const LBA48_SECTORS: u64 = 1 << 48;
/// Longest time one step of one command may take in a profile (a CPU or firmware cost, a
/// transfer set-up, a seek, a command overhead): 1 s. Working hardware takes micro- to
/// milliseconds (and a host gives up on a command after 30 s); more is a typo, and multiplied
/// out over pieces, commands and queues it would overflow the nanosecond clock.
pub const STEP_NS_MAX: u64 = 1_000_000_000;
pub(crate) const STEP_NS_WHY: &str = "one step of one command takes at most 1 s";
/// Longest cost per KiB moved or per descriptor: 1 ms (a host maps pages at GB/s).
pub const UNIT_COST_NS_MAX: u64 = 1_000_000;
const UNIT_COST_NS_WHY: &str = "a cost per KiB or per descriptor is at most 1 ms";
/// Fastest data rate a profile may give, in MB/s (100 GB/s); the slowest is 1 MB/s.
pub const RATE_MB_S_MAX: u64 = 100_000;
pub(crate) const RATE_MB_S_WHY: &str = "a data rate is 1 MB/s to 100 GB/s";
/// Slowest and fastest link signalling rates, in bits per second (1 Mb/s, 100 Gb/s).
pub const LINK_RATE_BPS_MIN: u64 = 1_000_000;
pub const LINK_RATE_BPS_MAX: u64 = 100_000_000_000;
/// Largest bytes one controller descriptor covers (an AHCI PRD entry: 4 MiB).
pub const DESCRIPTOR_BYTES_MAX: u32 = 4 << 20;
/// Most units a simple drive model works on at once.
pub const PARALLEL_UNITS_MAX: u32 = 1024;

/// Why a drive of `bytes` is beyond what ATA addresses, if it is.
pub(crate) fn capacity_out_of_range(bytes: u64) -> Option<String> {
    let max = LBA48_SECTORS * u64::from(SECTOR_BYTES);
    (bytes > max).then(|| {
        format!("must be at most {max} bytes, got {bytes} (a 48-bit LBA addresses 2^48 sectors)")
    })
}

pub(crate) fn positive(origin: &str, key: &str, value: u64) -> Result<(), SimError> {
    if value == 0 {
        return Err(SimError::profile(origin, key, "must be greater than zero"));
    }
    Ok(())
}

/// Why `value` is outside `min..=max`, if it is: the range, the value, and `why` (the physical
/// limit behind the range).
pub(crate) fn out_of_range(value: u64, min: u64, max: u64, why: &str) -> Option<String> {
    (!(min..=max).contains(&value)).then(|| format!("must be {min}..={max}, got {value} ({why})"))
}

/// `key` must lie in `min..=max` (see [`out_of_range`]).
pub(crate) fn in_range(
    origin: &str,
    key: &str,
    value: u64,
    min: u64,
    max: u64,
    why: &str,
) -> Result<(), SimError> {
    match out_of_range(value, min, max, why) {
        Some(reason) => Err(SimError::profile(origin, key, reason)),
        None => Ok(()),
    }
}

/// A time of one step of one command (see [`STEP_NS_MAX`]).
pub(crate) fn step_ns(origin: &str, key: &str, value: u64) -> Result<(), SimError> {
    in_range(origin, key, value, 0, STEP_NS_MAX, STEP_NS_WHY)
}

/// A cost per KiB or per descriptor (see [`UNIT_COST_NS_MAX`]).
pub(crate) fn unit_cost_ns(origin: &str, key: &str, value: u64) -> Result<(), SimError> {
    in_range(origin, key, value, 0, UNIT_COST_NS_MAX, UNIT_COST_NS_WHY)
}

/// A data rate in MB/s (see [`RATE_MB_S_MAX`]).
pub(crate) fn rate_mb_s(origin: &str, key: &str, value: u64) -> Result<(), SimError> {
    positive(origin, key, value)?;
    in_range(origin, key, value, 1, RATE_MB_S_MAX, RATE_MB_S_WHY)
}

/// A link's signalling rate in bits per second (see [`LINK_RATE_BPS_MIN`]).
pub(crate) fn rate_bps(origin: &str, key: &str, value: u64) -> Result<(), SimError> {
    positive(origin, key, value)?;
    in_range(
        origin,
        key,
        value,
        LINK_RATE_BPS_MIN,
        LINK_RATE_BPS_MAX,
        "a link signals at 1 Mb/s to 100 Gb/s",
    )
}

/// Line bits per data byte of a link's encoding.
pub(crate) fn line_bits(origin: &str, key: &str, value: u32) -> Result<(), SimError> {
    in_range(
        origin,
        key,
        value.into(),
        8,
        16,
        "a line code spends 8 to 16 bits per byte (8b/10b: 10)",
    )
}

/// A size that counts bytes moved at once: at least one sector, at most one ATA command.
pub(crate) fn transfer_size(
    origin: &str,
    key: &str,
    value: u32,
    why: &str,
) -> Result<(), SimError> {
    in_range(
        origin,
        key,
        value.into(),
        SECTOR_BYTES.into(),
        ATA_TRANSFER_BYTES_MAX.into(),
        why,
    )
}

pub(crate) fn fraction(origin: &str, key: &str, value: f64, max: f64) -> Result<(), SimError> {
    if !(0.0..max).contains(&value) {
        return Err(SimError::profile(
            origin,
            key,
            format!("must be at least 0 and below {max}, got {value}"),
        ));
    }
    Ok(())
}

/// `max_transfer_bytes` and its High-Speed variant: whole sectors, at most one ATA command.
pub(crate) fn max_transfer(origin: &str, key: &str, value: u32) -> Result<(), SimError> {
    if value == 0 || !value.is_multiple_of(SECTOR_BYTES) || value > ATA_TRANSFER_BYTES_MAX {
        return Err(SimError::profile(
            origin,
            key,
            format!(
                "must be a multiple of {SECTOR_BYTES} in {SECTOR_BYTES}..={ATA_TRANSFER_BYTES_MAX}, \
                 got {value} (an ATA command moves at most 65536 sectors)"
            ),
        ));
    }
    Ok(())
}
