//! Opening targets: files are created and laid out like fio does, and every way a target can be
//! unusable gives one clear error naming the path.

use std::os::unix::fs::PermissionsExt;
use storlab_engine::target::{open_target, TargetKind};
use storlab_engine::EngineError;
use storlab_job::Target;

const SIZE_BYTES: u64 = (2 << 20) + 4096;

#[test]
fn missing_file_is_created_and_laid_out_even_for_a_read_job() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    let target = open_target(&Target::Path(path.clone()), SIZE_BYTES, false, false, None).unwrap();
    assert_eq!(target.kind, TargetKind::RegularFile);
    assert_eq!(target.size_bytes, SIZE_BYTES);
    assert!(
        target.temp.is_none(),
        "a named file is the user's; storlab keeps it"
    );
    let data = std::fs::read(&path).unwrap();
    assert!(data.chunks(4096).all(|block| block.iter().any(|&b| b != 0)));
}

#[test]
fn short_file_is_extended_and_its_data_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    std::fs::write(&path, vec![0x11u8; 8192]).unwrap();
    let target = open_target(&Target::Path(path.clone()), SIZE_BYTES, false, true, None).unwrap();
    assert_eq!(target.size_bytes, SIZE_BYTES);
    let data = std::fs::read(&path).unwrap();
    assert!(data[..8192].iter().all(|&b| b == 0x11));
    assert!(data[8192..].chunks(4096).all(|b| b.iter().any(|&x| x != 0)));
    // A file already large enough is left alone.
    let again = open_target(&Target::Path(path.clone()), 4096, false, true, None).unwrap();
    assert_eq!(again.size_bytes, SIZE_BYTES);
}

#[test]
fn unusable_targets_give_clear_errors_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let dir_path = dir.path().to_path_buf();

    let err = open_target(
        &Target::Path(dir_path.clone()),
        SIZE_BYTES,
        false,
        false,
        None,
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&*dir_path.to_string_lossy()) && text.contains("directory"),
        "{text}"
    );

    let missing = dir_path.join("empty");
    let err = open_target(&Target::Path(missing.clone()), 0, false, false, None).unwrap_err();
    assert!(err.to_string().contains("no size"), "{err}");

    let err = open_target(
        &Target::TempFileIn(dir_path.join("nowhere")),
        SIZE_BYTES,
        false,
        true,
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("nowhere"), "{err}");

    let err = open_target(&Target::Path("/dev/null".into()), 0, false, false, None).unwrap_err();
    assert!(err.to_string().contains("neither a regular file"), "{err}");

    assert!(matches!(
        open_target(&Target::Sim("usb3-ssd".into()), 0, false, false, None),
        Err(EngineError::Unsupported(_))
    ));
}

#[test]
fn permission_denied_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("locked");
    std::fs::write(&path, vec![1u8; 4096]).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400)).unwrap();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        eprintln!("skipped: root ignores file permissions, so 'permission denied' cannot occur");
        return;
    }
    let err = open_target(&Target::Path(path.clone()), 4096, false, true, None).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("permission denied") && text.contains("locked"),
        "{text}"
    );
}

/// A 1 MiB tmpfs mounted on a temp dir; unmounted on drop, however the test ends.
struct SmallTmpfs(tempfile::TempDir);

/// The tmpfs's size: smaller than the files the ENOSPC tests ask for.
const SMALL_FS_BYTES: u64 = 1 << 20;

impl SmallTmpfs {
    /// `None` (with a skip message) when this machine cannot mount one (not root, sandbox).
    fn mount() -> Option<SmallTmpfs> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: mounting a small tmpfs needs root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={SMALL_FS_BYTES}")])
            .arg("tmpfs")
            .arg(dir.path())
            .status();
        if !mounted.is_ok_and(|s| s.success()) {
            eprintln!("skipped: cannot mount a tmpfs here");
            return None;
        }
        Some(SmallTmpfs(dir))
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

#[test]
fn file_storlab_created_is_removed_when_layout_runs_out_of_space() {
    let Some(fs) = SmallTmpfs::mount() else {
        return;
    };
    let path = fs.0.path().join("data");
    let err = open_target(
        &Target::Path(path.clone()),
        4 * SMALL_FS_BYTES,
        false,
        true,
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("no space left"), "{err}");
    assert!(!path.exists(), "a partial file stayed behind");

    // A file that was there keeps what it had: only the bytes storlab appended go.
    let before = vec![7u8; 64 << 10];
    std::fs::write(&path, &before).unwrap();
    let err = open_target(
        &Target::Path(path.clone()),
        4 * SMALL_FS_BYTES,
        false,
        true,
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("no space left"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);

    // A temporary file goes too.
    std::fs::remove_file(&path).unwrap();
    let temp = Target::TempFileIn(fs.0.path().to_path_buf());
    assert!(open_target(&temp, 4 * SMALL_FS_BYTES, false, true, None).is_err());
    assert_eq!(std::fs::read_dir(fs.0.path()).unwrap().count(), 0);
}
