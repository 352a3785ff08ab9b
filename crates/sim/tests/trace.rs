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
    let path = dir.join("uas.pcap");
    std::fs::write(&path, traced_session("usb3-uas-ssd")).unwrap();
    let out = std::process::Command::new("tshark")
        .arg("-r")
        .arg(&path)
        .args(["-Y", "uasp", "-T", "fields", "-e", "uasp.iu_id"])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ids = String::from_utf8(out.stdout).unwrap();
    assert!(
        ids.lines().any(|l| l.trim() == "1" || l.contains("0x01")),
        "no Command IU: {ids}"
    );
    assert!(
        ids.lines().any(|l| l.trim() == "3" || l.contains("0x03")),
        "no Sense IU: {ids}"
    );
}

#[test]
#[ignore = "prints a decoded trace for a human to read"]
fn print_decoded_uas_trace() {
    println!(
        "{}",
        storlab_wire::decode_pcap(&traced_session("usb2-uas-ssd")).unwrap()
    );
}
