//! Hardware profiles: the TOML data every simulated layer takes its timing from, their
//! validation, and the profile set (shipped profiles embedded in the binary, plus a user
//! directory that can add or override them).
//!
//! One file per part, named after the part: `profiles/<category>/<name>.toml` with categories
//! `hosts`, `controllers`, `links`, `bridges`, `drives` and `stacks`. A stack names one part of
//! each kind it needs. Every struct denies unknown keys so a typo is an error, not a default.

pub(crate) mod limits;
mod overrides;
mod stack;
mod toml_errors;
mod validate;

pub use crate::drive::simple::{Medium, SimpleDriveProfile};
pub use crate::drive::DriveProfile;
pub use limits::{
    ATA_TRANSFER_BYTES_MAX, DESCRIPTOR_BYTES_MAX, LBA48_SECTORS, LINK_RATE_BPS_MAX,
    LINK_RATE_BPS_MIN, NCQ_TAGS_MAX, PARALLEL_UNITS_MAX, RATE_MB_S_MAX, SECTOR_BYTES, STEP_NS_MAX,
    TRIM_RANGES_PER_BLOCK, TRIM_RANGE_SECTORS_MAX, UAS_TAG_MAX, UNIT_COST_NS_MAX,
};
pub use stack::{StackFile, StackSpec, STACK_ROLES};

use crate::error::SimError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml_errors::parse;

/// The profile categories, in the order a stack lists its parts.
pub const CATEGORIES: [&str; 6] = [
    "hosts",
    "controllers",
    "links",
    "bridges",
    "drives",
    "stacks",
];

/// Which class driver the host runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriverKind {
    /// USB Bulk-Only Transport: one command at a time.
    Bot,
    /// USB Attached SCSI: tagged commands.
    Uas,
    /// SATA through an AHCI controller with NCQ.
    SataAhci,
    /// SATA through a controller in legacy IDE mode: no NCQ, one command at a time.
    SataIde,
}

/// A host driver's URB `transfer_flags` per pipe (UAS: command, status, data; BOT: CBW,
/// CSW, data), as usbmon's binary interface records them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UrbTransferFlags {
    /// The Command IU or CBW URB.
    #[serde(default)]
    pub command: u32,
    /// The Sense IU or CSW URB.
    #[serde(default)]
    pub status: u32,
    /// The data URB of a read.
    #[serde(default)]
    pub data_in: u32,
    /// The data URB of a write.
    #[serde(default)]
    pub data_out: u32,
}

impl UrbTransferFlags {
    /// No flag on any URB (the default, left out of a report).
    pub fn is_none(&self) -> bool {
        *self == UrbTransferFlags::default()
    }
}

/// Serde: leave a key at its default out of a report, so profiles without it serialise as
/// before the key existed.
fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Serde: see [`is_zero`].
fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

/// Serde: see [`is_zero`].
fn is_false(b: &bool) -> bool {
    !*b
}

/// Serde: see [`is_zero`].
fn is_true(b: &bool) -> bool {
    *b
}

fn default_true() -> bool {
    true
}

