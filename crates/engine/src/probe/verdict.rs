//! The verdict on a probed path: the ceilings the path puts on a transfer rate, each computed
//! from its physics (signalling rate, line coding, packet and protocol overhead) or, for a
//! drive a table names, its data sheet; the measured rate against each; the one that binds;
//! and the closest simulated stack, for a what-if run of the same job.
//!
//! Every ceiling is an upper bound: it counts the wire's coding and framing but not the
//! turnarounds, polling and controller work that real hardware adds (which the simulated stacks
//! model), so a measured rate sits below it, and a rate above it did not cross the path (the
//! page cache served it, or the probe described another device).

use super::{diagnosis, DeviceFacts};
use serde::Serialize;

/// USB 2.0 High-Speed and its bulk payload: at most 13 transactions of 512 bytes per 125 µs
/// microframe (USB 2.0 §5.8.4, Table 5-10; the table's count already pays for each
/// transaction's token, handshake, bit stuffing and bus turnaround).
const HIGH_SPEED_MBPS: f64 = 480.0;
const HIGH_SPEED_BULK: BulkSchedule = BulkSchedule {
    packet_bytes: 512,
    packets_per_frame: 13,
    frame_ns: 125_000,
};
/// USB Full-Speed bulk: at most 19 transactions of 64 bytes per 1 ms frame (USB 2.0 Table 5-9).
const FULL_SPEED_BULK: BulkSchedule = BulkSchedule {
    packet_bytes: 64,
    packets_per_frame: 19,
    frame_ns: 1_000_000,
};
/// SuperSpeed's first rate in Mb/s (USB 3.2 §3.2: Gen 1, 8b/10b).
const SUPER_SPEED_MBPS: f64 = 5_000.0;
/// Payload share of 8b/10b line coding (USB 3.x Gen 1; PCIe 1.x/2.x; SATA).
const CODING_8B10B: f64 = 8.0 / 10.0;
/// Payload share of 128b/132b line coding (USB 3.x Gen 2, USB 3.2 §3.2).
const CODING_128B132B: f64 = 128.0 / 132.0;
/// Payload share of 128b/130b line coding (PCIe 3.0 and later, PCIe Base 3.0 §4.2.2).
const CODING_128B130B: f64 = 128.0 / 130.0;
/// A SuperSpeed data packet's payload and the bytes around it: header packet (HPSTART 4,
/// header 12, CRC-16 2, link control word 2) and payload framing (DPPSTART 4, CRC-32 4, DPPEND
/// 4) (USB 3.0 §7.2, as `profiles/links/usb3-ss.toml`; counted alike at 10 Gb/s). SKP ordered
/// sets (under 1 %) are not counted: the ceiling stays an upper bound.
const SUPER_SPEED_PACKET_BYTES: u64 = 1024;
const SUPER_SPEED_PACKET_OVERHEAD_BYTES: u64 = 32;
/// BOT's Command Block Wrapper and Command Status Wrapper (USB MSC BOT 1.0 §5.1, §5.2): each a
/// transaction of its own before and after every command's data.
const CBW_BYTES: u64 = 31;
const CSW_BYTES: u64 = 13;
/// A Memory Write TLP header with a 64-bit address is 4 DW (PCIe Base 2.0 §2.2.7, Fig. 2-14).
const MEMORY_WRITE_HEADER_BYTES: u64 = 16;
/// TLP payload bytes: 128 is PCIe's default Max_Payload_Size (PCIe Base 2.0 §7.8.4), which
/// sysfs does not show the value of; a larger one lifts the ceiling a few percent.
const PCIE_PAYLOAD_BYTES: u64 = 128;
/// A SATA Data FIS carries at most 8 KiB after its header dword; 12 bytes of SOF, CRC and EOF
/// frame every FIS (SATA 3.0 §10.5.11, §9.4; as `profiles/links/sata-6g.toml`).
const SATA_DATA_FIS_BYTES: u64 = 8_192;
const SATA_FIS_OVERHEAD_BYTES: u64 = 4 + 12;
const BITS_PER_BYTE: f64 = 8.0;
const BYTES_PER_MB: f64 = 1e6;
/// A measured rate this far above a ceiling cannot be a rounding or timing error.
const ABOVE_CEILING_SHARE: f64 = 1.05;
/// Below this share of its nearest ceiling the path is not what limits the job.
const PATH_LIMITS_SHARE: f64 = 0.5;

