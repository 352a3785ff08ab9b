//! Golden-byte tests of the FIS layouts and the ATA commands they carry.

use super::*;

fn emit_a5<const N: usize>(repr: &FisRepr) -> [u8; N] {
    let mut buf = [0xA5u8; N];
    let n = repr.emit(&mut buf).unwrap();
    // A Data FIS's emit writes its header; the payload is the caller's.
    if !matches!(repr, FisRepr::Data { .. }) {
        assert_eq!(n, repr.buffer_len());
    }
    buf
}

#[test]
fn read_fpdma_queued_golden() {
    let cmd = RegH2dRepr::fpdma_queued(false, 5, 0x0605_0403_0201, 8).unwrap();
    let bytes: [u8; 21] = emit_a5(&FisRepr::RegH2d(cmd));
    assert_eq!(
        bytes,
        [
            0x27, 0x80, 0x60, 0x08, // type, C, READ FPDMA QUEUED, sectors 7:0 in FEATURES
            0x01, 0x02, 0x03, 0x40, // LBA 23:0, DEVICE (LBA bit)
            0x04, 0x05, 0x06, 0x00, // LBA 47:24, FEATURES 15:8
            0x28, 0x00, 0x00, 0x00, // COUNT: tag 5 << 3, ICC, CONTROL
            0, 0, 0, 0,    // AUXILIARY
            0xA5, // untouched
        ]
    );
    let back = RegH2dRepr::parse(&FisPacket::new_checked(&bytes[..20]).unwrap()).unwrap();
    assert_eq!(back, cmd);
    assert_eq!((back.ncq_tag(), back.sectors()), (5, 8));
}

#[test]
fn recovery_commands_and_signature_golden() {
    // READ LOG EXT of log 10h, one page (libata `ata_read_log_page`).
    let bytes: [u8; 20] = emit_a5(&FisRepr::RegH2d(RegH2dRepr::read_log_ext(0x10, 1)));
    assert_eq!(
        bytes,
        [0x27, 0x80, 0x2F, 0, 0x10, 0, 0, 0x40, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]
    );
    let bytes: [u8; 20] = emit_a5(&FisRepr::RegH2d(RegH2dRepr::identify_device()));
    assert_eq!(&bytes[..4], &[0x27, 0x80, 0xEC, 0]);
    // SET FEATURES, set transfer mode UDMA 6 (40h | 6).
    let set = RegH2dRepr::set_features(SET_FEATURES_TRANSFER_MODE, TRANSFER_MODE_UDMA_BASE | 6);
    let bytes: [u8; 20] = emit_a5(&FisRepr::RegH2d(set));
    assert_eq!(
        bytes,
        [0x27, 0x80, 0xEF, 0x03, 0, 0, 0, 0x40, 0, 0, 0, 0, 0x46, 0, 0, 0, 0, 0, 0, 0]
    );
    let signature = RegD2hRepr::ata_signature();
    let bytes: [u8; 20] = emit_a5(&FisRepr::RegD2h(signature));
    assert_eq!(
        bytes,
        [0x34, 0x40, 0x40, 0x01, 0x01, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0]
    );
    let back = RegD2hRepr::parse(&FisPacket::new_checked(&bytes[..]).unwrap()).unwrap();
    assert!(back.is_ata_signature());
    assert!(!RegD2hRepr::success().is_ata_signature());
}

#[test]
fn write_fpdma_65536_sectors_encodes_zero() {
    let cmd = RegH2dRepr::fpdma_queued(true, 31, 0, 1 << 16).unwrap();
    let bytes: [u8; 20] = emit_a5(&FisRepr::RegH2d(cmd));
    assert_eq!(&bytes[..4], &[0x27, 0x80, 0x61, 0x00]);
    assert_eq!(&bytes[11..14], &[0x00, 0xF8, 0x00]);
    assert_eq!(cmd.sectors(), 1 << 16);
    assert!(RegH2dRepr::fpdma_queued(true, 32, 0, 1).is_err());
    assert!(RegH2dRepr::fpdma_queued(true, 0, 0, 0).is_err());
    assert!(RegH2dRepr::fpdma_queued(true, 0, 1 << 48, 1).is_err());
}

#[test]
fn dsm_trim_and_dma_ext_golden() {
    let bytes: [u8; 20] = emit_a5(&FisRepr::RegH2d(RegH2dRepr::dsm_trim(2)));
    assert_eq!(
        bytes,
        [0x27, 0x80, 0x06, 0x01, 0, 0, 0, 0x40, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]
    );
    let bytes: [u8; 20] = emit_a5(&FisRepr::RegH2d(
        RegH2dRepr::dma_ext(true, 0x100, 0x0203).unwrap(),
    ));
    assert_eq!(
        bytes,
        [0x27, 0x80, 0x35, 0, 0, 0x01, 0, 0x40, 0, 0, 0, 0, 0x03, 0x02, 0, 0, 0, 0, 0, 0]
    );
}

