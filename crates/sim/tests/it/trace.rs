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
    if !crate::common::tshark_available() {
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

/// A session with faults: `reads` 4 KiB reads at the given byte offsets, one at a time.
fn faulted_session(stack: &str, spec: &str, reads: &[u64]) -> Vec<u8> {
    let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), stack, 5).unwrap();
    sim.setup_slots(1, 65536).unwrap();
    sim.enable_pcap();
    sim.set_faults(storlab_sim::FaultPlan::parse(spec).unwrap())
        .unwrap();
    for &offset_bytes in reads {
        sim.submit(SimRequest {
            slot: 0,
            op: Op::Read,
            offset_bytes,
            len_bytes: 4096,
        })
        .unwrap();
        sim.run();
        assert!(sim.pop_completion().is_some(), "{stack}: no completion");
    }
    sim.take_pcap()
}

/// BOT: a media error (cmd 2: LBA 80), a phase error (cmd 3) and a lost command (cmd 5).
const BOT_FAULTS: &str =
    "media_error@lba=80,phase_error@cmd=3,drop@cmd=5,timeout=1s,reset_delay=10ms";
/// UAS: a media error (cmd 2) and a lost command (cmd 3).
const UAS_FAULTS: &str = "media_error@lba=80,drop@cmd=3,timeout=1s";
const FAULTED_READS: [u64; 4] = [0, 40960, 0, 0];

/// Every URB submitted is completed exactly once before it is submitted again, and none is
/// left pending at the end: a lost command's transfers end at its abort, not never.
pub fn assert_urbs_pair(stack: &str, pcap: &[u8]) {
    use storlab_wire::pcap::{EventType, PcapReader};
    let mut pending = std::collections::BTreeMap::new();
    for record in PcapReader::new(pcap).unwrap().records() {
        let u = record.unwrap().usbmon;
        let at_ns = u.ts_sec as u64 * 1_000_000_000 + u.ts_usec as u64 * 1000;
        match u.event {
            EventType::Submission => {
                assert!(
                    pending.insert(u.urb_id, at_ns).is_none(),
                    "{stack}: URB {:#x} submitted twice",
                    u.urb_id
                );
            }
            _ => {
                let submitted = pending.remove(&u.urb_id);
                let submitted = submitted.unwrap_or_else(|| {
                    panic!("{stack}: URB {:#x} completed unsubmitted", u.urb_id)
                });
                assert!(
                    submitted <= at_ns,
                    "{stack}: URB {:#x} ends before it began",
                    u.urb_id
                );
            }
        }
    }
    assert!(
        pending.is_empty(),
        "{stack}: URBs never completed: {pending:x?}"
    );
}

#[test]
fn recovery_urbs_are_in_the_bot_capture() {
    let pcap = faulted_session("usb3-bot-ssd", BOT_FAULTS, &FAULTED_READS);
    assert_urbs_pair("usb3-bot-ssd", &pcap);
    let text = storlab_wire::decode_pcap(&pcap).unwrap();
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("no {needle} in\n{text}"))
    };
    // The media error: the data phase stalls (-EPIPE), bulk-in's halt is cleared, the CSW
    // says Failed, and REQUEST SENSE asks why.
    let stall = at("0x81 in urb_len=0 status=-32");
    let clear_in = at("CLEAR_FEATURE ENDPOINT_HALT endpoint=0x81");
    let failed = at("status=Failed");
    let sense = at("REQUEST SENSE");
    assert!(
        text[sense..].contains("sense key=MediumError asc=0x11"),
        "{text}"
    );
    assert!(
        stall < clear_in && clear_in < failed && failed < sense,
        "{text}"
    );
    // The phase error: the CSW says so; Reset Recovery follows.
    let phase = at("status=PhaseError");
    let reset = at("Bulk-Only Mass Storage Reset");
    assert!(sense < phase && phase < reset, "{text}");
    assert!(
        text[reset..].contains("endpoint=0x02"),
        "no clear of bulk-out:\n{text}"
    );
    // The lost command: its data transfer is unlinked at the timeout, then a second reset.
    let unlinked = at("status=-104");
    assert!(reset < unlinked, "{text}");
    assert_eq!(
        text.matches("Bulk-Only Mass Storage Reset").count(),
        2,
        "{text}"
    );
}