/// OS block layer plus class driver.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostProfile {
    pub description: String,
    pub driver: DriverKind,
    /// Requests larger than this are split by the block layer.
    pub max_transfer_bytes: u32,
    /// A different limit when the device runs at USB 2.0 High-Speed (Linux usb-storage).
    #[serde(default)]
    pub max_transfer_bytes_high_speed: Option<u32>,
    /// Commands the driver keeps outstanding at once (BOT and IDE: 1).
    pub max_outstanding_commands: u32,
    /// Merge adjacent queued requests of one direction into one command (the "Turbo" artefact).
    #[serde(default)]
    pub merge_adjacent: bool,
    /// Driver CPU time to build and submit one command.
    pub submit_cpu_ns: u64,
    /// Driver CPU time to complete one command (after the interrupt).
    pub complete_cpu_ns: u64,
    /// Discards larger than this are split.
    pub max_trim_bytes: u64,
    /// Driver CPU time per KiB a command moves (locking and mapping the buffer's pages,
    /// building the scatter-gather list): why streaming costs CPU in proportion to MB/s.
    #[serde(default)]
    pub cpu_ns_per_kib: u64,
    /// BOT: the driver chains a command's three transfers in completion routines (Windows'
    /// USBSTOR, Linux usb-storage): the CBW's completion submits the data transfer, whose
    /// per-KiB work then runs alongside the data phase, and the data's completion submits the
    /// CSW transfer, which the device's CSW waits for. Each hand-off costs a transfer event
    /// (the controller's `interrupt_cpu_ns`) plus `phase_cpu_ns`. Without it (default) the
    /// driver maps the buffer and queues all three transfers before the CBW goes out.
    #[serde(default)]
    pub chains_transfers: bool,
    /// BOT with `chains_transfers`: driver CPU time per hand-off, besides its interrupt.
    #[serde(default)]
    pub phase_cpu_ns: u64,
    /// USB: CPU time the host's xHCI driver spends per USB transfer of a command (programming
    /// its TRBs, handling its transfer event), on top of the class driver's costs: Windows 8's
    /// in-box xHCI driver (USBXHCI), "très peu optimisé pour maximiser le nombre d'I/O"
    /// (HardWare.fr 2013 p. 9). Booked as each transfer completes: at a chaining BOT driver's
    /// hand-offs and its CSW; for the other USB drivers three per command (BOT: CBW, data, CSW;
    /// UAS: command IU, data, status IU) with the status. Default 0: the vendor xHCI drivers'
    /// costs are inside the class driver's and the controller's figures.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub xhci_transfer_cpu_ns: u64,
    /// BOT: the driver reads ahead for a sequential stream of small reads: a read that continues
    /// the previous one and is smaller than `max_transfer_bytes` is sent as one command of
    /// `max_transfer_bytes`, and the reads that follow are served from the driver's buffer
    /// without a command (the merging "Turbo" driver, `driver_buffer.rs`).
    #[serde(default)]
    pub read_ahead: bool,
    /// BOT: the driver acknowledges a write that continues the previous one once it is copied
    /// into its buffer, and sends the gathered writes as one command when the buffer is full,
    /// when a request that does not continue them arrives, or `coalesce_hold_ns` after the first.
    #[serde(default)]
    pub coalesce_writes: bool,
    /// With `coalesce_writes`: the longest the driver holds gathered writes when nothing
    /// follows them.
    #[serde(default)]
    pub coalesce_hold_ns: u64,
    /// UAS: the controllers (profile names) the OS loads this driver on, where it loads only on
    /// some: Windows 8's UASPStor loaded on the Intel and AMD ports and not on the ASMedia and
    /// Etron ones, with no link to their xHCI revision (HardWare.fr 2013 p. 3; Microsoft names
    /// only "known hardware incompatibilities"). On any other controller the stack runs
    /// `bot_fallback_host` instead. Without it the driver loads everywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uas_loads_on: Option<Vec<String>>,
    /// The OS's own BOT driver, used where this UAS driver does not load (a host profile name).
    #[serde(default)]
    pub bot_fallback_host: Option<String>,
    /// UAS without streams (High-Speed): the queue depth the driver gives the device, whatever
    /// its tags (Linux: 32, drivers/usb/storage/uas.c uas_configure_endpoints). Without it the
    /// depth is `max_outstanding_commands` and the bridge's tags, as with streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uas_queue_depth_high_speed: Option<u32>,
    /// UAS: tags the driver holds back from the device's queue depth (Linux: 2,
    /// uas_slave_configure's `scsi_change_queue_depth(sdev, devinfo->qdepth - 2)`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub uas_tags_held_back: u32,
    /// A new command takes the lowest free tag (Linux uas_queuecommand: the first empty slot
    /// of `devinfo->cmnd[]`, tag = slot + 1); without it, the most recently freed one.
    #[serde(default, skip_serializing_if = "is_false")]
    pub lowest_free_tag: bool,
    /// UAS: the bytes each status URB asks for (Linux: `sizeof(struct sense_iu)`, 16 + 96 =
    /// 112, include/linux/usb/uas.h). Without it, 96.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_urb_bytes: Option<u32>,
    /// UAS without streams: after a Ready IU the driver submits the next status URB before the
    /// data URB (Linux uas_xfer_data sets SUBMIT_STATUS_URB, which uas_submit_urbs handles
    /// first). Without it, data first.
    #[serde(default, skip_serializing_if = "is_false")]
    pub status_before_data_after_ready: bool,
    /// The block layer passes discards (TRIM / UNMAP) to the driver. Off for Linux's
    /// usb-storage: sd's scan of a usb-storage disk reads no VPD pages and no READ CAPACITY(16)
    /// (scsiglue.c's slave_configure sets `skip_vpd_pages` and `try_rc_10_first`), so the
    /// queue's `discard_max_bytes` stays 0 (the Linux oracle's guest reads 0 in sysfs) and a
    /// discard fails with EOPNOTSUPP before any command.
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub discard: bool,
    /// The `transfer_flags` the driver's URBs carry, as usbmon records them (Linux's
    /// URB_* bits, include/linux/usb.h); without it, 0 on every URB.
    #[serde(default, skip_serializing_if = "UrbTransferFlags::is_none")]
    pub urb_transfer_flags: UrbTransferFlags,
    /// Hardware threads of the host CPU: host CPU use is reported as a share of the whole CPU,
    /// as Windows' Task Manager and the reviews print it (the driver's work runs on one).
    #[serde(default = "default_cpu_threads")]
    pub cpu_threads: u32,
}

