//! SATA error recovery on an AHCI port as Linux libata runs it (docs/simulator.md, "Faults";
//! ADR 0017): the hardreset after a command timeout — COMRESET, the OOB sequence, the drive's
//! signature FIS, then revalidation with IDENTIFY DEVICE, SET FEATURES and IDENTIFY DEVICE again —
//! as real bytes through `storlab_wire`, each parsed by the other end, with libata's waits and
//! the link's FIS times. The READ LOG EXT of NCQ error recovery is in `link_sata.rs` (bridges
//! with NCQ drives run it too); which commands a reset or an NCQ error aborts, and their
//! retries, are the core's (`sim.rs`), which owns the commands.

use crate::cx::{layer, Cx};
use crate::link_sata::{SataLink, FIS_REG_D2H_BYTES, FIS_REG_H2D_BYTES};
use storlab_wire::ata::{IdentifyRepr, RotationRate, IDENTIFY_LEN};
use storlab_wire::sata::{
    self as fis, FisPacket, PioSetupRepr, RegD2hRepr, RegH2dRepr, SET_FEATURES_TRANSFER_MODE,
    STATUS_BSY, STATUS_DRDY, STATUS_ERR, TRANSFER_MODE_UDMA_BASE,
};

/// libata's hardreset holds SControl DET=1 (the HBA sends COMRESET) for 1 ms:
/// `sata_link_hardreset`, `ata_msleep(link->ap, 1)` ("AHCI-1.1 10.4.2 says at least 1 ms").
pub const LIBATA_COMRESET_HOLD_NS: u64 = 1_000_000;
/// `sata_link_resume` sleeps 200 ms after clearing DET before it debounces the link ("Some
/// PHYs react badly if SStatus is pounded immediately after resuming"; Linux 3.x–5.x
/// drivers/ata/libata-core.c, later libata-sata.c).
pub const LIBATA_LINK_RESUME_DELAY_NS: u64 = 200_000_000;
/// `sata_deb_timing_normal` = { 5, 100, 2000 } ms: SStatus polled every 5 ms until DET has held
/// its value for more than 100 ms (`sata_link_debounce`; EH without a hotplug uses the normal
/// timing, `sata_ehc_deb_timing`).
pub const LIBATA_DEBOUNCE_INTERVAL_NS: u64 = 5_000_000;
pub const LIBATA_DEBOUNCE_DURATION_NS: u64 = 100_000_000;
/// `ata_wait_ready` checks the port, then sleeps 50 ms between checks, until the device's
/// signature FIS has cleared BSY.
pub const LIBATA_WAIT_READY_POLL_NS: u64 = 50_000_000;

/// OOB signalling (SATA 3.x §8.4, OOB signalling and phy power states), in Gen1 unit
/// intervals (1 UI = 1/1.5 GHz = 2/3 ns): every OOB signal is six bursts of 160 UI of ALIGN
/// (106.7 ns); COMRESET and COMINIT separate them by 480 UI of idle (320 ns), COMWAKE by 160 UI
/// (106.7 ns).
const OOB_BURSTS: u64 = 6;
const OOB_BURST_UI: u64 = 160;
const OOB_COMRESET_IDLE_UI: u64 = 480;
const OOB_COMWAKE_IDLE_UI: u64 = 160;
/// A Gen1 UI is 2/3 ns: UI × 2 / 3 in ns.
const GEN1_UI_NS_NUMERATOR: u64 = 2;
const GEN1_UI_NS_DENOMINATOR: u64 = 3;
/// Speed negotiation: the device sends ALIGN at its fastest rate and the host, locked, answers
/// with ALIGN; a device that gets no answer tries the next lower rate after 54.6 µs (2048 Gen1
/// dwords, SATA 3.x §8.4.2). Both ends of the simulated link run the profile's rate, so one
/// ALIGN exchange, at most one 2048-dword period.
const SPEED_NEGOTIATION_DWORDS: u64 = 2048;
const DWORD_UI: u64 = 40;
/// The Ultra DMA mode libata programs after revalidation on a SATA device: UDMA/133 (mode 6),
/// the highest an AHCI port reports (`ahci` sets `udma_mask = ATA_UDMA6`).
const UDMA_MODE_SATA: u16 = 6;

/// The time of the OOB exchange: host COMRESET, device COMINIT, host and device COMWAKE, then
/// speed negotiation.
pub(crate) fn oob_ns() -> u64 {
    let comreset_ui = OOB_BURSTS * (OOB_BURST_UI + OOB_COMRESET_IDLE_UI);
    let comwake_ui = OOB_BURSTS * (OOB_BURST_UI + OOB_COMWAKE_IDLE_UI);
    // COMRESET, COMINIT, two COMWAKEs, one ALIGN negotiation period.
    let ui = 2 * comreset_ui + 2 * comwake_ui + SPEED_NEGOTIATION_DWORDS * DWORD_UI;
    (ui * GEN1_UI_NS_NUMERATOR).div_ceil(GEN1_UI_NS_DENOMINATOR)
}

