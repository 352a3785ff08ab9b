//! What the device says about itself: standard INQUIRY, VPD pages 0x00/0x80/0x83/0xB0/0xB1/
//! 0xB2, READ CAPACITY(16) and ATA IDENTIFY DEVICE through ATA PASS-THROUGH(16). Every CDB is
//! made and every answer read by the `wire` codecs; a command the device refuses is an answer
//! ("not supported"), not an error.

use serde::Serialize;
use storlab_wire::ata::{IdentifyRepr, RotationRate, IDENTIFY_LEN};
use storlab_wire::scsi::capacity::CAPACITY16_LEN;
use storlab_wire::scsi::vpd::{designators, DesignatorType, VpdPage, VpdPageCode};
use storlab_wire::scsi::{
    AtaPassThrough, AtaProtocol, Capacity16, Command, InquiryRepr, SenseRepr, TransferLengthField,
    VpdPacket,
};

/// Allocation length for standard INQUIRY: the 36 bytes SPC-4 6.6.2 defines as the minimum.
const INQUIRY_ALLOCATION_LEN: u16 = 36;
/// Allocation length for a VPD page: header plus the longest page `wire` keeps inline.
const VPD_ALLOCATION_LEN: u16 = 255;
/// ATA IDENTIFY DEVICE opcode (ACS-3 7.12).
const ATA_IDENTIFY_DEVICE: u8 = 0xEC;
/// errno values that mean the node takes no SCSI commands at all (block layer without
/// SCSI pass-through: virtio-blk, loop, dm, NVMe without the SCSI translation).
const NO_SG_IO_ERRNOS: &[i32] = &[libc::ENOTTY, libc::EINVAL, libc::EOPNOTSUPP];

/// One data-in SCSI command.
pub trait Transport {
    /// Sends `cdb`, fills `buffer` from the device, returns the bytes received.
    fn data_in(&mut self, cdb: &[u8], buffer: &mut [u8]) -> Result<usize, CommandFailure>;
}

/// How a command failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandFailure {
    /// The ioctl itself failed (errno).
    Os(i32),
    /// CHECK CONDITION with these sense bytes.
    CheckCondition(Vec<u8>),
    /// Another SCSI status.
    Status(u8),
    /// The host adapter or driver failed the command.
    Host {
        host_status: u16,
        driver_status: u16,
    },
}

impl std::fmt::Display for CommandFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommandFailure::Os(errno) => {
                write!(f, "{}", std::io::Error::from_raw_os_error(*errno))
            }
            CommandFailure::CheckCondition(sense) => match SenseRepr::parse(sense) {
                Ok(s) => write!(
                    f,
                    "sense key {:?}, ASC/ASCQ {:02X}h/{:02X}h",
                    s.key,
                    s.additional.asc(),
                    s.additional.ascq()
                ),
                Err(_) => write!(f, "CHECK CONDITION without readable sense"),
            },
            CommandFailure::Status(status) => write!(f, "SCSI status {status:#04x}"),
            CommandFailure::Host {
                host_status,
                driver_status,
            } => write!(
                f,
                "host status {host_status:#06x}, driver status {driver_status:#06x}"
            ),
        }
    }
}

/// One command's outcome.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Answer<T> {
    /// The device answered and the answer parsed.
    Answered { value: T },
    /// The device refused the command (or does not list the page): a fact, not an error.
    NotSupported { reason: String },
    /// The device answered with bytes that do not parse.
    Malformed { reason: String },
}

impl<T> Answer<T> {
    pub fn value(&self) -> Option<&T> {
        match self {
            Answer::Answered { value } => Some(value),
            _ => None,
        }
    }
}

/// Standard INQUIRY data.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct InquiryFacts {
    pub vendor: String,
    pub product: String,
    pub revision: String,
    /// PERIPHERAL DEVICE TYPE (0 = direct access block device).
    pub device_type: u8,
    pub removable: bool,
    /// VERSION (6 = SPC-4, 7 = SPC-5).
    pub version: u8,
    /// CMDQUE: the logical unit queues commands.
    pub command_queueing: bool,
}

