//! `storlab probe` in the guest against the kernel's and the device's own answers: its queue
//! fields against sysfs, its INQUIRY, VPD and READ CAPACITY(16) fields against the raw bytes
//! sg3-utils read (sg_inq, sg_vpd, sg_readcap --raw; field offsets from SPC-4 and SBC-3), and
//! the commands it put on the wire (from its usbmon capture) against the read-only set its
//! docs list; and that its diagnosis names a shipped simulated stack of the probed driver and
//! speed whose printed command runs.

use super::wire;
use crate::common;
use serde_json::Value;
use std::path::Path;

/// SCSI commands probe's capture may hold: INQUIRY, READ CAPACITY(16) (SERVICE ACTION IN(16)),
/// ATA PASS-THROUGH(16) carrying IDENTIFY DEVICE, and REQUEST SENSE, which usb-storage itself
/// sends after a command fails on BOT, which has no autosense (transport.c
/// usb_stor_invoke_transport). Anything else on the wire is a difference.
const READ_ONLY_OPCODES: [u8; 4] = [0x12, 0x9e, 0x85, 0x03];
/// ATA IDENTIFY DEVICE, the one ATA command probe passes through.
const ATA_IDENTIFY_DEVICE: u8 = 0xec;

/// Every difference between probe's JSON and sysfs / sg3-utils for one disk, one line each.
pub fn compare(dir: &Path, disk: &str) -> Vec<String> {
    let mut differences = Vec::new();
    let probe: Value = serde_json::from_slice(&std::fs::read(dir.join("probe.out")).unwrap())
        .unwrap_or_else(|e| {
            panic!(
                "{disk}: probe's JSON: {e}; stderr: {:?}",
                read(dir, "probe.err")
            )
        });
    let device = &probe["probes"][0]["device"];
    let mut fields = 0;
    let mut check = |field: &str, probe_value: Value, truth: Value, source: &str| {
        fields += 1;
        if probe_value != truth {
            differences.push(format!(
                "{disk}: probe {field} = {probe_value}, {source} says {truth}"
            ));
        }
    };
    for line in read(dir, "sysfs").lines() {
        let (key, value) = line.split_once(' ').unwrap();
        let truth: Value = match value.parse::<u64>() {
            Ok(n) if key == "rotational" => Value::Bool(n == 1),
            Ok(n) => n.into(),
            Err(_) => value.into(),
        };
        let (field, probe_value) = match key {
            "queue_depth" => (
                "queue.device_queue_depth",
                &device["queue"]["device_queue_depth"],
            ),
            "size" => ("size_bytes", &device["size_bytes"]),
            _ => (key, &device["queue"][key]),
        };
        let truth = if key == "size" {
            (truth.as_u64().unwrap() * 512).into()
        } else {
            truth
        };
        check(field, probe_value.clone(), truth, "sysfs");
    }
    let query = &device["device_query"];
    let inquiry = bytes(dir, "sg_inq.bin");
    let text = |range: std::ops::Range<usize>| {
        Value::from(String::from_utf8_lossy(&inquiry[range]).trim().to_owned())
    };
    let inq = &query["inquiry"]["value"];
    check(
        "inquiry.vendor",
        inq["vendor"].clone(),
        text(8..16),
        "sg_inq",
    );
    check(
        "inquiry.product",
        inq["product"].clone(),
        text(16..32),
        "sg_inq",
    );
    check(
        "inquiry.revision",
        inq["revision"].clone(),
        text(32..36),
        "sg_inq",
    );
    check(
        "inquiry.device_type",
        inq["device_type"].clone(),
        (inquiry[0] & 0x1f).into(),
        "sg_inq",
    );
    check(
        "inquiry.removable",
        inq["removable"].clone(),
        (inquiry[1] & 0x80 != 0).into(),
        "sg_inq",
    );
    check(
        "inquiry.version",
        inq["version"].clone(),
        inquiry[2].into(),
        "sg_inq",
    );
    check(
        "inquiry.command_queueing",
        inq["command_queueing"].clone(),
        (inquiry[7] & 0x02 != 0).into(),
        "sg_inq",
    );
    compare_vpd(dir, query, &mut check);
    compare_capacity(dir, query, &mut check);
    eprintln!("linux_oracle: {disk}: probe: {fields} fields compared");
    differences.extend(unlisted_commands(dir, disk));
    differences
}

