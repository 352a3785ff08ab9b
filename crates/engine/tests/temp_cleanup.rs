//! Temporary targets disappear: when their guard drops, and when `cleanup_temp_files` runs
//! first (the Ctrl-C path). Its own test binary because the registry is process-global.

use std::path::{Path, PathBuf};
use storlab_engine::target::{cleanup_temp_files, open_target, TEMP_PREFIX, TEMP_SUFFIX};
use storlab_job::Target;

const SIZE_BYTES: u64 = 3 << 20;

fn temp_files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX)
        })
        .collect()
}

#[test]
fn temp_files_are_laid_out_and_removed_by_drop_or_by_cleanup() {
    let dir = tempfile::tempdir().unwrap();
    let target = Target::TempFileIn(dir.path().to_path_buf());

    let first = open_target(&target, SIZE_BYTES, false, true, None).unwrap();
    let second = open_target(&target, SIZE_BYTES, false, false, None).unwrap();
    assert_ne!(first.path, second.path, "temporary names must be unique");
    assert_eq!(temp_files_in(dir.path()).len(), 2);
    assert_eq!(first.size_bytes, SIZE_BYTES);
    // Laid out with real data: fully allocated, no zero holes.
    let data = std::fs::read(&first.path).unwrap();
    assert_eq!(data.len() as u64, SIZE_BYTES);
    assert!(data.chunks(4096).all(|block| block.iter().any(|&b| b != 0)));

    drop(first);
    assert_eq!(temp_files_in(dir.path()), vec![second.path.clone()]);

    // Ctrl-C path: the guard is still alive, cleanup removes the file anyway...
    assert_eq!(cleanup_temp_files(), 1);
    assert!(temp_files_in(dir.path()).is_empty());
    // ...and the guard dropping afterwards is harmless, as is cleaning up twice.
    drop(second);
    assert_eq!(cleanup_temp_files(), 0);
}
