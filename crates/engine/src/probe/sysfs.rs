//! Reading a block device's facts from sysfs under an injectable root, read-only.
//!
//! Layout (Documentation/ABI/stable/sysfs-block, sysfs-bus-usb, sysfs-bus-pci): `block/NAME`
//! and `dev/block/MAJ:MIN` link to the disk's directory under `devices/`; its ancestors are the
//! devices it hangs from (SCSI device, USB interface, USB device, PCI function), each with a
//! `driver` and `subsystem` link whose last component names the driver and bus.

use super::{
    bridges, ChainLink, DeviceFacts, DmFacts, PciFacts, PcieLink, ProbeError, QueueFacts, UsbFacts,
};
use std::path::{Path, PathBuf};

/// The sysfs mount to read (`/sys` on a live system, a fixture tree in tests).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SysRoot(PathBuf);

impl Default for SysRoot {
    fn default() -> Self {
        SysRoot(PathBuf::from("/sys"))
    }
}

/// bInterfaceProtocol of USB Mass Storage Bulk-Only Transport (USB MSC Overview 1.4, table 3).
pub const USB_PROTOCOL_BOT: u8 = 0x50;
/// bInterfaceProtocol of USB Attached SCSI (USB MSC Overview 1.4, table 3).
pub const USB_PROTOCOL_UAS: u8 = 0x62;
/// Bytes in a sysfs sector count (`size` counts 512-byte sectors, sysfs-block ABI).
const SYSFS_SECTOR_BYTES: u64 = 512;

impl SysRoot {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        SysRoot(path.into())
    }
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The disk directory of `block/NAME`, resolved to its place under `devices/`.
    pub fn block_dir_by_name(&self, name: &str) -> Option<PathBuf> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return None;
        }
        std::fs::canonicalize(self.0.join("block").join(name)).ok()
    }

    /// The directory of device `major:minor` (a partition resolves to its own directory).
    pub fn block_dir_by_number(&self, major: u32, minor: u32) -> Option<PathBuf> {
        std::fs::canonicalize(self.0.join("dev/block").join(format!("{major}:{minor}"))).ok()
    }

    /// The names in `block/`, sorted.
    pub fn block_names(&self) -> std::io::Result<Vec<String>> {
        let mut names: Vec<String> = std::fs::read_dir(self.0.join("block"))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        Ok(names)
    }

    fn devices_dir(&self) -> PathBuf {
        std::fs::canonicalize(self.0.join("devices")).unwrap_or_else(|_| self.0.join("devices"))
    }
}

/// Bytes a sysfs attribute holds at most: the kernel's `show` fills one page; a recorded tree
/// may have been written on a machine with 64 KiB pages.
const ATTR_MAX_BYTES: u64 = 64 * 1024;

/// A sysfs attribute, trimmed; `None` when absent or unreadable, and when it is not a regular
/// file (every sysfs attribute is one; a FIFO in a recorded `--sys-root` would block the read).
pub fn read_attr(dir: &Path, name: &str) -> Option<String> {
    crate::regular_file::read_regular_text(&dir.join(name), ATTR_MAX_BYTES)
        .ok()
        .map(|s| s.trim().to_string())
}

fn read_u64(dir: &Path, name: &str) -> Option<u64> {
    read_attr(dir, name)?.parse().ok()
}

/// A `0x1234` or `1234` hex attribute (idVendor, vendor, class).
fn read_hex(dir: &Path, name: &str) -> Option<u32> {
    let text = read_attr(dir, name)?;
    u32::from_str_radix(text.trim_start_matches("0x"), 16).ok()
}

fn link_name(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_link(dir.join(name))
        .ok()?
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
}

fn file_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The bracketed, active entry of `queue/scheduler` (`mq-deadline kyber [none]` → `none`).
pub fn active_scheduler(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = text[start..].find(']')? + start;
    Some(text[start + 1..end].to_string())
}