/// The fields of one VPD page.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum VpdFacts {
    SupportedPages {
        pages: Vec<u8>,
    },
    UnitSerialNumber {
        serial: String,
    },
    DeviceIdentification {
        /// Each designator as `TYPE:VALUE` (`naa:5000c500a1b2c3d4`, `t10:ATA ...`).
        designators: Vec<String>,
    },
    BlockLimits {
        maximum_transfer_blocks: u32,
        optimal_transfer_blocks: u32,
        optimal_transfer_granularity_blocks: u16,
        maximum_unmap_lba_count: u32,
        maximum_unmap_descriptor_count: u32,
        optimal_unmap_granularity_blocks: u32,
    },
    BlockDeviceCharacteristics {
        /// 0 not reported, 1 non-rotating (solid state), else rpm.
        medium_rotation_rate: u16,
        nominal_form_factor: u8,
    },
    LogicalBlockProvisioning {
        /// LBPU: the device takes UNMAP.
        unmap_supported: bool,
        write_same16_unmap: bool,
        lbprz: u8,
        provisioning_type: u8,
    },
}

/// One VPD page asked for.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct VpdAnswer {
    /// Page code.
    pub page: u8,
    pub name: &'static str,
    pub answer: Answer<VpdFacts>,
}

/// READ CAPACITY(16) data.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct CapacityFacts {
    pub last_lba: u64,
    pub block_len_bytes: u32,
    pub size_bytes: u64,
    pub physical_block_bytes: u64,
    /// LBPME: thin provisioning / UNMAP enabled.
    pub provisioning_enabled: bool,
    pub unmapped_read_zero: bool,
}

/// ATA IDENTIFY DEVICE fields.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct IdentifyFacts {
    pub model: String,
    pub serial: String,
    pub firmware: String,
    pub sectors: u64,
    pub logical_sector_bytes: u32,
    pub physical_sector_bytes: u32,
    pub ncq_supported: bool,
    pub queue_depth: u8,
    pub trim_supported: bool,
    /// `solid state`, `N rpm` or `not reported`.
    pub rotation: String,
}

/// Everything asked of the device.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DeviceQuery {
    /// Why nothing could be asked (the node would not open, or takes no SCSI commands);
    /// `null` when the commands below were sent.
    pub unavailable: Option<String>,
    pub inquiry: Option<Answer<InquiryFacts>>,
    pub vpd: Vec<VpdAnswer>,
    pub read_capacity16: Option<Answer<CapacityFacts>>,
    pub ata_identify: Option<Answer<IdentifyFacts>>,
}

impl DeviceQuery {
    fn unavailable(reason: String) -> Self {
        DeviceQuery {
            unavailable: Some(reason),
            inquiry: None,
            vpd: Vec::new(),
            read_capacity16: None,
            ata_identify: None,
        }
    }
}

/// The VPD pages asked for, after Supported Pages, with their names.
pub const VPD_PAGES: &[(u8, &str)] = &[
    (0x80, "Unit Serial Number"),
    (0x83, "Device Identification"),
    (0xB0, "Block Limits"),
    (0xB1, "Block Device Characteristics"),
    (0xB2, "Logical Block Provisioning"),
];

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .trim_matches(|c: char| c == ' ' || c == '\0')
        .to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The CDB bytes of `command`.
pub fn cdb(command: Command) -> Vec<u8> {
    let mut bytes = vec![0u8; command.buffer_len()];
    // Every command built here has in-range fields; a failure would be a bug in this file.
    let len = command.emit(&mut bytes).unwrap_or(0);
    bytes.truncate(len);
    bytes
}

/// INQUIRY (standard data, or the VPD page `page`).
pub fn inquiry_cdb(page: Option<u8>) -> Vec<u8> {
    cdb(Command::Inquiry {
        evpd: page.is_some(),
        page_code: page.unwrap_or(0),
        allocation_length: if page.is_some() {
            VPD_ALLOCATION_LEN
        } else {
            INQUIRY_ALLOCATION_LEN
        },
    })
}

/// READ CAPACITY(16) for its 32 bytes.
pub fn read_capacity16_cdb() -> Vec<u8> {
    cdb(Command::ReadCapacity16 {
        allocation_length: CAPACITY16_LEN as u32,
    })
}

