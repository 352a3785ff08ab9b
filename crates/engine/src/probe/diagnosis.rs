//! What a probed path implies for a measurement: one plain line per limit the path imposes
//! (link ceiling, protocol queueing, transfer size, PCIe link, TRIM reach, cache, layers).

use super::{DeviceFacts, ProbeReport};

/// USB 2.0 High-Speed in Mb/s (USB 2.0 §7.1.11).
const USB2_HIGH_SPEED_MBPS: f64 = 480.0;
/// USB 3.x Gen 1 in Mb/s (USB 3.2 §3.2).
const USB3_GEN1_MBPS: f64 = 5_000.0;
/// Sequential MB/s a disk reaches on USB 2.0 in practice: 33–35 (validation/calibration.toml
/// `usb2_practical_seq_mbs`; the simulator's usb2 stacks give 35.0, docs/simulator.md).
const USB2_PRACTICAL_CEILING_MBS: u32 = 35;
/// USB 2.0 bulk payload ceiling: 13 × 512-byte packets per 125 µs microframe (USB 2.0 §5.8,
/// Table 5-10).
const USB2_WIRE_CEILING_MBS: u32 = 53;
/// USB 1.1 Full-Speed bulk payload ceiling: 19 × 64-byte packets per 1 ms frame (USB 2.0
/// Table 5-9) = 1.2 MB/s.
const USB_FULL_SPEED_CEILING_KBS: u32 = 1_216;
/// Payload share of 8b/10b line coding (USB 3.x Gen 1, PCIe Gen 1 and 2).
const CODING_8B10B: f64 = 8.0 / 10.0;
/// Payload share of 128b/132b line coding (USB 3.x Gen 2, USB 3.2 §3.2).
const CODING_128B132B: f64 = 128.0 / 132.0;
/// Payload share of 128b/130b line coding (PCIe Gen 3 and later, PCIe 3.0 §4.2.2).
const CODING_128B130B: f64 = 128.0 / 130.0;
/// PCIe transfer rates per generation in GT/s (PCIe base specifications 1.0–5.0).
const PCIE_GENERATIONS_GTS: &[(u32, f64)] = &[(1, 2.5), (2, 5.0), (3, 8.0), (4, 16.0), (5, 32.0)];
/// The usb-storage default transfer limit: 240 sectors = 120 KiB (drivers/usb/storage/scsiglue.c
/// `.max_sectors = 240`); a queue at or below it splits large I/O.
const USB_STORAGE_DEFAULT_MAX_KB: u64 = 120;
const BITS_PER_BYTE: f64 = 8.0;

fn pcie_generation(gts: f64) -> Option<u32> {
    PCIE_GENERATIONS_GTS
        .iter()
        .find(|(_, rate)| (rate - gts).abs() < 0.01)
        .map(|(generation, _)| *generation)
}

/// Payload MB/s of a PCIe link: rate × lanes × coding / 8.
fn pcie_payload_mbs(gts: f64, width: u32) -> f64 {
    let coding = if gts <= 5.0 {
        CODING_8B10B
    } else {
        CODING_128B130B
    };
    gts * 1_000.0 * f64::from(width) * coding / BITS_PER_BYTE
}

fn link_name(gts: f64, width: u32) -> String {
    match pcie_generation(gts) {
        Some(generation) => format!("PCIe Gen{generation} x{width}"),
        None => format!("PCIe {gts} GT/s x{width}"),
    }
}

/// The shipped simulated stacks with Linux's host drivers (profiles/stacks/usb*-linux-*.toml),
/// by protocol and SuperSpeed or not: probe runs on Linux, so the probed path runs these
/// drivers, whose models the Linux oracle checks against Linux 6.1
/// (crates/cli/tests/it/linux_oracle.rs).
const LINUX_STACKS: [(&str, bool, &str); 4] = [
    ("UAS", true, "usb3-linux-uas-ssd"),
    ("UAS", false, "usb2-linux-uas-ssd"),
    ("BOT", true, "usb3-linux-bot-ssd"),
    ("BOT", false, "usb2-linux-bot-hdd"),
];