/// The commands probe put on the wire that are not among its read-only ones, one line each.
fn unlisted_commands(dir: &Path, disk: &str) -> Vec<String> {
    let opcodes = probe_commands(dir);
    eprintln!("linux_oracle: {disk}: probe's commands (opcode, ATA command): {opcodes:02x?}");
    opcodes
        .into_iter()
        .filter(|&(opcode, ata)| {
            !READ_ONLY_OPCODES.contains(&opcode) || (opcode == 0x85 && ata != ATA_IDENTIFY_DEVICE)
        })
        .map(|(opcode, ata)| {
            format!(
                "{disk}: probe sent SCSI opcode {opcode:#04x} (ATA command {ata:#04x}), not one of its read-only commands"
            )
        })
        .collect()
}

/// Probe's "closest simulated stack" line for the guest disk `disk` (driver-speed, as init.sh
/// names it): it must name a stack of Linux's own driver for that protocol (`linux-uas` or
/// `linux-bot`) at that speed (`usb3` at 5000 Mb/s, `usb2` at 480), and the command it prints
/// must run on this machine. One line per difference.
pub fn closest_stack(dir: &Path, disk: &str, work: &Path) -> Vec<String> {
    let probe: Value = serde_json::from_slice(&std::fs::read(dir.join("probe.out")).unwrap())
        .expect("probe's JSON (compare read it already)");
    let lines: Vec<&str> = probe["probes"][0]["diagnosis"]
        .as_array()
        .map(|lines| lines.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(stack) = lines.iter().find_map(|line| {
        line.strip_prefix("closest simulated stack: sim:")
            .and_then(|rest| rest.split_whitespace().next())
    }) else {
        return vec![format!(
            "{disk}: probe's diagnosis names no closest simulated stack: {lines:?}"
        )];
    };
    let (driver, speed) = disk.rsplit_once('-').unwrap();
    let protocol = if driver == "uas" {
        "linux-uas"
    } else {
        "linux-bot"
    };
    let generation = if speed == "5000" { "usb3-" } else { "usb2-" };
    let mut differences = Vec::new();
    if !stack.starts_with(generation) || !stack.contains(protocol) {
        differences.push(format!(
            "{disk}: probe names sim:{stack}, not a {generation}{protocol} stack"
        ));
    }
    let target = format!("sim:{stack}");
    let args = [
        "run",
        "--no-db",
        "--target",
        &target,
        "--rw=read",
        "--bs=64k",
        "--size=1m",
    ];
    let out = common::run_in(work, &args);
    if !out.status.success() {
        differences.push(format!(
            "{disk}: probe's stack does not run: storlab {}: {}",
            args.join(" "),
            common::stderr(&out).trim()
        ));
    }
    differences
}

type Check<'a> = dyn FnMut(&str, Value, Value, &str) + 'a;

/// The VPD pages probe reports against sg_vpd's raw pages (SPC-4 §7.8, SBC-3 §6.6).
fn compare_vpd(dir: &Path, query: &Value, check: &mut Check<'_>) {
    let pages = query["vpd"].as_array().unwrap();
    let page = |number: u64| {
        pages
            .iter()
            .find(|p| p["page"] == number)
            .map(|p| p["answer"].clone())
            .unwrap_or(Value::Null)
    };
    let be = |b: &[u8]| b.iter().fold(0u64, |n, &x| (n << 8) | u64::from(x));
    for number in [0x00u64, 0x80, 0x83, 0xb0, 0xb1, 0xb2] {
        let raw = bytes(dir, &format!("sg_vpd_{number:#04x}.bin"));
        let answer = page(number);
        let answered = answer["status"] == "answered";
        check(
            &format!("VPD {number:#04x} answered"),
            answered.into(),
            (!raw.is_empty()).into(),
            "sg_vpd",
        );
        if raw.is_empty() || !answered {
            continue;
        }
        let value = &answer["value"];
        let mut field = |name: &str, truth: u64| {
            check(
                &format!("VPD {number:#04x} {name}"),
                value[name].clone(),
                truth.into(),
                "sg_vpd",
            );
        };
        match number {
            0x00 => {
                let listed: Vec<Value> = raw[4..].iter().map(|&p| p.into()).collect();
                check(
                    "VPD 0x00 pages",
                    value["pages"].clone(),
                    listed.into(),
                    "sg_vpd",
                );
            }
            0xb0 => {
                field("optimal_transfer_granularity_blocks", be(&raw[6..8]));
                field("maximum_transfer_blocks", be(&raw[8..12]));
                field("optimal_transfer_blocks", be(&raw[12..16]));
                field("maximum_unmap_lba_count", be(&raw[20..24]));
                field("maximum_unmap_descriptor_count", be(&raw[24..28]));
                field("optimal_unmap_granularity_blocks", be(&raw[28..32]));
            }
            0xb1 => {
                field("medium_rotation_rate", be(&raw[4..6]));
                field("nominal_form_factor", u64::from(raw[7] & 0x0f));
            }
            0xb2 => {
                field("provisioning_type", u64::from(raw[6] & 0x07));
                check(
                    "VPD 0xb2 unmap_supported",
                    value["unmap_supported"].clone(),
                    (raw[5] & 0x80 != 0).into(),
                    "sg_vpd",
                );
                check(
                    "VPD 0xb2 write_same16_unmap",
                    value["write_same16_unmap"].clone(),
                    (raw[5] & 0x40 != 0).into(),
                    "sg_vpd",
                );
            }
            _ => {}
        }
    }
}

/// READ CAPACITY(16)'s parameter data (SBC-3 §5.16.2) against probe's fields.
fn compare_capacity(dir: &Path, query: &Value, check: &mut Check<'_>) {
    let raw = bytes(dir, "sg_readcap16.bin");
    let value = &query["read_capacity16"]["value"];
    if raw.len() < 16 {
        check(
            "read_capacity16 answered",
            query["read_capacity16"]["status"].clone(),
            "not answered".into(),
            "sg_readcap",
        );
        return;
    }
    let be = |b: &[u8]| b.iter().fold(0u64, |n, &x| (n << 8) | u64::from(x));
    let last_lba = be(&raw[0..8]);
    let block = be(&raw[8..12]);
    let mut field = |name: &str, truth: Value| {
        check(
            &format!("read_capacity16.{name}"),
            value[name].clone(),
            truth,
            "sg_readcap",
        );
    };
    field("last_lba", last_lba.into());
    field("block_len_bytes", block.into());
    field("size_bytes", ((last_lba + 1) * block).into());
    field("physical_block_bytes", (block << (raw[13] & 0x0f)).into());
    field("provisioning_enabled", (raw[14] & 0x80 != 0).into());
    field("unmapped_read_zero", (raw[14] & 0x40 != 0).into());
}

/// The verdict under a job the guest ran on the disk (`psync-1m-read`): its path is USB at the
/// disk's speed, with BOT's one-command ceiling on usb-storage and none on uas, and its what-if
/// names Linux's own driver stack for that protocol and speed. One line per difference.
pub fn verdict(dir: &Path, disk: &str) -> Vec<String> {
    let text = read(dir, "psync-1m-read.out");
    let Ok(report) = serde_json::from_str::<Value>(&text) else {
        return vec![format!(
            "{disk}: psync-1m-read gave no JSON: {}",
            read(dir, "psync-1m-read.err")
        )];
    };
    let verdict = &report["jobs"][0]["path_verdict"];
    let kinds: Vec<&str> = verdict["ceilings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["kind"].as_str())
        .collect();
    let (bot, stack) = match disk {
        "uas-5000" => (false, "usb3-linux-uas-ssd"),
        "uas-480" => (false, "usb2-linux-uas-ssd"),
        "usb-storage-5000" => (true, "usb3-linux-bot-ssd"),
        _ => (true, "usb2-linux-bot-hdd"),
    };
    let usb_link = verdict["ceilings"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["kind"] == "usb-link" && c["name"].as_str().is_some_and(|n| n.contains("USB")));
    let mut differences = Vec::new();
    if !usb_link || kinds.contains(&"bot") != bot || verdict["what_if"]["stack"] != stack {
        differences.push(format!(
            "{disk}: the path verdict should name a USB link, {} BOT ceiling and sim:{stack}; it has ceilings {kinds:?}, what-if {}",
            if bot { "a" } else { "no" },
            verdict["what_if"]["stack"]
        ));
    }
    differences
}

/// The SCSI opcodes probe sent (with the ATA command of a pass-through, else 0).
fn probe_commands(dir: &Path) -> Vec<(u8, u8)> {
    let pcap = std::fs::read(dir.join("probe.pcap")).unwrap();
    wire::scsi_commands(&pcap)
        .into_iter()
        .map(|cdb| {
            let ata = if cdb.first() == Some(&0x85) && cdb.len() > 14 {
                cdb[14]
            } else {
                0
            };
            (cdb[0], ata)
        })
        .collect()
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_default()
}

fn bytes(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_default()
}