/// ATA PASS-THROUGH(16) carrying IDENTIFY DEVICE: PIO data-in, one 512-byte block, length in
/// the COUNT field (SAT-4 12.2.2).
pub fn ata_identify_cdb() -> Vec<u8> {
    let mut apt = AtaPassThrough::new16(AtaProtocol::PioDataIn, ATA_IDENTIFY_DEVICE);
    apt.transfer_from_device = true;
    apt.byte_block = true;
    apt.t_length = TransferLengthField::Count;
    apt.count = 1;
    cdb(Command::AtaPassThrough(apt))
}

pub fn inquiry_facts(data: &[u8]) -> Result<InquiryFacts, String> {
    let r = InquiryRepr::parse(data).map_err(|e| e.to_string())?;
    Ok(InquiryFacts {
        vendor: text(&r.vendor),
        product: text(&r.product),
        revision: text(&r.revision),
        device_type: r.device_type.into(),
        removable: r.removable,
        version: r.version,
        command_queueing: r.command_queueing,
    })
}

pub fn vpd_facts(data: &[u8]) -> Result<VpdFacts, String> {
    let page = VpdPage::parse(&VpdPacket::new_unchecked(data)).map_err(|e| e.to_string())?;
    Ok(match page {
        VpdPage::SupportedPages(pages) => VpdFacts::SupportedPages {
            pages: pages.as_slice().to_vec(),
        },
        VpdPage::UnitSerialNumber(serial) => VpdFacts::UnitSerialNumber {
            serial: text(serial.as_slice()),
        },
        VpdPage::DeviceIdentification(list) => VpdFacts::DeviceIdentification {
            designators: designators(list.as_slice())
                .filter_map(|d| d.ok())
                .map(|d| match d.designator_type {
                    DesignatorType::Naa => format!("naa:{}", hex(d.value)),
                    DesignatorType::Eui64 => format!("eui64:{}", hex(d.value)),
                    DesignatorType::T10VendorId => format!("t10:{}", text(d.value)),
                    _ => format!("other:{}", hex(d.value)),
                })
                .collect(),
        },
        VpdPage::BlockLimits(b) => VpdFacts::BlockLimits {
            maximum_transfer_blocks: b.maximum_transfer_blocks,
            optimal_transfer_blocks: b.optimal_transfer_blocks,
            optimal_transfer_granularity_blocks: b.optimal_transfer_granularity_blocks,
            maximum_unmap_lba_count: b.maximum_unmap_lba_count,
            maximum_unmap_descriptor_count: b.maximum_unmap_descriptor_count,
            optimal_unmap_granularity_blocks: b.optimal_unmap_granularity_blocks,
        },
        VpdPage::BlockDeviceCharacteristics(c) => VpdFacts::BlockDeviceCharacteristics {
            medium_rotation_rate: c.medium_rotation_rate,
            nominal_form_factor: c.nominal_form_factor,
        },
        VpdPage::LogicalBlockProvisioning(p) => VpdFacts::LogicalBlockProvisioning {
            unmap_supported: p.unmap_supported,
            write_same16_unmap: p.write_same16_unmap,
            lbprz: p.lbprz,
            provisioning_type: p.provisioning_type,
        },
    })
}

pub fn capacity_facts(data: &[u8]) -> Result<CapacityFacts, String> {
    let c = Capacity16::parse(data).map_err(|e| e.to_string())?;
    let blocks = c.last_lba.saturating_add(1);
    Ok(CapacityFacts {
        last_lba: c.last_lba,
        block_len_bytes: c.block_len_bytes,
        size_bytes: blocks.saturating_mul(u64::from(c.block_len_bytes)),
        physical_block_bytes: u64::from(c.block_len_bytes)
            .checked_shl(u32::from(c.logical_per_physical_exponent))
            .unwrap_or(0),
        provisioning_enabled: c.provisioning_enabled,
        unmapped_read_zero: c.unmapped_read_zero,
    })
}

pub fn identify_facts(data: &[u8]) -> Result<IdentifyFacts, String> {
    let id = IdentifyRepr::parse(data).map_err(|e| e.to_string())?;
    Ok(IdentifyFacts {
        model: text(&id.model),
        serial: text(&id.serial),
        firmware: text(&id.firmware),
        sectors: id.user_addressable_sectors,
        logical_sector_bytes: id.logical_sector_size_bytes,
        physical_sector_bytes: id.physical_sector_size_bytes,
        ncq_supported: id.ncq_supported,
        queue_depth: id.queue_depth,
        trim_supported: id.trim_supported,
        rotation: match id.rotation_rate {
            RotationRate::NonRotating => "solid state".to_string(),
            RotationRate::Rpm(rpm) => format!("{rpm} rpm"),
            RotationRate::NotReported | RotationRate::Unknown(_) => "not reported".to_string(),
        },
    })
}