/// What the drive answers IDENTIFY DEVICE with, from the simulated drive's size and queue and
/// whether it reads trimmed LBAs as zeroes (deterministic read zeroes after TRIM).
pub(crate) fn drive_identify(
    capacity_bytes: u64,
    logical_block_bytes: u32,
    queue_depth: u32,
    zeroes_after_trim: bool,
) -> IdentifyRepr {
    IdentifyRepr {
        serial: storlab_wire::ata::ata_text("STORLAB-SIM"),
        firmware: storlab_wire::ata::ata_text("SIM"),
        model: storlab_wire::ata::ata_text("storlab simulated drive"),
        user_addressable_sectors: capacity_bytes / u64::from(logical_block_bytes),
        lba48_supported: true,
        ncq_supported: queue_depth > 1,
        queue_depth: queue_depth.clamp(1, u32::from(fis::NCQ_TAG_MAX) + 1) as u8,
        trim_supported: true,
        deterministic_read_after_trim: zeroes_after_trim,
        read_zeroes_after_trim: zeroes_after_trim,
        dsm_max_blocks: 0,
        logical_sector_size_bytes: logical_block_bytes,
        physical_sector_size_bytes: logical_block_bytes,
        rotation_rate: RotationRate::NotReported,
    }
}

/// The steps of one hardreset, for the report and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hardreset {
    /// The link is up again (OOB done) and the drive's signature FIS reached the host.
    pub signature_ns: u64,
    /// libata saw the port ready (`ata_wait_ready`) after the debounce.
    pub ready_ns: u64,
    /// Revalidation done: commands may go to the drive again.
    pub revalidated_ns: u64,
}

/// The host's timer fired at `from_ns`: libata's EH freezes the port and hardresets it
/// (`ahci_hardreset` → `sata_link_hardreset`): COMRESET held 1 ms, the OOB exchange, the
/// drive's signature FIS; `sata_link_resume`'s 200 ms and the debounce; `ata_wait_ready`.
/// Then `ata_eh_revalidate_and_attach` → `ata_dev_revalidate` reads IDENTIFY DEVICE and checks
/// it is the same device (`ata_dev_same_device`: model, serial, size), and `ata_set_mode` →
/// `ata_dev_set_mode` sends SET FEATURES (transfer mode) and revalidates again. Every exchange
/// is encoded, decoded by the other end and booked on the link. The drive's own time from the
/// reset to its signature is not modelled (none of the shipped drive profiles cites one): it
/// answers as soon as the link is up, well inside libata's 306 ms of waits.
pub(crate) fn hardreset(
    cx: &mut Cx,
    link: &SataLink,
    identify: &IdentifyRepr,
    from_ns: u64,
) -> Hardreset {
    // COMRESET, then the drive's answer and the speed negotiation.
    let link_up = from_ns + LIBATA_COMRESET_HOLD_NS + oob_ns();
    let signature_ns = signature_fis(cx, link, link_up);
    // sata_link_resume: 200 ms, then polls every 5 ms until DET held more than 100 ms (the link
    // is up long before, so the first poll past 100 ms ends it).
    let resumed = from_ns + LIBATA_COMRESET_HOLD_NS + LIBATA_LINK_RESUME_DELAY_NS;
    let debounced = resumed
        + (LIBATA_DEBOUNCE_DURATION_NS / LIBATA_DEBOUNCE_INTERVAL_NS + 1)
            * LIBATA_DEBOUNCE_INTERVAL_NS;
    // ata_wait_ready: ready at its first check if the signature is in, else at a later poll.
    let ready_ns = if signature_ns <= debounced {
        debounced
    } else {
        debounced
            + (signature_ns - debounced).div_ceil(LIBATA_WAIT_READY_POLL_NS)
                * LIBATA_WAIT_READY_POLL_NS
    };
    let t = identify_device(cx, link, identify, ready_ns);
    let t = set_transfer_mode(cx, link, t);
    let revalidated_ns = identify_device(cx, link, identify, t);
    Hardreset {
        signature_ns,
        ready_ns,
        revalidated_ns,
    }
}

/// The drive's first FIS after the reset: Register D2H with the ATA signature; the host
/// classifies the device by it. Returns when the host has it.
fn signature_fis(cx: &mut Cx, link: &SataLink, from_ns: u64) -> u64 {
    let mut bytes = [0u8; fis::REG_D2H_LEN];
    RegD2hRepr::ata_signature()
        .emit(&mut bytes)
        .expect("one Register D2H FIS");
    let got = RegD2hRepr::parse(&FisPacket::new_unchecked(&bytes[..]))
        .expect("host: the signature FIS parses");
    assert!(got.is_ata_signature(), "host: not an ATA device signature");
    assert_eq!(got.status & STATUS_BSY, 0, "host: signature with BSY");
    cx.reserve(layer::SATA_LINK, from_ns, link.fis_ns(FIS_REG_D2H_BYTES), 0)
}

