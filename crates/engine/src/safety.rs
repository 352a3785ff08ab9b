//! Refuses to write to (or trim) a block device that holds something: a partition table, a
//! filesystem/swap/LUKS/LVM signature, a mount or a holder, unless the user named exactly that
//! device with `--destructive`. Checked before the device is opened for writing.

use crate::EngineError;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Bytes read from the start of the device: enough to reach the furthest signature (btrfs).
pub const PROBE_BYTES: usize = 128 * 1024;

/// MBR boot signature 0x55 0xAA at byte 510.
pub const MBR_SIGNATURE_OFFSET: usize = 510;
pub const MBR_SIGNATURE: &[u8] = &[0x55, 0xAA];
/// The four 16-byte MBR partition entries start at byte 446; byte 4 of an entry is its type
/// (0 = unused).
pub const MBR_PARTITION_TABLE_OFFSET: usize = 446;
pub const MBR_PARTITION_ENTRY_BYTES: usize = 16;
pub const MBR_PARTITION_ENTRIES: usize = 4;
pub const MBR_PARTITION_TYPE_OFFSET: usize = 4;
/// GPT header "EFI PART" at LBA 1: byte 512 on 512-byte-sector disks, 4096 on 4Kn disks.
pub const GPT_SIGNATURE: &[u8] = b"EFI PART";
pub const GPT_HEADER_OFFSETS: &[usize] = &[512, 4096];
/// ext2/3/4: superblock at 1024, `s_magic` 0xEF53 (little-endian) at 1024 + 56.
pub const EXT_SUPERBLOCK_OFFSET: usize = 1024;
pub const EXT_MAGIC_OFFSET: usize = EXT_SUPERBLOCK_OFFSET + 56;
pub const EXT_MAGIC: &[u8] = &[0x53, 0xEF];
/// ext feature words (little-endian u32) inside the superblock, as blkid tells ext2/3/4 apart.
pub const EXT_FEATURE_COMPAT_OFFSET: usize = EXT_SUPERBLOCK_OFFSET + 0x5C;
pub const EXT_FEATURE_INCOMPAT_OFFSET: usize = EXT_SUPERBLOCK_OFFSET + 0x60;
pub const EXT_FEATURE_RO_COMPAT_OFFSET: usize = EXT_SUPERBLOCK_OFFSET + 0x64;
pub const EXT3_FEATURE_COMPAT_HAS_JOURNAL: u32 = 0x0004;
/// Incompat features only ext4 has: extents, 64bit, flex_bg, mmp, inline data...
pub const EXT4_FEATURE_INCOMPAT_MASK: u32 = 0x0040 | 0x0080 | 0x0100 | 0x0200 | 0x8000;
/// Ro-compat features only ext4 has: huge_file, gdt_csum, dir_nlink, extra_isize, metadata_csum.
pub const EXT4_FEATURE_RO_COMPAT_MASK: u32 = 0x0008 | 0x0010 | 0x0020 | 0x0040 | 0x0400;
/// XFS superblock magic at byte 0.
pub const XFS_MAGIC_OFFSET: usize = 0;
pub const XFS_MAGIC: &[u8] = b"XFSB";
/// btrfs superblock at 64 KiB, magic 0x40 bytes into it.
pub const BTRFS_MAGIC_OFFSET: usize = 65536 + 0x40;
pub const BTRFS_MAGIC: &[u8] = b"_BHRfS_M";
/// Linux swap: the last 10 bytes of the first page (4 KiB on the common architectures).
pub const SWAP_PAGE_BYTES: usize = 4096;
pub const SWAP_MAGICS: &[&[u8]] = &[b"SWAPSPACE2", b"SWAP-SPACE"];
/// Boot-sector OEM name at byte 3 (NTFS, exFAT, and what FAT formatters write).
pub const BOOT_OEM_ID_OFFSET: usize = 3;
pub const NTFS_OEM_ID: &[u8] = b"NTFS    ";
pub const EXFAT_OEM_ID: &[u8] = b"EXFAT   ";
/// FAT type labels: "FAT12   "/"FAT16   " at 54 (FAT12/16 boot sector), "FAT32   " at 82.
pub const FAT16_TYPE_OFFSET: usize = 54;
pub const FAT32_TYPE_OFFSET: usize = 82;
pub const FAT_TYPE_LABELS: &[&[u8]] = &[b"FAT12   ", b"FAT16   ", b"FAT32   ", b"FAT     "];
/// LUKS header magic at byte 0.
pub const LUKS_MAGIC_OFFSET: usize = 0;
pub const LUKS_MAGIC: &[u8] = b"LUKS\xba\xbe";
/// LVM2 physical volume label "LABELONE", in one of the first four 512-byte sectors (usually 1).
pub const LVM2_LABEL: &[u8] = b"LABELONE";
pub const LVM2_LABEL_SECTOR_BYTES: usize = 512;
pub const LVM2_LABEL_SECTORS: usize = 4;
/// ISO 9660 volume descriptor "CD001" at 32 KiB + 1.
pub const ISO9660_MAGIC_OFFSET: usize = 32769;
pub const ISO9660_MAGIC: &[u8] = b"CD001";

