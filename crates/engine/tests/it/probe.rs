//! `probe` against sysfs fixture trees (one per kind of path: USB BOT and UAS, NVMe, AHCI,
//! virtio, loop, dm-crypt), the SG_IO command bytes and answer decoding against golden bytes,
//! and the real ioctl path on this machine's disk, read-only.

use std::path::PathBuf;
use storlab_engine::probe::query::{self, Answer, CommandFailure, Transport, VpdFacts};
use storlab_engine::probe::{ProbeReport, Prober, SysRoot};

fn fixture(case: &str) -> ProbeReport {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/probe");
    let prober = Prober {
        sys: SysRoot::new(root.join(case).join("sys")),
        mountinfo_path: root.join("absent-mountinfo"),
        query_device: false,
    };
    // The disk under test is the first in block/ (dm-0 sorts before the member sda).
    let names = prober.sys.block_names().expect("fixture has block/");
    let name = names.first().expect("one disk").clone();
    prober.probe_block_name(&name).expect("probe fixture")
}

fn has_line(report: &ProbeReport, needle: &str) -> bool {
    report.diagnosis.iter().any(|l| l.contains(needle))
}

fn drivers(report: &ProbeReport) -> Vec<String> {
    report
        .device
        .as_ref()
        .unwrap()
        .driver_chain
        .iter()
        .filter_map(|l| l.driver.clone())
        .collect()
}

#[test]
fn usb_bot_hdd_on_an_xhci_096_controller() {
    let r = fixture("usb-bot-hdd");
    let d = r.device.as_ref().unwrap();
    assert_eq!(d.name, "sdb");
    assert_eq!(d.transport, "usb-bot");
    assert_eq!(drivers(&r), ["sd", "usb-storage", "usb", "usb", "xhci_hcd"]);
    let usb = d.usb.as_ref().unwrap();
    assert_eq!(usb.speed_mbps, Some(480.0));
    assert_eq!(
        (usb.vendor_id, usb.product_id),
        (Some(0x05e3), Some(0x0731))
    );
    assert_eq!(usb.interface_protocol, Some(0x50));
    assert_eq!(usb.protocol.as_deref(), Some("BOT"));
    assert_eq!(usb.bridge.unwrap().chip, "GL3310");
    let pci = d.host_controller.as_ref().unwrap();
    assert_eq!((pci.vendor_id, pci.device_id), (Some(0x1033), Some(0x0194)));
    let link = pci.link.as_ref().unwrap();
    assert_eq!(
        (link.current_speed_gts, link.current_width),
        (Some(2.5), Some(1))
    );
    assert_eq!(d.queue.max_sectors_kb, Some(120));
    assert_eq!(d.queue.device_queue_depth, Some(1));
    assert_eq!(d.queue.rotational, Some(true));
    assert_eq!(d.size_bytes, Some(1_953_525_168 * 512));
    assert!(
        has_line(&r, "USB 2.0 High-Speed link: about 35 MB/s is the ceiling"),
        "{:?}",
        r.diagnosis
    );
    assert!(has_line(
        &r,
        "BOT (usb-storage): one command at a time, queue depth above 1 gains nothing"
    ));
    assert!(has_line(&r, "largest transfer 120 KiB"));
    assert!(has_line(
        &r,
        "controller behind a PCIe Gen1 x1 link: about 250 MB/s, below the PCIe Gen2 x1"
    ));
    assert!(has_line(&r, "no discard (TRIM) on this path"));
}