fn default_cpu_threads() -> u32 {
    1
}

/// PCIe attachment of a host controller.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcieProfile {
    /// 1 (2.5 GT/s, 8b/10b), 2 (5 GT/s, 8b/10b) or 3 (8 GT/s, 128b/130b).
    pub generation: u32,
    pub lanes: u32,
    /// Max_Payload_Size of the link: data bytes per TLP.
    pub max_payload_bytes: u32,
    /// Framing, sequence number, header and LCRC bytes around each TLP's payload.
    pub tlp_overhead_bytes: u32,
    /// Share of link time spent on DLLPs (ACK/NAK, flow-control updates), 0..1.
    pub dllp_overhead_fraction: f64,
    /// Max_Read_Request_Size: the most data one Memory Read request may ask for. The Device
    /// Control register's default is 512 bytes (PCIe Base 2.0 §7.8.4, bits 14:12 = 010b).
    #[serde(default = "default_max_read_request_bytes")]
    pub max_read_request_bytes: u32,
    /// Read completion boundary of the root complex: it may split the data of a read into
    /// completions at these aligned boundaries, 64 or 128 bytes (PCIe Base 2.0 §2.3.1.1; the
    /// Link Control register's default is 64, §7.8.7 bit 3).
    #[serde(default = "default_read_completion_boundary_bytes")]
    pub read_completion_boundary_bytes: u32,
    /// Memory Read requests (tags) the controller keeps in flight.
    #[serde(default = "default_outstanding_read_requests")]
    pub outstanding_read_requests: u32,
    /// Root complex and host memory time of one read: from the request's arrival to its first
    /// completion leaving the root port (link transfer times are computed, not included).
    #[serde(default = "default_read_latency_ns")]
    pub read_latency_ns: u64,
}

/// PCIe Base 2.0 §7.8.4: Max_Read_Request_Size defaults to 512 bytes.
fn default_max_read_request_bytes() -> u32 {
    512
}

/// PCIe Base 2.0 §7.8.7: the Read Completion Boundary bit defaults to 0 (64 bytes).
fn default_read_completion_boundary_bytes() -> u32 {
    64
}

/// The 5-bit tag space a requester has without the Extended Tag field (PCIe Base 2.0
/// §7.8.4, bit 8, default off): with no datasheet figure the tags are not taken to bind, so
/// the link's rate does.
fn default_outstanding_read_requests() -> u32 {
    32
}

/// About half a microsecond from read request to completion in the root complex and memory
/// (Neugebauer et al., "Understanding PCIe performance for end host networking", SIGCOMM
/// 2018: DMA reads of 64 bytes took roughly 0.5 µs on Xeon E5 hosts over Gen3 x8, where the
/// link's own transfer times are a few nanoseconds).
fn default_read_latency_ns() -> u64 {
    500
}

/// Kind of host controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ControllerKind {
    Xhci,
    Ahci,
}

/// Revision of the xHCI specification a controller implements (early chips: the 0.96 draft).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum XhciVersion {
    #[serde(rename = "0.96")]
    Draft096,
    #[serde(rename = "1.0")]
    V100,
}

