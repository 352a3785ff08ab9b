//! Property tests of the SATA FIS codec: every FIS that emits parses back to itself, the
//! emitter never writes past `buffer_len()`, and NCQ commands keep tag and count apart.

use proptest::prelude::*;
use storlab_wire::sata::{
    DmaSetupRepr, FisPacket, FisRepr, PioSetupRepr, RegD2hRepr, RegH2dRepr, SetDeviceBitsRepr,
    LBA48_MAX,
};

/// Emits into a 0xA5-filled buffer one byte longer than the FIS, checks the canary, parses back.
fn round_trip(repr: FisRepr) -> Result<(), TestCaseError> {
    let mut buf = [0xA5u8; 64];
    let len = repr.buffer_len();
    let n = repr.emit(&mut buf[..len + 1]).unwrap();
    prop_assert_eq!(n, len);
    prop_assert_eq!(buf[len], 0xA5, "emit wrote past the FIS");
    prop_assert_eq!(
        FisRepr::parse(&FisPacket::new_checked(&buf[..len]).unwrap()),
        Ok(repr)
    );
    Ok(())
}

proptest! {
    #[test]
    fn reg_h2d_round_trips(pm_port in 0u8..=15, is_command: bool, command: u8, features: u16,
                           lba in 0..=LBA48_MAX, device: u8, count: u16, icc: u8, control: u8, auxiliary: u32) {
        round_trip(FisRepr::RegH2d(RegH2dRepr { pm_port, is_command, command, features, lba, device, count, icc, control, auxiliary }))?;
    }

    #[test]
    fn fpdma_keeps_tag_and_sectors(write: bool, tag in 0u8..=31, lba in 0..=LBA48_MAX, sectors in 1u32..=65536) {
        let cmd = RegH2dRepr::fpdma_queued(write, tag, lba, sectors).unwrap();
        let mut buf = [0xA5u8; 20];
        cmd.emit(&mut buf).unwrap();
        let back = RegH2dRepr::parse(&FisPacket::new_unchecked(&buf[..])).unwrap();
        prop_assert_eq!((back.ncq_tag(), back.sectors(), back.lba), (tag, sectors, lba));
    }

    #[test]
    fn reg_d2h_round_trips(pm_port in 0u8..=15, interrupt: bool, status: u8, error: u8,
                           lba in 0..=LBA48_MAX, device: u8, count: u16) {
        round_trip(FisRepr::RegD2h(RegD2hRepr { pm_port, interrupt, status, error, lba, device, count }))?;
    }

    #[test]
    fn dma_setup_round_trips(pm_port in 0u8..=15, device_to_host: bool, interrupt: bool, auto_activate: bool,
                             buffer_id: u64, buffer_offset: u32, transfer_count: u32) {
        round_trip(FisRepr::DmaSetup(DmaSetupRepr { pm_port, device_to_host, interrupt, auto_activate, buffer_id, buffer_offset, transfer_count }))?;
    }

    #[test]
    fn set_device_bits_round_trips(pm_port in 0u8..=15, interrupt: bool, notification: bool, status: u8, error: u8, sactive: u32) {
        let repr = SetDeviceBitsRepr { pm_port, interrupt, notification, status: status & 0x77, error, sactive };
        round_trip(FisRepr::SetDeviceBits(repr))?;
    }

    #[test]
    fn pio_setup_round_trips(pm_port in 0u8..=15, device_to_host: bool, interrupt: bool, status: u8, error: u8,
                             lba in 0..=LBA48_MAX, device: u8, count: u16, end_status: u8, transfer_count: u16) {
        round_trip(FisRepr::PioSetup(PioSetupRepr { pm_port, device_to_host, interrupt, status, error, lba, device, count, end_status, transfer_count }))?;
    }

    #[test]
    fn short_fises_round_trip(pm_port in 0u8..=15, dwords in 0usize..=8) {
        round_trip(FisRepr::DmaActivate { pm_port })?;
        let data = FisRepr::Data { pm_port, payload_len: dwords * 4 };
        let mut buf = [0u8; 40];
        let n = data.emit(&mut buf).unwrap();
        prop_assert_eq!(FisRepr::parse_bytes(&buf[..n + dwords * 4]), Ok(data));
    }

    #[test]
    fn any_bytes_parse_without_panic(data in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(repr) = FisRepr::parse_bytes(&data) {
            // Whatever parses re-emits (Set Device Bits drops the status bits it cannot carry).
            let mut buf = [0u8; 64];
            prop_assert!(repr.emit(&mut buf).is_ok());
        }
    }
}