#[test]
fn uas_ssd_behind_an_asm1051e_on_intel_xhci() {
    let r = fixture("uas-asm1051e");
    let d = r.device.as_ref().unwrap();
    assert_eq!(d.transport, "usb-uas");
    assert_eq!(drivers(&r), ["sd", "uas", "usb", "usb", "xhci_hcd"]);
    let usb = d.usb.as_ref().unwrap();
    assert_eq!(usb.speed_mbps, Some(5000.0));
    assert_eq!(usb.protocol.as_deref(), Some("UAS"));
    let bridge = usb.bridge.unwrap();
    assert_eq!(bridge.maker, "ASMedia");
    assert!(bridge.chip.contains("ASM1051E"));
    let pci = d.host_controller.as_ref().unwrap();
    assert_eq!((pci.vendor_id, pci.device_id), (Some(0x8086), Some(0xa36d)));
    assert_eq!(pci.class, Some(0x0c0330));
    assert!(pci.link.is_none(), "a chipset xHCI has no PCIe link files");
    assert_eq!(d.queue.device_queue_depth, Some(30));
    assert_eq!(d.queue.discard_max_bytes, Some(0));
    assert!(
        has_line(&r, "USB 3.x link at 5 Gb/s: at most 500 MB/s"),
        "{:?}",
        r.diagnosis
    );
    assert!(has_line(&r, "UAS: commands queue on the device (30 tags)"));
    assert!(has_line(
        &r,
        "TRIM does not reach the drive through this bridge"
    ));
    assert!(has_line(&r, "bridge: ASMedia ASM1051E"));
    assert!(has_line(
        &r,
        "closest simulated stack: sim:usb3-linux-uas-ssd"
    ));
    assert!(!has_line(&r, "BOT"));
}

#[test]
fn nvme_on_a_link_trained_below_its_width() {
    let r = fixture("nvme");
    let d = r.device.as_ref().unwrap();
    assert_eq!(d.name, "nvme0n1");
    assert_eq!(d.transport, "nvme");
    assert_eq!(drivers(&r), ["nvme"]);
    assert!(d.usb.is_none());
    let link = d.host_controller.as_ref().unwrap().link.as_ref().unwrap();
    assert_eq!((link.max_speed_gts, link.max_width), (Some(8.0), Some(4)));
    assert_eq!(d.queue.scheduler.as_deref(), Some("none"));
    assert_eq!(d.queue.nr_requests, Some(1023));
    assert!(has_line(&r, "controller behind a PCIe Gen3 x2 link: about 1969 MB/s, below the PCIe Gen3 x4 it can run"), "{:?}", r.diagnosis);
    assert!(!has_line(&r, "TRIM"));
    assert!(has_line(&r, "volatile write cache on"));
}

#[test]
fn sata_ssd_on_ahci() {
    let r = fixture("sata-ahci");
    let d = r.device.as_ref().unwrap();
    assert_eq!(d.transport, "ahci");
    assert_eq!(drivers(&r), ["sd", "ahci"]);
    assert_eq!(d.queue.device_queue_depth, Some(32));
    assert_eq!(d.queue.max_hw_sectors_kb, Some(32767));
    assert!(d.host_controller.as_ref().unwrap().link.is_none());
    assert!(
        has_line(&r, "largest transfer 1280 KiB (hardware limit 32767 KiB)"),
        "{:?}",
        r.diagnosis
    );
    assert!(!has_line(&r, "split"));
    assert!(!has_line(&r, "TRIM"));
    // libata's cached IDENTIFY has the whole model; its INQUIRY strings only 16 characters.
    assert_eq!(d.model.as_deref(), Some("Samsung SSD 860 EVO 250GB"));
    assert_eq!(d.sata_link_gbps, Some(6.0));
}

#[test]
fn a_usb_disk_has_no_libata_port_and_no_model_without_inquiry_strings() {
    let r = fixture("usb-bot-hdd");
    let d = r.device.as_ref().unwrap();
    assert_eq!((d.model.as_deref(), d.sata_link_gbps), (None, None));
}

#[test]
fn virtio_disk() {
    let r = fixture("virtio");
    let d = r.device.as_ref().unwrap();
    assert_eq!(d.transport, "virtio");
    assert_eq!(drivers(&r), ["virtio_blk", "virtio-pci"]);
    assert_eq!(d.host_controller.as_ref().unwrap().vendor_id, Some(0x1af4));
    assert!(has_line(&r, "virtio: a virtual disk"), "{:?}", r.diagnosis);
}

#[test]
fn loop_device_over_a_file() {
    let r = fixture("loop");
    let d = r.device.as_ref().unwrap();
    assert_eq!(d.transport, "loop");
    assert!(d.driver_chain.is_empty());
    assert_eq!(d.loop_backing_file.as_deref(), Some("/var/tmp/disk.img"));
    assert!(
        has_line(&r, "loop device: I/O goes to /var/tmp/disk.img"),
        "{:?}",
        r.diagnosis
    );
}