#[test]
fn recovery_urbs_are_in_the_uas_capture() {
    for stack in ["usb3-uas-ssd", "usb2-uas-ssd"] {
        let pcap = faulted_session(stack, UAS_FAULTS, &FAULTED_READS[..3]);
        assert_urbs_pair(stack, &pcap);
        let text = storlab_wire::decode_pcap(&pcap).unwrap();
        let at = |needle: &str| {
            text.find(needle)
                .unwrap_or_else(|| panic!("{stack}: no {needle} in\n{text}"))
        };
        let check = at("status=CheckCondition");
        let tm = at("Task Management IU");
        let response = at("UAS Response IU");
        assert!(check < tm && tm < response, "{stack}:\n{text}");
        assert!(text[tm..].contains("AbortTask"), "{stack}:\n{text}");
        // The aborted command's status transfer (and its stream's data transfer) are killed.
        assert!(text[response..].contains("status=-2"), "{stack}:\n{text}");
        if stack == "usb3-uas-ssd" {
            // With streams the failed read's data transfer was queued: the Sense IU's error
            // makes the driver unlink it.
            assert!(text[check..tm].contains("status=-104"), "{stack}:\n{text}");
        } else {
            assert!(!text.contains("status=-104"), "{stack}:\n{text}");
        }
    }
}

#[test]
#[ignore = "prints decoded traces with recovery for a human to read"]
fn print_decoded_recovery_traces() {
    let bot = faulted_session("usb3-bot-ssd", BOT_FAULTS, &FAULTED_READS);
    println!("{}", storlab_wire::decode_pcap(&bot).unwrap());
    let uas = faulted_session("usb3-uas-ssd", UAS_FAULTS, &FAULTED_READS[..3]);
    println!("{}", storlab_wire::decode_pcap(&uas).unwrap());
}

/// tshark's values of `field` in the frames of `pcap` matching `filter`, or None (skipped)
/// without tshark outside CI.
fn tshark(name: &str, pcap: &[u8], filter: &str, field: &str) -> Option<Vec<String>> {
    if !crate::common::tshark_available() {
        return None;
    }
    let path = std::env::temp_dir().join(format!(
        "storlab-sim-recovery-{}-{name}.pcap",
        std::process::id()
    ));
    std::fs::write(&path, pcap).unwrap();
    let out = std::process::Command::new("tshark")
        .arg("-r")
        .arg(&path)
        .args([
            "-Y",
            filter,
            "-T",
            "fields",
            "-E",
            "occurrence=f",
            "-e",
            field,
        ])
        .output()
        .unwrap();
    if std::env::var_os("STORLAB_KEEP_PCAP").is_none() {
        std::fs::remove_file(&path).unwrap();
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect(),
    )
}

/// tshark reads the media error's recovery: BOT's stalled data phase (URB status -EPIPE), the
/// REQUEST SENSE and the MEDIUM ERROR sense data it returns; UAS's Sense IU with CHECK
/// CONDITION and the same sense key.
#[test]
fn tshark_reads_the_stall_and_the_sense_data() {
    let bot = faulted_session("usb3-bot-ssd", BOT_FAULTS, &FAULTED_READS);
    let Some(stalls) = tshark("bot", &bot, "usb.urb_status == -32", "usb.endpoint_address") else {
        return;
    };
    assert_eq!(stalls.len(), 1, "{stalls:?}");
    let asked = tshark("bot", &bot, "scsi_sbc.opcode == 0x03", "usbms.dCBWTag").unwrap();
    assert!(!asked.is_empty(), "no REQUEST SENSE");
    // MEDIUM ERROR (03h), UNRECOVERED READ ERROR (11h).
    let key = tshark("bot", &bot, "scsi.sns.key", "scsi.sns.key").unwrap();
    assert_eq!(key, ["0x03"], "{key:?}");
    let asc = tshark("bot", &bot, "scsi.sns.asc", "scsi.sns.asc").unwrap();
    assert_eq!(asc, ["0x11"], "{asc:?}");

    let uas = faulted_session("usb3-uas-ssd", UAS_FAULTS, &FAULTED_READS[..3]);
    let check = tshark("uas", &uas, "uasp.sense.status == 2", "uasp.tag").unwrap();
    assert_eq!(check.len(), 1, "{check:?}");
    let key = tshark("uas", &uas, "scsi.sns.key", "scsi.sns.key").unwrap();
    assert_eq!(key, ["0x03"], "{key:?}");
}

