//! Cross-checks our usbmon captures against tshark as an independent decoder: BOT and UAS
//! sessions are written with this crate, and tshark's field values must equal what we emitted.

use std::process::Command as Process;

use storlab_wire::bot::{CbwRepr, CswRepr, CswStatus, Direction};
use storlab_wire::pcap::PcapWriter;
use storlab_wire::scsi::inquiry::scsi_text;
use storlab_wire::scsi::{Capacity10, CdbSize, Command, DeviceType, InquiryRepr, Lun, Status};
use storlab_wire::uas::{CommandIu, IuRepr, SenseIu};
use storlab_wire::usb::{
    emit_mass_storage_configuration, DescriptorType, DeviceDescriptor, MassStorageConfig,
    SetupPacket,
};
use storlab_wire::InlineBytes;

const BLOCK_BYTES: u32 = 512;

fn tshark_available() -> bool {
    match Process::new("tshark").arg("--version").output() {
        Ok(o) if o.status.success() => true,
        _ => {
            if std::env::var_os("CI").is_some() {
                panic!("tshark is required in CI but was not found");
            }
            eprintln!("skipped: tshark not installed");
            false
        }
    }
}

/// Runs tshark on `pcap` and returns one Vec of field values per frame that has any.
fn tshark_fields(pcap: &[u8], filter: &str, fields: &[&str]) -> Vec<Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.pcap");
    std::fs::write(&path, pcap).unwrap();
    let mut cmd = Process::new("tshark");
    cmd.arg("-r")
        .arg(&path)
        .args(["-Y", filter, "-T", "fields", "-E", "occurrence=f"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}

/// Keeps a capture for manual inspection when `STORLAB_KEEP_PCAP` names a directory.
fn keep(name: &str, pcap: &[u8]) {
    if let Some(dir) = std::env::var_os("STORLAB_KEEP_PCAP") {
        std::fs::write(
            std::path::Path::new(&dir).join(format!("{name}.pcap")),
            pcap,
        )
        .unwrap();
    }
}

fn enumerate(w: &mut PcapWriter, config: &MassStorageConfig) {
    let device = DeviceDescriptor {
        usb_version_bcd: if config.super_speed { 0x0300 } else { 0x0200 },
        class: 0,
        subclass: 0,
        protocol: 0,
        max_packet_size0: if config.super_speed { 9 } else { 64 },
        vendor_id: 0x174c,
        product_id: 0x55aa,
        device_version_bcd: 0x0100,
        manufacturer_index: 0,
        product_index: 0,
        serial_index: 0,
        num_configurations: 1,
    };
    let mut buf = [0u8; 256];
    let n = device.emit(&mut buf).unwrap();
    w.control(
        SetupPacket::get_descriptor(DescriptorType::Device, 0, 18),
        &buf[..n],
    );
    let n = emit_mass_storage_configuration(config, &mut buf).unwrap();
    w.control(
        SetupPacket::get_descriptor(DescriptorType::Configuration, 0, 9),
        &buf[..9],
    );
    w.control(
        SetupPacket::get_descriptor(DescriptorType::Configuration, 0, n as u16),
        &buf[..n],
    );
    w.control(SetupPacket::set_configuration(1), &[]);
}

/// Real data-in for the commands Wireshark learns the device type and block size from, and a
/// pattern for everything else.
fn payload(cmd: &Command, len: u32) -> Vec<u8> {
    let mut data = vec![0x5au8; len as usize];
    match cmd {
        Command::Inquiry { evpd: false, .. } => {
            InquiryRepr {
                peripheral_qualifier: 0,
                device_type: DeviceType::DirectAccess,
                removable: false,
                version: 6,
                hierarchical_support: false,
                protect: false,
                command_queueing: true,
                vendor: scsi_text("storlab"),
                product: scsi_text("sim disk"),
                revision: scsi_text("1"),
            }
            .emit(&mut data)
            .unwrap();
        }
        Command::ReadCapacity10 => {
            Capacity10::for_blocks(1 << 30, BLOCK_BYTES)
                .emit(&mut data)
                .unwrap();
        }
        _ => {}
    }
    data
}

fn cdb_bytes(c: &Command) -> Vec<u8> {
    let mut b = [0u8; 16];
    let n = c.emit(&mut b).unwrap();
    b[..n].to_vec()
}

#[test]
fn bot_session_matches_tshark() {
    if !tshark_available() {
        return;
    }
    let config = MassStorageConfig::new(false, false);
    let mut w = PcapWriter::new(1, 4, 125);
    enumerate(&mut w, &config);
    w.control(SetupPacket::get_max_lun(0), &[0]);
    // (command, data bytes, status)
    let commands = [
        (
            Command::Inquiry {
                evpd: false,
                page_code: 0,
                allocation_length: 36,
            },
            36u32,
            CswStatus::Passed,
        ),
        (Command::ReadCapacity10, 8, CswStatus::Passed),
        (Command::read(2048, 8), 8 * BLOCK_BYTES, CswStatus::Passed),
        (
            Command::write(0x0123_4567, 16),
            16 * BLOCK_BYTES,
            CswStatus::Passed,
        ),
        (Command::read(1 << 33, 1), BLOCK_BYTES, CswStatus::Failed),
        (Command::TestUnitReady, 0, CswStatus::Passed),
    ];
    let mut expected = Vec::new();
    for (i, (cmd, len, status)) in commands.iter().enumerate() {
        let tag = 0x1000 + i as u32;
        let dir = if matches!(cmd, Command::Write { .. }) {
            Direction::Out
        } else {
            Direction::In
        };
        let cbw = CbwRepr::new(tag, *len, dir, 0, &cdb_bytes(cmd)).unwrap();
        let mut buf = [0u8; 31];
        cbw.emit_into(&mut buf).unwrap();
        w.bulk_out(config.bulk_out, &buf);
        if *len > 0 {
            let data = payload(cmd, *len);
            match dir {
                Direction::In => w.bulk_in(config.bulk_in, *len, &data),
                Direction::Out => w.bulk_out(config.bulk_out, &data),
            }
        }
        let csw = CswRepr {
            tag,
            data_residue: 0,
            status: *status,
        };
        let mut buf = [0u8; 13];
        csw.emit_into(&mut buf).unwrap();
        w.bulk_in(config.bulk_in, 13, &buf);
        expected.push((tag, cmd, u8::from(*status)));
    }
    let pcap = w.into_bytes();
    keep("bot", &pcap);
    // Our own decoder must accept it too.
    let text = storlab_wire::decode_pcap(&pcap).unwrap();
    assert!(text.contains("SCSI READ(10) lba=2048 blocks=8"), "{text}");

    let cbws = tshark_fields(
        &pcap,
        "usbms.dCBWSignature",
        &[
            "usbms.dCBWTag",
            "usbms.dCBWDataTransferLength",
            "scsi.spc.opcode",
            "scsi_sbc.opcode",
        ],
    );
    assert_eq!(cbws.len(), commands.len(), "{cbws:?}");
    for (row, (tag, cmd, _)) in cbws.iter().zip(&expected) {
        assert_eq!(row[0], format!("0x{tag:08x}"), "tag {row:?}");
        let opcode = u8::from(cmd.opcode());
        let shown = if row[2].is_empty() { &row[3] } else { &row[2] };
        assert_eq!(shown, &format!("0x{opcode:02x}"), "opcode {row:?}");
    }
    let csws = tshark_fields(
        &pcap,
        "usbms.dCSWSignature",
        &["usbms.dCBWTag", "usbms.dCSWStatus"],
    );
    let statuses: Vec<String> = csws.iter().map(|r| r[1].clone()).collect();
    let want: Vec<String> = expected.iter().map(|e| format!("0x{:02x}", e.2)).collect();
    assert_eq!(statuses, want);
    assert_read_write_fields(&pcap, commands.iter().map(|c| &c.0));
}

/// tshark's LBA and transfer length of every READ/WRITE equal the ones we emitted, in order.
fn assert_read_write_fields<'a>(pcap: &[u8], commands: impl Iterator<Item = &'a Command>) {
    let rows = tshark_fields(
        pcap,
        "scsi_sbc.rdwr10.lba || scsi_sbc.rdwr16.lba",
        &[
            "scsi_sbc.rdwr10.lba",
            "scsi_sbc.rdwr10.xferlen",
            "scsi_sbc.rdwr16.lba",
            "scsi_sbc.rdwr12.xferlen",
        ],
    );
    let want: Vec<Vec<String>> = commands
        .filter_map(|c| match *c {
            Command::Read {
                lba, blocks, size, ..
            }
            | Command::Write {
                lba, blocks, size, ..
            } => Some(match size {
                CdbSize::Ten => vec![
                    lba.to_string(),
                    blocks.to_string(),
                    String::new(),
                    String::new(),
                ],
                // Wireshark 4.0 shows the 16-byte LBA as raw big-endian bytes.
                CdbSize::Sixteen => vec![
                    String::new(),
                    String::new(),
                    format!("{lba:016x}"),
                    blocks.to_string(),
                ],
            }),
            _ => None,
        })
        .collect();
    assert_eq!(rows, want);
}