fn ask<T>(
    transport: &mut dyn Transport,
    cdb: &[u8],
    buffer_len: usize,
    decode: fn(&[u8]) -> Result<T, String>,
) -> Result<Answer<T>, CommandFailure> {
    let mut buffer = vec![0u8; buffer_len];
    match transport.data_in(cdb, &mut buffer) {
        Ok(received) => Ok(match decode(&buffer[..received.min(buffer_len)]) {
            Ok(value) => Answer::Answered { value },
            Err(reason) => Answer::Malformed { reason },
        }),
        Err(CommandFailure::Os(errno)) => Err(CommandFailure::Os(errno)),
        Err(refused) => Ok(Answer::NotSupported {
            reason: refused.to_string(),
        }),
    }
}

fn os_failure<T>(failure: CommandFailure) -> Answer<T> {
    Answer::NotSupported {
        reason: no_sg_io(&failure).unwrap_or_default(),
    }
}

fn no_sg_io(failure: &CommandFailure) -> Option<String> {
    match failure {
        CommandFailure::Os(errno) if NO_SG_IO_ERRNOS.contains(errno) => Some(format!(
            "the device takes no SCSI commands (SG_IO: {})",
            std::io::Error::from_raw_os_error(*errno)
        )),
        CommandFailure::Os(errno) => Some(format!(
            "SG_IO failed: {}",
            std::io::Error::from_raw_os_error(*errno)
        )),
        _ => None,
    }
}

/// Asks the device everything, in order; `ask_ata` adds ATA IDENTIFY (only for transports
/// that end at a SATA device: a SCSI-to-ATA translation in libata or a USB bridge).
pub fn query(transport: &mut dyn Transport, ask_ata: bool) -> DeviceQuery {
    let inquiry = match ask(
        transport,
        &inquiry_cdb(None),
        INQUIRY_ALLOCATION_LEN.into(),
        inquiry_facts,
    ) {
        Ok(answer) => answer,
        Err(failure) => return DeviceQuery::unavailable(no_sg_io(&failure).unwrap_or_default()),
    };
    let supported = ask(
        transport,
        &inquiry_cdb(Some(VpdPageCode::SupportedPages.into())),
        VPD_ALLOCATION_LEN.into(),
        vpd_facts,
    )
    .unwrap_or_else(os_failure);
    let listed: Option<Vec<u8>> = match supported.value() {
        Some(VpdFacts::SupportedPages { pages }) => Some(pages.clone()),
        _ => None,
    };
    let mut vpd = vec![VpdAnswer {
        page: VpdPageCode::SupportedPages.into(),
        name: "Supported VPD Pages",
        answer: supported,
    }];
    for &(page, name) in VPD_PAGES {
        let answer = if listed.as_ref().is_some_and(|pages| !pages.contains(&page)) {
            Answer::NotSupported {
                reason: "not in the Supported VPD Pages list".to_string(),
            }
        } else {
            ask(
                transport,
                &inquiry_cdb(Some(page)),
                VPD_ALLOCATION_LEN.into(),
                vpd_facts,
            )
            .unwrap_or_else(os_failure)
        };
        vpd.push(VpdAnswer { page, name, answer });
    }
    let read_capacity16 = Some(
        ask(
            transport,
            &read_capacity16_cdb(),
            CAPACITY16_LEN,
            capacity_facts,
        )
        .unwrap_or_else(os_failure),
    );
    let ata_identify = ask_ata.then(|| {
        ask(transport, &ata_identify_cdb(), IDENTIFY_LEN, identify_facts).unwrap_or_else(os_failure)
    });
    DeviceQuery {
        unavailable: None,
        inquiry: Some(inquiry),
        vpd,
        read_capacity16,
        ata_identify,
    }
}

/// Opens the device node read-only and asks it everything.
pub fn query_node(node: &std::path::Path, ask_ata: bool) -> DeviceQuery {
    match super::sgio::SgDevice::open(node) {
        Ok(mut device) => query(&mut device, ask_ata),
        Err(error) => DeviceQuery::unavailable(format!("{}: {error}", node.display())),
    }
}
