//! What a usbmon capture of one storage job says about the host driver, reduced to quantities
//! a real capture and a simulated one can be compared by: each READ/WRITE command's opcode and
//! length, the most commands in flight, the tags and whether each was the lowest free one, the
//! order of URB submissions around a command, the status URB's length and every pipe's
//! transfer flags. UAS and BOT are told apart by what the pipes carry.

use std::collections::{BTreeMap, BTreeSet};
use storlab_wire::pcap::{EventType, PcapReader, TransferType, RECORD_HEADER_LEN};

/// Offset of `flag_data` in the usbmon header.
const FLAG_DATA_OFFSET: usize = 15;

/// UAS IU ids (UAS-2 table 10).
const IU_COMMAND: u8 = 0x01;
const IU_SENSE: u8 = 0x03;
const IU_READ_READY: u8 = 0x06;
const IU_WRITE_READY: u8 = 0x07;
/// The IUs the status pipe returns: Sense, Response (0x04), Read Ready, Write Ready.
const STATUS_PIPE_IUS: [u8; 4] = [IU_SENSE, 0x04, IU_READ_READY, IU_WRITE_READY];
/// A CBW's signature "USBC" and length (BOT 1.0 §5.1).
const CBW_SIGNATURE: [u8; 4] = *b"USBC";
const CBW_LEN: u32 = 31;

/// The driver's behaviour in one capture, as comparable quantities.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct DriverView {
    /// (SCSI opcode, transfer length in bytes) of every READ/WRITE command, sorted.
    pub commands: Vec<(u8, u32)>,
    /// The most READ/WRITE commands in flight at once.
    pub max_in_flight: usize,
    /// The highest UAS tag used (0 for BOT).
    pub max_tag: u16,
    /// UAS commands whose tag was not the lowest free one.
    pub tags_not_lowest_free: usize,
    /// The URB submissions (pipe roles, in order) that went out with each Command IU or CBW,
    /// and those after each Ready IU: every distinct pattern.
    pub submission_patterns: BTreeSet<String>,
    /// The lengths the status pipe's URBs ask for (UAS Sense IU or BOT CSW).
    pub status_urb_lengths: BTreeSet<u32>,
    /// Each pipe role's transfer flags on submission.
    pub transfer_flags: BTreeMap<String, BTreeSet<u32>>,
    /// The lengths data URBs ask for.
    pub data_urb_lengths: BTreeSet<u32>,
    /// usbmon's `flag_data` of every bulk record: (role, 'S' or 'C', flag as a character,
    /// '0' for data present).
    pub data_flags: BTreeSet<(String, char, char)>,
}

/// One bulk record, reduced.
struct Bulk {
    submit: bool,
    /// usbmon's `flag_data`: 0 with data, '<' or '>' without.
    flag_data: u8,
    endpoint: u8,
    urb_len: u32,
    xfer_flags: u32,
    data: Vec<u8>,
}

/// Reads the bulk records of `pcap` (every device: a job's capture holds one disk's I/O).
fn bulk_records(pcap: &[u8]) -> Vec<Bulk> {
    let reader = PcapReader::new(pcap).expect("a usbmon pcap");
    reader
        .records()
        .map(|record| record.expect("a whole record"))
        .filter(|record| record.usbmon.transfer == TransferType::Bulk)
        .map(|record| Bulk {
            submit: record.usbmon.event == EventType::Submission,
            flag_data: pcap[record.offset + RECORD_HEADER_LEN + FLAG_DATA_OFFSET],
            endpoint: record.usbmon.endpoint,
            urb_len: record.usbmon.urb_len,
            xfer_flags: record.usbmon.xfer_flags,
            data: record.data.to_vec(),
        })
        .collect()
}

/// A record's role, event and `flag_data` as printable characters.
fn data_flag(role: &str, r: &Bulk) -> (String, char, char) {
    let event = if r.submit { 'S' } else { 'C' };
    let flag = if r.flag_data == 0 {
        '0'
    } else {
        char::from(r.flag_data)
    };
    (role.to_owned(), event, flag)
}