/// One UAS command for the session builder: the CDB, its data length and the final status.
struct UasCase {
    tag: u16,
    command: Command,
    len: u32,
    status: Status,
}

fn uas_session(super_speed: bool, cases: &[UasCase]) -> Vec<u8> {
    let config = MassStorageConfig::new(true, super_speed);
    let mut w = PcapWriter::new(2, 7, 125);
    enumerate(&mut w, &config);
    w.control(SetupPacket::set_interface(0, 1), &[]);
    let mut iu_buf = [0u8; 64];
    for case in cases {
        let cmd_iu = IuRepr::Command(
            CommandIu::new(case.tag, Lun::from_index(0), &cdb_bytes(&case.command)).unwrap(),
        );
        let n = cmd_iu.emit_into(&mut iu_buf).unwrap();
        // The host keeps a status URB outstanding before it sends the command.
        let status_urb = w.submit_bulk_in(config.status_in, 48);
        w.bulk_out(config.command_out, &iu_buf[..n]);
        let is_write = matches!(case.command, Command::Write { .. });
        if case.len > 0 {
            let data = payload(&case.command, case.len);
            if !super_speed {
                // High-Speed has no streams: the device says which tag's data comes next.
                let ready = if is_write {
                    IuRepr::WriteReady { tag: case.tag }
                } else {
                    IuRepr::ReadReady { tag: case.tag }
                };
                let n = ready.emit_into(&mut iu_buf).unwrap();
                w.complete_bulk_in(status_urb, config.status_in, &iu_buf[..n]);
                let status_urb2 = w.submit_bulk_in(config.status_in, 48);
                transfer(&mut w, &config, is_write, case.len, &data);
                finish(&mut w, &config, status_urb2, case, &mut iu_buf);
                continue;
            }
            transfer(&mut w, &config, is_write, case.len, &data);
        }
        finish(&mut w, &config, status_urb, case, &mut iu_buf);
    }
    w.into_bytes()
}