#[test]
fn dm_crypt_over_a_partition_names_its_member_and_where_trim_stops() {
    let r = fixture("dm-crypt");
    let d = r.device.as_ref().unwrap();
    assert_eq!(d.name, "dm-0");
    assert_eq!(d.transport, "dm");
    let dm = d.dm.as_ref().unwrap();
    assert_eq!(dm.name.as_deref(), Some("cryptroot"));
    assert_eq!(dm.target.as_deref(), Some("crypt"));
    assert_eq!(d.members.len(), 1);
    let member = &d.members[0];
    assert_eq!(member.name, "sda");
    assert_eq!(member.partition.as_deref(), Some("sda2"));
    assert_eq!(member.transport, "ahci");
    assert!(
        has_line(&r, "dm-crypt: every byte is encrypted"),
        "{:?}",
        r.diagnosis
    );
    assert!(has_line(&r, "TRIM stops at device-mapper"));
    assert!(has_line(&r, "sda2: largest transfer 1280 KiB"));
}

#[test]
fn every_fixture_serialises_to_json() {
    for case in [
        "usb-bot-hdd",
        "uas-asm1051e",
        "nvme",
        "sata-ahci",
        "virtio",
        "loop",
        "dm-crypt",
    ] {
        let r = fixture(case);
        let json = serde_json::to_value(&r).unwrap();
        assert!(json["device"]["transport"].is_string(), "{case}");
        assert!(json["diagnosis"].is_array(), "{case}");
    }
}

/// A device that answers from canned bytes, keyed by CDB, and refuses everything else with
/// ILLEGAL REQUEST / INVALID FIELD IN CDB (fixed sense 70h, key 5, ASC 24h).
struct Canned(Vec<(Vec<u8>, Vec<u8>)>, Vec<Vec<u8>>);

const ILLEGAL_REQUEST_SENSE: [u8; 18] = [
    0x70, 0, 0x05, 0, 0, 0, 0, 0x0a, 0, 0, 0, 0, 0x24, 0x00, 0, 0, 0, 0,
];

impl Transport for Canned {
    fn data_in(&mut self, cdb: &[u8], buffer: &mut [u8]) -> Result<usize, CommandFailure> {
        self.1.push(cdb.to_vec());
        match self.0.iter().find(|(c, _)| c == cdb) {
            Some((_, data)) => {
                let n = data.len().min(buffer.len());
                buffer[..n].copy_from_slice(&data[..n]);
                Ok(n)
            }
            None => Err(CommandFailure::CheckCondition(
                ILLEGAL_REQUEST_SENSE.to_vec(),
            )),
        }
    }
}

#[test]
fn cdbs_are_the_bytes_spc_and_sat_define() {
    // SPC-4 6.6.1: INQUIRY 12h, EVPD bit 0 of byte 1, page code, allocation length (BE16).
    assert_eq!(
        query::inquiry_cdb(None),
        [0x12, 0x00, 0x00, 0x00, 0x24, 0x00]
    );
    assert_eq!(
        query::inquiry_cdb(Some(0xB0)),
        [0x12, 0x01, 0xB0, 0x00, 0xFF, 0x00]
    );
    // SBC-4 5.20: SERVICE ACTION IN(16) 9Eh, action 10h, allocation length 32 (bytes 10..14).
    assert_eq!(
        query::read_capacity16_cdb(),
        [0x9E, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0]
    );
    // SAT-4 12.2.2: ATA PASS-THROUGH(16) 85h, PROTOCOL 4 (PIO data-in) << 1, T_DIR|BYT_BLOK|
    // T_LENGTH=2 (0x0E), COUNT 1, COMMAND ECh (IDENTIFY DEVICE).
    assert_eq!(
        query::ata_identify_cdb(),
        [0x85, 0x08, 0x0E, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0xEC, 0]
    );
}

fn standard_inquiry() -> Vec<u8> {
    let mut d = vec![0u8; 36];
    d[2] = 0x06; // SPC-4
    d[3] = 0x02; // response data format 2
    d[4] = 31; // additional length
    d[7] = 0x02; // CMDQUE
    d[8..16].copy_from_slice(b"ATA     ");
    d[16..32].copy_from_slice(b"Samsung SSD 860 ");
    d[32..36].copy_from_slice(b"4B6Q");
    d
}

