//! Golden figures of every ceiling's arithmetic, the weighing of a measured rate against them
//! and the what-if stack and command.

use super::*;
use crate::probe::{PciFacts, PcieLink, QueueFacts, UsbFacts};

fn disk(transport: &str) -> DeviceFacts {
    DeviceFacts {
        name: "sdb".into(),
        partition: None,
        node: "/dev/sdb".into(),
        size_bytes: None,
        transport: transport.into(),
        driver_chain: Vec::new(),
        usb: None,
        host_controller: None,
        queue: QueueFacts::default(),
        loop_backing_file: None,
        dm: None,
        md_level: None,
        members: Vec::new(),
        device_query: None,
        model: None,
        sata_link_gbps: None,
    }
}

fn usb(speed_mbps: f64, protocol: &str) -> DeviceFacts {
    let mut device = disk(if protocol == "BOT" {
        "usb-bot"
    } else {
        "usb-uas"
    });
    device.usb = Some(UsbFacts {
        node: "2-1".into(),
        speed_mbps: Some(speed_mbps),
        vendor_id: None,
        product_id: None,
        bcd_device: None,
        manufacturer: None,
        product: None,
        bridge: None,
        interface_protocol: None,
        protocol: Some(protocol.into()),
    });
    device
}

fn with_pcie(mut device: DeviceFacts, gts: f64, lanes: u32) -> DeviceFacts {
    device.host_controller = Some(PciFacts {
        address: "0000:03:00.0".into(),
        driver: Some("xhci_hcd".into()),
        vendor_id: None,
        device_id: None,
        class: None,
        link: Some(PcieLink {
            current_speed_gts: Some(gts),
            current_width: Some(lanes),
            max_speed_gts: None,
            max_width: None,
        }),
    });
    device
}

fn ceiling<'a>(all: &'a [Ceiling], kind: &str) -> &'a Ceiling {
    all.iter()
        .find(|c| c.kind == kind)
        .unwrap_or_else(|| panic!("no {kind} in {all:?}"))
}

fn close(actual: f64, expected: f64) {
    assert!((actual - expected).abs() < 0.01, "{actual} != {expected}");
}

#[test]
fn high_speed_is_13_packets_of_512_bytes_per_microframe_and_bot_adds_two_transactions() {
    let all = ceilings(&usb(480.0, "BOT"), 120 * 1024);
    // 13 × 512 B / 125 µs
    close(ceiling(&all, "usb-link").read_mbs, 53.248);
    // 240 data packets + CBW + CSW = 242 slots of 13 per microframe
    close(
        ceiling(&all, "bot").read_mbs,
        122_880.0 * 13.0 / 242.0 / 125.0,
    );
    close(ceiling(&all, "bot").read_mbs, 52.808);
    // 4 KiB commands: 8 data packets + 2
    close(ceilings(&usb(480.0, "BOT"), 4096)[1].read_mbs, 42.598);
    // UAS queues its commands: no per-command ceiling
    assert!(ceilings(&usb(480.0, "UAS"), 4096)
        .iter()
        .all(|c| c.kind != "bot"));
}

#[test]
fn full_speed_is_19_packets_of_64_bytes_per_frame() {
    close(ceilings(&usb(12.0, "BOT"), 4096)[0].read_mbs, 1.216);
}

#[test]
fn super_speed_pays_line_coding_then_packet_framing() {
    // 5 Gb/s × 8/10 / 8 = 500 MB/s, × 1024/1056
    close(ceilings(&usb(5000.0, "UAS"), 4096)[0].read_mbs, 484.848);
    // 10 Gb/s × 128/132 / 8 = 1212.12 MB/s, × 1024/1056
    close(ceilings(&usb(10000.0, "UAS"), 4096)[0].read_mbs, 1175.390);
    // BOT at 5 Gb/s, 128 KiB: CBW + CSW + data + 130 packets' framing
    let bot = ceilings(&usb(5000.0, "BOT"), 128 * 1024);
    close(ceiling(&bot, "bot").read_mbs, 500.0 * 131_072.0 / 135_276.0);
    assert_eq!(ceiling(&bot, "usb-link").sharing, Sharing::FullDuplex);
    assert_eq!(ceiling(&bot, "bot").sharing, Sharing::HalfDuplex);
}