/// A hung UAS bridge that answers no task management: the capture shows ABORT TASK, LOGICAL
/// UNIT RESET and I_T NEXUS RESET, each with its response's status transfer killed when the host
/// stops waiting, then the USB device reset and a re-enumeration that leaves the interface at
/// its Bulk-Only alternate setting (SET_CONFIGURATION, no SET_INTERFACE), usb-storage's Get Max
/// LUN, and the command again as a BOT CBW; tshark reads the three task management functions.
#[test]
fn a_uas_bridge_that_answers_nothing_falls_back_to_bot_in_the_capture() {
    let spec = "hang@cmd=2,timeout=1s,reset_delay=10ms";
    let pcap = faulted_session("usb3-uas-ssd", spec, &FAULTED_READS[..3]);
    assert_urbs_pair("usb3-uas-ssd", &pcap);
    let text = storlab_wire::decode_pcap(&pcap).unwrap();
    // After the first task management function (the enumeration at time 0 has its own
    // SET_CONFIGURATION).
    let from = text.find("function=AbortTask").expect("ABORT TASK");
    let text = &text[from..];
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("no {needle} in\n{text}"))
    };
    let steps = [
        at("function=AbortTask"),
        at("function=LogicalUnitReset"),
        at("function=ItNexusReset"),
        at("GET_DESCRIPTOR Device index=0 len=8"),
        at("SET_CONFIGURATION 1"),
        at("Get Max LUN"),
        at("BOT CBW"),
    ];
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(!text.contains("UAS Response IU"), "{text}");
    assert!(
        !text[steps[4]..].contains("UAS "),
        "UAS after the fallback:\n{text}"
    );
    assert!(
        !text[steps[2]..].contains("SET_INTERFACE"),
        "the re-enumeration leaves the interface at its Bulk-Only alternate:\n{text}"
    );
    let Some(functions) = tshark("hang", &pcap, "uasp.iu_id == 5", "uasp.task_mgmt.function")
    else {
        return;
    };
    assert_eq!(functions, ["0x01", "0x08", "0x10"], "{functions:?}");
}

/// A power loss caught by a write, by a flush or by a read (answered NOT READY while the drive
/// spins up, then UNIT ATTENTION once): on BOT (stalled data phases and REQUEST SENSE) and on
/// UAS with and without streams (Sense IUs, unlinked data URBs), every URB still completes
/// exactly once.
#[test]
fn power_loss_urbs_pair_on_bot_and_uas() {
    let stacks = ["usb3-bot-ssd", "usb3-uas-ssd", "usb2-uas-ssd"];
    // The second write, the first flush, the read.
    for (stack, caught) in stacks.into_iter().flat_map(|s| [(s, 2), (s, 3), (s, 4)]) {
        let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), stack, 5).unwrap();
        sim.setup_slots(1, 65536).unwrap();
        sim.enable_pcap();
        let spec = format!("power_loss@cmd={caught}");
        sim.set_faults(storlab_sim::FaultPlan::parse(&spec).unwrap())
            .unwrap();
        let ops = [
            Op::Write,
            Op::Write,
            Op::Flush,
            Op::Read,
            Op::Write,
            Op::Flush,
        ];
        for (k, op) in ops.into_iter().enumerate() {
            let (offset_bytes, len_bytes) = if op == Op::Flush {
                (0, 0)
            } else {
                (k as u64 * 4096, 4096)
            };
            sim.submit(SimRequest {
                slot: 0,
                op,
                offset_bytes,
                len_bytes,
            })
            .unwrap();
            sim.run();
            let c = sim.pop_completion().expect("completes");
            assert_eq!(c.result, Ok(len_bytes), "{stack}: {op:?}");
        }
        let counts = sim.fault_counts().unwrap();
        assert_eq!(
            (counts.power_losses, counts.unit_attentions),
            (1, 1),
            "{stack}"
        );
        assert_urbs_pair(stack, &sim.take_pcap());
    }
}