/// A bulk pipe's schedule: so many packets of a size per (micro)frame.
struct BulkSchedule {
    packet_bytes: u64,
    packets_per_frame: u64,
    frame_ns: u64,
}

impl BulkSchedule {
    fn payload_mbs(&self) -> f64 {
        (self.packet_bytes * self.packets_per_frame) as f64 * 1e3 / self.frame_ns as f64
    }

    /// One BOT command of `command_bytes` at a time: its data packets plus the CBW's and the
    /// CSW's transaction, each taking a slot of the frame's schedule.
    fn bot_mbs(&self, command_bytes: u64) -> f64 {
        let slots = command_bytes.div_ceil(self.packet_bytes) + 2;
        command_bytes as f64 * self.packets_per_frame as f64 * 1e3
            / (slots as f64 * self.frame_ns as f64)
    }
}

/// How the two directions use a ceiling's resource.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Sharing {
    /// Reads and writes take turns (USB 2.0, a SATA link, BOT's one command, a drive's media):
    /// the shares of the two directions add up.
    HalfDuplex,
    /// Each direction has its own lanes (SuperSpeed, PCIe): the busier direction counts.
    FullDuplex,
}

/// One ceiling the path puts on the transfer rate.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Ceiling {
    /// `usb-link`, `bot`, `pcie`, `sata-link` or `drive-rated`.
    pub kind: &'static str,
    /// What it is, for people (`USB 2.0 High-Speed link`).
    pub name: String,
    /// MB/s (10^6 bytes) of reads and of writes it allows.
    pub read_mbs: f64,
    pub write_mbs: f64,
    pub sharing: Sharing,
    /// The arithmetic behind it, with its source.
    pub basis: String,
}

/// A drive whose rated sequential rates a data sheet gives, by its model string (ATA IDENTIFY,
/// or SCSI INQUIRY vendor and product) as the drive reports it.
struct RatedDrive {
    model: &'static str,
    read_mbs: f64,
    write_mbs: f64,
    source: &'static str,
}

/// The drives of `profiles/drives/` whose data sheets rate sequential transfers.
const RATED_DRIVES: &[RatedDrive] = &[
    RatedDrive {
        model: "Samsung SSD 860 EVO 250GB",
        read_mbs: 550.0,
        write_mbs: 520.0,
        source: "Samsung SSD 860 EVO data sheet (MZ-76E250, 2018)",
    },
    RatedDrive {
        model: "INTEL SSDSA2SH032G1",
        read_mbs: 250.0,
        write_mbs: 170.0,
        source: "Intel X25-E SATA SSD product manual (32 GB, 2009)",
    },
    RatedDrive {
        model: "INTEL SSDSA2M160G2",
        read_mbs: 250.0,
        write_mbs: 100.0,
        source: "Intel X25-M G2 SATA SSD product manual (160 GB, 34 nm, 2009)",
    },
    RatedDrive {
        model: "C300-CTFDDAC128MAG",
        read_mbs: 355.0,
        write_mbs: 140.0,
        source: "Crucial RealSSD C300 product flyer (128 GB on SATA 6 Gb/s, 2010)",
    },
];

fn normalised(model: &str) -> String {
    model
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_lowercase()
}

/// The rated drive `model` names: the whole table entry must be in it (a model truncated to
/// INQUIRY's 16 characters names no drive: `Samsung SSD 860 ` could be any 860).
fn rated_drive(model: &str) -> Option<&'static RatedDrive> {
    let model = normalised(model);
    RATED_DRIVES
        .iter()
        .find(|drive| model.starts_with(&normalised(drive.model)))
}

