//! The device guard's signature check, one test per kind of signature: each image is made by
//! the Debian tool that makes it for real (`mkfs.X image` in a temp dir), or byte-exact where
//! Debian has no tool that works here (md RAID superblocks need the kernel's md driver), and
//! the check runs on an open descriptor of that image, as it runs on the opened device.
//! A missing tool skips the test with a message (and fails under CI).

use crate::common::tool_available;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use storlab_engine::safety::{findings, signature_findings};

const IMAGE_BYTES: u64 = 64 << 20;

/// A sparse image file of `len_bytes` in its own temp dir.
fn image(len_bytes: u64) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("image");
    File::create(&path).unwrap().set_len(len_bytes).unwrap();
    (dir, path)
}

/// Run `tool args...` where "{image}" in `args` stands for the image path; `false` (skip) when
/// the tool is not installed.
fn run_tool(tool: &str, args: &[&str], image: &Path, stdin: &str) -> bool {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{image}", &image.to_string_lossy()))
        .collect();
    let child = Command::new(tool)
        .args(&args)
        .current_dir(image.parent().unwrap())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        return tool_available(false, &format!("{tool} not installed"));
    };
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    true
}

/// The check on a descriptor of `image` finds a signature whose text contains `expected`.
fn assert_found(image: &Path, expected: &str) {
    let file = File::open(image).unwrap();
    let signatures = signature_findings(&file).unwrap();
    assert!(
        signatures.iter().any(|s| s.contains(expected)),
        "expected {expected:?} in {signatures:?}"
    );
    // And the guard as a whole refuses it (a regular file has no mounts or partitions).
    assert_eq!(findings(&file, image).unwrap(), signatures);
}

/// Make an image of `len_bytes` with `tool` and check that the guard names `expected`.
fn made_by(tool: &str, args: &[&str], len_bytes: u64, expected: &str) {
    let (_dir, path) = image(len_bytes);
    if run_tool(tool, args, &path, "") {
        assert_found(&path, expected);
    }
}

#[test]
fn blank_image_has_no_findings() {
    let (_dir, path) = image(IMAGE_BYTES);
    let file = File::open(&path).unwrap();
    assert!(signature_findings(&file).unwrap().is_empty());
    assert!(findings(&file, &path).unwrap().is_empty());
    // An empty file neither.
    let (_dir, empty) = image(0);
    assert!(signature_findings(&File::open(&empty).unwrap())
        .unwrap()
        .is_empty());
}

#[test]
fn ext2() {
    made_by(
        "mkfs.ext2",
        &["-q", "-F", "{image}"],
        IMAGE_BYTES,
        "filesystem ext2 (magic at byte 1080)",
    );
}

#[test]
fn ext3() {
    made_by(
        "mkfs.ext3",
        &["-q", "-F", "{image}"],
        IMAGE_BYTES,
        "filesystem ext3",
    );
}

#[test]
fn ext4() {
    made_by(
        "mkfs.ext4",
        &["-q", "-F", "{image}"],
        IMAGE_BYTES,
        "filesystem ext4",
    );
}

#[test]
fn xfs() {
    // mkfs.xfs refuses filesystems under 300 MiB; the image is sparse.
    made_by(
        "mkfs.xfs",
        &["-q", "-f", "{image}"],
        320 << 20,
        "filesystem xfs (magic at byte 0)",
    );
}

#[test]
fn btrfs() {
    made_by(
        "mkfs.btrfs",
        &["-q", "-f", "{image}"],
        128 << 20,
        "filesystem btrfs (magic at byte 65600)",
    );
}

#[test]
fn f2fs() {
    made_by(
        "mkfs.f2fs",
        &["-q", "-f", "{image}"],
        IMAGE_BYTES,
        "filesystem f2fs",
    );
}

#[test]
fn vfat_fat16() {
    made_by(
        "mkfs.vfat",
        &["-F", "16", "{image}"],
        IMAGE_BYTES,
        "filesystem vfat",
    );
}

#[test]
fn vfat_fat32() {
    made_by(
        "mkfs.vfat",
        &["-F", "32", "{image}"],
        IMAGE_BYTES,
        "filesystem vfat",
    );
}

/// FAT16 boot sector: the 8-byte file-system type label ("FAT16   ") at byte 54, which is
/// informational only (Microsoft's FAT specification): formatters may leave it blank.
const FAT16_TYPE_LABEL_OFFSET: u64 = 54;

#[test]
fn vfat_without_type_label() {
    let (_dir, path) = image(IMAGE_BYTES);
    if !run_tool("mkfs.vfat", &["-F", "16", "{image}"], &path, "") {
        return;
    }
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.write_all_at(&[b' '; 8], FAT16_TYPE_LABEL_OFFSET)
        .unwrap();
    assert_found(&path, "filesystem vfat");
}