/// Host controller (xHCI for USB, AHCI for SATA) and its PCIe attachment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerProfile {
    pub description: String,
    pub kind: ControllerKind,
    /// Controller time per transfer (xHCI: doorbell, endpoint context, event TRB; AHCI: command
    /// header and FIS fetch).
    pub per_transfer_ns: u64,
    /// Controller time per transfer descriptor (xHCI TRB, AHCI PRD entry).
    pub per_descriptor_ns: u64,
    /// Bytes one descriptor can cover (xHCI TRB: 64 KiB; AHCI PRD: 4 MiB).
    pub max_descriptor_bytes: u32,
    /// Rate of the controller's own data path (its buffer and DMA engine) in MB/s, a stage every
    /// transfer's bytes pass in either direction, pipelined with the links; 0: not a bound (the
    /// USB and PCIe links bind first). Only where a measurement isolates the chip (decision 0054).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub data_path_mb_s: u64,
    /// xHCI only: bulk streams supported (needed by UAS at SuperSpeed).
    #[serde(default)]
    pub supports_streams: bool,
    /// xHCI only: streams per endpoint (bounds UAS tags at SuperSpeed).
    #[serde(default)]
    pub max_streams: u32,
    /// Host CPU time per completion interrupt.
    pub interrupt_cpu_ns: u64,
    /// xHCI only: the specification revision its maker announces, where known (what an OS
    /// driver loads on is the host's list, `HostProfile::uas_loads_on`, not this revision).
    #[serde(default)]
    pub xhci_version: Option<XhciVersion>,
    pub pcie: PcieProfile,
}

/// USB 2.0 High-Speed link parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usb2LinkProfile {
    pub description: String,
    pub bit_rate_bps: u64,
    pub max_packet_bytes: u32,
    pub microframe_ns: u64,
    pub max_bulk_packets_per_microframe: u32,
    /// Token, data framing, handshake and bus turnaround bits around each data packet.
    pub packet_overhead_bits: u32,
    /// Share of each microframe reserved for periodic (interrupt/isochronous) traffic, 0..0.8.
    pub periodic_reserved_fraction: f64,
    /// Host controller latency to start a transfer (schedule walk, first token).
    pub transfer_setup_ns: u64,
}

/// USB 3.0 SuperSpeed link parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usb3LinkProfile {
    pub description: String,
    pub signal_rate_bps: u64,
    /// Line bits per data byte (8b/10b: 10).
    pub line_bits_per_byte: u32,
    pub max_packet_bytes: u32,
    /// Header packet plus data payload framing and CRC bytes around each data packet.
    pub data_packet_overhead_bytes: u32,
    pub max_burst_packets: u32,
    /// Gap between bursts while the receiver's ACK/flow-control travels back.
    pub burst_gap_ns: u64,
    /// Share of symbols spent on SKP ordered sets, 0..1.
    pub skp_overhead_fraction: f64,
    /// Latency to start a transfer (ACK TP / ERDY exchange, controller scheduling).
    pub transfer_setup_ns: u64,
}

/// SATA link parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SataLinkProfile {
    pub description: String,
    pub line_rate_bps: u64,
    pub line_bits_per_byte: u32,
    pub max_data_fis_bytes: u32,
    /// SOF, FIS header dword, CRC and EOF bytes around each FIS's payload.
    pub fis_framing_bytes: u32,
    /// X_RDY/R_RDY/R_IP/WTRM/R_OK primitives and turnaround per FIS, in dwords.
    pub fis_handshake_dwords: u32,
}

/// A link profile file: the `kind` key picks the variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum LinkProfile {
    Usb2Hs(Usb2LinkProfile),
    Usb3Ss(Usb3LinkProfile),
    Sata(SataLinkProfile),
}

impl LinkProfile {
    pub fn description(&self) -> &str {
        match self {
            LinkProfile::Usb2Hs(p) => &p.description,
            LinkProfile::Usb3Ss(p) => &p.description,
            LinkProfile::Sata(p) => &p.description,
        }
    }
}

