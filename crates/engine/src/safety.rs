//! Refuses to write to (or trim) a block device that holds something: any signature libblkid
//! knows (filesystems, swap, RAID and volume-manager members, LUKS, bcache, partition tables,
//! including those kept at the end of the device), partitions, a mount or a holder, unless the
//! user named exactly that device with `--destructive`. Every check runs on the descriptor the
//! I/O will use (`target` opens it once), never on the path a second time: a path can be
//! pointed elsewhere between a check and an open. See docs/decisions/0009-device-guard-libblkid.md.

use crate::EngineError;
use std::ffi::CStr;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

const MOUNTINFO_PATH: &str = "/proc/self/mountinfo";
const SYSFS_DEV_BLOCK: &str = "/sys/dev/block";

/// A block device's number as (major, minor).
pub type DeviceNumber = (u32, u32);

/// The (major, minor) of a `st_rdev`.
pub fn device_number(rdev: u64) -> DeviceNumber {
    (libc::major(rdev), libc::minor(rdev))
}

/// Return `Ok` when writing through `file` (opened from `path`) cannot destroy anything we can
/// see, or when `destructive` names the very device `file` is open on (compared by device
/// number, so `/dev/disk/by-id/...` links work and a path that now points elsewhere does not).
/// Otherwise a `Refused` error listing every finding and how to override.
pub fn check_writable(
    file: &File,
    path: &Path,
    destructive: Option<&Path>,
) -> Result<(), EngineError> {
    let metadata = file.metadata().map_err(|source| EngineError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    if let Some(allowed) = destructive {
        if metadata.file_type().is_block_device() && names_device(allowed, metadata.rdev()) {
            return Ok(());
        }
    }
    let findings = findings(file, path)?;
    if findings.is_empty() {
        Ok(())
    } else {
        Err(EngineError::Refused {
            path: path.to_path_buf(),
            reason: findings.join("; "),
        })
    }
}

/// Every reason not to write through `file` (empty: it looks blank and unused): its signatures,
/// and for a block device its partitions, mounts and holders, found by the device number of
/// the open descriptor. `path` only names it in the findings.
pub fn findings(file: &File, path: &Path) -> Result<Vec<String>, EngineError> {
    let open_error = |source: io::Error| EngineError::Open {
        path: path.to_path_buf(),
        source,
    };
    let metadata = file.metadata().map_err(open_error)?;
    let mut findings = signature_findings(file).map_err(open_error)?;
    if !metadata.file_type().is_block_device() {
        return Ok(findings);
    }
    let device = device_number(metadata.rdev());

    let partitions = partitions_of(&sysfs_dir(device));
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
        for holder in list_dir(&sysfs_dir(dev).join("holders")) {
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

/// Every signature libblkid finds through `file` (a block device or an image file), as
/// `wipefs` lists them: each superblock its probers recognise, checksum-damaged ones included
/// (a damaged filesystem still holds data), and the partition table, each with the byte offset
/// of its magic.
pub fn signature_findings(file: &File) -> io::Result<Vec<String>> {
    let mut probe = Probe::on(file)?;
    let mut findings = Vec::new();
    while probe.next()? {
        if let Some(table) = probe.value(c"PTTYPE") {
            let offset = probe.value(c"PTMAGIC_OFFSET").unwrap_or_default();
            findings.push(format!("partition table {table} (magic at byte {offset})"));
        } else if let Some(kind) = probe.value(c"TYPE") {
            let offset = probe.value(c"SBMAGIC_OFFSET").unwrap_or_default();
            let what = match probe.value(c"USAGE").as_deref() {
                Some("filesystem") => "filesystem",
                Some("raid") => "RAID/volume-manager member",
                Some("crypto") => "encrypted volume",
                _ => "signature",
            };
            findings.push(format!("{what} {kind} (magic at byte {offset})"));
        }
    }
    Ok(findings)
}

/// libblkid's probe flags, from `<blkid/blkid.h>` (util-linux): which values a superblock or
/// partition-table probe defines.
const BLKID_SUBLKS_TYPE: libc::c_int = 1 << 5;
const BLKID_SUBLKS_USAGE: libc::c_int = 1 << 7;
const BLKID_SUBLKS_MAGIC: libc::c_int = 1 << 9;
const BLKID_SUBLKS_BADCSUM: libc::c_int = 1 << 10;
const BLKID_PARTS_FORCE_GPT: libc::c_int = 1 << 1;
const BLKID_PARTS_MAGIC: libc::c_int = 1 << 3;
/// `blkid_do_probe`'s results: a signature found, or none left.
const BLKID_PROBE_OK: libc::c_int = 0;
const BLKID_PROBE_NONE: libc::c_int = 1;
/// The shared object of util-linux's libblkid (Debian's `libblkid1`, which util-linux itself
/// depends on, so every Linux system that has `blkid` has it). Its soname is stable since 2009.
const LIBBLKID_SONAME: &str = "libblkid.so.1";

/// An opaque `blkid_probe`.
type RawProbe = *mut libc::c_void;

/// The libblkid entry points the guard uses, resolved once from the system's library at run
/// time, so building storlab needs neither libblkid's headers nor libclang, and the guard knows
/// exactly what the installed `blkid` knows (decision 0009).
struct Libblkid {
    new_probe: unsafe extern "C" fn() -> RawProbe,
    free_probe: unsafe extern "C" fn(RawProbe),
    set_device: unsafe extern "C" fn(RawProbe, libc::c_int, i64, i64) -> libc::c_int,
    enable_superblocks: unsafe extern "C" fn(RawProbe, libc::c_int) -> libc::c_int,
    set_superblocks_flags: unsafe extern "C" fn(RawProbe, libc::c_int) -> libc::c_int,
    enable_partitions: unsafe extern "C" fn(RawProbe, libc::c_int) -> libc::c_int,
    set_partitions_flags: unsafe extern "C" fn(RawProbe, libc::c_int) -> libc::c_int,
    do_probe: unsafe extern "C" fn(RawProbe) -> libc::c_int,
    lookup_value: unsafe extern "C" fn(
        RawProbe,
        *const libc::c_char,
        *mut *const libc::c_char,
        *mut libc::size_t,
    ) -> libc::c_int,
    /// Keeps the library mapped while the function pointers above are in use (for ever).
    _library: libloading::Library,
}

impl Libblkid {
    /// The library, loaded on first use; an error names what is missing.
    fn get() -> io::Result<&'static Libblkid> {
        static LOADED: std::sync::OnceLock<Result<Libblkid, String>> = std::sync::OnceLock::new();
        LOADED
            .get_or_init(Libblkid::load)
            .as_ref()
            .map_err(|e| io::Error::other(e.clone()))
    }

    fn load() -> Result<Libblkid, String> {
        let missing = |e: libloading::Error| {
            format!(
                "cannot check it for signatures: {LIBBLKID_SONAME} ({e}); install util-linux's \
                 libblkid (Debian: libblkid1) or name the device with --destructive"
            )
        };
        // SAFETY: loading libblkid runs no initialisation code with preconditions; it is a
        // plain C library (util-linux) whose constructors only set up its debug mask.
        let library = unsafe { libloading::Library::new(LIBBLKID_SONAME) }.map_err(missing)?;
        // SAFETY (every `symbol` call): each name is looked up with the exact C signature
        // `<blkid/blkid.h>` declares for it (blkid_loff_t is int64_t), and the pointers are
        // used only while `_library` keeps the object mapped.
        unsafe {
            Ok(Libblkid {
                new_probe: symbol(&library, b"blkid_new_probe\0").map_err(missing)?,
                free_probe: symbol(&library, b"blkid_free_probe\0").map_err(missing)?,
                set_device: symbol(&library, b"blkid_probe_set_device\0").map_err(missing)?,
                enable_superblocks: symbol(&library, b"blkid_probe_enable_superblocks\0")
                    .map_err(missing)?,
                set_superblocks_flags: symbol(&library, b"blkid_probe_set_superblocks_flags\0")
                    .map_err(missing)?,
                enable_partitions: symbol(&library, b"blkid_probe_enable_partitions\0")
                    .map_err(missing)?,
                set_partitions_flags: symbol(&library, b"blkid_probe_set_partitions_flags\0")
                    .map_err(missing)?,
                do_probe: symbol(&library, b"blkid_do_probe\0").map_err(missing)?,
                lookup_value: symbol(&library, b"blkid_probe_lookup_value\0").map_err(missing)?,
                _library: library,
            })
        }
    }
}

/// A function pointer from `library`.
///
/// # Safety
/// `T` must be the function's exact C signature, and the pointer must not outlive `library`.
unsafe fn symbol<T: Copy>(
    library: &libloading::Library,
    name: &[u8],
) -> Result<T, libloading::Error> {
    // SAFETY: forwarded to the caller.
    unsafe { library.get::<T>(name).map(|s| *s) }
}

/// A libblkid probe on one open descriptor (libblkid only reads through it, never closes it).
struct Probe {
    lib: &'static Libblkid,
    raw: RawProbe,
}

impl Probe {
    fn on(file: &File) -> io::Result<Probe> {
        let lib = Libblkid::get()?;
        // SAFETY: no arguments; a null result is handled below.
        let raw = unsafe { (lib.new_probe)() };
        if raw.is_null() {
            return Err(libblkid_error("blkid_new_probe"));
        }
        let probe = Probe { lib, raw };
        // Offset 0 and size 0: the whole file or device.
        // SAFETY: `probe.raw` is a live probe; the fd stays open for the probe's lifetime
        // (`file` outlives `probe` in every caller: the probe never leaves this module).
        let rc = unsafe { (lib.set_device)(probe.raw, file.as_raw_fd(), 0, 0) };
        check(rc, "blkid_probe_set_device")?;
        // wipefs's settings: every superblock with its type, usage and magic offset, including
        // ones whose checksum fails; partition tables with their magic offset, and GPT even
        // without a protective MBR.
        let superblock_flags =
            BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE | BLKID_SUBLKS_MAGIC | BLKID_SUBLKS_BADCSUM;
        let partition_flags = BLKID_PARTS_MAGIC | BLKID_PARTS_FORCE_GPT;
        // SAFETY: `probe.raw` is a live probe; the flags are libblkid's own constants.
        unsafe {
            check(
                (lib.enable_superblocks)(probe.raw, 1),
                "blkid_probe_enable_superblocks",
            )?;
            check(
                (lib.set_superblocks_flags)(probe.raw, superblock_flags),
                "blkid_probe_set_superblocks_flags",
            )?;
            check(
                (lib.enable_partitions)(probe.raw, 1),
                "blkid_probe_enable_partitions",
            )?;
            check(
                (lib.set_partitions_flags)(probe.raw, partition_flags),
                "blkid_probe_set_partitions_flags",
            )?;
        }
        Ok(probe)
    }

    /// Advance to the next signature: `false` when there is none left.
    fn next(&mut self) -> io::Result<bool> {
        // SAFETY: `self.raw` is a live probe with a device set.
        match unsafe { (self.lib.do_probe)(self.raw) } {
            BLKID_PROBE_OK => Ok(true),
            BLKID_PROBE_NONE => Ok(false),
            _ => Err(libblkid_error("blkid_do_probe")),
        }
    }

    /// A value of the current signature (`TYPE`, `USAGE`, `SBMAGIC_OFFSET`, ...).
    fn value(&self, name: &CStr) -> Option<String> {
        let mut data: *const libc::c_char = std::ptr::null();
        // SAFETY: `self.raw` is a live probe, `name` is NUL-terminated, and libblkid stores a
        // pointer to a NUL-terminated string it owns in `data` (valid until the next probe
        // step; copied out before then). The length output is optional (null).
        let rc = unsafe {
            (self.lib.lookup_value)(self.raw, name.as_ptr(), &mut data, std::ptr::null_mut())
        };
        if rc != 0 || data.is_null() {
            return None;
        }
        // SAFETY: non-null, NUL-terminated, owned by the probe and alive during this call.
        let value = unsafe { CStr::from_ptr(data) };
        Some(value.to_string_lossy().into_owned())
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        // SAFETY: `self.raw` came from blkid_new_probe and is freed exactly once.
        unsafe { (self.lib.free_probe)(self.raw) }
    }
}

fn check(rc: libc::c_int, what: &str) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(libblkid_error(what))
    }
}

fn libblkid_error(what: &str) -> io::Error {
    let errno = io::Error::last_os_error();
    io::Error::other(format!(
        "libblkid could not probe it for signatures ({what} failed: {errno})"
    ))
}

fn sysfs_dir(device: DeviceNumber) -> PathBuf {
    PathBuf::from(format!("{SYSFS_DEV_BLOCK}/{}:{}", device.0, device.1))
}

/// Whether `named` (as given to `--destructive`) is the block device with number `rdev`.
fn names_device(named: &Path, rdev: u64) -> bool {
    fs::metadata(named).is_ok_and(|m| m.file_type().is_block_device() && m.rdev() == rdev)
}

/// (major, minor) → mount point for every mount in a `/proc/self/mountinfo` text.
pub fn mounts(mountinfo: &str) -> Vec<(DeviceNumber, String)> {
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
    device: DeviceNumber,
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

#[cfg(test)]
mod tests {
    use super::*;

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