#[test]
fn pcie_pays_coding_and_tlp_headers_each_way() {
    let gen1 = ceilings(&with_pcie(usb(5000.0, "UAS"), 2.5, 1), 4096);
    let pcie = ceiling(&gen1, "pcie");
    // 2.5 GT/s × 8/10 / 8 = 250 MB/s; 128 B payload + 24 B (Memory Write) or 20 B (Completion)
    close(pcie.read_mbs, 250.0 * 128.0 / 152.0);
    close(pcie.write_mbs, 250.0 * 128.0 / 148.0);
    let gen3 = ceilings(&with_pcie(disk("nvme"), 8.0, 4), 4096);
    // 8 GT/s × 4 × 128/130 / 8 = 3938.46 MB/s
    close(ceiling(&gen3, "pcie").read_mbs, 3938.4615 * 128.0 / 152.0);
}

#[test]
fn sata_pays_coding_and_each_data_fis_framing() {
    let mut device = disk("ahci");
    device.sata_link_gbps = Some(6.0);
    close(ceilings(&device, 4096)[0].read_mbs, 600.0 * 8192.0 / 8208.0);
    device.sata_link_gbps = Some(3.0);
    close(ceilings(&device, 4096)[0].read_mbs, 300.0 * 8192.0 / 8208.0);
}

#[test]
fn a_rated_drive_is_named_by_its_whole_model_only() {
    let mut device = disk("ahci");
    device.model = Some("Samsung  SSD 860 EVO 250GB".into());
    let rated = ceiling(&ceilings(&device, 4096), "drive-rated").clone();
    assert_eq!((rated.read_mbs, rated.write_mbs), (550.0, 520.0));
    // INQUIRY's 16 characters could be any 860
    device.model = Some("Samsung SSD 860 ".into());
    assert!(ceilings(&device, 4096).is_empty());
}

#[test]
fn half_duplex_shares_add_and_full_duplex_takes_the_busier_direction() {
    let measured = Measured {
        read_mbs: 20.0,
        write_mbs: 20.0,
        block_bytes: 4096,
        iodepth: 1,
    };
    let usb2 = weigh(ceilings(&usb(480.0, "UAS"), 4096).remove(0), &measured);
    close(usb2.share, 40.0 / 53.248);
    close(usb2.limit_mbs, 53.248);
    let usb3 = weigh(ceilings(&usb(5000.0, "UAS"), 4096).remove(0), &measured);
    close(usb3.share, 20.0 / 484.848);
    close(usb3.measured_mbs, 20.0);
}

#[test]
fn the_binding_ceiling_is_the_nearest_and_the_what_if_is_a_shipped_stack() {
    let device = with_pcie(usb(480.0, "BOT"), 2.5, 1);
    let measured = Measured {
        read_mbs: 35.0,
        write_mbs: 0.0,
        block_bytes: 1 << 20,
        iodepth: 4,
    };
    let args = vec![
        "run".to_string(),
        "--rw=read".into(),
        "--name".into(),
        "a b".into(),
    ];
    let v = verdict(&device, &measured, Some(&args)).unwrap();
    assert_eq!(v.binding, "bot");
    assert!(v.lines[0].contains("is 66% of the 53.2 MB/s ceiling of BOT's one command at a time over USB 2.0 High-Speed (480 Mb/s), the ceiling that binds"), "{:?}", v.lines);
    assert!(v
        .lines
        .iter()
        .any(|l| l.contains("queue depth 4 gains nothing")));
    let what_if = v.what_if.unwrap();
    assert_eq!(what_if.stack, "usb2-linux-bot-hdd");
    assert_eq!(
        what_if.command.as_deref(),
        Some("storlab run --rw=read --name 'a b' --target sim:usb2-linux-bot-hdd")
    );
    let shipped: Vec<&str> = storlab_sim::profiles::embedded::EMBEDDED_PROFILES
        .iter()
        .filter(|(category, _, _)| *category == "stacks")
        .map(|(_, name, _)| *name)
        .collect();
    for stack in [
        "sata-ahci-hdd",
        "sata-ahci-860evo",
        "sata-ahci-ssd",
        "usb3-linux-uas-860evo",
    ] {
        assert!(shipped.contains(&stack), "{stack} is not a shipped stack");
    }
    assert!(verdict(&disk("virtio"), &measured, None).is_none());
}

#[test]
fn a_rate_above_every_ceiling_is_said_not_to_have_crossed_the_path() {
    let measured = Measured {
        read_mbs: 2000.0,
        write_mbs: 0.0,
        block_bytes: 4096,
        iodepth: 1,
    };
    let v = verdict(&usb(5000.0, "UAS"), &measured, None).unwrap();
    assert!(
        v.lines[0].contains("did not all cross the path"),
        "{:?}",
        v.lines
    );
    assert_eq!(shell_word("it's"), r"'it'\''s'");
}
