//! Validation of each part's profile: every value within its limits and the parts consistent.

use super::limits::*;
use super::{
    BridgeProfile, ControllerKind, ControllerProfile, DriveProfile, DriverKind, HostProfile,
    LinkProfile,
};
use crate::error::SimError;

pub(super) fn validate_host(origin: &str, h: &HostProfile) -> Result<(), SimError> {
    max_transfer(origin, "max_transfer_bytes", h.max_transfer_bytes)?;
    if let Some(hs) = h.max_transfer_bytes_high_speed {
        max_transfer(origin, "max_transfer_bytes_high_speed", hs)?;
    }
    let limit = match h.driver {
        DriverKind::Bot | DriverKind::SataIde => 1,
        DriverKind::Uas => UAS_TAG_MAX,
        DriverKind::SataAhci => NCQ_TAGS_MAX,
    };
    if h.max_outstanding_commands == 0 || h.max_outstanding_commands > limit {
        return Err(SimError::profile(
            origin,
            "max_outstanding_commands",
            format!(
                "{} is impossible for driver {:?}: must be 1..={limit}",
                h.max_outstanding_commands, h.driver
            ),
        ));
    }
    if h.cpu_threads == 0 {
        return Err(SimError::profile(
            origin,
            "cpu_threads",
            "0 is impossible: a host has at least one hardware thread",
        ));
    }
    if h.chains_transfers && h.driver != DriverKind::Bot {
        return Err(SimError::profile(
            origin,
            "chains_transfers",
            "only a BOT driver has CBW, data and CSW transfers to chain",
        ));
    }
    if h.phase_cpu_ns > 0 && !h.chains_transfers {
        return Err(SimError::profile(
            origin,
            "phase_cpu_ns",
            "is the cost of a hand-off between chained transfers: needs chains_transfers = true",
        ));
    }
    if (h.read_ahead || h.coalesce_writes) && h.driver != DriverKind::Bot {
        return Err(SimError::profile(
            origin,
            if h.read_ahead {
                "read_ahead"
            } else {
                "coalesce_writes"
            },
            "only a BOT driver (one command at a time) may serve I/O from its own buffer",
        ));
    }
    if h.uas_loads_on.is_some() && (h.driver != DriverKind::Uas || h.bot_fallback_host.is_none()) {
        return Err(SimError::profile(
            origin,
            "uas_loads_on",
            "is for a UAS driver, and needs bot_fallback_host: the BOT driver the OS uses instead",
        ));
    }
    if h.coalesce_writes != (h.coalesce_hold_ns > 0) {
        return Err(SimError::profile(
            origin,
            "coalesce_hold_ns",
            "is how long gathered writes wait: set it (> 0) exactly when coalesce_writes = true",
        ));
    }
    let trim_max = TRIM_RANGE_SECTORS_MAX * TRIM_RANGES_PER_BLOCK * u64::from(SECTOR_BYTES);
    if h.max_trim_bytes == 0
        || !h.max_trim_bytes.is_multiple_of(u64::from(SECTOR_BYTES))
        || h.max_trim_bytes > trim_max
    {
        return Err(SimError::profile(
            origin,
            "max_trim_bytes",
            format!("must be a multiple of {SECTOR_BYTES} in 1..={trim_max} (one DSM block)"),
        ));
    }
    step_ns(origin, "submit_cpu_ns", h.submit_cpu_ns)?;
    step_ns(origin, "complete_cpu_ns", h.complete_cpu_ns)?;
    step_ns(origin, "phase_cpu_ns", h.phase_cpu_ns)?;
    step_ns(origin, "xhci_transfer_cpu_ns", h.xhci_transfer_cpu_ns)?;
    if h.xhci_transfer_cpu_ns > 0 && !matches!(h.driver, DriverKind::Bot | DriverKind::Uas) {
        return Err(SimError::profile(
            origin,
            "xhci_transfer_cpu_ns",
            "is an xHCI driver's cost per USB transfer: only for a USB driver (bot, uas)",
        ));
    }
    step_ns(origin, "coalesce_hold_ns", h.coalesce_hold_ns)?;
    unit_cost_ns(origin, "cpu_ns_per_kib", h.cpu_ns_per_kib)?;
    Ok(())
}