#[test]
fn a_device_that_lists_few_pages_is_asked_only_for_those_and_refusals_are_answers() {
    let supported = vec![0x00, 0x00, 0x00, 0x03, 0x00, 0x80, 0xB0];
    let serial = [&[0x00, 0x80, 0x00, 0x04][..], b"S3Z1"].concat();
    let mut block_limits = vec![0u8; 64];
    block_limits[1] = 0xB0;
    block_limits[3] = 0x3C;
    block_limits[8..12].copy_from_slice(&65_535u32.to_be_bytes()); // MAXIMUM TRANSFER LENGTH
    let mut capacity = vec![0u8; 32];
    capacity[0..8].copy_from_slice(&976_773_167u64.to_be_bytes());
    capacity[8..12].copy_from_slice(&512u32.to_be_bytes());
    capacity[13] = 3; // 8 logical per physical
    let mut device = Canned(
        vec![
            (query::inquiry_cdb(None), standard_inquiry()),
            (query::inquiry_cdb(Some(0x00)), supported),
            (query::inquiry_cdb(Some(0x80)), serial),
            (query::inquiry_cdb(Some(0xB0)), block_limits),
            (query::read_capacity16_cdb(), capacity),
        ],
        Vec::new(),
    );
    let q = query::query(&mut device, true);
    assert!(q.unavailable.is_none());
    let inquiry = q.inquiry.as_ref().unwrap().value().unwrap();
    assert_eq!(inquiry.vendor, "ATA");
    assert_eq!(inquiry.product, "Samsung SSD 860");
    assert!(inquiry.command_queueing);
    let page = |code: u8| &q.vpd.iter().find(|v| v.page == code).unwrap().answer;
    assert_eq!(
        page(0x80).value(),
        Some(&VpdFacts::UnitSerialNumber {
            serial: "S3Z1".into()
        })
    );
    match page(0xB0).value() {
        Some(VpdFacts::BlockLimits {
            maximum_transfer_blocks,
            ..
        }) => {
            assert_eq!(*maximum_transfer_blocks, 65_535)
        }
        other => panic!("block limits: {other:?}"),
    }
    // 0xB1 is not listed: reported as such, and never sent.
    assert_eq!(
        page(0xB1),
        &Answer::NotSupported {
            reason: "not in the Supported VPD Pages list".into()
        }
    );
    assert!(!device.1.contains(&query::inquiry_cdb(Some(0xB1))));
    let capacity = q.read_capacity16.as_ref().unwrap().value().unwrap();
    assert_eq!(capacity.size_bytes, 976_773_168 * 512);
    assert_eq!(capacity.physical_block_bytes, 4096);
    // ATA IDENTIFY refused with ILLEGAL REQUEST: not supported, with the sense named.
    match q.ata_identify.as_ref().unwrap() {
        Answer::NotSupported { reason } => assert!(reason.contains("24h/00h"), "{reason}"),
        other => panic!("identify: {other:?}"),
    }
}

#[test]
fn a_node_without_sg_io_is_reported_unavailable_not_failed() {
    struct NoSgIo;
    impl Transport for NoSgIo {
        fn data_in(&mut self, _: &[u8], _: &mut [u8]) -> Result<usize, CommandFailure> {
            Err(CommandFailure::Os(libc::ENOTTY))
        }
    }
    let q = query::query(&mut NoSgIo, true);
    let reason = q.unavailable.unwrap();
    assert!(reason.contains("takes no SCSI commands"), "{reason}");
    assert!(q.inquiry.is_none());
}

/// The real ioctl on this machine's disk, read-only: it either answers INQUIRY or says why
/// not; it never fails the probe.
#[test]
fn sg_io_on_this_machines_disk_answers_or_says_why() {
    let prober = Prober::default();
    let Some(name) = prober.sys.block_names().ok().and_then(|names| {
        names
            .into_iter()
            .find(|n| n.starts_with("vd") || n.starts_with("sd") || n.starts_with("nvme"))
    }) else {
        println!("skipped: no vd*, sd* or nvme* disk in /sys/block");
        return;
    };
    let report = prober.probe_block_name(&name).unwrap();
    let q = report.device.unwrap().device_query.unwrap();
    match (&q.unavailable, &q.inquiry) {
        (Some(reason), _) => println!("skipped: /dev/{name} does not answer SG_IO: {reason}"),
        (None, Some(answer)) => println!("/dev/{name} INQUIRY: {answer:?}"),
        (None, None) => panic!("no INQUIRY and no reason"),
    }
}
