//! Hardware profiles: the TOML data every simulated layer takes its timing from, their
//! validation, and the profile set (shipped profiles embedded in the binary, plus a user
//! directory that can add or override them).
//!
//! One file per part, named after the part: `profiles/<category>/<name>.toml` with categories
//! `hosts`, `controllers`, `links`, `bridges`, `drives` and `stacks`. A stack names one part of
//! each kind it needs. Every struct denies unknown keys so a typo is an error, not a default.

use crate::error::SimError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Largest UAS tag (tags are 16-bit, UAS 2.0 §6.2.2).
pub const UAS_TAG_MAX: u32 = 65_535;
/// SATA NCQ carries at most 32 tags (SATA 2.6 §13.6).
pub const NCQ_TAGS_MAX: u32 = 32;
/// Logical block size every shipped drive exposes; the SCSI/ATA codecs count in these.
pub const SECTOR_BYTES: u32 = 512;
/// An ATA TRIM range entry counts at most this many sectors (ACS-2 §7.10.3.2).
pub const TRIM_RANGE_SECTORS_MAX: u64 = 65_535;
/// Range entries in one 512-byte DATA SET MANAGEMENT block.
pub const TRIM_RANGES_PER_BLOCK: u64 = 64;
/// Most bytes one ATA READ/WRITE DMA EXT or FPDMA QUEUED command moves: 65536 sectors
/// (ACS-2 §7.22, a count of 0 means 65536).
pub const ATA_TRANSFER_BYTES_MAX: u32 = 65_536 * SECTOR_BYTES;
/// Sectors a 48-bit LBA addresses: the largest drive ATA can reach.
pub const LBA48_SECTORS: u64 = 1 << 48;
/// Longest time one step of one command may take in a profile (a CPU or firmware cost, a
/// transfer set-up, a seek, a command overhead): 1 s. Working hardware takes micro- to
/// milliseconds (and a host gives up on a command after 30 s); more is a typo, and multiplied
/// out over pieces, commands and queues it would overflow the nanosecond clock.
pub const STEP_NS_MAX: u64 = 1_000_000_000;
pub(crate) const STEP_NS_WHY: &str = "one step of one command takes at most 1 s";
/// Longest cost per KiB moved or per descriptor: 1 ms (a host maps pages at GB/s).
pub const UNIT_COST_NS_MAX: u64 = 1_000_000;
const UNIT_COST_NS_WHY: &str = "a cost per KiB or per descriptor is at most 1 ms";
/// Fastest data rate a profile may give, in MB/s (100 GB/s); the slowest is 1 MB/s.
pub const RATE_MB_S_MAX: u64 = 100_000;
pub(crate) const RATE_MB_S_WHY: &str = "a data rate is 1 MB/s to 100 GB/s";
/// Slowest and fastest link signalling rates, in bits per second (1 Mb/s, 100 Gb/s).
pub const LINK_RATE_BPS_MIN: u64 = 1_000_000;
pub const LINK_RATE_BPS_MAX: u64 = 100_000_000_000;
/// Largest bytes one controller descriptor covers (an AHCI PRD entry: 4 MiB).
pub const DESCRIPTOR_BYTES_MAX: u32 = 4 << 20;
/// Most units a simple drive model works on at once.
pub const PARALLEL_UNITS_MAX: u32 = 1024;

/// Why a drive of `bytes` is beyond what ATA addresses, if it is.
pub(crate) fn capacity_out_of_range(bytes: u64) -> Option<String> {
    let max = LBA48_SECTORS * u64::from(SECTOR_BYTES);
    (bytes > max).then(|| {
        format!("must be at most {max} bytes, got {bytes} (a 48-bit LBA addresses 2^48 sectors)")
    })
}

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
    /// xHCI only: bulk streams supported (needed by UAS at SuperSpeed).
    #[serde(default)]
    pub supports_streams: bool,
    /// xHCI only: streams per endpoint (bounds UAS tags at SuperSpeed).
    #[serde(default)]
    pub max_streams: u32,
    /// Host CPU time per completion interrupt.
    pub interrupt_cpu_ns: u64,
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
    /// profile gives one, else `firmware_command_ns`.
    pub fn firmware_ns(&self, op: crate::command::Op) -> u64 {
        use crate::command::Op;
        let own = match op {
            Op::Read => self.firmware_read_ns,
            Op::Write => self.firmware_write_ns,
            Op::Trim => self.firmware_unmap_ns,
        };
        own.unwrap_or(self.firmware_command_ns)
    }
}

/// Storage medium of the simple drive model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Medium {
    Ssd,
    Hdd,
}