const MOUNTINFO_PATH: &str = "/proc/self/mountinfo";
const SYSFS_DEV_BLOCK: &str = "/sys/dev/block";

/// Return `Ok` when writing to the block device at `path` cannot destroy anything we can see,
/// or when `destructive` names the same device. Otherwise a `Refused` error listing every
/// finding and how to override.
pub fn check_block_device_writable(
    path: &Path,
    destructive: Option<&Path>,
) -> Result<(), EngineError> {
    if let Some(allowed) = destructive {
        if same_path(path, allowed) {
            return Ok(());
        }
    }
    let findings = findings_for_device(path)?;
    if findings.is_empty() {
        Ok(())
    } else {
        Err(EngineError::Refused {
            path: path.to_path_buf(),
            reason: findings.join("; "),
        })
    }
}

/// Every reason not to write to this device (empty: it looks blank and unused).
pub fn findings_for_device(path: &Path) -> Result<Vec<String>, EngineError> {
    let open_error = |source: io::Error| EngineError::Open {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(open_error)?;
    let rdev = file.metadata().map_err(open_error)?.rdev();
    let device = (libc::major(rdev), libc::minor(rdev));

    let mut head = vec![0u8; PROBE_BYTES];
    let read_bytes = read_head(&file, &mut head).map_err(open_error)?;
    head.truncate(read_bytes);
    let mut findings = signature_findings(&head);

    let sysfs_dir = PathBuf::from(format!("{SYSFS_DEV_BLOCK}/{}:{}", device.0, device.1));
    let partitions = partitions_of(&sysfs_dir);
    if !partitions.is_empty() {
        let names: Vec<&str> = partitions.iter().map(|p| p.name.as_str()).collect();
        findings.push(format!("it has partitions ({})", names.join(", ")));
    }

    let mountinfo = fs::read_to_string(MOUNTINFO_PATH).unwrap_or_default();
    let mounted = mounts(&mountinfo);
    let ours = std::iter::once((device, path.display().to_string()))
        .chain(partitions.iter().map(|p| (p.device, p.name.clone())));
    let mut holders = Vec::new();
    for (dev, name) in ours {
        for (mounted_dev, mount_point) in &mounted {
            if *mounted_dev == dev {
                findings.push(format!(
                    "{name} ({}:{}) is mounted on {mount_point}",
                    dev.0, dev.1
                ));
            }
        }
        let dir = PathBuf::from(format!("{SYSFS_DEV_BLOCK}/{}:{}", dev.0, dev.1));
        for holder in list_dir(&dir.join("holders")) {
            holders.push(format!("{name} is held by {holder}"));
        }
    }
    if !holders.is_empty() {
        findings.push(format!(
            "it is in use by another block device ({})",
            holders.join(", ")
        ));
    }
    Ok(findings)
}

/// Signatures found in the first bytes of a device, as human-readable findings.
pub fn signature_findings(head: &[u8]) -> Vec<String> {
    let mut findings = Vec::new();
    let at = |offset: usize, magic: &[u8]| head.get(offset..offset + magic.len()) == Some(magic);

    if at(MBR_SIGNATURE_OFFSET, MBR_SIGNATURE) {
        let used_entries = (0..MBR_PARTITION_ENTRIES)
            .filter(|i| {
                let type_offset = MBR_PARTITION_TABLE_OFFSET
                    + i * MBR_PARTITION_ENTRY_BYTES
                    + MBR_PARTITION_TYPE_OFFSET;
                head.get(type_offset).is_some_and(|&t| t != 0)
            })
            .count();
        if used_entries > 0 {
            findings.push(format!(
                "an MBR partition table with {used_entries} used entries (0x55AA at byte \
                 {MBR_SIGNATURE_OFFSET})"
            ));
        }
    }
    for &offset in GPT_HEADER_OFFSETS {
        if at(offset, GPT_SIGNATURE) {
            findings.push(format!(
                "a GPT partition table (\"EFI PART\" at byte {offset})"
            ));
        }
    }
    if at(EXT_MAGIC_OFFSET, EXT_MAGIC) {
        let word = |offset: usize| {
            head.get(offset..offset + 4)
                .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let flavour = if word(EXT_FEATURE_INCOMPAT_OFFSET) & EXT4_FEATURE_INCOMPAT_MASK != 0
            || word(EXT_FEATURE_RO_COMPAT_OFFSET) & EXT4_FEATURE_RO_COMPAT_MASK != 0
        {
            "ext4"
        } else if word(EXT_FEATURE_COMPAT_OFFSET) & EXT3_FEATURE_COMPAT_HAS_JOURNAL != 0 {
            "ext3"
        } else {
            "ext2"
        };
        findings.push(format!(
            "an {flavour} filesystem (magic 0xEF53 at byte {EXT_MAGIC_OFFSET})"
        ));
    }
    if at(XFS_MAGIC_OFFSET, XFS_MAGIC) {
        findings.push(format!(
            "an XFS filesystem (\"XFSB\" at byte {XFS_MAGIC_OFFSET})"
        ));
    }
    if at(BTRFS_MAGIC_OFFSET, BTRFS_MAGIC) {
        findings.push(format!(
            "a btrfs filesystem (\"_BHRfS_M\" at byte {BTRFS_MAGIC_OFFSET})"
        ));
    }
    let page_bytes = [SWAP_PAGE_BYTES, system_page_bytes()];
    'swap: for (i, &page) in page_bytes.iter().enumerate() {
        if i > 0 && page == page_bytes[0] {
            break;
        }
        for magic in SWAP_MAGICS {
            let offset = page - magic.len();
            if at(offset, magic) {
                findings.push(format!(
                    "a swap area (\"{}\" at byte {offset})",
                    String::from_utf8_lossy(magic)
                ));
                break 'swap;
            }
        }
    }
    if at(BOOT_OEM_ID_OFFSET, NTFS_OEM_ID) {
        findings.push(format!(
            "an NTFS filesystem (\"NTFS\" at byte {BOOT_OEM_ID_OFFSET})"
        ));
    }
    if at(BOOT_OEM_ID_OFFSET, EXFAT_OEM_ID) {
        findings.push(format!(
            "an exFAT filesystem (\"EXFAT\" at byte {BOOT_OEM_ID_OFFSET})"
        ));
    }
    for &offset in &[FAT16_TYPE_OFFSET, FAT32_TYPE_OFFSET] {
        if let Some(label) = FAT_TYPE_LABELS.iter().find(|label| at(offset, label)) {
            findings.push(format!(
                "a FAT filesystem (\"{}\" at byte {offset})",
                String::from_utf8_lossy(label).trim_end()
            ));
        }
    }
    if at(LUKS_MAGIC_OFFSET, LUKS_MAGIC) {
        findings.push(format!(
            "a LUKS encrypted volume (\"LUKS\\xba\\xbe\" at byte {LUKS_MAGIC_OFFSET})"
        ));
    }
    for sector in 0..LVM2_LABEL_SECTORS {
        let offset = sector * LVM2_LABEL_SECTOR_BYTES;
        if at(offset, LVM2_LABEL) {
            findings.push(format!(
                "an LVM2 physical volume (\"LABELONE\" at byte {offset})"
            ));
        }
    }
    if at(ISO9660_MAGIC_OFFSET, ISO9660_MAGIC) {
        findings.push(format!(
            "an ISO 9660 filesystem (\"CD001\" at byte {ISO9660_MAGIC_OFFSET})"
        ));
    }
    findings
}

/// (major, minor) → mount point for every mount in a `/proc/self/mountinfo` text.
pub fn mounts(mountinfo: &str) -> Vec<((u32, u32), String)> {
    mountinfo
        .lines()
        .filter_map(|line| {
            // Fields: mount ID, parent ID, major:minor, root, mount point, ...
            let mut fields = line.split_whitespace();
            let dev = fields.nth(2)?;
            let mount_point = fields.nth(1)?;
            let (major, minor) = dev.split_once(':')?;
            Some((
                (major.parse().ok()?, minor.parse().ok()?),
                mount_point.to_string(),
            ))
        })
        .collect()
}

struct Partition {
    name: String,
    device: (u32, u32),
}

/// Partitions of the disk whose sysfs directory is `disk_dir`: subdirectories that contain a
/// `partition` file; their `dev` file holds "MAJ:MIN".
fn partitions_of(disk_dir: &Path) -> Vec<Partition> {
    list_dir(disk_dir)
        .into_iter()
        .filter_map(|name| {
            let dir = disk_dir.join(&name);
            if !dir.join("partition").exists() {
                return None;
            }
            let dev = fs::read_to_string(dir.join("dev")).ok()?;
            let (major, minor) = dev.trim().split_once(':')?;
            Some(Partition {
                name,
                device: (major.parse().ok()?, minor.parse().ok()?),
            })
        })
        .collect()
}

fn list_dir(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn read_head(file: &File, head: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < head.len() {
        match file.read_at(&mut head[filled..], filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        }
    }
    Ok(filled)
}

fn system_page_bytes() -> usize {
    // SAFETY: sysconf only reads a configuration value.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).unwrap_or(SWAP_PAGE_BYTES)
}

/// Whether two paths name the same file once symlinks (`/dev/disk/by-id/...`) are resolved.
fn same_path(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blank() -> Vec<u8> {
        vec![0u8; PROBE_BYTES]
    }

    fn put(head: &mut [u8], offset: usize, bytes: &[u8]) {
        head[offset..offset + bytes.len()].copy_from_slice(bytes);
    }

    #[test]
    fn blank_device_has_no_findings() {
        assert!(signature_findings(&blank()).is_empty());
        assert!(signature_findings(&[]).is_empty());
    }

    #[test]
    fn mbr_needs_a_used_entry() {
        let mut head = blank();
        put(&mut head, MBR_SIGNATURE_OFFSET, MBR_SIGNATURE);
        assert!(
            signature_findings(&head).is_empty(),
            "empty MBR is not a table"
        );
        head[MBR_PARTITION_TABLE_OFFSET + MBR_PARTITION_ENTRY_BYTES + MBR_PARTITION_TYPE_OFFSET] =
            0x83;
        let findings = signature_findings(&head);
        assert_eq!(findings.len(), 1);
        assert!(findings[0].contains("MBR partition table with 1 used"));
    }

    #[test]
    fn ext_flavours_are_told_apart() {
        let mut head = blank();
        put(&mut head, EXT_MAGIC_OFFSET, EXT_MAGIC);
        assert!(signature_findings(&head)[0].contains("ext2"));
        put(
            &mut head,
            EXT_FEATURE_COMPAT_OFFSET,
            &EXT3_FEATURE_COMPAT_HAS_JOURNAL.to_le_bytes(),
        );
        assert!(signature_findings(&head)[0].contains("ext3"));
        put(
            &mut head,
            EXT_FEATURE_INCOMPAT_OFFSET,
            &0x40u32.to_le_bytes(),
        );
        assert!(signature_findings(&head)[0].contains("ext4"));
    }

    #[test]
    fn each_signature_is_named() {
        let cases: &[(usize, &[u8], &str)] = &[
            (512, GPT_SIGNATURE, "GPT"),
            (4096, GPT_SIGNATURE, "GPT"),
            (XFS_MAGIC_OFFSET, XFS_MAGIC, "XFS"),
            (BTRFS_MAGIC_OFFSET, BTRFS_MAGIC, "btrfs"),
            (SWAP_PAGE_BYTES - 10, b"SWAPSPACE2", "swap"),
            (SWAP_PAGE_BYTES - 10, b"SWAP-SPACE", "swap"),
            (BOOT_OEM_ID_OFFSET, NTFS_OEM_ID, "NTFS"),
            (BOOT_OEM_ID_OFFSET, EXFAT_OEM_ID, "exFAT"),
            (FAT32_TYPE_OFFSET, b"FAT32   ", "FAT"),
            (FAT16_TYPE_OFFSET, b"FAT16   ", "FAT"),
            (LUKS_MAGIC_OFFSET, LUKS_MAGIC, "LUKS"),
            (512, LVM2_LABEL, "LVM2"),
            (ISO9660_MAGIC_OFFSET, ISO9660_MAGIC, "ISO 9660"),
        ];
        for &(offset, magic, name) in cases {
            let mut head = blank();
            put(&mut head, offset, magic);
            let findings = signature_findings(&head);
            assert_eq!(findings.len(), 1, "{name}: {findings:?}");
            assert!(findings[0].contains(name), "{name}: {findings:?}");
            assert!(
                findings[0].contains(&offset.to_string()),
                "{name}: {findings:?}"
            );
        }
    }

    #[test]
    fn truncated_head_is_not_a_signature() {
        let mut head = blank();
        put(&mut head, BTRFS_MAGIC_OFFSET, BTRFS_MAGIC);
        head.truncate(BTRFS_MAGIC_OFFSET + 4);
        assert!(signature_findings(&head).is_empty());
    }

    #[test]
    fn mountinfo_lines_parse() {
        let text = "22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
                    30 22 7:3 / /mnt/x rw - ext4 /dev/loop3 rw\n\
                    garbage\n";
        assert_eq!(
            mounts(text),
            vec![((253, 0), "/".to_string()), ((7, 3), "/mnt/x".to_string())]
        );
    }
}