/// The simulated stack nearest a USB path: Linux's driver for its protocol at its speed.
pub(crate) fn closest_stack(
    protocol: Option<&str>,
    speed_mbps: Option<f64>,
) -> Option<&'static str> {
    let super_speed = speed_mbps? >= USB3_GEN1_MBPS;
    LINUX_STACKS
        .iter()
        .find(|(p, ss, _)| Some(*p) == protocol && *ss == super_speed)
        .map(|(_, _, stack)| *stack)
}

fn usb_lines(device: &DeviceFacts, lines: &mut Vec<String>) {
    let Some(usb) = &device.usb else { return };
    if let Some(speed) = usb.speed_mbps {
        if speed < USB2_HIGH_SPEED_MBPS {
            lines.push(format!(
                "USB 1.1 link ({speed} Mb/s): at most {:.1} MB/s of bulk payload",
                f64::from(USB_FULL_SPEED_CEILING_KBS) / 1_000.0
            ));
        } else if speed < USB3_GEN1_MBPS {
            lines.push(format!(
                "USB 2.0 High-Speed link: about {USB2_PRACTICAL_CEILING_MBS} MB/s is the ceiling \
                 ({USB2_WIRE_CEILING_MBS} MB/s on the wire); a SuperSpeed port and cable would lift it"
            ));
        } else {
            let coding = if speed <= USB3_GEN1_MBPS {
                CODING_8B10B
            } else {
                CODING_128B132B
            };
            lines.push(format!(
                "USB 3.x link at {} Gb/s: at most {:.0} MB/s per direction after line coding",
                speed / 1_000.0,
                speed * coding / BITS_PER_BYTE
            ));
        }
    }
    match usb.protocol.as_deref() {
        Some("BOT") => lines.push(
            "BOT (usb-storage): one command at a time, queue depth above 1 gains nothing".into(),
        ),
        Some("UAS") => lines.push(format!(
            "UAS: commands queue on the device ({} tags)",
            device
                .queue
                .device_queue_depth
                .map_or("unknown".to_string(), |d| d.to_string())
        )),
        _ => {}
    }
    if let Some(bridge) = &usb.bridge {
        lines.push(format!(
            "bridge: {} {} (USB to {})",
            bridge.maker, bridge.chip, bridge.downstream
        ));
    }
    if let Some(stack) = closest_stack(usb.protocol.as_deref(), usb.speed_mbps) {
        lines.push(format!(
            "closest simulated stack: sim:{stack} (Linux's own driver over this protocol at this \
             speed; `storlab run --target sim:{stack}` for what-if runs)"
        ));
    }
}

fn queue_lines(device: &DeviceFacts, lines: &mut Vec<String>) {
    let q = &device.queue;
    if let Some(max_kb) = q.max_sectors_kb {
        let hw = q
            .max_hw_sectors_kb
            .map_or(String::new(), |hw| format!(" (hardware limit {hw} KiB)"));
        let split = if max_kb <= USB_STORAGE_DEFAULT_MAX_KB {
            ": larger I/O is split"
        } else {
            ""
        };
        lines.push(format!("largest transfer {max_kb} KiB{hw}{split}"));
    }
    if let Some(depth) = q.device_queue_depth {
        if depth <= 1 && device.usb.is_none() {
            lines.push("device queue depth 1: queue depth above 1 gains nothing".into());
        }
    }
    match (q.discard_max_bytes, q.rotational) {
        (Some(0), Some(false)) => lines.push(match device.transport.as_str() {
            "usb-uas" | "usb-bot" => "TRIM does not reach the drive through this bridge".into(),
            "dm" => "TRIM stops at device-mapper (dm-crypt opened without allow_discards?)".into(),
            _ => "TRIM does not reach the medium: the device takes no discard".into(),
        }),
        (Some(0), _) => lines.push("no discard (TRIM) on this path".into()),
        _ => {}
    }
    match q.write_cache.as_deref() {
        Some("write back") => lines.push(
            "volatile write cache on (write back): writes may finish before the medium has them"
                .into(),
        ),
        Some("write through") => {
            lines.push("write cache off (write through): every write waits for the medium".into())
        }
        _ => {}
    }
}