#[test]
fn flush_cache_ext_golden() {
    let cmd = RegH2dRepr::flush_cache_ext();
    let bytes: [u8; 21] = emit_a5(&FisRepr::RegH2d(cmd));
    assert_eq!(
        bytes,
        [
            0x27, 0x80, 0xEA, 0x00, // type, C, FLUSH CACHE EXT, FEATURES 7:0
            0, 0, 0, 0x40, // LBA 23:0 (reserved), DEVICE (LBA bit)
            0, 0, 0, 0, // LBA 47:24, FEATURES 15:8
            0, 0, 0, 0, // COUNT, ICC, CONTROL
            0, 0, 0, 0,    // AUXILIARY
            0xA5, // untouched
        ]
    );
    let back = RegH2dRepr::parse(&FisPacket::new_checked(&bytes[..20]).unwrap()).unwrap();
    assert_eq!(back, cmd);
    assert_eq!(
        back.command,
        u8::from(crate::ata::AtaCommand::FlushCacheExt)
    );
}

#[test]
fn status_fises_golden() {
    let d2h: [u8; 21] = emit_a5(&FisRepr::RegD2h(RegD2hRepr::success()));
    assert_eq!(
        d2h,
        [0x34, 0x40, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xA5]
    );
    let sdb: [u8; 9] = emit_a5(&FisRepr::SetDeviceBits(SetDeviceBitsRepr::completed(
        1 << 5,
    )));
    assert_eq!(sdb, [0xA1, 0x40, 0x40, 0x00, 0x20, 0, 0, 0, 0xA5]);
    let bad = SetDeviceBitsRepr {
        status: STATUS_BSY,
        ..SetDeviceBitsRepr::completed(0)
    };
    assert!(bad.emit(&mut [0; 8]).is_err());
}

#[test]
fn dma_fises_golden() {
    let setup: [u8; 29] = emit_a5(&FisRepr::DmaSetup(DmaSetupRepr::ncq(7, true, 4096)));
    assert_eq!(
        setup,
        [
            0x41, 0x20, 0, 0, // type, D (device to host), reserved
            7, 0, 0, 0, 0, 0, 0, 0, // DMA buffer identifier = tag
            0, 0, 0, 0, // reserved
            0, 0, 0, 0, // buffer offset
            0x00, 0x10, 0, 0, // transfer count 4096
            0, 0, 0, 0, // reserved
            0xA5,
        ]
    );
    let write = DmaSetupRepr::ncq(1, false, 512);
    assert!(write.auto_activate);
    let act: [u8; 5] = emit_a5(&FisRepr::DmaActivate { pm_port: 3 });
    assert_eq!(act, [0x39, 3, 0, 0, 0xA5]);
    let data: [u8; 5] = emit_a5(&FisRepr::Data {
        pm_port: 0,
        payload_len: 8,
    });
    assert_eq!(data, [0x46, 0, 0, 0, 0xA5]);
}

#[test]
fn pio_setup_golden() {
    let pio = PioSetupRepr {
        pm_port: 1,
        device_to_host: true,
        interrupt: true,
        status: 0x58,
        error: 0,
        lba: 0x0A0B0C,
        device: DEVICE_LBA,
        count: 1,
        end_status: STATUS_DRDY,
        transfer_count: 512,
    };
    let bytes: [u8; 20] = emit_a5(&FisRepr::PioSetup(pio));
    assert_eq!(
        bytes,
        [0x5F, 0x61, 0x58, 0, 0x0C, 0x0B, 0x0A, 0x40, 0, 0, 0, 0, 1, 0, 0, 0x40, 0, 2, 0, 0]
    );
    assert_eq!(FisRepr::parse_bytes(&bytes), Ok(FisRepr::PioSetup(pio)));
}

#[test]
fn bad_lengths_and_types_are_errors() {
    assert!(FisRepr::parse_bytes(&[]).is_err());
    assert!(FisRepr::parse_bytes(&[0x27; 19]).is_err());
    assert!(FisRepr::parse_bytes(&[0x99, 0, 0, 0]).is_err());
    assert!(FisRepr::parse_bytes(&[0x46, 0, 0, 0, 1, 2]).is_err());
    assert_eq!(
        FisRepr::parse_bytes(&[0x46, 0, 0, 0, 1, 2, 3, 4]),
        Ok(FisRepr::Data {
            pm_port: 0,
            payload_len: 4
        })
    );
    let d2h = [0x34u8; 20];
    assert!(RegH2dRepr::parse(&FisPacket::new_unchecked(&d2h[..])).is_err());
    assert!(RegD2hRepr::success().emit(&mut [0; 19]).is_err());
}

#[test]
fn data_fis_count_rounds_up_with_one_minimum() {
    assert_eq!(data_fis_count(0), 1);
    assert_eq!(data_fis_count(8192), 1);
    assert_eq!(data_fis_count(8193), 2);
    assert_eq!(data_fis_count(1 << 20), 128);
}