/// The drive's model: what it answered to IDENTIFY (a `probe` that asked it), else what the
/// kernel keeps (`DeviceFacts::model`).
fn drive_model(device: &DeviceFacts) -> Option<&str> {
    let asked = device.device_query.as_ref().and_then(|query| {
        let identify = query.ata_identify.as_ref()?;
        match identify {
            super::query::Answer::Answered { value } => Some(value.model.as_str()),
            _ => None,
        }
    });
    asked.or(device.model.as_deref())
}

fn symmetric(
    kind: &'static str,
    name: String,
    mbs: f64,
    sharing: Sharing,
    basis: String,
) -> Ceiling {
    Ceiling {
        kind,
        name,
        read_mbs: mbs,
        write_mbs: mbs,
        sharing,
        basis,
    }
}

/// The USB link's and BOT's ceilings for commands of `command_bytes`.
fn usb_ceilings(device: &DeviceFacts, command_bytes: u64, out: &mut Vec<Ceiling>) {
    let Some(usb) = &device.usb else { return };
    let Some(speed_mbps) = usb.speed_mbps else {
        return;
    };
    let bot = usb.protocol.as_deref() == Some("BOT");
    let command = format!("{} KiB commands", command_bytes.div_ceil(1024));
    if speed_mbps < SUPER_SPEED_MBPS {
        let (name, schedule) = if speed_mbps < HIGH_SPEED_MBPS {
            ("USB Full-Speed (12 Mb/s)", FULL_SPEED_BULK)
        } else {
            ("USB 2.0 High-Speed (480 Mb/s)", HIGH_SPEED_BULK)
        };
        let frame = format!(
            "{} × {} B bulk packets per {} µs frame (USB 2.0 Tables 5-9, 5-10)",
            schedule.packets_per_frame,
            schedule.packet_bytes,
            schedule.frame_ns / 1_000
        );
        out.push(symmetric(
            "usb-link",
            format!("the {name} link"),
            schedule.payload_mbs(),
            Sharing::HalfDuplex,
            format!("{frame}; half duplex"),
        ));
        if bot {
            out.push(symmetric(
                "bot",
                format!("BOT's one command at a time over {name}"),
                schedule.bot_mbs(command_bytes),
                Sharing::HalfDuplex,
                format!(
                    "{command}: each adds a CBW and a CSW transaction to its data packets; {frame}"
                ),
            ));
        }
        return;
    }
    let coding = if speed_mbps <= SUPER_SPEED_MBPS {
        ("8b/10b", CODING_8B10B)
    } else {
        ("128b/132b", CODING_128B132B)
    };
    let line_mbs = speed_mbps * 1e6 * coding.1 / BITS_PER_BYTE / BYTES_PER_MB;
    let packet = SUPER_SPEED_PACKET_BYTES as f64
        / (SUPER_SPEED_PACKET_BYTES + SUPER_SPEED_PACKET_OVERHEAD_BYTES) as f64;
    let name = format!("USB 3.x at {} Gb/s", speed_mbps / 1_000.0);
    let wire = format!(
        "{} Gb/s × {} coding / 8 = {line_mbs:.0} MB/s, × 1024/1056 for each data packet's header and framing (USB 3.0 §7.2)",
        speed_mbps / 1_000.0,
        coding.0
    );
    out.push(symmetric(
        "usb-link",
        format!("the {name} link"),
        line_mbs * packet,
        Sharing::FullDuplex,
        format!("{wire}; each direction its own"),
    ));
    if bot {
        // CBW out, the data, CSW back: one after the other, each a packet with its framing.
        let packets = command_bytes.div_ceil(SUPER_SPEED_PACKET_BYTES).max(1);
        let wire_bytes = CBW_BYTES
            + CSW_BYTES
            + command_bytes
            + (packets + 2) * SUPER_SPEED_PACKET_OVERHEAD_BYTES;
        out.push(symmetric(
            "bot",
            format!("BOT's one command at a time over {name}"),
            line_mbs * command_bytes as f64 / wire_bytes as f64,
            Sharing::HalfDuplex,
            format!(
                "{command}: CBW (31 B), data and CSW (13 B) in turn, each packet framed; {wire}"
            ),
        ));
    }
}