fn transfer(w: &mut PcapWriter, config: &MassStorageConfig, is_write: bool, len: u32, data: &[u8]) {
    if is_write {
        w.bulk_out(config.bulk_out, data);
    } else {
        w.bulk_in(config.bulk_in, len, data);
    }
}

fn finish(
    w: &mut PcapWriter,
    config: &MassStorageConfig,
    status_urb: u64,
    case: &UasCase,
    iu_buf: &mut [u8],
) {
    let sense: &[u8] = if case.status == Status::CheckCondition {
        &[
            0x70, 0, 0x05, 0, 0, 0, 0, 0x0a, 0, 0, 0, 0, 0x21, 0x00, 0, 0, 0, 0,
        ]
    } else {
        &[]
    };
    let iu = IuRepr::Sense(SenseIu {
        tag: case.tag,
        status_qualifier: 0,
        status: case.status,
        sense: InlineBytes::new(sense).unwrap(),
    });
    let n = iu.emit_into(iu_buf).unwrap();
    w.complete_bulk_in(status_urb, config.status_in, &iu_buf[..n]);
}

fn uas_cases() -> Vec<UasCase> {
    vec![
        UasCase {
            tag: 1,
            command: Command::Inquiry {
                evpd: false,
                page_code: 0,
                allocation_length: 36,
            },
            len: 36,
            status: Status::Good,
        },
        UasCase {
            tag: 2,
            command: Command::ReadCapacity10,
            len: 8,
            status: Status::Good,
        },
        UasCase {
            tag: 3,
            command: Command::read(4096, 8),
            len: 8 * BLOCK_BYTES,
            status: Status::Good,
        },
        UasCase {
            tag: 4,
            command: Command::write(77, 2),
            len: 2 * BLOCK_BYTES,
            status: Status::Good,
        },
        UasCase {
            tag: 5,
            command: Command::read(1 << 32, 4),
            len: 4 * BLOCK_BYTES,
            status: Status::CheckCondition,
        },
        UasCase {
            tag: 6,
            command: Command::TestUnitReady,
            len: 0,
            status: Status::Good,
        },
    ]
}