/// SYNCHRONIZE CACHE (10): counted with the data commands (opcode, 0 bytes), so a job's
/// flushes (fsync on the block device: blkdev_fsync -> blkdev_issue_flush, sent by sd when it
/// found a volatile write cache) are compared too. Every job is O_DIRECT: a buffered job's
/// `invalidate` (fdatasync before dropping the page cache) would send one the simulated engine,
/// which has no page cache, does not.
const SYNCHRONIZE_CACHE_10: u8 = 0x35;
/// UNMAP (SBC-3 §5.28): its parameter list length is in CDB bytes 7..9.
const UNMAP: u8 = 0x42;

/// READ/WRITE (10) and (16): opcode and bytes moved; UNMAP: opcode and its parameter list's
/// bytes; SYNCHRONIZE CACHE (10): opcode and 0; None for other commands.
fn data_command(cdb: &[u8], block_bytes: u32) -> Option<(u8, u32)> {
    let be = |bytes: &[u8]| bytes.iter().fold(0u32, |n, &b| (n << 8) | u32::from(b));
    match *cdb.first()? {
        op @ (0x28 | 0x2a) if cdb.len() >= 10 => Some((op, be(&cdb[7..9]) * block_bytes)),
        op @ (0x88 | 0x8a) if cdb.len() >= 16 => Some((op, be(&cdb[10..14]) * block_bytes)),
        SYNCHRONIZE_CACHE_10 => Some((SYNCHRONIZE_CACHE_10, 0)),
        UNMAP if cdb.len() >= 10 => Some((UNMAP, be(&cdb[7..9]))),
        _ => None,
    }
}

/// The driver's view of a capture; `block_bytes` converts CDB lengths to bytes.
pub fn view(pcap: &[u8], block_bytes: u32) -> DriverView {
    let records = bulk_records(pcap);
    let is_cbw = |r: &Bulk| r.submit && r.data.len() >= 4 && r.data[..4] == CBW_SIGNATURE;
    if records.iter().any(is_cbw) {
        bot_view(&records, block_bytes)
    } else {
        uas_view(&records, block_bytes)
    }
}

/// Pipe roles of a UAS capture: the OUT endpoint that carries Command IUs and the IN endpoint
/// that returns Sense IUs, every completion of which starts with an IU id (read data can start
/// with a Sense IU's id too: a 4 KiB read of earlier random writes did); data IN and OUT are
/// the others.
fn uas_role(records: &[Bulk], endpoint: u8) -> &'static str {
    let carries = |first: u8, submit: bool| {
        records
            .iter()
            .any(|r| r.endpoint == endpoint && r.submit == submit && r.data.first() == Some(&first))
    };
    let only_ius = records
        .iter()
        .filter(|r| r.endpoint == endpoint && !r.submit && !r.data.is_empty())
        .all(|r| STATUS_PIPE_IUS.contains(&r.data[0]));
    if carries(IU_COMMAND, true) && endpoint & 0x80 == 0 {
        "command"
    } else if carries(IU_SENSE, false) && only_ius {
        "status"
    } else if endpoint & 0x80 != 0 {
        "data-in"
    } else {
        "data-out"
    }
}