pub(super) fn validate_controller(origin: &str, c: &ControllerProfile) -> Result<(), SimError> {
    in_range(
        origin,
        "max_descriptor_bytes",
        c.max_descriptor_bytes.into(),
        SECTOR_BYTES.into(),
        DESCRIPTOR_BYTES_MAX.into(),
        "a descriptor covers at least one sector; an AHCI PRD entry at most 4 MiB",
    )?;
    step_ns(origin, "per_transfer_ns", c.per_transfer_ns)?;
    unit_cost_ns(origin, "per_descriptor_ns", c.per_descriptor_ns)?;
    if c.data_path_mb_s != 0 {
        rate_mb_s(origin, "data_path_mb_s", c.data_path_mb_s)?;
    }
    step_ns(origin, "interrupt_cpu_ns", c.interrupt_cpu_ns)?;
    if c.kind == ControllerKind::Xhci && c.supports_streams && c.max_streams == 0 {
        return Err(SimError::profile(
            origin,
            "max_streams",
            "must be greater than zero when supports_streams = true",
        ));
    }
    if c.max_streams > UAS_TAG_MAX {
        return Err(SimError::profile(
            origin,
            "max_streams",
            format!("stream ids are 16-bit: at most {UAS_TAG_MAX}"),
        ));
    }
    let p = &c.pcie;
    if !(1..=3).contains(&p.generation) {
        return Err(SimError::profile(
            origin,
            "pcie.generation",
            "must be 1, 2 or 3",
        ));
    }
    if ![1, 2, 4, 8, 16].contains(&p.lanes) {
        return Err(SimError::profile(
            origin,
            "pcie.lanes",
            "must be 1, 2, 4, 8 or 16",
        ));
    }
    if !p.max_payload_bytes.is_power_of_two() || !(128..=4096).contains(&p.max_payload_bytes) {
        return Err(SimError::profile(
            origin,
            "pcie.max_payload_bytes",
            "must be a power of two in 128..=4096",
        ));
    }
    in_range(
        origin,
        "pcie.tlp_overhead_bytes",
        p.tlp_overhead_bytes.into(),
        0,
        64,
        "framing, sequence number, header, ECRC and LCRC of a TLP take at most 64 bytes",
    )?;
    fraction(
        origin,
        "pcie.dllp_overhead_fraction",
        p.dllp_overhead_fraction,
        0.5,
    )?;
    if !p.max_read_request_bytes.is_power_of_two()
        || !(128..=4096).contains(&p.max_read_request_bytes)
    {
        return Err(SimError::profile(
            origin,
            "pcie.max_read_request_bytes",
            "must be a power of two in 128..=4096",
        ));
    }
    if ![64, 128].contains(&p.read_completion_boundary_bytes) {
        return Err(SimError::profile(
            origin,
            "pcie.read_completion_boundary_bytes",
            "must be 64 or 128 (a root complex's read completion boundary)",
        ));
    }
    in_range(
        origin,
        "pcie.outstanding_read_requests",
        p.outstanding_read_requests.into(),
        1,
        256,
        "tags: 32 without the Extended Tag field, 256 with it",
    )?;
    in_range(
        origin,
        "pcie.read_latency_ns",
        p.read_latency_ns,
        0,
        100_000,
        "a host answers a read in about a microsecond; 100 us is far beyond any",
    )?;
    Ok(())
}