fn check_uas_session(name: &str, super_speed: bool) {
    let cases = uas_cases();
    let pcap = uas_session(super_speed, &cases);
    keep(name, &pcap);
    let text = storlab_wire::decode_pcap(&pcap).unwrap();
    assert!(text.contains("UAS Command IU tag=3"), "{text}");

    let ius = tshark_fields(
        &pcap,
        "uasp.iu_id",
        &["uasp.iu_id", "uasp.tag", "uasp.sense.status"],
    );
    let mut want = Vec::new();
    for c in &cases {
        want.push(vec![
            "0x01".to_owned(),
            format!("0x{:04x}", c.tag),
            String::new(),
        ]);
        if c.len > 0 && !super_speed {
            let id = if matches!(c.command, Command::Write { .. }) {
                7
            } else {
                6
            };
            want.push(vec![
                format!("0x{id:02x}"),
                format!("0x{:04x}", c.tag),
                String::new(),
            ]);
        }
        want.push(vec![
            "0x03".to_owned(),
            format!("0x{:04x}", c.tag),
            u8::from(c.status).to_string(),
        ]);
    }
    assert_eq!(ius, want);
    let opcodes = tshark_fields(
        &pcap,
        "uasp.iu_id == 1",
        &["scsi.spc.opcode", "scsi_sbc.opcode"],
    );
    let shown: Vec<String> = opcodes
        .iter()
        .map(|r| {
            if r[0].is_empty() {
                r[1].clone()
            } else {
                r[0].clone()
            }
        })
        .collect();
    let want: Vec<String> = cases
        .iter()
        .map(|c| format!("0x{:02x}", u8::from(c.command.opcode())))
        .collect();
    assert_eq!(shown, want);
    assert_read_write_fields(&pcap, cases.iter().map(|c| &c.command));
}

#[test]
fn uas_high_speed_session_with_ready_ius_matches_tshark() {
    if !tshark_available() {
        return;
    }
    check_uas_session("uas-hs", false);
}

#[test]
fn uas_super_speed_session_with_streams_matches_tshark() {
    if !tshark_available() {
        return;
    }
    check_uas_session("uas-ss", true);
}