fn controller_lines(device: &DeviceFacts, lines: &mut Vec<String>) {
    let Some(pci) = &device.host_controller else {
        return;
    };
    let Some(link) = &pci.link else {
        return;
    };
    let (Some(speed), Some(width)) = (link.current_speed_gts, link.current_width) else {
        return;
    };
    let mut line = format!(
        "controller behind a {} link: about {:.0} MB/s",
        link_name(speed, width),
        pcie_payload_mbs(speed, width)
    );
    if let (Some(max_speed), Some(max_width)) = (link.max_speed_gts, link.max_width) {
        if max_speed > speed + 0.01 || max_width > width {
            line.push_str(&format!(
                ", below the {} it can run",
                link_name(max_speed, max_width)
            ));
        }
    }
    lines.push(line);
}

fn layer_lines(device: &DeviceFacts, lines: &mut Vec<String>) {
    match device.transport.as_str() {
        "loop" => lines.push(format!(
            "loop device: I/O goes to {} through the filesystem beneath (its cache and layout count)",
            device.loop_backing_file.as_deref().unwrap_or("its backing file")
        )),
        "dm" => {
            let target = device.dm.as_ref().and_then(|d| d.target.as_deref());
            if target == Some("crypt") {
                lines.push("dm-crypt: every byte is encrypted or decrypted on the CPU".into());
            } else {
                lines.push("device-mapper: I/O is remapped to the members below".into());
            }
        }
        "md" => lines.push(format!(
            "md {}: I/O is spread over the members below",
            device.md_level.as_deref().unwrap_or("array")
        )),
        "virtio" => lines.push(
            "virtio: a virtual disk; the host's storage and cache decide its speed".into(),
        ),
        _ => {}
    }
}

fn device_lines(device: &DeviceFacts, lines: &mut Vec<String>, prefix: &str) {
    let mut own = Vec::new();
    layer_lines(device, &mut own);
    usb_lines(device, &mut own);
    controller_lines(device, &mut own);
    queue_lines(device, &mut own);
    lines.extend(own.into_iter().map(|l| format!("{prefix}{l}")));
    for member in &device.members {
        let name = member.partition.as_deref().unwrap_or(&member.name);
        device_lines(member, lines, &format!("{prefix}{name}: "));
    }
}

/// The diagnosis lines of one probe.
pub fn diagnose(report: &ProbeReport) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(device) = &report.device {
        device_lines(device, &mut lines, "");
    } else if let Some(file) = &report.file {
        lines.push(format!(
            "{} has no block device beneath it: I/O measures the filesystem ({}) alone",
            file.mount_point, file.fs_type
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_closest_stack_is_a_shipped_one() {
        let shipped: Vec<&str> = storlab_sim::profiles::embedded::EMBEDDED_PROFILES
            .iter()
            .filter(|(category, _, _)| *category == "stacks")
            .map(|(_, name, _)| *name)
            .collect();
        for (_, _, stack) in LINUX_STACKS {
            assert!(shipped.contains(&stack), "{stack} is not a shipped stack");
        }
        assert_eq!(
            closest_stack(Some("UAS"), Some(5000.0)),
            Some("usb3-linux-uas-ssd")
        );
        assert_eq!(
            closest_stack(Some("BOT"), Some(480.0)),
            Some("usb2-linux-bot-hdd")
        );
        assert_eq!(closest_stack(None, Some(480.0)), None);
    }

    #[test]
    fn pcie_payload_follows_the_line_coding_of_each_generation() {
        assert_eq!(pcie_payload_mbs(2.5, 1).round(), 250.0);
        assert_eq!(pcie_payload_mbs(5.0, 1).round(), 500.0);
        assert_eq!(pcie_payload_mbs(8.0, 4).round(), 3938.0);
        assert_eq!(link_name(8.0, 4), "PCIe Gen3 x4");
        assert_eq!(link_name(3.0, 1), "PCIe 3 GT/s x1");
    }
}
