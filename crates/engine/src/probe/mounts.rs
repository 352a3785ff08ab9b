//! The mount a file lives on, from proc(5) `/proc/self/mountinfo`.
//!
//! A line: `ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS`,
//! with space, tab, newline and backslash in paths written as octal escapes (`\040`).

use super::FileFacts;
use std::path::Path;

/// One parsed mountinfo line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountEntry {
    pub device_number: String,
    pub mount_point: String,
    pub options: String,
    pub fs_type: String,
    pub source: String,
    pub super_options: String,
}

/// Fields before the optional ones: id, parent, maj:min, root, mount point, options.
const FIXED_FIELDS: usize = 6;

/// Undoes the kernel's octal escapes (`\040` → space).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 4 <= bytes.len() {
            let digits = &bytes[i + 1..i + 4];
            if digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                let value = digits
                    .iter()
                    .fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
                if let Ok(value) = u8::try_from(value) {
                    out.push(value);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses one mountinfo line; `None` for a line that does not have the documented shape.
pub fn parse_line(line: &str) -> Option<MountEntry> {
    let fields: Vec<&str> = line.split(' ').collect();
    if fields.len() < FIXED_FIELDS + 4 {
        return None;
    }
    let separator = fields[FIXED_FIELDS..].iter().position(|f| *f == "-")? + FIXED_FIELDS;
    let after = &fields[separator + 1..];
    if after.len() < 3 {
        return None;
    }
    Some(MountEntry {
        device_number: fields[2].to_string(),
        mount_point: unescape(fields[4]),
        options: fields[5].to_string(),
        fs_type: after[0].to_string(),
        source: unescape(after[1]),
        super_options: after[2].to_string(),
    })
}

/// The mount holding `canonical` on device `st_dev`: the entry of that device whose mount
/// point is the longest prefix of the path (a bind or over-mount of another device loses).
pub fn find_mount(mountinfo: &str, canonical: &Path, st_dev: u64) -> Option<MountEntry> {
    let wanted = format!("{}:{}", libc::major(st_dev), libc::minor(st_dev));
    mountinfo
        .lines()
        .filter_map(parse_line)
        .filter(|m| m.device_number == wanted && canonical.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.len())
}

/// Bytes a mount table may take: thousands of mounts (a container host) fit many times over;
/// a link to an endless file does not.
const MOUNTINFO_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// Reads `mountinfo_path` and finds the mount of a file; `None` when it cannot be read or
/// holds no such mount.
pub fn mount_of(mountinfo_path: &Path, canonical: &Path, st_dev: u64) -> Option<FileFacts> {
    let text = crate::regular_file::read_regular_text(mountinfo_path, MOUNTINFO_MAX_BYTES).ok()?;
    let m = find_mount(&text, canonical, st_dev)?;
    Some(FileFacts {
        fs_type: m.fs_type,
        mount_point: m.mount_point,
        mount_options: m.options,
        super_options: m.super_options,
        source: m.source,
        device_number: m.device_number,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n\
36 27 7:0 / /mnt/with\\040space rw,noatime shared:5 - xfs /dev/loop0 rw,attr2\n\
37 27 0:30 / /mnt/with\\040space/tmp rw - tmpfs tmpfs rw\n";

    #[test]
    fn parses_fields_around_the_optional_ones() {
        let line = SAMPLE.lines().nth(1).unwrap();
        let m = parse_line(line).unwrap();
        assert_eq!(m.device_number, "7:0");
        assert_eq!(m.mount_point, "/mnt/with space");
        assert_eq!(m.options, "rw,noatime");
        assert_eq!(m.fs_type, "xfs");
        assert_eq!(m.source, "/dev/loop0");
        assert_eq!(m.super_options, "rw,attr2");
    }

    #[test]
    fn longest_mount_point_of_the_same_device_wins() {
        let dev_7_0 = libc::makedev(7, 0);
        let m = find_mount(SAMPLE, Path::new("/mnt/with space/data/f"), dev_7_0).unwrap();
        assert_eq!(m.fs_type, "xfs");
        let root = find_mount(SAMPLE, Path::new("/home/x"), libc::makedev(254, 0)).unwrap();
        assert_eq!(root.mount_point, "/");
        assert!(find_mount(SAMPLE, Path::new("/home/x"), libc::makedev(8, 1)).is_none());
    }

    #[test]
    fn malformed_lines_are_skipped() {
        assert!(parse_line("").is_none());
        assert!(parse_line("1 2 3 4 5 6 7 8 9").is_none());
    }
}