#[test]
fn exfat() {
    made_by("mkfs.exfat", &["{image}"], IMAGE_BYTES, "filesystem exfat");
}

#[test]
fn ntfs() {
    made_by(
        "mkntfs",
        &["-q", "-F", "-f", "{image}"],
        IMAGE_BYTES,
        "filesystem ntfs",
    );
}

#[test]
fn squashfs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("content")).unwrap();
    std::fs::write(dir.path().join("content/file"), b"data").unwrap();
    let path = dir.path().join("image");
    if run_tool(
        "mksquashfs",
        &["content", "{image}", "-quiet", "-noappend"],
        &path,
        "",
    ) {
        assert_found(&path, "filesystem squashfs (magic at byte 0)");
    }
}

#[test]
fn erofs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("content")).unwrap();
    std::fs::write(dir.path().join("content/file"), b"data").unwrap();
    let path = dir.path().join("image");
    if run_tool("mkfs.erofs", &["{image}", "content"], &path, "") {
        assert_found(&path, "filesystem erofs (magic at byte 1024)");
    }
}

#[test]
fn ocfs2() {
    // Local mount mode: no cluster stack needed.
    made_by(
        "mkfs.ocfs2",
        &["-q", "-M", "local", "{image}"],
        IMAGE_BYTES,
        "filesystem ocfs2",
    );
}

#[test]
fn iso9660() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("content")).unwrap();
    std::fs::write(dir.path().join("content/file"), b"data").unwrap();
    let path = dir.path().join("image");
    if run_tool(
        "genisoimage",
        &["-quiet", "-o", "{image}", "content"],
        &path,
        "",
    ) {
        assert_found(&path, "filesystem iso9660 (magic at byte 32769)");
    }
}

#[test]
fn udf() {
    made_by("mkudffs", &["{image}"], IMAGE_BYTES, "filesystem udf");
}

#[test]
fn swap() {
    made_by(
        "mkswap",
        &["{image}"],
        IMAGE_BYTES,
        "signature swap (magic at byte 4086)",
    );
}

#[test]
fn luks1() {
    let (_dir, path) = image(IMAGE_BYTES);
    let args = [
        "-q",
        "--type",
        "luks1",
        "--pbkdf-force-iterations",
        "1000",
        "luksFormat",
        "{image}",
        "-",
    ];
    if run_tool("cryptsetup", &args, &path, "passphrase") {
        assert_found(&path, "encrypted volume crypto_LUKS (magic at byte 0)");
    }
}

#[test]
fn luks2() {
    let (_dir, path) = image(IMAGE_BYTES);
    let args = [
        "-q",
        "--type",
        "luks2",
        "--pbkdf",
        "pbkdf2",
        "--pbkdf-force-iterations",
        "1000",
        "luksFormat",
        "{image}",
        "-",
    ];
    if run_tool("cryptsetup", &args, &path, "passphrase") {
        assert_found(&path, "encrypted volume crypto_LUKS (magic at byte 0)");
    }
}

#[test]
fn bcache() {
    made_by(
        "make-bcache",
        &["-B", "{image}"],
        IMAGE_BYTES,
        "signature bcache",
    );
}

#[test]
fn mbr_partition_table() {
    let (_dir, path) = image(IMAGE_BYTES);
    if run_tool("sfdisk", &["-q", "{image}"], &path, "size=1M, type=83\n") {
        assert_found(&path, "partition table dos (magic at byte 510)");
    }
}

#[test]
fn gpt_partition_table() {
    let (_dir, path) = image(IMAGE_BYTES);
    if run_tool("sfdisk", &["-q", "{image}"], &path, "label: gpt\nsize=1M\n") {
        assert_found(&path, "partition table gpt (magic at byte 512)");
    }
}

/// GPT: the protective MBR is LBA 0 and the primary header LBA 1; the backup header is the
/// last LBA (UEFI specification, 5.3). 512-byte sectors in an image file.
const SECTOR_BYTES: u64 = 512;

#[test]
fn backup_gpt_at_the_end_alone() {
    let (_dir, path) = image(IMAGE_BYTES);
    if !run_tool("sfdisk", &["-q", "{image}"], &path, "label: gpt\nsize=1M\n") {
        return;
    }
    // Wipe the protective MBR and the primary header: only the backup at the end remains.
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.write_all_at(&[0u8; 2 * SECTOR_BYTES as usize], 0)
        .unwrap();
    let backup_header = IMAGE_BYTES - SECTOR_BYTES;
    assert_found(
        &path,
        &format!("partition table gpt (magic at byte {backup_header})"),
    );
}