fn uas_view(records: &[Bulk], block_bytes: u32) -> DriverView {
    let mut view = DriverView::default();
    let endpoints: BTreeSet<u8> = records.iter().map(|r| r.endpoint).collect();
    let roles: BTreeMap<u8, &str> = endpoints
        .iter()
        .map(|&ep| (ep, uas_role(records, ep)))
        .collect();
    let mut in_flight: BTreeSet<u16> = BTreeSet::new();
    // Submissions since the last Command IU; after a Ready IU, the two that answer it (status
    // and data, in whichever order the driver submits them).
    let mut pending: Vec<&str> = Vec::new();
    let mut after_ready: Vec<&str> = Vec::new();
    let mut answering_ready = 0;
    for r in records {
        let role = roles[&r.endpoint];
        view.data_flags.insert(data_flag(role, r));
        let tag = || u16::from_be_bytes([r.data[2], r.data[3]]);
        if !r.submit {
            if role == "status" && r.data.len() >= 4 {
                match r.data[0] {
                    IU_READ_READY | IU_WRITE_READY => answering_ready = 2,
                    IU_SENSE => {
                        in_flight.remove(&tag());
                    }
                    _ => {}
                }
            }
            continue;
        }
        view.transfer_flags
            .entry(role.to_owned())
            .or_default()
            .insert(r.xfer_flags);
        if role == "status" {
            view.status_urb_lengths.insert(r.urb_len);
        } else if role != "command" {
            view.data_urb_lengths.insert(r.urb_len);
        }
        if answering_ready > 0 {
            after_ready.push(role);
            answering_ready -= 1;
            if answering_ready == 0 {
                view.submission_patterns
                    .insert(format!("after a Ready IU: {}", after_ready.join(",")));
                after_ready.clear();
            }
            continue;
        }
        pending.push(role);
        if role != "command" || r.data.len() < 32 {
            continue;
        }
        view.submission_patterns
            .insert(format!("with a command: {}", pending.join(",")));
        pending.clear();
        let Some((op, bytes)) = data_command(&r.data[16..32], block_bytes) else {
            continue;
        };
        let lowest_free = (1..).find(|t| !in_flight.contains(t)).unwrap();
        if tag() != lowest_free {
            view.tags_not_lowest_free += 1;
        }
        in_flight.insert(tag());
        view.max_tag = view.max_tag.max(tag());
        view.max_in_flight = view.max_in_flight.max(in_flight.len());
        view.commands.push((op, bytes));
    }
    view.commands.sort_unstable();
    view
}

fn bot_view(records: &[Bulk], block_bytes: u32) -> DriverView {
    let mut view = DriverView::default();
    let mut in_flight = 0usize;
    let mut pattern: Vec<String> = Vec::new();
    for r in records {
        let role = if r.submit && r.data.len() >= 4 && r.data[..4] == CBW_SIGNATURE {
            "cbw"
        } else if r.urb_len == 13 && r.endpoint & 0x80 != 0 {
            "csw"
        } else if r.endpoint & 0x80 != 0 {
            "data-in"
        } else {
            "data-out"
        };
        view.data_flags.insert(data_flag(role, r));
        if !r.submit {
            if role == "csw" && in_flight > 0 {
                in_flight -= 1;
                view.submission_patterns
                    .insert(format!("with a command: {}", pattern.join(",")));
                pattern.clear();
            }
            continue;
        }
        pattern.push(role.to_owned());
        view.transfer_flags
            .entry(role.to_owned())
            .or_default()
            .insert(r.xfer_flags);
        match role {
            "csw" => {
                view.status_urb_lengths.insert(r.urb_len);
            }
            "cbw" => {
                assert_eq!(r.urb_len, CBW_LEN, "a CBW is 31 bytes");
                let cdb_len = usize::from(r.data[14]);
                if let Some(command) = data_command(&r.data[15..15 + cdb_len], block_bytes) {
                    view.commands.push(command);
                }
                in_flight += 1;
                view.max_in_flight = view.max_in_flight.max(in_flight);
            }
            _ => {
                view.data_urb_lengths.insert(r.urb_len);
            }
        }
    }
    view.commands.sort_unstable();
    view
}

/// The CDB of every UAS Command IU or BOT CBW in a capture, in order.
pub fn scsi_commands(pcap: &[u8]) -> Vec<Vec<u8>> {
    bulk_records(pcap)
        .iter()
        .filter(|r| r.submit && r.endpoint & 0x80 == 0)
        .filter_map(|r| {
            if r.data.len() >= 31 && r.data[..4] == CBW_SIGNATURE {
                let len = usize::from(r.data[14]).min(16);
                Some(r.data[15..15 + len].to_vec())
            } else if r.data.len() >= 32 && r.data[0] == IU_COMMAND {
                Some(r.data[16..32].to_vec())
            } else {
                None
            }
        })
        .collect()
}