/// The host controller's PCIe link (its `current_link_speed` and `current_link_width`).
fn pcie_ceiling(device: &DeviceFacts) -> Option<Ceiling> {
    let link = device.host_controller.as_ref()?.link.as_ref()?;
    let (gts, lanes) = (link.current_speed_gts?, link.current_width?);
    let coding = if gts <= 5.0 {
        ("8b/10b", CODING_8B10B)
    } else {
        ("128b/130b", CODING_128B130B)
    };
    let line_mbs = gts * 1e9 * f64::from(lanes) * coding.1 / BITS_PER_BYTE / BYTES_PER_MB;
    let payload = PCIE_PAYLOAD_BYTES as f64;
    // Data to the host (a read) goes as posted Memory Writes; data from it (a write) comes
    // back as Completions with Data to the controller's Memory Reads.
    let write_tlp = storlab_sim::pcie::TLP_FRAMING_BYTES + MEMORY_WRITE_HEADER_BYTES;
    let completion = storlab_sim::pcie::COMPLETION_OVERHEAD_BYTES;
    Some(Ceiling {
        kind: "pcie",
        name: format!(
            "the controller's PCIe link ({gts} GT/s x{lanes}, {})",
            device
                .host_controller
                .as_ref()
                .map_or("", |pci| pci.address.as_str())
        ),
        read_mbs: line_mbs * payload / (payload + write_tlp as f64),
        write_mbs: line_mbs * payload / (payload + completion as f64),
        sharing: Sharing::FullDuplex,
        basis: format!(
            "{gts} GT/s × {lanes} lanes × {} coding / 8 = {line_mbs:.0} MB/s; {PCIE_PAYLOAD_BYTES}-byte TLPs with {write_tlp} B of header and framing to the host (reads), {completion} B from it (writes) (PCIe Base §2.2, §4.2)",
            coding.0
        ),
    })
}

/// The SATA link libata negotiated.
fn sata_ceiling(device: &DeviceFacts) -> Option<Ceiling> {
    let gbps = device.sata_link_gbps?;
    let line_mbs = gbps * 1e9 * CODING_8B10B / BITS_PER_BYTE / BYTES_PER_MB;
    let fis = SATA_DATA_FIS_BYTES as f64 / (SATA_DATA_FIS_BYTES + SATA_FIS_OVERHEAD_BYTES) as f64;
    Some(symmetric(
        "sata-link",
        format!("the SATA link at {gbps} Gb/s"),
        line_mbs * fis,
        Sharing::HalfDuplex,
        format!(
            "{gbps} Gb/s × 8b/10b / 8 = {line_mbs:.0} MB/s, × 8192/8208 for each Data FIS's header dword and SOF/CRC/EOF (SATA 3.0); half duplex"
        ),
    ))
}

/// The drive's rated sequential rates, when its model is in the table.
fn drive_ceiling(device: &DeviceFacts) -> Option<Ceiling> {
    let model = drive_model(device)?;
    let drive = rated_drive(model)?;
    Some(Ceiling {
        kind: "drive-rated",
        name: format!("the drive's rated speed ({})", drive.model),
        read_mbs: drive.read_mbs,
        write_mbs: drive.write_mbs,
        sharing: Sharing::HalfDuplex,
        basis: format!(
            "sequential read {} MB/s, write {} MB/s: {}",
            drive.read_mbs, drive.write_mbs, drive.source
        ),
    })
}

/// Every ceiling of `device`'s own path, for commands of `command_bytes` (BOT's per-command
/// cost depends on it). A device-mapper or md device over one member takes its member's.
pub fn ceilings(device: &DeviceFacts, command_bytes: u64) -> Vec<Ceiling> {
    let mut out = Vec::new();
    usb_ceilings(device, command_bytes, &mut out);
    out.extend(pcie_ceiling(device));
    out.extend(sata_ceiling(device));
    out.extend(drive_ceiling(device));
    if out.is_empty() {
        if let [member] = device.members.as_slice() {
            return ceilings(member, command_bytes);
        }
    }
    out
}