// Linux md RAID superblocks (the kernel's include/uapi/linux/raid/md_p.h):
/// Magic of every md superblock version, little-endian on disk for version 1 (and on the
/// little-endian machines that write version 0.90 in native order).
const MD_SB_MAGIC: u32 = 0xa92b_4efc;
/// Version 0.90 sits in the last 64 KiB-aligned 64 KiB of the device.
const MD_RESERVED_BYTES: u64 = 64 << 10;
/// Version 0.90 fields (u32 words): major, minor and patch version at 4, 8, 12; the
/// component size in KiB at 32.
const MD0_MINOR_VERSION_OFFSET: usize = 8;
const MD0_SIZE_KIB_OFFSET: usize = 32;
const MD0_MINOR_VERSION: u32 = 90;
/// Version 1.x superblock: 256 bytes plus 2 bytes per device role; `major_version` (1) at 4,
/// `super_offset` (its own position in 512-byte sectors, u64) at 144, `sb_csum` at 216 and
/// `max_dev` at 220.
const MD1_BYTES: usize = 256;
const MD1_MAJOR_VERSION_OFFSET: usize = 4;
const MD1_SUPER_OFFSET_OFFSET: usize = 144;
const MD1_CSUM_OFFSET: usize = 216;
/// Version 1.0 ends 8 KiB before the 4 KiB-aligned end; 1.1 at byte 0; 1.2 at 4 KiB.
const MD1_0_FROM_END_BYTES: u64 = 8 << 10;
const MD1_0_END_ALIGN_BYTES: u64 = 4 << 10;
const MD1_2_OFFSET: u64 = 4 << 10;

fn put_u32(buf: &mut [u8], offset: usize, value: u32) {
    buf[offset..offset + 4].copy_from_slice(&value.to_le_bytes());
}

/// Write an md 0.90 superblock where the kernel puts it, as `mdadm --create --metadata=0.90`
/// would (byte-exact for the fields readers check).
fn write_md0(path: &Path, device_bytes: u64) -> u64 {
    let offset = (device_bytes & !(MD_RESERVED_BYTES - 1)) - MD_RESERVED_BYTES;
    let mut sb = vec![0u8; 4096];
    put_u32(&mut sb, 0, MD_SB_MAGIC);
    put_u32(&mut sb, MD0_MINOR_VERSION_OFFSET, MD0_MINOR_VERSION);
    put_u32(&mut sb, MD0_SIZE_KIB_OFFSET, (offset >> 10) as u32);
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.write_all_at(&sb, offset).unwrap();
    offset
}

/// Write an md 1.x superblock at `offset`, with its checksum (the sum of its little-endian
/// u32 words, carries folded in, taken with the checksum field zero).
fn write_md1(path: &Path, offset: u64) {
    let mut sb = vec![0u8; MD1_BYTES];
    put_u32(&mut sb, 0, MD_SB_MAGIC);
    put_u32(&mut sb, MD1_MAJOR_VERSION_OFFSET, 1);
    sb[MD1_SUPER_OFFSET_OFFSET..MD1_SUPER_OFFSET_OFFSET + 8]
        .copy_from_slice(&(offset / SECTOR_BYTES).to_le_bytes());
    let sum: u64 = sb
        .chunks(4)
        .map(|w| u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]])))
        .sum();
    put_u32(
        &mut sb,
        MD1_CSUM_OFFSET,
        ((sum & 0xffff_ffff) + (sum >> 32)) as u32,
    );
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.write_all_at(&sb, offset).unwrap();
}

/// Make an image with an md superblock (blank otherwise) and return it.
pub fn md_member_image(version: &str) -> (tempfile::TempDir, PathBuf, u64) {
    let (dir, path) = image(IMAGE_BYTES);
    let offset = match version {
        "0.90" => write_md0(&path, IMAGE_BYTES),
        "1.0" => {
            let offset = (IMAGE_BYTES & !(MD1_0_END_ALIGN_BYTES - 1)) - MD1_0_FROM_END_BYTES;
            write_md1(&path, offset);
            offset
        }
        "1.1" => {
            write_md1(&path, 0);
            0
        }
        "1.2" => {
            write_md1(&path, MD1_2_OFFSET);
            MD1_2_OFFSET
        }
        other => panic!("no md version {other}"),
    };
    (dir, path, offset)
}

fn md_member(version: &str) {
    let (_dir, path, offset) = md_member_image(version);
    assert_found(
        &path,
        &format!("RAID/volume-manager member linux_raid_member (magic at byte {offset})"),
    );
    // The fixture is what blkid itself recognises, where blkid is installed.
    if let Ok(output) = Command::new("blkid").arg("-p").arg(&path).output() {
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(text.contains("linux_raid_member"), "blkid -p: {text}");
    }
}

#[test]
fn md_0_90_member_at_the_end() {
    md_member("0.90");
}

#[test]
fn md_1_0_member_at_the_end() {
    md_member("1.0");
}

#[test]
fn md_1_1_member() {
    md_member("1.1");
}

#[test]
fn md_1_2_member() {
    md_member("1.2");
}
