//! `storlab probe`: what a path really is — the filesystem and mount above it, the block device
//! and driver chain beneath it (sysfs, read-only), and what the device says about itself
//! (SCSI INQUIRY, VPD pages, READ CAPACITY(16), ATA IDENTIFY through SG_IO, read-only).
//!
//! Every fact comes from a file the kernel documents (Documentation/ABI/testing/sysfs-block,
//! sysfs-bus-usb, sysfs-bus-pci, proc(5) for mountinfo) under an injectable [`SysRoot`], so the
//! tests read fixture trees. The device is only asked, never written: SG_IO runs on an
//! `O_RDONLY | O_NONBLOCK` descriptor and sends only commands that transfer data from the device.

pub mod bridges;
pub mod diagnosis;
pub mod mounts;
pub mod query;
pub mod sgio;
pub mod sysfs;
pub mod verdict;

use serde::Serialize;
use std::path::{Path, PathBuf};

pub use sysfs::SysRoot;

/// Why a probe could not start (bad input: the path names nothing probe can look at).
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("{path}: {source}")]
    Stat {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: not a file, directory or block device")]
    NotProbeable { path: String },
    #[error("{path}: no block device named {name} under {sys}")]
    NoSuchBlockDevice {
        path: String,
        name: String,
        sys: String,
    },
    /// A `slaves/` link leads back to a device above it, or nests deeper than a kernel does:
    /// a damaged or hand-made `--sys-root`, never a live sysfs.
    #[error(
        "{sys}: slaves/ of {device} leads back to a device above it or nests too deep \
         ({member}): not a sysfs tree a kernel makes"
    )]
    SlavesCycle {
        sys: String,
        device: String,
        member: String,
    },
    #[error("{sys}: cannot list block devices: {source}")]
    ListBlock { sys: String, source: std::io::Error },
}

/// Where a probe looks: the sysfs root, the mount table and whether to ask the device itself.
#[derive(Clone, Debug)]
pub struct Prober {
    pub sys: SysRoot,
    /// proc(5) mountinfo of the calling process.
    pub mountinfo_path: PathBuf,
    /// Send SCSI/ATA queries through SG_IO to the device node (false for fixture trees).
    pub query_device: bool,
}

impl Default for Prober {
    fn default() -> Self {
        Prober {
            sys: SysRoot::default(),
            mountinfo_path: PathBuf::from("/proc/self/mountinfo"),
            query_device: true,
        }
    }
}

/// Everything one probe found. Serialised as the `--output-format json` schema
/// (docs/probe.md); every field that the kernel or device did not give is `null`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProbeReport {
    /// The path as given.
    pub path: String,
    /// For a file or directory: the mount it lives on.
    pub file: Option<FileFacts>,
    /// The block device (the whole disk when the path is a partition or a file on one).
    pub device: Option<DeviceFacts>,
    /// What the facts imply for a measurement, one line each.
    pub diagnosis: Vec<String>,
}

/// The mount a file or directory lives on (proc(5) mountinfo).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct FileFacts {
    pub fs_type: String,
    pub mount_point: String,
    /// Per-mount options (field 6) then superblock options (the last field).
    pub mount_options: String,
    pub super_options: String,
    /// The mount source (field after the filesystem type), e.g. `/dev/vda`.
    pub source: String,
    /// `major:minor` of the filesystem's device (st_dev).
    pub device_number: String,
}

/// One node of the device path, disk upwards, as sysfs shows it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ChainLink {
    /// The sysfs directory name (`0:0:0:0`, `2-1:1.0`, `0000:00:14.0`).
    pub node: String,
    /// The bus or class (`scsi`, `usb`, `pci`, `virtio`, `nvme`).
    pub subsystem: Option<String>,
    /// The driver bound to it (`sd`, `uas`, `usb-storage`, `xhci_hcd`, `ahci`, `nvme`).
    pub driver: Option<String>,
}