/// The bytes each command carries: the job's block size, split at the queue's transfer limit.
pub fn command_bytes(device: &DeviceFacts, block_bytes: u64) -> u64 {
    let limit = device
        .queue
        .max_sectors_kb
        .map_or(u64::MAX, |kb| kb.saturating_mul(1024));
    block_bytes.clamp(1, limit.max(1))
}

/// The closest shipped simulated stack to `device`'s path and why it is the closest.
pub fn closest_stack(device: &DeviceFacts) -> Option<(&'static str, String)> {
    let evo = drive_model(device)
        .and_then(rated_drive)
        .is_some_and(|d| d.model.starts_with("Samsung SSD 860 EVO"));
    if let Some(usb) = &device.usb {
        let protocol = usb.protocol.as_deref();
        let stack = diagnosis::closest_stack(protocol, usb.speed_mbps)?;
        if evo && stack == "usb3-linux-uas-ssd" {
            return Some((
                "usb3-linux-uas-860evo",
                "this drive in a UAS enclosure at 5 Gb/s, Linux's uas driver".into(),
            ));
        }
        let speed = usb
            .speed_mbps
            .map_or(String::new(), |s| format!(" at {s} Mb/s"));
        return Some((
            stack,
            format!(
                "Linux's own driver for {}{speed}",
                protocol.unwrap_or("USB")
            ),
        ));
    }
    if device.transport != "ahci" {
        return None;
    }
    Some(
        match (device.queue.rotational, evo, device.sata_link_gbps) {
            (Some(true), _, _) => ("sata-ahci-hdd", "a 7200 rpm disk on an AHCI port".into()),
            (_, true, _) => ("sata-ahci-860evo", "this drive on an AHCI port".into()),
            (_, _, Some(gbps)) if gbps >= 6.0 => (
                "sata-ahci-860evo",
                "the shipped SSD on a SATA 6 Gb/s AHCI port".into(),
            ),
            _ => ("sata-ahci-ssd", "an SSD on a SATA 3 Gb/s AHCI port".into()),
        },
    )
}

/// What a run measured, as the verdict weighs it.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    /// MB/s (10^6 bytes per second) read and written.
    pub read_mbs: f64,
    pub write_mbs: f64,
    /// The job's largest block size and its queue depth.
    pub block_bytes: u64,
    pub iodepth: u32,
}

/// One ceiling weighed against the measured rate.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Weighed {
    #[serde(flatten)]
    pub ceiling: Ceiling,
    /// The rate it allows for the job's mix of reads and writes.
    pub limit_mbs: f64,
    /// The measured rate it is compared with: both directions for a half-duplex ceiling, the
    /// busier one for a full-duplex one.
    pub measured_mbs: f64,
    /// measured / limit (1.0: the ceiling is reached).
    pub share: f64,
}

fn weigh(ceiling: Ceiling, measured: &Measured) -> Weighed {
    let read = measured.read_mbs / ceiling.read_mbs;
    let write = measured.write_mbs / ceiling.write_mbs;
    let (share, measured_mbs) = match ceiling.sharing {
        Sharing::HalfDuplex => (read + write, measured.read_mbs + measured.write_mbs),
        Sharing::FullDuplex if read >= write => (read, measured.read_mbs),
        Sharing::FullDuplex => (write, measured.write_mbs),
    };
    let limit_mbs = match share > 0.0 {
        true => measured_mbs / share,
        false => ceiling.read_mbs.min(ceiling.write_mbs),
    };
    Weighed {
        ceiling,
        limit_mbs,
        measured_mbs,
        share,
    }
}

/// The what-if run: the closest simulated stack and the command that runs the same job on it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WhatIf {
    pub stack: String,
    /// Why this stack is the closest.
    pub why: String,
    /// `storlab run <the same job> --target sim:<stack>`, ready to paste; `null` when the
    /// run's own arguments were not known.
    pub command: Option<String>,
}