/// First drive model: fixed per-command cost plus media rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimpleDriveProfile {
    pub description: String,
    pub medium: Medium,
    pub capacity_bytes: u64,
    /// Commands the drive works on at once (SSD: channels × dies; HDD: 1).
    pub parallel_units: u32,
    /// NCQ depth the drive advertises (1 = no NCQ).
    pub queue_depth: u32,
    pub read_command_ns: u64,
    pub write_command_ns: u64,
    /// Aggregate media rate shared by all units.
    pub read_rate_mb_s: u64,
    pub write_rate_mb_s: u64,
    /// HDD: seek plus rotational latency when a command does not continue the previous one.
    #[serde(default)]
    pub random_access_ns: u64,
    /// Uniform random extra latency per command, 0..=this (seeded).
    #[serde(default)]
    pub latency_jitter_ns: u64,
    /// Data leaves the media in pieces of this size (NAND page, HDD buffer segment).
    pub transfer_unit_bytes: u32,
    /// Time to process a TRIM command.
    pub trim_command_ns: u64,
}

/// A drive profile file: the `model` key picks the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case")]
pub enum DriveProfile {
    Simple(SimpleDriveProfile),
    Ssd(crate::drive::ssd::SsdProfile),
    Hdd(crate::drive::hdd::HddProfile),
}

impl DriveProfile {
    pub fn description(&self) -> &str {
        match self {
            DriveProfile::Simple(p) => &p.description,
            DriveProfile::Ssd(p) => &p.description,
            DriveProfile::Hdd(p) => &p.description,
        }
    }
}

/// A stack file: which part of each kind makes up the stack.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackFile {
    pub description: String,
    pub host: String,
    pub controller: String,
    #[serde(default)]
    pub usb_link: Option<String>,
    #[serde(default)]
    pub bridge: Option<String>,
    pub sata_link: String,
    pub drive: String,
    /// Per-part key overrides, by role (`host`, `controller`, `usb_link`, `bridge`,
    /// `sata_link`, `drive`): the same chip in another slot is the same profile with, e.g.,
    /// `[overrides.controller.pcie] generation = 1`, so its shared parameters cannot drift.
    #[serde(default)]
    pub overrides: BTreeMap<String, toml::Table>,
}

/// The roles a stack's `[overrides]` may name.
pub const STACK_ROLES: [&str; 6] = [
    "host",
    "controller",
    "usb_link",
    "bridge",
    "sata_link",
    "drive",
];

/// A stack with every part resolved and validated: everything a `Simulator` needs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StackSpec {
    pub name: String,
    pub description: String,
    pub host_name: String,
    pub host: HostProfile,
    pub controller_name: String,
    pub controller: ControllerProfile,
    pub usb_link_name: Option<String>,
    pub usb_link: Option<LinkProfile>,
    pub bridge_name: Option<String>,
    pub bridge: Option<BridgeProfile>,
    pub sata_link_name: String,
    pub sata_link: SataLinkProfile,
    pub drive_name: String,
    pub drive: DriveProfile,
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

/// Every `.toml` file under `dir`, recursively (a category's subfolders group related parts).
fn collect_toml_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<(), SimError> {
    let io_err = |e: std::io::Error| SimError::Io {
        path: dir.display().to_string(),
        reason: e.to_string(),
    };
    for entry in std::fs::read_dir(dir).map_err(io_err)? {
        let path = entry.map_err(io_err)?.path();
        if path.is_dir() {
            collect_toml_files(&path, out)?;
        } else if path.extension().is_some_and(|x| x == "toml") {
            out.push(path);
        }
    }
    Ok(())
}