/// The USB device a disk sits behind (Documentation/ABI/testing/sysfs-bus-usb).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UsbFacts {
    /// The USB device's sysfs name (`2-1`).
    pub node: String,
    /// Negotiated link speed in Mb/s (the device's `speed`: 1.5, 12, 480, 5000, 10000, 20000).
    pub speed_mbps: Option<f64>,
    pub vendor_id: Option<u16>,
    pub product_id: Option<u16>,
    /// bcdDevice, the firmware release as the device reports it.
    pub bcd_device: Option<u16>,
    pub manufacturer: Option<String>,
    pub product: Option<String>,
    /// The bridge chip idVendor:idProduct identifies, from the cited table in `bridges.rs`.
    pub bridge: Option<bridges::Bridge>,
    /// bInterfaceProtocol of the mass-storage interface (0x50 BOT, 0x62 UAS).
    pub interface_protocol: Option<u8>,
    /// `BOT` or `UAS` (or `other`) from that protocol byte.
    pub protocol: Option<String>,
}

/// A PCIe link as the PCI device reports it (Documentation/ABI/testing/sysfs-bus-pci).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PcieLink {
    pub current_speed_gts: Option<f64>,
    pub current_width: Option<u32>,
    pub max_speed_gts: Option<f64>,
    pub max_width: Option<u32>,
}

/// The PCI function that hosts the disk's controller (xHCI, AHCI, NVMe, virtio).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PciFacts {
    /// The PCI address (`0000:00:14.0`).
    pub address: String,
    pub driver: Option<String>,
    pub vendor_id: Option<u16>,
    pub device_id: Option<u16>,
    /// The 24-bit class code (0x0c0330 = xHCI, 0x010601 = AHCI, 0x010802 = NVMe).
    pub class: Option<u32>,
    /// The PCIe link; `null` for a controller integrated into the root complex.
    pub link: Option<PcieLink>,
}

/// The request queue limits (Documentation/ABI/stable/sysfs-block).
#[derive(Clone, Debug, Serialize, PartialEq, Eq, Default)]
pub struct QueueFacts {
    pub max_sectors_kb: Option<u64>,
    pub max_hw_sectors_kb: Option<u64>,
    /// `device/queue_depth` of a SCSI device (the tags the host driver gives the LUN).
    pub device_queue_depth: Option<u64>,
    pub nr_requests: Option<u64>,
    /// The active I/O scheduler (the bracketed entry of `queue/scheduler`).
    pub scheduler: Option<String>,
    pub rotational: Option<bool>,
    pub logical_block_size: Option<u64>,
    pub physical_block_size: Option<u64>,
    pub discard_granularity: Option<u64>,
    /// 0 means the device takes no discard (TRIM/UNMAP) through this path.
    pub discard_max_bytes: Option<u64>,
    /// `write back` or `write through`.
    pub write_cache: Option<String>,
}

/// A device-mapper device (`dm/name`, `dm/uuid`).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DmFacts {
    pub name: Option<String>,
    pub uuid: Option<String>,
    /// From the uuid prefix the target subsystem sets: `crypt` (CRYPT-), `lvm` (LVM-), else null.
    pub target: Option<String>,
}

/// A block device and everything beneath it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DeviceFacts {
    /// Kernel name of the whole disk (`sda`, `nvme0n1`, `loop0`, `dm-0`).
    pub name: String,
    /// The partition the path named, when it was one (`sda2`).
    pub partition: Option<String>,
    /// Device node (`/dev/sda`).
    pub node: String,
    pub size_bytes: Option<u64>,
    /// How commands reach the medium: `usb-uas`, `usb-bot`, `ahci`, `nvme`, `virtio`, `loop`,
    /// `dm`, `md`, `scsi` or `unknown`.
    pub transport: String,
    /// The driver path from the disk up to the PCI root.
    pub driver_chain: Vec<ChainLink>,
    pub usb: Option<UsbFacts>,
    pub host_controller: Option<PciFacts>,
    pub queue: QueueFacts,
    /// A loop device's backing file.
    pub loop_backing_file: Option<String>,
    pub dm: Option<DmFacts>,
    /// An md array's RAID level.
    pub md_level: Option<String>,
    /// The devices beneath a dm or md device (`slaves/`), each probed the same way.
    pub members: Vec<DeviceFacts>,
    /// What the device answered through SG_IO; `null` when not asked.
    pub device_query: Option<query::DeviceQuery>,
    /// The drive's model as the kernel keeps it, without asking the device: libata's cached
    /// IDENTIFY DEVICE (`ata_device/devN.0/id`, all 40 characters) on a SATA port, else the
    /// SCSI INQUIRY vendor and product (`device/vendor`, `device/model`; libata's `ATA` vendor
    /// left out).
    pub model: Option<String>,
    /// The SATA link's negotiated rate in Gb/s (libata's `ata_link/linkN/sata_spd`,
    /// Documentation/ABI/testing/sysfs-ata); `null` without a libata port in the path.
    pub sata_link_gbps: Option<f64>,
}