pub(super) fn validate_link(origin: &str, link: &LinkProfile) -> Result<(), SimError> {
    match link {
        LinkProfile::Usb2Hs(p) => {
            rate_bps(origin, "bit_rate_bps", p.bit_rate_bps)?;
            in_range(
                origin,
                "max_packet_bytes",
                p.max_packet_bytes.into(),
                8,
                512,
                "USB 2.0 bulk packets carry 8 to 512 bytes",
            )?;
            in_range(
                origin,
                "microframe_ns",
                p.microframe_ns,
                1,
                1_000_000,
                "a High-Speed microframe is 125 us, a Full-Speed frame 1 ms",
            )?;
            in_range(
                origin,
                "max_bulk_packets_per_microframe",
                p.max_bulk_packets_per_microframe.into(),
                1,
                13,
                "USB 2.0 fits at most 13 bulk packets in a microframe",
            )?;
            in_range(
                origin,
                "packet_overhead_bits",
                p.packet_overhead_bits.into(),
                0,
                4096,
                "token, framing, handshake and turnaround take at most 4096 bits",
            )?;
            step_ns(origin, "transfer_setup_ns", p.transfer_setup_ns)?;
            fraction(
                origin,
                "periodic_reserved_fraction",
                p.periodic_reserved_fraction,
                0.8,
            )?;
        }
        LinkProfile::Usb3Ss(p) => {
            rate_bps(origin, "signal_rate_bps", p.signal_rate_bps)?;
            line_bits(origin, "line_bits_per_byte", p.line_bits_per_byte)?;
            in_range(
                origin,
                "max_packet_bytes",
                p.max_packet_bytes.into(),
                8,
                1024,
                "USB 3.0 bulk packets carry 8 to 1024 bytes",
            )?;
            in_range(
                origin,
                "data_packet_overhead_bytes",
                p.data_packet_overhead_bytes.into(),
                0,
                256,
                "header and framing of a data packet take at most 256 bytes",
            )?;
            step_ns(origin, "burst_gap_ns", p.burst_gap_ns)?;
            step_ns(origin, "transfer_setup_ns", p.transfer_setup_ns)?;
            if !(1..=16).contains(&p.max_burst_packets) {
                return Err(SimError::profile(
                    origin,
                    "max_burst_packets",
                    "USB 3.0 bursts are 1..=16 packets",
                ));
            }
            fraction(
                origin,
                "skp_overhead_fraction",
                p.skp_overhead_fraction,
                0.5,
            )?;
        }
        LinkProfile::Sata(p) => {
            rate_bps(origin, "line_rate_bps", p.line_rate_bps)?;
            line_bits(origin, "line_bits_per_byte", p.line_bits_per_byte)?;
            in_range(
                origin,
                "fis_framing_bytes",
                p.fis_framing_bytes.into(),
                0,
                256,
                "SOF, header, CRC and EOF of a FIS take at most 256 bytes",
            )?;
            in_range(
                origin,
                "fis_handshake_dwords",
                p.fis_handshake_dwords.into(),
                0,
                256,
                "the primitives around a FIS take at most 256 dwords",
            )?;
            positive(origin, "max_data_fis_bytes", p.max_data_fis_bytes.into())?;
            if p.max_data_fis_bytes > 8192 || !p.max_data_fis_bytes.is_multiple_of(4) {
                return Err(SimError::profile(
                    origin,
                    "max_data_fis_bytes",
                    "a Data FIS carries at most 8192 bytes, in whole dwords",
                ));
            }
        }
    }
    Ok(())
}

pub(super) fn validate_bridge(origin: &str, b: &BridgeProfile) -> Result<(), SimError> {
    rate_mb_s(origin, "data_rate_mb_s", b.data_rate_mb_s)?;
    transfer_size(
        origin,
        "forward_chunk_bytes",
        b.forward_chunk_bytes,
        "a piece is at least one sector and at most one ATA command",
    )?;
    step_ns(origin, "firmware_command_ns", b.firmware_command_ns)?;
    for (key, value) in [
        ("firmware_read_ns", b.firmware_read_ns),
        ("firmware_write_ns", b.firmware_write_ns),
        ("firmware_unmap_ns", b.firmware_unmap_ns),
    ] {
        step_ns(origin, key, value.unwrap_or(0))?;
    }
    step_ns(origin, "firmware_status_ns", b.firmware_status_ns)?;
    if b.max_uas_tags == 0 || b.max_uas_tags > UAS_TAG_MAX {
        return Err(SimError::profile(
            origin,
            "max_uas_tags",
            format!("UAS tags are 16-bit: must be 1..={UAS_TAG_MAX}"),
        ));
    }
    if b.ncq_depth == 0 || b.ncq_depth > NCQ_TAGS_MAX {
        return Err(SimError::profile(
            origin,
            "ncq_depth",
            format!("NCQ has at most {NCQ_TAGS_MAX} tags: must be 1..={NCQ_TAGS_MAX}"),
        ));
    }
    Ok(())
}

pub(super) fn validate_drive(origin: &str, d: &DriveProfile) -> Result<(), SimError> {
    d.validate(origin)
}