/// The USB device reset of a hung UAS bridge that recovers with it: after the three task
/// management functions, the hub driver's SetPortFeature(PORT_RESET) to the root hub, then the
/// re-enumeration of hub.c (GET_DESCRIPTOR device 8 and 18 bytes, the configuration at its
/// length, SET_CONFIGURATION, SET_INTERFACE to UAS again; no SET_ADDRESS URB: xHCI addresses
/// the device with a command of its own), then the command again as UAS; tshark decodes the
/// requests.
#[test]
fn the_device_reset_s_re_enumeration_is_in_the_capture_and_tshark_decodes_it() {
    let spec = "hang@cmd=2,timeout=1s,hang_recovery=device_reset";
    let pcap = faulted_session("usb3-uas-ssd", spec, &FAULTED_READS[..3]);
    assert_urbs_pair("usb3-uas-ssd", &pcap);
    let text = storlab_wire::decode_pcap(&pcap).unwrap();
    let from = text.find("function=ItNexusReset").expect("I_T NEXUS RESET");
    let after = &text[from..];
    let at = |needle: &str| {
        after
            .find(needle)
            .unwrap_or_else(|| panic!("no {needle} after the I_T NEXUS RESET in\n{text}"))
    };
    let steps = [
        at("Ctrl 1:1:0x00 out"),
        at("GET_DESCRIPTOR Device index=0 len=8"),
        at("GET_DESCRIPTOR Device index=0 len=18"),
        at("GET_DESCRIPTOR Configuration"),
        at("SET_CONFIGURATION 1"),
        at("SET_INTERFACE interface=0 alt=1"),
        at("UAS Command IU"),
    ];
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(!text.contains("SET_ADDRESS"), "{text}");
    let Some(requests) = tshark(
        "device-reset",
        &pcap,
        "usb.setup.bRequest && frame.number > 20",
        "usb.setup.bRequest",
    ) else {
        return;
    };
    // GET_DESCRIPTOR (6) three times, SET_CONFIGURATION (9), SET_INTERFACE (11).
    assert_eq!(requests, ["6", "6", "6", "9", "11"], "{requests:?}");
    // Wireshark's hub dissector reads the root hub's SetPortFeature(PORT_RESET).
    let feature = tshark(
        "device-reset",
        &pcap,
        "usbhub.setup.bRequest == 3",
        "usbhub.setup.PortFeatureSelector",
    )
    .unwrap();
    assert_eq!(feature, ["4"], "PORT_RESET: {feature:?}");
    let lengths = tshark(
        "device-reset",
        &pcap,
        "usb.setup.bRequest == 6 && frame.number > 20",
        "usb.setup.wLength",
    )
    .unwrap();
    assert_eq!(lengths, ["8", "18", "121"], "{lengths:?}");
    let vendor = tshark("device-reset", &pcap, "usb.idVendor", "usb.idVendor").unwrap();
    assert_eq!(
        vendor,
        ["0x1d6b", "0x1d6b"],
        "enumeration and re-enumeration: {vendor:?}"
    );
}

/// A disconnect in the capture: a short SuperSpeed dropout is a warm reset of the kept device
/// (SetPortFeature(BH_PORT_RESET), wValue 28, then the re-enumeration), a long one ends the
/// lost command's URBs with -ESHUTDOWN and puts nothing more on the bus; every URB pairs.
#[test]
fn a_disconnect_is_a_warm_reset_or_the_end_of_the_urbs_in_the_capture() {
    for stack in ["usb3-uas-ssd", "usb3-bot-ssd"] {
        let kept = faulted_session(
            stack,
            "disconnect@cmd=2,disconnect_for=5ms,timeout=1s,reset_delay=10ms",
            &FAULTED_READS[..3],
        );
        assert_urbs_pair(stack, &kept);
        let text = storlab_wire::decode_pcap(&kept).unwrap();
        let reset = text
            .find("value=0x001c index=0x0001")
            .unwrap_or_else(|| panic!("{stack}: no BH_PORT_RESET in\n{text}"));
        assert!(
            text[reset..].contains("GET_DESCRIPTOR Device index=0 len=8"),
            "{stack}: {text}"
        );

        let removed = faulted_session(stack, "disconnect@cmd=2", &FAULTED_READS[..3]);
        assert_urbs_pair(stack, &removed);
        let text = storlab_wire::decode_pcap(&removed).unwrap();
        let shut_down = text
            .find("status=-108")
            .unwrap_or_else(|| panic!("{stack}: no -ESHUTDOWN in\n{text}"));
        assert!(
            !text[shut_down..].contains(" S "),
            "{stack}: a URB submitted after the removal:\n{text}"
        );
    }
}