impl Prober {
    /// Probes a path: a block device node, or a file or directory (its mount and the device
    /// beneath). Fails only when the path itself cannot be looked at.
    pub fn probe_path(&self, path: &Path) -> Result<ProbeReport, ProbeError> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let shown = path.display().to_string();
        let meta = std::fs::metadata(path).map_err(|source| ProbeError::Stat {
            path: shown.clone(),
            source,
        })?;
        let (file, device_number) = if meta.file_type().is_block_device() {
            (None, meta.rdev())
        } else if meta.is_file() || meta.is_dir() {
            let dev = meta.dev();
            let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
            let facts = mounts::mount_of(&self.mountinfo_path, &canonical, dev);
            (facts, dev)
        } else {
            return Err(ProbeError::NotProbeable { path: shown });
        };
        let (major, minor) = (libc::major(device_number), libc::minor(device_number));
        let device = self
            .sys
            .block_dir_by_number(major, minor)
            .map(|dir| self.device_facts(&dir))
            .transpose()?;
        Ok(self.finish(shown, file, device))
    }

    /// Probes a block device by kernel name (`sda`), as `/sys/block/NAME` shows it.
    pub fn probe_block_name(&self, name: &str) -> Result<ProbeReport, ProbeError> {
        let dir =
            self.sys
                .block_dir_by_name(name)
                .ok_or_else(|| ProbeError::NoSuchBlockDevice {
                    path: name.to_string(),
                    name: name.to_string(),
                    sys: self.sys.path().display().to_string(),
                })?;
        let device = self.device_facts(&dir)?;
        Ok(self.finish(format!("/dev/{name}"), None, Some(device)))
    }

    /// Every whole disk in `/sys/block`, sorted by name.
    pub fn probe_all(&self) -> Result<Vec<ProbeReport>, ProbeError> {
        let names = self
            .sys
            .block_names()
            .map_err(|source| ProbeError::ListBlock {
                sys: self.sys.path().display().to_string(),
                source,
            })?;
        names
            .iter()
            .map(|name| self.probe_block_name(name))
            .collect()
    }

    fn finish(
        &self,
        path: String,
        file: Option<FileFacts>,
        device: Option<DeviceFacts>,
    ) -> ProbeReport {
        let mut report = ProbeReport {
            path,
            file,
            device,
            diagnosis: Vec::new(),
        };
        report.diagnosis = diagnosis::diagnose(&report);
        report
    }

    fn device_facts(&self, dir: &Path) -> Result<DeviceFacts, ProbeError> {
        let mut facts = sysfs::device_facts(&self.sys, dir)?;
        // Loop, dm and md devices are the kernel's own: there is no device to ask.
        let asks_device = !matches!(facts.transport.as_str(), "loop" | "dm" | "md");
        if self.query_device && asks_device {
            // ATA IDENTIFY only where a SATA drive sits behind a SCSI-to-ATA translation.
            let ask_ata = matches!(facts.transport.as_str(), "usb-uas" | "usb-bot" | "ahci");
            facts.device_query = Some(query::query_node(Path::new(&facts.node), ask_ata));
        }
        Ok(facts)
    }
}