/// USB-to-SATA bridge.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeProfile {
    pub description: String,
    /// Firmware time to parse a command and issue the ATA command.
    pub firmware_command_ns: u64,
    /// Firmware time of a READ, when a source shows it differs (default `firmware_command_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware_read_ns: Option<u64>,
    /// Firmware time of a WRITE (default `firmware_command_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware_write_ns: Option<u64>,
    /// Firmware time of an UNMAP before it asks for the parameter list (default
    /// `firmware_command_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware_unmap_ns: Option<u64>,
    /// Firmware time to turn ATA status into a CSW or Sense IU.
    pub firmware_status_ns: u64,
    pub supports_uas: bool,
    /// UAS commands the firmware accepts at once.
    pub max_uas_tags: u32,
    /// UAS at SuperSpeed: the bulk streams its endpoints offer (the SuperSpeed endpoint
    /// companion's MaxStreams), which bound the tags there; without it, `max_uas_tags`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uas_streams: Option<u32>,
    /// SCSI UNMAP is translated to ATA DATA SET MANAGEMENT (TRIM).
    pub unmap_to_trim: bool,
    /// Queued commands are passed to the drive with NCQ.
    pub uses_ncq: bool,
    /// NCQ tags the bridge uses (1..=32).
    pub ncq_depth: u32,
    /// Internal data path rate between SATA and USB.
    pub data_rate_mb_s: u64,
    /// Data moves through the bridge in pieces of this size (store and forward per piece).
    pub forward_chunk_bytes: u32,
    /// BOT writes of at most this many bytes are taken whole into the bridge's buffer before
    /// the firmware issues the ATA command (the SATA phase starts after the USB phase); larger
    /// ones, and every write when 0, stream through in `forward_chunk_bytes` pieces.
    #[serde(default)]
    pub bot_write_buffer_bytes: u32,
}

impl BridgeProfile {
    /// Firmware time to parse a command of kind `op` and issue it: its own key when the
    /// profile gives one, else `firmware_command_ns` (always for SYNCHRONIZE CACHE).
    pub fn firmware_ns(&self, op: crate::op::Op) -> u64 {
        use crate::op::Op;
        let own = match op {
            Op::Read => self.firmware_read_ns,
            Op::Write => self.firmware_write_ns,
            Op::Trim => self.firmware_unmap_ns,
            // Translated as any other command (SAT-3: no data, no parameter list).
            Op::Flush => None,
        };
        own.unwrap_or(self.firmware_command_ns)
    }
}

/// One profile file as text, with where it came from.
#[derive(Clone, Debug)]
struct ProfileText {
    origin: String,
    text: String,
}

/// All known profiles: the shipped ones, overridden or extended by a user directory.
#[derive(Clone, Debug, Default)]
pub struct ProfileSet {
    /// category → name → text.
    files: BTreeMap<&'static str, BTreeMap<String, ProfileText>>,
}

fn category_key(category: &str) -> Option<&'static str> {
    CATEGORIES.iter().copied().find(|c| *c == category)
}

impl ProfileSet {
    /// The profiles shipped inside the binary.
    pub fn embedded() -> ProfileSet {
        let mut set = ProfileSet::default();
        for (category, name, text) in crate::profiles::embedded::EMBEDDED_PROFILES {
            set.insert_text(
                category,
                name,
                &format!("embedded:{category}/{name}.toml"),
                text,
            )
            .expect("embedded profile categories are fixed");
        }
        set
    }

    /// Add (or override) one profile from text; `origin` names it in error messages. The
    /// simulator does no file I/O: a caller that reads a profiles directory (the engine's
    /// `load_profiles`) hands each file's text here, under its category and its name (its
    /// path below the category folder, `/`-separated, without `.toml`).
    pub fn insert_text(
        &mut self,
        category: &str,
        name: &str,
        origin: &str,
        text: &str,
    ) -> Result<(), SimError> {
        let key = category_key(category).ok_or_else(|| {
            SimError::profile(
                origin,
                "-",
                format!("unknown profile category `{category}` (expected one of {CATEGORIES:?})"),
            )
        })?;
        self.files.entry(key).or_default().insert(
            name.to_string(),
            ProfileText {
                origin: origin.to_string(),
                text: text.to_string(),
            },
        );
        Ok(())
    }

    /// Names and descriptions of every stack, sorted by name. Stacks whose file does not parse
    /// are listed with the error as description, so a listing never hides a broken file.
    pub fn stacks(&self) -> Vec<(String, String)> {
        let Some(stacks) = self.files.get("stacks") else {
            return Vec::new();
        };
        stacks
            .iter()
            .map(|(name, file)| {
                let description = match parse::<StackFile>(&file.origin, &file.text) {
                    Ok(s) => s.description,
                    Err(e) => format!("(invalid: {e})"),
                };
                (name.clone(), description)
            })
            .collect()
    }

    /// Every stack resolved, so one call reports the first broken file of the set.
    pub fn validate_all(&self) -> Result<(), SimError> {
        for (name, _) in self.stacks() {
            self.resolve(&name)?;
        }
        Ok(())
    }

    fn get(&self, category: &'static str, name: &str) -> Option<&ProfileText> {
        self.files.get(category).and_then(|m| m.get(name))
    }
}