/// The commands of a view, counted by opcode and length: "8x op 0x28 524288 B, ...".
fn command_summary(view: &DriverView) -> String {
    let mut counts: BTreeMap<(u8, u32), usize> = BTreeMap::new();
    for c in &view.commands {
        *counts.entry(*c).or_default() += 1;
    }
    counts
        .iter()
        .map(|((op, bytes), n)| format!("{n}x op {op:#04x} {bytes} B"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the kernel did in one job, on one line for the test's log: the figures the comparison
/// checks the simulation against.
pub fn summary(view: &DriverView) -> String {
    format!(
        "[{}]; most in flight {}, highest tag {}, tags not lowest free {}; status URBs {:?} B; \
         data URBs {:?} B; {:?}",
        command_summary(view),
        view.max_in_flight,
        view.max_tag,
        view.tags_not_lowest_free,
        view.status_urb_lengths,
        view.data_urb_lengths,
        view.submission_patterns,
    )
}

/// Quantities [`differences`] compares (commands, most in flight and highest tag where the
/// queue binds or Linux had more in flight, tags not the lowest free, URB submission order,
/// status and data URB lengths, usbmon data flags, transfer flags).
pub fn compared_quantities(binding_depth: Option<usize>) -> usize {
    if binding_depth.is_some() {
        9
    } else {
        7
    }
}

/// Every quantity in which `simulated` differs from `kernel`, one line each.
/// `binding_depth`: the job keeps more queued than the driver allows (the guest's sysfs
/// `device/queue_depth`, what the driver set): the simulated driver must reach that depth, and
/// Linux must never exceed it (whether Linux's capture reaches it depends on how fast the TCG
/// guest submits next to QEMU's device, which the host's load changes; where it does, the
/// highest tags must match too). Otherwise Linux may have fewer in flight, never more.
pub fn differences(
    kernel: &DriverView,
    simulated: &DriverView,
    binding_depth: Option<usize>,
) -> Vec<String> {
    let mut lines = Vec::new();
    let mut differ = |what: &str, k: String, s: String| {
        if k != s {
            lines.push(format!("{what}: Linux {k}, simulated {s}"));
        }
    };
    if kernel.commands != simulated.commands {
        differ(
            "commands",
            command_summary(kernel),
            command_summary(simulated),
        );
    }
    let tags_compared = match binding_depth {
        Some(depth) => {
            differ(
                "most commands in flight (the queue binds: Linux's queue depth)",
                depth.to_string(),
                simulated.max_in_flight.to_string(),
            );
            if kernel.max_in_flight > depth {
                differ(
                    "most commands in flight, above the queue depth",
                    kernel.max_in_flight.to_string(),
                    depth.to_string(),
                );
            }
            kernel.max_in_flight == depth
        }
        None if kernel.max_in_flight > simulated.max_in_flight => {
            differ(
                "most commands in flight",
                kernel.max_in_flight.to_string(),
                simulated.max_in_flight.to_string(),
            );
            true
        }
        None => false,
    };
    if tags_compared {
        differ(
            "highest tag",
            kernel.max_tag.to_string(),
            simulated.max_tag.to_string(),
        );
    }
    differ(
        "tags not the lowest free",
        kernel.tags_not_lowest_free.to_string(),
        simulated.tags_not_lowest_free.to_string(),
    );
    differ(
        "URB submission order",
        format!("{:?}", kernel.submission_patterns),
        format!("{:?}", simulated.submission_patterns),
    );
    differ(
        "status URB lengths",
        format!("{:?}", kernel.status_urb_lengths),
        format!("{:?}", simulated.status_urb_lengths),
    );
    differ(
        "data URB lengths",
        format!("{:?}", kernel.data_urb_lengths),
        format!("{:?}", simulated.data_urb_lengths),
    );
    differ(
        "usbmon data flags",
        format!("{:?}", kernel.data_flags),
        format!("{:?}", simulated.data_flags),
    );
    differ(
        "transfer flags",
        format!("{:?}", kernel.transfer_flags),
        format!("{:?}", simulated.transfer_flags),
    );
    lines
}