/// A profile's name: its path below the category folder, without `.toml`, `/`-separated.
fn profile_name(category_dir: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(category_dir).unwrap_or(path);
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.last_mut() {
        if let Some(stem) = last.strip_suffix(".toml") {
            *last = stem.to_string();
        }
    }
    parts.join("/")
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

    /// The shipped profiles plus every `<category>/<name>.toml` under `dir` (which may override).
    /// A missing directory is not an error; an unreadable file is.
    pub fn embedded_with_dir(dir: &Path) -> Result<ProfileSet, SimError> {
        let mut set = ProfileSet::embedded();
        set.add_dir(dir)?;
        Ok(set)
    }

    /// Add (or override with) every profile file under `dir`. Files may sit in subfolders of a
    /// category: `stacks/lucidport/x25e-uas-gen2.toml` is the stack `lucidport/x25e-uas-gen2`.
    pub fn add_dir(&mut self, dir: &Path) -> Result<(), SimError> {
        if !dir.is_dir() {
            return Ok(());
        }
        for category in CATEGORIES {
            let sub = dir.join(category);
            if !sub.is_dir() {
                continue;
            }
            let mut paths = Vec::new();
            collect_toml_files(&sub, &mut paths)?;
            paths.sort();
            for path in paths {
                let text = std::fs::read_to_string(&path).map_err(|e| SimError::Io {
                    path: path.display().to_string(),
                    reason: e.to_string(),
                })?;
                let name = profile_name(&sub, &path);
                self.insert_text(category, &name, &path.display().to_string(), &text)?;
            }
        }
        Ok(())
    }

    /// Add (or override) one profile from text; `origin` names it in error messages.
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

    /// Resolve a stack by name: parse and validate it and every part it names.
    pub fn resolve(&self, stack_name: &str) -> Result<StackSpec, SimError> {
        let file = self
            .get("stacks", stack_name)
            .ok_or_else(|| SimError::UnknownStack {
                name: stack_name.to_string(),
                known: self
                    .stacks()
                    .into_iter()
                    .map(|(n, _)| n)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        let origin = file.origin.as_str();
        let stack: StackFile = parse(origin, &file.text)?;
        if let Some(role) = stack
            .overrides
            .keys()
            .find(|r| !STACK_ROLES.contains(&r.as_str()))
        {
            return Err(SimError::profile(
                origin,
                &format!("overrides.{role}"),
                format!("unknown part; overrides name one of {STACK_ROLES:?}"),
            ));
        }
        let part = |category: &'static str, key: &'static str, name: &str| {
            self.get(category, name)
                .map(|f| PartText {
                    origin: f.origin.as_str(),
                    text: f.text.as_str(),
                    overrides: stack.overrides.get(key),
                    stack_origin: origin,
                    role: key,
                })
                .ok_or_else(|| {
                    SimError::profile(origin, key, format!("no {category} profile named `{name}`"))
                })
        };

        let host: HostProfile = part("hosts", "host", &stack.host)?.load(validate_host)?;
        let controller: ControllerProfile =
            part("controllers", "controller", &stack.controller)?.load(validate_controller)?;
        let usb_link = match &stack.usb_link {
            Some(name) => {
                let link: LinkProfile = part("links", "usb_link", name)?.load(validate_link)?;
                if matches!(link, LinkProfile::Sata(_)) {
                    return Err(SimError::profile(
                        origin,
                        "usb_link",
                        format!("`{name}` is a SATA link, not a USB link"),
                    ));
                }
                Some(link)
            }
            None => None,
        };
        let bridge = match &stack.bridge {
            Some(name) => Some(part("bridges", "bridge", name)?.load(validate_bridge)?),
            None => None,
        };
        let sata_link = match part("links", "sata_link", &stack.sata_link)?.load(validate_link)? {
            LinkProfile::Sata(p) => p,
            _ => {
                return Err(SimError::profile(
                    origin,
                    "sata_link",
                    format!("`{}` is not a SATA link", stack.sata_link),
                ))
            }
        };
        let drive: DriveProfile = part("drives", "drive", &stack.drive)?.load(validate_drive)?;

        // The parts must fit together.
        let usb = matches!(host.driver, DriverKind::Bot | DriverKind::Uas);
        if usb {
            if controller.kind != ControllerKind::Xhci {
                return Err(SimError::profile(
                    origin,
                    "controller",
                    "a USB driver (bot/uas) needs an xhci controller",
                ));
            }
            if usb_link.is_none() {
                return Err(SimError::profile(
                    origin,
                    "usb_link",
                    "missing: a USB driver (bot/uas) needs a usb_link",
                ));
            }
            if bridge.is_none() {
                return Err(SimError::profile(
                    origin,
                    "bridge",
                    "missing: a USB driver (bot/uas) needs a bridge",
                ));
            }
        } else {
            if controller.kind != ControllerKind::Ahci {
                return Err(SimError::profile(
                    origin,
                    "controller",
                    "a SATA driver needs an ahci controller",
                ));
            }
            if stack.usb_link.is_some() || stack.bridge.is_some() {
                return Err(SimError::profile(
                    origin,
                    if stack.usb_link.is_some() {
                        "usb_link"
                    } else {
                        "bridge"
                    },
                    "a direct SATA stack has no USB link or bridge",
                ));
            }
        }

        Ok(StackSpec {
            name: stack_name.to_string(),
            description: stack.description,
            host_name: stack.host,
            host,
            controller_name: stack.controller,
            controller,
            usb_link_name: stack.usb_link,
            usb_link,
            bridge_name: stack.bridge,
            bridge,
            sata_link_name: stack.sata_link,
            sata_link,
            drive_name: stack.drive,
            drive,
        })
    }
}

/// One part as a stack uses it: its file, plus the stack's overrides for its role.
struct PartText<'a> {
    origin: &'a str,
    text: &'a str,
    overrides: Option<&'a toml::Table>,
    stack_origin: &'a str,
    role: &'a str,
}

impl PartText<'_> {
    /// The part's profile with the stack's overrides merged in (tables key by key, values
    /// replaced), validated. A mistake the overrides make names the stack file and
    /// `overrides.ROLE.KEY`; a mistake of the part file itself names that file.
    fn load<T: ProfileFile>(
        &self,
        validate: fn(&str, &T) -> Result<(), SimError>,
    ) -> Result<T, SimError> {
        let Some(overrides) = self.overrides else {
            let part: T = parse(self.origin, self.text)?;
            validate(self.origin, &part)?;
            return Ok(part);
        };
        let mut table = parse_table(self.origin, self.text)?;
        merge_table(&mut table, overrides);
        let merged = match T::from_table(table) {
            Ok(merged) => merged,
            Err(e) => {
                if !e.key.as_deref().is_some_and(|k| has_path(overrides, k)) {
                    // The part's own file may be at fault: then report it as alone.
                    parse::<T>(self.origin, self.text)?;
                }
                return Err(self.override_error(overrides, e.key.as_deref(), &e.message));
            }
        };
        match validate(self.origin, &merged) {
            Ok(()) => Ok(merged),
            Err(SimError::Profile { key, reason, .. }) => {
                // Without the overrides the part may already be wrong: then its file is.
                let plain: T = parse(self.origin, self.text)?;
                validate(self.origin, &plain)?;
                Err(self.override_error(overrides, Some(&key), &reason))
            }
            Err(other) => Err(other),
        }
    }

    /// An error the stack's overrides cause: `overrides.ROLE.KEY` when the overrides set the
    /// key, else `overrides.ROLE` with the key in the reason (a limit involving several keys).
    fn override_error(&self, overrides: &toml::Table, key: Option<&str>, reason: &str) -> SimError {
        let (key, reason) = match key {
            Some(k) if has_path(overrides, k) => {
                (format!("overrides.{}.{k}", self.role), reason.to_string())
            }
            Some(k) => (format!("overrides.{}", self.role), format!("{k}: {reason}")),
            None => (format!("overrides.{}", self.role), reason.to_string()),
        };
        SimError::profile(
            self.stack_origin,
            &key,
            format!("{reason} (applied to {})", self.origin),
        )
    }
}

