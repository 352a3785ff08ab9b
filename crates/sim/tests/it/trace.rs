//! The session trace is a usbmon pcap that decodes (with wire's decoder, and with tshark when
//! installed) into the enumeration and the commands the simulated host sent.

use storlab_sim::{Op, ProfileSet, SimRequest, Simulator};

fn traced_session(stack: &str) -> Vec<u8> {
    let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), stack, 5).unwrap();
    sim.setup_slots(4, 65536).unwrap();
    sim.enable_pcap();
    sim.slot_buffer_mut(0).fill(0xAB);
    let requests = [
        (0, Op::Write, 1 << 20, 8192),
        (1, Op::Read, 1 << 20, 8192),
        (2, Op::Read, 4 << 20, 65536),
        (3, Op::Trim, 8 << 20, 1 << 20),
    ];
    for (slot, op, offset_bytes, len_bytes) in requests {
        sim.submit(SimRequest {
            slot,
            op,
            offset_bytes,
            len_bytes,
        })
        .unwrap();
        sim.run();
    }
    assert_eq!(std::iter::from_fn(|| sim.pop_completion()).count(), 4);
    sim.take_pcap()
}

#[test]
fn bot_and_uas_sessions_decode_with_wire() {
    for (stack, needle) in [
        ("usb3-bot-ssd", "CBW"),
        ("usb3-uas-ssd", "Command IU"),
        ("usb2-uas-ssd", "Sense IU"),
    ] {
        let pcap = traced_session(stack);
        let text = storlab_wire::decode_pcap(&pcap).unwrap_or_else(|e| panic!("{stack}: {e}"));
        assert!(text.contains(needle), "{stack}: no {needle} in\n{text}");
        assert!(
            text.contains("WRITE(10)") || text.contains("WRITE"),
            "{stack}:\n{text}"
        );
        assert!(text.contains("UNMAP"), "{stack}:\n{text}");
    }
}

#[test]
fn high_speed_uas_announces_data_with_ready_ius_before_its_data_urbs() {
    let text = storlab_wire::decode_pcap(&traced_session("usb2-uas-ssd")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let first = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle} in\n{text}"))
    };
    // The driver submits the write's data URB (bulk-out 0x02) only after the Write Ready IU,
    // and the first read's (bulk-in 0x81) after the Read Ready IU.
    assert!(
        first("UAS Write Ready IU") < first("S Bulk 1:2:0x02"),
        "{text}"
    );
    assert!(
        first("UAS Read Ready IU") < first("S Bulk 1:2:0x81"),
        "{text}"
    );
    // At SuperSpeed streams carry the data: no Ready IU at all.
    let super_speed = storlab_wire::decode_pcap(&traced_session("usb3-uas-ssd")).unwrap();
    assert!(!super_speed.contains("Ready IU"), "{super_speed}");
}

#[test]
fn direct_sata_has_no_usb_trace() {
    assert!(traced_session("sata-ahci-ssd").is_empty());
}

#[test]
fn tshark_reads_the_uas_session() {
    let available = std::process::Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !available {
        if std::env::var_os("CI").is_some() {
            panic!("tshark is required in CI but was not found");
        }
        eprintln!("skipped: tshark not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!("storlab-sim-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let iu_ids = |stack: &str| {
        let path = dir.join(format!("{stack}.pcap"));
        std::fs::write(&path, traced_session(stack)).unwrap();
        let out = std::process::Command::new("tshark")
            .arg("-r")
            .arg(&path)
            .args(["-Y", "uasp", "-T", "fields", "-e", "uasp.iu_id"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{stack}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let super_speed = iu_ids("usb3-uas-ssd");
    let high_speed = iu_ids("usb2-uas-ssd");
    std::fs::remove_dir_all(&dir).unwrap();
    let has = |ids: &str, id: u8| {
        ids.lines()
            .any(|l| l.trim() == id.to_string() || l.contains(&format!("0x{id:02x}")))
    };
    assert!(has(&super_speed, 0x01), "no Command IU: {super_speed}");
    assert!(has(&super_speed, 0x03), "no Sense IU: {super_speed}");
    // High-Speed: the Read Ready (0x06) and Write Ready (0x07) IUs on the status pipe.
    assert!(has(&high_speed, 0x06), "no Read Ready IU: {high_speed}");
    assert!(has(&high_speed, 0x07), "no Write Ready IU: {high_speed}");
}

#[test]
#[ignore = "prints a decoded trace for a human to read"]
fn print_decoded_uas_trace() {
    println!(
        "{}",
        storlab_wire::decode_pcap(&traced_session("usb2-uas-ssd")).unwrap()
    );
}