/// A link speed attribute in GT/s (`8.0 GT/s PCIe`, `2.5 GT/s`); `Unknown` gives `None`.
pub fn parse_link_speed_gts(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

fn queue_facts(disk: &Path) -> QueueFacts {
    let queue = disk.join("queue");
    QueueFacts {
        max_sectors_kb: read_u64(&queue, "max_sectors_kb"),
        max_hw_sectors_kb: read_u64(&queue, "max_hw_sectors_kb"),
        device_queue_depth: read_u64(&disk.join("device"), "queue_depth"),
        nr_requests: read_u64(&queue, "nr_requests"),
        scheduler: read_attr(&queue, "scheduler").and_then(|s| active_scheduler(&s)),
        rotational: read_u64(&queue, "rotational").map(|r| r != 0),
        logical_block_size: read_u64(&queue, "logical_block_size"),
        physical_block_size: read_u64(&queue, "physical_block_size"),
        discard_granularity: read_u64(&queue, "discard_granularity"),
        discard_max_bytes: read_u64(&queue, "discard_max_bytes"),
        write_cache: read_attr(&queue, "write_cache"),
    }
}

fn pci_facts(dir: &Path) -> PciFacts {
    let current_speed_gts =
        read_attr(dir, "current_link_speed").and_then(|s| parse_link_speed_gts(&s));
    let current_width = read_u64(dir, "current_link_width").map(|w| w as u32);
    let max_speed_gts = read_attr(dir, "max_link_speed").and_then(|s| parse_link_speed_gts(&s));
    let max_width = read_u64(dir, "max_link_width").map(|w| w as u32);
    let has_link = current_speed_gts.is_some()
        || current_width.is_some()
        || max_speed_gts.is_some()
        || max_width.is_some();
    PciFacts {
        address: file_name(dir),
        driver: link_name(dir, "driver"),
        vendor_id: read_hex(dir, "vendor").map(|v| v as u16),
        device_id: read_hex(dir, "device").map(|v| v as u16),
        class: read_hex(dir, "class"),
        link: has_link.then_some(PcieLink {
            current_speed_gts,
            current_width,
            max_speed_gts,
            max_width,
        }),
    }
}

fn usb_facts(device: &Path, interface: Option<&Path>) -> UsbFacts {
    let vendor_id = read_hex(device, "idVendor").map(|v| v as u16);
    let product_id = read_hex(device, "idProduct").map(|v| v as u16);
    let interface_protocol = interface
        .and_then(|i| read_hex(i, "bInterfaceProtocol"))
        .map(|p| p as u8);
    UsbFacts {
        node: file_name(device),
        speed_mbps: read_attr(device, "speed").and_then(|s| s.parse().ok()),
        vendor_id,
        product_id,
        bcd_device: read_hex(device, "bcdDevice").map(|v| v as u16),
        manufacturer: read_attr(device, "manufacturer"),
        product: read_attr(device, "product"),
        bridge: vendor_id
            .zip(product_id)
            .and_then(|(v, p)| bridges::lookup(v, p)),
        interface_protocol,
        protocol: interface_protocol.map(|p| {
            match p {
                USB_PROTOCOL_BOT => "BOT",
                USB_PROTOCOL_UAS => "UAS",
                _ => "other",
            }
            .to_string()
        }),
    }
}

/// How deep `slaves/` may nest (a dm device on an md array on partitions is three): deeper is
/// a tree no kernel made, refused like a cycle rather than followed until the stack runs out.
const MEMBER_DEPTH_MAX: usize = 32;

/// Reads everything sysfs says about the block device at `dir` (a disk or a partition) and,
/// the same way, about the devices beneath it. Fails only on a `slaves/` link that leads back
/// to a device above (a cycle) or nests deeper than any kernel does.
pub fn device_facts(sys: &SysRoot, dir: &Path) -> Result<DeviceFacts, ProbeError> {
    device_facts_below(sys, dir, &mut Vec::new())
}

/// [`device_facts`] of a device met below the devices in `above` (their directories).
fn device_facts_below(
    sys: &SysRoot,
    dir: &Path,
    above: &mut Vec<PathBuf>,
) -> Result<DeviceFacts, ProbeError> {
    let (disk, partition) = if dir.join("partition").exists() {
        let parent = dir.parent().unwrap_or(dir).to_path_buf();
        (parent, Some(file_name(dir)))
    } else {
        (dir.to_path_buf(), None)
    };
    let name = file_name(&disk);
    let devices = sys.devices_dir();
    let mut chain = Vec::new();
    let mut usb_device: Option<PathBuf> = None;
    let mut usb_interface: Option<PathBuf> = None;
    let mut pci: Option<PathBuf> = None;
    let mut ata_port: Option<(PathBuf, u32)> = None;
    // Walk from the disk up to `devices/`, recording every node with a driver or a bus.
    let mut at = disk.parent().map(Path::to_path_buf);
    while let Some(node) = at {
        if !node.starts_with(&devices) || node == devices {
            break;
        }
        let driver = link_name(&node, "driver");
        let subsystem = link_name(&node, "subsystem");
        if usb_device.is_none() && node.join("idVendor").exists() {
            usb_device = Some(node.clone());
        }
        if usb_interface.is_none() && node.join("bInterfaceProtocol").exists() {
            usb_interface = Some(node.clone());
        }
        if ata_port.is_none() {
            ata_port = ata_port_number(&node).map(|n| (node.clone(), n));
        }
        if pci.is_none() && subsystem.as_deref() == Some("pci") {
            pci = Some(node.clone());
        }
        if driver.is_some() {
            chain.push(ChainLink {
                node: file_name(&node),
                subsystem,
                driver,
            });
        }
        at = node.parent().map(Path::to_path_buf);
    }
    let drivers: Vec<&str> = chain.iter().filter_map(|l| l.driver.as_deref()).collect();
    let loop_dir = disk.join("loop");
    let dm_dir = disk.join("dm");
    let md_dir = disk.join("md");
    // An unbound loop device has no `loop/` directory; its name still says what it is.
    let transport = if loop_dir.is_dir() || name.starts_with("loop") {
        "loop"
    } else if dm_dir.is_dir() {
        "dm"
    } else if md_dir.is_dir() {
        "md"
    } else if drivers.contains(&"uas") {
        "usb-uas"
    } else if drivers.contains(&"usb-storage") {
        "usb-bot"
    } else if drivers.contains(&"nvme") {
        "nvme"
    } else if drivers.contains(&"ahci") {
        "ahci"
    } else if drivers.contains(&"virtio_blk") {
        "virtio"
    } else if drivers.contains(&"sd") {
        "scsi"
    } else {
        "unknown"
    };
    let dm = dm_dir.is_dir().then(|| {
        let uuid = read_attr(&dm_dir, "uuid").filter(|u| !u.is_empty());
        let target = uuid.as_deref().and_then(|u| {
            if u.starts_with("CRYPT-") {
                Some("crypt".to_string())
            } else if u.starts_with("LVM-") {
                Some("lvm".to_string())
            } else {
                None
            }
        });
        DmFacts {
            name: read_attr(&dm_dir, "name"),
            uuid,
            target,
        }
    });
    let members = members_below(sys, dir, &disk, above)?;
    Ok(DeviceFacts {
        node: format!("/dev/{name}"),
        size_bytes: read_u64(&disk, "size").map(|s| s * SYSFS_SECTOR_BYTES),
        transport: transport.to_string(),
        driver_chain: chain,
        usb: usb_device
            .as_deref()
            .map(|d| usb_facts(d, usb_interface.as_deref())),
        host_controller: pci.as_deref().map(pci_facts),
        queue: queue_facts(&disk),
        loop_backing_file: read_attr(&loop_dir, "backing_file"),
        dm,
        md_level: read_attr(&md_dir, "level"),
        members,
        device_query: None,
        model: ata_port
            .as_ref()
            .and_then(|(port, n)| ata_model(port, *n))
            .or_else(|| inquiry_model(&disk.join("device"))),
        sata_link_gbps: ata_port
            .as_ref()
            .and_then(|(port, n)| sata_link_gbps(port, *n)),
        name,
        partition,
    })
}

/// N of a libata port directory `ataN` (the SCSI host of a SATA drive hangs below it).
fn ata_port_number(node: &Path) -> Option<u32> {
    file_name(node).strip_prefix("ata")?.parse().ok()
}

/// The negotiated rate of port N's link: `ataN/linkN/ata_link/linkN/sata_spd`, `6.0 Gbps`
/// (libata-transport.c; `<unknown>` when the link is down).
fn sata_link_gbps(port: &Path, n: u32) -> Option<f64> {
    let link = port.join(format!("link{n}/ata_link/link{n}"));
    read_attr(&link, "sata_spd")?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The model in the IDENTIFY DEVICE data libata cached for the port's first device
/// (`ataN/linkN/devN.0/ata_device/devN.0/id`: the 256 words as hex, 16 to a line,
/// Documentation/ABI/testing/sysfs-ata), read by the same parser as an IDENTIFY answer.
fn ata_model(port: &Path, n: u32) -> Option<String> {
    let dir = port.join(format!("link{n}/dev{n}.0/ata_device/dev{n}.0"));
    let words: Vec<u16> = read_attr(&dir, "id")?
        .split_whitespace()
        .map(|w| u16::from_str_radix(w, 16))
        .collect::<Result<_, _>>()
        .ok()?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let model = super::query::identify_facts(&bytes).ok()?.model;
    (!model.is_empty()).then_some(model)
}

/// The SCSI INQUIRY vendor and product the kernel keeps (`device/vendor`, `device/model`),
/// joined; libata's vendor `ATA` says nothing about the drive and is left out.
fn inquiry_model(scsi_device: &Path) -> Option<String> {
    let product = read_attr(scsi_device, "model").filter(|m| !m.is_empty())?;
    match read_attr(scsi_device, "vendor") {
        Some(vendor) if !vendor.is_empty() && vendor != "ATA" => {
            Some(format!("{vendor} {product}"))
        }
        _ => Some(product),
    }
}

/// The facts of the devices in `disk`'s `slaves/` (`dir` is the disk or its partition), each
/// refused if it is one of the devices above or the nesting is too deep.
fn members_below(
    sys: &SysRoot,
    dir: &Path,
    disk: &Path,
    above: &mut Vec<PathBuf>,
) -> Result<Vec<DeviceFacts>, ProbeError> {
    let depth = above.len();
    above.extend([dir.to_path_buf(), disk.to_path_buf()]);
    let mut members = Vec::new();
    for member in member_dirs(disk) {
        let on_a_cycle = above.contains(&member)
            || member
                .parent()
                .is_some_and(|parent| above.iter().any(|a| a == parent));
        if on_a_cycle || depth / 2 >= MEMBER_DEPTH_MAX {
            above.truncate(depth);
            return Err(ProbeError::SlavesCycle {
                sys: sys.path().display().to_string(),
                device: file_name(disk),
                member: member.display().to_string(),
            });
        }
        members.push(device_facts_below(sys, &member, above)?);
    }
    above.truncate(depth);
    Ok(members)
}

/// The devices in `slaves/`, resolved, sorted by name.
fn member_dirs(disk: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(disk.join("slaves")) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::canonicalize(e.path()).ok())
        .collect();
    dirs.sort();
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn active_scheduler_is_the_bracketed_entry() {
        assert_eq!(
            active_scheduler("mq-deadline kyber [none]").as_deref(),
            Some("none")
        );
        assert_eq!(active_scheduler("none").as_deref(), None);
    }

    #[test]
    fn link_speed_reads_both_kernel_spellings() {
        assert_eq!(parse_link_speed_gts("8.0 GT/s PCIe"), Some(8.0));
        assert_eq!(parse_link_speed_gts("2.5 GT/s"), Some(2.5));
        assert_eq!(parse_link_speed_gts("Unknown"), None);
    }
}