/// The verdict on one job's run over a probed path (the `path_verdict` of its report).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PathVerdict {
    /// The device whose path was weighed (`/dev/sdb`).
    pub device: String,
    pub measured_read_mbs: f64,
    pub measured_write_mbs: f64,
    /// Every ceiling, the binding one first, then by share.
    pub ceilings: Vec<Weighed>,
    /// The kind of the ceiling the measured rate is nearest (the highest share).
    pub binding: String,
    /// The verdict in words, one line each.
    pub lines: Vec<String>,
    pub what_if: Option<WhatIf>,
}

/// The verdict on `measured` over `device`'s path, `None` when the path shows no ceiling
/// (a virtual disk, a loop device over a file). `run_args` are the run's arguments without its
/// target, for the what-if command.
pub fn verdict(
    device: &DeviceFacts,
    measured: &Measured,
    run_args: Option<&[String]>,
) -> Option<PathVerdict> {
    let command = command_bytes(device, measured.block_bytes);
    let mut weighed: Vec<Weighed> = ceilings(device, command)
        .into_iter()
        .map(|c| weigh(c, measured))
        .collect();
    weighed.sort_by(|a, b| b.share.total_cmp(&a.share));
    let binding = weighed.first()?;
    let mut lines = vec![binding_line(binding)];
    let others: Vec<String> = weighed[1..]
        .iter()
        .map(|w| {
            format!(
                "{} {:.0} MB/s ({:.0}%)",
                w.ceiling.name,
                w.limit_mbs,
                w.share * 100.0
            )
        })
        .collect();
    if !others.is_empty() {
        lines.push(format!("the other ceilings: {}", others.join("; ")));
    }
    if weighed.iter().any(|w| w.ceiling.kind == "bot") && measured.iodepth > 1 {
        lines.push(format!(
            "BOT runs one command at a time: this job's queue depth {} gains nothing on this path",
            measured.iodepth
        ));
    }
    let what_if = closest_stack(device).map(|(stack, why)| WhatIf {
        stack: stack.to_string(),
        why,
        command: run_args.map(|args| what_if_command(args, stack)),
    });
    if let Some(what_if) = &what_if {
        lines.push(format!(
            "what-if on the closest simulated stack, sim:{} ({}): {}",
            what_if.stack,
            what_if.why,
            what_if
                .command
                .clone()
                .unwrap_or_else(|| format!("storlab run … --target sim:{}", what_if.stack))
        ));
    }
    Some(PathVerdict {
        device: device.node.clone(),
        measured_read_mbs: measured.read_mbs,
        measured_write_mbs: measured.write_mbs,
        binding: binding.ceiling.kind.to_string(),
        ceilings: weighed,
        lines,
        what_if,
    })
}

fn binding_line(binding: &Weighed) -> String {
    let head = format!(
        "{:.1} MB/s measured is {:.0}% of the {:.1} MB/s ceiling of {}",
        binding.measured_mbs,
        binding.share * 100.0,
        binding.limit_mbs,
        binding.ceiling.name
    );
    if binding.share > ABOVE_CEILING_SHARE {
        format!("{head}: above it, so this rate did not all cross the path (the page cache served part of it?)")
    } else if binding.share < PATH_LIMITS_SHARE {
        format!("{head}, the nearest: the path does not limit this job (the drive, the queue depth or the block size do)")
    } else {
        format!("{head}, the ceiling that binds")
    }
}

/// One argument as a POSIX shell reads it back unchanged: bare when it has only safe
/// characters, else single-quoted (an embedded `'` closed, escaped and reopened).
fn shell_word(arg: &str) -> String {
    let safe = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=:,./+%@".contains(c));
    match safe {
        true => arg.to_string(),
        false => format!("'{}'", arg.replace('\'', r"'\''")),
    }
}

/// `storlab <args> --target sim:<stack>`, each argument quoted for a shell.
pub fn what_if_command(args: &[String], stack: &str) -> String {
    let mut words = vec!["storlab".to_string()];
    words.extend(args.iter().map(|a| shell_word(a)));
    words.push("--target".into());
    words.push(format!("sim:{stack}"));
    words.join(" ")
}

#[cfg(test)]
mod tests;