/// Whether the dotted `path` names a value in `table`.
fn has_path(table: &toml::Table, path: &str) -> bool {
    match path.split_once('.') {
        Some((head, rest)) => table
            .get(head)
            .and_then(|v| v.as_table())
            .is_some_and(|t| has_path(t, rest)),
        None => table.contains_key(path),
    }
}

/// Merges `overrides` into `base`: nested tables merge, every other value replaces.
fn merge_table(base: &mut toml::Table, overrides: &toml::Table) {
    for (key, value) in overrides {
        match (base.get_mut(key), value) {
            (Some(toml::Value::Table(inner)), toml::Value::Table(over)) => merge_table(inner, over),
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

/// A profile file's type, built from its TOML table. Tagged files (links by `kind`, drives by
/// `model`) pick their variant first, so an error inside it still names its key (serde's
/// internally tagged enums buffer the table and lose the key and the line).
trait ProfileFile: Sized {
    fn from_table(table: toml::Table) -> Result<Self, TableError>;
}

macro_rules! untagged_profile_file {
    ($($t:ty),*) => {$(
        impl ProfileFile for $t {
            fn from_table(table: toml::Table) -> Result<Self, TableError> {
                Ok(<$t>::deserialize(toml::Value::Table(table))?)
            }
        }
    )*};
}

untagged_profile_file!(HostProfile, ControllerProfile, BridgeProfile, StackFile);

/// Takes the tag key out of `table`: the variant's name, which must be one of `variants`.
fn take_tag(
    table: &mut toml::Table,
    tag: &'static str,
    variants: &'static [&'static str],
) -> Result<String, TableError> {
    let wrong = |what: String| TableError {
        key: Some(tag.to_string()),
        message: format!(
            "{what}, expected one of {}",
            variants
                .iter()
                .map(|v| format!("`{v}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    match table.remove(tag) {
        None => Err(TableError {
            key: Some(tag.to_string()),
            message: format!("missing field `{tag}`"),
        }),
        Some(toml::Value::String(s)) if variants.contains(&s.as_str()) => Ok(s),
        Some(toml::Value::String(s)) => Err(wrong(format!("unknown variant `{s}`"))),
        Some(other) => Err(wrong(format!("invalid type: {}", other.type_str()))),
    }
}

impl ProfileFile for LinkProfile {
    fn from_table(mut table: toml::Table) -> Result<Self, TableError> {
        let kind = take_tag(&mut table, "kind", &["usb2-hs", "usb3-ss", "sata"])?;
        let rest = toml::Value::Table(table);
        Ok(match kind.as_str() {
            "usb2-hs" => LinkProfile::Usb2Hs(Usb2LinkProfile::deserialize(rest)?),
            "usb3-ss" => LinkProfile::Usb3Ss(Usb3LinkProfile::deserialize(rest)?),
            _ => LinkProfile::Sata(SataLinkProfile::deserialize(rest)?),
        })
    }
}

impl ProfileFile for DriveProfile {
    fn from_table(mut table: toml::Table) -> Result<Self, TableError> {
        let model = take_tag(&mut table, "model", &["simple", "ssd", "hdd"])?;
        let rest = toml::Value::Table(table);
        Ok(match model.as_str() {
            "simple" => DriveProfile::Simple(SimpleDriveProfile::deserialize(rest)?),
            "ssd" => DriveProfile::Ssd(crate::drive::ssd::SsdProfile::deserialize(rest)?),
            _ => DriveProfile::Hdd(crate::drive::hdd::HddProfile::deserialize(rest)?),
        })
    }
}

/// A deserialisation error of a profile table: the dotted key it concerns (when known) and
/// what is wrong, in one line.
struct TableError {
    key: Option<String>,
    message: String,
}

impl From<toml::de::Error> for TableError {
    fn from(e: toml::de::Error) -> TableError {
        // Without a source span toml names the key on a line of its own: "in `pcie.lanes`".
        let shown = e.to_string();
        let key = shown
            .lines()
            .filter_map(|l| l.strip_prefix("in `")?.strip_suffix('`'))
            .next_back()
            .map(str::to_string)
            .or_else(|| {
                // Unknown and missing fields name themselves in the message.
                ["unknown field `", "missing field `"].iter().find_map(|p| {
                    let rest = e.message().strip_prefix(p)?;
                    Some(rest[..rest.find('`')?].to_string())
                })
            });
        TableError {
            key,
            message: one_line(e.message()),
        }
    }
}

/// `message` on one line, with the hundreds of digits serde prints for a float such as 1e308
/// written in exponent form.
fn one_line(message: &str) -> String {
    let mut out = String::new();
    for (i, piece) in message.replace('\n', " ").split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        match piece.parse::<f64>() {
            Ok(v) if i % 2 == 1 && piece.len() > 24 => out += &format!("{v:e}"),
            _ => out += piece,
        }
    }
    out
}

/// The dotted key each line of `text` sets (None for headers, comments and blank lines),
/// following `[table]` headers.
fn keys_by_line(text: &str) -> impl Iterator<Item = Option<String>> + '_ {
    let mut table = String::new();
    text.lines().map(move |line| {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            table = header
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            return None;
        }
        if line.starts_with('#') {
            return None;
        }
        let (k, _) = line.split_once('=')?;
        let k = k.trim().trim_matches('"');
        Some(if table.is_empty() {
            k.to_string()
        } else {
            format!("{table}.{k}")
        })
    })
}

/// The line (1-based) where `text` sets the dotted `key`.
fn line_of_key(text: &str, key: &str) -> Option<usize> {
    keys_by_line(text)
        .position(|k| k.as_deref() == Some(key))
        .map(|i| i + 1)
}

/// The TOML table of a profile file; a syntax error names its line (and key, when the line
/// sets one).
fn parse_table(origin: &str, text: &str) -> Result<toml::Table, SimError> {
    toml::from_str::<toml::Table>(text).map_err(|e| {
        let reason = one_line(e.message());
        let Some(span) = e.span() else {
            return SimError::profile(origin, "-", reason);
        };
        let start = span.start.min(text.len());
        let line = text[..start].matches('\n').count() + 1;
        // The key whose value the error is in, when the line before the error sets one.
        let key = text[..start]
            .rsplit('\n')
            .next()
            .filter(|before| before.contains('='))
            .and_then(|_| keys_by_line(text).nth(line - 1).flatten())
            .filter(|k| !k.is_empty());
        match key {
            Some(k) => SimError::profile(origin, &k, format!("{reason} (line {line})")),
            None => SimError::profile(origin, &format!("line {line}"), reason),
        }
    })
}

/// Parse one profile file, turning TOML errors into one line naming file, key and line.
fn parse<T: ProfileFile>(origin: &str, text: &str) -> Result<T, SimError> {
    let table = parse_table(origin, text)?;
    T::from_table(table).map_err(|e| match e.key {
        Some(key) => {
            let reason = match line_of_key(text, &key) {
                Some(line) => format!("{} (line {line})", e.message),
                None => e.message,
            };
            SimError::profile(origin, &key, reason)
        }
        None => SimError::profile(origin, "-", e.message),
    })
}

fn positive(origin: &str, key: &str, value: u64) -> Result<(), SimError> {
    if value == 0 {
        return Err(SimError::profile(origin, key, "must be greater than zero"));
    }
    Ok(())
}

/// Why `value` is outside `min..=max`, if it is: the range, the value, and `why` (the physical
/// limit behind the range).
pub(crate) fn out_of_range(value: u64, min: u64, max: u64, why: &str) -> Option<String> {
    (!(min..=max).contains(&value)).then(|| format!("must be {min}..={max}, got {value} ({why})"))
}

/// `key` must lie in `min..=max` (see [`out_of_range`]).
fn in_range(
    origin: &str,
    key: &str,
    value: u64,
    min: u64,
    max: u64,
    why: &str,
) -> Result<(), SimError> {
    match out_of_range(value, min, max, why) {
        Some(reason) => Err(SimError::profile(origin, key, reason)),
        None => Ok(()),
    }
}

/// A time of one step of one command (see [`STEP_NS_MAX`]).
fn step_ns(origin: &str, key: &str, value: u64) -> Result<(), SimError> {
    in_range(origin, key, value, 0, STEP_NS_MAX, STEP_NS_WHY)
}

/// A cost per KiB or per descriptor (see [`UNIT_COST_NS_MAX`]).
fn unit_cost_ns(origin: &str, key: &str, value: u64) -> Result<(), SimError> {
    in_range(origin, key, value, 0, UNIT_COST_NS_MAX, UNIT_COST_NS_WHY)
}

/// A data rate in MB/s (see [`RATE_MB_S_MAX`]).
fn rate_mb_s(origin: &str, key: &str, value: u64) -> Result<(), SimError> {
    positive(origin, key, value)?;
    in_range(origin, key, value, 1, RATE_MB_S_MAX, RATE_MB_S_WHY)
}

/// A link's signalling rate in bits per second (see [`LINK_RATE_BPS_MIN`]).
fn rate_bps(origin: &str, key: &str, value: u64) -> Result<(), SimError> {
    positive(origin, key, value)?;
    in_range(
        origin,
        key,
        value,
        LINK_RATE_BPS_MIN,
        LINK_RATE_BPS_MAX,
        "a link signals at 1 Mb/s to 100 Gb/s",
    )
}

/// Line bits per data byte of a link's encoding.
fn line_bits(origin: &str, key: &str, value: u32) -> Result<(), SimError> {
    in_range(
        origin,
        key,
        value.into(),
        8,
        16,
        "a line code spends 8 to 16 bits per byte (8b/10b: 10)",
    )
}

/// A size that counts bytes moved at once: at least one sector, at most one ATA command.
fn transfer_size(origin: &str, key: &str, value: u32, why: &str) -> Result<(), SimError> {
    in_range(
        origin,
        key,
        value.into(),
        SECTOR_BYTES.into(),
        ATA_TRANSFER_BYTES_MAX.into(),
        why,
    )
}

fn fraction(origin: &str, key: &str, value: f64, max: f64) -> Result<(), SimError> {
    if !(0.0..max).contains(&value) {
        return Err(SimError::profile(
            origin,
            key,
            format!("must be at least 0 and below {max}, got {value}"),
        ));
    }
    Ok(())
}

/// `max_transfer_bytes` and its High-Speed variant: whole sectors, at most one ATA command.
fn max_transfer(origin: &str, key: &str, value: u32) -> Result<(), SimError> {
    if value == 0 || !value.is_multiple_of(SECTOR_BYTES) || value > ATA_TRANSFER_BYTES_MAX {
        return Err(SimError::profile(
            origin,
            key,
            format!(
                "must be a multiple of {SECTOR_BYTES} in {SECTOR_BYTES}..={ATA_TRANSFER_BYTES_MAX}, \
                 got {value} (an ATA command moves at most 65536 sectors)"
            ),
        ));
    }
    Ok(())
}

fn validate_host(origin: &str, h: &HostProfile) -> Result<(), SimError> {
    max_transfer(origin, "max_transfer_bytes", h.max_transfer_bytes)?;
    if let Some(hs) = h.max_transfer_bytes_high_speed {
        max_transfer(origin, "max_transfer_bytes_high_speed", hs)?;
    }
    let limit = match h.driver {
        DriverKind::Bot | DriverKind::SataIde => 1,
        DriverKind::Uas => UAS_TAG_MAX,
        DriverKind::SataAhci => NCQ_TAGS_MAX,
    };
    if h.max_outstanding_commands == 0 || h.max_outstanding_commands > limit {
        return Err(SimError::profile(
            origin,
            "max_outstanding_commands",
            format!(
                "{} is impossible for driver {:?}: must be 1..={limit}",
                h.max_outstanding_commands, h.driver
            ),
        ));
    }
    if h.cpu_threads == 0 {
        return Err(SimError::profile(
            origin,
            "cpu_threads",
            "0 is impossible: a host has at least one hardware thread",
        ));
    }
    if h.chains_transfers && h.driver != DriverKind::Bot {
        return Err(SimError::profile(
            origin,
            "chains_transfers",
            "only a BOT driver has CBW, data and CSW transfers to chain",
        ));
    }
    if h.phase_cpu_ns > 0 && !h.chains_transfers {
        return Err(SimError::profile(
            origin,
            "phase_cpu_ns",
            "is the cost of a hand-off between chained transfers: needs chains_transfers = true",
        ));
    }
    let trim_max = TRIM_RANGE_SECTORS_MAX * TRIM_RANGES_PER_BLOCK * u64::from(SECTOR_BYTES);
    if h.max_trim_bytes == 0
        || !h.max_trim_bytes.is_multiple_of(u64::from(SECTOR_BYTES))
        || h.max_trim_bytes > trim_max
    {
        return Err(SimError::profile(
            origin,
            "max_trim_bytes",
            format!("must be a multiple of {SECTOR_BYTES} in 1..={trim_max} (one DSM block)"),
        ));
    }
    step_ns(origin, "submit_cpu_ns", h.submit_cpu_ns)?;
    step_ns(origin, "complete_cpu_ns", h.complete_cpu_ns)?;
    step_ns(origin, "phase_cpu_ns", h.phase_cpu_ns)?;
    unit_cost_ns(origin, "cpu_ns_per_kib", h.cpu_ns_per_kib)?;
    Ok(())
}

fn validate_controller(origin: &str, c: &ControllerProfile) -> Result<(), SimError> {
    in_range(
        origin,
        "max_descriptor_bytes",
        c.max_descriptor_bytes.into(),
        SECTOR_BYTES.into(),
        DESCRIPTOR_BYTES_MAX.into(),
        "a descriptor covers at least one sector; an AHCI PRD entry at most 4 MiB",
    )?;
    step_ns(origin, "per_transfer_ns", c.per_transfer_ns)?;
    unit_cost_ns(origin, "per_descriptor_ns", c.per_descriptor_ns)?;
    step_ns(origin, "interrupt_cpu_ns", c.interrupt_cpu_ns)?;
    if c.kind == ControllerKind::Xhci && c.supports_streams && c.max_streams == 0 {
        return Err(SimError::profile(
            origin,
            "max_streams",
            "must be greater than zero when supports_streams = true",
        ));
    }
    if c.max_streams > UAS_TAG_MAX {
        return Err(SimError::profile(
            origin,
            "max_streams",
            format!("stream ids are 16-bit: at most {UAS_TAG_MAX}"),
        ));
    }
    let p = &c.pcie;
    if !(1..=3).contains(&p.generation) {
        return Err(SimError::profile(
            origin,
            "pcie.generation",
            "must be 1, 2 or 3",
        ));
    }
    if ![1, 2, 4, 8, 16].contains(&p.lanes) {
        return Err(SimError::profile(
            origin,
            "pcie.lanes",
            "must be 1, 2, 4, 8 or 16",
        ));
    }
    if !p.max_payload_bytes.is_power_of_two() || !(128..=4096).contains(&p.max_payload_bytes) {
        return Err(SimError::profile(
            origin,
            "pcie.max_payload_bytes",
            "must be a power of two in 128..=4096",
        ));
    }
    in_range(
        origin,
        "pcie.tlp_overhead_bytes",
        p.tlp_overhead_bytes.into(),
        0,
        64,
        "framing, sequence number, header, ECRC and LCRC of a TLP take at most 64 bytes",
    )?;
    fraction(
        origin,
        "pcie.dllp_overhead_fraction",
        p.dllp_overhead_fraction,
        0.5,
    )?;
    if !p.max_read_request_bytes.is_power_of_two()
        || !(128..=4096).contains(&p.max_read_request_bytes)
    {
        return Err(SimError::profile(
            origin,
            "pcie.max_read_request_bytes",
            "must be a power of two in 128..=4096",
        ));
    }
    if ![64, 128].contains(&p.read_completion_boundary_bytes) {
        return Err(SimError::profile(
            origin,
            "pcie.read_completion_boundary_bytes",
            "must be 64 or 128 (a root complex's read completion boundary)",
        ));
    }
    in_range(
        origin,
        "pcie.outstanding_read_requests",
        p.outstanding_read_requests.into(),
        1,
        256,
        "tags: 32 without the Extended Tag field, 256 with it",
    )?;
    in_range(
        origin,
        "pcie.read_latency_ns",
        p.read_latency_ns,
        0,
        100_000,
        "a host answers a read in about a microsecond; 100 us is far beyond any",
    )?;
    Ok(())
}

fn validate_link(origin: &str, link: &LinkProfile) -> Result<(), SimError> {
    match link {
        LinkProfile::Usb2Hs(p) => {
            rate_bps(origin, "bit_rate_bps", p.bit_rate_bps)?;
            in_range(
                origin,
                "max_packet_bytes",
                p.max_packet_bytes.into(),
                8,
                512,
                "USB 2.0 bulk packets carry 8 to 512 bytes",
            )?;
            in_range(
                origin,
                "microframe_ns",
                p.microframe_ns,
                1,
                1_000_000,
                "a High-Speed microframe is 125 us, a Full-Speed frame 1 ms",
            )?;
            in_range(
                origin,
                "max_bulk_packets_per_microframe",
                p.max_bulk_packets_per_microframe.into(),
                1,
                13,
                "USB 2.0 fits at most 13 bulk packets in a microframe",
            )?;
            in_range(
                origin,
                "packet_overhead_bits",
                p.packet_overhead_bits.into(),
                0,
                4096,
                "token, framing, handshake and turnaround take at most 4096 bits",
            )?;
            step_ns(origin, "transfer_setup_ns", p.transfer_setup_ns)?;
            fraction(
                origin,
                "periodic_reserved_fraction",
                p.periodic_reserved_fraction,
                0.8,
            )?;
        }
        LinkProfile::Usb3Ss(p) => {
            rate_bps(origin, "signal_rate_bps", p.signal_rate_bps)?;
            line_bits(origin, "line_bits_per_byte", p.line_bits_per_byte)?;
            in_range(
                origin,
                "max_packet_bytes",
                p.max_packet_bytes.into(),
                8,
                1024,
                "USB 3.0 bulk packets carry 8 to 1024 bytes",
            )?;
            in_range(
                origin,
                "data_packet_overhead_bytes",
                p.data_packet_overhead_bytes.into(),
                0,
                256,
                "header and framing of a data packet take at most 256 bytes",
            )?;
            step_ns(origin, "burst_gap_ns", p.burst_gap_ns)?;
            step_ns(origin, "transfer_setup_ns", p.transfer_setup_ns)?;
            if !(1..=16).contains(&p.max_burst_packets) {
                return Err(SimError::profile(
                    origin,
                    "max_burst_packets",
                    "USB 3.0 bursts are 1..=16 packets",
                ));
            }
            fraction(
                origin,
                "skp_overhead_fraction",
                p.skp_overhead_fraction,
                0.5,
            )?;
        }
        LinkProfile::Sata(p) => {
            rate_bps(origin, "line_rate_bps", p.line_rate_bps)?;
            line_bits(origin, "line_bits_per_byte", p.line_bits_per_byte)?;
            in_range(
                origin,
                "fis_framing_bytes",
                p.fis_framing_bytes.into(),
                0,
                256,
                "SOF, header, CRC and EOF of a FIS take at most 256 bytes",
            )?;
            in_range(
                origin,
                "fis_handshake_dwords",
                p.fis_handshake_dwords.into(),
                0,
                256,
                "the primitives around a FIS take at most 256 dwords",
            )?;
            positive(origin, "max_data_fis_bytes", p.max_data_fis_bytes.into())?;
            if p.max_data_fis_bytes > 8192 || !p.max_data_fis_bytes.is_multiple_of(4) {
                return Err(SimError::profile(
                    origin,
                    "max_data_fis_bytes",
                    "a Data FIS carries at most 8192 bytes, in whole dwords",
                ));
            }
        }
    }
    Ok(())
}

fn validate_bridge(origin: &str, b: &BridgeProfile) -> Result<(), SimError> {
    rate_mb_s(origin, "data_rate_mb_s", b.data_rate_mb_s)?;
    transfer_size(
        origin,
        "forward_chunk_bytes",
        b.forward_chunk_bytes,
        "a piece is at least one sector and at most one ATA command",
    )?;
    step_ns(origin, "firmware_command_ns", b.firmware_command_ns)?;
    for (key, value) in [
        ("firmware_read_ns", b.firmware_read_ns),
        ("firmware_write_ns", b.firmware_write_ns),
        ("firmware_unmap_ns", b.firmware_unmap_ns),
    ] {
        step_ns(origin, key, value.unwrap_or(0))?;
    }
    step_ns(origin, "firmware_status_ns", b.firmware_status_ns)?;
    if b.max_uas_tags == 0 || b.max_uas_tags > UAS_TAG_MAX {
        return Err(SimError::profile(
            origin,
            "max_uas_tags",
            format!("UAS tags are 16-bit: must be 1..={UAS_TAG_MAX}"),
        ));
    }
    if b.ncq_depth == 0 || b.ncq_depth > NCQ_TAGS_MAX {
        return Err(SimError::profile(
            origin,
            "ncq_depth",
            format!("NCQ has at most {NCQ_TAGS_MAX} tags: must be 1..={NCQ_TAGS_MAX}"),
        ));
    }
    Ok(())
}

fn validate_drive(origin: &str, d: &DriveProfile) -> Result<(), SimError> {
    match d {
        DriveProfile::Simple(p) => {
            positive(origin, "capacity_bytes", p.capacity_bytes)?;
            if !p.capacity_bytes.is_multiple_of(u64::from(SECTOR_BYTES)) {
                return Err(SimError::profile(
                    origin,
                    "capacity_bytes",
                    format!("must be a multiple of {SECTOR_BYTES}"),
                ));
            }
            if let Some(reason) = capacity_out_of_range(p.capacity_bytes) {
                return Err(SimError::profile(origin, "capacity_bytes", reason));
            }
            in_range(
                origin,
                "parallel_units",
                p.parallel_units.into(),
                1,
                PARALLEL_UNITS_MAX.into(),
                "units working at once: at most the dies of the largest SSD",
            )?;
            rate_mb_s(origin, "read_rate_mb_s", p.read_rate_mb_s)?;
            rate_mb_s(origin, "write_rate_mb_s", p.write_rate_mb_s)?;
            transfer_size(
                origin,
                "transfer_unit_bytes",
                p.transfer_unit_bytes,
                "a piece is at least one sector and at most one ATA command",
            )?;
            step_ns(origin, "read_command_ns", p.read_command_ns)?;
            step_ns(origin, "write_command_ns", p.write_command_ns)?;
            step_ns(origin, "random_access_ns", p.random_access_ns)?;
            step_ns(origin, "latency_jitter_ns", p.latency_jitter_ns)?;
            step_ns(origin, "trim_command_ns", p.trim_command_ns)?;
            if p.queue_depth == 0 || p.queue_depth > NCQ_TAGS_MAX {
                return Err(SimError::profile(
                    origin,
                    "queue_depth",
                    format!("NCQ has at most {NCQ_TAGS_MAX} tags: must be 1..={NCQ_TAGS_MAX}"),
                ));
            }
            if p.medium == Medium::Hdd && p.parallel_units != 1 {
                return Err(SimError::profile(
                    origin,
                    "parallel_units",
                    "an HDD has one actuator: must be 1",
                ));
            }
        }
        DriveProfile::Ssd(p) => crate::drive::ssd::validate(p)
            .map_err(|(key, reason)| SimError::profile(origin, key, reason))?,
        DriveProfile::Hdd(p) => crate::drive::hdd::validate(p)
            .map_err(|(key, reason)| SimError::profile(origin, key, reason))?,
    }
    Ok(())
}