/// IDENTIFY DEVICE, PIO data-in: the command FIS, the drive's PIO Setup FIS (its E_Status ends
/// the command) and one Data FIS of 512 bytes the host parses and compares with what it knew.
/// Returns when the host has the data.
fn identify_device(cx: &mut Cx, link: &SataLink, identify: &IdentifyRepr, from_ns: u64) -> u64 {
    let t = send_command(cx, link, &RegH2dRepr::identify_device(), from_ns);
    let mut setup = [0u8; fis::PIO_SETUP_LEN];
    PioSetupRepr {
        pm_port: 0,
        device_to_host: true,
        interrupt: true,
        status: STATUS_DRDY,
        error: 0,
        lba: 0,
        device: 0,
        count: 0,
        end_status: STATUS_DRDY,
        transfer_count: IDENTIFY_LEN as u16,
    }
    .emit(&mut setup)
    .expect("one PIO Setup FIS");
    let setup = PioSetupRepr::parse(&FisPacket::new_unchecked(&setup[..]))
        .expect("host: PIO Setup FIS parses");
    assert_eq!(usize::from(setup.transfer_count), IDENTIFY_LEN);
    let mut data = [0u8; IDENTIFY_LEN];
    identify.emit(&mut data).expect("IDENTIFY data fits");
    let got = IdentifyRepr::parse(&data).expect("host: IDENTIFY data parses");
    // ata_dev_same_device: a different model, serial or size is another device.
    assert_eq!(
        (got.model, got.serial, got.user_addressable_sectors),
        (
            identify.model,
            identify.serial,
            identify.user_addressable_sectors
        ),
        "host: revalidation found another device"
    );
    let ns = link.fis_ns(fis::PIO_SETUP_LEN as u64) + link.data_ns(IDENTIFY_LEN as u64);
    cx.reserve(layer::SATA_LINK, t, ns, 0)
}

/// SET FEATURES, set transfer mode (UDMA 6): non-data, ended by a Register D2H FIS. Returns
/// when the host has the status.
fn set_transfer_mode(cx: &mut Cx, link: &SataLink, from_ns: u64) -> u64 {
    let command = RegH2dRepr::set_features(
        SET_FEATURES_TRANSFER_MODE,
        TRANSFER_MODE_UDMA_BASE | UDMA_MODE_SATA,
    );
    let t = send_command(cx, link, &command, from_ns);
    let mut status = [0u8; fis::REG_D2H_LEN];
    RegD2hRepr::success()
        .emit(&mut status)
        .expect("one Register D2H FIS");
    let got =
        RegD2hRepr::parse(&FisPacket::new_unchecked(&status[..])).expect("host: status FIS parses");
    assert_eq!(
        got.status & (STATUS_BSY | STATUS_ERR),
        0,
        "SET FEATURES failed"
    );
    cx.reserve(layer::SATA_LINK, t, link.fis_ns(FIS_REG_D2H_BYTES), 0)
}

/// Host: send a command FIS the drive decodes back to the same command. Returns when the
/// drive has it.
fn send_command(cx: &mut Cx, link: &SataLink, command: &RegH2dRepr, from_ns: u64) -> u64 {
    let mut bytes = [0u8; fis::REG_H2D_LEN];
    command.emit(&mut bytes).expect("one Register H2D FIS");
    let got = RegH2dRepr::parse(&FisPacket::new_unchecked(&bytes[..]))
        .expect("drive: the command FIS parses");
    assert_eq!(&got, command, "drive decoded another command");
    cx.reserve(layer::SATA_LINK, from_ns, link.fis_ns(FIS_REG_H2D_BYTES), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oob_is_microseconds() {
        // COMRESET and COMINIT 2.56 µs each, COMWAKEs 1.28 µs each, ALIGN period 54.6 µs.
        let ns = oob_ns();
        assert_eq!(ns, 62_294, "{ns}");
    }

    /// An SSD's IDENTIFY says trimmed LBAs read as zeroes (word 69 bits 14 and 5), as the
    /// payload store returns them; a drive that does not unmap on TRIM says nothing.
    #[test]
    fn identify_states_zeroes_after_trim_only_when_the_drive_gives_them() {
        for zeroes in [true, false] {
            let repr = drive_identify(128_000_000_000, 512, 32, zeroes);
            let mut data = [0u8; IDENTIFY_LEN];
            repr.emit(&mut data).expect("emits");
            let back = IdentifyRepr::parse(&data).expect("parses");
            assert_eq!(back.deterministic_read_after_trim, zeroes);
            assert_eq!(back.read_zeroes_after_trim, zeroes);
            assert_eq!(data[69 * 2 + 1] & 0x40 != 0, zeroes, "word 69 bit 14");
            assert_eq!(data[69 * 2] & 0x20 != 0, zeroes, "word 69 bit 5");
        }
    }
}
